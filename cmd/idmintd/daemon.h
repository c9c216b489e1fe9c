/* SPDX-License-Identifier: Apache-2.0 */
/*
 * idmintd's shared state: the configuration after every override, the table
 * of minting handles shared by all event-loop threads, and the per-thread
 * state the routes work with. Nothing here knows the HTTP or JSON library.
 */
#ifndef IDMINTD_DAEMON_H
#define IDMINTD_DAEMON_H

#include "idmint.h"

#include "auth.h"
#include "http.h"
#include "metrics.h"
#include "ratelimit.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define DAEMON_VERSION    "0.2.0"
#define DAEMON_MAX_TOKENS 64
#define HANDLES_MAX       METRICS_MAX_NS /* namespaces one daemon mints from */

struct config {
    char listen[256]; /* "ADDR:PORT" */
    unsigned threads;
    unsigned max_connections;
    size_t max_body_bytes;
    size_t max_header_bytes;
    uint32_t request_timeout_ms;
    uint32_t max_count;   /* largest count one GET /v1/ids may ask for */
    char authority[1024]; /* store URL; "": the library's fixed default */
    uint32_t region;
    char namespaces[1024]; /* comma list, opened at start */
    uint32_t lease_ms;     /* worker lease of the daemon's own handles */
    uint32_t renew_ms;
    uint32_t ready_margin_ms; /* 0 until set: then lease_ms / 10 */
    int log_level;            /* LOG_* */
    char log_file[1024];      /* "" : stderr */
    char port_file[1024];     /* "" : none */
    char tls_cert[1024];      /* PEM chain; "" : plain HTTP (then tls_key is "" too) */
    char tls_key[1024];       /* PEM private key, unencrypted */
    struct auth_token tokens[DAEMON_MAX_TOKENS];
    size_t n_tokens;
    unsigned max_connections_per_client; /* from one address (IPv6: one /64) */
    unsigned max_connections_per_prefix; /* from one prefix of client_prefix_v4/_v6 bits */
    unsigned client_prefix_v4;           /* 8..32 */
    unsigned client_prefix_v6;           /* 16..64 */
    /* [provenance]: seconds a worker grant, a range grant, an idempotent
     * batch and a collision record are kept (enum idmint__retained order);
     * 0: the library's default */
    uint32_t keep_s[4];
    /* [limits]: by enum ratelimit_class; rate 0: no limit (the default of
     * the request classes; the write classes have RATELIMIT_*_RATE) */
    struct ratelimit_rule limits[RATELIMIT_CLASSES];
    /* [store]: the store threads that run every store-bound route (store_pool.h) */
    unsigned store_threads;
    unsigned store_lease_threads; /* more, that run only the lease routes (store_pool.h) */
    unsigned store_queue;         /* jobs waiting for a thread, per lane; more get 503 at once */
    uint32_t store_deadline_ms;   /* a store-bound request unanswered by then gets 503 */
};

/*
 * One namespace the daemon mints from. Written once before it is published,
 * except the handle itself, which the main thread replaces when its lease
 * can never be renewed again; use it through handles_try_next_n/handles_info.
 */
struct ns_handle {
    char name[64];
    _Atomic(idmint *) m;    /* owned; replaced by the 1 s tick, closed at shutdown */
    _Atomic unsigned epoch; /* its parity picks the users counter readers join */
    _Atomic unsigned users[2];
    int is_range;
    idmint_layout layout; /* snowflake only */
    int64_t end_ms;       /* snowflake: when the time bits run out */
    size_t slot;          /* index in struct handles and in the metrics arrays */
    /* Observed by the 1 s tick on the main thread only. */
    uint64_t seen_lease_until;
    uint64_t seen_range_left;
    _Atomic int store_status; /* idmint_lease_status at the last tick; read by /readyz */
    int stop_status;          /* ELEASELOST / EDISABLED being recovered from, else 0 */
    int64_t retry_at_ms;      /* next attempt at a new handle */
    uint32_t backoff_ms;
};

/*
 * Namespace -> handle, shared by every thread. Readers scan without a lock
 * (slots are append-only and n is published with release order); opening
 * happens under mu so two threads never open the same namespace twice.
 */
struct handles {
    pthread_mutex_t mu;
    _Atomic size_t n;
    struct ns_handle *slots[HANDLES_MAX];
    const struct config *cfg;
    _Atomic uint64_t renewals;         /* lease extensions observed */
    _Atomic uint64_t renewal_failures; /* leases observed lost or run out */
    _Atomic uint64_t range_refills;    /* range supplies observed refilled */
    /* Set once any open of the authority succeeded: from then on nothing
     * the daemon opens may create it, so a store file removed under us is
     * an error, never a fresh, empty authority. */
    _Atomic int store_seen;
    /* The authority as a person is shown it (idmint_authority_resolve):
     * path or URL, secrets masked; never "the default". */
    char authority_text[IDMINT_AUTHORITY_TEXT_MAX];
};

/*
 * Everything one event-loop thread, or one store thread, owns. The first
 * cfg.threads of daemon.threads are the loops', the rest the store
 * threads' (is_store): a handler running there may wait on the store.
 */
