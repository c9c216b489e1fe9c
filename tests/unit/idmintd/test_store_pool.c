/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for cmd/idmintd/store_pool.c: the bounded queues refuse at
 * once when full, lanes are separate, a job past its deadline is handed
 * back undone, the lease lane is served first and by its own threads, and
 * close hands back what is queued. Jobs that must hold a thread wait on a
 * gate the test opens; nothing waits on a time.
 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "clocks.h"
#include "store_pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#define FAR_NS (clocks_mono_ns() + UINT64_C(3600) * 1000000000u) /* a deadline nobody reaches */

/* What the test's threads and jobs share. */
static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int is_open;      /* the gate: blocking jobs wait until it opens */
    unsigned blocked; /* blocking jobs waiting at the gate */
    unsigned inits, finis;
    unsigned order[64]; /* job ids in the order they ran */
    unsigned ran;
} g = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

struct job {
    unsigned id;
    int is_blocking;
    int runs;    /* times run was called */
    int is_late; /* what the last run was told */
    unsigned k;  /* the store thread that ran it */
};

static void reset(void)
{
    pthread_mutex_lock(&g.mu);
    g.is_open = 0;
    g.blocked = g.inits = g.finis = g.ran = 0;
    pthread_mutex_unlock(&g.mu);
}

static void *thread_init(unsigned k, void *arg)
{
    unsigned *ks = arg;

    pthread_mutex_lock(&g.mu);
    g.inits++;
    pthread_mutex_unlock(&g.mu);
    return &ks[k];
}

static void thread_fini(void *thread)
{
    (void)thread;
    pthread_mutex_lock(&g.mu);
    g.finis++;
    pthread_cond_broadcast(&g.cv);
    pthread_mutex_unlock(&g.mu);
}

static void run(void *thread, void *arg, int is_late)
{
    struct job *j = arg;

    pthread_mutex_lock(&g.mu);
    j->runs++;
    j->is_late = is_late;
    j->k = *(unsigned *)thread;
    if (g.ran < 64)
        g.order[g.ran++] = j->id;
    if (j->is_blocking && !is_late) {
        g.blocked++;
        pthread_cond_broadcast(&g.cv);
        while (!g.is_open)
            pthread_cond_wait(&g.cv, &g.mu);
    }
    pthread_cond_broadcast(&g.cv);
    pthread_mutex_unlock(&g.mu);
}

static void wait_blocked(unsigned n)
{
    pthread_mutex_lock(&g.mu);
    while (g.blocked < n)
        pthread_cond_wait(&g.cv, &g.mu);
    pthread_mutex_unlock(&g.mu);
}

static void wait_ran(unsigned n)
{
    pthread_mutex_lock(&g.mu);
    while (g.ran < n)
        pthread_cond_wait(&g.cv, &g.mu);
    pthread_mutex_unlock(&g.mu);
}

static void open_gate(void)
{
    pthread_mutex_lock(&g.mu);
    g.is_open = 1;
    pthread_cond_broadcast(&g.cv);
    pthread_mutex_unlock(&g.mu);
}

static unsigned ks[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};

static void test_store_pool__open_refuses_no_threads_no_queue_or_no_init(void **state)
{
    struct store_pool *p = NULL;

    (void)state;
    assert_int_equal(store_pool_open(&p, 0, 1, 4, thread_init, NULL, ks), -1);
    assert_int_equal(store_pool_open(&p, 1, 0, 0, thread_init, NULL, ks), -1);
    assert_int_equal(store_pool_open(&p, 1, 0, 4, NULL, NULL, ks), -1);
    assert_null(p);
    store_pool_close(NULL); /* a no-op */
}

static void test_store_pool__a_full_queue_refuses_at_once_and_counts_it(void **state)
{
    struct job hold = {.id = 0, .is_blocking = 1}, q[3];
    struct store_pool *p = NULL;
    struct store_pool_stats st;
    unsigned i;

    (void)state;
    reset();
    memset(q, 0, sizeof(q));
    assert_int_equal(store_pool_open(&p, 1, 0, 2, thread_init, thread_fini, ks), 0);
    assert_int_equal(store_pool_submit(p, STORE_POOL_GENERAL, run, &hold, FAR_NS), 0);
    wait_blocked(1); /* the only thread is busy */
    for (i = 0; i < 2; i++) {
        q[i].id = i + 1;
        assert_int_equal(store_pool_submit(p, STORE_POOL_GENERAL, run, &q[i], FAR_NS), 0);
    }
    q[2].id = 3;
    assert_int_equal(store_pool_submit(p, STORE_POOL_GENERAL, run, &q[2], FAR_NS), -1);
    store_pool_stats_get(p, &st);
    assert_int_equal(st.depth, 2);
    assert_int_equal(st.lease_depth, 0);
    assert_int_equal(st.running, 1);
    assert_int_equal(st.jobs, 3);
    assert_int_equal(st.rejected_full, 1);
    assert_int_equal(st.queue_max, 2);
    assert_int_equal(st.threads, 1);
    /* The other lane has a queue of its own. */
    {
        struct job lease = {.id = 9};

        assert_int_equal(store_pool_submit(p, STORE_POOL_LEASE, run, &lease, FAR_NS), 0);
        store_pool_stats_get(p, &st);
        assert_int_equal(st.depth, 3);
        assert_int_equal(st.lease_depth, 1);
        open_gate();
        wait_ran(4);
        store_pool_close(p);
        assert_int_equal(lease.runs, 1);
        assert_int_equal(lease.is_late, 0);
    }
    assert_int_equal(hold.runs, 1);
    assert_int_equal(q[0].runs, 1);
    assert_int_equal(q[1].runs, 1);
    assert_int_equal(q[2].runs, 0); /* refused: never run */
    assert_int_equal(g.finis, 1);
}

