/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The worker-lease rules of the authority (docs/design.md "The authority"), in one place: the
 * lease length granted, E = now + length in the namespace's time units cut
 * at the end of its time bits, the region and time-bit checks, the wait past
 * the E found before the first ID, and the bound of a forced release. A
 * store only keeps the rows under its conditional writes; a remote
 * authority is sent the caller's own figures and applies these rules there.
 */
#include "internal.h"
#include "remote.h"
#include "store.h"

#include <stdio.h>
#include <string.h>

int idmint__lease_ms_check(uint64_t lease_ms)
{
    if (lease_ms < 1)
        return idmint__fail(IDMINT_EINVAL, "a lease of 0 ms is no lease");
    if (lease_ms > IDMINT__LEASE_MAX_MS)
        return idmint__fail(IDMINT_EINVAL, "lease_ms %llu is above the maximum of %u (one day)",
                            (unsigned long long)lease_ms, IDMINT__LEASE_MAX_MS);
    return 0;
}

static int region_check(const idmint_ns_info *ns, uint32_t region)
{
    const idmint_layout *l = &ns->layout;

    if (l->region_bits < 32 && region >> l->region_bits != 0)
        return idmint__fail(IDMINT_EINVAL, "region %u does not fit the %u region bits of '%s'",
                            (unsigned)region, (unsigned)l->region_bits, ns->name);
    return 0;
}

static int check_args(const struct idmint_authority *a, const idmint_ns_info *ns,
                      const struct idmint__lease *lease)
{
    int rc = idmint__authority_check(a);

    if (rc != 0)
        return rc;
    if (ns == NULL || lease == NULL)
        return idmint__fail(IDMINT_EINVAL, "namespace or lease is NULL");
    if (a->remote == NULL && ns->kind != IDMINT_KIND_SNOWFLAKE)
        return idmint__fail(IDMINT_EINVAL,
                            "namespace '%s' is a range namespace: it has no worker leases",
                            ns->name);
    return a->remote != NULL ? 0 : region_check(ns, lease->region);
}

/* E for a lease of @p lease_ms from @p now_ms: cut at the end of the time bits. */
static uint64_t lease_end(const idmint_layout *l, int64_t now_ms, uint32_t lease_ms)
{
    uint64_t until = idmint__unit_at(l, now_ms + (int64_t)lease_ms);
    uint64_t end = idmint__unit_max(l) + 1;

    return until < end ? until : end;
}

/*
 * What a grant of @p lease_ms asks of the store, in time units past now:
 * the store keeps the largest, which a fence's quarantine must cover. One
 * unit more than lease_ms covers, so that rounding never makes it shorter.
 */
static uint64_t lease_units(const idmint_layout *l, uint32_t lease_ms)
{
    return (uint64_t)lease_ms / l->unit_ms + 1;
}

int idmint__authority_lease_take(idmint_authority *a, const idmint_ns_info *ns, uint32_t lease_ms,
                                 struct idmint__lease *lease)
{
    const idmint_layout *l;
    char actor[64];
    uint64_t now_unit, floor_unit;
    int64_t now_ms, region_floor_ms = 0;
    int rc = check_args(a, ns, lease);

