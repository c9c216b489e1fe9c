/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for src/uuid7.c: order as bytes within the process, the RFC
 * 9562 version and variant, timestamps against the real clock, threads,
 * fork(), and the text form.
 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "idmint.h"
#include "internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SINGLE_COUNT  10000000u
#define BATCH         1000u
#define THREAD_COUNT  1000000u
#define FORK_COUNT    100000u
#define UUID_LEN      16u
#define RAND_TAIL_OFF 9u /* bytes 9..15: 56 of rand_b's 62 random bits, no counter */

static int64_t realtime_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void pause_us(long us)
{
    struct timespec ts = {0, us * 1000};

    nanosleep(&ts, NULL);
}

static int64_t uuid_ms(const uint8_t u[16])
{
    uint64_t ms = 0;

    for (unsigned i = 0; i < 6; i++)
        ms = ms << 8 | u[i];
    return (int64_t)ms;
}

static void assert_v7_and_variant(const uint8_t u[16])
{
    assert_int_equal(u[6] >> 4, 7);
    assert_int_equal(u[8] >> 6, 2);
}

static int cmp_uuid(const void *a, const void *b)
{
    return memcmp(a, b, UUID_LEN);
}

static int cmp_tail(const void *a, const void *b)
{
    return memcmp((const uint8_t *)a + RAND_TAIL_OFF, (const uint8_t *)b + RAND_TAIL_OFF,
                  UUID_LEN - RAND_TAIL_OFF);
}

static size_t count_equal_neighbours(uint8_t (*u)[16], size_t n,
                                     int (*cmp)(const void *, const void *))
{
    size_t dups = 0;

    qsort(u, n, UUID_LEN, cmp);
    for (size_t i = 1; i < n; i++)
        dups += cmp(u[i - 1], u[i]) == 0;
    return dups;
}

/*
 * Wait until the next UUID's time is the clock's again: a test before this
 * one may have run the timestamp ahead (more than 2,048 UUIDs in one ms).
 */
static void wait_for_the_clock(void)
{
    uint8_t u[16];

    assert_int_equal(idmint_uuid7(u), 0);
    while (uuid_ms(u) >= realtime_ms())
        pause_us(1000);
}

/* The number of UUIDs one ms is sure to hold: the counter starts below 2048. */
#define PER_MS_AT_LEAST 2048

static unsigned counter_of(const uint8_t u[16])
{
    return (unsigned)(u[6] & 0xf) << 8 | u[7];
}

static void test_uuid7__below_two_thousand_a_ms_the_time_is_the_clock(void **state)
{
    enum { ROUNDS = 1000 };
    uint8_t prev[16], cur[16];
    static unsigned char seen[PER_MS_AT_LEAST];
    unsigned distinct = 0;

    (void)state;
    wait_for_the_clock();
    assert_int_equal(idmint_uuid7(prev), 0);
    for (unsigned round = 0; round < ROUNDS; round++) {
        int64_t before = realtime_ms(), after;

        for (unsigned i = 0; i < PER_MS_AT_LEAST / 2; i++) {
            assert_int_equal(idmint_uuid7(cur), 0);
            if (i == 0) {
                /* The first UUID of a ms: its counter is the ms's random start. */
                assert_true(counter_of(cur) < PER_MS_AT_LEAST);
                distinct += !seen[counter_of(cur)];
                seen[counter_of(cur)] = 1;
            }
            if (memcmp(prev, cur, UUID_LEN) >= 0 || cur[6] >> 4 != 7 || cur[8] >> 6 != 2)
                fail_msg("round %u, UUID %u is not a v7 UUID above the previous one", round, i);
            memcpy(prev, cur, UUID_LEN);
        }
        after = realtime_ms();
        if (uuid_ms(cur) < before - 1 || uuid_ms(cur) > after + 1)
            fail_msg("round %u: ms %lld outside [%lld, %lld]", round, (long long)uuid_ms(cur),
                     (long long)before - 1, (long long)after + 1);
        /* At most 1,024 UUIDs a ms: never a rollover, so never ahead. */
        while (realtime_ms() == after)
            pause_us(100);
    }
    /* 1,000 starts drawn from 2,048 values give about 790 distinct ones; a
     * counter that started at a fixed or guessable place would give few. */
    if (distinct < 600)
        fail_msg("the counter started at only %u distinct values in %d ms", distinct, ROUNDS);
}

