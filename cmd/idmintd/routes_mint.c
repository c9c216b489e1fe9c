/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Minting a GET /v1/ids batch without holding a thread that must not wait
 * (routes_mint.h). A loop mints what is ready; the rest of a snowflake
 * batch waits for its next time unit in a timer (http_after), and the rest
 * of a range batch whose reserve ran dry goes to a store thread, which may
 * wait for the refill. A store thread never waits for a time unit: it
 * hands such a batch to its loop.
 */
#include "routes_mint.h"

#include "daemon.h"
#include "idmint_service.h"
#include "reply.h"
#include "routes_defer.h"

#include <stdio.h>
#include <string.h>

/*
 * A batch being minted on a loop: what the current time unit held went
 * out, the rest waits for the next unit in a timer. In request memory,
 * made only for a batch that has to wait: most fit in their unit.
 */
struct loop_batch {
    struct daemon_thread *w;
    struct ns_handle *nh;
    const struct route_row *row;
    const char *actor;
    uint64_t t0_ns;
    struct route_match m;
    uint64_t *ids;
    size_t count, done;
    routes_mint_done finish;
    char ns[64];
};

/* A batch handed between a store thread and its loop: what is minted, and what is asked. */
struct mint_handoff {
    char ns[64];
    uint32_t count; /* asked for */
    uint32_t done;  /* minted: ids[0..done) */
    routes_mint_done finish;
    uint64_t ids[]; /* done of them */
};

int routes_mint_ready(struct daemon_thread *w, struct ns_handle *nh, uint64_t *ids, size_t count,
                      size_t *done, uint32_t *wait_ms)
{
    size_t got = 0;
    int rc;

    if (*done >= count)
        return 0;
    if (w->is_store && nh->is_range) {
        /* The one thread that may wait on the store: a dry range's refill. */
        rc = handles_next_n(nh, ids + *done, count - *done);
        got = rc == 0 ? count - *done : 0;
        *wait_ms = 0;
    } else {
        rc = handles_try_next_n(nh, ids + *done, count - *done, &got, wait_ms);
    }
    if (rc == 0) {
        metrics_add(&w->metrics.ids_issued[nh->slot], got);
        *done += got;
    }
    return rc;
}

static void finish(struct http_req *r, struct daemon_thread *w, const struct route_match *m,
                   const char *ns, const uint64_t *ids, size_t count, routes_mint_done done)
{
    if (done != NULL)
        done(r, w, m, ids, count);
    else
        routes_reply_ids(r, ns, ids, count);
}

/* Copy a batch into a handoff in request memory; NULL when out of memory. */
static struct mint_handoff *handoff_new(struct http_req *r, const char *ns, const uint64_t *ids,
                                        size_t done, size_t count, routes_mint_done done_fn,
                                        size_t *size)
{
    struct mint_handoff *h;

    *size = sizeof(*h) + done * sizeof(uint64_t);
    if ((h = (struct mint_handoff *)(void *)http_alloc(r, *size)) == NULL)
        return NULL;
    memset(h, 0, sizeof(*h));
    snprintf(h->ns, sizeof(h->ns), "%s", ns);
    h->count = (uint32_t)count;
    h->done = (uint32_t)done;
    h->finish = done_fn;
    memcpy(h->ids, ids, done * sizeof(uint64_t));
    return h;
}

/*
 * The handoff a stage before left in w->handoff, with its handle and its
 * IDs in request memory of their full count; NULL after answering @p r.
 */
static const struct mint_handoff *handoff_take(struct http_req *r, struct daemon_thread *w,
                                               struct ns_handle **nh, uint64_t **ids)
{
    const struct mint_handoff *h = w->handoff;

    if (h == NULL || w->handoff_size < sizeof(*h) || h->done > h->count ||
        w->handoff_size < sizeof(*h) + (size_t)h->done * sizeof(uint64_t)) {
        routes_fail(r, IDMINT_ENOMEM, "out of memory handing a batch over");
        return NULL;
    }
    /* Open already: the thread before opened it, and handles stay. */
    if ((*nh = handles_find(&w->d->handles, h->ns)) == NULL) {
        routes_fail(r, IDMINT_EUNAVAILABLE, "the namespace's handle is not open");
        return NULL;
    }
    if ((*ids = (uint64_t *)(void *)http_alloc(r, (size_t)h->count * sizeof(uint64_t))) == NULL) {
        routes_fail(r, IDMINT_ENOMEM, "out of memory");
        return NULL;
    }
    memcpy(*ids, h->ids, (size_t)h->done * sizeof(uint64_t));
    return h;
}

