/* SPDX-License-Identifier: Apache-2.0 */
/*
 * GET /v1/ids with an Idempotency-Key (routes_batch.c), as its plain path
 * (routes_ids.c) hands a keyed request over.
 */
#ifndef IDMINTD_ROUTES_IDS_H
#define IDMINTD_ROUTES_IDS_H

#include "http.h"

#include <stddef.h>
#include <stdint.h>

struct daemon_thread;
struct ns_handle;
struct route_match;

/*
 * GET /v1/ids with an Idempotency-Key, on a store thread: the first request
 * with a key mints @p count IDs of @p ns from @p nh and saves them in the
 * authority before it answers; every repeat of the key (on any node of that
 * authority, also one racing the first) gets the saved IDs; the key with
 * another count, namespace or caller is a 409 conflict; a malformed key
 * (spaces and tabs around it aside) is a 400. A batch that needs more time
 * units than the current one is finished on the loop and saved from a
 * store thread again (routes_batch_save): no store thread waits for a unit.
 */
void routes_batch_mint(struct http_req *r, struct daemon_thread *w, const char *ns,
                       struct ns_handle *nh, uint32_t count);

/*
 * On a loop: the keyed batch @p ids (@p count, all minted) goes to a store
 * thread to be saved, and @p r is answered with the batch saved under its
 * key (its own, or a racing first request's). @p ids is copied.
 */
void routes_batch_save(struct http_req *r, struct daemon_thread *w, const struct route_match *m,
                       const uint64_t *ids, size_t count);

/*
 * Read the test-only fault point from IDMINTD_TEST_FAULT (logged loudly when
 * set): "exit-after-batch-save" kills the daemon with SIGKILL after a keyed
 * batch is saved and before its reply is written. Call once at start.
 */
void routes_batch_init(void);

#endif /* IDMINTD_ROUTES_IDS_H */
