/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Provenance through the authority: whom its grants are recorded for, how
 * long records are kept and when they are pruned, which grants could have
 * minted an ID (idmint_trace), and collisions reported downstream. The
 * store only keeps the rows (store.h, version 4); the rules are here.
 */
#include "internal.h"
#include "remote.h"
#include "store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PRUNE_EVERY 16 /* records made between two prunes */
#define PRUNE_BATCH 64 /* records one prune deletes at most: more than were made meanwhile */
#define KEEP_MIN_MS INT64_C(1000)
#define KEEP_MAX_MS (INT64_C(3653) * 86400000)

void idmint__authority_on_behalf(idmint_authority *a, const struct idmint__origin *o)
{
    a->origin = o != NULL ? *o : a->self;
}

int idmint__authority_set_retention(idmint_authority *a, enum idmint__retained what, int64_t ms)
{
    int rc = idmint__authority_check(a);

    if (rc != 0)
        return rc;
    if ((int)what < 0 || what >= IDMINT__KEEP__COUNT)
        return idmint__fail(IDMINT_EINVAL, "unknown kind of record %d", (int)what);
    if (ms < KEEP_MIN_MS || ms > KEEP_MAX_MS)
        return idmint__fail(IDMINT_EINVAL, "a retention of %lld ms is outside 1 s .. 10 years",
                            (long long)ms);
    a->keep_ms[what] = ms;
    return 0;
}

int idmint__authority_prune(idmint_authority *a, enum idmint__retained what, size_t limit,
                            uint64_t *pruned)
{
    int rc = idmint__authority_check(a);

    if (rc != 0)
        return rc;
    if (a->remote != NULL)
        return idmint__fail(IDMINT_EINVAL, "a remote authority prunes its own records");
    if ((int)what < 0 || what >= IDMINT__KEEP__COUNT)
        return idmint__fail(IDMINT_EINVAL, "unknown kind of record %d", (int)what);
    /* Batches and collision records ignore the bound: each carries its own
     * expiry by the store's clock (an etcd store of schema 3 still prunes
     * its old batches by it). */
    return idmint__store_prune(a->st, (int)what, idmint__authority_now_ms(a) - a->keep_ms[what],
                               limit, pruned);
}

void idmint__authority_note_record(struct idmint_authority *a, enum idmint__retained what)
{
    if (a->st == NULL || ++a->since_prune[what] < PRUNE_EVERY)
        return;
    a->since_prune[what] = 0;
    if (idmint__authority_prune(a, what, PRUNE_BATCH, NULL) != 0)
        idmint__errmsg_clear();
}

/* ==== trace ==== */

/* The store's question for @p id of namespace @p ns: 0 or IDMINT_EINVAL. */
static int trace_query(const idmint_ns_info *ns, uint64_t id, struct idmint__grant_query *q)
{
    idmint_decoded d;
    int rc;

    memset(q, 0, sizeof(*q));
    q->kind = ns->kind;
    if (ns->kind == IDMINT_KIND_RANGE) {
        if (id == 0 || id > IDMINT_MAX_VALUE)
            return idmint__fail(IDMINT_EINVAL, "%llu is never an ID of a range namespace",
                                (unsigned long long)id);
        q->value = id;
        return 0;
    }
    if ((rc = idmint_decode(&ns->layout, id, &d)) != 0)
        return rc;
    q->region = d.region;
    q->worker_id = d.worker;
    q->unit = d.time_units;
    return 0;
}

/*
 * The first time unit the holder of worker grant @p g could mint in. After
 * the E it found (first), which it never mints at; and not before its take:
 * the take's time (granted_ms) is the authority's clock, which a holder with
 * its own store also mints by, forward only. A fresh worker id has E = 0, so
 * without the take its first grant would cover every unit from the epoch on
 * and trace would name a holder for IDs minted months before it existed.
 */
static uint64_t grant_start_unit(const idmint_layout *l, const idmint_grant_info *g)
{
    uint64_t after_e = g->first + 1; /* first < 2^63: the store checks it */
    uint64_t taken = idmint__unit_at(l, g->granted_ms);

    return after_e > taken ? after_e : taken;
}

/*
 * Keep of the @p n grants in @p list (the store's answer for @p q) those
 * whose holder could have minted the ID: the store matched [first, last);
 * here a worker grant's window starts at grant_start_unit. Returns how many
 * are left, in their order, at the front of @p list.
 */
static size_t keep_could_mint(const idmint_ns_info *ns, const struct idmint__grant_query *q,
                              idmint_grant_info *list, size_t n)
{
    size_t kept = 0;

    for (size_t i = 0; i < n; i++) {
        if (ns->kind == IDMINT_KIND_SNOWFLAKE && q->unit < grant_start_unit(&ns->layout, &list[i]))
            continue;
        if (kept != i)
            list[kept] = list[i];
        kept++;
    }
    return kept;
}

