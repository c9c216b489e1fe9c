/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for src/layout.c: layout rules, the epoch and ISO-8601 text
 * forms, decode and decimal ID parsing. Expected dates are computed from
 * known constants, never from the code under test.
 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "idmint.h"
#include "internal.h"

#include <string.h>

#define MS_PER_DAY INT64_C(86400000)

/* Unix ms of some instants, from published tables (date -u -d ... +%s). */
#define MS_2015_01_01  INT64_C(1420070400000)
#define MS_2000_02_29  INT64_C(951782400000)
#define MS_2026_01_01  INT64_C(1767225600000)
#define MS_10000_01_01 INT64_C(253402300800000)

static void assert_fails_with_message(int rc)
{
    assert_int_equal(rc, IDMINT_EINVAL);
    assert_non_null(idmint_errmsg());
    assert_true(strlen(idmint_errmsg()) > 0);
}

static idmint_layout layout_of(uint8_t t, uint8_t r, uint8_t w, uint8_t s, uint32_t unit,
                               int64_t epoch)
{
    idmint_layout l = {
        .time_bits = t,
        .region_bits = r,
        .worker_bits = w,
        .sequence_bits = s,
        .unit_ms = unit,
        .epoch_ms = epoch,
    };
    return l;
}

/* ==== layouts ==== */

static void test_layout__default_is_41_0_10_12_1ms_2026(void **state)
{
    idmint_layout l;

    (void)state;
    memset(&l, 0xa5, sizeof(l));
    idmint_layout_default(&l);
    assert_int_equal(l.time_bits, 41);
    assert_int_equal(l.region_bits, 0);
    assert_int_equal(l.worker_bits, 10);
    assert_int_equal(l.sequence_bits, 12);
    assert_int_equal(l.unit_ms, 1);
    assert_int_equal(l.epoch_ms, MS_2026_01_01);
    assert_int_equal(idmint_layout_validate(&l), 0);
}

static void test_layout__good_layouts_validate(void **state)
{
    static const idmint_layout good[] = {
        {41, 0, 10, 12, 1, INT64_C(1767225600000)},
        {1, 0, 0, 1, 1, 0},                                /* smallest */
        {62, 0, 0, 1, 1, INT64_C(253402300799999)},        /* 63 bits, latest epoch */
        {31, 0, 10, 12, 1, 0},                             /* 53 bits: exact in JavaScript */
        {39, 16, 7, 1, 1, 0},                              /* R at its limit */
        {32, 0, 30, 1, 1000, 0},                           /* W at its limit */
        {30, 3, 10, 12, 86400000, INT64_C(1420070400000)}, /* unit of a day */
    };

    (void)state;
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
        assert_int_equal(idmint_layout_validate(&good[i]), 0);
}

static void test_layout__each_bad_rule_is_refused_with_a_message(void **state)
{
    const idmint_layout bad[] = {
        layout_of(0, 0, 10, 12, 1, 0),                 /* T = 0 */
        layout_of(41, 0, 10, 0, 1, 0),                 /* S = 0 */
        layout_of(41, 0, 10, 13, 1, 0),                /* 64 bits */
        layout_of(255, 255, 255, 255, 1, 0),           /* nonsense widths */
        layout_of(20, 0, 31, 1, 1, 0),                 /* W > 30 */
        layout_of(20, 17, 10, 1, 1, 0),                /* R > 16 */
        layout_of(41, 0, 10, 12, 0, 0),                /* unit 0 */
        layout_of(41, 0, 10, 12, 86400001, 0),         /* unit above a day */
        layout_of(41, 0, 10, 12, 1, -1),               /* before 1970 */
        layout_of(41, 0, 10, 12, 1, MS_10000_01_01),   /* year 10000 */
        layout_of(62, 0, 0, 1, 2, 0),                  /* 2^62 * 2 ms overflows */
        layout_of(62, 0, 0, 1, 1, MS_10000_01_01 - 1), /* fits: see below */
    };
    const size_t n_bad = sizeof(bad) / sizeof(bad[0]) - 1;

    (void)state;
    for (size_t i = 0; i < n_bad; i++) {
        idmint__errmsg_clear();
        assert_fails_with_message(idmint_layout_validate(&bad[i]));
    }
    /* The last one is the edge that must still pass: end < 2^63. */
    assert_int_equal(idmint_layout_validate(&bad[n_bad]), 0);
    assert_fails_with_message(idmint_layout_validate(NULL));
}

