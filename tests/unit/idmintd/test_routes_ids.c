/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for cmd/idmintd/routes_ids.c (GET /v1/ids and decode) over a
 * real server on loopback: a batch is count distinct IDs in order, as JSON
 * strings or as text lines; eight clients at once get no ID twice; a bad
 * count or name is 400, a missing namespace 404; decode gives back the
 * worker that minted.
 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "daemon_fixture.h"
#include "testsupport.h"

#include <jansson.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static void test_routes_ids__a_batch_is_count_distinct_ids_in_order(void **state)
{
    struct td_daemon *t = *state;
    uint64_t ids[3000];
    long status;
    size_t n, i;
    struct td_reply r;

    n = td_mint(t, "snow", 3000, TD_MINT, NULL, ids, &status);
    assert_int_equal(status, 200);
    assert_int_equal(n, 3000);
    for (i = 1; i < n; i++)
        assert_true(ids[i] > ids[i - 1]);

    td_http(t, "GET", "/v1/ids?namespace=snow&count=3", TD_MINT, NULL, "Accept: text/plain", &r);
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(r.headers, "text/plain"));
    {
        char *line, *save = NULL;
        unsigned lines = 0;

        for (line = strtok_r(r.body, "\n", &save); line != NULL;
             line = strtok_r(NULL, "\n", &save)) {
            assert_true(strtoull(line, NULL, 10) > ids[0]);
            lines++;
        }
        assert_int_equal(lines, 3);
    }
    td_reply_free(&r);
}

static void test_routes_ids__a_bad_count_or_namespace_is_refused(void **state)
{
    static const char *const bad[] = {
        "/v1/ids?namespace=snow&count=0",   "/v1/ids?namespace=snow&count=-1",
        "/v1/ids?namespace=snow&count=abc", "/v1/ids?namespace=snow&count=10001",
        "/v1/ids?namespace=Bad%20Name",     "/v1/ids?namespace=snow&count=1&count=2",
    };
    struct td_daemon *t = *state;
    struct td_reply r;
    size_t i;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        td_http(t, "GET", bad[i], TD_MINT, NULL, NULL, &r);
        if (r.status != 400)
            fail_msg("%s: %ld, not 400: %s", bad[i], r.status, r.body);
        td_reply_free(&r);
    }
    td_http(t, "GET", "/v1/ids?namespace=nothing", TD_MINT, NULL, NULL, &r);
    assert_int_equal(r.status, 404);
    td_reply_free(&r);
}

struct client {
    struct td_daemon *t;
    const char *ns;
    uint64_t ids[20 * 500];
    size_t n;
};

static void *client_main(void *arg)
{
    struct client *c = arg;
    int k;

    for (k = 0; k < 20; k++) {
        long status;

        c->n += td_mint(c->t, c->ns, 500, TD_MINT, NULL, c->ids + c->n, &status);
        if (status != 200)
            break;
    }
    return NULL;
}

static void test_routes_ids__clients_at_once_get_no_id_twice(void **state)
{
    struct td_daemon *t = *state;
    enum { N = 4 };
    struct client *c = calloc(2 * N, sizeof(*c));
    pthread_t th[2 * N];
    uint64_t *all;
    size_t total = 0, i;

    assert_non_null(c);
    for (i = 0; i < 2 * N; i++) {
        c[i].t = t;
        c[i].ns = i % 2 ? "rng" : "snow";
        assert_int_equal(pthread_create(&th[i], NULL, client_main, &c[i]), 0);
    }
    for (i = 0; i < 2 * N; i++)
        pthread_join(th[i], NULL);
    assert_non_null(all = malloc(sizeof(c[0].ids) * N));
    for (int kind = 0; kind < 2; kind++) {
        total = 0;
        for (i = (size_t)kind; i < 2 * N; i += 2) {
            assert_int_equal(c[i].n, 20 * 500);
            memcpy(all + total, c[i].ids, c[i].n * sizeof(uint64_t));
            total += c[i].n;
        }
        assert_int_equal(ts_count_duplicates(all, total), 0);
    }
    free(all);
    free(c);
}

static void test_routes_ids__decode_gives_back_the_minter(void **state)
{
    struct td_daemon *t = *state;
    idmint_handle_info info;
    uint64_t id;
    long status;
    char path[128];
    struct td_reply r;
    json_t *doc;

    assert_int_equal(td_mint(t, "snow", 1, TD_MINT, NULL, &id, &status), 1);
    idmint_handle_info_init(&info);
    assert_int_equal(handles_info(handles_find(&t->d.handles, "snow"), &info), 0);
    snprintf(path, sizeof(path), "/v1/ids/%llu/decode?namespace=snow", (unsigned long long)id);
    td_http(t, "GET", path, TD_MINT, NULL, NULL, &r);
    assert_int_equal(r.status, 200);
    assert_non_null(doc = td_reply_json(&r));
    assert_int_equal(json_integer_value(json_object_get(doc, "worker")), info.worker_id);
    json_decref(doc);
    td_reply_free(&r);
    td_http(t, "GET", "/v1/ids/0/decode?namespace=snow", TD_MINT, NULL, NULL, &r);
    assert_int_equal(r.status, 400);
    assert_non_null(strstr(r.body, "never an ID"));
    td_reply_free(&r);
    td_http(t, "GET", "/v1/ids/12x/decode?namespace=snow", TD_MINT, NULL, NULL, &r);
    assert_int_equal(r.status, 400);
    td_reply_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_routes_ids__a_batch_is_count_distinct_ids_in_order,
                                        td_setup_served, td_teardown),
        cmocka_unit_test_setup_teardown(test_routes_ids__a_bad_count_or_namespace_is_refused,
                                        td_setup_served, td_teardown),
        cmocka_unit_test_setup_teardown(test_routes_ids__clients_at_once_get_no_id_twice,
                                        td_setup_served, td_teardown),
        cmocka_unit_test_setup_teardown(test_routes_ids__decode_gives_back_the_minter,
                                        td_setup_served, td_teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
