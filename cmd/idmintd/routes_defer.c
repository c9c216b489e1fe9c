/* SPDX-License-Identifier: Apache-2.0 */
/*
 * routes_defer.h: a store-bound request goes to the store pool as a copy
 * (http_later_new); the store thread runs the handler with its own worker
 * and authority; the answer goes back to the loop that owns the request.
 *
 * Why a late answer is safe to drop. A job that misses store_deadline_ms
 * has its client answered 503 while the job may still commit: a worker
 * lease taken, a range reserved, a batch saved. None of these can lead to
 * a duplicate. An uncollected worker lease is held by nobody: no one mints
 * with that worker id, and it expires after its lease_ms like any lease
 * whose holder died, fenced as usual for the next taker. An uncollected
 * range is a block no one hands out: a gap, and the namespace's next
 * reservation starts after it (a retry with the same request_id gets the
 * same block back, never an overlapping one). A saved idempotent batch is
 * what a retry with the same key is answered from. The store's rules, not
 * the client's timing, keep IDs unique; the deadline only decides whether
 * this client hears about it.
 */
#include "routes_defer.h"
#include "clocks.h"

#include "daemon.h"
#include "errors_http.h"
#include "log.h"
#include "reply.h"
#include "store_pool.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#define RETRY_AFTER_S "1"

struct store_job {
    struct daemon_thread *loop; /* the loop's worker: counts the request */
    struct http_req *copy;
    routes_handler handler;
    struct route_match m;
    const char *actor; /* a token name of cfg, or a literal */
    const struct route_row *row;
    uint64_t t0_ns;
    const void *data; /* routes_defer_store_with's bytes, in the copy's memory */
    size_t data_size;
    /* routes_defer_resume's, written by the store thread before is_resumed,
     * which the loop reads first (also at the deadline, while the store
     * thread may still run). */
    routes_handler resume;
    const void *resume_data; /* in the copy's memory */
    size_t resume_size;
    _Atomic int is_resumed;
    /* JOB_QUEUED until a store thread takes it (JOB_TAKEN) or the loop
     * answers 503 at the deadline first (JOB_ABANDONED): the pool's deadline
     * and the loop's timer are read at different moments, and a call whose
     * client heard 503 while it waited must never be made. */
    _Atomic int state;
};

enum { JOB_QUEUED = 0, JOB_TAKEN, JOB_ABANDONED };

static void reply_unavailable(struct http_req *r, const char *text)
{
    http_add_header(r, "retry-after", RETRY_AFTER_S);
    routes_fail_wire(r, "unavailable", text);
}

/* On the loop: the store thread's answer was sent (status) or dropped (0). */
static void job_on_done(int status, void *arg)
{
    struct store_job *j = arg;

    if (status != 0)
        metrics_count_answer(j->loop, j->row, status, j->t0_ns);
}

/* On the loop: run what the store thread handed the request back for. */
static void job_resume(struct http_req *r, struct store_job *j)
{
    struct daemon_thread *w = j->loop;

    w->status = 0;
    w->row = j->row;
    w->t0_ns = j->t0_ns;
    w->actor = j->actor;
    w->is_deferred = 0;
    w->handoff = j->resume_data;
    w->handoff_size = j->resume_size;
    j->resume(r, w, &j->m);
    w->handoff = NULL;
    w->handoff_size = 0;
    if (!w->is_deferred)
        metrics_count_answer(w, j->row, w->status, j->t0_ns);
}

/*
 * On the loop: the store thread handed the request back (routes_defer_resume),
 * or the deadline passed, or the job was handed back undone.
 */
static void job_on_unanswered(struct http_req *r, void *arg)
{
    struct store_job *j = arg;
    struct daemon_thread *w = j->loop;
    char text[160];

    if (atomic_load_explicit(&j->is_resumed, memory_order_acquire)) {
        job_resume(r, j);
        return;
    }
    /* Still queued: no store thread may start it now. */
    {
        int queued = JOB_QUEUED;

        (void)atomic_compare_exchange_strong(&j->state, &queued, JOB_ABANDONED);
    }

    snprintf(text, sizeof(text),
             "the store did not answer within store_deadline_ms (%u ms); retry in " RETRY_AFTER_S
             " s",
             (unsigned)w->d->cfg.store_deadline_ms);
    store_pool_count_timeout(w->d->pool);
    log_write(LOG_WARN, "store call missed its deadline", "route=\"%s\" deadline_ms=%u",
              j->row != NULL ? j->row->label : "other", (unsigned)w->d->cfg.store_deadline_ms);
    reply_unavailable(r, text);
    metrics_count_answer(w, j->row, w->status, j->t0_ns);
}

