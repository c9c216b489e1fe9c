/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for cmd/idmintd/json.c: what a request body may be, the
 * getters' three answers (and outputs left alone unless present), unknown
 * keys, 64-bit values as decimal strings, and the error body's escaping.
 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "json.h"

#include <stdlib.h>
#include <string.h>

static struct json *parse(const char *text)
{
    char err[256];

    return json_parse_object(text, strlen(text), err, sizeof(err));
}

static void parse_refused(const char *text, size_t len, const char *what)
{
    char err[256] = "";

    assert_null(json_parse_object(text, len, err, sizeof(err)));
    if (strstr(err, what) == NULL)
        fail_msg("'%.*s': expected '%s' in '%s'", (int)len, text != NULL ? text : "", what, err);
}

static void test_json__only_one_object_is_a_body(void **state)
{
    (void)state;
    parse_refused(NULL, 0, "the body is empty");
    parse_refused("{}", 0, "the body is empty");
    parse_refused("[1,2]", 5, "the body is JSON but not an object");
    parse_refused("\"x\"", 3, "the body is not JSON: "); /* jansson takes no bare scalar */
    parse_refused("{\"a\":1", 6, "the body is not JSON: ");
    parse_refused("{\"a\":1}{}", 9, "the body is not JSON: ");
    parse_refused("{\"a\":1,\"a\":2}", 13, "duplicate"); /* one key, one value */
    parse_refused("{\"a\":9223372036854775808}", 25, "the body is not JSON: ");
    /* len bytes only: the rest of the buffer is not read. */
    {
        char err[256];
        struct json *o = json_parse_object("{\"a\":1}garbage", 7, err, sizeof(err));

        assert_non_null(o);
        json_free(o);
    }
    json_free(NULL);
}

static void test_json__getters_tell_present_absent_and_wrong_type(void **state)
{
    struct json *o = parse("{\"s\":\"x\",\"i\":-9223372036854775808,\"f\":1.5,\"n\":null,"
                           "\"b\":true,\"big\":9223372036854775807}");
    const char *s = "untouched";
    int64_t i = 42;

    (void)state;
    assert_non_null(o);
    assert_int_equal(json_get_str(o, "s", &s), 1);
    assert_string_equal(s, "x");
    assert_int_equal(json_get_int(o, "i", &i), 1);
    assert_true(i == INT64_MIN);
    assert_int_equal(json_get_int(o, "big", &i), 1);
    assert_true(i == INT64_MAX);
    i = 42;
    s = "untouched";
    assert_int_equal(json_get_int(o, "f", &i), -1); /* 1.5 is not a whole number */
    assert_int_equal(json_get_int(o, "s", &i), -1);
    assert_int_equal(json_get_int(o, "b", &i), -1);
    assert_int_equal(json_get_str(o, "i", &s), -1);
    assert_int_equal(json_get_str(o, "n", &s), 0); /* null is absent */
    assert_int_equal(json_get_str(o, "missing", &s), 0);
    assert_int_equal(json_get_int(o, "n", &i), 0);
    assert_int_equal(i, 42);
    assert_string_equal(s, "untouched");
    json_free(o);
}

static void test_json__the_first_unknown_key_is_named(void **state)
{
    static const char *const known[] = {"namespace", "count", NULL};
    struct json *o = parse("{\"namespace\":\"a\",\"count\":1}");
    struct json *p = parse("{\"count\":1,\"Namespace\":\"a\"}");

    (void)state;
    assert_null(json_unknown_key(o, known));
    assert_string_equal(json_unknown_key(p, known), "Namespace");
    assert_string_equal(json_unknown_key(o, NULL), "namespace"); /* NULL: nothing is known */
    json_free(o);
    json_free(p);
    o = parse("{}");
    assert_null(json_unknown_key(o, NULL));
    json_free(o);
}

static void test_json__64_bit_values_travel_as_decimal_strings(void **state)
{
    struct json *o = json_new_object();
    char *text;
    size_t len = 0;

    (void)state;
    json_set_u64_str(o, "max", UINT64_MAX);
    json_set_u64_str(o, "zero", 0);
    json_set_int(o, "small", -5);
    json_set_bool(o, "yes", 7);
    json_set_null(o, "none");
    text = json_dump(o, &len);
    assert_non_null(text);
    assert_string_equal(text, "{\"max\":\"18446744073709551615\",\"zero\":\"0\",\"small\":-5,"
                              "\"yes\":true,\"none\":null}");
    assert_int_equal(len, strlen(text));
    free(text);
    json_free(o);
}

static void test_json__builders_keep_order_and_take_their_children(void **state)
{
    struct json *o = json_new_object(), *arr = json_new_array();
    char *text;
    size_t len = 0;

    (void)state;
    json_push(arr, json_new_int(1));
    json_push(arr, json_new_str("two"));
    json_push(arr, NULL); /* out of memory upstream: ignored */
    json_set_str(o, "z", "first");
    json_set(o, "a", arr);
    json_set_str(o, "z", "replaced"); /* a key set twice keeps its place */
    text = json_dump(o, &len);
    assert_string_equal(text, "{\"z\":\"replaced\",\"a\":[1,\"two\"]}");
    free(text);
    json_free(o);
    /* A NULL parent frees the child (no leak under the sanitizers) and dumps nothing. */
    json_set(NULL, "k", json_new_str("orphan"));
    json_push(NULL, json_new_int(3));
    json_set_str(NULL, "k", "v");
    assert_null(json_dump(NULL, &len));
}

static void test_json__the_error_body_escapes_what_it_carries(void **state)
{
    size_t len = 0;
    char *text = json_error_body("invalid_argument", "a \"quoted\" \\ name\n", &len);
    char err[256];
    struct json *o, *back;
    const char *code = NULL;

    (void)state;
    assert_non_null(text);
    assert_string_equal(text, "{\"error\":{\"code\":\"invalid_argument\","
                              "\"message\":\"a \\\"quoted\\\" \\\\ name\\n\"}}");
    assert_int_equal(len, strlen(text));
    o = json_parse_object(text, len, err, sizeof(err));
    assert_non_null(o);
    assert_int_equal(json_get_str(o, "error", &code), -1); /* an object */
    json_free(o);
    free(text);
    /* Not UTF-8: no body at all rather than an invalid one. */
    assert_null(json_error_body("x", "\xff\xfe", &len));
    back = json_new_str("\xc3");
    assert_null(back);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json__only_one_object_is_a_body),
        cmocka_unit_test(test_json__getters_tell_present_absent_and_wrong_type),
        cmocka_unit_test(test_json__the_first_unknown_key_is_named),
        cmocka_unit_test(test_json__64_bit_values_travel_as_decimal_strings),
        cmocka_unit_test(test_json__builders_keep_order_and_take_their_children),
        cmocka_unit_test(test_json__the_error_body_escapes_what_it_carries),
    };
    return cmocka_run_group_tests_name("json", tests, NULL, NULL);
}
