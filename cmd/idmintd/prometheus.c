/* SPDX-License-Identifier: Apache-2.0 */
/*
 * /metrics in the Prometheus text format. The figures it shares with the
 * status page come from status_live_take() (status.c): the per-thread
 * counters summed, idmint_info() of the daemon's handles at scrape time,
 * and idmint_workers_free from the store sampler's latest pass (sampler.c),
 * so a scrape never touches the store. Request counts by route come from
 * metrics.c.
 */
#include "prometheus.h"

#include "daemon.h"
#include "http_screen.h"
#include "metrics.h"
#include "sampler.h"
#include "status.h"
#include "store_pool.h"
#include "textbuf.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static void put_hist(struct textbuf *b, const char *name, const char *help,
                     const struct status_hist *h)
{
    uint64_t cum = 0;
    size_t i;

    textbuf_printf(b, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name);
    for (i = 0; i < METRICS_BUCKETS - 1; i++) {
        cum += h->bucket[i];
        textbuf_printf(b, "%s_bucket{le=\"%g\"} %" PRIu64 "\n", name, metrics_bounds_s[i], cum);
    }
    cum += h->bucket[METRICS_BUCKETS - 1];
    textbuf_printf(b, "%s_bucket{le=\"+Inf\"} %" PRIu64 "\n", name, cum);
    textbuf_printf(b, "%s_sum %.9f\n%s_count %" PRIu64 "\n", name, (double)h->sum_ns / 1e9, name,
                   h->count);
}

/*
 * idmint_http_requests_total{route,code}: one series per label, in table
 * order, then "other". Rows that share a label (GET and POST
 * /v1/namespaces) are summed into one series.
 */
static void put_requests(struct textbuf *b, struct daemon *d)
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
    for (t = 0; t < d->n_threads; t++) {
        const struct metrics_thread *m = &d->threads[t].metrics;

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
            if (metrics_codes[c] != 0)
                textbuf_printf(b,
                               "idmint_http_requests_total{route=\"%s\",code=\"%d\"} %" PRIu64 "\n",
                               label, metrics_codes[c], sum[slot][c]);
            else
                textbuf_printf(
                    b, "idmint_http_requests_total{route=\"%s\",code=\"other\"} %" PRIu64 "\n",
                    label, sum[slot][c]);
        }
    }
}

/* The store threads (store_pool.h): every store-bound route runs there. */
static void put_store_pool(struct textbuf *b, struct daemon *d)
{
    struct store_pool_stats st;

    if (d->pool == NULL)
        return;
    store_pool_stats_get(d->pool, &st);
    textbuf_printf(b,
                   "# HELP idmint_store_pool_threads Store threads running store-bound routes.\n"
                   "# TYPE idmint_store_pool_threads gauge\n"
                   "idmint_store_pool_threads %u\n"
                   "# HELP idmint_store_pool_lease_threads Of those, the threads kept for the "
                   "lease routes (/internal/workers/lease, /internal/ranges/lease).\n"
                   "# TYPE idmint_store_pool_lease_threads gauge\n"
                   "idmint_store_pool_lease_threads %u\n"
                   "# HELP idmint_store_pool_queue_max Store calls that may wait for a thread, "
                   "in each of the two queues (general, lease).\n"
                   "# TYPE idmint_store_pool_queue_max gauge\n"
                   "idmint_store_pool_queue_max %u\n"
                   "# HELP idmint_store_pool_queue_depth Store calls waiting for a thread now.\n"
                   "# TYPE idmint_store_pool_queue_depth gauge\n"
                   "idmint_store_pool_queue_depth %" PRIu64 "\n"
                   "# HELP idmint_store_pool_lease_queue_depth Of those, lease calls.\n"
                   "# TYPE idmint_store_pool_lease_queue_depth gauge\n"
                   "idmint_store_pool_lease_queue_depth %" PRIu64 "\n"
                   "# HELP idmint_store_pool_running Store calls a thread is running now.\n"
                   "# TYPE idmint_store_pool_running gauge\n"
                   "idmint_store_pool_running %" PRIu64 "\n"
                   "# HELP idmint_store_pool_jobs_total Store calls queued for the threads.\n"
                   "# TYPE idmint_store_pool_jobs_total counter\n"
                   "idmint_store_pool_jobs_total %" PRIu64 "\n"
                   "# HELP idmint_store_pool_rejected_total Store calls refused 503 at once: "
                   "the queue held store_queue.\n"
                   "# TYPE idmint_store_pool_rejected_total counter\n"
                   "idmint_store_pool_rejected_total{reason=\"full\"} %" PRIu64 "\n"
                   "# HELP idmint_store_pool_timed_out_total Store calls answered 503 because "
                   "store_deadline_ms passed first.\n"
                   "# TYPE idmint_store_pool_timed_out_total counter\n"
                   "idmint_store_pool_timed_out_total %" PRIu64 "\n"
                   "# HELP idmint_store_pool_skipped_total Store calls a thread reached only after "
                   "their deadline, so never made.\n"
                   "# TYPE idmint_store_pool_skipped_total counter\n"
                   "idmint_store_pool_skipped_total %" PRIu64 "\n",
                   st.threads, st.lease_threads, st.queue_max, st.depth, st.lease_depth, st.running,
                   st.jobs, st.rejected_full, st.timed_out, st.late);
}