/* On a store thread, from a loop whose range ran dry: mint the rest, waiting for the refill. */
static void range_go_on(struct http_req *r, struct daemon_thread *w, const struct route_match *m)
{
    const struct mint_handoff *h;
    struct ns_handle *nh;
    uint64_t *ids;
    size_t done;
    uint32_t wait_ms = 0;
    int rc;

    if ((h = handoff_take(r, w, &nh, &ids)) == NULL)
        return;
    done = h->done;
    if ((rc = routes_mint_ready(w, nh, ids, h->count, &done, &wait_ms)) != 0)
        routes_fail(r, rc, NULL);
    else if (h->finish == NULL)
        routes_reply_ids(r, h->ns, ids, done);
    /* A finish runs on a loop: take the whole batch back there. */
    else if (routes_mint_finish_on_loop(r, w, h->ns, ids, done, h->count, h->finish) != 0)
        routes_fail(r, IDMINT_ENOMEM, "out of memory handing a batch to its event loop");
    (void)m;
}

static void batch_go_on(struct http_req *r, void *arg);

/*
 * Finish @p b, or come back after @p wait_ms for its rest, or send a range
 * batch's rest to a store thread. 1 when it waits in a timer.
 */
static int batch_answer_or_wait(struct http_req *r, struct loop_batch *b, int rc, uint32_t wait_ms)
{
    struct mint_handoff *h;
    size_t size;

    if (rc != 0) {
        routes_fail(r, rc, NULL);
    } else if (b->done == b->count) {
        finish(r, b->w, &b->m, b->ns, b->ids, b->count, b->finish);
    } else if (b->nh->is_range) {
        if ((h = handoff_new(r, b->ns, b->ids, b->done, b->count, b->finish, &size)) == NULL)
            routes_fail(r, IDMINT_ENOMEM, "out of memory handing a batch to a store thread");
        else
            routes_defer_store_with(r, b->w, &b->m, range_go_on, h, size);
    } else if (http_after(r, wait_ms, batch_go_on, b) == 0) {
        return 1;
    } else { /* IDs minted and not sent are a gap, never handed out again. */
        routes_fail(r, IDMINT_ENOMEM, "out of memory waiting for the next time unit");
    }
    return 0;
}

/* The timer: mint what is ready; answer when all are, else wait again. */
static void batch_go_on(struct http_req *r, void *arg)
{
    struct loop_batch *b = arg;
    struct daemon_thread *w = b->w;
    uint32_t wait_ms = 0;
    int rc;

    /* The loop's thread serves other requests between ticks: make it this
     * request's again, for the answer, the metrics and a hand-over. */
    w->status = 0;
    w->row = b->row;
    w->t0_ns = b->t0_ns;
    w->actor = b->actor;
    w->is_deferred = 0;
    rc = routes_mint_ready(w, b->nh, b->ids, b->count, &b->done, &wait_ms);
    if (!batch_answer_or_wait(r, b, rc, wait_ms) && !w->is_deferred)
        metrics_count_answer(w, b->row, w->status, b->t0_ns); /* a timer's answer counts itself */
}

void routes_mint_on_loop(struct http_req *r, struct daemon_thread *w, const struct route_match *m,
                         struct ns_handle *nh, const char *ns, uint64_t *ids, size_t count,
                         size_t done, routes_mint_done finish_fn)
{
    struct loop_batch *b;
    uint32_t wait_ms = 0;
    int rc = routes_mint_ready(w, nh, ids, count, &done, &wait_ms);

    if (rc != 0) {
        routes_fail(r, rc, NULL);
        return;
    }
    if (done == count) {
        finish(r, w, m, ns, ids, count, finish_fn);
        return;
    }
    if ((b = (struct loop_batch *)(void *)http_alloc(r, sizeof(*b))) == NULL) {
        routes_fail(r, IDMINT_ENOMEM, "out of memory waiting for the next time unit");
        return;
    }
    memset(b, 0, sizeof(*b));
    b->w = w;
    b->nh = nh;
    b->row = w->row;
    b->actor = w->actor;
    b->t0_ns = w->t0_ns;
    b->m = *m;
    b->ids = ids;
    b->count = count;
    b->done = done;
    b->finish = finish_fn;
    snprintf(b->ns, sizeof(b->ns), "%s", ns);
    if (batch_answer_or_wait(r, b, 0, wait_ms))
        w->is_deferred = 1; /* still inside the dispatcher: the timer counts it */
}

/* On the loop, after routes_mint_finish_on_loop: mint the rest of the batch. */
static void loop_go_on(struct http_req *r, struct daemon_thread *w, const struct route_match *m)
{
    const struct mint_handoff *h;
    struct ns_handle *nh;
    uint64_t *ids;

    if ((h = handoff_take(r, w, &nh, &ids)) != NULL)
        routes_mint_on_loop(r, w, m, nh, h->ns, ids, h->count, h->done, h->finish);
}

int routes_mint_finish_on_loop(struct http_req *r, struct daemon_thread *w, const char *ns,
                               const uint64_t *ids, size_t done, size_t count,
                               routes_mint_done finish_fn)
{
    size_t size;
    struct mint_handoff *h = handoff_new(r, ns, ids, done, count, finish_fn, &size);

    if (h == NULL)
        return -1;
    return routes_defer_resume(r, w, loop_go_on, h, size);
}
