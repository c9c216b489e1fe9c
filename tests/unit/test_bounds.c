/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests of src/bounds.c. The property: IDs minted by a real handle at
 * known (fake-clock) times, in layouts with 1 ms, 10 ms and 1 s units and
 * with region bits; every ID minted inside a window lies within its bounds,
 * and every ID minted outside lies outside, but for the units an edge cuts
 * (no ID tells the ms of its unit apart). Then exact vectors, the floor, the
 * refusals and their messages, and UUIDv7's bounds around UUIDs made now.
 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "handle_fixture.h"
#include "idmint.h"
#include "testsupport.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MINTS   1500
#define WINDOWS 400

struct minted {
    int64_t at_ms; /* the fake wall clock when the ID was minted */
    uint64_t id;
};

/* xorshift64: the windows and steps are replayable from the printed seed. */
static uint64_t next_rand(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static int64_t unit_of(const idmint_layout *l, int64_t ms)
{
    return (ms - l->epoch_ms) / (int64_t)l->unit_ms;
}

/*
 * Mint MINTS IDs of @p ns in @p region, stepping a fake clock from now by
 * up to @p max_step_ms between them; fills @p out and the layout.
 */
static void mint_at_known_times(struct ts_handle_fixture *f, const char *ns, uint32_t region,
                                int64_t max_step_ms, uint64_t *seed, struct minted *out,
                                idmint_layout *layout)
{
    struct ts_fake_clock clock;
    idmint_handle_info info;
    idmint_options o;
    idmint *m;

    ts_fake_init(&clock, (int64_t)time(NULL) * 1000);
    idmint_options_init(&o);
    o.region = region;
    o.lease_ms = 3600000; /* the fake clock runs minutes ahead; no renewal is due */
    o.renew_ms = 600000;
    o.wall_clock_ms = ts_fake_wall_ms;
    o.mono_clock_ns = ts_fake_mono_ns;
    o.clock_ctx = &clock;
    assert_int_equal(idmint_open(&m, f->url, ns, &o), 0);
    idmint_handle_info_init(&info);
    assert_int_equal(idmint_info(m, &info), 0);
    *layout = info.layout;
    for (size_t i = 0; i < MINTS; i++) {
        idmint_decoded d;

        ts_fake_advance(&clock, (int64_t)(next_rand(seed) % (uint64_t)(max_step_ms + 1)));
        out[i].at_ms = ts_fake_wall_ms(&clock);
        assert_int_equal(idmint_next(m, &out[i].id), 0);
        /* The premise: an ID carries the unit it was minted in (no borrow). */
        assert_int_equal(idmint_decode(layout, out[i].id, &d), 0);
        assert_int_equal(d.time_units, (uint64_t)unit_of(layout, out[i].at_ms));
        assert_int_equal(d.region, region);
    }
    idmint_close(m);
}

/* Judge WINDOWS windows, half with edges on unit boundaries, over @p ids. */
static void check_windows(const char *ns, const idmint_layout *l, const struct minted *ids,
                          uint64_t *seed)
{
    int64_t first = ids[0].at_ms, span = ids[MINTS - 1].at_ms - first + 1;
    size_t inside_total = 0, outside_total = 0;

    for (int w = 0; w < WINDOWS; w++) {
        int64_t from = first - 5 + (int64_t)(next_rand(seed) % (uint64_t)(span + 10));
        int64_t to = from + 1 + (int64_t)(next_rand(seed) % (uint64_t)(span / 4 + 1));
        int is_aligned = w % 2 == 0;
        uint64_t lo = 0, hi = 0;

        if (is_aligned) {
            from = l->epoch_ms + unit_of(l, from) * (int64_t)l->unit_ms;
            to = l->epoch_ms + (unit_of(l, to) + 1) * (int64_t)l->unit_ms;
        }
        assert_int_equal(idmint_bounds(l, from, to, &lo, &hi), 0);
        assert_true(lo <= hi);
        for (size_t i = 0; i < MINTS; i++) {
            int is_inside = ids[i].at_ms >= from && ids[i].at_ms < to;
            int is_in_bounds = ids[i].id >= lo && ids[i].id <= hi;
            int64_t u = unit_of(l, ids[i].at_ms);
            int is_edge_unit = u == unit_of(l, from) || u == unit_of(l, to - 1);

            if (is_inside && !is_in_bounds)
                fail_msg("%s: ID %llu minted at %lld is outside the bounds [%llu, %llu] of "
                         "[%lld, %lld)",
                         ns, (unsigned long long)ids[i].id, (long long)ids[i].at_ms,
                         (unsigned long long)lo, (unsigned long long)hi, (long long)from,
                         (long long)to);
            if (!is_inside && is_in_bounds && (is_aligned || !is_edge_unit))
                fail_msg("%s: ID %llu minted at %lld, outside [%lld, %lld), is inside the "
                         "bounds [%llu, %llu]",
                         ns, (unsigned long long)ids[i].id, (long long)ids[i].at_ms,
                         (long long)from, (long long)to, (unsigned long long)lo,
                         (unsigned long long)hi);
            inside_total += (size_t)is_inside;
            outside_total += (size_t)!is_inside;
        }
    }
    /* The windows must have had IDs on both sides to judge. */
    assert_true(inside_total > MINTS);
    assert_true(outside_total > MINTS);
}

static void property_case(struct ts_handle_fixture *f, const char *ns, const char *bits,
                          uint32_t unit_ms, uint32_t region, int64_t max_step_ms)
{
    struct minted *ids = malloc(MINTS * sizeof(*ids));
    uint64_t seed = (uint64_t)time(NULL) * 2654435761u | 1u;
    idmint_layout l;

    assert_non_null(ids);
    print_message("%s: seed %llu\n", ns, (unsigned long long)seed);
    ts_create_snowflake_unit(f, ns, bits, unit_ms);
    mint_at_known_times(f, ns, region, max_step_ms, &seed, ids, &l);
    check_windows(ns, &l, ids, &seed);
    free(ids);
}

static void test_bounds__hold_every_id_minted_in_the_window_and_none_outside(void **state)
{
    struct ts_handle_fixture *f = *state;

    property_case(f, "ms", "41/0/10/12", 0, 0, 3);           /* the default: 1 ms units */
    property_case(f, "tens", "39/4/8/12", 10, 5, 25);        /* 10 ms units, region 5 of 16 */
    property_case(f, "seconds", "35/2/6/20", 1000, 3, 2500); /* 1 s units, R = 2 */
}

/* Exact vectors of the default layout: a unit's first and last ID. */
static void test_bounds__are_exact_at_unit_edges(void **state)
{
    idmint_layout l;
    uint64_t lo = 0, hi = 0;

    (void)state;
    idmint_layout_default(&l);
    assert_int_equal(idmint_bounds(&l, l.epoch_ms + 5, l.epoch_ms + 6, &lo, &hi), 0);
    assert_int_equal(lo, UINT64_C(5) << 22);
    assert_int_equal(hi, (UINT64_C(6) << 22) - 1);
    /* Unit 0's first ID would be 0, which is never an ID. */
    assert_int_equal(idmint_bounds(&l, l.epoch_ms, l.epoch_ms + 1000, &lo, &hi), 0);
    assert_int_equal(lo, 1);
    assert_int_equal(hi, (UINT64_C(1000) << 22) - 1);
    /* 10 ms units: 5 ms into unit 3 up to 1 ms into unit 4 takes in both whole. */
    l.unit_ms = 10;
    assert_int_equal(idmint_bounds(&l, l.epoch_ms + 35, l.epoch_ms + 42, &lo, &hi), 0);
    assert_int_equal(lo, UINT64_C(3) << 22);
    assert_int_equal(hi, (UINT64_C(5) << 22) - 1);
    /* The last unit the time bits hold. */
    {
        int64_t end;

        assert_int_equal(idmint_layout_end_ms(&l, &end), 0);
        assert_int_equal(idmint_bounds(&l, end - 10, end, &lo, &hi), 0);
        assert_int_equal(hi, (UINT64_C(1) << 63) - 1);
        assert_int_equal(lo, ((UINT64_C(1) << 41) - 1) << 22);
    }
}

/* @p rc is IDMINT_EINVAL, the message holds @p what, and lo and hi were not written. */
static void refused(int rc, uint64_t lo, uint64_t hi, const char *what)
{
    assert_int_equal(rc, IDMINT_EINVAL);
    if (strstr(idmint_errmsg(), what) == NULL)
        fail_msg("expected '%s' in '%s'", what, idmint_errmsg());
    assert_int_equal(lo, 7);
    assert_int_equal(hi, 7);
}

static void test_bounds__refuse_bad_windows_with_a_message(void **state)
{
    idmint_layout l;
    int64_t end;
    uint64_t lo = 7, hi = 7;

    (void)state;
    idmint_layout_default(&l);
    assert_int_equal(idmint_layout_end_ms(&l, &end), 0);
    refused(idmint_bounds(&l, l.epoch_ms + 10, l.epoch_ms + 10, &lo, &hi), lo, hi,
            "the window is empty");
    refused(idmint_bounds(&l, l.epoch_ms + 10, l.epoch_ms, &lo, &hi), lo, hi,
            "from (1767225600010) must be before to (1767225600000)");
    refused(idmint_bounds(&l, l.epoch_ms - 1, l.epoch_ms + 10, &lo, &hi), lo, hi,
            "from 2025-12-31T23:59:59.999Z is before 2026-01-01T00:00:00.000Z");
    refused(idmint_bounds(&l, end - 1, end + 1, &lo, &hi), lo, hi, "where its time bits run out");
    refused(idmint_bounds(&l, 0, INT64_MAX, &lo, &hi), lo, hi, "is before");
    l.time_bits = 0;
    refused(idmint_bounds(&l, 0, 1, &lo, &hi), lo, hi, "");
    assert_int_equal(idmint_bounds(NULL, 0, 1, &lo, &hi), IDMINT_EINVAL);
    idmint_layout_default(&l);
    assert_int_equal(idmint_bounds(&l, l.epoch_ms, l.epoch_ms + 1, NULL, &hi), IDMINT_EINVAL);
    assert_int_equal(hi, 7);
}

static void test_bounds__of_a_namespace_start_above_its_floor(void **state)
{
    idmint_ns_info info;
    uint64_t lo = 7, hi = 7;
    int64_t e;

    (void)state;
    idmint_ns_info_init_v2(&info, IDMINT_KIND_SNOWFLAKE);
    snprintf(info.name, sizeof(info.name), "orders");
    idmint_layout_default(&info.layout);
    e = info.layout.epoch_ms;
    assert_int_equal(idmint_ns_bounds(&info, e + 5, e + 6, &lo, &hi), 0);
    assert_int_equal(lo, UINT64_C(5) << 22); /* no floor: as idmint_bounds */
    info.floor = (UINT64_C(5) << 22) + 99;   /* a migration's source ends inside unit 5 */
    assert_int_equal(idmint_ns_bounds(&info, e + 5, e + 6, &lo, &hi), 0);
    assert_int_equal(lo, info.floor + 1);
    assert_int_equal(hi, (UINT64_C(6) << 22) - 1);
    lo = hi = 7;
    refused(idmint_ns_bounds(&info, e, e + 5, &lo, &hi), lo, hi,
            "ends at or below the floor 20971619 of 'orders'");
    idmint_ns_info_init_v2(&info, IDMINT_KIND_RANGE);
    snprintf(info.name, sizeof(info.name), "seq");
    refused(idmint_ns_bounds(&info, e, e + 5, &lo, &hi), lo, hi,
            "'seq' is a range namespace: its IDs carry no time");
    info.size = 3;
    refused(idmint_ns_bounds(&info, e, e + 5, &lo, &hi), lo, hi, "idmint_ns_info");
}

static int64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int uuid_in(const uint8_t u[16], const uint8_t lo[16], const uint8_t hi[16])
{
    return memcmp(u, lo, 16) >= 0 && memcmp(u, hi, 16) <= 0;
}

static void test_bounds__of_uuid7_hold_the_uuids_made_in_their_window(void **state)
{
    uint8_t lo[16], hi[16], u[16], keep[16];
    char text[37];
    int64_t before, after;

    (void)state;
    /* Exact bytes: 48-bit ms, version 7, variant 10, the rest 0 or 1. */
    assert_int_equal(idmint_uuid7_bounds(0x0123456789ab, 0x0123456789ad, lo, hi), 0);
    idmint_uuid_format(lo, text);
    assert_string_equal(text, "01234567-89ab-7000-8000-000000000000");
    idmint_uuid_format(hi, text);
    assert_string_equal(text, "01234567-89ac-7fff-bfff-ffffffffffff");
    /* The library's clock may lag CLOCK_REALTIME by a loaded machine's
     * scheduling delay (unit.clock): a second either way, windows a second off. */
    for (int i = 0; i < 1000; i++) {
        before = now_ms();
        assert_int_equal(idmint_uuid7(u), 0);
        after = now_ms();
        assert_int_equal(idmint_uuid7_bounds(before - 1000, after + 1000, lo, hi), 0);
        assert_true(uuid_in(u, lo, hi));
        assert_int_equal(idmint_uuid7_bounds(after + 1000, after + 2000, lo, hi), 0);
        assert_false(uuid_in(u, lo, hi));
        assert_int_equal(idmint_uuid7_bounds(before - 2000, before - 1000, lo, hi), 0);
        assert_false(uuid_in(u, lo, hi));
    }
    memset(keep, 0x33, sizeof(keep));
    memcpy(lo, keep, 16);
    memcpy(hi, keep, 16);
    assert_int_equal(idmint_uuid7_bounds(5, 5, lo, hi), IDMINT_EINVAL);
    assert_non_null(strstr(idmint_errmsg(), "the window is empty"));
    assert_int_equal(idmint_uuid7_bounds(-1, 5, lo, hi), IDMINT_EINVAL);
    assert_non_null(strstr(idmint_errmsg(), "is before 1970-01-01T00:00:00.000Z"));
    assert_int_equal(idmint_uuid7_bounds(0, (INT64_C(1) << 48) + 1, lo, hi), IDMINT_EINVAL);
    assert_non_null(strstr(idmint_errmsg(), "where its time bits run out"));
    assert_memory_equal(lo, keep, 16);
    assert_memory_equal(hi, keep, 16);
    assert_int_equal(idmint_uuid7_bounds(0, INT64_C(1) << 48, lo, hi), 0); /* all of time */
    idmint_uuid_format(hi, text);
    assert_string_equal(text, "ffffffff-ffff-7fff-bfff-ffffffffffff");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_bounds__hold_every_id_minted_in_the_window_and_none_outside, ts_handle_setup,
            ts_handle_teardown),
        cmocka_unit_test(test_bounds__are_exact_at_unit_edges),
        cmocka_unit_test(test_bounds__refuse_bad_windows_with_a_message),
        cmocka_unit_test(test_bounds__of_a_namespace_start_above_its_floor),
        cmocka_unit_test(test_bounds__of_uuid7_hold_the_uuids_made_in_their_window),
    };
    return cmocka_run_group_tests_name("bounds", tests, NULL, NULL);
}
