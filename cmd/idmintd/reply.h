/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What every handler in routes_*.c works with: replies (each one noted for
 * the metrics; every error in the one JSON shape of docs/http-api.md), query
 * parameters, and the thread's authority with its store calls timed. The
 * dispatcher (routes.c) is not here: handlers never call it.
 */
#ifndef IDMINTD_REPLY_H
#define IDMINTD_REPLY_H

#include "idmint.h"

#include "http.h"

#include <stddef.h>
#include <stdint.h>

struct json;
struct worker;

/* ==== replies ==== */

/* Reply with the error row of @p err and a message. */
void routes_fail(struct http_req *r, int err, const char *message);
/* Reply with a protocol error that has no library code (401, 405, 413, 431). */
void routes_fail_http(struct http_req *r, int status, const char *code, const char *message);
/* Send a response and note its status for the metrics. @p body as in http_respond. */
void routes_reply(struct http_req *r, int status, const char *content_type, const char *body,
                  size_t len);
/* Reply with @p body (malloc'd; freed here); NULL, or no memory to keep it: 503. */
void routes_reply_malloced(struct http_req *r, int status, const char *content_type, char *body,
                           size_t len);
/* routes_reply_malloced with the JSON text @p body. */
void routes_json(struct http_req *r, int status, char *body, size_t len);
/* Dump @p v (freed here) and reply with it. */
void routes_json_tree(struct http_req *r, int status, struct json *v);

/* ==== the request ==== */

/* Value of query parameter @p name, percent-decoded into @p buf. 1 found, 0 absent, -1 bad. */
int routes_query(const struct http_req *r, const char *name, char *buf, size_t size);

/* ==== the thread's authority ==== */

/* The per-thread authority, opened on first use. 0 or IDMINT_E*. */
int routes_authority(struct worker *w, idmint_authority **out);
/* The per-thread authority, or NULL after replying with the error. */
idmint_authority *routes_authority_or_fail(struct http_req *r, struct worker *w);
/*
 * Resolve snowflake namespace @p ns through the thread's authority (timed
 * as a store call) into *a and *info; 0, or -1 after replying with the
 * error (400 with @p not_snowflake for a range namespace).
 */
int routes_snowflake_ns(struct http_req *r, struct worker *w, const char *ns, idmint_authority **a,
                        idmint_ns_info *info, const char *not_snowflake);
/* Time a store call started at @p t0 (metrics_now_ns()). */
void routes_store_done(struct worker *w, uint64_t t0);
/* Wall clock in Unix ms. */
int64_t routes_now_ms(void);

#endif /* IDMINTD_REPLY_H */
