/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for src/store/location.c: the key this host's witness binds a
 * store's place by. An etcd cluster named in any order, case or spelling
 * of its default port and prefix has one key; another prefix or cluster
 * has another; a URL idmint cannot read is refused; a backend that knows
 * where it is answers for itself.
 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "internal.h"
#include "store.h"

#include <stdio.h>
#include <string.h>

static int own_location(const struct store *st, char *buf, size_t size)
{
    (void)st;
    snprintf(buf, size, "sqlite:/real/path.db");
    return 0;
}

static const struct store_ops from_url = {.version = STORE_OPS_V7, .scheme = "etcd"};
static const struct store_ops knows_itself = {
    .version = STORE_OPS_V7, .scheme = "sqlite", .location = own_location};
static const struct store_ops before_v7 = {
    .version = STORE_OPS_V7 - 1, .scheme = "sqlite", .location = own_location};

static void key_of(const char *url, char *buf, size_t size)
{
    struct store st = {.ops = &from_url};

    assert_int_equal(idmint__store_location(&st, url, buf, size), 0);
}

static void test_location__one_cluster_one_key_however_named(void **state)
{
    static const char *const same[] = {
        "etcd://b.example:2379,a.example:2379/idmint", "etcd://a.example,b.example",
        "etcd://A.EXAMPLE:2379,b.example/idmint/", "etcd://b.example,a.example,a.example:2379",
        "etcd://a.example,b.example/idmint?ca=/x.pem"};
    char first[512], key[512];
    size_t i;

    (void)state;
    key_of(same[0], first, sizeof(first));
    assert_string_equal(first, "etcd://a.example:2379,b.example:2379/idmint");
    for (i = 1; i < sizeof(same) / sizeof(same[0]); i++) {
        key_of(same[i], key, sizeof(key));
        assert_string_equal(key, first);
    }
}

static void test_location__another_prefix_port_or_member_is_another_place(void **state)
{
    char a[512], b[512];

    (void)state;
    key_of("etcd://a:2379/idmint", a, sizeof(a));
    key_of("etcd://a:2379/other", b, sizeof(b));
    assert_string_not_equal(a, b);
    key_of("etcd://a:2380/idmint", b, sizeof(b));
    assert_string_not_equal(a, b);
    key_of("etcd://a:2379,c:2379/idmint", b, sizeof(b));
    assert_string_not_equal(a, b);
    /* An IPv6 member: the port is after the brackets, or the default. */
    key_of("etcd://[::1]/idmint", a, sizeof(a));
    key_of("etcd://[::1]:2379/idmint", b, sizeof(b));
    assert_string_equal(a, "etcd://[::1]:2379/idmint");
    assert_string_equal(a, b);
}

static void test_location__urls_it_cannot_read_are_refused(void **state)
{
    static const char *const bad[] = {"etcd:a:2379", "etcd://", "etcd:///idmint",
                                      "etcd://a,,b/idmint"};
    struct store st = {.ops = &from_url};
    char many[512], key[512];
    size_t i, n = 0;

    (void)state;
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(idmint__store_location(&st, bad[i], key, sizeof(key)), IDMINT_EINVAL);
    n = (size_t)snprintf(many, sizeof(many), "etcd://");
    for (i = 0; i < 17; i++) /* one member more than the backend takes */
        n += (size_t)snprintf(many + n, sizeof(many) - n, "%sh%zu", i > 0 ? "," : "", i);
    assert_int_equal(idmint__store_location(&st, many, key, sizeof(key)), IDMINT_EINVAL);
    assert_int_equal(idmint__store_location(&st, "etcd://a/idmint", key, 10), IDMINT_EINVAL);
    assert_non_null(strstr(idmint_errmsg(), "too long"));
    assert_int_equal(idmint__store_location(NULL, "etcd://a", key, sizeof(key)), IDMINT_EINVAL);
    assert_int_equal(idmint__store_location(&st, NULL, key, sizeof(key)), IDMINT_EINVAL);
    assert_int_equal(idmint__store_location(&st, "etcd://a", key, 0), IDMINT_EINVAL);
}

/* A backend with a location member answers; without one, and not etcd, there is no key (1). */
static void test_location__a_backend_that_knows_where_it_is_answers(void **state)
{
    struct store st = {.ops = &knows_itself};
    char key[512];

    (void)state;
    assert_int_equal(idmint__store_location(&st, "sqlite:./a.db", key, sizeof(key)), 0);
    assert_string_equal(key, "sqlite:/real/path.db");
    st.ops = &before_v7; /* the member is not read before version 7 */
    assert_int_equal(idmint__store_location(&st, "sqlite:./a.db", key, sizeof(key)), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_location__one_cluster_one_key_however_named),
        cmocka_unit_test(test_location__another_prefix_port_or_member_is_another_place),
        cmocka_unit_test(test_location__urls_it_cannot_read_are_refused),
        cmocka_unit_test(test_location__a_backend_that_knows_where_it_is_answers),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
