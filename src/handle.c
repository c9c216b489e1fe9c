/* SPDX-License-Identifier: Apache-2.0 */
/*
 * idmint_open/close and the minting entry points: the fork check (against
 * fork_gate.c), the clock read and the wait at a full sequence. Options are
 * options.c's; the engines (snowflake.c, range.c) and the lease policy
 * (lease.c) do the rest.
 */
#include "internal.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CACHE_LINE        64
#define WAIT_SLEEP_MAX_MS 50 /* a sequence wait reads the clock again after this */

struct idmint {
    /* Hot and shared by every minting thread: one CAS target plus read-mostly
     * fields, kept away from the clock's cache line. */
    _Alignas(CACHE_LINE) struct snowflake sf;
    /* 1 in the process that opened the handle. The whole struct lies on
     * pages the kernel empties in every child (MADV_WIPEONFORK), so a child
     * reads 0 here and nothing of the parent's lease or state; 0 from the
     * start where pages cannot be wiped, and fork_id decides. */
    _Alignas(CACHE_LINE) int is_own;
    uint64_t fork_id;  /* idmint__fork_id() at open; 0 in a child when wiped */
    struct clock *clk; /* &own_clock when injected, else the process clock */
    struct range_supply *rs;
    int is_range;
    const _Atomic uint64_t *range_key; /* the range supply's key into idmint__range_tls */
    idmint_layout layout;
    uint32_t region;
    struct lease_keeper *lk;
    char incarnation[33];
    /* Written only by calls that found the sequence used up, which happens
     * while other threads mint flat out: its own line. */
    _Alignas(CACHE_LINE) _Atomic uint64_t sequence_waits;
    _Alignas(CACHE_LINE) struct clock own_clock; /* only with injected clocks */
};

/* The hot half of is_forked(): one load and compare on m's own line. */
static inline int is_own(const idmint *m)
{
    return __builtin_expect(m->is_own == 1, 1) != 0;
}

/*
 * Whether this is a copy of the process that opened @p m (fork(), a raw
 * clone). In a child the wiped handle reads is_own 0 and fork_id 0, which
 * no process's fork id is; unwiped, fork_id is the opener's, not ours.
 */
static int is_forked(const idmint *m)
{
    return !is_own(m) && idmint__fork_id() != m->fork_id;
}

static int forked_error(void)
{
    return idmint__fail(IDMINT_EFORKED, "this handle was opened by the parent process; open a "
                                        "new one in the child");
}

int idmint_open(idmint **out, const char *authority, const char *ns, const idmint_options *opts)
{
    idmint_options o;
    struct idmint_authority *a = NULL;
    idmint_ns_info info;
    idmint *m;
    int rc, is_wiped;

    idmint__errmsg_clear();
    if (out == NULL || ns == NULL)
        return idmint__fail(IDMINT_EINVAL, "out and ns must not be NULL");
    if ((rc = idmint__options_copy_in(opts, &o)) != 0)
        return rc;
    idmint__fork_sync();

    m = idmint__wiped_alloc(sizeof(*m), &is_wiped);
    if (m == NULL)
        return IDMINT_ENOMEM;
    if (o.wall_clock_ms != NULL) {
        idmint__clock_init(&m->own_clock, o.wall_clock_ms, o.mono_clock_ns, o.clock_ctx);
        m->clk = &m->own_clock;
    } else {
        m->clk = idmint__clock_system();
    }
    m->fork_id = idmint__fork_id();
    m->is_own = is_wiped;

    idmint__store_gate_enter();
    rc = idmint__authority_open_clock(&a, authority, o.region, m->clk, o.token);
    if (rc == 0) {
        idmint_ns_info_init(&info, 0);
        rc = idmint__authority_ns_resolve(a, ns, &info);
    }
    if (rc == 0)
        rc = idmint__authority_region_ns_open(a, &info);
    idmint__store_gate_leave();
    if (rc != 0)
        goto fail;
    rc = idmint__incarnation(m->incarnation);
    if (rc != 0)
        goto fail;
    m->region = o.region;
    if (info.kind == IDMINT_KIND_RANGE) {
        m->is_range = 1;
        rc = idmint__range_open(&m->rs, a, &info, &o, m->incarnation);
        if (rc == 0)
            m->range_key = idmint__range_cache_key(m->rs);
    } else {
        m->layout = info.layout;
        rc = idmint__lease_open(&m->lk, a, &info, &o, m->incarnation, &m->sf);
    }
    a = NULL; /* owned by the range supply or the lease keeper now, even on failure */
    if (rc != 0)
        goto fail;
    *out = m;
    return 0;
fail:
    idmint__store_gate_enter();
    idmint_authority_close(a);
    idmint__store_gate_leave();
    idmint__wiped_free(m, sizeof(*m));
    return rc;
}

static uint64_t now_unit(idmint *m, int64_t now_ms)
{
    return idmint__unit_at(&m->layout, now_ms);
}

