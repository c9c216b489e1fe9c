/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The store registry (backends found by URL scheme) and the wrappers every
 * caller goes through. The wrappers check arguments once here so that each
 * backend may assume valid names, non-NULL pointers and int64-sized values;
 * they never apply namespace rules (authority.c does).
 */
#include "store.h"
#include "internal.h"

#include <stdio.h>
#include <string.h>

#define STORE_MAX_BACKENDS 8
#define STORE_MAX_ID_LEN   128   /* incarnation and request id, bytes */
#define STORE_MAX_LIST     10000 /* rows one collision_list returns at most */

static const struct store_ops *registry[STORE_MAX_BACKENDS] = {
    &idmint__store_sqlite, &idmint__store_postgres, &idmint__store_postgresql, &idmint__store_etcd};
static size_t registry_len = 4;

int idmint__store_register(const struct store_ops *ops)
{
    size_t i;

    if (ops == NULL || ops->scheme == NULL || ops->open == NULL || ops->version < STORE_OPS_V1)
        return idmint__fail(IDMINT_EINVAL, "store backend without scheme, open or version");
    for (i = 0; i < registry_len; i++) {
        if (registry[i] == ops)
            return 0;
        if (strcmp(registry[i]->scheme, ops->scheme) == 0)
            return idmint__fail(IDMINT_EINVAL, "store scheme '%s' is already registered",
                                ops->scheme);
    }
    if (registry_len == STORE_MAX_BACKENDS)
        return idmint__fail(IDMINT_ENOMEM, "store registry is full (%d backends)",
                            STORE_MAX_BACKENDS);
    registry[registry_len++] = ops;
    return 0;
}

int idmint__store_open(const char *url, const char *token, struct store **out)
{
    return idmint__store_open_flags(url, token, 0, out);
}

/* The backend of @p url's scheme: the one rule for a store URL's form. */
static int store_find(const char *url, const struct store_ops **ops)
{
    const char *colon;
    size_t scheme_len, i;

    if (url == NULL)
        return idmint__fail(IDMINT_EINVAL, "store URL is missing");
    colon = strchr(url, ':');
    if (colon == NULL || colon == url)
        return idmint__fail(IDMINT_EINVAL, "store URL '%s' has no scheme (e.g. sqlite:PATH)", url);
    if (colon[1] == '\0')
        return idmint__fail(IDMINT_EINVAL, "store URL '%s' has an empty location", url);
    scheme_len = (size_t)(colon - url);
    for (i = 0; i < registry_len; i++) {
        const char *scheme = registry[i]->scheme;

        if (strlen(scheme) == scheme_len && memcmp(scheme, url, scheme_len) == 0) {
            *ops = registry[i];
            return 0;
        }
    }
    return idmint__fail(IDMINT_EINVAL,
                        "store URL '%s': unknown scheme '%.*s' (sqlite:, postgres://, etcd://, "
                        "http://, https://)",
                        url, (int)scheme_len, url);
}

int idmint__store_url_check(const char *url)
{
    const struct store_ops *ops;

    return store_find(url, &ops);
}

int idmint__store_open_flags(const char *url, const char *token, unsigned flags, struct store **out)
{
    const struct store_ops *ops = NULL;
    struct store *st = NULL;
    int rc;

    if (url == NULL || out == NULL)
        return idmint__fail(IDMINT_EINVAL, "store URL is missing");
    if ((rc = store_find(url, &ops)) != 0)
        return rc;
    rc = ops->open(strchr(url, ':') + 1, token, flags, &st);
    if (rc != 0)
        return rc;
    *out = st;
    return 0;
}

void idmint__store_close(struct store *st)
{
    if (st != NULL)
        st->ops->close(st);
}

/* ==== argument checks ==== */

static int check_store(const struct store *st)
{
    if (st == NULL || st->ops == NULL)
        return idmint__fail(IDMINT_EINVAL, "store is NULL");
    return 0;
}

