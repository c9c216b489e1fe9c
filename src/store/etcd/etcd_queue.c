/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The reservation queue: in a start burst only one compare on a namespace
 * key wins per Raft round, so callers that lost leave their request
 * waiting under P/pend/NAME/ and send a txn only in their turn, and every
 * txn that commits grants the oldest waiting with its own. Time is read
 * and waited for through src/clock.c only; the store converts none.
 */
#include "etcd_internal.h"

json_t *etcd_queue_entry_json(struct etcd_store *s, const char *fp,
                              const struct idmint__origin *origin, uint64_t count, int64_t now_ms)
{
    json_t *o = json_pack("{s:s,s:o,s:o}", "holder", fp, "count", etcd_j_u64(count), "created_ms",
                          etcd_j_i64(now_ms));

    etcd_origin_to_json(s, o, origin);
    return o;
}

struct etcd_waiting {
    uint64_t count;
    char fp[IDMINT_HOLDER_FP_LEN + 1];
    struct idmint__origin origin;
};

/* The waiting request in @p kv into @p w; -1 if it is not what etcd_queue_entry_json writes. */
static int waiting_from_kv(const struct etcd_store *s, const struct etcd_kv *kv,
                           struct etcd_waiting *w)
{
    json_t *o = etcd_kv_json(s, kv, "a waiting range request");
    uint64_t pid = 0;
    int rc = -1;

    memset(w, 0, sizeof(*w));
    if (o == NULL)
        return -1;
    if (etcd_get_u64(o, "count", &w->count) == 0 && w->count > 0 &&
        etcd_get_text(o, "holder", w->fp, sizeof(w->fp)) == 0 &&
        etcd_get_text(o, "host", w->origin.host, sizeof(w->origin.host)) == 0 &&
        etcd_get_text(o, "program", w->origin.program, sizeof(w->origin.program)) == 0 &&
        etcd_get_text(o, "token", w->origin.token, sizeof(w->origin.token)) == 0 &&
        etcd_get_small(o, "pid", UINT32_MAX, &pid) == 0) {
        w->origin.pid = (uint32_t)pid;
        rc = 0;
    }
    json_decref(o);
    return rc;
}

int etcd_range_grant_ops(struct etcd_store *s, const char *ns, const char *ikey, const char *fp,
                         uint64_t count, const struct idmint__range *res, int64_t now_ms,
                         json_t *ok)
{
    char gkey[ETCD_KEY_MAX], agekey[ETCD_KEY_MAX];
    uint64_t tip = 0;
    int rc;

    if ((rc = etcd_key_rgrant(s, ns, res->start, gkey)) != 0 ||
        (rc = etcd_key_age(s, IDMINT__KEEP_RANGE_GRANTS, now_ms, gkey, agekey)) != 0 ||
        (rc = etcd_call_tip(s, &tip)) != 0)
        return rc;
    /* With the tip of the txn that writes it: a replay carries the pair of
     * its grant (seq: the record's create_revision). */
    etcd_add(
        s, ok,
        etcd_op_put(ikey, json_pack("{s:o,s:o,s:o,s:o,s:o}", "count", etcd_j_u64(count), "start",
                                    etcd_j_u64(res->start), "end", etcd_j_u64(res->end),
                                    "created_ms", etcd_j_i64(now_ms), "htip", etcd_j_u64(tip))));
    /* The grant, with the record that makes a replay find it: a replay adds none. */
    etcd_add(s, ok, etcd_op_put(gkey, etcd_rgrant_json(s, fp, &res->origin, res->end, now_ms)));
    etcd_add(s, ok, etcd_op_put_text(agekey, ""));
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

int etcd_queue_grant(struct etcd_store *s, const char *ns, const char *own_pkey,
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
        etcd_add(s, cmp, etcd_cmp_mod(kv->key, kv->mod_rev));
        etcd_add(s, ok, etcd_op_delete(kv->key, NULL));
        granted++;
        memset(&res, 0, sizeof(res));
        if (etcd_waiting_record_key(s, ns, kv->key, ikey) != 0 || strcmp(ikey, own_ikey) == 0 ||
            ranges_hold(known, n_known, ikey) || keys_hold(answered, n_answered, ikey) ||
            waiting_from_kv(s, kv, &w) != 0 || idmint__store_range_grant(info, w.count, &res) != 0)
            continue;
        res.origin = w.origin;
        memcpy(answered[n_answered++], ikey, strlen(ikey) + 1);
        etcd_add(s, cmp, etcd_cmp_absent(ikey));
        etcd_add(s, fail, etcd_op_range(ikey, NULL));
        (*n_fail)++;
        if ((rc = etcd_range_grant_ops(s, ns, ikey, w.fp, w.count, &res, now_ms, ok)) != 0)
            return rc;
        info->next_value = res.end;
    }
    idmint__errmsg_clear();
    return 0;
}

