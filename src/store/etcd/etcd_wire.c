/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The etcd store's wire: the members from the URL, one POST to one member,
 * and the call's budget across members and retries (etcd_post), with the
 * read-only and conditional txns and the range answers built on it. It
 * knows which answers another member might change and which a write may
 * have applied (ETCD_UNKNOWN); it decides nothing about our keys.
 */
#include "etcd_internal.h"

int etcd_wire_open(struct etcd_store *s)
{
    static const char *const headers[] = {
        "Content-Type: application/json",
        "Expect:", /* stops curl waiting for 100-continue before a body */
        /* A member that has lost its leader refuses at once instead of waiting. */
        "Grpc-Metadata-hasleader: true",
        NULL,
    };

    if (idmint__curl_client_open(&s->http, headers, "http", ETCD_MAX_REPLY_BYTES) != 0)
        return idmint__fail(IDMINT_ENOMEM, "out of memory opening etcd store");
    return 0;
}

void etcd_wire_close(struct etcd_store *s)
{
    idmint__curl_client_close(&s->http);
}

/*
 * One POST of @p body to @p path on member s->cur, for at most @p timeout_ms.
 * ETCD_OK with *reply (the caller decrefs), else the outcome with the
 * message set and *err the code to report if no other try helps.
 */
static enum etcd_outcome etcd_once(struct etcd_store *s, const char *path, const char *body,
                                   uint64_t timeout_ms, json_t **reply, int *err)
{
    const char *member = s->members[s->cur];
    char url[600];
    json_error_t jerr;
    json_t *doc;
    const char *msg;
    long status = 0;
    int64_t code = 0;
    CURLcode cc;

    *err = IDMINT_EUNAVAILABLE;
    snprintf(url, sizeof(url), "%s%s", member, path);
    idmint__curl_client_timeouts(&s->http, timeout_ms,
                                 timeout_ms < (uint64_t)ETCD_CONNECT_TIMEOUT_MS
                                     ? timeout_ms
                                     : (uint64_t)ETCD_CONNECT_TIMEOUT_MS);
    cc = idmint__curl_client_send(&s->http, url, body, strlen(body));
    if (cc != CURLE_OK) {
        const char *why = idmint__curl_client_error(&s->http, cc);

        if (s->http.is_reply_too_big) {
            *err = idmint__fail(IDMINT_ESTORE, "%s: %s: reply is larger than %u bytes", s->name,
                                url, ETCD_MAX_REPLY_BYTES);
            return ETCD_DEFINITE;
        }
        if (cc == CURLE_WRITE_ERROR || cc == CURLE_OUT_OF_MEMORY) {
            *err = etcd_oom(s, "reading a reply");
            return ETCD_DEFINITE;
        }
        idmint__fail(IDMINT_EUNAVAILABLE, "%s: %s: %s", s->name, url, why);
        /* Refused or unresolvable: nothing was sent. Anything else (a timeout,
         * a reset) may have reached the member. */
        return cc == CURLE_COULDNT_CONNECT || cc == CURLE_COULDNT_RESOLVE_HOST ? ETCD_NOT_SENT
                                                                               : ETCD_MAYBE;
    }
    status = idmint__curl_client_status(&s->http);
    doc = json_loadb(s->http.reply != NULL ? s->http.reply : "", s->http.reply_len, 0, &jerr);
    if (status == 200 && json_is_object(doc)) {
        *reply = doc;
        return ETCD_OK;
    }
    msg = json_string_value(json_object_get(doc, "message"));
    if (msg == NULL)
        msg = json_string_value(json_object_get(doc, "error"));
    if (etcd_get_i64(doc, "code", &code) != 0)
        code = 0;
    if (status == 200) {
        json_decref(doc);
        *err = idmint__fail(IDMINT_ESTORE, "%s: %s: the reply is not a JSON object: %s", s->name,
                            url, jerr.text);
        return ETCD_DEFINITE;
    }
    if (msg != NULL && strstr(msg, "space exceeded") != NULL) {
        /* The NOSPACE alarm: every write fails until an operator compacts,
         * defragments and disarms it (docs/multi-node.md). */
        *err = idmint__fail(IDMINT_EUNAVAILABLE,
                            "%s: %s: etcd is out of space (%s): compact, defragment and disarm "
                            "the alarm, or raise --quota-backend-bytes",
                            s->name, url, msg);
        json_decref(doc);
        return ETCD_DEFINITE;
    }
    /* gRPC codes: 14 unavailable (no leader, leader changed, request timed
     * out), 4 deadline exceeded, 8 too many requests, 1 canceled (a member
     * shutting down answers 408 "the client connection is closing"):
     * another member or a moment later may answer, and a write's outcome is
     * unknown. A gateway in trouble may answer 5xx. */
    if (code == 14 || code == 4 || code == 8 || code == 1 || status == 408 || status >= 500 ||
        (msg != NULL && strstr(msg, "no leader") != NULL)) {
        idmint__fail(IDMINT_EUNAVAILABLE, "%s: %s: %ld %s", s->name, url, status,
                     msg != NULL ? msg : "(no message)");
        json_decref(doc);
        return ETCD_MAYBE;
    }
    if (msg != NULL && strstr(msg, "required revision has been compacted") != NULL) {
        s->is_compacted = 1; /* history_check: the log no longer holds that seq */
        *err = idmint__fail(IDMINT_ESTORE, "%s: %s: %s", s->name, url, msg);
        json_decref(doc);
        return ETCD_DEFINITE;
    }
    if (msg != NULL && strstr(msg, "requested lease not found") != NULL) {
        /* Revoked, or a snapshot from before its grant: expiry_lease grants another. */
        s->is_lease_gone = 1;
        *err = idmint__fail(IDMINT_ESTORE, "%s: %s: %s", s->name, url, msg);
        json_decref(doc);
        return ETCD_DEFINITE;
    }
    if (code == 16 || code == 7)
        *err = idmint__fail(IDMINT_EACCESS,
                            "%s: %s: %s: etcd authentication is on; idmint's etcd store does not "
                            "sign in (use a cluster or proxy without auth on a private network)",
                            s->name, url, msg != NULL ? msg : "permission denied");
    else if (status == 404 || status == 405 || status == 501)
        *err = idmint__fail(IDMINT_ESTORE,
                            "%s: %s: %ld: not an etcd 3.4+ JSON gateway (is this an etcd client "
                            "port?)",
                            s->name, url, status);
    else
        *err = idmint__fail(IDMINT_ESTORE, "%s: %s: %ld %s", s->name, url, status,
                            msg != NULL ? msg : "(no message)");
    json_decref(doc);
    return ETCD_DEFINITE;
}

