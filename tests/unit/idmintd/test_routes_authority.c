/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for cmd/idmintd/routes_authority.c over a real server on
 * loopback: a write a low role can make is bounded per caller (one token
 * over its collision rate gets 429 with Retry-After and a message naming
 * it, while another token writes on); audited changes name the token that
 * made them; a route for snowflake namespaces refuses a range one with its
 * own message; an authority removed under the daemon is an error, never a
 * new empty store.
 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "daemon_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void one_collision_report(struct config *cfg)
{
    cfg->limits[RATELIMIT_COLLISION].rate = 1;
    cfg->limits[RATELIMIT_COLLISION].burst = 1;
}

static int setup(void **state)
{
    return td_setup_with(state, one_collision_report, 1, 1);
}

static long report(struct td_daemon *t, const char *token, const char *id, struct td_reply *r)
{
    char body[128];

    snprintf(body, sizeof(body), "{\"namespace\":\"rng\",\"id\":\"%s\"}", id);
    td_http(t, "POST", "/v1/collisions", token, body, NULL, r);
    return r->status;
}

static void test_routes_authority__a_callers_writes_are_bounded_apart(void **state)
{
    struct td_daemon *t = *state;
    struct td_reply r;
    int k, refused = 0;

    assert_int_equal(report(t, TD_MINT, "101", &r), 201);
    td_reply_free(&r);
    /* One a second: the first of these sent within a second of the last
     * granted one is over (twenty tries: a machine would have to take a
     * second for every request to see none). */
    for (k = 0; k < 20 && refused == 0; k++) {
        char id[8];
        long status;

        snprintf(id, sizeof(id), "%d", 102 + k);
        status = report(t, TD_MINT, id, &r);
        if (status == 429) {
            refused++;
            assert_non_null(strstr(r.headers, "retry-after: "));
            assert_non_null(strstr(r.body, "token 'app' is over collision_rate"));
        } else {
            assert_int_equal(status, 201);
        }
        td_reply_free(&r);
    }
    assert_true(refused >= 1);
    /* Another caller is not held by app's bucket. */
    assert_int_equal(report(t, TD_MINT2, "201", &r), 201);
    td_reply_free(&r);
}

static void test_routes_authority__audited_changes_name_the_token(void **state)
{
    struct td_daemon *t = *state;
    struct td_reply r;

    td_http(t, "POST", "/v1/namespaces/rng/disable", TD_ADMIN, NULL, NULL, &r);
    assert_int_equal(r.status, 200);
    td_reply_free(&r);
    td_http(t, "GET", "/v1/audit?limit=1000", TD_ADMIN, NULL, NULL, &r);
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(r.body, "\"actor\":\"ops\",\"action\":\"ns.disable\""));
    td_reply_free(&r);
}

static void test_routes_authority__snowflake_routes_refuse_a_range_namespace(void **state)
{
    struct td_daemon *t = *state;
    struct td_reply r;

    td_http(t, "GET", "/v1/ids/12345/decode?namespace=rng", TD_MINT, NULL, NULL, &r);
    assert_int_equal(r.status, 400);
    assert_non_null(strstr(r.body, "range"));
    td_reply_free(&r);
}

static void test_routes_authority__a_removed_authority_is_not_made_anew(void **state)
{
    const char *suffix[] = {"", "-wal", "-shm"};
    struct td_daemon *t = *state;
    char path[4096];
    struct td_reply r;
    struct stat st;
    size_t i;

    for (i = 0; i < 3; i++) {
        snprintf(path, sizeof(path), "%s/authority.db%s", t->dir, suffix[i]);
        unlink(path);
    }
    /* A store thread opens its authority on first use: after the removal. */
    td_http(t, "POST", "/v1/namespaces", TD_ADMIN, "{\"name\":\"late\",\"kind\":\"range\"}", NULL,
            &r);
    assert_true(r.status >= 500);
    assert_non_null(strstr(r.body, "removed or replaced"));
    td_reply_free(&r);
    snprintf(path, sizeof(path), "%s/authority.db", t->dir);
    assert_int_equal(stat(path, &st), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_routes_authority__a_callers_writes_are_bounded_apart,
                                        setup, td_teardown),
        cmocka_unit_test_setup_teardown(test_routes_authority__audited_changes_name_the_token,
                                        setup, td_teardown),
        cmocka_unit_test_setup_teardown(
            test_routes_authority__snowflake_routes_refuse_a_range_namespace, setup, td_teardown),
        cmocka_unit_test_setup_teardown(test_routes_authority__a_removed_authority_is_not_made_anew,
                                        setup, td_teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
