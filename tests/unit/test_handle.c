/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tests for src/handle.c through the public API on a real SQLite file: IDs
 * increase, sequence waits are counted and sleep, try_next_n never waits,
 * a forked child cannot mint from its parent's handle, bad options and
 * names are refused, and the guarded sizes of info and options hold.
 * The lease's rules are test_lease.c's, the range supply's test_range.c's.
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

static void test_handle__default_namespace_mints_increasing_ids(void **state)
{
    struct ts_handle_fixture *f = *state;
    idmint *m;
    uint64_t prev = 0, id;
    idmint_handle_info info;

    assert_int_equal(idmint_open(&m, f->url, "default", NULL), 0);
    for (int i = 0; i < 100000; i++) {
        assert_int_equal(idmint_next(m, &id), 0);
        assert_true(id > prev);
        prev = id;
    }
    idmint_handle_info_init(&info);
    assert_int_equal(idmint_info(m, &info), 0);
    assert_int_equal(info.is_range, 0);
    assert_true(ts_time_of(&info.layout, id) < info.lease_until);
    idmint_close(m);
}

/* Two IDs per ms: 200 of them wait for the clock about 100 times, and say so. */
static void test_handle__sequence_waits_are_counted(void **state)
{
    struct ts_handle_fixture *f = *state;
    idmint *m;
    uint64_t prev = 0, id;
    idmint_handle_info info;

    ts_create_snowflake(f, "narrow", "41/0/2/1");
    assert_int_equal(idmint_open(&m, f->url, "narrow", NULL), 0);
    idmint_handle_info_init(&info);
    assert_int_equal(idmint_info(m, &info), 0);
    assert_int_equal(info.sequence_waits, 0);
    for (int i = 0; i < 200; i++) {
        assert_int_equal(idmint_next(m, &id), 0);
        assert_true(id > prev);
        prev = id;
    }
    assert_int_equal(idmint_info(m, &info), 0);
    /* At most one wait per call; at least one per full ms after the first. */
    assert_true(info.sequence_waits >= 50); /* slack for a preempted, sanitized run */
    assert_true(info.sequence_waits <= 200);
    idmint_close(m);
}

/* Process CPU time in ms: every thread of this process. */
static double cpu_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static double wall_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/*
 * Two IDs per 250 ms unit: eight IDs wait out three or four units. The wait
 * sleeps, so the process uses a small part of a core meanwhile; spinning
 * (or yielding, on an idle core) used all of it.
 */
static void test_handle__a_sequence_wait_sleeps_instead_of_spinning(void **state)
{
    struct ts_handle_fixture *f = *state;
    idmint *m;
    uint64_t prev = 0, id;
    double wall0, cpu0, wall, cpu;

    ts_create_snowflake_unit(f, "slow-units", "41/0/2/1", 250);
    assert_int_equal(idmint_open(&m, f->url, "slow-units", NULL), 0);
    wall0 = wall_ms();
    cpu0 = cpu_ms();
    for (int i = 0; i < 8; i++) {
        assert_int_equal(idmint_next(m, &id), 0);
        assert_true(id > prev);
        prev = id;
    }
    wall = wall_ms() - wall0;
    cpu = cpu_ms() - cpu0;
    printf("8 IDs at two per 250 ms unit: %.0f ms wall, %.1f ms CPU\n", wall, cpu);
    assert_true(wall >= 500); /* it did wait: at least two whole units */
    assert_true(cpu < wall / 4);
    idmint_close(m);
}

/*
 * Two IDs per 250 ms unit: idmint_try_next_n hands out what the unit holds
 * and says how long to wait instead of waiting; called early it mints
 * nothing. Across units the IDs stay increasing and none repeats.
 */
static void test_handle__try_next_n_never_waits_and_says_how_long(void **state)
{
    struct ts_handle_fixture *f = *state;
    idmint *m;
    uint64_t ids[8], prev = 0;
    size_t got = 99, done = 0;
    uint32_t wait_ms = 99;
    double t0, took;

    ts_create_snowflake_unit(f, "try-units", "41/0/2/1", 250);
    assert_int_equal(idmint_open(&m, f->url, "try-units", NULL), 0);

    assert_int_equal(idmint_try_next_n(NULL, ids, 1, &got, &wait_ms), IDMINT_EINVAL);
    assert_int_equal(idmint_try_next_n(m, ids, 0, &got, &wait_ms), IDMINT_EINVAL);
    assert_int_equal(idmint_try_next_n(m, ids, 1, NULL, &wait_ms), IDMINT_EINVAL);
    assert_int_equal(idmint_try_next_n(m, ids, 1, &got, NULL), IDMINT_EINVAL);
    assert_int_equal(got, 99); /* nothing written on failure */

    t0 = wall_ms();
    while (done < 8) {
        double call0 = wall_ms();

        assert_int_equal(idmint_try_next_n(m, ids + done, 8 - done, &got, &wait_ms), 0);
        assert_true(wall_ms() - call0 < 200); /* never sleeps out a unit (250 ms) */
        assert_true(got <= 8 - done);
        assert_true(got == 8 - done ? wait_ms == 0 : wait_ms >= 1 && wait_ms <= 50);
        done += got;
        if (got == 0) {
            /* Early again: still nothing, and a wait again. */
            assert_int_equal(idmint_try_next_n(m, ids + done, 8 - done, &got, &wait_ms), 0);
            if (got == 0)
                assert_true(wait_ms >= 1);
            done += got;
            idmint__sleep_ms(wait_ms);
        }
    }
    took = wall_ms() - t0;
    for (size_t i = 0; i < 8; i++) {
        assert_true(ids[i] > prev);
        prev = ids[i];
    }
    printf("8 IDs at two per 250 ms unit by try_next_n: %.0f ms\n", took);
    assert_true(took >= 500); /* the units did pass: no ID came early */
    idmint_close(m);
}

