/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The dispatcher: limits (431, 413), the route table (404, 405 with Allow),
 * bearer-token roles (401, 403), then one routes_*.c handler; and the
 * helpers every handler answers through, so each answer is counted and
 * every error has the one JSON shape of docs/http-api.md.
 */
#include "daemon.h"

#include "idmint_service.h"
#include "errors_http.h"
#include "json.h"
#include "log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_SEGMENTS 6

/* ==== helpers for the handlers ==== */

void routes_reply(struct http_req *r, int status, const char *content_type, const char *body,
                  size_t len)
{
    struct worker *w = r->thread;

    w->status = status;
    http_respond(r, status, content_type, body, len);
}

void routes_reply_malloced(struct http_req *r, int status, const char *content_type, char *body,
                           size_t len)
{
    /* The response must outlive this call: move it into the request's memory. */
    char *copy = body != NULL ? http_alloc(r, len) : NULL;

    if (copy == NULL) {
        free(body);
        routes_fail(r, IDMINT_ENOMEM, "out of memory building the response");
        return;
    }
    memcpy(copy, body, len);
    free(body);
    routes_reply(r, status, content_type, copy, len);
}

void routes_json(struct http_req *r, int status, char *body, size_t len)
{
    routes_reply_malloced(r, status, "application/json", body, len);
}

void routes_json_tree(struct http_req *r, int status, struct json *v)
{
    size_t len = 0;
    char *text = json_dump(v, &len);

    json_free(v);
    routes_json(r, status, text, len);
}

void routes_fail_http(struct http_req *r, int status, const char *code, const char *message)
{
    static const char fallback[] =
        "{\"error\":{\"code\":\"unavailable\",\"message\":\"out of memory\"}}";
    char clean[512];
    size_t i, len = 0;
    char *body;

    /* JSON text must be UTF-8: keep printable ASCII of detail we did not write. */
    snprintf(clean, sizeof(clean), "%s", message);
    for (i = 0; clean[i] != '\0'; i++) {
        unsigned char c = (unsigned char)clean[i];

        if (c < 0x20 || c >= 0x7f)
            clean[i] = '?';
    }
    body = json_error_body(code, clean, &len);
    if (body == NULL) {
        routes_reply(r, 503, "application/json", fallback, sizeof(fallback) - 1);
        return;
    }
    routes_json(r, status, body, len);
}

void routes_fail(struct http_req *r, int err, const char *message)
{
    const struct errors_http_row *row = errors_http_lookup(err);
    char text[512];

    if (message == NULL || message[0] == '\0') {
        const char *detail = idmint_errmsg();

        if (detail[0] != '\0')
            snprintf(text, sizeof(text), "%s: %s", idmint_strerror(err), detail);
        else
            snprintf(text, sizeof(text), "%s", idmint_strerror(err));
        message = text;
    }
    if (row->status >= 500) {
        struct worker *w = r->thread;

        log_write(LOG_WARN, "request failed", "status=%d code=%s error=\"%s\" thread=%u",
                  row->status, row->code, idmint_strerror(err), w->index);
    }
    routes_fail_http(r, row->status, row->code, message);
}

void routes_store_done(struct worker *w, uint64_t t0)
{
    metrics_store_time(&w->metrics, metrics_now_ns() - t0);
}

int routes_authority(struct worker *w, idmint_authority **out)
{
    int rc;

    if (w->auth == NULL) {
        rc = handles_authority_open(&w->d->handles, &w->auth);
        if (rc != 0) {
            w->auth = NULL;
            return rc;
        }
    }
    /* Audited changes name the caller of this request, not the daemon's uid. */
    idmint__authority_act_as(w->auth, w->actor);
    *out = w->auth;
    return 0;
}

idmint_authority *routes_authority_or_fail(struct http_req *r, struct worker *w)
{
    idmint_authority *a;
    int rc = routes_authority(w, &a);

    if (rc != 0) {
        routes_fail(r, rc, NULL);
        return NULL;
    }
    return a;
}

