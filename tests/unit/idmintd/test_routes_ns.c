/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for cmd/idmintd/routes_ns.c over a real server on loopback:
 * a namespace created with POST is what GET and the list show (64-bit
 * figures as strings); a body with an unknown field, a field of the other
 * kind, a bad name or a bad value is 400 naming the field and creates
 * nothing; a second create is 409; disable and enable show in GET and in
 * the audit, with the token's name as the actor; the workers of a
 * snowflake namespace show the daemon's own lease (a range namespace has
 * none); the audit pages; a window's bounds are the library's and hold the
 * IDs minted in it, and bad windows are 400 with the reason.
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
#include <time.h>

static void test_routes_ns__created_is_what_get_and_list_show(void **state)
{
    struct td_daemon *t = *state;
    json_t *doc;
    size_t before = td_list_len(t, "/v1/namespaces", TD_MINT, "namespaces");

    doc = td_call(t, "POST", "/v1/namespaces", TD_ADMIN,
                  "{\"name\":\"orders\",\"kind\":\"range\",\"start\":\"1000\",\"block\":500}", 201);
    assert_string_equal(td_str(doc, "name"), "orders");
    assert_string_equal(td_str(doc, "next_value"), "1000");
    json_decref(doc);
    doc = td_call(t, "GET", "/v1/namespaces/orders", TD_MINT, NULL, 200);
    assert_string_equal(td_str(doc, "kind"), "range");
    assert_string_equal(td_str(doc, "next_value"), "1000");
    assert_int_equal(json_integer_value(json_object_get(doc, "block")), 500);
    assert_true(json_is_false(json_object_get(doc, "disabled")));
    json_decref(doc);
    assert_int_equal(td_list_len(t, "/v1/namespaces", TD_MINT, "namespaces"), before + 1);

    doc = td_call(t, "POST", "/v1/namespaces", TD_ADMIN,
                  "{\"name\":\"feed\",\"kind\":\"snowflake\",\"layout\":\"41/0/10/12\","
                  "\"epoch\":\"2024-01-01T00:00:00Z\"}",
                  201);
    assert_string_equal(td_str(doc, "layout"), "41/0/10/12");
    assert_int_equal(json_integer_value(json_object_get(doc, "epoch_ms")), 1704067200000);
    json_decref(doc);
    doc = td_call(t, "GET", "/v1/namespaces/missing", TD_MINT, NULL, 404);
    json_decref(doc);
}

static void test_routes_ns__a_bad_body_names_its_field_and_creates_nothing(void **state)
{
    static const struct {
        const char *body, *says;
    } bad[] = {
        {"{\"name\":\"a1\",\"kind\":\"range\",\"blok\":5}", "blok"},
        {"{\"name\":\"a2\",\"kind\":\"range\",\"layout\":\"41/0/10/12\"}", "layout"},
        {"{\"name\":\"a3\",\"kind\":\"snowflake\",\"block\":5}", "block"},
        {"{\"name\":\"Bad Name\",\"kind\":\"range\"}", "name"},
        {"{\"name\":\"a4\",\"kind\":\"ranges\"}", "kind"},
        {"{\"name\":\"a5\",\"kind\":\"range\",\"block\":0}", "block"},
        {"{\"name\":\"a6\",\"kind\":\"range\",\"start\":5}", "start"},
        {"{\"name\":\"a7\",\"kind\":\"snowflake\",\"layout\":\"41/0/10\"}", "layout"},
        {"{\"name\":\"a8\",\"kind\":\"snowflake\",\"unit_ms\":0}", "unit_ms"},
        {"{\"kind\":\"range\"}", "name"},
        {"[1,2]", ""},
        {"{\"name\":\"a9\",", ""},
    };
    struct td_daemon *t = *state;
    size_t before = td_list_len(t, "/v1/namespaces", TD_MINT, "namespaces"), i;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        json_t *doc = td_call(t, "POST", "/v1/namespaces", TD_ADMIN, bad[i].body, 400);
        json_t *e = json_object_get(doc, "error");

        assert_string_equal(td_str(e, "code"), "invalid_argument");
        if (strstr(td_str(e, "message"), bad[i].says) == NULL)
            fail_msg("%s: the message does not name %s: %s", bad[i].body, bad[i].says,
                     td_str(e, "message"));
        json_decref(doc);
    }
    assert_int_equal(td_list_len(t, "/v1/namespaces", TD_MINT, "namespaces"), before);
}

