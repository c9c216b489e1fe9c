/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The snapshot of status.h. Nothing here waits on the store: the handles
 * and counters are read from memory, the store's figures come from the
 * sampler's latest pass. Worker rows are judged at the time they were read
 * (not at the time of the request), so a figure stays the same from one
 * request to the next until the sampler reads again.
 */
#include "status.h"
#include "clocks.h"

#include "daemon.h"
#include "idmint_service.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ==== what needs no store ==== */

static void hist_sum(struct status_hist *out, const struct metrics_hist *h)
{
    size_t i;

    for (i = 0; i < METRICS_BUCKETS; i++)
        out->bucket[i] += atomic_load_explicit(&h->bucket[i], memory_order_relaxed);
    out->count += atomic_load_explicit(&h->count, memory_order_relaxed);
    out->sum_ns += atomic_load_explicit(&h->sum_ns, memory_order_relaxed);
}

/* The rule of idmint_workers_free and of the grid: held while a holder's E is not passed. */
static enum status_state judge(const idmint_worker_info *wi, uint64_t now_unit)
{
    if (wi->lease_until < now_unit)
        return STATUS_FREE;
    return wi->holder[0] != '\0' ? STATUS_HELD : STATUS_RESTING;
}

/* Worker ids of region @p region nobody holds, as @p r found them; -1 when unknown. */
static int64_t free_in_region(const struct sampler_rows *r, uint32_t region)
{
    uint64_t now_unit, busy = 0;
    size_t i;

    if (r == NULL || r->rc != 0)
        return -1;
    now_unit = idmint__unit_at(&r->layout, r->read_ms);
    for (i = 0; i < r->n; i++) {
        const idmint_worker_info *wi = idmint_worker_info_at(r->rows, i);

        if (wi->region == region && judge(wi, now_unit) == STATUS_HELD)
            busy++;
    }
    return ((int64_t)1 << r->layout.worker_bits) - (int64_t)busy;
}

int status_live_take(struct daemon *d, const struct sampler_cache *c, struct status_live *out)
{
    size_t i, n = atomic_load_explicit(&d->handles.n, memory_order_acquire);
    unsigned t, role;
    int by;

    memset(out, 0, sizeof(*out));
    out->now_ms = clocks_wall_ms();
    if (n > 0 && (out->h = calloc(n, sizeof(out->h[0]))) == NULL)
        return IDMINT_ENOMEM;
    out->n = n;
    for (i = 0; i < n; i++) {
        struct ns_handle *nh = d->handles.slots[i];
        struct status_handle *h = &out->h[i];

        h->nh = nh;
        h->ids_issued = metrics_ids_issued(d, i);
        idmint_handle_info_init(&h->info);
        h->has_info = handles_info(nh, &h->info) == 0;
        h->workers_free = -1;
        if (nh->is_range)
            continue;
        if (h->has_info && h->info.lease_until != 0) {
            h->lease_end_ms = idmint__unit_start_ms(&nh->layout, h->info.lease_until);
            h->lease_left_ms = h->lease_end_ms - out->now_ms;
        }
        /* The rule of handles_ready(). */
        h->is_lease_low =
            h->lease_end_ms == 0 || h->lease_left_ms <= (int64_t)d->cfg.ready_margin_ms;
        h->workers_free = free_in_region(sampler_rows_find(c, nh->name), d->cfg.region);
    }
    out->renewals = atomic_load(&d->handles.renewals);
    out->renewal_failures = atomic_load(&d->handles.renewal_failures);
    out->range_refills = atomic_load(&d->handles.range_refills);
    out->clock_backsteps = atomic_load(&d->clock_backsteps);
    out->collisions = metrics_collisions_total();
    for (by = 0; by < 2; by++) {
        for (role = 0; role < 4; role++) {
            out->rate_limited[by][role] = ratelimit_refused_total(&d->limits, by, role);
            out->rate_limited_total += out->rate_limited[by][role];
        }
    }
    for (t = 0; t < d->n_threads; t++) {
        hist_sum(&out->store_latency, &d->threads[t].metrics.store_latency);
        hist_sum(&out->http_duration, &d->threads[t].metrics.http_duration);
    }
    hist_sum(&out->store_latency, &sampler_metrics()->store_latency); /* zeros until it runs */
    return 0;
}

void status_live_free(struct status_live *s)
{
    if (s != NULL) {
        free(s->h);
        s->h = NULL;
        s->n = 0;
    }
}