/*
 * Sleep through most of what is left of unit @p t, so that a wait for the
 * next unit does not spin for up to unit_ms (a second, in a namespace of
 * second units). The last millisecond is left to yielding, which sees the
 * new unit at once. Bounded, so that a stepped clock is read again soon.
 */
static void sleep_out_unit(idmint *m, uint64_t t, int64_t now_ms)
{
    int64_t left_ms = idmint__unit_start_ms(&m->layout, t + 1) - now_ms;

    if (left_ms > 1)
        idmint__sleep_ms(
            (uint32_t)(left_ms - 1 < WAIT_SLEEP_MAX_MS ? left_ms - 1 : WAIT_SLEEP_MAX_MS));
    else
        idmint__yield();
}

/*
 * Mint up to n snowflake IDs, waiting while this unit's sequence is used up.
 * The wait reads the clock directly: the cache would only say the same.
 */
static int snowflake_fail(int rc);

static int snowflake_mint(idmint *m, uint64_t *ids, size_t n, size_t *got)
{
    int64_t now_ms = idmint__clock_now_ms(m->clk);
    uint64_t t = now_unit(m, now_ms);
    unsigned spins = 0;
    int rc;

    while ((rc = idmint__snowflake_next(&m->sf, t, ids, n, got)) == IDMINT__SNOWFLAKE_WAIT) {
        if (spins == 0)
            atomic_fetch_add_explicit(&m->sequence_waits, 1, memory_order_relaxed);
        if (++spins > 64)
            sleep_out_unit(m, t, now_ms);
        now_ms = idmint__clock_read_ms(m->clk);
        t = now_unit(m, now_ms);
    }
    return snowflake_fail(rc);
}

/* Set the message of snowflake error @p rc (0 passes through); returns @p rc. */
static int snowflake_fail(int rc)
{
    if (rc == IDMINT_ELEASELOST)
        idmint__fail(rc, "the worker lease ran out or was taken away; open a new handle");
    else if (rc == IDMINT_EEXHAUSTED)
        idmint__fail(rc, "the time bits of this namespace ran out");
    else if (rc == IDMINT_ERESTORED)
        idmint__fail(rc, "the authority went back to before this lease (restored from a "
                         "backup, copied back or rolled back) and may give the worker id out "
                         "again: minting stopped. Run 'idmint authority fence' on it, then "
                         "open a new handle");
    else if (rc == IDMINT_EDISABLED)
        idmint__fail(rc, "the namespace was disabled: this lease ran out and is not renewed");
    return rc;
}

/* idmint_next past its checks. */
static inline int next_one(idmint *m, uint64_t *id)
{
    size_t got;

    if (m->is_range) {
        /* The common case inline: this thread's cached chunk, no shared line. */
        struct range_tls *t = &idmint__range_tls[0];

        if (t->owner == atomic_load_explicit(m->range_key, memory_order_relaxed) &&
            t->next < t->end) {
            *id = t->next++;
            return 0;
        }
        return idmint__range_next(m->rs, id);
    }
    return snowflake_mint(m, id, 1, &got);
}

/*
 * Not is_own: a copy of the process, or the getpid() fallback, which comes
 * here on every call. Out of line, so that the
 * common path keeps nothing in registers across a call it never makes.
 */
__attribute__((noinline, cold)) static int next_checked(idmint *m, uint64_t *id)
{
    if (is_forked(m))
        return forked_error();
    return next_one(m, id);
}

int idmint_next(idmint *m, uint64_t *id)
{
    if (m == NULL || id == NULL)
        return idmint__fail(IDMINT_EINVAL, "need a handle and an output pointer");
    if (!is_own(m))
        return next_checked(m, id);
    return next_one(m, id);
}

int idmint_next_n(idmint *m, uint64_t *ids, size_t n)
{
    size_t done = 0;

    if (m == NULL || ids == NULL || n == 0)
        return idmint__fail(IDMINT_EINVAL, "need a handle, an array and n >= 1");
    if (is_forked(m))
        return forked_error();
    if (m->is_range)
        return idmint__range_next_n(m->rs, ids, n);
    while (done < n) {
        size_t got;
        int rc = snowflake_mint(m, ids + done, n - done, &got);

        if (rc != 0)
            return rc;
        done += got;
    }
    return 0;
}