static int check_u63(uint64_t v, const char *what)
{
    /* Backends keep every number in a signed 64-bit column. */
    if (v > IDMINT_MAX_VALUE)
        return idmint__fail(IDMINT_EINVAL, "%s %llu is above 2^63-1", what, (unsigned long long)v);
    return 0;
}

static int check_id(const char *s, const char *what)
{
    size_t len;

    if (s == NULL || s[0] == '\0')
        return idmint__fail(IDMINT_EINVAL, "%s is empty", what);
    len = strlen(s);
    if (len > STORE_MAX_ID_LEN)
        return idmint__fail(IDMINT_EINVAL, "%s is longer than %d bytes", what, STORE_MAX_ID_LEN);
    return 0;
}

static int check_holder(const struct idmint__lease *lease)
{
    if (lease == NULL)
        return idmint__fail(IDMINT_EINVAL, "lease is NULL");
    /* An empty holder means "released": a taker must name itself. */
    if (lease->holder[0] == '\0' || memchr(lease->holder, '\0', sizeof(lease->holder)) == NULL)
        return idmint__fail(IDMINT_EINVAL, "lease holder is empty or not terminated");
    return 0;
}

static int check_ns(const struct store *st, const char *ns)
{
    int rc = check_store(st);

    return rc != 0 ? rc : idmint__ns_name_check(ns);
}

/* ==== wrappers ==== */

int idmint__store_ns_create(struct store *st, const idmint_ns_info *ns, const char *actor,
                            int64_t now_ms)
{
    int rc = check_store(st);

    if (rc != 0)
        return rc;
    if (ns == NULL || actor == NULL)
        return idmint__fail(IDMINT_EINVAL, "namespace or actor is NULL");
    if (memchr(ns->name, '\0', sizeof(ns->name)) == NULL)
        return idmint__fail(IDMINT_EINVAL, "namespace name is not terminated");
    if ((rc = idmint__ns_name_check(ns->name)) != 0)
        return rc;
    if (ns->kind != IDMINT_KIND_SNOWFLAKE && ns->kind != IDMINT_KIND_RANGE)
        return idmint__fail(IDMINT_EINVAL, "namespace kind %d is unknown", (int)ns->kind);
    if ((rc = check_u63(ns->next_value, "next_value")) != 0 ||
        (rc = check_u63(ns->max_value, "max_value")) != 0)
        return rc;
    return st->ops->ns_create(st, ns, actor, now_ms);
}

int idmint__store_ns_get(struct store *st, const char *name, idmint_ns_info *out)
{
    int rc = check_ns(st, name);

    if (rc != 0)
        return rc;
    if (out == NULL)
        return idmint__fail(IDMINT_EINVAL, "output is NULL");
    return st->ops->ns_get(st, name, out);
}

int idmint__store_ns_list(struct store *st, idmint_ns_info **out, size_t *n)
{
    int rc = check_store(st);

    if (rc != 0)
        return rc;
    if (out == NULL || n == NULL)
        return idmint__fail(IDMINT_EINVAL, "output is NULL");
    return st->ops->ns_list(st, out, n);
}

int idmint__store_ns_set_disabled(struct store *st, const char *name, int disabled,
                                  const char *actor, int64_t now_ms)
{
    int rc = check_ns(st, name);

    if (rc != 0)
        return rc;
    if (actor == NULL)
        return idmint__fail(IDMINT_EINVAL, "actor is NULL");
    return st->ops->ns_set_disabled(st, name, disabled != 0, actor, now_ms);
}

int idmint__store_lease_take(struct store *st, const char *ns, uint64_t worker_count,
                             uint64_t now_unit, uint64_t until_unit, struct idmint__lease *lease,
                             const char *actor, int64_t now_ms)
{
    int rc = check_ns(st, ns);

    if (rc != 0 || (rc = check_holder(lease)) != 0)
        return rc;
    if (worker_count < 1 || worker_count > (UINT64_C(1) << 32))
        return idmint__fail(IDMINT_EINVAL, "worker count %llu is outside 1..2^32",
                            (unsigned long long)worker_count);
    if ((rc = check_u63(now_unit, "now")) != 0 || (rc = check_u63(until_unit, "lease end")) != 0)
        return rc;
    if (actor == NULL)
        return idmint__fail(IDMINT_EINVAL, "actor is NULL");
    if ((rc = idmint__origin_check(&lease->origin)) != 0)
        return rc;
    return st->ops->lease_take(st, ns, worker_count, now_unit, until_unit, lease, actor, now_ms);
}