static void test_uuid7__ten_million_increase_and_run_ahead_only_as_needed(void **state)
{
    uint8_t prev[16], cur[16];
    int64_t start;

    (void)state;
    wait_for_the_clock();
    start = realtime_ms();
    assert_int_equal(idmint_uuid7(prev), 0);
    for (unsigned done = 0; done < SINGLE_COUNT; done += BATCH) {
        int64_t before = realtime_ms(), after, ms, ahead_limit;

        for (unsigned i = 0; i < BATCH; i++) {
            assert_int_equal(idmint_uuid7(cur), 0);
            if (memcmp(prev, cur, UUID_LEN) >= 0 || cur[6] >> 4 != 7 || cur[8] >> 6 != 2)
                fail_msg("UUID %u is not a v7 UUID above the previous one", done + i);
            memcpy(prev, cur, UUID_LEN);
        }
        after = realtime_ms();
        ms = uuid_ms(cur);
        /* Never behind the clock; ahead of it by no more than the ms that
         * the rollovers of the UUIDs made so far can have cost (RFC 9562
         * §6.2): one per 2,048 at most, and one for a ms started at the end. */
        ahead_limit = start + (int64_t)(done + BATCH) / PER_MS_AT_LEAST;
        if (ahead_limit < after)
            ahead_limit = after;
        if (ms < before - 1 || ms > ahead_limit + 2)
            fail_msg("UUID %u: ms %lld, clock [%lld, %lld], limit %lld", done + BATCH,
                     (long long)ms, (long long)before, (long long)after, (long long)ahead_limit);
    }
    /* Ahead by whatever the loop made: once the clock passes it, the time
     * is the clock's again. */
    while (realtime_ms() <= uuid_ms(prev))
        pause_us(1000);
    {
        int64_t before = realtime_ms();

        assert_int_equal(idmint_uuid7(cur), 0);
        assert_true(uuid_ms(cur) >= before - 1 && uuid_ms(cur) <= realtime_ms() + 1);
    }
}

static void test_uuid7__batch_continues_the_order_and_refuses_null(void **state)
{
    enum { N = 100000 };
    uint8_t(*u)[16] = malloc((size_t)N * UUID_LEN);
    uint8_t before[16], after[16], none[16];

    (void)state;
    assert_non_null(u);
    assert_int_equal(idmint_uuid7(before), 0);
    assert_int_equal(idmint_uuid7_n(u, N), 0);
    assert_int_equal(idmint_uuid7(after), 0);
    assert_true(memcmp(before, u[0], UUID_LEN) < 0);
    for (size_t i = 1; i < N; i++)
        if (memcmp(u[i - 1], u[i], UUID_LEN) >= 0)
            fail_msg("batch UUID %zu does not increase", i);
    assert_true(memcmp(u[N - 1], after, UUID_LEN) < 0);
    for (size_t i = 0; i < N; i++)
        assert_v7_and_variant(u[i]);
    assert_int_equal(count_equal_neighbours(u, N, cmp_tail), 0);

    assert_int_equal(idmint_uuid7_n(NULL, 0), 0);
    assert_int_equal(idmint_uuid7_n(u, 0), 0);
    idmint__errmsg_clear();
    assert_int_equal(idmint_uuid7_n(NULL, 1), IDMINT_EINVAL);
    assert_true(strlen(idmint_errmsg()) > 0);
    /* A refused call takes no UUID: the next one follows the last given. */
    assert_int_equal(idmint_uuid7(none), 0);
    assert_true(memcmp(after, none, UUID_LEN) < 0);
    free(u);
}

struct minter_thread {
    pthread_t thread;
    uint8_t (*out)[16];
    int rc;
};

static void *produce(void *arg)
{
    struct minter_thread *w = arg;

    for (unsigned i = 0; i < THREAD_COUNT; i++) {
        w->rc = idmint_uuid7(w->out[i]);
        if (w->rc != 0)
            break;
    }
    return NULL;
}

static void test_uuid7__two_threads_distinct_and_each_increasing(void **state)
{
    struct minter_thread w[2];
    uint8_t(*all)[16] = malloc(2 * (size_t)THREAD_COUNT * UUID_LEN);

    (void)state;
    assert_non_null(all);
    for (int t = 0; t < 2; t++) {
        w[t].out = all + (size_t)t * THREAD_COUNT;
        w[t].rc = -1;
        assert_int_equal(pthread_create(&w[t].thread, NULL, produce, &w[t]), 0);
    }
    for (int t = 0; t < 2; t++) {
        assert_int_equal(pthread_join(w[t].thread, NULL), 0);
        assert_int_equal(w[t].rc, 0);
        for (unsigned i = 1; i < THREAD_COUNT; i++)
            if (memcmp(w[t].out[i - 1], w[t].out[i], UUID_LEN) >= 0)
                fail_msg("thread %d: UUID %u does not increase", t, i);
    }
    for (size_t i = 0; i < 2 * (size_t)THREAD_COUNT; i++)
        assert_v7_and_variant(all[i]);
    assert_int_equal(count_equal_neighbours(all, 2 * (size_t)THREAD_COUNT, cmp_uuid), 0);
    free(all);
}

