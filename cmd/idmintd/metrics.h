/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The daemon's counters, read by /metrics (prometheus.h) and the status
 * page (status.h). Each thread owns one struct metrics_thread and is its
 * only writer (relaxed load+store, no locked instruction on the hot path);
 * a reader sums every thread's copy.
 */
#ifndef IDMINTD_METRICS_H
#define IDMINTD_METRICS_H

#include "route_table.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define METRICS_MAX_NS  256 /* namespaces with their own counters */
#define METRICS_BUCKETS 13

#define METRICS_CODES 17 /* the statuses the daemon sends, plus "other" */

struct metrics_hist {
    _Atomic uint64_t bucket[METRICS_BUCKETS]; /* not cumulative; summed at scrape */
    _Atomic uint64_t count;
    _Atomic uint64_t sum_ns;
};

struct metrics_thread {
    /* By route_table row; the last slot is "other" (no row matched, or a limit was hit). */
    _Atomic uint64_t http[ROUTE_ROWS_MAX + 1][METRICS_CODES];
    struct metrics_hist http_duration;
    struct metrics_hist store_latency;
    _Atomic uint64_t ids_issued[METRICS_MAX_NS]; /* by handle slot */
};

/* Single-writer add: the owner thread is the only one that stores. */
static inline void metrics_add(_Atomic uint64_t *c, uint64_t n)
{
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n,
                          memory_order_relaxed);
}

/* The statuses counted apart, in the order of struct metrics_thread's http[][]; 0 is "other". */
extern const int metrics_codes[METRICS_CODES];

/* One answered request of @p row (a route_table row; NULL: "other"). Owner thread only. */
void metrics_count_request(struct metrics_thread *m, const struct route_row *row, int status,
                           uint64_t elapsed_ns);
/* One store call of @p elapsed_ns made by @p m's thread. Owner thread only. */
void metrics_store_time(struct metrics_thread *m, uint64_t elapsed_ns);
/* A range reservation served on /internal/ranges/lease. Thread-safe. */
void metrics_range_reserved(const char *ns);
/* How a keyed GET /v1/ids was answered (idmint_idempotent_batches_total{result}). */
enum metrics_batch_kind {
    METRICS_BATCH_MINTED,
    METRICS_BATCH_REPLAYED,
    METRICS_BATCH_CONFLICT,
    METRICS_BATCH__COUNT
};
/* One keyed GET /v1/ids answered as @p kind. Thread-safe. */
void metrics_batch(enum metrics_batch_kind kind);
/* One collision recorded through POST /v1/collisions. Thread-safe. */
void metrics_collision(void);
/* The collisions recorded since start (idmint_collisions_total). Thread-safe. */
uint64_t metrics_collisions_total(void);
/* The keyed GET /v1/ids answered as @p kind since start. Thread-safe. */
uint64_t metrics_batches(enum metrics_batch_kind kind);

/* Range reservations served through /internal/ranges/lease, per namespace. */
struct metrics_range_count {
    char name[64];
    uint64_t n;
};
/* Copy at most @p cap namespaces' counts into @p out; returns how many. Thread-safe. */
size_t metrics_ranges_reserved(struct metrics_range_count *out, size_t cap);

struct daemon;
struct daemon_thread;
/* IDs minted for handle slot @p slot by every thread of @p d (a relaxed sum). Thread-safe. */
uint64_t metrics_ids_issued(struct daemon *d, size_t slot);
/*
 * Count one answered request of @p row, started at @p t0_ns (clocks_mono_ns),
 * on @p w's counters, and log a 5xx at debug. Called by whoever answers it:
 * the loop for a request answered at once, the deferral's finish otherwise.
 * Only on @p w's own thread.
 */
void metrics_count_answer(struct daemon_thread *w, const struct route_row *row, int status,
                          uint64_t t0_ns);

/* Upper bounds of the histogram buckets in seconds; the last bucket is +Inf. */
extern const double metrics_bounds_s[METRICS_BUCKETS - 1];

#endif /* IDMINTD_METRICS_H */
