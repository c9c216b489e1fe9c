/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tests for src/errors.c: every code has its own text, the message is the
 * calling thread's own, a long message is cut and terminated, and clearing
 * it leaves "".
 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "idmint.h"
#include "internal.h"

#include <pthread.h>
#include <string.h>

static void test_errors__every_code_has_its_own_text(void **state)
{
    static const int codes[] = {
#define XX(name, value, text) IDMINT_##name,
        IDMINT_ERRNO_MAP(XX)
#undef XX
    };
    size_t n = sizeof(codes) / sizeof(codes[0]);

    (void)state;
    assert_string_equal(idmint_strerror(IDMINT_OK), "success");
    assert_string_equal(idmint_strerror(-99999), "unknown error");
    for (size_t i = 0; i < n; i++) {
        assert_true(codes[i] < 0);
        assert_string_not_equal(idmint_strerror(codes[i]), "unknown error");
        for (size_t j = 0; j < i; j++) {
            assert_int_not_equal(codes[i], codes[j]);
            assert_string_not_equal(idmint_strerror(codes[i]), idmint_strerror(codes[j]));
        }
    }
}

static void *other_thread(void *arg)
{
    char *seen = arg;

    strcpy(seen, idmint_errmsg()); /* a new thread starts with no message */
    /* Its own message, which must not reach the main thread's (no cmocka
     * assertion off the main thread: a failure there cannot unwind). */
    return idmint__fail(IDMINT_ESTORE, "the other thread's") == IDMINT_ESTORE ? seen : NULL;
}

static void test_errors__the_message_is_the_calling_threads_own(void **state)
{
    char seen[600] = "x";
    pthread_t th;
    void *ret = NULL;

    (void)state;
    assert_int_equal(idmint__fail(IDMINT_EINVAL, "bad %s %d", "thing", 7), IDMINT_EINVAL);
    assert_string_equal(idmint_errmsg(), "bad thing 7");
    assert_int_equal(pthread_create(&th, NULL, other_thread, seen), 0);
    assert_int_equal(pthread_join(th, &ret), 0);
    assert_ptr_equal(ret, seen);
    assert_string_equal(seen, "");
    assert_string_equal(idmint_errmsg(), "bad thing 7");
    idmint__errmsg_clear();
    assert_string_equal(idmint_errmsg(), "");
}

static void test_errors__a_long_message_is_cut_and_terminated(void **state)
{
    char long_text[2000];

    (void)state;
    memset(long_text, 'm', sizeof(long_text) - 1);
    long_text[sizeof(long_text) - 1] = '\0';
    assert_int_equal(idmint__fail(IDMINT_ESTORE, "%s", long_text), IDMINT_ESTORE);
    assert_int_equal(strlen(idmint_errmsg()), 511);
    assert_int_equal(idmint_errmsg()[0], 'm');
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_errors__every_code_has_its_own_text),
        cmocka_unit_test(test_errors__the_message_is_the_calling_threads_own),
        cmocka_unit_test(test_errors__a_long_message_is_cut_and_terminated),
    };

    return cmocka_run_group_tests_name("errors", tests, NULL, NULL);
}
