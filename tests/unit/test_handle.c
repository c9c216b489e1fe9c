/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tests for src/handle.c, lease.c and range.c through the public API on a
 * real SQLite file: the fence, lost and expired leases, outages, fork(),
 * no free worker, range exhaustion and disabled namespaces.
 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "idmint.h"
#include "fault_store.h"
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

struct fixture {
    char *dir;
    char *url;
    idmint_authority *admin;
};

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));

    if (f == NULL)
        return -1;
    f->dir = ts_tempdir();
    f->url = ts_sqlite_url(f->dir, "idmint.db");
    if (idmint_authority_open(&f->admin, f->url, 0) != 0)
        return -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;

    idmint_authority_close(f->admin);
    free(f->url);
    ts_rmtree(f->dir);
    free(f);
    return 0;
}

/* A snowflake namespace; @p unit_ms 0 keeps the layout's own time unit. */
static void create_snowflake_unit(struct fixture *f, const char *name, const char *layout,
                                  uint32_t unit_ms)
{
    idmint_ns_info info;

    idmint_ns_info_init(&info, IDMINT_KIND_SNOWFLAKE);
    snprintf(info.name, sizeof(info.name), "%s", name);
    assert_int_equal(idmint_layout_parse(layout, &info.layout), 0);
    if (unit_ms != 0)
        info.layout.unit_ms = unit_ms;
    assert_int_equal(idmint_ns_create(f->admin, &info), 0);
}

static void create_snowflake(struct fixture *f, const char *name, const char *layout)
{
    create_snowflake_unit(f, name, layout, 0);
}

static void create_range(struct fixture *f, const char *name, uint64_t start, uint64_t max,
                         uint32_t block)
{
    idmint_ns_info info;

    idmint_ns_info_init(&info, IDMINT_KIND_RANGE);
    snprintf(info.name, sizeof(info.name), "%s", name);
    info.next_value = start;
    info.max_value = max;
    info.block = block;
    info.max_block = block;
    assert_int_equal(idmint_ns_create(f->admin, &info), 0);
}

static uint64_t time_of(const idmint_layout *l, uint64_t id)
{
    return id >> (l->region_bits + l->worker_bits + l->sequence_bits);
}

static void test_handle__default_namespace_mints_increasing_ids(void **state)
{
    struct fixture *f = *state;
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
    assert_true(time_of(&info.layout, id) < info.lease_until);
    idmint_close(m);
}

