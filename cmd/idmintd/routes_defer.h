/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Store-bound handlers off the event loop. A route that calls the store
 * (route_row.is_store, or GET /v1/ids when it must) is handed to a store
 * thread with its request copied; the loop serves others meanwhile, and
 * sends the answer when it comes back. A full queue and a missed deadline
 * are answered 503 unavailable with Retry-After (docs/http-api.md).
 */
#ifndef IDMINTD_ROUTES_DEFER_H
#define IDMINTD_ROUTES_DEFER_H

#include "http.h"
#include "route_table.h"

struct worker;

typedef void (*routes_handler)(struct http_req *r, struct worker *w, const struct route_match *m);

/*
 * Run @p handler for @p r on a store thread and answer @p r with what it
 * answers, or 503 when the queue is full or store_deadline_ms passes
 * first. On a loop thread, from a handler or the dispatcher; sets
 * w->is_deferred unless it answered at once. Without a pool (d->pool
 * NULL: the fuzz targets) @p handler runs here and now.
 */
void routes_defer_store(struct http_req *r, struct worker *w, const struct route_match *m,
                        routes_handler handler);

/* store_pool_open's thread_init and thread_fini: a store thread's worker. */
void *routes_store_thread_init(unsigned k, void *daemon);
void routes_store_thread_fini(void *worker);

#endif /* IDMINTD_ROUTES_DEFER_H */