int routes_snowflake_ns(struct http_req *r, struct worker *w, const char *ns, idmint_authority **a,
                        idmint_ns_info *info, const char *not_snowflake)
{
    uint64_t t0;
    int rc;

    if ((*a = routes_authority_or_fail(r, w)) == NULL)
        return -1;
    idmint_ns_info_init(info, 0);
    t0 = metrics_now_ns();
    rc = idmint__authority_ns_resolve(*a, ns, info);
    routes_store_done(w, t0);
    if (rc != 0) {
        routes_fail(r, rc, NULL);
        return -1;
    }
    if (info->kind != IDMINT_KIND_SNOWFLAKE) {
        routes_fail_http(r, 400, "invalid_argument", not_snowflake);
        return -1;
    }
    return 0;
}

int64_t routes_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int routes_query(const struct http_req *r, const char *name, char *buf, size_t size)
{
    size_t name_len = strlen(name), i = 0;

    while (r->query != NULL && i < r->query_len) {
        const char *pair = r->query + i;
        const char *amp = memchr(pair, '&', r->query_len - i);
        size_t len = amp != NULL ? (size_t)(amp - pair) : r->query_len - i;

        i += len + 1;
        if (len < name_len || memcmp(pair, name, name_len) != 0 ||
            (len > name_len && pair[name_len] != '='))
            continue;
        {
            const char *v = pair + name_len + (len > name_len ? 1 : 0);
            size_t vlen = len > name_len ? len - name_len - 1 : 0, k, n = 0;

            for (k = 0; k < vlen; k++) {
                char c = v[k];

                if (n + 1 >= size)
                    return -1;
                if (c == '%') {
                    int hi, lo;

                    if (k + 2 >= vlen)
                        return -1;
                    hi = idmint__hex_value(v[k + 1]);
                    lo = idmint__hex_value(v[k + 2]);
                    if (hi < 0 || lo < 0 || (hi == 0 && lo == 0))
                        return -1;
                    c = (char)(hi * 16 + lo);
                    k += 2;
                } else if (c == '+') {
                    c = ' ';
                }
                buf[n++] = c;
            }
            buf[n] = '\0';
            return 1;
        }
    }
    return 0;
}

/* ==== dispatch ==== */

struct route {
    enum metrics_route id;
    const char *allow; /* methods for the Allow header */
};

static int method_is(const struct http_req *r, const char *m)
{
    size_t len = strlen(m);

    return r->method_len == len && memcmp(r->method, m, len) == 0;
}

static int seg_is(const char *seg, size_t len, const char *s)
{
    return strlen(s) == len && memcmp(seg, s, len) == 0;
}

/* Copy a path segment that names something; -1 when it is too long. */
static int seg_copy(char *dst, size_t size, const char *seg, size_t len)
{
    if (len >= size)
        return -1;
    memcpy(dst, seg, len);
    dst[len] = '\0';
    return 0;
}

/* The role a route needs for method @p is_post; AUTH_NONE: open. */
static int needed_role(enum metrics_route id, int is_post)
{
    switch (id) {
    case ROUTE_IDS:
    case ROUTE_DECODE:
    case ROUTE_NAMESPACE:
    case ROUTE_NS_WORKERS:
        return AUTH_MINT;
    case ROUTE_NAMESPACES:
        return is_post ? AUTH_ADMIN : AUTH_MINT;
    case ROUTE_WORKERS_LEASE:
    case ROUTE_RANGES_LEASE:
    case ROUTE_RANGES_FORGET:
        return AUTH_GENERATOR;
    case ROUTE_NS_DISABLE:
    case ROUTE_NS_ENABLE:
    case ROUTE_AUDIT:
        return AUTH_ADMIN;
    default:
        return AUTH_NONE;
    }
}