static void test_layout__sum_message_names_the_bad_total(void **state)
{
    idmint_layout l = layout_of(41, 0, 10, 13, 1, MS_2026_01_01);

    (void)state;
    assert_int_equal(idmint_layout_validate(&l), IDMINT_EINVAL);
    assert_non_null(strstr(idmint_errmsg(), "41/0/10/13"));
    assert_non_null(strstr(idmint_errmsg(), "64"));
}

static void test_layout__parse_reads_four_fields(void **state)
{
    idmint_layout l;

    (void)state;
    idmint_layout_default(&l);
    l.unit_ms = 7;
    assert_int_equal(idmint_layout_parse("39/2/8/14", &l), 0);
    assert_int_equal(l.time_bits, 39);
    assert_int_equal(l.region_bits, 2);
    assert_int_equal(l.worker_bits, 8);
    assert_int_equal(l.sequence_bits, 14);
    assert_int_equal(l.unit_ms, 7); /* other fields untouched */
    assert_int_equal(l.epoch_ms, MS_2026_01_01);
    assert_int_equal(idmint_layout_parse("63/0/0/63", &l), 0); /* parse does not sum */
    assert_int_equal(l.time_bits, 63);
    assert_int_equal(l.sequence_bits, 63);
}

static void test_layout__parse_refuses_anything_else(void **state)
{
    static const char *const bad[] = {
        "",
        "41",
        "41/0/10",
        "41/0/10/12/1",
        "41/0/10/12/",
        "/0/10/12",
        "41//10/12",
        "41/0/10/64",
        "41/0/10/999999999999",
        "41/-0/10/12",
        "+41/0/10/12",
        " 41/0/10/12",
        "41/0/10/12 ",
        "41/0/1a/12",
        "41.0.10.12",
        "41/0/10/12\n",
    };
    idmint_layout l, before;

    (void)state;
    idmint_layout_default(&l);
    before = l;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        idmint__errmsg_clear();
        assert_fails_with_message(idmint_layout_parse(bad[i], &l));
        assert_memory_equal(&l, &before, sizeof(l));
    }
    assert_fails_with_message(idmint_layout_parse(NULL, &l));
}

static void test_layout__default_ends_2_pow_41_ms_after_2026(void **state)
{
    idmint_layout l;
    int64_t end = 0;
    char text[32];

    (void)state;
    idmint_layout_default(&l);
    assert_int_equal(idmint_layout_end_ms(&l, &end), 0);
    assert_int_equal(end, INT64_C(1767225600000) + INT64_C(2199023255552));
    assert_int_equal(idmint_format_iso8601(end, text, sizeof(text)), 0);
    assert_string_equal(text, "2095-09-07T15:47:35.552Z");
}

static void test_layout__end_scales_with_the_unit(void **state)
{
    idmint_layout l = layout_of(30, 3, 10, 12, 1000, MS_2015_01_01);
    int64_t end = 0;

    (void)state;
    assert_int_equal(idmint_layout_end_ms(&l, &end), 0);
    assert_int_equal(end, MS_2015_01_01 + INT64_C(1073741824) * 1000);
}

static void test_layout__end_of_an_invalid_layout_is_refused(void **state)
{
    idmint_layout l = layout_of(62, 0, 0, 1, 2, 0);
    int64_t end = 42;

    (void)state;
    assert_fails_with_message(idmint_layout_end_ms(&l, &end));
    assert_int_equal(end, 42);
    l = layout_of(0, 0, 10, 12, 1, 0);
    assert_fails_with_message(idmint_layout_end_ms(&l, &end));
    assert_int_equal(end, 42);
}

/* ==== epochs ==== */

