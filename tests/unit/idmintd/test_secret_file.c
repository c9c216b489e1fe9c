/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for cmd/idmintd/secret_file.c: which modes a file of secrets
 * may have, and a refusal that says what is wrong and the chmod that fixes it.
 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "secret_file.h"

#include <string.h>
#include <sys/stat.h>

static int judge(unsigned mode, char *err, size_t size)
{
    struct stat st;

    memset(&st, 0, sizeof(st));
    st.st_mode = mode; /* the file-type bits play no part */
    err[0] = '\0';
    return secret_file_check("the TLS key file", "/etc/idmint/key.pem", &st, err, size);
}

static void test_secret_file__private_or_group_readable_is_accepted(void **state)
{
    static const unsigned ok[] = {0400, 0600, 0640, 0440, 0700, 0750, 04600, 0000};
    char err[512];
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        assert_int_equal(judge(ok[i], err, sizeof(err)), 0);
        assert_string_equal(err, "");
    }
}

static void test_secret_file__group_write_or_any_access_of_others_is_refused(void **state)
{
    char err[512];

    (void)state;
    assert_int_equal(judge(0660, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "the TLS key file '/etc/idmint/key.pem' is not private"));
    assert_non_null(strstr(err, "its mode is 0660 (its group may write it)"));
    assert_non_null(strstr(err, "'chmod 600 /etc/idmint/key.pem'"));
    assert_int_equal(judge(0604, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "(others have access)"));
    assert_int_equal(judge(0601, err, sizeof(err)), -1);
    assert_int_equal(judge(0602, err, sizeof(err)), -1);
    assert_int_equal(judge(0666, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "(its group may write it, others have access)"));
}

/* A short buffer gets a cut message, still a C string. */
static void test_secret_file__a_short_buffer_is_cut_not_overrun(void **state)
{
    char err[24];

    (void)state;
    memset(err, 'x', sizeof(err));
    assert_int_equal(judge(0644, err, 16), -1);
    assert_int_equal(strlen(err), 15);
    assert_int_equal(err[16], 'x');
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_secret_file__private_or_group_readable_is_accepted),
        cmocka_unit_test(test_secret_file__group_write_or_any_access_of_others_is_refused),
        cmocka_unit_test(test_secret_file__a_short_buffer_is_cut_not_overrun),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
