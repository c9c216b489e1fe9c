/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The daemon's counters: each thread's own (written by that thread alone)
 * and the few shared ones, and the sums a reader takes of them. A leaf:
 * everything that renders them (prometheus.c, status.c) sits above it.
 */
#include "metrics.h"
#include "clocks.h"

#include "daemon.h"
#include "log.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

const int metrics_codes[METRICS_CODES] = {200, 201, 400, 401, 403, 404, 405, 409, 413,
                                          414, 429, 431, 500, 501, 503, 505, 0};

/* Upper bounds in seconds; the last bucket is +Inf. */
const double metrics_bounds_s[METRICS_BUCKETS - 1] = {
    0.000005, 0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.005, 0.025, 0.1, 1.0};

/* Range reservations served, by namespace: rare and slow, so a lock is fine. */
static pthread_mutex_t ranges_mu = PTHREAD_MUTEX_INITIALIZER;
static struct metrics_range_count ranges[METRICS_MAX_NS];
static size_t n_ranges;

static void hist_record(struct metrics_hist *h, uint64_t ns)
{
    size_t i;

    for (i = 0; i < METRICS_BUCKETS - 1; i++)
        if ((double)ns <= metrics_bounds_s[i] * 1e9)
            break;
    metrics_add(&h->bucket[i], 1);
    metrics_add(&h->count, 1);
    metrics_add(&h->sum_ns, ns);
}

void metrics_count_request(struct metrics_thread *m, const struct route_row *row, int status,
                           uint64_t elapsed_ns)
{
    size_t route = row != NULL ? (size_t)(row - route_table) : ROUTE_ROWS_MAX, i;

    for (i = 0; i < METRICS_CODES - 1; i++)
        if (metrics_codes[i] == status)
            break;
    metrics_add(&m->http[route][i], 1);
    hist_record(&m->http_duration, elapsed_ns);
}

void metrics_store_time(struct metrics_thread *m, uint64_t elapsed_ns)
{
    hist_record(&m->store_latency, elapsed_ns);
}

static _Atomic uint64_t batches[METRICS_BATCH__COUNT];
static _Atomic uint64_t collisions;

void metrics_batch(enum metrics_batch_kind kind)
{
    atomic_fetch_add_explicit(&batches[kind], 1, memory_order_relaxed);
}

void metrics_collision(void)
{
    atomic_fetch_add_explicit(&collisions, 1, memory_order_relaxed);
}

uint64_t metrics_collisions_total(void)
{
    return atomic_load_explicit(&collisions, memory_order_relaxed);
}

void metrics_range_reserved(const char *ns)
{
    size_t i;

    pthread_mutex_lock(&ranges_mu);
    for (i = 0; i < n_ranges; i++)
        if (strcmp(ranges[i].name, ns) == 0)
            break;
    if (i == n_ranges && n_ranges < METRICS_MAX_NS)
        snprintf(ranges[n_ranges++].name, sizeof(ranges[0].name), "%s", ns);
    if (i < n_ranges)
        ranges[i].n++;
    pthread_mutex_unlock(&ranges_mu);
}

uint64_t metrics_batches(enum metrics_batch_kind kind)
{
    return atomic_load_explicit(&batches[kind], memory_order_relaxed);
}

size_t metrics_ranges_reserved(struct metrics_range_count *out, size_t cap)
{
    size_t i;

    pthread_mutex_lock(&ranges_mu);
    for (i = 0; i < n_ranges && i < cap; i++) {
        memcpy(out[i].name, ranges[i].name, sizeof(out[i].name));
        out[i].n = ranges[i].n;
    }
    pthread_mutex_unlock(&ranges_mu);
    return i;
}

uint64_t metrics_ids_issued(struct daemon *d, size_t slot)
{
    uint64_t sum = 0;
    unsigned t;

    for (t = 0; t < d->n_threads; t++)
        sum += atomic_load_explicit(&d->threads[t].metrics.ids_issued[slot], memory_order_relaxed);
    return sum;
}

void metrics_count_answer(struct daemon_thread *w, const struct route_row *row, int status,
                          uint64_t t0_ns)
{
    metrics_count_request(&w->metrics, row, status, clocks_mono_ns() - t0_ns);
    if (status >= 500)
        log_write(LOG_DEBUG, "request answered", "route=\"%s\" status=%d",
                  row != NULL ? row->label : "other", status);
}
