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
#include "etcd_internal.h"

static void etcd_close(struct store *st)
{
    struct etcd_store *s = (struct etcd_store *)st;
    size_t i;

    if (s == NULL)
        return;
    etcd_wire_close(s);
    for (i = 0; i < s->n_members; i++)
        free(s->members[i]);
    free(s);
}

/* What etcd_schema reads and writes: P/schema, then the history key. */
struct schema_call {
    char key[ETCD_KEY_MAX]; /* P/schema */
    unsigned flags;         /* STORE_OPEN_* */
};

static void schema_ops(struct etcd_store *s, const struct schema_call *c, json_t *ops)
{
    etcd_add(s, ops, etcd_op_range(c->key, NULL));
    etcd_add(s, ops, etcd_op_range(s->hkey, NULL));
}

static int schema_read(struct etcd_store *s, void *ctx, struct etcd_range *r)
{
    json_t *ops = json_array();

    schema_ops(s, ctx, ops);
    return etcd_read(s, ops, r, 2);
}

static int schema_judge(struct etcd_store *s, void *ctx, const struct etcd_range *r, size_t n,
                        int lost, struct etcd_txn *t)
{
    struct schema_call *c = ctx;
    const struct etcd_kv *kv = etcd_range_one(&r[0]), *hkv = etcd_range_one(&r[1]);
    char text[32], tip_text[24], id[ETCD_OPID_LEN + 1], store_id[ETCD_OPID_LEN + 1];
    uint64_t version = 0, tip = 0;
    int rc = 0;

    (void)n;
    (void)lost;
    if (kv != NULL) {
        snprintf(text, sizeof(text), "%.*s", (int)(kv->value_len < 31 ? kv->value_len : 31),
                 kv->value);
        if (idmint__parse_u64(text, &version) != 0 || version == 0)
            rc = idmint__fail(IDMINT_ESTORE,
                              "%s: %s holds '%s', not a schema version: not an idmint "
                              "store; check the prefix",
                              s->name, c->key, text);
        else if (version > ETCD_SCHEMA_VERSION)
            rc = idmint__fail(IDMINT_ESTORE,
                              "%s: schema version %llu is newer than this idmint knows "
                              "(%d); made by a newer idmint? upgrade this one",
                              s->name, (unsigned long long)version, ETCD_SCHEMA_VERSION);
        if (rc != 0 || version == ETCD_SCHEMA_VERSION)
            return rc;
    } else if (c->flags & STORE_OPEN_EXISTING) {
        return idmint__fail(IDMINT_ENOTFOUND,
                            "%s: no idmint store under prefix %s yet: nothing has been "
                            "created there; create a namespace first, or check the URL",
                            s->name, s->prefix);
    }
    if ((rc = etcd_opid_new(id)) != 0 || (rc = etcd_opid_new(store_id)) != 0 ||
        (rc = idmint__store_history_tip(&tip)) != 0)
        return rc;
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
    etcd_add(s, t->cmp, kv != NULL ? etcd_cmp_mod(c->key, kv->mod_rev) : etcd_cmp_absent(c->key));
    etcd_add(s, t->cmp,
             hkv != NULL ? etcd_cmp_mod(s->hkey, hkv->mod_rev) : etcd_cmp_absent(s->hkey));
    etcd_add(s, t->ok, etcd_op_put_text(c->key, text));
    /* Version 5: the store id (kept across fences and restores) joins
     * the history key, kept as it is otherwise, and a first tip logs the
     * upgrade's revision. No longest lease is known for leases granted
     * before: a fence cannot refuse a short --max-lease for them. */
    if (hkv == NULL)
        etcd_add(s, t->ok,
                 etcd_op_put(s->hkey, json_pack("{s:s,s:s}", "id", id, "store_id", store_id)));
    else
        etcd_add(s, t->ok, etcd_op_put(s->hkey, etcd_history_upgraded(s, hkv, store_id)));
    etcd_add(s, t->ok, etcd_op_put_text(s->tkey, tip_text));
    schema_ops(s, c, t->fail);
    t->n_fail = 2;
    return ETCD_TXN_SEND;
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
    static const struct etcd_txn_plan plan = {
        .what = "writing the schema version",
        .flags = ETCD_TXN_JUDGE_LAST,
        .n_reads = 2,
        .read = schema_read,
        .audit_at = -1,
        .judge = schema_judge,
    };
    struct schema_call c;
    int rc = etcd_key_fmt(s, c.key, "/schema");

    if (rc != 0)
        return rc;
    c.flags = flags;
    return etcd_txn_run(s, &plan, &c);
}

