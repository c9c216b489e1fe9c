/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Worker leases on etcd: take, renew, release, list, force free. Each write
 * is a plan for etcd_txn_run: the row and the namespace are compared as
 * read, the grant record moves with the row, and an audited call's op key
 * tells a retry whether an attempt whose reply was lost applied.
 */
#include "etcd_internal.h"

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
        if ((rc = etcd_row_from_kv(s, &rows->kvs[i], &cur)) != 0)
            return rc;
        if (cur.worker_id == unused)
            unused++;
        if (cur.worker_id >= worker_count)
            continue;
        in_use++;
        if (cur.until < now_unit) {
            /* Spread: reservoir-sample one of the expired ids. */
            if (lost > 0 ? etcd_jitter_next(s) % (has_expired + 1) == 0
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

        pick = etcd_jitter_next(s) % (span < free_ids ? span : free_ids);
        /* Walk the gaps between rows to the pick-th never-used id. */
        for (i = 0; i < rows->n; i++) {
            if ((rc = etcd_row_from_kv(s, &rows->kvs[i], &cur)) != 0)
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

/* What a take reads and compares: the namespace, one region's rows, our audit key, the history. */
struct take_call {
    char nkey[ETCD_KEY_MAX], rkey[ETCD_KEY_MAX], rend[ETCD_KEY_MAX], akey[ETCD_KEY_MAX];
    const char *ns;
    uint64_t worker_count, now_unit, until_unit;
    const struct idmint__lease *lease; /* what is asked: region, holder, origin */
    struct idmint__lease res;          /* the answer */
    const char *actor;
    int64_t now_ms;
};

static void take_ops(struct etcd_store *s, const struct take_call *c, json_t *ops)
{
    etcd_add(s, ops, etcd_op_range(c->nkey, NULL));
    etcd_add(s, ops, etcd_op_range(c->rkey, c->rend));
    etcd_add(s, ops, etcd_op_range(c->akey, NULL));
    etcd_add(s, ops, etcd_op_range(s->hkey, NULL));
}

static int take_read(struct etcd_store *s, void *ctx, struct etcd_range *r)
{
    json_t *ops = json_array();

    take_ops(s, ctx, ops);
    return etcd_read(s, ops, r, 4);
}

/* Our take applied in an earlier attempt: fill @p res from its audit record. */
static int take_from_audit(struct etcd_store *s, const struct etcd_kv *kv,
                           struct idmint__lease *res)
{
    json_t *r = etcd_audit_result(s, kv);
    uint64_t worker = 0;
    int rc = 0;

    if (r == NULL)
        return IDMINT_ESTORE;
    if (etcd_get_u64(r, "worker", &worker) != 0 || worker > UINT32_MAX ||
        etcd_get_u64(r, "generation", &res->generation) != 0 ||
        etcd_get_u64(r, "fence", &res->fence_found) != 0 ||
        etcd_get_u64(r, "until", &res->lease_until) != 0)
        rc = etcd_bad_value(s, kv->key, "the result of a take");
    res->worker_id = (uint32_t)worker;
    json_decref(r);
    return rc;
}

/* Our take applied in an earlier attempt: its answer, and the history read with it. */
static int take_applied(struct etcd_store *s, void *ctx, const struct etcd_range *r, size_t n)
{
    struct take_call *c = ctx;
    int rc = take_from_audit(s, etcd_range_one(&r[2]), &c->res);

    (void)n;
    if (rc == 0)
        rc = etcd_history_applied(s, etcd_range_one(&r[3]), etcd_range_one(&r[2]), s->call_tip,
                                  &c->res.history);
    return rc;
}

static int take_judge(struct etcd_store *s, void *ctx, const struct etcd_range *r, size_t n,
                      int lost, struct etcd_txn *t)
{
    struct take_call *c = ctx;
    struct idmint__lease *res = &c->res;
    const struct idmint__lease *lease = c->lease;
    const struct etcd_kv *nkv = etcd_range_one(&r[0]);
    char wkey[ETCD_KEY_MAX], gkey[ETCD_KEY_MAX], agekey[ETCD_KEY_MAX], detail[256];
    /* take_choose sets it whenever it is read; GCC 12 at -O2 cannot see that
     * (-Wmaybe-uninitialized broke the release -Werror build). */
    struct etcd_row row = {0};
    idmint_ns_info info;
    uint32_t new_id = 0;
    int is_new = 0, rc;

    (void)n;
    if (nkv == NULL)
        return idmint__store_ns_missing(c->ns);
    if ((rc = etcd_ns_from_kv(s, nkv, &info)) != 0 ||
        (rc = idmint__store_lease_refusal(&info)) != 0)
        return rc;
    rc = take_choose(s, &r[1], c->worker_count, c->now_unit, lost, &row, &is_new, &new_id);
    if (rc < 0)
        return rc;
    if (rc == 0)
        return idmint__store_no_worker(c->ns, lease->region, c->worker_count);
    if (is_new) {
        res->worker_id = new_id;
        res->generation = 1;
        res->fence_found = 0;
        res->lease_until = c->until_unit;
    } else {
        res->worker_id = row.worker_id;
        res->generation = row.generation + 1;
        res->fence_found = row.until;
        res->lease_until = row.until > c->until_unit ? row.until : c->until_unit;
    }
    if ((rc = etcd_key_lease(s, c->ns, lease->region, res->worker_id, wkey)) != 0 ||
        (rc = etcd_key_wgrant(s, c->ns, lease->region, res->worker_id, res->generation, gkey)) !=
            0 ||
        (rc = etcd_key_age(s, IDMINT__KEEP_WORKER_GRANTS, c->now_ms, gkey, agekey)) != 0)
        return rc;
    idmint__store_lease_detail(res, res->fence_found, res->lease_until, detail, sizeof(detail));
    etcd_add(s, t->cmp, etcd_cmp_mod(c->nkey, nkv->mod_rev));
    etcd_add(s, t->cmp, is_new ? etcd_cmp_absent(wkey) : etcd_cmp_mod(wkey, row.mod_rev));
    etcd_add(s, t->cmp, etcd_cmp_absent(c->akey));
    /* The E found becomes this generation's fence: release clamps to it. */
    etcd_add(s, t->ok,
             etcd_op_put(wkey, etcd_row_to_json(lease->holder, res->generation, res->lease_until,
                                                res->fence_found)));
    etcd_add(
        s, t->ok,
        etcd_op_put(c->akey, etcd_audit_json(c->now_ms, c->actor, "worker.take", c->ns, detail,
                                             json_pack("{s:o,s:o,s:o,s:o}", "worker",
                                                       etcd_j_u64(res->worker_id), "generation",
                                                       etcd_j_u64(res->generation), "fence",
                                                       etcd_j_u64(res->fence_found), "until",
                                                       etcd_j_u64(res->lease_until)))));
    /* The grant: this generation owns [the E found, its E); a new key, as the generation is. */
    etcd_add(s, t->ok,
             etcd_op_put(gkey, etcd_wgrant_json(s, lease->holder, &lease->origin, res->fence_found,
                                                res->lease_until, c->now_ms)));
    etcd_add(s, t->ok, etcd_op_put_text(agekey, ""));
    etcd_add(s, t->ok, etcd_op_lease_max(s, c->ns, lease->granted_units));
    take_ops(s, c, t->fail);
    t->n_fail = 4;
    t->history = &res->history;
    return ETCD_TXN_SEND;
}

int etcd_lease_take(struct store *st, const char *ns, uint64_t worker_count, uint64_t now_unit,
                    uint64_t until_unit, struct idmint__lease *lease, const char *actor,
                    int64_t now_ms)
{
    static const struct etcd_txn_plan plan = {
        .what = "taking a worker id",
        .flags = ETCD_TXN_BACKOFF,
        .n_reads = 4,
        .read = take_read,
        .audit_at = 2,
        .applied = take_applied,
        .judge = take_judge,
    };
    struct etcd_store *s = (struct etcd_store *)st;
    struct take_call c = {.ns = ns,
                          .worker_count = worker_count,
                          .now_unit = now_unit,
                          .until_unit = until_unit,
                          .lease = lease,
                          .res = *lease,
                          .actor = actor,
                          .now_ms = now_ms};
    char opid[ETCD_OPID_LEN + 1];
    int rc;

    etcd_call_begin(s);
    if ((rc = etcd_opid_new(opid)) != 0 || (rc = etcd_key_ns(s, ns, c.nkey)) != 0 ||
        (rc = etcd_key_fmt(s, c.rkey, "/lease/%s/%010u/", ns, (unsigned)lease->region)) != 0 ||
        (rc = etcd_key_audit(s, opid, c.akey)) != 0)
        return rc;
    etcd_key_prefix_end(c.rkey, c.rend);
    if ((rc = etcd_txn_run(s, &plan, &c)) == 0)
        *lease = c.res;
    return rc;
}

/* 1 with *row when the row is @p lease's (holder and generation), 0 when not, else an error. */
static int lease_is_held(struct etcd_store *s, const struct etcd_range *r,
                         const struct idmint__lease *lease, struct etcd_row *row)
{
    const struct etcd_kv *kv = etcd_range_one(r);
    int rc;

    if (kv == NULL)
        return 0;
    if ((rc = etcd_row_from_kv(s, kv, row)) != 0)
        return rc;
    return strcmp(row->holder, lease->holder) == 0 && row->generation == lease->generation;
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
    const struct etcd_kv *kv = etcd_range_one(r);
    char old_age[ETCD_KEY_MAX], new_age[ETCD_KEY_MAX];
    int64_t updated_ms = 0;
    json_t *o;
    int rc;

    etcd_add(s, cmp, etcd_cmp_mod(gkey, kv != NULL ? kv->mod_rev : 0));
    if (kv == NULL || (o = etcd_kv_json(s, kv, "a worker grant")) == NULL)
        return 0;
    if (etcd_get_i64(o, "updated_ms", &updated_ms) != 0) {
        json_decref(o);
        return 0;
    }
    if ((rc = etcd_key_age(s, IDMINT__KEEP_WORKER_GRANTS, updated_ms, gkey, old_age)) != 0 ||
        (rc = etcd_key_age(s, IDMINT__KEEP_WORKER_GRANTS, now_ms, gkey, new_age)) != 0) {
        json_decref(o);
        return rc;
    }
    if (json_object_set_new(o, "last", etcd_j_u64(last)) != 0 ||
        json_object_set_new(o, "updated_ms", etcd_j_i64(now_ms)) != 0)
        s->is_oom = 1;
    etcd_add(s, ok, etcd_op_put(gkey, o));
    /* One txn changes a key once; put again, it gets a new mod_revision all the same. */
    if (strcmp(old_age, new_age) != 0)
        etcd_add(s, ok, etcd_op_delete(old_age, NULL));
    etcd_add(s, ok, etcd_op_put_text(new_age, ""));
    return 0;
}

/*
 * What a renewal, a release or a forced release reads and compares: the
 * row, then (renewal) the namespace or (the others) our audit key, then the
 * grant (not a forced release), then the history key.
 */
struct hold_call {
    char wkey[ETCD_KEY_MAX], key2[ETCD_KEY_MAX], gkey[ETCD_KEY_MAX];
    size_t n_keys; /* 3, or 2 without a grant */
    const char *ns;
    struct idmint__lease *lease; /* renewal, release */
    uint32_t region, worker_id;  /* forced release */
    uint64_t until_unit;         /* renewal: the E asked; release: the final E; force: the cap */
    uint64_t stored;             /* the E written */
    struct idmint__history history;
    const char *actor;
    int64_t now_ms;
};

static void hold_ops(struct etcd_store *s, const struct hold_call *c, json_t *ops)
{
    etcd_add(s, ops, etcd_op_range(c->wkey, NULL));
    etcd_add(s, ops, etcd_op_range(c->key2, NULL));
    if (c->n_keys == 3)
        etcd_add(s, ops, etcd_op_range(c->gkey, NULL));
    etcd_add(s, ops, etcd_op_range(s->hkey, NULL));
}

static int hold_read(struct etcd_store *s, void *ctx, struct etcd_range *r)
{
    struct hold_call *c = ctx;
    const char *keys[3] = {c->wkey, c->key2, c->gkey};

    return etcd_read_keys(s, keys, c->n_keys, r);
}

static int renew_judge(struct etcd_store *s, void *ctx, const struct etcd_range *r, size_t n,
                       int lost, struct etcd_txn *t)
{
    struct hold_call *c = ctx;
    const struct etcd_kv *nkv;
    struct etcd_row row;
    idmint_ns_info info;
    int rc;

    (void)n;
    (void)lost;
    /* A lost lease outranks a disabled namespace: it stops minting at
     * once, a disabled namespace only at the lease's end. */
    if ((rc = lease_is_held(s, &r[0], c->lease, &row)) <= 0)
        return rc == 0 ? idmint__store_lease_lost(c->ns, c->lease) : rc;
    nkv = etcd_range_one(&r[1]);
    if (nkv != NULL && (rc = etcd_ns_from_kv(s, nkv, &info)) != 0)
        return rc;
    if (nkv != NULL && info.is_disabled)
        return idmint__fail(IDMINT_EDISABLED,
                            "namespace '%s' is disabled: the lease is not renewed; minting "
                            "stops at its end",
                            c->ns);
    c->stored = row.until > c->until_unit ? row.until : c->until_unit;
    if (c->stored == row.until) {
        /* E never moves back: nothing to write, and no news (the grant's
         * last is this E already; its updated_ms stays that of the write
         * that set it, which a held lease renews long before a prune). */
        return 0;
    }
    etcd_add(s, t->cmp, etcd_cmp_mod(c->wkey, row.mod_rev));
    etcd_add(s, t->cmp, etcd_cmp_mod(c->key2, nkv != NULL ? nkv->mod_rev : 0));
    etcd_add(
        s, t->ok,
        etcd_op_put(c->wkey, etcd_row_to_json(row.holder, row.generation, c->stored, row.fence)));
    if ((rc = wgrant_extend(s, &r[2], c->gkey, c->stored, c->now_ms, t->cmp, t->ok)) != 0)
        return rc;
    etcd_add(s, t->ok, etcd_op_lease_max(s, c->ns, c->lease->granted_units));
    hold_ops(s, c, t->fail);
    t->n_fail = 4;
    t->history = &c->history;
    return ETCD_TXN_SEND;
}

/* Renewal is idempotent (E = max): after an unknown outcome, read and redo. */
int etcd_lease_renew(struct store *st, const char *ns, struct idmint__lease *lease,
                     uint64_t until_unit, int64_t now_ms)
{
    static const struct etcd_txn_plan plan = {
        .what = "renewing a worker lease",
        .flags = ETCD_TXN_BACKOFF,
        .n_reads = 4,
        .read = hold_read,
        .audit_at = -1,
        .judge = renew_judge,
    };
    struct etcd_store *s = (struct etcd_store *)st;
    struct hold_call c = {.n_keys = 3,
                          .ns = ns,
                          .lease = lease,
                          .until_unit = until_unit,
                          .history = {"", 0, 0},
                          .now_ms = now_ms};
    int rc;

    etcd_call_begin(s);
    if ((rc = etcd_key_ns(s, ns, c.key2)) != 0 ||
        (rc = etcd_key_lease(s, ns, lease->region, lease->worker_id, c.wkey)) != 0 ||
        (rc = etcd_key_wgrant(s, ns, lease->region, lease->worker_id, lease->generation, c.gkey)) !=
            0)
        return rc;
    if ((rc = etcd_txn_run(s, &plan, &c)) == 0) {
        lease->lease_until = c.stored;
        lease->history = c.history;
    }
    return rc;
}

/* Our release or force applied in an earlier attempt: its stored E from the audit record. */
static int until_from_audit(struct etcd_store *s, const struct etcd_kv *kv, uint64_t *until)
{
    json_t *r = etcd_audit_result(s, kv);
    int rc = 0;

    if (r == NULL)
        return IDMINT_ESTORE;
    if (etcd_get_u64(r, "until", until) != 0)
        rc = etcd_bad_value(s, kv->key, "the result of a release");
    json_decref(r);
    return rc;
}

/* Our release applied in an earlier attempt: its E, and the history read with it. */
static int release_applied(struct etcd_store *s, void *ctx, const struct etcd_range *r, size_t n)
{
    struct hold_call *c = ctx;
    int rc = until_from_audit(s, etcd_range_one(&r[1]), &c->stored);

    (void)n;
    if (rc == 0)
        rc = etcd_history_applied(s, etcd_range_one(&r[3]), etcd_range_one(&r[1]), s->call_tip,
                                  &c->history);
    return rc;
}

static int release_judge(struct etcd_store *s, void *ctx, const struct etcd_range *r, size_t n,
                         int lost, struct etcd_txn *t)
{
    struct hold_call *c = ctx;
    struct etcd_row row;
    char detail[256];
    int rc;

    (void)n;
    (void)lost;
    if ((rc = lease_is_held(s, &r[0], c->lease, &row)) <= 0)
        return rc == 0 ? idmint__store_lease_lost(c->ns, c->lease) : rc;
    /* Never below the fence (what the previous holder may have minted),
     * never above the holder's own E: the clamp is here, whatever the
     * caller sends. */
    c->stored = c->until_unit > row.fence ? c->until_unit : row.fence;
    if (c->stored > row.until)
        c->stored = row.until;
    idmint__store_lease_detail(c->lease, row.until, c->stored, detail, sizeof(detail));
    etcd_add(s, t->cmp, etcd_cmp_mod(c->wkey, row.mod_rev));
    etcd_add(s, t->cmp, etcd_cmp_absent(c->key2));
    etcd_add(s, t->ok,
             etcd_op_put(c->wkey, etcd_row_to_json("", row.generation, c->stored, row.fence)));
    etcd_add(
        s, t->ok,
        etcd_op_put(c->key2, etcd_audit_json(c->now_ms, c->actor, "worker.release", c->ns, detail,
                                             json_pack("{s:o}", "until", etcd_j_u64(c->stored)))));
    if ((rc = wgrant_extend(s, &r[2], c->gkey, c->stored, c->now_ms, t->cmp, t->ok)) != 0)
        return rc;
    hold_ops(s, c, t->fail);
    t->n_fail = 4;
    t->history = &c->history;
    return ETCD_TXN_SEND;
}

int etcd_lease_release(struct store *st, const char *ns, struct idmint__lease *lease,
                       uint64_t final_unit, const char *actor, int64_t now_ms)
{
    static const struct etcd_txn_plan plan = {
        .what = "releasing a worker lease",
        .flags = ETCD_TXN_BACKOFF,
        .n_reads = 4,
        .read = hold_read,
        .audit_at = 1,
        .applied = release_applied,
        .judge = release_judge,
    };
    struct etcd_store *s = (struct etcd_store *)st;
    struct hold_call c = {.n_keys = 3,
                          .ns = ns,
                          .lease = lease,
                          .until_unit = final_unit,
                          .history = {"", 0, 0},
                          .actor = actor,
                          .now_ms = now_ms};
    char opid[ETCD_OPID_LEN + 1];
    int rc;

    etcd_call_begin(s);
    if ((rc = etcd_opid_new(opid)) != 0 || (rc = etcd_key_audit(s, opid, c.key2)) != 0 ||
        (rc = etcd_key_lease(s, ns, lease->region, lease->worker_id, c.wkey)) != 0 ||
        (rc = etcd_key_wgrant(s, ns, lease->region, lease->worker_id, lease->generation, c.gkey)) !=
            0)
        return rc;
    if ((rc = etcd_txn_run(s, &plan, &c)) == 0) {
        lease->lease_until = c.stored;
        lease->history = c.history;
    }
    return rc;
}

int etcd_lease_list(struct store *st, const char *ns, idmint_worker_info **out, size_t *n)
{
    struct etcd_store *s = (struct etcd_store *)st;
    idmint_worker_info *list = NULL;
    struct etcd_range r[1];
    char sub[ETCD_KEY_MAX];
    size_t i;
    int rc;

    etcd_call_begin(s);
    snprintf(sub, sizeof(sub), "/lease/%s/", ns);
    if ((rc = etcd_read_prefix(s, sub, r)) == 0 && r[0].n > 0 &&
        (list = calloc(r[0].n, sizeof(*list))) == NULL)
        rc = etcd_oom(s, "listing worker ids");
    for (i = 0; rc == 0 && i < r[0].n; i++) {
        struct etcd_row row;

        if ((rc = etcd_row_from_kv(s, &r[0].kvs[i], &row)) != 0)
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
    etcd_ranges_free(r, 1);
    return rc;
}

static int force_judge(struct etcd_store *s, void *ctx, const struct etcd_range *r, size_t n,
                       int lost, struct etcd_txn *t)
{
    struct hold_call *c = ctx;
    struct etcd_row row;
    char detail[256];
    uint64_t until;
    int rc;

    (void)n;
    (void)lost;
    if (etcd_range_one(&r[0]) == NULL)
        return idmint__fail(IDMINT_ENOTFOUND, "namespace '%s' has no worker id %u in region %u",
                            c->ns, (unsigned)c->worker_id, (unsigned)c->region);
    if ((rc = etcd_row_from_kv(s, etcd_range_one(&r[0]), &row)) != 0)
        return rc;
    /* The cap bounds a forged or runaway E; the new E is also the fence. */
    until = row.until < c->until_unit ? row.until : c->until_unit;
    idmint__store_force_detail(c->region, c->worker_id, row.holder, row.generation, row.until,
                               until, detail, sizeof(detail));
    etcd_add(s, t->cmp, etcd_cmp_mod(c->wkey, row.mod_rev));
    etcd_add(s, t->cmp, etcd_cmp_absent(c->key2));
    etcd_add(s, t->ok,
             etcd_op_put(c->wkey, etcd_row_to_json("", row.generation + 1, until, until)));
    etcd_add(s, t->ok,
             etcd_op_put(c->key2,
                         etcd_audit_json(c->now_ms, c->actor, "worker.force_release", c->ns, detail,
                                         json_pack("{s:o}", "until", etcd_j_u64(until)))));
    hold_ops(s, c, t->fail);
    t->n_fail = 3;
    t->history = &c->history; /* the counter grew; nobody to tell */
    return ETCD_TXN_SEND;
}

int etcd_lease_force_release(struct store *st, const char *ns, uint32_t region, uint32_t worker_id,
                             uint64_t max_until_unit, const char *actor, int64_t now_ms)
{
    static const struct etcd_txn_plan plan = {
        .what = "forcing a worker lease free",
        .flags = ETCD_TXN_BACKOFF,
        .n_reads = 3,
        .read = hold_read,
        .audit_at = 1,
        .judge = force_judge,
    };
    struct etcd_store *s = (struct etcd_store *)st;
    struct hold_call c = {.n_keys = 2,
                          .ns = ns,
                          .region = region,
                          .worker_id = worker_id,
                          .until_unit = max_until_unit,
                          .actor = actor,
                          .now_ms = now_ms};
    char opid[ETCD_OPID_LEN + 1];
    int rc;

    etcd_call_begin(s);
    if ((rc = etcd_opid_new(opid)) != 0 || (rc = etcd_key_audit(s, opid, c.key2)) != 0 ||
        (rc = etcd_key_lease(s, ns, region, worker_id, c.wkey)) != 0)
        return rc;
    return etcd_txn_run(s, &plan, &c);
}
