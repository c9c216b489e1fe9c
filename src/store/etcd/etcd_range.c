/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Range reservations on etcd: one txn that compares the namespace key and
 * the request record's absence, in steps over the views it reads (enum
 * reserve_view), with the queue (etcd_queue.c) deciding when a caller
 * among many sends. Also forgetting a replayed incarnation's records.
 */
#include "etcd_internal.h"

/*
 * The ranges a reservation reads, in this order. A failed txn's failure
 * branch reads them too, with the records of the requests it would have
 * granted from RESERVE_GRANTED on; the history key is always the last.
 */
enum reserve_view {
    RESERVE_NS,      /* the namespace key: bounds, flag and next_value */
    RESERVE_RECORD,  /* this request's record: there, the request was answered */
    RESERVE_WAITING, /* the oldest waiting requests, ETCD_COMBINE_MAX + 1 of them */
    RESERVE_AHEAD,   /* how many wait before this request (a count, no keys) */
    RESERVE_GRANTED, /* failure branch: records of the waiting it granted; a read: history */
};

/* One reservation call. */
struct reserve_call {
    const char *ns, *incarnation, *request_id;
    uint64_t count;
    int64_t now_ms;
    char nkey[ETCD_KEY_MAX];           /* P/ns/NAME */
    char ikey[ETCD_KEY_MAX];           /* the request's record */
    char pkey[ETCD_KEY_MAX];           /* the request, waiting */
    char wait_key[ETCD_KEY_MAX];       /* P/pend/NAME/: every waiting request */
    char wait_end[ETCD_KEY_MAX];       /* the end of their range */
    char fp[IDMINT_HOLDER_FP_LEN + 1]; /* the incarnation's fingerprint */
    struct idmint__range res;          /* the answer; its origin is an input */
    struct etcd_turn turn;             /* the queue's view of the namespace while waiting */
    idmint_ns_info after;              /* the namespace as the txn in flight writes it */
    int64_t ns_rev;                    /* the namespace's revision the txn in flight compares */
    size_t n_records;                  /* others' records the txn in flight grants */
    int is_seen;    /* this attempt starts from what this store's last reservation wrote */
    int is_waiting; /* the request waits under P/pend/ */
    int is_retry;   /* the last txn lost on a waiting request alone: send again at once */
};

static void reserve_view_ops(struct etcd_store *s, const struct reserve_call *c, json_t *ops)
{
    etcd_add(s, ops, etcd_op_range(c->nkey, NULL));
    etcd_add(s, ops, etcd_op_range(c->ikey, NULL));
    etcd_add(s, ops, etcd_op_range_first(c->wait_key, c->wait_end, ETCD_COMBINE_MAX + 1));
    etcd_add(s, ops, etcd_op_count(c->wait_key, c->pkey));
}

/* The read; none when the attempt starts from what this store wrote (r stays empty). */
static int reserve_read(struct etcd_store *s, void *ctx, struct etcd_range *r)
{
    struct reserve_call *c = ctx;
    json_t *ops;

    if (c->is_seen)
        return 0;
    ops = json_array();
    reserve_view_ops(s, c, ops);
    etcd_add(s, ops, etcd_op_range(s->hkey, NULL));
    return etcd_read(s, ops, r, ETCD_RESERVE_READS);
}

/*
 * The record is there: a retry after a lost reply, answered from the
 * record, never reserved twice; a replay is no news, the grant was counted
 * when it was made. A request that waited was granted by another caller's
 * txn: that txn's history is its news.
 */
static int reserve_answered(struct etcd_store *s, void *ctx, const struct etcd_range *r, size_t n)
{
    struct reserve_call *c = ctx;
    const struct etcd_kv *ikv = etcd_range_one(&r[RESERVE_RECORD]),
                         *hkv = etcd_range_one(&r[n - 1]);
    uint64_t saved_count = 0;
    int rc;

    memset(&c->res.history, 0, sizeof(c->res.history));
    if ((rc = etcd_record_from_kv(s, ikv, &saved_count, &c->res)) == 0 && saved_count != c->count)
        rc = idmint__store_range_replay_conflict(c->ns, c->incarnation, c->request_id, saved_count,
                                                 c->count);
    /* Schema 5: the pair of the grant that made the record, under
     * today's id; the holder proves it before it uses the range,
     * as the record may be a restored cluster's (src/history.c). */
    if (rc == 0 && c->res.history.tip != 0)
        rc = hkv == NULL
                 ? etcd_history_missing(s)
                 : etcd_history_at(s, hkv, ikv->create_rev, c->res.history.tip, &c->res.history);
    else if (rc == 0 && c->is_waiting)
        rc = etcd_history_applied(s, hkv, ikv, 0, &c->res.history);
    return rc;
}

/*
 * Others wait: join them, and send a txn only in turn. A txn that lost on a
 * waiting request alone (the namespace as it read it) goes again at once:
 * its failure branch read that request's record. ETCD_TXN_SEND, ETCD_TXN_READ
 * (posted, or waited: read again) or a negative code.
 */
