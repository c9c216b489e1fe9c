/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for src/thread_state.c: a thread's block of a slot is made
 * once, zeroed, kept for that thread alone, and given back when the thread
 * exits (LeakSanitizer, in the sanitizer build, reports a block that is not).
 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "internal.h"

#include <pthread.h>
#include <string.h>

#define BLOCK 4096

static void test_thread_state__a_block_is_made_zeroed_once_per_thread_and_slot(void **state)
{
    unsigned char *a, *b, *again;
    int is_new = -1, k;

    (void)state;
    a = idmint__thread_slot(IDMINT__SLOT_CSPRNG, BLOCK, &is_new);
    assert_non_null(a);
    assert_int_equal(is_new, 1); /* the first test: nothing used the slot before */
    for (k = 0; k < BLOCK; k++)
        assert_int_equal(a[k], 0);
    memset(a, 0x5a, BLOCK);
    again = idmint__thread_slot(IDMINT__SLOT_CSPRNG, BLOCK, &is_new);
    assert_ptr_equal(again, a);
    assert_int_equal(is_new, 0);
    assert_int_equal(again[BLOCK - 1], 0x5a);
    b = idmint__thread_slot(IDMINT__SLOT_ERRMSG, 64, &is_new);
    assert_non_null(b);
    assert_ptr_not_equal(b, a);
}

struct seen {
    unsigned char *block;
    int is_new;
    unsigned char first;
};

static void *other_thread(void *arg)
{
    struct seen *s = arg;

    s->block = idmint__thread_slot(IDMINT__SLOT_CSPRNG, BLOCK, &s->is_new);
    if (s->block != NULL) {
        s->first = s->block[0];
        memset(s->block, 0xa5, BLOCK);
    }
    return NULL;
}

/* Another thread gets a block of its own: new, zeroed, and not this thread's. */
static void test_thread_state__each_thread_has_its_own_block(void **state)
{
    unsigned char *mine;
    struct seen s[8];
    pthread_t t[8];
    int is_new, i;

    (void)state;
    mine = idmint__thread_slot(IDMINT__SLOT_CSPRNG, BLOCK, &is_new);
    assert_non_null(mine);
    memset(mine, 0x11, BLOCK);
    for (i = 0; i < 8; i++) {
        memset(&s[i], 0, sizeof(s[i]));
        assert_int_equal(pthread_create(&t[i], NULL, other_thread, &s[i]), 0);
    }
    for (i = 0; i < 8; i++) {
        assert_int_equal(pthread_join(t[i], NULL), 0);
        assert_non_null(s[i].block);
        assert_int_equal(s[i].is_new, 1);
        assert_int_equal(s[i].first, 0);
    }
    /* The threads wrote theirs; this one is as this thread left it. */
    assert_ptr_equal(idmint__thread_slot(IDMINT__SLOT_CSPRNG, BLOCK, &is_new), mine);
    assert_int_equal(mine[0], 0x11);
    assert_int_equal(mine[BLOCK - 1], 0x11);
}

/* The error message a thread sets is its own: another thread's failure does not touch it. */
static void *fail_elsewhere(void *arg)
{
    (void)arg;
    idmint__fail(IDMINT_EINVAL, "the other thread's message");
    return NULL;
}

static void test_thread_state__error_messages_are_per_thread(void **state)
{
    pthread_t t;

    (void)state;
    idmint__fail(IDMINT_ENOTFOUND, "this thread's message");
    assert_int_equal(pthread_create(&t, NULL, fail_elsewhere, NULL), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_string_equal(idmint_errmsg(), "this thread's message");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_thread_state__a_block_is_made_zeroed_once_per_thread_and_slot),
        cmocka_unit_test(test_thread_state__each_thread_has_its_own_block),
        cmocka_unit_test(test_thread_state__error_messages_are_per_thread),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
