/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The etcd store's codec: how etcd's JSON gateway spells things (base64
 * keys and values, int64 as decimal strings, defaults left out) and our key
 * schema (store_etcd.c lists it), with the op and compare builders every
 * txn is made of. Pure: no I/O, no time; a builder that runs out of memory
 * marks the store (is_oom) and the next send refuses, so call sites need
 * no check of their own.
 */
#include "etcd_internal.h"

static const char b64_digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *etcd_b64_encode(const void *data, size_t len)
{
    const unsigned char *p = data;
    char *out = malloc((len + 2) / 3 * 4 + 1), *o = out;
    size_t i;

    if (out == NULL)
        return NULL;
    for (i = 0; i + 2 < len; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];

        *o++ = b64_digits[v >> 18 & 63];
        *o++ = b64_digits[v >> 12 & 63];
        *o++ = b64_digits[v >> 6 & 63];
        *o++ = b64_digits[v & 63];
    }
    if (i < len) {
        uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < len ? (uint32_t)p[i + 1] << 8 : 0u);

        *o++ = b64_digits[v >> 18 & 63];
        *o++ = b64_digits[v >> 12 & 63];
        *o++ = i + 1 < len ? b64_digits[v >> 6 & 63] : '=';
        *o++ = '=';
    }
    *o = '\0';
    return out;
}

static int b64_value(char c)
{
    const char *at = c != '\0' ? strchr(b64_digits, c) : NULL;

    return at != NULL ? (int)(at - b64_digits) : -1;
}

int etcd_b64_decode(const char *text, char **out, size_t *len)
{
    size_t n = strlen(text), i, k = 0;
    char *buf;

    if (n % 4 != 0)
        return -1;
    if ((buf = malloc(n / 4 * 3 + 1)) == NULL)
        return -2;
    for (i = 0; i < n; i += 4) {
        int a = b64_value(text[i]), b = b64_value(text[i + 1]);
        int c = text[i + 2] == '=' ? 0 : b64_value(text[i + 2]);
        int d = text[i + 3] == '=' ? 0 : b64_value(text[i + 3]);
        int pad = (text[i + 2] == '=') + (text[i + 3] == '=');
        uint32_t v;

        if (a < 0 || b < 0 || c < 0 || d < 0 || (pad > 0 && i + 4 != n) ||
            (text[i + 2] == '=' && text[i + 3] != '=')) {
            free(buf);
            return -1;
        }
        v = (uint32_t)a << 18 | (uint32_t)b << 12 | (uint32_t)c << 6 | (uint32_t)d;
        buf[k++] = (char)(v >> 16 & 0xff);
        if (pad < 2)
            buf[k++] = (char)(v >> 8 & 0xff);
        if (pad < 1)
            buf[k++] = (char)(v & 0xff);
    }
    buf[k] = '\0';
    *out = buf;
    *len = k;
    return 0;
}

int etcd_get_u64(json_t *obj, const char *key, uint64_t *out)
{
    json_t *v = json_object_get(obj, key);

    if (v == NULL) {
        *out = 0;
        return 0;
    }
    if (json_is_integer(v) && json_integer_value(v) >= 0) {
        *out = (uint64_t)json_integer_value(v);
        return 0;
    }
    return json_is_string(v) ? idmint__parse_u64(json_string_value(v), out) : -1;
}

int etcd_get_i64(json_t *obj, const char *key, int64_t *out)
{
    json_t *v = json_object_get(obj, key);

    if (v == NULL) {
        *out = 0;
        return 0;
    }
    if (json_is_integer(v)) {
        *out = (int64_t)json_integer_value(v);
        return 0;
    }
    return json_is_string(v) ? idmint__parse_i64(json_string_value(v), out) : -1;
}

json_t *etcd_j_u64(uint64_t v)
{
    char buf[24];

    snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
    return json_string(buf);
}

json_t *etcd_j_i64(int64_t v)
{
    char buf[24];

    snprintf(buf, sizeof(buf), "%lld", (long long)v);
    return json_string(buf);
}

int etcd_get_small(json_t *o, const char *key, uint64_t max, uint64_t *out)
{
    return etcd_get_u64(o, key, out) != 0 || *out > max ? -1 : 0;
}

int etcd_get_text(json_t *o, const char *key, char *out, size_t size)
{
    json_t *v = json_object_get(o, key);

    if (v != NULL && !json_is_string(v))
        return -1;
    snprintf(out, size, "%s", v != NULL ? json_string_value(v) : "");
    return 0;
}

