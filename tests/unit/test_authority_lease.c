/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for src/authority_lease.c: the worker-lease rules the
 * authority applies before a store keeps a row (lease length, E cut at the
 * end of the time bits, the region check, the wait past the E found, the
 * bound of a forced release). The authority runs on SQLite with a clock
 * the test sets (authority_fixture.h), so every E is a number the test can
 * compute.
 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "authority_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOW_MS TS_AUTHORITY_NOW_MS

/* Create snowflake namespace @p name with @p time_bits, @p worker_bits, 10 ms units; read it back.
 */
static void snowflake(struct ts_authority *f, const char *name, uint8_t time_bits,
                      uint8_t worker_bits, idmint_ns_info *out)
{
    idmint_ns_info i;

    idmint_ns_info_init(&i, IDMINT_KIND_SNOWFLAKE);
    snprintf(i.name, sizeof(i.name), "%s", name);
    i.layout.time_bits = time_bits;
    i.layout.region_bits = 2;
    i.layout.worker_bits = worker_bits;
    i.layout.sequence_bits = 10;
    i.layout.unit_ms = 10;
    assert_int_equal(idmint_ns_create(f->a, &i), 0);
    idmint_ns_info_init(out, IDMINT_KIND_SNOWFLAKE);
    assert_int_equal(idmint_ns_get(f->a, name, out), 0);
}

static void holder(struct idmint__lease *l, uint32_t region, char fill)
{
    memset(l, 0, sizeof(*l));
    l->region = region;
    memset(l->holder, fill, 32);
}

static size_t rows_held(struct ts_authority *f, const char *ns)
{
    idmint_worker_info *w = NULL;
    size_t n = 0, i, held = 0;

    assert_int_equal(idmint_workers_list(f->a, ns, &w, &n), 0);
    for (i = 0; i < n; i++)
        held += idmint_worker_info_at(w, i)->holder[0] != '\0';
    idmint_free(w);
    return held;
}

static void test_authority_lease__length_is_checked_from_1_ms_to_a_day(void **state)
{
    (void)state;
    assert_int_equal(idmint__lease_ms_check(0), IDMINT_EINVAL);
    assert_non_null(strstr(idmint_errmsg(), "no lease"));
    assert_int_equal(idmint__lease_ms_check(IDMINT__LEASE_MAX_MS + UINT64_C(1)), IDMINT_EINVAL);
    assert_non_null(strstr(idmint_errmsg(), "one day"));
    assert_int_equal(idmint__lease_ms_check(1), 0);
    assert_int_equal(idmint__lease_ms_check(IDMINT__LEASE_MAX_MS), 0);
}

static void test_authority_lease__take_grants_now_plus_the_length_in_units(void **state)
{
    struct ts_authority *f = *state;
    idmint_ns_info ns;
    struct idmint__lease l;

    snowflake(f, "sf", 41, 3, &ns);
    holder(&l, 1, 'a');
    assert_int_equal(idmint__authority_lease_take(f->a, &ns, 5000, &l), 0);
    /* E = the unit of now + 5 s; the store is told 5000/10 + 1 units. */
    assert_int_equal(l.lease_until, idmint__unit_at(&ns.layout, NOW_MS + 5000));
    assert_int_equal(l.granted_units, 501);
    assert_int_equal(l.fence_found, 0); /* a new row */
    assert_int_equal(l.fence_ahead_ms, 0);
    assert_int_equal(rows_held(f, "sf"), 1);
}

static void test_authority_lease__e_is_cut_at_the_end_of_the_time_bits(void **state)
{
    struct ts_authority *f = *state;
    idmint_ns_info ns;
    struct idmint__lease l;
    uint64_t last;

    snowflake(f, "short", 32, 3, &ns); /* 2^32 units of 10 ms: about 16 months */
    last = idmint__unit_max(&ns.layout);
    /* One second before the last unit ends, a lease of a minute asks past it. */
    ts_authority_set_now(f, idmint__unit_start_ms(&ns.layout, last) - 1000);
    holder(&l, 0, 'b');
    assert_int_equal(idmint__authority_lease_take(f->a, &ns, 60000, &l), 0);
    assert_int_equal(l.lease_until, last + 1);
    /* Past the last unit nothing is granted, and no row is held for it. */
    ts_authority_set_now(f, idmint__unit_start_ms(&ns.layout, last) + 20);
    holder(&l, 0, 'c');
    assert_int_equal(idmint__authority_lease_take(f->a, &ns, 1000, &l), IDMINT_EEXHAUSTED);
    assert_non_null(strstr(idmint_errmsg(), "time bits of 'short' ran out"));
    assert_int_equal(rows_held(f, "short"), 1);
}