    if (rc != 0)
        return rc;
    lease->origin = a->origin;
    if (a->remote != NULL)
        return a->remote->ops->lease_take(a->remote, ns->name, lease_ms, lease);
    if ((rc = idmint__lease_ms_check(lease_ms)) != 0 ||
        (rc = idmint__authority_region_take(a, ns, lease->region, &region_floor_ms)) != 0)
        return rc;
    l = &ns->layout;
    now_ms = idmint__authority_now_ms(a);
    now_unit = idmint__unit_at(l, now_ms);
    if (now_unit > idmint__unit_max(l))
        return idmint__fail(IDMINT_EEXHAUSTED, "the time bits of '%s' ran out", ns->name);
    idmint__authority_actor(a, actor, sizeof(actor));
    lease->granted_units = lease_units(l, lease_ms);
    rc = idmint__store_lease_take(a->st, ns->name, UINT64_C(1) << l->worker_bits, now_unit,
                                  lease_end(l, now_ms, lease_ms), lease, actor, now_ms);
    if (rc == 0)
        idmint__authority_note_record(a, IDMINT__KEEP_WORKER_GRANTS);
    /* A migrated or fenced namespace never mints at or below its floor: the
     * first time unit this holder may use lies past it. */
    floor_unit = idmint__floor_fence_unit(l, ns->floor);
#ifdef IDMINT_MUTANT_FLOOR_IGNORED /* planted for tests/sim: a migrated namespace from now on */
    floor_unit = 0;
#endif
    if (rc == 0 && lease->fence_found < floor_unit)
        lease->fence_found = floor_unit;
    /* A claimed region: after everything its earlier claimants' holders may mint. */
    if (rc == 0 && region_floor_ms > 0 && lease->fence_found < idmint__unit_at(l, region_floor_ms))
        lease->fence_found = idmint__unit_at(l, region_floor_ms);
#ifdef IDMINT_MUTANT_FENCE_INCLUSIVE /* planted for tests/sim: `<=` for `<` on both sides of E */
    if (rc == 0) {
        lease->fence_found -= lease->fence_found > 0;
        lease->lease_until += 1;
    }
#endif
    if (rc == 0)
        lease->fence_ahead_ms = lease->fence_found > now_unit
                                    ? (uint64_t)(idmint__unit_start_ms(l, lease->fence_found) -
                                                 idmint__unit_start_ms(l, now_unit))
                                    : 0;
    return rc;
}

int idmint__authority_lease_renew(idmint_authority *a, const idmint_ns_info *ns,
                                  struct idmint__lease *lease, uint32_t lease_ms)
{
    int64_t now_ms;
    int rc = check_args(a, ns, lease);

    if (rc != 0)
        return rc;
    if (a->remote != NULL)
        return a->remote->ops->lease_renew(a->remote, ns->name, lease, lease_ms);
    if ((rc = idmint__lease_ms_check(lease_ms)) != 0)
        return rc;
    now_ms = idmint__authority_now_ms(a);
    lease->granted_units = lease_units(&ns->layout, lease_ms);
#ifdef IDMINT_MUTANT_FENCE_INCLUSIVE /* planted for tests/sim: the holder mints at its own E */
    rc = idmint__store_lease_renew(a->st, ns->name, lease, lease_end(&ns->layout, now_ms, lease_ms),
                                   now_ms);
    lease->lease_until += rc == 0;
    return rc;
#endif
    return idmint__store_lease_renew(a->st, ns->name, lease,
                                     lease_end(&ns->layout, now_ms, lease_ms), now_ms);
}

int idmint__authority_lease_release(idmint_authority *a, const idmint_ns_info *ns,
                                    struct idmint__lease *lease, uint64_t next_unit)
{
    char actor[64];
    int rc = check_args(a, ns, lease);

    if (rc != 0)
        return rc;
    if (a->remote != NULL)
        return a->remote->ops->lease_release(a->remote, ns->name, lease, next_unit);
    /* The store keeps next_unit between the E this holder found and its own
     * E: a wrong figure cannot reopen what the previous holder minted nor
     * park the id beyond the lease. */
    idmint__authority_actor(a, actor, sizeof(actor));
    return idmint__store_lease_release(a->st, ns->name, lease, next_unit, actor,
                                       idmint__authority_now_ms(a));
}

