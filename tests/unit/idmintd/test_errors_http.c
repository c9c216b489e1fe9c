/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for cmd/idmintd/errors_http.c: every library code has one
 * status and one wire code, the lookup never fails, and the wire code
 * leads back to the same status (one table, both directions).
 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "errors_http.h"
#include "idmint.h"

#include <string.h>

static void test_errors_http__every_library_code_has_a_row(void **state)
{
    (void)state;
    assert_int_equal(errors_http_check_all(), 0);
}

static void check_code(int err, const char *name)
{
    const struct idmint__wire_error *row = errors_http_lookup(err), *back;

    assert_non_null(row);
    if (row->err != err)
        fail_msg("IDMINT_%s has no row of its own", name);
    assert_true(row->status >= 400 && row->status <= 599);
    assert_non_null(row->code);
    assert_true(row->code[0] != '\0');
    assert_int_equal(strspn(row->code, "abcdefghijklmnopqrstuvwxyz_"), strlen(row->code));
    /* What a client reads back from the wire names the same status. */
    back = idmint__wire_error_named(row->code);
    assert_non_null(back);
    if (back->status != row->status)
        fail_msg("IDMINT_%s: %d %s, but the code reads back as %d", name, row->status, row->code,
                 back->status);
}

static void test_errors_http__each_code_maps_to_an_error_status_and_back(void **state)
{
    (void)state;
#define XX(name, value, text) check_code(IDMINT_##name, #name);
    IDMINT_ERRNO_MAP(XX)
#undef XX
}

static void test_errors_http__an_unknown_code_is_unavailable_never_null(void **state)
{
    static const int unknown[] = {1, 0x7fffffff, -0x7fffffff, -9999};
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
        const struct idmint__wire_error *row = errors_http_lookup(unknown[i]);

        assert_non_null(row);
        assert_int_equal(row->status, 503);
        assert_string_equal(row->code, "unavailable");
    }
}

static void test_errors_http__rate_limited_is_429(void **state)
{
    const struct idmint__wire_error *row = idmint__wire_error_named(ERRORS_HTTP_RATE_LIMITED_CODE);

    (void)state;
    assert_non_null(row);
    assert_int_equal(row->status, 429);
    assert_null(idmint__wire_error_named("no_such_code"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_errors_http__every_library_code_has_a_row),
        cmocka_unit_test(test_errors_http__each_code_maps_to_an_error_status_and_back),
        cmocka_unit_test(test_errors_http__an_unknown_code_is_unavailable_never_null),
        cmocka_unit_test(test_errors_http__rate_limited_is_429),
    };
    return cmocka_run_group_tests_name("errors_http", tests, NULL, NULL);
}
