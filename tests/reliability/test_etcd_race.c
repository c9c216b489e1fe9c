/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The worker-id race on etcd: 32 processes take ids of one snowflake
 * namespace with W=3 (8 worker ids) at the same moment, each with its own
 * connections made after fork(), once through the authority layer
 * (idmint_open) and once through the store alone: exactly 8 win, with
 * distinct ids, and the rest get ENOWORKER. And the range burst: 32
 * processes reserve on one namespace at once, so most lose their first
 * compares and leave their requests waiting for another's txn to grant
 * them, and 6 are killed with -9 while they do: no two answers overlap, and
 * the recorded grants tile the namespace. Against the cluster of
 * $IDMINT_TEST_ETCD_URL or the file $IDMINT_ETCD_ENV (etcd-start.sh); a
 * missing cluster fails.
 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "idmint.h"
#include "internal.h"
#include "store.h"
#include "testsupport.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PROCS       32
#define WORKER_BITS 3
#define IDS         (1 << WORKER_BITS)

struct open_result {
    int rc;
    uint32_t worker_id;
    char msg[160];
};

/* Block until the other end of @p fd is closed by every writer. */
static void wait_closed(int fd)
{
    char c;

    while (read(fd, &c, 1) > 0)
        ;
}

/* One lease_take through the store alone, as holder number @p idx; never released. */
static void store_child(const char *url, const char *ns, unsigned idx, int go, int out)
{
    struct open_result res;
    struct idmint__lease l = {0};
    struct store *st = NULL;

    memset(&res, 0, sizeof(res));
    memset(&l, 0, sizeof(l));
    snprintf(l.holder, sizeof(l.holder), "%032x", idx + 1);
    res.rc = idmint__store_open(url, NULL, &st);
    wait_closed(go);
    if (res.rc == 0)
        res.rc = idmint__store_lease_take(st, ns, IDS, 1000, 1000000, &l, "test:etcd_race",
                                          INT64_C(1780000000000));
    if (res.rc == 0)
        res.worker_id = l.worker_id;
    else
        snprintf(res.msg, sizeof(res.msg), "%s", idmint_errmsg());
    idmint__store_close(st);
    _exit(write(out, &res, sizeof(res)) == (ssize_t)sizeof(res) ? 0 : 3);
}

/*
 * A child: wait for the start, open (a winner holds its lease), report, and
 * keep the lease until the parent has every answer, so that no id is freed
 * and won twice. With @p is_store, one lease_take on the store instead.
 */
static void child(const char *url, const char *ns, int is_store, unsigned idx, int go, int hold,
                  int out)
{
    struct open_result res;
    idmint_handle_info info;
    idmint *m = NULL;

    memset(&res, 0, sizeof(res));
    if (is_store) {
        store_child(url, ns, idx, go, out);
        return;
    }
    wait_closed(go);
    res.rc = idmint_open(&m, url, ns, NULL);
    idmint_handle_info_init(&info);
    /* A winner that cannot say its id must fail the test, never read as id 0. */
    if (res.rc == 0 && (res.rc = idmint_info(m, &info)) == 0)
        res.worker_id = info.worker_id;
    else
        snprintf(res.msg, sizeof(res.msg), "%s", idmint_errmsg());
    if (write(out, &res, sizeof(res)) != (ssize_t)sizeof(res))
        _exit(3);
    wait_closed(hold);
    idmint_close(m);
    _exit(0);
}

