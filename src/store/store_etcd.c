/* SPDX-License-Identifier: Apache-2.0 */
/*
 * etcd v3 backend ("etcd://h1:p,h2:p,.../prefix"): consensus leases across
 * machines. It speaks etcd's JSON gateway on the client port (POST
 * /v3/kv/range, /v3/kv/txn, /v3/kv/deleterange; keys and values base64,
 * int64 as strings, default values left out of replies) through libcurl
 * (curl_lib.h) and jansson. Every decision is taken on a linearizable read
 * (a reservation's first attempt: on the namespace as this store's last
 * reservation wrote it) and written by a transaction that compares the
 * revisions it read (or wrote), so a lost race is a failed compare, read
 * again and retried. E lives in the value: no etcd lease TTL carries
 * safety. No namespace rules.
 *
 * Keys, under the prefix P (default "/idmint"):
 *   P/schema                          schema version ("5"), made on first open
 *   P/history                         the authority's history id (JSON), made
 *                                     with the schema; a fence writes a new one
 *   P/ns/NAME                         a namespace (JSON); a range namespace's
 *                                     next_value is in it, so a reservation
 *                                     compares one key for bounds, flag and count
 *   P/lease/NAME/REGION/WORKER        a worker lease row (10-digit numbers, so
 *                                     key order is numeric order)
 *   P/inc/NAME/INCARNATION/REQUEST    a range request record (the incarnation
 *                                     %-escaped, so '/' in it cannot alias)
 *   P/pend/NAME/MS/INCARNATION/REQUEST
 *                                     a range request waiting for a
 *                                     reservation's txn to grant it (JSON:
 *                                     count, fingerprint, origin; MS: when it
 *                                     was left, 20 digits, so key order is
 *                                     arrival order); deleted by the txn
 *                                     that writes its record
 *   P/audit/OPID                      an audit record; its seq is the key's
 *                                     create_revision
 * and since schema 3 (store interface version 4: provenance, batches,
 * collisions; numbers zero-padded, so key order is numeric order):
 *   P/wgrant/NAME/REGION/WORKER/GEN   a worker grant (JSON: holder fingerprint,
 *                                     origin, first, last, granted_ms,
 *                                     updated_ms); every generation of one
 *                                     worker id is one prefix, in generation
 *                                     order (GEN: 20 digits)
 *   P/rgrant/NAME/START               a range grant (JSON: end, fingerprint,
 *                                     origin, granted_ms; START: 20 digits), so
 *                                     a descending range read from a value finds
 *                                     the grants starting at or below it first
 *   P/batch/KEY                       schema 3's idempotent batch (one key in
 *                                     the whole store; read, never written now)
 *   P/coll/OPID                       schema 3's collision record; its seq is
 *                                     the key's create_revision, as an audit
 *                                     record's
 *   P/age/F/MS/SUB                    the age index of the record P/SUB (F: w
 *                                     worker grant by updated_ms, r range grant
 *                                     by granted_ms, b schema 3's batch by
 *                                     created_ms; MS: 20 digits), so a prune
 *                                     reads the oldest first; written with its
 *                                     record, moved by every write of its
 *                                     record's stamp
 * and since schema 4 (store interface version 5), records that end by
 * themselves: each is attached to an etcd lease that the leader counts
 * down, so no node's clock or retention decides when it goes:
 *   P/obatch/OWNER/KEY                an idempotent batch (JSON, with its
 *                                     namespace), one per owner and key (OWNER
 *                                     %-escaped); runs longer than
 *                                     ETCD_BATCH_INLINE bytes are in parts
 *   P/obatch/OWNER/KEY/CLAIM/PART     under it (written before the batch key)
 *   P/coll/NS/ID/REPORTER             a collision record, one per namespace, ID
 *                                     (20 digits) and reporter (%-escaped); its
 *                                     seq is the key's create_revision
 * Each audited write carries one random OPID for the whole call and
 * compares "P/audit/OPID does not exist": of every attempt of one call at
 * most one can apply, and reading that key tells whether one did. That is
 * how an attempt whose reply was lost (an unknown outcome) is resolved.
 * Grants are written in the txn that grants (a take, a renewal, a release,
 * a reservation), so they need no resolving of their own.
 *
 * The authority's history (store.h, version 3) costs no request of its own:
 * every granting txn compares that P/history exists and reads it in its
 * success branch, and its counter is the txn's revision, which etcd grows
 * with every write and a snapshot restore takes back to the snapshot's. A
 * fence writes P/history in the txn that moves the namespaces, so every
 * write after it reads the new id. (etcdutl's --bump-revision restores with
 * a revision ahead: only the fence's new id tells those processes.)
 *
 * Since schema 5 (store interface version 6) the chain: every granting txn
 * also puts P/tip, a random tip the call drew, so the key's MVCC history is
 * the log of (seq, tip): the value of P/tip at revision seq has mod_revision
 * seq only if the txn at seq was a grant, and its value is that grant's tip.
 * A restored cluster reuses revisions with other tips, or (bump-revision)
 * skips them, so what a holder saw is gone either way. history_check reads
 * P/history and P/tip (the head), then P/tip at the seq asked about; etcd's
 * compaction is the pruning (the operator's: --auto-compaction-*), and a
 * compacted seq is one the log no longer holds. P/history also holds the
 * store id and the lineage, and each namespace's longest lease granted is
 * the largest of its keys P/maxlease/NAME/UNITS (20 digits), which takes and
 * renewals put without reading.
 */
#include "store.h"
#include "internal.h"
#include "curl_lib.h"

#include <jansson.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ETCD_DEFAULT_PREFIX      "/idmint"
/* 2: P/history, floor and origin; 3: grants, batches, collisions; 4: batches by owner, deduplicated
 * collisions, both on leases; 5: P/tip (the history chain), store id and lineage, longest leases */
#define ETCD_SCHEMA_VERSION      5
#define ETCD_MAX_MEMBERS         16
#define ETCD_CONNECT_TIMEOUT_MS  500L  /* one TCP connect */
#define ETCD_ATTEMPT_MS          2000u /* one request to one member */
#define ETCD_CALL_BUDGET_MS      5000u /* one store call: every member, every retry */
#define ETCD_MAX_LOST            256   /* lost compares one call retries */
#define ETCD_BACKOFF_FIRST_MS    20u   /* after a round of members all failed; doubles */
#define ETCD_BACKOFF_MAX_MS      320u
#define ETCD_LOST_WAIT_MAX_US    1000000u /* the longest wait after a lost compare */
/* A call whose members answer but whose compares keep losing (a start burst
 * of hundreds on one namespace) may go on this long; silent members still
 * end it at ETCD_CALL_BUDGET_MS. */
#define ETCD_CONTENDED_BUDGET_MS 10000u
#define ETCD_AUDIT_PAGE          500u /* audit records per range request */
#define ETCD_MAX_REPLY_BYTES     (64u * 1024u * 1024u)
#define ETCD_KEY_MAX             1024 /* bytes: prefix, name, escaped ids */
#define ETCD_PREFIX_MAX          200
#define ETCD_NAME_MAX            512 /* the URL as shown in messages */
#define ETCD_OPID_LEN            32  /* hex digits */
/* Others' waiting range requests one reservation's txn grants: 2 compares and 4 ops
 * each, and 6 of its own, within --max-txn-ops (default 128). */
#define ETCD_COMBINE_MAX         24
/* A waiting request reads again after a round per ETCD_COMBINE_MAX + 1 ahead of
 * it: the time the namespace key took per write since the request first read
 * it, within these bounds, or this before the key moved. */
#define ETCD_WAIT_ROUND_US       15000u
#define ETCD_WAIT_ROUND_MIN_US   2000u
#define ETCD_WAIT_ROUND_MAX_US   200000u
/* Txns a reservation that met others waiting goes on sending for them, and
 * for how long at most: its own answer waits for them. */
#define ETCD_SERVE_ROUNDS        8
#define ETCD_SERVE_MS            100u
/* The namespace unmoved this long (once more per ETCD_COMBINE_MAX + 1 ahead),
 * a waiting request sends its txn though older ones wait: they may be dead. */
#define ETCD_WAIT_STALL_MS       250u
#define ETCD_PRUNE_TXN           40 /* records one prune txn deletes: 3 ops each, --max-txn-ops 128 */
#define ETCD_GRANT_PAGE          256            /* worker grants per range request of a trace */
#define ETCD_BATCH_INLINE        (256u * 1024u) /* runs kept in the batch key, bytes */
#define ETCD_BATCH_PART          (512u * 1024u) /* bytes of runs per part: --max-request-bytes 1.5 MiB */
/* A record's lease is shared with the records of the same kind this handle
 * writes within this long after it (at most keep / 8): one grant per
 * window, not per record, and a record lives at most this much past its
 * retention. */
#define ETCD_LEASE_REUSE_MAX_MS  600000u

/* etcd_write: sent, no answer (an unknown outcome): read again and decide. */
#define ETCD_UNKNOWN 1
/* etcd_write: every compare held and the success branch ran. */
#define ETCD_APPLIED 2

struct etcd_store {
    struct store base; /* must be first */
    CURL *curl;        /* one easy handle: keep-alive per member */
    struct curl_slist *headers;
    char *members[ETCD_MAX_MEMBERS]; /* "http://host:port", malloc'd */
    size_t n_members;
    size_t cur;                   /* the member tried first: the last that answered */
    char prefix[ETCD_PREFIX_MAX]; /* no trailing '/' */
    char hkey[ETCD_KEY_MAX];      /* P/history */
    char tkey[ETCD_KEY_MAX];      /* P/tip: the tip of the last granting txn */
    uint64_t call_tip;            /* the tip of the call in progress' grants; 0: none drawn yet */
    int is_compacted;             /* the last request asked for a compacted revision */
    char name[ETCD_NAME_MAX];     /* "etcd://..." for messages */
    uint64_t deadline_ms;         /* monotonic end of the call in progress */
    uint64_t call_start_ms;       /* monotonic start of the call in progress */
    char *reply;                  /* body of the last reply; NUL-terminated */
    size_t reply_len;             /* bytes */
    size_t reply_cap;             /* bytes */
    int is_reply_too_big;
    int is_oom;      /* a JSON builder ran out of memory since the last send */
    uint64_t jitter; /* xorshift state for the waits after a lost compare */
    char curl_err[CURL_ERROR_SIZE];
    int64_t applied_rev; /* revision of the last applied write; 0 if its reply had none */
    /* The namespace as this store's last reservation wrote it, so the next
     * one on it can send its txn without reading first (etcd_range_reserve). */
    char seen_key[ETCD_KEY_MAX]; /* P/ns/NAME; "" for none */
    idmint_ns_info seen_ns;
    int64_t seen_rev; /* seen_key's mod_revision after that write */
    /* The leases batches [0] and collision records [1] are written with (expiry_lease). */
    struct etcd_expiry {
        int64_t id;        /* etcd lease id; 0: none yet */
        int64_t keep_ms;   /* the retention it was granted for */
        uint64_t until_ms; /* monotonic: records written before then live at least keep_ms */
    } expiry[2];
    int is_lease_gone; /* the last request named a lease etcd does not know */
};

/* One key-value pair of a range answer. key and value are NUL-terminated copies. */
struct etcd_kv {
    char *key;
    char *value;
    size_t value_len; /* bytes */
    int64_t create_rev;
    int64_t mod_rev;
    int64_t version; /* writes of the key since it was created */
};

/* One range answer: kvs in the order etcd sent them. */
struct etcd_range {
    struct etcd_kv *kvs;
    size_t n;
    uint64_t count; /* keys in the range, also those a limit left out */
};

/* ==== base64 (RFC 4648, with padding) ==== */

static const char b64_digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* @p len bytes of @p data in base64; malloc'd, NULL when out of memory. */
static char *b64_encode(const void *data, size_t len)
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

/*
 * Decode base64 @p text: 0 with *out (malloc'd, NUL-terminated) and *len,
 * -1 if it is not base64, -2 when out of memory.
 */
static int b64_decode(const char *text, char **out, size_t *len)
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

/* ==== numbers as etcd and our values write them: decimal strings ==== */

/* A field etcd or we wrote as a decimal string; absent means 0 (proto3 default). */
static int get_u64(json_t *obj, const char *key, uint64_t *out)
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

static int get_i64(json_t *obj, const char *key, int64_t *out)
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

static json_t *j_u64(uint64_t v)
{
    char buf[24];

    snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
    return json_string(buf);
}

static json_t *j_i64(int64_t v)
{
    char buf[24];

    snprintf(buf, sizeof(buf), "%lld", (long long)v);
    return json_string(buf);
}

/* ==== errors ==== */

static int etcd_bad_value(const struct etcd_store *s, const char *key, const char *what)
{
    return idmint__fail(IDMINT_ESTORE,
                        "%s: key %s does not hold %s: written by something other than idmint?",
                        s->name, key, what);
}

static int etcd_oom(const struct etcd_store *s, const char *what)
{
    return idmint__fail(IDMINT_ENOMEM, "%s: out of memory: %s", s->name, what);
}

/* ==== keys ==== */

/* Write "P<fmt...>" into @p out (ETCD_KEY_MAX bytes). 0 or EINVAL when too long. */
static int key_fmt(const struct etcd_store *s, char *out, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int key_fmt(const struct etcd_store *s, char *out, const char *fmt, ...)
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

/* The end of the range of keys that start with @p prefix: its last byte + 1. */
static void key_prefix_end(const char *prefix, char *out)
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

static int key_ns(const struct etcd_store *s, const char *ns, char *out)
{
    return key_fmt(s, out, "/ns/%s", ns);
}

static int key_lease(const struct etcd_store *s, const char *ns, uint32_t region,
                     uint32_t worker_id, char *out)
{
    return key_fmt(s, out, "/lease/%s/%010u/%010u", ns, (unsigned)region, (unsigned)worker_id);
}

static int key_inc_prefix(const struct etcd_store *s, const char *ns, const char *incarnation,
                          char *out)
{
    char esc[3 * 128 + 8];

    key_escape(incarnation, esc, sizeof(esc));
    return key_fmt(s, out, "/inc/%s/%s/", ns, esc);
}

static int key_audit(const struct etcd_store *s, const char *opid, char *out)
{
    return key_fmt(s, out, "/audit/%s", opid);
}

/* P/wgrant/NS/REGION/WORKER/: every generation of one worker id. */
static int key_wgrant_prefix(const struct etcd_store *s, const char *ns, uint32_t region,
                             uint32_t worker_id, char *out)
{
    return key_fmt(s, out, "/wgrant/%s/%010u/%010u/", ns, (unsigned)region, (unsigned)worker_id);
}

static int key_wgrant(const struct etcd_store *s, const char *ns, uint32_t region,
                      uint32_t worker_id, uint64_t generation, char *out)
{
    return key_fmt(s, out, "/wgrant/%s/%010u/%010u/%020llu", ns, (unsigned)region,
                   (unsigned)worker_id, (unsigned long long)generation);
}

static int key_rgrant(const struct etcd_store *s, const char *ns, uint64_t start, char *out)
{
    return key_fmt(s, out, "/rgrant/%s/%020llu", ns, (unsigned long long)start);
}

/* P/obatch/OWNER/KEY: the batch @p owner saved under @p key. */
static int key_batch(const struct etcd_store *s, const char *owner, const char *key, char *out)
{
    char esc[3 * 64 + 8];

    key_escape(owner, esc, sizeof(esc));
    return key_fmt(s, out, "/obatch/%s/%s", esc, key);
}

/* P/batch/KEY: a batch of schema 3, when one key named one batch in the store. */
static int key_batch_v3(const struct etcd_store *s, const char *key, char *out)
{
    return key_fmt(s, out, "/batch/%s", key);
}

/* P/coll/NS/ID/REPORTER: the record of @p c's report. */
static int key_collision(const struct etcd_store *s, const idmint_collision *c, char *out)
{
    char esc[3 * 64 + 8];

    key_escape(c->reporter, esc, sizeof(esc));
    return key_fmt(s, out, "/coll/%s/%020llu/%s", c->ns, (unsigned long long)c->id, esc);
}

/* "@p key/" into @p out and the end of the range of keys under it into @p end. */
static int key_children(const struct etcd_store *s, const char *key, char *out, char *end)
{
    size_t len = strlen(key);

    if (len + 2 > ETCD_KEY_MAX)
        return idmint__fail(IDMINT_EINVAL, "%s: a key would be longer than %d bytes", s->name,
                            ETCD_KEY_MAX);
    memcpy(out, key, len);
    out[len] = '/';
    out[len + 1] = '\0';
    key_prefix_end(out, end);
    return 0;
}

/*
 * The families of the age index, by enum idmint__retained. Collision
 * records have none, and schema 4's batches are not in it: they end with
 * their lease (expiry_lease).
 */
static const char age_family[IDMINT__KEEP__COUNT] = {
    [IDMINT__KEEP_WORKER_GRANTS] = 'w',
    [IDMINT__KEEP_RANGE_GRANTS] = 'r',
    [IDMINT__KEEP_BATCHES] = 'b',
};

/* An age stamp as a key segment. Before 1970 sorts as 1970: no clock of an authority says that. */
static unsigned long long age_ms(int64_t ms)
{
    return ms > 0 ? (unsigned long long)ms : 0ull;
}

/* P/age/F/MS/SUB: the age index key of record @p target (P/SUB) stamped @p ms. */
static int key_age(const struct etcd_store *s, int what, int64_t ms, const char *target, char *out)
{
    return key_fmt(s, out, "/age/%c/%020llu%s", age_family[what], age_ms(ms),
                   target + strlen(s->prefix));
}

/* The record P/SUB an age index key P/age/F/MS/SUB indexes, into @p out; -1 if it is not one. */
static int age_target(const struct etcd_store *s, const char *age_key, char *out)
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

/* A fresh op id for one audited call (ETCD_OPID_LEN hex digits). */
static int opid_new(char out[ETCD_OPID_LEN + 1])
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

/* ==== JSON request builders (new references; NULL only when out of memory) ==== */

static json_t *j_key(const char *key)
{
    char *b = b64_encode(key, strlen(key));
    json_t *j = b != NULL ? json_string(b) : NULL;

    free(b);
    return j;
}

/* Append @p item (stolen) to @p arr; an allocation failure is remembered in s->is_oom. */
static void add(struct etcd_store *s, json_t *arr, json_t *item)
{
    if (arr == NULL || item == NULL || json_array_append_new(arr, item) != 0) {
        json_decref(item);
        s->is_oom = 1;
    }
}

/* {"request_range": {key, range_end?}}: one key, or [key, end) when @p end is not NULL. */
static json_t *op_range(const char *key, const char *end)
{
    json_t *r = json_object();

    if (r == NULL || json_object_set_new(r, "key", j_key(key)) != 0 ||
        (end != NULL && json_object_set_new(r, "range_end", j_key(end)) != 0)) {
        json_decref(r);
        return NULL;
    }
    return json_pack("{s:o}", "request_range", r);
}

/* {"request_put": {key, value}} with @p value (stolen) as compact JSON text. */
static json_t *op_put(const char *key, json_t *value)
{
    char *text = value != NULL ? json_dumps(value, JSON_COMPACT) : NULL;
    char *b = text != NULL ? b64_encode(text, strlen(text)) : NULL;
    json_t *op =
        b != NULL ? json_pack("{s:{s:o,s:s}}", "request_put", "key", j_key(key), "value", b) : NULL;

    free(b);
    free(text);
    json_decref(value);
    return op;
}

static json_t *op_put_text(const char *key, const char *text)
{
    char *b = b64_encode(text, strlen(text));
    json_t *op =
        b != NULL ? json_pack("{s:{s:o,s:s}}", "request_put", "key", j_key(key), "value", b) : NULL;

    free(b);
    return op;
}

/* op_put with the key attached to etcd lease @p lease: etcd deletes it when the lease ends. */
static json_t *op_put_lease(const char *key, json_t *value, int64_t lease)
{
    json_t *op = op_put(key, value), *put = json_object_get(op, "request_put");

    if (put != NULL && json_object_set_new(put, "lease", j_i64(lease)) != 0) {
        json_decref(op);
        return NULL;
    }
    return op;
}

/* {"request_delete_range": {key, range_end?}}: one key, or [key, end). */
static json_t *op_delete(const char *key, const char *end)
{
    json_t *r = json_object();

    if (r == NULL || json_object_set_new(r, "key", j_key(key)) != 0 ||
        (end != NULL && json_object_set_new(r, "range_end", j_key(end)) != 0)) {
        json_decref(r);
        return NULL;
    }
    return json_pack("{s:o}", "request_delete_range", r);
}

/* Compare: @p key's mod_revision is @p rev (0: the key does not exist). */
static json_t *cmp_mod(const char *key, int64_t rev)
{
    return json_pack("{s:o,s:s,s:s,s:o}", "key", j_key(key), "target", "MOD", "result", "EQUAL",
                     "mod_revision", j_i64(rev));
}

/* Compare: @p key does not exist (create_revision 0). */
static json_t *cmp_absent(const char *key)
{
    return json_pack("{s:o,s:s,s:s,s:s}", "key", j_key(key), "target", "CREATE", "result", "EQUAL",
                     "create_revision", "0");
}

/* Compare: @p key exists (create_revision above 0). */
static json_t *cmp_exists(const char *key)
{
    return json_pack("{s:o,s:s,s:s,s:s}", "key", j_key(key), "target", "CREATE", "result",
                     "GREATER", "create_revision", "0");
}

/* ==== transport ==== */

static size_t etcd_on_data(char *data, size_t size, size_t nmemb, void *arg)
{
    struct etcd_store *s = arg;
    size_t len = size * nmemb, cap;
    char *grown;

    if (s->reply_len + len + 1 > ETCD_MAX_REPLY_BYTES) {
        s->is_reply_too_big = 1;
        return 0; /* curl aborts the transfer */
    }
    if (s->reply_len + len + 1 > s->reply_cap) {
        cap = s->reply_cap == 0 ? 4096 : s->reply_cap;
        while (cap < s->reply_len + len + 1)
            cap *= 2;
        if ((grown = realloc(s->reply, cap)) == NULL)
            return 0;
        s->reply = grown;
        s->reply_cap = cap;
    }
    memcpy(s->reply + s->reply_len, data, len);
    s->reply_len += len;
    s->reply[s->reply_len] = '\0';
    return len;
}

/* How one attempt ended, beyond its IDMINT code. */
enum etcd_outcome {
    ETCD_OK,       /* 200 and a JSON object */
    ETCD_NOT_SENT, /* never reached the member: try another, a write included */
    ETCD_MAYBE,    /* sent, no usable answer: another member; a write's outcome is unknown */
    ETCD_DEFINITE, /* an answer that another try would not change */
};

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
    s->reply_len = 0;
    s->is_reply_too_big = 0;
    s->curl_err[0] = '\0';
    idmint__curl.easy_setopt(s->curl, CURLOPT_URL, url);
    idmint__curl.easy_setopt(s->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body));
    idmint__curl.easy_setopt(s->curl, CURLOPT_POSTFIELDS, body);
    idmint__curl.easy_setopt(s->curl, CURLOPT_TIMEOUT_MS, (long)timeout_ms);
    idmint__curl.easy_setopt(s->curl, CURLOPT_CONNECTTIMEOUT_MS,
                             timeout_ms < (uint64_t)ETCD_CONNECT_TIMEOUT_MS
                                 ? (long)timeout_ms
                                 : ETCD_CONNECT_TIMEOUT_MS);
    cc = idmint__curl.easy_perform(s->curl);
    if (cc != CURLE_OK) {
        const char *why = s->curl_err[0] != '\0' ? s->curl_err : idmint__curl.easy_strerror(cc);

        if (s->is_reply_too_big) {
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
    idmint__curl.easy_getinfo(s->curl, CURLINFO_RESPONSE_CODE, &status);
    doc = json_loadb(s->reply != NULL ? s->reply : "", s->reply_len, 0, &jerr);
    if (status == 200 && json_is_object(doc)) {
        *reply = doc;
        return ETCD_OK;
    }
    msg = json_string_value(json_object_get(doc, "message"));
    if (msg == NULL)
        msg = json_string_value(json_object_get(doc, "error"));
    if (get_i64(doc, "code", &code) != 0)
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

/*
 * POST @p body (stolen) to @p path within the call's deadline, moving to the
 * next member on a connection error, a timeout or an "unavailable" answer.
 * 0 with *reply; ETCD_UNKNOWN for a write (@p is_write) that may have been
 * applied (the caller reads again: never resend a write blindly); else a
 * negative code. A read, or a write that surely was not sent, is retried.
 */
static int etcd_post(struct etcd_store *s, const char *path, json_t *body, int is_write,
                     json_t **reply)
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

/* ==== range answers ==== */

static void range_free(struct etcd_range *r)
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

static void ranges_free(struct etcd_range *r, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++)
        range_free(&r[i]);
}

/* Parse one RangeResponse object @p o into @p out (empty when it has no "kvs"). */
static int range_parse(struct etcd_store *s, json_t *o, struct etcd_range *out)
{
    json_t *kvs = json_object_get(o, "kvs"), *kv;
    size_t i, n = json_is_array(kvs) ? json_array_size(kvs) : 0;

    out->kvs = NULL;
    out->n = 0;
    out->count = 0;
    if (!json_is_object(o))
        return idmint__fail(IDMINT_ESTORE, "%s: a range answer is not an object", s->name);
    if (get_u64(o, "count", &out->count) != 0 || out->count < n)
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
        if (k == NULL || (rc = b64_decode(k, &e->key, &klen)) != 0 ||
            (rc = b64_decode(v != NULL ? v : "", &e->value, &e->value_len)) != 0 ||
            get_i64(kv, "create_revision", &e->create_rev) != 0 ||
            get_i64(kv, "mod_revision", &e->mod_rev) != 0 ||
            get_i64(kv, "version", &e->version) != 0) {
            range_free(out);
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
 * (each freed by the caller with ranges_free, also on error).
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

        if ((rc = range_parse(s, r, &out[i])) != 0)
            return rc;
    }
    return 0;
}

/* The one kv of a single-key range, or NULL when the key does not exist. */
static const struct etcd_kv *range_one(const struct etcd_range *r)
{
    return r->n > 0 ? &r->kvs[0] : NULL;
}

/*
 * Read the range ops of @p ops (a JSON array, stolen) at one revision: one
 * read-only txn, linearizable (never serializable). @p out gets one
 * etcd_range per op (free with ranges_free, also on error).
 */
static int etcd_read(struct etcd_store *s, json_t *ops, struct etcd_range *out, size_t n)
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

/*
 * One conditional write: if every compare of @p compare holds, run
 * @p success, else @p failure (range ops only; all three stolen).
 * ETCD_APPLIED, with the revision written at in s->applied_rev (and, when
 * @p ok_last is not NULL, the answer of @p success's last op, a range, in
 * it: free with range_free); 0 when a compare failed, with the failure
 * branch's ranges in @p fail (n of them; free with ranges_free, also on
 * error); ETCD_UNKNOWN when it may or may not have applied; or a negative
 * code.
 */
static int etcd_write(struct etcd_store *s, json_t *compare, json_t *success, json_t *failure,
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
        if (get_i64(json_object_get(reply, "header"), "revision", &s->applied_rev) != 0)
            s->applied_rev = 0;
        rc = ETCD_APPLIED;
        if (ok_last != NULL && k == 0)
            rc = idmint__fail(IDMINT_ESTORE, "%s: a txn answer without responses", s->name);
        else if (ok_last != NULL &&
                 (rc = range_parse(
                      s, json_object_get(json_array_get(responses, k - 1), "response_range"),
                      ok_last)) == 0)
            rc = ETCD_APPLIED;
    } else {
        rc = ranges_of(s, reply, fail, n);
    }
    json_decref(reply);
    return rc;
}