static void test_store_pool__a_job_past_its_deadline_is_handed_back_undone(void **state)
{
    struct job late = {.id = 1}, fresh = {.id = 2};
    struct store_pool *p = NULL;
    struct store_pool_stats st;

    (void)state;
    reset();
    assert_int_equal(store_pool_open(&p, 1, 0, 4, thread_init, thread_fini, ks), 0);
    assert_int_equal(store_pool_submit(p, STORE_POOL_GENERAL, run, &late, clocks_mono_ns()), 0);
    assert_int_equal(store_pool_submit(p, STORE_POOL_GENERAL, run, &fresh, FAR_NS), 0);
    wait_ran(2);
    store_pool_count_timeout(p);
    store_pool_stats_get(p, &st);
    assert_int_equal(late.runs, 1);
    assert_int_equal(late.is_late, 1);
    assert_int_equal(fresh.runs, 1);
    assert_int_equal(fresh.is_late, 0);
    assert_int_equal(st.late, 1);
    assert_int_equal(st.timed_out, 1);
    assert_int_equal(st.depth, 0);
    store_pool_close(p);
}

static void test_store_pool__a_general_thread_takes_lease_jobs_first(void **state)
{
    struct job hold = {.id = 100, .is_blocking = 1}, g1 = {.id = 1}, g2 = {.id = 2},
               l1 = {.id = 11}, l2 = {.id = 12};
    struct store_pool *p = NULL;

    (void)state;
    reset();
    assert_int_equal(store_pool_open(&p, 1, 0, 4, thread_init, thread_fini, ks), 0);
    assert_int_equal(store_pool_submit(p, STORE_POOL_GENERAL, run, &hold, FAR_NS), 0);
    wait_blocked(1);
    assert_int_equal(store_pool_submit(p, STORE_POOL_GENERAL, run, &g1, FAR_NS), 0);
    assert_int_equal(store_pool_submit(p, STORE_POOL_LEASE, run, &l1, FAR_NS), 0);
    assert_int_equal(store_pool_submit(p, STORE_POOL_GENERAL, run, &g2, FAR_NS), 0);
    assert_int_equal(store_pool_submit(p, STORE_POOL_LEASE, run, &l2, FAR_NS), 0);
    open_gate();
    wait_ran(5);
    pthread_mutex_lock(&g.mu);
    assert_int_equal(g.order[0], 100);
    assert_int_equal(g.order[1], 11); /* lease lane first, each lane in order */
    assert_int_equal(g.order[2], 12);
    assert_int_equal(g.order[3], 1);
    assert_int_equal(g.order[4], 2);
    pthread_mutex_unlock(&g.mu);
    store_pool_close(p);
}

/* However busy the general lane, a lease job finds a thread; a lease thread never runs others. */
static void test_store_pool__lease_threads_serve_the_lease_lane_only(void **state)
{
    struct job hold = {.id = 100, .is_blocking = 1}, gen = {.id = 1}, lease = {.id = 2};
    struct store_pool *p = NULL;
    struct store_pool_stats st;

    (void)state;
    reset();
    assert_int_equal(store_pool_open(&p, 1, 1, 4, thread_init, thread_fini, ks), 0);
    store_pool_stats_get(p, &st);
    assert_int_equal(st.threads, 2);
    assert_int_equal(st.lease_threads, 1);
    assert_int_equal(store_pool_submit(p, STORE_POOL_GENERAL, run, &hold, FAR_NS), 0);
    wait_blocked(1);
    assert_int_equal(hold.k, 0); /* only thread 0 is a general thread */
    assert_int_equal(store_pool_submit(p, STORE_POOL_GENERAL, run, &gen, FAR_NS), 0);
    assert_int_equal(store_pool_submit(p, STORE_POOL_LEASE, run, &lease, FAR_NS), 0);
    wait_ran(2); /* the lease job ran while the general thread is held */
    assert_int_equal(lease.runs, 1);
    assert_int_equal(lease.k, 1); /* the lease threads come last */
    assert_int_equal(gen.runs, 0);
    store_pool_stats_get(p, &st);
    assert_int_equal(st.depth, 1); /* the general job still waits for thread 0 */
    open_gate();
    wait_ran(3);
    assert_int_equal(gen.runs, 1);
    assert_int_equal(gen.k, 0);
    store_pool_close(p);
}

