/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tests for src/lease.c (the worker lease a snowflake handle holds) through
 * the public API on a real SQLite file: a release lets the next holder mint
 * after us, no free worker id is an error, a refused renewal stops minting,
 * a disabled namespace and an outage mint until the lease's end and then
 * fail, and an id released ahead of the clock does not block others.
 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "idmint.h"
#include "fault_store.h"
#include "handle_fixture.h"
#include "internal.h"
#include "testsupport.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void test_lease__release_on_close_lets_the_next_holder_mint_after_us(void **state)
{
    struct ts_handle_fixture *f = *state;
    idmint *a, *b;
    uint64_t last_a = 0, first_b;
    idmint_handle_info ia, ib;

    ts_create_snowflake(f, "solo", "41/0/0/12"); /* one worker id */
    assert_int_equal(idmint_open(&a, f->url, "solo", NULL), 0);
    for (int i = 0; i < 1000; i++)
        assert_int_equal(idmint_next(a, &last_a), 0);
    idmint_handle_info_init(&ia);
    assert_int_equal(idmint_info(a, &ia), 0);
    idmint_close(a);
    assert_int_equal(idmint_open(&b, f->url, "solo", NULL), 0);
    idmint_handle_info_init(&ib);
    assert_int_equal(idmint_info(b, &ib), 0);
    assert_int_equal(ib.worker_id, ia.worker_id);
    assert_true(ib.generation > ia.generation);
    assert_true(ib.fence_found > ts_time_of(&ia.layout, last_a));
    assert_int_equal(idmint_next(b, &first_b), 0);
    assert_true(first_b > last_a);
    assert_true(ts_time_of(&ib.layout, first_b) > ib.fence_found);
    idmint_close(b);
}

static void test_lease__fifth_taker_of_two_worker_bits_gets_no_worker(void **state)
{
    struct ts_handle_fixture *f = *state;
    idmint *m[5] = {0};
    idmint_handle_info info;
    unsigned seen = 0;

    ts_create_snowflake(f, "four", "41/0/2/12");
    for (int i = 0; i < 4; i++) {
        assert_int_equal(idmint_open(&m[i], f->url, "four", NULL), 0);
        idmint_handle_info_init(&info);
        assert_int_equal(idmint_info(m[i], &info), 0);
        seen |= 1u << info.worker_id;
    }
    assert_int_equal(seen, 0xf); /* four distinct worker ids */
    assert_int_equal(idmint_open(&m[4], f->url, "four", NULL), IDMINT_ENOWORKER);
    assert_null(m[4]); /* untouched on error */
    idmint_close(m[0]);
    assert_int_equal(idmint_open(&m[4], f->url, "four", NULL), 0); /* released: reusable */
    for (int i = 1; i < 5; i++)
        idmint_close(m[i]);
}

static void test_lease__refused_renewal_makes_the_next_mint_fail(void **state)
{
    struct ts_handle_fixture *f = *state;
    idmint_options o;
    idmint *m;
    idmint_handle_info info;
    uint64_t id = 0;
    int rc = 0;

    idmint_options_init(&o);
    o.lease_ms = 2000;
    o.renew_ms = 50;
    assert_int_equal(idmint_open(&m, f->url, "default", &o), 0);
    assert_int_equal(idmint_next(m, &id), 0);
    idmint_handle_info_init(&info);
    assert_int_equal(idmint_info(m, &info), 0);
    assert_int_equal(idmint_worker_force_release(f->admin, "default", 0, info.worker_id), 0);
    /* The next renewal (within 50 ms) is refused; minting stops at once. */
    for (int i = 0; i < 400 && rc == 0; i++) {
        struct timespec ts = {0, 5000000};

        rc = idmint_next(m, &id);
        nanosleep(&ts, NULL);
    }
    assert_int_equal(rc, IDMINT_ELEASELOST);
    id = 0;
    assert_int_equal(idmint_next(m, &id), IDMINT_ELEASELOST);
    assert_int_equal(id, 0);
    idmint_close(m);
}

