/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the etcd store keeps about itself: the fence (every namespace, the
 * history key and one audit key in one txn), the history check, the audit
 * list, the trace of grants and the prune of old ones by their age index.
 */
#include "etcd_internal.h"

/* The longest lease granted in @p ns, from @p maxl (every P/maxlease/ key). */
static uint64_t fence_longest(const struct etcd_store *s, const char *ns,
                              const struct etcd_range *maxl)
{
    char prefix[ETCD_KEY_MAX];
    uint64_t longest = 0, units;
    size_t i, len;

    if (etcd_key_fmt(s, prefix, "/maxlease/%s/", ns) != 0)
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
    int rc = etcd_key_ns(s, step->ns, key);

    for (i = 0; rc == 0 && kv == NULL && i < all->n; i++)
        if (strcmp(all->kvs[i].key, key) == 0)
            kv = &all->kvs[i];
    if (rc != 0)
        return rc;
    if (kv == NULL)
        return idmint__store_ns_missing(step->ns);
    if ((rc = etcd_ns_from_kv(s, kv, &info)) != 0)
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
    etcd_add(s, cmp, etcd_cmp_mod(key, kv->mod_rev));
    etcd_add(s, ok, etcd_op_put(key, etcd_ns_to_json(&info, info.created_ms)));
    etcd_add(s, steps, json_pack("{s:s,s:s}", "ns", step->ns, "detail", detail));
    return 0;
}

/* What a fence reads: every namespace key, the history key, our audit key, every longest-lease key.
 */
struct fence_call {
    char akey[ETCD_KEY_MAX], nkey[ETCD_KEY_MAX], nend[ETCD_KEY_MAX];
    char mkey[ETCD_KEY_MAX], mend[ETCD_KEY_MAX], detail[128], tip_text[24];
    const struct idmint__fence_step *steps;
    size_t n;
    const char *history_id;
    const char *actor;
    int64_t now_ms;
};

static int fence_read(struct etcd_store *s, void *ctx, struct etcd_range *r)
{
    struct fence_call *c = ctx;
    json_t *ops = json_array();

    etcd_add(s, ops, etcd_op_range(c->nkey, c->nend));
    etcd_add(s, ops, etcd_op_range(s->hkey, NULL));
    etcd_add(s, ops, etcd_op_range(c->akey, NULL));
    etcd_add(s, ops, etcd_op_range(c->mkey, c->mend));
    return etcd_read(s, ops, r, 4);
}

/* A lost race reads everything again: the failure branch reads nothing. */
static int fence_judge(struct etcd_store *s, void *ctx, const struct etcd_range *r, size_t n,
                       int lost, struct etcd_txn *t)
{
    struct fence_call *c = ctx;
    json_t *list = json_array(), *audit;
    const struct etcd_kv *hkv;
    size_t i;
    int rc = 0;

    (void)n;
    (void)lost;
    for (i = 0; i < c->n && rc == 0; i++)
        rc = fence_step(s, &c->steps[i], &r[0], &r[3], t->cmp, t->ok, list);
    if (rc != 0) {
        json_decref(list);
        return rc;
    }
    hkv = etcd_range_one(&r[1]);
    etcd_add(s, t->cmp, etcd_cmp_mod(s->hkey, hkv != NULL ? hkv->mod_rev : 0));
    etcd_add(s, t->cmp, etcd_cmp_absent(c->akey));
    /* No backup mark to clear: etcd's snapshots are its own tools'. The
     * store id is kept, the id replaced goes first in the lineage, and
     * the fence logs a tip of its own. */
    etcd_add(s, t->ok, etcd_op_put(s->hkey, etcd_history_fenced(s, hkv, c->history_id, c->now_ms)));
    etcd_add(s, t->ok, etcd_op_put_text(s->tkey, c->tip_text));
    audit = etcd_audit_json(c->now_ms, c->actor, "authority.fence", "", c->detail, NULL);
    if (audit != NULL && json_object_set_new(audit, "steps", list) != 0) {
        json_decref(audit);
        audit = NULL;
    } else if (audit == NULL) {
        json_decref(list);
    }
    etcd_add(s, t->ok, etcd_op_put(c->akey, audit));
    t->n_fail = 0;
    return ETCD_TXN_SEND;
}

/*
 * One txn: every namespace of @p steps as it was read (its mod_revision
 * compared), the history key and one audit key, put together. The audit
 * key holds the steps' records and the summary: records in one key share
 * its revision, so keeping them in one key keeps them together in every
 * page of audit_list.
 */