static void test_handle__forked_child_cannot_mint_while_the_parent_goes_on(void **state)
{
    struct ts_handle_fixture *f = *state;
    idmint *m;
    uint64_t id;
    pid_t pid;
    int status;

    assert_int_equal(idmint_open(&m, f->url, "default", NULL), 0);
    assert_int_equal(idmint_next(m, &id), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        uint64_t child_id = 0;
        int rc = idmint_next(m, &child_id);
        int rc_n = idmint_next_n(m, &child_id, 1);

        idmint_close(m); /* frees memory only; the parent's lease stays */
        _exit(rc == IDMINT_EFORKED && rc_n == IDMINT_EFORKED && child_id == 0 ? 0 : 1);
    }
    for (int i = 0; i < 1000; i++)
        assert_int_equal(idmint_next(m, &id), 0);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_int_equal(idmint_next(m, &id), 0); /* the child left the lease alone */
    idmint_close(m);
}

static void test_handle__bad_options_and_unknown_namespace_are_refused(void **state)
{
    struct ts_handle_fixture *f = *state;
    idmint_options o;
    idmint *m = NULL;

    idmint_options_init(&o);
    o.renew_ms = o.lease_ms;
    assert_int_equal(idmint_open(&m, f->url, "default", &o), IDMINT_EINVAL);
    assert_true(strlen(idmint_errmsg()) > 0);
    assert_int_equal(idmint_open(&m, f->url, "nosuch", NULL), IDMINT_ENOTFOUND);
    assert_int_equal(idmint_open(&m, f->url, "Bad/Name", NULL), IDMINT_EINVAL);
    idmint_options_init(&o);
    o.region = 1; /* the default layout has no region bits */
    assert_int_equal(idmint_open(&m, f->url, "default", &o), IDMINT_EINVAL);
    assert_null(m);
}

/*
 * idmint_handle_info as a program built against a header with fewer members
 * would declare it: a strict prefix of today's, ending at the incarnation.
 */
struct handle_info_prefix {
    size_t size;
    int is_range;
    uint32_t region;
    uint32_t worker_id;
    uint64_t generation;
    uint64_t fence_found;
    uint64_t lease_until;
    uint64_t last_time;
    idmint_layout layout;
    uint64_t range_left;
    char incarnation[33];
};

/* A caller's struct followed by bytes nobody may write. */
struct handle_info_fenced {
    idmint_handle_info info;
    unsigned char canary[32];
};

static void assert_canary(const unsigned char *canary, size_t len)
{
    for (size_t k = 0; k < len; k++)
        assert_int_equal(canary[k], 0xa5);
}

static void test_handle__info_refuses_a_size_not_set_up(void **state)
{
    struct ts_handle_fixture *f = *state;
    const size_t bad[] = {
        0,       1, sizeof(size_t), IDMINT__HANDLE_INFO_SIZE_V1 - 1, sizeof(idmint_handle_info) + 1,
        SIZE_MAX};
    idmint_handle_info info, before;
    idmint *m;

    assert_int_equal(idmint_open(&m, f->url, "default", NULL), 0);
    for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
        memset(&info, 0x33, sizeof(info));
        info.size = bad[k];
        before = info;
        assert_int_equal(idmint_info(m, &info), IDMINT_EINVAL);
        assert_non_null(
            strstr(idmint_errmsg(), "idmint_handle_info not set up by idmint_handle_info_init()"));
        assert_memory_equal(&info, &before, sizeof(info));
    }
    assert_int_equal(idmint_info(m, NULL), IDMINT_EINVAL);
    idmint_handle_info_init(NULL);
    idmint_handle_info_init(&info);
    assert_int_equal(info.size, sizeof(info));
    assert_int_equal(info.worker_id, 0);
    assert_int_equal(idmint_info(NULL, &info), IDMINT_EINVAL);
    idmint_close(m);
}

/*
 * The first guarded idmint_handle_info is today's whole struct: a strict
 * prefix (no program was ever built with one) is refused with nothing
 * written; exactly that size is filled and the byte after it never touched.
 */
