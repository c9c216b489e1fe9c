/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for src/authority_ns.c: the namespace rules. Bad names,
 * layouts and range bounds are refused and change nothing; "default" is
 * made on first use, once; an unknown namespace is not made; the ABI guard
 * of idmint_ns_info takes the sizes it knows and writes no further.
 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "authority_fixture.h"
#include "idmint.h"
#include "internal.h"
#include "testsupport.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Nothing was created and nothing audited. */
static void assert_empty(idmint_authority *a)
{
    assert_int_equal(ts_ns_count(a), 0);
    assert_int_equal(ts_audit_count(a), 0);
}

/*
 * idmint_ns_info as a program built against a header with fewer members
 * would declare it: a strict prefix of today's, ending at the layout.
 */
struct ns_info_prefix {
    size_t size;
    char name[64];
    idmint_kind kind;
    int is_disabled;
    int64_t created_ms;
    idmint_layout layout;
};

/* A caller's struct followed by bytes nobody may write. */
struct ns_info_fenced {
    idmint_ns_info info;
    unsigned char canary[32];
};

/* idmint_ns_info as a newer library would have it: one member appended. */
struct ns_info_newer {
    idmint_ns_info v1;
    uint64_t appended;
};

static void assert_canary(const unsigned char *canary, size_t len)
{
    size_t k;

    for (k = 0; k < len; k++)
        assert_int_equal(canary[k], 0xa5);
}

static void test_authority_ns__bad_names_are_refused(void **state)
{
    struct ts_authority *f = *state;
    const char *bad[] = {"", "A", "-x", "_x", ".x", "a/b", "a b", "caf\xc3\xa9"};
    idmint_ns_info i;
    size_t k;

    for (k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
        ts_ns_named(&i, IDMINT_KIND_SNOWFLAKE, bad[k]);
        assert_int_equal(idmint_ns_create(f->a, &i), IDMINT_EINVAL);
        assert_int_equal(idmint__ns_name_check(bad[k]), IDMINT_EINVAL);
    }
    ts_ns_named(&i, IDMINT_KIND_SNOWFLAKE, "x");
    memset(i.name, 'a', 64); /* not terminated within the field */
    assert_int_equal(idmint_ns_create(f->a, &i), IDMINT_EINVAL);
    assert_int_equal(idmint__ns_name_check(NULL), IDMINT_EINVAL);
    assert_empty(f->a);
}

static void test_authority_ns__name_length_limit_is_63(void **state)
{
    struct ts_authority *f = *state;
    char name[65];
    idmint_ns_info i;

    memset(name, 'a', 64);
    name[64] = '\0';
    assert_int_equal(idmint__ns_name_check(name), IDMINT_EINVAL);
    assert_non_null(strstr(idmint_errmsg(), "63"));
    name[63] = '\0';
    ts_ns_named(&i, IDMINT_KIND_SNOWFLAKE, name);
    assert_int_equal(idmint_ns_create(f->a, &i), 0);
    assert_int_equal(idmint__ns_name_check("0.a_b-c"), 0);
}

static void test_authority_ns__bad_layouts_are_refused(void **state)
{
    struct ts_authority *f = *state;
    idmint_ns_info i;

    ts_ns_named(&i, IDMINT_KIND_SNOWFLAKE, "wide");
    i.layout.time_bits = 42; /* 42 + 0 + 10 + 12 = 64 bits */
    assert_int_equal(idmint_ns_create(f->a, &i), IDMINT_EINVAL);
    ts_ns_named(&i, IDMINT_KIND_SNOWFLAKE, "noseq");
    i.layout.sequence_bits = 0;
    assert_int_equal(idmint_ns_create(f->a, &i), IDMINT_EINVAL);
    ts_ns_named(&i, IDMINT_KIND_SNOWFLAKE, "nounit");
    i.layout.unit_ms = 0;
    assert_int_equal(idmint_ns_create(f->a, &i), IDMINT_EINVAL);
    ts_ns_named(&i, IDMINT_KIND_SNOWFLAKE, "kind");
    i.kind = (idmint_kind)7;
    assert_int_equal(idmint_ns_create(f->a, &i), IDMINT_EINVAL);
    assert_non_null(strstr(idmint_errmsg(), "7"));
    assert_empty(f->a);
}

