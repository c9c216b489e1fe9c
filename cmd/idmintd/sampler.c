/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The store sampler of sampler.h. Its thread is the only user of its
 * authority; every store call is timed into its own metrics_thread, which
 * /metrics adds to the routes' store latencies. The audit tail is found
 * once by a binary search on seq (records with seq > X exist or not) and
 * then followed forward, so even a long log costs a few reads per pass.
 */
#include "sampler.h"
#include "clocks.h"

#include "daemon.h"
#include "idmint_service.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define AUDIT_PAGE 256 /* records read forward per pass; a fuller page means a backlog */

static struct {
    pthread_t thread;
    pthread_mutex_t mu; /* guards cur, is_kicked and the cond wait */
    pthread_cond_t cv;
    int is_running;
    int has_cv; /* cv is initialised: sampler_start ran (requests may come before) */
    _Atomic int is_stopping;
    int is_kicked;                   /* a status request wants a full pass soon */
    _Atomic int64_t watched_mono_ms; /* last status request; 0: never */
    struct sampler_cache *cur;       /* the latest pass; NULL before the first */
    idmint_authority *auth;          /* the sampler thread's own; opened on first use */
    struct metrics_thread metrics;   /* its store latencies */
    /* The audit tail, followed by the sampler thread only. */
    idmint_audit_entry tail[SAMPLER_AUDIT_TAIL]; /* newest first */
    size_t n_tail;
    int64_t tail_seq; /* the newest seq seen */
    int has_tail;
} sampler = {.mu = PTHREAD_MUTEX_INITIALIZER};

static void note_error(int rc, char *buf, size_t size)
{
    const char *detail = idmint_errmsg();

    snprintf(buf, size, "%s%s%s", idmint_strerror(rc), detail[0] != '\0' ? ": " : "", detail);
}

static void cache_free(struct sampler_cache *c)
{
    size_t i;

    if (c == NULL)
        return;
    for (i = 0; i < c->n_workers; i++)
        idmint_free(c->workers[i].rows);
    free(c->workers);
    idmint_free(c->ns);
    free(c);
}

const struct sampler_cache *sampler_cache_get(void)
{
    struct sampler_cache *c;

    pthread_mutex_lock(&sampler.mu);
    c = sampler.cur;
    if (c != NULL)
        atomic_fetch_add(&c->refs, 1);
    pthread_mutex_unlock(&sampler.mu);
    return c;
}

void sampler_cache_put(const struct sampler_cache *c)
{
    struct sampler_cache *m = (struct sampler_cache *)(uintptr_t)c; /* ours: allocated here */

    if (m != NULL && atomic_fetch_sub(&m->refs, 1) == 1)
        cache_free(m);
}

const struct sampler_rows *sampler_rows_find(const struct sampler_cache *c, const char *ns)
{
    size_t i;

    for (i = 0; c != NULL && i < c->n_workers; i++)
        if (strcmp(c->workers[i].name, ns) == 0)
            return &c->workers[i];
    return NULL;
}

const struct metrics_thread *sampler_metrics(void)
{
    return &sampler.metrics;
}

void sampler_watch(void)
{
    int64_t now = (int64_t)clocks_mono_ms();

    atomic_store(&sampler.watched_mono_ms, now > 0 ? now : 1);
    pthread_mutex_lock(&sampler.mu);
    if (sampler.has_cv && (sampler.cur == NULL || !sampler.cur->is_full)) {
        sampler.is_kicked = 1;
        pthread_cond_signal(&sampler.cv);
    }
    pthread_mutex_unlock(&sampler.mu);
}

/* ==== store reads (sampler thread) ==== */

static int stopping(void)
{
    return atomic_load(&sampler.is_stopping);
}

/* The sampler's authority, opened on first use. 0 or IDMINT_E*. */
static int authority(struct daemon *d)
{
    if (sampler.auth == NULL && handles_authority_open(&d->handles, &sampler.auth) != 0) {
        sampler.auth = NULL;
        return IDMINT_EUNAVAILABLE;
    }
    return 0;
}

static void read_rows(struct daemon *d, struct sampler_rows *r, const char *name,
                      const idmint_layout *layout)
{
    uint64_t t0;

    snprintf(r->name, sizeof(r->name), "%s", name);
    r->layout = *layout;
    r->read_ms = clocks_wall_ms();
    if ((r->rc = authority(d)) != 0) {
        snprintf(r->error, sizeof(r->error), "cannot open the authority");
        return;
    }
    t0 = clocks_mono_ns();
    r->rc = idmint_workers_list(sampler.auth, name, &r->rows, &r->n);
    metrics_store_time(&sampler.metrics, clocks_mono_ns() - t0);
    if (r->rc != 0) {
        note_error(r->rc, r->error, sizeof(r->error));
        r->rows = NULL;
        r->n = 0;
    }
}