static void test_lease__disabled_namespace_mints_until_the_lease_end_then_fails(void **state)
{
    struct ts_handle_fixture *f = *state;
    idmint_options o;
    idmint *m;
    idmint_handle_info info;
    uint64_t id = 0, last = 0;
    int rc = 0, status = 0;

    idmint_options_init(&o);
    o.lease_ms = 3000; /* what is left of it after the refusal is seen must outlast a stall */
    o.renew_ms = 50;
    assert_int_equal(idmint_open(&m, f->url, "default", &o), 0);
    assert_int_equal(idmint_lease_status(m), 0);
    assert_int_equal(idmint_ns_set_disabled(f->admin, "default", 1), 0);
    for (int i = 0; i < 100 && status == 0; i++) {
        struct timespec ts = {0, 10000000};

        nanosleep(&ts, NULL);
        status = idmint_lease_status(m);
    }
    /* Renewal stopped, but the lease is still ours: minting goes on to E. */
    assert_int_equal(status, IDMINT_EDISABLED);
    assert_int_equal(idmint_next(m, &id), 0);
    idmint_handle_info_init(&info);
    assert_int_equal(idmint_info(m, &info), 0);
    for (int i = 0; i < 2000 && rc == 0; i++) { /* 10 s of sleeps at most */
        struct timespec ts = {0, 5000000};

        last = id;
        rc = idmint_next(m, &id);
        nanosleep(&ts, NULL);
    }
    assert_int_equal(rc, IDMINT_EDISABLED);
    /* The last ID minted lies before the E the handle held. */
    assert_true((last >> 22) < info.lease_until);
    assert_int_equal(idmint_ns_set_disabled(f->admin, "default", 0), 0);
    idmint_close(m);
}

static void test_lease__outage_mints_until_the_lease_end_then_fails(void **state)
{
    struct ts_handle_fixture *f = *state;
    char url[4096];
    idmint_options o;
    idmint *m;
    idmint_handle_info info;
    uint64_t id, last_ok = 0, deadline;
    int rc;

    assert_int_equal(ts_fault_register(), 0);
    ts_fault_reset();
    snprintf(url, sizeof(url), "fault:%s", f->url);
    idmint_options_init(&o);
    o.lease_ms = 2000;
    o.renew_ms = 100;
    assert_int_equal(idmint_open(&m, url, "default", &o), 0);
    idmint_handle_info_init(&info);
    assert_int_equal(idmint_info(m, &info), 0);
    ts_fault_set_down(1);
    deadline = (uint64_t)time(NULL) + 10;
    while ((rc = idmint_next(m, &id)) == 0) {
        last_ok = id;
        assert_true((uint64_t)time(NULL) < deadline);
    }
    assert_int_equal(rc, IDMINT_ELEASELOST);
    assert_int_not_equal(last_ok, 0);
    assert_int_equal(idmint_info(m, &info), 0);
    /* Minting went on during the outage, up to E and never at it. */
    assert_true(ts_time_of(&info.layout, last_ok) < info.lease_until);
    /* ... and well into the outage: the lease was 2 s (margin for a loaded machine). */
    assert_true(ts_time_of(&info.layout, last_ok) + 500 >= info.lease_until);
    ts_fault_set_down(0);
    idmint_close(m);
    ts_fault_reset();
}

static void test_lease__an_id_released_ahead_of_the_clock_does_not_block_others(void **state)
{
    struct ts_handle_fixture *f = *state;
    struct ts_fake_clock ahead;
    idmint_options o;
    idmint *m;
    idmint_handle_info info;
    uint64_t id;

    /* A process whose clock runs an hour ahead mints and closes cleanly,
     * releasing its id with E an hour in the future. */
    ts_fake_init(&ahead, (int64_t)time(NULL) * 1000 + 3600000);
    idmint_options_init(&o);
    o.wall_clock_ms = ts_fake_wall_ms;
    o.mono_clock_ns = ts_fake_mono_ns;
    o.clock_ctx = &ahead;
    assert_int_equal(idmint_open(&m, f->url, "default", &o), 0);
    assert_int_equal(idmint_next(m, &id), 0);
    idmint_close(m);
    /* A correct clock takes another id at once instead of waiting for it. */
    idmint_options_init(&o);
    o.clock_wait_ms = 100;
    assert_int_equal(idmint_open(&m, f->url, "default", &o), 0);
    idmint_handle_info_init(&info);
    assert_int_equal(idmint_info(m, &info), 0);
    assert_int_equal(info.worker_id, 1);
    assert_int_equal(idmint_next(m, &id), 0);
    idmint_close(m);
}

/* ==== ABI guard: idmint_handle_info's size ==== */

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, ts_handle_setup, ts_handle_teardown)
        T(test_lease__release_on_close_lets_the_next_holder_mint_after_us),
        T(test_lease__fifth_taker_of_two_worker_bits_gets_no_worker),
        T(test_lease__refused_renewal_makes_the_next_mint_fail),
        T(test_lease__disabled_namespace_mints_until_the_lease_end_then_fails),
        T(test_lease__outage_mints_until_the_lease_end_then_fails),
        T(test_lease__an_id_released_ahead_of_the_clock_does_not_block_others),
#undef T
    };
    return cmocka_run_group_tests_name("lease", tests, NULL, NULL);
}