/* Start a store call: its deadline covers every member and every retry. */
static void call_begin(struct etcd_store *s)
{
    s->call_start_ms = idmint__deadline_now_ms();
    s->deadline_ms = s->call_start_ms + ETCD_CALL_BUDGET_MS;
    s->is_oom = 0;
    s->call_tip = 0;
}

/*
 * The tip of this call's grants into *tip, drawn on first use: every
 * attempt of one call puts the same tip, so the one that applied (a lost
 * reply) is known. 0 or IDMINT_EUNAVAILABLE.
 */
static int call_tip(struct etcd_store *s, uint64_t *tip)
{
    int rc = 0;

    if (s->call_tip == 0)
        rc = idmint__store_history_tip(&s->call_tip);
    *tip = s->call_tip;
    return rc;
}

/*
 * After the @p lost-th lost compare in a row of one call (0 first): wait a
 * random 0 to 2^(lost + 1) ms, at most ETCD_LOST_WAIT_MAX_US. Racers that all
 * retried at once would mostly collide again, and every collision is a Raft
 * proposal: an fsync on each member for nothing. With 250 racers on one
 * key a cap of 16 ms still sent dozens per win, and the call's 5 s ran out
 * for most; the cap is now long enough to thin them to a few. A loss means
 * the members answered, so the call gets an attempt's time beyond its wait,
 * up to ETCD_CONTENDED_BUDGET_MS in all.
 */
static uint64_t jitter_next(struct etcd_store *s)
{
    s->jitter ^= s->jitter << 13;
    s->jitter ^= s->jitter >> 7;
    s->jitter ^= s->jitter << 17;
    return s->jitter;
}

/* The members answered: the call may go on for an attempt's time, up to
 * ETCD_CONTENDED_BUDGET_MS in all. */
static void contended_extend(struct etcd_store *s)
{
    uint64_t want_ms = idmint__deadline_now_ms() + ETCD_ATTEMPT_MS,
             cap_ms = s->call_start_ms + ETCD_CONTENDED_BUDGET_MS;

    if (want_ms > cap_ms)
        want_ms = cap_ms;
    if (want_ms > s->deadline_ms)
        s->deadline_ms = want_ms;
}

static void lost_backoff(struct etcd_store *s, int lost)
{
    uint64_t span_us = lost >= 20 ? ETCD_LOST_WAIT_MAX_US : UINT64_C(2000) << lost;

    if (span_us > ETCD_LOST_WAIT_MAX_US)
        span_us = ETCD_LOST_WAIT_MAX_US;
    idmint__sleep_us(jitter_next(s) % span_us);
    contended_extend(s);
}

static int lost_too_often(const struct etcd_store *s, const char *what)
{
    return idmint__fail(IDMINT_EUNAVAILABLE, "%s: %s lost its compare %d times in a row", s->name,
                        what, ETCD_MAX_LOST);
}

/* ==== values ==== */

/* Parse the JSON object in @p kv's value; NULL (and a message) if it is not one. */
static json_t *kv_json(const struct etcd_store *s, const struct etcd_kv *kv, const char *what)
{
    json_t *o = json_loadb(kv->value, kv->value_len, 0, NULL);

    if (!json_is_object(o)) {
        json_decref(o);
        etcd_bad_value(s, kv->key, what);
        return NULL;
    }
    return o;
}

static const char *kind_text(idmint_kind kind)
{
    return kind == IDMINT_KIND_RANGE ? "range" : "snowflake";
}

