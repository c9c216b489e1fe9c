/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The request ids a range supply sends with its reservations: their text
 * order must be their issue order, because the store's record index (text
 * keys) then grows at one edge per incarnation instead of splitting pages
 * in the middle.
 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "internal.h"

#include <string.h>

static void test_range_ids__text_order_is_issue_order_across_digit_boundaries(void **state)
{
    /* Each pair straddles a place where a variable-width form gains a digit. */
    static const uint64_t edges[] = {
        0, 9, 15, 99, 255, 4095, 65535, UINT32_MAX, UINT64_MAX / 16, UINT64_MAX - 1};
    char a[IDMINT__REQUEST_ID_LEN], b[IDMINT__REQUEST_ID_LEN];

    (void)state;
    for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++) {
        idmint__range_request_id(edges[i], a);
        idmint__range_request_id(edges[i] + 1, b);
        assert_int_equal(strlen(a), IDMINT__REQUEST_ID_LEN - 1);
        assert_int_equal(strlen(b), IDMINT__REQUEST_ID_LEN - 1);
        assert_true(strcmp(a, b) < 0);
    }
}

static void test_range_ids__a_run_of_ids_is_sorted_and_distinct(void **state)
{
    char prev[IDMINT__REQUEST_ID_LEN], cur[IDMINT__REQUEST_ID_LEN];

    (void)state;
    idmint__range_request_id(0, prev);
    for (uint64_t seq = 1; seq < 100000; seq++) {
        idmint__range_request_id(seq, cur);
        assert_true(strcmp(prev, cur) < 0);
        memcpy(prev, cur, sizeof(prev));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_range_ids__text_order_is_issue_order_across_digit_boundaries),
        cmocka_unit_test(test_range_ids__a_run_of_ids_is_sorted_and_distinct),
    };
    return cmocka_run_group_tests_name("range_ids", tests, NULL, NULL);
}
