/* SPDX-License-Identifier: Apache-2.0 */
/*
 * 8 processes x 4 threads mint concurrently against one SQLite file, each
 * process at least 2 million IDs (divided by IDMINT_TIMEOUT_SCALE in
 * sanitizer builds), first from a snowflake namespace, then from a range
 * namespace. Every ID lands in shared memory; each thread checks its own IDs
 * are strictly increasing, and the parent checks all of them for duplicates.
 *
 * An argument is a cmocka test filter: reliability.many_processes_slow_disk
 * runs "*range*" under tests/support/preload/slow_fsync.c, where each commit
 * holds SQLite's write lock for milliseconds and no process may starve.
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include <setjmp.h>     /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "idmint.h"
#include "testsupport.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define PROCS   8
#define THREADS 4
#define BATCH   64

struct minter_thread {
    idmint *m;
    uint64_t *out;
    size_t n;
    int use_batch;
    int failed;
};

static void *thread_main(void *arg)
{
    struct minter_thread *w = arg;
    uint64_t prev = 0;

    for (size_t i = 0; i < w->n;) {
        size_t k = w->use_batch && w->n - i >= BATCH ? BATCH : 1;
        int rc = k == 1 ? idmint_next(w->m, &w->out[i]) : idmint_next_n(w->m, &w->out[i], k);

        if (rc != 0) {
            fprintf(stderr, "mint failed: %s: %s\n", idmint_strerror(rc), idmint_errmsg());
            w->failed = 1;
            return NULL;
        }
        for (size_t j = i; j < i + k; j++) {
            if (w->out[j] <= prev) {
                fprintf(stderr, "not increasing within a thread: %llu after %llu\n",
                        (unsigned long long)w->out[j], (unsigned long long)prev);
                w->failed = 1;
                return NULL;
            }
            prev = w->out[j];
        }
        i += k;
    }
    return NULL;
}

/* One child process: open its own handle, 4 threads, each its share. */
static int child_main(const char *url, const char *ns, uint64_t *out, size_t per_thread)
{
    struct minter_thread w[THREADS];
    pthread_t th[THREADS];
    idmint *m;
    int rc = idmint_open(&m, url, ns, NULL), failed = 0;

    if (rc != 0) {
        fprintf(stderr, "open failed: %s: %s\n", idmint_strerror(rc), idmint_errmsg());
        return 1;
    }
    for (int t = 0; t < THREADS; t++) {
        w[t] = (struct minter_thread){
            .m = m, .out = out + (size_t)t * per_thread, .n = per_thread, .use_batch = t % 2};
        if (pthread_create(&th[t], NULL, thread_main, &w[t]) != 0)
            return 1;
    }
    for (int t = 0; t < THREADS; t++) {
        pthread_join(th[t], NULL);
        failed |= w[t].failed;
    }
    idmint_close(m);
    return failed;
}

static void run_campaign(const char *ns_kind)
{
    char *dir = ts_tempdir();
    char *url = ts_sqlite_url(dir, "idmint.db");
    size_t per_proc = 2000000 / ts_scale(), per_thread = per_proc / THREADS;
    size_t total = per_thread * THREADS * PROCS;
    uint64_t *ids = mmap(NULL, total * sizeof(uint64_t), PROT_READ | PROT_WRITE,
                         MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    idmint_authority *admin;
    idmint_ns_info info;
    pid_t pids[PROCS];

    assert_non_null(dir);
    assert_true(ids != MAP_FAILED);
    assert_int_equal(idmint_authority_open(&admin, url, 0), 0);
    if (strcmp(ns_kind, "range") == 0) {
        idmint_ns_info_init(&info, IDMINT_KIND_RANGE);
        info.block = 5000; /* small blocks: many concurrent reservations */
    } else {
        idmint_ns_info_init(&info, IDMINT_KIND_SNOWFLAKE);
    }
    snprintf(info.name, sizeof(info.name), "%s", ns_kind);
    assert_int_equal(idmint_ns_create(admin, &info), 0);
    idmint_authority_close(admin);

    for (int p = 0; p < PROCS; p++) {
        pids[p] = fork();
        assert_true(pids[p] >= 0);
        if (pids[p] == 0)
            _exit(child_main(url, ns_kind, ids + (size_t)p * per_thread * THREADS, per_thread));
    }
    for (int p = 0; p < PROCS; p++) {
        int status;

        assert_int_equal(waitpid(pids[p], &status, 0), pids[p]);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
    }
    for (size_t i = 0; i < total; i++)
        assert_true(ids[i] != 0); /* every slot was filled by a mint */
    printf("%s: %zu IDs from %d processes x %d threads checked\n", ns_kind, total, PROCS, THREADS);
    assert_int_equal(ts_count_duplicates(ids, total), 0);
    munmap(ids, total * sizeof(uint64_t));
    free(url);
    ts_rmtree(dir);
}

static void test_many_processes__snowflake_ids_never_repeat(void **state)
{
    (void)state;
    run_campaign("snowflake");
}

static void test_many_processes__range_ids_never_repeat(void **state)
{
    (void)state;
    run_campaign("range");
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_many_processes__snowflake_ids_never_repeat),
        cmocka_unit_test(test_many_processes__range_ids_never_repeat),
    };
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests_name("many_processes", tests, NULL, NULL);
}