static void test_authority_ns__layout_whose_time_already_ran_out_is_refused(void **state)
{
    struct ts_authority *f = *state;
    idmint_ns_info i;

    /* 2^20 ms after 2026-01-01 is 2026-01-01T00:17:28.576Z, long before the clock. */
    ts_ns_named(&i, IDMINT_KIND_SNOWFLAKE, "short");
    i.layout.time_bits = 20;
    assert_int_equal(idmint_ns_create(f->a, &i), IDMINT_EINVAL);
    assert_non_null(strstr(idmint_errmsg(), "ran out"));
    assert_non_null(strstr(idmint_errmsg(), "2026-01-01T00:17:28.576Z"));
    assert_empty(f->a);

    /* The same layout is fine while its end is still ahead of the clock. */
    ts_authority_set_now(f, IDMINT_DEFAULT_EPOCH_MS + 1000);
    assert_int_equal(idmint_ns_create(f->a, &i), 0);
}

static void test_authority_ns__bad_range_bounds_are_refused(void **state)
{
    struct ts_authority *f = *state;
    idmint_ns_info i;

    ts_ns_named(&i, IDMINT_KIND_RANGE, "r");
    i.next_value = 0;
    assert_int_equal(idmint_ns_create(f->a, &i), IDMINT_EINVAL);
    ts_ns_named(&i, IDMINT_KIND_RANGE, "r");
    i.max_value = IDMINT_MAX_VALUE + 1;
    assert_int_equal(idmint_ns_create(f->a, &i), IDMINT_EINVAL);
    assert_non_null(strstr(idmint_errmsg(), "9223372036854775808"));
    ts_ns_named(&i, IDMINT_KIND_RANGE, "r");
    i.next_value = 11;
    i.max_value = 10;
    assert_int_equal(idmint_ns_create(f->a, &i), IDMINT_EINVAL);
    assert_non_null(strstr(idmint_errmsg(), "11"));
    ts_ns_named(&i, IDMINT_KIND_RANGE, "r");
    i.block = 0;
    assert_int_equal(idmint_ns_create(f->a, &i), IDMINT_EINVAL);
    ts_ns_named(&i, IDMINT_KIND_RANGE, "r");
    i.block = 500;
    i.max_block = 400;
    assert_int_equal(idmint_ns_create(f->a, &i), IDMINT_EINVAL);
    assert_non_null(strstr(idmint_errmsg(), "500"));
    ts_ns_named(&i, IDMINT_KIND_RANGE, "r");
    i.max_block = IDMINT_DEFAULT_MAX_BLOCK + 1;
    assert_int_equal(idmint_ns_create(f->a, &i), IDMINT_EINVAL);
    assert_non_null(strstr(idmint_errmsg(), "10000001"));
    assert_empty(f->a);

    /* The tightest valid bounds: one value, block 1. */
    ts_ns_named(&i, IDMINT_KIND_RANGE, "r");
    i.next_value = 5;
    i.max_value = 5;
    i.block = 1;
    i.max_block = 1;
    assert_int_equal(idmint_ns_create(f->a, &i), 0);
}

static void test_authority_ns__duplicate_create_is_a_conflict(void **state)
{
    struct ts_authority *f = *state;
    idmint_ns_info i, got;

    ts_ns_named(&i, IDMINT_KIND_RANGE, "orders");
    assert_int_equal(idmint_ns_create(f->a, &i), 0);
    ts_ns_named(&i, IDMINT_KIND_SNOWFLAKE, "orders");
    assert_int_equal(idmint_ns_create(f->a, &i), IDMINT_ECONFLICT);
    assert_int_equal(ts_ns_count(f->a), 1);
    assert_int_equal(ts_audit_count(f->a), 1);
    idmint_ns_info_init(&got, 0);
    assert_int_equal(idmint_ns_get(f->a, "orders", &got), 0);
    assert_int_equal(got.kind, IDMINT_KIND_RANGE);
}

