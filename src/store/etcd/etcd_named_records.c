/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Records (store.h, version 8) in etcd: key P/record/KEY holds the value
 * as text, and the key's own version (writes since it was made) is the
 * record's. A write compares the key's mod revision read by its judge and
 * our audit key's absence, so a retry after a lost reply finds its own
 * audit key and stops there.
 */
#include "etcd_internal.h"

struct record_call {
    char rkey[ETCD_KEY_MAX], akey[ETCD_KEY_MAX], opid[ETCD_OPID_LEN + 1];
    const char *key, *value, *actor, *action;
    uint64_t expect;
    int64_t now_ms;
};

static int record_key(const struct etcd_store *s, const char *key, char *out)
{
    return etcd_key_fmt(s, out, "/record/%s", key);
}

/* Copy @p kv's value into @p out, or refuse one that is not a record's text. */
static int record_value(const struct etcd_store *s, const struct etcd_kv *kv, char *out,
                        size_t size)
{
    if (kv->value_len == 0 || kv->value_len >= size || strlen(kv->value) != kv->value_len)
        return etcd_bad_value(s, kv->key, "a record's text");
    memcpy(out, kv->value, kv->value_len + 1);
    return 0;
}

int etcd_record_get(struct store *st, const char *key, char *value, size_t size, uint64_t *version)
{
    struct etcd_store *s = (struct etcd_store *)st;
    char rkey[ETCD_KEY_MAX];
    const struct etcd_kv *kv;
    struct etcd_range r[1];
    json_t *ops;
    int rc;

    etcd_call_begin(s);
    if ((rc = record_key(s, key, rkey)) != 0)
        return rc;
    ops = json_array();
    etcd_add(s, ops, etcd_op_range(rkey, NULL));
    if ((rc = etcd_read(s, ops, r, 1)) == 0) {
        kv = etcd_range_one(&r[0]);
        if (kv == NULL)
            rc = idmint__fail(IDMINT_ENOTFOUND, "etcd: no record '%s'", key);
        else if ((rc = record_value(s, kv, value, size)) == 0)
            *version = (uint64_t)kv->version;
    }
    etcd_ranges_free(r, 1);
    return rc;
}

static void record_ops(struct etcd_store *s, const struct record_call *c, json_t *ops)
{
    etcd_add(s, ops, etcd_op_range(c->rkey, NULL));
    etcd_add(s, ops, etcd_op_range(c->akey, NULL));
}

static int record_read(struct etcd_store *s, void *ctx, struct etcd_range *r)
{
    json_t *ops = json_array();

    record_ops(s, ctx, ops);
    return etcd_read(s, ops, r, 2);
}

static int record_put_judge(struct etcd_store *s, void *ctx, const struct etcd_range *r, size_t n,
                            int lost, struct etcd_txn *t)
{
    struct record_call *c = ctx;
    const struct etcd_kv *kv = etcd_range_one(&r[0]);
    uint64_t version = kv == NULL ? 0 : (uint64_t)kv->version;

    (void)n;
    (void)lost;
    if (version != c->expect)
        return idmint__fail(IDMINT_ECONFLICT,
                            "etcd: record '%s' changed since it was read (another writer)", c->key);
    etcd_add(s, t->cmp, kv == NULL ? etcd_cmp_absent(c->rkey) : etcd_cmp_mod(c->rkey, kv->mod_rev));
    etcd_add(s, t->cmp, etcd_cmp_absent(c->akey));
    etcd_add(s, t->ok, etcd_op_put_text(c->rkey, c->value));
    etcd_add(
        s, t->ok,
        etcd_op_put(c->akey, etcd_audit_json(c->now_ms, c->actor, c->action, "", c->value, NULL)));
    record_ops(s, c, t->fail);
    t->n_fail = 2;
    return ETCD_TXN_SEND;
}

int etcd_record_put(struct store *st, const char *key, const char *value, uint64_t expect,
                    const char *actor, const char *action, int64_t now_ms)
{
    static const struct etcd_txn_plan plan = {
        .what = "writing a record",
        .flags = ETCD_TXN_BACKOFF,
        .n_reads = 2,
        .read = record_read,
        .audit_at = 1,
        .judge = record_put_judge,
    };
    struct etcd_store *s = (struct etcd_store *)st;
    struct record_call c = {.key = key,
                            .value = value,
                            .actor = actor,
                            .action = action,
                            .expect = expect,
                            .now_ms = now_ms};
    int rc;

    etcd_call_begin(s);
    if ((rc = etcd_opid_new(c.opid)) != 0 || (rc = record_key(s, key, c.rkey)) != 0 ||
        (rc = etcd_key_audit(s, c.opid, c.akey)) != 0)
        return rc;
    return etcd_txn_run(s, &plan, &c);
}
