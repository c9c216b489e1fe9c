/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tests for src/options.c: defaults, the copy of a caller's struct of an
 * older header, the checks idmint_open makes, and the history check
 * interval's floor.
 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "idmint.h"
#include "internal.h"

#include <string.h>

static int64_t fake_wall(void *ctx)
{
    (void)ctx;
    return 0;
}

static void test_options__null_gives_the_defaults_and_they_pass(void **state)
{
    idmint_options o, d;

    (void)state;
    memset(&o, 0xa5, sizeof(o));
    assert_int_equal(idmint__options_copy_in(NULL, &o), 0);
    idmint_options_init_v2(&d);
    assert_int_equal(o.size, sizeof(o));
    assert_int_equal(o.lease_ms, d.lease_ms);
    assert_int_equal(o.renew_ms, d.renew_ms);
    assert_true(o.renew_ms < o.lease_ms);
    assert_int_equal(o.deadline_ms, d.deadline_ms);
    assert_int_equal(idmint__history_check_ms(&o), 1000);
}

/* A program built against the first header passes a shorter struct: what it lacks is defaulted. */
static void test_options__an_older_struct_gets_the_defaults_it_did_not_know(void **state)
{
    idmint_options old, o;

    (void)state;
    (idmint_options_init)(&old); /* the old symbol: the first guarded size */
    assert_int_equal(old.size, IDMINT__OPTIONS_SIZE_V1);
    old.lease_ms = 5000;
    old.renew_ms = 1000;
    assert_int_equal(idmint__options_copy_in(&old, &o), 0);
    assert_int_equal(o.lease_ms, 5000);
    assert_int_equal(o.renew_ms, 1000);
    assert_int_equal(o.size, IDMINT__OPTIONS_SIZE_V1);
    assert_int_equal(idmint__history_check_ms(&o), 1000); /* beyond the old size: default */
    old.size = 3;                                         /* no header had this size */
    assert_int_equal(idmint__options_copy_in(&old, &o), IDMINT_EINVAL);
}

static void test_options__each_bad_value_is_refused_by_name(void **state)
{
    idmint_options o, out;

    (void)state;
    idmint_options_init_v2(&o);
    o.lease_ms = 99;
    assert_int_equal(idmint__options_copy_in(&o, &out), IDMINT_EINVAL);
    assert_non_null(strstr(idmint_errmsg(), "lease_ms 99"));
    idmint_options_init_v2(&o);
    o.renew_ms = o.lease_ms;
    assert_int_equal(idmint__options_copy_in(&o, &out), IDMINT_EINVAL);
    assert_non_null(strstr(idmint_errmsg(), "renew_ms"));
    idmint_options_init_v2(&o);
    o.renew_ms = 0;
    assert_int_equal(idmint__options_copy_in(&o, &out), IDMINT_EINVAL);
    idmint_options_init_v2(&o);
    o.refill_percent = 101;
    assert_int_equal(idmint__options_copy_in(&o, &out), IDMINT_EINVAL);
    assert_non_null(strstr(idmint_errmsg(), "refill_percent 101"));
    idmint_options_init_v2(&o);
    o.refill_percent = 100;
    assert_int_equal(idmint__options_copy_in(&o, &out), 0);
    idmint_options_init_v2(&o);
    o.wall_clock_ms = fake_wall; /* one clock without the other */
    assert_int_equal(idmint__options_copy_in(&o, &out), IDMINT_EINVAL);
    assert_non_null(strstr(idmint_errmsg(), "both clocks"));
}

static void test_options__the_history_check_has_a_floor(void **state)
{
    idmint_options o;

    (void)state;
    idmint_options_init_v2(&o);
    o.history_check_ms = 1;
    assert_int_equal(idmint__history_check_ms(&o), 10);
    o.history_check_ms = 10;
    assert_int_equal(idmint__history_check_ms(&o), 10);
    o.history_check_ms = 250;
    assert_int_equal(idmint__history_check_ms(&o), 250);
    o.history_check_ms = 0;
    assert_int_equal(idmint__history_check_ms(&o), 1000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_options__null_gives_the_defaults_and_they_pass),
        cmocka_unit_test(test_options__an_older_struct_gets_the_defaults_it_did_not_know),
        cmocka_unit_test(test_options__each_bad_value_is_refused_by_name),
        cmocka_unit_test(test_options__the_history_check_has_a_floor),
    };

    return cmocka_run_group_tests_name("options", tests, NULL, NULL);
}
