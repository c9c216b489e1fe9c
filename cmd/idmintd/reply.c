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
#include "route_table.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ==== replies ==== */

void routes_reply(struct http_req *r, int status, const char *content_type, const char *body,
                  size_t len)
{
    struct daemon_thread *w = r->thread;

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
    const struct idmint__wire_error *row = errors_http_lookup(err);
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
        struct daemon_thread *w = r->thread;

        log_write(LOG_WARN, "request failed", "status=%d code=%s error=\"%s\" thread=%u",
                  row->status, row->code, idmint_strerror(err), w->index);
    }
    routes_fail_http(r, row->status, row->code, message);
}

void routes_fail_wire(struct http_req *r, const char *code, const char *message)
{
    const struct idmint__wire_error *row = idmint__wire_error_named(code);

    /* A code missing from the table is the daemon's bug: still an answer. */
    routes_fail_http(r, row != NULL ? row->status : 500, code, message);
}

/* ==== the request ==== */

/* ==== names a client sends ==== */

#define NAME_SHOWN_MAX 64 /* bytes of a client's name quoted back; the rest is cut */

static int lower(char c)
{
    return tolower((unsigned char)c);
}

/*
 * Edit distance with swaps of neighbours (optimal string alignment),
 * ignoring case; names are at most NAME_SHOWN_MAX bytes, longer ones are
 * never near.
 */
static size_t edit_distance(const char *a, size_t n, const char *b, size_t m)
{
    size_t rows[3][NAME_SHOWN_MAX + 1], i, j;
    size_t *back2 = rows[0], *back = rows[1], *cur = rows[2];

    for (j = 0; j <= m; j++)
        back[j] = j;
    for (i = 1; i <= n; i++) {
        size_t *t;

        cur[0] = i;
        for (j = 1; j <= m; j++) {
            size_t cost = lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1, best = back[j - 1] + cost;

            if (back[j] + 1 < best)
                best = back[j] + 1;
            if (cur[j - 1] + 1 < best)
                best = cur[j - 1] + 1;
            if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) &&
                lower(a[i - 2]) == lower(b[j - 1]) && back2[j - 2] + 1 < best)
                best = back2[j - 2] + 1;
            cur[j] = best;
        }
        t = back2;
        back2 = back;
        back = cur;
        cur = t;
    }
    return back[m];
}

/* 1 when @p a (@p n bytes, n >= 2) is an abbreviation of @p b: its letters in order, same first. */
static int is_abbreviation(const char *a, size_t n, const char *b)
{
    size_t i = 0;

    if (n < 2 || lower(a[0]) != lower(b[0]))
        return 0;
    for (; *b != '\0' && i < n; b++)
        if (lower(*b) == lower(a[i]))
            i++;
    return i == n;
}

const char *routes_near_miss(const char *given, size_t len, const char *const *known)
{
    const char *best = NULL;
    size_t best_score = SIZE_MAX, i;

    if (len == 0 || len > NAME_SHOWN_MAX)
        return NULL;
    for (i = 0; known != NULL && known[i] != NULL; i++) {
        size_t klen = strlen(known[i]), slips = klen >= 6 ? 2 : 1, score = SIZE_MAX, d;

        if (klen > NAME_SHOWN_MAX)
            continue;
        d = edit_distance(given, len, known[i], klen);
        if (d <= slips)
            score = d;
        else if (is_abbreviation(given, len, known[i]))
            score = slips + 1; /* after any typo: "cont" is count, not a shortened "control" */
        if (score < best_score) {
            best_score = score;
            best = known[i];
        }
    }
    return best;
}

/*
 * Answer 400 for name @p given (@p len bytes) that is not in @p known: what
 * it is (@p what, "query parameter" or "body field"), a near miss, and
 * what the route takes.
 */
static int unknown_name(struct http_req *r, const struct route_row *row, const char *what,
                        const char *given, size_t len, const char *const *known)
{
    const char *near = routes_near_miss(given, len, known);
    char text[512];
    size_t used, i;

    used = (size_t)snprintf(text, sizeof(text), "unknown %s '%.*s%s'", what,
                            (int)(len < NAME_SHOWN_MAX ? len : NAME_SHOWN_MAX), given,
                            len > NAME_SHOWN_MAX ? "..." : "");
    if (near != NULL && used < sizeof(text))
        used += (size_t)snprintf(text + used, sizeof(text) - used, " (did you mean '%s'?)", near);
    if (known == NULL || known[0] == NULL) {
        if (used < sizeof(text))
            snprintf(text + used, sizeof(text) - used, "; %s %s takes no %ss", row->method,
                     row->path, what);
    } else if (used < sizeof(text)) {
        used += (size_t)snprintf(text + used, sizeof(text) - used, "; %s %s takes", row->method,
                                 row->path);
        for (i = 0; known[i] != NULL && used < sizeof(text); i++)
            used += (size_t)snprintf(text + used, sizeof(text) - used, "%s%s", i > 0 ? ", " : " ",
                                     known[i]);
    }
    routes_fail_http(r, 400, "invalid_argument", text);
    return -1;
}

