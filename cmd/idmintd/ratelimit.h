/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Request rate limits: one token bucket per bearer token (its rate and
 * burst set by the token's role) and one per client address, checked by
 * the dispatcher (routes.c) once the token is known; and per caller, one
 * bucket for each kind of record a caller can make the store keep (new
 * idempotent batches, collision reports, worker takes and range
 * reservations), checked by those routes, so that
 * what any caller can write is bounded whatever the request limits are.
 * Lock-free and O(1) per request: a bucket is one 64-bit word advanced by
 * compare-and-swap, so a client over its limit costs the others one atomic
 * operation, never a wait. Time is an argument, so the unit test drives it.
 */
#ifndef IDMINTD_RATELIMIT_H
#define IDMINTD_RATELIMIT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define RATELIMIT_TOKENS_MAX 64 /* as DAEMON_MAX_TOKENS */
#define RATELIMIT_RATE_MAX   1000000u
#define RATELIMIT_BURST_MAX  1000000u
/* The address table: RATELIMIT_SETS sets of RATELIMIT_WAYS buckets, 8 bytes
 * each (64 KiB whatever the number of clients). */
#define RATELIMIT_WAYS       8
#define RATELIMIT_SETS       1024

/*
 * What a bucket belongs to: a token of a role, or a client address (the
 * request limits, RATELIMIT_MINT..RATELIMIT_ADDRESS); or a caller's writes
 * of one kind (RATELIMIT_BATCH and up).
 */
enum ratelimit_class {
    RATELIMIT_MINT = 0,
    RATELIMIT_GENERATOR = 1,
    RATELIMIT_ADMIN = 2,
    RATELIMIT_ADDRESS = 3,
    RATELIMIT_BATCH = 4,     /* GET /v1/ids with an Idempotency-Key not saved yet */
    RATELIMIT_COLLISION = 5, /* POST /v1/collisions */
    RATELIMIT_GRANT = 6,     /* a worker take or range reservation for a remote library */
    RATELIMIT_RENEW = 7,     /* a worker lease renewal for a remote library */
    RATELIMIT_CLASSES
};
#define RATELIMIT_WRITES    (RATELIMIT_CLASSES - RATELIMIT_BATCH)
#define RATELIMIT_ANONYMOUS RATELIMIT_TOKENS_MAX /* the caller when no tokens are configured */

/* Defaults of the write limits: each caller may save 10 new batches a
 * second (100 at once) and report 1 collision a second (60 at once). */
#define RATELIMIT_BATCH_RATE      10u
#define RATELIMIT_BATCH_BURST     100u
#define RATELIMIT_COLLISION_RATE  1u
#define RATELIMIT_COLLISION_BURST 60u
/* Each caller's takes and reservations (/internal/): each is a grant row and
 * an audit record kept for the grant retention; a library asks for one at
 * its start and each range refill, so the burst lets a fleet start at once. */
#define RATELIMIT_GRANT_RATE      100u
#define RATELIMIT_GRANT_BURST     1000u
/* Each caller's renewals: each moves its row and logs one history entry
 * (kept a day). A library renews a lease about every third of it, so even
 * 10,000 processes on one token with 60 s leases stay far below. */
#define RATELIMIT_RENEW_RATE      1000u
#define RATELIMIT_RENEW_BURST     10000u

/* One class's limit: @c rate requests a second on average, @c burst at once. */
struct ratelimit_rule {
    uint32_t rate;  /* requests per second; 0: no limit (the default) */
    uint32_t burst; /* bucket size in requests; 0: the same as rate */
};

struct ratelimit {
    uint64_t seed; /* hashes addresses; random so that none can be picked to collide */
    /* By token index: the time at which the bucket is full again, ns of
     * the caller's monotonic clock (GCRA's theoretical arrival time). */
    _Atomic uint64_t token_tat_ns[RATELIMIT_TOKENS_MAX];
    /* The same for each caller's writes: [class - RATELIMIT_BATCH][token index, or
     * RATELIMIT_ANONYMOUS]. */
    _Atomic uint64_t write_tat_ns[RATELIMIT_WRITES][RATELIMIT_TOKENS_MAX + 1];
    /* A 20-bit address fingerprint above a 44-bit µs time (mod 2^44); 0: free. */
    _Atomic uint64_t address[RATELIMIT_SETS][RATELIMIT_WAYS];
    _Atomic uint64_t refused[2][4]; /* 429s: [0 token, 1 address][caller's enum auth_role] */
};

/* Seed the address hash. A zeroed struct ratelimit works too (seed 0). */
void ratelimit_init(struct ratelimit *rl);

/*
 * Take one request from token @p index's bucket under @p rule at @p now_ns
 * (monotonic). 0 when allowed; else how many ns until it would be, and
 * nothing changed. Thread-safe (lock-free).
 */
uint64_t ratelimit_take_token(struct ratelimit *rl, size_t index, const struct ratelimit_rule *rule,
                              uint64_t now_ns);

/*
 * Take one write of class @p c (RATELIMIT_BATCH or later) from caller
 * @p caller's bucket (a token index, or RATELIMIT_ANONYMOUS) under @p rule
 * at @p now_ns: as ratelimit_take_token. Thread-safe (lock-free).
 */
uint64_t ratelimit_take_write(struct ratelimit *rl, enum ratelimit_class c, size_t caller,
                              const struct ratelimit_rule *rule, uint64_t now_ns);

/*
 * The same for the client address @p key (16 bytes, as http_client_key).
 * An address without a bucket takes a free one of its set, else the one
 * closest to full (evicting it forgets at most that address's debt).
 */
uint64_t ratelimit_take_address(struct ratelimit *rl, const unsigned char key[16],
                                const struct ratelimit_rule *rule, uint64_t now_ns);

/*
 * Count one 429 from a token's bucket (@p is_address 0) or an address's
 * (1), for a caller of enum auth_role @p role (0..3). Thread-safe.
 */
void ratelimit_count(struct ratelimit *rl, int is_address, unsigned role);
uint64_t ratelimit_refused_total(struct ratelimit *rl, int is_address, unsigned role);

/* Retry-After for a wait of @p wait_ns: whole seconds, rounded up, at least 1. */
uint64_t ratelimit_retry_after_s(uint64_t wait_ns);

/* "mint", "generator", "admin", "address", "batch", "collision": the prefix of its settings. */
const char *ratelimit_class_name(enum ratelimit_class c);

#endif /* IDMINTD_RATELIMIT_H */
