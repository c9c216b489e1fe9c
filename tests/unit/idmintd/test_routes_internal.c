/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for cmd/idmintd/routes_internal.c (the remote generators'
 * routes) over a real server on loopback, as a hostile caller would use
 * them: a take gives a free worker id, a second holder gets another; a
 * renew or release by a forged holder or generation is 503 lease_lost and
 * changes nothing; a fingerprint is no holder; origin fields are for take
 * only; force_release needs admin; a range reservation is replayed for the
 * same request and never overlaps another; another count for it is 409;
 * forget drops the incarnation's earlier requests.
 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "daemon_fixture.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#define HOLDER_A "0123456789abcdef0123456789abcdef"
#define HOLDER_B "fedcba9876543210fedcba9876543210"

static const char *error_code(json_t *doc)
{
    return td_str(json_object_get(doc, "error"), "code");
}

static json_t *take(struct td_daemon *t, const char *holder)
{
    char body[256];

    snprintf(body, sizeof(body),
             "{\"op\":\"take\",\"namespace\":\"snow\",\"region\":0,\"holder\":\"%s\","
             "\"lease_ms\":60000,\"host\":\"app-7\",\"pid\":4242,\"program\":\"billing\"}",
             holder);
    return td_call(t, "POST", "/internal/workers/lease", TD_GEN, body, 200);
}

static void test_routes_internal__takes_give_distinct_worker_ids(void **state)
{
    struct td_daemon *t = *state;
    json_t *a = take(t, HOLDER_A), *b = take(t, HOLDER_B);
    idmint_handle_info own;

    idmint_handle_info_init(&own);
    assert_int_equal(handles_info(handles_find(&t->d.handles, "snow"), &own), 0);
    assert_int_not_equal(json_integer_value(json_object_get(a, "worker_id")),
                         json_integer_value(json_object_get(b, "worker_id")));
    assert_int_not_equal(json_integer_value(json_object_get(a, "worker_id")), own.worker_id);
    assert_string_equal(td_str(a, "holder"), HOLDER_A);
    assert_int_equal(strlen(td_str(a, "history")), 32);
    assert_true(strtoull(td_str(a, "lease_until"), NULL, 10) > 0);
    json_decref(a);
    json_decref(b);
}

/* POST /internal/workers/lease {"op":OP,…} for snow's @p worker as @p holder of @p generation,
 * with the fields @p tail; the status must be @p status. */
static json_t *lease_op(struct td_daemon *t, const char *op, json_int_t worker, const char *holder,
                        const char *generation, const char *tail, long status)
{
    char body[512];

    snprintf(body, sizeof(body),
             "{\"op\":\"%s\",\"namespace\":\"snow\",\"region\":0,\"worker_id\":%lld,"
             "\"holder\":\"%s\",\"generation\":\"%s\",%s}",
             op, (long long)worker, holder, generation, tail);
    return td_call(t, "POST", "/internal/workers/lease", TD_GEN, body, status);
}

static void test_routes_internal__forged_renewals_and_releases_change_nothing(void **state)
{
    struct td_daemon *t = *state;
    json_t *a = take(t, HOLDER_A), *doc;
    json_int_t worker = json_integer_value(json_object_get(a, "worker_id"));
    char generation[32], next_generation[32], until[32], fingerprint[9];

    snprintf(generation, sizeof(generation), "%s", td_str(a, "generation"));
    snprintf(until, sizeof(until), "%s", td_str(a, "lease_until"));
    /* Another holder, another generation: refused, nothing moves. */
    doc = lease_op(t, "renew", worker, HOLDER_B, generation, "\"lease_ms\":60000", 503);
    assert_string_equal(error_code(doc), "lease_lost");
    json_decref(doc);
    snprintf(next_generation, sizeof(next_generation), "%llu", strtoull(generation, NULL, 10) + 1);
    doc = lease_op(t, "release", worker, HOLDER_A, next_generation, "\"final_time\":\"1\"", 503);
    assert_string_equal(error_code(doc), "lease_lost");
    json_decref(doc);
    /* The 8-digit fingerprint a listing shows is not the holder. */
    snprintf(fingerprint, sizeof(fingerprint), "%.8s", HOLDER_A);
    doc = lease_op(t, "renew", worker, fingerprint, generation, "\"lease_ms\":60000", 400);
    json_decref(doc);
    /* Origin fields only at take. */
    doc = lease_op(t, "renew", worker, HOLDER_A, generation, "\"lease_ms\":60000,\"host\":\"x\"",
                   400);
    assert_non_null(strstr(td_str(json_object_get(doc, "error"), "message"), "only for take"));
    json_decref(doc);
    /* The true holder still renews: nothing above took its lease. */
    doc = lease_op(t, "renew", worker, HOLDER_A, generation, "\"lease_ms\":60000", 200);
    assert_string_equal(td_str(doc, "generation"), generation);
    assert_true(strtoull(td_str(doc, "lease_until"), NULL, 10) >= strtoull(until, NULL, 10));
    json_decref(doc);
    json_decref(a);
}

