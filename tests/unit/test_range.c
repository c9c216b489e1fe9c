/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tests for src/range.c (a range handle's supply) through the public API on
 * a real SQLite file and the fault store: exhaustion without wrap, disabled
 * namespaces, threads and batches that never repeat, few records gone at
 * close, a lost refill reply retried for the same range, try_next_n that
 * returns at once when dry, blocks sized to the rate and to a slow
 * authority, fixed blocks, a child forked during refills; and the request
 * ids, whose text order is their issue order.
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

/*
 * fork() while the refill thread is inside a store transaction (blocks of
 * 100, refills all the time): without the store gate the child inherits a
 * held SQLite lock with no thread to end it, and its own new handle waits
 * on it forever or fails "database is locked".
 */
static void test_range__a_child_forked_during_refills_opens_its_own_handle(void **state)
{
    struct ts_handle_fixture *f = *state;
    uint64_t *ids;
    idmint_options o;
    idmint *m;

#ifdef __SANITIZE_THREAD__
    /* TSan cannot start threads in the child of a threaded fork(). */
    skip();
    return;
#endif
    ids = malloc(5000 * sizeof(*ids));
    assert_non_null(ids);
    ts_create_range(f, "busy", 1, UINT64_C(1) << 40, 100);
    idmint_options_init(&o);
    o.range_block = 100;
    assert_int_equal(idmint_open(&m, f->url, "busy", &o), 0);
    for (int round = 0; round < 30; round++) {
        pid_t pid;
        int status;

        assert_int_equal(idmint_next_n(m, ids, 5000), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            idmint *child = NULL;
            uint64_t got[50];

            alarm(20); /* a wedged child fails the test instead of hanging it */
            if (idmint_open(&child, f->url, "busy", &o) != 0 || idmint_next_n(child, got, 50) != 0)
                _exit(1);
            idmint_close(child);
            _exit(0);
        }
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
    }
    idmint_close(m);
    free(ids);
}

static void test_range__range_reaches_its_maximum_with_exhausted_and_no_wrap(void **state)
{
    struct ts_handle_fixture *f = *state;
    idmint_options o;
    idmint *m;
    uint64_t id, expect = 5;
    int rc;

    ts_create_range(f, "small", 5, 104, 30);
    idmint_options_init(&o);
    o.deadline_ms = 5000 * ts_scale(); /* exhaustion is told at once; a refill may be slow */
    assert_int_equal(idmint_open(&m, f->url, "small", &o), 0);
    while ((rc = idmint_next(m, &id)) == 0) {
        assert_int_equal(id, expect); /* dense, in order, one thread */
        expect++;
    }
    assert_int_equal(rc, IDMINT_EEXHAUSTED);
    assert_int_equal(expect, 105); /* every value up to the maximum, none past it */
    id = 0;
    assert_int_equal(idmint_next(m, &id), IDMINT_EEXHAUSTED);
    assert_int_equal(id, 0);
    idmint_close(m);
    assert_int_equal(idmint_open(&m, f->url, "small", &o), IDMINT_EEXHAUSTED);
}

static void test_range__disabled_namespace_refuses_open_and_refill(void **state)
{
    struct ts_handle_fixture *f = *state;
    idmint_options o;
    idmint *m = NULL;
    uint64_t id, last = 0;
    int rc;

    ts_create_range(f, "orders", 1, 1000000, 100);
    idmint_options_init(&o);
    o.deadline_ms = 5000 * ts_scale(); /* a refusal is told at once; a refill may be slow */
    assert_int_equal(idmint_open(&m, f->url, "orders", &o), 0);
    assert_int_equal(idmint_ns_set_disabled(f->admin, "orders", 1), 0);
    /* Values already reserved may still be used; the next reservation is refused. */
    for (int i = 0; i < 1000 && (rc = idmint_next(m, &id)) == 0; i++) {
        assert_true(id <= 200);
        last = id;
    }
    assert_int_equal(rc, IDMINT_EDISABLED);
    idmint_close(m);
    m = NULL;
    assert_int_equal(idmint_open(&m, f->url, "orders", &o), IDMINT_EDISABLED);
    assert_null(m);
    assert_int_equal(idmint_ns_set_disabled(f->admin, "orders", 0), 0);
    assert_int_equal(idmint_open(&m, f->url, "orders", &o), 0);
    assert_int_equal(idmint_next(m, &id), 0);
    assert_true(id > last); /* a new incarnation never reuses an old range */
    idmint_close(m);
}

static void test_range__range_batch_and_threads_never_repeat(void **state)
{
    struct ts_handle_fixture *f = *state;
    idmint *m;
    enum { N = 50000 };
    uint64_t *ids = malloc(sizeof(uint64_t) * N * 2);

    assert_non_null(ids);
    ts_create_range(f, "batch", 1, UINT64_C(1) << 62, 1000);
    assert_int_equal(idmint_open(&m, f->url, "batch", NULL), 0);
    for (size_t i = 0; i < N; i += 500)
        assert_int_equal(idmint_next_n(m, ids + i, 500), 0);
    for (size_t i = N; i < 2 * N; i++)
        assert_int_equal(idmint_next(m, ids + i), 0);
    for (size_t i = 1; i < 2 * N; i++)
        assert_true(ids[i] > ids[i - 1]); /* one thread: increasing */
    assert_int_equal(ts_count_duplicates(ids, 2 * N), 0);
    assert_int_equal(idmint_next_n(m, ids, 0), IDMINT_EINVAL);
    idmint_close(m);
    free(ids);
}

/* Request records of namespace @p ns in the fixture's SQLite file. */
static long count_records(const struct ts_handle_fixture *f, const char *ns)
{
    char path[1024];
    sqlite3 *db = NULL;
    sqlite3_stmt *q = NULL;
    long n = -1;

    snprintf(path, sizeof(path), "%s/idmint.db", f->dir);
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(db, "SELECT count(*) FROM range_leases WHERE namespace = ?1", -1, &q,
                           NULL) == SQLITE_OK &&
        sqlite3_bind_text(q, 1, ns, -1, SQLITE_STATIC) == SQLITE_OK &&
        sqlite3_step(q) == SQLITE_ROW)
        n = (long)sqlite3_column_int64(q, 0);
    sqlite3_finalize(q);
    sqlite3_close(db);
    return n;
}

