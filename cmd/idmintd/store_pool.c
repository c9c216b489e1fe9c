/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The store threads of store_pool.h: a ring of queue_max jobs per lane
 * under one mutex, and one condition variable per kind of thread, which
 * idle threads wait on. A full ring refuses at once instead of growing: a
 * store that has stalled must turn callers away quickly (503 with
 * Retry-After), not collect them by the thousand.
 */
#include "store_pool.h"
#include "clocks.h"

#include "metrics.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

struct pool_job {
    store_pool_run run;
    void *job;
    uint64_t deadline_ns;
};

struct pool_ring {
    struct pool_job *jobs; /* queue_max slots */
    unsigned head, len;
};

struct pool_thread {
    struct store_pool *p;
    unsigned k;
    int is_lease; /* takes only lease-lane jobs */
    pthread_t thread;
};

struct store_pool {
    pthread_mutex_t mu;
    pthread_cond_t cv_general; /* general threads wait here: any job */
    pthread_cond_t cv_lease;   /* lease threads wait here: a lease job */
    struct pool_ring ring[2];  /* by enum store_pool_lane */
    unsigned queue_max;
    int is_closing;
    unsigned threads, lease_threads, started;
    struct pool_thread *th;
    void *(*thread_init)(unsigned k, void *arg);
    void (*thread_fini)(void *thread);
    void *arg;
    _Atomic uint64_t running, jobs, late, rejected_full, timed_out;
};

/* The next job @p t may run, taken off its ring; 0 when there is none. */
static int pool_take(struct store_pool *p, const struct pool_thread *t, struct pool_job *j)
{
    struct pool_ring *r = &p->ring[STORE_POOL_LEASE];

    if (r->len == 0) {
        if (t->is_lease)
            return 0;
        r = &p->ring[STORE_POOL_GENERAL];
        if (r->len == 0)
            return 0;
    }
    *j = r->jobs[r->head];
    r->head = (r->head + 1) % p->queue_max;
    r->len--;
    return 1;
}

static void *pool_main(void *arg)
{
    struct pool_thread *t = arg;
    struct store_pool *p = t->p;
    void *user = p->thread_init(t->k, p->arg);

    pthread_mutex_lock(&p->mu);
    for (;;) {
        struct pool_job j;
        int is_late, is_closing;

        while (!pool_take(p, t, &j)) {
            if (p->is_closing)
                goto out; /* closing, and nothing left for this thread */
            pthread_cond_wait(t->is_lease ? &p->cv_lease : &p->cv_general, &p->mu);
        }
        is_closing = p->is_closing;
        atomic_fetch_add(&p->running, 1);
        pthread_mutex_unlock(&p->mu);
        /* A job nobody waits for any more is not worth a store call; at
         * close, queued jobs are handed back undone so that close is quick. */
        is_late = is_closing || clocks_mono_ns() >= j.deadline_ns;
        if (is_late)
            atomic_fetch_add(&p->late, 1);
        j.run(user, j.job, is_late);
        atomic_fetch_sub(&p->running, 1);
        pthread_mutex_lock(&p->mu);
    }
out:
    pthread_mutex_unlock(&p->mu);
    if (p->thread_fini != NULL)
        p->thread_fini(user);
    return NULL;
}

static void pool_free(struct store_pool *p)
{
    pthread_cond_destroy(&p->cv_general);
    pthread_cond_destroy(&p->cv_lease);
    pthread_mutex_destroy(&p->mu);
    free(p->ring[0].jobs);
    free(p->ring[1].jobs);
    free(p->th);
    free(p);
}

