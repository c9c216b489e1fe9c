/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for cmd/idmintd/routes.c, the dispatcher, over a real server
 * on loopback: a path no row has is 404 and a method its rows lack is 405
 * with Allow; a method that is not HTTP's is 501; with tokens, a route
 * needs a known token (401 with WWW-Authenticate) of a role at least the
 * row's (403), and the open routes need none; an unknown query parameter is
 * 400 naming the near miss; a body over max_body_bytes is 413; a rate limit
 * answers 429 with Retry-After; each answer is counted in its row.
 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "daemon_fixture.h"
#include "route_table.h"

#include <stdlib.h>
#include <string.h>

static void mint_rate_of_one(struct config *cfg)
{
    cfg->limits[RATELIMIT_MINT].rate = 1;
    cfg->limits[RATELIMIT_MINT].burst = 1;
}

/* Served with the fixture's tokens and a mint rate of 1 a second. */
static int setup_limited(void **state)
{
    return td_setup_with(state, mint_rate_of_one, 1, 1);
}

/* The answer's status, and its body holds @p code ("" for any). */
static void expect(struct td_daemon *t, const char *method, const char *path, const char *token,
                   long status, const char *code, struct td_reply *r)
{
    char want[96];

    td_http(t, method, path, token, NULL, NULL, r);
    if (r->status != status)
        fail_msg("%s %s: %ld, not %ld: %s", method, path, r->status, status, r->body);
    snprintf(want, sizeof(want), "\"code\":\"%s\"", code);
    if (code[0] != '\0' && strstr(r->body, want) == NULL)
        fail_msg("%s %s: no %s in %s", method, path, want, r->body);
}

static void test_routes__unknown_paths_and_methods(void **state)
{
    struct td_daemon *t = *state;
    struct td_reply r;

    expect(t, "GET", "/v1/nothing", NULL, 404, "not_found", &r);
    td_reply_free(&r);
    expect(t, "GET", "/v1//ids", NULL, 404, "not_found", &r);
    td_reply_free(&r);
    expect(t, "DELETE", "/v1/namespaces", NULL, 405, "method_not_allowed", &r);
    assert_non_null(strstr(r.headers, "allow: GET, POST"));
    td_reply_free(&r);
    expect(t, "BREW", "/v1/ids", NULL, 501, "not_implemented", &r);
    td_reply_free(&r);
}

static void test_routes__an_unknown_parameter_names_the_near_miss(void **state)
{
    struct td_daemon *t = *state;
    struct td_reply r;

    expect(t, "GET", "/v1/ids?namespace=snow&cuont=3", NULL, 400, "invalid_argument", &r);
    assert_non_null(strstr(r.body, "count"));
    td_reply_free(&r);
    expect(t, "GET", "/v1/ids?namespace=snow&count=3", NULL, 200, "", &r);
    td_reply_free(&r);
}

static void test_routes__a_body_over_the_bound_is_refused(void **state)
{
    struct td_daemon *t = *state;
    size_t n = t->d.cfg.max_body_bytes + 100;
    char *big = malloc(n + 1);
    struct td_reply r;

    assert_non_null(big);
    memset(big, ' ', n);
    big[0] = '{';
    big[n - 1] = '}';
    big[n] = '\0';
    td_http(t, "POST", "/v1/namespaces", NULL, big, NULL, &r);
    assert_int_equal(r.status, 413);
    td_reply_free(&r);
    free(big);
}

static void test_routes__tokens_and_roles(void **state)
{
    struct td_daemon *t = *state;
    struct td_reply r;

    expect(t, "GET", "/v1/ids?namespace=snow", NULL, 401, "unauthenticated", &r);
    assert_non_null(strstr(r.headers, "www-authenticate: Bearer"));
    assert_non_null(strstr(r.body, "a bearer token is required"));
    td_reply_free(&r);
    expect(t, "GET", "/v1/ids?namespace=snow", "not-a-token", 401, "unauthenticated", &r);
    assert_non_null(strstr(r.body, "unknown token"));
    td_reply_free(&r);
    expect(t, "GET", "/v1/ids?namespace=snow", TD_MINT, 200, "", &r);
    td_reply_free(&r);
    /* A lower role than the row's. */
    expect(t, "GET", "/v1/audit", TD_MINT, 403, "", &r);
    assert_non_null(strstr(r.body, "needs the admin role; token 'app' has mint"));
    td_reply_free(&r);
    expect(t, "GET", "/v1/audit", TD_ADMIN, 200, "", &r);
    td_reply_free(&r);
    /* The open routes need no token. */
    expect(t, "GET", "/healthz", NULL, 200, "", &r);
    td_reply_free(&r);
}