static void test_authority_ns__ns_info_init_fills_the_defaults(void **state)
{
    idmint_ns_info i;
    idmint_layout def;

    (void)state;
    idmint_layout_default(&def);
    idmint_ns_info_init(&i, IDMINT_KIND_SNOWFLAKE);
    assert_int_equal(i.size, sizeof(i));
    assert_int_equal(i.kind, IDMINT_KIND_SNOWFLAKE);
    assert_memory_equal(&i.layout, &def, sizeof(def));
    assert_string_equal(i.name, "");
    idmint_ns_info_init(&i, IDMINT_KIND_RANGE);
    assert_int_equal(i.size, sizeof(i));
    assert_int_equal(i.next_value, 1);
    assert_true(i.max_value == IDMINT_MAX_VALUE);
    assert_int_equal(i.block, IDMINT_DEFAULT_BLOCK);
    assert_int_equal(i.max_block, IDMINT_DEFAULT_MAX_BLOCK);
}

static void test_authority_ns__default_is_created_on_first_use_once(void **state)
{
    struct ts_authority *f = *state;
    idmint_ns_info got, again;
    idmint_audit_entry *au = NULL;
    idmint_layout def;
    char actor[64];
    size_t n = 0;

    idmint_layout_default(&def);
    idmint_ns_info_init(&got, 0);
    assert_int_equal(idmint_ns_get(f->a, "default", &got), 0);
    assert_int_equal(got.size, sizeof(got));
    assert_int_equal(got.kind, IDMINT_KIND_SNOWFLAKE);
    assert_memory_equal(&got.layout, &def, sizeof(def));
    assert_int_equal(got.created_ms, TS_AUTHORITY_NOW_MS);
    idmint_ns_info_init(&again, IDMINT_KIND_RANGE); /* any kind: every member is overwritten */
    assert_int_equal(idmint_ns_get(f->a, "default", &again), 0);
    assert_memory_equal(&got, &again, sizeof(got));

    assert_int_equal(idmint_audit_list(f->a, 0, 100, &au, &n), 0);
    assert_int_equal(n, 1);
    assert_string_equal(idmint_audit_entry_at(au, 0)->action, "ns.create");
    assert_string_equal(idmint_audit_entry_at(au, 0)->ns, "default");
    assert_int_equal(idmint_audit_entry_at(au, 0)->at_ms, TS_AUTHORITY_NOW_MS);
    /* The OS user: its name where the system knows it, and its uid. */
    snprintf(actor, sizeof(actor), "(%lu)", (unsigned long)getuid());
    assert_non_null(strstr(idmint_audit_entry_at(au, 0)->actor, actor));
    assert_int_equal(strncmp(idmint_audit_entry_at(au, 0)->actor, "user:", 5), 0);
    free(au);
}

static void test_authority_ns__unknown_namespace_is_not_found_and_not_created(void **state)
{
    struct ts_authority *f = *state;
    idmint_ns_info got;
    idmint_worker_info *w = (idmint_worker_info *)&got;
    size_t n = 99;

    memset(&got, 0x33, sizeof(got));
    got.size = sizeof(got);
    assert_int_equal(idmint_ns_get(f->a, "orders", &got), IDMINT_ENOTFOUND);
    assert_int_equal(got.created_ms, 0x3333333333333333);
    assert_int_equal(idmint_workers_list(f->a, "orders", &w, &n), IDMINT_ENOTFOUND);
    assert_ptr_equal(w, (idmint_worker_info *)&got);
    assert_int_equal(n, 99);
    assert_int_equal(idmint_worker_force_release(f->a, "orders", 0, 0), IDMINT_ENOTFOUND);
    assert_int_equal(idmint_ns_set_disabled(f->a, "orders", 1), IDMINT_ENOTFOUND);
    assert_int_equal(idmint_ns_get(f->a, "Bad", &got), IDMINT_EINVAL);
    assert_empty(f->a);
}

static void test_authority_ns__an_epoch_in_the_future_is_refused(void **state)
{
    struct ts_authority *f = *state;
    idmint_ns_info i;

    ts_ns_named(&i, IDMINT_KIND_SNOWFLAKE, "later");
    i.layout.epoch_ms = TS_AUTHORITY_NOW_MS + 1;
    assert_int_equal(idmint_ns_create(f->a, &i), IDMINT_EINVAL);
    assert_non_null(strstr(idmint_errmsg(), "in the future"));
    assert_empty(f->a);
    i.layout.epoch_ms = TS_AUTHORITY_NOW_MS;
    assert_int_equal(idmint_ns_create(f->a, &i), 0);
}

