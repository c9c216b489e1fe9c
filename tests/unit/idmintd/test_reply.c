/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for cmd/idmintd/reply.c's pure parts: the near miss a 400 for
 * an unknown name suggests (case, typing slips, abbreviations, and nothing
 * for a name that is not close), and the ISO-8601 form of a time.
 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "reply.h"

#include <string.h>

static const char *const ids_params[] = {"namespace", "count", "format", NULL};

static const char *near(const char *given, const char *const *known)
{
    return routes_near_miss(given, strlen(given), known);
}

static void test_reply__typing_slips_and_case_find_the_name(void **state)
{
    (void)state;
    assert_string_equal(near("Count", ids_params), "count");
    assert_string_equal(near("cuont", ids_params), "count");       /* a swap */
    assert_string_equal(near("coun", ids_params), "count");        /* one dropped */
    assert_string_equal(near("namspce", ids_params), "namespace"); /* two slips from 6 letters */
    assert_string_equal(near("fromat", ids_params), "format");
}

static void test_reply__abbreviations_find_the_name(void **state)
{
    (void)state;
    assert_string_equal(near("ns", ids_params), "namespace");
    assert_string_equal(near("cnt", ids_params), "count");
    assert_string_equal(near("NS", ids_params), "namespace");
    /* The same first letter is required: "s" words are not "ns". */
    assert_null(near("sp", ids_params));
}

static void test_reply__nothing_close_suggests_nothing(void **state)
{
    static const char *const two[] = {"cat", "hat", NULL};
    char long_name[100];

    (void)state;
    assert_null(near("xyz", ids_params));
    assert_null(near("cuotn", ids_params)); /* two slips in a 5-letter name: too far */
    assert_null(near("count", NULL));
    assert_null(routes_near_miss("count", 0, ids_params));
    memset(long_name, 'c', sizeof(long_name));
    assert_null(routes_near_miss(long_name, sizeof(long_name), ids_params));
    /* A tie goes to the first listed. */
    assert_string_equal(near("bat", two), "cat");
}

static void test_reply__times_show_as_iso_8601_or_nothing(void **state)
{
    char buf[64];

    (void)state;
    routes_iso_or_empty(INT64_C(1780000000123), buf, sizeof(buf));
    assert_string_equal(buf, "2026-05-28T20:26:40.123Z");
    routes_iso_or_empty(0, buf, sizeof(buf));
    assert_string_equal(buf, "1970-01-01T00:00:00.000Z");
    memset(buf, 'x', sizeof(buf));
    routes_iso_or_empty(INT64_C(1780000000123), buf, 4); /* no room: nothing, not a part */
    assert_string_equal(buf, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reply__typing_slips_and_case_find_the_name),
        cmocka_unit_test(test_reply__abbreviations_find_the_name),
        cmocka_unit_test(test_reply__nothing_close_suggests_nothing),
        cmocka_unit_test(test_reply__times_show_as_iso_8601_or_nothing),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