int status_ready(struct daemon *d, char *reason, size_t size)
{
    if (!atomic_load(&d->is_ready)) {
        snprintf(reason, size, "starting: the namespaces in [mint] are not open yet");
        return 0;
    }
    return handles_ready(&d->handles, reason, size);
}

/* ==== the view ==== */

int64_t status_bucket_us(int i)
{
    if (i < 0 || i >= METRICS_BUCKETS - 1)
        return -1;
    return (int64_t)(metrics_bounds_s[i] * 1e6 + 0.5);
}

/* The bucket holding quantile @p pct % of @p h (the last: +Inf); 0 when empty. */
static int quantile_bucket(const struct status_hist *h, uint64_t pct)
{
    uint64_t want = (h->count * pct + 99) / 100, cum = 0;
    int i;

    if (h->count == 0)
        return 0;
    for (i = 0; i < METRICS_BUCKETS - 1; i++) {
        cum += h->bucket[i];
        if (cum >= want)
            return i;
    }
    return METRICS_BUCKETS - 1;
}

/* floor(1000 * part / whole), within 0..1000. */
static int permille(double part, double whole)
{
    double p;

    if (whole <= 0 || part <= 0)
        return 0;
    p = 1000.0 * part / whole;
    return p >= 1000 ? 1000 : (int)p; /* truncation: floor, as p > 0 */
}

static enum status_level level_high(int value, int warn, int bad)
{
    return value >= bad ? STATUS_BAD : value >= warn ? STATUS_WARN : STATUS_OK;
}

static enum status_level level_low(int value, int warn, int bad)
{
    return value <= bad ? STATUS_BAD : value <= warn ? STATUS_WARN : STATUS_OK;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const struct status_ns *)a)->name, ((const struct status_ns *)b)->name);
}

static int by_place(const void *a, const void *b)
{
    const struct status_worker *x = a, *y = b;

    if (x->region != y->region)
        return x->region < y->region ? -1 : 1;
    return x->worker_id < y->worker_id ? -1 : x->worker_id > y->worker_id;
}

static struct status_ns *ns_add(struct status_view *v, const char *name)
{
    struct status_ns *ns = &v->ns[v->n_ns++];

    memset(ns, 0, sizeof(*ns));
    snprintf(ns->name, sizeof(ns->name), "%s", name);
    return ns;
}

static struct status_ns *ns_find(struct status_view *v, const char *name)
{
    size_t i;

    for (i = 0; i < v->n_ns; i++)
        if (strcmp(v->ns[i].name, name) == 0)
            return &v->ns[i];
    return NULL;
}

static int is_own_row(const struct status_handle *own, const idmint_worker_info *wi)
{
    size_t fp = strlen(wi->holder);

    return own != NULL && own->has_info && fp > 0 && own->info.region == wi->region &&
           own->info.worker_id == wi->worker_id &&
           strncmp(own->info.incarnation, wi->holder, fp) == 0;
}

/* The regions drawn as grids: all when they fit STATUS_GRID_MAX cells, else those in use. */
static int pick_regions(struct status_ns *ns, uint32_t own_region)
{
    size_t i, cap;

    if (ns->regions * ns->ids_per_region <= STATUS_GRID_MAX) {
        cap = (size_t)ns->regions;
        if ((ns->drawn = calloc(cap, sizeof(ns->drawn[0]))) == NULL)
            return IDMINT_ENOMEM;
        for (i = 0; i < cap; i++)
            ns->drawn[ns->n_drawn++].region = (uint32_t)i;
        return 0;
    }
    cap = ns->n_workers + 1;
    if ((ns->drawn = calloc(cap, sizeof(ns->drawn[0]))) == NULL)
        return IDMINT_ENOMEM;
    for (i = 0; i <= ns->n_workers; i++) {
        uint32_t region = i < ns->n_workers ? ns->workers[i].region : own_region;
        size_t k, at;

        if (region >= ns->regions)
            continue;
        for (k = 0; k < ns->n_drawn && ns->drawn[k].region < region; k++)
            ;
        if (k < ns->n_drawn && ns->drawn[k].region == region)
            continue;
        for (at = ns->n_drawn; at > k; at--)
            ns->drawn[at] = ns->drawn[at - 1];
        memset(&ns->drawn[k], 0, sizeof(ns->drawn[k]));
        ns->drawn[k].region = region;
        ns->n_drawn++;
    }
    return 0;
}