static void test_range__range_records_stay_few_and_go_at_close(void **state)
{
    struct ts_handle_fixture *f = *state;
    idmint *m;
    enum { BLOCK = 10, RESERVATIONS = 300, N = BLOCK * RESERVATIONS };
    uint64_t *ids = malloc(sizeof(uint64_t) * N);
    long kept;

    assert_non_null(ids);
    ts_create_range(f, "forget", 1, UINT64_C(1) << 62, BLOCK);
    assert_int_equal(idmint_open(&m, f->url, "forget", NULL), 0);
    for (size_t i = 0; i < N; i++)
        assert_int_equal(idmint_next(m, ids + i), 0);
    assert_int_equal(ts_count_duplicates(ids, N), 0);
    assert_true(ids[N - 1] >= N); /* at least 300 reservations were made */
    /* One record per reservation until the supply deletes its older ones
     * every 64 reservations; two more may be in flight or prefetched. */
    kept = count_records(f, "forget");
    assert_true(kept >= 1);
    assert_true(kept <= 64 + 2);
    idmint_close(m);
    assert_int_equal(count_records(f, "forget"), 0);
    free(ids);
}

static void test_range__lost_reply_on_refill_is_retried_for_the_same_range(void **state)
{
    struct ts_handle_fixture *f = *state;
    char url[4096];
    idmint_options o;
    idmint *m;
    uint64_t id;

    assert_int_equal(ts_fault_register(), 0);
    ts_fault_reset();
    snprintf(url, sizeof(url), "fault:%s", f->url);
    ts_create_range(f, "dense", 1, 1000000, 100);
    idmint_options_init(&o);
    assert_int_equal(idmint_open(&m, url, "dense", &o), 0);
    /* The next reservation (the first refill) is done by the store but its
     * reply is lost; the retry with the same request id must get that same
     * range back, so one thread sees 1, 2, 3 ... with no gap. */
    ts_fault_lose_reply_nth(1);
    for (uint64_t want = 1; want <= 1000; want++) {
        assert_int_equal(idmint_next(m, &id), 0);
        assert_int_equal(id, want);
    }
    assert_true(ts_fault_calls() >= 2);
    idmint_close(m);
    ts_fault_reset();
}

/*
 * A range handle's try never waits on the store: with the store down and a
 * deadline of a minute, try hands out what the reserve holds and then
 * returns at once with *got < n and a wait hint (on main it waited in the
 * refill for the whole deadline). Once the store is back, try and next_n
 * from several threads go on, and no value repeats.
 */
struct try_share {
    idmint *m;
    uint64_t ids[4000 + 16]; /* a last call may pass 4000 by its count */
    size_t n;
};

