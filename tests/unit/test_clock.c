/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests for src/clock.c: never back, forward steps followed, the cache stays honest. */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "idmint.h"
#include "internal.h"
#include "testsupport.h"

#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int64_t realtime_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void test_clock__wall_stepped_back_is_ignored(void **state)
{
    struct ts_fake_clock fake;
    struct clock c;

    (void)state;
    ts_fake_init(&fake, 1800000000000);
    idmint__clock_init(&c, ts_fake_wall_ms, ts_fake_mono_ns, &fake);
    assert_int_equal(idmint__clock_now_ms(&c), 1800000000000);
    ts_fake_step_wall(&fake, -2000);
    assert_int_equal(idmint__clock_now_ms(&c), 1800000000000);
    ts_fake_advance(&fake, 5); /* monotonic time still moves us on */
    assert_int_equal(idmint__clock_now_ms(&c), 1800000000005);
}

static void test_clock__wall_stepped_forward_is_followed(void **state)
{
    struct ts_fake_clock fake;
    struct clock c;

    (void)state;
    ts_fake_init(&fake, 1800000000000);
    idmint__clock_init(&c, ts_fake_wall_ms, ts_fake_mono_ns, &fake);
    assert_int_equal(idmint__clock_now_ms(&c), 1800000000000);
    ts_fake_step_wall(&fake, 3600000);
    assert_int_equal(idmint__clock_now_ms(&c), 1800003600000);
    ts_fake_step_wall(&fake, -3600000); /* and never comes back */
    assert_int_equal(idmint__clock_now_ms(&c), 1800003600000);
}

static void test_clock__system_readings_track_realtime_and_never_decrease(void **state)
{
    struct clock c;
    int64_t prev = 0;
    uint64_t start = idmint__deadline_now_ms();

    (void)state;
    idmint__clock_init(&c, NULL, NULL, NULL);
    /* Run past the TSC calibration window so the cached path is exercised. */
    while (idmint__deadline_now_ms() - start < 200) {
        for (int i = 0; i < 10000; i++) {
            int64_t before = realtime_ms();
            int64_t now = idmint__clock_now_ms(&c);
            int64_t after = realtime_ms();

            assert_true(now >= prev);
            /* Within a millisecond of the system clock read around it. */
            assert_true(now >= before - 1);
            assert_true(now <= after + 1);
            prev = now;
        }
    }
}

/*
 * Read @p c densely for @p ms: 0 if a reading decreased or ran ahead of
 * CLOCK_REALTIME, else 1 with how many readings lagged it by more than a
 * millisecond (the ticker's scheduling delay) in *late of *total.
 */
static int reads_in_order(struct clock *c, uint64_t ms, long *late, long *total)
{
    uint64_t start = idmint__deadline_now_ms();
    int64_t prev = 0;

    *late = *total = 0;
    while (idmint__deadline_now_ms() - start < ms) {
        for (int i = 0; i < 1000; i++) {
            int64_t before = realtime_ms();
            int64_t now = idmint__clock_now_ms(c);
            int64_t after = realtime_ms();

            if (now < prev || now > after + 1)
                return 0;
            *late += now < before - 1;
            (*total)++;
            prev = now;
        }
    }
    return 1;
}

/*
 * Readings of @p c for @p ms: never decreasing, never ahead of
 * CLOCK_REALTIME, and (the ticker working) at least 99% of them within a
 * millisecond of it; the rest may lag by the ticker's scheduling delay.
 */
static int tracks_realtime(struct clock *c, uint64_t ms)
{
    long late, total;

    return reads_in_order(c, ms, &late, &total) && late * 100 <= total;
}

static void test_clock__process_clock_ticks_with_realtime(void **state)
{
    (void)state;
    assert_true(tracks_realtime(idmint__clock_system(), 300));
}