char *prometheus_render(struct daemon *d, size_t *len)
{
    const struct sampler_cache *cache = sampler_cache_get();
    struct status_live live;
    struct metrics_range_count ranges[METRICS_MAX_NS];
    struct textbuf b;
    size_t i, c, n_ranges;
    char *text;

    if (status_live_take(d, cache, &live) != 0) {
        sampler_cache_put(cache);
        return NULL;
    }
    sampler_cache_put(cache);
    textbuf_init(&b, 16384);

    textbuf_printf(&b, "# HELP idmint_ids_issued_total IDs minted by GET /v1/ids.\n"
                       "# TYPE idmint_ids_issued_total counter\n");
    for (i = 0; i < live.n; i++)
        textbuf_printf(&b, "idmint_ids_issued_total{namespace=\"%s\"} %" PRIu64 "\n",
                       live.h[i].nh->name, live.h[i].ids_issued);

    textbuf_printf(&b,
                   "# HELP idmint_lease_renewals_total Lease extensions of the daemon's handles "
                   "(observed once a second).\n# TYPE idmint_lease_renewals_total counter\n"
                   "idmint_lease_renewals_total %" PRIu64 "\n",
                   live.renewals);
    textbuf_printf(&b,
                   "# HELP idmint_lease_renewal_failures_total Leases of the daemon's handles lost "
                   "or run out.\n# TYPE idmint_lease_renewal_failures_total counter\n"
                   "idmint_lease_renewal_failures_total %" PRIu64 "\n",
                   live.renewal_failures);
    textbuf_printf(&b,
                   "# HELP idmint_clock_backsteps_total Wall-clock steps back seen by the daemon.\n"
                   "# TYPE idmint_clock_backsteps_total counter\nidmint_clock_backsteps_total "
                   "%" PRIu64 "\n",
                   live.clock_backsteps);

    textbuf_printf(&b, "# HELP idmint_lease_seconds_left Time until the worker lease ends.\n"
                       "# TYPE idmint_lease_seconds_left gauge\n");
    for (i = 0; i < live.n; i++) {
        const struct status_handle *h = &live.h[i];

        if (!h->nh->is_range && h->has_info)
            textbuf_printf(&b, "idmint_lease_seconds_left{namespace=\"%s\"} %.3f\n", h->nh->name,
                           h->lease_end_ms == 0 ? 0.0
                                                : (double)(h->lease_end_ms - live.now_ms) / 1000.0);
    }
    textbuf_printf(&b,
                   "# HELP idmint_sequence_waits_total Mint calls that waited for the next time "
                   "unit because the sequence was used up.\n"
                   "# TYPE idmint_sequence_waits_total counter\n");
    for (i = 0; i < live.n; i++) {
        const struct status_handle *h = &live.h[i];

        if (!h->nh->is_range && h->has_info)
            textbuf_printf(&b, "idmint_sequence_waits_total{namespace=\"%s\"} %" PRIu64 "\n",
                           h->nh->name, h->info.sequence_waits);
    }
    textbuf_printf(&b, "# HELP idmint_time_bits_seconds_left Time until the layout's time bits run "
                       "out.\n# TYPE idmint_time_bits_seconds_left gauge\n");
    for (i = 0; i < live.n; i++) {
        const struct ns_handle *nh = live.h[i].nh;

        if (!nh->is_range)
            textbuf_printf(&b, "idmint_time_bits_seconds_left{namespace=\"%s\"} %.3f\n", nh->name,
                           (double)(nh->end_ms - live.now_ms) / 1000.0);
    }
    textbuf_printf(&b, "# HELP idmint_workers_free Worker ids of this region nobody holds.\n"
                       "# TYPE idmint_workers_free gauge\n");
    for (i = 0; i < live.n; i++) {
        const struct status_handle *h = &live.h[i];

        if (!h->nh->is_range && h->workers_free >= 0)
            textbuf_printf(&b, "idmint_workers_free{namespace=\"%s\"} %" PRId64 "\n", h->nh->name,
                           h->workers_free);
    }
    textbuf_printf(&b,
                   "# HELP idmint_range_ids_left Values reserved by the daemon's range handles and "
                   "not yet issued.\n# TYPE idmint_range_ids_left gauge\n");
    for (i = 0; i < live.n; i++) {
        const struct status_handle *h = &live.h[i];

        if (h->nh->is_range && h->has_info)
            textbuf_printf(&b, "idmint_range_ids_left{namespace=\"%s\"} %" PRIu64 "\n", h->nh->name,
                           h->info.range_left);
    }
    textbuf_printf(&b,
                   "# HELP idmint_outage_budget_seconds How long each of the daemon's handles can "
                   "go on minting without the authority: a lease's time left, or a range handle's "
                   "reserved values at its rate (+Inf while it has minted none).\n"
                   "# TYPE idmint_outage_budget_seconds gauge\n");
    for (i = 0; i < live.n; i++) {
        const struct status_handle *h = &live.h[i];

        if (!h->has_info)
            continue;
        if (h->info.outage_budget_ms == UINT64_MAX)
            textbuf_printf(&b, "idmint_outage_budget_seconds{namespace=\"%s\"} +Inf\n",
                           h->nh->name);
        else
            textbuf_printf(&b, "idmint_outage_budget_seconds{namespace=\"%s\"} %.3f\n", h->nh->name,
                           (double)h->info.outage_budget_ms / 1000.0);
    }
    textbuf_printf(&b, "# HELP idmint_range_block Values the latest reservation of the daemon's "
                       "range handles asked for (sized to their rate).\n"
                       "# TYPE idmint_range_block gauge\n");
    for (i = 0; i < live.n; i++) {
        const struct status_handle *h = &live.h[i];

        if (h->nh->is_range && h->has_info)
            textbuf_printf(&b, "idmint_range_block{namespace=\"%s\"} %" PRIu64 "\n", h->nh->name,
                           h->info.range_block);
    }
    textbuf_printf(&b, "# HELP idmint_range_reservations_total Ranges reserved through "
                       "/internal/ranges/lease.\n# TYPE idmint_range_reservations_total counter\n");
    n_ranges = metrics_ranges_reserved(ranges, METRICS_MAX_NS);
    for (i = 0; i < n_ranges; i++)
        textbuf_printf(&b, "idmint_range_reservations_total{namespace=\"%s\"} %" PRIu64 "\n",
                       ranges[i].name, ranges[i].n);
    textbuf_printf(&b,
                   "# HELP idmint_idempotent_batches_total GET /v1/ids with an Idempotency-Key, "
                   "by how it was answered.\n# TYPE idmint_idempotent_batches_total counter\n"
                   "idmint_idempotent_batches_total{result=\"minted\"} %" PRIu64 "\n"
                   "idmint_idempotent_batches_total{result=\"replayed\"} %" PRIu64 "\n"
                   "idmint_idempotent_batches_total{result=\"conflict\"} %" PRIu64 "\n",
                   metrics_batches(METRICS_BATCH_MINTED), metrics_batches(METRICS_BATCH_REPLAYED),
                   metrics_batches(METRICS_BATCH_CONFLICT));
    textbuf_printf(&b,
                   "# HELP idmint_collisions_total Duplicates reported through POST /v1/collisions "
                   "to this daemon since it started.\n# TYPE idmint_collisions_total counter\n"
                   "idmint_collisions_total %" PRIu64 "\n",
                   metrics_collisions_total());
    textbuf_printf(&b,
                   "# HELP idmint_range_refills_total Refills of the daemon's own range handles "
                   "(observed once a second).\n# TYPE idmint_range_refills_total counter\n"
                   "idmint_range_refills_total %" PRIu64 "\n",
                   live.range_refills);

    put_hist(&b, "idmint_store_latency_seconds",
             "Store calls made by the daemon's routes and its store sampler.", &live.store_latency);
    put_store_pool(&b, d);

    textbuf_printf(&b,
                   "# HELP idmint_http_connections_refused_total Connections refused at accept "
                   "with 503: per_client (the address holds max_connections_per_client), reserve "
                   "(only the reserve is left and the address prefix holds one), full, "
                   "per_prefix (the prefix holds max_connections_per_prefix).\n"
                   "# TYPE idmint_http_connections_refused_total counter\n");
    for (c = 0; c < HTTP_REFUSED_COUNT; c++)
        textbuf_printf(&b, "idmint_http_connections_refused_total{reason=\"%s\"} %" PRIu64 "\n",
                       http_refusal_name((enum http_refusal)c),
                       http_refused_total((enum http_refusal)c));

    textbuf_printf(&b, "# HELP idmint_http_rate_limited_total Requests answered 429 by a rate "
                       "limit: by=\"token\" (the token's role's bucket) or \"address\" (the "
                       "client address's), role the caller's.\n"
                       "# TYPE idmint_http_rate_limited_total counter\n");
    for (c = 0; c < 2 * 4; c++)
        textbuf_printf(&b, "idmint_http_rate_limited_total{by=\"%s\",role=\"%s\"} %" PRIu64 "\n",
                       c / 4 ? "address" : "token", auth_role_name((enum auth_role)(c % 4)),
                       ratelimit_refused_total(&d->limits, (int)(c / 4), (unsigned)(c % 4)));

    textbuf_printf(&b, "# HELP idmint_http_requests_total HTTP requests by route and status.\n"
                       "# TYPE idmint_http_requests_total counter\n");
    put_requests(&b, d);
    put_hist(&b, "idmint_http_request_duration_seconds", "Time to answer a request.",
             &live.http_duration);
    status_live_free(&live);

    text = textbuf_take(&b, len);
    return text;
}