int idmint__store_lease_renew(struct store *st, const char *ns, struct idmint__lease *lease,
                              uint64_t until_unit, int64_t now_ms)
{
    int rc = check_ns(st, ns);

    if (rc != 0 || (rc = check_holder(lease)) != 0 ||
        (rc = check_u63(until_unit, "lease end")) != 0)
        return rc;
    return st->ops->lease_renew(st, ns, lease, until_unit, now_ms);
}

int idmint__store_lease_release(struct store *st, const char *ns, struct idmint__lease *lease,
                                uint64_t final_unit, const char *actor, int64_t now_ms)
{
    int rc = check_ns(st, ns);

    if (rc != 0 || (rc = check_holder(lease)) != 0 ||
        (rc = check_u63(final_unit, "final time")) != 0)
        return rc;
    if (actor == NULL)
        return idmint__fail(IDMINT_EINVAL, "actor is NULL");
    return st->ops->lease_release(st, ns, lease, final_unit, actor, now_ms);
}

int idmint__store_lease_list(struct store *st, const char *ns, idmint_worker_info **out, size_t *n)
{
    int rc = check_ns(st, ns);

    if (rc != 0)
        return rc;
    if (out == NULL || n == NULL)
        return idmint__fail(IDMINT_EINVAL, "output is NULL");
    return st->ops->lease_list(st, ns, out, n);
}

int idmint__store_lease_force_release(struct store *st, const char *ns, uint32_t region,
                                      uint32_t worker_id, uint64_t max_until_unit,
                                      const char *actor, int64_t now_ms)
{
    int rc = check_ns(st, ns);

    if (rc != 0 || (rc = check_u63(max_until_unit, "lease end")) != 0)
        return rc;
    if (actor == NULL)
        return idmint__fail(IDMINT_EINVAL, "actor is NULL");
    return st->ops->lease_force_release(st, ns, region, worker_id, max_until_unit, actor, now_ms);
}

int idmint__store_range_reserve(struct store *st, const char *ns, const char *incarnation,
                                const char *request_id, uint64_t count, int64_t now_ms,
                                struct idmint__range *out)
{
    int rc = check_ns(st, ns);

    if (rc != 0 || (rc = check_id(incarnation, "incarnation")) != 0 ||
        (rc = check_id(request_id, "request id")) != 0)
        return rc;
    if (count < 1)
        return idmint__fail(IDMINT_EINVAL, "range count must be at least 1");
    if ((rc = check_u63(count, "range count")) != 0)
        return rc;
    if (out == NULL)
        return idmint__fail(IDMINT_EINVAL, "output is NULL");
    /* Recorded with the grant: bounded printable text, or nothing is granted. */
    if ((rc = idmint__origin_check(&out->origin)) != 0)
        return rc;
    return st->ops->range_reserve(st, ns, incarnation, request_id, count, now_ms, out);
}

int idmint__store_range_forget(struct store *st, const char *ns, const char *incarnation,
                               const char *before_request_id, uint64_t *forgotten)
{
    int rc = check_ns(st, ns);

    if (rc != 0 || (rc = check_id(incarnation, "incarnation")) != 0 ||
        (rc = check_id(before_request_id, "request id")) != 0)
        return rc;
    if (st->ops->version < STORE_OPS_V2 || st->ops->range_forget == NULL)
        return idmint__fail(IDMINT_EINVAL, "this store keeps every request record");
    return st->ops->range_forget(st, ns, incarnation, before_request_id, forgotten);
}