static int reserve_queue(struct etcd_store *s, struct reserve_call *c, const struct etcd_range *r)
{
    size_t place = 0, others;
    uint64_t wait_us = 0;
    int rc;

    if (c->is_seen)
        return ETCD_TXN_SEND;
    others = etcd_queue_others(&r[RESERVE_WAITING], c->pkey, &place);
    if (c->is_retry || (!c->is_waiting && others == 0))
        return ETCD_TXN_SEND;
    if (!c->is_waiting) {
        if ((rc = etcd_queue_post(
                 s, c->ikey, c->pkey,
                 etcd_queue_entry_json(s, c->fp, &c->res.origin, c->count, c->now_ms))) != 0)
            return rc;
        c->is_waiting = 1;
        return ETCD_TXN_READ; /* the read shows its place */
    }
    if (place > ETCD_COMBINE_MAX)
        place = (size_t)r[RESERVE_AHEAD].count;
    if (etcd_queue_turn(s, place, others, etcd_range_one(&r[RESERVE_NS]), &c->turn, &wait_us))
        return ETCD_TXN_SEND;
    if ((rc = etcd_queue_wait(s, c->ns, wait_us)) != 0)
        return rc;
    return ETCD_TXN_READ;
}

/*
 * The txn: compare the namespace at @p c->ns_rev and the record absent; put
 * the record, its grant, the namespace moved on, and grant the oldest
 * waiting requests with it.
 */
static int reserve_build(struct etcd_store *s, struct reserve_call *c, const struct etcd_range *r,
                         size_t n, struct etcd_txn *t)
{
    int rc;

    c->n_records = 0;
    etcd_add(s, t->cmp, etcd_cmp_mod(c->nkey, c->ns_rev));
    etcd_add(s, t->cmp, etcd_cmp_absent(c->ikey));
    reserve_view_ops(s, c, t->fail);
    c->after.next_value = c->res.end;
    if ((rc = etcd_range_grant_ops(s, c->ns, c->ikey, c->fp, c->count, &c->res, c->now_ms,
                                   t->ok)) != 0 ||
        (!c->is_seen &&
         (rc = etcd_queue_grant(s, c->ns, c->pkey, c->ikey, &r[RESERVE_WAITING],
                                &r[RESERVE_GRANTED], n - ETCD_RESERVE_READS, &c->after, c->now_ms,
                                t->cmp, t->ok, t->fail, &c->n_records)) != 0))
        return rc;
    if (c->is_waiting)
        etcd_add(s, t->ok, etcd_op_delete(c->pkey, NULL));
    etcd_add(s, t->ok, etcd_op_put(c->nkey, etcd_ns_to_json(&c->after, c->after.created_ms)));
    etcd_add(s, t->fail, etcd_op_range(s->hkey, NULL));
    t->n_fail = ETCD_RESERVE_READS + c->n_records;
    t->history = &c->res.history;
    return ETCD_TXN_SEND;
}

static int reserve_judge(struct etcd_store *s, void *ctx, const struct etcd_range *r, size_t n,
                         int lost, struct etcd_txn *t)
{
    struct reserve_call *c = ctx;
    const struct etcd_kv *nkv;
    int rc;

    (void)lost;
    if (c->is_seen) {
        c->after = s->seen_ns;
        c->ns_rev = s->seen_rev;
    } else {
        if ((nkv = etcd_range_one(&r[RESERVE_NS])) == NULL)
            return idmint__store_ns_missing(c->ns);
        if ((rc = etcd_ns_from_kv(s, nkv, &c->after)) != 0)
            return rc;
        c->ns_rev = nkv->mod_rev;
    }
    if ((rc = idmint__store_range_grant(&c->after, c->count, &c->res)) != 0) {
        if (!c->is_seen)
            return rc;
        /* Refused on what this store wrote: decide on what etcd holds now. */
        c->is_seen = 0;
        return ETCD_TXN_READ;
    }
    if ((rc = reserve_queue(s, c, r)) != ETCD_TXN_SEND)
        return rc;
    return reserve_build(s, c, r, n, t);
}

/* Remember the namespace as written, and go on granting what waits. */
static int reserve_done(struct etcd_store *s, void *ctx, const struct etcd_range *last)
{
    struct reserve_call *c = ctx;

    (void)last;
    if (s->applied_rev > 0) {
        memcpy(s->seen_key, c->nkey, strlen(c->nkey) + 1);
        s->seen_ns = c->after;
        s->seen_rev = s->applied_rev;
    }
    if (c->n_records > 0 || c->is_waiting)
        etcd_queue_serve(s, c->ns, c->nkey, c->wait_key, c->wait_end, c->now_ms);
    return 0;
}

