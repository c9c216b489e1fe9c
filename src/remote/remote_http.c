/* SPDX-License-Identifier: Apache-2.0 */
/*
 * http:// and https:// remote authority: every authority call is one
 * request to an idmintd (docs/http-api.md), whose authority layer applies
 * the rules with its own clock; this file sends what the caller asked and
 * reads the answer. libcurl comes set up by curl_client.h (shared with
 * the etcd store); jansson reads and writes the bodies. One keep-alive
 * connection per authority; only idempotent calls are retried.
 *
 * https://host:port verifies the server's certificate and host name, TLS
 * 1.2 at least, against the system's CA store (/etc/ssl/certs through
 * libcurl's OpenSSL build); https://host:port?ca=/path/ca.pem trusts the
 * PEM CA certificates in that file instead (the rest of the URL after
 * "?ca=" is the path, taken as written: no percent-decoding). A URL query
 * rather than an environment variable, so that each authority URL says
 * whom it trusts wherever it is written (flags, idmintd's [authority] url).
 * A certificate that does not verify fails at once with IDMINT_EUNAVAILABLE
 * naming the verification failure; it is not retried.
 */
#include "remote.h"
#include "internal.h"
#include "curl_client.h"

#include <jansson.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HTTP_CONNECT_TIMEOUT_MS 1000u
#define HTTP_TIMEOUT_MS         5000u
#define HTTP_RETRY_FIRST_MS     50u   /* first backoff; doubles per retry */
#define HTTP_RETRY_BUDGET_MS    2000u /* no retry starts later than this after the first try */
#define HTTP_MAX_REPLY_BYTES    (64u * 1024u * 1024u)
#define HTTP_AUDIT_PAGE         1000u /* the daemon's largest audit limit */
#define HTTP_URL_MAX            512
#define HTTP_CA_QUERY           "?ca="

struct http_remote {
    struct remote base;              /* must be first */
    struct idmint__curl_client http; /* its connection is reused (keep-alive) */
    char base_url[HTTP_URL_MAX];     /* "http[s]://host:port", no trailing slash */
    char ca_file[HTTP_URL_MAX];      /* https: the ?ca= file; "": the system store */
    int is_tls;                      /* https:// */
    char url[HTTP_URL_MAX];          /* URL of the request in flight, for messages */
    const char *method;              /* "GET" or "POST", for messages */
};

/* ==== errors ==== */

/* A 2xx reply we cannot read: the server is not the idmintd we expect. */
static int http_bad_reply(const struct http_remote *h, const char *what)
{
    return idmint__fail(IDMINT_ESTORE, "%s %s: reply has no valid %s", h->method, h->url, what);
}

/* ==== transport ==== */

/*
 * One attempt. Returns 0 with *reply (2xx), else an IDMINT code with the
 * message set; *is_retryable says whether the same request may be sent again
 * (the server could not be reached or answered "unavailable").
 */
static int http_once_try(struct http_remote *h, const char *body, size_t body_len, json_t **reply,
                         int *is_retryable)
{
    json_error_t jerr;
    json_t *doc, *error;
    const char *code = NULL, *message = "";
    long status = 0;
    CURLcode cc;
    int err;

    *is_retryable = 0;
    cc = idmint__curl_client_send(&h->http, h->url, body, body_len);
    if (cc != CURLE_OK) {
        const char *why = idmint__curl_client_error(&h->http, cc);

        if (h->http.is_reply_too_big)
            return idmint__fail(IDMINT_ESTORE, "%s %s: reply is larger than %u bytes", h->method,
                                h->url, HTTP_MAX_REPLY_BYTES);
        if (cc == CURLE_WRITE_ERROR || cc == CURLE_OUT_OF_MEMORY)
            return idmint__fail(IDMINT_ENOMEM, "%s %s: out of memory reading the reply", h->method,
                                h->url);
        /* A certificate that does not verify will not verify on a retry. */
        if (cc == CURLE_PEER_FAILED_VERIFICATION)
            return idmint__fail(
                IDMINT_EUNAVAILABLE,
                "%s %s: TLS certificate verification failed (trusting %s%s): %s", h->method, h->url,
                h->ca_file[0] != '\0' ? "the CA file " : "the system CA store", h->ca_file, why);
        if (cc == CURLE_SSL_CACERT_BADFILE)
            return idmint__fail(IDMINT_EUNAVAILABLE, "%s %s: cannot use the CA file '%s': %s",
                                h->method, h->url, h->ca_file, why);
        /* Refused, reset, timed out: the authority is unreachable for now. */
        *is_retryable = 1;
        return idmint__fail(IDMINT_EUNAVAILABLE, "%s %s: %s", h->method, h->url, why);
    }
    status = idmint__curl_client_status(&h->http);
    doc = json_loadb(h->http.reply != NULL ? h->http.reply : "", h->http.reply_len, 0, &jerr);
    if (status >= 200 && status < 300) {
        if (doc == NULL && h->http.reply_len == 0)
            doc = json_object(); /* e.g. 204: success with nothing to read */
        if (doc == NULL || !json_is_object(doc)) {
            json_decref(doc);
            return idmint__fail(IDMINT_ESTORE, "%s %s: %ld reply is not a JSON object: %s",
                                h->method, h->url, status, doc == NULL ? jerr.text : "");
        }
        *reply = doc;
        return 0;
    }
    error = json_object_get(doc, "error");
    if (json_is_object(error)) {
        code = json_string_value(json_object_get(error, "code"));
        if (json_is_string(json_object_get(error, "message")))
            message = json_string_value(json_object_get(error, "message"));
    }
    err = idmint__wire_error_code(code, status);
    /* no_worker and lease_lost are answers, not outages: asking again cannot help. */
    *is_retryable = status >= 500 && err == IDMINT_EUNAVAILABLE;
    err = idmint__fail(err, "%s %s: %ld %s", h->method, h->url, status,
                       message[0] != '\0' ? message : (code != NULL ? code : "(no message)"));
    json_decref(doc);
    return err;
}