static void test_layout__epoch_parses_every_form(void **state)
{
    static const struct {
        const char *text;
        int64_t ms;
    } cases[] = {
        {"2015-01-01", INT64_C(1420070400000)},
        {"2015-01-01T00:00:00Z", INT64_C(1420070400000)},
        {"2015-01-01T00:00:00", INT64_C(1420070400000)},
        {"2015-01-01T00:00:00.000Z", INT64_C(1420070400000)},
        {"2015-01-01T00:00:00.5Z", INT64_C(1420070400500)},
        {"2015-01-01T00:00:00.05", INT64_C(1420070400050)},
        {"2015-01-01T00:00:00.123Z", INT64_C(1420070400123)},
        {"2015-01-01T12:34:56.789Z", INT64_C(1420070400000) + 45296789},
        {"2026-01-01", INT64_C(1767225600000)},
        {"2000-02-29", INT64_C(951782400000)},
        {"1970-01-01", 0},
        {"1970-01-01T00:00:00.001Z", 1},
        {"9999-12-31T23:59:59.999Z", INT64_C(253402300799999)},
        {"0", 0},
        {"1420070400000", INT64_C(1420070400000)},
        {"001", 1},
        {"253402300799999", INT64_C(253402300799999)},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int64_t ms = -42;

        assert_int_equal(idmint_epoch_parse(cases[i].text, &ms), 0);
        assert_int_equal(ms, cases[i].ms);
    }
}

static void test_layout__epoch_refuses_bad_forms_and_dates(void **state)
{
    static const char *const bad[] = {
        "",
        " 2015-01-01",
        "2015-01-01 ",
        "2015-1-01",
        "15-01-01",
        "2015/01/01",
        "2015-01-01T",
        "2015-01-01T00:00",
        "2015-01-01T00:00:00.",
        "2015-01-01T00:00:00.1234Z",
        "2015-01-01T00:00:00ZZ",
        "2015-01-01T00:00:00+00:00",
        "2015-01-01t00:00:00z",
        "2015-01-01 00:00:00",
        "2015-00-01",
        "2015-13-01",
        "2015-01-00",
        "2015-01-32",
        "2015-04-31",
        "2015-02-29", /* not a leap year */
        "1900-02-29", /* divisible by 100, not by 400 */
        "2016-02-30",
        "2015-01-01T24:00:00Z",
        "2015-01-01T00:60:00Z",
        "2015-01-01T00:00:60Z",
        "1969-12-31",
        "0000-01-01",
        "10000-01-01",
        "-1",
        "+1",
        "1e3",
        "253402300800000", /* 10000-01-01 in ms */
        "99999999999999999999999",
        "12a",
    };
    int64_t ms = 7;

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        idmint__errmsg_clear();
        assert_fails_with_message(idmint_epoch_parse(bad[i], &ms));
        assert_int_equal(ms, 7);
    }
    assert_fails_with_message(idmint_epoch_parse(NULL, &ms));
    assert_int_equal(ms, 7);
}

static void test_layout__leap_days_parse_in_leap_years(void **state)
{
    int64_t ms = 0;

    (void)state;
    assert_int_equal(idmint_epoch_parse("2000-02-29", &ms), 0);
    assert_int_equal(ms, MS_2000_02_29);
    assert_int_equal(idmint_epoch_parse("2024-02-29", &ms), 0);
    assert_int_equal(ms, INT64_C(1709164800000));
    assert_int_equal(idmint_epoch_parse("2000-03-01", &ms), 0);
    assert_int_equal(ms, MS_2000_02_29 + MS_PER_DAY);
}

/* ==== ISO-8601 ==== */

