/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests for src/entropy.c, the only reader of the kernel's randomness. */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "idmint.h"
#include "internal.h"

#include <string.h>

static int is_lower_hex(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

static void test_entropy__incarnation_is_32_lowercase_hex_digits(void **state)
{
    char inc[33];

    (void)state;
    memset(inc, 'X', sizeof(inc));
    assert_int_equal(idmint__incarnation(inc), 0);
    assert_int_equal(strlen(inc), 32);
    for (size_t i = 0; i < 32; i++)
        assert_true(is_lower_hex(inc[i]));
}

static void test_entropy__two_incarnations_differ(void **state)
{
    char a[33], b[33];

    (void)state;
    assert_int_equal(idmint__incarnation(a), 0);
    assert_int_equal(idmint__incarnation(b), 0);
    assert_string_not_equal(a, b);
}

static void test_entropy__fills_the_whole_buffer(void **state)
{
    /* Larger than one getrandom() call is sure to return, so the loop over
     * short reads runs. Two fills of the same buffer: a byte left unwritten
     * keeps its value in both, which 1 MiB of random data almost never does
     * by chance in more than a few places. */
    enum { LEN = 1 << 20 };
    static unsigned char a[LEN], b[LEN];
    size_t same = 0, zero_a = 0;

    (void)state;
    memset(a, 0, sizeof(a));
    memset(b, 0, sizeof(b));
    assert_int_equal(idmint__entropy(a, sizeof(a)), 0);
    assert_int_equal(idmint__entropy(b, sizeof(b)), 0);
    for (size_t i = 0; i < LEN; i++) {
        same += a[i] == b[i];
        zero_a += a[i] == 0;
    }
    /* Expected LEN/256 = 4096 each; a buffer untouched past a short read
     * would push either far above. */
    assert_in_range(same, 3000, 5200);
    assert_in_range(zero_a, 3000, 5200);
    assert_int_equal(memcmp(a + LEN - 64, b + LEN - 64, 64) != 0, 1);
}

static void test_entropy__zero_length_is_a_no_op(void **state)
{
    unsigned char byte = 0x5a;

    (void)state;
    assert_int_equal(idmint__entropy(&byte, 0), 0);
    assert_int_equal(byte, 0x5a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_entropy__incarnation_is_32_lowercase_hex_digits),
        cmocka_unit_test(test_entropy__two_incarnations_differ),
        cmocka_unit_test(test_entropy__fills_the_whole_buffer),
        cmocka_unit_test(test_entropy__zero_length_is_a_no_op),
    };
    return cmocka_run_group_tests_name("entropy", tests, NULL, NULL);
}