static void test_routes_ns__a_second_create_conflicts_and_a_minter_may_not(void **state)
{
    struct td_daemon *t = *state;
    json_t *doc;

    doc = td_call(t, "POST", "/v1/namespaces", TD_ADMIN,
                  "{\"name\":\"snow\",\"kind\":\"snowflake\"}", 409);
    json_decref(doc);
    doc =
        td_call(t, "POST", "/v1/namespaces", TD_MINT, "{\"name\":\"x1\",\"kind\":\"range\"}", 403);
    json_decref(doc);
    doc = td_call(t, "GET", "/v1/namespaces/x1", TD_MINT, NULL, 404);
    json_decref(doc);
}

/* The newest audit record's action, actor and namespace must be these. */
static void expect_last_audit(struct td_daemon *t, const char *action, const char *actor,
                              const char *ns)
{
    json_t *doc = td_call(t, "GET", "/v1/audit?limit=1000", TD_ADMIN, NULL, 200);
    json_t *entries = json_object_get(doc, "entries");
    json_t *last = json_array_get(entries, json_array_size(entries) - 1);

    assert_non_null(last);
    assert_string_equal(td_str(last, "action"), action);
    assert_string_equal(td_str(last, "actor"), actor);
    assert_string_equal(td_str(last, "namespace"), ns);
    json_decref(doc);
}

static void test_routes_ns__disable_and_enable_show_and_are_audited(void **state)
{
    struct td_daemon *t = *state;
    json_t *doc;

    doc = td_call(t, "POST", "/v1/namespaces/rng/disable", TD_ADMIN, NULL, 200);
    json_decref(doc);
    doc = td_call(t, "GET", "/v1/namespaces/rng", TD_MINT, NULL, 200);
    assert_true(json_is_true(json_object_get(doc, "disabled")));
    json_decref(doc);
    expect_last_audit(t, "ns.disable", "ops", "rng");
    doc = td_call(t, "POST", "/v1/namespaces/rng/enable", TD_ADMIN, NULL, 200);
    json_decref(doc);
    doc = td_call(t, "GET", "/v1/namespaces/rng", TD_MINT, NULL, 200);
    assert_true(json_is_false(json_object_get(doc, "disabled")));
    json_decref(doc);
    expect_last_audit(t, "ns.enable", "ops", "rng");
    doc = td_call(t, "POST", "/v1/namespaces/missing/disable", TD_ADMIN, NULL, 404);
    json_decref(doc);
}

static void test_routes_ns__workers_show_the_daemons_own_lease(void **state)
{
    struct td_daemon *t = *state;
    idmint_handle_info info;
    json_t *doc, *rows;
    size_t i;
    int found = 0;

    idmint_handle_info_init(&info);
    assert_int_equal(handles_info(handles_find(&t->d.handles, "snow"), &info), 0);
    doc = td_call(t, "GET", "/v1/namespaces/snow/workers", TD_MINT, NULL, 200);
    assert_string_equal(td_str(doc, "namespace"), "snow");
    rows = json_object_get(doc, "workers");
    for (i = 0; i < json_array_size(rows); i++) {
        json_t *row = json_array_get(rows, i);

        if (json_integer_value(json_object_get(row, "worker_id")) == info.worker_id) {
            found = 1;
            /* Held: its holder shows (as a fingerprint), and its E. */
            assert_string_not_equal(td_str(row, "holder"), "");
            assert_true(strtoull(td_str(row, "lease_until"), NULL, 10) > 0);
        }
    }
    assert_true(found);
    json_decref(doc);
    /* A range namespace has no worker rows; a missing one is 404. */
    doc = td_call(t, "GET", "/v1/namespaces/rng/workers", TD_MINT, NULL, 200);
    assert_int_equal(json_array_size(json_object_get(doc, "workers")), 0);
    json_decref(doc);
    doc = td_call(t, "GET", "/v1/namespaces/missing/workers", TD_MINT, NULL, 404);
    json_decref(doc);
}

