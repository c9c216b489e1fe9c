/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for src/authority_range.c: a reservation through the
 * authority, its replay by request id (a lost reply retried), the cut at
 * max_value, the checks made before the store is asked, and forgetting a
 * process's old request records.
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

#define INC "0123456789abcdef0123456789abcdef"

static int setup(void **state)
{
    struct ts_authority *f;
    idmint_ns_info i;

    if (ts_authority_setup(state) != 0)
        return -1;
    f = *state;
    /* rg: 1..1000, blocks of at most 400; sf: a snowflake namespace */
    idmint_ns_info_init(&i, IDMINT_KIND_RANGE);
    snprintf(i.name, sizeof(i.name), "rg");
    i.max_value = 1000;
    i.block = 100;
    i.max_block = 400;
    if (idmint_ns_create(f->a, &i) != 0)
        return -1;
    idmint_ns_info_init(&i, IDMINT_KIND_SNOWFLAKE);
    snprintf(i.name, sizeof(i.name), "sf");
    if (idmint_ns_create(f->a, &i) != 0)
        return -1;
    return 0;
}

/* The next value the store holds for rg. */
static uint64_t next_value(struct ts_authority *f)
{
    idmint_ns_info i;

    idmint_ns_info_init(&i, IDMINT_KIND_RANGE);
    assert_int_equal(idmint_ns_get(f->a, "rg", &i), 0);
    return i.next_value;
}

static void reserve(struct ts_authority *f, const char *request, uint64_t count, int want,
                    struct idmint__range *r)
{
    memset(r, 0, sizeof(*r));
    assert_int_equal(idmint__authority_range_reserve(f->a, "rg", INC, request, count, r), want);
}

static void test_authority_range__reservations_follow_each_other(void **state)
{
    struct ts_authority *f = *state;
    struct idmint__range a, b;

    reserve(f, "0000000000000001", 300, 0, &a);
    reserve(f, "0000000000000002", 400, 0, &b);
    assert_int_equal(a.start, 1);
    assert_int_equal(a.end, 301);
    assert_int_equal(b.start, 301);
    assert_int_equal(b.end, 701);
    assert_true(a.history.seq != 0 && b.history.seq > a.history.seq);
    assert_int_equal(next_value(f), 701);
}

/* A lost reply retried gets the same range, and no new grant. */
static void test_authority_range__a_repeat_replays_and_another_count_conflicts(void **state)
{
    struct ts_authority *f = *state;
    struct idmint__range a, again;

    reserve(f, "0000000000000001", 300, 0, &a);
    reserve(f, "0000000000000001", 300, 0, &again);
    assert_int_equal(again.start, a.start);
    assert_int_equal(again.end, a.end);
    assert_int_equal(again.history.seq, a.history.seq); /* the grant that made it */
    reserve(f, "0000000000000001", 200, IDMINT_ECONFLICT, &again);
    assert_int_equal(next_value(f), 301);
}

/* The last reservation is cut at max_value; then the namespace is exhausted. */
static void test_authority_range__cut_at_max_value_then_exhausted(void **state)
{
    struct ts_authority *f = *state;
    struct idmint__range r;

    reserve(f, "0000000000000001", 400, 0, &r);
    reserve(f, "0000000000000002", 400, 0, &r);
    reserve(f, "0000000000000003", 400, 0, &r);
    assert_int_equal(r.start, 801);
    assert_int_equal(r.end, 1001);
    reserve(f, "0000000000000004", 1, IDMINT_EEXHAUSTED, &r);
    assert_int_equal(next_value(f), 1001);
}

/* Each bad request is refused before anything is reserved. */
static void test_authority_range__bad_requests_change_nothing(void **state)
{
    struct ts_authority *f = *state;
    struct idmint__range r;

    reserve(f, "0000000000000001", 401, IDMINT_EINVAL, &r); /* above max_block */
    reserve(f, "0000000000000002", 0, IDMINT_EINVAL, &r);
    assert_int_equal(idmint__authority_range_reserve(f->a, "sf", INC, "0000000000000003", 1, &r),
                     IDMINT_EINVAL);
    assert_int_equal(idmint__authority_range_reserve(f->a, "Rg", INC, "0000000000000004", 1, &r),
                     IDMINT_EINVAL);
    assert_int_equal(idmint__authority_range_reserve(f->a, "nope", INC, "0000000000000005", 1, &r),
                     IDMINT_ENOTFOUND);
    assert_int_equal(idmint__authority_range_reserve(f->a, "rg", INC, "0000000000000006", 1, NULL),
                     IDMINT_EINVAL);
    assert_int_equal(idmint__authority_range_reserve(NULL, "rg", INC, "0000000000000007", 1, &r),
                     IDMINT_EINVAL);
    assert_int_equal(next_value(f), 1);
    /* A disabled namespace grants nothing either. */
    assert_int_equal(idmint_ns_set_disabled(f->a, "rg", 1), 0);
    reserve(f, "0000000000000008", 1, IDMINT_EDISABLED, &r);
    assert_int_equal(next_value(f), 1);
}

/* Forgetting drops the records before a request id: that request is then a new one. */
static void test_authority_range__forget_drops_the_older_records(void **state)
{
    struct ts_authority *f = *state;
    struct idmint__range a, r;
    uint64_t forgotten = 99;

    reserve(f, "0000000000000001", 10, 0, &a);
    reserve(f, "0000000000000002", 10, 0, &r);
    reserve(f, "0000000000000003", 10, 0, &r);
    assert_int_equal(
        idmint__authority_range_forget(f->a, "rg", INC, "0000000000000003", &forgotten), 0);
    assert_int_equal(forgotten, 2);
    assert_int_equal(next_value(f), 31);
    reserve(f, "0000000000000003", 10, 0, &r); /* still kept: a replay */
    assert_int_equal(r.start, 21);
    assert_int_equal(next_value(f), 31);
    reserve(f, "0000000000000001", 10, 0, &r); /* forgotten: a new range */
    assert_true(r.start > a.start);
    assert_int_equal(r.start, 31);
    assert_int_equal(idmint__authority_range_forget(f->a, "Bad", INC, "1", NULL), IDMINT_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_authority_range__reservations_follow_each_other, setup,
                                        ts_authority_teardown),
        cmocka_unit_test_setup_teardown(
            test_authority_range__a_repeat_replays_and_another_count_conflicts, setup,
            ts_authority_teardown),
        cmocka_unit_test_setup_teardown(test_authority_range__cut_at_max_value_then_exhausted,
                                        setup, ts_authority_teardown),
        cmocka_unit_test_setup_teardown(test_authority_range__bad_requests_change_nothing, setup,
                                        ts_authority_teardown),
        cmocka_unit_test_setup_teardown(test_authority_range__forget_drops_the_older_records, setup,
                                        ts_authority_teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