/* Wait (at most @p max_wait_ms) until the clock is past @p lease's fence; else ECLOCK. */
static int wait_past_fence(struct idmint_authority *a, const idmint_ns_info *ns,
                           const struct idmint__lease *lease, uint32_t max_wait_ms)
{
    const idmint_layout *l = &ns->layout;
    uint64_t deadline = idmint__deadline_now_ms() + max_wait_ms;

    for (;;) {
        uint64_t now = idmint__unit_at(l, idmint__authority_now_ms(a));

        if (now > lease->fence_found)
            return 0;
        if (idmint__deadline_now_ms() >= deadline)
            return idmint__fail(
                IDMINT_ECLOCK,
                "namespace '%s' worker %u: clock is at time unit %llu, %llu ms "
                "behind the fence %llu left by the previous holder (generation "
                "%llu); its clock ran ahead or this one is behind; waited %u ms",
                ns->name, (unsigned)lease->worker_id, (unsigned long long)now,
                (unsigned long long)(idmint__unit_start_ms(l, lease->fence_found + 1) -
                                     idmint__unit_start_ms(l, now)),
                (unsigned long long)lease->fence_found, (unsigned long long)(lease->generation - 1),
                max_wait_ms);
        idmint__sleep_ms(1);
    }
}

int idmint__authority_lease_acquire(struct idmint_authority *a, const idmint_ns_info *ns,
                                    uint32_t lease_ms, uint32_t clock_wait_ms,
                                    struct idmint__lease *lease)
{
    char why[512];
    int rc = idmint__authority_lease_take(a, ns, lease_ms, lease);

    if (rc != 0)
        return rc;
#ifdef IDMINT_MUTANT_FENCE_IGNORED /* a planted wrong rule the simulator must catch (tests/sim) */
    return 0;
#endif
    /* Never mint at or before the E we found: the previous holder may have
     * used every time value up to it. The wait runs on this caller's clock,
     * which is the one its IDs will carry, also through a remote authority. */
    if (idmint__unit_at(&ns->layout, idmint__authority_now_ms(a)) > lease->fence_found)
        return 0;
    rc = wait_past_fence(a, ns, lease, clock_wait_ms);
    if (rc == 0)
        rc = idmint__authority_lease_renew(a, ns, lease, lease_ms);
    if (rc == 0)
        return 0;
    /* The release may fail and set its own message: keep ours. */
    snprintf(why, sizeof(why), "%s", idmint_errmsg());
    (void)idmint__authority_lease_release(a, ns, lease, lease->fence_found);
    return idmint__fail(rc, "%s", why);
}

int idmint__authority_force_release(idmint_authority *a, const char *ns, uint32_t region,
                                    uint32_t worker_id, int64_t max_ahead_ms)
{
    idmint_ns_info info;
    char actor[64];
    int64_t now_ms;
    uint64_t max_until = IDMINT_MAX_VALUE;
    int rc = idmint__authority_check(a);

    if (rc != 0 || (rc = idmint__ns_name_check(ns)) != 0)
        return rc;
    if (a->remote != NULL)
        return a->remote->ops->force_release(a->remote, ns, region, worker_id, max_ahead_ms);
    if ((rc = idmint__store_ns_get(a->st, ns, &info)) != 0)
        return rc;
    if (info.kind != IDMINT_KIND_SNOWFLAKE)
        return idmint__fail(IDMINT_EINVAL,
                            "namespace '%s' is a range namespace: it has no worker leases", ns);
    if ((rc = region_check(&info, region)) != 0)
        return rc;
    now_ms = idmint__authority_now_ms(a);
    /* Keeping E is what makes a force safe: the holder may have minted up
     * to it, also with a clock far ahead of ours. Only an admin who knows
     * better (E forged, or the runaway holder's IDs discarded) lowers it. */
    if (max_ahead_ms >= 0)
        max_until = idmint__unit_at(&info.layout, now_ms + max_ahead_ms) + 1;
    idmint__authority_actor(a, actor, sizeof(actor));
    return idmint__store_lease_force_release(a->st, ns, region, worker_id, max_until, actor,
                                             now_ms);
}

int idmint_worker_force_release(idmint_authority *a, const char *ns, uint32_t region,
                                uint32_t worker_id)
{
    return idmint__authority_force_release(a, ns, region, worker_id, -1);
}