int etcd_fence(struct store *st, const struct idmint__fence_step *steps, size_t n,
               const char *history_id, const char *actor, int64_t now_ms)
{
    static const struct etcd_txn_plan plan = {
        .what = "fencing",
        .flags = ETCD_TXN_BACKOFF,
        .n_reads = 4,
        .read = fence_read,
        .audit_at = 2,
        .judge = fence_judge,
    };
    struct etcd_store *s = (struct etcd_store *)st;
    struct fence_call c = {
        .steps = steps, .n = n, .history_id = history_id, .actor = actor, .now_ms = now_ms};
    char opid[ETCD_OPID_LEN + 1];
    uint64_t tip = 0;
    size_t i, j;
    int rc;

    /* One txn puts a key once. */
    for (i = 0; i < n; i++)
        for (j = 0; j < i; j++)
            if (strcmp(steps[i].ns, steps[j].ns) == 0)
                return idmint__fail(IDMINT_EINVAL, "fence: namespace '%s' is named twice",
                                    steps[i].ns);
    etcd_call_begin(s);
    if ((rc = etcd_opid_new(opid)) != 0 || (rc = etcd_key_audit(s, opid, c.akey)) != 0 ||
        (rc = etcd_key_fmt(s, c.nkey, "/ns/")) != 0 ||
        (rc = etcd_key_fmt(s, c.mkey, "/maxlease/")) != 0 ||
        (rc = idmint__store_history_tip(&tip)) != 0)
        return rc;
    etcd_key_prefix_end(c.nkey, c.nend);
    etcd_key_prefix_end(c.mkey, c.mend);
    snprintf(c.tip_text, sizeof(c.tip_text), "%llu", (unsigned long long)tip);
    snprintf(c.detail, sizeof(c.detail), "history=%.8s namespaces=%zu", history_id, n);
    rc = etcd_txn_run(s, &plan, &c);
    if (rc < 0 && strstr(idmint_errmsg(), "too many operations") != NULL) {
        char why[512];

        snprintf(why, sizeof(why), "%s", idmint_errmsg());
        rc = idmint__fail(rc,
                          "%s; a fence of %zu namespaces is one txn of %zu operations: raise "
                          "etcd's --max-txn-ops (default 128) to at least that",
                          why, n, n + 2);
    }
    return rc;
}