static void race(const char *url, int is_store)
{
    int go[2], hold[2], res[2], won = 0, busy = 0, seen[IDS] = {0};
    idmint_authority *a = NULL;
    idmint_ns_info ns;
    pid_t pids[PROCS];

    idmint_ns_info_init(&ns, IDMINT_KIND_SNOWFLAKE);
    snprintf(ns.name, sizeof(ns.name), "etcdrace-%lx-%x-%d", (unsigned long)time(NULL),
             (unsigned)getpid(), is_store);
    ns.layout.worker_bits = WORKER_BITS;
    if (idmint_authority_open(&a, url, 0) != 0)
        fail_msg("cannot open %s: %s", url, idmint_errmsg());
    assert_int_equal(idmint_ns_create(a, &ns), 0);

    assert_int_equal(pipe(go), 0);
    assert_int_equal(pipe(hold), 0);
    assert_int_equal(pipe(res), 0);
    for (unsigned i = 0; i < PROCS; i++) {
        pids[i] = fork();
        assert_true(pids[i] >= 0);
        if (pids[i] == 0) {
            close(go[1]);
            close(hold[1]);
            close(res[0]);
            child(url, ns.name, is_store, i, go[0], hold[0], res[1]);
        }
    }
    close(go[0]);
    close(hold[0]);
    close(res[1]);
    close(go[1]); /* everyone at once */
    for (unsigned i = 0; i < PROCS; i++) {
        struct open_result r;

        assert_int_equal(read(res[0], &r, sizeof(r)), sizeof(r));
        if (r.rc == 0) {
            assert_true(r.worker_id < IDS);
            assert_int_equal(seen[r.worker_id], 0);
            seen[r.worker_id] = 1;
            won++;
        } else {
            if (r.rc != IDMINT_ENOWORKER)
                fail_msg("open: %s: %s", idmint_strerror(r.rc), r.msg);
            busy++;
        }
    }
    close(res[0]);
    close(hold[1]); /* winners release */
    for (unsigned i = 0; i < PROCS; i++) {
        int status;

        assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    assert_int_equal(won, IDS);
    assert_int_equal(busy, PROCS - IDS);
    idmint_authority_close(a);
}

static char *etcd_url(void)
{
    char *url = ts_etcd_url();

    if (url == NULL)
        fail_msg("no etcd: set IDMINT_TEST_ETCD_URL, or IDMINT_ETCD_ENV to the file "
                 "tests/support/etcd-start.sh writes");
    return url;
}

static void test_etcd_race__32_openers_of_8_worker_ids_give_8_distinct_winners(void **state)
{
    char *url = etcd_url();

    (void)state;
    race(url, 0);
    free(url);
}

static void test_etcd_race__32_store_takes_of_8_worker_ids_give_8_distinct_winners(void **state)
{
    char *url = etcd_url();

    (void)state;
    race(url, 1);
    free(url);
}

/* ==== the range burst ==== */

#define RPROCS  32
#define REACH   20
#define RKILLED 6

struct span {
    uint64_t start, end;
};

/* Now, in Unix ms: grants stamped in the past would be pruned by other tests'
 * authorities sharing the cluster's prefix before this one reads them. */
static int64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int span_cmp(const void *a, const void *b)
{
    const struct span *x = a, *y = b;

    return x->start < y->start ? -1 : x->start > y->start;
}

/* Reserve REACH ranges as incarnation "burst-IDX", each written to @p out when answered. */
static void reserve_child(const char *url, const char *ns, unsigned idx, int go, int out)
{
    struct store *st = NULL;
    char inc[32];
    int rc = idmint__store_open(url, NULL, &st);

    snprintf(inc, sizeof(inc), "burst-%u", idx);
    wait_closed(go);
    for (unsigned k = 0; rc == 0 && k < REACH; k++) {
        struct idmint__range r;
        char req[17];

        memset(&r, 0, sizeof(r));
        snprintf(req, sizeof(req), "%016x", k);
        rc = idmint__store_range_reserve(st, ns, inc, req, 100 + idx % 7, now_ms(), &r);
        if (rc == 0) {
            struct span sp = {r.start, r.end};

            if (write(out, &sp, sizeof(sp)) != (ssize_t)sizeof(sp))
                rc = -1;
        } else {
            fprintf(stderr, "child %u: %s\n", idx, idmint_errmsg());
        }
    }
    idmint__store_close(st);
    _exit(rc == 0 ? 0 : 1);
}

static void test_etcd_race__a_burst_of_32_reservers_with_kill_9_never_overlaps(void **state)
{
    char *url = etcd_url(), ns[64];
    struct span *all = calloc(RPROCS * REACH, sizeof(*all));
    int go[2], outs[RPROCS];
    pid_t pids[RPROCS];
    size_t n = 0, granted = 0;
    idmint_ns_info info;
    struct store *st = NULL;
    uint64_t v;

    (void)state;
    assert_non_null(all);
    snprintf(ns, sizeof(ns), "burst-%lx-%x", (unsigned long)time(NULL), (unsigned)getpid());
    if (idmint__store_open(url, NULL, &st) != 0)
        fail_msg("cannot open %s: %s", url, idmint_errmsg());
    idmint_ns_info_init(&info, IDMINT_KIND_RANGE);
    snprintf(info.name, sizeof(info.name), "%s", ns);
    assert_int_equal(idmint__store_ns_create(st, &info, "test", now_ms()), 0);
    assert_int_equal(pipe(go), 0);
    for (unsigned i = 0; i < RPROCS; i++) {
        int p[2];

        assert_int_equal(pipe(p), 0);
        pids[i] = fork();
        assert_true(pids[i] >= 0);
        if (pids[i] == 0) {
            close(go[1]);
            close(p[0]);
            reserve_child(url, ns, i, go[0], p[1]);
        }
        close(p[1]);
        outs[i] = p[0];
    }
    close(go[0]);
    close(go[1]); /* everyone at once */
    /* Kill some mid-burst: their requests may be left waiting, or granted to no one. */
    for (unsigned k = 0; k < RKILLED; k++) {
        struct timespec pause = {0, 40L * 1000 * 1000};

        nanosleep(&pause, NULL);
        assert_int_equal(kill(pids[k * 5], SIGKILL), 0);
    }
    for (unsigned i = 0; i < RPROCS; i++) {
        struct span sp;
        unsigned got = 0;
        int status, is_killed = i % 5 == 0 && i / 5 < RKILLED;

        while (read(outs[i], &sp, sizeof(sp)) == (ssize_t)sizeof(sp)) {
            assert_true(sp.start < sp.end);
            all[n++] = sp;
            got++;
        }
        close(outs[i]);
        assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
        if (!is_killed) {
            assert_true(WIFEXITED(status));
            assert_int_equal(WEXITSTATUS(status), 0);
            assert_int_equal(got, REACH);
        }
    }
    /* No two answers share a value. */
    qsort(all, n, sizeof(*all), span_cmp);
    for (size_t i = 1; i < n; i++)
        if (all[i - 1].end > all[i].start)
            fail_msg("ranges [%llu, %llu) and [%llu, %llu) overlap",
                     (unsigned long long)all[i - 1].start, (unsigned long long)all[i - 1].end,
                     (unsigned long long)all[i].start, (unsigned long long)all[i].end);
    /* Every value issued lies in exactly one recorded grant, and every answer is one. */
    assert_int_equal(idmint__store_ns_get(st, ns, &info), 0);
    for (v = 1; v < info.next_value; granted++) {
        struct idmint__grant_query q = {.kind = IDMINT_KIND_RANGE, .value = v};
        idmint_grant_info *g = NULL;
        size_t k = 0;

        assert_int_equal(idmint__store_grant_find(st, ns, &q, &g, &k), 0);
        if (k != 1 || g[0].first != v || g[0].last <= v)
            fail_msg("value %llu: %zu grants, the first from %llu", (unsigned long long)v, k,
                     k > 0 ? (unsigned long long)g[0].first : 0ULL);
        v = g[0].last;
        free(g);
    }
    for (size_t i = 0; i < n; i++) {
        struct idmint__grant_query q = {.kind = IDMINT_KIND_RANGE, .value = all[i].start};
        idmint_grant_info *g = NULL;
        size_t k = 0;

        assert_int_equal(idmint__store_grant_find(st, ns, &q, &g, &k), 0);
        assert_int_equal(k, 1);
        assert_int_equal(g[0].first, all[i].start);
        assert_int_equal(g[0].last, all[i].end);
        free(g);
    }
    print_message("%zu answers, %zu grants (the rest of the killed processes' requests)\n", n,
                  granted);
    assert_true(granted >= n);
    idmint__store_close(st);
    free(all);
    free(url);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_etcd_race__32_openers_of_8_worker_ids_give_8_distinct_winners),
        cmocka_unit_test(test_etcd_race__32_store_takes_of_8_worker_ids_give_8_distinct_winners),
        cmocka_unit_test(test_etcd_race__a_burst_of_32_reservers_with_kill_9_never_overlaps),
    };

    return cmocka_run_group_tests_name("etcd_race", tests, NULL, NULL);
}
