/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Store-bound handlers off the event loop. A route that calls the store
 * (route_row.is_store, or GET /v1/ids when it must) is handed to a store
 * thread with its request copied; the loop serves others meanwhile, and
 * sends the answer when it comes back, or goes on with the request where
 * the store thread handed it back (routes_defer_resume). A full queue and a
 * missed deadline are answered 503 unavailable with Retry-After
 * (docs/http-api.md).
 */
#ifndef IDMINTD_ROUTES_DEFER_H
#define IDMINTD_ROUTES_DEFER_H

#include "http.h"
#include "route_table.h"

struct daemon_thread;

typedef void (*routes_handler)(struct http_req *r, struct daemon_thread *w,
                               const struct route_match *m);

/*
 * Run @p handler for @p r on a store thread and answer @p r with what it
 * answers, or 503 when the queue is full or store_deadline_ms passes
 * first. The lane (store_pool.h) is the lease lane when w->row is a
 * ROUTE_ON_LEASE row, else the general one. On a loop thread, from a
 * handler, the dispatcher or a timer (with w->row, t0_ns and actor those of
 * @p r); sets w->is_deferred unless it answered at once. Without a pool
 * (d->pool NULL: the fuzz targets) @p handler runs here and now.
 */
void routes_defer_store(struct http_req *r, struct daemon_thread *w, const struct route_match *m,
                        routes_handler handler);
/*
 * routes_defer_store, handing @p handler @p size bytes at @p data: they are
 * copied now, and @p handler finds them in w->handoff (w->handoff_size)
 * during its call. Answers 503 like routes_defer_store, and a copy that
 * finds no memory.
 */
void routes_defer_store_with(struct http_req *r, struct daemon_thread *w,
                             const struct route_match *m, routes_handler handler, const void *data,
                             size_t size);
/*
 * On a store thread, from a handler routes_defer_store* runs, instead of
 * answering: once the handler has returned, @p next runs on @p r's loop,
 * with the loop's worker (w->row, t0_ns and actor those of the request)
 * and the original request, and answers it, waits in a timer or defers to
 * a store thread again. @p size bytes at @p data are copied now and found
 * in w->handoff during @p next's call only (copy what outlives it). For
 * work that must not hold a store thread, such as waiting for the next
 * time unit. A request whose deadline passes first gets its 503 instead,
 * and @p next does not run. 0, or -1 when out of memory (the handler then
 * answers @p r itself). The handler must answer nothing after a 0.
 */
int routes_defer_resume(struct http_req *r, struct daemon_thread *w, routes_handler next,
                        const void *data, size_t size);

/* store_pool_open's thread_init and thread_fini: a store thread's worker. */
void *routes_store_thread_init(unsigned k, void *daemon);
void routes_store_thread_fini(void *worker);

#endif /* IDMINTD_ROUTES_DEFER_H */