static void test_handle__info_takes_the_first_guarded_size_and_writes_no_further(void **state)
{
    struct ts_handle_fixture *f = *state;
    struct {
        struct handle_info_prefix info;
        unsigned char canary[32];
    } old;
    struct handle_info_fenced cur;
    idmint *m;

    /* 0.2 appended members: a struct of the first guarded size is a real
     * caller built against the 0.1 header, served without a byte more. */
    assert_true(IDMINT__HANDLE_INFO_SIZE_V1 < sizeof(idmint_handle_info));
    assert_int_equal(offsetof(struct handle_info_fenced, canary), sizeof(idmint_handle_info));
    assert_int_equal(idmint_open(&m, f->url, "default", NULL), 0);

    memset(&old, 0xa5, sizeof(old));
    old.info.size = sizeof(old.info);
    assert_true(sizeof(old.info) < IDMINT__HANDLE_INFO_SIZE_V1);
    assert_int_equal(idmint_info(m, (idmint_handle_info *)(void *)&old), IDMINT_EINVAL);
    assert_int_equal(old.info.size, sizeof(old.info));
    assert_canary((const unsigned char *)&old + sizeof(size_t), sizeof(old) - sizeof(size_t));

    memset(&cur, 0xa5, sizeof(cur));
    cur.info.size = IDMINT__HANDLE_INFO_SIZE_V1;
    assert_int_equal(idmint_info(m, &cur.info), 0);
    assert_int_equal(cur.info.size, IDMINT__HANDLE_INFO_SIZE_V1);
    assert_int_equal(cur.info.is_range, 0);
    assert_int_equal(strlen(cur.info.incarnation), 32);
    assert_true(cur.info.lease_until > 0);
    /* Not a byte past the 0.1 struct: the members appended in 0.2 stay untouched. */
    assert_canary((const unsigned char *)&cur.info + IDMINT__HANDLE_INFO_SIZE_V1,
                  sizeof(cur) - IDMINT__HANDLE_INFO_SIZE_V1);

    /* The 0.2 struct gets them: a snowflake lease's outage budget is its time left. */
    memset(&cur, 0xa5, sizeof(cur));
    idmint_handle_info_init(&cur.info);
    assert_int_equal(cur.info.size, sizeof(idmint_handle_info));
    assert_int_equal(idmint_info(m, &cur.info), 0);
    assert_true(cur.info.outage_budget_ms > 0);
    assert_true(cur.info.outage_budget_ms <= 600000);
    assert_canary(cur.canary, sizeof(cur.canary));
    idmint_close(m);
}

/* Options are read as far as their size says, and a size nobody set up is refused before any store
 * call. */
static void test_handle__options_refuse_a_size_not_set_up(void **state)
{
    struct ts_handle_fixture *f = *state;
    const size_t bad[] = {0, sizeof(size_t), IDMINT__OPTIONS_SIZE_V1 - 1,
                          sizeof(idmint_options) + 1, SIZE_MAX};
    idmint_options o;
    idmint *m = NULL;

    for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
        idmint_options_init(&o);
        o.size = bad[k];
        assert_int_equal(idmint_open(&m, f->url, "default", &o), IDMINT_EINVAL);
        assert_non_null(
            strstr(idmint_errmsg(), "idmint_options not set up by idmint_options_init()"));
        assert_null(m);
    }
    idmint_options_init(&o);
    assert_int_equal(o.size, sizeof(idmint_options));
    assert_int_equal(o.range_target_ms, 1000);
    o.lease_ms = 5000;
    o.renew_ms = 1000;
    assert_int_equal(idmint_open(&m, f->url, "default", &o), 0);
    idmint_close(m);
    /* A program built against the 0.1 header: its struct ends before range_target_ms,
     * and whatever lies beyond is not read (the default applies). */
    (idmint_options_init)(&o);
    assert_int_equal(o.size, IDMINT__OPTIONS_SIZE_V1);
    memset((char *)&o + IDMINT__OPTIONS_SIZE_V1, 0xff, sizeof(o) - IDMINT__OPTIONS_SIZE_V1);
    assert_int_equal(idmint_open(&m, f->url, "default", &o), 0);
    idmint_close(m);
}

/* ==== range blocks sized to the caller's rate (DESIGN.md §5) ==== */

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, ts_handle_setup, ts_handle_teardown)
        T(test_handle__default_namespace_mints_increasing_ids),
        T(test_handle__sequence_waits_are_counted),
        T(test_handle__a_sequence_wait_sleeps_instead_of_spinning),
        T(test_handle__try_next_n_never_waits_and_says_how_long),
        T(test_handle__forked_child_cannot_mint_while_the_parent_goes_on),
        T(test_handle__bad_options_and_unknown_namespace_are_refused),
        T(test_handle__info_refuses_a_size_not_set_up),
        T(test_handle__info_takes_the_first_guarded_size_and_writes_no_further),
        T(test_handle__options_refuse_a_size_not_set_up),
#undef T
    };
    return cmocka_run_group_tests_name("handle", tests, NULL, NULL);
}