/* The grants of the namespace row @p ns whose holder could have minted @p id. */
static int grants_of(idmint_authority *a, const idmint_ns_info *ns, uint64_t id,
                     idmint_grant_info **out, size_t *n)
{
    struct idmint__grant_query q;
    idmint_grant_info *list = NULL;
    size_t found = 0;
    int rc = trace_query(ns, id, &q);

    if (rc != 0 || (rc = idmint__store_grant_find(a->st, ns->name, &q, &list, &found)) != 0)
        return rc;
    found = keep_could_mint(ns, &q, list, found);
    if (found == 0) {
        free(list);
        list = NULL;
    }
    *out = list;
    *n = found;
    return 0;
}

#define ORIGIN_DEPTH_MAX 16 /* migrations followed back; names are never reused, so no loop */

/*
 * Whether @p id lies in a grant of a namespace that @p ns was migrated from
 * (its origin, or that one's, ...). Such an ID is at or below the highest
 * ID the old namespace could issue, which is at or below the floor @p ns
 * was created with, and @p ns never issues an ID at or below its floor: so
 * it is not an ID of @p ns, whatever grant of @p ns its time or value falls
 * in (a new namespace's first takes come while the old one's last leases
 * still run). An ID that does not fit an old namespace's layout is not in
 * its grants. 0, with *is_older set, or a store error.
 */
static int is_of_an_origin(idmint_authority *a, const idmint_ns_info *ns, uint64_t id,
                           int *is_older)
{
    idmint_ns_info old;
    char name[sizeof(ns->origin)];
    int rc;

    *is_older = 0;
    memcpy(name, ns->origin, sizeof(name));
    for (int depth = 0; depth < ORIGIN_DEPTH_MAX && name[0] != '\0'; depth++) {
        idmint_grant_info *list = NULL;
        size_t n = 0;

        idmint_ns_info_init_v2(&old, IDMINT_KIND_SNOWFLAKE);
        if ((rc = idmint__store_ns_get(a->st, name, &old)) == IDMINT_ENOTFOUND)
            break;
        if (rc != 0)
            return rc;
        rc = grants_of(a, &old, id, &list, &n);
        free(list);
        if (rc == 0 && n > 0) {
            *is_older = 1;
            return 0;
        }
        if (rc != 0 && rc != IDMINT_EINVAL) /* EINVAL: not an ID of its layout */
            return rc;
        idmint__errmsg_clear();
        memcpy(name, old.origin, sizeof(name));
    }
    return 0;
}

/*
 * Trace @p id in the namespace row @p ns through the store of @p a: the
 * grants whose holder could have minted it (docs/design.md "Retries, provenance and collisions").
 * That is all an ID's bits can say; what tells namespaces apart is time
 * and migrations: a grant is taken only once its namespace exists, so its
 * window never starts before the namespace's creation, and an ID of a
 * namespace this one was migrated from is none of this one's.
 */
static int trace_store(idmint_authority *a, const idmint_ns_info *ns, uint64_t id,
                       idmint_grant_info **out, size_t *n)
{
    idmint_grant_info *list = NULL;
    size_t found = 0;
    int rc = grants_of(a, ns, id, &list, &found), is_older = 0;

    if (rc == 0 && found > 0 && ns->origin[0] != '\0')
        rc = is_of_an_origin(a, ns, id, &is_older);
    if (rc != 0 || is_older) {
        free(list);
        list = NULL;
        found = 0;
    }
    if (rc == 0) {
        *out = list;
        *n = found;
    }
    return rc;
}

int idmint_trace(idmint_authority *a, const char *ns, uint64_t id, idmint_grant_info **out,
                 size_t *n)
{
    idmint_ns_info info;
    int rc = idmint__authority_check(a);

    if (rc != 0 || (rc = idmint__ns_name_check(ns)) != 0)
        return rc;
    if (out == NULL || n == NULL)
        return idmint__fail(IDMINT_EINVAL, "trace output is NULL");
    if (a->remote != NULL)
        return a->remote->ops->trace(a->remote, ns, id, out, n);
    idmint_ns_info_init_v2(&info, IDMINT_KIND_SNOWFLAKE);
    if ((rc = idmint__store_ns_get(a->st, ns, &info)) != 0)
        return rc;
    return trace_store(a, &info, id, out, n);
}

/* ==== collisions ==== */

void idmint_grant_format(const idmint_grant_info *g, char *buf, size_t size)
{
    char at[32] = "";

    if (idmint_format_iso8601(g->granted_ms, at, sizeof(at)) != 0)
        snprintf(at, sizeof(at), "%lld", (long long)g->granted_ms);
    if (g->kind == IDMINT_KIND_RANGE)
        snprintf(buf, size,
                 "host=%s pid=%u program=%s incarnation=%s range=[%llu,%llu) token=%s "
                 "granted=%s",
                 g->host, (unsigned)g->pid, g->program, g->holder, (unsigned long long)g->first,
                 (unsigned long long)g->last, g->token[0] != '\0' ? g->token : "-", at);
    else
        snprintf(buf, size,
                 "host=%s pid=%u program=%s incarnation=%s generation=%llu "
                 "worker=%u/%u token=%s granted=%s",
                 g->host, (unsigned)g->pid, g->program, g->holder,
                 (unsigned long long)g->generation, (unsigned)g->region, (unsigned)g->worker_id,
                 g->token[0] != '\0' ? g->token : "-", at);
}

