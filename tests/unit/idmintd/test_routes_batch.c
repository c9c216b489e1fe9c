/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for cmd/idmintd/routes_batch.c (GET /v1/ids with an
 * Idempotency-Key) over a real server on loopback: a repeat answers the
 * same IDs in the same order and is counted as replayed; spaces around the
 * key are not part of it; a key is its caller's own; the same key with
 * another count is 409; a malformed key is 400.
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

static void test_routes_batch__an_idempotency_key_repeats_the_same_ids(void **state)
{
    struct td_daemon *t = *state;
    uint64_t first[200], again[200], others[200];
    long status;
    size_t n;
    uint64_t replayed = metrics_batches(METRICS_BATCH_REPLAYED);

    n = td_mint(t, "rng", 200, TD_MINT, "Idempotency-Key: job-7:0001", first, &status);
    assert_int_equal(status, 200);
    assert_int_equal(n, 200);
    /* Spaces around the key are not part of it. */
    n = td_mint(t, "rng", 200, TD_MINT, "Idempotency-Key:   job-7:0001  ", again, &status);
    assert_int_equal(status, 200);
    assert_int_equal(n, 200);
    assert_memory_equal(first, again, sizeof(first));
    assert_int_equal(metrics_batches(METRICS_BATCH_REPLAYED), replayed + 1);
    /* Another caller's key of the same name is another batch. */
    n = td_mint(t, "rng", 200, TD_MINT2, "Idempotency-Key: job-7:0001", others, &status);
    assert_int_equal(status, 200);
    assert_int_equal(n, 200);
    assert_true(others[0] > first[199] || others[199] < first[0]);
    /* The same caller's key with another count. */
    n = td_mint(t, "rng", 100, TD_MINT, "Idempotency-Key: job-7:0001", again, &status);
    assert_int_equal(status, 409);
    n = td_mint(t, "rng", 10, TD_MINT, "Idempotency-Key: bad key", again, &status);
    assert_int_equal(status, 400);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_routes_batch__an_idempotency_key_repeats_the_same_ids,
                                        td_setup_served, td_teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