/*
 * Send @p method @p path with @p body (NULL: none; borrowed) and return the
 * parsed 2xx reply in *reply (the caller decrefs). An idempotent request is
 * retried with exponential backoff while the server is unreachable or
 * unavailable, for at most HTTP_RETRY_BUDGET_MS; any other is sent once.
 */
static int http_call(struct http_remote *h, const char *method, const char *path, json_t *body,
                     int is_idempotent, json_t **reply)
{
    uint64_t start_ms = idmint__deadline_now_ms();
    uint32_t backoff_ms = HTTP_RETRY_FIRST_MS;
    char *text = NULL;
    size_t text_len = 0;
    int rc, is_retryable;

    h->method = method;
    if ((size_t)snprintf(h->url, sizeof(h->url), "%s%s", h->base_url, path) >= sizeof(h->url))
        return idmint__fail(IDMINT_EINVAL, "%s %s%s: URL is too long", method, h->base_url, path);
    if (strcmp(method, "POST") == 0) {
        text = body != NULL ? json_dumps(body, JSON_COMPACT) : strdup("");
        if (text == NULL)
            return idmint__fail(IDMINT_ENOMEM, "%s %s: cannot encode the request", method, h->url);
        text_len = strlen(text);
    }
    for (;;) {
        rc = http_once_try(h, text, text_len, reply, &is_retryable);
        if (rc == 0 || !is_idempotent || !is_retryable ||
            idmint__deadline_now_ms() + backoff_ms > start_ms + HTTP_RETRY_BUDGET_MS)
            break;
        idmint__sleep_ms(backoff_ms);
        backoff_ms *= 2;
    }
    free(text);
    return rc;
}

/* ==== JSON fields ==== */

/*
 * A non-negative integer: a decimal string (how 64-bit values travel) or a
 * JSON number (small values). 0 or -1.
 */
static int get_u64(json_t *obj, const char *key, uint64_t *out)
{
    json_t *v = json_object_get(obj, key);

    if (json_is_string(v))
        return idmint__parse_u64(json_string_value(v), out);
    if (json_is_integer(v) && json_integer_value(v) >= 0) {
        *out = (uint64_t)json_integer_value(v);
        return 0;
    }
    return -1;
}

static int get_u32(json_t *obj, const char *key, uint32_t *out)
{
    uint64_t v;

    if (get_u64(obj, key, &v) != 0 || v > UINT32_MAX)
        return -1;
    *out = (uint32_t)v;
    return 0;
}

/* A signed integer as a JSON number or a decimal string with an optional '-'. */
static int get_i64(json_t *obj, const char *key, int64_t *out)
{
    json_t *v = json_object_get(obj, key);

    if (json_is_integer(v)) {
        *out = (int64_t)json_integer_value(v);
        return 0;
    }
    return json_is_string(v) ? idmint__parse_i64(json_string_value(v), out) : -1;
}

/* Copy a string field into @p buf; longer text is cut (free-text fields only). */
static int get_text(json_t *obj, const char *key, char *buf, size_t size)
{
    const char *s = json_string_value(json_object_get(obj, key));

    if (s == NULL)
        return -1;
    snprintf(buf, size, "%s", s);
    return 0;
}

/* An identifier field (name, holder) that must fit @p size without cutting. */
static int get_name(json_t *obj, const char *key, char *buf, size_t size)
{
    const char *s = json_string_value(json_object_get(obj, key));

    if (s == NULL || strlen(s) >= size)
        return -1;
    memcpy(buf, s, strlen(s) + 1);
    return 0;
}

static json_t *json_u64_text(uint64_t v)
{
    char buf[24];

    snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
    return json_string(buf);
}

static json_t *json_i64_text(int64_t v)
{
    char buf[24];

    snprintf(buf, sizeof(buf), "%lld", (long long)v);
    return json_string(buf);
}

/* json_pack failed: out of memory, or text that is not UTF-8. */
static int http_body_fail(const struct http_remote *h, const char *what)
{
    return idmint__fail(IDMINT_EINVAL,
                        "%s: cannot encode the %s request as JSON (text must be "
                        "UTF-8)",
                        h->base_url, what);
}

/* POST @p body (which this frees; NULL when encoding it failed) for the @p what request. */
static int http_post(struct http_remote *h, const char *what, const char *path, json_t *body,
                     int is_retryable, json_t **reply)
{
    int rc;

    if (body == NULL)
        return http_body_fail(h, what);
    rc = http_call(h, "POST", path, body, is_retryable, reply);
    json_decref(body);
    return rc;
}

/* ==== open / close ==== */

static void http_close(struct remote *st)
{
    struct http_remote *h = (struct http_remote *)st;

    if (h == NULL)
        return;
    idmint__curl_client_close(&h->http);
    free(h);
}

