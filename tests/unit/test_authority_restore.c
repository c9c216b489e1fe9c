/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tests for src/authority_restore.c: where a migrated range namespace
 * starts. A start that is asked for is honoured or refused with nothing
 * changed, 1 included; idmint_ns_migrate() keeps reading a next_value of 1
 * as its default, just above the floor. Migrations under live minters are
 * reliability.migrate's.
 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "idmint.h"
#include "internal.h"
#include "testsupport.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct fixture {
    char *dir;
    char *url;
    idmint_authority *admin;
};

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));

    if (f == NULL)
        return -1;
    f->dir = ts_tempdir();
    f->url = ts_sqlite_url(f->dir, "idmint.db");
    if (idmint_authority_open(&f->admin, f->url, 0) != 0)
        return -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;

    idmint_authority_close(f->admin);
    free(f->url);
    ts_rmtree(f->dir);
    free(f);
    return 0;
}

static void create_range(struct fixture *f, const char *name)
{
    idmint_ns_info info;

    idmint_ns_info_init(&info, IDMINT_KIND_RANGE);
    snprintf(info.name, sizeof(info.name), "%s", name);
    assert_int_equal(idmint_ns_create(f->admin, &info), 0);
}

/* Reserve one block of 10 from range namespace @p name: its floor is then at least 10. */
static void use_range(struct fixture *f, const char *name)
{
    idmint_options o;
    idmint *m;
    uint64_t id;

    idmint_options_init(&o);
    o.range_block = 10;
    assert_int_equal(idmint_open(&m, f->url, name, &o), 0);
    assert_int_equal(idmint_next(m, &id), 0);
    assert_int_equal(id, 1);
    idmint_close(m);
}

static void new_range_info(idmint_ns_info *info, const char *name)
{
    idmint_ns_info_init(info, IDMINT_KIND_RANGE);
    snprintf(info->name, sizeof(info->name), "%s", name);
}

static size_t audit_count(struct fixture *f)
{
    idmint_audit_entry *list = NULL;
    size_t n = 0;

    assert_int_equal(idmint_audit_list(f->admin, 0, 1000, &list, &n), 0);
    idmint_free(list);
    return n;
}

/* Issue 28, item 8: `ns migrate --start 1` was silently taken as "no start". */
static void test_authority_restore__a_start_of_1_above_the_floor_is_refused_unchanged(void **state)
{
    struct fixture *f = *state;
    idmint_ns_info info, created, old;
    size_t audits;

    create_range(f, "used");
    use_range(f, "used");
    audits = audit_count(f);
    new_range_info(&info, "used2");
    idmint_ns_info_init(&created, IDMINT_KIND_RANGE);
    created.next_value = 77;
    assert_int_equal(idmint_ns_migrate_start(f->admin, "used", &info, 1, &created), IDMINT_EINVAL);
    assert_non_null(strstr(idmint_errmsg(), "start 1 is at or below the floor"));
    assert_int_equal(created.next_value, 77); /* untouched */
    idmint_ns_info_init(&old, IDMINT_KIND_RANGE);
    assert_int_equal(idmint_ns_get(f->admin, "used2", &old), IDMINT_ENOTFOUND);
    assert_int_equal(idmint_ns_get(f->admin, "used", &old), 0);
    assert_int_equal(old.is_disabled, 0);
    assert_int_equal(audit_count(f), audits); /* refused before anything changed */
}

static void test_authority_restore__a_start_of_1_is_honoured_where_nothing_was_issued(void **state)
{
    struct fixture *f = *state;
    idmint_ns_info info, created;

    create_range(f, "unused");
    new_range_info(&info, "unused2");
    idmint_ns_info_init(&created, IDMINT_KIND_RANGE);
    assert_int_equal(idmint_ns_migrate_start(f->admin, "unused", &info, 1, &created), 0);
    assert_int_equal(created.next_value, 1);
    assert_string_equal(created.origin, "unused");
}

static void test_authority_restore__a_start_above_the_floor_is_honoured_as_given(void **state)
{
    struct fixture *f = *state;
    idmint_ns_info info, created, old;

    create_range(f, "src");
    use_range(f, "src");
    idmint_ns_info_init(&old, IDMINT_KIND_RANGE);
    assert_int_equal(idmint_ns_get(f->admin, "src", &old), 0);
    new_range_info(&info, "dst");
    info.next_value = 3; /* not read: the start argument says it */
    idmint_ns_info_init(&created, IDMINT_KIND_RANGE);
    assert_int_equal(
        idmint_ns_migrate_start(f->admin, "src", &info, old.next_value + 1000, &created), 0);
    assert_int_equal(created.next_value, old.next_value + 1000);
}

/* idmint_ns_migrate() keeps its contract: 0 and 1 both mean "just above the floor". */
static void test_authority_restore__migrate_reads_a_next_value_of_1_as_no_start(void **state)
{
    struct fixture *f = *state;
    idmint_ns_info info, created, old;

    create_range(f, "keep");
    use_range(f, "keep");
    idmint_ns_info_init(&old, IDMINT_KIND_RANGE);
    assert_int_equal(idmint_ns_get(f->admin, "keep", &old), 0);
    new_range_info(&info, "keep2");
    assert_int_equal(info.next_value, 1); /* idmint_ns_info_init's default */
    idmint_ns_info_init(&created, IDMINT_KIND_RANGE);
    assert_int_equal(idmint_ns_migrate(f->admin, "keep", &info, &created), 0);
    assert_int_equal(created.next_value, old.next_value);
    assert_int_equal(created.floor, old.next_value - 1);
}

static void test_authority_restore__a_start_of_0_or_for_a_snowflake_is_refused(void **state)
{
    struct fixture *f = *state;
    idmint_ns_info info, probe;

    create_range(f, "zero");
    new_range_info(&info, "zero2");
    assert_int_equal(idmint_ns_migrate_start(f->admin, "zero", &info, 0, NULL), IDMINT_EINVAL);
    idmint_ns_info_init(&info, IDMINT_KIND_SNOWFLAKE);
    snprintf(info.name, sizeof(info.name), "zero3");
    assert_int_equal(idmint_ns_migrate_start(f->admin, "zero", &info, 5, NULL), IDMINT_EINVAL);
    assert_non_null(strstr(idmint_errmsg(), "a start is for a range namespace"));
    idmint_ns_info_init(&probe, IDMINT_KIND_RANGE);
    assert_int_equal(idmint_ns_get(f->admin, "zero2", &probe), IDMINT_ENOTFOUND);
    assert_int_equal(idmint_ns_get(f->admin, "zero3", &probe), IDMINT_ENOTFOUND);
    assert_int_equal(idmint_ns_get(f->admin, "zero", &probe), 0);
    assert_int_equal(probe.is_disabled, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
        T(test_authority_restore__a_start_of_1_above_the_floor_is_refused_unchanged),
        T(test_authority_restore__a_start_of_1_is_honoured_where_nothing_was_issued),
        T(test_authority_restore__a_start_above_the_floor_is_honoured_as_given),
        T(test_authority_restore__migrate_reads_a_next_value_of_1_as_no_start),
        T(test_authority_restore__a_start_of_0_or_for_a_snowflake_is_refused),
#undef T
    };
    return cmocka_run_group_tests_name("authority_restore", tests, NULL, NULL);
}