int etcd_post(struct etcd_store *s, const char *path, json_t *body, int is_write, json_t **reply)
{
    uint32_t backoff_ms = ETCD_BACKOFF_FIRST_MS;
    size_t failed_in_row = 0;
    char *text;
    int rc, err;

    if (s->is_oom || body == NULL) {
        s->is_oom = 0;
        json_decref(body);
        return etcd_oom(s, "building a request");
    }
    text = json_dumps(body, JSON_COMPACT);
    json_decref(body);
    if (text == NULL)
        return etcd_oom(s, "encoding a request");
    for (;;) {
        uint64_t now_ms = idmint__deadline_now_ms(), left_ms;
        enum etcd_outcome out;

        if (now_ms >= s->deadline_ms) {
            char last[512];

            /* The last failure says why; copied, as the message is rewritten. */
            snprintf(last, sizeof(last), "%s", idmint_errmsg());
            rc = idmint__fail(
                IDMINT_EUNAVAILABLE, "no etcd member answered within %u ms (last: %s)",
                (unsigned)(now_ms - s->call_start_ms), last[0] != '\0' ? last : s->name);
            break;
        }
        left_ms = s->deadline_ms - now_ms;
        out = etcd_once(s, path, text, left_ms < ETCD_ATTEMPT_MS ? left_ms : ETCD_ATTEMPT_MS, reply,
                        &err);
        if (out == ETCD_OK) {
            rc = 0;
            break;
        }
        if (out == ETCD_DEFINITE) {
            rc = err;
            break;
        }
        s->cur = (s->cur + 1) % s->n_members;
        if (is_write && out == ETCD_MAYBE) {
            rc = ETCD_UNKNOWN;
            break;
        }
        /* Every member failed in a row: wait a little before the next round. */
        if (++failed_in_row % s->n_members == 0) {
            uint64_t wait_ms = backoff_ms;

            now_ms = idmint__deadline_now_ms();
            if (now_ms + wait_ms > s->deadline_ms)
                wait_ms = s->deadline_ms > now_ms ? s->deadline_ms - now_ms : 0;
            idmint__sleep_ms((uint32_t)wait_ms);
            if (backoff_ms < ETCD_BACKOFF_MAX_MS)
                backoff_ms *= 2;
        }
    }
    free(text);
    return rc;
}