int idmint__store_backup(struct store *st, const char *dest, const char *actor, int64_t now_ms)
{
    if (st == NULL || dest == NULL || dest[0] == '\0')
        return idmint__fail(IDMINT_EINVAL, "backup: no store or no destination");
    if (st->ops->version < STORE_OPS_V3 || st->ops->backup == NULL)
        return idmint__fail(IDMINT_EINVAL,
                            "backup: a %s store is backed up with its server's own tools (for "
                            "PostgreSQL pg_dump or pg_basebackup, for etcd 'etcdctl snapshot "
                            "save'); run 'idmint authority fence' after restoring any of them "
                            "(docs/operations.md)",
                            st->ops->scheme);
    return st->ops->backup(st, dest, actor, now_ms);
}

int idmint__store_fence(struct store *st, const struct idmint__fence_step *steps, size_t n,
                        const char *history_id, const char *actor, int64_t now_ms)
{
    if (st == NULL || (n > 0 && steps == NULL))
        return idmint__fail(IDMINT_EINVAL, "fence: no store or no steps");
    if (history_id == NULL || !idmint__history_id_valid(history_id))
        return idmint__fail(IDMINT_EINVAL, "fence: history id '%.40s' is not 32 hex digits",
                            history_id != NULL ? history_id : "(null)");
    if (st->ops->version < STORE_OPS_V3 || st->ops->fence == NULL)
        return idmint__fail(IDMINT_EINVAL, "fence: the %s store cannot be fenced by this idmint",
                            st->ops->scheme);
    return st->ops->fence(st, steps, n, history_id, actor, now_ms);
}

int idmint__store_has_history_check(const struct store *st)
{
    return st != NULL && st->ops->version >= STORE_OPS_V6 && st->ops->history_check != NULL;
}

int idmint__store_history_check(struct store *st, uint64_t seq, struct idmint__history_state *out)
{
    struct idmint__history_state got;
    int rc;

    if (st == NULL || out == NULL)
        return idmint__fail(IDMINT_EINVAL, "history check: no store or no output");
    if (!idmint__store_has_history_check(st))
        return idmint__fail(IDMINT_EINVAL, "the %s store keeps no history log", st->ops->scheme);
    memset(&got, 0, sizeof(got));
    if ((rc = st->ops->history_check(st, seq, &got)) != 0)
        return rc;
    *out = got;
    return 0;
}

int idmint__store_audit_list(struct store *st, int64_t after_seq, size_t limit,
                             idmint_audit_entry **out, size_t *n)
{
    int rc = check_store(st);

    if (rc != 0)
        return rc;
    if (out == NULL || n == NULL)
        return idmint__fail(IDMINT_EINVAL, "output is NULL");
    return st->ops->audit_list(st, after_seq, limit, out, n);
}

void idmint__store_ns_create_detail(const idmint_ns_info *ns, char *buf, size_t size)
{
    const idmint_layout *l = &ns->layout;
    int len;

    if (ns->kind == IDMINT_KIND_RANGE)
        len = snprintf(buf, size, "kind=range next_value=%llu max_value=%llu block=%u max_block=%u",
                       (unsigned long long)ns->next_value, (unsigned long long)ns->max_value,
                       (unsigned)ns->block, (unsigned)ns->max_block);
    else
        len = snprintf(buf, size, "kind=snowflake layout=%u/%u/%u/%u unit_ms=%u epoch_ms=%lld",
                       (unsigned)l->time_bits, (unsigned)l->region_bits, (unsigned)l->worker_bits,
                       (unsigned)l->sequence_bits, (unsigned)l->unit_ms, (long long)l->epoch_ms);
    if (ns->origin[0] != '\0' && len > 0 && (size_t)len < size)
        snprintf(buf + len, size - (size_t)len, " migrated_from=%s floor=%llu", ns->origin,
                 (unsigned long long)ns->floor);
}

void idmint__holder_fingerprint(const char *holder, char *out)
{
    size_t len = strnlen(holder, IDMINT_HOLDER_FP_LEN);

    memcpy(out, holder, len);
    out[len] = '\0';
}