static void test_routes_ns__the_audit_pages_forward(void **state)
{
    struct td_daemon *t = *state;
    json_t *doc, *entries;
    json_int_t first, second;

    doc = td_call(t, "GET", "/v1/audit?limit=1", TD_ADMIN, NULL, 200);
    entries = json_object_get(doc, "entries");
    assert_int_equal(json_array_size(entries), 1);
    first = json_integer_value(json_object_get(json_array_get(entries, 0), "seq"));
    json_decref(doc);
    {
        char path[64];

        snprintf(path, sizeof(path), "/v1/audit?limit=1&after=%lld", (long long)first);
        doc = td_call(t, "GET", path, TD_ADMIN, NULL, 200);
    }
    entries = json_object_get(doc, "entries");
    assert_int_equal(json_array_size(entries), 1);
    second = json_integer_value(json_object_get(json_array_get(entries, 0), "seq"));
    assert_true(second > first);
    json_decref(doc);
    doc = td_call(t, "GET", "/v1/audit?limit=0", TD_ADMIN, NULL, 400);
    json_decref(doc);
}

/* GET .../bounds?QUERY expecting 400: the message holds @p says. */
static void bounds_refused(struct td_daemon *t, const char *path, const char *says)
{
    json_t *doc = td_call(t, "GET", path, TD_MINT, NULL, 400), *e;

    e = json_object_get(doc, "error");
    assert_string_equal(td_str(e, "code"), "invalid_argument");
    if (strstr(td_str(e, "message"), says) == NULL)
        fail_msg("%s: expected '%s' in '%s'", path, says, td_str(e, "message"));
    json_decref(doc);
}

/*
 * The bounds of a window are what the library computes for the namespace,
 * they hold the IDs the daemon mints now and not those of a later window;
 * every bad window, a range namespace and a missing one are refused.
 */