static int note_check(const char *note)
{
    size_t len = note != NULL ? strlen(note) : 0;

    if (len >= sizeof(((idmint_collision *)0)->note))
        return idmint__fail(IDMINT_EINVAL, "collision note is longer than %zu bytes",
                            sizeof(((idmint_collision *)0)->note) - 1);
    for (size_t i = 0; i < len; i++)
        if (note[i] < ' ' || note[i] > '~')
            return idmint__fail(IDMINT_EINVAL,
                                "collision note may hold only printable ASCII (byte %zu)", i + 1);
    return 0;
}

static int collision_size_check(const idmint_collision *out)
{
    return idmint__struct_size_check(out->size, sizeof(*out), sizeof(*out), "idmint_collision",
                                     "idmint_collision_report (size = sizeof)");
}

int idmint__collision_report(idmint_authority *a, const char *ns, uint64_t id, int64_t observed_ms,
                             const char *note, idmint_collision *out, int *is_new)
{
    idmint_grant_info *grants = NULL;
    idmint_ns_info info;
    idmint_collision c, saved;
    int64_t now_ms;
    size_t n = 0;
    int inserted = 1, rc = idmint__authority_check(a);

    if (rc != 0 || (rc = idmint__ns_name_check(ns)) != 0 || (rc = note_check(note)) != 0)
        return rc;
    if (observed_ms < 0)
        return idmint__fail(IDMINT_EINVAL, "observed_ms %lld is before 1970",
                            (long long)observed_ms);
    if (out != NULL && (rc = collision_size_check(out)) != 0)
        return rc;
    memset(&c, 0, sizeof(c));
    c.size = sizeof(c);
    if (a->remote != NULL)
        rc = a->remote->ops->collision_report(a->remote, ns, id, observed_ms,
                                              note != NULL ? note : "", &c);
    else {
        idmint_ns_info_init_v2(&info, IDMINT_KIND_SNOWFLAKE);
        if ((rc = idmint__store_ns_get(a->st, ns, &info)) != 0 ||
            (rc = trace_store(a, &info, id, &grants, &n)) != 0)
            return rc;
        now_ms = idmint__authority_now_ms(a);
        snprintf(c.ns, sizeof(c.ns), "%s", ns);
        c.id = id;
        if (n >= 1)
            idmint_grant_format(idmint_grant_info_at(grants, 0), c.first_owner,
                                sizeof(c.first_owner));
        if (n >= 2)
            idmint_grant_format(idmint_grant_info_at(grants, 1), c.second_owner,
                                sizeof(c.second_owner));
        free(grants);
        snprintf(c.verdict, sizeof(c.verdict), "%s", n >= 2 ? "duplicate" : "reported");
        idmint__authority_actor(a, c.reporter, sizeof(c.reporter));
        /* The reporter's clock is its word: never ahead of ours. */
        c.observed_ms = observed_ms == 0 || observed_ms > now_ms ? now_ms : observed_ms;
        c.reported_ms = now_ms;
        snprintf(c.note, sizeof(c.note), "%s", note != NULL ? note : "");
        /* One record per (namespace, ID, reporter): a repeat, however often, writes nothing. */
        rc = idmint__store_collision_add(a->st, &c, c.reporter, now_ms,
                                         a->keep_ms[IDMINT__KEEP_COLLISIONS], &saved, &inserted);
        if (rc == 0)
            c = saved;
        if (rc == 0 && inserted)
            idmint__authority_note_record(a, IDMINT__KEEP_COLLISIONS);
    }
    if (rc == 0 && out != NULL)
        idmint__struct_copy_out(out, &c);
    if (rc == 0 && is_new != NULL)
        *is_new = inserted;
    return rc;
}

int idmint_collision_report(idmint_authority *a, const char *ns, uint64_t id, int64_t observed_ms,
                            const char *note, idmint_collision *out)
{
    return idmint__collision_report(a, ns, id, observed_ms, note, out, NULL);
}

int idmint_collisions_list(idmint_authority *a, int64_t after_seq, size_t limit,
                           idmint_collision **out, size_t *n)
{
    int rc = idmint__authority_check(a);

    if (rc != 0)
        return rc;
    if (out == NULL || n == NULL)
        return idmint__fail(IDMINT_EINVAL, "collision list output is NULL");
    if (a->remote != NULL)
        return a->remote->ops->collisions_list(a->remote, after_seq, limit, out, n);
    return idmint__store_collision_list(a->st, after_seq, limit, out, n);
}
