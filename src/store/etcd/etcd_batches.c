/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Idempotent batches and collision records on etcd: records that end by
 * themselves, each attached to an etcd lease the leader counts down, so no
 * node's clock or retention decides when one goes. A long batch is written
 * in parts before the txn that claims its key.
 */
#include "etcd_internal.h"

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
    if ((rc = etcd_post(s, "/v3/lease/grant", json_pack("{s:o}", "TTL", etcd_j_u64(ttl_s)), 0,
                        &reply)) != 0)
        return rc;
    /* etcd may grant more than asked (its minimum TTL), never less. */
    if (etcd_get_i64(reply, "ID", &lease) != 0 || lease <= 0 ||
        etcd_get_u64(reply, "TTL", &granted_s) != 0 || granted_s < ttl_s) {
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

/*
 * The batch in @p hkv (key @p hkey) and, when its runs are in parts, the
 * parts among @p parts (every key under "@p hkey/", key order) into @p out
 * (ns and key are the caller's); @p claim (33 bytes) gets the claim that
 * wrote it.
 */
static int batch_from_kvs(struct etcd_store *s, const struct etcd_kv *hkv, const char *hkey,
                          const struct etcd_range *parts, struct idmint__batch *out, char *claim)
{
    json_t *o = etcd_kv_json(s, hkv, "a batch"), *runs;
    char part_key[ETCD_KEY_MAX];
    uint64_t count = 0, n_parts = 0;
    size_t i, k = 0, len = 0;
    int rc = 0;

    if (o == NULL)
        return IDMINT_ESTORE;
    runs = json_object_get(o, "runs");
    /* Schema 3 stamped created_ms; schema 4's batches end with their lease and keep_ms. */
    if (etcd_get_text(o, "owner", out->owner, sizeof(out->owner)) != 0 ||
        etcd_get_text(o, "namespace", out->ns, sizeof(out->ns)) != 0 ||
        etcd_get_text(o, "claim", claim, ETCD_OPID_LEN + 1) != 0 ||
        etcd_get_small(o, "count", UINT32_MAX, &count) != 0 ||
        etcd_get_i64(o, "created_ms", &out->created_ms) != 0 ||
        etcd_get_i64(o, "keep_ms", &out->keep_ms) != 0 ||
        etcd_get_small(o, "parts", 1000000, &n_parts) != 0 ||
        (runs != NULL && !json_is_string(runs)) || (runs == NULL) == (n_parts == 0)) {
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
        if ((rc = etcd_key_batch_part(s, hkey, claim, k, part_key)) != 0)
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
    int rc = batch_from_kvs(s, etcd_range_one(&r[0]), hkey, &r[1], out, claim);

    if (rc == 0)
        snprintf(out->key, sizeof(out->key), "%s", key);
    return rc;
}

/* Ops that read batch key @p hkey and every key under it (its parts), into @p ops. */
static int batch_read_ops(struct etcd_store *s, const char *hkey, json_t *ops)
{
    char parts[ETCD_KEY_MAX], parts_end[ETCD_KEY_MAX];
    int rc = etcd_key_children(s, hkey, parts, parts_end);

    if (rc != 0)
        return rc;
    etcd_add(s, ops, etcd_op_range(hkey, NULL));
    etcd_add(s, ops, etcd_op_range(parts, parts_end));
    return 0;
}

int etcd_batch_get(struct store *st, const char *owner, const char *key, struct idmint__batch *out)
{
    struct etcd_store *s = (struct etcd_store *)st;
    char hkey[ETCD_KEY_MAX], v3key[ETCD_KEY_MAX], claim[ETCD_OPID_LEN + 1];
    struct etcd_range r[4]; /* batch key, its parts; schema 3's key, its parts */
    json_t *ops;
    int rc;

    etcd_call_begin(s);
    memset(r, 0, sizeof(r));
    if ((rc = etcd_key_batch(s, owner, key, hkey)) != 0 ||
        (rc = etcd_key_batch_v3(s, key, v3key)) != 0)
        return rc;
    ops = json_array();
    if ((rc = batch_read_ops(s, hkey, ops)) != 0 || (rc = batch_read_ops(s, v3key, ops)) != 0) {
        json_decref(ops);
        return rc;
    }
    if ((rc = etcd_read(s, ops, r, 4)) == 0) {
        if (etcd_range_one(&r[0]) != NULL) {
            rc = batch_found(s, r, hkey, key, out, claim);
        } else if (etcd_range_one(&r[2]) != NULL &&
                   (rc = batch_found(s, &r[2], v3key, key, out, claim)) == 0 &&
                   strcmp(out->owner, owner) != 0) {
            idmint__batch_clear(out);
            rc = IDMINT_ENOTFOUND;
        } else if (etcd_range_one(&r[2]) == NULL) {
            rc = IDMINT_ENOTFOUND;
        }
        if (rc == IDMINT_ENOTFOUND)
            rc = idmint__fail(IDMINT_ENOTFOUND, "no batch was saved under key '%s'", key);
    }
    etcd_ranges_free(r, 4);
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

        if ((rc = etcd_key_batch_part(s, hkey, claim, i, part_key)) != 0)
            break;
        if ((v = etcd_b64_encode(runs + at, size)) == NULL)
            return etcd_oom(s, "saving a batch");
        req = json_pack("{s:o,s:s,s:o}", "key", etcd_j_key(part_key), "value", v, "lease",
                        etcd_j_i64(lease));
        free(v);
        etcd_call_begin(s);
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

    if (etcd_key_fmt(s, parts, "%s/%s/", hkey + strlen(s->prefix), claim) != 0)
        return;
    etcd_key_prefix_end(parts, parts_end);
    req = json_pack("{s:o,s:o}", "key", etcd_j_key(parts), "range_end", etcd_j_key(parts_end));
    etcd_call_begin(s);
    if (etcd_post(s, "/v3/kv/deleterange", req, 0, &reply) == 0)
        json_decref(reply);
    /* Left behind, they end with their lease. */
}

/* One claim of a batch: the key, the claim id of this call, and its parts. */
struct claim_call {
    const struct idmint__batch *b;
    struct idmint__batch *saved;
    int *inserted;
    char hkey[ETCD_KEY_MAX], claim[ETCD_OPID_LEN + 1];
    size_t len, n_parts; /* bytes of runs; parts they need (0: inline) */
    int has_parts;       /* this call's parts are written */
    int64_t lease;
};

/*
 * Without a read: put the parts (once, and again if they went), then the
 * txn. A failure branch that holds no batch means our parts are gone (their
 * lease ended, or a losing claim's cleanup took them); one that holds a
 * batch is the answer: its claim says whether it is ours (an attempt whose
 * reply was lost applied) or another's.
 */
static int claim_judge(struct etcd_store *s, void *ctx, const struct etcd_range *r, size_t n,
                       int lost, struct etcd_txn *t)
{
    struct claim_call *c = ctx;
    char part_key[ETCD_KEY_MAX], found[ETCD_OPID_LEN + 1];
    size_t i;
    int rc = 0;

    (void)n;
    (void)lost;
    if (r != NULL && etcd_range_one(&r[0]) != NULL) {
        if ((rc = batch_found(s, r, c->hkey, c->b->key, c->saved, found)) != 0)
            return rc;
        *c->inserted = strcmp(found, c->claim) == 0;
        if (!*c->inserted && c->has_parts)
            batch_drop_parts(s, c->hkey, c->claim);
        return 0;
    }
    if (r != NULL)
        c->has_parts = 0;
    if (c->n_parts > 0 && !c->has_parts) {
        if ((rc = batch_put_parts(s, c->hkey, c->claim, c->b->runs, c->len, c->n_parts,
                                  c->lease)) != 0)
            return rc;
        c->has_parts = 1;
        etcd_call_begin(s);
    }
    etcd_add(s, t->cmp, etcd_cmp_absent(c->hkey));
    for (i = 0; i < c->n_parts && rc == 0; i++)
        if ((rc = etcd_key_batch_part(s, c->hkey, c->claim, i, part_key)) == 0)
            etcd_add(s, t->cmp, etcd_cmp_exists(part_key));
    etcd_add(s, t->ok,
             etcd_op_put_lease(c->hkey, etcd_batch_json(s, c->b, c->claim, c->n_parts), c->lease));
    if (rc == 0)
        rc = batch_read_ops(s, c->hkey, t->fail);
    t->n_fail = 2;
    return rc != 0 ? rc : ETCD_TXN_SEND;
}

static int claim_done(struct etcd_store *s, void *ctx, const struct etcd_range *last)
{
    struct claim_call *c = ctx;

    (void)last;
    *c->saved = *c->b;
    c->saved->created_ms = 0; /* etcd keeps no time: the lease ends it */
    c->saved->expires_ms = 0;
    if ((c->saved->runs = strdup(c->b->runs)) == NULL)
        return etcd_oom(s, "saving a batch");
    *c->inserted = 1;
    return 0;
}

/*
 * One txn claims the batch key (create_revision 0); runs too long for one
 * value are put in parts first, under the key and a claim id of this call,
 * and the txn compares that they are still there. The failure branch reads
 * the key and its parts. A claim is resent after an unknown outcome: its
 * compare lets at most one attempt apply. The key and its parts ride on the
 * batches' lease (expiry_lease).
 */
static int batch_claim_on(struct etcd_store *s, const struct idmint__batch *b,
                          struct idmint__batch *saved, int *inserted)
{
    static const struct etcd_txn_plan plan = {
        .what = "saving a batch",
        .audit_at = -1,
        .judge = claim_judge,
        .done = claim_done,
    };
    struct claim_call c = {.b = b, .saved = saved, .inserted = inserted, .len = strlen(b->runs)};
    char part_key[ETCD_KEY_MAX], found[ETCD_OPID_LEN + 1];
    struct etcd_range r[2]; /* batch key, its parts */
    int rc;

    etcd_call_begin(s);
    memset(r, 0, sizeof(r));
    if ((rc = etcd_opid_new(c.claim)) != 0 ||
        (rc = etcd_key_batch(s, b->owner, b->key, c.hkey)) != 0 ||
        (rc = etcd_key_batch_part(s, c.hkey, c.claim, 0, part_key)) != 0)
        return rc;
    if (c.len > ETCD_BATCH_INLINE)
        c.n_parts = (c.len + ETCD_BATCH_PART - 1) / ETCD_BATCH_PART;
    if (c.n_parts > 0) {
        /* A repeat of a long batch reads the saved one, and writes no parts. */
        json_t *ops = json_array();

        if ((rc = batch_read_ops(s, c.hkey, ops)) != 0) {
            json_decref(ops);
            return rc;
        }
        if ((rc = etcd_read(s, ops, r, 2)) == 0 && etcd_range_one(&r[0]) != NULL) {
            rc = batch_found(s, r, c.hkey, b->key, saved, found);
            etcd_ranges_free(r, 2);
            return rc; /* another claim's: this one has sent nothing yet */
        }
        etcd_ranges_free(r, 2);
        if (rc != 0)
            return rc;
    }
    if ((rc = expiry_lease(s, 0, b->keep_ms, &c.lease)) != 0)
        return rc;
    return etcd_txn_run(s, &plan, &c);
}

int etcd_batch_claim(struct store *st, const struct idmint__batch *b, struct idmint__batch *saved,
                     int *inserted)
{
    struct etcd_store *s = (struct etcd_store *)st;
    int rc = batch_claim_on(s, b, saved, inserted);

    /* Refused at once for a lease etcd no longer knows: once more on a new one. */
    if (rc < 0 && s->is_lease_gone)
        rc = batch_claim_on(s, b, saved, inserted);
    return rc;
}

/*
 * The record of (c->ns, c->id, c->reporter) in @p kv into @p saved, and
 * whether call @p opid wrote it (an attempt whose reply was lost applied).
 */
static int collision_found(struct etcd_store *s, const struct etcd_kv *kv, const char *opid,
                           idmint_collision *saved, int *is_ours)
{
    json_t *o = etcd_kv_json(s, kv, "a collision record");
    const char *op;

    if (o == NULL)
        return IDMINT_ESTORE;
    op = json_string_value(json_object_get(o, "op"));
    *is_ours = op != NULL && strcmp(op, opid) == 0;
    json_decref(o);
    return etcd_collision_from_kv(s, kv, saved);
}

/* One report of a collision: its record's key and the call's audit key. */
struct collision_call {
    const idmint_collision *c;
    const char *actor;
    int64_t now_ms;
    char ckey[ETCD_KEY_MAX], akey[ETCD_KEY_MAX], opid[ETCD_OPID_LEN + 1], detail[256];
    int64_t lease;
    idmint_collision *saved;
    int *inserted;
};

/* Without a read: a failure branch that holds the record is the answer; one without it (the
 * record ended with its lease meanwhile) writes it anew. */
static int collision_judge(struct etcd_store *s, void *ctx, const struct etcd_range *r, size_t n,
                           int lost, struct etcd_txn *t)
{
    struct collision_call *cc = ctx;
    const struct etcd_kv *kv = r != NULL ? etcd_range_one(&r[0]) : NULL;

    (void)n;
    (void)lost;
    if (kv != NULL) {
        int is_ours = 0, rc = collision_found(s, kv, cc->opid, cc->saved, &is_ours);

        if (rc == 0)
            *cc->inserted = is_ours;
        return rc;
    }
    etcd_add(s, t->cmp, etcd_cmp_absent(cc->ckey));
    etcd_add(s, t->cmp, etcd_cmp_absent(cc->akey));
    etcd_add(
        s, t->ok,
        etcd_op_put_lease(cc->ckey, etcd_collision_json(cc->c, cc->now_ms, cc->opid), cc->lease));
    etcd_add(s, t->ok,
             etcd_op_put(cc->akey, etcd_audit_json(cc->now_ms, cc->actor, "collision.report",
                                                   cc->c->ns, cc->detail, NULL)));
    etcd_add(s, t->ok, etcd_op_range(cc->ckey, NULL));
    etcd_add(s, t->fail, etcd_op_range(cc->ckey, NULL));
    t->n_fail = 1;
    return ETCD_TXN_SEND;
}

static int collision_done(struct etcd_store *s, void *ctx, const struct etcd_range *last)
{
    struct collision_call *cc = ctx;
    const struct etcd_kv *kv = etcd_range_one(last);
    int is_ours = 0, rc;

    if (kv == NULL)
        return idmint__fail(IDMINT_ESTORE, "%s: collision record %s is missing after its write",
                            s->name, cc->ckey);
    if ((rc = collision_found(s, kv, cc->opid, cc->saved, &is_ours)) == 0)
        *cc->inserted = is_ours;
    return rc;
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
    static const struct etcd_txn_plan plan = {
        .what = "recording a collision",
        .flags = ETCD_TXN_READ_BACK,
        .audit_at = -1,
        .judge = collision_judge,
        .done = collision_done,
    };
    struct collision_call cc = {
        .c = c, .actor = actor, .now_ms = now_ms, .saved = saved, .inserted = inserted};
    int rc;

    etcd_call_begin(s);
    if ((rc = etcd_opid_new(cc.opid)) != 0 || (rc = etcd_key_collision(s, c, cc.ckey)) != 0 ||
        (rc = etcd_key_audit(s, cc.opid, cc.akey)) != 0 ||
        (rc = expiry_lease(s, 1, keep_ms, &cc.lease)) != 0)
        return rc;
    idmint__store_collision_detail(c, cc.detail, sizeof(cc.detail));
    return etcd_txn_run(s, &plan, &cc);
}

int etcd_collision_add(struct store *st, const idmint_collision *c, const char *actor,
                       int64_t now_ms, int64_t keep_ms, idmint_collision *saved, int *inserted)
{
    struct etcd_store *s = (struct etcd_store *)st;
    int rc = collision_add_on(s, c, actor, now_ms, keep_ms, saved, inserted);

    /* Refused at once for a lease etcd no longer knows: once more on a new one. */
    if (rc < 0 && s->is_lease_gone)
        rc = collision_add_on(s, c, actor, now_ms, keep_ms, saved, inserted);
    return rc;
}

int etcd_collision_list(struct store *st, int64_t after_seq, size_t limit, idmint_collision **out,
                        size_t *n)
{
    struct etcd_store *s = (struct etcd_store *)st;
    char key[ETCD_KEY_MAX], end[ETCD_KEY_MAX];
    idmint_collision *list = NULL;
    size_t len = 0, i;
    int64_t after = after_seq < 0 ? 0 : after_seq;
    int rc, is_full = 1;

    if ((rc = etcd_key_fmt(s, key, "/coll/")) != 0)
        return rc;
    etcd_key_prefix_end(key, end);
    while (rc == 0 && is_full && len < limit) {
        size_t page = limit - len < ETCD_AUDIT_PAGE ? limit - len : ETCD_AUDIT_PAGE;
        json_t *req = json_pack("{s:o,s:o,s:s,s:s,s:o,s:o}", "key", etcd_j_key(key), "range_end",
                                etcd_j_key(end), "sort_order", "ASCEND", "sort_target", "CREATE",
                                "min_create_revision", etcd_j_i64(after + 1), "limit",
                                etcd_j_u64(page)),
               *reply = NULL;
        struct etcd_range r;

        etcd_call_begin(s); /* each page has its own deadline */
        if ((rc = etcd_post(s, "/v3/kv/range", req, 0, &reply)) != 0)
            break;
        rc = etcd_range_parse(s, reply, &r);
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
            if ((rc = etcd_collision_from_kv(s, &r.kvs[i], &list[len])) == 0)
                after = list[len++].seq;
        is_full = r.n == page;
        etcd_range_free(&r);
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