static void test_routes_internal__force_release_needs_admin(void **state)
{
    struct td_daemon *t = *state;
    json_t *a = take(t, HOLDER_A), *doc;
    char body[256];

    snprintf(body, sizeof(body),
             "{\"op\":\"force_release\",\"namespace\":\"snow\",\"region\":0,\"worker_id\":%lld}",
             (long long)json_integer_value(json_object_get(a, "worker_id")));
    doc = td_call(t, "POST", "/internal/workers/lease", TD_GEN, body, 403);
    json_decref(doc);
    doc = td_call(t, "POST", "/internal/workers/lease", TD_ADMIN, body, 200);
    json_decref(doc);
    json_decref(a);
}

/* [start, end) of a reservation. */
static void reserve(struct td_daemon *t, const char *incarnation, const char *request,
                    unsigned count, long status, uint64_t *start, uint64_t *end)
{
    char body[384];
    json_t *doc;

    snprintf(body, sizeof(body),
             "{\"namespace\":\"rng\",\"incarnation\":\"%s\",\"request_id\":\"%s\",\"count\":%u}",
             incarnation, request, count);
    doc = td_call(t, "POST", "/internal/ranges/lease", TD_GEN, body, status);
    if (status == 200) {
        *start = strtoull(td_str(doc, "start"), NULL, 10);
        *end = strtoull(td_str(doc, "end"), NULL, 10);
    }
    json_decref(doc);
}

static void test_routes_internal__reservations_replay_and_never_overlap(void **state)
{
    struct td_daemon *t = *state;
    uint64_t s1, e1, s2, e2, s3, e3;
    json_t *doc;

    reserve(t, "inc-a", "0000000000000001", 100, 200, &s1, &e1);
    assert_int_equal(e1 - s1, 100);
    reserve(t, "inc-a", "0000000000000001", 100, 200, &s2, &e2); /* a lost reply, repeated */
    assert_int_equal(s2, s1);
    assert_int_equal(e2, e1);
    reserve(t, "inc-b", "0000000000000001", 100, 200, &s3, &e3); /* another generator */
    assert_true(s3 >= e1 || e3 <= s1);
    reserve(t, "inc-a", "0000000000000001", 50, 409, &s2, &e2); /* same request, another count */
    reserve(t, "inc-a", "0000000000000002", 0, 400, &s2, &e2);
    doc = td_call(t, "POST", "/internal/ranges/forget", TD_GEN,
                  "{\"namespace\":\"rng\",\"incarnation\":\"inc-a\","
                  "\"before_request_id\":\"0000000000000002\"}",
                  200);
    assert_string_equal(td_str(doc, "forgotten"), "1");
    json_decref(doc);
    /* Forgotten: a repeat reserves anew, never the old range again. */
    reserve(t, "inc-a", "0000000000000001", 100, 200, &s2, &e2);
    assert_true(s2 >= e1 && s2 >= e3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_routes_internal__takes_give_distinct_worker_ids,
                                        td_setup_served, td_teardown),
        cmocka_unit_test_setup_teardown(
            test_routes_internal__forged_renewals_and_releases_change_nothing, td_setup_served,
            td_teardown),
        cmocka_unit_test_setup_teardown(test_routes_internal__force_release_needs_admin,
                                        td_setup_served, td_teardown),
        cmocka_unit_test_setup_teardown(test_routes_internal__reservations_replay_and_never_overlap,
                                        td_setup_served, td_teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