static void test_layout__iso8601_formats_known_instants(void **state)
{
    static const struct {
        int64_t ms;
        const char *text;
    } cases[] = {
        {0, "1970-01-01T00:00:00.000Z"},
        {1, "1970-01-01T00:00:00.001Z"},
        {-1, "1969-12-31T23:59:59.999Z"},
        {INT64_C(951782400000), "2000-02-29T00:00:00.000Z"},
        {INT64_C(951868799999), "2000-02-29T23:59:59.999Z"},
        {INT64_C(1767225600000), "2026-01-01T00:00:00.000Z"},
        {INT64_C(1420070400000) + 45296789, "2015-01-01T12:34:56.789Z"},
        {INT64_C(253402300799999), "9999-12-31T23:59:59.999Z"},
        {INT64_C(-62167219200000), "0000-01-01T00:00:00.000Z"},
        {INT64_C(-2208988800000), "1900-01-01T00:00:00.000Z"},
    };
    char text[32];

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        assert_int_equal(idmint_format_iso8601(cases[i].ms, text, sizeof(text)), 0);
        assert_string_equal(text, cases[i].text);
    }
}

static void test_layout__iso8601_round_trips_through_epoch_parse(void **state)
{
    char text[32];
    int64_t back;
    /* A stride that is not a whole number of days, seconds or ms digits
     * visits every month, leap day and time of day over 1970..9999. */
    const int64_t stride = INT64_C(86400000) * 367 / 7 + 12345;

    (void)state;
    for (int64_t ms = 0; ms < INT64_C(253402300800000); ms += stride) {
        assert_int_equal(idmint_format_iso8601(ms, text, sizeof(text)), 0);
        assert_int_equal(idmint_epoch_parse(text, &back), 0);
        assert_int_equal(back, ms);
    }
    for (int64_t day = 0; day < 3 * 366; day++) { /* every day of 1970-1972 */
        int64_t ms = day * MS_PER_DAY + day;

        assert_int_equal(idmint_format_iso8601(ms, text, sizeof(text)), 0);
        assert_int_equal(idmint_epoch_parse(text, &back), 0);
        assert_int_equal(back, ms);
    }
}

static void test_layout__days_from_civil_agrees_with_known_days(void **state)
{
    (void)state;
    assert_int_equal(idmint__days_from_civil(1970, 1, 1), 0);
    assert_int_equal(idmint__days_from_civil(1969, 12, 31), -1);
    assert_int_equal(idmint__days_from_civil(2000, 3, 1), 11017);
    assert_int_equal(idmint__days_from_civil(2026, 1, 1), 20454);
    assert_int_equal(idmint__days_from_civil(0, 1, 1), -719528);
    assert_int_equal(idmint__days_from_civil(10000, 1, 1), 2932897);
}

static void test_layout__iso8601_refuses_small_buffers_and_far_years(void **state)
{
    char text[32];

    (void)state;
    memset(text, 'x', sizeof(text));
    assert_fails_with_message(idmint_format_iso8601(0, text, 24));
    assert_int_equal(text[0], 'x');
    assert_fails_with_message(idmint_format_iso8601(INT64_C(253402300800000), text, 32));
    assert_fails_with_message(idmint_format_iso8601(INT64_C(-62167219200001), text, 32));
    assert_fails_with_message(idmint_format_iso8601(INT64_MIN, text, 32));
    assert_fails_with_message(idmint_format_iso8601(INT64_MAX, text, 32));
    assert_fails_with_message(idmint_format_iso8601(0, NULL, 32));
    assert_int_equal(text[0], 'x');
    assert_int_equal(idmint_format_iso8601(0, text, 25), 0); /* exactly enough */
    assert_string_equal(text, "1970-01-01T00:00:00.000Z");
}

/* ==== decode ==== */

static uint64_t build(const idmint_layout *l, uint64_t t, uint64_t r, uint64_t w, uint64_t s)
{
    unsigned S = l->sequence_bits, W = l->worker_bits, R = l->region_bits;

    return t << (R + W + S) | r << (W + S) | w << S | s;
}

