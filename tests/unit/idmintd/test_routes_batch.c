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

#define KEEPER "keeper-secret-0123456789"
#define OTHER  "other-secret-0123456789"

static int setup(void **state)
{
    struct td_daemon *t = calloc(1, sizeof(*t));

    if (t == NULL || td_daemon_open(t, 60000, 20000) != 0) {
        free(t);
        return -1;
    }
    if (td_daemon_token(t, "keeper", "mint", KEEPER) != 0 ||
        td_daemon_token(t, "other", "mint", OTHER) != 0 || td_daemon_serve(t) != 0) {
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

static void test_routes_batch__an_idempotency_key_repeats_the_same_ids(void **state)
{
    struct td_daemon *t = *state;
    uint64_t first[200], again[200], others[200];
    long status;
    size_t n;
    uint64_t replayed = metrics_batches(METRICS_BATCH_REPLAYED);

    n = mint(t, "rng", 200, KEEPER, "Idempotency-Key: job-7:0001", first, &status);
    assert_int_equal(status, 200);
    assert_int_equal(n, 200);
    /* Spaces around the key are not part of it. */
    n = mint(t, "rng", 200, KEEPER, "Idempotency-Key:   job-7:0001  ", again, &status);
    assert_int_equal(status, 200);
    assert_int_equal(n, 200);
    assert_memory_equal(first, again, sizeof(first));
    assert_int_equal(metrics_batches(METRICS_BATCH_REPLAYED), replayed + 1);
    /* Another caller's key of the same name is another batch. */
    n = mint(t, "rng", 200, OTHER, "Idempotency-Key: job-7:0001", others, &status);
    assert_int_equal(status, 200);
    assert_int_equal(n, 200);
    assert_true(others[0] > first[199] || others[199] < first[0]);
    /* The same caller's key with another count. */
    n = mint(t, "rng", 100, KEEPER, "Idempotency-Key: job-7:0001", again, &status);
    assert_int_equal(status, 409);
    n = mint(t, "rng", 10, KEEPER, "Idempotency-Key: bad key", again, &status);
    assert_int_equal(status, 400);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_routes_batch__an_idempotency_key_repeats_the_same_ids,
                                        setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