static int workers_build(struct daemon *d, struct status_ns *ns)
{
    const struct sampler_rows *r = ns->rows;
    uint64_t now_unit = idmint__unit_at(&r->layout, r->read_ms);
    size_t i;

    ns->regions = (uint64_t)1 << r->layout.region_bits;
    ns->ids_per_region = (uint64_t)1 << r->layout.worker_bits;
    ns->has_cells = ns->ids_per_region <= STATUS_CELLS_MAX;
    if (r->n > 0 && (ns->workers = calloc(r->n, sizeof(ns->workers[0]))) == NULL)
        return IDMINT_ENOMEM;
    for (i = 0; i < r->n; i++) {
        const idmint_worker_info *wi = idmint_worker_info_at(r->rows, i);
        struct status_worker *w = &ns->workers[ns->n_workers++];

        w->region = wi->region;
        w->worker_id = wi->worker_id;
        w->state = judge(wi, now_unit);
        snprintf(w->holder, sizeof(w->holder), "%s", wi->holder);
        w->generation = wi->generation;
        w->lease_until = wi->lease_until;
        w->lease_end_ms = idmint__unit_start_ms(&r->layout, wi->lease_until);
        w->margin_ms = w->lease_end_ms - r->read_ms;
        w->is_own = is_own_row(ns->own, wi);
    }
    if (ns->n_workers > 1) /* qsort wants a valid pointer even for no element */
        qsort(ns->workers, ns->n_workers, sizeof(ns->workers[0]), by_place);
    return pick_regions(ns, d->cfg.region);
}

/* The counts of @p ns and of its drawn regions, once every row is judged. */
static void workers_count(struct status_ns *ns)
{
    size_t i, k;

    for (k = 0; k < ns->n_drawn; k++)
        ns->drawn[k].free = (uint32_t)ns->ids_per_region;
    for (i = 0; i < ns->n_workers; i++) {
        const struct status_worker *w = &ns->workers[i];
        struct status_region *g = NULL;

        for (k = 0; k < ns->n_drawn && g == NULL; k++)
            if (ns->drawn[k].region == w->region)
                g = &ns->drawn[k];
        if (w->state == STATUS_HELD)
            ns->held++;
        else if (w->state == STATUS_RESTING)
            ns->resting++;
        ns->low += w->is_low != 0;
        if (g == NULL || w->state == STATUS_FREE)
            continue;
        g->free--;
        if (w->state == STATUS_HELD)
            g->held++;
        else
            g->resting++;
        g->low += w->is_low != 0;
    }
    ns->free = ns->regions * ns->ids_per_region - ns->held - ns->resting;
    ns->is_idle = ns->held == 0 && ns->resting == 0;
}

/* ==== each holder judged against its own lease ==== */

/*
 * The store keeps a worker row's E, not the length of the lease behind it.
 * A holder renews to (now + its lease), so the longest margin any read has
 * shown for its grant (namespace, region, worker id, generation) is its
 * lease as far as this daemon has seen: never longer than the lease, and
 * close to it once a read follows a renewal. The grants of the latest
 * view are kept here, with those of namespaces it did not read.
 */
struct seen_grant {
    char ns[64];
    uint32_t region, worker_id;
    uint64_t generation;
    int64_t lease_ms; /* the longest margin seen; only grows */
};

static pthread_mutex_t seen_mu = PTHREAD_MUTEX_INITIALIZER;
static struct seen_grant *seen; /* sorted by seen_cmp; under seen_mu */
static size_t n_seen;

static int seen_cmp(const void *a, const void *b)
{
    const struct seen_grant *x = a, *y = b;
    int c = strcmp(x->ns, y->ns);

    if (c != 0)
        return c;
    if (x->region != y->region)
        return x->region < y->region ? -1 : 1;
    if (x->worker_id != y->worker_id)
        return x->worker_id < y->worker_id ? -1 : 1;
    return x->generation < y->generation ? -1 : x->generation > y->generation;
}

static int is_read(const struct status_ns *ns)
{
    return ns != NULL && ns->rows != NULL && ns->rows->rc == 0;
}

/*
 * Judge every held row of @p v: low when its margin is at most the share
 * of its own lease that the readiness threshold is of the daemon's lease
 * (ready_margin_ms of lease_ms), so the daemon's own row is judged exactly
 * as /readyz judges it. 0 or IDMINT_ENOMEM (nothing judged).
 */
