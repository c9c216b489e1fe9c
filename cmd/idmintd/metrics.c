/* SPDX-License-Identifier: Apache-2.0 */
/*
 * /metrics in the Prometheus text format. Request counters and histograms
 * are per thread and summed here; lease and range gauges come from
 * idmint_info() of the daemon's handles at scrape time; idmint_workers_free
 * is the latest reading of a sampler thread, so a scrape never touches the
 * store.
 */
#include "metrics.h"

#include "daemon.h"
#include "http_screen.h"
#include "idmint_service.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const int codes[METRICS_CODES] = {200, 201, 400, 401, 403, 404, 405,
                                         409, 413, 431, 500, 503, 0};

/* Upper bounds in seconds; the last bucket is +Inf. */
static const double bounds_s[METRICS_BUCKETS - 1] = {
    0.000005, 0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.005, 0.025, 0.1, 1.0};

/* Range reservations served, by namespace: rare and slow, so a lock is fine. */
static pthread_mutex_t ranges_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
    char name[64];
    uint64_t n;
} ranges[METRICS_MAX_NS];
static size_t n_ranges;

uint64_t metrics_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void hist_add(struct metrics_hist *h, uint64_t ns)
{
    size_t i;

    for (i = 0; i < METRICS_BUCKETS - 1; i++)
        if ((double)ns <= bounds_s[i] * 1e9)
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
        if (codes[i] == status)
            break;
    metrics_add(&m->http[route][i], 1);
    hist_add(&m->http_duration, elapsed_ns);
}