/*
 * "//host:port" or "//host:port/" (the URL was "http://host:port"); host is
 * a name, an IPv4 address or a bracketed IPv6 address; https may end in
 * "?ca=PATH". Writes the base URL and the CA file ("" when none).
 */
static int http_location(const char *scheme, const char *location, char *base, size_t size,
                         char *ca, size_t ca_size)
{
    const char *host = location + 2, *p, *port;
    size_t host_len;
    unsigned long port_num = 0;
    int is_tls = strcmp(scheme, "https") == 0;

    ca[0] = '\0';
    if (strncmp(location, "//", 2) != 0)
        return idmint__fail(IDMINT_EINVAL, "authority '%s:%s': expected %s://host:port", scheme,
                            location, scheme);
    if (host[0] == '[') {
        p = strchr(host, ']');
        if (p == NULL || p == host + 1 ||
            strspn(host + 1, "0123456789abcdefABCDEF:.") != (size_t)(p - host - 1))
            return idmint__fail(IDMINT_EINVAL, "authority '%s:%s': bad IPv6 address", scheme,
                                location);
        p++;
    } else {
        p = host + strspn(host, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-");
        if (p == host)
            return idmint__fail(IDMINT_EINVAL, "authority '%s:%s': host is missing", scheme,
                                location);
    }
    host_len = (size_t)(p - host);
    if (*p != ':')
        return idmint__fail(IDMINT_EINVAL, "authority '%s:%s': expected %s://host:port", scheme,
                            location, scheme);
    port = ++p;
    while (*p >= '0' && *p <= '9' && p - port < 6)
        port_num = port_num * 10u + (unsigned long)(*p++ - '0');
    if (p == port || port_num < 1 || port_num > 65535)
        return idmint__fail(IDMINT_EINVAL, "authority '%s:%s': port must be 1..65535", scheme,
                            location);
    if (p[0] == '/')
        p++;
    if (is_tls && strncmp(p, HTTP_CA_QUERY, strlen(HTTP_CA_QUERY)) == 0) {
        const char *path = p + strlen(HTTP_CA_QUERY);

        if (path[0] == '\0' || strlen(path) >= ca_size)
            return idmint__fail(IDMINT_EINVAL,
                                "authority '%s:%s': the ?ca= file path is empty or longer than "
                                "%zu bytes",
                                scheme, location, ca_size - 1);
        memcpy(ca, path, strlen(path) + 1);
        p += strlen(p);
    }
    if (p[0] != '\0')
        return idmint__fail(IDMINT_EINVAL,
                            "authority '%s:%s': unexpected '%s' after the port (expected "
                            "%s://host:port%s)",
                            scheme, location, p, scheme, is_tls ? " or ...?ca=/path/ca.pem" : "");
    if ((size_t)snprintf(base, size, "%s://%.*s:%lu", scheme, (int)host_len, host, port_num) >=
        size)
        return idmint__fail(IDMINT_EINVAL, "authority '%s:%s': host name is too long", scheme,
                            location);
    return 0;
}

/* Visible ASCII only: a token must not be able to end the header line. */
static int http_token_check(const char *token)
{
    size_t i;

    for (i = 0; token[i] != '\0'; i++)
        if (token[i] < 0x21 || token[i] > 0x7e)
            return idmint__fail(IDMINT_EINVAL, "bearer token: character %zu is not visible ASCII",
                                i + 1);
    return 0;
}

/* ==== the history check ==== */

/*
 * What the daemon's store says of its history at @p seq (GET
 * /internal/history): our holders judge it as local holders judge their
 * store's, so a store put back under the daemon stops them within a check.
 */
static int http_history_check(struct remote *st, uint64_t seq, struct idmint__history_state *out)
{
    struct http_remote *h = (struct http_remote *)st;
    struct idmint__history_state res;
    json_t *reply = NULL, *lineage;
    char path[64];
    size_t i, n;
    int64_t backup_ms = 0;
    int rc;

    snprintf(path, sizeof(path), "/internal/history?seq=%llu", (unsigned long long)seq);
    if ((rc = http_call(h, "GET", path, NULL, 1, &reply)) != 0)
        return rc;
    memset(&res, 0, sizeof(res));
    lineage = json_object_get(reply, "lineage");
    n = json_array_size(lineage);
    if (get_text(reply, "store_id", res.store_id, sizeof(res.store_id)) != 0 ||
        get_text(reply, "history", res.head.id, sizeof(res.head.id)) != 0 ||
        !idmint__history_id_valid(res.head.id) || get_u64(reply, "seq", &res.head.seq) != 0 ||
        get_u64(reply, "tip", &res.head.tip) != 0 ||
        get_u64(reply, "oldest_seq", &res.oldest_seq) != 0 ||
        get_u64(reply, "tip_at_seq", &res.tip_at_seq) != 0 ||
        get_i64(reply, "backup_ms", &backup_ms) != 0 || !json_is_array(lineage) ||
        n > IDMINT__LINEAGE_MAX)
        rc = http_bad_reply(h, "the history");
    for (i = 0; rc == 0 && i < n; i++) {
        const char *id = json_string_value(json_array_get(lineage, i));

        if (id == NULL || !idmint__history_id_valid(id))
            rc = http_bad_reply(h, "the history's lineage");
        else
            snprintf(res.lineage[i], sizeof(res.lineage[i]), "%s", id);
    }
    json_decref(reply);
    if (rc != 0)
        return rc;
    res.lineage_n = n;
    res.backup_ms = backup_ms;
    *out = res;
    return 0;
}

/* Both schemes: @p ops says which, and so whether TLS is spoken. */
static int http_open_as(const struct remote_ops *ops, const char *location, const char *token,
                        struct remote **out)
{
    struct http_remote *h;
    const char *headers[5];
    size_t n_headers = 0;
    char auth[1024];
    int rc;

    if ((rc = idmint__curl_load()) != 0)
        return rc;
    if (token != NULL && token[0] != '\0' && (rc = http_token_check(token)) != 0)
        return rc;
    h = calloc(1, sizeof(*h));
    if (h == NULL)
        return idmint__fail(IDMINT_ENOMEM, "out of memory opening http authority");
    h->base.ops = ops;
    h->is_tls = ops == &idmint__remote_https;
    if ((rc = http_location(ops->scheme, location, h->base_url, sizeof(h->base_url), h->ca_file,
                            sizeof(h->ca_file))) != 0) {
        free(h);
        return rc;
    }
    headers[n_headers++] = "Accept: application/json";
    headers[n_headers++] = "Content-Type: application/json";
    headers[n_headers++] = "Expect:"; /* stops curl waiting for 100-continue before a body */
    if (token != NULL && token[0] != '\0') {
        if ((size_t)snprintf(auth, sizeof(auth), "Authorization: Bearer %s", token) >=
            sizeof(auth)) {
            http_close(&h->base);
            return idmint__fail(IDMINT_EINVAL, "bearer token is longer than %zu bytes",
                                sizeof(auth) - 32);
        }
        headers[n_headers++] = auth;
    }
    headers[n_headers] = NULL;
    /* The authority is reached directly: a proxy from the environment would
     * receive the bearer token and add its own delays to lease renewals. */
    rc = idmint__curl_client_open(&h->http, headers, h->is_tls ? "https" : "http",
                                  HTTP_MAX_REPLY_BYTES);
    memset(auth, 0, sizeof(auth));
    if (rc != 0) {
        http_close(&h->base);
        return idmint__fail(IDMINT_ENOMEM, "out of memory opening http authority %s", h->base_url);
    }
    idmint__curl_client_timeouts(&h->http, HTTP_TIMEOUT_MS, HTTP_CONNECT_TIMEOUT_MS);
    if (h->is_tls)
        idmint__curl_client_verify_tls(&h->http, h->ca_file);
    *out = &h->base;
    return 0;
}

static int http_open(const char *location, const char *token, struct remote **out)
{
    return http_open_as(&idmint__remote_http, location, token, out);
}

static int https_open(const char *location, const char *token, struct remote **out)
{
    return http_open_as(&idmint__remote_https, location, token, out);
}

/* ==== namespaces ==== */

static int ns_from_json(const struct http_remote *h, json_t *o, idmint_ns_info *out)
{
    idmint_ns_info ns;
    const char *kind, *layout;
    json_t *disabled;

    memset(&ns, 0, sizeof(ns));
    if (!json_is_object(o) || get_name(o, "name", ns.name, sizeof(ns.name)) != 0)
        return http_bad_reply(h, "namespace name");
    kind = json_string_value(json_object_get(o, "kind"));
    disabled = json_object_get(o, "disabled");
    if (kind == NULL || (strcmp(kind, "snowflake") != 0 && strcmp(kind, "range") != 0))
        return http_bad_reply(h, "namespace kind");
    if (!json_is_boolean(disabled))
        return http_bad_reply(h, "'disabled'");
    ns.is_disabled = json_is_true(disabled);
    if (get_i64(o, "created_ms", &ns.created_ms) != 0)
        return http_bad_reply(h, "'created_ms'");
    if (strcmp(kind, "snowflake") == 0) {
        ns.kind = IDMINT_KIND_SNOWFLAKE;
        layout = json_string_value(json_object_get(o, "layout"));
        if (layout == NULL || idmint_layout_parse(layout, &ns.layout) != 0 ||
            get_u32(o, "unit_ms", &ns.layout.unit_ms) != 0 ||
            get_i64(o, "epoch_ms", &ns.layout.epoch_ms) != 0)
            return http_bad_reply(h, "snowflake layout, unit_ms or epoch_ms");
    } else {
        ns.kind = IDMINT_KIND_RANGE;
        if (get_u64(o, "next_value", &ns.next_value) != 0 ||
            get_u64(o, "max_value", &ns.max_value) != 0 || get_u32(o, "block", &ns.block) != 0 ||
            get_u32(o, "max_block", &ns.max_block) != 0)
            return http_bad_reply(h, "range next_value, max_value, block or max_block");
    }
    *out = ns;
    return 0;
}

/* Not retried: a lost reply to a create that went through would turn into a conflict. */
static int http_ns_create(struct remote *st, const idmint_ns_info *ns)
{
    struct http_remote *h = (struct http_remote *)st;
    const idmint_layout *l = &ns->layout;
    char layout[32];
    json_t *body, *reply = NULL;
    int rc;

    if (ns->kind == IDMINT_KIND_SNOWFLAKE) {
        snprintf(layout, sizeof(layout), "%u/%u/%u/%u", (unsigned)l->time_bits,
                 (unsigned)l->region_bits, (unsigned)l->worker_bits, (unsigned)l->sequence_bits);
        body = json_pack("{s:s, s:s, s:s, s:I, s:o}", "name", ns->name, "kind", "snowflake",
                         "layout", layout, "unit_ms", (json_int_t)l->unit_ms, "epoch",
                         json_i64_text(l->epoch_ms));
    } else {
        body =
            json_pack("{s:s, s:s, s:o, s:o, s:I, s:I}", "name", ns->name, "kind", "range", "start",
                      json_u64_text(ns->next_value), "max", json_u64_text(ns->max_value), "block",
                      (json_int_t)ns->block, "max_block", (json_int_t)ns->max_block);
    }
    rc = http_post(h, "namespace create", "/v1/namespaces", body, 0, &reply);
    json_decref(reply);
    return rc;
}

static int http_ns_get(struct remote *st, const char *name, idmint_ns_info *out)
{
    struct http_remote *h = (struct http_remote *)st;
    idmint_ns_info info;
    char path[128];
    json_t *reply = NULL;
    int rc;

    snprintf(path, sizeof(path), "/v1/namespaces/%s", name);
    rc = http_call(h, "GET", path, NULL, 1, &reply);
    if (rc == 0)
        rc = ns_from_json(h, reply, &info);
    json_decref(reply);
    if (rc != 0)
        return rc;
    *out = info;
    return 0;
}

/* Fill one list element @p out from @p o; 0 or an error naming the bad reply. */
typedef int (*json_row_fn)(const struct http_remote *h, json_t *o, void *out);

/*
 * GET @p path and append the elements of its array @p key, at most @p max of
 * them, to *list (@p elem_size each; realloc'd, the caller frees it even on
 * error); *len grows by *got.
 */
static int http_get_rows(struct http_remote *h, const char *path, const char *key, size_t max,
                         size_t elem_size, json_row_fn from_json, void **list, size_t *len,
                         size_t *got)
{
    json_t *reply = NULL, *arr;
    size_t i, n;
    void *grown;
    int rc = http_call(h, "GET", path, NULL, 1, &reply);

    *got = 0;
    if (rc != 0)
        return rc;
    arr = json_object_get(reply, key);
    n = json_array_size(arr);
    if (!json_is_array(arr) || n > max) {
        char what[64];

        snprintf(what, sizeof(what), "'%s' array", key);
        rc = http_bad_reply(h, what);
    } else if (n > 0 && (grown = realloc(*list, (*len + n) * elem_size)) == NULL) {
        rc = idmint__fail(IDMINT_ENOMEM, "out of memory reading %s from %s", key, h->base_url);
    } else {
        if (n > 0)
            *list = grown;
        for (i = 0; i < n && rc == 0; i++)
            rc = from_json(h, json_array_get(arr, i), (char *)*list + (*len + i) * elem_size);
        if (rc == 0) {
            *len += n;
            *got = n;
        }
    }
    json_decref(reply);
    return rc;
}

/* One GET of a whole list: *out and *n on success, nothing to free on error. */
static int http_get_list(struct http_remote *h, const char *path, const char *key, size_t elem_size,
                         json_row_fn from_json, void **out, size_t *n)
{
    void *list = NULL;
    size_t len = 0, got;
    int rc = http_get_rows(h, path, key, SIZE_MAX, elem_size, from_json, &list, &len, &got);

    if (rc != 0) {
        free(list);
        return rc;
    }
    *out = list;
    *n = len;
    return 0;
}

static int ns_row(const struct http_remote *h, json_t *o, void *out)
{
    return ns_from_json(h, o, out);
}

static int http_ns_list(struct remote *st, idmint_ns_info **out, size_t *n)
{
    void *list;
    int rc = http_get_list((struct http_remote *)st, "/v1/namespaces", "namespaces", sizeof(**out),
                           ns_row, &list, n);

    if (rc == 0)
        *out = list;
    return rc;
}

/* Not retried: each call is audited, and an admin can simply ask again. */
static int http_ns_set_disabled(struct remote *st, const char *name, int disabled)
{
    struct http_remote *h = (struct http_remote *)st;
    char path[128];
    json_t *reply = NULL;
    int rc;

    snprintf(path, sizeof(path), "/v1/namespaces/%s/%s", name, disabled ? "disable" : "enable");
    rc = http_call(h, "POST", path, NULL, 0, &reply);
    json_decref(reply);
    return rc;
}

/* ==== worker leases ==== */

/*
 * The history the daemon's store reported for a grant (optional: an older
 * daemon sends none, and then a rewind is caught by the daemon alone), with
 * its tip when the store keeps a log (an older daemon sends none: the pair
 * is then judged by its counter alone).
 */
static int history_from_json(const struct http_remote *h, json_t *o, struct idmint__history *out)
{
    struct idmint__history res = {"", 0, 0};

    if (json_object_get(o, "history") == NULL) {
        *out = res;
        return 0;
    }
    if (get_text(o, "history", res.id, sizeof(res.id)) != 0 || !idmint__history_id_valid(res.id) ||
        get_u64(o, "grant_seq", &res.seq) != 0 ||
        (json_object_get(o, "grant_tip") != NULL && get_u64(o, "grant_tip", &res.tip) != 0))
        return http_bad_reply(h, "'history', 'grant_seq' or 'grant_tip'");
    *out = res;
    return 0;
}

/* Fill the lease fields the daemon decides from a take/renew/release reply. */
static int lease_from_json(const struct http_remote *h, json_t *o, int is_take,
                           struct idmint__lease *out)
{
    struct idmint__lease res = *out;
    int rc;

    if (get_u64(o, "lease_until", &res.lease_until) != 0)
        return http_bad_reply(h, "'lease_until'");
    if (is_take &&
        (get_u32(o, "region", &res.region) != 0 || get_u32(o, "worker_id", &res.worker_id) != 0 ||
         get_u64(o, "generation", &res.generation) != 0 ||
         get_u64(o, "fence_found", &res.fence_found) != 0))
        return http_bad_reply(h, "region, worker_id, generation or fence_found");
    if ((rc = history_from_json(h, o, &res.history)) != 0)
        return rc;
    *out = res;
    return 0;
}

/*
 * Add what @p o says of this process to request @p body (freed and NULL on
 * failure): the daemon records it with the grant, beside the token's name.
 */
static json_t *origin_into(json_t *body, const struct idmint__origin *o)
{
    if (body != NULL && (json_object_set_new(body, "host", json_string(o->host)) != 0 ||
                         json_object_set_new(body, "pid", json_integer((json_int_t)o->pid)) != 0 ||
                         json_object_set_new(body, "program", json_string(o->program)) != 0)) {
        json_decref(body);
        body = NULL;
    }
    return body;
}

/*
 * Never retried. If the reply to a take is lost, the daemon may have given
 * us a worker id we do not know about: it stays held until its E (lease_ms
 * from now) and then returns to the pool. That costs one worker id for one
 * lease length, never uniqueness; retrying instead would take a second id.
 */
static int http_lease_take(struct remote *st, const char *ns, uint32_t lease_ms,
                           struct idmint__lease *lease)
{
    struct http_remote *h = (struct http_remote *)st;
    json_t *body, *reply = NULL;
    int rc;

    /* The daemon audits the token we authenticate with, at its own clock. */
    body = origin_into(json_pack("{s:s, s:s, s:I, s:s, s:I}", "op", "take", "namespace", ns,
                                 "region", (json_int_t)lease->region, "holder", lease->holder,
                                 "lease_ms", (json_int_t)lease_ms),
                       &lease->origin);
    rc = http_post(h, "lease take", "/internal/workers/lease", body, 0, &reply);
    if (rc == 0)
        rc = lease_from_json(h, reply, 1, lease);
    json_decref(reply);
    return rc;
}

/* Body of renew and release: the lease key plus @p extra_key (stolen value). */
static json_t *lease_body(const char *op, const char *ns, const struct idmint__lease *lease,
                          const char *extra_key, json_t *extra)
{
    return json_pack("{s:s, s:s, s:I, s:I, s:s, s:o, s:o}", "op", op, "namespace", ns, "region",
                     (json_int_t)lease->region, "worker_id", (json_int_t)lease->worker_id, "holder",
                     lease->holder, "generation", json_u64_text(lease->generation), extra_key,
                     extra);
}

/* Retried: E = max(E, now + lease_ms) for the same holder and generation is idempotent. */
static int http_lease_renew(struct remote *st, const char *ns, struct idmint__lease *lease,
                            uint32_t lease_ms)
{
    struct http_remote *h = (struct http_remote *)st;
    json_t *body, *reply = NULL;
    int rc;

    body = lease_body("renew", ns, lease, "lease_ms", json_integer((json_int_t)lease_ms));
    rc = http_post(h, "lease renew", "/internal/workers/lease", body, 1, &reply);
    if (rc == 0)
        rc = lease_from_json(h, reply, 0, lease);
    json_decref(reply);
    return rc;
}

/*
 * Retried. If an earlier attempt went through and only its reply was lost,
 * the retry finds the holder cleared and reports ELEASELOST; the id is free
 * either way.
 */
static int http_lease_release(struct remote *st, const char *ns, struct idmint__lease *lease,
                              uint64_t next_unit)
{
    struct http_remote *h = (struct http_remote *)st;
    json_t *body, *reply = NULL;
    int rc;

    body = lease_body("release", ns, lease, "final_time", json_u64_text(next_unit));
    rc = http_post(h, "lease release", "/internal/workers/lease", body, 1, &reply);
    if (rc == 0)
        rc = lease_from_json(h, reply, 0, lease);
    json_decref(reply);
    return rc;
}

static int worker_row(const struct http_remote *h, json_t *o, void *out)
{
    idmint_worker_info *w = out;

    memset(w, 0, sizeof(*w));
    if (get_u32(o, "region", &w->region) != 0 || get_u32(o, "worker_id", &w->worker_id) != 0 ||
        get_name(o, "holder", w->holder, sizeof(w->holder)) != 0 ||
        get_u64(o, "generation", &w->generation) != 0 ||
        get_u64(o, "lease_until", &w->lease_until) != 0)
        return http_bad_reply(h, "worker row");
    return 0;
}

static int http_lease_list(struct remote *st, const char *ns, idmint_worker_info **out, size_t *n)
{
    char path[128];
    void *list;
    int rc;

    snprintf(path, sizeof(path), "/v1/namespaces/%s/workers", ns);
    rc = http_get_list((struct http_remote *)st, path, "workers", sizeof(**out), worker_row, &list,
                       n);
    if (rc == 0)
        *out = list;
    return rc;
}

/* Not retried: a second forced release would bump the generation again and audit it twice. */
static int http_force_release(struct remote *st, const char *ns, uint32_t region,
                              uint32_t worker_id, int64_t max_ahead_ms)
{
    struct http_remote *h = (struct http_remote *)st;
    json_t *body, *reply = NULL;
    int rc;

    body = json_pack("{s:s, s:s, s:I, s:I}", "op", "force_release", "namespace", ns, "region",
                     (json_int_t)region, "worker_id", (json_int_t)worker_id);
    /* The daemon's authority turns the bound into its own time units. */
    if (body != NULL && max_ahead_ms >= 0 &&
        json_object_set_new(body, "max_ahead_ms", json_integer((json_int_t)max_ahead_ms)) != 0) {
        json_decref(body);
        body = NULL;
    }
    rc = http_post(h, "force release", "/internal/workers/lease", body, 0, &reply);
    json_decref(reply);
    return rc;
}

/* ==== ranges ==== */

/* Retried: the same (incarnation, request id, count) returns the saved range. */
static int http_range_reserve(struct remote *st, const char *ns, const char *incarnation,
                              const char *request_id, uint64_t count, struct idmint__range *out)
{
    struct http_remote *h = (struct http_remote *)st;
    struct idmint__range res = {0};
    json_t *body, *reply = NULL;
    int rc;

    if (count > (uint64_t)INT64_MAX)
        return idmint__fail(IDMINT_EINVAL, "range count %llu is too large",
                            (unsigned long long)count);
    body = origin_into(json_pack("{s:s, s:s, s:s, s:I}", "namespace", ns, "incarnation",
                                 incarnation, "request_id", request_id, "count", (json_int_t)count),
                       &out->origin);
    rc = http_post(h, "range reserve", "/internal/ranges/lease", body, 1, &reply);
    if (rc == 0) {
        if (get_u64(reply, "start", &res.start) != 0 || get_u64(reply, "end", &res.end) != 0 ||
            res.start < 1 || res.end <= res.start || res.end - res.start > count)
            rc = http_bad_reply(h, "range start and end");
        else if ((rc = history_from_json(h, reply, &res.history)) == 0) {
            res.origin = out->origin;
            *out = res;
        }
    }
    json_decref(reply);
    return rc;
}

/* Retried: deleting what is already gone deletes nothing. */
static int http_range_forget(struct remote *st, const char *ns, const char *incarnation,
                             const char *before_request_id, uint64_t *forgotten)
{
    struct http_remote *h = (struct http_remote *)st;
    json_t *body, *reply = NULL;
    uint64_t n;
    int rc;

    body = json_pack("{s:s, s:s, s:s}", "namespace", ns, "incarnation", incarnation,
                     "before_request_id", before_request_id);
    rc = http_post(h, "forget request records", "/internal/ranges/forget", body, 1, &reply);
    if (rc == 0) {
        if (get_u64(reply, "forgotten", &n) != 0)
            rc = http_bad_reply(h, "forgotten count");
        else if (forgotten != NULL)
            *forgotten = n;
    }
    json_decref(reply);
    return rc;
}

/* ==== audit ==== */

static int audit_row(const struct http_remote *h, json_t *o, void *out)
{
    idmint_audit_entry *e = out;

    memset(e, 0, sizeof(*e));
    if (get_i64(o, "seq", &e->seq) != 0 || get_i64(o, "at_ms", &e->at_ms) != 0 ||
        get_text(o, "actor", e->actor, sizeof(e->actor)) != 0 ||
        get_text(o, "action", e->action, sizeof(e->action)) != 0 ||
        get_text(o, "namespace", e->ns, sizeof(e->ns)) != 0 ||
        get_text(o, "detail", e->detail, sizeof(e->detail)) != 0)
        return http_bad_reply(h, "audit entry");
    return 0;
}

/* The daemon serves at most HTTP_AUDIT_PAGE records per request: page until @p limit. */
static int http_audit_list(struct remote *st, int64_t after_seq, size_t limit,
                           idmint_audit_entry **out, size_t *n)
{
    struct http_remote *h = (struct http_remote *)st;
    void *list = NULL;
    char path[96];
    size_t len = 0, page, got;
    int rc = 0;

    while (len < limit) {
        page = limit - len < HTTP_AUDIT_PAGE ? limit - len : HTTP_AUDIT_PAGE;
        snprintf(path, sizeof(path), "/v1/audit?after=%lld&limit=%zu", (long long)after_seq, page);
        rc = http_get_rows(h, path, "entries", page, sizeof(**out), audit_row, &list, &len, &got);
        if (rc != 0 || got < page)
            break;
        after_seq = ((idmint_audit_entry *)list)[len - 1].seq;
    }
    if (rc != 0) {
        free(list);
        return rc;
    }
    *out = list;
    *n = len;
    return 0;
}

/* ==== provenance ==== */

static int grant_row(const struct http_remote *h, json_t *o, void *out)
{
    idmint_grant_info *g = out;
    const char *kind = json_string_value(json_object_get(o, "kind"));

    memset(g, 0, sizeof(*g));
    g->size = sizeof(*g);
    g->kind =
        kind != NULL && strcmp(kind, "range") == 0 ? IDMINT_KIND_RANGE : IDMINT_KIND_SNOWFLAKE;
    if (kind == NULL || get_u32(o, "region", &g->region) != 0 ||
        get_u32(o, "worker_id", &g->worker_id) != 0 ||
        get_u64(o, "generation", &g->generation) != 0 || get_u64(o, "first", &g->first) != 0 ||
        get_u64(o, "last", &g->last) != 0 ||
        get_text(o, "incarnation", g->holder, sizeof(g->holder)) != 0 ||
        get_text(o, "host", g->host, sizeof(g->host)) != 0 || get_u32(o, "pid", &g->pid) != 0 ||
        get_text(o, "program", g->program, sizeof(g->program)) != 0 ||
        get_text(o, "token", g->token, sizeof(g->token)) != 0 ||
        get_i64(o, "granted_ms", &g->granted_ms) != 0 ||
        get_i64(o, "updated_ms", &g->updated_ms) != 0)
        return http_bad_reply(h, "grant");
    return 0;
}

static int http_trace(struct remote *st, const char *ns, uint64_t id, idmint_grant_info **out,
                      size_t *n)
{
    char path[160];
    void *list;
    int rc;

    snprintf(path, sizeof(path), "/v1/ids/%llu/trace?namespace=%s", (unsigned long long)id, ns);
    rc =
        http_get_list((struct http_remote *)st, path, "grants", sizeof(**out), grant_row, &list, n);
    if (rc == 0)
        *out = *n > 0 ? list : NULL;
    if (rc == 0 && *n == 0)
        free(list);
    return rc;
}

static int collision_row(const struct http_remote *h, json_t *o, void *out)
{
    idmint_collision *c = out;

    memset(c, 0, sizeof(*c));
    c->size = sizeof(*c);
    if (get_i64(o, "seq", &c->seq) != 0 || get_name(o, "namespace", c->ns, sizeof(c->ns)) != 0 ||
        get_u64(o, "id", &c->id) != 0 ||
        get_text(o, "first_owner", c->first_owner, sizeof(c->first_owner)) != 0 ||
        get_text(o, "second_owner", c->second_owner, sizeof(c->second_owner)) != 0 ||
        get_text(o, "verdict", c->verdict, sizeof(c->verdict)) != 0 ||
        get_text(o, "reporter", c->reporter, sizeof(c->reporter)) != 0 ||
        get_i64(o, "observed_ms", &c->observed_ms) != 0 ||
        get_i64(o, "reported_ms", &c->reported_ms) != 0 ||
        get_text(o, "note", c->note, sizeof(c->note)) != 0)
        return http_bad_reply(h, "collision record");
    return 0;
}

/* Not retried: each report is a record of its own and audited. */
static int http_collision_report(struct remote *st, const char *ns, uint64_t id,
                                 int64_t observed_ms, const char *note, idmint_collision *out)
{
    struct http_remote *h = (struct http_remote *)st;
    json_t *body, *reply = NULL;
    int rc;

    body = json_pack("{s:s, s:o, s:o, s:s}", "namespace", ns, "id", json_u64_text(id),
                     "observed_ms", json_i64_text(observed_ms), "note", note);
    rc = http_post(h, "collision report", "/v1/collisions", body, 0, &reply);
    if (rc == 0)
        rc = collision_row(h, json_object_get(reply, "collision"), out);
    json_decref(reply);
    return rc;
}

static int http_collisions_list(struct remote *st, int64_t after_seq, size_t limit,
                                idmint_collision **out, size_t *n)
{
    char path[96];
    void *list;
    int rc;

    snprintf(path, sizeof(path), "/v1/collisions?after=%lld&limit=%zu", (long long)after_seq,
             limit);
    rc = http_get_list((struct http_remote *)st, path, "collisions", sizeof(**out), collision_row,
                       &list, n);
    if (rc == 0)
        *out = list;
    return rc;
}

const struct remote_ops idmint__remote_http = {
    .scheme = "http",
    .open = http_open,
    .close = http_close,
    .ns_create = http_ns_create,
    .ns_get = http_ns_get,
    .ns_list = http_ns_list,
    .ns_set_disabled = http_ns_set_disabled,
    .lease_take = http_lease_take,
    .lease_renew = http_lease_renew,
    .lease_release = http_lease_release,
    .lease_list = http_lease_list,
    .force_release = http_force_release,
    .range_reserve = http_range_reserve,
    .range_forget = http_range_forget,
    .audit_list = http_audit_list,
    .trace = http_trace,
    .collision_report = http_collision_report,
    .collisions_list = http_collisions_list,
    .history_check = http_history_check,
};

/* The same calls over TLS (the file's header says what is verified). */
const struct remote_ops idmint__remote_https = {
    .scheme = "https",
    .open = https_open,
    .close = http_close,
    .ns_create = http_ns_create,
    .ns_get = http_ns_get,
    .ns_list = http_ns_list,
    .ns_set_disabled = http_ns_set_disabled,
    .lease_take = http_lease_take,
    .lease_renew = http_lease_renew,
    .lease_release = http_lease_release,
    .lease_list = http_lease_list,
    .force_release = http_force_release,
    .range_reserve = http_range_reserve,
    .range_forget = http_range_forget,
    .audit_list = http_audit_list,
    .trace = http_trace,
    .collision_report = http_collision_report,
    .collisions_list = http_collisions_list,
    .history_check = http_history_check,
};

const struct remote_ops *idmint__remote_find(const char *url)
{
    static const struct remote_ops *const remotes[] = {&idmint__remote_http, &idmint__remote_https};
    size_t i, len;

    for (i = 0; url != NULL && i < sizeof(remotes) / sizeof(remotes[0]); i++) {
        len = strlen(remotes[i]->scheme);
        if (strncmp(url, remotes[i]->scheme, len) == 0 && url[len] == ':')
            return remotes[i];
    }
    return NULL;
}
