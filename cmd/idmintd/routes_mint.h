/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Minting a batch of GET /v1/ids without holding a thread that must not
 * wait: what is ready is minted at once; a snowflake batch that needs the
 * next time unit is finished from a timer on its loop, and a range batch
 * whose reserve runs dry on a loop is finished on a store thread, the one
 * kind of thread that may wait on the store. Used by the plain route
 * (routes_ids.c) and the idempotent one (routes_batch.c), which says what
 * happens to a batch once it is whole.
 */
#ifndef IDMINTD_ROUTES_MINT_H
#define IDMINTD_ROUTES_MINT_H

#include "http.h"

#include <stddef.h>
#include <stdint.h>

struct daemon_thread;
struct ns_handle;
struct route_match;

/*
 * What becomes of a whole batch: @p count IDs of @p ns at @p ids (request
 * memory, or copied before the call returns). Runs on a loop. NULL means
 * answer them (routes_reply_ids).
 */
typedef void (*routes_mint_done)(struct http_req *r, struct daemon_thread *w,
                                 const struct route_match *m, const uint64_t *ids, size_t count);

/*
 * Mint into ids[*done..count) of @p nh what is ready now, counting them on
 * @p w's metrics: never waiting for a time unit, and on a loop never
 * waiting on the store; a store thread waits for a dry range's refill (up
 * to deadline_ms). *wait_ms says when to try again when *done < count.
 * 0 or an IDMINT_E* code (*done counts what was minted before it).
 */
int routes_mint_ready(struct daemon_thread *w, struct ns_handle *nh, uint64_t *ids, size_t count,
                      size_t *done, uint32_t *wait_ms);

/*
 * On a loop: mint ids[done..count) of @p nh (namespace @p ns), @p ids in
 * request memory, then hand the whole batch to @p finish (NULL: answer it).
 * What waits for a unit goes on from a timer; what waits on the store goes
 * to a store thread and comes back. Answers @p r with an error on failure
 * (IDs minted and not sent are a gap, never issued again).
 */
void routes_mint_on_loop(struct http_req *r, struct daemon_thread *w, const struct route_match *m,
                         struct ns_handle *nh, const char *ns, uint64_t *ids, size_t count,
                         size_t done, routes_mint_done finish);

/*
 * On a store thread: hand @p r back to its loop (routes_defer_resume) to
 * mint the rest of a batch there, so that no store thread waits for a
 * time unit; ids[0..done) of the @p count IDs of @p ns are minted already
 * (copied now). The loop then goes on as routes_mint_on_loop. 0, or -1
 * when out of memory (then answer @p r; the IDs minted are a gap).
 */
int routes_mint_finish_on_loop(struct http_req *r, struct daemon_thread *w, const char *ns,
                               const uint64_t *ids, size_t done, size_t count,
                               routes_mint_done finish);

#endif /* IDMINTD_ROUTES_MINT_H */
