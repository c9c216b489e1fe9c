/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for cmd/idmintd/clocks.c, the daemon's one door to the
 * system clocks: the monotonic readings never go back, the ms forms agree
 * with the ns forms, the wall clock is the system's, and no two seeds of a
 * process repeat.
 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "clocks.h"

#include <time.h>

static void test_clocks__monotonic_readings_never_go_back(void **state)
{
    uint64_t last = clocks_mono_ns(), now;
    int i;

    (void)state;
    for (i = 0; i < 100000; i++) {
        now = clocks_mono_ns();
        assert_true(now >= last);
        last = now;
    }
}

/* Each ms form lies between the ns forms read around it. */
static void test_clocks__ms_forms_agree_with_ns_forms(void **state)
{
    uint64_t mono_before, mono_ms, mono_after;
    int64_t wall_before, wall_ms, wall_after;

    (void)state;
    mono_before = clocks_mono_ns();
    mono_ms = clocks_mono_ms();
    mono_after = clocks_mono_ns();
    assert_true(mono_ms >= mono_before / 1000000u && mono_ms <= mono_after / 1000000u);
    wall_before = clocks_wall_ns();
    wall_ms = clocks_wall_ms();
    wall_after = clocks_wall_ns();
    assert_true(wall_ms >= wall_before / 1000000 && wall_ms <= wall_after / 1000000);
}

/* The wall clock is the system's: time() read around it brackets it. */
static void test_clocks__wall_time_is_the_systems(void **state)
{
    time_t before, after;
    int64_t ms;

    (void)state;
    before = time(NULL);
    ms = clocks_wall_ms();
    after = time(NULL);
    assert_true(ms / 1000 >= (int64_t)before && ms / 1000 <= (int64_t)after);
}

static void test_clocks__seeds_do_not_repeat(void **state)
{
    uint64_t seeds[64];
    int i, j;

    (void)state;
    for (i = 0; i < 64; i++)
        seeds[i] = clocks_seed();
    for (i = 0; i < 64; i++)
        for (j = 0; j < i; j++)
            assert_true(seeds[i] != seeds[j]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clocks__monotonic_readings_never_go_back),
        cmocka_unit_test(test_clocks__ms_forms_agree_with_ns_forms),
        cmocka_unit_test(test_clocks__wall_time_is_the_systems),
        cmocka_unit_test(test_clocks__seeds_do_not_repeat),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