static int etcd_open(const char *location, const char *token, unsigned flags, struct store **out)
{
    struct etcd_store *s;
    uint32_t rnd = 0;
    int rc;

    (void)token; /* etcd authentication is not supported: see etcd_once */
    if ((s = calloc(1, sizeof(*s))) == NULL)
        return idmint__fail(IDMINT_ENOMEM, "out of memory opening etcd store");
    s->base.ops = &idmint__store_etcd;
    snprintf(s->name, sizeof(s->name), "etcd:%s", location);
    if ((rc = etcd_url_parse(s, location)) != 0 || (rc = idmint__curl_load()) != 0) {
        etcd_close(&s->base);
        return rc;
    }
    /* Spread the processes of a fleet over the members. */
    if (idmint__entropy(&rnd, sizeof(rnd)) == 0)
        s->cur = rnd % s->n_members;
    s->jitter = ((uint64_t)rnd << 32 | (uint64_t)(uintptr_t)s) | 1u; /* any nonzero seed */
    if ((rc = etcd_wire_open(s)) != 0) {
        etcd_close(&s->base);
        return rc;
    }
    etcd_call_begin(s);
    if ((rc = etcd_key_fmt(s, s->hkey, "/history")) != 0 ||
        (rc = etcd_key_fmt(s, s->tkey, "/tip")) != 0 || (rc = etcd_schema(s, flags)) != 0) {
        etcd_close(&s->base);
        return rc;
    }
    *out = &s->base;
    return 0;
}

/* A namespace write: its key and the call's audit key, read and compared together. */
struct ns_call {
    char nkey[ETCD_KEY_MAX], akey[ETCD_KEY_MAX], opid[ETCD_OPID_LEN + 1];
    const idmint_ns_info *ns; /* ns_create: the namespace to make */
    const char *name;         /* ns_set_disabled */
    int disabled;
    const char *actor;
    const char *detail;
    int64_t now_ms;
};

static void ns_ops(struct etcd_store *s, const struct ns_call *c, json_t *ops)
{
    etcd_add(s, ops, etcd_op_range(c->nkey, NULL));
    etcd_add(s, ops, etcd_op_range(c->akey, NULL));
}

static int ns_read(struct etcd_store *s, void *ctx, struct etcd_range *r)
{
    json_t *ops = json_array();

    ns_ops(s, ctx, ops);
    return etcd_read(s, ops, r, 2);
}

/* Sent first without a read; what a retry reads (our audit key absent) decides. */
static int ns_create_judge(struct etcd_store *s, void *ctx, const struct etcd_range *r, size_t n,
                           int lost, struct etcd_txn *t)
{
    struct ns_call *c = ctx;

    (void)n;
    (void)lost;
    if (r != NULL && etcd_range_one(&r[0]) != NULL)
        return idmint__fail(IDMINT_ECONFLICT, "namespace '%s' already exists", c->ns->name);
    etcd_add(s, t->cmp, etcd_cmp_absent(c->nkey));
    etcd_add(s, t->cmp, etcd_cmp_absent(c->akey));
    etcd_add(s, t->ok, etcd_op_put(c->nkey, etcd_ns_to_json(c->ns, c->now_ms)));
    etcd_add(s, t->ok,
             etcd_op_put(c->akey, etcd_audit_json(c->now_ms, c->actor, "ns.create", c->ns->name,
                                                  c->detail, NULL)));
    ns_ops(s, c, t->fail);
    t->n_fail = 2;
    return ETCD_TXN_SEND;
}

static int etcd_ns_create(struct store *st, const idmint_ns_info *ns, const char *actor,
                          int64_t now_ms)
{
    static const struct etcd_txn_plan plan = {
        .what = "creating a namespace",
        .flags = ETCD_TXN_BLIND,
        .n_reads = 2,
        .read = ns_read,
        .audit_at = 1,
        .judge = ns_create_judge,
    };
    struct etcd_store *s = (struct etcd_store *)st;
    struct ns_call c = {.ns = ns, .actor = actor, .now_ms = now_ms};
    char detail[256];
    int rc;

    etcd_call_begin(s);
    if ((rc = etcd_opid_new(c.opid)) != 0 || (rc = etcd_key_ns(s, ns->name, c.nkey)) != 0 ||
        (rc = etcd_key_audit(s, c.opid, c.akey)) != 0)
        return rc;
    idmint__store_ns_create_detail(ns, detail, sizeof(detail));
    c.detail = detail;
    return etcd_txn_run(s, &plan, &c);
}