static void test_authority_lease__a_region_outside_its_bits_takes_nothing(void **state)
{
    struct ts_authority *f = *state;
    idmint_ns_info ns;
    struct idmint__lease l;

    snowflake(f, "sf", 41, 3, &ns);
    holder(&l, 4, 'a'); /* 2 region bits: 0..3 */
    assert_int_equal(idmint__authority_lease_take(f->a, &ns, 1000, &l), IDMINT_EINVAL);
    assert_non_null(strstr(idmint_errmsg(), "region 4 does not fit the 2 region bits"));
    assert_int_equal(rows_held(f, "sf"), 0);
    assert_int_equal(idmint__authority_force_release(f->a, "sf", 4, 0, -1), IDMINT_EINVAL);
}

static void test_authority_lease__a_range_namespace_has_no_leases(void **state)
{
    struct ts_authority *f = *state;
    idmint_ns_info ns;
    struct idmint__lease l;

    idmint_ns_info_init(&ns, IDMINT_KIND_RANGE);
    snprintf(ns.name, sizeof(ns.name), "rg");
    assert_int_equal(idmint_ns_create(f->a, &ns), 0);
    assert_int_equal(idmint_ns_get(f->a, "rg", &ns), 0);
    holder(&l, 0, 'a');
    assert_int_equal(idmint__authority_lease_take(f->a, &ns, 1000, &l), IDMINT_EINVAL);
    assert_non_null(strstr(idmint_errmsg(), "range namespace"));
    assert_int_equal(idmint__authority_force_release(f->a, "rg", 0, 0, -1), IDMINT_EINVAL);
    assert_int_equal(idmint__authority_lease_take(f->a, NULL, 1000, &l), IDMINT_EINVAL);
    assert_int_equal(idmint__authority_lease_take(f->a, &ns, 1000, NULL), IDMINT_EINVAL);
}

/* The next holder of a released id finds the E its last holder gave back, clamped to the row. */
static void test_authority_lease__release_hands_the_next_holder_its_clamped_e(void **state)
{
    struct ts_authority *f = *state;
    idmint_ns_info ns;
    struct idmint__lease l, next;
    uint64_t found;

    snowflake(f, "one", 41, 0, &ns); /* one worker id: every take is of the same row */
    holder(&l, 0, 'a');
    assert_int_equal(idmint__authority_lease_take(f->a, &ns, 10000, &l), 0);
    found = l.fence_found;
    /* A release above the holder's own E is cut to it. */
    assert_int_equal(idmint__authority_lease_release(f->a, &ns, &l, l.lease_until + 1000), 0);
    holder(&next, 0, 'b');
    assert_int_equal(idmint__authority_lease_take(f->a, &ns, 10000, &next), 0);
    assert_int_equal(next.fence_found, l.lease_until);
    /* A release below the E its holder found is lifted to it. */
    assert_int_equal(idmint__authority_lease_release(f->a, &ns, &next, found), 0);
    holder(&l, 0, 'c');
    assert_int_equal(idmint__authority_lease_take(f->a, &ns, 10000, &l), 0);
    assert_int_equal(l.fence_found, next.fence_found);
    /* The E found lies ahead of now: the taker is told by how much. */
    assert_int_equal(
        l.fence_ahead_ms,
        (uint64_t)(idmint__unit_start_ms(&ns.layout, l.fence_found) -
                   idmint__unit_start_ms(&ns.layout, idmint__unit_at(&ns.layout, NOW_MS))));
    /* A stale holder can neither renew nor release. */
    assert_int_equal(idmint__authority_lease_renew(f->a, &ns, &next, 10000), IDMINT_ELEASELOST);
    assert_int_equal(idmint__authority_lease_release(f->a, &ns, &next, 0), IDMINT_ELEASELOST);
}

static void test_authority_lease__renew_only_moves_e_forward(void **state)
{
    struct ts_authority *f = *state;
    idmint_ns_info ns;
    struct idmint__lease l;
    uint64_t first;

    snowflake(f, "sf", 41, 3, &ns);
    holder(&l, 0, 'a');
    assert_int_equal(idmint__authority_lease_take(f->a, &ns, 10000, &l), 0);
    first = l.lease_until;
    ts_authority_set_now(f, NOW_MS + 2000);
    assert_int_equal(idmint__authority_lease_renew(f->a, &ns, &l, 10000), 0);
    assert_int_equal(l.lease_until, idmint__unit_at(&ns.layout, NOW_MS + 12000));
    /* A shorter renewal never shortens what was granted. */
    assert_int_equal(idmint__authority_lease_renew(f->a, &ns, &l, 1000), 0);
    assert_int_equal(l.lease_until, idmint__unit_at(&ns.layout, NOW_MS + 12000));
    assert_true(l.lease_until > first);
    assert_int_equal(idmint__authority_lease_renew(f->a, &ns, &l, 0), IDMINT_EINVAL);
}

