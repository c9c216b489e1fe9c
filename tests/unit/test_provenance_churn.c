/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Provenance and idempotent batches stay bounded by their retention under
 * churn: well over 100,000 grants and batches through the authority (which
 * prunes as it grants) on an SQLite store, so each table should hold about
 * one retention window of rows. Grants are aged by the authority's clock,
 * here one that moves 1 ms per grant; batches by the store's own clock
 * (SQLite's, the host's), so their window is one of real time. Run with
 * TMPDIR on tmpfs (CMakeLists.txt): the point is the row counts, not fsync.
 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "idmint.h"
#include "internal.h"
#include "testsupport.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define START_MS       INT64_C(1780000000000)
#define RETENTION_MS   1000
/* A batch's stamp is taken inside its claim, after the test's own stamp of it. */
#define CLAIM_SLACK_MS 250

struct fx {
    char *dir;
    char *url;
    char path[512];
    idmint_authority *a;
    struct clock clk;
    int64_t now_ms;
    sqlite3 *db; /* a second connection that only counts rows */
};

static int64_t fake_wall(void *ctx)
{
    return *(const int64_t *)ctx;
}

static uint64_t fake_mono(void *ctx)
{
    return (uint64_t)(*(const int64_t *)ctx - START_MS) * 1000000u;
}

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof(*f));

    if (f == NULL || (f->dir = ts_tempdir()) == NULL ||
        (f->url = ts_sqlite_url(f->dir, "churn.db")) == NULL)
        return -1;
    snprintf(f->path, sizeof(f->path), "%s/churn.db", f->dir);
    f->now_ms = START_MS;
    idmint__clock_init(&f->clk, fake_wall, fake_mono, &f->now_ms);
    if (idmint__authority_open_clock(&f->a, f->url, 0, &f->clk, NULL) != 0 ||
        sqlite3_open_v2(f->path, &f->db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
        return -1;
    for (int k = 0; k < IDMINT__KEEP__COUNT; k++)
        if (idmint__authority_set_retention(f->a, (enum idmint__retained)k, RETENTION_MS) != 0)
            return -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;

    sqlite3_close(f->db);
    idmint_authority_close(f->a);
    ts_rmtree(f->dir);
    free(f->url);
    free(f);
    return 0;
}

static long rows(struct fx *f, const char *table)
{
    char sql[96];
    sqlite3_stmt *q = NULL;
    long n = -1;

    snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s", table);
    assert_int_equal(sqlite3_prepare_v2(f->db, sql, -1, &q, NULL), SQLITE_OK);
    if (sqlite3_step(q) == SQLITE_ROW)
        n = (long)sqlite3_column_int64(q, 0);
    sqlite3_finalize(q);
    return n;
}

/*
 * At most one retention window of rows, plus what a prune may leave
 * (the authority prunes every 16 records, at most 64 at a time).
 */
static void assert_bounded(long n, long per_window, const char *table, long made)
{
    if (n > per_window + 100)
        fail_msg("%s holds %ld rows after %ld made; one retention window is %ld", table, n, made,
                 per_window);
}

static void test_churn__range_grants_stay_within_their_retention(void **state)
{
    struct fx *f = *state;
    enum { GRANTS = 100000, STEP_MS = 1 };
    idmint_ns_info ns;
    char req[24];
    long peak = 0;

    idmint_ns_info_init(&ns, IDMINT_KIND_RANGE);
    snprintf(ns.name, sizeof(ns.name), "churn");
    ns.block = 10;
    assert_int_equal(idmint_ns_create(f->a, &ns), 0);
    for (long i = 0; i < GRANTS; i++) {
        struct idmint__range r = {0};

        memset(&r, 0, sizeof(r));
        snprintf(req, sizeof(req), "r%09ld", i);
        f->now_ms += STEP_MS;
        assert_int_equal(idmint__authority_range_reserve(
                             f->a, "churn", "0123456789abcdef0123456789abcdef", req, 10, &r),
                         0);
        /* The request records would pile up too: a range supply forgets them. */
        if (i % 1000 == 999)
            assert_int_equal(idmint__authority_range_forget(
                                 f->a, "churn", "0123456789abcdef0123456789abcdef", req, NULL),
                             0);
        if (i % 5000 == 4999) {
            long n = rows(f, "range_grants");

            assert_bounded(n, RETENTION_MS / STEP_MS, "range_grants", i + 1);
            peak = n > peak ? n : peak;
        }
    }
    print_message("range grants: %d made, at most %ld rows kept\n", GRANTS, peak);
    assert_true(peak >= RETENTION_MS / STEP_MS - 20); /* the window itself is kept */
}

static uint64_t mono_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Of the @p n claims stamped @p at (ascending), how many are younger than @p window_ms at @p now.
 */
static long claimed_within(const uint64_t *at, long n, uint64_t now, uint64_t window_ms)
{
    long lo = 0, hi = n;

    while (lo < hi) {
        long mid = lo + (hi - lo) / 2;

        if (at[mid] + window_ms < now)
            lo = mid + 1;
        else
            hi = mid;
    }
    return n - lo;
}

static void test_churn__batches_and_worker_grants_stay_within_their_retention(void **state)
{
    struct fx *f = *state;
    enum { BATCHES = 30000, TAKES = 5000 };
    idmint_ns_info ns;
    long peak_b = 0, peak_w = 0, pruned_b = 0;
    uint64_t *at = calloc(BATCHES, sizeof(*at));

    assert_non_null(at);
    for (long i = 0; i < BATCHES; i++) {
        struct idmint__batch b, saved;
        uint64_t ids[3] = {(uint64_t)i * 10 + 1, (uint64_t)i * 10 + 2, (uint64_t)i * 10 + 3};

        memset(&b, 0, sizeof(b));
        memset(&saved, 0, sizeof(saved));
        snprintf(b.ns, sizeof(b.ns), "default");
        snprintf(b.key, sizeof(b.key), "k-%ld", i);
        snprintf(b.owner, sizeof(b.owner), "anonymous");
        assert_int_equal(idmint__batch_runs_encode(&b, ids, 3), 0);
        f->now_ms += 2;
        at[i] = mono_ms();
        assert_int_equal(idmint__authority_batch_claim(f->a, &b, &saved), 0);
        assert_string_equal(saved.runs, b.runs);
        idmint__batch_clear(&b);
        idmint__batch_clear(&saved);
        if (i % 2000 == 1999) {
            long n = rows(f, "batches");

            /* One retention window of real time: however fast this machine claims. */
            assert_bounded(n, claimed_within(at, i + 1, mono_ms(), RETENTION_MS + CLAIM_SLACK_MS),
                           "batches", i + 1);
            peak_b = n > peak_b ? n : peak_b;
            pruned_b = i + 1 - n;
        }
    }
    free(at);

    idmint_ns_info_init(&ns, IDMINT_KIND_SNOWFLAKE);
    snprintf(ns.name, sizeof(ns.name), "sf");
    assert_int_equal(idmint_layout_parse("41/0/0/12", &ns.layout), 0);
    assert_int_equal(idmint_ns_create(f->a, &ns), 0);
    assert_int_equal(idmint_ns_get(f->a, "sf", &ns), 0);
    for (long i = 0; i < TAKES; i++) {
        struct idmint__lease l = {0};

        memset(&l, 0, sizeof(l));
        snprintf(l.holder, sizeof(l.holder), "%032lx", (unsigned long)i + 1);
        f->now_ms += 10;
        /* Each 5 ms lease has run out by the next take: one more generation. */
        assert_int_equal(idmint__authority_lease_take(f->a, &ns, 5, &l), 0);
        assert_int_equal(l.generation, (uint64_t)i + 1);
        if (i % 500 == 499) {
            long n = rows(f, "worker_grants");

            assert_bounded(n, RETENTION_MS / 10, "worker_grants", i + 1);
            peak_w = n > peak_w ? n : peak_w;
        }
    }
    print_message("batches: %d made, at most %ld kept, %ld pruned; worker grants: %d made, at "
                  "most %ld kept\n",
                  BATCHES, peak_b, pruned_b, TAKES, peak_w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_churn__range_grants_stay_within_their_retention, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            test_churn__batches_and_worker_grants_stay_within_their_retention, setup, teardown),
    };
    return cmocka_run_group_tests_name("provenance_churn", tests, NULL, NULL);
}
