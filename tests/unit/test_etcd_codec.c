/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for src/store/etcd/etcd_codec.c, the etcd store's codec, with
 * no etcd: base64 round-trips every length and refuses what is not base64;
 * 64-bit fields read back exactly as etcd writes them (decimal strings) and
 * refuse other shapes; text is cut to its buffer and non-printable bytes
 * are never recorded; the key schema sorts as the store relies on (fixed
 * width numbers, a prefix's end past every key under it), escapes an
 * incarnation so that none can reach another's keys, and parses back the
 * keys it wrote while refusing look-alikes.
 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "etcd/etcd_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct etcd_store *store_named(const char *prefix)
{
    struct etcd_store *s = calloc(1, sizeof(*s));

    assert_non_null(s);
    snprintf(s->prefix, sizeof(s->prefix), "%s", prefix);
    snprintf(s->name, sizeof(s->name), "etcd://test");
    return s;
}

static void test_etcd_codec__base64_round_trips_and_refuses_junk(void **state)
{
    static const char *const bad[] = {"Zm9", "Zm9v!A==", "Z===", "Zg=a", "Zg==Zm9v", "Zm 9v"};
    unsigned char data[64];
    size_t n, len, i;
    char *text, *back;

    (void)state;
    for (i = 0; i < sizeof(data); i++)
        data[i] = (unsigned char)(i * 37 + 11);
    for (n = 0; n <= sizeof(data); n++) {
        assert_non_null(text = etcd_b64_encode(data, n));
        assert_int_equal(strlen(text), (n + 2) / 3 * 4);
        assert_int_equal(etcd_b64_decode(text, &back, &len), 0);
        assert_int_equal(len, n);
        assert_memory_equal(back, data, n);
        assert_int_equal(back[len], '\0');
        free(back);
        free(text);
    }
    assert_non_null(text = etcd_b64_encode("foobar", 6));
    assert_string_equal(text, "Zm9vYmFy");
    free(text);
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(etcd_b64_decode(bad[i], &back, &len), -1);
}

static void test_etcd_codec__numbers_read_back_exactly(void **state)
{
    json_t *o = json_pack("{s:s, s:I, s:s, s:s, s:I, s:s, s:b}", "max", "18446744073709551615",
                          "int", (json_int_t)42, "neg", "-1", "sci", "1e3", "negint",
                          (json_int_t)-5, "i", "-9223372036854775808", "flag", 1);
    uint64_t u = 7;
    int64_t i = 7;

    (void)state;
    assert_non_null(o);
    assert_int_equal(etcd_get_u64(o, "max", &u), 0);
    assert_true(u == UINT64_MAX);
    assert_int_equal(etcd_get_u64(o, "int", &u), 0);
    assert_int_equal(u, 42);
    assert_int_equal(etcd_get_u64(o, "absent", &u), 0); /* proto3: absent is 0 */
    assert_int_equal(u, 0);
    assert_int_not_equal(etcd_get_u64(o, "neg", &u), 0);
    assert_int_not_equal(etcd_get_u64(o, "sci", &u), 0);
    assert_int_not_equal(etcd_get_u64(o, "negint", &u), 0);
    assert_int_not_equal(etcd_get_u64(o, "flag", &u), 0);
    assert_int_equal(etcd_get_i64(o, "i", &i), 0);
    assert_true(i == INT64_MIN);
    assert_int_equal(etcd_get_small(o, "int", 42, &u), 0);
    assert_int_not_equal(etcd_get_small(o, "int", 41, &u), 0);
    json_decref(o);

    /* What we write is what we read. */
    o = json_object();
    json_object_set_new(o, "u", etcd_j_u64(UINT64_MAX - 1));
    json_object_set_new(o, "i", etcd_j_i64(INT64_MIN + 1));
    assert_true(json_is_string(json_object_get(o, "u")));
    assert_int_equal(etcd_get_u64(o, "u", &u), 0);
    assert_true(u == UINT64_MAX - 1);
    assert_int_equal(etcd_get_i64(o, "i", &i), 0);
    assert_true(i == INT64_MIN + 1);
    json_decref(o);
}

static void test_etcd_codec__text_is_cut_and_never_unprintable(void **state)
{
    json_t *o = json_pack("{s:s, s:i}", "t", "abcdefgh", "n", 3), *j;
    char out[5];

    (void)state;
    assert_int_equal(etcd_get_text(o, "t", out, sizeof(out)), 0);
    assert_string_equal(out, "abcd");
    assert_int_equal(etcd_get_text(o, "absent", out, sizeof(out)), 0);
    assert_string_equal(out, "");
    assert_int_equal(etcd_get_text(o, "n", out, sizeof(out)), -1);
    json_decref(o);
    assert_non_null(j = etcd_j_text("ok\x01\xff\"x\ty", 32));
    assert_string_equal(json_string_value(j), "ok??\"x?y");
    json_decref(j);
    assert_non_null(j = etcd_j_text("0123456789", 4));
    assert_string_equal(json_string_value(j), "0123");
    json_decref(j);
}

static void test_etcd_codec__keys_sort_as_the_store_relies_on(void **state)
{
    struct etcd_store *s = store_named("/idm");
    char a[ETCD_KEY_MAX], b[ETCD_KEY_MAX], end[ETCD_KEY_MAX];
    uint64_t v;

    (void)state;
    /* Fixed-width numbers: text order is number order. */
    assert_int_equal(etcd_key_wgrant(s, "orders", 0, 9, 99, a), 0);
    assert_int_equal(etcd_key_wgrant(s, "orders", 0, 10, 5, b), 0);
    assert_true(strcmp(a, b) < 0);
    assert_string_equal(a, "/idm/wgrant/orders/0000000000/0000000009/00000000000000000099");
    assert_int_equal(etcd_key_rgrant(s, "orders", 999, a), 0);
    assert_int_equal(etcd_key_rgrant(s, "orders", 1000, b), 0);
    assert_true(strcmp(a, b) < 0);
    assert_int_equal(etcd_key_tail_u64(b, 20, &v), 0);
    assert_int_equal(v, 1000);
    assert_int_equal(etcd_key_tail_u64("/idm/rgrant/orders/12x", 3, &v), -1);

    /* A prefix's end is past every key under it and before the next name. */
    assert_int_equal(etcd_key_wgrant_prefix(s, "orders", 0, 9, a), 0);
    etcd_key_prefix_end(a, end);
    assert_int_equal(etcd_key_wgrant(s, "orders", 0, 9, UINT64_MAX, b), 0);
    assert_true(strcmp(a, b) < 0 && strcmp(b, end) < 0);
    assert_int_equal(etcd_key_wgrant(s, "orders", 0, 10, 0, b), 0);
    assert_true(strcmp(end, b) <= 0);

    /* Too long a key is refused, not cut. */
    memset(a, 'n', ETCD_KEY_MAX - 1);
    a[ETCD_KEY_MAX - 1] = '\0';
    assert_int_equal(etcd_key_ns(s, a, b), IDMINT_EINVAL);
    free(s);
}

static void test_etcd_codec__an_incarnation_cannot_reach_anothers_keys(void **state)
{
    struct etcd_store *s = store_named("/idm");
    char a[ETCD_KEY_MAX], b[ETCD_KEY_MAX], rec[ETCD_KEY_MAX];

    (void)state;
    /* "a/b" escaped: not the incarnation "a" with a request "b/...". */
    assert_int_equal(etcd_key_request(s, "inc", "orders", "a/b", "0000000000000001", a), 0);
    assert_int_equal(etcd_key_inc_prefix(s, "orders", "a", b), 0);
    assert_true(strncmp(a, b, strlen(b)) != 0);
    assert_non_null(strstr(a, "a%2Fb"));
    assert_int_equal(etcd_key_request(s, "inc", "orders", "50%", "r", a), 0);
    assert_non_null(strstr(a, "50%25"));

    /* A waiting request's key leads back to its record; look-alikes do not. */
    assert_int_equal(etcd_key_waiting(s, "orders", 1780000000000, "inc-1", "0000000000000007", a),
                     0);
    assert_int_equal(etcd_waiting_record_key(s, "orders", a, rec), 0);
    assert_int_equal(etcd_key_request(s, "inc", "orders", "inc-1", "0000000000000007", b), 0);
    assert_string_equal(rec, b);
    assert_int_equal(etcd_waiting_record_key(s, "other", a, rec), -1);
    assert_int_equal(
        etcd_waiting_record_key(s, "orders", "/idm/pend/orders/123/inc-1/0000000000000007", rec),
        -1);
    assert_int_equal(etcd_waiting_record_key(
                         s, "orders", "/idm/pend/orders/00000001780000000000/inc-1/a/b", rec),
                     -1);
    free(s);
}

static void test_etcd_codec__age_keys_lead_back_to_their_records(void **state)
{
    struct etcd_store *s = store_named("/idm");
    char target[ETCD_KEY_MAX], age[ETCD_KEY_MAX], back[ETCD_KEY_MAX], later[ETCD_KEY_MAX];

    (void)state;
    assert_int_equal(etcd_key_rgrant(s, "orders", 5000, target), 0);
    assert_int_equal(etcd_key_age(s, IDMINT__KEEP_RANGE_GRANTS, 1780000000000, target, age), 0);
    assert_int_equal(etcd_age_target(s, age, back), 0);
    assert_string_equal(back, target);
    /* Older stamps sort first; a time before 1970 sorts as 1970. */
    assert_int_equal(etcd_key_age(s, IDMINT__KEEP_RANGE_GRANTS, 1780000000001, target, later), 0);
    assert_true(strcmp(age, later) < 0);
    assert_int_equal(etcd_age_ms(-5), 0);
    assert_int_equal(etcd_age_target(s, "/idm/age/r/12/rgrant/x", back), -1);
    free(s);
}

static void test_etcd_codec__op_ids_are_fresh_hex(void **state)
{
    char a[ETCD_OPID_LEN + 1], b[ETCD_OPID_LEN + 1];

    (void)state;
    assert_int_equal(etcd_opid_new(a), 0);
    assert_int_equal(etcd_opid_new(b), 0);
    assert_int_equal(strlen(a), ETCD_OPID_LEN);
    assert_int_equal(strspn(a, "0123456789abcdef"), ETCD_OPID_LEN);
    assert_string_not_equal(a, b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_etcd_codec__base64_round_trips_and_refuses_junk),
        cmocka_unit_test(test_etcd_codec__numbers_read_back_exactly),
        cmocka_unit_test(test_etcd_codec__text_is_cut_and_never_unprintable),
        cmocka_unit_test(test_etcd_codec__keys_sort_as_the_store_relies_on),
        cmocka_unit_test(test_etcd_codec__an_incarnation_cannot_reach_anothers_keys),
        cmocka_unit_test(test_etcd_codec__age_keys_lead_back_to_their_records),
        cmocka_unit_test(test_etcd_codec__op_ids_are_fresh_hex),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
