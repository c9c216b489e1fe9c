/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for the admission table of cmd/idmintd/http_screen.c: client
 * keys and prefixes (IPv6 among them, which loopback tests cannot reach),
 * the per-prefix bound and the reserve kept for prefixes without a
 * connection. No sockets: addresses are built by hand.
 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "http_screen.h"
#include "idmint_service.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

static struct http_client_key key_of(const char *text)
{
    struct sockaddr_storage ss;
    struct http_client_key key;

    memset(&ss, 0, sizeof(ss));
    if (strchr(text, ':') != NULL) {
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;

        in6->sin6_family = AF_INET6;
        assert_int_equal(inet_pton(AF_INET6, text, &in6->sin6_addr), 1);
    } else {
        struct sockaddr_in *in = (struct sockaddr_in *)&ss;

        in->sin_family = AF_INET;
        assert_int_equal(inet_pton(AF_INET, text, &in->sin_addr), 1);
    }
    http_client_key_of(&ss, &key);
    return key;
}

static struct http_client_key prefix_of(const char *text, unsigned v4, unsigned v6)
{
    struct http_client_key key = key_of(text), prefix;

    http_client_prefix_of(&key, v4, v6, &prefix);
    return prefix;
}

static void test_http_screen__ipv4_prefix_keeps_the_first_bits_only(void **state)
{
    struct http_client_key a = prefix_of("10.1.2.3", 24, 48), b = key_of("10.1.2.0");
    struct http_client_key c = prefix_of("10.1.2.3", 16, 48), d = key_of("10.1.0.0");
    struct http_client_key e = prefix_of("10.1.255.3", 20, 48), f = key_of("10.1.240.0");

    (void)state;
    assert_memory_equal(&a, &b, sizeof(a));
    assert_memory_equal(&c, &d, sizeof(c));
    assert_memory_equal(&e, &f, sizeof(e));
}

static void test_http_screen__ipv4_mapped_ipv6_is_counted_as_ipv4(void **state)
{
    struct http_client_key a = key_of("::ffff:10.1.2.3"), b = key_of("10.1.2.3");
    struct http_client_key c = prefix_of("::ffff:10.1.2.3", 24, 48),
                           d = prefix_of("10.1.2.9", 24, 48);

    (void)state;
    assert_memory_equal(&a, &b, sizeof(a));
    assert_memory_equal(&c, &d, sizeof(c));
}

static void test_http_screen__ipv6_prefix_keeps_the_first_bits_only(void **state)
{
    struct http_client_key a = prefix_of("2001:db8:1:2::1", 24, 48), b = key_of("2001:db8:1::");
    struct http_client_key c = prefix_of("2001:db8:1:ffff::1", 24, 52);
    struct http_client_key d = key_of("2001:db8:1:f000::");
    struct http_client_key e = prefix_of("2001:db8:1:2::1", 24, 48);
    struct http_client_key f = prefix_of("2001:db8:2:2::1", 24, 48);

    (void)state;
    assert_memory_equal(&a, &b, sizeof(a));
    assert_memory_equal(&c, &d, sizeof(c));
    assert_memory_not_equal(&e, &f, sizeof(e));
}

static void test_http_screen__a_prefix_is_bounded_however_many_addresses_it_uses(void **state)
{
    const struct http_admit_limits lim = {.max_conns = 100,
                                          .max_per_client = 10,
                                          .max_per_prefix = 3,
                                          .prefix_v4_bits = 24,
                                          .prefix_v6_bits = 48};
    static const char *const same[] = {"2001:db8:1:1::1", "2001:db8:1:2::1", "2001:db8:1:3::1"};
    struct http_admit *a = NULL;
    struct http_client_key k;
    enum http_refusal why = HTTP_REFUSED_COUNT;
    size_t i;

    (void)state;
    assert_int_equal(http_admit_new(&a, &lim), 0);
    for (i = 0; i < 3; i++) {
        k = key_of(same[i]);
        assert_int_equal(http_admit_take(a, &k, &why), 0);
    }
    k = key_of("2001:db8:1:4::1"); /* a fourth /64 of the same /48 */
    assert_int_equal(http_admit_take(a, &k, &why), -1);
    assert_int_equal(why, HTTP_REFUSED_PER_PREFIX);
    k = key_of("2001:db8:2::1"); /* another /48 */
    assert_int_equal(http_admit_take(a, &k, &why), 0);
    /* One of the prefix's connections closes: the prefix may have one again. */
    k = key_of(same[1]);
    http_admit_release(a, &k);
    k = key_of("2001:db8:1:4::1");
    assert_int_equal(http_admit_take(a, &k, &why), 0);
    http_admit_free(a);
}

static void test_http_screen__the_reserve_goes_to_prefixes_without_a_connection(void **state)
{
    const struct http_admit_limits lim = {.max_conns = 16, .max_per_client = 64};
    struct http_admit *a = NULL;
    struct http_client_key k;
    enum http_refusal why = HTTP_REFUSED_COUNT;
    char text[32];
    unsigned i;

    (void)state;
    assert_int_equal(http_admit_reserve(16), 1);
    assert_int_equal(http_admit_new(&a, &lim), 0);
    for (i = 1; i <= 15; i++) { /* 15 addresses, one /24 */
        snprintf(text, sizeof(text), "192.0.2.%u", i);
        k = key_of(text);
        assert_int_equal(http_admit_take(a, &k, &why), 0);
    }
    k = key_of("192.0.2.200"); /* a new address, but its /24 holds connections */
    assert_int_equal(http_admit_take(a, &k, &why), -1);
    assert_int_equal(why, HTTP_REFUSED_RESERVE);
    k = key_of("198.51.100.1"); /* a /24 without a connection */
    assert_int_equal(http_admit_take(a, &k, &why), 0);
    k = key_of("203.0.113.1");
    assert_int_equal(http_admit_take(a, &k, &why), -1);
    assert_int_equal(why, HTTP_REFUSED_FULL);
    assert_true(http_refused_total(HTTP_REFUSED_FULL) >= 1);
    assert_string_equal(http_refusal_name(HTTP_REFUSED_PER_PREFIX), "per_prefix");
    http_admit_free(a);
}

/* Every refusal of a request head answers a status and code of the one error table. */
static void test_http_screen__every_verdict_is_a_row_of_the_error_table(void **state)
{
    (void)state;
    for (int v = HTTP_HEAD_OK + 1; v < HTTP_HEAD_COUNT; v++) {
        const struct idmint__wire_error *row =
            idmint__wire_error_named(http_head_verdict_code((enum http_head_verdict)v));

        assert_non_null(row);
        assert_int_equal(row->status, http_head_verdict_status((enum http_head_verdict)v));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_http_screen__ipv4_prefix_keeps_the_first_bits_only),
        cmocka_unit_test(test_http_screen__ipv4_mapped_ipv6_is_counted_as_ipv4),
        cmocka_unit_test(test_http_screen__ipv6_prefix_keeps_the_first_bits_only),
        cmocka_unit_test(test_http_screen__a_prefix_is_bounded_however_many_addresses_it_uses),
        cmocka_unit_test(test_http_screen__the_reserve_goes_to_prefixes_without_a_connection),
        cmocka_unit_test(test_http_screen__every_verdict_is_a_row_of_the_error_table),
    };
    return cmocka_run_group_tests_name("http_screen", tests, NULL, NULL);
}