void metrics_store_time(struct metrics_thread *m, uint64_t elapsed_ns)
{
    hist_add(&m->store_latency, elapsed_ns);
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

/* ==== text building ==== */

struct buf {
    char *p;
    size_t len, cap;
    int is_oom;
};

static void put(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(struct buf *b, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (b->is_oom)
        return;
    for (;;) {
        va_start(ap, fmt);
        n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->is_oom = 1;
            return;
        }
        if ((size_t)n < b->cap - b->len) {
            b->len += (size_t)n;
            return;
        }
        {
            size_t cap = (b->cap + (size_t)n + 1) * 2;
            char *p = realloc(b->p, cap);

            if (p == NULL) {
                b->is_oom = 1;
                return;
            }
            b->p = p;
            b->cap = cap;
        }
    }
}

/* The thread that reads the store for /metrics (metrics_sampler_start). */
static struct {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int is_running;
    _Atomic int is_stopping;       /* set under mu; read between store calls too */
    idmint_authority *auth;        /* the sampler thread's own; opened on first use */
    struct metrics_thread metrics; /* its store latencies (only store_latency is used) */
} sampler = {.mu = PTHREAD_MUTEX_INITIALIZER};

/* Add @p h at @p offset inside @p m to the running sums. */
static void add_hist(const struct metrics_thread *m, size_t offset, uint64_t *bucket,
                     uint64_t *count, uint64_t *sum_ns)
{
    const struct metrics_hist *h =
        (const struct metrics_hist *)(const void *)((const char *)m + offset);
    size_t i;

    for (i = 0; i < METRICS_BUCKETS; i++)
        bucket[i] += atomic_load_explicit(&h->bucket[i], memory_order_relaxed);
    *count += atomic_load_explicit(&h->count, memory_order_relaxed);
    *sum_ns += atomic_load_explicit(&h->sum_ns, memory_order_relaxed);
}

static void put_hist(struct buf *b, struct daemon *d, const char *name, const char *help,
                     size_t offset)
{
    uint64_t bucket[METRICS_BUCKETS] = {0}, count = 0, sum_ns = 0, cum = 0;
    unsigned t;
    size_t i;

    for (t = 0; t < d->cfg.threads; t++)
        add_hist(&d->workers[t].metrics, offset, bucket, &count, &sum_ns);
    add_hist(&sampler.metrics, offset, bucket, &count, &sum_ns); /* zeros until it runs */
    put(b, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name);
    for (i = 0; i < METRICS_BUCKETS - 1; i++) {
        cum += bucket[i];
        put(b, "%s_bucket{le=\"%g\"} %" PRIu64 "\n", name, bounds_s[i], cum);
    }
    cum += bucket[METRICS_BUCKETS - 1];
    put(b, "%s_bucket{le=\"+Inf\"} %" PRIu64 "\n", name, cum);
    put(b, "%s_sum %.9f\n%s_count %" PRIu64 "\n", name, (double)sum_ns / 1e9, name, count);
}

/*
 * idmint_http_requests_total{route,code}: one series per label, in table
 * order, then "other". Rows that share a label (GET and POST
 * /v1/namespaces) are summed into one series.
 */
static void put_requests(struct buf *b, struct daemon *d)
{
    uint64_t sum[ROUTE_ROWS_MAX + 1][METRICS_CODES] = {{0}}; /* not static: scrapes may overlap */
    size_t series[ROUTE_ROWS_MAX + 1], r, j, c;
    unsigned t;

    for (r = 0; r < route_table_len; r++) {
        for (j = 0; j < r && strcmp(route_table[j].label, route_table[r].label) != 0; j++)
            ;
        series[r] = j; /* the first row with this label */
    }
    series[ROUTE_ROWS_MAX] = ROUTE_ROWS_MAX;
    for (t = 0; t < d->cfg.threads; t++) {
        const struct metrics_thread *m = &d->workers[t].metrics;

        for (c = 0; c < METRICS_CODES; c++) {
            for (r = 0; r < route_table_len; r++)
                sum[series[r]][c] += atomic_load_explicit(&m->http[r][c], memory_order_relaxed);
            sum[ROUTE_ROWS_MAX][c] +=
                atomic_load_explicit(&m->http[ROUTE_ROWS_MAX][c], memory_order_relaxed);
        }
    }
    for (r = 0; r <= route_table_len; r++) {
        size_t slot = r < route_table_len ? r : ROUTE_ROWS_MAX;
        const char *label = r < route_table_len ? route_table[r].label : "other";

        if (series[slot] != slot)
            continue; /* summed into an earlier row's series */
        for (c = 0; c < METRICS_CODES; c++) {
            if (sum[slot][c] == 0)
                continue;
            if (codes[c] != 0)
                put(b, "idmint_http_requests_total{route=\"%s\",code=\"%d\"} %" PRIu64 "\n", label,
                    codes[c], sum[slot][c]);
            else
                put(b, "idmint_http_requests_total{route=\"%s\",code=\"other\"} %" PRIu64 "\n",
                    label, sum[slot][c]);
        }
    }
}

static int64_t wall_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ==== the store sampler ==== */

/* Worker ids of @p nh's region nobody holds now; -1 when the store cannot say. */
static int64_t workers_free(struct daemon *d, const struct ns_handle *nh, int64_t now_ms)
{
    idmint_worker_info *rows = NULL;
    size_t n = 0, i;
    uint64_t now_unit, busy = 0, t0 = metrics_now_ns();
    int64_t total = (int64_t)1 << nh->layout.worker_bits;
    int rc;

    if (sampler.auth == NULL && handles_authority_open(&d->handles, &sampler.auth) != 0) {
        sampler.auth = NULL;
        return -1;
    }
    rc = idmint_workers_list(sampler.auth, nh->name, &rows, &n);
    metrics_store_time(&sampler.metrics, metrics_now_ns() - t0);
    if (rc != 0)
        return -1;
    now_unit = idmint__unit_at(&nh->layout, now_ms);
    for (i = 0; i < n; i++) {
        const idmint_worker_info *wi = idmint_worker_info_at(rows, i);

        if (wi->region == d->cfg.region && wi->holder[0] != '\0' && wi->lease_until >= now_unit)
            busy++;
    }
    idmint_free(rows);
    return total - (int64_t)busy;
}

static void *sampler_main(void *arg)
{
    struct daemon *d = arg;

    pthread_mutex_lock(&sampler.mu);
    while (!sampler.is_stopping) {
        size_t i, n = atomic_load_explicit(&d->handles.n, memory_order_acquire);
        struct timespec until;

        pthread_mutex_unlock(&sampler.mu);
        /* Each store call may wait seconds on a dead database: look for a
         * stop between them, so SIGTERM is not held up for a whole pass. */
        for (i = 0; i < n && !atomic_load(&sampler.is_stopping); i++) {
            struct ns_handle *nh = d->handles.slots[i];

            if (!nh->is_range)
                atomic_store(&nh->workers_free, workers_free(d, nh, wall_ms()));
        }
        pthread_mutex_lock(&sampler.mu);
        until = idmint__monotonic_after_ms(METRICS_SAMPLE_MS);
        while (!sampler.is_stopping &&
               pthread_cond_timedwait(&sampler.cv, &sampler.mu, &until) != ETIMEDOUT)
            ;
    }
    pthread_mutex_unlock(&sampler.mu);
    return NULL;
}

int metrics_sampler_start(struct daemon *d)
{
    idmint__cond_init_monotonic(&sampler.cv);
    sampler.is_stopping = 0;
    if (pthread_create(&sampler.thread, NULL, sampler_main, d) != 0)
        return -1;
    sampler.is_running = 1;
    return 0;
}

void metrics_sampler_stop(void)
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
}