static json_t *ns_to_json(const idmint_ns_info *ns, int64_t created_ms)
{
    const idmint_layout *l = &ns->layout;
    json_t *o = json_pack(
        "{s:s,s:i,s:i,s:i,s:i,s:o,s:o,s:o,s:o,s:o,s:o,s:b,s:o}", "kind", kind_text(ns->kind),
        "time_bits", (int)l->time_bits, "region_bits", (int)l->region_bits, "worker_bits",
        (int)l->worker_bits, "sequence_bits", (int)l->sequence_bits, "unit_ms", j_u64(l->unit_ms),
        "epoch_ms", j_i64(l->epoch_ms), "next_value", j_u64(ns->next_value), "max_value",
        j_u64(ns->max_value), "block", j_u64(ns->block), "max_block", j_u64(ns->max_block),
        "disabled", ns->is_disabled != 0, "created_ms", j_i64(created_ms));

    /* Only when set: a reservation rewrites the value, and most never have them. */
    if (o != NULL && ns->floor != 0 && json_object_set_new(o, "floor", j_u64(ns->floor)) != 0) {
        json_decref(o);
        return NULL;
    }
    if (o != NULL && ns->origin[0] != '\0' &&
        json_object_set_new(o, "origin", json_string(ns->origin)) != 0) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* A small field: 0..@p max. */
static int get_small(json_t *o, const char *key, uint64_t max, uint64_t *out)
{
    return get_u64(o, key, out) != 0 || *out > max ? -1 : 0;
}

/* The namespace in @p kv (key P/ns/NAME) into @p out. */
static int ns_from_kv(const struct etcd_store *s, const struct etcd_kv *kv, idmint_ns_info *out)
{
    size_t skip = strlen(s->prefix) + strlen("/ns/");
    json_t *o = kv_json(s, kv, "a namespace"), *origin;
    const char *kind;
    uint64_t t, r, w, q, unit, block, max_block;
    int64_t epoch_ms, created_ms;
    idmint_ns_info ns;

    if (o == NULL)
        return IDMINT_ESTORE;
    memset(&ns, 0, sizeof(ns));
    kind = json_string_value(json_object_get(o, "kind"));
    origin = json_object_get(o, "origin");
    if (strlen(kv->key) <= skip || strlen(kv->key) - skip >= sizeof(ns.name) || kind == NULL ||
        (strcmp(kind, "range") != 0 && strcmp(kind, "snowflake") != 0) ||
        get_small(o, "time_bits", 64, &t) != 0 || get_small(o, "region_bits", 64, &r) != 0 ||
        get_small(o, "worker_bits", 64, &w) != 0 || get_small(o, "sequence_bits", 64, &q) != 0 ||
        get_small(o, "unit_ms", UINT32_MAX, &unit) != 0 ||
        get_small(o, "block", UINT32_MAX, &block) != 0 ||
        get_small(o, "max_block", UINT32_MAX, &max_block) != 0 ||
        get_i64(o, "epoch_ms", &epoch_ms) != 0 || get_i64(o, "created_ms", &created_ms) != 0 ||
        get_u64(o, "next_value", &ns.next_value) != 0 ||
        get_u64(o, "max_value", &ns.max_value) != 0 || get_u64(o, "floor", &ns.floor) != 0 ||
        (origin != NULL &&
         (!json_is_string(origin) || strlen(json_string_value(origin)) >= sizeof(ns.origin)))) {
        json_decref(o);
        return etcd_bad_value(s, kv->key, "a namespace");
    }
    snprintf(ns.name, sizeof(ns.name), "%s", kv->key + skip);
    if (origin != NULL)
        snprintf(ns.origin, sizeof(ns.origin), "%s", json_string_value(origin));
    ns.kind = strcmp(kind, "range") == 0 ? IDMINT_KIND_RANGE : IDMINT_KIND_SNOWFLAKE;
    ns.is_disabled = json_is_true(json_object_get(o, "disabled"));
    ns.created_ms = created_ms;
    ns.layout.time_bits = (uint8_t)t;
    ns.layout.region_bits = (uint8_t)r;
    ns.layout.worker_bits = (uint8_t)w;
    ns.layout.sequence_bits = (uint8_t)q;
    ns.layout.unit_ms = (uint32_t)unit;
    ns.layout.epoch_ms = epoch_ms;
    ns.block = (uint32_t)block;
    ns.max_block = (uint32_t)max_block;
    json_decref(o);
    *out = ns;
    return 0;
}

/* A worker lease row as stored. */
struct etcd_row {
    uint32_t region;
    uint32_t worker_id;
    char holder[33]; /* "" when released */
    uint64_t generation;
    uint64_t until; /* E */
    uint64_t fence; /* E found by the take that made this generation */
    int64_t mod_rev;
};

/* The row in @p kv (key P/lease/NS/REGION/WORKER). */
static int row_from_kv(const struct etcd_store *s, const struct etcd_kv *kv, struct etcd_row *out)
{
    json_t *o = kv_json(s, kv, "a worker lease");
    const char *holder, *tail = strrchr(kv->key, '/');
    uint64_t region = UINT64_MAX, worker = UINT64_MAX;
    char num[16];
    size_t len = strlen(kv->key);

    if (o == NULL)
        return IDMINT_ESTORE;
    holder = json_string_value(json_object_get(o, "holder"));
    /* ".../RRRRRRRRRR/WWWWWWWWWW": two 10-digit numbers end the key. */
    if (tail != NULL && len >= 22 && kv->key[len - 22] == '/') {
        memcpy(num, kv->key + len - 21, 10);
        num[10] = '\0';
        if (idmint__parse_u64(num, &region) != 0)
            region = UINT64_MAX;
        if (idmint__parse_u64(tail + 1, &worker) != 0)
            worker = UINT64_MAX;
    }
    if (holder == NULL || strlen(holder) >= sizeof(out->holder) || region > UINT32_MAX ||
        worker > UINT32_MAX || get_u64(o, "generation", &out->generation) != 0 ||
        get_u64(o, "until", &out->until) != 0 || get_u64(o, "fence", &out->fence) != 0) {
        json_decref(o);
        return etcd_bad_value(s, kv->key, "a worker lease");
    }
    snprintf(out->holder, sizeof(out->holder), "%s", holder);
    out->region = (uint32_t)region;
    out->worker_id = (uint32_t)worker;
    out->mod_rev = kv->mod_rev;
    json_decref(o);
    return 0;
}

static json_t *row_to_json(const char *holder, uint64_t generation, uint64_t until, uint64_t fence)
{
    return json_pack("{s:s,s:o,s:o,s:o}", "holder", holder, "generation", j_u64(generation),
                     "until", j_u64(until), "fence", j_u64(fence));
}

/* ==== version 4 values: grants, batches, collisions ==== */

/*
 * Text of at most @p cap bytes at @p in as a JSON string, printable ASCII
 * kept and any other byte '?': what a holder says of itself is recorded,
 * and never the reason a grant fails.
 */
static json_t *j_text(const char *in, size_t cap)
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

/* A text field into @p out (@p size bytes, cut to fit); absent is "". -1 if it is not text. */
static int get_text(json_t *o, const char *key, char *out, size_t size)
{
    json_t *v = json_object_get(o, key);

    if (v != NULL && !json_is_string(v))
        return -1;
    snprintf(out, size, "%s", v != NULL ? json_string_value(v) : "");
    return 0;
}

/* Set @p o's origin fields from @p origin; an allocation failure is remembered in s->is_oom. */
static void origin_to_json(struct etcd_store *s, json_t *o, const struct idmint__origin *origin)
{
    if (o == NULL ||
        json_object_set_new(o, "host", j_text(origin->host, sizeof(origin->host))) != 0 ||
        json_object_set_new(o, "pid", j_u64(origin->pid)) != 0 ||
        json_object_set_new(o, "program", j_text(origin->program, sizeof(origin->program))) != 0 ||
        json_object_set_new(o, "token", j_text(origin->token, sizeof(origin->token))) != 0)
        s->is_oom = 1;
}

/* A worker grant's value: holder @p holder's fingerprint, @p origin, [@p first, @p last). */
static json_t *wgrant_json(struct etcd_store *s, const char *holder,
                           const struct idmint__origin *origin, uint64_t first, uint64_t last,
                           int64_t now_ms)
{
    char fp[IDMINT_HOLDER_FP_LEN + 1];
    json_t *o;

    idmint__holder_fingerprint(holder, fp);
    o = json_pack("{s:s,s:o,s:o,s:o,s:o}", "holder", fp, "first", j_u64(first), "last", j_u64(last),
                  "granted_ms", j_i64(now_ms), "updated_ms", j_i64(now_ms));
    origin_to_json(s, o, origin);
    return o;
}

/* A range grant's value: [start, @p end) of the incarnation whose fingerprint is @p fp. */
static json_t *rgrant_json(struct etcd_store *s, const char *fp,
                           const struct idmint__origin *origin, uint64_t end, int64_t now_ms)
{
    json_t *o =
        json_pack("{s:s,s:o,s:o}", "holder", fp, "end", j_u64(end), "granted_ms", j_i64(now_ms));

    origin_to_json(s, o, origin);
    return o;
}

/* The fields every grant has, from its value @p o, into @p g. -1 if one is not what we write. */
static int grant_common(json_t *o, idmint_grant_info *g)
{
    uint64_t pid = 0;

    if (get_text(o, "holder", g->holder, sizeof(g->holder)) != 0 ||
        get_text(o, "host", g->host, sizeof(g->host)) != 0 ||
        get_text(o, "program", g->program, sizeof(g->program)) != 0 ||
        get_text(o, "token", g->token, sizeof(g->token)) != 0 ||
        get_small(o, "pid", UINT32_MAX, &pid) != 0 || get_i64(o, "granted_ms", &g->granted_ms) != 0)
        return -1;
    g->pid = (uint32_t)pid;
    g->size = sizeof(*g);
    return 0;
}

/* The last @p digits digits of @p key as a number; -1 if they are not that. */
static int key_tail_u64(const char *key, size_t digits, uint64_t *out)
{
    size_t len = strlen(key);

    if (len <= digits || key[len - digits - 1] != '/')
        return -1;
    return idmint__parse_u64(key + len - digits, out);
}

/* The worker grant in @p kv (key P/wgrant/NS/REGION/WORKER/GEN) of (@p region, @p worker_id). */
static int wgrant_from_kv(const struct etcd_store *s, const struct etcd_kv *kv, uint32_t region,
                          uint32_t worker_id, idmint_grant_info *g)
{
    json_t *o = kv_json(s, kv, "a worker grant");
    int rc = 0;

    if (o == NULL)
        return IDMINT_ESTORE;
    memset(g, 0, sizeof(*g));
    if (grant_common(o, g) != 0 || key_tail_u64(kv->key, 20, &g->generation) != 0 ||
        get_u64(o, "first", &g->first) != 0 || get_u64(o, "last", &g->last) != 0 ||
        get_i64(o, "updated_ms", &g->updated_ms) != 0)
        rc = etcd_bad_value(s, kv->key, "a worker grant");
    g->kind = IDMINT_KIND_SNOWFLAKE;
    g->region = region;
    g->worker_id = worker_id;
    json_decref(o);
    return rc;
}

/* The range grant in @p kv (key P/rgrant/NS/START). */
static int rgrant_from_kv(const struct etcd_store *s, const struct etcd_kv *kv,
                          idmint_grant_info *g)
{
    json_t *o = kv_json(s, kv, "a range grant");
    int rc = 0;

    if (o == NULL)
        return IDMINT_ESTORE;
    memset(g, 0, sizeof(*g));
    if (grant_common(o, g) != 0 || key_tail_u64(kv->key, 20, &g->first) != 0 ||
        get_u64(o, "end", &g->last) != 0)
        rc = etcd_bad_value(s, kv->key, "a range grant");
    g->kind = IDMINT_KIND_RANGE;
    g->updated_ms = g->granted_ms;
    json_decref(o);
    return rc;
}

/*
 * Into @p cmp and @p ok: worker grant @p gkey, as read in @p r, ends at
 * @p last from @p now_ms, and its age index key moves with it. Its
 * mod_revision is compared, so a prune that deleted it meanwhile makes the
 * txn read again. No grant (pruned, or taken before schema 3): nothing to
 * set. A grant we cannot read is left as it is: a record of who holds the
 * lease never stops its renewal.
 */
static int wgrant_extend(struct etcd_store *s, const struct etcd_range *r, const char *gkey,
                         uint64_t last, int64_t now_ms, json_t *cmp, json_t *ok)
{
    const struct etcd_kv *kv = range_one(r);
    char old_age[ETCD_KEY_MAX], new_age[ETCD_KEY_MAX];
    int64_t updated_ms = 0;
    json_t *o;
    int rc;

    add(s, cmp, cmp_mod(gkey, kv != NULL ? kv->mod_rev : 0));
    if (kv == NULL || (o = kv_json(s, kv, "a worker grant")) == NULL)
        return 0;
    if (get_i64(o, "updated_ms", &updated_ms) != 0) {
        json_decref(o);
        return 0;
    }
    if ((rc = key_age(s, IDMINT__KEEP_WORKER_GRANTS, updated_ms, gkey, old_age)) != 0 ||
        (rc = key_age(s, IDMINT__KEEP_WORKER_GRANTS, now_ms, gkey, new_age)) != 0) {
        json_decref(o);
        return rc;
    }
    if (json_object_set_new(o, "last", j_u64(last)) != 0 ||
        json_object_set_new(o, "updated_ms", j_i64(now_ms)) != 0)
        s->is_oom = 1;
    add(s, ok, op_put(gkey, o));
    /* One txn changes a key once; put again, it gets a new mod_revision all the same. */
    if (strcmp(old_age, new_age) != 0)
        add(s, ok, op_delete(old_age, NULL));
    add(s, ok, op_put_text(new_age, ""));
    return 0;
}

/*
 * An audit record. @p result (stolen; may be NULL) is what the call decided,
 * so that a retry after a lost reply can answer as the applied attempt did.
 */
static json_t *audit_json(int64_t at_ms, const char *actor, const char *action, const char *ns,
                          const char *detail, json_t *result)
{
    json_t *o = json_pack("{s:o,s:s,s:s,s:s,s:s}", "at_ms", j_i64(at_ms), "actor", actor, "action",
                          action, "ns", ns, "detail", detail);

    if (o != NULL && result != NULL && json_object_set_new(o, "result", result) != 0) {
        json_decref(o);
        return NULL;
    }
    if (o == NULL)
        json_decref(result);
    return o;
}

/* The "result" object of the audit record @p kv (NULL and ESTORE if absent); caller decrefs. */
static json_t *audit_result(const struct etcd_store *s, const struct etcd_kv *kv)
{
    json_t *o = kv_json(s, kv, "an audit record"), *r;

    if (o == NULL)
        return NULL;
    r = json_object_get(o, "result");
    if (!json_is_object(r)) {
        json_decref(o);
        etcd_bad_value(s, kv->key, "an audit record with its result");
        return NULL;
    }
    json_incref(r);
    json_decref(o);
    return r;
}

/* ==== the authority's history ==== */

/* IDMINT_ERESTORED: a granting write found P/history gone, and changed nothing. */
static int history_missing(const struct etcd_store *s)
{
    return idmint__fail(IDMINT_ERESTORED,
                        "%s: the history key %s is missing: the prefix was restored from a "
                        "snapshot taken before it existed, or the key was deleted; nothing was "
                        "granted. Run 'idmint authority fence' on it (docs/operations.md)",
                        s->name, s->hkey);
}

/* The id in the history key @p kv into @p id (33 bytes). */
static int history_id_of(const struct etcd_store *s, const struct etcd_kv *kv, char *id)
{
    json_t *o = kv_json(s, kv, "a history id");
    const char *v = json_string_value(json_object_get(o, "id"));
    int rc = 0;

    if (o == NULL)
        return IDMINT_ESTORE;
    if (v == NULL || !idmint__history_id_valid(v))
        rc = etcd_bad_value(s, kv->key, "a history id");
    else
        memcpy(id, v, 33);
    json_decref(o);
    return rc;
}

/*
 * @p out of a write at revision @p rev with tip @p tip that read the history
 * key as @p kv: its revision is the counter. A reply without a revision is
 * no news.
 */
static int history_at(const struct etcd_store *s, const struct etcd_kv *kv, int64_t rev,
                      uint64_t tip, struct idmint__history *out)
{
    char id[33];
    int rc;

    memset(out, 0, sizeof(*out));
    if (kv == NULL)
        return idmint__fail(IDMINT_ESTORE, "%s: a granting txn did not read %s back", s->name,
                            s->hkey);
    if ((rc = history_id_of(s, kv, id)) != 0 || rev <= 0)
        return rc;
    memcpy(out->id, id, sizeof(out->id));
    out->seq = (uint64_t)rev;
    out->tip = tip;
    return 0;
}

/*
 * The history of our write that applied in an earlier attempt whose reply
 * was lost: the revision of the audit key @p akv it created, with the id
 * of @p hkv read with it and the txn's tip @p tip. A history key written
 * since (a fence) makes it no news: the holder's next write shows the new
 * id.
 */
static int history_applied(const struct etcd_store *s, const struct etcd_kv *hkv,
                           const struct etcd_kv *akv, uint64_t tip, struct idmint__history *out)
{
    memset(out, 0, sizeof(*out));
    if (hkv == NULL || hkv->mod_rev >= akv->create_rev)
        return 0;
    return history_at(s, hkv, akv->create_rev, tip, out);
}

/*
 * A granting write (store.h, version 3): etcd_write that also compares that
 * P/history exists and reads it, last, in the success branch. @p fail must
 * end with a range of s->hkey, so the n ranges of @p r end with it too.
 * ETCD_APPLIED with @p hist filled; history_missing() when a compare failed
 * with P/history gone (nothing changed); else as etcd_write.
 */
static int grant_write(struct etcd_store *s, json_t *cmp, json_t *ok, json_t *fail,
                       struct etcd_range *r, size_t n, struct idmint__history *hist)
{
    struct etcd_range last;
    char text[24];
    uint64_t tip = 0;
    int rc = call_tip(s, &tip);

    if (rc != 0) {
        json_decref(cmp);
        json_decref(ok);
        json_decref(fail);
        return rc;
    }
    snprintf(text, sizeof(text), "%llu", (unsigned long long)tip);
    add(s, cmp, cmp_exists(s->hkey));
    add(s, ok, op_put_text(s->tkey, text)); /* the chain: this txn's (seq, tip) */
    add(s, ok, op_range(s->hkey, NULL));
    rc = etcd_write(s, cmp, ok, fail, r, n, &last);
    if (rc == ETCD_APPLIED) {
        rc = history_at(s, range_one(&last), s->applied_rev, tip, hist);
        range_free(&last);
        return rc != 0 ? rc : ETCD_APPLIED;
    }
    if (rc == 0 && range_one(&r[n - 1]) == NULL) {
        ranges_free(r, n);
        return history_missing(s);
    }
    return rc;
}

/*
 * Put P/maxlease/NAME/UNITS (@p units, 20 digits) for a lease of @p units
 * granted in @p ns: the largest such key is the longest lease granted there
 * (store.h, version 6), kept without a read or a compare. NULL (an
 * allocation failure, remembered by add) when the key does not fit.
 */
static json_t *op_lease_max(const struct etcd_store *s, const char *ns, uint64_t units)
{
    char key[ETCD_KEY_MAX];

    if (key_fmt(s, key, "/maxlease/%s/%020llu", ns, (unsigned long long)units) != 0)
        return NULL;
    return op_put_text(key, "");
}

/* ==== open / close ==== */

static void etcd_close(struct store *st)
{
    struct etcd_store *s = (struct etcd_store *)st;
    size_t i;

    if (s == NULL)
        return;
    if (s->curl != NULL)
        idmint__curl.easy_cleanup(s->curl);
    if (s->headers != NULL)
        idmint__curl.slist_free_all(s->headers);
    for (i = 0; i < s->n_members; i++)
        free(s->members[i]);
    free(s->reply);
    free(s);
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

/* Parse "//h1:p,h2:p/prefix" into s->members and s->prefix. */
static int url_parse(struct etcd_store *s, const char *location)
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

/*
 * The history key @p hkv of an older schema with @p store_id added (one it
 * has is kept), or NULL when it is not a JSON object (the txn then fails to
 * build: a damaged key is never replaced silently).
 */
static json_t *history_upgraded(struct etcd_store *s, const struct etcd_kv *hkv,
                                const char *store_id)
{
    json_t *o = kv_json(s, hkv, "a history id");

    if (o != NULL && json_object_get(o, "store_id") == NULL &&
        json_object_set_new(o, "store_id", json_string(store_id)) != 0) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/*
 * Make sure P/schema names a version we know, bringing a new prefix or one
 * of version 1 or 2 to ETCD_SCHEMA_VERSION (with a history id when it has
 * none): one txn that compares both keys as read, so nodes starting at
 * once agree on one id and the losers read the winner's keys in the
 * failure branch. A history key that exists is kept. A prefix already at
 * this version whose history key is gone is opened as it is: its writes
 * refuse (history_missing) until a fence gives it a history again.
 */
static int etcd_schema(struct etcd_store *s, unsigned flags)
{
    char key[ETCD_KEY_MAX], text[32], id[ETCD_OPID_LEN + 1], store_id[ETCD_OPID_LEN + 1];
    char tip_text[24];
    struct etcd_range r[2]; /* schema, history */
    uint64_t tip = 0;
    uint64_t version = 0;
    int rc = key_fmt(s, key, "/schema"), have = 0, lost;

    if (rc != 0)
        return rc;
    for (lost = 0;; lost++) {
        const struct etcd_kv *kv, *hkv;
        json_t *cmp, *ok, *fail;

        if (!have) {
            json_t *ops = json_array();

            add(s, ops, op_range(key, NULL));
            add(s, ops, op_range(s->hkey, NULL));
            if ((rc = etcd_read(s, ops, r, 2)) != 0) {
                ranges_free(r, 2);
                return rc;
            }
        }
        kv = range_one(&r[0]);
        hkv = range_one(&r[1]);
        rc = 0;
        if (kv != NULL) {
            snprintf(text, sizeof(text), "%.*s", (int)(kv->value_len < 31 ? kv->value_len : 31),
                     kv->value);
            if (idmint__parse_u64(text, &version) != 0 || version == 0)
                rc = idmint__fail(IDMINT_ESTORE,
                                  "%s: %s holds '%s', not a schema version: not an idmint "
                                  "store; check the prefix",
                                  s->name, key, text);
            else if (version > ETCD_SCHEMA_VERSION)
                rc = idmint__fail(IDMINT_ESTORE,
                                  "%s: schema version %llu is newer than this idmint knows "
                                  "(%d); made by a newer idmint? upgrade this one",
                                  s->name, (unsigned long long)version, ETCD_SCHEMA_VERSION);
            if (rc != 0 || version == ETCD_SCHEMA_VERSION) {
                ranges_free(r, 2);
                return rc;
            }
        } else if (flags & STORE_OPEN_EXISTING) {
            ranges_free(r, 2);
            return idmint__fail(IDMINT_ENOTFOUND,
                                "%s: no idmint store under prefix %s yet: nothing has been "
                                "created there; create a namespace first, or check the URL",
                                s->name, s->prefix);
        }
        if (lost == ETCD_MAX_LOST) {
            ranges_free(r, 2);
            return lost_too_often(s, "writing the schema version");
        }
        if ((rc = opid_new(id)) != 0 || (rc = opid_new(store_id)) != 0 ||
            (rc = idmint__store_history_tip(&tip)) != 0) {
            ranges_free(r, 2);
            return rc;
        }
        snprintf(tip_text, sizeof(tip_text), "%llu", (unsigned long long)tip);
        /* Version 1 is version 2 without the history, version 2 is
         * version 3 without the grant, batch, collision and age keys, which
         * start empty, and version 3 is version 4 without the leased batch
         * and collision keys, which start empty too (version 3's batches
         * are still read, and pruned by their age index): nothing to move.
         * A node of an older version still
         * running meanwhile writes as before (its takes and reservations
         * record no grant; a renewal or release of such a lease finds none
         * and sets none), and none opens again: a newer schema is refused. */
        snprintf(text, sizeof(text), "%d", ETCD_SCHEMA_VERSION);
        cmp = json_array();
        ok = json_array();
        fail = json_array();
        add(s, cmp, kv != NULL ? cmp_mod(key, kv->mod_rev) : cmp_absent(key));
        add(s, cmp, hkv != NULL ? cmp_mod(s->hkey, hkv->mod_rev) : cmp_absent(s->hkey));
        add(s, ok, op_put_text(key, text));
        /* Version 5: the store id (kept across fences and restores) joins
         * the history key, kept as it is otherwise, and a first tip logs the
         * upgrade's revision. No longest lease is known for leases granted
         * before: a fence cannot refuse a short --max-lease for them. */
        if (hkv == NULL)
            add(s, ok, op_put(s->hkey, json_pack("{s:s,s:s}", "id", id, "store_id", store_id)));
        else
            add(s, ok, op_put(s->hkey, history_upgraded(s, hkv, store_id)));
        add(s, ok, op_put_text(s->tkey, tip_text));
        add(s, fail, op_range(key, NULL));
        add(s, fail, op_range(s->hkey, NULL));
        ranges_free(r, 2);
        rc = etcd_write(s, cmp, ok, fail, r, 2, NULL);
        if (rc == ETCD_APPLIED)
            return 0;
        if (rc < 0) {
            ranges_free(r, 2);
            return rc;
        }
        have = rc == 0; /* lost the race: the failure branch read the winner's keys */
    }
}

static int etcd_open(const char *location, const char *token, unsigned flags, struct store **out)
{
    struct etcd_store *s;
    struct curl_slist *list;
    uint32_t rnd = 0;
    int rc;

    (void)token; /* etcd authentication is not supported: see etcd_once */
    if ((s = calloc(1, sizeof(*s))) == NULL)
        return idmint__fail(IDMINT_ENOMEM, "out of memory opening etcd store");
    s->base.ops = &idmint__store_etcd;
    snprintf(s->name, sizeof(s->name), "etcd:%s", location);
    if ((rc = url_parse(s, location)) != 0 || (rc = idmint__curl_load()) != 0) {
        etcd_close(&s->base);
        return rc;
    }
    /* Spread the processes of a fleet over the members. */
    if (idmint__entropy(&rnd, sizeof(rnd)) == 0)
        s->cur = rnd % s->n_members;
    s->jitter = ((uint64_t)rnd << 32 | (uint64_t)(uintptr_t)s) | 1u; /* any nonzero seed */
    s->curl = idmint__curl.easy_init();
    list =
        s->curl != NULL ? idmint__curl.slist_append(NULL, "Content-Type: application/json") : NULL;
    s->headers = list;
    /* "Expect:" stops curl waiting for 100-continue before a body. */
    if (list != NULL)
        list = idmint__curl.slist_append(s->headers, "Expect:");
    /* A member that has lost its leader refuses at once instead of waiting. */
    if (list != NULL)
        list = idmint__curl.slist_append(s->headers, "Grpc-Metadata-hasleader: true");
    if (list == NULL) {
        etcd_close(&s->base);
        return idmint__fail(IDMINT_ENOMEM, "out of memory opening etcd store");
    }
    idmint__curl.easy_setopt(s->curl, CURLOPT_HTTPHEADER, s->headers);
    idmint__curl.easy_setopt(s->curl, CURLOPT_WRITEFUNCTION, etcd_on_data);
    idmint__curl.easy_setopt(s->curl, CURLOPT_WRITEDATA, s);
    idmint__curl.easy_setopt(s->curl, CURLOPT_ERRORBUFFER, s->curl_err);
    /* The renewal thread must never be hit by SIGALRM from name lookups. */
    idmint__curl.easy_setopt(s->curl, CURLOPT_NOSIGNAL, 1L);
    idmint__curl.easy_setopt(s->curl, CURLOPT_PROTOCOLS_STR, "http");
    /* Members are reached directly: a proxy would add its own delays to renewals. */
    idmint__curl.easy_setopt(s->curl, CURLOPT_PROXY, "");
    call_begin(s);
    if ((rc = key_fmt(s, s->hkey, "/history")) != 0 || (rc = key_fmt(s, s->tkey, "/tip")) != 0 ||
        (rc = etcd_schema(s, flags)) != 0) {
        etcd_close(&s->base);
        return rc;
    }
    *out = &s->base;
    return 0;
}

/* ==== namespaces ==== */

static int etcd_ns_create(struct store *st, const idmint_ns_info *ns, const char *actor,
                          int64_t now_ms)
{
    struct etcd_store *s = (struct etcd_store *)st;
    char nkey[ETCD_KEY_MAX], akey[ETCD_KEY_MAX], opid[ETCD_OPID_LEN + 1], detail[256];
    struct etcd_range r[2];
    int rc, lost;

    call_begin(s);
    if ((rc = opid_new(opid)) != 0 || (rc = key_ns(s, ns->name, nkey)) != 0 ||
        (rc = key_audit(s, opid, akey)) != 0)
        return rc;
    idmint__store_ns_create_detail(ns, detail, sizeof(detail));
    for (lost = 0; lost < ETCD_MAX_LOST; lost++) {
        json_t *cmp = json_array(), *ok = json_array(), *fail = json_array();

        add(s, cmp, cmp_absent(nkey));
        add(s, cmp, cmp_absent(akey));
        add(s, ok, op_put(nkey, ns_to_json(ns, now_ms)));
        add(s, ok, op_put(akey, audit_json(now_ms, actor, "ns.create", ns->name, detail, NULL)));
        add(s, fail, op_range(nkey, NULL));
        add(s, fail, op_range(akey, NULL));
        rc = etcd_write(s, cmp, ok, fail, r, 2, NULL);
        if (rc == ETCD_APPLIED)
            return 0;
        if (rc == ETCD_UNKNOWN) {
            /* Did an attempt of ours apply? Our audit key says. */
            json_t *ops = json_array();

            add(s, ops, op_range(nkey, NULL));
            add(s, ops, op_range(akey, NULL));
            rc = etcd_read(s, ops, r, 2);
        }
        if (rc == 0 && range_one(&r[1]) != NULL)
            rc = ETCD_APPLIED;
        else if (rc == 0 && range_one(&r[0]) != NULL)
            rc = idmint__fail(IDMINT_ECONFLICT, "namespace '%s' already exists", ns->name);
        ranges_free(r, 2);
        if (rc == ETCD_APPLIED)
            return 0;
        if (rc != 0)
            return rc;
    }
    return lost_too_often(s, "creating a namespace");
}

/* Read namespace @p name: 0, IDMINT_ENOTFOUND or an error. */
static int etcd_ns_read(struct etcd_store *s, const char *name, idmint_ns_info *out)
{
    char key[ETCD_KEY_MAX];
    struct etcd_range r[1];
    json_t *ops;
    int rc = key_ns(s, name, key);

    if (rc != 0)
        return rc;
    ops = json_array();
    add(s, ops, op_range(key, NULL));
    if ((rc = etcd_read(s, ops, r, 1)) == 0)
        rc = range_one(&r[0]) == NULL ? idmint__store_ns_missing(name)
                                      : ns_from_kv(s, range_one(&r[0]), out);
    ranges_free(r, 1);
    return rc;
}

static int etcd_ns_get(struct store *st, const char *name, idmint_ns_info *out)
{
    struct etcd_store *s = (struct etcd_store *)st;
    idmint_ns_info info;
    int rc;

    call_begin(s);
    if ((rc = etcd_ns_read(s, name, &info)) == 0)
        *out = info;
    return rc;
}

/* Every key with prefix P@p sub in one linearizable read (key order). */
static int etcd_read_prefix(struct etcd_store *s, const char *sub, struct etcd_range *r)
{
    char key[ETCD_KEY_MAX], end[ETCD_KEY_MAX];
    json_t *ops;
    int rc = key_fmt(s, key, "%s", sub);

    if (rc != 0)
        return rc;
    key_prefix_end(key, end);
    ops = json_array();
    add(s, ops, op_range(key, end));
    return etcd_read(s, ops, r, 1);
}

static int etcd_ns_list(struct store *st, idmint_ns_info **out, size_t *n)
{
    struct etcd_store *s = (struct etcd_store *)st;
    idmint_ns_info *list = NULL;
    struct etcd_range r[1];
    size_t i;
    int rc;

    call_begin(s);
    if ((rc = etcd_read_prefix(s, "/ns/", r)) == 0 && r[0].n > 0 &&
        (list = calloc(r[0].n, sizeof(*list))) == NULL)
        rc = etcd_oom(s, "listing namespaces");
    for (i = 0; rc == 0 && i < r[0].n; i++)
        rc = ns_from_kv(s, &r[0].kvs[i], &list[i]);
    if (rc == 0) {
        *out = list;
        *n = r[0].n;
    } else {
        free(list);
    }
    ranges_free(r, 1);
    return rc;
}

static int etcd_ns_set_disabled(struct store *st, const char *name, int disabled, const char *actor,
                                int64_t now_ms)
{
    struct etcd_store *s = (struct etcd_store *)st;
    char nkey[ETCD_KEY_MAX], akey[ETCD_KEY_MAX], opid[ETCD_OPID_LEN + 1];
    struct etcd_range r[2];
    int rc, lost, have = 0;

    call_begin(s);
    if ((rc = opid_new(opid)) != 0 || (rc = key_ns(s, name, nkey)) != 0 ||
        (rc = key_audit(s, opid, akey)) != 0)
        return rc;
    for (lost = 0; lost < ETCD_MAX_LOST; lost++) {
        const struct etcd_kv *kv;
        idmint_ns_info info;
        json_t *cmp, *ok, *fail;

        if (!have) {
            json_t *ops = json_array();

            add(s, ops, op_range(nkey, NULL));
            add(s, ops, op_range(akey, NULL));
            if ((rc = etcd_read(s, ops, r, 2)) != 0) {
                ranges_free(r, 2);
                return rc;
            }
        }
        if (range_one(&r[1]) != NULL) {
            ranges_free(r, 2);
            return 0; /* an earlier attempt of this call applied */
        }
        if ((kv = range_one(&r[0])) == NULL) {
            ranges_free(r, 2);
            return idmint__store_ns_missing(name);
        }
        if ((rc = ns_from_kv(s, kv, &info)) != 0) {
            ranges_free(r, 2);
            return rc;
        }
        info.is_disabled = disabled != 0;
        cmp = json_array();
        ok = json_array();
        fail = json_array();
        add(s, cmp, cmp_mod(nkey, kv->mod_rev));
        add(s, cmp, cmp_absent(akey));
        add(s, ok, op_put(nkey, ns_to_json(&info, info.created_ms)));
        add(s, ok,
            op_put(akey, audit_json(now_ms, actor, disabled ? "ns.disable" : "ns.enable", name,
                                    disabled ? "disabled" : "enabled", NULL)));
        add(s, fail, op_range(nkey, NULL));
        add(s, fail, op_range(akey, NULL));
        ranges_free(r, 2);
        rc = etcd_write(s, cmp, ok, fail, r, 2, NULL);
        if (rc == ETCD_APPLIED)
            return 0;
        if (rc < 0) {
            ranges_free(r, 2);
            return rc;
        }
        have = rc == 0;
        if (have)
            lost_backoff(s, lost);
    }
    return lost_too_often(s, "disabling or enabling a namespace");
}

/* ==== worker leases ==== */

/* What a take read: the namespace, the rows of one region, our audit key, the history. */
struct take_state {
    struct etcd_range r[4]; /* ns key, region rows, audit key, history key */
};

/* Whether @p a comes before @p b: the lower E first, then the lower id. */
static int row_before(const struct etcd_row *a, const struct etcd_row *b)
{
    return a->until != b->until ? a->until < b->until : a->worker_id < b->worker_id;
}

/*
 * Choose a worker id from the rows of (ns, region) in @p rows (key order =
 * worker id order), as store.h says: an id whose E is below @p now_unit
 * (lowest E, then lowest id), else the lowest never-used id below
 * @p worker_count, else a released id whose E is still ahead (soonest E
 * first: a holder whose clock ran ahead released it). 1 with *row and
 * *is_new 0, or *new_id and *is_new 1; 0 when none is free; else an error.
 *
 * After @p lost races lost in a row, the choice spreads instead: a random
 * expired id, or a random one of the lowest 8 << lost never-used ids. Every
 * taker of a start burst chose the same lowest id, so one won each round
 * and each loss was a Raft proposal for nothing (250 takers: 5 s, then the
 * call's budget ran out). Any expired or never-used id is as safe as the
 * lowest: the fence the taker records is the E it found either way.
 */
static int take_choose(struct etcd_store *s, const struct etcd_range *rows, uint64_t worker_count,
                       uint64_t now_unit, int lost, struct etcd_row *row, int *is_new,
                       uint32_t *new_id)
{
    struct etcd_row cur, expired, ahead;
    int rc;
    uint64_t has_expired = 0, has_ahead = 0;
    uint64_t unused = 0;  /* the lowest id without a row */
    uint64_t in_use = 0;  /* rows below worker_count */
    uint64_t pick = 0;    /* spread: which never-used id (0: the lowest) */
    uint64_t next_id = 0; /* spread: the id after the last row seen */
    size_t i;

    for (i = 0; i < rows->n; i++) {
        if ((rc = row_from_kv(s, &rows->kvs[i], &cur)) != 0)
            return rc;
        if (cur.worker_id == unused)
            unused++;
        if (cur.worker_id >= worker_count)
            continue;
        in_use++;
        if (cur.until < now_unit) {
            /* Spread: reservoir-sample one of the expired ids. */
            if (lost > 0 ? jitter_next(s) % (has_expired + 1) == 0
                         : !has_expired || row_before(&cur, &expired))
                expired = cur;
            has_expired++;
        } else if (cur.holder[0] == '\0' && (!has_ahead || row_before(&cur, &ahead))) {
            ahead = cur;
            has_ahead = 1;
        }
    }
    *is_new = 0;
    if (has_expired) {
        *row = expired;
        return 1;
    }
    if (unused >= worker_count)
        unused = worker_count; /* none, whatever the spread */
    else if (lost > 0) {
        uint64_t free_ids = worker_count - in_use;
        uint64_t span = lost >= 16 ? free_ids : UINT64_C(8) << lost;

        pick = jitter_next(s) % (span < free_ids ? span : free_ids);
        /* Walk the gaps between rows to the pick-th never-used id. */
        for (i = 0; i < rows->n; i++) {
            if ((rc = row_from_kv(s, &rows->kvs[i], &cur)) != 0)
                return rc;
            if (cur.worker_id >= worker_count)
                break;
            if (cur.worker_id - next_id > pick)
                break;
            pick -= cur.worker_id - next_id;
            next_id = (uint64_t)cur.worker_id + 1;
        }
        unused = next_id + pick;
    }
    if (unused < worker_count) {
        /* A new id: its taker need not wait for any E. */
        *new_id = (uint32_t)unused;
        *is_new = 1;
        return 1;
    }
    if (has_ahead) {
        *row = ahead;
        return 1;
    }
    return 0;
}

static int take_read(struct etcd_store *s, const char *nkey, const char *rkey, const char *rend,
                     const char *akey, struct take_state *t)
{
    json_t *ops = json_array();

    add(s, ops, op_range(nkey, NULL));
    add(s, ops, op_range(rkey, rend));
    add(s, ops, op_range(akey, NULL));
    add(s, ops, op_range(s->hkey, NULL));
    return etcd_read(s, ops, t->r, 4);
}

/* Our take applied in an earlier attempt: fill @p res from its audit record. */
static int take_from_audit(struct etcd_store *s, const struct etcd_kv *kv,
                           struct idmint__lease *res)
{
    json_t *r = audit_result(s, kv);
    uint64_t worker = 0;
    int rc = 0;

    if (r == NULL)
        return IDMINT_ESTORE;
    if (get_u64(r, "worker", &worker) != 0 || worker > UINT32_MAX ||
        get_u64(r, "generation", &res->generation) != 0 ||
        get_u64(r, "fence", &res->fence_found) != 0 || get_u64(r, "until", &res->lease_until) != 0)
        rc = etcd_bad_value(s, kv->key, "the result of a take");
    res->worker_id = (uint32_t)worker;
    json_decref(r);
    return rc;
}

static int etcd_lease_take(struct store *st, const char *ns, uint64_t worker_count,
                           uint64_t now_unit, uint64_t until_unit, struct idmint__lease *lease,
                           const char *actor, int64_t now_ms)
{
    struct etcd_store *s = (struct etcd_store *)st;
    char nkey[ETCD_KEY_MAX], rkey[ETCD_KEY_MAX], rend[ETCD_KEY_MAX], akey[ETCD_KEY_MAX];
    char wkey[ETCD_KEY_MAX], gkey[ETCD_KEY_MAX], agekey[ETCD_KEY_MAX];
    char opid[ETCD_OPID_LEN + 1], detail[256];
    struct idmint__lease res = *lease;
    struct take_state t;
    int rc, lost, have = 0;

    call_begin(s);
    if ((rc = opid_new(opid)) != 0 || (rc = key_ns(s, ns, nkey)) != 0 ||
        (rc = key_fmt(s, rkey, "/lease/%s/%010u/", ns, (unsigned)lease->region)) != 0 ||
        (rc = key_audit(s, opid, akey)) != 0)
        return rc;
    key_prefix_end(rkey, rend);
    for (lost = 0; lost < ETCD_MAX_LOST; lost++) {
        const struct etcd_kv *nkv;
        /* take_choose sets it whenever it is read; GCC 12 at -O2 cannot see that
         * (-Wmaybe-uninitialized broke the release -Werror build). */
        struct etcd_row row = {0};
        idmint_ns_info info;
        uint32_t new_id = 0;
        int is_new = 0;
        json_t *cmp, *ok, *fail;

        if (!have && (rc = take_read(s, nkey, rkey, rend, akey, &t)) != 0)
            goto out;
        if (range_one(&t.r[2]) != NULL) {
            /* An earlier attempt of this call applied (its reply was lost). */
            if ((rc = take_from_audit(s, range_one(&t.r[2]), &res)) == 0)
                rc = history_applied(s, range_one(&t.r[3]), range_one(&t.r[2]), s->call_tip,
                                     &res.history);
            goto out;
        }
        if ((nkv = range_one(&t.r[0])) == NULL) {
            rc = idmint__store_ns_missing(ns);
            goto out;
        }
        if ((rc = ns_from_kv(s, nkv, &info)) != 0 || (rc = idmint__store_lease_refusal(&info)) != 0)
            goto out;
        rc = take_choose(s, &t.r[1], worker_count, now_unit, lost, &row, &is_new, &new_id);
        if (rc < 0)
            goto out;
        if (rc == 0) {
            rc = idmint__store_no_worker(ns, lease->region, worker_count);
            goto out;
        }
        if (is_new) {
            res.worker_id = new_id;
            res.generation = 1;
            res.fence_found = 0;
            res.lease_until = until_unit;
        } else {
            res.worker_id = row.worker_id;
            res.generation = row.generation + 1;
            res.fence_found = row.until;
            res.lease_until = row.until > until_unit ? row.until : until_unit;
        }
        if ((rc = key_lease(s, ns, lease->region, res.worker_id, wkey)) != 0 ||
            (rc = key_wgrant(s, ns, lease->region, res.worker_id, res.generation, gkey)) != 0 ||
            (rc = key_age(s, IDMINT__KEEP_WORKER_GRANTS, now_ms, gkey, agekey)) != 0)
            goto out;
        idmint__store_lease_detail(&res, res.fence_found, res.lease_until, detail, sizeof(detail));
        cmp = json_array();
        ok = json_array();
        fail = json_array();
        add(s, cmp, cmp_mod(nkey, nkv->mod_rev));
        add(s, cmp, is_new ? cmp_absent(wkey) : cmp_mod(wkey, row.mod_rev));
        add(s, cmp, cmp_absent(akey));
        /* The E found becomes this generation's fence: release clamps to it. */
        add(s, ok,
            op_put(wkey,
                   row_to_json(lease->holder, res.generation, res.lease_until, res.fence_found)));
        add(s, ok,
            op_put(akey,
                   audit_json(now_ms, actor, "worker.take", ns, detail,
                              json_pack("{s:o,s:o,s:o,s:o}", "worker", j_u64(res.worker_id),
                                        "generation", j_u64(res.generation), "fence",
                                        j_u64(res.fence_found), "until", j_u64(res.lease_until)))));
        /* The grant: this generation owns [the E found, its E); a new key, as the generation is. */
        add(s, ok,
            op_put(gkey, wgrant_json(s, lease->holder, &lease->origin, res.fence_found,
                                     res.lease_until, now_ms)));
        add(s, ok, op_put_text(agekey, ""));
        add(s, ok, op_lease_max(s, ns, lease->granted_units));
        add(s, fail, op_range(nkey, NULL));
        add(s, fail, op_range(rkey, rend));
        add(s, fail, op_range(akey, NULL));
        add(s, fail, op_range(s->hkey, NULL));
        ranges_free(t.r, 4);
        rc = grant_write(s, cmp, ok, fail, t.r, 4, &res.history);
        if (rc == ETCD_APPLIED) {
            rc = 0;
            goto out;
        }
        if (rc < 0)
            goto out;
        /* Lost the race (the failure branch read the new state), or the
         * outcome is unknown (read again: our audit key tells). */
        have = rc == 0;
        if (have)
            lost_backoff(s, lost);
        if (!have)
            ranges_free(t.r, 4);
    }
    rc = lost_too_often(s, "taking a worker id");
    ranges_free(t.r, 4);
    return rc;
out:
    ranges_free(t.r, 4);
    if (rc == 0)
        *lease = res;
    return rc;
}

/* Read @p n keys and the history key at one revision: r[i] gets keys[i], r[n] the history key. */
static int read_keys(struct etcd_store *s, const char *const *keys, size_t n, struct etcd_range *r)
{
    json_t *ops = json_array();
    size_t i;

    for (i = 0; i < n; i++)
        add(s, ops, op_range(keys[i], NULL));
    add(s, ops, op_range(s->hkey, NULL));
    return etcd_read(s, ops, r, n + 1);
}

/* Read two keys and the history key at one revision: r[0] gets @p k0, r[1] @p k1, r[2] it. */
static int read_two(struct etcd_store *s, const char *k0, const char *k1, struct etcd_range *r)
{
    const char *keys[2] = {k0, k1};

    return read_keys(s, keys, 2, r);
}

/* 1 with *row when the row is @p lease's (holder and generation), 0 when not, else an error. */
static int lease_is_held(struct etcd_store *s, const struct etcd_range *r,
                         const struct idmint__lease *lease, struct etcd_row *row)
{
    const struct etcd_kv *kv = range_one(r);
    int rc;

    if (kv == NULL)
        return 0;
    if ((rc = row_from_kv(s, kv, row)) != 0)
        return rc;
    return strcmp(row->holder, lease->holder) == 0 && row->generation == lease->generation;
}

static int etcd_lease_renew(struct store *st, const char *ns, struct idmint__lease *lease,
                            uint64_t until_unit, int64_t now_ms)
{
    struct etcd_store *s = (struct etcd_store *)st;
    char nkey[ETCD_KEY_MAX], wkey[ETCD_KEY_MAX], gkey[ETCD_KEY_MAX];
    const char *keys[3] = {wkey, nkey, gkey};
    struct etcd_range r[4]; /* row, ns key, grant, history key */
    struct idmint__history history = {"", 0, 0};
    uint64_t stored = 0;
    int rc, lost, have = 0;

    call_begin(s);
    if ((rc = key_ns(s, ns, nkey)) != 0 ||
        (rc = key_lease(s, ns, lease->region, lease->worker_id, wkey)) != 0 ||
        (rc = key_wgrant(s, ns, lease->region, lease->worker_id, lease->generation, gkey)) != 0)
        return rc;
    memset(r, 0, sizeof(r));
    for (lost = 0; lost < ETCD_MAX_LOST; lost++) {
        const struct etcd_kv *nkv;
        struct etcd_row row;
        idmint_ns_info info;
        json_t *cmp, *ok, *fail;

        if (!have && (rc = read_keys(s, keys, 3, r)) != 0)
            goto out;
        /* A lost lease outranks a disabled namespace: it stops minting at
         * once, a disabled namespace only at the lease's end. */
        if ((rc = lease_is_held(s, &r[0], lease, &row)) <= 0) {
            if (rc == 0)
                rc = idmint__store_lease_lost(ns, lease);
            goto out;
        }
        nkv = range_one(&r[1]);
        if (nkv != NULL && (rc = ns_from_kv(s, nkv, &info)) != 0)
            goto out;
        if (nkv != NULL && info.is_disabled) {
            rc = idmint__fail(IDMINT_EDISABLED,
                              "namespace '%s' is disabled: the lease is not renewed; minting "
                              "stops at its end",
                              ns);
            goto out;
        }
        stored = row.until > until_unit ? row.until : until_unit;
        if (stored == row.until) {
            /* E never moves back: nothing to write, and no news (the grant's
             * last is this E already; its updated_ms stays that of the write
             * that set it, which a held lease renews long before a prune). */
            rc = 0;
            goto out;
        }
        cmp = json_array();
        ok = json_array();
        fail = json_array();
        add(s, cmp, cmp_mod(wkey, row.mod_rev));
        add(s, cmp, cmp_mod(nkey, nkv != NULL ? nkv->mod_rev : 0));
        add(s, ok, op_put(wkey, row_to_json(row.holder, row.generation, stored, row.fence)));
        if ((rc = wgrant_extend(s, &r[2], gkey, stored, now_ms, cmp, ok)) != 0) {
            json_decref(cmp);
            json_decref(ok);
            json_decref(fail);
            goto out;
        }
        add(s, ok, op_lease_max(s, ns, lease->granted_units));
        add(s, fail, op_range(wkey, NULL));
        add(s, fail, op_range(nkey, NULL));
        add(s, fail, op_range(gkey, NULL));
        add(s, fail, op_range(s->hkey, NULL));
        ranges_free(r, 4);
        rc = grant_write(s, cmp, ok, fail, r, 4, &history);
        if (rc == ETCD_APPLIED) {
            rc = 0;
            goto out;
        }
        if (rc < 0)
            goto out;
        /* Renewal is idempotent (E = max): after an unknown outcome, read and redo. */
        have = rc == 0;
        if (have)
            lost_backoff(s, lost);
        if (!have)
            ranges_free(r, 4);
    }
    rc = lost_too_often(s, "renewing a worker lease");
out:
    ranges_free(r, 4);
    if (rc == 0) {
        lease->lease_until = stored;
        lease->history = history;
    }
    return rc;
}

/* Our release or force applied in an earlier attempt: its stored E from the audit record. */
static int until_from_audit(struct etcd_store *s, const struct etcd_kv *kv, uint64_t *until)
{
    json_t *r = audit_result(s, kv);
    int rc = 0;

    if (r == NULL)
        return IDMINT_ESTORE;
    if (get_u64(r, "until", until) != 0)
        rc = etcd_bad_value(s, kv->key, "the result of a release");
    json_decref(r);
    return rc;
}

static int etcd_lease_release(struct store *st, const char *ns, struct idmint__lease *lease,
                              uint64_t final_unit, const char *actor, int64_t now_ms)
{
    struct etcd_store *s = (struct etcd_store *)st;
    char wkey[ETCD_KEY_MAX], akey[ETCD_KEY_MAX], gkey[ETCD_KEY_MAX], opid[ETCD_OPID_LEN + 1];
    char detail[256];
    const char *keys[3] = {wkey, akey, gkey};
    struct etcd_range r[4]; /* row, audit key, grant, history key */
    struct idmint__history history = {"", 0, 0};
    uint64_t stored = 0;
    int rc, lost, have = 0;

    call_begin(s);
    memset(r, 0, sizeof(r));
    if ((rc = opid_new(opid)) != 0 || (rc = key_audit(s, opid, akey)) != 0 ||
        (rc = key_lease(s, ns, lease->region, lease->worker_id, wkey)) != 0 ||
        (rc = key_wgrant(s, ns, lease->region, lease->worker_id, lease->generation, gkey)) != 0)
        return rc;
    for (lost = 0; lost < ETCD_MAX_LOST; lost++) {
        struct etcd_row row;
        json_t *cmp, *ok, *fail;

        if (!have && (rc = read_keys(s, keys, 3, r)) != 0)
            goto out;
        if (range_one(&r[1]) != NULL) {
            if ((rc = until_from_audit(s, range_one(&r[1]), &stored)) == 0)
                rc = history_applied(s, range_one(&r[3]), range_one(&r[1]), s->call_tip, &history);
            goto out;
        }
        if ((rc = lease_is_held(s, &r[0], lease, &row)) <= 0) {
            if (rc == 0)
                rc = idmint__store_lease_lost(ns, lease);
            goto out;
        }
        /* Never below the fence (what the previous holder may have minted),
         * never above the holder's own E: the clamp is here, whatever the
         * caller sends. */
        stored = final_unit > row.fence ? final_unit : row.fence;
        if (stored > row.until)
            stored = row.until;
        idmint__store_lease_detail(lease, row.until, stored, detail, sizeof(detail));
        cmp = json_array();
        ok = json_array();
        fail = json_array();
        add(s, cmp, cmp_mod(wkey, row.mod_rev));
        add(s, cmp, cmp_absent(akey));
        add(s, ok, op_put(wkey, row_to_json("", row.generation, stored, row.fence)));
        add(s, ok,
            op_put(akey, audit_json(now_ms, actor, "worker.release", ns, detail,
                                    json_pack("{s:o}", "until", j_u64(stored)))));
        if ((rc = wgrant_extend(s, &r[2], gkey, stored, now_ms, cmp, ok)) != 0) {
            json_decref(cmp);
            json_decref(ok);
            json_decref(fail);
            goto out;
        }
        add(s, fail, op_range(wkey, NULL));
        add(s, fail, op_range(akey, NULL));
        add(s, fail, op_range(gkey, NULL));
        add(s, fail, op_range(s->hkey, NULL));
        ranges_free(r, 4);
        rc = grant_write(s, cmp, ok, fail, r, 4, &history);
        if (rc == ETCD_APPLIED) {
            rc = 0;
            goto out;
        }
        if (rc < 0)
            goto out;
        have = rc == 0;
        if (have)
            lost_backoff(s, lost);
        if (!have)
            ranges_free(r, 4);
    }
    rc = lost_too_often(s, "releasing a worker lease");
out:
    ranges_free(r, 4);
    if (rc == 0) {
        lease->lease_until = stored;
        lease->history = history;
    }
    return rc;
}

static int etcd_lease_list(struct store *st, const char *ns, idmint_worker_info **out, size_t *n)
{
    struct etcd_store *s = (struct etcd_store *)st;
    idmint_worker_info *list = NULL;
    struct etcd_range r[1];
    char sub[ETCD_KEY_MAX];
    size_t i;
    int rc;

    call_begin(s);
    snprintf(sub, sizeof(sub), "/lease/%s/", ns);
    if ((rc = etcd_read_prefix(s, sub, r)) == 0 && r[0].n > 0 &&
        (list = calloc(r[0].n, sizeof(*list))) == NULL)
        rc = etcd_oom(s, "listing worker ids");
    for (i = 0; rc == 0 && i < r[0].n; i++) {
        struct etcd_row row;

        if ((rc = row_from_kv(s, &r[0].kvs[i], &row)) != 0)
            break;
        list[i].region = row.region;
        list[i].worker_id = row.worker_id;
        snprintf(list[i].holder, sizeof(list[i].holder), "%s", row.holder);
        list[i].generation = row.generation;
        list[i].lease_until = row.until;
    }
    if (rc == 0) {
        *out = list;
        *n = r[0].n;
    } else {
        free(list);
    }
    ranges_free(r, 1);
    return rc;
}

static int etcd_lease_force_release(struct store *st, const char *ns, uint32_t region,
                                    uint32_t worker_id, uint64_t max_until_unit, const char *actor,
                                    int64_t now_ms)
{
    struct etcd_store *s = (struct etcd_store *)st;
    char wkey[ETCD_KEY_MAX], akey[ETCD_KEY_MAX], opid[ETCD_OPID_LEN + 1], detail[256];
    struct etcd_range r[3];         /* row, audit key, history key */
    struct idmint__history history; /* the counter grew; nobody to tell */
    int rc, lost, have = 0;

    call_begin(s);
    memset(r, 0, sizeof(r));
    if ((rc = opid_new(opid)) != 0 || (rc = key_audit(s, opid, akey)) != 0 ||
        (rc = key_lease(s, ns, region, worker_id, wkey)) != 0)
        return rc;
    for (lost = 0; lost < ETCD_MAX_LOST; lost++) {
        struct etcd_row row;
        uint64_t until;
        json_t *cmp, *ok, *fail;

        if (!have && (rc = read_two(s, wkey, akey, r)) != 0)
            goto out;
        if (range_one(&r[1]) != NULL) {
            rc = 0; /* an earlier attempt of this call applied */
            goto out;
        }
        if (range_one(&r[0]) == NULL) {
            rc = idmint__fail(IDMINT_ENOTFOUND, "namespace '%s' has no worker id %u in region %u",
                              ns, (unsigned)worker_id, (unsigned)region);
            goto out;
        }
        if ((rc = row_from_kv(s, range_one(&r[0]), &row)) != 0)
            goto out;
        /* The cap bounds a forged or runaway E; the new E is also the fence. */
        until = row.until < max_until_unit ? row.until : max_until_unit;
        idmint__store_force_detail(region, worker_id, row.holder, row.generation, row.until, until,
                                   detail, sizeof(detail));
        cmp = json_array();
        ok = json_array();
        fail = json_array();
        add(s, cmp, cmp_mod(wkey, row.mod_rev));
        add(s, cmp, cmp_absent(akey));
        add(s, ok, op_put(wkey, row_to_json("", row.generation + 1, until, until)));
        add(s, ok,
            op_put(akey, audit_json(now_ms, actor, "worker.force_release", ns, detail,
                                    json_pack("{s:o}", "until", j_u64(until)))));
        add(s, fail, op_range(wkey, NULL));
        add(s, fail, op_range(akey, NULL));
        add(s, fail, op_range(s->hkey, NULL));
        ranges_free(r, 3);
        rc = grant_write(s, cmp, ok, fail, r, 3, &history);
        if (rc == ETCD_APPLIED) {
            rc = 0;
            goto out;
        }
        if (rc < 0)
            goto out;
        have = rc == 0;
        if (have)
            lost_backoff(s, lost);
        if (!have)
            ranges_free(r, 3);
    }
    rc = lost_too_often(s, "forcing a worker lease free");
out:
    ranges_free(r, 3);
    return rc;
}

/* ==== ranges ==== */

/* P/FAMILY/NAME/INCARNATION/REQUEST (family "inc": a request record). */
static int key_request(const struct etcd_store *s, const char *family, const char *ns,
                       const char *incarnation, const char *request_id, char *out)
{
    char esc[3 * 128 + 8];

    key_escape(incarnation, esc, sizeof(esc));
    return key_fmt(s, out, "/%s/%s/%s/%s", family, ns, esc, request_id);
}

/* P/pend/NAME/MS/INCARNATION/REQUEST: a request left waiting at @p now_ms (20 digits), so
 * key order is the order they were left in. */
static int key_waiting(const struct etcd_store *s, const char *ns, int64_t now_ms,
                       const char *incarnation, const char *request_id, char *out)
{
    char esc[3 * 128 + 8];

    key_escape(incarnation, esc, sizeof(esc));
    return key_fmt(s, out, "/pend/%s/%020llu/%s/%s", ns,
                   (unsigned long long)(now_ms > 0 ? now_ms : 0), esc, request_id);
}

/* The record key of the waiting request @p pkey (P/pend/NS/MS/INC/REQ) into @p out; -1 if it is not
 * one. */
static int waiting_record_key(const struct etcd_store *s, const char *ns, const char *pkey,
                              char *out)
{
    char prefix[ETCD_KEY_MAX];
    const char *tail, *slash;
    size_t len;

    if (key_fmt(s, prefix, "/pend/%s/", ns) != 0)
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
    return key_fmt(s, out, "/inc/%s/%s", ns, tail) != 0 ? -1 : 0;
}

/* A waiting request's value: what its grant needs, as its caller would write it. */
static json_t *waiting_json(struct etcd_store *s, const char *fp,
                            const struct idmint__origin *origin, uint64_t count, int64_t now_ms)
{
    json_t *o = json_pack("{s:s,s:o,s:o}", "holder", fp, "count", j_u64(count), "created_ms",
                          j_i64(now_ms));

    origin_to_json(s, o, origin);
    return o;
}

struct etcd_waiting {
    uint64_t count;
    char fp[IDMINT_HOLDER_FP_LEN + 1];
    struct idmint__origin origin;
};

/* The waiting request in @p kv into @p w; -1 if it is not what waiting_json writes. */
static int waiting_from_kv(const struct etcd_store *s, const struct etcd_kv *kv,
                           struct etcd_waiting *w)
{
    json_t *o = kv_json(s, kv, "a waiting range request");
    uint64_t pid = 0;
    int rc = -1;

    memset(w, 0, sizeof(*w));
    if (o == NULL)
        return -1;
    if (get_u64(o, "count", &w->count) == 0 && w->count > 0 &&
        get_text(o, "holder", w->fp, sizeof(w->fp)) == 0 &&
        get_text(o, "host", w->origin.host, sizeof(w->origin.host)) == 0 &&
        get_text(o, "program", w->origin.program, sizeof(w->origin.program)) == 0 &&
        get_text(o, "token", w->origin.token, sizeof(w->origin.token)) == 0 &&
        get_small(o, "pid", UINT32_MAX, &pid) == 0) {
        w->origin.pid = (uint32_t)pid;
        rc = 0;
    }
    json_decref(o);
    return rc;
}

/*
 * {"request_range"} of the first @p limit keys in [@p key, @p end): the
 * oldest waiting requests, their keys starting with the time they were left.
 * No sort and no filter, so etcd reads only those (either makes it read
 * every key in the range).
 */
static json_t *op_range_first(const char *key, const char *end, unsigned limit)
{
    return json_pack("{s:{s:o,s:o,s:o}}", "request_range", "key", j_key(key), "range_end",
                     j_key(end), "limit", j_i64(limit));
}

/* {"request_range"} counting the keys in [@p key, @p end), from etcd's index alone. */
static json_t *op_count(const char *key, const char *end)
{
    return json_pack("{s:{s:o,s:o,s:b}}", "request_range", "key", j_key(key), "range_end",
                     j_key(end), "count_only", 1);
}

/* The request record in @p kv: its count and range. */
static int record_from_kv(const struct etcd_store *s, const struct etcd_kv *kv, uint64_t *count,
                          struct idmint__range *res)
{
    json_t *o = kv_json(s, kv, "a range request record");
    int rc = 0;

    if (o == NULL)
        return IDMINT_ESTORE;
    /* htip: the tip of the txn that wrote it (schema 5; absent before: 0). */
    if (get_u64(o, "count", count) != 0 || get_u64(o, "start", &res->start) != 0 ||
        get_u64(o, "end", &res->end) != 0 || get_u64(o, "htip", &res->history.tip) != 0)
        rc = etcd_bad_value(s, kv->key, "a range request record");
    json_decref(o);
    return rc;
}

/* Into @p ok: the request record @p ikey of @p res granted for @p count, its grant and age key. */
static int range_grant_ops(struct etcd_store *s, const char *ns, const char *ikey, const char *fp,
                           uint64_t count, const struct idmint__range *res, int64_t now_ms,
                           json_t *ok)
{
    char gkey[ETCD_KEY_MAX], agekey[ETCD_KEY_MAX];
    uint64_t tip = 0;
    int rc;

    if ((rc = key_rgrant(s, ns, res->start, gkey)) != 0 ||
        (rc = key_age(s, IDMINT__KEEP_RANGE_GRANTS, now_ms, gkey, agekey)) != 0 ||
        (rc = call_tip(s, &tip)) != 0)
        return rc;
    /* With the tip of the txn that writes it: a replay carries the pair of
     * its grant (seq: the record's create_revision). */
    add(s, ok,
        op_put(ikey,
               json_pack("{s:o,s:o,s:o,s:o,s:o}", "count", j_u64(count), "start", j_u64(res->start),
                         "end", j_u64(res->end), "created_ms", j_i64(now_ms), "htip", j_u64(tip))));
    /* The grant, with the record that makes a replay find it: a replay adds none. */
    add(s, ok, op_put(gkey, rgrant_json(s, fp, &res->origin, res->end, now_ms)));
    add(s, ok, op_put_text(agekey, ""));
    return 0;
}

/* Whether the ranges @p known (@p n of them) hold the key @p key. */
static int ranges_hold(const struct etcd_range *known, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < known[i].n; k++)
            if (strcmp(known[i].kvs[k].key, key) == 0)
                return 1;
    return 0;
}

/* Whether @p key is one of the @p n keys of @p keys. */
static int keys_hold(char (*keys)[ETCD_KEY_MAX], size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(keys[i], key) == 0)
            return 1;
    return 0;
}

/*
 * Into the txn being built: grant the requests others left waiting
 * (@p waiting, oldest first; @p own_pkey, the caller's, is passed over) from
 * @p info on, advancing its next_value. Each is compared unchanged and its
 * record absent, answered with a record and a grant as its caller would
 * have written them, and deleted; its record is read in @p fail (*n_fail
 * counts them), so that if one is there after all (a waiting key no caller
 * of ours wrote) the next attempt finds it in @p known and does not
 * compare on it again. One that cannot be read, that has a record, or that
 * the namespace refuses is deleted unanswered: its caller reads again,
 * finds no record and no longer waiting, and decides for itself.
 */
static int grant_waiting(struct etcd_store *s, const char *ns, const char *own_pkey,
                         const char *own_ikey, const struct etcd_range *waiting,
                         const struct etcd_range *known, size_t n_known, idmint_ns_info *info,
                         int64_t now_ms, json_t *cmp, json_t *ok, json_t *fail, size_t *n_fail)
{
    char answered[ETCD_COMBINE_MAX][ETCD_KEY_MAX]; /* record keys this txn writes */
    size_t i, granted = 0, n_answered = 0;

    *n_fail = 0;
    for (i = 0; i < waiting->n && granted < ETCD_COMBINE_MAX; i++) {
        const struct etcd_kv *kv = &waiting->kvs[i];
        char ikey[ETCD_KEY_MAX];
        struct etcd_waiting w;
        struct idmint__range res;
        int rc;

        if (strcmp(kv->key, own_pkey) == 0)
            continue;
        add(s, cmp, cmp_mod(kv->key, kv->mod_rev));
        add(s, ok, op_delete(kv->key, NULL));
        granted++;
        memset(&res, 0, sizeof(res));
        if (waiting_record_key(s, ns, kv->key, ikey) != 0 || strcmp(ikey, own_ikey) == 0 ||
            ranges_hold(known, n_known, ikey) || keys_hold(answered, n_answered, ikey) ||
            waiting_from_kv(s, kv, &w) != 0 || idmint__store_range_grant(info, w.count, &res) != 0)
            continue;
        res.origin = w.origin;
        memcpy(answered[n_answered++], ikey, strlen(ikey) + 1);
        add(s, cmp, cmp_absent(ikey));
        add(s, fail, op_range(ikey, NULL));
        (*n_fail)++;
        if ((rc = range_grant_ops(s, ns, ikey, w.fp, w.count, &res, now_ms, ok)) != 0)
            return rc;
        info->next_value = res.end;
    }
    idmint__errmsg_clear();
    return 0;
}

/*
 * Leave a request waiting at @p pkey for whichever reservation commits next,
 * unless its record @p ikey is there already. 0 either way (and when the
 * outcome is unknown: the next read decides), or a negative code.
 */
static int post_waiting(struct etcd_store *s, const char *ikey, const char *pkey, json_t *value)
{
    struct etcd_range r[1];
    json_t *cmp = json_array(), *ok = json_array(), *fail = json_array();
    int rc;

    add(s, cmp, cmp_absent(ikey));
    add(s, ok, op_put(pkey, value));
    add(s, fail, op_range(ikey, NULL));
    rc = etcd_write(s, cmp, ok, fail, r, 1, NULL);
    ranges_free(r, 1);
    return rc < 0 ? rc : 0;
}

/* The reads of a reservation, before the records a failed txn read and the history key. */
#define ETCD_RESERVE_READS 5

/* Of a request waiting in the namespace: the namespace's revision when last seen to move. */
struct etcd_turn {
    int64_t ns_rev;
    uint64_t since_ms;
    int64_t first_version; /* the namespace key's version when first read */
    uint64_t first_us;
};

static uint64_t mono_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* How many requests other than @p pkey wait in @p waiting; its place among them into *pos. */
static size_t waiting_others(const struct etcd_range *waiting, const char *pkey, size_t *pos)
{
    size_t i, others = 0;

    *pos = ETCD_COMBINE_MAX + 1; /* not among the oldest: further back */
    for (i = 0; i < waiting->n; i++) {
        if (strcmp(waiting->kvs[i].key, pkey) == 0)
            *pos = i;
        else
            others++;
    }
    return others;
}

/*
 * Whether a caller whose request waits @p pos places back (0: the oldest)
 * behind @p others sends its txn now: when it is the oldest (that txn grants
 * the next ETCD_COMBINE_MAX too), when none other waits, or when the
 * namespace has not moved for ETCD_WAIT_STALL_MS, once more for every
 * ETCD_COMBINE_MAX + 1 ahead of it (the oldest may be callers killed while
 * they waited; their requests are granted with the others, ranges no one
 * uses). Else *wait_us
 * is how long to wait before reading again: a round for every
 * ETCD_COMBINE_MAX + 1 ahead of it, at least one, so that hundreds waiting
 * do not read etcd hot. A round is the time the namespace key (@p nkv) took
 * per write since this caller first read it.
 */
static int waiting_turn(struct etcd_store *s, size_t pos, size_t others, const struct etcd_kv *nkv,
                        struct etcd_turn *turn, uint64_t *wait_us)
{
    uint64_t now_ms = idmint__deadline_now_ms(), now_us = mono_us(), rounds,
             round_us = ETCD_WAIT_ROUND_US;
    int64_t ns_rev = nkv->mod_rev;

    if (others == 0 || pos == 0)
        return 1;
    if (turn->first_us == 0) {
        turn->first_version = nkv->version;
        turn->first_us = now_us;
    } else if (nkv->version > turn->first_version) {
        round_us = (now_us - turn->first_us) / (uint64_t)(nkv->version - turn->first_version);
        if (round_us < ETCD_WAIT_ROUND_MIN_US)
            round_us = ETCD_WAIT_ROUND_MIN_US;
        if (round_us > ETCD_WAIT_ROUND_MAX_US)
            round_us = ETCD_WAIT_ROUND_MAX_US;
    }
    if (ns_rev != turn->ns_rev) {
        turn->ns_rev = ns_rev;
        turn->since_ms = now_ms;
    } else if (now_ms - turn->since_ms >=
               (uint64_t)ETCD_WAIT_STALL_MS * (1 + pos / (ETCD_COMBINE_MAX + 1))) {
        turn->since_ms = now_ms;
        return 1;
    }
    rounds = pos / (ETCD_COMBINE_MAX + 1) > 1 ? pos / (ETCD_COMBINE_MAX + 1) : 1;
    *wait_us = rounds * round_us;
    *wait_us += jitter_next(s) % (*wait_us / 2 + 1);
    return 0;
}

/*
 * After a reservation that met others waiting committed: go on granting
 * what waits, ETCD_COMBINE_MAX a txn, for up to ETCD_SERVE_ROUNDS txns or
 * ETCD_SERVE_MS, while each commits and some wait. The next oldest would do
 * it in its turn, but only once it has read that its turn came; the caller
 * that just committed knows now. Its own answer is made: what goes wrong
 * here only ends the serving (and the message is cleared).
 */
static void serve_waiting(struct etcd_store *s, const char *ns, const char *nkey,
                          const char *wait_key, const char *wait_end, int64_t now_ms)
{
    struct etcd_range r[3]; /* ns key, the oldest waiting, history key */
    uint64_t until_ms = idmint__deadline_now_ms() + ETCD_SERVE_MS;

    for (int round = 0; round < ETCD_SERVE_ROUNDS && idmint__deadline_now_ms() < until_ms;
         round++) {
        struct etcd_range fail[1];
        struct idmint__history history;
        const struct etcd_kv *nkv;
        idmint_ns_info info;
        json_t *ops = json_array(), *cmp, *ok, *fl;
        size_t n_records = 0;
        int rc;

        s->call_tip = 0; /* each round is a grant of its own */
        add(s, ops, op_range(nkey, NULL));
        add(s, ops, op_range_first(wait_key, wait_end, ETCD_COMBINE_MAX));
        add(s, ops, op_range(s->hkey, NULL));
        if (etcd_read(s, ops, r, 3) != 0) {
            ranges_free(r, 3);
            break;
        }
        if ((nkv = range_one(&r[0])) == NULL || r[1].n == 0 || ns_from_kv(s, nkv, &info) != 0) {
            ranges_free(r, 3);
            break;
        }
        cmp = json_array();
        ok = json_array();
        fl = json_array();
        add(s, cmp, cmp_mod(nkey, nkv->mod_rev));
        rc = grant_waiting(s, ns, "", "", &r[1], NULL, 0, &info, now_ms, cmp, ok, fl, &n_records);
        json_decref(fl);
        fl = json_array();
        add(s, fl, op_range(s->hkey, NULL));
        if (rc == 0)
            add(s, ok, op_put(nkey, ns_to_json(&info, info.created_ms)));
        ranges_free(r, 3);
        if (rc != 0) {
            json_decref(cmp);
            json_decref(ok);
            json_decref(fl);
            break;
        }
        rc = grant_write(s, cmp, ok, fl, fail, 1, &history);
        ranges_free(fail, 1);
        if (rc != ETCD_APPLIED)
            break;
        if (s->applied_rev > 0 && strcmp(s->seen_key, nkey) == 0) {
            s->seen_ns = info;
            s->seen_rev = s->applied_rev;
        }
    }
    idmint__errmsg_clear();
}

/*
 * One transaction per reservation: compare the namespace key (bounds, flag
 * and next_value are all in it) and the absence of the request record; put
 * both. The failure branch returns both, so a lost race needs no extra
 * read, and a replay (or a repeat racing its original) finds the record.
 * Every attempt carries the record's absence as a compare, so of an
 * original and its retries at most one ever reserves: an unknown outcome is
 * resolved by reading the record again.
 *
 * The first attempt needs no read when this store's last reservation was on
 * the same namespace: it sends the namespace as that txn wrote it and
 * compares the revision it was written at. Changed since (another writer,
 * an admin), the compare fails and the failure branch is the read; a record
 * already there fails it too and is answered from. The read before the txn
 * was over a third of one caller's time (a linearizable read waits for the
 * leader to confirm its term with a quorum): docs/benchmarks-store.md.
 *
 * Only one compare on the namespace key wins per Raft round, so in a start
 * burst of hundreds most used to lose, again and again, each loss a Raft
 * proposal of its own. Now a caller that lost, or that finds others
 * waiting, leaves its request waiting under P/pend/NAME/ (keys in the order
 * they were left) and sends a txn only in its turn (waiting_turn): when its
 * request is the oldest, or the namespace stopped moving. Every txn that
 * commits grants, with its own, up to ETCD_COMBINE_MAX of the oldest
 * waiting (grant_waiting), and one that met others waiting goes on granting
 * for a few more txns (serve_waiting): a round answers many, oldest first.
 * A waiting caller reads its record as a retry after a lost reply would,
 * and its history is that of the txn that granted it. A waiting request
 * and its record never both exist through our writes: posting compares the
 * record absent, and every txn that writes a record deletes the request in
 * it. A waiting key that does have a record (not ours) or cannot be read is
 * deleted, granting nothing.
 */
static int etcd_range_reserve(struct store *st, const char *ns, const char *incarnation,
                              const char *request_id, uint64_t count, int64_t now_ms,
                              struct idmint__range *out)
{
    struct etcd_store *s = (struct etcd_store *)st;
    char nkey[ETCD_KEY_MAX], ikey[ETCD_KEY_MAX], pkey[ETCD_KEY_MAX];
    char wait_key[ETCD_KEY_MAX], wait_end[ETCD_KEY_MAX], fp[IDMINT_HOLDER_FP_LEN + 1];
    /* ns key, request record, the oldest waiting requests, how many wait
     * ahead of this caller's, the records of those a failed txn would have
     * granted, history key (always the last) */
    struct etcd_range r[ETCD_RESERVE_READS + ETCD_COMBINE_MAX];
    struct idmint__range res = {.start = 0, .origin = out->origin}; /* who asks: an input */
    struct etcd_turn turn = {0, 0, 0, 0};
    size_t n_r = ETCD_RESERVE_READS, place = 0, others;
    int rc, lost = 0, have = 0, is_seen, is_waiting = 0, is_retry = 0;

    call_begin(s);
    memset(r, 0, sizeof(r));
    if ((rc = key_ns(s, ns, nkey)) != 0 ||
        (rc = key_request(s, "inc", ns, incarnation, request_id, ikey)) != 0 ||
        (rc = key_waiting(s, ns, now_ms, incarnation, request_id, pkey)) != 0 ||
        (rc = key_fmt(s, wait_key, "/pend/%s/", ns)) != 0)
        return rc;
    key_prefix_end(wait_key, wait_end);
    idmint__holder_fingerprint(incarnation, fp);
    /* Used once: only a write this call applies sets it again. */
    is_seen = strcmp(s->seen_key, nkey) == 0;
    s->seen_key[0] = '\0';
    while (lost < ETCD_MAX_LOST) {
        const struct etcd_kv *nkv, *ikv;
        idmint_ns_info info, after;
        int64_t ns_rev;
        uint64_t saved_count = 0, wait_us = 0;
        size_t n_records = 0;
        json_t *cmp, *ok, *fail;

        if (is_seen) {
            info = s->seen_ns;
            ns_rev = s->seen_rev;
        } else {
            if (!have) {
                json_t *ops = json_array();

                add(s, ops, op_range(nkey, NULL));
                add(s, ops, op_range(ikey, NULL));
                add(s, ops, op_range_first(wait_key, wait_end, ETCD_COMBINE_MAX + 1));
                add(s, ops, op_count(wait_key, pkey));
                add(s, ops, op_range(s->hkey, NULL));
                ranges_free(r, n_r);
                n_r = ETCD_RESERVE_READS;
                if ((rc = etcd_read(s, ops, r, n_r)) != 0)
                    goto out;
            }
            have = 0;
            if ((ikv = range_one(&r[1])) != NULL) {
                /* A retry after a lost reply: answer from the record, never
                 * reserve twice; a replay is no news, the grant was counted
                 * when it was made. A request that waited was granted by
                 * another caller's txn: that txn's history is its news. */
                memset(&res.history, 0, sizeof(res.history));
                if ((rc = record_from_kv(s, ikv, &saved_count, &res)) == 0 && saved_count != count)
                    rc = idmint__store_range_replay_conflict(ns, incarnation, request_id,
                                                             saved_count, count);
                /* Schema 5: the pair of the grant that made the record, under
                 * today's id; the holder proves it before it uses the range,
                 * as the record may be a restored cluster's (src/history.c). */
                if (rc == 0 && res.history.tip != 0)
                    rc = range_one(&r[n_r - 1]) == NULL
                             ? history_missing(s)
                             : history_at(s, range_one(&r[n_r - 1]), ikv->create_rev,
                                          res.history.tip, &res.history);
                else if (rc == 0 && is_waiting)
                    rc = history_applied(s, range_one(&r[n_r - 1]), ikv, 0, &res.history);
                goto out;
            }
            if ((nkv = range_one(&r[0])) == NULL) {
                rc = idmint__store_ns_missing(ns);
                goto out;
            }
            if ((rc = ns_from_kv(s, nkv, &info)) != 0)
                goto out;
            ns_rev = nkv->mod_rev;
        }
        if ((rc = idmint__store_range_grant(&info, count, &res)) != 0) {
            if (!is_seen)
                goto out;
            /* Refused on what this store wrote: decide on what etcd holds now. */
            is_seen = 0;
            continue;
        }
        /* Others wait: join them, and send a txn only in turn. A txn that
         * lost on a waiting request alone (the namespace as it read it) goes
         * again at once: its failure branch read that request's record. */
        others = is_seen ? 0 : waiting_others(&r[2], pkey, &place);
        if (!is_seen && !is_retry && (is_waiting || others > 0)) {
            if (!is_waiting) {
                if ((rc = post_waiting(s, ikey, pkey,
                                       waiting_json(s, fp, &res.origin, count, now_ms))) != 0)
                    goto out;
                is_waiting = 1;
                continue; /* the read shows its place */
            }
            if (place > ETCD_COMBINE_MAX)
                place = (size_t)r[3].count;
            if (!waiting_turn(s, place, others, range_one(&r[0]), &turn, &wait_us)) {
                if (idmint__deadline_now_ms() + wait_us / 1000 >=
                    s->call_start_ms + ETCD_CONTENDED_BUDGET_MS) {
                    rc = idmint__fail(IDMINT_EUNAVAILABLE,
                                      "%s: reserving a range on '%s' waited %u ms behind other "
                                      "requests, and its turn did not come",
                                      s->name, ns, (unsigned)ETCD_CONTENDED_BUDGET_MS);
                    goto out;
                }
                idmint__sleep_us(wait_us);
                contended_extend(s);
                continue;
            }
        }
        cmp = json_array();
        ok = json_array();
        fail = json_array();
        add(s, cmp, cmp_mod(nkey, ns_rev));
        add(s, cmp, cmp_absent(ikey));
        add(s, fail, op_range(nkey, NULL));
        add(s, fail, op_range(ikey, NULL));
        add(s, fail, op_range_first(wait_key, wait_end, ETCD_COMBINE_MAX + 1));
        add(s, fail, op_count(wait_key, pkey));
        after = info;
        after.next_value = res.end;
        if ((rc = range_grant_ops(s, ns, ikey, fp, count, &res, now_ms, ok)) != 0 ||
            (!is_seen &&
             (rc = grant_waiting(s, ns, pkey, ikey, &r[2], &r[4], n_r - ETCD_RESERVE_READS, &after,
                                 now_ms, cmp, ok, fail, &n_records)) != 0)) {
            json_decref(cmp);
            json_decref(ok);
            json_decref(fail);
            goto out;
        }
        if (is_waiting)
            add(s, ok, op_delete(pkey, NULL));
        add(s, ok, op_put(nkey, ns_to_json(&after, after.created_ms)));
        add(s, fail, op_range(s->hkey, NULL));
        ranges_free(r, n_r);
        n_r = ETCD_RESERVE_READS + n_records;
        rc = grant_write(s, cmp, ok, fail, r, n_r, &res.history);
        if (rc == ETCD_APPLIED) {
            if (s->applied_rev > 0) {
                memcpy(s->seen_key, nkey, strlen(nkey) + 1);
                s->seen_ns = after;
                s->seen_rev = s->applied_rev;
            }
            if (n_records > 0 || is_waiting)
                serve_waiting(s, ns, nkey, wait_key, wait_end, now_ms);
            rc = 0;
            goto out;
        }
        if (rc < 0)
            goto out;
        /* Lost (or unknown: read again). The failure branch is the read for
         * the next attempt: fresh, as the compare saw it. A caller that lost
         * on a fresh view leaves its request waiting and from then on waits
         * its turn (waiting_turn), where it used to back off and race again:
         * with hundreds racing on one key, one compare won per Raft round
         * and every loser's txn was a proposal of its own. */
        have = rc == 0;
        is_retry = have && !is_seen && n_records > 0 && (nkv = range_one(&r[0])) != NULL &&
                   nkv->mod_rev == ns_rev;
        if (rc == 0 && !is_seen)
            lost++;
        if (rc == 0 && !is_seen && !is_waiting) {
            if ((rc = post_waiting(s, ikey, pkey,
                                   waiting_json(s, fp, &res.origin, count, now_ms))) != 0)
                goto out;
            is_waiting = 1;
            have = 0; /* read again: its place */
        }
        if (!have) {
            ranges_free(r, n_r);
            n_r = ETCD_RESERVE_READS;
        } else {
            contended_extend(s);
        }
        is_seen = 0;
    }
    rc = lost_too_often(s, "reserving a range");
out:
    ranges_free(r, n_r);
    if (rc == 0)
        *out = res;
    return rc;
}

static int etcd_range_forget(struct store *st, const char *ns, const char *incarnation,
                             const char *before_request_id, uint64_t *forgotten)
{
    struct etcd_store *s = (struct etcd_store *)st;
    char start[ETCD_KEY_MAX], end[ETCD_KEY_MAX];
    json_t *req, *reply = NULL;
    uint64_t deleted = 0;
    size_t len;
    int rc;

    call_begin(s);
    if ((rc = key_inc_prefix(s, ns, incarnation, start)) != 0)
        return rc;
    len = strlen(start);
    if (len + strlen(before_request_id) >= ETCD_KEY_MAX)
        return idmint__fail(IDMINT_EINVAL, "%s: a key would be longer than %d bytes", s->name,
                            ETCD_KEY_MAX);
    memcpy(end, start, len);
    memcpy(end + len, before_request_id, strlen(before_request_id) + 1);
    /* [P/inc/NS/INC/, P/inc/NS/INC/BEFORE): the records whose id sorts before
     * BEFORE in byte order. Idempotent, so it is retried like a read; after a
     * lost reply the count is the retry's. */
    req = json_pack("{s:o,s:o}", "key", j_key(start), "range_end", j_key(end));
    if ((rc = etcd_post(s, "/v3/kv/deleterange", req, 0, &reply)) != 0)
        return rc;
    if (get_u64(reply, "deleted", &deleted) != 0)
        rc = idmint__fail(IDMINT_ESTORE, "%s: a deleterange answer without a count", s->name);
    json_decref(reply);
    if (rc == 0 && forgotten != NULL)
        *forgotten = deleted;
    return rc;
}

/* ==== fence ==== */

/*
 * The history key a fence writes: id @p history_id, the store id of @p hkv
 * (the one a store of an older schema lacked: a new one), and the lineage
 * with the id @p hkv held first, IDMINT__LINEAGE_MAX ids at most.
 */
static json_t *history_fenced(struct etcd_store *s, const struct etcd_kv *hkv,
                              const char *history_id, int64_t now_ms)
{
    char lineage[IDMINT__LINEAGE_MAX * 33], store_id[ETCD_OPID_LEN + 1] = "";
    json_t *o = hkv != NULL ? kv_json(s, hkv, "a history id") : NULL;
    const char *old = json_string_value(json_object_get(o, "id"));
    const char *sid = json_string_value(json_object_get(o, "store_id"));
    const char *lin = json_string_value(json_object_get(o, "lineage"));
    size_t len;

    if (sid != NULL && strlen(sid) == ETCD_OPID_LEN)
        memcpy(store_id, sid, sizeof(store_id));
    else if (opid_new(store_id) != 0)
        s->is_oom = 1; /* no entropy: the txn is not sent */
    snprintf(lineage, sizeof(lineage), "%s%s%s", old != NULL ? old : "",
             old != NULL && lin != NULL && lin[0] != '\0' ? " " : "", lin != NULL ? lin : "");
    len = strlen(lineage);
    if (len > IDMINT__LINEAGE_MAX * 33 - 1)
        len = IDMINT__LINEAGE_MAX * 33 - 1;
    while (len > 0 && lineage[len - 1] == ' ')
        len--;
    lineage[len] = '\0';
    json_decref(o);
    return json_pack("{s:s,s:o,s:s,s:s}", "id", history_id, "fenced_ms", j_i64(now_ms), "store_id",
                     store_id, "lineage", lineage);
}

/* The longest lease granted in @p ns, from @p maxl (every P/maxlease/ key). */
static uint64_t fence_longest(const struct etcd_store *s, const char *ns,
                              const struct etcd_range *maxl)
{
    char prefix[ETCD_KEY_MAX];
    uint64_t longest = 0, units;
    size_t i, len;

    if (key_fmt(s, prefix, "/maxlease/%s/", ns) != 0)
        return 0;
    len = strlen(prefix);
    for (i = 0; i < maxl->n; i++)
        if (strncmp(maxl->kvs[i].key, prefix, len) == 0 &&
            idmint__parse_u64(maxl->kvs[i].key + len, &units) == 0 && units > longest)
            longest = units;
    return longest;
}

/*
 * Judge and move the namespace of @p step, read in @p all (every namespace
 * key, in key order): its compare into @p cmp, its new value into @p ok,
 * its audit step into @p steps. A snowflake step shorter than the longest
 * lease in @p maxl is refused unless allowed (store.h, version 6).
 */
static int fence_step(struct etcd_store *s, const struct idmint__fence_step *step,
                      const struct etcd_range *all, const struct etcd_range *maxl, json_t *cmp,
                      json_t *ok, json_t *steps)
{
    char key[ETCD_KEY_MAX], detail[384];
    const struct etcd_kv *kv = NULL;
    idmint_ns_info info;
    uint64_t old_floor, longest = 0;
    size_t i, len;
    int rc = key_ns(s, step->ns, key);

    for (i = 0; rc == 0 && kv == NULL && i < all->n; i++)
        if (strcmp(all->kvs[i].key, key) == 0)
            kv = &all->kvs[i];
    if (rc != 0)
        return rc;
    if (kv == NULL)
        return idmint__store_ns_missing(step->ns);
    if ((rc = ns_from_kv(s, kv, &info)) != 0)
        return rc;
    if (step->kind == IDMINT_KIND_RANGE && step->next_value < info.next_value)
        return idmint__store_fence_backwards(step, info.next_value);
    if (step->kind == IDMINT_KIND_SNOWFLAKE)
        longest = fence_longest(s, step->ns, maxl);
    if (step->lease_units < longest && !step->allow_short)
        return idmint__store_fence_short(step, longest);
    idmint__store_fence_detail(step, info.floor, info.next_value, detail, sizeof(detail));
    len = strlen(detail);
    if (step->lease_units < longest && len < sizeof(detail))
        snprintf(detail + len, sizeof(detail) - len,
                 " short_lease=forced quarantine_units=%llu longest_lease_units=%llu",
                 (unsigned long long)step->lease_units, (unsigned long long)longest);
    old_floor = info.floor;
    info.floor = step->floor > old_floor ? step->floor : old_floor;
    if (step->kind == IDMINT_KIND_RANGE)
        info.next_value = step->next_value;
    add(s, cmp, cmp_mod(key, kv->mod_rev));
    add(s, ok, op_put(key, ns_to_json(&info, info.created_ms)));
    add(s, steps, json_pack("{s:s,s:s}", "ns", step->ns, "detail", detail));
    return 0;
}

/*
 * One txn: every namespace of @p steps as it was read (its mod_revision
 * compared), the history key and one audit key, put together. The audit
 * key holds the steps' records and the summary: records in one key share
 * its revision, so keeping them in one key keeps them together in every
 * page of audit_list. A lost race reads everything again.
 */
static int etcd_fence(struct store *st, const struct idmint__fence_step *steps, size_t n,
                      const char *history_id, const char *actor, int64_t now_ms)
{
    struct etcd_store *s = (struct etcd_store *)st;
    char akey[ETCD_KEY_MAX], nkey[ETCD_KEY_MAX], nend[ETCD_KEY_MAX], opid[ETCD_OPID_LEN + 1];
    char mkey[ETCD_KEY_MAX], mend[ETCD_KEY_MAX], detail[128], tip_text[24];
    /* every namespace key, history key, audit key, every longest-lease key */
    struct etcd_range r[4];
    uint64_t tip = 0;
    size_t i, j;
    int rc, lost;

    /* One txn puts a key once. */
    for (i = 0; i < n; i++)
        for (j = 0; j < i; j++)
            if (strcmp(steps[i].ns, steps[j].ns) == 0)
                return idmint__fail(IDMINT_EINVAL, "fence: namespace '%s' is named twice",
                                    steps[i].ns);
    call_begin(s);
    memset(r, 0, sizeof(r));
    if ((rc = opid_new(opid)) != 0 || (rc = key_audit(s, opid, akey)) != 0 ||
        (rc = key_fmt(s, nkey, "/ns/")) != 0 || (rc = key_fmt(s, mkey, "/maxlease/")) != 0 ||
        (rc = idmint__store_history_tip(&tip)) != 0)
        return rc;
    key_prefix_end(nkey, nend);
    key_prefix_end(mkey, mend);
    snprintf(tip_text, sizeof(tip_text), "%llu", (unsigned long long)tip);
    snprintf(detail, sizeof(detail), "history=%.8s namespaces=%zu", history_id, n);
    for (lost = 0; lost < ETCD_MAX_LOST; lost++) {
        json_t *ops = json_array(), *cmp, *ok, *list, *audit;
        const struct etcd_kv *hkv;

        add(s, ops, op_range(nkey, nend));
        add(s, ops, op_range(s->hkey, NULL));
        add(s, ops, op_range(akey, NULL));
        add(s, ops, op_range(mkey, mend));
        if ((rc = etcd_read(s, ops, r, 4)) != 0)
            break;
        if (range_one(&r[2]) != NULL)
            break; /* an earlier attempt of this call applied (its reply was lost) */
        cmp = json_array();
        ok = json_array();
        list = json_array();
        for (i = 0; i < n && rc == 0; i++)
            rc = fence_step(s, &steps[i], &r[0], &r[3], cmp, ok, list);
        if (rc != 0) {
            json_decref(cmp);
            json_decref(ok);
            json_decref(list);
            break;
        }
        hkv = range_one(&r[1]);
        add(s, cmp, cmp_mod(s->hkey, hkv != NULL ? hkv->mod_rev : 0));
        add(s, cmp, cmp_absent(akey));
        /* No backup mark to clear: etcd's snapshots are its own tools'. The
         * store id is kept, the id replaced goes first in the lineage, and
         * the fence logs a tip of its own. */
        add(s, ok, op_put(s->hkey, history_fenced(s, hkv, history_id, now_ms)));
        add(s, ok, op_put_text(s->tkey, tip_text));
        audit = audit_json(now_ms, actor, "authority.fence", "", detail, NULL);
        if (audit != NULL && json_object_set_new(audit, "steps", list) != 0) {
            json_decref(audit);
            audit = NULL;
        } else if (audit == NULL) {
            json_decref(list);
        }
        add(s, ok, op_put(akey, audit));
        ranges_free(r, 4);
        rc = etcd_write(s, cmp, ok, json_array(), r, 0, NULL);
        if (rc == ETCD_APPLIED) {
            rc = 0;
            break;
        }
        if (rc < 0 && strstr(idmint_errmsg(), "too many operations") != NULL) {
            char why[512];

            snprintf(why, sizeof(why), "%s", idmint_errmsg());
            rc = idmint__fail(rc,
                              "%s; a fence of %zu namespaces is one txn of %zu operations: raise "
                              "etcd's --max-txn-ops (default 128) to at least that",
                              why, n, n + 2);
        }
        if (rc < 0)
            break;
        if (rc == 0)
            lost_backoff(s, lost); /* a namespace moved since the read: read again */
        rc = ETCD_UNKNOWN;         /* to say "lost" below, whichever way the loop ends */
    }
    ranges_free(r, 4);
    return rc == ETCD_UNKNOWN ? lost_too_often(s, "fencing") : rc;
}

/* ==== history ==== */

/*
 * What history_check reads of the history key @p hkv: the id, the store id
 * and the lineage (a JSON string: ids newest first, a space between).
 */
static int history_key_state(struct etcd_store *s, const struct etcd_kv *hkv,
                             struct idmint__history_state *out)
{
    json_t *o = kv_json(s, hkv, "a history id");
    const char *id = json_string_value(json_object_get(o, "id"));
    const char *sid = json_string_value(json_object_get(o, "store_id"));
    const char *lin = json_string_value(json_object_get(o, "lineage"));
    int rc = 0;

    if (o == NULL)
        return IDMINT_ESTORE;
    if (id == NULL || !idmint__history_id_valid(id))
        rc = etcd_bad_value(s, hkv->key, "a history id");
    else {
        memcpy(out->head.id, id, 33);
        snprintf(out->store_id, sizeof(out->store_id), "%s", sid != NULL ? sid : "");
        out->lineage_n = 0;
        for (const char *p = lin != NULL ? lin : "";
             *p != '\0' && out->lineage_n < IDMINT__LINEAGE_MAX;) {
            size_t len = strcspn(p, " ");

            if (len == 32) {
                memcpy(out->lineage[out->lineage_n], p, 32);
                out->lineage[out->lineage_n++][32] = '\0';
            }
            p += len;
            p += strspn(p, " ");
        }
    }
    json_decref(o);
    return rc;
}

/* The tip in P/tip's @p kv; 0 when it is not a number (never a tip). */
static uint64_t tip_of(const struct etcd_kv *kv)
{
    char text[24];
    uint64_t tip = 0;

    snprintf(text, sizeof(text), "%.*s", (int)(kv->value_len < 23 ? kv->value_len : 23), kv->value);
    return idmint__parse_u64(text, &tip) == 0 ? tip : 0;
}

/*
 * Two reads: P/history and P/tip at one revision (the head: P/tip's
 * mod_revision and value), then P/tip at @p seq when it lies at or below
 * the head. Revisions at or below the head never change, so the second
 * read needs no snapshot of the first. A compacted seq is one the log no
 * longer holds (oldest_seq past it).
 */
static int etcd_history_check(struct store *st, uint64_t seq, struct idmint__history_state *out)
{
    struct etcd_store *s = (struct etcd_store *)st;
    struct etcd_range r[2]; /* history key, tip key */
    const struct etcd_kv *hkv, *tkv;
    json_t *ops = json_array(), *op, *req;
    int rc;

    call_begin(s);
    add(s, ops, op_range(s->hkey, NULL));
    add(s, ops, op_range(s->tkey, NULL));
    if ((rc = etcd_read(s, ops, r, 2)) != 0) {
        ranges_free(r, 2);
        return rc;
    }
    hkv = range_one(&r[0]);
    tkv = range_one(&r[1]);
    if (hkv == NULL) {
        ranges_free(r, 2);
        return history_missing(s);
    }
    rc = history_key_state(s, hkv, out);
    if (rc == 0 && tkv != NULL) {
        out->head.seq = (uint64_t)tkv->mod_rev;
        out->head.tip = tip_of(tkv);
    }
    ranges_free(r, 2);
    out->backup_ms = 0; /* etcd's snapshots are its own tools': none is marked */
    out->oldest_seq = 1;
    out->tip_at_seq = 0;
    if (rc != 0 || seq == 0 || seq > out->head.seq || seq > INT64_MAX)
        return rc;
    ops = json_array();
    op = op_range(s->tkey, NULL);
    req = json_object_get(op, "request_range");
    if (req != NULL && json_object_set_new(req, "revision", j_u64(seq)) != 0)
        s->is_oom = 1;
    add(s, ops, op);
    s->is_compacted = 0;
    if ((rc = etcd_read(s, ops, r, 1)) == 0 && (tkv = range_one(&r[0])) != NULL &&
        (uint64_t)tkv->mod_rev == seq)
        out->tip_at_seq = tip_of(tkv);
    ranges_free(r, 1);
    if (rc != 0 && s->is_compacted) {
        out->oldest_seq = seq + 1;
        rc = 0;
        idmint__errmsg_clear();
    }
    return rc;
}

/* ==== audit ==== */

static void audit_entry_set(idmint_audit_entry *e, int64_t seq, int64_t at_ms, const char *actor,
                            const char *action, const char *ns, const char *detail)
{
    memset(e, 0, sizeof(*e));
    e->seq = seq;
    e->at_ms = at_ms;
    snprintf(e->actor, sizeof(e->actor), "%s", actor);
    snprintf(e->action, sizeof(e->action), "%s", action);
    snprintf(e->ns, sizeof(e->ns), "%s", ns);
    snprintf(e->detail, sizeof(e->detail), "%s", detail);
}

/*
 * Append the records of audit key @p kv to *list (*len of them, room for
 * *cap): one, or a fence's, one per step and then its summary. All have
 * the key's create_revision as seq, so they go together or not at all:
 * 1 (nothing appended) when *len is not 0 and they would pass @p limit.
 */
static int audit_append(struct etcd_store *s, const struct etcd_kv *kv, size_t limit,
                        idmint_audit_entry **list, size_t *len, size_t *cap)
{
    json_t *o = kv_json(s, kv, "an audit record"), *steps;
    const char *actor, *action, *ns, *detail;
    int64_t at_ms = 0;
    size_t k, i;
    int rc = 0;

    if (o == NULL)
        return IDMINT_ESTORE;
    actor = json_string_value(json_object_get(o, "actor"));
    action = json_string_value(json_object_get(o, "action"));
    ns = json_string_value(json_object_get(o, "ns"));
    detail = json_string_value(json_object_get(o, "detail"));
    steps = json_object_get(o, "steps");
    if (actor == NULL || action == NULL || ns == NULL || detail == NULL ||
        get_i64(o, "at_ms", &at_ms) != 0 || (steps != NULL && !json_is_array(steps))) {
        json_decref(o);
        return etcd_bad_value(s, kv->key, "an audit record");
    }
    k = json_array_size(steps) + 1;
    if (*len > 0 && *len + k > limit) {
        json_decref(o);
        return 1;
    }
    if (*len + k > *cap) {
        size_t cap2 = *cap * 2 > *len + k ? *cap * 2 : *len + k;
        idmint_audit_entry *grown = realloc(*list, cap2 * sizeof(**list));

        if (grown == NULL) {
            json_decref(o);
            return etcd_oom(s, "listing audit records");
        }
        *list = grown;
        *cap = cap2;
    }
    for (i = 0; i + 1 < k && rc == 0; i++) {
        json_t *step = json_array_get(steps, i);
        const char *sns = json_string_value(json_object_get(step, "ns"));
        const char *sdetail = json_string_value(json_object_get(step, "detail"));

        if (sns == NULL || sdetail == NULL)
            rc = etcd_bad_value(s, kv->key, "an audit record of a fence");
        else
            audit_entry_set(&(*list)[*len + i], kv->create_rev, at_ms, actor, action, sns, sdetail);
    }
    if (rc == 0) {
        audit_entry_set(&(*list)[*len + k - 1], kv->create_rev, at_ms, actor, action, ns, detail);
        *len += k;
    }
    json_decref(o);
    return rc;
}

/*
 * Records with create_revision > @p after_seq in create_revision order, in
 * pages: each record is created by the transaction of the change it
 * records, and a later commit always has a higher revision, so paging by
 * revision never skips one that commits late nor repeats one. The records
 * of one fence share a revision: they are never split, so a page may hold
 * fewer than @p limit, and more when one fence alone does not fit.
 */
static int etcd_audit_list(struct store *st, int64_t after_seq, size_t limit,
                           idmint_audit_entry **out, size_t *n)
{
    struct etcd_store *s = (struct etcd_store *)st;
    char key[ETCD_KEY_MAX], end[ETCD_KEY_MAX];
    idmint_audit_entry *list = NULL;
    size_t len = 0, cap = 0, i;
    int64_t after = after_seq < 0 ? 0 : after_seq;
    int rc, is_full = 1;

    call_begin(s);
    if ((rc = key_fmt(s, key, "/audit/")) != 0)
        return rc;
    key_prefix_end(key, end);
    while (rc == 0 && is_full && len < limit) {
        size_t page = limit - len < ETCD_AUDIT_PAGE ? limit - len : ETCD_AUDIT_PAGE;
        json_t *req = json_pack("{s:o,s:o,s:s,s:s,s:o,s:o}", "key", j_key(key), "range_end",
                                j_key(end), "sort_order", "ASCEND", "sort_target", "CREATE",
                                "min_create_revision", j_i64(after + 1), "limit", j_u64(page)),
               *reply = NULL;
        struct etcd_range r;

        if ((rc = etcd_post(s, "/v3/kv/range", req, 0, &reply)) != 0)
            break;
        rc = range_parse(s, reply, &r);
        json_decref(reply);
        if (rc != 0)
            break;
        for (i = 0; rc == 0 && i < r.n; i++)
            if ((rc = audit_append(s, &r.kvs[i], limit, &list, &len, &cap)) == 0)
                after = r.kvs[i].create_rev;
        is_full = r.n == page;
        range_free(&r);
        call_begin(s); /* each page has its own deadline */
    }
    if (rc == 1)
        rc = 0; /* stopped before a fence that would not fit: the next call starts with it */
    if (rc != 0) {
        free(list);
        return rc;
    }
    *out = list;
    *n = len;
    return 0;
}

/* ==== version 4: trace, prune, batches, collisions ==== */

/* Whether grant @p a comes before @p b in a trace: granted first, then the lower generation. */
static int grant_before(const idmint_grant_info *a, const idmint_grant_info *b)
{
    return a->granted_ms != b->granted_ms ? a->granted_ms < b->granted_ms
                                          : a->generation < b->generation;
}

/* Insert @p g into @p list (*n of them, room for @p cap) in trace order; full, the last goes. */
static void grant_insert(idmint_grant_info *list, size_t *n, size_t cap, const idmint_grant_info *g)
{
    size_t j = *n;

    if (j == cap && (j == 0 || !grant_before(g, &list[j - 1])))
        return;
    if (j == cap)
        j--;
    else
        (*n)++;
    while (j > 0 && grant_before(g, &list[j - 1])) {
        list[j] = list[j - 1];
        j--;
    }
    list[j] = *g;
}

/* One range request of @p page keys in [@p key, @p end), key order; @p descend: the last first. */
static int range_page(struct etcd_store *s, const char *key, const char *end, size_t page,
                      int descend, struct etcd_range *out)
{
    json_t *req = json_pack("{s:o,s:o,s:o}", "key", j_key(key), "range_end", j_key(end), "limit",
                            j_u64(page)),
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
    rc = range_parse(s, reply, out);
    json_decref(reply);
    return rc;
}

/*
 * Every generation of (region, worker id) is one prefix in generation order;
 * their spans need not be (a forced release can pull E back), so all of them
 * are read, a page at a time, and those holding the unit kept.
 */
static int wgrants_find(struct etcd_store *s, const char *ns, const struct idmint__grant_query *q,
                        idmint_grant_info *list, size_t *n)
{
    char key[ETCD_KEY_MAX], end[ETCD_KEY_MAX], from[ETCD_KEY_MAX];
    int rc = key_wgrant_prefix(s, ns, q->region, q->worker_id, key);
    size_t i;

    if (rc != 0)
        return rc;
    key_prefix_end(key, end);
    memcpy(from, key, strlen(key) + 1);
    for (;;) {
        struct etcd_range r;
        uint64_t generation = 0;

        call_begin(s); /* each page has its own deadline */
        if ((rc = range_page(s, from, end, ETCD_GRANT_PAGE, 0, &r)) != 0)
            return rc;
        for (i = 0; rc == 0 && i < r.n; i++) {
            idmint_grant_info g;

            if ((rc = wgrant_from_kv(s, &r.kvs[i], q->region, q->worker_id, &g)) != 0)
                break;
            if (g.first <= q->unit && q->unit < g.last)
                grant_insert(list, n, STORE_GRANTS_MAX, &g);
            generation = g.generation;
        }
        if (rc == 0 && r.n == ETCD_GRANT_PAGE && generation < UINT64_MAX)
            rc = key_wgrant(s, ns, q->region, q->worker_id, generation + 1, from);
        else if (rc == 0)
            rc = 1; /* the last page */
        range_free(&r);
        if (rc != 0)
            return rc == 1 ? 0 : rc;
    }
}

/*
 * Ranges never overlap, so the one holding a value starts at or below it:
 * the grants with the greatest starts at or below it, a few more than one
 * to show an overlap a faulty store made.
 */
static int rgrants_find(struct etcd_store *s, const char *ns, uint64_t value,
                        idmint_grant_info *list, size_t *n)
{
    char key[ETCD_KEY_MAX], end[ETCD_KEY_MAX];
    struct etcd_range r;
    size_t i;
    int rc;

    /* [P/rgrant/NS/, P/rgrant/NS/(value + 1)), the last first; the wrapper keeps values below
     * 2^63, so value + 1 does not wrap. */
    if ((rc = key_fmt(s, key, "/rgrant/%s/", ns)) != 0 ||
        (rc = key_rgrant(s, ns, value + 1, end)) != 0)
        return rc;
    call_begin(s);
    if ((rc = range_page(s, key, end, STORE_GRANTS_MAX, 1, &r)) != 0)
        return rc;
    for (i = 0; rc == 0 && i < r.n; i++) {
        idmint_grant_info g;

        if ((rc = rgrant_from_kv(s, &r.kvs[i], &g)) == 0 && g.first <= value && value < g.last)
            grant_insert(list, n, STORE_GRANTS_MAX, &g);
    }
    range_free(&r);
    return rc;
}

static int etcd_grant_find(struct store *st, const char *ns, const struct idmint__grant_query *q,
                           idmint_grant_info **out, size_t *n)
{
    struct etcd_store *s = (struct etcd_store *)st;
    idmint_grant_info *list = calloc(STORE_GRANTS_MAX, sizeof(*list));
    size_t len = 0;
    int rc;

    if (list == NULL)
        return etcd_oom(s, "finding grants");
    rc = q->kind == IDMINT_KIND_RANGE ? rgrants_find(s, ns, q->value, list, &len)
                                      : wgrants_find(s, ns, q, list, &len);
    if (rc != 0 || len == 0) {
        free(list);
        list = NULL;
    }
    if (rc == 0) {
        *out = list;
        *n = len;
    }
    return rc;
}

/*
 * Delete the @p r->n records of age keys @p r (family @p what) in one txn
 * that compares each age key's mod_revision as read: a renewal or release
 * since moved it (a new stamp), and the txn loses and reads again. A batch
 * takes its parts with it. ETCD_APPLIED, 0 when a compare failed,
 * ETCD_UNKNOWN or an error.
 */
static int prune_txn(struct etcd_store *s, int what, const struct etcd_range *r)
{
    json_t *cmp = json_array(), *ok = json_array();
    struct etcd_range none;
    size_t i;

    for (i = 0; i < r->n; i++) {
        char target[ETCD_KEY_MAX], parts[ETCD_KEY_MAX], parts_end[ETCD_KEY_MAX];

        if (age_target(s, r->kvs[i].key, target) != 0 ||
            key_children(s, target, parts, parts_end) != 0) {
            json_decref(cmp);
            json_decref(ok);
            return etcd_bad_value(s, r->kvs[i].key, "an age index key");
        }
        add(s, cmp, cmp_mod(r->kvs[i].key, r->kvs[i].mod_rev));
        add(s, ok, op_delete(r->kvs[i].key, NULL));
        add(s, ok, op_delete(target, NULL));
        if (what == IDMINT__KEEP_BATCHES)
            add(s, ok, op_delete(parts, parts_end)); /* its parts, a losing claim's too */
    }
    return etcd_write(s, cmp, ok, json_array(), &none, 0, NULL);
}

/*
 * Grants by their age index. Batches and collision records of schema 4 end
 * with their lease, so there is nothing to do for them here; what is left
 * in the age index of batches is schema 3's, pruned as it was.
 */
static int etcd_prune(struct store *st, int what, int64_t before_ms, size_t limit, uint64_t *pruned)
{
    struct etcd_store *s = (struct etcd_store *)st;
    char key[ETCD_KEY_MAX], end[ETCD_KEY_MAX];
    uint64_t done = 0;
    int rc, lost = 0;

    if (age_family[what] == '\0') {
        if (pruned != NULL)
            *pruned = 0;
        return 0;
    }
    if ((rc = key_fmt(s, key, "/age/%c/", age_family[what])) != 0 ||
        (rc = key_fmt(s, end, "/age/%c/%020llu", age_family[what], age_ms(before_ms))) != 0)
        return rc;
    /* [P/age/F/, P/age/F/BEFORE): the stamps below before_ms, oldest first. */
    while (rc == 0 && done < limit) {
        size_t page = limit - done < ETCD_PRUNE_TXN ? limit - done : ETCD_PRUNE_TXN;
        struct etcd_range r;

        call_begin(s); /* each txn has its own deadline */
        if ((rc = range_page(s, key, end, page, 0, &r)) != 0)
            break;
        if (r.n == 0) {
            range_free(&r);
            break;
        }
        rc = prune_txn(s, what, &r);
        if (rc == ETCD_UNKNOWN) {
            /* One txn: its first key tells whether it applied. */
            json_t *ops = json_array();
            struct etcd_range again[1];
            const struct etcd_kv *kv;

            add(s, ops, op_range(r.kvs[0].key, NULL));
            if ((rc = etcd_read(s, ops, again, 1)) == 0) {
                kv = range_one(&again[0]);
                rc = kv != NULL && kv->mod_rev == r.kvs[0].mod_rev ? 0 : ETCD_APPLIED;
            }
            ranges_free(again, 1);
        }
        if (rc == ETCD_APPLIED) {
            done += r.n;
            lost = 0;
            rc = 0;
        } else if (rc == 0 && ++lost == ETCD_MAX_LOST) {
            rc = lost_too_often(s, "pruning");
        } else if (rc == 0) {
            lost_backoff(s, lost);
        }
        range_free(&r);
    }
    if (rc == 0 && pruned != NULL)
        *pruned = done;
    return rc;
}

/* ==== leases that end batches and collision records ==== */

/*
 * The etcd lease a record of kind @p kind (0 batches, 1 collision records)
 * kept @p keep_ms is written with, into *id. One lease serves the records
 * this handle writes within a window after its grant (keep / 8, at most
 * ETCD_LEASE_REUSE_MAX_MS): it is granted for keep_ms + the window, and used
 * only until the window has passed, measured on this process's monotonic
 * clock from before the grant was sent, so every record it carries has at
 * least keep_ms to run. etcd's leader counts the lease down (a new leader
 * starts the count again, which only lengthens it): no node's wall clock,
 * and no other node's retention, ends a record early. A grant whose reply
 * is lost is sent again: the lease it made carries nothing and runs out.
 */
static int expiry_lease(struct etcd_store *s, int kind, int64_t keep_ms, int64_t *id)
{
    struct etcd_expiry *e = &s->expiry[kind];
    uint64_t now_ms = idmint__deadline_now_ms(), window_ms, ttl_s, granted_s = 0;
    json_t *reply = NULL;
    int64_t lease = 0;
    int rc;

    if (s->is_lease_gone) {
        /* Revoked, or the store went back to before the grant: the other may be too. */
        memset(s->expiry, 0, sizeof(s->expiry));
        s->is_lease_gone = 0;
    }
    if (e->id != 0 && e->keep_ms == keep_ms && now_ms < e->until_ms) {
        *id = e->id;
        return 0;
    }
    window_ms = (uint64_t)keep_ms / 8;
    if (window_ms > ETCD_LEASE_REUSE_MAX_MS)
        window_ms = ETCD_LEASE_REUSE_MAX_MS;
    ttl_s = ((uint64_t)keep_ms + window_ms + 999) / 1000;
    if ((rc = etcd_post(s, "/v3/lease/grant", json_pack("{s:o}", "TTL", j_u64(ttl_s)), 0,
                        &reply)) != 0)
        return rc;
    /* etcd may grant more than asked (its minimum TTL), never less. */
    if (get_i64(reply, "ID", &lease) != 0 || lease <= 0 || get_u64(reply, "TTL", &granted_s) != 0 ||
        granted_s < ttl_s) {
        const char *msg = json_string_value(json_object_get(reply, "error"));

        rc = idmint__fail(IDMINT_ESTORE, "%s: a lease grant of %llu s answered no such lease (%s)",
                          s->name, (unsigned long long)ttl_s, msg != NULL ? msg : "no message");
        json_decref(reply);
        return rc;
    }
    json_decref(reply);
    e->id = lease;
    e->keep_ms = keep_ms;
    e->until_ms = now_ms + granted_s * 1000u - (uint64_t)keep_ms;
    *id = lease;
    return 0;
}

/* ==== batches ==== */

/* The part @p i of a batch's runs under key @p hkey, claim @p claim. */
static int key_batch_part(const struct etcd_store *s, const char *hkey, const char *claim, size_t i,
                          char *out)
{
    return key_fmt(s, out, "%s/%s/%06zu", hkey + strlen(s->prefix), claim, i);
}

/*
 * The batch in @p hkv (key @p hkey) and, when its runs are in parts, the
 * parts among @p parts (every key under "@p hkey/", key order) into @p out
 * (ns and key are the caller's); @p claim (33 bytes) gets the claim that
 * wrote it.
 */
static int batch_from_kvs(struct etcd_store *s, const struct etcd_kv *hkv, const char *hkey,
                          const struct etcd_range *parts, struct idmint__batch *out, char *claim)
{
    json_t *o = kv_json(s, hkv, "a batch"), *runs;
    char part_key[ETCD_KEY_MAX];
    uint64_t count = 0, n_parts = 0;
    size_t i, k = 0, len = 0;
    int rc = 0;

    if (o == NULL)
        return IDMINT_ESTORE;
    runs = json_object_get(o, "runs");
    /* Schema 3 stamped created_ms; schema 4's batches end with their lease and keep_ms. */
    if (get_text(o, "owner", out->owner, sizeof(out->owner)) != 0 ||
        get_text(o, "namespace", out->ns, sizeof(out->ns)) != 0 ||
        get_text(o, "claim", claim, ETCD_OPID_LEN + 1) != 0 ||
        get_small(o, "count", UINT32_MAX, &count) != 0 ||
        get_i64(o, "created_ms", &out->created_ms) != 0 ||
        get_i64(o, "keep_ms", &out->keep_ms) != 0 ||
        get_small(o, "parts", 1000000, &n_parts) != 0 || (runs != NULL && !json_is_string(runs)) ||
        (runs == NULL) == (n_parts == 0)) {
        json_decref(o);
        return etcd_bad_value(s, hkv->key, "a batch");
    }
    out->count = (uint32_t)count;
    free(out->runs);
    out->runs = NULL;
    if (runs != NULL) {
        if ((out->runs = strdup(json_string_value(runs))) == NULL)
            rc = etcd_oom(s, "reading a batch");
        json_decref(o);
        return rc;
    }
    json_decref(o);
    /* The parts of the claim that wrote it, in order; others are a losing claim's. */
    for (i = 0; i < parts->n; i++)
        len += parts->kvs[i].value_len;
    if ((out->runs = malloc(len + 1)) == NULL)
        return etcd_oom(s, "reading a batch");
    len = 0;
    for (i = 0; rc == 0 && i < parts->n && k < n_parts; i++) {
        if ((rc = key_batch_part(s, hkey, claim, k, part_key)) != 0)
            break;
        if (strcmp(parts->kvs[i].key, part_key) != 0)
            continue;
        memcpy(out->runs + len, parts->kvs[i].value, parts->kvs[i].value_len);
        len += parts->kvs[i].value_len;
        k++;
    }
    out->runs[len] = '\0';
    if (rc == 0 && k != n_parts)
        rc = idmint__fail(IDMINT_ESTORE, "%s: batch %s has %zu of its %llu parts", s->name, hkey, k,
                          (unsigned long long)n_parts);
    if (rc != 0) {
        free(out->runs);
        out->runs = NULL;
    }
    return rc;
}

/* The batch of @p key read in @p r (its key @p hkey, then its parts) into @p out. */
static int batch_found(struct etcd_store *s, const struct etcd_range *r, const char *hkey,
                       const char *key, struct idmint__batch *out, char *claim)
{
    int rc = batch_from_kvs(s, range_one(&r[0]), hkey, &r[1], out, claim);

    if (rc == 0)
        snprintf(out->key, sizeof(out->key), "%s", key);
    return rc;
}

/* Ops that read batch key @p hkey and every key under it (its parts), into @p ops. */
static int batch_read_ops(struct etcd_store *s, const char *hkey, json_t *ops)
{
    char parts[ETCD_KEY_MAX], parts_end[ETCD_KEY_MAX];
    int rc = key_children(s, hkey, parts, parts_end);

    if (rc != 0)
        return rc;
    add(s, ops, op_range(hkey, NULL));
    add(s, ops, op_range(parts, parts_end));
    return 0;
}

/*
 * The batch of (@p owner, @p key), or else one schema 3 saved under @p key
 * for the same owner (a retry that spans the upgrade is answered as
 * before; another owner's is not this caller's), read at one revision.
 */
static int etcd_batch_get(struct store *st, const char *owner, const char *key,
                          struct idmint__batch *out)
{
    struct etcd_store *s = (struct etcd_store *)st;
    char hkey[ETCD_KEY_MAX], v3key[ETCD_KEY_MAX], claim[ETCD_OPID_LEN + 1];
    struct etcd_range r[4]; /* batch key, its parts; schema 3's key, its parts */
    json_t *ops;
    int rc;

    call_begin(s);
    memset(r, 0, sizeof(r));
    if ((rc = key_batch(s, owner, key, hkey)) != 0 || (rc = key_batch_v3(s, key, v3key)) != 0)
        return rc;
    ops = json_array();
    if ((rc = batch_read_ops(s, hkey, ops)) != 0 || (rc = batch_read_ops(s, v3key, ops)) != 0) {
        json_decref(ops);
        return rc;
    }
    if ((rc = etcd_read(s, ops, r, 4)) == 0) {
        if (range_one(&r[0]) != NULL) {
            rc = batch_found(s, r, hkey, key, out, claim);
        } else if (range_one(&r[2]) != NULL &&
                   (rc = batch_found(s, &r[2], v3key, key, out, claim)) == 0 &&
                   strcmp(out->owner, owner) != 0) {
            idmint__batch_clear(out);
            rc = IDMINT_ENOTFOUND;
        } else if (range_one(&r[2]) == NULL) {
            rc = IDMINT_ENOTFOUND;
        }
        if (rc == IDMINT_ENOTFOUND)
            rc = idmint__fail(IDMINT_ENOTFOUND, "no batch was saved under key '%s'", key);
    }
    ranges_free(r, 4);
    return rc;
}

/*
 * Write the @p n parts of @p runs (@p len bytes) under batch key @p hkey
 * for claim @p claim, on lease @p lease. A put of the same value is
 * idempotent, so each is retried like a read; each has its own deadline.
 */
static int batch_put_parts(struct etcd_store *s, const char *hkey, const char *claim,
                           const char *runs, size_t len, size_t n, int64_t lease)
{
    char part_key[ETCD_KEY_MAX];
    size_t i;
    int rc = 0;

    for (i = 0; rc == 0 && i < n; i++) {
        size_t at = i * ETCD_BATCH_PART,
               size = len - at < ETCD_BATCH_PART ? len - at : ETCD_BATCH_PART;
        char *v;
        json_t *req, *reply = NULL;

        if ((rc = key_batch_part(s, hkey, claim, i, part_key)) != 0)
            break;
        if ((v = b64_encode(runs + at, size)) == NULL)
            return etcd_oom(s, "saving a batch");
        req = json_pack("{s:o,s:s,s:o}", "key", j_key(part_key), "value", v, "lease", j_i64(lease));
        free(v);
        call_begin(s);
        if ((rc = etcd_post(s, "/v3/kv/put", req, 0, &reply)) == 0)
            json_decref(reply);
    }
    return rc;
}

/* Delete the parts claim @p claim wrote under batch key @p hkey (it lost): best effort. */
static void batch_drop_parts(struct etcd_store *s, const char *hkey, const char *claim)
{
    char parts[ETCD_KEY_MAX], parts_end[ETCD_KEY_MAX];
    json_t *req, *reply = NULL;

    if (key_fmt(s, parts, "%s/%s/", hkey + strlen(s->prefix), claim) != 0)
        return;
    key_prefix_end(parts, parts_end);
    req = json_pack("{s:o,s:o}", "key", j_key(parts), "range_end", j_key(parts_end));
    call_begin(s);
    if (etcd_post(s, "/v3/kv/deleterange", req, 0, &reply) == 0)
        json_decref(reply);
    /* Left behind, they end with their lease. */
}

/* The batch key's value for @p b, claim @p claim: its runs, or how many parts hold them. */
static json_t *batch_json(struct etcd_store *s, const struct idmint__batch *b, const char *claim,
                          size_t n_parts)
{
    json_t *o = json_pack("{s:o,s:o,s:o,s:o,s:s}", "owner", j_text(b->owner, sizeof(b->owner)),
                          "namespace", j_text(b->ns, sizeof(b->ns)), "count", j_u64(b->count),
                          "keep_ms", j_i64(b->keep_ms), "claim", claim);

    if (o != NULL && (n_parts > 0 ? json_object_set_new(o, "parts", j_u64(n_parts))
                                  : json_object_set_new(o, "runs", json_string(b->runs))) != 0)
        s->is_oom = 1;
    return o;
}

/*
 * One txn claims the batch key (create_revision 0); runs too long for one
 * value are put in parts first, under the key and a claim id of this call,
 * and the txn compares that they are still there. The failure branch reads
 * the key and its parts: the claim in it says whether it is ours (an
 * attempt whose reply was lost applied) or another's. So a claim is resent
 * after an unknown outcome: its compare lets at most one attempt apply.
 * The key and its parts ride on the batches' lease (expiry_lease).
 */
static int batch_claim_on(struct etcd_store *s, const struct idmint__batch *b,
                          struct idmint__batch *saved, int *inserted)
{
    char hkey[ETCD_KEY_MAX], part_key[ETCD_KEY_MAX];
    char claim[ETCD_OPID_LEN + 1], found[ETCD_OPID_LEN + 1];
    size_t len = strlen(b->runs), n_parts = 0, i;
    struct etcd_range r[2]; /* batch key, its parts */
    int64_t lease = 0;
    int rc, lost, has_parts = 0;

    call_begin(s);
    memset(r, 0, sizeof(r));
    if ((rc = opid_new(claim)) != 0 || (rc = key_batch(s, b->owner, b->key, hkey)) != 0 ||
        (rc = key_batch_part(s, hkey, claim, 0, part_key)) != 0)
        return rc;
    if (len > ETCD_BATCH_INLINE)
        n_parts = (len + ETCD_BATCH_PART - 1) / ETCD_BATCH_PART;
    if (n_parts > 0) {
        /* A repeat of a long batch reads the saved one, and writes no parts. */
        json_t *ops = json_array();

        if ((rc = batch_read_ops(s, hkey, ops)) != 0) {
            json_decref(ops);
            return rc;
        }
        if ((rc = etcd_read(s, ops, r, 2)) == 0 && range_one(&r[0]) != NULL) {
            rc = batch_found(s, r, hkey, b->key, saved, found);
            ranges_free(r, 2);
            return rc; /* another claim's: this one has sent nothing yet */
        }
        ranges_free(r, 2);
        if (rc != 0)
            return rc;
    }
    if ((rc = expiry_lease(s, 0, b->keep_ms, &lease)) != 0)
        return rc;
    for (lost = 0; lost < ETCD_MAX_LOST; lost++) {
        json_t *cmp, *ok, *fail;

        if (n_parts > 0 && !has_parts) {
            if ((rc = batch_put_parts(s, hkey, claim, b->runs, len, n_parts, lease)) != 0)
                return rc;
            has_parts = 1;
            call_begin(s);
        }
        cmp = json_array();
        ok = json_array();
        fail = json_array();
        add(s, cmp, cmp_absent(hkey));
        for (i = 0; i < n_parts && rc == 0; i++)
            if ((rc = key_batch_part(s, hkey, claim, i, part_key)) == 0)
                add(s, cmp, cmp_exists(part_key));
        add(s, ok, op_put_lease(hkey, batch_json(s, b, claim, n_parts), lease));
        if (rc == 0)
            rc = batch_read_ops(s, hkey, fail);
        if (rc != 0) {
            json_decref(cmp);
            json_decref(ok);
            json_decref(fail);
            return rc;
        }
        rc = etcd_write(s, cmp, ok, fail, r, 2, NULL);
        if (rc == ETCD_APPLIED) {
            *saved = *b;
            saved->created_ms = 0; /* etcd keeps no time: the lease ends it */
            saved->expires_ms = 0;
            if ((saved->runs = strdup(b->runs)) == NULL)
                return etcd_oom(s, "saving a batch");
            *inserted = 1;
            return 0;
        }
        if (rc == ETCD_UNKNOWN) {
            rc = 0;
            continue; /* send it again: the failure branch tells whether it applied */
        }
        if (rc < 0)
            break;
        if (range_one(&r[0]) == NULL) {
            /* No batch, and our parts are gone (their lease ended, or a
             * losing claim's cleanup took them): write them again. */
            ranges_free(r, 2);
            has_parts = 0;
            continue;
        }
        rc = batch_found(s, r, hkey, b->key, saved, found);
        ranges_free(r, 2);
        if (rc != 0)
            break;
        *inserted = strcmp(found, claim) == 0;
        if (!*inserted && has_parts)
            batch_drop_parts(s, hkey, claim);
        return 0;
    }
    ranges_free(r, 2);
    return rc < 0 ? rc : lost_too_often(s, "saving a batch");
}

static int etcd_batch_claim(struct store *st, const struct idmint__batch *b,
                            struct idmint__batch *saved, int *inserted)
{
    struct etcd_store *s = (struct etcd_store *)st;
    int rc = batch_claim_on(s, b, saved, inserted);

    /* Refused at once for a lease etcd no longer knows: once more on a new one. */
    if (rc < 0 && s->is_lease_gone)
        rc = batch_claim_on(s, b, saved, inserted);
    return rc;
}

/* ==== collisions ==== */

/* A collision record's value; @p opid names the call that wrote it. */
static json_t *collision_json(const idmint_collision *c, int64_t now_ms, const char *opid)
{
    return json_pack("{s:s,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:s}", "ns", c->ns, "id", j_u64(c->id),
                     "first_owner", j_text(c->first_owner, sizeof(c->first_owner)), "second_owner",
                     j_text(c->second_owner, sizeof(c->second_owner)), "verdict",
                     j_text(c->verdict, sizeof(c->verdict)), "reporter",
                     j_text(c->reporter, sizeof(c->reporter)), "observed_ms", j_i64(c->observed_ms),
                     "reported_ms", j_i64(now_ms), "note", j_text(c->note, sizeof(c->note)), "op",
                     opid);
}

static int collision_from_kv(const struct etcd_store *s, const struct etcd_kv *kv,
                             idmint_collision *out);

/*
 * The record of (c->ns, c->id, c->reporter) in @p kv into @p saved, and
 * whether call @p opid wrote it (an attempt whose reply was lost applied).
 */
static int collision_found(struct etcd_store *s, const struct etcd_kv *kv, const char *opid,
                           idmint_collision *saved, int *is_ours)
{
    json_t *o = kv_json(s, kv, "a collision record");
    const char *op;

    if (o == NULL)
        return IDMINT_ESTORE;
    op = json_string_value(json_object_get(o, "op"));
    *is_ours = op != NULL && strcmp(op, opid) == 0;
    json_decref(o);
    return collision_from_kv(s, kv, saved);
}

/*
 * The record, on the collision records' lease (expiry_lease), and its
 * audit record in one txn that compares that neither exists: the record's
 * key is the report's (namespace, ID, reporter), so a repeat finds the
 * first in the failure branch and writes nothing; the audit key is the
 * call's op id, kept in the record, so a retry after a lost reply is the
 * same txn and knows its own record. seq is the record's create_revision.
 */
static int collision_add_on(struct etcd_store *s, const idmint_collision *c, const char *actor,
                            int64_t now_ms, int64_t keep_ms, idmint_collision *saved, int *inserted)
{
    char ckey[ETCD_KEY_MAX], akey[ETCD_KEY_MAX], opid[ETCD_OPID_LEN + 1], detail[256];
    struct etcd_range r[1], last;
    int64_t lease = 0;
    int rc, lost;

    call_begin(s);
    if ((rc = opid_new(opid)) != 0 || (rc = key_collision(s, c, ckey)) != 0 ||
        (rc = key_audit(s, opid, akey)) != 0 || (rc = expiry_lease(s, 1, keep_ms, &lease)) != 0)
        return rc;
    idmint__store_collision_detail(c, detail, sizeof(detail));
    for (lost = 0; lost < ETCD_MAX_LOST; lost++) {
        json_t *cmp = json_array(), *ok = json_array(), *fail = json_array();
        const struct etcd_kv *kv;

        add(s, cmp, cmp_absent(ckey));
        add(s, cmp, cmp_absent(akey));
        add(s, ok, op_put_lease(ckey, collision_json(c, now_ms, opid), lease));
        add(s, ok,
            op_put(akey, audit_json(now_ms, actor, "collision.report", c->ns, detail, NULL)));
        add(s, ok, op_range(ckey, NULL));
        add(s, fail, op_range(ckey, NULL));
        rc = etcd_write(s, cmp, ok, fail, r, 1, &last);
        if (rc == ETCD_UNKNOWN)
            continue; /* the same txn again: its compares let one attempt apply */
        if (rc < 0)
            return rc;
        kv = rc == ETCD_APPLIED ? range_one(&last) : range_one(&r[0]);
        if (kv != NULL) {
            int is_ours = 0;

            if ((rc = collision_found(s, kv, opid, saved, &is_ours)) == 0)
                *inserted = is_ours;
        } else if (rc == ETCD_APPLIED) {
            rc = idmint__fail(IDMINT_ESTORE, "%s: collision record %s is missing after its write",
                              s->name, ckey);
        } else {
            rc = 1; /* the record ended with its lease meanwhile: write it anew */
        }
        range_free(&last);
        ranges_free(r, 1);
        if (rc != 1)
            return rc;
    }
    return lost_too_often(s, "recording a collision");
}

static int etcd_collision_add(struct store *st, const idmint_collision *c, const char *actor,
                              int64_t now_ms, int64_t keep_ms, idmint_collision *saved,
                              int *inserted)
{
    struct etcd_store *s = (struct etcd_store *)st;
    int rc = collision_add_on(s, c, actor, now_ms, keep_ms, saved, inserted);

    /* Refused at once for a lease etcd no longer knows: once more on a new one. */
    if (rc < 0 && s->is_lease_gone)
        rc = collision_add_on(s, c, actor, now_ms, keep_ms, saved, inserted);
    return rc;
}

/* The collision record in @p kv into @p out; its seq is the key's create_revision. */
static int collision_from_kv(const struct etcd_store *s, const struct etcd_kv *kv,
                             idmint_collision *out)
{
    json_t *o = kv_json(s, kv, "a collision record");
    int rc = 0;

    if (o == NULL)
        return IDMINT_ESTORE;
    memset(out, 0, sizeof(*out));
    out->size = sizeof(*out);
    out->seq = kv->create_rev;
    if (get_text(o, "ns", out->ns, sizeof(out->ns)) != 0 || get_u64(o, "id", &out->id) != 0 ||
        get_text(o, "first_owner", out->first_owner, sizeof(out->first_owner)) != 0 ||
        get_text(o, "second_owner", out->second_owner, sizeof(out->second_owner)) != 0 ||
        get_text(o, "verdict", out->verdict, sizeof(out->verdict)) != 0 ||
        get_text(o, "reporter", out->reporter, sizeof(out->reporter)) != 0 ||
        get_i64(o, "observed_ms", &out->observed_ms) != 0 ||
        get_i64(o, "reported_ms", &out->reported_ms) != 0 ||
        get_text(o, "note", out->note, sizeof(out->note)) != 0)
        rc = etcd_bad_value(s, kv->key, "a collision record");
    json_decref(o);
    return rc;
}

/* As audit_list: pages by create_revision, so none is skipped or repeated. */
static int etcd_collision_list(struct store *st, int64_t after_seq, size_t limit,
                               idmint_collision **out, size_t *n)
{
    struct etcd_store *s = (struct etcd_store *)st;
    char key[ETCD_KEY_MAX], end[ETCD_KEY_MAX];
    idmint_collision *list = NULL;
    size_t len = 0, i;
    int64_t after = after_seq < 0 ? 0 : after_seq;
    int rc, is_full = 1;

    if ((rc = key_fmt(s, key, "/coll/")) != 0)
        return rc;
    key_prefix_end(key, end);
    while (rc == 0 && is_full && len < limit) {
        size_t page = limit - len < ETCD_AUDIT_PAGE ? limit - len : ETCD_AUDIT_PAGE;
        json_t *req = json_pack("{s:o,s:o,s:s,s:s,s:o,s:o}", "key", j_key(key), "range_end",
                                j_key(end), "sort_order", "ASCEND", "sort_target", "CREATE",
                                "min_create_revision", j_i64(after + 1), "limit", j_u64(page)),
               *reply = NULL;
        struct etcd_range r;

        call_begin(s); /* each page has its own deadline */
        if ((rc = etcd_post(s, "/v3/kv/range", req, 0, &reply)) != 0)
            break;
        rc = range_parse(s, reply, &r);
        json_decref(reply);
        if (rc != 0)
            break;
        if (r.n > 0) {
            idmint_collision *grown = realloc(list, (len + r.n) * sizeof(*list));

            if (grown == NULL)
                rc = etcd_oom(s, "listing collisions");
            else
                list = grown;
        }
        for (i = 0; rc == 0 && i < r.n; i++)
            if ((rc = collision_from_kv(s, &r.kvs[i], &list[len])) == 0)
                after = list[len++].seq;
        is_full = r.n == page;
        range_free(&r);
    }
    if (rc != 0 || len == 0) {
        free(list);
        list = NULL;
    }
    if (rc == 0) {
        *out = list;
        *n = len;
    }
    return rc;
}

const struct store_ops idmint__store_etcd = {
    .version = STORE_OPS_V6,
    .scheme = "etcd",
    .caps = STORE_CAP_TXN,
    .open = etcd_open,
    .close = etcd_close,
    .ns_create = etcd_ns_create,
    .ns_get = etcd_ns_get,
    .ns_list = etcd_ns_list,
    .ns_set_disabled = etcd_ns_set_disabled,
    .lease_take = etcd_lease_take,
    .lease_renew = etcd_lease_renew,
    .lease_release = etcd_lease_release,
    .lease_list = etcd_lease_list,
    .lease_force_release = etcd_lease_force_release,
    .range_reserve = etcd_range_reserve,
    .audit_list = etcd_audit_list,
    .range_forget = etcd_range_forget,
    .backup = NULL, /* etcdctl snapshot save: the server's own tool */
    .fence = etcd_fence,
    .grant_find = etcd_grant_find,
    .prune = etcd_prune,
    .batch_get = etcd_batch_get,
    .batch_claim = etcd_batch_claim,
    .collision_add = etcd_collision_add,
    .collision_list = etcd_collision_list,
    .history_check = etcd_history_check,
};
