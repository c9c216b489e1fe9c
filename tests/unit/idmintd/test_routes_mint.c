/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for cmd/idmintd/routes_mint.c (how GET /v1/ids finishes a
 * batch its handle cannot mint at once) over a real server on loopback: a
 * range batch larger than the handle's reserve is finished on a store
 * thread, and a snowflake batch larger than a time unit holds is finished
 * from a timer on the loop; both come back whole, ordered, with no ID
 * twice, while other requests are answered.
 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "daemon_fixture.h"
#include "testsupport.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

static void test_routes_mint__a_range_batch_past_the_reserve_is_whole(void **state)
{
    struct td_daemon *t = *state;
    uint64_t ids[2500];
    long status;
    size_t n, i;

    /* The handle holds blocks of 1000: the batch needs refills on a store thread. */
    n = td_mint(t, "rng", 2500, NULL, NULL, ids, &status);
    assert_int_equal(status, 200);
    assert_int_equal(n, 2500);
    for (i = 1; i < n; i++)
        assert_true(ids[i] > ids[i - 1]);
    assert_int_equal(ts_count_duplicates(ids, n), 0);
}

static void test_routes_mint__a_batch_past_a_time_unit_is_whole(void **state)
{
    struct td_daemon *t = *state;
    static uint64_t ids[4000];
    struct td_reply r;
    long status;
    size_t n, i;

    /* 4 sequence bits: 16 IDs a unit, so 4000 IDs span 250 units. */
    td_http(t, "POST", "/v1/namespaces", NULL,
            "{\"name\":\"slow\",\"kind\":\"snowflake\","
            "\"layout\":\"49/0/10/4\"}",
            NULL, &r);
    assert_int_equal(r.status, 201);
    td_reply_free(&r);
    n = td_mint(t, "slow", 4000, NULL, NULL, ids, &status);
    assert_int_equal(status, 200);
    assert_int_equal(n, 4000);
    for (i = 1; i < n; i++)
        assert_true(ids[i] > ids[i - 1]);
    assert_true((ids[n - 1] >> 14) - (ids[0] >> 14) >= 249); /* it did span the units */
    td_http(t, "GET", "/healthz", NULL, NULL, NULL, &r);
    assert_int_equal(r.status, 200);
    td_reply_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_routes_mint__a_range_batch_past_the_reserve_is_whole,
                                        td_setup_served_open, td_teardown),
        cmocka_unit_test_setup_teardown(test_routes_mint__a_batch_past_a_time_unit_is_whole,
                                        td_setup_served_open, td_teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