/* With the clock standing still behind the E found, acquire gives up and frees the id again. */
static void test_authority_lease__acquire_waits_past_the_e_found_or_gives_the_id_back(void **state)
{
    struct ts_authority *f = *state;
    idmint_ns_info ns;
    struct idmint__lease l, next;

    snowflake(f, "one", 41, 0, &ns);
    holder(&l, 0, 'a');
    assert_int_equal(idmint__authority_lease_take(f->a, &ns, 60000, &l), 0);
    assert_int_equal(idmint__authority_lease_release(f->a, &ns, &l, l.lease_until), 0);
    holder(&next, 0, 'b');
    assert_int_equal(idmint__authority_lease_acquire(f->a, &ns, 60000, 30, &next), IDMINT_ECLOCK);
    assert_non_null(strstr(idmint_errmsg(), "behind the fence"));
    assert_int_equal(rows_held(f, "one"), 0);
    /* Once the clock is past it, the same call takes and renews at once. */
    ts_authority_set_now(f, idmint__unit_start_ms(&ns.layout, l.lease_until + 1));
    holder(&next, 0, 'c');
    assert_int_equal(idmint__authority_lease_acquire(f->a, &ns, 60000, 30, &next), 0);
    assert_int_equal(next.fence_found, l.lease_until);
    assert_int_equal(next.lease_until, idmint__unit_at(&ns.layout, f->now_ms + 60000));
    assert_int_equal(rows_held(f, "one"), 1);
}

/* A forced release keeps E, unless the admin bounds it to now + a figure. */
static void test_authority_lease__force_release_keeps_e_unless_bounded(void **state)
{
    struct ts_authority *f = *state;
    idmint_ns_info ns;
    struct idmint__lease l, next;

    snowflake(f, "one", 41, 0, &ns);
    holder(&l, 0, 'a');
    assert_int_equal(idmint__authority_lease_take(f->a, &ns, 600000, &l), 0);
    assert_int_equal(idmint_worker_force_release(f->a, "one", 0, 0), 0);
    holder(&next, 0, 'b');
    assert_int_equal(idmint__authority_lease_take(f->a, &ns, 1000, &next), 0);
    assert_int_equal(next.fence_found, l.lease_until);
    /* Bounded to now + 2 s: the next holder waits for that, not ten minutes. */
    assert_int_equal(idmint__authority_force_release(f->a, "one", 0, 0, 2000), 0);
    holder(&l, 0, 'c');
    assert_int_equal(idmint__authority_lease_take(f->a, &ns, 1000, &l), 0);
    assert_int_equal(l.fence_found, idmint__unit_at(&ns.layout, NOW_MS + 2000) + 1);
    assert_int_equal(idmint__authority_force_release(f->a, "one", 0, 1, -1), IDMINT_ENOTFOUND);
    assert_int_equal(idmint__authority_force_release(f->a, "Bad", 0, 0, -1), IDMINT_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_authority_lease__length_is_checked_from_1_ms_to_a_day),
        cmocka_unit_test_setup_teardown(
            test_authority_lease__take_grants_now_plus_the_length_in_units, ts_authority_setup,
            ts_authority_teardown),
        cmocka_unit_test_setup_teardown(test_authority_lease__e_is_cut_at_the_end_of_the_time_bits,
                                        ts_authority_setup, ts_authority_teardown),
        cmocka_unit_test_setup_teardown(
            test_authority_lease__a_region_outside_its_bits_takes_nothing, ts_authority_setup,
            ts_authority_teardown),
        cmocka_unit_test_setup_teardown(test_authority_lease__a_range_namespace_has_no_leases,
                                        ts_authority_setup, ts_authority_teardown),
        cmocka_unit_test_setup_teardown(
            test_authority_lease__release_hands_the_next_holder_its_clamped_e, ts_authority_setup,
            ts_authority_teardown),
        cmocka_unit_test_setup_teardown(test_authority_lease__renew_only_moves_e_forward,
                                        ts_authority_setup, ts_authority_teardown),
        cmocka_unit_test_setup_teardown(
            test_authority_lease__acquire_waits_past_the_e_found_or_gives_the_id_back,
            ts_authority_setup, ts_authority_teardown),
        cmocka_unit_test_setup_teardown(test_authority_lease__force_release_keeps_e_unless_bounded,
                                        ts_authority_setup, ts_authority_teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
