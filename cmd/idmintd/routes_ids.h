/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What GET /v1/ids shares between its plain path (routes_ids.c) and its
 * idempotent one (routes_batch.c).
 */
#ifndef IDMINTD_ROUTES_IDS_H
#define IDMINTD_ROUTES_IDS_H

#include "http.h"

#include <stddef.h>
#include <stdint.h>

struct worker;
struct ns_handle;

/* Answer 200 with @p count IDs of @p ns: JSON, or one per line for Accept: text/plain. */
void routes_ids_reply(struct http_req *r, const char *ns, const uint64_t *ids, size_t count);

/*
 * GET /v1/ids with an Idempotency-Key: the first request with a key mints
 * @p count IDs of @p ns from @p nh and saves them in the authority before it
 * answers; every repeat of the key (on any node of that authority, also
 * one racing the first) gets the saved IDs; the key with another count,
 * namespace or caller is a 409 conflict; a malformed key is a 400.
 */
void routes_batch_mint(struct http_req *r, struct worker *w, const char *ns, struct ns_handle *nh,
                       uint32_t count);

/*
 * Read the test-only fault point from IDMINTD_TEST_FAULT (logged loudly when
 * set): "exit-after-batch-save" kills the daemon with SIGKILL after a keyed
 * batch is saved and before its reply is written. Call once at start.
 */
void routes_batch_init(void);

#endif /* IDMINTD_ROUTES_IDS_H */
