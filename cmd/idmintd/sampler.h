/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The store sampler: one thread with its own authority that reads from the
 * store what /metrics and the status page show of it, and publishes each
 * pass as an immutable, reference-counted struct sampler_cache. A scrape or
 * a page never waits on the store: a slow or unreachable one would hold the
 * event loop and every mint queued behind the request.
 *
 * Every pass reads the worker rows of the daemon's own snowflake namespaces
 * (idmint_workers_free). While someone looks at /status or /v1/status
 * (within SAMPLER_WATCH_MS), passes are full: the namespace list, the rows
 * of every snowflake namespace and the tail of the audit log too.
 */
#ifndef IDMINTD_SAMPLER_H
#define IDMINTD_SAMPLER_H

#include "idmint.h"

#include "metrics.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define SAMPLER_PERIOD_MS  5000u  /* from the end of one pass to the start of the next */
#define SAMPLER_WATCH_MS   60000u /* passes stay full this long after a status request */
#define SAMPLER_KICK_MS    1000u  /* a status request after light passes: full pass this soon */
#define SAMPLER_AUDIT_TAIL 20     /* audit records kept, the newest */

/* The worker rows of one snowflake namespace, as one read found them. */
struct sampler_rows {
    char name[64];
    idmint_layout layout;     /* to turn lease_until (time units) into Unix ms */
    int64_t read_ms;          /* wall ms just before the read */
    int rc;                   /* 0, or the read's IDMINT_E* code (rows NULL, n 0) */
    char error[256];          /* idmint_strerror and detail when rc != 0 */
    idmint_worker_info *rows; /* step with idmint_worker_info_at(); idmint_free'd */
    size_t n;
};

/* One pass. Immutable once published; freed when its last reader puts it back. */
struct sampler_cache {
    _Atomic unsigned refs;
    int64_t read_ms;    /* wall ms at the start of the pass */
    int is_full;        /* namespaces and audit were read too */
    int ns_rc;          /* full passes: 0 or the namespace list read's code */
    char ns_error[256]; /* when ns_rc != 0 */
    idmint_ns_info *ns; /* full passes: every namespace; idmint_ns_info_at(); idmint_free'd */
    size_t n_ns;
    struct sampler_rows *workers; /* the daemon's snowflake namespaces, then (full) the others */
    size_t n_workers;
    int audit_rc; /* full passes: 0 or the last audit read's code */
    char audit_error[256];
    idmint_audit_entry audit[SAMPLER_AUDIT_TAIL]; /* newest first */
    size_t n_audit;
};

struct daemon;

/* Start the sampler thread; call once, after the handles exist. 0, or -1. */
int sampler_start(struct daemon *d);
/* Stop and join it; a no-op when it never started. */
void sampler_stop(void);
/* The latest pass, with a reference taken; NULL before the first. Thread-safe. */
const struct sampler_cache *sampler_cache_get(void);
/* Give back a reference from sampler_cache_get(); NULL is a no-op. Thread-safe. */
void sampler_cache_put(const struct sampler_cache *c);
/* The rows of @p ns in @p c, or NULL when the pass did not read them. */
const struct sampler_rows *sampler_rows_find(const struct sampler_cache *c, const char *ns);
/*
 * A status request arrived: keep passes full for SAMPLER_WATCH_MS and, when
 * the latest pass was light, ask for a full one within SAMPLER_KICK_MS.
 * Never waits. Thread-safe.
 */
void sampler_watch(void);
/* The sampler's own store-call latencies (only store_latency is used). */
const struct metrics_thread *sampler_metrics(void);

#endif /* IDMINTD_SAMPLER_H */
