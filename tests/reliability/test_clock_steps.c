/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The fence under clock steps, with injected clocks: a holder whose wall
 * clock steps back 2 s and then forward 1 h mid-run never repeats an ID and
 * never mints at or after its E; a new holder whose clock is behind the E it
 * found refuses to mint, and once past it mints only after that E.
 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "idmint.h"
#include "testsupport.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define T0_MS INT64_C(1800000000000) /* 2027-01-15: after the default epoch */

static uint64_t time_of(const idmint_layout *l, uint64_t id)
{
    return id >> (l->region_bits + l->worker_bits + l->sequence_bits);
}

static void nap_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

    nanosleep(&ts, NULL);
}

/* Mint @p n IDs, moving the fake clock 1 ms every 500 IDs; retry while the
 * renewal thread catches up with a clock that jumped past E. */
static size_t mint_some(idmint *m, struct ts_fake_clock *clk, uint64_t *out, size_t n)
{
    idmint_handle_info info;
    size_t got = 0;
    int waits = 0;

    while (got < n) {
        int rc = idmint_next(m, &out[got]);

        if (rc == IDMINT_ELEASELOST && waits++ < 400) {
            nap_ms(5); /* E is behind the clock until the next renewal */
            continue;
        }
        assert_int_equal(rc, 0);
        idmint_handle_info_init(&info);
        assert_int_equal(idmint_info(m, &info), 0);
        assert_true(time_of(&info.layout, out[got]) < info.lease_until);
        assert_true(time_of(&info.layout, out[got]) > info.fence_found);
        if (got > 0)
            assert_true(out[got] > out[got - 1]);
        if (++got % 500 == 0)
            ts_fake_advance(clk, 1);
    }
    return got;
}

static void test_clock_steps__steps_back_and_forward_never_repeat_or_pass_the_fence(void **state)
{
    char *dir = ts_tempdir();
    char *url = ts_sqlite_url(dir, "idmint.db");
    struct ts_fake_clock ca, cb;
    idmint_authority *admin;
    idmint_ns_info ns;
    idmint_options o;
    idmint_handle_info ia, ib;
    idmint_worker_info *rows;
    size_t nrows, n = 0;
    idmint *a, *b = NULL;
    enum { PHASE = 20000 };
    uint64_t *ids = malloc(sizeof(uint64_t) * PHASE * 5);
    uint64_t max_a_time = 0;
    int rc;

    (void)state;
    assert_non_null(ids);
    assert_int_equal(idmint_authority_open(&admin, url, 0), 0);
    idmint_ns_info_init(&ns, IDMINT_KIND_SNOWFLAKE);
    snprintf(ns.name, sizeof(ns.name), "fence");
    assert_int_equal(idmint_layout_parse("41/0/0/12", &ns.layout), 0); /* one worker id */
    assert_int_equal(idmint_ns_create(admin, &ns), 0);

    ts_fake_init(&ca, T0_MS);
    idmint_options_init(&o);
    o.lease_ms = 10000;
    o.renew_ms = 20;
    o.wall_clock_ms = ts_fake_wall_ms;
    o.mono_clock_ns = ts_fake_mono_ns;
    o.clock_ctx = &ca;
    assert_int_equal(idmint_open(&a, url, "fence", &o), 0);

    n += mint_some(a, &ca, ids + n, PHASE);
    ts_fake_step_wall(&ca, -2000); /* NTP steps the wall clock back 2 s */
    n += mint_some(a, &ca, ids + n, PHASE);
    ts_fake_step_wall(&ca, 3600000); /* and then forward 1 h */
    n += mint_some(a, &ca, ids + n, PHASE);
    idmint_handle_info_init(&ia);
    assert_int_equal(idmint_info(a, &ia), 0);
    assert_true(time_of(&ia.layout, ids[n - 1]) >=
                (uint64_t)(T0_MS + 3600000 - ns.layout.epoch_ms) - 2000);
    for (size_t i = 0; i < n; i++)
        if (time_of(&ia.layout, ids[i]) > max_a_time)
            max_a_time = time_of(&ia.layout, ids[i]);

    /* An operator forces the id away; the old holder stops at its next renewal. */
    assert_int_equal(idmint_worker_force_release(admin, "fence", 0, 0), 0);
    for (int i = 0; i < 400 && (rc = idmint_next(a, &ids[n])) == 0; i++)
        nap_ms(5);
    assert_int_equal(rc, IDMINT_ELEASELOST);

    /* A new holder whose clock is 2 s behind the E it finds must not mint. */
    assert_int_equal(idmint_workers_list(admin, "fence", &rows, &nrows), 0);
    assert_int_equal(nrows, 1);
    assert_true(idmint_worker_info_at(rows, 0)->lease_until >
                max_a_time); /* A never minted at or after its E */
    ts_fake_init(&cb,
                 ns.layout.epoch_ms + (int64_t)idmint_worker_info_at(rows, 0)->lease_until - 2000);
    o.clock_ctx = &cb;
    o.clock_wait_ms = 100;
    assert_int_equal(idmint_open(&b, url, "fence", &o), IDMINT_ECLOCK);
    assert_null(b);
    /* Once its clock passes E it mints, and only after E. */
    ts_fake_advance(&cb, 2001);
    assert_int_equal(idmint_open(&b, url, "fence", &o), 0);
    idmint_handle_info_init(&ib);
    assert_int_equal(idmint_info(b, &ib), 0);
    assert_int_equal(ib.fence_found, idmint_worker_info_at(rows, 0)->lease_until);
    {
        size_t start = n;

        n += mint_some(b, &cb, ids + n, PHASE);
        for (size_t i = start; i < n; i++)
            assert_true(time_of(&ib.layout, ids[i]) > ib.fence_found);
    }
    idmint_free(rows);
    assert_int_equal(ts_count_duplicates(ids, n), 0);
    printf("clock steps: %zu IDs checked\n", n);
    idmint_close(b);
    idmint_close(a);
    idmint_authority_close(admin);
    free(ids);
    free(url);
    ts_rmtree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clock_steps__steps_back_and_forward_never_repeat_or_pass_the_fence),
    };
    return cmocka_run_group_tests_name("clock_steps", tests, NULL, NULL);
}