void idmint__store_lease_detail(const struct idmint__lease *lease, uint64_t e_before,
                                uint64_t e_after, char *buf, size_t size)
{
    char fp[IDMINT_HOLDER_FP_LEN + 1];

    idmint__holder_fingerprint(lease->holder, fp);
    snprintf(buf, size, "region=%u worker=%u generation=%llu holder=%s e_before=%llu e_after=%llu",
             (unsigned)lease->region, (unsigned)lease->worker_id,
             (unsigned long long)lease->generation, fp, (unsigned long long)e_before,
             (unsigned long long)e_after);
}

void idmint__store_force_detail(uint32_t region, uint32_t worker_id, const char *holder,
                                uint64_t generation, uint64_t e_before, uint64_t e_after, char *buf,
                                size_t size)
{
    char fp[IDMINT_HOLDER_FP_LEN + 1];

    /* The audit log is read by many: the holder's fingerprint, never its secret. */
    idmint__holder_fingerprint(holder, fp);
    snprintf(buf, size,
             "region=%u worker=%u generation=%llu->%llu holder=%s e_before=%llu e_after=%llu",
             (unsigned)region, (unsigned)worker_id, (unsigned long long)generation,
             (unsigned long long)(generation + 1), fp[0] != '\0' ? fp : "(none)",
             (unsigned long long)e_before, (unsigned long long)e_after);
}

/* ==== version 4: provenance, batches, collisions ==== */

/* Whether the backend of @p st has version 4 member @p m. */
#define HAS_V4(st, m)                                                                              \
    ((st) != NULL && (st)->ops != NULL && (st)->ops->version >= STORE_OPS_V4 &&                    \
     (st)->ops->m != NULL)

static int check_v4(const struct store *st, int has, const char *what)
{
    int rc = check_store(st);

    if (rc != 0)
        return rc;
    if (!has)
        return idmint__fail(IDMINT_EINVAL, "the %s store keeps no %s", st->ops->scheme, what);
    return 0;
}

int idmint__store_grant_find(struct store *st, const char *ns, const struct idmint__grant_query *q,
                             idmint_grant_info **out, size_t *n)
{
    int rc = check_v4(st, HAS_V4(st, grant_find), "provenance");

    if (rc != 0 || (rc = idmint__ns_name_check(ns)) != 0)
        return rc;
    if (q == NULL || out == NULL || n == NULL)
        return idmint__fail(IDMINT_EINVAL, "grant query or output is NULL");
    if (q->kind == IDMINT_KIND_RANGE) {
        if ((rc = check_u63(q->value, "traced value")) != 0)
            return rc;
    } else if (q->kind != IDMINT_KIND_SNOWFLAKE) {
        return idmint__fail(IDMINT_EINVAL, "grant query of unknown kind %d", (int)q->kind);
    } else if ((rc = check_u63(q->unit, "traced time unit")) != 0) {
        return rc;
    }
    return st->ops->grant_find(st, ns, q, out, n);
}

int idmint__store_prune(struct store *st, int what, int64_t before_ms, size_t limit,
                        uint64_t *pruned)
{
    int rc = check_v4(st, HAS_V4(st, prune), "provenance");

    if (rc != 0)
        return rc;
    if (what < 0 || what >= IDMINT__KEEP__COUNT || limit == 0 || limit > STORE_MAX_LIST)
        return idmint__fail(IDMINT_EINVAL, "prune of kind %d, %zu records: not a prune", what,
                            limit);
    return st->ops->prune(st, what, before_ms, limit, pruned);
}

/* Whether the backend of @p st has version 5 member @p m (its signature changed in 5). */
#define HAS_V5(st, m)                                                                              \
    ((st) != NULL && (st)->ops != NULL && (st)->ops->version >= STORE_OPS_V5 &&                    \
     (st)->ops->m != NULL)

/* The longest a batch or collision record is kept: as idmint__authority_set_retention's bound. */
#define STORE_KEEP_MAX_MS (INT64_C(3653) * 86400000)

