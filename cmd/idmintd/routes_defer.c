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

#include "daemon.h"
#include "errors_http.h"
#include "log.h"
#include "reply.h"
#include "store_pool.h"

#include <stdio.h>

#define RETRY_AFTER_S "1"

struct store_job {
    struct worker *loop; /* the loop's worker: counts the request */
    struct http_req *copy;
    routes_handler handler;
    struct route_match m;
    const char *actor; /* a token name of cfg, or a literal */
    const struct route_row *row;
    uint64_t t0_ns;
};

static void reply_unavailable(struct http_req *r, const char *text)
{
    http_add_header(r, "retry-after", RETRY_AFTER_S);
    routes_fail_http(r, 503, errors_http_lookup(IDMINT_EUNAVAILABLE)->code, text);
}

/* On the loop: the store thread's answer was sent (status) or dropped (0). */
static void job_on_done(int status, void *arg)
{
    struct store_job *j = arg;

    if (status != 0)
        routes_count(j->loop, j->row, status, j->t0_ns);
}

/* On the loop: the deadline passed, or the job was handed back undone. */
static void job_on_unanswered(struct http_req *r, void *arg)
{
    struct store_job *j = arg;
    struct worker *w = j->loop;
    char text[160];

    snprintf(text, sizeof(text),
             "the store did not answer within store_deadline_ms (%u ms); retry in " RETRY_AFTER_S
             " s",
             (unsigned)w->d->cfg.store_deadline_ms);
    store_pool_count_timeout(w->d->pool);
    log_write(LOG_WARN, "store call missed its deadline", "route=\"%s\" deadline_ms=%u",
              j->row != NULL ? j->row->label : "other", (unsigned)w->d->cfg.store_deadline_ms);
    reply_unavailable(r, text);
    routes_count(w, j->row, w->status, j->t0_ns);
}

/* On a store thread. */
static void job_run(void *thread, void *arg, int is_late)
{
    struct store_job *j = arg;
    struct worker *sw = thread;

    if (!is_late) {
        sw->actor = j->actor;
        sw->status = 0;
        j->copy->thread = sw;
        j->handler(j->copy, sw, &j->m);
    }
    http_later_post(j->copy); /* j lives in the copy: not touched after */
}

void routes_defer_store(struct http_req *r, struct worker *w, const struct route_match *m,
                        routes_handler handler)
{
    static const struct http_later_cbs cbs = {job_on_done, job_on_unanswered};
    const struct config *cfg = &w->d->cfg;
    struct http_req *copy;
    struct store_job *j;
    void *arg;

    if (w->d->pool == NULL) {
        /* No store threads (fuzz/daemon_stub.h): run it here, as a store thread would. */
        w->is_store = 1;
        handler(r, w, m);
        w->is_store = 0;
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
    if (store_pool_submit(w->d->pool, job_run, j,
                          metrics_now_ns() + (uint64_t)cfg->store_deadline_ms * 1000000u) != 0) {
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
    struct worker *w = &d->workers[d->cfg.threads + k];

    w->index = d->cfg.threads + k;
    w->d = d;
    w->is_store = 1;
    return w;
}

void routes_store_thread_fini(void *worker)
{
    struct worker *w = worker;

    idmint_authority_close(w->auth);
    w->auth = NULL;
}