void etcd_range_free(struct etcd_range *r)
{
    size_t i;

    for (i = 0; i < r->n; i++) {
        free(r->kvs[i].key);
        free(r->kvs[i].value);
    }
    free(r->kvs);
    r->kvs = NULL;
    r->n = 0;
}

void etcd_ranges_free(struct etcd_range *r, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++)
        etcd_range_free(&r[i]);
}

int etcd_range_parse(struct etcd_store *s, json_t *o, struct etcd_range *out)
{
    json_t *kvs = json_object_get(o, "kvs"), *kv;
    size_t i, n = json_is_array(kvs) ? json_array_size(kvs) : 0;

    out->kvs = NULL;
    out->n = 0;
    out->count = 0;
    if (!json_is_object(o))
        return idmint__fail(IDMINT_ESTORE, "%s: a range answer is not an object", s->name);
    if (etcd_get_u64(o, "count", &out->count) != 0 || out->count < n)
        out->count = n;
    if (n == 0)
        return 0;
    if ((out->kvs = calloc(n, sizeof(*out->kvs))) == NULL)
        return etcd_oom(s, "reading a range");
    json_array_foreach(kvs, i, kv)
    {
        struct etcd_kv *e = &out->kvs[i];
        const char *k = json_string_value(json_object_get(kv, "key"));
        const char *v = json_string_value(json_object_get(kv, "value"));
        size_t klen = 0;
        int rc;

        out->n = i + 1;
        if (k == NULL || (rc = etcd_b64_decode(k, &e->key, &klen)) != 0 ||
            (rc = etcd_b64_decode(v != NULL ? v : "", &e->value, &e->value_len)) != 0 ||
            etcd_get_i64(kv, "create_revision", &e->create_rev) != 0 ||
            etcd_get_i64(kv, "mod_revision", &e->mod_rev) != 0 ||
            etcd_get_i64(kv, "version", &e->version) != 0) {
            etcd_range_free(out);
            return k != NULL && rc == -2 ? etcd_oom(s, "reading a range")
                                         : idmint__fail(IDMINT_ESTORE,
                                                        "%s: a key-value in a range answer is not "
                                                        "what etcd sends",
                                                        s->name);
        }
    }
    return 0;
}

/*
 * The @p n "response_range" answers of the txn reply @p reply into @p out
 * (each freed by the caller with etcd_ranges_free, also on error).
 */
static int ranges_of(struct etcd_store *s, json_t *reply, struct etcd_range *out, size_t n)
{
    json_t *responses = json_object_get(reply, "responses");
    size_t i;
    int rc;

    memset(out, 0, n * sizeof(*out));
    if (json_array_size(responses) != n)
        return idmint__fail(IDMINT_ESTORE, "%s: a txn answer has %zu responses, not %zu", s->name,
                            json_array_size(responses), n);
    for (i = 0; i < n; i++) {
        json_t *r = json_object_get(json_array_get(responses, i), "response_range");

        if ((rc = etcd_range_parse(s, r, &out[i])) != 0)
            return rc;
    }
    return 0;
}

const struct etcd_kv *etcd_range_one(const struct etcd_range *r)
{
    return r->n > 0 ? &r->kvs[0] : NULL;
}

int etcd_read(struct etcd_store *s, json_t *ops, struct etcd_range *out, size_t n)
{
    json_t *txn = json_pack("{s:o}", "success", ops), *reply = NULL;
    int rc;

    memset(out, 0, n * sizeof(*out));
    if ((rc = etcd_post(s, "/v3/kv/txn", txn, 0, &reply)) != 0)
        return rc;
    rc = ranges_of(s, reply, out, n);
    json_decref(reply);
    return rc;
}