/* Audit records after @p after, at most @p limit, timed. */
static int audit_read(int64_t after, size_t limit, idmint_audit_entry **out, size_t *n)
{
    uint64_t t0 = clocks_mono_ns();
    int rc = idmint_audit_list(sampler.auth, after, limit, out, n);

    metrics_store_time(&sampler.metrics, clocks_mono_ns() - t0);
    return rc;
}

/* 1 when a record with seq > @p after exists, 0 when none, or a negative IDMINT_E*. */
static int audit_exists(int64_t after)
{
    idmint_audit_entry *list = NULL;
    size_t n = 0;
    int rc = audit_read(after, 1, &list, &n);

    idmint_free(list);
    return rc != 0 ? rc : n > 0;
}

/* The newest seq (0: an empty log) by exponential, then binary, search. 0 or IDMINT_E*. */
static int audit_find_max(int64_t *max_seq)
{
    int64_t lo = 0, hi = 1;
    int e = audit_exists(0);

    if (e <= 0) {
        *max_seq = 0;
        return e;
    }
    while (!stopping() && (e = audit_exists(hi)) == 1 && hi < INT64_MAX / 4) {
        lo = hi;
        hi *= 2;
    }
    if (e < 0)
        return e;
    /* A record after lo exists, none after hi: the newest is in (lo, hi]. */
    while (!stopping() && hi - lo > 1) {
        int64_t mid = lo + (hi - lo) / 2;

        if ((e = audit_exists(mid)) < 0)
            return e;
        if (e)
            lo = mid;
        else
            hi = mid;
    }
    *max_seq = hi;
    return 0;
}

/* Put @p n records of @p list (oldest first) in front of the tail. */
static void tail_push(const idmint_audit_entry *list, size_t n)
{
    size_t i, keep;

    for (i = n > SAMPLER_AUDIT_TAIL ? n - SAMPLER_AUDIT_TAIL : 0; i < n; i++) {
        const idmint_audit_entry *e = idmint_audit_entry_at(list, i);

        keep = sampler.n_tail < SAMPLER_AUDIT_TAIL ? sampler.n_tail : SAMPLER_AUDIT_TAIL - 1;
        memmove(&sampler.tail[1], &sampler.tail[0], keep * sizeof(sampler.tail[0]));
        memcpy(&sampler.tail[0], e, sizeof(sampler.tail[0])); /* same header: same size */
        sampler.n_tail = keep + 1;
        if (e->seq > sampler.tail_seq)
            sampler.tail_seq = e->seq;
    }
}

/* Find the tail anew: the newest seq, then the records just before it. */
static int audit_reload(void)
{
    int64_t max_seq = 0, span = SAMPLER_AUDIT_TAIL;
    idmint_audit_entry *list = NULL;
    size_t n = 0;
    int rc, tries;

    if ((rc = audit_find_max(&max_seq)) != 0)
        return rc;
    sampler.n_tail = 0;
    sampler.tail_seq = 0;
    /* Seqs may have gaps (a rolled-back insert): widen until 20 are found. */
    for (tries = 0; tries < 4 && max_seq > 0 && !stopping(); tries++) {
        int64_t after = max_seq > span ? max_seq - span : 0;

        if ((rc = audit_read(after, (size_t)span, &list, &n)) != 0)
            return rc;
        if (n >= SAMPLER_AUDIT_TAIL || after == 0 || tries == 3) {
            tail_push(list, n);
            idmint_free(list);
            break;
        }
        idmint_free(list);
        span *= 4;
    }
    sampler.has_tail = 1;
    return 0;
}

static int audit_follow(void)
{
    idmint_audit_entry *list = NULL;
    size_t n = 0;
    int rc;

    if (!sampler.has_tail)
        return audit_reload();
    if ((rc = audit_read(sampler.tail_seq, AUDIT_PAGE, &list, &n)) != 0)
        return rc;
    if (n == AUDIT_PAGE) {
        idmint_free(list);
        return audit_reload(); /* a backlog: jump to its end */
    }
    tail_push(list, n);
    idmint_free(list);
    return 0;
}

/* ==== the pass ==== */

static int has_rows(const struct sampler_cache *c, size_t n, const char *name)
{
    size_t i;

    for (i = 0; i < n; i++)
        if (strcmp(c->workers[i].name, name) == 0)
            return 1;
    return 0;
}

/* Read one pass; NULL when out of memory or asked to stop. */
static struct sampler_cache *pass(struct daemon *d, int is_full)
{
    size_t nh = atomic_load_explicit(&d->handles.n, memory_order_acquire), i, cap;
    struct sampler_cache *c = calloc(1, sizeof(*c));
    uint64_t t0;