static int leases_judge(const struct daemon *d, struct status_view *v)
{
    double share = (double)d->cfg.ready_margin_ms / (double)d->cfg.lease_ms;
    struct seen_grant *next;
    size_t i, k, n = 0, cap = 0;

    for (i = 0; i < v->n_ns; i++)
        if (is_read(&v->ns[i]))
            cap += v->ns[i].n_workers;
    pthread_mutex_lock(&seen_mu);
    cap += n_seen;
    if (cap > 0 && (next = calloc(cap, sizeof(next[0]))) == NULL) {
        pthread_mutex_unlock(&seen_mu);
        return IDMINT_ENOMEM;
    }
    if (cap == 0)
        next = NULL;
    for (i = 0; i < v->n_ns; i++) {
        struct status_ns *ns = &v->ns[i];

        if (!is_read(ns))
            continue;
        for (k = 0; k < ns->n_workers; k++) {
            struct status_worker *w = &ns->workers[k];
            struct seen_grant *g = &next[n], *old;

            if (w->state != STATUS_HELD)
                continue;
            snprintf(g->ns, sizeof(g->ns), "%s", ns->name);
            g->region = w->region;
            g->worker_id = w->worker_id;
            g->generation = w->generation;
            g->lease_ms = w->margin_ms;
            old = n_seen > 0 ? bsearch(g, seen, n_seen, sizeof(seen[0]), seen_cmp) : NULL;
            if (old != NULL && old->lease_ms > g->lease_ms)
                g->lease_ms = old->lease_ms;
            n++;
            w->lease_ms = w->is_own ? (int64_t)d->cfg.lease_ms : g->lease_ms;
            w->low_ms = w->is_own ? (int64_t)d->cfg.ready_margin_ms
                                  : (int64_t)((double)w->lease_ms * share);
            w->is_low = w->margin_ms <= w->low_ms;
        }
    }
    for (i = 0; i < n_seen; i++)
        if (!is_read(ns_find(v, seen[i].ns)))
            next[n++] = seen[i];
    if (n > 1)
        qsort(next, n, sizeof(next[0]), seen_cmp);
    free(seen);
    seen = next;
    n_seen = n;
    pthread_mutex_unlock(&seen_mu);
    for (i = 0; i < v->n_ns; i++)
        if (is_read(&v->ns[i]))
            workers_count(&v->ns[i]);
    return 0;
}

/* ==== audit details with their times spelled out ==== */

/* Append to @p out (@p size bytes, @p *o of them used), cut to fit. */
static void spell_put(char *out, size_t size, size_t *o, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (*o + 1 >= size)
        return;
    va_start(ap, fmt);
    n = vsnprintf(out + *o, size - *o, fmt, ap);
    va_end(ap);
    if (n > 0)
        *o = *o + (size_t)n < size ? *o + (size_t)n : size - 1;
}

/* Time unit @p v of @p l, or Unix ms @p v when @p l is NULL, as ISO-8601; 0 or -1. */
static int spell_time(const idmint_layout *l, uint64_t v, char *out, size_t size)
{
    if (l == NULL)
        return v <= INT64_MAX && idmint_format_iso8601((int64_t)v, out, size) == 0 ? 0 : -1;
    if (idmint__unit_start_ms(l, v) == INT64_MAX)
        return -1;
    return idmint_format_iso8601(idmint__unit_start_ms(l, v), out, size) == 0 ? 0 : -1;
}

static int key_is(const char *p, size_t len, const char *key)
{
    return strlen(key) == len && strncmp(p, key, len) == 0;
}

/*
 * Copy @p detail into @p out with every time in it also as ISO-8601, the
 * raw figure kept beside it: "e_after=2026-05-01T10:00:00.000Z (2909834)".
 * Time units (e_before, e_after, a snowflake fence's floor; the formats of
 * src/store/store.c) need the namespace's layout @p l (NULL: left raw);
 * observed_ms and epoch_ms are Unix ms. Everything else is copied as it is.
 */