int idmint_try_next_n(idmint *m, uint64_t *ids, size_t n, size_t *got, uint32_t *wait_ms)
{
    size_t done = 0;
    int64_t now_ms;
    int rc;

    if (m == NULL || ids == NULL || n == 0 || got == NULL || wait_ms == NULL)
        return idmint__fail(IDMINT_EINVAL,
                            "need a handle, an array, n >= 1 and both output pointers");
    if (is_forked(m))
        return forked_error();
    if (m->is_range)
        return idmint__range_try_next_n(m->rs, ids, n, got, wait_ms);
    /* One pass: what the current unit (and what the handle may borrow)
     * holds. A second call in the same unit would only say WAIT again. */
    now_ms = idmint__clock_now_ms(m->clk);
    while (done < n) {
        size_t part = 0;

        rc = idmint__snowflake_next(&m->sf, now_unit(m, now_ms), ids + done, n - done, &part);
        if (rc == IDMINT__SNOWFLAKE_WAIT) {
            /* The cached clock may lag a unit behind: read it once before
             * saying wait, as snowflake_mint does on its first retry. */
            int64_t fresh_ms = idmint__clock_read_ms(m->clk);

            if (now_unit(m, fresh_ms) == now_unit(m, now_ms))
                break;
            now_ms = fresh_ms;
            continue;
        }
        if (rc != 0) {
            if (done > 0)
                break; /* what was minted is good: hand it out, the error comes next call */
            return snowflake_fail(rc);
        }
        done += part;
    }
    if (done < n) {
        int64_t left_ms = idmint__unit_start_ms(&m->layout, now_unit(m, now_ms) + 1) - now_ms;

        if (done == 0)
            atomic_fetch_add_explicit(&m->sequence_waits, 1, memory_order_relaxed);
        *wait_ms =
            left_ms < 1 ? 1 : (uint32_t)(left_ms < WAIT_SLEEP_MAX_MS ? left_ms : WAIT_SLEEP_MAX_MS);
    } else {
        *wait_ms = 0;
    }
    *got = done;
    return 0;
}

/* The old symbol: the first guarded version, for programs built against the 0.1 header. */
void(idmint_handle_info_init)(idmint_handle_info *info)
{
    if (info == NULL)
        return;
    memset(info, 0, IDMINT__HANDLE_INFO_SIZE_V1);
    info->size = IDMINT__HANDLE_INFO_SIZE_V1;
}

void idmint_handle_info_init_v2(idmint_handle_info *info)
{
    if (info == NULL)
        return;
    memset(info, 0, sizeof(*info));
    info->size = sizeof(*info);
}

int idmint_info(idmint *m, idmint_handle_info *out)
{
    idmint_handle_info info;
    int rc;

    if (m == NULL || out == NULL)
        return idmint__fail(IDMINT_EINVAL, "handle or output is NULL");
    if ((rc = idmint__struct_size_check(out->size, IDMINT__HANDLE_INFO_SIZE_V1, sizeof(*out),
                                        "idmint_handle_info", "idmint_handle_info_init")) != 0)
        return rc;
    if (is_forked(m))
        return forked_error();
    memset(&info, 0, sizeof(info));
    info.is_range = m->is_range;
    memcpy(info.incarnation, m->incarnation, sizeof(info.incarnation));
    if (m->is_range) {
        struct idmint__range_figures f;

        idmint__range_figures(m->rs, &f);
        info.range_left = f.left;
        info.range_block = f.block;
        info.range_rate = f.rate;
        info.outage_budget_ms = f.budget_ms;
        info.range_reservations = f.reservations;
    } else {
        struct idmint__lease lease;

        idmint__lease_get(m->lk, &lease);
        info.region = lease.region;
        info.worker_id = lease.worker_id;
        info.generation = lease.generation;
        info.fence_found = lease.fence_found;
        info.lease_until = atomic_load(&m->sf.lease_until);
        info.last_time = idmint__snowflake_last_time(&m->sf);
        info.layout = m->layout;
        info.sequence_waits = atomic_load_explicit(&m->sequence_waits, memory_order_relaxed);
        {
            uint64_t now_unit = idmint__unit_at(&m->layout, idmint__clock_now_ms(m->clk));

            info.outage_budget_ms =
                info.lease_until > now_unit
                    ? (uint64_t)(idmint__unit_start_ms(&m->layout, info.lease_until) -
                                 idmint__unit_start_ms(&m->layout, now_unit))
                    : 0;
        }
    }
    /* Only out->size bytes: the caller's header may predate members we have. */
    idmint__struct_copy_out(out, &info);
    return 0;
}

int idmint_lease_status(idmint *m)
{
    if (m == NULL)
        return IDMINT_EINVAL;
    if (is_forked(m))
        return forked_error();
    return m->is_range ? idmint__range_status(m->rs) : idmint__lease_status(m->lk);
}

/* End the lease or ranges of @p m as @p how says (enum idmint__end), and free it. */
static void end_handle(idmint *m, int how)
{
    if (m->is_range)
        idmint__range_close(m->rs, how);
    else
        idmint__lease_close(m->lk, idmint__snowflake_last_time(&m->sf), how);
    idmint__wiped_free(m, sizeof(*m));
}

void idmint_close(idmint *m)
{
    int forked;

    if (m == NULL)
        return;
    forked = is_forked(m);
    end_handle(m, forked ? IDMINT__END_FORKED : IDMINT__END_RELEASE);
}

int idmint__handle_drive(idmint *m)
{
    if (m == NULL || !idmint__is_driven())
        return IDMINT_EINVAL;
    return m->is_range ? idmint__range_drive(m->rs) : idmint__lease_drive(m->lk);
}

void idmint__handle_crash(idmint *m)
{
    if (m != NULL)
        end_handle(m, IDMINT__END_CRASH);
}
