/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The dispatcher: limits (431, 400, 413), the HTTP rules a later request on
 * a kept-alive connection broke (http_screen.h; 400, 505), methods HTTP
 * does not define (501), then the route table of route_table.c (404; 405
 * with Allow), rate limits once the token is known (429), bearer-token
 * roles (401, 403), the query parameters and body fields the row accepts
 * (400 naming any other), then the row's handler; and the per-thread
 * state the event loops call it with.
 * Handlers answer through reply.h and never call back into this file.
 */
#include "daemon.h"
#include "clocks.h"

#include "errors_http.h"
#include "http_screen.h"
#include "log.h"
#include "reply.h"
#include "route_table.h"
#include "routes_defer.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* A request path cut at each '/'; n == 0 matches no row. */
struct path {
    const char *seg[ROUTE_SEGMENTS_MAX];
    size_t len[ROUTE_SEGMENTS_MAX];
    size_t n;
};

static int method_is(const struct http_req *r, const char *m)
{
    size_t len = strlen(m);

    return r->method_len == len && memcmp(r->method, m, len) == 0;
}

/* The methods of RFC 9110 §9 and RFC 5789: any other gets 501 (RFC 9110 §9.1). */
static int method_is_known(const struct http_req *r)
{
    static const char *const known[] = {"GET",     "HEAD",  "POST",    "PUT",  "DELETE",
                                        "CONNECT", "TRACE", "OPTIONS", "PATCH"};
    size_t i;

    for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
        if (method_is(r, known[i]))
            return 1;
    return 0;
}

/*
 * 1 after answering 429 when the address of @p r, or token @p t (NULL:
 * none) under its role's rule, is over its limit; 0 to go on. A request
 * refused by the address's bucket takes nothing from the token's.
 */
static int over_limit(struct http_req *r, struct daemon_thread *w, const struct auth_token *t,
                      unsigned role)
{
    const struct config *cfg = &w->d->cfg;
    const struct ratelimit_rule *rule = NULL;
    uint64_t now = clocks_mono_ns(), wait;
    int is_address = 1;
    char value[24], text[160];

    wait = ratelimit_take_address(&w->d->limits, r->client, &cfg->limits[RATELIMIT_ADDRESS], now);
    if (wait == 0 && t != NULL) {
        is_address = 0;
        rule = &cfg->limits[t->role - AUTH_MINT]; /* AUTH_MINT.. map to RATELIMIT_MINT.. */
        wait = ratelimit_take_token(&w->d->limits, (size_t)(t - cfg->tokens), rule, now);
    }
    if (wait == 0)
        return 0;
    ratelimit_count(&w->d->limits, is_address, role);
    snprintf(value, sizeof(value), "%" PRIu64, ratelimit_retry_after_s(wait));
    http_add_header(r, "retry-after", value);
    if (is_address)
        snprintf(text, sizeof(text), "this client address is over address_rate; retry in %s s",
                 value);
    else
        snprintf(text, sizeof(text), "token '%s' is over %s_rate; retry in %s s", t->name,
                 auth_role_name(t->role), value);
    routes_fail_wire(r, ERRORS_HTTP_RATE_LIMITED_CODE, text);
    return 1;
}

/*
 * Split "/a/b/c" into *p. A path that is empty, does not start with '/',
 * has an empty segment (//, a trailing /) or more than ROUTE_SEGMENTS_MAX
 * segments matches nothing.
 */
static void path_split(const struct http_req *r, struct path *p)
{
    size_t i = 0;

    p->n = 0;
    while (i < r->path_len) {
        size_t start;

        if (r->path[i] != '/' || p->n == ROUTE_SEGMENTS_MAX) {
            p->n = 0;
            return;
        }
        start = ++i;
        while (i < r->path_len && r->path[i] != '/')
            i++;
        if (i == start) {
            p->n = 0;
            return;
        }
        p->seg[p->n] = r->path + start;
        p->len[p->n] = i - start;
        p->n++;
    }
}

/*
 * 1 when @p p matches @p pattern segment by segment: a literal byte for
 * byte, a {name} any segment of at most ROUTE_SEGMENT_MAX bytes, which is
 * copied to m->segment ("" when the pattern has none).
 */
static int pattern_match(const char *pattern, const struct path *p, struct route_match *m)
{
    const char *s = pattern;
    size_t k;

    m->segment[0] = '\0';
    for (k = 0; k < p->n; k++) {
        const char *start;
        size_t len;

        if (*s != '/')
            return 0;
        start = ++s;
        while (*s != '\0' && *s != '/')
            s++;
        len = (size_t)(s - start);
        if (start[0] == '{') {
            if (p->len[k] > ROUTE_SEGMENT_MAX)
                return 0;
            memcpy(m->segment, p->seg[k], p->len[k]);
            m->segment[p->len[k]] = '\0';
        } else if (len != p->len[k] || memcmp(start, p->seg[k], len) != 0) {
            return 0;
        }
    }
    return p->n > 0 && *s == '\0';
}