static void detail_spell(const char *detail, const idmint_layout *l, char *out, size_t size)
{
    const char *p = detail;
    size_t o = 0;

    out[0] = '\0';
    while (*p != '\0') {
        size_t tok = strcspn(p, " "), key = strcspn(p, "= ");
        int is_ms = key_is(p, key, "observed_ms") || key_is(p, key, "epoch_ms");
        int is_units = l != NULL && (key_is(p, key, "e_before") || key_is(p, key, "e_after") ||
                                     key_is(p, key, "floor"));
        const char *q = p + key + 1, *stop = p + tok;

        if (p[key] != '=' || (!is_ms && !is_units)) {
            spell_put(out, size, &o, "%.*s", (int)tok, p);
        } else {
            spell_put(out, size, &o, "%.*s=", (int)key, p);
            while (q < stop) { /* "N" or "N->M" */
                char iso[32], *end;
                unsigned long long v;

                if (*q < '0' || *q > '9') {
                    spell_put(out, size, &o, "%c", *q++);
                    continue;
                }
                v = strtoull(q, &end, 10);
                if (spell_time(is_ms ? NULL : l, v, iso, sizeof(iso)) == 0)
                    spell_put(out, size, &o, "%s (%.*s)", iso, (int)(end - q), q);
                else
                    spell_put(out, size, &o, "%.*s", (int)(end - q), q);
                q = end;
            }
        }
        p += tok;
        if (*p == ' ') {
            spell_put(out, size, &o, " ");
            p++;
        }
    }
}

static int audit_spell(struct status_view *v)
{
    const struct sampler_cache *c = v->cache;
    size_t i;

    if (!v->shows_audit || c == NULL || !c->is_full || c->n_audit == 0)
        return 0;
    if ((v->audit_detail = calloc(c->n_audit, sizeof(v->audit_detail[0]))) == NULL)
        return IDMINT_ENOMEM;
    for (i = 0; i < c->n_audit; i++) {
        const idmint_audit_entry *e = &c->audit[i];
        const struct status_ns *ns = ns_find(v, e->ns);

        detail_spell(e->detail,
                     ns != NULL && ns->kind == IDMINT_KIND_SNOWFLAKE ? &ns->layout : NULL,
                     v->audit_detail[i], sizeof(v->audit_detail[i]));
    }
    return 0;
}

static int history_build(struct status_ns *ns)
{
    size_t k;

    if ((ns->per_s = malloc(THROUGHPUT_SECONDS * sizeof(ns->per_s[0]))) == NULL)
        return IDMINT_ENOMEM;
    throughput_read(ns->own->nh->slot, ns->per_s, &ns->per_s_end_ms);
    for (k = 0; k < THROUGHPUT_SECONDS; k++) {
        ns->window_total += ns->per_s[k];
        if (ns->per_s[k] > ns->peak_per_s)
            ns->peak_per_s = ns->per_s[k];
    }
    ns->last_per_s = ns->per_s[THROUGHPUT_SECONDS - 1];
    return 0;
}

/* Everything derived for one namespace, once the list is complete. */
static int ns_finish(struct daemon *d, struct status_view *v, struct status_ns *ns)
{
    int64_t now = v->live.now_ms;

    if (ns->kind == IDMINT_KIND_SNOWFLAKE) {
        if (idmint_layout_end_ms(&ns->layout, &ns->end_ms) == 0) {
            ns->has_end = 1;
            ns->lifetime_permille = permille((double)(now - ns->layout.epoch_ms),
                                             (double)(ns->end_ms - ns->layout.epoch_ms));
            ns->lifetime_level =
                level_high(ns->lifetime_permille, STATUS_LIFETIME_WARN, STATUS_LIFETIME_BAD);
        }
        ns->rows = sampler_rows_find(v->cache, ns->name);
        if (ns->rows != NULL && ns->rows->rc == 0 && workers_build(d, ns) != 0)
            return IDMINT_ENOMEM;
    } else if (ns->is_listed) {
        ns->values_left = ns->max_value >= ns->next_value ? ns->max_value - ns->next_value + 1 : 0;
        ns->left_permille = permille((double)ns->values_left, (double)ns->max_value);
        ns->left_level = level_low(ns->left_permille, STATUS_LEFT_WARN, STATUS_LEFT_BAD);
    }
    if (ns->own != NULL && history_build(ns) != 0)
        return IDMINT_ENOMEM;
    return 0;
}

/* Whether the store's figures can be trusted: read, read fully, and recently. */
static void store_judge(struct status_view *v)
{
    const struct sampler_cache *c = v->cache;
    int64_t age_ms = c != NULL ? v->live.now_ms - c->read_ms : 0;
    size_t i;

    v->store_level = STATUS_OK;
    v->store_problem[0] = '\0';
    if (c == NULL || !c->is_full) {
        v->store_level = STATUS_WARN;
        snprintf(v->store_problem, sizeof(v->store_problem),
                 "reading the store: its figures appear within %u s", SAMPLER_KICK_MS / 1000 + 1);
        return;
    }
    if (c->ns_rc != 0) {
        v->store_level = STATUS_BAD;
        snprintf(v->store_problem, sizeof(v->store_problem), "the store could not be read: %s",
                 c->ns_error);
        return;
    }
    for (i = 0; i < c->n_workers; i++) {
        if (c->workers[i].rc != 0) {
            v->store_level = STATUS_BAD;
            snprintf(v->store_problem, sizeof(v->store_problem),
                     "the worker rows of %s could not be read: %s", c->workers[i].name,
                     c->workers[i].error);
            return;
        }
    }
    if (age_ms > (int64_t)SAMPLER_PERIOD_MS * STATUS_STALE_PERIODS) {
        v->store_level = STATUS_BAD;
        snprintf(v->store_problem, sizeof(v->store_problem),
                 "the store's figures are %lld s old: the store is slow or hangs",
                 (long long)(age_ms / 1000));
    }
}