static void *try_and_next(void *arg)
{
    struct try_share *t = arg;
    uint32_t wait_ms = 0;
    size_t got = 0;

    while (t->n < 4000) {
        if (t->n % 2 == 0) {
            if (idmint_try_next_n(t->m, t->ids + t->n, 7, &got, &wait_ms) != 0)
                return NULL;
            t->n += got;
            if (got == 0) {
                struct timespec ts = {(time_t)(wait_ms / 1000), (long)(wait_ms % 1000) * 1000000L};

                nanosleep(&ts, NULL);
            }
        } else {
            if (idmint_next_n(t->m, t->ids + t->n, 9) != 0)
                return NULL;
            t->n += 9;
        }
    }
    return NULL;
}

static void test_range__range_try_returns_at_once_when_dry(void **state)
{
    struct ts_handle_fixture *f = *state;
    struct try_share share[3];
    pthread_t th[3];
    uint64_t ids[64], *all;
    uint32_t wait_ms = 0;
    size_t got = 0, drained = 0, total = 0, i, j;
    char url[4096];
    idmint_options o;
    idmint *m;

    assert_int_equal(ts_fault_register(), 0);
    ts_fault_reset();
    snprintf(url, sizeof(url), "fault:%s", f->url);
    ts_create_range(f, "dry", 1, UINT64_C(1) << 40, 100);
    idmint_options_init(&o);
    o.range_block = 100;
    o.deadline_ms = 60000; /* a try that waited would hold this test for a minute */
    assert_int_equal(idmint_open(&m, url, "dry", &o), 0);
    ts_fault_set_down(1);
    for (i = 0; i < 100; i++) {
        assert_int_equal(idmint_try_next_n(m, ids, 64, &got, &wait_ms), 0);
        drained += got;
        if (got < 64)
            break;
        assert_int_equal(wait_ms, 0);
    }
    assert_true(got < 64);           /* the reserve ran dry ... */
    assert_true(wait_ms >= 1);       /* ... and says when to look again */
    assert_true(drained <= 2 * 100); /* at most the two blocks of the double buffer */
    assert_int_equal(idmint_try_next_n(m, ids, 64, &got, &wait_ms), 0);
    assert_int_equal(got, 0);
    ts_fault_set_down(0);
    for (i = 0; i < 3; i++) {
        share[i].m = m;
        share[i].n = 0;
        assert_int_equal(pthread_create(&th[i], NULL, try_and_next, &share[i]), 0);
    }
    for (i = 0; i < 3; i++)
        assert_int_equal(pthread_join(th[i], NULL), 0);
    all = malloc(sizeof(uint64_t) * 3 * 4010);
    assert_non_null(all);
    for (i = 0; i < 3; i++) {
        assert_true(share[i].n >= 4000); /* every thread got its share once the store was back */
        for (j = 1; j < share[i].n; j++)
            assert_true(share[i].ids[j] > share[i].ids[j - 1]); /* increasing within a thread */
        memcpy(all + total, share[i].ids, share[i].n * sizeof(uint64_t));
        total += share[i].n;
    }
    assert_int_equal(ts_count_duplicates(all, total), 0);
    free(all);
    idmint_close(m);
    ts_fault_reset();
}

static void create_range_bounds(struct ts_handle_fixture *f, const char *name, uint32_t block,
                                uint32_t max_block)
{
    idmint_ns_info info;

    idmint_ns_info_init(&info, IDMINT_KIND_RANGE);
    snprintf(info.name, sizeof(info.name), "%s", name);
    info.block = block;
    info.max_block = max_block;
    assert_int_equal(idmint_ns_create(f->admin, &info), 0);
}

static void range_info(idmint *m, idmint_handle_info *info)
{
    idmint_handle_info_init(info);
    assert_int_equal(idmint_info(m, info), 0);
}

/* Mint @p n IDs, each above the one before; returns the last. */
static uint64_t mint_increasing(idmint *m, uint64_t n, uint64_t last)
{
    for (uint64_t i = 0; i < n; i++) {
        uint64_t id = 0;

        assert_int_equal(idmint_next(m, &id), 0);
        assert_true(id > last);
        last = id;
    }
    return last;
}

static void sleep_ms(long ms)
{
    nanosleep(&(struct timespec){ms / 1000, (ms % 1000) * 1000000L}, NULL);
}

/*
 * Open range namespace @p ns through the fault store with every store call
 * taking @p delay_ms and blocks sized to last @p target_ms (the caller
 * resets the fault store after closing).
 */