json_t *etcd_j_text(const char *in, size_t cap)
{
    char buf[512];
    size_t i, n = strnlen(in, cap < sizeof(buf) ? cap : sizeof(buf) - 1);

    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)in[i];

        buf[i] = c >= 0x20 && c < 0x7f ? (char)c : '?';
    }
    buf[n] = '\0';
    return json_string(buf);
}

int etcd_bad_value(const struct etcd_store *s, const char *key, const char *what)
{
    return idmint__fail(IDMINT_ESTORE,
                        "%s: key %s does not hold %s: written by something other than idmint?",
                        s->name, key, what);
}

int etcd_oom(const struct etcd_store *s, const char *what)
{
    return idmint__fail(IDMINT_ENOMEM, "%s: out of memory: %s", s->name, what);
}

int etcd_key_fmt(const struct etcd_store *s, char *out, const char *fmt, ...)
{
    size_t len = strlen(s->prefix);
    va_list ap;
    int n;

    memcpy(out, s->prefix, len);
    va_start(ap, fmt);
    n = vsnprintf(out + len, ETCD_KEY_MAX - len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= ETCD_KEY_MAX - len)
        return idmint__fail(IDMINT_EINVAL, "%s: a key would be longer than %d bytes", s->name,
                            ETCD_KEY_MAX);
    return 0;
}

void etcd_key_prefix_end(const char *prefix, char *out)
{
    size_t len = strlen(prefix);

    memcpy(out, prefix, len + 1);
    out[len - 1] = (char)(out[len - 1] + 1);
}

/*
 * An incarnation as one key segment: '/', '%' and bytes outside printable
 * ASCII become %HH, so two incarnations never share a key prefix and a
 * replay can only ever find its own record.
 */
static void key_escape(const char *in, char *out, size_t size)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t k = 0;

    for (; *in != '\0' && k + 4 < size; in++) {
        unsigned char c = (unsigned char)*in;

        if (c == '/' || c == '%' || c <= 0x20 || c >= 0x7f) {
            out[k++] = '%';
            out[k++] = hex[c >> 4];
            out[k++] = hex[c & 15];
        } else {
            out[k++] = (char)c;
        }
    }
    out[k] = '\0';
}

int etcd_key_ns(const struct etcd_store *s, const char *ns, char *out)
{
    return etcd_key_fmt(s, out, "/ns/%s", ns);
}

int etcd_key_lease(const struct etcd_store *s, const char *ns, uint32_t region, uint32_t worker_id,
                   char *out)
{
    return etcd_key_fmt(s, out, "/lease/%s/%010u/%010u", ns, (unsigned)region, (unsigned)worker_id);
}

int etcd_key_inc_prefix(const struct etcd_store *s, const char *ns, const char *incarnation,
                        char *out)
{
    char esc[3 * 128 + 8];

    key_escape(incarnation, esc, sizeof(esc));
    return etcd_key_fmt(s, out, "/inc/%s/%s/", ns, esc);
}

int etcd_key_audit(const struct etcd_store *s, const char *opid, char *out)
{
    return etcd_key_fmt(s, out, "/audit/%s", opid);
}

int etcd_key_wgrant_prefix(const struct etcd_store *s, const char *ns, uint32_t region,
                           uint32_t worker_id, char *out)
{
    return etcd_key_fmt(s, out, "/wgrant/%s/%010u/%010u/", ns, (unsigned)region,
                        (unsigned)worker_id);
}

int etcd_key_wgrant(const struct etcd_store *s, const char *ns, uint32_t region, uint32_t worker_id,
                    uint64_t generation, char *out)
{
    return etcd_key_fmt(s, out, "/wgrant/%s/%010u/%010u/%020llu", ns, (unsigned)region,
                        (unsigned)worker_id, (unsigned long long)generation);
}

int etcd_key_rgrant(const struct etcd_store *s, const char *ns, uint64_t start, char *out)
{
    return etcd_key_fmt(s, out, "/rgrant/%s/%020llu", ns, (unsigned long long)start);
}

int etcd_key_batch(const struct etcd_store *s, const char *owner, const char *key, char *out)
{
    char esc[3 * 64 + 8];

    key_escape(owner, esc, sizeof(esc));
    return etcd_key_fmt(s, out, "/obatch/%s/%s", esc, key);
}