static void dispatch(struct http_req *r, struct worker *w, enum metrics_route *route_out)
{
    const struct config *cfg = &w->d->cfg;
    const char *seg[MAX_SEGMENTS];
    size_t seg_len[MAX_SEGMENTS], n = 0, i = 0;
    char name[128];
    struct route route = {ROUTE_OTHER, NULL};
    int is_get = method_is(r, "GET"), is_post = method_is(r, "POST");
    int role = AUTH_ADMIN, allowed;

    if (r->header_bytes > cfg->max_header_bytes) {
        routes_fail_http(r, 431, "headers_too_large",
                         "request headers are larger than max_header_bytes");
        return;
    }
    if (r->has_bad_framing) {
        routes_fail_http(r, 400, "invalid_argument",
                         "conflicting Content-Length or Transfer-Encoding headers");
        return;
    }
    if (r->body_len > cfg->max_body_bytes) {
        routes_fail_http(r, 413, "payload_too_large", "request body is larger than max_body_bytes");
        return;
    }

    /* Split "/a/b/c" into segments; an empty segment (//, trailing /) matches nothing. */
    while (i < r->path_len && n < MAX_SEGMENTS) {
        size_t start;

        if (r->path[i] != '/')
            break;
        start = ++i;
        while (i < r->path_len && r->path[i] != '/')
            i++;
        seg[n] = r->path + start;
        seg_len[n] = i - start;
        if (seg_len[n] == 0)
            break;
        n++;
    }
    if (i != r->path_len)
        n = 0;

    name[0] = '\0';
    if (n == 1 && seg_is(seg[0], seg_len[0], "metrics"))
        route = (struct route){ROUTE_METRICS, "GET"};
    else if (n == 1 && seg_is(seg[0], seg_len[0], "healthz"))
        route = (struct route){ROUTE_HEALTHZ, "GET"};
    else if (n == 1 && seg_is(seg[0], seg_len[0], "readyz"))
        route = (struct route){ROUTE_READYZ, "GET"};
    else if (n >= 2 && seg_is(seg[0], seg_len[0], "v1")) {
        if (n == 2 && seg_is(seg[1], seg_len[1], "ids"))
            route = (struct route){ROUTE_IDS, "GET"};
        else if (n == 4 && seg_is(seg[1], seg_len[1], "ids") &&
                 seg_is(seg[3], seg_len[3], "decode") &&
                 seg_copy(name, sizeof(name), seg[2], seg_len[2]) == 0)
            route = (struct route){ROUTE_DECODE, "GET"};
        else if (n == 2 && seg_is(seg[1], seg_len[1], "namespaces"))
            route = (struct route){ROUTE_NAMESPACES, "GET, POST"};
        else if (n == 2 && seg_is(seg[1], seg_len[1], "audit"))
            route = (struct route){ROUTE_AUDIT, "GET"};
        else if (n >= 3 && seg_is(seg[1], seg_len[1], "namespaces") &&
                 seg_copy(name, sizeof(name), seg[2], seg_len[2]) == 0) {
            if (n == 3)
                route = (struct route){ROUTE_NAMESPACE, "GET"};
            else if (n == 4 && seg_is(seg[3], seg_len[3], "disable"))
                route = (struct route){ROUTE_NS_DISABLE, "POST"};
            else if (n == 4 && seg_is(seg[3], seg_len[3], "enable"))
                route = (struct route){ROUTE_NS_ENABLE, "POST"};
            else if (n == 4 && seg_is(seg[3], seg_len[3], "workers"))
                route = (struct route){ROUTE_NS_WORKERS, "GET"};
        }
    } else if (n == 3 && seg_is(seg[0], seg_len[0], "internal") &&
               seg_is(seg[2], seg_len[2], "lease")) {
        if (seg_is(seg[1], seg_len[1], "workers"))
            route = (struct route){ROUTE_WORKERS_LEASE, "POST"};
        else if (seg_is(seg[1], seg_len[1], "ranges"))
            route = (struct route){ROUTE_RANGES_LEASE, "POST"};
    } else if (n == 3 && seg_is(seg[0], seg_len[0], "internal") &&
               seg_is(seg[1], seg_len[1], "ranges") && seg_is(seg[2], seg_len[2], "forget")) {
        route = (struct route){ROUTE_RANGES_FORGET, "POST"};
    }
    *route_out = route.id;
    if (route.allow == NULL) {
        routes_fail_http(r, 404, "not_found", "no such route");
        return;
    }
    allowed = (is_get && strstr(route.allow, "GET") != NULL) ||
              (is_post && strstr(route.allow, "POST") != NULL);
    if (!allowed) {
        char text[96];

        http_add_header(r, "allow", route.allow);
        snprintf(text, sizeof(text), "method not allowed; use %s", route.allow);
        routes_fail_http(r, 405, "method_not_allowed", text);
        return;
    }

    w->actor = "anonymous";
    if (needed_role(route.id, is_post) != AUTH_NONE && cfg->n_tokens > 0) {
        int is_missing;
        const struct auth_token *t = auth_check(cfg->tokens, cfg->n_tokens, r->authorization,
                                                r->authorization_len, &is_missing);

        if (t == NULL) {
            http_add_header(r, "www-authenticate", "Bearer");
            routes_fail_http(r, 401, "unauthenticated",
                             is_missing ? "a bearer token is required" : "unknown token");
            return;
        }
        role = (int)t->role;
        w->actor = t->name;
        if (role < needed_role(route.id, is_post)) {
            char text[128];

            snprintf(text, sizeof(text), "this route needs the %s role; token '%s' has %s",
                     auth_role_name((enum auth_role)needed_role(route.id, is_post)), t->name,
                     auth_role_name(t->role));
            routes_fail_http(r, 403, "permission_denied", text);
            return;
        }
    }

    switch (route.id) {
    case ROUTE_IDS:
        routes_ids_get(r, w);
        break;
    case ROUTE_DECODE:
        routes_ids_decode(r, w, name);
        break;
    case ROUTE_WORKERS_LEASE:
        routes_internal_workers(r, w, role);
        break;
    case ROUTE_RANGES_LEASE:
        routes_internal_ranges(r, w);
        break;
    case ROUTE_RANGES_FORGET:
        routes_internal_ranges_forget(r, w);
        break;
    case ROUTE_NAMESPACES:
        if (is_post)
            routes_ns_create(r, w);
        else
            routes_ns_list(r, w);
        break;
    case ROUTE_NAMESPACE:
        routes_ns_get(r, w, name);
        break;
    case ROUTE_NS_DISABLE:
        routes_ns_set_disabled(r, w, name, 1);
        break;
    case ROUTE_NS_ENABLE:
        routes_ns_set_disabled(r, w, name, 0);
        break;
    case ROUTE_NS_WORKERS:
        routes_ns_workers(r, w, name);
        break;
    case ROUTE_AUDIT:
        routes_audit(r, w);
        break;
    case ROUTE_METRICS:
        routes_metrics(r, w);
        break;
    case ROUTE_HEALTHZ:
        routes_healthz(r, w);
        break;
    case ROUTE_READYZ:
        routes_readyz(r, w);
        break;
    default:
        routes_fail_http(r, 404, "not_found", "no such route");
        break;
    }
}

void routes_handle(struct http_req *r)
{
    struct worker *w = r->thread;
    enum metrics_route route = ROUTE_OTHER;
    uint64_t t0 = metrics_now_ns();

    w->status = 0;
    dispatch(r, w, &route);
    metrics_count_request(&w->metrics, route, w->status, metrics_now_ns() - t0);
    if (w->status >= 500)
        log_write(LOG_DEBUG, "request answered", "route=%d status=%d", (int)route, w->status);
}

void *routes_thread_init(unsigned index, void *daemon)
{
    struct daemon *d = daemon;
    struct worker *w = &d->workers[index];

    w->index = index;
    w->d = d;
    return w;
}

void routes_thread_fini(void *worker)
{
    struct worker *w = worker;

    idmint_authority_close(w->auth);
    w->auth = NULL;
}