static void test_clock__process_clock_works_in_a_forked_child(void **state)
{
    pid_t pid;
    int status;

    (void)state;
    assert_true(tracks_realtime(idmint__clock_system(), 50)); /* the ticker is running */
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        idmint__fork_sync(); /* what idmint_open does */
        _exit(tracks_realtime(idmint__clock_system(), 300) ? 0 : 1);
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* Read the process clock once every @p gap_ms for @p ms. */
static void read_sparsely(uint64_t ms, uint32_t gap_ms)
{
    uint64_t start = idmint__deadline_now_ms();

    while (idmint__deadline_now_ms() - start < ms) {
        (void)idmint__clock_now_ms(idmint__clock_system());
        idmint__sleep_ms(gap_ms);
    }
}

static int process_clock_is_ticking(void)
{
    return atomic_load(&idmint__clock_system()->is_ticking);
}

#define DENSE_WINDOW_MS 64 /* src/clock.c's TICKER_WINDOW and TICKER_MIN_BUSY */
#define DENSE_MIN_BUSY  48

/*
 * Read densely (busy) until the ticker runs: 1 when it does, 0 when a
 * reading went out of order or the ticker did not start in 20 windows in
 * which this thread read in 48 of 64 ms (one starts it), -1
 * when in 30 s this thread never got a core for that long (a machine
 * oversubscribed twice over: the TSC path serves, and there is nothing to
 * test). An idle machine passes in milliseconds.
 */
static int ticks_when_read_densely(void)
{
    uint64_t start = idmint__deadline_now_ms();
    unsigned dense_windows = 0; /* windows in which this thread read in 48 of 64 ms */
    int64_t window_start = 0, last_ms = 0;
    int busy = 0;

    while (idmint__deadline_now_ms() - start < 30000) {
        long late, total;
        int64_t now = realtime_ms();

        if (!reads_in_order(idmint__clock_system(), 1, &late, &total))
            return 0;
        if (process_clock_is_ticking())
            return 1;
        if (now - window_start >= DENSE_WINDOW_MS) {
            window_start = now;
            busy = 0;
        }
        busy += now != last_ms;
        last_ms = now;
        if (busy == DENSE_MIN_BUSY && ++dense_windows > 20)
            return 0; /* one such window starts it: twenty is no scheduling delay */
    }
    return dense_windows == 0 ? -1 : 0;
}

/* The machine could not give a reader a core: say so, and skip. */
#define SKIP_WHEN_NEVER_DENSE(r)                                                                   \
    do {                                                                                           \
        if ((r) < 0) {                                                                             \
            print_message("no 48 of 64 ms on a core in 30 s: the machine is too busy\n");          \
            skip();                                                                                \
        }                                                                                          \
    } while (0)

/* Read every @p gap_ms until the ticker parks; 0 if it did not within 30 s. */
static int parks_when_read_sparsely(uint32_t gap_ms)
{
    for (int i = 0; i < 100; i++) {
        read_sparsely(300, gap_ms);
        if (!process_clock_is_ticking())
            return 1;
    }
    return 0;
}

/*
 * The ticker runs only while the clock is read in nearly every millisecond:
 * a process that mints every few milliseconds must not keep a thread waking
 * a thousand times a second (500 such processes filled two cores).
 */
static void test_clock__ticker_runs_only_for_dense_readers(void **state)
{
    int r;

    (void)state;
    if (!idmint__clock_system()->use_ticker)
        skip(); /* no invariant TSC: the process clock never ticks */
    /* Bounds of seconds, not of the two 64 ms windows, for loaded machines. */
    r = ticks_when_read_densely();
    SKIP_WHEN_NEVER_DENSE(r);
    assert_int_equal(r, 1);
    assert_true(parks_when_read_sparsely(5));
    read_sparsely(400, 3); /* sparse readings never restart it */
    assert_false(process_clock_is_ticking());
    r = ticks_when_read_densely();
    SKIP_WHEN_NEVER_DENSE(r);
    assert_int_equal(r, 1);
}

/*
 * A child forked while the parent's ticker was parked on its condition
 * variable inherits that variable with a waiter that does not exist in the
 * child. Its own ticker must still park and wake again. On a variable not
 * made anew, glibc handed the wakeup to the inherited waiter (this test: the
 * child's ticker never ran again) or could wait for it to leave its group,
 * which it never does (the signalling reader, and every mint behind the
 * ticker's mutex, would wedge: the likely end of the child that
 * unit.fork_gate_fallback's alarm killed once in a loaded run).
 */
#define NEVER_DENSE 77 /* the child's exit status for ticks_when_read_densely's -1 */

static void test_clock__a_child_forked_beside_a_parked_ticker_parks_and_wakes_its_own(void **state)
{
    pid_t pid;
    int status, r;

    (void)state;
#ifdef __SANITIZE_THREAD__
    /* TSan cannot start threads in the child of a threaded fork(). */
    skip();
    return;
#endif
    if (!idmint__clock_system()->use_ticker)
        skip();          /* no invariant TSC: the process clock never ticks */
    idmint__fork_sync(); /* what idmint_open does first: the fork handlers are installed */
    r = ticks_when_read_densely();
    SKIP_WHEN_NEVER_DENSE(r);
    assert_int_equal(r, 1);
    assert_true(parks_when_read_sparsely(5)); /* the ticker waits on its variable */
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        /* A wedged child fails the test instead of hanging it, inside
         * ctest's 120 s. Three rounds: with the variable inherited, one
         * round of park and wake passed here, three failed every time. */
        alarm(100);
        idmint__fork_sync(); /* what idmint_open does */
        /* The exit status names the step that failed: 10 * round + 1 the
         * ticker did not start in 30 s, + 2 it did not park. */
        for (int round = 0; round < 3; round++) {
            r = ticks_when_read_densely();
            if (r != 1)
                _exit(r < 0 ? NEVER_DENSE : 10 * round + 1);
            if (!parks_when_read_sparsely(5))
                _exit(10 * round + 2);
        }
        r = ticks_when_read_densely();
        _exit(r == 1 ? 0 : r < 0 ? NEVER_DENSE : 31);
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (WIFSIGNALED(status))
        fail_msg("the child was killed by signal %d (SIGALRM: wedged)", WTERMSIG(status));
    if (WIFEXITED(status))
        SKIP_WHEN_NEVER_DENSE(WEXITSTATUS(status) == NEVER_DENSE ? -1 : 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail_msg("the child's round %d: its ticker did not %s", WEXITSTATUS(status) / 10,
                 WEXITSTATUS(status) % 10 == 1 ? "start (or read out of order)" : "park");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clock__wall_stepped_back_is_ignored),
        cmocka_unit_test(test_clock__wall_stepped_forward_is_followed),
        cmocka_unit_test(test_clock__system_readings_track_realtime_and_never_decrease),
        cmocka_unit_test(test_clock__process_clock_ticks_with_realtime),
        cmocka_unit_test(test_clock__process_clock_works_in_a_forked_child),
        cmocka_unit_test(test_clock__ticker_runs_only_for_dense_readers),
        cmocka_unit_test(test_clock__a_child_forked_beside_a_parked_ticker_parks_and_wakes_its_own),
    };
    return cmocka_run_group_tests_name("clock", tests, NULL, NULL);
}