/* The Allow value for @p p: the methods of the rows its path matches, in table order. */
static void allow_list(const struct path *p, char *buf, size_t size)
{
    struct route_match scratch;
    size_t i, used = 0;

    buf[0] = '\0';
    for (i = 0; i < route_table_len && used + 1 < size; i++) {
        if (!pattern_match(route_table[i].path, p, &scratch))
            continue;
        snprintf(buf + used, size - used, "%s%s", used > 0 ? ", " : "", route_table[i].method);
        used = strlen(buf);
    }
}

/* Answer @p r; *row_out is the row its metrics count under (NULL: "other"). */
static void dispatch(struct http_req *r, struct daemon_thread *w, const struct route_row **row_out)
{
    const struct config *cfg = &w->d->cfg;
    const struct route_row *row = NULL, *on_path = NULL;
    struct route_match m;
    struct path p;
    size_t i;

    if (r->header_bytes > cfg->max_header_bytes) {
        routes_fail_wire(r, "headers_too_large",
                         "request headers are larger than max_header_bytes");
        return;
    }
    if (r->has_bad_framing) {
        routes_fail(r, IDMINT_EINVAL, "conflicting Content-Length or Transfer-Encoding headers");
        return;
    }
    if (r->body_len > cfg->max_body_bytes) {
        routes_fail_wire(r, "payload_too_large", "request body is larger than max_body_bytes");
        return;
    }
    if (r->head_verdict != HTTP_HEAD_OK) {
        enum http_head_verdict v = (enum http_head_verdict)r->head_verdict;

        routes_fail_http(r, http_head_verdict_status(v), http_head_verdict_code(v),
                         http_head_verdict_message(v));
        return;
    }
    if (!method_is_known(r)) {
        routes_fail_wire(r, "not_implemented", "this method is not an HTTP method we serve");
        return;
    }

    path_split(r, &p);
    for (i = 0; i < route_table_len; i++) {
        if (!pattern_match(route_table[i].path, &p, &m))
            continue;
        if (on_path == NULL)
            on_path = &route_table[i];
        if (method_is(r, route_table[i].method)) {
            row = &route_table[i];
            break;
        }
    }
    *row_out = row != NULL ? row : on_path;
    w->row = *row_out;
    if (on_path == NULL) {
        routes_fail(r, IDMINT_ENOTFOUND, "no such route");
        return;
    }
    if (row == NULL) {
        char allow[128], text[160];

        allow_list(&p, allow, sizeof(allow));
        http_add_header(r, "allow", allow);
        snprintf(text, sizeof(text), "method not allowed; use %s", allow);
        routes_fail_wire(r, "method_not_allowed", text);
        return;
    }

    w->actor = "anonymous";
    /* With no [tokens] every caller is admin (main.c then serves loopback only). */
    m.role = cfg->n_tokens > 0 ? AUTH_NONE : AUTH_ADMIN;
    if (row->role == AUTH_NONE || cfg->n_tokens == 0) {
        if (over_limit(r, w, NULL, m.role))
            return;
    } else {
        int is_missing;
        const struct auth_token *t = auth_check(cfg->tokens, cfg->n_tokens, r->authorization,
                                                r->authorization_len, &is_missing);

        if (over_limit(r, w, t, t != NULL ? t->role : AUTH_NONE))
            return;
        if (t == NULL) {
            http_add_header(r, "www-authenticate", "Bearer");
            routes_fail_wire(r, "unauthenticated",
                             is_missing ? "a bearer token is required" : "unknown token");
            return;
        }
        m.role = t->role;
        w->actor = t->name;
        if (t->role < row->role) {
            char text[128];

            snprintf(text, sizeof(text), "this route needs the %s role; token '%s' has %s",
                     auth_role_name(row->role), t->name, auth_role_name(t->role));
            routes_fail(r, IDMINT_EACCESS, text);
            return;
        }
    }
    if (routes_check_names(r, row) != 0)
        return;
    if (row->is_store && !w->is_store)
        routes_defer_store(r, w, &m, row->handler);
    else
        row->handler(r, w, &m);
}

void routes_handle(struct http_req *r)
{
    struct daemon_thread *w = r->thread;
    const struct route_row *row = NULL;
    uint64_t t0 = clocks_mono_ns();

    w->status = 0;
    w->row = NULL;
    w->t0_ns = t0;
    w->is_deferred = 0;
    dispatch(r, w, &row);
    if (!w->is_deferred)
        metrics_count_answer(w, row, w->status, t0);
}

void *routes_thread_init(unsigned index, void *daemon)
{
    struct daemon *d = daemon;
    struct daemon_thread *w = &d->threads[index];

    w->index = index;
    w->d = d;
    return w;
}

void routes_thread_fini(void *worker)
{
    struct daemon_thread *w = worker;

    idmint_authority_close(w->auth);
    w->auth = NULL;
}
