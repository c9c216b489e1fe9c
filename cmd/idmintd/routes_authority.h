/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The thread's authority, for the handlers in routes_*.c. Each event-loop
 * thread has its own (an idmint_authority is used by one thread at a time).
 */
#ifndef IDMINTD_ROUTES_AUTHORITY_H
#define IDMINTD_ROUTES_AUTHORITY_H

#include "idmint.h"

#include "http.h"
#include "ratelimit.h"

#include <stdint.h>

struct daemon_thread;

/* The per-thread authority, opened on first use. 0 or IDMINT_E*. */
int routes_authority(struct daemon_thread *w, idmint_authority **out);
/* The per-thread authority, or NULL after replying with the error. */
idmint_authority *routes_authority_or_fail(struct http_req *r, struct daemon_thread *w);
/*
 * Resolve snowflake namespace @p ns through the thread's authority (timed
 * as a store call) into *a and *info; 0, or -1 after replying with the
 * error (400 with @p not_snowflake for a range namespace).
 */
int routes_snowflake_ns(struct http_req *r, struct daemon_thread *w, const char *ns,
                        idmint_authority **a, idmint_ns_info *info, const char *not_snowflake);
/*
 * Take one write of class @p c (RATELIMIT_BATCH, _COLLISION, _GRANT, _RENEW) from
 * the bucket of the request's caller: its token, or the one anonymous
 * caller when no tokens are configured. 0 to go on, or -1 after answering
 * 429 rate_limited with Retry-After (counted as the token's 429s are).
 */
int routes_write_allowed(struct http_req *r, struct daemon_thread *w, enum ratelimit_class c);
/* Time a store call started at @p t0 (clocks_mono_ns()). */
void routes_store_done(struct daemon_thread *w, uint64_t t0);

#endif /* IDMINTD_ROUTES_AUTHORITY_H */
