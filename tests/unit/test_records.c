/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for src/store/records.c, the store layer's judgement of a
 * record's key and value (region claims keep their state in records): every
 * bad key, value, version, actor or buffer is refused with EINVAL and a
 * message that names it, before any backend is asked, so nothing is
 * written; the largest key and value that are allowed go through and read
 * back. The backends' compare-and-set itself is the store suite's
 * (tests/store/test_store.c, every backend).
 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "idmint.h"
#include "internal.h"
#include "store.h"
#include "testsupport.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ACTOR  "test"
#define ACTION "region.claim"
#define NOW_MS 1796601773670LL

struct fx {
    char *dir;
    struct store *st;
};

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof(*f));
    char *url = NULL;

    if (f == NULL || (f->dir = ts_tempdir()) == NULL ||
        (url = ts_sqlite_url(f->dir, "records.db")) == NULL ||
        idmint__store_open(url, NULL, &f->st) != 0) {
        free(url);
        return -1;
    }
    free(url);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;

    idmint__store_close(f->st);
    ts_rmtree(f->dir);
    free(f);
    return 0;
}

/* No record at @p key, and no audit record at all: nothing was written. */
static void assert_untouched(struct store *st, const char *key)
{
    char value[STORE_RECORD_MAX];
    idmint_audit_entry *all = NULL;
    uint64_t version = 9;
    size_t n = 9;

    assert_int_equal(idmint__store_record_get(st, key, value, sizeof(value), &version),
                     IDMINT_ENOTFOUND);
    assert_int_equal(version, 0);
    assert_int_equal(idmint__store_audit_list(st, 0, SIZE_MAX, &all, &n), 0);
    free(all);
    assert_int_equal(n, 0);
}

static void expect_refused(int rc, const char *words)
{
    assert_int_equal(rc, IDMINT_EINVAL);
    if (strstr(idmint_errmsg(), words) == NULL)
        fail_msg("message '%s' does not say '%s'", idmint_errmsg(), words);
}

static void test_records__bad_keys_are_refused_and_write_nothing(void **state)
{
    static const char *const keys[] = {"",         "Region/1", "region 1", "region/1\n",
                                       "région/1", "region:1", "region/*"};
    struct fx *f = *state;
    char value[STORE_RECORD_MAX], long_key[80];
    uint64_t version = 0;

    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        expect_refused(
            idmint__store_record_put(f->st, keys[i], "state=free", 0, ACTOR, ACTION, NOW_MS),
            keys[i][0] == '\0' ? "1..63 bytes" : "is not [a-z0-9/._-]");
        expect_refused(idmint__store_record_get(f->st, keys[i], value, sizeof(value), &version),
                       keys[i][0] == '\0' ? "1..63 bytes" : "is not [a-z0-9/._-]");
    }
    /* 63 bytes is the longest key; 64 is refused. */
    memset(long_key, 'k', 64);
    long_key[64] = '\0';
    expect_refused(idmint__store_record_put(f->st, long_key, "v", 0, ACTOR, ACTION, NOW_MS),
                   "1..63 bytes");
    expect_refused(idmint__store_record_put(f->st, NULL, "v", 0, ACTOR, ACTION, NOW_MS),
                   "1..63 bytes");
    assert_untouched(f->st, "region/1");
    long_key[63] = '\0';
    assert_int_equal(idmint__store_record_put(f->st, long_key, "v", 0, ACTOR, ACTION, NOW_MS), 0);
    assert_int_equal(idmint__store_record_get(f->st, long_key, value, sizeof(value), &version), 0);
    assert_string_equal(value, "v");
}

static void test_records__bad_values_versions_and_callers_are_refused(void **state)
{
    struct fx *f = *state;
    char *longest = malloc(STORE_RECORD_MAX + 1), value[STORE_RECORD_MAX];
    uint64_t version = 0;

    assert_non_null(longest);
    expect_refused(idmint__store_record_put(f->st, "region/1", "", 0, ACTOR, ACTION, NOW_MS),
                   "a value is 1..1023 bytes");
    expect_refused(idmint__store_record_put(f->st, "region/1", NULL, 0, ACTOR, ACTION, NOW_MS),
                   "a value is 1..1023 bytes");
    expect_refused(
        idmint__store_record_put(f->st, "region/1", "state=free\n", 0, ACTOR, ACTION, NOW_MS),
        "byte 10 of the value is not printable");
    expect_refused(
        idmint__store_record_put(f->st, "region/1", "caf\xc3\xa9", 0, ACTOR, ACTION, NOW_MS),
        "byte 3 of the value is not printable");
    memset(longest, 'v', STORE_RECORD_MAX);
    longest[STORE_RECORD_MAX] = '\0';
    expect_refused(idmint__store_record_put(f->st, "region/1", longest, 0, ACTOR, ACTION, NOW_MS),
                   "a value is 1..1023 bytes");
    expect_refused(idmint__store_record_put(f->st, "region/1", "v", IDMINT_MAX_VALUE + 1, ACTOR,
                                            ACTION, NOW_MS),
                   "a bad version, actor or action");
    expect_refused(idmint__store_record_put(f->st, "region/1", "v", 0, NULL, ACTION, NOW_MS),
                   "a bad version, actor or action");
    expect_refused(idmint__store_record_put(f->st, "region/1", "v", 0, ACTOR, NULL, NOW_MS),
                   "a bad version, actor or action");
    /* A reader without room for the longest value is refused before the store is read. */
    expect_refused(idmint__store_record_get(f->st, "region/1", value, sizeof(value) - 1, &version),
                   "no room for its value");
    expect_refused(idmint__store_record_get(f->st, "region/1", NULL, sizeof(value), &version),
                   "no room for its value");
    expect_refused(idmint__store_record_get(f->st, "region/1", value, sizeof(value), NULL),
                   "no room for its value");
    assert_untouched(f->st, "region/1");
    /* The longest value allowed goes through whole. */
    longest[STORE_RECORD_MAX - 1] = '\0';
    assert_int_equal(idmint__store_record_put(f->st, "region/1", longest, 0, ACTOR, ACTION, NOW_MS),
                     0);
    assert_int_equal(idmint__store_record_get(f->st, "region/1", value, sizeof(value), &version),
                     0);
    assert_string_equal(value, longest);
    assert_true(version > 0);
    free(longest);
}

static void test_records__a_store_without_records_says_so(void **state)
{
    char value[STORE_RECORD_MAX];
    uint64_t version = 0;

    (void)state;
    assert_false(idmint__store_has_records(NULL));
    expect_refused(idmint__store_record_get(NULL, "region/1", value, sizeof(value), &version),
                   "store is NULL");
    expect_refused(idmint__store_record_put(NULL, "region/1", "v", 0, ACTOR, ACTION, NOW_MS),
                   "store is NULL");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_records__bad_keys_are_refused_and_write_nothing, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_records__bad_values_versions_and_callers_are_refused,
                                        setup, teardown),
        cmocka_unit_test(test_records__a_store_without_records_says_so),
    };

    return cmocka_run_group_tests_name("records", tests, NULL, NULL);
}