int store_pool_open(struct store_pool **out, unsigned threads, unsigned lease_threads,
                    unsigned queue_max, void *(*thread_init)(unsigned k, void *arg),
                    void (*thread_fini)(void *thread), void *arg)
{
    struct store_pool *p;
    unsigned k, total = threads + lease_threads;

    if (threads < 1 || queue_max < 1 || thread_init == NULL || (p = calloc(1, sizeof(*p))) == NULL)
        return -1;
    p->ring[0].jobs = calloc(queue_max, sizeof(*p->ring[0].jobs));
    p->ring[1].jobs = calloc(queue_max, sizeof(*p->ring[1].jobs));
    p->th = calloc(total, sizeof(*p->th));
    if (p->ring[0].jobs == NULL || p->ring[1].jobs == NULL || p->th == NULL) {
        free(p->ring[0].jobs);
        free(p->ring[1].jobs);
        free(p->th);
        free(p);
        return -1;
    }
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv_general, NULL);
    pthread_cond_init(&p->cv_lease, NULL);
    p->queue_max = queue_max;
    p->threads = total;
    p->lease_threads = lease_threads;
    p->thread_init = thread_init;
    p->thread_fini = thread_fini;
    p->arg = arg;
    for (k = 0; k < total; k++) {
        p->th[k].p = p;
        p->th[k].k = k;
        p->th[k].is_lease = k >= threads;
        if (pthread_create(&p->th[k].thread, NULL, pool_main, &p->th[k]) != 0) {
            store_pool_close(p); /* joins the ones started */
            return -1;
        }
        p->started++;
    }
    *out = p;
    return 0;
}

int store_pool_submit(struct store_pool *p, enum store_pool_lane lane, store_pool_run run,
                      void *job, uint64_t deadline_ns)
{
    struct pool_ring *r =
        &p->ring[lane == STORE_POOL_LEASE ? STORE_POOL_LEASE : STORE_POOL_GENERAL];

    pthread_mutex_lock(&p->mu);
    if (r->len == p->queue_max || p->is_closing) {
        pthread_mutex_unlock(&p->mu);
        atomic_fetch_add(&p->rejected_full, 1);
        return -1;
    }
    r->jobs[(r->head + r->len) % p->queue_max] = (struct pool_job){run, job, deadline_ns};
    r->len++;
    atomic_fetch_add(&p->jobs, 1);
    /* A lease job wakes a lease thread when there is one, and a general
     * thread too (whichever is idle first takes it; the other finds
     * nothing and waits again). */
    if (lane == STORE_POOL_LEASE && p->lease_threads > 0)
        pthread_cond_signal(&p->cv_lease);
    pthread_cond_signal(&p->cv_general);
    pthread_mutex_unlock(&p->mu);
    return 0;
}

void store_pool_count_timeout(struct store_pool *p)
{
    atomic_fetch_add(&p->timed_out, 1);
}

void store_pool_count_late(struct store_pool *p)
{
    atomic_fetch_add(&p->late, 1);
}

void store_pool_stats_get(struct store_pool *p, struct store_pool_stats *out)
{
    pthread_mutex_lock(&p->mu);
    out->depth = (uint64_t)p->ring[0].len + p->ring[1].len;
    out->lease_depth = p->ring[STORE_POOL_LEASE].len;
    pthread_mutex_unlock(&p->mu);
    out->threads = p->threads;
    out->lease_threads = p->lease_threads;
    out->queue_max = p->queue_max;
    out->running = atomic_load(&p->running);
    out->jobs = atomic_load(&p->jobs);
    out->late = atomic_load(&p->late);
    out->rejected_full = atomic_load(&p->rejected_full);
    out->timed_out = atomic_load(&p->timed_out);
}

void store_pool_close(struct store_pool *p)
{
    unsigned k;

    if (p == NULL)
        return;
    pthread_mutex_lock(&p->mu);
    p->is_closing = 1;
    pthread_cond_broadcast(&p->cv_general);
    pthread_cond_broadcast(&p->cv_lease);
    pthread_mutex_unlock(&p->mu);
    for (k = 0; k < p->started; k++)
        pthread_join(p->th[k].thread, NULL);
    pool_free(p);
}
