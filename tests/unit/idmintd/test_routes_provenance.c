/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for cmd/idmintd/routes_provenance.c over a real server on
 * loopback: trace names the daemon's own grant for an ID it minted and
 * "not_minted" for a forged one; a collision report is stored once per
 * (namespace, ID, reporter), a repeat writes nothing and answers the first
 * record; a bad field is 400 and stores nothing; the list is admin-only.
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

/* One ID minted by the daemon from @p ns, as its decimal text. */
static void minted(struct td_daemon *t, const char *ns, char *out, size_t size)
{
    char path[96];
    json_t *doc;

    snprintf(path, sizeof(path), "/v1/ids?namespace=%s&count=1", ns);
    doc = td_call(t, "GET", path, TD_MINT, NULL, 200);
    snprintf(out, size, "%s", json_string_value(json_array_get(json_object_get(doc, "ids"), 0)));
    json_decref(doc);
}

static void test_routes_provenance__trace_names_the_grant_that_minted(void **state)
{
    struct td_daemon *t = *state;
    idmint_handle_info own;
    char id[32], path[128];
    json_t *doc, *grants;

    minted(t, "snow", id, sizeof(id));
    idmint_handle_info_init(&own);
    assert_int_equal(handles_info(handles_find(&t->d.handles, "snow"), &own), 0);
    snprintf(path, sizeof(path), "/v1/ids/%s/trace?namespace=snow", id);
    doc = td_call(t, "GET", path, TD_MINT, NULL, 200);
    assert_string_equal(td_str(doc, "verdict"), "minted");
    grants = json_object_get(doc, "grants");
    assert_int_equal(json_array_size(grants), 1);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(grants, 0), "worker_id")),
                     own.worker_id);
    json_decref(doc);

    minted(t, "rng", id, sizeof(id));
    snprintf(path, sizeof(path), "/v1/ids/%s/trace?namespace=rng", id);
    doc = td_call(t, "GET", path, TD_MINT, NULL, 200);
    assert_string_equal(td_str(doc, "verdict"), "minted");
    grants = json_object_get(doc, "grants");
    /* A range grant's first and last are its reservation's [start, end). */
    assert_string_equal(td_str(json_array_get(grants, 0), "kind"), "range");
    assert_true(strtoull(td_str(json_array_get(grants, 0), "first"), NULL, 10) <=
                strtoull(id, NULL, 10));
    assert_true(strtoull(id, NULL, 10) <
                strtoull(td_str(json_array_get(grants, 0), "last"), NULL, 10));
    json_decref(doc);

    /* A value no grant holds: far above anything reserved. */
    doc = td_call(t, "GET", "/v1/ids/9000000000000000000/trace?namespace=rng", TD_MINT, NULL, 200);
    assert_string_equal(td_str(doc, "verdict"), "not_minted");
    assert_int_equal(json_array_size(json_object_get(doc, "grants")), 0);
    json_decref(doc);
    doc = td_call(t, "GET", "/v1/ids/0/trace?namespace=rng", TD_MINT, NULL, 400);
    json_decref(doc);
}

static void test_routes_provenance__a_report_is_stored_once_per_reporter(void **state)
{
    struct td_daemon *t = *state;
    uint64_t before = metrics_collisions_total();
    char id[32], body[256];
    json_t *doc, *c;
    json_int_t seq;

    minted(t, "snow", id, sizeof(id));
    snprintf(body, sizeof(body),
             "{\"namespace\":\"snow\",\"id\":\"%s\",\"observed_ms\":1700000000000,"
             "\"note\":\"orders_pkey violation\"}",
             id);
    doc = td_call(t, "POST", "/v1/collisions", TD_MINT, body, 201);
    c = json_object_get(doc, "collision");
    assert_string_equal(td_str(c, "id"), id);
    assert_string_equal(td_str(c, "verdict"), "reported"); /* one owner: not two */
    assert_string_equal(td_str(c, "reporter"), "app");
    assert_string_equal(td_str(c, "note"), "orders_pkey violation");
    seq = json_integer_value(json_object_get(c, "seq"));
    json_decref(doc);
    assert_int_equal(metrics_collisions_total(), before + 1);
    /* A repeat: the first record, nothing new. */
    doc = td_call(t, "POST", "/v1/collisions", TD_MINT, body, 200);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(doc, "collision"), "seq")),
                     seq);
    json_decref(doc);
    assert_int_equal(metrics_collisions_total(), before + 1);
    assert_int_equal(td_list_len(t, "/v1/collisions?limit=1000", TD_ADMIN, "collisions"), 1);
    /* Another reporter's report of it is its own record. */
    doc = td_call(t, "POST", "/v1/collisions", TD_ADMIN, body, 201);
    json_decref(doc);
    assert_int_equal(td_list_len(t, "/v1/collisions?limit=1000", TD_ADMIN, "collisions"), 2);
}

static void test_routes_provenance__bad_reports_store_nothing(void **state)
{
    static const char *const bad[] = {
        "{\"namespace\":\"snow\",\"id\":\"0\"}",
        "{\"namespace\":\"snow\",\"id\":\"9223372036854775808\"}",
        "{\"namespace\":\"snow\",\"id\":12345}",
        "{\"namespace\":\"snow\",\"id\":\"12345\",\"note\":\"bad\\u0001note\"}",
        "{\"namespace\":\"snow\",\"id\":\"12345\",\"observed_ms\":-5}",
        "{\"namespace\":\"snow\",\"id\":\"12345\",\"color\":\"red\"}",
        "{\"id\":\"12345\"}",
    };
    struct td_daemon *t = *state;
    size_t i;
    json_t *doc;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        doc = td_call(t, "POST", "/v1/collisions", TD_MINT, bad[i], 400);
        json_decref(doc);
    }
    doc = td_call(t, "POST", "/v1/collisions", TD_MINT, "{\"namespace\":\"nope\",\"id\":\"12345\"}",
                  404);
    json_decref(doc);
    assert_int_equal(td_list_len(t, "/v1/collisions?limit=1000", TD_ADMIN, "collisions"), 0);
    doc = td_call(t, "GET", "/v1/collisions", TD_MINT, NULL, 403);
    json_decref(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_routes_provenance__trace_names_the_grant_that_minted,
                                        td_setup_served, td_teardown),
        cmocka_unit_test_setup_teardown(
            test_routes_provenance__a_report_is_stored_once_per_reporter, td_setup_served,
            td_teardown),
        cmocka_unit_test_setup_teardown(test_routes_provenance__bad_reports_store_nothing,
                                        td_setup_served, td_teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
