/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tests for src/wire_errors.c: the one table between library codes and the
 * HTTP API's errors, checked both ways. idmintd answers a code with its
 * row; the http:// remote authority reads the wire code back; a code that
 * goes there and back must mean to a client what it meant to the server.
 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "idmint.h"
#include "internal.h"

#include <string.h>

static const int library_codes[] = {
#define XX(name, value, text) IDMINT_##name,
    IDMINT_ERRNO_MAP(XX)
#undef XX
};
#define N_CODES (sizeof(library_codes) / sizeof(library_codes[0]))

static void test_wire_errors__every_library_code_has_its_own_row(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_CODES; i++) {
        const struct idmint__wire_error *row = idmint__wire_error_of(library_codes[i]);

        assert_int_equal(row->err, library_codes[i]);
        assert_int_equal(row->is_reply_only, 0);
        assert_true(row->status >= 400 && row->status <= 599);
        assert_true(row->code != NULL && row->code[0] != '\0');
    }
}

/* Server code -> (status, wire code) -> client code -> the same answer again. */
static void test_wire_errors__every_code_survives_the_trip_there_and_back(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_CODES; i++) {
        const struct idmint__wire_error *sent = idmint__wire_error_of(library_codes[i]);
        int read_back = idmint__wire_error_code(sent->code, sent->status);
        const struct idmint__wire_error *again = idmint__wire_error_of(read_back);

        assert_int_equal(again->status, sent->status);
        assert_string_equal(again->code, sent->code);
    }
}

/* The HTTP layer's own answers read back as a code of the same class. */
static void test_wire_errors__reply_only_answers_read_back_in_their_class(void **state)
{
    const struct idmint__wire_error *rows;
    size_t n = idmint__wire_errors(&rows), reply_only = 0;

    (void)state;
    for (size_t i = 0; i < n; i++) {
        int read_back = idmint__wire_error_code(rows[i].code, rows[i].status);

        /* One meaning per wire code: its first row decides. */
        assert_int_equal(idmint__wire_error_named(rows[i].code)->err, read_back);
        for (size_t j = 0; j < i; j++)
            if (strcmp(rows[j].code, rows[i].code) == 0)
                assert_int_equal(rows[j].status, rows[i].status);
        if (!rows[i].is_reply_only)
            continue;
        reply_only++;
        assert_int_equal(read_back, rows[i].err);
        /* 429 is the one 4xx a client should retry, as it does a 5xx. */
        if (rows[i].status == 429 || rows[i].status >= 500)
            assert_true(read_back == IDMINT_EUNAVAILABLE || read_back == IDMINT_EINVAL);
        else
            assert_true(idmint__wire_error_of(read_back)->status < 500);
    }
    assert_true(reply_only > 0);
    assert_int_equal(idmint__wire_error_code("rate_limited", 429), IDMINT_EUNAVAILABLE);
    assert_int_equal(idmint__wire_error_code("unauthenticated", 401), IDMINT_EACCESS);
}

static void test_wire_errors__unknown_codes_fall_back_by_status_class(void **state)
{
    (void)state;
    assert_int_equal(idmint__wire_error_code("no_such_code", 500), IDMINT_EUNAVAILABLE);
    assert_int_equal(idmint__wire_error_code("no_such_code", 418), IDMINT_EINVAL);
    assert_int_equal(idmint__wire_error_code(NULL, 502), IDMINT_EUNAVAILABLE);
    assert_null(idmint__wire_error_named(NULL));
    assert_null(idmint__wire_error_named("no_such_code"));
    assert_int_equal(idmint__wire_error_of(-12345)->status, 503);
    assert_string_equal(idmint__wire_error_of(-12345)->code, "unavailable");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wire_errors__every_library_code_has_its_own_row),
        cmocka_unit_test(test_wire_errors__every_code_survives_the_trip_there_and_back),
        cmocka_unit_test(test_wire_errors__reply_only_answers_read_back_in_their_class),
        cmocka_unit_test(test_wire_errors__unknown_codes_fall_back_by_status_class),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