static idmint *open_behind_slow_store(struct ts_handle_fixture *f, const char *ns,
                                      uint32_t delay_ms, uint32_t target_ms)
{
    char url[4096];
    idmint_options o;
    idmint *m;

    assert_int_equal(ts_fault_register(), 0);
    ts_fault_reset();
    snprintf(url, sizeof(url), "fault:%s", f->url);
    idmint_options_init(&o);
    o.range_target_ms = target_ms;
    ts_fault_set_delay_ms(delay_ms);
    assert_int_equal(idmint_open(&m, url, ns, &o), 0);
    return m;
}

/*
 * A slow authority: the refill starts as soon as what is left, at the rate
 * it goes out, lasts less than twice the last answer took, not only at
 * refill_percent. Each store call takes 1 s; a fifth of the first block
 * goes out at once and a tenth more 10 ms later, past RATE_MIN_MS and
 * across a thread chunk (62 values), where the rule is checked: at that
 * rate the rest lasts about 30 ms, and it would take a stall of most of a
 * second to look slow enough to wait. Then the second reservation is asked
 * for and held though nothing more is minted, where the old rule waited for
 * half the block to be used.
 */
static void test_range__a_slow_authority_is_asked_for_the_next_block_early(void **state)
{
    struct ts_handle_fixture *f = *state;
    idmint_handle_info info;
    uint64_t last = 0;
    idmint *m;

    ts_create_range(f, "slowauth", 1, 1000000, 1000);
    m = open_behind_slow_store(f, "slowauth", 1000, 1000);
    for (int k = 0; k < 200; k++)
        last = mint_increasing(m, 1, last);
    sleep_ms(10);
    for (int k = 0; k < 100; k++)
        last = mint_increasing(m, 1, last);
    for (unsigned waited = 0; waited < 4000 * ts_scale(); waited += 50) {
        range_info(m, &info);
        if (info.range_reservations >= 2)
            break;
        sleep_ms(50);
    }
    range_info(m, &info);
    assert_int_equal(info.range_reservations, 2);
    assert_true(info.range_left > 1000); /* what was left of the first, and the second */
    idmint_close(m);
    ts_fault_reset();
}

/*
 * A slow authority gets blocks that outlast its answers: with each store
 * call taking 500 ms and range_target_ms 100, a block of 100 ms would be
 * asked for again the moment it became current and every refill would wait
 * on the authority; the next block lasts four answers (2 s) at the rate.
 */
static void test_range__a_slow_authority_gets_blocks_that_outlast_its_answers(void **state)
{
    struct ts_handle_fixture *f = *state;
    idmint_handle_info info;
    uint64_t last = 0;
    idmint *m;

    create_range_bounds(f, "slowanswers", 100, 1000000);
    m = open_behind_slow_store(f, "slowanswers", 500, 100);
    range_info(m, &info);
    for (unsigned waited = 0; waited < 3000 * ts_scale(); waited++) {
        if (info.range_reservations >= 2 && info.range_rate > 0)
            break;
        last = mint_increasing(m, 1, last);
        sleep_ms(1);
        range_info(m, &info);
    }
    assert_true(info.range_reservations >= 2);
    assert_true(info.range_rate > 0);
    /* Four answers of at least 500 ms each: 2 s at the rate, where
     * range_target_ms alone asks for a tenth of a second. */
    assert_true(info.range_block >= 2 * info.range_rate);
    idmint_close(m);
    ts_fault_reset();
}

/*
 * A fast caller's blocks grow toward max_block, so it reserves far less
 * often than one block of the namespace's size per block minted; once it
 * slows down its next block is the namespace's again. The outage budget
 * is what it holds at the rate it mints.
 */