static void test_routes_ns__bounds_hold_the_ids_of_their_window(void **state)
{
    struct td_daemon *t = *state;
    idmint_authority *a = td_daemon_admin(t);
    idmint_ns_info info;
    uint64_t ids[200], lo, hi, want_lo, want_hi;
    int64_t before, after;
    long status;
    char path[256];
    json_t *doc;

    json_decref(td_call(t, "POST", "/v1/namespaces", TD_ADMIN,
                        "{\"name\":\"feed\",\"kind\":\"snowflake\",\"layout\":\"39/4/8/12\","
                        "\"unit_ms\":10}",
                        201));
    json_decref(td_call(t, "POST", "/v1/namespaces", TD_ADMIN,
                        "{\"name\":\"seq\",\"kind\":\"range\"}", 201));
    /* One vector, against the library's own answer for the namespace. */
    idmint_ns_info_init(&info, 0);
    assert_int_equal(idmint_ns_get(a, "feed", &info), 0);
    idmint_authority_close(a);
    assert_int_equal(idmint_ns_bounds(&info, 1772323200005, 1772409600000, &want_lo, &want_hi), 0);
    doc = td_call(t, "GET", "/v1/namespaces/feed/bounds?from=1772323200005&to=2026-03-02", TD_MINT,
                  NULL, 200);
    assert_string_equal(td_str(doc, "from"), "2026-03-01T00:00:00.005Z");
    assert_string_equal(td_str(doc, "to"), "2026-03-02T00:00:00.000Z");
    assert_int_equal(json_integer_value(json_object_get(doc, "to_ms")), 1772409600000);
    assert_int_equal(idmint_id_parse(td_str(doc, "lo"), &lo), 0);
    assert_int_equal(idmint_id_parse(td_str(doc, "hi"), &hi), 0);
    assert_int_equal(lo, want_lo);
    assert_int_equal(hi, want_hi);
    json_decref(doc);

    /* IDs minted now lie within the bounds of now and outside a later window. */
    before = (int64_t)time(NULL) * 1000 - 1000;
    assert_int_equal(td_mint(t, "feed", 200, TD_MINT, NULL, ids, &status), 200);
    assert_int_equal(status, 200);
    after = (int64_t)time(NULL) * 1000 + 2000;
    snprintf(path, sizeof(path), "/v1/namespaces/feed/bounds?from=%lld&to=%lld", (long long)before,
             (long long)after);
    doc = td_call(t, "GET", path, TD_MINT, NULL, 200);
    assert_int_equal(idmint_id_parse(td_str(doc, "lo"), &lo), 0);
    assert_int_equal(idmint_id_parse(td_str(doc, "hi"), &hi), 0);
    json_decref(doc);
    for (size_t i = 0; i < 200; i++)
        assert_true(ids[i] >= lo && ids[i] <= hi);
    snprintf(path, sizeof(path), "/v1/namespaces/feed/bounds?from=%lld&to=%lld", (long long)after,
             (long long)after + 60000);
    doc = td_call(t, "GET", path, TD_MINT, NULL, 200);
    assert_int_equal(idmint_id_parse(td_str(doc, "lo"), &lo), 0);
    json_decref(doc);
    for (size_t i = 0; i < 200; i++)
        assert_true(ids[i] < lo);

    bounds_refused(t, "/v1/namespaces/feed/bounds?from=2026-03-02&to=2026-03-01",
                   "the window is empty");
    bounds_refused(t, "/v1/namespaces/feed/bounds?from=2025-12-31&to=2026-03-01",
                   "is before 2026-01-01T00:00:00.000Z");
    bounds_refused(t, "/v1/namespaces/feed/bounds?to=2026-03-01", "'from' is required");
    bounds_refused(t, "/v1/namespaces/feed/bounds?from=yesterday&to=2026-03-01",
                   "query parameter 'from'");
    bounds_refused(t, "/v1/namespaces/seq/bounds?from=2026-03-01&to=2026-03-02", "range namespace");
    bounds_refused(t, "/v1/namespaces/feed/bounds?from=2026-03-01&to=2026-03-02&ns=x",
                   "unknown query parameter 'ns'");
    json_decref(td_call(t, "GET", "/v1/namespaces/missing/bounds?from=2026-03-01&to=2026-03-02",
                        TD_MINT, NULL, 404));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_routes_ns__created_is_what_get_and_list_show,
                                        td_setup_served, td_teardown),
        cmocka_unit_test_setup_teardown(
            test_routes_ns__a_bad_body_names_its_field_and_creates_nothing, td_setup_served,
            td_teardown),
        cmocka_unit_test_setup_teardown(
            test_routes_ns__a_second_create_conflicts_and_a_minter_may_not, td_setup_served,
            td_teardown),
        cmocka_unit_test_setup_teardown(test_routes_ns__disable_and_enable_show_and_are_audited,
                                        td_setup_served, td_teardown),
        cmocka_unit_test_setup_teardown(test_routes_ns__workers_show_the_daemons_own_lease,
                                        td_setup_served, td_teardown),
        cmocka_unit_test_setup_teardown(test_routes_ns__the_audit_pages_forward, td_setup_served,
                                        td_teardown),
        cmocka_unit_test_setup_teardown(test_routes_ns__bounds_hold_the_ids_of_their_window,
                                        td_setup_served, td_teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