/* 1 when @p name (@p len bytes) is an entry of @p known (NULL: none). */
static int is_listed(const char *name, size_t len, const char *const *known)
{
    size_t i;

    for (i = 0; known != NULL && known[i] != NULL; i++)
        if (strlen(known[i]) == len && memcmp(known[i], name, len) == 0)
            return 1;
    return 0;
}

int routes_check_names(struct http_req *r, const struct route_row *row)
{
    size_t i = 0;

    /* Names compare as sent, undecoded, as routes_query() finds them. */
    while (r->query != NULL && i < r->query_len) {
        const char *pair = r->query + i, *eq, *amp = memchr(pair, '&', r->query_len - i);
        size_t len = amp != NULL ? (size_t)(amp - pair) : r->query_len - i, name_len, k;

        i += len + 1;
        if (len == 0)
            continue; /* "a=1&&b=2", a trailing '&': no parameter */
        eq = memchr(pair, '=', len);
        name_len = eq != NULL ? (size_t)(eq - pair) : len;
        if (!is_listed(pair, name_len, row->params))
            return unknown_name(r, row, "query parameter", pair, name_len, row->params);
        /* A second copy would be ignored (routes_query reads the first): refuse it. */
        for (k = i; k < r->query_len;) {
            const char *p2 = r->query + k, *a2 = memchr(p2, '&', r->query_len - k);
            size_t l2 = a2 != NULL ? (size_t)(a2 - p2) : r->query_len - k;

            k += l2 + 1;
            if (l2 >= name_len && memcmp(p2, pair, name_len) == 0 &&
                (l2 == name_len || p2[name_len] == '=')) {
                char text[160];

                snprintf(text, sizeof(text), "query parameter '%.*s' is given more than once",
                         (int)name_len, pair);
                routes_fail_http(r, 400, "invalid_argument", text);
                return -1;
            }
        }
    }
    if (r->body_len > 0) {
        char err[256];
        struct json *body = json_parse_object(r->body, r->body_len, err, sizeof(err));
        const char *unknown;
        int rc = 0;

        if (body == NULL && row->fields == NULL)
            snprintf(err, sizeof(err), "%s %s takes no request body", row->method, row->path);
        if (body == NULL) {
            routes_fail_http(r, 400, "invalid_argument", err);
            return -1;
        }
        if ((unknown = json_unknown_key(body, row->fields)) != NULL)
            rc = unknown_name(r, row, "body field", unknown, strlen(unknown), row->fields);
        json_free(body);
        return rc;
    }
    return 0;
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

/* ==== the IDs of GET /v1/ids ==== */

#define U64_DIGITS_MAX 20

static const char digit_pairs[201] = "00010203040506070809101112131415161718192021222324"
                                     "25262728293031323334353637383940414243444546474849"
                                     "50515253545556575859606162636465666768697071727374"
                                     "75767778798081828384858687888990919293949596979899";

/* Write @p v in decimal at @p dst; returns the number of digits. */
static size_t u64_decimal(uint64_t v, char *dst)
{
    char tmp[U64_DIGITS_MAX];
    size_t n = U64_DIGITS_MAX, len;

    while (v >= 100) {
        unsigned pair = (unsigned)(v % 100) * 2;

        v /= 100;
        tmp[--n] = digit_pairs[pair + 1];
        tmp[--n] = digit_pairs[pair];
    }
    if (v >= 10) {
        unsigned pair = (unsigned)v * 2;

        tmp[--n] = digit_pairs[pair + 1];
        tmp[--n] = digit_pairs[pair];
    } else {
        tmp[--n] = (char)('0' + v);
    }
    len = U64_DIGITS_MAX - n;
    memcpy(dst, tmp + n, len);
    return len;
}

static int accepts_text(const struct http_req *r)
{
    static const char want[] = "text/plain";
    size_t i;

    if (r->accept == NULL || r->accept_len < sizeof(want) - 1)
        return 0;
    for (i = 0; i + sizeof(want) - 1 <= r->accept_len; i++)
        if (memcmp(r->accept + i, want, sizeof(want) - 1) == 0)
            return 1;
    return 0;
}

void routes_reply_ids(struct http_req *r, const char *ns, const uint64_t *ids, size_t count)
{
    size_t i, ns_len = strlen(ns);
    char *body = http_alloc(r, count * (U64_DIGITS_MAX + 3) + ns_len + 32), *p;

    if (body == NULL) {
        routes_fail(r, IDMINT_ENOMEM, "out of memory");
        return;
    }
    p = body;
    if (accepts_text(r)) {
        for (i = 0; i < count; i++) {
            p += u64_decimal(ids[i], p);
            *p++ = '\n';
        }
        routes_reply(r, 200, "text/plain; charset=utf-8", body, (size_t)(p - body));
        return;
    }
    memcpy(p, "{\"namespace\":\"", 14);
    p += 14;
    memcpy(p, ns, ns_len);
    p += ns_len;
    memcpy(p, "\",\"ids\":[", 9);
    p += 9;
    for (i = 0; i < count; i++) {
        if (i > 0)
            *p++ = ',';
        *p++ = '"';
        p += u64_decimal(ids[i], p);
        *p++ = '"';
    }
    memcpy(p, "]}", 2);
    p += 2;
    routes_reply(r, 200, "application/json", body, (size_t)(p - body));
}