int status_view_take(struct daemon *d, int is_admin, struct status_view *out)
{
    const struct sampler_cache *c = sampler_cache_get();
    size_t i, cap;

    memset(out, 0, sizeof(*out));
    out->cache = c;
    if (status_live_take(d, c, &out->live) != 0)
        goto oom;
    out->is_ready = status_ready(d, out->ready_reason, sizeof(out->ready_reason));
    out->shows_audit = is_admin;
    cap = out->live.n + (c != NULL ? c->n_ns : 0);
    if (cap > 0 && (out->ns = calloc(cap, sizeof(out->ns[0]))) == NULL)
        goto oom;
    for (i = 0; c != NULL && i < c->n_ns; i++) {
        const idmint_ns_info *info = idmint_ns_info_at(c->ns, i);
        struct status_ns *ns = ns_add(out, info->name);

        ns->kind = info->kind;
        ns->is_listed = 1;
        ns->is_disabled = info->is_disabled;
        ns->layout = info->layout;
        ns->next_value = info->next_value;
        ns->max_value = info->max_value;
        ns->block = info->block;
        ns->max_block = info->max_block;
    }
    for (i = 0; i < out->live.n; i++) {
        const struct status_handle *h = &out->live.h[i];
        struct status_ns *ns = ns_find(out, h->nh->name);

        if (ns == NULL) {
            ns = ns_add(out, h->nh->name);
            ns->kind = h->nh->is_range ? IDMINT_KIND_RANGE : IDMINT_KIND_SNOWFLAKE;
            ns->layout = h->nh->layout;
        }
        ns->own = h;
        if (!h->nh->is_range && h->has_info)
            out->sequence_waits += h->info.sequence_waits;
    }
    if (out->n_ns > 1)
        qsort(out->ns, out->n_ns, sizeof(out->ns[0]), by_name);
    for (i = 0; i < out->n_ns; i++)
        if (ns_finish(d, out, &out->ns[i]) != 0)
            goto oom;
    if (leases_judge(d, out) != 0 || audit_spell(out) != 0)
        goto oom;
    store_judge(out);
    out->renewal_level = out->live.renewal_failures > 0 ? STATUS_BAD : STATUS_OK;
    out->backstep_level = out->live.clock_backsteps > 0 ? STATUS_WARN : STATUS_OK;
    /* A reported duplicate is what idmint exists to prevent; a 429 is a limit doing its job. */
    out->collision_level = out->live.collisions > 0 ? STATUS_BAD : STATUS_OK;
    out->rate_limited_level = out->live.rate_limited_total > 0 ? STATUS_WARN : STATUS_OK;
    /* The request limits: the write limits (RATELIMIT_BATCH on) are on by default. */
    for (i = 0; i <= RATELIMIT_ADDRESS; i++)
        out->has_limits |= d->cfg.limits[i].rate > 0;
    if (out->live.store_latency.count > 0)
        out->store_mean_us = out->live.store_latency.sum_ns / out->live.store_latency.count / 1000;
    out->store_p50 = quantile_bucket(&out->live.store_latency, 50);
    out->store_p99 = quantile_bucket(&out->live.store_latency, 99);
    return 0;
oom:
    status_view_free(out);
    return IDMINT_ENOMEM;
}

void status_view_free(struct status_view *v)
{
    size_t i;

    if (v == NULL)
        return;
    for (i = 0; i < v->n_ns; i++) {
        free(v->ns[i].workers);
        free(v->ns[i].drawn);
        free(v->ns[i].per_s);
    }
    free(v->ns);
    v->ns = NULL;
    free(v->audit_detail);
    v->audit_detail = NULL;
    v->n_ns = 0;
    status_live_free(&v->live);
    sampler_cache_put(v->cache);
    v->cache = NULL;
}