int etcd_key_batch_v3(const struct etcd_store *s, const char *key, char *out)
{
    return etcd_key_fmt(s, out, "/batch/%s", key);
}

int etcd_key_collision(const struct etcd_store *s, const idmint_collision *c, char *out)
{
    char esc[3 * 64 + 8];

    key_escape(c->reporter, esc, sizeof(esc));
    return etcd_key_fmt(s, out, "/coll/%s/%020llu/%s", c->ns, (unsigned long long)c->id, esc);
}

int etcd_key_children(const struct etcd_store *s, const char *key, char *out, char *end)
{
    size_t len = strlen(key);

    if (len + 2 > ETCD_KEY_MAX)
        return idmint__fail(IDMINT_EINVAL, "%s: a key would be longer than %d bytes", s->name,
                            ETCD_KEY_MAX);
    memcpy(out, key, len);
    out[len] = '/';
    out[len + 1] = '\0';
    etcd_key_prefix_end(out, end);
    return 0;
}

int etcd_key_request(const struct etcd_store *s, const char *family, const char *ns,
                     const char *incarnation, const char *request_id, char *out)
{
    char esc[3 * 128 + 8];

    key_escape(incarnation, esc, sizeof(esc));
    return etcd_key_fmt(s, out, "/%s/%s/%s/%s", family, ns, esc, request_id);
}

int etcd_key_waiting(const struct etcd_store *s, const char *ns, int64_t now_ms,
                     const char *incarnation, const char *request_id, char *out)
{
    char esc[3 * 128 + 8];

    key_escape(incarnation, esc, sizeof(esc));
    return etcd_key_fmt(s, out, "/pend/%s/%020llu/%s/%s", ns,
                        (unsigned long long)(now_ms > 0 ? now_ms : 0), esc, request_id);
}

int etcd_waiting_record_key(const struct etcd_store *s, const char *ns, const char *pkey, char *out)
{
    char prefix[ETCD_KEY_MAX];
    const char *tail, *slash;
    size_t len;

    if (etcd_key_fmt(s, prefix, "/pend/%s/", ns) != 0)
        return -1;
    len = strlen(prefix);
    if (strncmp(pkey, prefix, len) != 0)
        return -1;
    tail = pkey + len;
    if (strspn(tail, "0123456789") != 20 || tail[20] != '/')
        return -1;
    tail += 21;
    slash = strchr(tail, '/');
    if (slash == NULL || slash == tail || slash[1] == '\0' || strchr(slash + 1, '/') != NULL)
        return -1;
    return etcd_key_fmt(s, out, "/inc/%s/%s", ns, tail) != 0 ? -1 : 0;
}

int etcd_key_batch_part(const struct etcd_store *s, const char *hkey, const char *claim, size_t i,
                        char *out)
{
    return etcd_key_fmt(s, out, "%s/%s/%06zu", hkey + strlen(s->prefix), claim, i);
}

int etcd_key_tail_u64(const char *key, size_t digits, uint64_t *out)
{
    size_t len = strlen(key);

    if (len <= digits || key[len - digits - 1] != '/')
        return -1;
    return idmint__parse_u64(key + len - digits, out);
}

const char etcd_age_family[IDMINT__KEEP__COUNT] = {
    [IDMINT__KEEP_WORKER_GRANTS] = 'w',
    [IDMINT__KEEP_RANGE_GRANTS] = 'r',
    [IDMINT__KEEP_BATCHES] = 'b',
};

unsigned long long etcd_age_ms(int64_t ms)
{
    return ms > 0 ? (unsigned long long)ms : 0ull;
}

int etcd_key_age(const struct etcd_store *s, int what, int64_t ms, const char *target, char *out)
{
    return etcd_key_fmt(s, out, "/age/%c/%020llu%s", etcd_age_family[what], etcd_age_ms(ms),
                        target + strlen(s->prefix));
}

int etcd_age_target(const struct etcd_store *s, const char *age_key, char *out)
{
    size_t skip = strlen(s->prefix) + strlen("/age/F/") + 20, i;

    if (strlen(age_key) <= skip || age_key[skip] != '/' || strlen(age_key) - skip >= ETCD_KEY_MAX)
        return -1;
    for (i = skip - 20; i < skip; i++)
        if (age_key[i] < '0' || age_key[i] > '9')
            return -1;
    snprintf(out, ETCD_KEY_MAX, "%s%s", s->prefix, age_key + skip);
    return 0;
}

