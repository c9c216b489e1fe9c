/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests for src/store/dynlib.c: client libraries bound on first use. */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "dynlib.h"
#include "idmint.h"
#include "internal.h"

#include <string.h>
#include <unistd.h>

static int loads;
static pid_t (*bound_getpid)(void);
static void *getpid_syms[1];
static const char *const getpid_names[] = {"getpid"};

static void getpid_on_load(void)
{
    loads++;
    memcpy(&bound_getpid, &getpid_syms[0], sizeof(bound_getpid));
}

static void on_load_never(void)
{
    fail_msg("on_load ran for a library that did not load");
}

static void test_dynlib__binds_every_function_once(void **state)
{
    static struct idmint__dynlib lib =
        IDMINT__DYNLIB("libc.so.6", "libc6", getpid_names, getpid_syms, getpid_on_load);

    (void)state;
    assert_int_equal(idmint__dynlib_load(&lib), 0);
    assert_int_equal(idmint__dynlib_load(&lib), 0);
    assert_int_equal(loads, 1);
    assert_non_null(bound_getpid);
    assert_int_equal(bound_getpid(), getpid());
}

static void test_dynlib__a_missing_library_names_itself_and_its_package(void **state)
{
    static void *syms[1];
    static struct idmint__dynlib lib = IDMINT__DYNLIB("libidmint-absent.so.9", "libidmint-absent9",
                                                      getpid_names, syms, on_load_never);

    (void)state;
    for (int i = 0; i < 2; i++) { /* the second call repeats the first outcome */
        assert_int_equal(idmint__dynlib_load(&lib), IDMINT_EUNAVAILABLE);
        assert_non_null(strstr(idmint_errmsg(), "cannot load libidmint-absent.so.9"));
        assert_non_null(strstr(idmint_errmsg(), "Debian package libidmint-absent9"));
    }
}

static void test_dynlib__a_missing_function_is_named(void **state)
{
    static const char *const names[] = {"getpid", "idmint_absent_function"};
    static void *syms[2];
    static struct idmint__dynlib lib =
        IDMINT__DYNLIB("libc.so.6", "libc6", names, syms, on_load_never);

    (void)state;
    assert_int_equal(idmint__dynlib_load(&lib), IDMINT_EUNAVAILABLE);
    assert_non_null(strstr(idmint_errmsg(), "libc.so.6 has no function idmint_absent_function"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dynlib__binds_every_function_once),
        cmocka_unit_test(test_dynlib__a_missing_library_names_itself_and_its_package),
        cmocka_unit_test(test_dynlib__a_missing_function_is_named),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
