/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for src/default_authority.c and idmint_authority_resolve(): the
 * default is one file for every user, whatever their uid, home or
 * XDG_STATE_HOME; its folders; and the resolved text a person is shown
 * (secrets masked, malformed URLs refused). Nothing here touches
 * /var/lib/idmint: the folder test works under a temporary folder.
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

static void test_default_authority__is_one_file_whatever_home_or_state_home(void **state)
{
    char buf[IDMINT_DEFAULT_AUTHORITY_MAX];

    (void)state;
    setenv("HOME", "/tmp/idmint-test-home", 1);
    setenv("XDG_STATE_HOME", "/tmp/idmint-test-state", 1);
    assert_int_equal(idmint__default_authority(buf, sizeof(buf)), 0);
    assert_string_equal(buf, "sqlite:/var/lib/idmint/idmint.db");
    assert_string_equal(buf, IDMINT_DEFAULT_AUTHORITY);
    unsetenv("XDG_STATE_HOME");
}

static void test_default_authority__a_small_buffer_is_refused_untouched(void **state)
{
    char buf[16] = "untouched";

    (void)state;
    assert_int_equal(idmint__default_authority(buf, sizeof(buf)), IDMINT_EINVAL);
    assert_string_equal(buf, "untouched");
}

static void test_default_authority__mkdir_makes_the_folders_closed_to_others(void **state)
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
    assert_int_equal(sb.st_mode & 0007, 0); /* nothing for others, whatever the umask */
    assert_int_equal(sb.st_mode & 0700, 0700);
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

static void test_authority_resolve__null_is_the_environment_then_the_default(void **state)
{
    char buf[IDMINT_AUTHORITY_TEXT_MAX];

    (void)state;
    unsetenv("IDMINT_AUTHORITY");
    assert_int_equal(idmint_authority_resolve(NULL, buf, sizeof(buf)), 0);
    assert_string_equal(buf, IDMINT_DEFAULT_AUTHORITY);
    assert_int_equal(idmint_authority_resolve("", buf, sizeof(buf)), 0);
    assert_string_equal(buf, IDMINT_DEFAULT_AUTHORITY);
    setenv("IDMINT_AUTHORITY", "sqlite:/srv/ids.db", 1);
    assert_int_equal(idmint_authority_resolve(NULL, buf, sizeof(buf)), 0);
    assert_string_equal(buf, "sqlite:/srv/ids.db");
    /* A URL the caller names wins over the environment. */
    assert_int_equal(idmint_authority_resolve("sqlite:/other.db", buf, sizeof(buf)), 0);
    assert_string_equal(buf, "sqlite:/other.db");
    unsetenv("IDMINT_AUTHORITY");
}

static void test_authority_resolve__masks_every_secret(void **state)
{
    char buf[IDMINT_AUTHORITY_TEXT_MAX];

    (void)state;
    assert_int_equal(
        idmint_authority_resolve("postgres://ids:s3cret@db:5432/ids", buf, sizeof(buf)), 0);
    assert_string_equal(buf, "postgres://ids:***@db:5432/ids");
    assert_int_equal(
        idmint_authority_resolve("postgresql://db/ids?user=a&password=s3cret&sslmode=require", buf,
                                 sizeof(buf)),
        0);
    assert_string_equal(buf, "postgresql://db/ids?user=a&password=***&sslmode=require");
    assert_int_equal(idmint_authority_resolve("https://h:1/?token=abc", buf, sizeof(buf)), 0);
    assert_string_equal(buf, "https://h:1/?token=***");
    /* No secret, nothing changed; a user without a password keeps its name. */
    assert_int_equal(idmint_authority_resolve("postgres://ids@db/ids", buf, sizeof(buf)), 0);
    assert_string_equal(buf, "postgres://ids@db/ids");
    assert_int_equal(idmint_authority_resolve("etcd://a:1,b:2/p", buf, sizeof(buf)), 0);
    assert_string_equal(buf, "etcd://a:1,b:2/p");
}

static void test_authority_resolve__refuses_malformed_urls_untouched(void **state)
{
    static const char *const bad[] = {"/var/lib/idmint/idmint.db", "idmint.db",
                                      "sqlite:", "mysql://db/ids", ":x"};
    char buf[IDMINT_AUTHORITY_TEXT_MAX];
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        strcpy(buf, "untouched");
        assert_int_equal(idmint_authority_resolve(bad[i], buf, sizeof(buf)), IDMINT_EINVAL);
        assert_string_equal(buf, "untouched");
        assert_true(strlen(idmint_errmsg()) > 0);
    }
    assert_int_equal(idmint_authority_resolve("sqlite:/x.db", buf, 5), IDMINT_EINVAL);
    assert_int_equal(idmint_authority_resolve("sqlite:/x.db", NULL, 5), IDMINT_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_authority__is_one_file_whatever_home_or_state_home),
        cmocka_unit_test(test_default_authority__a_small_buffer_is_refused_untouched),
        cmocka_unit_test(test_default_authority__mkdir_makes_the_folders_closed_to_others),
        cmocka_unit_test(test_authority_resolve__null_is_the_environment_then_the_default),
        cmocka_unit_test(test_authority_resolve__masks_every_secret),
        cmocka_unit_test(test_authority_resolve__refuses_malformed_urls_untouched),
    };

    return cmocka_run_group_tests_name("default_authority", tests, NULL, NULL);
}