char *metrics_render(struct daemon *d, size_t *len)
{
    struct buf b = {NULL, 0, 0, 0};
    size_t i, c, n = atomic_load_explicit(&d->handles.n, memory_order_acquire);
    unsigned t;
    int64_t now = wall_ms();

    b.cap = 16384;
    if ((b.p = malloc(b.cap)) == NULL)
        return NULL;

    put(&b, "# HELP idmint_ids_issued_total IDs minted by GET /v1/ids.\n"
            "# TYPE idmint_ids_issued_total counter\n");
    for (i = 0; i < n; i++) {
        uint64_t sum = 0;

        for (t = 0; t < d->cfg.threads; t++)
            sum += atomic_load_explicit(&d->workers[t].metrics.ids_issued[i], memory_order_relaxed);
        put(&b, "idmint_ids_issued_total{namespace=\"%s\"} %" PRIu64 "\n",
            d->handles.slots[i]->name, sum);
    }

    put(&b,
        "# HELP idmint_lease_renewals_total Lease extensions of the daemon's handles "
        "(observed once a second).\n# TYPE idmint_lease_renewals_total counter\n"
        "idmint_lease_renewals_total %" PRIu64 "\n",
        atomic_load(&d->handles.renewals));
    put(&b,
        "# HELP idmint_lease_renewal_failures_total Leases of the daemon's handles lost or run "
        "out.\n# TYPE idmint_lease_renewal_failures_total counter\n"
        "idmint_lease_renewal_failures_total %" PRIu64 "\n",
        atomic_load(&d->handles.renewal_failures));
    put(&b,
        "# HELP idmint_clock_backsteps_total Wall-clock steps back seen by the daemon.\n"
        "# TYPE idmint_clock_backsteps_total counter\nidmint_clock_backsteps_total %" PRIu64 "\n",
        atomic_load(&d->clock_backsteps));

    put(&b, "# HELP idmint_lease_seconds_left Time until the worker lease ends.\n"
            "# TYPE idmint_lease_seconds_left gauge\n");
    for (i = 0; i < n; i++) {
        struct ns_handle *nh = d->handles.slots[i];
        idmint_handle_info info;

        idmint_handle_info_init(&info);
        if (nh->is_range || handles_info(nh, &info) != 0)
            continue;
        put(&b, "idmint_lease_seconds_left{namespace=\"%s\"} %.3f\n", nh->name,
            info.lease_until == 0
                ? 0.0
                : (double)(nh->layout.epoch_ms +
                           (int64_t)info.lease_until * (int64_t)nh->layout.unit_ms - now) /
                      1000.0);
    }
    put(&b, "# HELP idmint_sequence_waits_total Mint calls that waited for the next time unit "
            "because the sequence was used up.\n# TYPE idmint_sequence_waits_total counter\n");
    for (i = 0; i < n; i++) {
        struct ns_handle *nh = d->handles.slots[i];
        idmint_handle_info info;

        idmint_handle_info_init(&info);
        if (!nh->is_range && handles_info(nh, &info) == 0)
            put(&b, "idmint_sequence_waits_total{namespace=\"%s\"} %" PRIu64 "\n", nh->name,
                info.sequence_waits);
    }
    put(&b, "# HELP idmint_time_bits_seconds_left Time until the layout's time bits run out.\n"
            "# TYPE idmint_time_bits_seconds_left gauge\n");
    for (i = 0; i < n; i++) {
        const struct ns_handle *nh = d->handles.slots[i];

        if (!nh->is_range)
            put(&b, "idmint_time_bits_seconds_left{namespace=\"%s\"} %.3f\n", nh->name,
                (double)(nh->end_ms - now) / 1000.0);
    }
    put(&b, "# HELP idmint_workers_free Worker ids of this region nobody holds.\n"
            "# TYPE idmint_workers_free gauge\n");
    for (i = 0; i < n; i++) {
        const struct ns_handle *nh = d->handles.slots[i];
        int64_t free_ids = atomic_load(&nh->workers_free);

        if (!nh->is_range && free_ids >= 0)
            put(&b, "idmint_workers_free{namespace=\"%s\"} %" PRId64 "\n", nh->name, free_ids);
    }
    put(&b, "# HELP idmint_range_ids_left Values reserved by the daemon's range handles and not "
            "yet issued.\n# TYPE idmint_range_ids_left gauge\n");
    for (i = 0; i < n; i++) {
        struct ns_handle *nh = d->handles.slots[i];
        idmint_handle_info info;

        idmint_handle_info_init(&info);
        if (nh->is_range && handles_info(nh, &info) == 0)
            put(&b, "idmint_range_ids_left{namespace=\"%s\"} %" PRIu64 "\n", nh->name,
                info.range_left);
    }
    put(&b, "# HELP idmint_range_reservations_total Ranges reserved through "
            "/internal/ranges/lease.\n# TYPE idmint_range_reservations_total counter\n");
    pthread_mutex_lock(&ranges_mu);
    for (i = 0; i < n_ranges; i++)
        put(&b, "idmint_range_reservations_total{namespace=\"%s\"} %" PRIu64 "\n", ranges[i].name,
            ranges[i].n);
    pthread_mutex_unlock(&ranges_mu);
    put(&b,
        "# HELP idmint_range_refills_total Refills of the daemon's own range handles "
        "(observed once a second).\n# TYPE idmint_range_refills_total counter\n"
        "idmint_range_refills_total %" PRIu64 "\n",
        atomic_load(&d->handles.range_refills));

    put_hist(&b, d, "idmint_store_latency_seconds",
             "Store calls made by the daemon's routes and its metrics sampler.",
             offsetof(struct metrics_thread, store_latency));

    put(&b, "# HELP idmint_http_connections_refused_total Connections refused at accept with 503: "
            "per_client (the address holds max_connections_per_client), reserve (only the "
            "reserve is left and the address holds one), full.\n"
            "# TYPE idmint_http_connections_refused_total counter\n");
    for (c = 0; c < HTTP_REFUSED_COUNT; c++)
        put(&b, "idmint_http_connections_refused_total{reason=\"%s\"} %" PRIu64 "\n",
            http_refusal_name((enum http_refusal)c), http_refused_total((enum http_refusal)c));

    put(&b, "# HELP idmint_http_requests_total HTTP requests by route and status.\n"
            "# TYPE idmint_http_requests_total counter\n");
    put_requests(&b, d);
    put_hist(&b, d, "idmint_http_request_duration_seconds", "Time to answer a request.",
             offsetof(struct metrics_thread, http_duration));

    if (b.is_oom) {
        free(b.p);
        return NULL;
    }
    *len = b.len;
    return b.p;
}
