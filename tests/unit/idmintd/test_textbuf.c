/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for cmd/idmintd/textbuf.c: growth at the exact edges of the
 * allocation, HTML escaping, and out of memory as sticky (made real with
 * allocations too large to succeed; the sanitizers are told to answer
 * those with NULL, as libc does, instead of stopping the test).
 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "textbuf.h"

#include <stdlib.h>
#include <string.h>

/* Exported (the build hides symbols by default) so the sanitizer runtime finds them. */
__attribute__((visibility("default"))) const char *__asan_default_options(void);
__attribute__((visibility("default"))) const char *__tsan_default_options(void);

const char *__asan_default_options(void)
{
    return "allocator_may_return_null=1";
}

const char *__tsan_default_options(void)
{
    return "allocator_may_return_null=1";
}

static char *take(struct textbuf *b, size_t *len)
{
    char *p = textbuf_take(b, len);

    assert_non_null(p);
    assert_int_equal(strlen(p), *len); /* NUL-terminated, no NUL inside */
    return p;
}

static void test_textbuf__text_that_exactly_fills_the_buffer_is_kept_whole(void **state)
{
    struct textbuf b;
    size_t cap, len;
    char *p;

    (void)state;
    for (cap = 0; cap <= 9; cap++) {
        textbuf_init(&b, cap);
        textbuf_printf(&b, "%s", "1234567"); /* 7 bytes and a NUL: fits in 8 exactly */
        textbuf_add(&b, "89", 2);
        textbuf_printf(&b, "%d%s", 10, "");
        textbuf_add(&b, "", 0);
        p = take(&b, &len);
        assert_string_equal(p, "12345678910");
        free(p);
    }
}

static void test_textbuf__many_appends_grow_without_losing_a_byte(void **state)
{
    struct textbuf b;
    size_t i, len;
    char *p;

    (void)state;
    textbuf_init(&b, 1);
    for (i = 0; i < 10000; i++)
        textbuf_printf(&b, "%05zu", i);
    p = take(&b, &len);
    assert_int_equal(len, 50000);
    assert_memory_equal(p, "00000000010000200003", 20);
    assert_memory_equal(p + len - 5, "09999", 5);
    free(p);
    /* After take the buffer is empty and may be used again. */
    textbuf_add(&b, "again", 5);
    p = take(&b, &len);
    assert_string_equal(p, "again");
    free(p);
}

static void test_textbuf__an_empty_buffer_takes_as_an_empty_string(void **state)
{
    struct textbuf b;
    size_t len = 99;
    char *p;

    (void)state;
    textbuf_init(&b, 0);
    p = take(&b, &len);
    assert_int_equal(len, 0);
    assert_string_equal(p, "");
    free(p);
}

static void test_textbuf__html_escapes_the_five_characters_and_nothing_else(void **state)
{
    struct textbuf b;
    size_t len;
    char *p;

    (void)state;
    textbuf_init(&b, 4);
    textbuf_html(&b, "<a href=\"x\">Tom & Jerry's</a>");
    textbuf_html(&b, "");
    textbuf_html(&b, "plain é");
    textbuf_html(&b, "&&");
    p = take(&b, &len);
    assert_string_equal(p, "&lt;a href=&quot;x&quot;&gt;Tom &amp; Jerry&#39;s&lt;/a&gt;plain é"
                           "&amp;&amp;");
    free(p);
}

static void test_textbuf__out_of_memory_is_sticky_and_take_gives_null(void **state)
{
    struct textbuf b;
    size_t len = 7;

    (void)state;
    /* A growth that cannot be allocated loses the text, and later appends are no-ops. */
    textbuf_init(&b, 16);
    textbuf_add(&b, "kept?", 5);
    textbuf_add(&b, "x", SIZE_MAX / 4); /* never read: the reserve fails first */
    assert_int_equal(b.is_oom, 1);
    textbuf_add(&b, "more", 4);
    textbuf_printf(&b, "%s", "more");
    textbuf_html(&b, "<more>");
    assert_null(textbuf_take(&b, &len));
    assert_int_equal(len, 7); /* untouched */
    assert_null(b.p);         /* freed */

    /* An initial size that cannot be allocated is out of memory from the start. */
    textbuf_init(&b, SIZE_MAX / 2);
    assert_int_equal(b.is_oom, 1);
    textbuf_add(&b, "x", 1);
    assert_null(textbuf_take(&b, &len));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_textbuf__text_that_exactly_fills_the_buffer_is_kept_whole),
        cmocka_unit_test(test_textbuf__many_appends_grow_without_losing_a_byte),
        cmocka_unit_test(test_textbuf__an_empty_buffer_takes_as_an_empty_string),
        cmocka_unit_test(test_textbuf__html_escapes_the_five_characters_and_nothing_else),
        cmocka_unit_test(test_textbuf__out_of_memory_is_sticky_and_take_gives_null),
    };
    return cmocka_run_group_tests_name("textbuf", tests, NULL, NULL);
}