int etcd_opid_new(char out[ETCD_OPID_LEN + 1])
{
    unsigned char rnd[ETCD_OPID_LEN / 2];
    size_t i;
    int rc = idmint__entropy(rnd, sizeof(rnd));

    if (rc != 0)
        return rc;
    for (i = 0; i < sizeof(rnd); i++)
        snprintf(out + 2 * i, 3, "%02x", rnd[i]);
    return 0;
}

json_t *etcd_j_key(const char *key)
{
    char *b = etcd_b64_encode(key, strlen(key));
    json_t *j = b != NULL ? json_string(b) : NULL;

    free(b);
    return j;
}

void etcd_add(struct etcd_store *s, json_t *arr, json_t *item)
{
    if (arr == NULL || item == NULL || json_array_append_new(arr, item) != 0) {
        json_decref(item);
        s->is_oom = 1;
    }
}

json_t *etcd_op_range(const char *key, const char *end)
{
    json_t *r = json_object();

    if (r == NULL || json_object_set_new(r, "key", etcd_j_key(key)) != 0 ||
        (end != NULL && json_object_set_new(r, "range_end", etcd_j_key(end)) != 0)) {
        json_decref(r);
        return NULL;
    }
    return json_pack("{s:o}", "request_range", r);
}

json_t *etcd_op_range_first(const char *key, const char *end, unsigned limit)
{
    return json_pack("{s:{s:o,s:o,s:o}}", "request_range", "key", etcd_j_key(key), "range_end",
                     etcd_j_key(end), "limit", etcd_j_i64(limit));
}

json_t *etcd_op_count(const char *key, const char *end)
{
    return json_pack("{s:{s:o,s:o,s:b}}", "request_range", "key", etcd_j_key(key), "range_end",
                     etcd_j_key(end), "count_only", 1);
}

json_t *etcd_op_put(const char *key, json_t *value)
{
    char *text = value != NULL ? json_dumps(value, JSON_COMPACT) : NULL;
    char *b = text != NULL ? etcd_b64_encode(text, strlen(text)) : NULL;
    json_t *op = b != NULL
                     ? json_pack("{s:{s:o,s:s}}", "request_put", "key", etcd_j_key(key), "value", b)
                     : NULL;

    free(b);
    free(text);
    json_decref(value);
    return op;
}

json_t *etcd_op_put_text(const char *key, const char *text)
{
    char *b = etcd_b64_encode(text, strlen(text));
    json_t *op = b != NULL
                     ? json_pack("{s:{s:o,s:s}}", "request_put", "key", etcd_j_key(key), "value", b)
                     : NULL;

    free(b);
    return op;
}

json_t *etcd_op_put_lease(const char *key, json_t *value, int64_t lease)
{
    json_t *op = etcd_op_put(key, value), *put = json_object_get(op, "request_put");

    if (put != NULL && json_object_set_new(put, "lease", etcd_j_i64(lease)) != 0) {
        json_decref(op);
        return NULL;
    }
    return op;
}

json_t *etcd_op_delete(const char *key, const char *end)
{
    json_t *r = json_object();

    if (r == NULL || json_object_set_new(r, "key", etcd_j_key(key)) != 0 ||
        (end != NULL && json_object_set_new(r, "range_end", etcd_j_key(end)) != 0)) {
        json_decref(r);
        return NULL;
    }
    return json_pack("{s:o}", "request_delete_range", r);
}

json_t *etcd_cmp_mod(const char *key, int64_t rev)
{
    return json_pack("{s:o,s:s,s:s,s:o}", "key", etcd_j_key(key), "target", "MOD", "result",
                     "EQUAL", "mod_revision", etcd_j_i64(rev));
}

json_t *etcd_cmp_absent(const char *key)
{
    return json_pack("{s:o,s:s,s:s,s:s}", "key", etcd_j_key(key), "target", "CREATE", "result",
                     "EQUAL", "create_revision", "0");
}

json_t *etcd_cmp_exists(const char *key)
{
    return json_pack("{s:o,s:s,s:s,s:s}", "key", etcd_j_key(key), "target", "CREATE", "result",
                     "GREATER", "create_revision", "0");
}

json_t *etcd_op_lease_max(const struct etcd_store *s, const char *ns, uint64_t units)
{
    char key[ETCD_KEY_MAX];

    if (etcd_key_fmt(s, key, "/maxlease/%s/%020llu", ns, (unsigned long long)units) != 0)
        return NULL;
    return etcd_op_put_text(key, "");
}