static void test_layout__decode_splits_hand_built_ids(void **state)
{
    const struct {
        idmint_layout l;
        uint64_t t, r, w, s;
    } cases[] = {
        {layout_of(41, 0, 10, 12, 1, MS_2026_01_01), 123456789, 0, 1023, 4095},
        {layout_of(41, 0, 10, 12, 1, MS_2026_01_01), 0, 0, 0, 1},
        {layout_of(41, 0, 10, 12, 1, MS_2026_01_01), (UINT64_C(1) << 41) - 1, 0, 7, 0},
        {layout_of(39, 2, 8, 14, 1, MS_2015_01_01), 5000, 3, 200, 16383},
        {layout_of(30, 3, 10, 12, 1000, MS_2015_01_01), 86400, 5, 513, 77},
        {layout_of(31, 16, 4, 1, 86400000, 0), 20454, 65535, 9, 1},
        {layout_of(62, 0, 0, 1, 1, 0), (UINT64_C(1) << 62) - 1, 0, 0, 1},
        /* A sequence wider than 32 bits comes back whole. */
        {layout_of(21, 0, 2, 40, 1, MS_2026_01_01), 1000, 0, 3, (UINT64_C(1) << 40) - 2},
        {layout_of(1, 0, 0, 62, 1, MS_2026_01_01), 1, 0, 0, (UINT64_C(1) << 62) - 1},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        idmint_decoded d;
        uint64_t id = build(&cases[i].l, cases[i].t, cases[i].r, cases[i].w, cases[i].s);

        assert_int_equal(idmint_decode(&cases[i].l, id, &d), 0);
        assert_int_equal(d.time_units, cases[i].t);
        assert_int_equal(d.unix_ms,
                         cases[i].l.epoch_ms + (int64_t)(cases[i].t * cases[i].l.unit_ms));
        assert_int_equal(d.region, cases[i].r);
        assert_int_equal(d.worker, cases[i].w);
        assert_int_equal(d.sequence, cases[i].s);
    }
}

static void test_layout__decode_of_a_day_unit_lands_on_midnight(void **state)
{
    idmint_layout l = layout_of(31, 16, 4, 1, 86400000, 0);
    idmint_decoded d;
    char text[32];

    (void)state;
    assert_int_equal(idmint_decode(&l, build(&l, 20454, 1, 2, 1), &d), 0);
    assert_int_equal(d.unix_ms, MS_2026_01_01);
    assert_int_equal(idmint_format_iso8601(d.unix_ms, text, sizeof(text)), 0);
    assert_string_equal(text, "2026-01-01T00:00:00.000Z");
}

static void test_layout__decode_refuses_zero_sign_and_high_bits(void **state)
{
    idmint_layout l = layout_of(31, 0, 10, 12, 1, MS_2026_01_01); /* 53 bits */
    idmint_layout bad = layout_of(41, 0, 10, 13, 1, MS_2026_01_01);
    idmint_decoded d, before;

    (void)state;
    memset(&d, 0x5a, sizeof(d));
    before = d;
    assert_fails_with_message(idmint_decode(&l, 0, &d));
    assert_fails_with_message(idmint_decode(&l, UINT64_C(1) << 63, &d));
    assert_fails_with_message(idmint_decode(&l, UINT64_MAX, &d));
    assert_fails_with_message(idmint_decode(&l, UINT64_C(1) << 53, &d));
    assert_fails_with_message(idmint_decode(&bad, 1, &d));
    assert_fails_with_message(idmint_decode(NULL, 1, &d));
    assert_memory_equal(&d, &before, sizeof(d));
    assert_int_equal(idmint_decode(&l, (UINT64_C(1) << 53) - 1, &d), 0);
}

/* ==== decimal IDs ==== */

static void test_layout__id_parse_accepts_1_to_2_pow_63_minus_1(void **state)
{
    uint64_t id = 0;

    (void)state;
    assert_int_equal(idmint_id_parse("1", &id), 0);
    assert_int_equal(id, 1);
    assert_int_equal(idmint_id_parse("9223372036854775807", &id), 0);
    assert_int_equal(id, UINT64_C(9223372036854775807));
    assert_int_equal(idmint_id_parse("0000000000000000000000042", &id), 0);
    assert_int_equal(id, 42);
    assert_int_equal(idmint_id_parse("7494925631488000001", &id), 0);
    assert_int_equal(id, UINT64_C(7494925631488000001));
}

