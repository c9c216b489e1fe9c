/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tests for src/names.c: the shapes of namespace names and idempotency keys,
 * at their boundaries, each refusal with a message that says what is wrong.
 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "idmint.h"
#include "internal.h"

#include <string.h>

static void assert_refused(int rc, const char *part)
{
    assert_int_equal(rc, IDMINT_EINVAL);
    assert_non_null(strstr(idmint_errmsg(), part));
}

static void test_names__a_namespace_name_is_lower_case_digits_and_three_marks(void **state)
{
    char name[80];

    (void)state;
    assert_int_equal(idmint__ns_name_check("a"), 0);
    assert_int_equal(idmint__ns_name_check("0rders_v2.eu-west"), 0);
    memset(name, 'x', 63);
    name[63] = '\0';
    assert_int_equal(idmint__ns_name_check(name), 0); /* 63 characters: the longest */
    name[63] = 'x';
    name[64] = '\0';
    assert_refused(idmint__ns_name_check(name), "longer than 63");
    assert_refused(idmint__ns_name_check(NULL), "missing");
    assert_refused(idmint__ns_name_check(""), "empty");
    assert_refused(idmint__ns_name_check("_a"), "character 1 (0x5f)"); /* marks never first */
    assert_refused(idmint__ns_name_check("-a"), "character 1");
    assert_refused(idmint__ns_name_check("Orders"), "character 1 (0x4f)");
    assert_refused(idmint__ns_name_check("a/b"), "character 2 (0x2f)");
    assert_refused(idmint__ns_name_check("a b"), "character 2 (0x20)");
    assert_refused(idmint__ns_name_check("a\xc3\xa9"), "character 2 (0xc3)");
}

static void test_names__an_idempotency_key_is_1_to_max_safe_bytes(void **state)
{
    char key[IDMINT_BATCH_KEY_MAX + 2];

    (void)state;
    assert_int_equal(idmint__batch_key_check("k"), 0);
    assert_int_equal(idmint__batch_key_check("Order-42:retry_1.a"), 0);
    memset(key, 'K', IDMINT_BATCH_KEY_MAX);
    key[IDMINT_BATCH_KEY_MAX] = '\0';
    assert_int_equal(idmint__batch_key_check(key), 0);
    key[IDMINT_BATCH_KEY_MAX] = 'K';
    key[IDMINT_BATCH_KEY_MAX + 1] = '\0';
    assert_refused(idmint__batch_key_check(key), "1 to");
    assert_refused(idmint__batch_key_check(NULL), "1 to");
    assert_refused(idmint__batch_key_check(""), "1 to");
    assert_refused(idmint__batch_key_check("a b"), "byte 2 is 0x20");
    assert_refused(idmint__batch_key_check("a\"b"), "byte 2 is 0x22");
    assert_refused(idmint__batch_key_check("a\\b"), "byte 2 is 0x5c");
    assert_refused(idmint__batch_key_check("ab\n"), "byte 3 is 0x0a");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names__a_namespace_name_is_lower_case_digits_and_three_marks),
        cmocka_unit_test(test_names__an_idempotency_key_is_1_to_max_safe_bytes),
    };

    return cmocka_run_group_tests_name("names", tests, NULL, NULL);
}
