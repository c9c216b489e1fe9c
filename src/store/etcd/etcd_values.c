/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Our values as etcd holds them, JSON both ways: namespaces, worker lease
 * rows, grants, audit records, the history key, range request records,
 * batches and collision records. A value we did not write reads as
 * IDMINT_ESTORE naming its key, never as a default.
 */
#include "etcd_internal.h"

json_t *etcd_kv_json(const struct etcd_store *s, const struct etcd_kv *kv, const char *what)
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

json_t *etcd_ns_to_json(const idmint_ns_info *ns, int64_t created_ms)
{
    const idmint_layout *l = &ns->layout;
    json_t *o = json_pack("{s:s,s:i,s:i,s:i,s:i,s:o,s:o,s:o,s:o,s:o,s:o,s:b,s:o}", "kind",
                          kind_text(ns->kind), "time_bits", (int)l->time_bits, "region_bits",
                          (int)l->region_bits, "worker_bits", (int)l->worker_bits, "sequence_bits",
                          (int)l->sequence_bits, "unit_ms", etcd_j_u64(l->unit_ms), "epoch_ms",
                          etcd_j_i64(l->epoch_ms), "next_value", etcd_j_u64(ns->next_value),
                          "max_value", etcd_j_u64(ns->max_value), "block", etcd_j_u64(ns->block),
                          "max_block", etcd_j_u64(ns->max_block), "disabled", ns->is_disabled != 0,
                          "created_ms", etcd_j_i64(created_ms));

    /* Only when set: a reservation rewrites the value, and most never have them. */
    if (o != NULL && ns->floor != 0 &&
        json_object_set_new(o, "floor", etcd_j_u64(ns->floor)) != 0) {
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

int etcd_ns_from_kv(const struct etcd_store *s, const struct etcd_kv *kv, idmint_ns_info *out)
{
    size_t skip = strlen(s->prefix) + strlen("/ns/");
    json_t *o = etcd_kv_json(s, kv, "a namespace"), *origin;
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
        etcd_get_small(o, "time_bits", 64, &t) != 0 ||
        etcd_get_small(o, "region_bits", 64, &r) != 0 ||
        etcd_get_small(o, "worker_bits", 64, &w) != 0 ||
        etcd_get_small(o, "sequence_bits", 64, &q) != 0 ||
        etcd_get_small(o, "unit_ms", UINT32_MAX, &unit) != 0 ||
        etcd_get_small(o, "block", UINT32_MAX, &block) != 0 ||
        etcd_get_small(o, "max_block", UINT32_MAX, &max_block) != 0 ||
        etcd_get_i64(o, "epoch_ms", &epoch_ms) != 0 ||
        etcd_get_i64(o, "created_ms", &created_ms) != 0 ||
        etcd_get_u64(o, "next_value", &ns.next_value) != 0 ||
        etcd_get_u64(o, "max_value", &ns.max_value) != 0 ||
        etcd_get_u64(o, "floor", &ns.floor) != 0 ||
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

int etcd_row_from_kv(const struct etcd_store *s, const struct etcd_kv *kv, struct etcd_row *out)
{
    json_t *o = etcd_kv_json(s, kv, "a worker lease");
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
        worker > UINT32_MAX || etcd_get_u64(o, "generation", &out->generation) != 0 ||
        etcd_get_u64(o, "until", &out->until) != 0 || etcd_get_u64(o, "fence", &out->fence) != 0) {
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

json_t *etcd_row_to_json(const char *holder, uint64_t generation, uint64_t until, uint64_t fence)
{
    return json_pack("{s:s,s:o,s:o,s:o}", "holder", holder, "generation", etcd_j_u64(generation),
                     "until", etcd_j_u64(until), "fence", etcd_j_u64(fence));
}

void etcd_origin_to_json(struct etcd_store *s, json_t *o, const struct idmint__origin *origin)
{
    if (o == NULL ||
        json_object_set_new(o, "host", etcd_j_text(origin->host, sizeof(origin->host))) != 0 ||
        json_object_set_new(o, "pid", etcd_j_u64(origin->pid)) != 0 ||
        json_object_set_new(o, "program", etcd_j_text(origin->program, sizeof(origin->program))) !=
            0 ||
        json_object_set_new(o, "token", etcd_j_text(origin->token, sizeof(origin->token))) != 0)
        s->is_oom = 1;
}

json_t *etcd_wgrant_json(struct etcd_store *s, const char *holder,
                         const struct idmint__origin *origin, uint64_t first, uint64_t last,
                         int64_t now_ms)
{
    char fp[IDMINT_HOLDER_FP_LEN + 1];
    json_t *o;

    idmint__holder_fingerprint(holder, fp);
    o = json_pack("{s:s,s:o,s:o,s:o,s:o}", "holder", fp, "first", etcd_j_u64(first), "last",
                  etcd_j_u64(last), "granted_ms", etcd_j_i64(now_ms), "updated_ms",
                  etcd_j_i64(now_ms));
    etcd_origin_to_json(s, o, origin);
    return o;
}

json_t *etcd_rgrant_json(struct etcd_store *s, const char *fp, const struct idmint__origin *origin,
                         uint64_t end, int64_t now_ms)
{
    json_t *o = json_pack("{s:s,s:o,s:o}", "holder", fp, "end", etcd_j_u64(end), "granted_ms",
                          etcd_j_i64(now_ms));

    etcd_origin_to_json(s, o, origin);
    return o;
}

/* The fields every grant has, from its value @p o, into @p g. -1 if one is not what we write. */
static int grant_common(json_t *o, idmint_grant_info *g)
{
    uint64_t pid = 0;

    if (etcd_get_text(o, "holder", g->holder, sizeof(g->holder)) != 0 ||
        etcd_get_text(o, "host", g->host, sizeof(g->host)) != 0 ||
        etcd_get_text(o, "program", g->program, sizeof(g->program)) != 0 ||
        etcd_get_text(o, "token", g->token, sizeof(g->token)) != 0 ||
        etcd_get_small(o, "pid", UINT32_MAX, &pid) != 0 ||
        etcd_get_i64(o, "granted_ms", &g->granted_ms) != 0)
        return -1;
    g->pid = (uint32_t)pid;
    g->size = sizeof(*g);
    return 0;
}

int etcd_wgrant_from_kv(const struct etcd_store *s, const struct etcd_kv *kv, uint32_t region,
                        uint32_t worker_id, idmint_grant_info *g)
{
    json_t *o = etcd_kv_json(s, kv, "a worker grant");
    int rc = 0;

    if (o == NULL)
        return IDMINT_ESTORE;
    memset(g, 0, sizeof(*g));
    if (grant_common(o, g) != 0 || etcd_key_tail_u64(kv->key, 20, &g->generation) != 0 ||
        etcd_get_u64(o, "first", &g->first) != 0 || etcd_get_u64(o, "last", &g->last) != 0 ||
        etcd_get_i64(o, "updated_ms", &g->updated_ms) != 0)
        rc = etcd_bad_value(s, kv->key, "a worker grant");
    g->kind = IDMINT_KIND_SNOWFLAKE;
    g->region = region;
    g->worker_id = worker_id;
    json_decref(o);
    return rc;
}

int etcd_rgrant_from_kv(const struct etcd_store *s, const struct etcd_kv *kv, idmint_grant_info *g)
{
    json_t *o = etcd_kv_json(s, kv, "a range grant");
    int rc = 0;

    if (o == NULL)
        return IDMINT_ESTORE;
    memset(g, 0, sizeof(*g));
    if (grant_common(o, g) != 0 || etcd_key_tail_u64(kv->key, 20, &g->first) != 0 ||
        etcd_get_u64(o, "end", &g->last) != 0)
        rc = etcd_bad_value(s, kv->key, "a range grant");
    g->kind = IDMINT_KIND_RANGE;
    g->updated_ms = g->granted_ms;
    json_decref(o);
    return rc;
}

json_t *etcd_audit_json(int64_t at_ms, const char *actor, const char *action, const char *ns,
                        const char *detail, json_t *result)
{
    json_t *o = json_pack("{s:o,s:s,s:s,s:s,s:s}", "at_ms", etcd_j_i64(at_ms), "actor", actor,
                          "action", action, "ns", ns, "detail", detail);

    if (o != NULL && result != NULL && json_object_set_new(o, "result", result) != 0) {
        json_decref(o);
        return NULL;
    }
    if (o == NULL)
        json_decref(result);
    return o;
}

json_t *etcd_audit_result(const struct etcd_store *s, const struct etcd_kv *kv)
{
    json_t *o = etcd_kv_json(s, kv, "an audit record"), *r;

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

int etcd_history_id_of(const struct etcd_store *s, const struct etcd_kv *kv, char *id)
{
    json_t *o = etcd_kv_json(s, kv, "a history id");
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

json_t *etcd_history_upgraded(struct etcd_store *s, const struct etcd_kv *hkv, const char *store_id)
{
    json_t *o = etcd_kv_json(s, hkv, "a history id");

    if (o != NULL && json_object_get(o, "store_id") == NULL &&
        json_object_set_new(o, "store_id", json_string(store_id)) != 0) {
        json_decref(o);
        return NULL;
    }
    return o;
}

json_t *etcd_history_fenced(struct etcd_store *s, const struct etcd_kv *hkv, const char *history_id,
                            int64_t now_ms)
{
    char lineage[IDMINT__LINEAGE_MAX * 33], store_id[ETCD_OPID_LEN + 1] = "";
    json_t *o = hkv != NULL ? etcd_kv_json(s, hkv, "a history id") : NULL;
    const char *old = json_string_value(json_object_get(o, "id"));
    const char *sid = json_string_value(json_object_get(o, "store_id"));
    const char *lin = json_string_value(json_object_get(o, "lineage"));
    size_t len;

    if (sid != NULL && strlen(sid) == ETCD_OPID_LEN)
        memcpy(store_id, sid, sizeof(store_id));
    else if (etcd_opid_new(store_id) != 0)
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
    return json_pack("{s:s,s:o,s:s,s:s}", "id", history_id, "fenced_ms", etcd_j_i64(now_ms),
                     "store_id", store_id, "lineage", lineage);
}

int etcd_history_key_state(struct etcd_store *s, const struct etcd_kv *hkv,
                           struct idmint__history_state *out)
{
    json_t *o = etcd_kv_json(s, hkv, "a history id");
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

uint64_t etcd_tip_of(const struct etcd_kv *kv)
{
    char text[24];
    uint64_t tip = 0;

    snprintf(text, sizeof(text), "%.*s", (int)(kv->value_len < 23 ? kv->value_len : 23), kv->value);
    return idmint__parse_u64(text, &tip) == 0 ? tip : 0;
}

int etcd_record_from_kv(const struct etcd_store *s, const struct etcd_kv *kv, uint64_t *count,
                        struct idmint__range *res)
{
    json_t *o = etcd_kv_json(s, kv, "a range request record");
    int rc = 0;

    if (o == NULL)
        return IDMINT_ESTORE;
    /* htip: the tip of the txn that wrote it (schema 5; absent before: 0). */
    if (etcd_get_u64(o, "count", count) != 0 || etcd_get_u64(o, "start", &res->start) != 0 ||
        etcd_get_u64(o, "end", &res->end) != 0 || etcd_get_u64(o, "htip", &res->history.tip) != 0)
        rc = etcd_bad_value(s, kv->key, "a range request record");
    json_decref(o);
    return rc;
}

json_t *etcd_batch_json(struct etcd_store *s, const struct idmint__batch *b, const char *claim,
                        size_t n_parts)
{
    json_t *o = json_pack("{s:o,s:o,s:o,s:o,s:s}", "owner", etcd_j_text(b->owner, sizeof(b->owner)),
                          "namespace", etcd_j_text(b->ns, sizeof(b->ns)), "count",
                          etcd_j_u64(b->count), "keep_ms", etcd_j_i64(b->keep_ms), "claim", claim);

    if (o != NULL && (n_parts > 0 ? json_object_set_new(o, "parts", etcd_j_u64(n_parts))
                                  : json_object_set_new(o, "runs", json_string(b->runs))) != 0)
        s->is_oom = 1;
    return o;
}

json_t *etcd_collision_json(const idmint_collision *c, int64_t now_ms, const char *opid)
{
    return json_pack("{s:s,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:s}", "ns", c->ns, "id",
                     etcd_j_u64(c->id), "first_owner",
                     etcd_j_text(c->first_owner, sizeof(c->first_owner)), "second_owner",
                     etcd_j_text(c->second_owner, sizeof(c->second_owner)), "verdict",
                     etcd_j_text(c->verdict, sizeof(c->verdict)), "reporter",
                     etcd_j_text(c->reporter, sizeof(c->reporter)), "observed_ms",
                     etcd_j_i64(c->observed_ms), "reported_ms", etcd_j_i64(now_ms), "note",
                     etcd_j_text(c->note, sizeof(c->note)), "op", opid);
}

int etcd_collision_from_kv(const struct etcd_store *s, const struct etcd_kv *kv,
                           idmint_collision *out)
{
    json_t *o = etcd_kv_json(s, kv, "a collision record");
    int rc = 0;

    if (o == NULL)
        return IDMINT_ESTORE;
    memset(out, 0, sizeof(*out));
    out->size = sizeof(*out);
    out->seq = kv->create_rev;
    if (etcd_get_text(o, "ns", out->ns, sizeof(out->ns)) != 0 ||
        etcd_get_u64(o, "id", &out->id) != 0 ||
        etcd_get_text(o, "first_owner", out->first_owner, sizeof(out->first_owner)) != 0 ||
        etcd_get_text(o, "second_owner", out->second_owner, sizeof(out->second_owner)) != 0 ||
        etcd_get_text(o, "verdict", out->verdict, sizeof(out->verdict)) != 0 ||
        etcd_get_text(o, "reporter", out->reporter, sizeof(out->reporter)) != 0 ||
        etcd_get_i64(o, "observed_ms", &out->observed_ms) != 0 ||
        etcd_get_i64(o, "reported_ms", &out->reported_ms) != 0 ||
        etcd_get_text(o, "note", out->note, sizeof(out->note)) != 0)
        rc = etcd_bad_value(s, kv->key, "a collision record");
    json_decref(o);
    return rc;
}