    if (c == NULL)
        return NULL;
    atomic_init(&c->refs, 1);
    c->read_ms = clocks_wall_ms();
    c->is_full = is_full;
    if (is_full) {
        if ((c->ns_rc = authority(d)) == 0) {
            t0 = clocks_mono_ns();
            c->ns_rc = idmint_ns_list(sampler.auth, &c->ns, &c->n_ns);
            metrics_store_time(&sampler.metrics, clocks_mono_ns() - t0);
        }
        if (c->ns_rc != 0) {
            note_error(c->ns_rc, c->ns_error, sizeof(c->ns_error));
            c->ns = NULL;
            c->n_ns = 0;
        }
    }
    cap = nh + c->n_ns;
    if (cap > 0 && (c->workers = calloc(cap, sizeof(c->workers[0]))) == NULL) {
        cache_free(c);
        return NULL;
    }
    /* Each store call may wait seconds on a dead database: look for a stop
     * between them, so SIGTERM is not held up for a whole pass. */
    for (i = 0; i < nh && !stopping(); i++) {
        const struct ns_handle *h = d->handles.slots[i];

        if (!h->is_range && !has_rows(c, c->n_workers, h->name))
            read_rows(d, &c->workers[c->n_workers++], h->name, &h->layout);
    }
    for (i = 0; i < c->n_ns && !stopping(); i++) {
        const idmint_ns_info *ns = idmint_ns_info_at(c->ns, i);

        if (ns->kind == IDMINT_KIND_SNOWFLAKE && !has_rows(c, c->n_workers, ns->name))
            read_rows(d, &c->workers[c->n_workers++], ns->name, &ns->layout);
    }
    if (is_full && !stopping()) {
        if ((c->audit_rc = authority(d)) == 0)
            c->audit_rc = audit_follow();
        if (c->audit_rc != 0)
            note_error(c->audit_rc, c->audit_error, sizeof(c->audit_error));
        memcpy(c->audit, sampler.tail, sampler.n_tail * sizeof(sampler.tail[0]));
        c->n_audit = sampler.n_tail;
    }
    if (stopping()) {
        cache_free(c);
        return NULL;
    }
    return c;
}

static void publish(struct sampler_cache *c)
{
    struct sampler_cache *old;

    pthread_mutex_lock(&sampler.mu);
    old = sampler.cur;
    sampler.cur = c;
    pthread_mutex_unlock(&sampler.mu);
    sampler_cache_put(old);
}

static void *sampler_main(void *arg)
{
    struct daemon *d = arg;
    int64_t last_end = INT64_MIN / 2;

    for (;;) {
        int64_t now, due, watched;
        int is_full;
        struct sampler_cache *c;

        pthread_mutex_lock(&sampler.mu);
        for (;;) {
            struct timespec until;

            now = (int64_t)clocks_mono_ms();
            due = last_end + SAMPLER_PERIOD_MS;
            if (sampler.is_kicked && last_end + SAMPLER_KICK_MS < due)
                due = last_end + SAMPLER_KICK_MS;
            if (sampler.is_stopping || now >= due)
                break;
            until = idmint__monotonic_after_ms((uint64_t)(due - now));
            /* A signal or the deadline: either way the loop looks again. */
            (void)pthread_cond_timedwait(&sampler.cv, &sampler.mu, &until);
        }
        sampler.is_kicked = 0;
        pthread_mutex_unlock(&sampler.mu);
        if (stopping())
            break;
        watched = atomic_load(&sampler.watched_mono_ms);
        is_full = watched != 0 && now - watched < (int64_t)SAMPLER_WATCH_MS;
        if ((c = pass(d, is_full)) != NULL)
            publish(c);
        last_end = (int64_t)clocks_mono_ms();
    }
    return NULL;
}

int sampler_start(struct daemon *d)
{
    pthread_mutex_lock(&sampler.mu);
    idmint__cond_init_monotonic(&sampler.cv);
    sampler.has_cv = 1;
    pthread_mutex_unlock(&sampler.mu);
    sampler.is_stopping = 0;
    if (pthread_create(&sampler.thread, NULL, sampler_main, d) != 0)
        return -1;
    sampler.is_running = 1;
    return 0;
}

void sampler_stop(void)
{
    if (!sampler.is_running)
        return;
    pthread_mutex_lock(&sampler.mu);
    sampler.is_stopping = 1;
    pthread_cond_signal(&sampler.cv);
    pthread_mutex_unlock(&sampler.mu);
    pthread_join(sampler.thread, NULL);
    sampler.is_running = 0;
    idmint_authority_close(sampler.auth);
    sampler.auth = NULL;
    publish(NULL);
}