/*
 * An owner (a token's name, or "anonymous") is half of a batch's key, so an
 * empty or unterminated one must never reach a store: 1..63 bytes.
 */
static int check_owner(const char *owner)
{
    size_t len = owner != NULL ? strnlen(owner, sizeof(((struct idmint__batch *)0)->owner)) : 0;

    if (len == 0 || len == sizeof(((struct idmint__batch *)0)->owner))
        return idmint__fail(IDMINT_EINVAL, "a batch's owner must be 1 to %zu bytes",
                            sizeof(((struct idmint__batch *)0)->owner) - 1);
    return 0;
}

static int check_batch_key(const struct store *st, const char *owner, const char *key)
{
    int rc = check_v4(st, HAS_V5(st, batch_get) && HAS_V5(st, batch_claim), "idempotent batches");

    if (rc == 0)
        rc = check_owner(owner);
    return rc != 0 ? rc : idmint__batch_key_check(key);
}

int idmint__store_batch_get(struct store *st, const char *owner, const char *key,
                            struct idmint__batch *out)
{
    int rc = check_batch_key(st, owner, key);

    if (rc != 0)
        return rc;
    if (out == NULL)
        return idmint__fail(IDMINT_EINVAL, "batch output is NULL");
    memset(out, 0, sizeof(*out));
    return st->ops->batch_get(st, owner, key, out);
}

int idmint__store_batch_claim(struct store *st, const struct idmint__batch *b,
                              struct idmint__batch *saved, int *inserted)
{
    int rc;

    if (b == NULL || saved == NULL || inserted == NULL)
        return idmint__fail(IDMINT_EINVAL, "batch, its output or the flag is NULL");
    if ((rc = check_batch_key(st, b->owner, b->key)) != 0 ||
        (rc = idmint__ns_name_check(b->ns)) != 0)
        return rc;
    if (b->count == 0 || b->count > IDMINT_BATCH_MAX || b->runs == NULL || b->runs[0] == '\0')
        return idmint__fail(IDMINT_EINVAL, "batch of %u IDs without runs", (unsigned)b->count);
    if (b->keep_ms <= 0 || b->keep_ms > STORE_KEEP_MAX_MS)
        return idmint__fail(IDMINT_EINVAL, "a batch kept %lld ms: not 1 ms .. 10 years",
                            (long long)b->keep_ms);
    memset(saved, 0, sizeof(*saved));
    *inserted = 0;
    return st->ops->batch_claim(st, b, saved, inserted);
}

int idmint__store_collision_add(struct store *st, const idmint_collision *c, const char *actor,
                                int64_t now_ms, int64_t keep_ms, idmint_collision *saved,
                                int *inserted)
{
    int rc = check_v4(st, HAS_V5(st, collision_add), "collisions");

    if (rc != 0)
        return rc;
    if (c == NULL || actor == NULL || saved == NULL || inserted == NULL)
        return idmint__fail(IDMINT_EINVAL, "collision, actor or output is NULL");
    if (keep_ms <= 0 || keep_ms > STORE_KEEP_MAX_MS)
        return idmint__fail(IDMINT_EINVAL, "a collision record kept %lld ms: not 1 ms .. 10 years",
                            (long long)keep_ms);
    if ((rc = idmint__ns_name_check(c->ns)) != 0 || (rc = check_u63(c->id, "collision id")) != 0)
        return rc;
    if (memchr(c->first_owner, '\0', sizeof(c->first_owner)) == NULL ||
        memchr(c->second_owner, '\0', sizeof(c->second_owner)) == NULL ||
        memchr(c->verdict, '\0', sizeof(c->verdict)) == NULL ||
        memchr(c->reporter, '\0', sizeof(c->reporter)) == NULL ||
        memchr(c->note, '\0', sizeof(c->note)) == NULL)
        return idmint__fail(IDMINT_EINVAL, "collision record with an unterminated field");
    memset(saved, 0, sizeof(*saved));
    *inserted = 0;
    return st->ops->collision_add(st, c, actor, now_ms, keep_ms, saved, inserted);
}