static void test_authority_ns__ns_get_refuses_a_size_not_set_up(void **state)
{
    struct ts_authority *f = *state;
    const size_t bad[] = {
        0, 1, sizeof(size_t), IDMINT__NS_INFO_SIZE_V1 - 1, sizeof(idmint_ns_info) + 1, SIZE_MAX};
    idmint_ns_info got, before;
    size_t k;

    for (k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
        memset(&got, 0x33, sizeof(got));
        got.size = bad[k];
        before = got;
        /* "default" would be created on first use: the guard comes first. */
        assert_int_equal(idmint_ns_get(f->a, "default", &got), IDMINT_EINVAL);
        assert_non_null(
            strstr(idmint_errmsg(), "idmint_ns_info not set up by idmint_ns_info_init()"));
        assert_memory_equal(&got, &before, sizeof(got));
        assert_int_equal(idmint__authority_ns_resolve(f->a, "default", &got), IDMINT_EINVAL);
        assert_memory_equal(&got, &before, sizeof(got));
    }
    assert_empty(f->a);
}

static void test_authority_ns__ns_create_refuses_a_size_not_set_up(void **state)
{
    struct ts_authority *f = *state;
    idmint_ns_info i;

    ts_ns_named(&i, IDMINT_KIND_RANGE, "unguarded");
    i.size = 0;
    assert_int_equal(idmint_ns_create(f->a, &i), IDMINT_EINVAL);
    assert_non_null(strstr(idmint_errmsg(), "idmint_ns_info not set up by idmint_ns_info_init()"));
    i.size = sizeof(i) + 8;
    assert_int_equal(idmint_ns_create(f->a, &i), IDMINT_EINVAL);
    i.size = IDMINT__NS_INFO_SIZE_V1 - 1;
    assert_int_equal(idmint_ns_create(f->a, &i), IDMINT_EINVAL);
    assert_empty(f->a);
    i.size = sizeof(i);
    assert_int_equal(idmint_ns_create(f->a, &i), 0);
}

/*
 * The first guarded idmint_ns_info (0.1, up to max_block) is the smallest
 * any program was built with: a strict prefix is refused and nothing is
 * written, while a 0.1 caller's struct is filled up to its last byte and
 * not one further, floor and origin (0.2) left out.
 */
static void
test_authority_ns__ns_get_takes_the_first_guarded_size_and_writes_no_further(void **state)
{
    struct ts_authority *f = *state;
    struct {
        struct ns_info_prefix info;
        unsigned char canary[32];
    } old;
    union {
        idmint_ns_info info;
        unsigned char bytes[sizeof(idmint_ns_info) + 32];
    } cur;
    idmint_ns_info i;

    /* floor and origin were appended in 0.2: a 0.1 struct ends before them. */
    assert_int_equal(IDMINT__NS_INFO_SIZE_V1, offsetof(idmint_ns_info, floor));
    ts_ns_named(&i, IDMINT_KIND_RANGE, "orders");
    assert_int_equal(idmint_ns_create(f->a, &i), 0);

    memset(&old, 0xa5, sizeof(old));
    old.info.size = sizeof(old.info);
    assert_true(sizeof(old.info) < IDMINT__NS_INFO_SIZE_V1);
    assert_int_equal(idmint_ns_get(f->a, "orders", (idmint_ns_info *)(void *)&old), IDMINT_EINVAL);
    assert_int_equal(old.info.size, sizeof(old.info));
    assert_canary((const unsigned char *)&old + sizeof(size_t),
                  sizeof(old) - sizeof(size_t)); /* the prefix untouched too */

    memset(&cur, 0xa5, sizeof(cur));
    cur.info.size = IDMINT__NS_INFO_SIZE_V1;
    assert_int_equal(idmint_ns_get(f->a, "orders", &cur.info), 0);
    assert_int_equal(cur.info.size, IDMINT__NS_INFO_SIZE_V1);
    assert_string_equal(cur.info.name, "orders");
    assert_int_equal(cur.info.kind, IDMINT_KIND_RANGE);
    assert_int_equal(cur.info.max_block, IDMINT_DEFAULT_MAX_BLOCK);
    assert_canary(cur.bytes + IDMINT__NS_INFO_SIZE_V1, sizeof(cur.bytes) - IDMINT__NS_INFO_SIZE_V1);

    /* A 0.2 caller gets floor and origin, and nothing after them. */
    memset(&cur, 0xa5, sizeof(cur));
    idmint_ns_info_init(&cur.info, IDMINT_KIND_RANGE);
    assert_int_equal(cur.info.size, sizeof(idmint_ns_info));
    assert_int_equal(idmint_ns_get(f->a, "orders", &cur.info), 0);
    assert_int_equal(cur.info.floor, 0);
    assert_string_equal(cur.info.origin, "");
    assert_canary(cur.bytes + sizeof(idmint_ns_info), 32);
}

