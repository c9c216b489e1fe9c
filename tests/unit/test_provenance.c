/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for src/provenance.c: what a grant records of who asked. This
 * process describes itself in fields the check accepts; what a remote
 * generator says of itself is refused unless printable and bounded, since
 * it ends up in audit records and JSON that people read.
 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "internal.h"

#include <string.h>
#include <unistd.h>

static void test_provenance__this_process_describes_itself_acceptably(void **state)
{
    struct idmint__origin o;
    char host[256] = "";

    (void)state;
    idmint__origin_self(&o);
    assert_int_equal(o.pid, (uint32_t)getpid());
    assert_string_equal(o.program, "test_provenance");
    assert_string_equal(o.token, "");
    assert_int_equal(gethostname(host, sizeof(host) - 1), 0);
    assert_int_equal(strncmp(o.host, host, sizeof(o.host) - 1), 0);
    assert_int_equal(idmint__origin_check(&o), 0);
}

static void test_provenance__unprintable_or_quoted_fields_are_refused(void **state)
{
    static const char *const bad[] = {"a b",         "tab\there", "q\"uote",
                                      "back\\slash", "\x7f",      "caf\xc3\xa9"};
    struct idmint__origin o;
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        memset(&o, 0, sizeof(o));
        strcpy(o.host, bad[i]);
        assert_int_equal(idmint__origin_check(&o), IDMINT_EINVAL);
        assert_non_null(strstr(idmint_errmsg(), "host must be"));
        memset(&o, 0, sizeof(o));
        strcpy(o.program, bad[i]);
        assert_int_equal(idmint__origin_check(&o), IDMINT_EINVAL);
        assert_non_null(strstr(idmint_errmsg(), "program must be"));
        memset(&o, 0, sizeof(o));
        strcpy(o.token, bad[i]);
        assert_int_equal(idmint__origin_check(&o), IDMINT_EINVAL);
        assert_non_null(strstr(idmint_errmsg(), "token name must be"));
    }
    assert_int_equal(idmint__origin_check(NULL), IDMINT_EINVAL);
}

/* A field that fills its array with no NUL is refused, not read past its end. */
static void test_provenance__a_field_without_its_nul_is_refused(void **state)
{
    struct idmint__origin o;

    (void)state;
    memset(&o, 0, sizeof(o));
    memset(o.program, 'p', sizeof(o.program));
    assert_int_equal(idmint__origin_check(&o), IDMINT_EINVAL);
    o.program[sizeof(o.program) - 1] = '\0'; /* the longest that fits */
    assert_int_equal(idmint__origin_check(&o), 0);
    memset(o.host, 'h', sizeof(o.host));
    assert_int_equal(idmint__origin_check(&o), IDMINT_EINVAL);
}

static void test_provenance__every_kind_of_record_is_kept_for_a_while(void **state)
{
    int64_t keep[IDMINT__KEEP__COUNT];
    int k;

    (void)state;
    memset(keep, 0, sizeof(keep));
    idmint__retention_defaults(keep);
    for (k = 0; k < IDMINT__KEEP__COUNT; k++)
        assert_true(keep[k] > 0);
    assert_int_equal(keep[IDMINT__KEEP_BATCHES], IDMINT__KEEP_BATCHES_MS);
    assert_int_equal(keep[IDMINT__KEEP_COLLISIONS], IDMINT__KEEP_COLLISIONS_MS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_provenance__this_process_describes_itself_acceptably),
        cmocka_unit_test(test_provenance__unprintable_or_quoted_fields_are_refused),
        cmocka_unit_test(test_provenance__a_field_without_its_nul_is_refused),
        cmocka_unit_test(test_provenance__every_kind_of_record_is_kept_for_a_while),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
