/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for cmd/idmintd/status_json.c: /v1/status is the view, read
 * back here with jansson: the daemon's settings and readiness, the store's
 * state, every namespace by name with its kind's fields and the daemon's
 * handle; 64-bit figures as decimal strings (exact in JavaScript); the
 * audit only for an admin; the levels by name.
 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "daemon_fixture.h"
#include "json.h"
#include "status.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

/* /v1/status of @p t for @p is_admin, parsed. */
static json_t *status_of(struct td_daemon *t, int is_admin)
{
    struct status_view v;
    struct json *tree;
    json_error_t err;
    json_t *doc;
    size_t len = 0;
    char *text;

    assert_int_equal(status_view_take(&t->d, is_admin, &v), 0);
    assert_non_null(tree = status_json(&t->d, &v));
    assert_non_null(text = json_dump(tree, &len));
    doc = json_loadb(text, len, 0, &err);
    if (doc == NULL)
        fail_msg("not JSON: %s: %s", err.text, text);
    free(text);
    json_free(tree);
    status_view_free(&v);
    return doc;
}

static json_int_t int_at(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);

    if (!json_is_integer(v))
        fail_msg("%s is not an integer", key);
    return json_integer_value(v);
}

static void test_status_json__the_daemon_and_the_store_as_they_stand(void **state)
{
    struct td_daemon *t = *state;
    json_t *doc = status_of(t, 0), *dm, *st;

    assert_non_null(dm = json_object_get(doc, "daemon"));
    assert_string_equal(td_str(dm, "authority"), t->d.handles.authority_text);
    assert_int_equal(int_at(dm, "lease_ms"), 60000);
    assert_int_equal(int_at(dm, "ready_margin_ms"), 6000);
    assert_int_equal(int_at(dm, "low_share_permille"), 100);
    assert_true(json_is_false(json_object_get(dm, "ready")));
    assert_non_null(strstr(td_str(dm, "ready_reason"), "starting"));
    assert_int_equal(int_at(json_object_get(dm, "levels"), "left_bad_permille"), STATUS_LEFT_BAD);
    assert_non_null(st = json_object_get(doc, "store"));
    assert_true(json_is_false(json_object_get(st, "sampled")));
    assert_string_equal(td_str(st, "level"), "warn");
    assert_non_null(strstr(td_str(st, "problem"), "reading the store"));
    json_decref(doc);
}

static void test_status_json__namespaces_by_name_with_their_kinds_fields(void **state)
{
    struct td_daemon *t = *state;
    json_t *doc, *list, *rng, *snow, *h;
    idmint_handle_info info;
    struct ns_handle *nh = handles_find(&t->d.handles, "snow");

    metrics_add(&t->d.threads[0].metrics.ids_issued[nh->slot], 42);
    doc = status_of(t, 0);
    list = json_object_get(doc, "namespaces");
    assert_true(json_is_array(list));
    assert_int_equal(json_array_size(list), 2);
    rng = json_array_get(list, 0);
    snow = json_array_get(list, 1);
    assert_string_equal(td_str(rng, "name"), "rng");
    assert_string_equal(td_str(rng, "kind"), "range");
    assert_string_equal(td_str(snow, "name"), "snow");
    assert_string_equal(td_str(snow, "kind"), "snowflake");
    /* Not in a store pass yet: known only from the handles. */
    assert_true(json_is_false(json_object_get(snow, "listed")));
    assert_true(json_is_null(json_object_get(snow, "disabled")));
    assert_true(json_is_null(json_object_get(snow, "workers")));
    assert_non_null(strchr(td_str(snow, "layout"), '/'));

    h = json_object_get(snow, "handle");
    idmint_handle_info_init(&info);
    assert_int_equal(handles_info(nh, &info), 0);
    assert_int_equal(int_at(h, "worker_id"), info.worker_id);
    assert_string_equal(td_str(h, "ids_issued"), "42"); /* 64-bit: a string */
    assert_true(json_is_null(json_object_get(h, "workers_free")));
    assert_int_equal(json_array_size(json_object_get(h, "per_s")), THROUGHPUT_SECONDS);
    h = json_object_get(rng, "handle");
    assert_true(strtoull(td_str(h, "range_left"), NULL, 10) > 0);
    assert_null(json_object_get(h, "worker_id"));
    json_decref(doc);
}

static void test_status_json__the_audit_needs_admin_and_levels_are_named(void **state)
{
    struct td_daemon *t = *state;
    json_t *doc, *audit, *ev;

    doc = status_of(t, 0);
    audit = json_object_get(doc, "audit");
    assert_true(json_is_false(json_object_get(audit, "shown")));
    assert_null(json_object_get(audit, "entries"));
    json_decref(doc);

    atomic_fetch_add(&t->d.clock_backsteps, 3);
    doc = status_of(t, 1);
    audit = json_object_get(doc, "audit");
    assert_true(json_is_true(json_object_get(audit, "shown")));
    assert_string_equal(td_str(audit, "error"), "not read yet"); /* no full pass yet */
    ev = json_object_get(doc, "events");
    assert_string_equal(td_str(ev, "clock_backsteps"), "3");
    assert_string_equal(td_str(ev, "clock_backsteps_level"), "warn");
    assert_string_equal(td_str(ev, "renewal_failures_level"), "ok");
    assert_true(json_is_object(json_object_get(json_object_get(ev, "rate_limited_by"), "token")));
    json_decref(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_status_json__the_daemon_and_the_store_as_they_stand,
                                        td_setup, td_teardown),
        cmocka_unit_test_setup_teardown(
            test_status_json__namespaces_by_name_with_their_kinds_fields, td_setup, td_teardown),
        cmocka_unit_test_setup_teardown(
            test_status_json__the_audit_needs_admin_and_levels_are_named, td_setup, td_teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