int idmint__store_collision_list(struct store *st, int64_t after_seq, size_t limit,
                                 idmint_collision **out, size_t *n)
{
    int rc = check_v4(st, HAS_V4(st, collision_list), "collisions");

    if (rc != 0)
        return rc;
    if (out == NULL || n == NULL)
        return idmint__fail(IDMINT_EINVAL, "collision list output is NULL");
    if (limit > STORE_MAX_LIST)
        limit = STORE_MAX_LIST;
    return st->ops->collision_list(st, after_seq, limit, out, n);
}

/* ==== details and refusals the backends share ==== */

void idmint__store_collision_detail(const idmint_collision *c, char *buf, size_t size)
{
    snprintf(buf, size, "id=%llu verdict=%s observed_ms=%lld first=[%.80s] second=[%.80s]",
             (unsigned long long)c->id, c->verdict, (long long)c->observed_ms, c->first_owner,
             c->second_owner);
}

int idmint__store_lease_lost(const char *ns, const struct idmint__lease *lease)
{
    char fp[IDMINT_HOLDER_FP_LEN + 1];

    idmint__holder_fingerprint(lease->holder, fp);
    return idmint__fail(IDMINT_ELEASELOST,
                        "namespace '%s' region %u worker %u: lease generation %llu is no longer "
                        "held by holder %s",
                        ns, (unsigned)lease->region, (unsigned)lease->worker_id,
                        (unsigned long long)lease->generation, fp);
}

/* ==== shared refusals ==== */

int idmint__store_backup_refusal(const char *where, int64_t backup_ms)
{
    char when[32];

    if (idmint_format_iso8601(backup_ms, when, sizeof(when)) != 0)
        snprintf(when, sizeof(when), "unix ms %lld", (long long)backup_ms);
    return idmint__fail(IDMINT_ERESTORED,
                        "%s is a backup taken at %s and not fenced: processes of the history "
                        "after it may still mint from what it would hand out again, so it "
                        "grants no lease or range. Run 'idmint authority fence' on it "
                        "(docs/operations.md)",
                        where, when);
}

void idmint__store_fence_detail(const struct idmint__fence_step *step, uint64_t old_floor,
                                uint64_t old_next, char *buf, size_t size)
{
    if (step->kind == IDMINT_KIND_RANGE)
        snprintf(buf, size, "floor=%llu->%llu next_value=%llu->%llu", (unsigned long long)old_floor,
                 (unsigned long long)(step->floor > old_floor ? step->floor : old_floor),
                 (unsigned long long)old_next, (unsigned long long)step->next_value);
    else
        snprintf(buf, size, "floor=%llu->%llu", (unsigned long long)old_floor,
                 (unsigned long long)(step->floor > old_floor ? step->floor : old_floor));
}

int idmint__store_fence_short(const struct idmint__fence_step *step, uint64_t longest_units)
{
    /* Both counted as authority_lease.c counts a grant: its ms / unit + 1. */
    uint64_t unit_ms = step->unit_ms != 0 ? step->unit_ms : 1;

    return idmint__fail(IDMINT_EINVAL,
                        "fence: --max-lease %llu s is shorter than the longest lease this "
                        "authority granted in namespace '%s' (%llu s): a holder of the lost "
                        "history may mint until then. Leave --max-lease out, or give at least "
                        "%llu; --force-short-lease overrides this (audited) when you know every "
                        "such holder has stopped. Nothing changed",
                        (unsigned long long)((step->lease_units - 1) * unit_ms / 1000u), step->ns,
                        (unsigned long long)(((longest_units - 1) * unit_ms + 999u) / 1000u),
                        (unsigned long long)(((longest_units - 1) * unit_ms + 999u) / 1000u));
}