int etcd_write(struct etcd_store *s, json_t *compare, json_t *success, json_t *failure,
               struct etcd_range *fail, size_t n, struct etcd_range *ok_last)
{
    json_t *txn = json_pack("{s:o,s:o,s:o}", "compare", compare, "success", success, "failure",
                            failure),
           *reply = NULL;
    int rc;

    memset(fail, 0, n * sizeof(*fail));
    if (ok_last != NULL)
        memset(ok_last, 0, sizeof(*ok_last));
    s->applied_rev = 0;
    if ((rc = etcd_post(s, "/v3/kv/txn", txn, 1, &reply)) != 0)
        return rc;
    if (json_is_true(json_object_get(reply, "succeeded"))) {
        json_t *responses = json_object_get(reply, "responses");
        size_t k = json_array_size(responses);

        /* The header's revision is the one this txn wrote its keys at. */
        if (etcd_get_i64(json_object_get(reply, "header"), "revision", &s->applied_rev) != 0)
            s->applied_rev = 0;
        rc = ETCD_APPLIED;
        if (ok_last != NULL && k == 0)
            rc = idmint__fail(IDMINT_ESTORE, "%s: a txn answer without responses", s->name);
        else if (ok_last != NULL &&
                 (rc = etcd_range_parse(
                      s, json_object_get(json_array_get(responses, k - 1), "response_range"),
                      ok_last)) == 0)
            rc = ETCD_APPLIED;
    } else {
        rc = ranges_of(s, reply, fail, n);
    }
    json_decref(reply);
    return rc;
}

int etcd_read_keys(struct etcd_store *s, const char *const *keys, size_t n, struct etcd_range *r)
{
    json_t *ops = json_array();
    size_t i;

    for (i = 0; i < n; i++)
        etcd_add(s, ops, etcd_op_range(keys[i], NULL));
    etcd_add(s, ops, etcd_op_range(s->hkey, NULL));
    return etcd_read(s, ops, r, n + 1);
}

int etcd_read_prefix(struct etcd_store *s, const char *sub, struct etcd_range *r)
{
    char key[ETCD_KEY_MAX], end[ETCD_KEY_MAX];
    json_t *ops;
    int rc = etcd_key_fmt(s, key, "%s", sub);

    if (rc != 0)
        return rc;
    etcd_key_prefix_end(key, end);
    ops = json_array();
    etcd_add(s, ops, etcd_op_range(key, end));
    return etcd_read(s, ops, r, 1);
}

int etcd_range_page(struct etcd_store *s, const char *key, const char *end, size_t page,
                    int descend, struct etcd_range *out)
{
    json_t *req = json_pack("{s:o,s:o,s:o}", "key", etcd_j_key(key), "range_end", etcd_j_key(end),
                            "limit", etcd_j_u64(page)),
           *reply = NULL;
    int rc;

    memset(out, 0, sizeof(*out));
    if (req != NULL && descend &&
        (json_object_set_new(req, "sort_order", json_string("DESCEND")) != 0 ||
         json_object_set_new(req, "sort_target", json_string("KEY")) != 0)) {
        json_decref(req);
        req = NULL;
    }
    if ((rc = etcd_post(s, "/v3/kv/range", req, 0, &reply)) != 0)
        return rc;
    rc = etcd_range_parse(s, reply, out);
    json_decref(reply);
    return rc;
}

void etcd_call_begin(struct etcd_store *s)
{
    s->call_start_ms = idmint__deadline_now_ms();
    s->deadline_ms = s->call_start_ms + ETCD_CALL_BUDGET_MS;
    s->is_oom = 0;
    s->call_tip = 0;
}

static int is_host_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '-';
}

static int url_bad(const char *location, const char *why)
{
    return idmint__fail(IDMINT_EINVAL,
                        "etcd:%s: %s (expected etcd://HOST:PORT[,HOST:PORT...][/PREFIX])", location,
                        why);
}