struct daemon_thread {
    unsigned index;
    struct daemon *d;
    idmint_authority *auth; /* opened on first use; never shared across threads */
    const char *actor;      /* the current request's token name (audit log) */
    int status;             /* the current request's answer, for the metrics */
    int is_store;           /* a store thread's: handlers may block here */
    /* What the stage before handed the handler running now
     * (routes_defer_store_with, routes_defer_resume): in memory of the
     * request's copy, valid only during the handler's call; NULL when none. */
    const void *handoff;
    size_t handoff_size;
    /* Store threads: set by routes_defer_resume during a handler's call. */
    void (*resume)(struct http_req *r, struct daemon_thread *w, const struct route_match *m);
    const void *resume_data;
    size_t resume_size;
    /* Loops only: the current request's row and start, and whether it is
     * answered later (then whoever answers counts it: metrics_count_answer). */
    const struct route_row *row;
    uint64_t t0_ns;
    int is_deferred;
    struct metrics_thread metrics;
};

struct daemon {
    struct config cfg;
    struct handles handles;
    /* cfg.threads loops', then cfg.store_threads + cfg.store_lease_threads store threads' */
    struct daemon_thread *threads;
    unsigned n_threads;
    struct store_pool *pool;
    _Atomic int is_ready; /* the eager handles are open */
    _Atomic uint64_t clock_backsteps;
    struct ratelimit limits; /* the buckets of cfg.limits, shared by every thread */
};

/* ==== handles.c ==== */
/*
 * Ready @p h for @p cfg. 0, or IDMINT_EINVAL when cfg's authority URL is
 * malformed (idmint_authority_resolve's message): the server's
 * misconfiguration, for main to refuse at start.
 */
int handles_init(struct handles *h, const struct config *cfg);
/* The handle of @p ns, opening it on first use. 0 or an IDMINT_E* code. */
int handles_get(struct handles *h, const char *ns, struct ns_handle **out);
/* The handle of @p ns if it is open already, else NULL; never touches the store. */
struct ns_handle *handles_find(struct handles *h, const char *ns);
/* Open every name in cfg->namespaces. 0 or the first failure (logged). */
int handles_open_eager(struct handles *h);
/*
 * idmint_try_next_n on @p nh's current handle: never waits, neither for a
 * time unit nor for a range's refill (routes_mint.h finishes a batch from a
 * timer, or on a store thread). Thread-safe, also while the tick replaces
 * the handle.
 */
int handles_try_next_n(struct ns_handle *nh, uint64_t *ids, size_t n, size_t *got,
                       uint32_t *wait_ms);
/*
 * idmint_next_n on @p nh's current handle: may wait (a range's refill, up
 * to deadline_ms; a snowflake's next unit), so store threads only, and for
 * a range handle only. Thread-safe like handles_try_next_n.
 */
int handles_next_n(struct ns_handle *nh, uint64_t *ids, size_t n);
/* idmint_info of @p nh's current handle (@p out from idmint_handle_info_init()). Thread-safe. */
int handles_info(struct ns_handle *nh, idmint_handle_info *out);
/*
 * The 1 s tick (main thread): count renewals, losses and refills from
 * idmint_info, and replace a handle whose lease was lost or whose namespace
 * was disabled by a new one (new worker id), with backoff, logging why.
 */
void handles_observe(struct handles *h);
/*
 * 1 and reason "" when every handle holds its lease with margin; else 0:
 * a lost lease (until replaced), a store that refuses renewals, a lease
 * within the margin of its end (a disabled namespace's lease runs out so).
 */
int handles_ready(struct handles *h, char *reason, size_t size);
void handles_close_all(struct handles *h);
/*
 * Open the daemon's authority: creating it only until it has been seen once
 * (handles.store_seen), then only an existing one. 0 or IDMINT_E*.
 */
int handles_authority_open(struct handles *h, idmint_authority **out);
/*
 * At start: open the authority once, creating it when there is none yet
 * (*created = 1), so that a set-up that can never work stops the daemon
 * (IDMINT_EINVAL, IDMINT_ESTORE) and one that may yet work
 * (IDMINT_EUNAVAILABLE, IDMINT_ETIMEDOUT) only keeps it unready.
 */
int handles_authority_start(struct handles *h, int *created);
/* The authority URL to open: NULL (the library's default) when none is configured. */
const char *handles_authority_url(const struct config *cfg);

/*
 * ==== routes.c: the dispatcher, the event loops' on_request ====
 * The routes themselves are rows of route_table.c; their handlers answer
 * through reply.h.
 */
void routes_handle(struct http_req *r);
void *routes_thread_init(unsigned index, void *daemon);
void routes_thread_fini(void *worker);

/* ==== routes_ns.c, besides its handlers ==== */
/*
 * The body of POST /v1/namespaces as a namespace to create; no store is
 * touched (fuzz/fuzz_json.c). 0, or -1 with the 400 message in @p err.
 */
int routes_parse_ns_body(const char *text, size_t len, idmint_ns_info *out, char *err,
                         size_t err_size);

#endif /* IDMINTD_DAEMON_H */