/*
 * Lost (or unknown: read again). The failure branch is the read for the
 * next attempt: fresh, as the compare saw it. A caller that lost on a fresh
 * view leaves its request waiting and from then on waits its turn
 * (etcd_queue_turn), where it used to back off and race again: with
 * hundreds racing on one key, one compare won per Raft round and every
 * loser's txn was a proposal of its own. Only a loss on a fresh view counts.
 */
static int reserve_lost(struct etcd_store *s, void *ctx, const struct etcd_range *r, size_t n,
                        int rc)
{
    struct reserve_call *c = ctx;
    const struct etcd_kv *nkv;
    int have = rc == 0, counts = rc == 0 && !c->is_seen;

    (void)n;
    c->is_retry = have && !c->is_seen && c->n_records > 0 &&
                  (nkv = etcd_range_one(&r[RESERVE_NS])) != NULL && nkv->mod_rev == c->ns_rev;
    if (rc == 0 && !c->is_seen && !c->is_waiting) {
        if ((rc = etcd_queue_post(
                 s, c->ikey, c->pkey,
                 etcd_queue_entry_json(s, c->fp, &c->res.origin, c->count, c->now_ms))) != 0)
            return rc;
        c->is_waiting = 1;
        have = 0; /* read again: its place */
    }
    if (have)
        etcd_contended_extend(s);
    c->is_seen = 0;
    return (counts ? ETCD_TXN_COUNTS : 0) | (have ? 0 : ETCD_TXN_REREAD);
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
 * they were left) and sends a txn only in its turn (etcd_queue_turn): when its
 * request is the oldest, or the namespace stopped moving. Every txn that
 * commits grants, with its own, up to ETCD_COMBINE_MAX of the oldest
 * waiting (etcd_queue_grant), and one that met others waiting goes on granting
 * for a few more txns (etcd_queue_serve): a round answers many, oldest first.
 * A waiting caller reads its record as a retry after a lost reply would,
 * and its history is that of the txn that granted it. A waiting request
 * and its record never both exist through our writes: posting compares the
 * record absent, and every txn that writes a record deletes the request in
 * it. A waiting key that does have a record (not ours) or cannot be read is
 * deleted, granting nothing.
 */
int etcd_range_reserve(struct store *st, const char *ns, const char *incarnation,
                       const char *request_id, uint64_t count, int64_t now_ms,
                       struct idmint__range *out)
{
    static const struct etcd_txn_plan plan = {
        .what = "reserving a range",
        .n_reads = ETCD_RESERVE_READS,
        .read = reserve_read,
        .audit_at = RESERVE_RECORD,
        .applied = reserve_answered,
        .judge = reserve_judge,
        .after_lost = reserve_lost,
        .done = reserve_done,
    };
    struct etcd_store *s = (struct etcd_store *)st;
    struct reserve_call call, *c = &call;
    int rc;

    memset(c, 0, sizeof(*c));
    etcd_call_begin(s);
    c->ns = ns;
    c->incarnation = incarnation;
    c->request_id = request_id;
    c->count = count;
    c->now_ms = now_ms;
    c->res.origin = out->origin; /* who asks: an input */
    if ((rc = etcd_key_ns(s, ns, c->nkey)) != 0 ||
        (rc = etcd_key_request(s, "inc", ns, incarnation, request_id, c->ikey)) != 0 ||
        (rc = etcd_key_waiting(s, ns, now_ms, incarnation, request_id, c->pkey)) != 0 ||
        (rc = etcd_key_fmt(s, c->wait_key, "/pend/%s/", ns)) != 0)
        return rc;
    etcd_key_prefix_end(c->wait_key, c->wait_end);
    idmint__holder_fingerprint(incarnation, c->fp);
    /* Used once: only a write this call applies sets it again. */
    c->is_seen = strcmp(s->seen_key, c->nkey) == 0;
    s->seen_key[0] = '\0';
    if ((rc = etcd_txn_run(s, &plan, c)) == 0)
        *out = c->res;
    return rc;
}

int etcd_range_forget(struct store *st, const char *ns, const char *incarnation,
                      const char *before_request_id, uint64_t *forgotten)
{
    struct etcd_store *s = (struct etcd_store *)st;
    char start[ETCD_KEY_MAX], end[ETCD_KEY_MAX];
    json_t *req, *reply = NULL;
    uint64_t deleted = 0;
    size_t len;
    int rc;

    etcd_call_begin(s);
    if ((rc = etcd_key_inc_prefix(s, ns, incarnation, start)) != 0)
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
    req = json_pack("{s:o,s:o}", "key", etcd_j_key(start), "range_end", etcd_j_key(end));
    if ((rc = etcd_post(s, "/v3/kv/deleterange", req, 0, &reply)) != 0)
        return rc;
    if (etcd_get_u64(reply, "deleted", &deleted) != 0)
        rc = idmint__fail(IDMINT_ESTORE, "%s: a deleterange answer without a count", s->name);
    json_decref(reply);
    if (rc == 0 && forgotten != NULL)
        *forgotten = deleted;
    return rc;
}