int etcd_queue_post(struct etcd_store *s, const char *ikey, const char *pkey, json_t *value)
{
    struct etcd_range r[1];
    json_t *cmp = json_array(), *ok = json_array(), *fail = json_array();
    int rc;

    etcd_add(s, cmp, etcd_cmp_absent(ikey));
    etcd_add(s, ok, etcd_op_put(pkey, value));
    etcd_add(s, fail, etcd_op_range(ikey, NULL));
    rc = etcd_write(s, cmp, ok, fail, r, 1, NULL);
    etcd_ranges_free(r, 1);
    return rc < 0 ? rc : 0;
}

size_t etcd_queue_others(const struct etcd_range *waiting, const char *pkey, size_t *pos)
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

int etcd_queue_turn(struct etcd_store *s, size_t pos, size_t others, const struct etcd_kv *nkv,
                    struct etcd_turn *turn, uint64_t *wait_us)
{
    uint64_t now_ms = idmint__deadline_now_ms(), now_us = idmint__deadline_now_us(), rounds,
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
    *wait_us += etcd_jitter_next(s) % (*wait_us / 2 + 1);
    return 0;
}

void etcd_queue_serve(struct etcd_store *s, const char *ns, const char *nkey, const char *wait_key,
                      const char *wait_end, int64_t now_ms)
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
        etcd_add(s, ops, etcd_op_range(nkey, NULL));
        etcd_add(s, ops, etcd_op_range_first(wait_key, wait_end, ETCD_COMBINE_MAX));
        etcd_add(s, ops, etcd_op_range(s->hkey, NULL));
        if (etcd_read(s, ops, r, 3) != 0) {
            etcd_ranges_free(r, 3);
            break;
        }
        if ((nkv = etcd_range_one(&r[0])) == NULL || r[1].n == 0 ||
            etcd_ns_from_kv(s, nkv, &info) != 0) {
            etcd_ranges_free(r, 3);
            break;
        }
        cmp = json_array();
        ok = json_array();
        fl = json_array();
        etcd_add(s, cmp, etcd_cmp_mod(nkey, nkv->mod_rev));
        rc =
            etcd_queue_grant(s, ns, "", "", &r[1], NULL, 0, &info, now_ms, cmp, ok, fl, &n_records);
        json_decref(fl);
        fl = json_array();
        etcd_add(s, fl, etcd_op_range(s->hkey, NULL));
        if (rc == 0)
            etcd_add(s, ok, etcd_op_put(nkey, etcd_ns_to_json(&info, info.created_ms)));
        etcd_ranges_free(r, 3);
        if (rc != 0) {
            json_decref(cmp);
            json_decref(ok);
            json_decref(fl);
            break;
        }
        rc = etcd_grant_write(s, cmp, ok, fl, fail, 1, &history);
        etcd_ranges_free(fail, 1);
        if (rc != ETCD_APPLIED)
            break;
        if (s->applied_rev > 0 && strcmp(s->seen_key, nkey) == 0) {
            s->seen_ns = info;
            s->seen_rev = s->applied_rev;
        }
    }
    idmint__errmsg_clear();
}

int etcd_queue_wait(struct etcd_store *s, const char *ns, uint64_t wait_us)
{
    if (idmint__deadline_now_ms() + wait_us / 1000 >= s->call_start_ms + ETCD_CONTENDED_BUDGET_MS)
        return idmint__fail(IDMINT_EUNAVAILABLE,
                            "%s: reserving a range on '%s' waited %u ms behind other "
                            "requests, and its turn did not come",
                            s->name, ns, (unsigned)ETCD_CONTENDED_BUDGET_MS);
    idmint__sleep_us(wait_us);
    etcd_contended_extend(s);
    return 0;
}
