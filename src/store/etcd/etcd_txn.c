/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The one optimistic loop of the etcd store: read, judge, compare-and-write,
 * and on a lost compare judge again what the failure branch read
 * (etcd_txn_run over a plan), plus what every granting write adds (the
 * history key compared and read back, the call's tip) and the waits after
 * a loss. Twelve hand-written copies of the loop had drifted in small ways;
 * a plan names what differs instead.
 */
#include "etcd_internal.h"

int etcd_call_tip(struct etcd_store *s, uint64_t *tip)
{
    int rc = 0;

    if (s->call_tip == 0)
        rc = idmint__store_history_tip(&s->call_tip);
    *tip = s->call_tip;
    return rc;
}

uint64_t etcd_jitter_next(struct etcd_store *s)
{
    s->jitter ^= s->jitter << 13;
    s->jitter ^= s->jitter >> 7;
    s->jitter ^= s->jitter << 17;
    return s->jitter;
}

void etcd_contended_extend(struct etcd_store *s)
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
    idmint__sleep_us(etcd_jitter_next(s) % span_us);
    etcd_contended_extend(s);
}

int etcd_lost_too_often(const struct etcd_store *s, const char *what)
{
    return idmint__fail(IDMINT_EUNAVAILABLE, "%s: %s lost its compare %d times in a row", s->name,
                        what, ETCD_MAX_LOST);
}

int etcd_history_missing(const struct etcd_store *s)
{
    return idmint__fail(IDMINT_ERESTORED,
                        "%s: the history key %s is missing: the prefix was restored from a "
                        "snapshot taken before it existed, or the key was deleted; nothing was "
                        "granted. Run 'idmint authority fence' on it (docs/operations.md)",
                        s->name, s->hkey);
}

int etcd_history_at(const struct etcd_store *s, const struct etcd_kv *kv, int64_t rev, uint64_t tip,
                    struct idmint__history *out)
{
    char id[33];
    int rc;

    memset(out, 0, sizeof(*out));
    if (kv == NULL)
        return idmint__fail(IDMINT_ESTORE, "%s: a granting txn did not read %s back", s->name,
                            s->hkey);
    if ((rc = etcd_history_id_of(s, kv, id)) != 0 || rev <= 0)
        return rc;
    memcpy(out->id, id, sizeof(out->id));
    out->seq = (uint64_t)rev;
    out->tip = tip;
    return 0;
}

int etcd_history_applied(const struct etcd_store *s, const struct etcd_kv *hkv,
                         const struct etcd_kv *akv, uint64_t tip, struct idmint__history *out)
{
    memset(out, 0, sizeof(*out));
    if (hkv == NULL || hkv->mod_rev >= akv->create_rev)
        return 0;
    return etcd_history_at(s, hkv, akv->create_rev, tip, out);
}

int etcd_grant_write(struct etcd_store *s, json_t *cmp, json_t *ok, json_t *fail,
                     struct etcd_range *r, size_t n, struct idmint__history *hist)
{
    struct etcd_range last;
    char text[24];
    uint64_t tip = 0;
    int rc = etcd_call_tip(s, &tip);

    if (rc != 0) {
        json_decref(cmp);
        json_decref(ok);
        json_decref(fail);
        return rc;
    }
    snprintf(text, sizeof(text), "%llu", (unsigned long long)tip);
    etcd_add(s, cmp, etcd_cmp_exists(s->hkey));
    etcd_add(s, ok, etcd_op_put_text(s->tkey, text)); /* the chain: this txn's (seq, tip) */
    etcd_add(s, ok, etcd_op_range(s->hkey, NULL));
    rc = etcd_write(s, cmp, ok, fail, r, n, &last);
    if (rc == ETCD_APPLIED) {
        rc = etcd_history_at(s, etcd_range_one(&last), s->applied_rev, tip, hist);
        etcd_range_free(&last);
        return rc != 0 ? rc : ETCD_APPLIED;
    }
    if (rc == 0 && etcd_range_one(&r[n - 1]) == NULL) {
        etcd_ranges_free(r, n);
        return etcd_history_missing(s);
    }
    return rc;
}

int etcd_txn_run(struct etcd_store *s, const struct etcd_txn_plan *p, void *ctx)
{
    struct etcd_range r[ETCD_TXN_MAX_RANGES], last;
    size_t n = 0; /* ranges of r that hold a read or a failure branch */
    int lost = 0, is_read = 0, is_sent = 0, rc;

    memset(r, 0, sizeof(r));
    memset(&last, 0, sizeof(last));
    for (;;) {
        struct etcd_txn t = {NULL, NULL, NULL, 0, NULL};
        int is_last = lost == ETCD_MAX_LOST;

        if (is_last && !(p->flags & ETCD_TXN_JUDGE_LAST)) {
            rc = etcd_lost_too_often(s, p->what);
            break;
        }
        if (!is_read && p->read != NULL && (is_sent || !(p->flags & ETCD_TXN_BLIND))) {
            etcd_ranges_free(r, n);
            n = p->n_reads;
            if ((rc = p->read(s, ctx, r)) != 0)
                break;
            is_read = 1;
        }
        if (is_read && p->audit_at >= 0 && etcd_range_one(&r[p->audit_at]) != NULL) {
            /* An earlier attempt of this call applied (its reply was lost). */
            rc = p->applied != NULL ? p->applied(s, ctx, r, n) : 0;
            break;
        }
        t.cmp = json_array();
        t.ok = json_array();
        t.fail = json_array();
        rc = p->judge(s, ctx, is_read ? r : NULL, is_read ? n : 0, lost, &t);
        if (rc == ETCD_TXN_SEND && is_last)
            rc = etcd_lost_too_often(s, p->what);
        if (rc != ETCD_TXN_SEND) {
            json_decref(t.cmp);
            json_decref(t.ok);
            json_decref(t.fail);
            if (rc != ETCD_TXN_READ)
                break;
            is_read = 0;
            continue;
        }
        /* The judge built the txn from r: it may go now. */
        etcd_ranges_free(r, n);
        n = t.n_fail;
        is_sent = 1;
        if (t.history != NULL)
            rc = etcd_grant_write(s, t.cmp, t.ok, t.fail, r, n, t.history);
        else
            rc = etcd_write(s, t.cmp, t.ok, t.fail, r, n,
                            (p->flags & ETCD_TXN_READ_BACK) ? &last : NULL);
        if (rc == ETCD_UNKNOWN && p->unknown != NULL)
            rc = p->unknown(s, ctx);
        if (rc == ETCD_APPLIED) {
            rc = p->done != NULL ? p->done(s, ctx, &last) : 0;
            break;
        }
        if (rc < 0)
            break;
        if (p->after_lost != NULL) {
            int verdict = p->after_lost(s, ctx, r, n, rc);

            if (verdict < 0) {
                rc = verdict;
                break;
            }
            is_read = !(verdict & ETCD_TXN_REREAD);
            if (verdict & ETCD_TXN_COUNTS)
                lost++;
        } else {
            /* Lost: the failure branch read the state the compare saw, and
             * is the next read. Unknown: read again (our audit key tells). */
            is_read = rc == 0 && n > 0;
            if (rc == 0 && (p->flags & ETCD_TXN_BACKOFF))
                lost_backoff(s, lost);
            lost++;
        }
        if (!is_read) {
            etcd_ranges_free(r, n);
            n = 0;
        }
    }
    etcd_ranges_free(r, n);
    etcd_range_free(&last);
    return rc;
}
