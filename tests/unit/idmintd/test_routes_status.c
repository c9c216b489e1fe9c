/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for cmd/idmintd/routes_status.c over a real server on
 * loopback: /v1/status and /status need a token, show the audit to an admin
 * only, and the page comes as HTML with its Content-Security-Policy.
 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "daemon_fixture.h"
#include "status.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

static void test_routes_status__status_needs_a_token_and_shows_audit_to_admins(void **state)
{
    struct td_daemon *t = *state;
    struct td_reply r;
    json_t *doc;

    td_http(t, "GET", "/v1/status", NULL, NULL, NULL, &r);
    assert_int_equal(r.status, 401);
    td_reply_free(&r);
    td_http(t, "GET", "/v1/status", TD_MINT, NULL, NULL, &r);
    assert_int_equal(r.status, 200);
    assert_non_null(doc = td_reply_json(&r));
    assert_true(json_is_false(json_object_get(json_object_get(doc, "audit"), "shown")));
    json_decref(doc);
    td_reply_free(&r);
    td_http(t, "GET", "/v1/status", TD_ADMIN, NULL, NULL, &r);
    assert_int_equal(r.status, 200);
    assert_non_null(doc = td_reply_json(&r));
    assert_true(json_is_true(json_object_get(json_object_get(doc, "audit"), "shown")));
    json_decref(doc);
    td_reply_free(&r);

    td_http(t, "GET", "/status", TD_MINT, NULL, NULL, &r);
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(r.headers, "text/html"));
    assert_non_null(strstr(r.headers, status_page_csp()));
    assert_non_null(strstr(r.body, "The audit log needs the admin role."));
    td_reply_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_routes_status__status_needs_a_token_and_shows_audit_to_admins, td_setup_served,
            td_teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