/* One "host:port" (or "[v6]:port") of @p len bytes at @p p into s->members. */
static int url_member(struct etcd_store *s, const char *location, const char *p, size_t len)
{
    const char *colon, *host_end;
    char buf[300];
    uint64_t port = 0;
    size_t i;

    if (len == 0)
        return url_bad(location, "an empty member in the list");
    if (memchr(p, '@', len) != NULL)
        return url_bad(location, "user:password@ before a host is not supported (etcd "
                                 "authentication is not)");
    if (s->n_members == ETCD_MAX_MEMBERS)
        return url_bad(location, "more than 16 members");
    if (p[0] == '[') {
        host_end = memchr(p, ']', len);
        if (host_end == NULL)
            return url_bad(location, "an IPv6 address without its closing ']'");
        for (i = 1; p + i < host_end; i++)
            if (idmint__hex_value(p[i]) < 0 && p[i] != ':' && p[i] != '.')
                return url_bad(location, "a bad character in an IPv6 address");
        colon = host_end + 1 < p + len && host_end[1] == ':' ? host_end + 1 : NULL;
        if (colon == NULL && host_end + 1 != p + len)
            return url_bad(location, "text after an IPv6 address that is not ':PORT'");
    } else {
        colon = memchr(p, ':', len);
        host_end = colon != NULL ? colon : p + len;
        for (i = 0; p + i < host_end; i++)
            if (!is_host_char(p[i]))
                return url_bad(location, "a bad character in a host name (user:password@ and "
                                         "query strings are not supported)");
        if (host_end == p)
            return url_bad(location, "a member without a host");
    }
    if (colon != NULL) {
        size_t plen = (size_t)(p + len - colon - 1);
        char digits[8];

        if (plen == 0 || plen > 5)
            return url_bad(location, "a port that is not 1 to 65535");
        memcpy(digits, colon + 1, plen);
        digits[plen] = '\0';
        if (idmint__parse_u64(digits, &port) != 0 || port < 1 || port > 65535)
            return url_bad(location, "a port that is not 1 to 65535");
    } else {
        port = 2379; /* etcd's client port */
    }
    if ((size_t)(host_end - p) + (p[0] == '[') > 256)
        return url_bad(location, "a host name longer than 255 bytes");
    snprintf(buf, sizeof(buf), "http://%.*s%s:%u", (int)(host_end - p), p, p[0] == '[' ? "]" : "",
             (unsigned)port);
    if ((s->members[s->n_members] = strdup(buf)) == NULL)
        return etcd_oom(s, "opening");
    s->n_members++;
    return 0;
}

int etcd_url_parse(struct etcd_store *s, const char *location)
{
    const char *p = location, *hosts_end, *prefix;
    size_t i, plen;

    if (strncmp(p, "//", 2) != 0)
        return url_bad(location, "no '//' after 'etcd:'");
    p += 2;
    hosts_end = p + strcspn(p, "/?#");
    if (*hosts_end == '?' || *hosts_end == '#')
        return url_bad(location, "query strings and fragments are not supported");
    while (p < hosts_end) {
        const char *comma = memchr(p, ',', (size_t)(hosts_end - p));
        const char *end = comma != NULL ? comma : hosts_end;
        int rc = url_member(s, location, p, (size_t)(end - p));

        if (rc != 0)
            return rc;
        p = comma != NULL ? comma + 1 : hosts_end;
        if (comma != NULL && p == hosts_end)
            return url_bad(location, "an empty member in the list");
    }
    if (s->n_members == 0)
        return url_bad(location, "no member");
    prefix = hosts_end;
    plen = strlen(prefix);
    while (plen > 0 && prefix[plen - 1] == '/')
        plen--;
    if (plen == 0) {
        snprintf(s->prefix, sizeof(s->prefix), "%s", ETCD_DEFAULT_PREFIX);
        return 0;
    }
    if (plen >= sizeof(s->prefix))
        return url_bad(location, "a prefix longer than 199 bytes");
    for (i = 0; i < plen; i++) {
        char c = prefix[i];

        if (!is_host_char(c) && c != '_' && c != '/')
            return url_bad(location, "a prefix with a character outside [A-Za-z0-9._/-]");
        if (c == '/' && i > 0 && prefix[i - 1] == '/')
            return url_bad(location, "a prefix with an empty segment ('//')");
    }
    memcpy(s->prefix, prefix, plen);
    s->prefix[plen] = '\0';
    return 0;
}
