/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The one snapshot of the daemon's figures. status_live_take() reads what
 * needs no store (the daemon's handles, the per-thread counters), and
 * /metrics prints it; status_view_take() adds the sampler's latest reading
 * of the store (sampler.h) and every derived figure (lifetime used, values
 * left, worker states and margins, latency quantiles, the per-second
 * history), and both /v1/status (status_json.c) and the HTML page
 * (status_page.c) only format it. Each rule is computed here, once, so
 * the three cannot disagree.
 */
#ifndef IDMINTD_STATUS_H
#define IDMINTD_STATUS_H

#include "idmint.h"

#include "throughput.h"
#include "metrics.h"
#include "sampler.h"

#include <stddef.h>
#include <stdint.h>

#define STATUS_CELLS_MAX 1024 /* worker ids of one region drawn as cells; above it, a table */
#define STATUS_GRID_MAX  4096 /* cells of all regions; above it only regions in use are drawn */

struct daemon;
struct ns_handle;

struct status_hist {
    uint64_t bucket[METRICS_BUCKETS]; /* not cumulative; the last is +Inf */
    uint64_t count;
    uint64_t sum_ns;
};

/* One of the daemon's handles, read from memory only. */
struct status_handle {
    const struct ns_handle *nh;
    uint64_t ids_issued;     /* idmint_ids_issued_total */
    int has_info;            /* handles_info answered; info is valid */
    idmint_handle_info info; /* worker id, E, sequence waits, range left */
    int64_t lease_end_ms;    /* snowflake: E as Unix ms; 0 when the lease is lost */
    int64_t workers_free;    /* snowflake: of the daemon's region, from the sampler; -1: unknown */
    int64_t lease_left_ms;   /* snowflake: lease_end_ms minus now; 0 when lost */
    int is_lease_low;        /* snowflake: lost, or lease_left_ms at most ready_margin_ms */
};

/* What needs no store. */
struct status_live {
    int64_t now_ms;          /* wall ms when taken */
    struct status_handle *h; /* malloc'd, n of them, in slot order */
    size_t n;
    uint64_t renewals, renewal_failures, range_refills, clock_backsteps;
    uint64_t collisions;              /* reported through POST /v1/collisions since start */
    uint64_t rate_limited[2][4];      /* 429s: [0 token, 1 address][caller's enum auth_role] */
    uint64_t rate_limited_total;      /* their sum */
    struct status_hist store_latency; /* the routes' and the sampler's store calls */
    struct status_hist http_duration;
};

/* Fill @p out, with workers_free from @p c (may be NULL). 0 or IDMINT_ENOMEM. */
int status_live_take(struct daemon *d, const struct sampler_cache *c, struct status_live *out);
void status_live_free(struct status_live *s); /* NULL-safe */
/* /readyz's verdict: 1 ready, else 0 with the reason. */
int status_ready(struct daemon *d, char *reason, size_t size);

enum status_state {
    STATUS_FREE = 0, /* no holder and E passed: a taker mints at once */
    STATUS_RESTING,  /* released (or forced away) with E ahead: a taker waits until E */
    STATUS_HELD,     /* a holder whose lease runs to E */
};

/* One worker row of the store, judged at the time it was read. */
struct status_worker {
    uint32_t region, worker_id;
    enum status_state state;
    char holder[33]; /* fingerprint; "" when released */
    uint64_t generation;
    uint64_t lease_until; /* E in time units */
    int64_t lease_end_ms; /* E as Unix ms */
    int64_t margin_ms;    /* lease_end_ms minus the time of the read */
    int64_t lease_ms;     /* held: its own lease as far as seen (status.c); own: cfg.lease_ms */
    int64_t low_ms;       /* held: margins at most this are low (the readiness share of lease_ms) */
    int is_low;           /* held with margin_ms at most low_ms */
    int is_own;           /* the daemon's own handle holds it */
};

/* How a figure stands; shown with a word and a symbol as well as a colour. */
enum status_level {
    STATUS_OK = 0,
    STATUS_WARN, /* look at it soon */
    STATUS_BAD,  /* act now: docs/status-page.md says how */
};

#define STATUS_LIFETIME_WARN 800 /* permille of the time bits used */
#define STATUS_LIFETIME_BAD  950
#define STATUS_LEFT_WARN     200 /* permille of a range's values left */
#define STATUS_LEFT_BAD      50
#define STATUS_STALE_PERIODS 3   /* store figures older than this many sampler periods are stale */
#define STATUS_DETAIL_MAX    768 /* an audit detail with its times spelled out */

struct status_region {
    uint32_t region;
    uint32_t held, resting, free, low;
};

struct status_ns {
    char name[64];
    idmint_kind kind;
    int is_listed;   /* in the store's namespace list; else known from the daemon's handle only */
    int is_disabled; /* when listed */
    idmint_layout layout;
    /* snowflake */
    int has_end;
    int64_t end_ms;        /* when the time bits run out */
    int lifetime_permille; /* of epoch .. end_ms gone by now, 0..1000 */
    enum status_level lifetime_level;
    const struct sampler_rows *rows; /* the read behind workers; NULL: not read */
    struct status_worker *workers;   /* malloc'd, by region then worker id */
    size_t n_workers;
    uint64_t regions, ids_per_region;
    struct status_region *drawn; /* malloc'd: the regions drawn as grids */
    size_t n_drawn;
    int has_cells;                     /* ids_per_region <= STATUS_CELLS_MAX */
    int is_idle;                       /* read, and no row held or resting: one line, no grid */
    uint64_t held, resting, free, low; /* over every region */
    /* range, when listed */
    uint64_t next_value, max_value, values_left;
    uint32_t block, max_block;
    int left_permille; /* values_left of max_value, 0..1000 */
    enum status_level left_level;
    /* the daemon's handle of it */
    const struct status_handle *own; /* NULL when the daemon does not mint from it */
    uint32_t *per_s;                 /* malloc'd THROUGHPUT_SECONDS, oldest first, when own */
    int64_t per_s_end_ms;
    uint64_t window_total;
    uint32_t peak_per_s, last_per_s;
};

struct status_view {
    struct status_live live;
    const struct sampler_cache *cache; /* a reference; NULL before the first pass */
    int is_ready;
    char ready_reason[256];
    enum status_level store_level; /* not read, failed, or stale */
    char store_problem[400];       /* "" when STATUS_OK */
    enum status_level renewal_level, backstep_level, collision_level, rate_limited_level;
    int has_limits;       /* some [limits] rate is set */
    struct status_ns *ns; /* malloc'd, by name */
    size_t n_ns;
    int shows_audit;                         /* the caller may read the audit log (admin) */
    char (*audit_detail)[STATUS_DETAIL_MAX]; /* malloc'd, one per cache->audit: times as ISO-8601 */
    uint64_t sequence_waits;                 /* over the daemon's snowflake handles */
    uint64_t store_mean_us;
    int store_p50, store_p99; /* bucket index: its bound is metrics_bounds_s[i]; the last: +Inf */
};

/* Build the view for a caller of role @p is_admin. 0 or IDMINT_ENOMEM (nothing to free). */
int status_view_take(struct daemon *d, int is_admin, struct status_view *out);
void status_view_free(struct status_view *v); /* NULL-safe */
/* The bound of latency bucket @p i in microseconds; -1 for +Inf. */
int64_t status_bucket_us(int i);

/* ==== status_json.c, status_page.c: formatting only ==== */
struct json;
struct json *status_json(const struct daemon *d, const struct status_view *v);
/* The page, malloc'd; NULL when out of memory. */
char *status_page(const struct daemon *d, const struct status_view *v, size_t *len);
/* The Content-Security-Policy of the page: its inline style and script by hash. */
const char *status_page_csp(void);

#endif /* IDMINTD_STATUS_H */