static void test_routes__a_rate_limit_answers_429_with_retry_after(void **state)
{
    struct td_daemon *t = *state;
    struct td_reply r;
    int i, limited = 0;

    /* One a second for mint tokens: the first request within a second of the
     * last granted one is over (twenty tries: a machine would have to take a
     * second for every request to see none). */
    for (i = 0; i < 20 && !limited; i++) {
        td_http(t, "GET", "/v1/ids?namespace=snow", TD_MINT, NULL, NULL, &r);
        limited = r.status == 429;
        if (limited) {
            assert_non_null(strstr(r.headers, "retry-after: "));
            assert_non_null(strstr(r.body, "token 'app' is over mint_rate"));
        } else {
            assert_int_equal(r.status, 200);
        }
        td_reply_free(&r);
    }
    assert_true(limited);
    assert_true(ratelimit_refused_total(&t->d.limits, 0, AUTH_MINT) >= 1);
}

/* The count of @p status answers in @p path's row over every thread. */
static uint64_t counted(struct td_daemon *t, const char *path, int status)
{
    size_t r, c;
    uint64_t sum = 0;
    unsigned k;

    for (r = 0; r < route_table_len && strcmp(route_table[r].path, path) != 0; r++)
        ;
    for (c = 0; c < METRICS_CODES && metrics_codes[c] != status; c++)
        ;
    assert_true(r < route_table_len && c < METRICS_CODES);
    for (k = 0; k < t->d.n_threads; k++)
        sum += atomic_load(&t->d.threads[k].metrics.http[r][c]);
    return sum;
}

struct expected_count {
    struct td_daemon *t;
    const char *path;
    uint64_t n;
};

static int has_count(void *arg)
{
    const struct expected_count *e = arg;

    return counted(e->t, e->path, 200) == e->n;
}

static void test_routes__each_answer_is_counted_in_its_row(void **state)
{
    struct td_daemon *t = *state;
    uint64_t before = counted(t, "/healthz", 200), deferred = counted(t, "/v1/namespaces", 200);
    struct td_reply r;

    expect(t, "GET", "/healthz", NULL, 200, "", &r);
    td_reply_free(&r);
    expect(t, "GET", "/healthz", NULL, 200, "", &r);
    td_reply_free(&r);
    /* A store-bound route answered from a store thread is counted too. */
    expect(t, "GET", "/v1/namespaces", NULL, 200, "", &r);
    td_reply_free(&r);
    /* Counted once the answer is sent, which the client may see first. */
    assert_true(td_wait_for(has_count, &(struct expected_count){t, "/healthz", before + 2}));
    assert_true(
        td_wait_for(has_count, &(struct expected_count){t, "/v1/namespaces", deferred + 1}));
    assert_int_equal(counted(t, "/healthz", 200), before + 2); /* and no more */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_routes__unknown_paths_and_methods,
                                        td_setup_served_open, td_teardown),
        cmocka_unit_test_setup_teardown(test_routes__an_unknown_parameter_names_the_near_miss,
                                        td_setup_served_open, td_teardown),
        cmocka_unit_test_setup_teardown(test_routes__a_body_over_the_bound_is_refused,
                                        td_setup_served_open, td_teardown),
        cmocka_unit_test_setup_teardown(test_routes__tokens_and_roles, td_setup_served,
                                        td_teardown),
        cmocka_unit_test_setup_teardown(test_routes__a_rate_limit_answers_429_with_retry_after,
                                        setup_limited, td_teardown),
        cmocka_unit_test_setup_teardown(test_routes__each_answer_is_counted_in_its_row,
                                        td_setup_served_open, td_teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
