/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What every handler in routes_*.c answers with: replies (each one noted
 * for the metrics; every error in the one JSON shape of docs/http-api.md)
 * and query parameters. The dispatcher (routes.c) is not here: handlers
 * never call it; the thread's authority is routes_authority.h.
 */
#ifndef IDMINTD_REPLY_H
#define IDMINTD_REPLY_H

#include "idmint.h"

#include "http.h"

#include <stddef.h>
#include <stdint.h>

struct json;
struct route_row;
struct daemon_thread;

/* ==== replies ==== */

/*
 * Answer 200 with @p count IDs of @p ns: JSON (IDs as decimal strings), or
 * one per line for Accept: text/plain. The body is written by hand into
 * request memory: @p ns needs no escaping (it matched [a-z0-9][a-z0-9_.-]*).
 */
void routes_reply_ids(struct http_req *r, const char *ns, const uint64_t *ids, size_t count);
/* Reply with the error row of @p err and a message. */
void routes_fail(struct http_req *r, int err, const char *message);
/*
 * Reply with @p status, wire @p code and @p message as they are: for a
 * status and code taken from elsewhere (http_screen.h's verdicts). Prefer
 * routes_fail and routes_fail_wire, which take both from the one table.
 */
void routes_fail_http(struct http_req *r, int status, const char *code, const char *message);
/*
 * Reply with wire code @p code (a row of src/wire_errors.c: an answer of
 * the HTTP layer's own, such as "unauthenticated" or "rate_limited") at
 * its status, and @p message.
 */
void routes_fail_wire(struct http_req *r, const char *code, const char *message);
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

/*
 * Check what @p r sends besides its path against its route table row: each
 * query parameter is one of row->params and comes once, and a body, when
 * there is one, is a JSON object whose fields are all in row->fields. The
 * dispatcher calls it before any handler. 0, or -1 after answering 400
 * invalid_argument naming the first name that is not, with a near miss
 * when one is close ("unknown query parameter 'ns'; did you mean
 * 'namespace'?"). Nothing else is looked at: values are the handler's.
 */
int routes_check_names(struct http_req *r, const struct route_row *row);

/*
 * The name of NULL-terminated @p known (NULL: none) that @p given (@p len
 * bytes) is a near miss of: the same but for case, one or two typing
 * slips (an edit or a swap of neighbours; two from 6 letters on), or an
 * abbreviation (its letters in order from the same first one: ns →
 * namespace, cnt → count). The closest, the first in @p known on a tie;
 * NULL when none is near.
 */
const char *routes_near_miss(const char *given, size_t len, const char *const *known);

/* Value of query parameter @p name, percent-decoded into @p buf. 1 found, 0 absent, -1 bad. */
int routes_query(const struct http_req *r, const char *name, char *buf, size_t size);

/* "namespace" from the query (default "default"), checked into @p ns. 0, or -1 after replying. */
int routes_query_ns(struct http_req *r, char *ns, size_t size);
/*
 * Query integer @p name within [@p min, @p max] (@p def when absent) into
 * *out. 0, or -1 after replying 400.
 */
int routes_query_int(struct http_req *r, const char *name, int64_t min, int64_t max, int64_t def,
                     int64_t *out);

/* Unix ms @p ms as ISO-8601 UTC into @p buf, or "" when it cannot be shown. */
void routes_iso_or_empty(int64_t ms, char *buf, size_t size);

#endif /* IDMINTD_REPLY_H */
