/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The snowflake engine. All state is one 64-bit word, (t << S) | seq of the
 * last value issued, advanced by compare-and-swap: a batch is one CAS, the
 * sequence rolls into the next unit exactly like an addition, and IDs are
 * strictly increasing across every thread of the handle. Time is passed in,
 * never read here, so tests drive it. The fence lives here too: no value is
 * ever issued with a time at or after the lease's E.
 */
#include "internal.h"

void idmint__snowflake_init(struct snowflake *sf, const idmint_layout *l, uint32_t region,
                            uint32_t worker, uint64_t fence_found, uint64_t lease_until,
                            uint64_t borrow_units)
{
    sf->seq_bits = l->sequence_bits;
    sf->time_shift = (unsigned)l->region_bits + l->worker_bits + l->sequence_bits;
    sf->seq_mask = (UINT64_C(1) << l->sequence_bits) - 1;
    sf->max_time = (UINT64_C(1) << l->time_bits) - 1;
    sf->prefix = ((uint64_t)region << (l->worker_bits + l->sequence_bits)) |
                 ((uint64_t)worker << l->sequence_bits);
    sf->borrow_units = borrow_units;
#ifdef IDMINT_MUTANT_FENCE_IGNORED /* a planted wrong rule the simulator must catch (tests/sim) */
    fence_found = 0;
#endif
    /* The first value issued is (fence_found + 1) << S at the earliest: the
     * previous holder may have minted anything up to its E. */
    atomic_store(&sf->state, ((fence_found + 1) << sf->seq_bits) - 1);
    atomic_store(&sf->lease_until, lease_until);
    atomic_store(&sf->lease_err, IDMINT_ELEASELOST);
}

int idmint__snowflake_next(struct snowflake *sf, uint64_t now_unit, uint64_t *ids, size_t n,
                           size_t *got)
{
    const unsigned s = sf->seq_bits;
    uint64_t old = atomic_load_explicit(&sf->state, memory_order_relaxed);
    uint64_t first, last, limit_time, until;

    if (n == 1 && (old + 1) >> s == now_unit) {
        /* The common case, one ID within the current unit: an addition
         * never fails under contention the way a CAS does. The result is
         * checked again; a value that fails the check is skipped (a gap),
         * and the exact path below decides. */
        uint64_t v = atomic_fetch_add_explicit(&sf->state, 1, memory_order_relaxed) + 1;
        uint64_t t = v >> s;

        until = atomic_load_explicit(&sf->lease_until, memory_order_acquire);
        if (t == now_unit && t < until && t <= sf->max_time) {
            ids[0] = (t << sf->time_shift) | sf->prefix | (v & sf->seq_mask);
            *got = 1;
            return 0;
        }
        old = atomic_load_explicit(&sf->state, memory_order_relaxed);
    }

    for (;;) {
        uint64_t floor = now_unit << s;

        first = old + 1 > floor ? old + 1 : floor;
        /* The newest time this call may use: the clock plus what the handle
         * may borrow, never E or beyond (checked against the value written
         * into the ID, so a pause after this point cannot matter). */
        limit_time = now_unit + sf->borrow_units;
        until = atomic_load_explicit(&sf->lease_until, memory_order_acquire);
        if (until == 0 || (first >> s) >= until) {
            int err = atomic_load_explicit(&sf->lease_err, memory_order_relaxed);

            return err != 0 ? err : IDMINT_ELEASELOST;
        }
        if (limit_time >= until)
            limit_time = until - 1;
        if (limit_time > sf->max_time)
            limit_time = sf->max_time;
        if ((first >> s) > limit_time)
            return (first >> s) > sf->max_time ? IDMINT_EEXHAUSTED : IDMINT__SNOWFLAKE_WAIT;
        last = first + (n - 1);
        if (last < first || (last >> s) > limit_time)
            last = ((limit_time + 1) << s) - 1;
        if (atomic_compare_exchange_weak_explicit(&sf->state, &old, last, memory_order_relaxed,
                                                  memory_order_relaxed))
            break;
    }

    {
        const unsigned shift = sf->time_shift;
        const uint64_t mask = sf->seq_mask, prefix = sf->prefix;
        size_t count = (size_t)(last - first + 1);

        for (size_t i = 0; i < count; i++) {
            uint64_t v = first + i;

            ids[i] = ((v >> s) << shift) | prefix | (v & mask);
        }
        *got = count;
    }
    return 0;
}

uint64_t idmint__snowflake_last_time(struct snowflake *sf)
{
    return atomic_load(&sf->state) >> sf->seq_bits;
}
