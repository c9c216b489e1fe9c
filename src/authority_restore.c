/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The two operations that must never let the authority move backwards
 * (docs/design.md "Migrations and restores"): a migration to
 * a new namespace whose IDs all lie above the old one's, and the fence that
 * makes a restored store safe. Both reduce to one rule, kept here: a
 * namespace's floor, the largest ID it must never issue again. A snowflake
 * namespace keeps it by never minting before the first time unit whose IDs
 * pass it (the take's fence, authority_lease.c); a range namespace by never
 * reserving at or below it (idmint__store_range_grant).
 */
#include "internal.h"
#include "remote.h"
#include "store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned id_shift(const idmint_layout *l)
{
    return (unsigned)l->region_bits + l->worker_bits + l->sequence_bits;
}

/* The largest ID of time unit @p unit in layout @p l (every lower bit set). */
static uint64_t last_id_of_unit(const idmint_layout *l, uint64_t unit)
{
    unsigned shift = id_shift(l);
    uint64_t low = (UINT64_C(1) << shift) - 1;

    if (unit > (IDMINT_MAX_VALUE >> shift))
        return IDMINT_MAX_VALUE;
    return (unit << shift) | low;
}

/*
 * The largest ID namespace @p ns has issued or can still issue: for a
 * snowflake namespace, every worker id's E (a holder mints up to its E) with
 * every lower bit set; for a range namespace, the last value reserved. Read
 * after @p ns was disabled, so that no take or renewal moves it further.
 */
static int highest_issued(struct idmint_authority *a, const idmint_ns_info *ns, uint64_t *out)
{
    idmint_worker_info *rows = NULL;
    uint64_t high = ns->floor, max_e = 0;
    size_t n = 0, i;
    int rc;

    if (ns->kind == IDMINT_KIND_RANGE) {
        if (ns->next_value > 0 && ns->next_value - 1 > high)
            high = ns->next_value - 1;
        *out = high;
        return 0;
    }
    if ((rc = idmint__store_lease_list(a->st, ns->name, &rows, &n)) != 0)
        return rc;
    for (i = 0; i < n; i++)
        if (rows[i].lease_until > max_e)
            max_e = rows[i].lease_until;
    free(rows);
    if (n > 0 && last_id_of_unit(&ns->layout, max_e) > high)
        high = last_id_of_unit(&ns->layout, max_e);
    *out = high;
    return 0;
}

/* Whether snowflake layout @p l can ever mint above @p floor; else why, and what would work. */
static int snowflake_passes(const idmint_ns_info *info, uint64_t floor, int64_t now_ms)
{
    const idmint_layout *l = &info->layout;
    uint64_t first = idmint__floor_fence_unit(l, floor) + 1;
    char when[32], advice[96] = "more time bits";
    int64_t epoch_max;

    if (first <= idmint__unit_max(l))
        return 0;
    /* The epoch at which now's time unit would already lie past the floor. */
    epoch_max = now_ms - (int64_t)((first > (uint64_t)INT64_MAX / l->unit_ms)
                                       ? INT64_MAX
                                       : (int64_t)(first * l->unit_ms));
    if (epoch_max > 0 && idmint_format_iso8601(epoch_max, when, sizeof(when)) == 0)
        snprintf(advice, sizeof(advice), "an epoch at or before %s", when);
    return idmint__fail(IDMINT_EINVAL,
                        "namespace '%s': its IDs cannot pass the floor %llu before its %u time "
                        "bits run out (the first ID above it would need time unit %llu); %s, a "
                        "longer unit, or fewer region, worker or sequence bits would work",
                        info->name, (unsigned long long)floor, (unsigned)l->time_bits,
                        (unsigned long long)first, advice);
}

/*
 * Whether range namespace @p in can start at @p in->next_value (@p has_start)
 * or just above @p floor (not), which it then gets: 0 or IDMINT_EINVAL.
 */
static int range_start(idmint_ns_info *in, uint64_t floor, int has_start, const char *old)
{
    if (floor >= IDMINT_MAX_VALUE)
        return idmint__fail(IDMINT_EINVAL, "namespace '%s': no value lies above the floor %llu",
                            in->name, (unsigned long long)floor);
    if (!has_start)
        in->next_value = floor + 1;
    else if (in->next_value <= floor)
        return idmint__fail(IDMINT_EINVAL,
                            "namespace '%s': start %llu is at or below the floor %llu (the "
                            "largest ID '%s' may have issued); leave the start out or use "
                            "%llu or more",
                            in->name, (unsigned long long)in->next_value, (unsigned long long)floor,
                            old, (unsigned long long)(floor + 1));
    return 0;
}

/* Create @p in (the library's copy) above @p floor as a migration from @p old. */
static int create_above(struct idmint_authority *a, idmint_ns_info *in, uint64_t floor,
                        int has_start, const char *old)
{
    int rc;

    if (in->kind == IDMINT_KIND_SNOWFLAKE) {
        if ((rc = snowflake_passes(in, floor, idmint__authority_now_ms(a))) != 0)
            return rc;
    } else if (in->kind == IDMINT_KIND_RANGE) {
        if ((rc = range_start(in, floor, has_start, old)) != 0)
            return rc;
    }
    return idmint__authority_ns_create_floor(a, in, floor, old);
}

/*
 * idmint_ns_migrate(): a range NEW starts at exactly @p start when
 * @p has_start, else just above the floor.
 */
static int migrate(idmint_authority *a, const char *old_name, const idmint_ns_info *info,
                   int has_start, uint64_t start, idmint_ns_info *created)
{
    idmint_ns_info in, old, probe;
    uint64_t floor = 0;
    int rc = idmint__authority_check(a), was_disabled;

    if (rc != 0 || (rc = idmint__ns_name_check(old_name)) != 0 ||
        (rc = idmint__authority_ns_copy_in(info, &in)) != 0)
        return rc;
    if (has_start && in.kind != IDMINT_KIND_RANGE)
        return idmint__fail(IDMINT_EINVAL,
                            "namespace '%s': a start is for a range namespace; a snowflake one "
                            "mints from the first time unit above the floor",
                            in.name);
    if (has_start)
        in.next_value = start;
    if (created != NULL &&
        (rc = idmint__struct_size_check(created->size, IDMINT__NS_INFO_SIZE_V1, sizeof(*created),
                                        "idmint_ns_info", "idmint_ns_info_init")) != 0)
        return rc;
    if (a->remote != NULL)
        return idmint__fail(IDMINT_EINVAL,
                            "ns migrate through an http:// authority: use idmintd's route POST "
                            "/v1/namespaces/%s/migrate, or run it against the store",
                            old_name);
    if (memchr(in.name, '\0', sizeof(in.name)) == NULL ||
        (rc = idmint__ns_name_check(in.name)) != 0)
        return rc != 0 ? rc : idmint__fail(IDMINT_EINVAL, "namespace name is not terminated");
    if (strcmp(in.name, old_name) == 0)
        return idmint__fail(IDMINT_EINVAL, "migrate '%s' to itself: name a new namespace",
                            old_name);
    if ((rc = idmint__store_ns_get(a->st, old_name, &old)) != 0)
        return rc;
    /* Refuse what cannot work before anything changes: an existing name, or
     * a layout that cannot pass the floor as it stands now. */
    rc = idmint__store_ns_get(a->st, in.name, &probe);
    if (rc == 0)
        return idmint__fail(IDMINT_ECONFLICT, "namespace '%s' already exists", in.name);
    if (rc != IDMINT_ENOTFOUND)
        return rc;
    if ((rc = highest_issued(a, &old, &floor)) != 0)
        return rc;
    if (in.kind == IDMINT_KIND_SNOWFLAKE &&
        (rc = snowflake_passes(&in, floor, idmint__authority_now_ms(a))) != 0)
        return rc;
    if (in.kind == IDMINT_KIND_RANGE && has_start &&
        (rc = range_start(&in, floor, has_start, old_name)) != 0)
        return rc;

    /* Disable first: from then on no take, renewal or reservation moves the
     * old namespace's highest ID, so the floor read next is final. */
    was_disabled = old.is_disabled;
    if (!was_disabled && (rc = idmint_ns_set_disabled(a, old_name, 1)) != 0)
        return rc;
    if ((rc = idmint__store_ns_get(a->st, old_name, &old)) == 0 &&
        (rc = highest_issued(a, &old, &floor)) == 0)
        rc = create_above(a, &in, floor, has_start, old_name);
    if (rc != 0) {
        char why[512];

        snprintf(why, sizeof(why), "%s", idmint_errmsg());
        /* Put the old namespace back as it was; if even that fails, it stays
         * disabled, which is safe. */
        if (!was_disabled && idmint_ns_set_disabled(a, old_name, 0) != 0)
            snprintf(why + strlen(why), sizeof(why) - strlen(why), "; '%s' stays disabled: %s",
                     old_name, idmint_errmsg());
        return idmint__fail(rc, "%s", why);
    }
    if (created != NULL) {
        if ((rc = idmint__store_ns_get(a->st, in.name, &probe)) != 0)
            return rc;
        probe.size = sizeof(probe);
        idmint__struct_copy_out(created, &probe);
    }
    return 0;
}

int idmint_ns_migrate(idmint_authority *a, const char *old_name, const idmint_ns_info *info,
                      idmint_ns_info *created)
{
    /* 0 and 1 (idmint_ns_info_init's default) both mean "no start". */
    return migrate(a, old_name, info, info != NULL && info->next_value > 1,
                   info != NULL ? info->next_value : 0, created);
}

int idmint_ns_migrate_start(idmint_authority *a, const char *old_name, const idmint_ns_info *info,
                            uint64_t start, idmint_ns_info *created)
{
    if (start == 0)
        return idmint__fail(IDMINT_EINVAL, "a start of 0: no ID is 0; use idmint_ns_migrate() "
                                           "to start just above the floor");
    return migrate(a, old_name, info, 1, start, created);
}

int idmint_authority_backup(idmint_authority *a, const char *dest_path)
{
    char actor[64];
    int rc = idmint__authority_check(a);

    if (rc != 0)
        return rc;
    if (dest_path == NULL || dest_path[0] == '\0')
        return idmint__fail(IDMINT_EINVAL, "backup: no destination path");
    if (a->remote != NULL)
        return idmint__fail(IDMINT_EINVAL,
                            "backup through an http:// authority: run it on the store's host");
    idmint__authority_actor(a, actor, sizeof(actor));
    return idmint__store_backup(a->st, dest_path, actor, idmint__authority_now_ms(a));
}

static int fence_rebind(struct idmint_authority *a);

/* The entry of @p ranges naming @p ns, or NULL; IDMINT_EINVAL through @p rc when named twice. */
static const idmint_fence_range *range_entry(const idmint_fence_range *ranges, size_t n,
                                             const char *ns, int *rc)
{
    const idmint_fence_range *hit = NULL;
    size_t i;

    for (i = 0; i < n; i++) {
        if (strcmp(ranges[i].ns, ns) != 0)
            continue;
        if (hit != NULL) {
            *rc = idmint__fail(IDMINT_EINVAL, "fence: range namespace '%s' is named twice", ns);
            return NULL;
        }
        hit = &ranges[i];
    }
    return hit;
}

/* Plan the fence step of @p ns: the floor, and for a range namespace its next value. */
static int plan_step(const idmint_ns_info *ns, const idmint_fence_range *ranges, size_t n,
                     int64_t until_ms, uint32_t max_lease_ms, unsigned flags,
                     struct idmint__fence_step *step)
{
    const idmint_fence_range *r;
    int rc = 0;

    memset(step, 0, sizeof(*step));
    memcpy(step->ns, ns->name, sizeof(step->ns));
    step->kind = ns->kind;
    if (ns->kind == IDMINT_KIND_SNOWFLAKE) {
        /* No worker id mints before until_ms: the lost history's holders
         * have all stopped by then, whatever ids they held. */
        uint64_t unit = idmint__unit_at(&ns->layout, until_ms) + 1;

        step->floor = unit == 0 ? 0 : last_id_of_unit(&ns->layout, unit - 1);
        /* As the authority counts a grant (authority_lease.c lease_units),
         * so that a fence as long as the longest lease is never "shorter". */
        step->lease_units = (uint64_t)max_lease_ms / ns->layout.unit_ms + 1;
        step->unit_ms = ns->layout.unit_ms;
        step->allow_short = (flags & IDMINT_FENCE_FORCE_SHORT_LEASE) != 0;
        return 0;
    }
    r = range_entry(ranges, n, ns->name, &rc);
    if (rc != 0)
        return rc;
    if (r == NULL)
        return idmint__fail(IDMINT_EINVAL,
                            "fence: range namespace '%s' needs --above %s=N (the highest ID in "
                            "use downstream) or --skip %s=K: a restored store does not know how "
                            "far the lost history reserved; nothing changed",
                            ns->name, ns->name, ns->name);
    if (r->is_skip) {
        if (r->value < 1 || r->value > IDMINT_MAX_VALUE - ns->next_value)
            return idmint__fail(IDMINT_EINVAL, "fence: --skip %s=%llu is out of range (1..%llu)",
                                ns->name, (unsigned long long)r->value,
                                (unsigned long long)(IDMINT_MAX_VALUE - ns->next_value));
        step->next_value = ns->next_value + r->value;
    } else {
        if (r->value >= IDMINT_MAX_VALUE)
            return idmint__fail(IDMINT_EINVAL, "fence: --above %s=%llu leaves no value", ns->name,
                                (unsigned long long)r->value);
        step->next_value = r->value + 1;
        if (step->next_value < ns->next_value)
            return idmint__fail(IDMINT_EINVAL,
                                "fence: --above %s=%llu is below the next value %llu the store "
                                "already has: a fence never moves a boundary backwards; nothing "
                                "changed",
                                ns->name, (unsigned long long)r->value,
                                (unsigned long long)ns->next_value);
    }
    step->floor = step->next_value - 1;
    return 0;
}

int idmint_authority_fence(idmint_authority *a, const idmint_fence_range *ranges, size_t n,
                           uint32_t max_lease_ms)
{
    return idmint_authority_fence_v2(a, ranges, n, max_lease_ms, 0);
}

int idmint_authority_fence_v2(idmint_authority *a, const idmint_fence_range *ranges, size_t n,
                              uint32_t max_lease_ms, unsigned flags)
{
    struct idmint__fence_step *steps = NULL;
    idmint_ns_info *list = NULL, probe;
    char actor[64], history[33];
    size_t count = 0, i;
    int64_t until_ms;
    int rc = idmint__authority_check(a);

    if (rc != 0)
        return rc;
    if (n > 0 && ranges == NULL)
        return idmint__fail(IDMINT_EINVAL, "fence: ranges is NULL");
    if (a->remote != NULL)
        return idmint__fail(IDMINT_EINVAL,
                            "fence through an http:// authority: run it against the store");
    if ((flags & ~(unsigned)IDMINT_FENCE_FORCE_SHORT_LEASE) != 0)
        return idmint__fail(IDMINT_EINVAL, "fence: unknown flags 0x%x", flags);
    if (max_lease_ms == 0)
        max_lease_ms = IDMINT__LEASE_MAX_MS;
    if ((rc = idmint__lease_ms_check(max_lease_ms)) != 0)
        return rc;
    for (i = 0; i < n; i++) {
        if (ranges[i].ns == NULL || (rc = idmint__ns_name_check(ranges[i].ns)) != 0)
            return rc != 0 ? rc : idmint__fail(IDMINT_EINVAL, "fence: a range entry has no name");
        if ((rc = idmint__store_ns_get(a->st, ranges[i].ns, &probe)) != 0)
            return rc;
        if (probe.kind != IDMINT_KIND_RANGE)
            return idmint__fail(IDMINT_EINVAL,
                                "fence: '%s' is a snowflake namespace; only range namespaces take "
                                "--above or --skip",
                                ranges[i].ns);
    }
    if ((rc = idmint__store_ns_list(a->st, &list, &count)) != 0)
        return rc;
    if (count > 0 && (steps = calloc(count, sizeof(*steps))) == NULL) {
        free(list);
        return idmint__fail(IDMINT_ENOMEM, "fence: out of memory");
    }
    until_ms = idmint__authority_now_ms(a) + (int64_t)max_lease_ms;
    for (i = 0; i < count && rc == 0; i++)
        rc = plan_step(&list[i], ranges, n, until_ms, max_lease_ms, flags, &steps[i]);
    free(list);
    /* A history id is made like a holder's incarnation: 128 random bits. */
    if (rc == 0 && (rc = idmint__incarnation(history)) == 0) {
        idmint__authority_actor(a, actor, sizeof(actor));
        rc = idmint__store_fence(a->st, steps, count, history, actor, idmint__authority_now_ms(a));
        /* The store is the operator's now: this host holds its place to it. */
        if (rc == 0 && (rc = fence_rebind(a)) != 0) {
            char why[512];

            snprintf(why, sizeof(why), "%s", idmint_errmsg()); /* the same thread-local buffer */
            rc = idmint__fail(rc,
                              "fence: the store was fenced, but this host's witness could not "
                              "bind its place to it (run the fence again): %s",
                              why);
        }
    }
    free(steps);
    return rc;
}

/* ==== a holder's history checks ==== */

/* The witness folder of @p a into a->witness_dir: 0, 1 when off, or an error (not kept). */
static int witness_of(struct idmint_authority *a)
{
    int rc;

    if (a->witness_state == 0) {
        if ((rc = idmint__witness_dir(a->witness_dir, sizeof(a->witness_dir))) < 0)
            return rc;
        a->witness_state = rc == 1 ? -1 : 1;
    }
    return a->witness_state == 1 ? 0 : 1;
}

/* Who and when, for the note of a binding: "by ACTOR at TIME". */
static void binding_note(struct idmint_authority *a, const char *why, char *buf, size_t size)
{
    char actor[64], when[32];

    idmint__authority_actor(a, actor, sizeof(actor));
    if (idmint_format_iso8601(idmint__authority_now_ms(a), when, sizeof(when)) != 0)
        snprintf(when, sizeof(when), "?");
    snprintf(buf, size, "bound %s by %s at %s", why, actor, when);
}

/*
 * Under the lock of the binding of a->location: whether the store there,
 * whose id is @p store_id, is the one this host last used there. A place
 * without a binding is bound to it. A binding to another store is moved to
 * it when this host holds no witness of that store (it granted nothing any
 * process here saw: nothing of it can be issued again, and a binding
 * without evidence would refuse for nothing). A binding to another store
 * that this host holds evidence of refuses: the store was deleted and made
 * anew at this place, or another put in its place, and would hand out from
 * scratch what the old one issued; only a fence here (fence_rebind) or the
 * operator removing the binding accepts it.
 */
static int binding_step(struct idmint_authority *a, const char *store_id)
{
    struct idmint__history w;
    char bound[33], path[4200], wpath[4200], note[200];
    int rc = idmint__witness_location_read(a->witness_dir, a->location, bound, path, sizeof(path));

    if (rc < 0 || (rc == 0 && strcmp(bound, store_id) == 0))
        return rc;
    if (rc == 0) {
        /* Under that witness's lock: a writer rewrites it in place. */
        int wfd = idmint__witness_lock(a->witness_dir, bound);

        if (wfd < 0)
            return wfd;
        rc = idmint__witness_read(a->witness_dir, bound, &w, wpath, sizeof(wpath));
        idmint__witness_unlock(wfd);
        if (rc < 0)
            return rc;
        if (rc == 0)
            /* Shortest first-things-first: the message buffer holds 512 bytes. */
            return idmint__fail(IDMINT_ERESTORED,
                                "%s is store %s, not store %s that this host used there: deleted "
                                "and created anew, or replaced? It would issue again what the old "
                                "store issued; nothing was granted. Recreate its namespaces if "
                                "gone, then fence it on this host: 'idmint authority fence --above "
                                "NS=N' per range namespace (N: highest ID of NS in use "
                                "downstream). To accept it as another authority instead, remove "
                                "this host's binding %s (docs/operations.md)",
                                a->location, store_id, bound, path);
    }
    binding_note(a, rc == 1 ? "at first use" : "over a store that left no evidence here", note,
                 sizeof(note));
    return idmint__witness_location_write(a->witness_dir, a->location, store_id, note);
}

static int same_point(const struct idmint__history *x, const struct idmint__history *y)
{
    return strcmp(x->id, y->id) == 0 && x->seq == y->seq && x->tip == y->tip;
}

/*
 * After a fence of @p a's store: bind its place to it in this host's
 * witness, whatever store the binding named, and make the fenced history
 * the one this host saw (the fence is the operator's word that the store is
 * safe to use). 0 when the witness is off, the
 * place unknown or the store keeps no history; else the witness's errors.
 */
static int fence_rebind(struct idmint_authority *a)
{
    struct idmint__history_state state;
    char bound[33] = "", path[4200], why[96], note[200];
    int fd, rc = witness_of(a);

    if (rc != 0 || a->location[0] == '\0' || !idmint__store_has_history_check(a->st))
        return rc < 0 ? rc : 0;
    if ((rc = idmint__store_history_check(a->st, 0, &state)) != 0)
        return rc;
    if ((fd = idmint__witness_location_lock(a->witness_dir, a->location)) < 0)
        return fd;
    /* A damaged binding is replaced: the fence is the word that rules. */
    if (idmint__witness_location_read(a->witness_dir, a->location, bound, path, sizeof(path)) != 0)
        bound[0] = '\0';
    snprintf(why, sizeof(why), "by a fence (history %.8s...; was store %s)", state.head.id,
             bound[0] != '\0' ? bound : "none");
    binding_note(a, why, note, sizeof(note));
    rc = idmint__witness_location_write(a->witness_dir, a->location, state.store_id, note);
    /* And what this host saw of the store is the fenced history from now: a
     * history it saw before may be one the fence did not replace (a copy
     * older than an earlier fence put back), which the fence quarantined as
     * well, and which would otherwise refuse this host's processes forever. */
#ifdef IDMINT_MUTANT_FENCE_FORGETS_WITNESS /* planted for tests/sim: its liveness check */
    if (0)
#else
    if (rc == 0 && idmint__history_is_point(&state.head))
#endif
    {
        int wfd = idmint__witness_lock(a->witness_dir, state.store_id);

        rc = wfd < 0 ? wfd : idmint__witness_write(a->witness_dir, state.store_id, &state.head);
        idmint__witness_unlock(wfd);
    }
    idmint__witness_unlock(fd);
    return rc;
}

/*
 * Under the lock of this host's witness of store @p store_id: if
 * @p is_grant, prove that @p head (the reply to a write this holder just
 * made) is in the store's history; then judge the pair the witness holds
 * against the store, and raise it to @p head when that is newer. A witness
 * equal to @p proven (a point verified in a read of the store made after
 * that write) is judged already: most grants find there their holder's own
 * last, and are spared a read of the store. All under
 * one lock, so that a grant is in the witness before its holder uses it,
 * and a process never overwrites evidence it has not checked: a new process
 * on a store put back in time finds either the grant's pair, which the
 * store no longer holds, or a holder that has not yet proven its grant and
 * then finds the store changed and refuses it. First, under the lock of the
 * binding of the store's place (taken before, held throughout), that the
 * store is the one this host used there (binding_step).
 *
 * @p store_id is the id the caller read from the store, or, when
 * @p is_unproven, the id it read last time: then @p proven is proven here,
 * under the locks, by one read that also proves the grant when the store's
 * head is the grant's own pair (no other write came between), and a store
 * with another id returns 1 for the caller to take the long way.
 */
static int witness_step(struct idmint_authority *a, const char *store_id,
                        const struct idmint__history *head, const struct idmint__history *proven,
                        const char *where, int is_grant, int is_unproven)
{
    struct idmint__history_state now;
    struct idmint__history w;
    char path[4200];
    int fd = -1, lfd = -1, rc, is_newer = 1, is_on, is_head_proven = 0;

    if ((rc = witness_of(a)) < 0)
        return rc;
    is_on = rc == 0;
    if (is_on && a->location[0] != '\0') {
        if ((lfd = idmint__witness_location_lock(a->witness_dir, a->location)) < 0)
            return lfd;
        if ((rc = binding_step(a, store_id)) != 0) {
            idmint__witness_unlock(lfd);
            return rc;
        }
    }
    if (is_on && (fd = idmint__witness_lock(a->witness_dir, store_id)) < 0) {
        idmint__witness_unlock(lfd);
        return fd;
    }
    rc = 0;
    if (is_unproven && (rc = idmint__store_history_check(a->st, proven->seq, &now)) == 0) {
        /* Another store than last time: the long way. The mutant, planted for
         * tests/sim, trusts what the holder saw without proving it. */
        if (strcmp(now.store_id, store_id) != 0)
            rc = 1;
#ifdef IDMINT_MUTANT_GRANT_SEEN_UNCHECKED
        else if ((rc = 0) == 0)
#else
        else if ((rc = idmint__history_verify(proven, &now, IDMINT__EVIDENCE_HOLDER, where)) == 0)
#endif
            is_head_proven = same_point(&now.head, head);
    }
    if (rc == 0 && is_grant && !is_head_proven &&
        (rc = idmint__store_history_check(a->st, head->seq, &now)) == 0)
        rc = idmint__history_verify(head, &now, IDMINT__EVIDENCE_HOLDER, where);
    if (rc != 0 || fd < 0) {
        idmint__witness_unlock(fd);
        idmint__witness_unlock(lfd);
        return rc;
    }
    rc = idmint__witness_read(a->witness_dir, store_id, &w, path, sizeof(path));
    if (rc == 0) {
        if (same_point(&w, head)) {
            idmint__witness_unlock(fd);
            idmint__witness_unlock(lfd);
            return 0;
        }
        if (!same_point(&w, proven)) {
            rc = idmint__store_history_check(a->st, w.seq, &now);
            if (rc == 0)
                rc = idmint__history_verify(&w, &now, IDMINT__EVIDENCE_WITNESS, path);
        }
        /* Another id that passed was fenced over: the head is newer. */
        is_newer = strcmp(w.id, head->id) != 0 || head->seq > w.seq;
    } else if (rc == 1) {
        rc = 0; /* this host never used the store: nothing to hold it to */
    }
    if (rc == 0 && is_newer && idmint__history_is_point(head))
        rc = idmint__witness_write(a->witness_dir, store_id, head);
    idmint__witness_unlock(fd);
    idmint__witness_unlock(lfd);
    return rc;
}

int idmint__authority_history_state(idmint_authority *a, uint64_t seq,
                                    struct idmint__history_state *out)
{
    int rc = idmint__authority_check(a);

    if (rc == 0 && a->remote != NULL)
        rc = idmint__fail(IDMINT_EINVAL, "a remote authority's history is its daemon's to read");
    if (rc == 0)
        rc = idmint__store_history_check(a->st, seq, out);
    /* And this host's evidence, as its own holders' checks judge it: a store
     * behind what the daemon's host saw stops every remote holder, also one
     * whose own last pair the restore happened to keep. */
    if (rc == 0)
        rc = witness_step(a, out->store_id, &out->head, &out->head, "the daemon's authority", 0, 0);
    return rc;
}

int idmint__authority_grant_proven(idmint_authority *a, const char *ns,
                                   const struct idmint__history *pair)
{
    struct idmint__history seen = *pair;

    /* The check a local holder runs, on the daemon's host for the remote one. */
    return idmint__history_is_point(pair) ? idmint__authority_history_check(a, ns, &seen, 0) : 0;
}

/*
 * The check of a remote (http://) holder: its idmintd reads its store's
 * history at the seq we saw, and we judge it as a local holder judges its
 * store's. No witness: this host binds no place to the daemon's store.
 * A daemon too old to answer leaves the check to the daemon.
 */
static int remote_history_check(struct idmint_authority *a, const char *where,
                                struct idmint__history *seen, int adopt_head)
{
    struct idmint__history_state state;
    int rc;

    if (a->remote->ops->history_check == NULL)
        return 0;
    memset(&state, 0, sizeof(state));
    rc = a->remote->ops->history_check(a->remote, seen->seq, &state);
    if (rc == 0)
        rc = idmint__history_verify(seen, &state, IDMINT__EVIDENCE_HOLDER, where);
    if (rc == 0 && adopt_head)
        *seen = state.head;
    return rc;
}

int idmint__authority_history_check(struct idmint_authority *a, const char *ns,
                                    struct idmint__history *seen, int adopt_head)
{
    struct idmint__history_state state;
    char where[96];
    int rc;

    snprintf(where, sizeof(where), "namespace '%s'", ns);
    if (a->remote != NULL)
        return remote_history_check(a, where, seen, adopt_head);
    if (!idmint__store_has_history_check(a->st))
        return 0;
    rc = idmint__store_history_check(a->st, seen->seq, &state);
    if (rc == 0)
        rc = idmint__history_verify(seen, &state, IDMINT__EVIDENCE_HOLDER, where);
    if (rc == 0) {
        memcpy(a->store_id_seen, state.store_id, sizeof(a->store_id_seen));
        rc = witness_step(a, state.store_id, &state.head, seen, where, 0, 0);
    }
    if (rc == 0 && adopt_head)
        *seen = state.head;
    return rc;
}

int idmint__authority_history_adopt(struct idmint_authority *a, const char *ns,
                                    struct idmint__history *seen,
                                    const struct idmint__history *reply)
{
    struct idmint__history probe = *seen;
    struct idmint__history_state state;
    char where[96];
    int rc, is_newer;

    /* No news (a replay of a record older than the log): prove what was
     * seen before the range is used; the record may be a restored store's. */
    if (!idmint__history_is_point(reply))
        return idmint__authority_history_check(a, ns, seen, 0);
    is_newer = seen->id[0] == '\0' || strcmp(reply->id, seen->id) != 0 || reply->seq > seen->seq;
    if (a->remote != NULL || !idmint__store_has_history_check(a->st)) {
        /* Counters only: a reply at or below what was seen is a restore. */
        if ((rc = idmint__history_follow(&probe, reply, ns)) == 0)
            *seen = *reply;
        return rc;
    }
    snprintf(where, sizeof(where), "namespace '%s'", ns);
    /* The store this authority read last time: one read, under the locks.
     * Anything but a pass takes the long way, whose refusal names the cause
     * (another store in its place, or the history it lost). */
    rc = a->store_id_seen[0] != '\0' ? witness_step(a, a->store_id_seen, reply, seen, where, 1, 1)
                                     : 1;
    if (rc != 0) {
        rc = idmint__store_history_check(a->st, seen->seq, &state);
        if (rc == 0)
            rc = idmint__history_verify(seen, &state, IDMINT__EVIDENCE_HOLDER, where);
        /* A replay carries the pair of the grant that made its record, which may
         * lie below what was seen: proven like any reply, never adopted back. */
        if (rc == 0) {
            memcpy(a->store_id_seen, state.store_id, sizeof(a->store_id_seen));
            rc = witness_step(a, state.store_id, reply, seen, where, 1, 0);
        }
    }
    if (rc == 0 && is_newer)
        *seen = *reply;
    return rc;
}