/* On a store thread. */
static void job_run(void *thread, void *arg, int is_late)
{
    struct store_job *j = arg;
    struct daemon_thread *sw = thread;
    int queued = JOB_QUEUED;

    /* Answered 503 already while it waited: handed back undone, as if late. */
    if (!is_late && !atomic_compare_exchange_strong(&j->state, &queued, JOB_TAKEN)) {
        store_pool_count_late(sw->d->pool);
        is_late = 1;
    }
    if (!is_late) {
        sw->actor = j->actor;
        sw->status = 0;
        sw->handoff = j->data;
        sw->handoff_size = j->data_size;
        sw->resume = NULL;
        j->copy->thread = sw;
        j->handler(j->copy, sw, &j->m);
        if (sw->resume != NULL) {
            j->resume = sw->resume;
            j->resume_data = sw->resume_data;
            j->resume_size = sw->resume_size;
            atomic_store_explicit(&j->is_resumed, 1, memory_order_release);
        }
        sw->handoff = NULL;
        sw->resume = NULL;
    }
    http_later_post(j->copy); /* j lives in the copy: not touched after */
}

int routes_defer_resume(struct http_req *r, struct daemon_thread *w, routes_handler next,
                        const void *data, size_t size)
{
    char *copy = size > 0 ? http_alloc(r, size) : NULL;

    if (size > 0 && copy == NULL)
        return -1;
    if (size > 0)
        memcpy(copy, data, size);
    w->resume = next;
    w->resume_data = copy;
    w->resume_size = size;
    return 0;
}

void routes_defer_store(struct http_req *r, struct daemon_thread *w, const struct route_match *m,
                        routes_handler handler)
{
    routes_defer_store_with(r, w, m, handler, NULL, 0);
}

/* No store threads (fuzz/daemon_stub.h): run @p handler here, as a store thread would. */
static void run_here(struct http_req *r, struct daemon_thread *w, const struct route_match *m,
                     routes_handler handler, const void *data, size_t size)
{
    routes_handler next;

    w->is_store = 1;
    w->handoff = data;
    w->handoff_size = size;
    w->resume = NULL;
    handler(r, w, m);
    w->is_store = 0;
    w->handoff = NULL;
    w->handoff_size = 0;
    if ((next = w->resume) == NULL)
        return;
    w->resume = NULL;
    w->handoff = w->resume_data;
    w->handoff_size = w->resume_size;
    next(r, w, m);
    w->handoff = NULL;
    w->handoff_size = 0;
}

void routes_defer_store_with(struct http_req *r, struct daemon_thread *w,
                             const struct route_match *m, routes_handler handler, const void *data,
                             size_t size)
{
    static const struct http_later_cbs cbs = {job_on_done, job_on_unanswered};
    const struct config *cfg = &w->d->cfg;
    enum store_pool_lane lane = w->row != NULL && w->row->is_store == ROUTE_ON_LEASE
                                    ? STORE_POOL_LEASE
                                    : STORE_POOL_GENERAL;
    struct http_req *copy;
    struct store_job *j;
    void *arg;

    if (w->d->pool == NULL) {
        run_here(r, w, m, handler, data, size);
        return;
    }
    if (http_later_new(r, &cbs, sizeof(*j), &copy, &arg) != 0) {
        routes_fail(r, IDMINT_ENOMEM, "out of memory queueing a store call");
        return;
    }
    j = arg;
    j->loop = w;
    j->copy = copy;
    j->handler = handler;
    j->m = *m;
    j->actor = w->actor;
    j->row = w->row;
    j->t0_ns = w->t0_ns;
    atomic_init(&j->is_resumed, 0);
    atomic_init(&j->state, JOB_QUEUED);
    if (size > 0) {
        /* Into the copy's memory: the store thread may outlive the request. */
        char *d = http_alloc(copy, size);

        if (d == NULL) {
            http_later_cancel(copy);
            routes_fail(r, IDMINT_ENOMEM, "out of memory queueing a store call");
            return;
        }
        memcpy(d, data, size);
        j->data = d;
        j->data_size = size;
    }
    if (store_pool_submit(w->d->pool, lane, job_run, j,
                          clocks_mono_ns() + (uint64_t)cfg->store_deadline_ms * 1000000u) != 0) {
        char text[160];

        http_later_cancel(copy);
        snprintf(
            text, sizeof(text),
            "the store queue is full (store_queue %u calls wait already); retry in " RETRY_AFTER_S
            " s",
            cfg->store_queue);
        reply_unavailable(r, text);
        return;
    }
    w->is_deferred = 1;
}

void *routes_store_thread_init(unsigned k, void *daemon)
{
    struct daemon *d = daemon;
    struct daemon_thread *w = &d->threads[d->cfg.threads + k];

    w->index = d->cfg.threads + k;
    w->d = d;
    w->is_store = 1;
    return w;
}

void routes_store_thread_fini(void *worker)
{
    struct daemon_thread *w = worker;

    idmint_authority_close(w->auth);
    w->auth = NULL;
}