/* Read namespace @p name: 0, IDMINT_ENOTFOUND or an error. */
static int etcd_ns_read(struct etcd_store *s, const char *name, idmint_ns_info *out)
{
    char key[ETCD_KEY_MAX];
    struct etcd_range r[1];
    json_t *ops;
    int rc = etcd_key_ns(s, name, key);

    if (rc != 0)
        return rc;
    ops = json_array();
    etcd_add(s, ops, etcd_op_range(key, NULL));
    if ((rc = etcd_read(s, ops, r, 1)) == 0)
        rc = etcd_range_one(&r[0]) == NULL ? idmint__store_ns_missing(name)
                                           : etcd_ns_from_kv(s, etcd_range_one(&r[0]), out);
    etcd_ranges_free(r, 1);
    return rc;
}

static int etcd_ns_get(struct store *st, const char *name, idmint_ns_info *out)
{
    struct etcd_store *s = (struct etcd_store *)st;
    idmint_ns_info info;
    int rc;

    etcd_call_begin(s);
    if ((rc = etcd_ns_read(s, name, &info)) == 0)
        *out = info;
    return rc;
}

static int etcd_ns_list(struct store *st, idmint_ns_info **out, size_t *n)
{
    struct etcd_store *s = (struct etcd_store *)st;
    idmint_ns_info *list = NULL;
    struct etcd_range r[1];
    size_t i;
    int rc;

    etcd_call_begin(s);
    if ((rc = etcd_read_prefix(s, "/ns/", r)) == 0 && r[0].n > 0 &&
        (list = calloc(r[0].n, sizeof(*list))) == NULL)
        rc = etcd_oom(s, "listing namespaces");
    for (i = 0; rc == 0 && i < r[0].n; i++)
        rc = etcd_ns_from_kv(s, &r[0].kvs[i], &list[i]);
    if (rc == 0) {
        *out = list;
        *n = r[0].n;
    } else {
        free(list);
    }
    etcd_ranges_free(r, 1);
    return rc;
}

static int ns_disable_judge(struct etcd_store *s, void *ctx, const struct etcd_range *r, size_t n,
                            int lost, struct etcd_txn *t)
{
    struct ns_call *c = ctx;
    const struct etcd_kv *kv = etcd_range_one(&r[0]);
    idmint_ns_info info;
    int rc;

    (void)n;
    (void)lost;
    if (kv == NULL)
        return idmint__store_ns_missing(c->name);
    if ((rc = etcd_ns_from_kv(s, kv, &info)) != 0)
        return rc;
    info.is_disabled = c->disabled != 0;
    etcd_add(s, t->cmp, etcd_cmp_mod(c->nkey, kv->mod_rev));
    etcd_add(s, t->cmp, etcd_cmp_absent(c->akey));
    etcd_add(s, t->ok, etcd_op_put(c->nkey, etcd_ns_to_json(&info, info.created_ms)));
    etcd_add(s, t->ok,
             etcd_op_put(c->akey, etcd_audit_json(c->now_ms, c->actor,
                                                  c->disabled ? "ns.disable" : "ns.enable", c->name,
                                                  c->disabled ? "disabled" : "enabled", NULL)));
    ns_ops(s, c, t->fail);
    t->n_fail = 2;
    return ETCD_TXN_SEND;
}

static int etcd_ns_set_disabled(struct store *st, const char *name, int disabled, const char *actor,
                                int64_t now_ms)
{
    static const struct etcd_txn_plan plan = {
        .what = "disabling or enabling a namespace",
        .flags = ETCD_TXN_BACKOFF,
        .n_reads = 2,
        .read = ns_read,
        .audit_at = 1,
        .judge = ns_disable_judge,
    };
    struct etcd_store *s = (struct etcd_store *)st;
    struct ns_call c = {.name = name, .disabled = disabled, .actor = actor, .now_ms = now_ms};
    int rc;

    etcd_call_begin(s);
    if ((rc = etcd_opid_new(c.opid)) != 0 || (rc = etcd_key_ns(s, name, c.nkey)) != 0 ||
        (rc = etcd_key_audit(s, c.opid, c.akey)) != 0)
        return rc;
    return etcd_txn_run(s, &plan, &c);
}

const struct store_ops idmint__store_etcd = {
    .version = STORE_OPS_V8,
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
    .location = NULL, /* the store layer reads it from the URL (location.c) */
    .record_get = etcd_record_get,
    .record_put = etcd_record_put,
};