static int write_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;

    while (len > 0) {
        ssize_t n = write(fd, p, len);

        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static int read_all(int fd, void *buf, size_t len)
{
    char *p = buf;

    while (len > 0) {
        ssize_t n = read(fd, p, len);

        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static void test_uuid7__fork_child_never_repeats_the_parent(void **state)
{
    uint8_t first[16];
    uint8_t(*all)[16] = malloc(2 * (size_t)FORK_COUNT * UUID_LEN);
    int fds[2], status = 0;
    pid_t pid;

    (void)state;
    assert_non_null(all);
    /* Leave the parent with random bytes in its pool, which the child inherits. */
    assert_int_equal(idmint_uuid7(first), 0);
    assert_int_equal(pipe(fds), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int ok = 1;

        close(fds[0]);
        for (unsigned i = 0; i < FORK_COUNT && ok; i++)
            ok = idmint_uuid7(all[i]) == 0;
        ok = ok && write_all(fds[1], all, (size_t)FORK_COUNT * UUID_LEN) == 0;
        _exit(ok ? 0 : 1);
    }
    close(fds[1]);
    for (unsigned i = 0; i < FORK_COUNT; i++)
        assert_int_equal(idmint_uuid7(all[FORK_COUNT + i]), 0);
    assert_int_equal(read_all(fds[0], all, (size_t)FORK_COUNT * UUID_LEN), 0);
    close(fds[0]);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);

    for (unsigned i = 1; i < FORK_COUNT; i++) {
        assert_true(memcmp(all[i - 1], all[i], UUID_LEN) < 0);
        assert_true(memcmp(all[FORK_COUNT + i - 1], all[FORK_COUNT + i], UUID_LEN) < 0);
    }
    /* Reused pool bytes would show as equal random tails even where the
     * counters differ, so tails are checked as well as whole UUIDs. */
    assert_int_equal(count_equal_neighbours(all, 2 * (size_t)FORK_COUNT, cmp_uuid), 0);
    assert_int_equal(count_equal_neighbours(all, 2 * (size_t)FORK_COUNT, cmp_tail), 0);
    free(all);
}

/*
 * A child that forks again before it ever calls into the library: the
 * grandchild holds the same copy of the parent's stream as the child, and
 * neither may give out what the other or the parent does.
 */
static void test_uuid7__grandchild_of_a_silent_child_repeats_no_one(void **state)
{
    uint8_t first[16];
    uint8_t(*all)[16] = malloc(3 * (size_t)FORK_COUNT * UUID_LEN);
    int fds[2][2], status = 0;
    pid_t child;

    (void)state;
    assert_non_null(all);
    assert_int_equal(idmint_uuid7(first), 0);
    assert_int_equal(pipe(fds[0]), 0);
    assert_int_equal(pipe(fds[1]), 0);
    child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        pid_t grandchild = fork(); /* before any call of the library */
        int slot = grandchild == 0 ? 1 : 0, ok = grandchild >= 0, gstatus = 0;

        close(fds[0][0]);
        close(fds[1][0]);
        for (unsigned i = 0; i < FORK_COUNT && ok; i++)
            ok = idmint_uuid7(all[i]) == 0;
        ok = ok && write_all(fds[slot][1], all, (size_t)FORK_COUNT * UUID_LEN) == 0;
        if (grandchild > 0)
            ok = ok && waitpid(grandchild, &gstatus, 0) == grandchild && WIFEXITED(gstatus) &&
                 WEXITSTATUS(gstatus) == 0;
        _exit(ok ? 0 : 1);
    }
    close(fds[0][1]);
    close(fds[1][1]);
    for (unsigned i = 0; i < FORK_COUNT; i++)
        assert_int_equal(idmint_uuid7(all[2 * FORK_COUNT + i]), 0);
    assert_int_equal(read_all(fds[0][0], all, (size_t)FORK_COUNT * UUID_LEN), 0);
    assert_int_equal(read_all(fds[1][0], all + FORK_COUNT, (size_t)FORK_COUNT * UUID_LEN), 0);
    close(fds[0][0]);
    close(fds[1][0]);
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_int_equal(count_equal_neighbours(all, 3 * (size_t)FORK_COUNT, cmp_uuid), 0);
    assert_int_equal(count_equal_neighbours(all, 3 * (size_t)FORK_COUNT, cmp_tail), 0);
    free(all);
}

static void test_uuid7__text_round_trips_in_either_case(void **state)
{
    uint8_t u[16], back[16];
    char text[37], upper[37];

    (void)state;
    for (int n = 0; n < 1000; n++) {
        assert_int_equal(idmint_uuid7(u), 0);
        idmint_uuid_format(u, text);
        assert_int_equal(strlen(text), 36);
        assert_true(text[8] == '-' && text[13] == '-' && text[18] == '-' && text[23] == '-');
        assert_int_equal(text[14], '7');
        for (size_t i = 0; i < 36; i++)
            assert_true(text[i] == '-' || (text[i] >= '0' && text[i] <= '9') ||
                        (text[i] >= 'a' && text[i] <= 'f'));
        assert_int_equal(idmint_uuid_parse(text, back), 0);
        assert_memory_equal(u, back, UUID_LEN);
        for (size_t i = 0; i <= 36; i++)
            upper[i] = text[i] >= 'a' && text[i] <= 'f' ? (char)(text[i] - 'a' + 'A') : text[i];
        memset(back, 0, sizeof(back));
        assert_int_equal(idmint_uuid_parse(upper, back), 0);
        assert_memory_equal(u, back, UUID_LEN);
    }
}

static void test_uuid7__format_matches_a_known_value(void **state)
{
    /* RFC 9562 Appendix A.6 example UUIDv7. */
    static const uint8_t u[16] = {0x01, 0x7f, 0x22, 0xe2, 0x79, 0xb0, 0x7c, 0xc3,
                                  0x98, 0xc4, 0xdc, 0x0c, 0x0c, 0x07, 0x39, 0x8f};
    char text[37];
    uint8_t back[16];

    (void)state;
    idmint_uuid_format(u, text);
    assert_string_equal(text, "017f22e2-79b0-7cc3-98c4-dc0c0c07398f");
    assert_int_equal(idmint_uuid_parse("017F22E2-79B0-7CC3-98C4-DC0C0C07398F", back), 0);
    assert_memory_equal(u, back, UUID_LEN);
}

static void test_uuid7__parse_refuses_bad_text(void **state)
{
    static const char *const bad[] = {
        "",
        "017f22e2-79b0-7cc3-98c4-dc0c0c07398",   /* too short */
        "017f22e2-79b0-7cc3-98c4-dc0c0c07398f0", /* too long */
        "017f22e2-79b0-7cc3-98c4-dc0c0c07398g",  /* bad hex */
        "017f22e2-79b0-7cc3-98c4-dc0c0c07398 ",
        "017f22e2-79b0-7cc3-98c4dc0c-0c07398f", /* misplaced dash */
        "017f22e279b0-7cc3-98c4-dc0c0c07398f-",
        "017f22e2_79b0_7cc3_98c4_dc0c0c07398f",
        "017f22e279b07cc398c4dc0c0c07398f", /* no dashes */
        "{017f22e2-79b0-7cc3-98c4-dc0c0c07398f}",
        " 017f22e2-79b0-7cc3-98c4-dc0c0c07398f",
        "017f22e2-79b0-7cc3-98c4-dc0c0c07398f\n",
        "+17f22e2-79b0-7cc3-98c4-dc0c0c07398f",
        "017f22e2--79b0-7cc3-98c4-dc0c0c07398",
    };
    uint8_t out[16], before[16];

    (void)state;
    memset(out, 0xee, sizeof(out));
    memcpy(before, out, sizeof(out));
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        idmint__errmsg_clear();
        assert_int_equal(idmint_uuid_parse(bad[i], out), IDMINT_EINVAL);
        assert_true(strlen(idmint_errmsg()) > 0);
        assert_memory_equal(out, before, sizeof(out));
    }
    assert_int_equal(idmint_uuid_parse(NULL, out), IDMINT_EINVAL);
    assert_memory_equal(out, before, sizeof(out));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_uuid7__below_two_thousand_a_ms_the_time_is_the_clock),
        cmocka_unit_test(test_uuid7__ten_million_increase_and_run_ahead_only_as_needed),
        cmocka_unit_test(test_uuid7__batch_continues_the_order_and_refuses_null),
        cmocka_unit_test(test_uuid7__two_threads_distinct_and_each_increasing),
        cmocka_unit_test(test_uuid7__fork_child_never_repeats_the_parent),
        cmocka_unit_test(test_uuid7__grandchild_of_a_silent_child_repeats_no_one),
        cmocka_unit_test(test_uuid7__text_round_trips_in_either_case),
        cmocka_unit_test(test_uuid7__format_matches_a_known_value),
        cmocka_unit_test(test_uuid7__parse_refuses_bad_text),
    };
    return cmocka_run_group_tests_name("uuid7", tests, NULL, NULL);
}
