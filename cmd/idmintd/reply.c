/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The helpers of reply.h: every answer goes through routes_reply, which
 * notes its status for the metrics, and every error through
 * routes_fail_http, the one JSON error shape of docs/http-api.md.
 */
#include "reply.h"

#include "daemon.h"
#include "idmint_service.h"
#include "errors_http.h"
#include "json.h"
#include "log.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ==== replies ==== */

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

/* ==== the request ==== */

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

int routes_query_ns(struct http_req *r, char *ns, size_t size)
{
    int q = routes_query(r, "namespace", ns, size);

    if (q < 0) {
        routes_fail_http(r, 400, "invalid_argument", "namespace is malformed or too long");
        return -1;
    }
    if (q == 0)
        memcpy(ns, IDMINT_DEFAULT_NS, sizeof(IDMINT_DEFAULT_NS));
    if (idmint__ns_name_check(ns) != 0) {
        routes_fail(r, IDMINT_EINVAL, NULL);
        return -1;
    }
    return 0;
}

int routes_query_int(struct http_req *r, const char *name, int64_t min, int64_t max, int64_t def,
                     int64_t *out)
{
    char text[32], msg[128];
    int q = routes_query(r, name, text, sizeof(text));
    size_t len, i;
    int64_t v = 0;

    if (q == 0) {
        *out = def;
        return 0;
    }
    len = q > 0 ? strlen(text) : 0;
    if (len == 0 || len > 18 || strspn(text, "0123456789") != len)
        goto bad;
    for (i = 0; i < len; i++)
        v = v * 10 + (text[i] - '0');
    if (v < min || v > max)
        goto bad;
    *out = v;
    return 0;
bad:
    snprintf(msg, sizeof(msg), "%s must be a whole number from %" PRId64 " to %" PRId64, name, min,
             max);
    routes_fail_http(r, 400, "invalid_argument", msg);
    return -1;
}

void routes_iso_or_empty(int64_t ms, char *buf, size_t size)
{
    if (idmint_format_iso8601(ms, buf, size) != 0)
        buf[0] = '\0';
}
