/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for the "fault" test backend (tests/support/fault_store.c):
 * each knob does what other tests will rely on it to do.
 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "fault_store.h"
#include "idmint.h"
#include "internal.h"
#include "store.h"
#include "testsupport.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOW_MS   INT64_C(1780000000000)
#define HOLDER_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

struct fx {
    char *dir;
    char url[600];
    struct store *st; /* the fault store */
};

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof(*f));
    idmint_ns_info ns;

    if (f == NULL || ts_fault_register() != 0 || (f->dir = ts_tempdir()) == NULL)
        return -1;
    ts_fault_reset();
    snprintf(f->url, sizeof(f->url), "fault:sqlite:%s/fault.db", f->dir);
    if (idmint__store_open(f->url, NULL, &f->st) != 0)
        return -1;
    memset(&ns, 0, sizeof(ns));
    snprintf(ns.name, sizeof(ns.name), "ledger");
    ns.kind = IDMINT_KIND_RANGE;
    ns.next_value = 1;
    ns.max_value = 1000000;
    ns.block = 100;
    ns.max_block = 1000;
    if (idmint__store_ns_create(f->st, &ns, "test", NOW_MS) != 0)
        return -1;
    ts_fault_reset();
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;

    ts_fault_reset();
    idmint__store_close(f->st);
    ts_rmtree(f->dir);
    free(f);
    return 0;
}

static uint64_t next_value(struct fx *f)
{
    idmint_ns_info ns;

    assert_int_equal(idmint__store_ns_get(f->st, "ledger", &ns), 0);
    return ns.next_value;
}

static void test_fault_store__passes_calls_through_and_counts_them(void **state)
{
    struct fx *f = *state;
    struct idmint__range r = {0};

    assert_int_equal(ts_fault_calls(), 0);
    assert_int_equal(idmint__store_range_reserve(f->st, "ledger", "inc", "a", 10, NOW_MS, &r), 0);
    assert_int_equal(r.start, 1);
    assert_int_equal(r.end, 11);
    assert_int_equal(ts_fault_calls(), 1);
    assert_int_equal(next_value(f), 11);
    assert_int_equal(ts_fault_calls(), 2);
}

static void test_fault_store__down_fails_every_call_and_changes_nothing(void **state)
{
    struct fx *f = *state;
    struct idmint__range r = {.start = 5, .end = 6};
    struct store *other = NULL;
    idmint_ns_info ns;

    ts_fault_set_down(1);
    assert_int_equal(idmint__store_range_reserve(f->st, "ledger", "inc", "a", 10, NOW_MS, &r),
                     IDMINT_EUNAVAILABLE);
    assert_int_equal(idmint__store_ns_get(f->st, "ledger", &ns), IDMINT_EUNAVAILABLE);
    assert_int_equal(idmint__store_open(f->url, NULL, &other), IDMINT_EUNAVAILABLE);
    assert_null(other);
    assert_int_equal(r.start, 5);
    ts_fault_set_down(0);
    assert_int_equal(next_value(f), 1);
}

static void test_fault_store__fail_nth_fails_only_that_call_before_doing_it(void **state)
{
    struct fx *f = *state;
    struct idmint__range r = {.start = 5, .end = 6};

    ts_fault_fail_nth(2);
    assert_int_equal(idmint__store_range_reserve(f->st, "ledger", "inc", "a", 10, NOW_MS, &r), 0);
    assert_int_equal(idmint__store_range_reserve(f->st, "ledger", "inc", "b", 10, NOW_MS, &r),
                     IDMINT_EUNAVAILABLE);
    assert_int_equal(r.start, 1); /* still the first reply */
    assert_int_equal(next_value(f), 11);
    /* Not recorded: the same request is new and gets the next values. */
    assert_int_equal(idmint__store_range_reserve(f->st, "ledger", "inc", "b", 10, NOW_MS, &r), 0);
    assert_int_equal(r.start, 11);
}

static void test_fault_store__lost_reply_is_done_and_a_replay_returns_it(void **state)
{
    struct fx *f = *state;
    struct idmint__range r = {.start = 5, .end = 6};

    ts_fault_lose_reply_nth(1);
    assert_int_equal(idmint__store_range_reserve(f->st, "ledger", "inc", "a", 10, NOW_MS, &r),
                     IDMINT_EUNAVAILABLE);
    assert_int_equal(r.start, 5);
    assert_int_equal(next_value(f), 11); /* the store did reserve */
    assert_int_equal(idmint__store_range_reserve(f->st, "ledger", "inc", "a", 10, NOW_MS, &r), 0);
    assert_int_equal(r.start, 1);
    assert_int_equal(r.end, 11);
    assert_int_equal(next_value(f), 11);
}

static void test_fault_store__lost_lease_take_leaves_the_lease_untouched(void **state)
{
    struct fx *f = *state;
    idmint_ns_info ns;
    struct idmint__lease l = {0};
    idmint_worker_info *w = NULL;
    size_t n = 0;

    memset(&ns, 0, sizeof(ns));
    snprintf(ns.name, sizeof(ns.name), "ids");
    ns.kind = IDMINT_KIND_SNOWFLAKE;
    ns.layout.time_bits = 41;
    ns.layout.worker_bits = 10;
    ns.layout.sequence_bits = 12;
    ns.layout.unit_ms = 1;
    assert_int_equal(idmint__store_ns_create(f->st, &ns, "test", NOW_MS), 0);
    memset(&l, 0, sizeof(l));
    snprintf(l.holder, sizeof(l.holder), "%s", HOLDER_A);
    ts_fault_lose_reply_nth(1);
    assert_int_equal(idmint__store_lease_take(f->st, "ids", 1024, 10, 20, &l, "test", NOW_MS),
                     IDMINT_EUNAVAILABLE);
    assert_int_equal(l.generation, 0);
    assert_int_equal(idmint__store_lease_list(f->st, "ids", &w, &n), 0);
    assert_int_equal(n, 1);
    assert_string_equal(w[0].holder, HOLDER_A);
    free(w);
}

static void test_fault_store__reset_disarms_every_knob(void **state)
{
    struct fx *f = *state;
    struct idmint__range r = {0};

    ts_fault_fail_nth(1);
    ts_fault_lose_reply_nth(1);
    ts_fault_set_down(1);
    ts_fault_reset();
    assert_int_equal(idmint__store_range_reserve(f->st, "ledger", "inc", "a", 10, NOW_MS, &r), 0);
    assert_int_equal(ts_fault_calls(), 1);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_fault_store__passes_calls_through_and_counts_them),
        T(test_fault_store__down_fails_every_call_and_changes_nothing),
        T(test_fault_store__fail_nth_fails_only_that_call_before_doing_it),
        T(test_fault_store__lost_reply_is_done_and_a_replay_returns_it),
        T(test_fault_store__lost_lease_take_leaves_the_lease_untouched),
        T(test_fault_store__reset_disarms_every_knob),
    };

    return cmocka_run_group_tests_name("fault_store", tests, NULL, NULL);
}
