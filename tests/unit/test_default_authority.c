/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for src/default_authority.c: which file is the default for
 * root and for other users, and its folders. The rule is tested with its
 * inputs passed in, so no test depends on who runs it or touches
 * /var/lib/idmint or the real home.
 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "idmint.h"
#include "internal.h"
#include "testsupport.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void test_default_authority__root_uses_var_lib_whatever_its_home(void **state)
{
    char buf[IDMINT_DEFAULT_AUTHORITY_MAX];

    (void)state;
    assert_int_equal(idmint__default_authority_for(0, "/x/state", "/root", buf, sizeof(buf)), 0);
    assert_string_equal(buf, "sqlite:/var/lib/idmint/idmint.db");
    assert_int_equal(idmint__default_authority_for(0, NULL, NULL, buf, sizeof(buf)), 0);
    assert_string_equal(buf, "sqlite:/var/lib/idmint/idmint.db");
}

static void test_default_authority__a_user_gets_xdg_state_home_then_home(void **state)
{
    char buf[IDMINT_DEFAULT_AUTHORITY_MAX];

    (void)state;
    assert_int_equal(idmint__default_authority_for(1000, "/x/state", "/home/u", buf, sizeof(buf)),
                     0);
    assert_string_equal(buf, "sqlite:/x/state/idmint/idmint.db");
    assert_int_equal(idmint__default_authority_for(1000, NULL, "/home/u", buf, sizeof(buf)), 0);
    assert_string_equal(buf, "sqlite:/home/u/.local/state/idmint/idmint.db");
    assert_int_equal(idmint__default_authority_for(1000, "", "/home/u", buf, sizeof(buf)), 0);
    assert_string_equal(buf, "sqlite:/home/u/.local/state/idmint/idmint.db");
}

static void test_default_authority__a_relative_directory_is_never_used(void **state)
{
    char buf[IDMINT_DEFAULT_AUTHORITY_MAX] = "untouched";

    (void)state;
    /* The XDG spec: a relative XDG_STATE_HOME is ignored. */
    assert_int_equal(idmint__default_authority_for(1000, "state", "/home/u", buf, sizeof(buf)), 0);
    assert_string_equal(buf, "sqlite:/home/u/.local/state/idmint/idmint.db");
    snprintf(buf, sizeof(buf), "untouched");
    assert_int_equal(idmint__default_authority_for(1000, "state", "home", buf, sizeof(buf)),
                     IDMINT_EINVAL);
    assert_non_null(strstr(idmint_errmsg(), "--authority"));
    assert_string_equal(buf, "untouched");
    assert_int_equal(idmint__default_authority_for(1000, NULL, NULL, buf, sizeof(buf)),
                     IDMINT_EINVAL);
    assert_string_equal(buf, "untouched");
}

static void test_default_authority__a_small_buffer_is_refused_untouched(void **state)
{
    char buf[16] = "untouched";

    (void)state;
    assert_int_equal(idmint__default_authority_for(1000, NULL, "/home/u", buf, sizeof(buf)),
                     IDMINT_EINVAL);
    assert_string_equal(buf, "untouched");
}

static void test_default_authority__reads_home_and_xdg_state_home(void **state)
{
    char buf[IDMINT_DEFAULT_AUTHORITY_MAX];

    (void)state;
    setenv("HOME", "/tmp/idmint-test-home", 1);
    unsetenv("XDG_STATE_HOME");
    assert_int_equal(idmint__default_authority(buf, sizeof(buf)), 0);
    if (geteuid() == 0) {
        assert_string_equal(buf, "sqlite:/var/lib/idmint/idmint.db");
    } else {
        assert_string_equal(buf, "sqlite:/tmp/idmint-test-home/.local/state/idmint/idmint.db");
        setenv("XDG_STATE_HOME", "/tmp/idmint-test-state", 1);
        assert_int_equal(idmint__default_authority(buf, sizeof(buf)), 0);
        assert_string_equal(buf, "sqlite:/tmp/idmint-test-state/idmint/idmint.db");
        unsetenv("XDG_STATE_HOME");
    }
}

static void test_default_authority__mkdir_makes_the_folders_private(void **state)
{
    char *dir = ts_tempdir();
    char url[600], path[600];
    struct stat sb;

    (void)state;
    assert_non_null(dir);
    snprintf(url, sizeof(url), "sqlite:%s/state/idmint/idmint.db", dir);
    assert_int_equal(idmint__default_authority_mkdir(url), 0);
    snprintf(path, sizeof(path), "%s/state/idmint", dir);
    assert_int_equal(stat(path, &sb), 0);
    assert_true(S_ISDIR(sb.st_mode));
    assert_int_equal(sb.st_mode & 0777, 0700);
    /* Only the folders: the store creates the file. Again is fine. */
    snprintf(path, sizeof(path), "%s/state/idmint/idmint.db", dir);
    assert_int_equal(access(path, F_OK), -1);
    assert_int_equal(idmint__default_authority_mkdir(url), 0);
    /* A file where a folder should be is reported with its path. */
    snprintf(url, sizeof(url), "sqlite:%s/state/idmint/idmint.db/x.db", dir);
    assert_int_equal(close(creat(path, 0600)), 0);
    assert_int_equal(idmint__default_authority_mkdir(url), IDMINT_EUNAVAILABLE);
    assert_non_null(strstr(idmint_errmsg(), path));
    assert_int_equal(idmint__default_authority_mkdir("sqlite:relative/x.db"), IDMINT_EINVAL);
    ts_rmtree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_authority__root_uses_var_lib_whatever_its_home),
        cmocka_unit_test(test_default_authority__a_user_gets_xdg_state_home_then_home),
        cmocka_unit_test(test_default_authority__a_relative_directory_is_never_used),
        cmocka_unit_test(test_default_authority__a_small_buffer_is_refused_untouched),
        cmocka_unit_test(test_default_authority__reads_home_and_xdg_state_home),
        cmocka_unit_test(test_default_authority__mkdir_makes_the_folders_private),
    };

    return cmocka_run_group_tests_name("default_authority", tests, NULL, NULL);
}