static void *close_main(void *arg)
{
    store_pool_close(arg);
    return NULL;
}

static void wait_finis(unsigned n)
{
    pthread_mutex_lock(&g.mu);
    while (g.finis < n)
        pthread_cond_wait(&g.cv, &g.mu);
    pthread_mutex_unlock(&g.mu);
}

static void test_store_pool__close_hands_back_queued_jobs_as_late_once(void **state)
{
    struct job hold = {.id = 100, .is_blocking = 1}, q[4];
    struct store_pool *p = NULL;
    pthread_t closer;
    unsigned i;

    (void)state;
    reset();
    memset(q, 0, sizeof(q));
    assert_int_equal(store_pool_open(&p, 1, 1, 4, thread_init, thread_fini, ks), 0);
    assert_int_equal(store_pool_submit(p, STORE_POOL_GENERAL, run, &hold, FAR_NS), 0);
    wait_blocked(1);
    for (i = 0; i < 4; i++) {
        q[i].id = i + 1;
        assert_int_equal(store_pool_submit(p, STORE_POOL_GENERAL, run, &q[i], FAR_NS), 0);
    }
    /* Close from another thread; it waits for the job in hand, which waits for the gate. */
    assert_int_equal(pthread_create(&closer, NULL, close_main, p), 0);
    wait_finis(1); /* the idle lease thread left: the pool is closing */
    open_gate();
    pthread_join(closer, NULL);
    assert_int_equal(hold.runs, 1);
    assert_int_equal(hold.is_late, 0); /* the job in hand was finished, not cut */
    for (i = 0; i < 4; i++) {
        assert_int_equal(q[i].runs, 1); /* never lost, never run twice */
        assert_int_equal(q[i].is_late, 1);
    }
    assert_int_equal(g.inits, 2);
    assert_int_equal(g.finis, 2);
}

struct submitter {
    struct store_pool *p;
    struct job jobs[200];
    unsigned accepted;
};

static void count_run(void *thread, void *arg, int is_late)
{
    struct job *j = arg;

    (void)thread;
    j->is_late = is_late;
    __atomic_fetch_add(&j->runs, 1, __ATOMIC_RELAXED);
}

static void *submit_main(void *arg)
{
    struct submitter *s = arg;
    unsigned i;

    for (i = 0; i < 200; i++)
        if (store_pool_submit(s->p, i % 3 == 0 ? STORE_POOL_LEASE : STORE_POOL_GENERAL, count_run,
                              &s->jobs[i], FAR_NS) == 0)
            s->accepted++;
    return NULL;
}

/* Several event loops submit at once: every accepted job runs exactly once. */
static void test_store_pool__concurrent_submitters_lose_and_repeat_no_job(void **state)
{
    static struct submitter s[4];
    struct store_pool *p = NULL;
    struct store_pool_stats st;
    pthread_t th[4];
    unsigned i, k, accepted = 0;

    (void)state;
    reset();
    memset(s, 0, sizeof(s));
    assert_int_equal(store_pool_open(&p, 2, 1, 8, thread_init, thread_fini, ks), 0);
    for (i = 0; i < 4; i++) {
        s[i].p = p;
        assert_int_equal(pthread_create(&th[i], NULL, submit_main, &s[i]), 0);
    }
    for (i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    store_pool_stats_get(p, &st);
    store_pool_close(p);
    for (i = 0; i < 4; i++) {
        accepted += s[i].accepted;
        for (k = 0; k < 200; k++)
            assert_true(s[i].jobs[k].runs <= 1);
    }
    for (i = 0, k = 0; i < 4; i++) {
        unsigned j;

        for (j = 0; j < 200; j++)
            k += (unsigned)s[i].jobs[j].runs;
    }
    assert_int_equal(k, accepted); /* each accepted job ran once, each refused one never */
    assert_int_equal(st.jobs, accepted);
    assert_int_equal(st.rejected_full, 800 - accepted);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_store_pool__open_refuses_no_threads_no_queue_or_no_init),
        cmocka_unit_test(test_store_pool__a_full_queue_refuses_at_once_and_counts_it),
        cmocka_unit_test(test_store_pool__a_job_past_its_deadline_is_handed_back_undone),
        cmocka_unit_test(test_store_pool__a_general_thread_takes_lease_jobs_first),
        cmocka_unit_test(test_store_pool__lease_threads_serve_the_lease_lane_only),
        cmocka_unit_test(test_store_pool__close_hands_back_queued_jobs_as_late_once),
        cmocka_unit_test(test_store_pool__concurrent_submitters_lose_and_repeat_no_job),
    };
    return cmocka_run_group_tests_name("store_pool", tests, NULL, NULL);
}