static void test_range__range_blocks_follow_the_rate_and_the_budget_is_what_is_held(void **state)
{
    struct ts_handle_fixture *f = *state;
    idmint_handle_info info;
    idmint_options o;
    uint64_t last = 0, before;
    idmint *m;

    create_range_bounds(f, "adaptive", 1000, 50000);
    idmint_options_init(&o);
    o.range_target_ms = 200;
    assert_int_equal(idmint_open(&m, f->url, "adaptive", &o), 0);
    range_info(m, &info);
    assert_int_equal(info.range_block, 1000);
    assert_int_equal(info.range_reservations, 1);
    assert_int_equal(info.range_rate, 0);
    assert_int_equal(info.outage_budget_ms, UINT64_MAX); /* no rate seen yet */

    /* Fast: 3 M values as quickly as they come (how quickly is the
     * machine's: a sanitizer build on a loaded machine is many times slower,
     * so the checks follow the rate the handle sampled, not a figure). */
    last = mint_increasing(m, 3000000, last);
    sleep_ms(50); /* the refill thread's latest reservation lands */
    range_info(m, &info);
    assert_true(info.range_rate > 0);
    /* A block is range_target_ms (200 ms) at the rate, within 1000..50000. */
    if (info.range_rate / 5 >= 50000)
        assert_int_equal(info.range_block, 50000);
    else
        assert_true(info.range_block > 1000 && info.range_block <= 50000);
    /* Far fewer reservations than 3 M / 1000: the blocks grew. */
    assert_true(info.range_reservations < 3000000 / 1000 / 2);
    /* The budget is what is held at the sampled rate, from one snapshot. */
    assert_int_equal(info.outage_budget_ms, info.range_left * 1000 / info.range_rate);

    /* Slower: about 50,000 values a second (10,000 per 200 ms) until two
     * more reservations were made from what it held. */
    before = info.range_reservations;
    for (int round = 0; round < 1000; round++) {
        last = mint_increasing(m, 500, last);
        sleep_ms(10);
        range_info(m, &info);
        if (info.range_reservations >= before + 2)
            break;
    }
    sleep_ms(50);
    range_info(m, &info);
    assert_true(info.range_reservations >= before + 2);
    assert_true(info.range_rate < 200000);
    assert_true(info.range_block < 50000); /* shrunk back toward the namespace's 1000 */
    assert_true(info.range_block >= 1000);
    idmint_close(m);
}

/* A block the caller fixed, or a target of 0, never moves. */
static void test_range__a_fixed_block_never_grows(void **state)
{
    struct ts_handle_fixture *f = *state;
    idmint_handle_info info;
    idmint_options o;
    idmint *m;

    create_range_bounds(f, "fixed", 1000, 1000000);
    for (int k = 0; k < 2; k++) {
        idmint_options_init(&o);
        if (k == 0)
            o.range_block = 500;
        else
            o.range_target_ms = 0;
        assert_int_equal(idmint_open(&m, f->url, "fixed", &o), 0);
        (void)mint_increasing(m, 200000, 0);
        range_info(m, &info);
        assert_int_equal(info.range_block, k == 0 ? 500 : 1000);
        assert_true(info.range_reservations >= 200000 / info.range_block);
        idmint_close(m);
    }
}

static void test_range__ids_text_order_is_issue_order_across_digit_boundaries(void **state)
{
    /* Each pair straddles a place where a variable-width form gains a digit. */
    static const uint64_t edges[] = {
        0, 9, 15, 99, 255, 4095, 65535, UINT32_MAX, UINT64_MAX / 16, UINT64_MAX - 1};
    char a[IDMINT__REQUEST_ID_LEN], b[IDMINT__REQUEST_ID_LEN];

    (void)state;
    for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++) {
        idmint__range_request_id(edges[i], a);
        idmint__range_request_id(edges[i] + 1, b);
        assert_int_equal(strlen(a), IDMINT__REQUEST_ID_LEN - 1);
        assert_int_equal(strlen(b), IDMINT__REQUEST_ID_LEN - 1);
        assert_true(strcmp(a, b) < 0);
    }
}

static void test_range__ids_a_run_of_ids_is_sorted_and_distinct(void **state)
{
    char prev[IDMINT__REQUEST_ID_LEN], cur[IDMINT__REQUEST_ID_LEN];

    (void)state;
    idmint__range_request_id(0, prev);
    for (uint64_t seq = 1; seq < 100000; seq++) {
        idmint__range_request_id(seq, cur);
        assert_true(strcmp(prev, cur) < 0);
        memcpy(prev, cur, sizeof(prev));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, ts_handle_setup, ts_handle_teardown)
        T(test_range__a_child_forked_during_refills_opens_its_own_handle),
        T(test_range__range_reaches_its_maximum_with_exhausted_and_no_wrap),
        T(test_range__disabled_namespace_refuses_open_and_refill),
        T(test_range__range_batch_and_threads_never_repeat),
        T(test_range__range_records_stay_few_and_go_at_close),
        T(test_range__lost_reply_on_refill_is_retried_for_the_same_range),
        T(test_range__range_try_returns_at_once_when_dry),
        T(test_range__a_slow_authority_is_asked_for_the_next_block_early),
        T(test_range__a_slow_authority_gets_blocks_that_outlast_its_answers),
        T(test_range__range_blocks_follow_the_rate_and_the_budget_is_what_is_held),
        T(test_range__a_fixed_block_never_grows),
        T(test_range__ids_text_order_is_issue_order_across_digit_boundaries),
        T(test_range__ids_a_run_of_ids_is_sorted_and_distinct),
#undef T
    };
    return cmocka_run_group_tests_name("range", tests, NULL, NULL);
}
