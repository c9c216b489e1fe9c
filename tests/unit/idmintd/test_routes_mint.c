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

#define KEEPER NULL /* no tokens: every caller is admin */

static int setup(void **state)
{
    struct td_daemon *t = calloc(1, sizeof(*t));

    if (t == NULL || td_daemon_open(t, 60000, 20000) != 0) {
        free(t);
        return -1;
    }
    if (td_daemon_serve(t) != 0) {
        td_daemon_close(t);
        free(t);
        return -1;
    }
    *state = t;
    return 0;
}

static int teardown(void **state)
{
    td_daemon_close(*state);
    free(*state);
    return 0;
}

/* The IDs of a 200 JSON answer into @p ids (room for @p cap); how many. */
static size_t ids_of(const struct td_reply *r, uint64_t *ids, size_t cap)
{
    json_t *doc = td_reply_json(r), *arr;
    size_t i, n;

    if (doc == NULL)
        fail_msg("not JSON: %s", r->body);
    arr = json_object_get(doc, "ids");
    n = json_array_size(arr);
    assert_true(n <= cap);
    for (i = 0; i < n; i++) {
        json_t *v = json_array_get(arr, i);

        assert_true(json_is_string(v)); /* 64-bit: exact only as a string */
        ids[i] = strtoull(json_string_value(v), NULL, 10);
    }
    json_decref(doc);
    return n;
}

static size_t mint(struct td_daemon *t, const char *ns, unsigned count, const char *token,
                   const char *header, uint64_t *ids, long *status)
{
    char path[128];
    struct td_reply r;
    size_t n = 0;

    snprintf(path, sizeof(path), "/v1/ids?namespace=%s&count=%u", ns, count);
    td_http(t, "GET", path, token, NULL, header, &r);
    *status = r.status;
    if (r.status == 200)
        n = ids_of(&r, ids, count);
    td_reply_free(&r);
    return n;
}

static void test_routes_mint__a_range_batch_past_the_reserve_is_whole(void **state)
{
    struct td_daemon *t = *state;
    uint64_t ids[2500];
    long status;
    size_t n, i;

    /* The handle holds blocks of 1000: the batch needs refills on a store thread. */
    n = mint(t, "rng", 2500, KEEPER, NULL, ids, &status);
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
    n = mint(t, "slow", 4000, NULL, NULL, ids, &status);
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
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_routes_mint__a_batch_past_a_time_unit_is_whole, setup,
                                        teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