static void test_layout__id_parse_refuses_edges_and_junk(void **state)
{
    static const char *const bad[] = {
        "0",
        "000",
        "9223372036854775808",
        "18446744073709551615",
        "18446744073709551616",
        "-1",
        "+1",
        " 1",
        "1 ",
        "",
        "12a",
        "0x1",
        "1.0",
        "99999999999999999999999999999999",
    };
    uint64_t id = 99;

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        idmint__errmsg_clear();
        assert_fails_with_message(idmint_id_parse(bad[i], &id));
        assert_int_equal(id, 99);
    }
    assert_fails_with_message(idmint_id_parse(NULL, &id));
    assert_int_equal(id, 99);
}

/* The decimal parsers both JSON clients (http://, etcd://) read 64-bit fields with. */
static void test_layout__decimal_parsers_take_every_64_bit_value_and_nothing_else(void **state)
{
    const char *bad[] = {"", "-", "+1", " 1", "1 ", "0x10", "18446744073709551616", "1-"};
    uint64_t u = 7;
    int64_t i = 7;

    (void)state;
    assert_int_equal(idmint__parse_u64("0", &u), 0);
    assert_int_equal(u, 0);
    assert_int_equal(idmint__parse_u64("18446744073709551615", &u), 0);
    assert_true(u == UINT64_MAX);
    assert_int_equal(idmint__parse_i64("-9223372036854775808", &i), 0);
    assert_true(i == INT64_MIN);
    assert_int_equal(idmint__parse_i64("9223372036854775807", &i), 0);
    assert_true(i == INT64_MAX);
    assert_int_equal(idmint__parse_i64("-42", &i), 0);
    assert_int_equal(i, -42);
    assert_int_equal(idmint__parse_i64("9223372036854775808", &i), -1);
    assert_int_equal(idmint__parse_i64("-9223372036854775809", &i), -1);
    assert_int_equal(idmint__parse_u64("-1", &u), -1);
    for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
        u = 7;
        i = 7;
        assert_int_equal(idmint__parse_u64(bad[k], &u), -1);
        assert_int_equal(idmint__parse_i64(bad[k], &i), -1);
        assert_int_equal(u, 7);
        assert_int_equal(i, 7);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layout__default_is_41_0_10_12_1ms_2026),
        cmocka_unit_test(test_layout__decimal_parsers_take_every_64_bit_value_and_nothing_else),
        cmocka_unit_test(test_layout__good_layouts_validate),
        cmocka_unit_test(test_layout__each_bad_rule_is_refused_with_a_message),
        cmocka_unit_test(test_layout__sum_message_names_the_bad_total),
        cmocka_unit_test(test_layout__parse_reads_four_fields),
        cmocka_unit_test(test_layout__parse_refuses_anything_else),
        cmocka_unit_test(test_layout__default_ends_2_pow_41_ms_after_2026),
        cmocka_unit_test(test_layout__end_scales_with_the_unit),
        cmocka_unit_test(test_layout__end_of_an_invalid_layout_is_refused),
        cmocka_unit_test(test_layout__epoch_parses_every_form),
        cmocka_unit_test(test_layout__epoch_refuses_bad_forms_and_dates),
        cmocka_unit_test(test_layout__leap_days_parse_in_leap_years),
        cmocka_unit_test(test_layout__iso8601_formats_known_instants),
        cmocka_unit_test(test_layout__iso8601_round_trips_through_epoch_parse),
        cmocka_unit_test(test_layout__days_from_civil_agrees_with_known_days),
        cmocka_unit_test(test_layout__iso8601_refuses_small_buffers_and_far_years),
        cmocka_unit_test(test_layout__decode_splits_hand_built_ids),
        cmocka_unit_test(test_layout__decode_of_a_day_unit_lands_on_midnight),
        cmocka_unit_test(test_layout__decode_refuses_zero_sign_and_high_bits),
        cmocka_unit_test(test_layout__id_parse_accepts_1_to_2_pow_63_minus_1),
        cmocka_unit_test(test_layout__id_parse_refuses_edges_and_junk),
    };
    return cmocka_run_group_tests_name("layout", tests, NULL, NULL);
}
