/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The store threads of store_pool.h: a ring of queue_max jobs under one
 * mutex, a condition variable the idle threads wait on. A full ring refuses
 * at once instead of growing: a store that has stalled must turn callers
 * away quickly (503 with Retry-After), not collect them by the thousand.
 */
#include "store_pool.h"

#include "metrics.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

struct pool_job {
    store_pool_run run;
    void *job;
    uint64_t deadline_ns;
};

struct pool_thread {
    struct store_pool *p;
    unsigned k;
    pthread_t thread;
};

struct store_pool {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct pool_job *ring; /* queue_max slots */
    unsigned queue_max, head, len;
    int is_closing;
    unsigned threads, started;
    struct pool_thread *th;
    void *(*thread_init)(unsigned k, void *arg);
    void (*thread_fini)(void *thread);
    void *arg;
    _Atomic uint64_t running, jobs, late, rejected_full, timed_out;
};

static void *pool_main(void *arg)
{
    struct pool_thread *t = arg;
    struct store_pool *p = t->p;
    void *user = p->thread_init(t->k, p->arg);

    pthread_mutex_lock(&p->mu);
    for (;;) {
        struct pool_job j;
        int is_late, is_closing;

        while (p->len == 0 && !p->is_closing)
            pthread_cond_wait(&p->cv, &p->mu);
        if (p->len == 0)
            break; /* closing, and nothing left */
        j = p->ring[p->head];
        p->head = (p->head + 1) % p->queue_max;
        p->len--;
        is_closing = p->is_closing;
        atomic_fetch_add(&p->running, 1);
        pthread_mutex_unlock(&p->mu);
        /* A job nobody waits for any more is not worth a store call; at
         * close, queued jobs are handed back undone so that close is quick. */
        is_late = is_closing || metrics_now_ns() >= j.deadline_ns;
        if (is_late)
            atomic_fetch_add(&p->late, 1);
        j.run(user, j.job, is_late);
        atomic_fetch_sub(&p->running, 1);
        pthread_mutex_lock(&p->mu);
    }
    pthread_mutex_unlock(&p->mu);
    if (p->thread_fini != NULL)
        p->thread_fini(user);
    return NULL;
}

static void pool_free(struct store_pool *p)
{
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    free(p->ring);
    free(p->th);
    free(p);
}

int store_pool_open(struct store_pool **out, unsigned threads, unsigned queue_max,
                    void *(*thread_init)(unsigned k, void *arg), void (*thread_fini)(void *thread),
                    void *arg)
{
    struct store_pool *p;
    unsigned k;

    if (threads < 1 || queue_max < 1 || thread_init == NULL || (p = calloc(1, sizeof(*p))) == NULL)
        return -1;
    p->ring = calloc(queue_max, sizeof(*p->ring));
    p->th = calloc(threads, sizeof(*p->th));
    if (p->ring == NULL || p->th == NULL) {
        free(p->ring);
        free(p->th);
        free(p);
        return -1;
    }
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    p->queue_max = queue_max;
    p->threads = threads;
    p->thread_init = thread_init;
    p->thread_fini = thread_fini;
    p->arg = arg;
    for (k = 0; k < threads; k++) {
        p->th[k].p = p;
        p->th[k].k = k;
        if (pthread_create(&p->th[k].thread, NULL, pool_main, &p->th[k]) != 0) {
            store_pool_close(p); /* joins the ones started */
            return -1;
        }
        p->started++;
    }
    *out = p;
    return 0;
}

int store_pool_submit(struct store_pool *p, store_pool_run run, void *job, uint64_t deadline_ns)
{
    pthread_mutex_lock(&p->mu);
    if (p->len == p->queue_max || p->is_closing) {
        pthread_mutex_unlock(&p->mu);
        atomic_fetch_add(&p->rejected_full, 1);
        return -1;
    }
    p->ring[(p->head + p->len) % p->queue_max] = (struct pool_job){run, job, deadline_ns};
    p->len++;
    atomic_fetch_add(&p->jobs, 1);
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
    return 0;
}

void store_pool_count_timeout(struct store_pool *p)
{
    atomic_fetch_add(&p->timed_out, 1);
}

void store_pool_stats_get(struct store_pool *p, struct store_pool_stats *out)
{
    pthread_mutex_lock(&p->mu);
    out->depth = p->len;
    pthread_mutex_unlock(&p->mu);
    out->threads = p->threads;
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
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    for (k = 0; k < p->started; k++)
        pthread_join(p->th[k].thread, NULL);
    pool_free(p);
}
