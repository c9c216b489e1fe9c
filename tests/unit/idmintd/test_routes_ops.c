/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for cmd/idmintd/routes_ops.c over a real server on loopback:
 * /healthz answers while the daemon lives; /readyz is 503 with the reason
 * until the daemon is ready and 200 after; /metrics is the Prometheus text
 * with its content type and no token.
 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "daemon_fixture.h"

#include <stdlib.h>
#include <string.h>

static void test_routes_ops__health_and_readiness(void **state)
{
    struct td_daemon *t = *state;
    struct td_reply r;

    td_http(t, "GET", "/healthz", NULL, NULL, NULL, &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.body, "{\"status\":\"ok\"}");
    td_reply_free(&r);
    td_http(t, "GET", "/readyz", NULL, NULL, NULL, &r);
    assert_int_equal(r.status, 200);
    td_reply_free(&r);
    /* Not ready: 503 with the reason, health unchanged. */
    atomic_store(&t->d.is_ready, 0);
    td_http(t, "GET", "/readyz", NULL, NULL, NULL, &r);
    assert_int_equal(r.status, 503);
    assert_non_null(strstr(r.body, "\"status\":\"not_ready\""));
    assert_non_null(strstr(r.body, "starting"));
    td_reply_free(&r);
    td_http(t, "GET", "/healthz", NULL, NULL, NULL, &r);
    assert_int_equal(r.status, 200);
    td_reply_free(&r);
    atomic_store(&t->d.is_ready, 1);
}

static void test_routes_ops__metrics_are_open_and_prometheus_text(void **state)
{
    struct td_daemon *t = *state;
    struct td_reply r;

    td_http(t, "GET", "/metrics", NULL, NULL, NULL, &r);
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(r.headers, "text/plain; version=0.0.4"));
    assert_non_null(strstr(r.body, "# TYPE idmint_ids_issued_total counter"));
    assert_non_null(strstr(r.body, "idmint_ids_issued_total{namespace=\"snow\"}"));
    td_reply_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_routes_ops__health_and_readiness, td_setup_served_open,
                                        td_teardown),
        cmocka_unit_test_setup_teardown(test_routes_ops__metrics_are_open_and_prometheus_text,
                                        td_setup_served_open, td_teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