/* Two IDs per ms: 200 of them wait for the clock about 100 times, and say so. */
static void test_handle__sequence_waits_are_counted(void **state)
{
    struct fixture *f = *state;
    idmint *m;
    uint64_t prev = 0, id;
    idmint_handle_info info;

    create_snowflake(f, "narrow", "41/0/2/1");
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
    struct fixture *f = *state;
    idmint *m;
    uint64_t prev = 0, id;
    double wall0, cpu0, wall, cpu;

    create_snowflake_unit(f, "slow-units", "41/0/2/1", 250);
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
    struct fixture *f = *state;
    idmint *m;
    uint64_t ids[8], prev = 0;
    size_t got = 99, done = 0;
    uint32_t wait_ms = 99;
    double t0, took;

    create_snowflake_unit(f, "try-units", "41/0/2/1", 250);
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
        assert_true(wall_ms() - call0 < 100); /* never sleeps out a unit */
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

static void test_handle__release_on_close_lets_the_next_holder_mint_after_us(void **state)
{
    struct fixture *f = *state;
    idmint *a, *b;
    uint64_t last_a = 0, first_b;
    idmint_handle_info ia, ib;

    create_snowflake(f, "solo", "41/0/0/12"); /* one worker id */
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
    assert_true(ib.fence_found > time_of(&ia.layout, last_a));
    assert_int_equal(idmint_next(b, &first_b), 0);
    assert_true(first_b > last_a);
    assert_true(time_of(&ib.layout, first_b) > ib.fence_found);
    idmint_close(b);
}

static void test_handle__fifth_taker_of_two_worker_bits_gets_no_worker(void **state)
{
    struct fixture *f = *state;
    idmint *m[5] = {0};
    idmint_handle_info info;
    unsigned seen = 0;

    create_snowflake(f, "four", "41/0/2/12");
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

static void test_handle__refused_renewal_makes_the_next_mint_fail(void **state)
{
    struct fixture *f = *state;
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

static void test_handle__disabled_namespace_mints_until_the_lease_end_then_fails(void **state)
{
    struct fixture *f = *state;
    idmint_options o;
    idmint *m;
    idmint_handle_info info;
    uint64_t id = 0, last = 0;
    int rc = 0, status = 0;

    idmint_options_init(&o);
    o.lease_ms = 1000;
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
    for (int i = 0; i < 400 && rc == 0; i++) {
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

static void test_handle__outage_mints_until_the_lease_end_then_fails(void **state)
{
    struct fixture *f = *state;
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
    assert_true(time_of(&info.layout, last_ok) < info.lease_until);
    /* ... and well into the outage: the lease was 2 s (margin for a loaded machine). */
    assert_true(time_of(&info.layout, last_ok) + 500 >= info.lease_until);
    ts_fault_set_down(0);
    idmint_close(m);
    ts_fault_reset();
}

static void test_handle__forked_child_cannot_mint_while_the_parent_goes_on(void **state)
{
    struct fixture *f = *state;
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

/*
 * fork() while the refill thread is inside a store transaction (blocks of
 * 100, refills all the time): without the store gate the child inherits a
 * held SQLite lock with no thread to end it, and its own new handle waits
 * on it forever or fails "database is locked".
 */
static void test_handle__a_child_forked_during_refills_opens_its_own_handle(void **state)
{
    struct fixture *f = *state;
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
    create_range(f, "busy", 1, UINT64_C(1) << 40, 100);
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

static void test_handle__range_reaches_its_maximum_with_exhausted_and_no_wrap(void **state)
{
    struct fixture *f = *state;
    idmint_options o;
    idmint *m;
    uint64_t id, expect = 5;
    int rc;

    create_range(f, "small", 5, 104, 30);
    idmint_options_init(&o);
    o.deadline_ms = 500;
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

static void test_handle__disabled_namespace_refuses_open_and_refill(void **state)
{
    struct fixture *f = *state;
    idmint_options o;
    idmint *m = NULL;
    uint64_t id, last = 0;
    int rc;

    create_range(f, "orders", 1, 1000000, 100);
    idmint_options_init(&o);
    o.deadline_ms = 500;
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

static void test_handle__range_batch_and_threads_never_repeat(void **state)
{
    struct fixture *f = *state;
    idmint *m;
    enum { N = 50000 };
    uint64_t *ids = malloc(sizeof(uint64_t) * N * 2);

    assert_non_null(ids);
    create_range(f, "batch", 1, UINT64_C(1) << 62, 1000);
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
static long count_records(const struct fixture *f, const char *ns)
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

static void test_handle__range_records_stay_few_and_go_at_close(void **state)
{
    struct fixture *f = *state;
    idmint *m;
    enum { BLOCK = 10, RESERVATIONS = 300, N = BLOCK * RESERVATIONS };
    uint64_t *ids = malloc(sizeof(uint64_t) * N);
    long kept;

    assert_non_null(ids);
    create_range(f, "forget", 1, UINT64_C(1) << 62, BLOCK);
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

static void test_handle__bad_options_and_unknown_namespace_are_refused(void **state)
{
    struct fixture *f = *state;
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

static void test_handle__lost_reply_on_refill_is_retried_for_the_same_range(void **state)
{
    struct fixture *f = *state;
    char url[4096];
    idmint_options o;
    idmint *m;
    uint64_t id;

    assert_int_equal(ts_fault_register(), 0);
    ts_fault_reset();
    snprintf(url, sizeof(url), "fault:%s", f->url);
    create_range(f, "dense", 1, 1000000, 100);
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

static void test_handle__range_try_returns_at_once_when_dry(void **state)
{
    struct fixture *f = *state;
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
    create_range(f, "dry", 1, UINT64_C(1) << 40, 100);
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

static void test_handle__an_id_released_ahead_of_the_clock_does_not_block_others(void **state)
{
    struct fixture *f = *state;
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
    struct fixture *f = *state;
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
    struct fixture *f = *state;
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
    struct fixture *f = *state;
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

static void create_range_bounds(struct fixture *f, const char *name, uint32_t block,
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
static idmint *open_behind_slow_store(struct fixture *f, const char *ns, uint32_t delay_ms,
                                      uint32_t target_ms)
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
 * goes out in about 200 ms (the block would last about a second), and then
 * the second reservation is asked for and held though nothing more is
 * minted, where the old rule waited for half the block to be used.
 */
static void test_handle__a_slow_authority_is_asked_for_the_next_block_early(void **state)
{
    struct fixture *f = *state;
    idmint_handle_info info;
    uint64_t last = 0;
    idmint *m;

    create_range(f, "slowauth", 1, 1000000, 1000);
    m = open_behind_slow_store(f, "slowauth", 1000, 1000);
    for (int k = 0; k < 200; k++) {
        last = mint_increasing(m, 1, last);
        sleep_ms(1);
    }
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
static void test_handle__a_slow_authority_gets_blocks_that_outlast_its_answers(void **state)
{
    struct fixture *f = *state;
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
static void test_handle__range_blocks_follow_the_rate_and_the_budget_is_what_is_held(void **state)
{
    struct fixture *f = *state;
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
static void test_handle__a_fixed_block_never_grows(void **state)
{
    struct fixture *f = *state;
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

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
        T(test_handle__default_namespace_mints_increasing_ids),
        T(test_handle__sequence_waits_are_counted),
        T(test_handle__a_sequence_wait_sleeps_instead_of_spinning),
        T(test_handle__try_next_n_never_waits_and_says_how_long),
        T(test_handle__range_try_returns_at_once_when_dry),
        T(test_handle__release_on_close_lets_the_next_holder_mint_after_us),
        T(test_handle__fifth_taker_of_two_worker_bits_gets_no_worker),
        T(test_handle__refused_renewal_makes_the_next_mint_fail),
        T(test_handle__disabled_namespace_mints_until_the_lease_end_then_fails),
        T(test_handle__outage_mints_until_the_lease_end_then_fails),
        T(test_handle__a_child_forked_during_refills_opens_its_own_handle),
        T(test_handle__forked_child_cannot_mint_while_the_parent_goes_on),
        T(test_handle__range_reaches_its_maximum_with_exhausted_and_no_wrap),
        T(test_handle__disabled_namespace_refuses_open_and_refill),
        T(test_handle__range_batch_and_threads_never_repeat),
        T(test_handle__range_records_stay_few_and_go_at_close),
        T(test_handle__bad_options_and_unknown_namespace_are_refused),
        T(test_handle__lost_reply_on_refill_is_retried_for_the_same_range),
        T(test_handle__an_id_released_ahead_of_the_clock_does_not_block_others),
        T(test_handle__info_refuses_a_size_not_set_up),
        T(test_handle__a_slow_authority_is_asked_for_the_next_block_early),
        T(test_handle__a_slow_authority_gets_blocks_that_outlast_its_answers),
        T(test_handle__range_blocks_follow_the_rate_and_the_budget_is_what_is_held),
        T(test_handle__a_fixed_block_never_grows),
        T(test_handle__info_takes_the_first_guarded_size_and_writes_no_further),
        T(test_handle__options_refuse_a_size_not_set_up),
#undef T
    };
    return cmocka_run_group_tests_name("handle", tests, NULL, NULL);
}