/*
 * What happens once a member is appended, through the helpers every guarded
 * call uses: a newer library writes an older program's struct up to its
 * size only, and reads its struct with the appended member 0.
 */
static void test_authority_ns__an_older_caller_of_a_newer_library_gets_its_own_size(void **state)
{
    struct ns_info_newer lib, in;
    struct ns_info_fenced out;

    (void)state;
    memset(&lib, 0, sizeof(lib));
    lib.v1.size = sizeof(lib);
    snprintf(lib.v1.name, sizeof(lib.v1.name), "%s", "newer");
    lib.v1.max_block = 77;
    lib.appended = UINT64_C(0xfeedfacecafebeef);

    memset(&out, 0xa5, sizeof(out));
    out.info.size = sizeof(out.info);
    assert_int_equal(idmint__struct_size_check(out.info.size, IDMINT__NS_INFO_SIZE_V1, sizeof(lib),
                                               "idmint_ns_info", "idmint_ns_info_init"),
                     0);
    idmint__struct_copy_out(&out, &lib);
    assert_int_equal(out.info.size, sizeof(out.info));
    assert_string_equal(out.info.name, "newer");
    assert_int_equal(out.info.max_block, 77);
    assert_canary(out.canary, sizeof(out.canary));

    assert_int_equal(idmint__struct_size_check(IDMINT__NS_INFO_SIZE_V1 - 1, IDMINT__NS_INFO_SIZE_V1,
                                               sizeof(lib), "idmint_ns_info",
                                               "idmint_ns_info_init"),
                     IDMINT_EINVAL);
    assert_int_equal(idmint__struct_size_check(sizeof(lib) + 1, IDMINT__NS_INFO_SIZE_V1,
                                               sizeof(lib), "idmint_ns_info",
                                               "idmint_ns_info_init"),
                     IDMINT_EINVAL);

    memset(&in, 0x77, sizeof(in));
    idmint__struct_copy_in(&in, sizeof(in), &out);
    assert_int_equal(in.v1.size, sizeof(in));
    assert_string_equal(in.v1.name, "newer");
    assert_true(in.appended == 0);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, ts_authority_setup, ts_authority_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_authority_ns__bad_names_are_refused),
        T(test_authority_ns__name_length_limit_is_63),
        T(test_authority_ns__bad_layouts_are_refused),
        T(test_authority_ns__layout_whose_time_already_ran_out_is_refused),
        T(test_authority_ns__bad_range_bounds_are_refused),
        T(test_authority_ns__duplicate_create_is_a_conflict),
        cmocka_unit_test(test_authority_ns__ns_info_init_fills_the_defaults),
        T(test_authority_ns__default_is_created_on_first_use_once),
        T(test_authority_ns__unknown_namespace_is_not_found_and_not_created),
        T(test_authority_ns__an_epoch_in_the_future_is_refused),
        T(test_authority_ns__ns_get_refuses_a_size_not_set_up),
        T(test_authority_ns__ns_create_refuses_a_size_not_set_up),
        T(test_authority_ns__ns_get_takes_the_first_guarded_size_and_writes_no_further),
        cmocka_unit_test(test_authority_ns__an_older_caller_of_a_newer_library_gets_its_own_size),
    };

    return cmocka_run_group_tests_name("authority_ns", tests, NULL, NULL);
}