int idmint__store_history_tip(uint64_t *tip)
{
    uint64_t t = 0;

    /* Nonzero: 0 means "the store did not say". 63 bits, so that every
     * store keeps it as a signed 64-bit integer unchanged. Two draws of zero
     * in a row are a broken entropy source, not bad luck. */
    for (int i = 0; i < 2 && t == 0; i++) {
        if (idmint__entropy(&t, sizeof(t)) != 0)
            return IDMINT_EUNAVAILABLE;
        t >>= 1;
    }
    if (t == 0)
        return idmint__fail(IDMINT_EUNAVAILABLE, "the entropy source returned zeros");
    *tip = t;
    return 0;
}

int idmint__store_fence_backwards(const struct idmint__fence_step *step, uint64_t stored_next)
{
    return idmint__fail(IDMINT_ECONFLICT,
                        "fence: namespace '%s' is at next value %llu; moving it to %llu would go "
                        "backwards (nothing changed)",
                        step->ns, (unsigned long long)stored_next,
                        (unsigned long long)step->next_value);
}

int idmint__store_ns_missing(const char *ns)
{
    return idmint__fail(IDMINT_ENOTFOUND, "namespace '%s' does not exist", ns);
}

int idmint__store_lease_refusal(const idmint_ns_info *row)
{
    if (row->kind != IDMINT_KIND_SNOWFLAKE)
        return idmint__fail(IDMINT_EINVAL, "namespace '%s' is a range namespace, not snowflake",
                            row->name);
    if (row->is_disabled)
        return idmint__fail(IDMINT_EDISABLED, "namespace '%s' is disabled", row->name);
    return 0;
}

int idmint__store_no_worker(const char *ns, uint32_t region, uint64_t worker_count)
{
    return idmint__fail(IDMINT_ENOWORKER, "namespace '%s' region %u: all %llu worker ids are held",
                        ns, (unsigned)region, (unsigned long long)worker_count);
}

int idmint__store_range_grant(const idmint_ns_info *row, uint64_t count, struct idmint__range *out)
{
    uint64_t start;

    if (row->kind != IDMINT_KIND_RANGE)
        return idmint__fail(IDMINT_EINVAL, "namespace '%s' is a snowflake namespace, not range",
                            row->name);
    if (row->is_disabled)
        return idmint__fail(IDMINT_EDISABLED, "namespace '%s' is disabled", row->name);
    if (count > row->max_block)
        return idmint__fail(IDMINT_EINVAL, "namespace '%s': count %llu is above max_block %u",
                            row->name, (unsigned long long)count, (unsigned)row->max_block);
    /* Never at or below the floor, whatever next_value says (a store whose
     * row was written before the floor was raised). */
    start = row->floor >= row->next_value && row->floor < IDMINT_MAX_VALUE ? row->floor + 1
                                                                           : row->next_value;
    if (start > row->max_value || row->floor >= row->max_value)
        return idmint__fail(IDMINT_EEXHAUSTED, "namespace '%s': all values up to %llu are issued",
                            row->name, (unsigned long long)row->max_value);
    if (out != NULL) {
        /* No overflow: start <= 2^63-1 and count <= max_block < 2^32. */
        out->start = start;
        out->end = start + count;
        if (out->end > row->max_value + 1)
            out->end = row->max_value + 1;
    }
    return 0;
}

int idmint__store_range_replay_conflict(const char *ns, const char *incarnation,
                                        const char *request_id, uint64_t saved_count,
                                        uint64_t count)
{
    return idmint__fail(
        IDMINT_ECONFLICT, "namespace '%s': request %s/%s was for %llu values, not %llu", ns,
        incarnation, request_id, (unsigned long long)saved_count, (unsigned long long)count);
}

void idmint__store_grants_covering(idmint_grant_info *list, size_t *n, uint64_t value)
{
    size_t k = 0;

    for (size_t i = 0; i < *n; i++) {
        idmint_grant_info g = list[i];
        size_t j = k;

        if (!(g.first <= value && value < g.last))
            continue;
        g.kind = IDMINT_KIND_RANGE;
        while (j > 0 && list[j - 1].granted_ms > g.granted_ms) {
            list[j] = list[j - 1];
            j--;
        }
        list[j] = g;
        k++;
    }
    *n = k;
}