int etcd_history_check(struct store *st, uint64_t seq, struct idmint__history_state *out)
{
    struct etcd_store *s = (struct etcd_store *)st;
    struct etcd_range r[2]; /* history key, tip key */
    const struct etcd_kv *hkv, *tkv;
    json_t *ops = json_array(), *op, *req;
    int rc;

    etcd_call_begin(s);
    etcd_add(s, ops, etcd_op_range(s->hkey, NULL));
    etcd_add(s, ops, etcd_op_range(s->tkey, NULL));
    if ((rc = etcd_read(s, ops, r, 2)) != 0) {
        etcd_ranges_free(r, 2);
        return rc;
    }
    hkv = etcd_range_one(&r[0]);
    tkv = etcd_range_one(&r[1]);
    if (hkv == NULL) {
        etcd_ranges_free(r, 2);
        return etcd_history_missing(s);
    }
    rc = etcd_history_key_state(s, hkv, out);
    if (rc == 0 && tkv != NULL) {
        out->head.seq = (uint64_t)tkv->mod_rev;
        out->head.tip = etcd_tip_of(tkv);
    }
    etcd_ranges_free(r, 2);
    out->backup_ms = 0; /* etcd's snapshots are its own tools': none is marked */
    out->oldest_seq = 1;
    out->tip_at_seq = 0;
    if (rc != 0 || seq == 0 || seq > out->head.seq || seq > INT64_MAX)
        return rc;
    ops = json_array();
    op = etcd_op_range(s->tkey, NULL);
    req = json_object_get(op, "request_range");
    if (req != NULL && json_object_set_new(req, "revision", etcd_j_u64(seq)) != 0)
        s->is_oom = 1;
    etcd_add(s, ops, op);
    s->is_compacted = 0;
    if ((rc = etcd_read(s, ops, r, 1)) == 0 && (tkv = etcd_range_one(&r[0])) != NULL &&
        (uint64_t)tkv->mod_rev == seq)
        out->tip_at_seq = etcd_tip_of(tkv);
    etcd_ranges_free(r, 1);
    if (rc != 0 && s->is_compacted) {
        out->oldest_seq = seq + 1;
        rc = 0;
        idmint__errmsg_clear();
    }
    return rc;
}

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
    json_t *o = etcd_kv_json(s, kv, "an audit record"), *steps;
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
        etcd_get_i64(o, "at_ms", &at_ms) != 0 || (steps != NULL && !json_is_array(steps))) {
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

int etcd_audit_list(struct store *st, int64_t after_seq, size_t limit, idmint_audit_entry **out,
                    size_t *n)
{
    struct etcd_store *s = (struct etcd_store *)st;
    char key[ETCD_KEY_MAX], end[ETCD_KEY_MAX];
    idmint_audit_entry *list = NULL;
    size_t len = 0, cap = 0, i;
    int64_t after = after_seq < 0 ? 0 : after_seq;
    int rc, is_full = 1;

    etcd_call_begin(s);
    if ((rc = etcd_key_fmt(s, key, "/audit/")) != 0)
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

        if ((rc = etcd_post(s, "/v3/kv/range", req, 0, &reply)) != 0)
            break;
        rc = etcd_range_parse(s, reply, &r);
        json_decref(reply);
        if (rc != 0)
            break;
        for (i = 0; rc == 0 && i < r.n; i++)
            if ((rc = audit_append(s, &r.kvs[i], limit, &list, &len, &cap)) == 0)
                after = r.kvs[i].create_rev;
        is_full = r.n == page;
        etcd_range_free(&r);
        etcd_call_begin(s); /* each page has its own deadline */
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

/*
 * Every generation of (region, worker id) is one prefix in generation order;
 * their spans need not be (a forced release can pull E back), so all of them
 * are read, a page at a time, and those holding the unit kept.
 */
static int wgrants_find(struct etcd_store *s, const char *ns, const struct idmint__grant_query *q,
                        idmint_grant_info *list, size_t *n)
{
    char key[ETCD_KEY_MAX], end[ETCD_KEY_MAX], from[ETCD_KEY_MAX];
    int rc = etcd_key_wgrant_prefix(s, ns, q->region, q->worker_id, key);
    size_t i;

    if (rc != 0)
        return rc;
    etcd_key_prefix_end(key, end);
    memcpy(from, key, strlen(key) + 1);
    for (;;) {
        struct etcd_range r;
        uint64_t generation = 0;

        etcd_call_begin(s); /* each page has its own deadline */
        if ((rc = etcd_range_page(s, from, end, ETCD_GRANT_PAGE, 0, &r)) != 0)
            return rc;
        for (i = 0; rc == 0 && i < r.n; i++) {
            idmint_grant_info g;

            if ((rc = etcd_wgrant_from_kv(s, &r.kvs[i], q->region, q->worker_id, &g)) != 0)
                break;
            if (g.first <= q->unit && q->unit < g.last)
                grant_insert(list, n, STORE_GRANTS_MAX, &g);
            generation = g.generation;
        }
        if (rc == 0 && r.n == ETCD_GRANT_PAGE && generation < UINT64_MAX)
            rc = etcd_key_wgrant(s, ns, q->region, q->worker_id, generation + 1, from);
        else if (rc == 0)
            rc = 1; /* the last page */
        etcd_range_free(&r);
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
    if ((rc = etcd_key_fmt(s, key, "/rgrant/%s/", ns)) != 0 ||
        (rc = etcd_key_rgrant(s, ns, value + 1, end)) != 0)
        return rc;
    etcd_call_begin(s);
    if ((rc = etcd_range_page(s, key, end, STORE_GRANTS_MAX, 1, &r)) != 0)
        return rc;
    for (i = 0; rc == 0 && i < r.n; i++) {
        idmint_grant_info g;

        if ((rc = etcd_rgrant_from_kv(s, &r.kvs[i], &g)) == 0 && g.first <= value && value < g.last)
            grant_insert(list, n, STORE_GRANTS_MAX, &g);
    }
    etcd_range_free(&r);
    return rc;
}

int etcd_grant_find(struct store *st, const char *ns, const struct idmint__grant_query *q,
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

/* One page of a prune: its age keys, read in order, and what the txn deleting them did. */
struct prune_call {
    int what; /* enum idmint__retained */
    char key[ETCD_KEY_MAX], end[ETCD_KEY_MAX];
    size_t page;              /* age keys a page asks for */
    size_t n_page;            /* age keys the page held; 0: none left */
    char first[ETCD_KEY_MAX]; /* the page's first age key */
    int64_t first_rev;        /* its mod_revision */
    uint64_t done;            /* records deleted by the pages so far */
};

/* [P/age/F/, P/age/F/BEFORE): the stamps below before_ms, oldest first. */
static int prune_read(struct etcd_store *s, void *ctx, struct etcd_range *r)
{
    struct prune_call *c = ctx;

    etcd_call_begin(s); /* each txn has its own deadline */
    return etcd_range_page(s, c->key, c->end, c->page, 0, &r[0]);
}

/*
 * Delete the records of the age keys read in one txn that compares each
 * age key's mod_revision as read: a renewal or release since moved it (a
 * new stamp), and the txn loses and reads again. A batch takes its parts
 * with it.
 */
static int prune_judge(struct etcd_store *s, void *ctx, const struct etcd_range *r, size_t n,
                       int lost, struct etcd_txn *t)
{
    struct prune_call *c = ctx;
    size_t i;

    (void)n;
    (void)lost;
    c->n_page = r[0].n;
    if (r[0].n == 0)
        return 0;
    snprintf(c->first, sizeof(c->first), "%s", r[0].kvs[0].key);
    c->first_rev = r[0].kvs[0].mod_rev;
    for (i = 0; i < r[0].n; i++) {
        const struct etcd_kv *kv = &r[0].kvs[i];
        char target[ETCD_KEY_MAX], parts[ETCD_KEY_MAX], parts_end[ETCD_KEY_MAX];

        if (etcd_age_target(s, kv->key, target) != 0 ||
            etcd_key_children(s, target, parts, parts_end) != 0)
            return etcd_bad_value(s, kv->key, "an age index key");
        etcd_add(s, t->cmp, etcd_cmp_mod(kv->key, kv->mod_rev));
        etcd_add(s, t->ok, etcd_op_delete(kv->key, NULL));
        etcd_add(s, t->ok, etcd_op_delete(target, NULL));
        if (c->what == IDMINT__KEEP_BATCHES)
            etcd_add(s, t->ok,
                     etcd_op_delete(parts, parts_end)); /* its parts, a losing claim's too */
    }
    t->n_fail = 0;
    return ETCD_TXN_SEND;
}

/* One txn: its first age key tells whether it applied. */
static int prune_unknown(struct etcd_store *s, void *ctx)
{
    struct prune_call *c = ctx;
    json_t *ops = json_array();
    struct etcd_range again[1];
    const struct etcd_kv *kv;
    int rc;

    etcd_add(s, ops, etcd_op_range(c->first, NULL));
    if ((rc = etcd_read(s, ops, again, 1)) == 0) {
        kv = etcd_range_one(&again[0]);
        rc = kv != NULL && kv->mod_rev == c->first_rev ? 0 : ETCD_APPLIED;
    }
    etcd_ranges_free(again, 1);
    return rc;
}

static int prune_done(struct etcd_store *s, void *ctx, const struct etcd_range *last)
{
    struct prune_call *c = ctx;

    (void)s;
    (void)last;
    c->done += c->n_page;
    return 0;
}

/*
 * Grants by their age index. Batches and collision records of schema 4 end
 * with their lease, so there is nothing to do for them here; what is left
 * in the age index of batches is schema 3's, pruned as it was.
 */
int etcd_prune(struct store *st, int what, int64_t before_ms, size_t limit, uint64_t *pruned)
{
    static const struct etcd_txn_plan plan = {
        .what = "pruning",
        .flags = ETCD_TXN_BACKOFF,
        .n_reads = 1,
        .read = prune_read,
        .audit_at = -1,
        .judge = prune_judge,
        .unknown = prune_unknown,
        .done = prune_done,
    };
    struct etcd_store *s = (struct etcd_store *)st;
    struct prune_call c = {.what = what};
    int rc;

    if (etcd_age_family[what] == '\0') {
        if (pruned != NULL)
            *pruned = 0;
        return 0;
    }
    if ((rc = etcd_key_fmt(s, c.key, "/age/%c/", etcd_age_family[what])) != 0 ||
        (rc = etcd_key_fmt(s, c.end, "/age/%c/%020llu", etcd_age_family[what],
                           etcd_age_ms(before_ms))) != 0)
        return rc;
    do {
        c.page = limit - c.done < ETCD_PRUNE_TXN ? limit - c.done : ETCD_PRUNE_TXN;
        c.n_page = 0;
    } while (c.done < limit && (rc = etcd_txn_run(s, &plan, &c)) == 0 && c.n_page > 0);
    if (rc == 0 && pruned != NULL)
        *pruned = c.done;
    return rc;
}
