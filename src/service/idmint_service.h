/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What a service built on libidmint (idmintd) needs beyond idmint.h: the
 * authority layer's lease and range calls, which a remote generator reaches
 * over HTTP, and a few helpers of the library. Never installed; the CMake
 * target idmint_service publishes this folder and nothing else of src/.
 * Every call here is safe from any thread on its own arguments; an
 * idmint_authority is used by one thread at a time.
 */
#ifndef IDMINT_SERVICE_H
#define IDMINT_SERVICE_H

#include "idmint.h"

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define IDMINT_DEFAULT_NS "default"

/* ==== helpers ==== */

/* Set the thread-local detail read by idmint_errmsg(); returns @p err. */
int idmint__fail(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The value of hex digit @p c (either case), or -1. */
static inline int idmint__hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Fill @p buf from the kernel CSPRNG. 0 or IDMINT_EUNAVAILABLE. */
int idmint__entropy(void *buf, size_t len);
/* A condition variable whose timed waits run on CLOCK_MONOTONIC (immune to clock steps). */
void idmint__cond_init_monotonic(pthread_cond_t *cv);
/* The CLOCK_MONOTONIC instant @p ms from now, for pthread_cond_timedwait. */
struct timespec idmint__monotonic_after_ms(uint64_t ms);

/* ==== time units ==== */

/*
 * The time unit of layout @p l that Unix ms @p unix_ms falls in; 0 before
 * the epoch. Rounded down, the inverse of idmint_decode's time arithmetic,
 * so a lease never claims time it was not given: the one conversion of ms
 * to a namespace's units. Inline: the minting path calls it for every ID.
 */
static inline uint64_t idmint__unit_at(const idmint_layout *l, int64_t unix_ms)
{
    if (unix_ms <= l->epoch_ms)
        return 0;
    if (l->unit_ms == 1)
        return (uint64_t)(unix_ms - l->epoch_ms);
    return (uint64_t)(unix_ms - l->epoch_ms) / l->unit_ms;
}

/*
 * Unix ms at which time unit @p unit of layout @p l starts: the inverse of
 * idmint__unit_at, and the one conversion of a namespace's units to ms (a
 * lease's E, a decoded ID's time, the end of a layout). Saturates at
 * INT64_MAX rather than overflow, for a unit no layout reaches.
 */
static inline int64_t idmint__unit_start_ms(const idmint_layout *l, uint64_t unit)
{
    uint64_t unit_ms = l->unit_ms == 0 ? 1 : l->unit_ms;
    uint64_t room = (uint64_t)(INT64_MAX - (l->epoch_ms > 0 ? l->epoch_ms : 0));

    if (unit > room / unit_ms)
        return INT64_MAX;
    return l->epoch_ms + (int64_t)(unit * unit_ms);
}

/* The last time unit of @p l: 2^T - 1. */
static inline uint64_t idmint__unit_max(const idmint_layout *l)
{
    return l->time_bits >= 64 ? UINT64_MAX : (UINT64_C(1) << l->time_bits) - 1;
}

/* ==== the HTTP API's errors (wire_errors.c) ==== */

/* One row of the table between library codes and the HTTP API's errors. */
struct idmint__wire_error {
    int err;           /* IDMINT_E* */
    int status;        /* HTTP status */
    const char *code;  /* JSON error.code */
    int is_reply_only; /* the HTTP layer's own answer; err is what a client makes of it */
};
/* The answer to library code @p err; an unknown code gets 503 "unavailable". Never NULL. */
const struct idmint__wire_error *idmint__wire_error_of(int err);
/* The row of wire code @p code (NULL when no row has it, or @p code is NULL). */
const struct idmint__wire_error *idmint__wire_error_named(const char *code);
/*
 * The library code a client makes of wire code @p code with HTTP @p status:
 * its row's, else by the status class (5xx: IDMINT_EUNAVAILABLE, else
 * IDMINT_EINVAL).
 */
int idmint__wire_error_code(const char *code, long status);
/* Every row, for checks: *out is the table (static), the count returned. */
size_t idmint__wire_errors(const struct idmint__wire_error **out);

/* ==== names, actors, holders ==== */

/* Validated name: [a-z0-9][a-z0-9_.-]{0,62}. 0 or IDMINT_EINVAL with a message. */
int idmint__ns_name_check(const char *name);
/*
 * Name @p actor (idmintd: the caller's token) in the audit records of what
 * @p a does from now on; NULL or "" goes back to the OS user.
 */
void idmint__authority_act_as(idmint_authority *a, const char *actor);
/*
 * Who the audit log names for what @p a does: the actor set with
 * idmint__authority_act_as, else the OS user ("user:NAME(uid)"). Never an
 * environment variable: any process could name anyone with one.
 */
void idmint__authority_actor(const idmint_authority *a, char *buf, size_t size);
/*
 * Read namespace @p name into @p out, creating "default" (audited) on first
 * use; @p out is set up by idmint_ns_info_init() (any kind) and out->size
 * bytes of it are written, as idmint_ns_get() does. 0, IDMINT_EINVAL (also
 * for an out->size not set up), IDMINT_ENOTFOUND, or the store's error.
 */
int idmint__authority_ns_resolve(idmint_authority *a, const char *name, idmint_ns_info *out);

/*
 * What listings and audit records show of a holder: its first
 * IDMINT_HOLDER_FP_LEN hex digits. The holder id is the lease's secret (the
 * store compares all 32 digits on renew and release); the 96 bits not shown
 * cannot be guessed. Idempotent, so a listing relayed by another authority
 * stays the same. @p out has room for IDMINT_HOLDER_FP_LEN + 1 bytes.
 */
#define IDMINT_HOLDER_FP_LEN 8
void idmint__holder_fingerprint(const char *holder, char *out);

/* ==== provenance (provenance.c) ==== */

/*
 * Who asks for a grant, as it says of itself: recorded with the grant
 * (idmint_grant_info), never used to decide anything. Every field is
 * printable ASCII without quotes or backslashes, "" when unknown.
 */
struct idmint__origin {
    char host[64];    /* host name */
    uint32_t pid;     /* process id; 0 unknown */
    char program[32]; /* program name */
    char token[64];   /* the token's name when the grant came over HTTP; set by idmintd only */
};

/* @p o for this process: gethostname(), getpid(), the program's short name; no token. */
void idmint__origin_self(struct idmint__origin *o);
/*
 * 0 when every text field of @p o is terminated, printable ASCII without
 * '"' or '\\'; else IDMINT_EINVAL naming the field (a request's body).
 */
int idmint__origin_check(const struct idmint__origin *o);
/*
 * The grants @p a makes from now on are recorded as asked by @p o (copied;
 * idmintd: what a remote generator said of itself, with its token's name),
 * NULL goes back to this process. As idmint__authority_act_as.
 */
void idmint__authority_on_behalf(idmint_authority *a, const struct idmint__origin *o);

/* What a retention applies to (idmint__authority_set_retention). */
enum idmint__retained {
    IDMINT__KEEP_WORKER_GRANTS, /* a worker grant, from its last renewal or release */
    IDMINT__KEEP_RANGE_GRANTS,  /* a range grant, from its reservation */
    IDMINT__KEEP_BATCHES,       /* an idempotent batch, from its first request */
    IDMINT__KEEP_COLLISIONS,    /* a collision record, from its first report */
    IDMINT__KEEP__COUNT
};
#define IDMINT__KEEP_WORKER_GRANTS_MS (30LL * 86400000) /* defaults: 30 days, */
#define IDMINT__KEEP_RANGE_GRANTS_MS  (7LL * 86400000)  /* 7 days, */
#define IDMINT__KEEP_BATCHES_MS       (86400000LL)      /* 24 hours, */
#define IDMINT__KEEP_COLLISIONS_MS    (30LL * 86400000) /* 30 days */

/*
 * Keep @p what for @p ms (1 s .. 10 years) from now on: @p a prunes older
 * records in bounded batches as it grants (so that a table grows no
 * faster than it shrinks), and in idmint__authority_prune. Grants are
 * judged by this process's clock and retention, so the shortest one in a
 * fleet wins. Batches and collision records are not: each gets its
 * expiry from the store's own clock when it is written (now + the
 * retention of the process that wrote it), and no process removes one
 * before that, whatever its clock or retention (store.h, prune).
 * 0 or IDMINT_EINVAL.
 */
int idmint__authority_set_retention(idmint_authority *a, enum idmint__retained what, int64_t ms);
/*
 * Delete up to @p limit records of @p what older than its retention;
 * *pruned (if not NULL) gets how many. 0, IDMINT_EINVAL (a remote
 * authority: its own prunes), IDMINT_EUNAVAILABLE, IDMINT_ESTORE.
 */
int idmint__authority_prune(idmint_authority *a, enum idmint__retained what, size_t limit,
                            uint64_t *pruned);

/* ==== idempotent batches (authority_batch.c) ==== */

#define IDMINT_BATCH_KEY_MAX 64      /* bytes of an idempotency key */
#define IDMINT_BATCH_MAX     100000u /* IDs in one batch */

/*
 * A batch minted under an idempotency key, as the store keeps it: the IDs
 * as runs of consecutive values, "START+LEN" joined by ',' in mint order.
 * A key is scoped to its owner: (owner, key) names one batch, so another
 * caller's use of the same key is another batch, never a conflict.
 */
struct idmint__batch {
    char ns[64];
    char key[IDMINT_BATCH_KEY_MAX + 1]; /* idmint__batch_key_check */
    char owner[64];                     /* the caller (its token's name, or "anonymous") */
    uint32_t count;
    char *runs;         /* malloc'd, owned by the struct: idmint__batch_clear */
    int64_t keep_ms;    /* claim: how long the store keeps it (> 0) */
    int64_t created_ms; /* Unix ms by the store's clock, set by the store */
    int64_t expires_ms; /* created_ms + keep_ms, set by the store; kept at least until then */
};

/* 0 when @p key is 1..IDMINT_BATCH_KEY_MAX of [A-Za-z0-9._:-]; else IDMINT_EINVAL. */
int idmint__batch_key_check(const char *key);
/* Free b->runs and zero @p b. NULL-safe. */
void idmint__batch_clear(struct idmint__batch *b);
/* b->runs for @p ids (@p n of them, n >= 1). 0 or IDMINT_ENOMEM. */
int idmint__batch_runs_encode(struct idmint__batch *b, const uint64_t *ids, size_t n);
/*
 * The b->count IDs of b->runs into @p ids (room for b->count). 0, or
 * IDMINT_ESTORE when the runs are malformed or do not add up to b->count.
 */
int idmint__batch_runs_decode(const struct idmint__batch *b, uint64_t *ids);
/*
 * The batch @p owner saved under @p key (in whatever namespace: compare
 * out->ns) into @p out, which must be zeroed or hold a batch (it is
 * cleared first: its runs are freed); another owner's batch of the same
 * key is never found. 0, IDMINT_ENOTFOUND (none: mint it), IDMINT_EINVAL
 * (a bad key or owner; a remote authority), IDMINT_ENOMEM,
 * IDMINT_EUNAVAILABLE, IDMINT_ESTORE.
 */
int idmint__authority_batch_get(idmint_authority *a, const char *owner, const char *key,
                                struct idmint__batch *out);
/*
 * Save @p b (its keep_ms is set here, to this authority's batch retention)
 * unless a batch of (b->owner, b->key) is saved already; @p saved gets the
 * one that is (b's or the earlier one: compare its namespace and count
 * before answering); like batch_get's @p out it must be zeroed or hold a
 * batch. Durable before it returns. Every so often also
 * prunes batches past their expiry.
 * 0, IDMINT_EINVAL, IDMINT_ENOMEM, IDMINT_EUNAVAILABLE, IDMINT_ESTORE.
 */
int idmint__authority_batch_claim(idmint_authority *a, struct idmint__batch *b,
                                  struct idmint__batch *saved);

/* ==== collision reports (authority_provenance.c) ==== */

/*
 * idmint_collision_report(), also saying whether the report made a record:
 * *is_new 1, or 0 when the same reporter reported (@p ns, @p id) before,
 * and then @p out is that first record, unchanged, and nothing was written
 * (no audit record either). Kept for this authority's collision retention
 * from the first report. Through a remote authority *is_new is always 1:
 * the remote daemon keeps the records and decides. Same codes as
 * idmint_collision_report().
 */
int idmint__collision_report(idmint_authority *a, const char *ns, uint64_t id, int64_t observed_ms,
                             const char *note, idmint_collision *out, int *is_new);

/* ==== the authority's history (history.c) ==== */

/*
 * Where in the authority's history a store write happened. Every write that
 * grants or moves a boundary (take, renewal, release, forced release,
 * reservation) grows seq by one and draws a new random tip, recorded with
 * seq in the store's history log in the same transaction; a fence gives
 * the store a new id. A seq alone cannot tell a restored store that has
 * since been written to from the real one (other processes' grants push it
 * past what a slow process saw); the tip can: after a restore the store
 * reuses seq numbers with other tips, so the pair (seq, tip) a process saw
 * is no longer in the log.
 */
struct idmint__history {
    char id[33];  /* 32 hex digits; "" when the store did not say */
    uint64_t seq; /* 0: no news (a replayed reservation, an older remote) */
    uint64_t tip; /* random, drawn by the write that made seq; 0: not said (an older store) */
};

#define IDMINT__LINEAGE_MAX 8 /* history ids a store remembers having been fenced over */

/* What a store says of its history when asked about one seq (store history_check). */
struct idmint__history_state {
    char store_id[33];           /* made with the store, kept across fences and restores */
    struct idmint__history head; /* the latest write */
    int64_t backup_ms;           /* not 0: a marked backup, not fenced yet */
    uint64_t oldest_seq;         /* the oldest seq the log still holds */
    uint64_t tip_at_seq;         /* the log's tip at the seq asked about; 0: none there */
    char lineage[IDMINT__LINEAGE_MAX][33]; /* ids this history was fenced over, newest first */
    size_t lineage_n;
};

/* Whose evidence idmint__history_verify judges: a running holder's, or a host's witness. */
enum idmint__evidence {
    IDMINT__EVIDENCE_HOLDER,  /* grants this process holds and mints from */
    IDMINT__EVIDENCE_WITNESS, /* the highest pair this host has seen (witness.c) */
};

/*
 * Follow @p got after @p seen, for the holder of a lease or range supply in
 * namespace @p ns: 0 (and *seen = *got) while the history runs on;
 * IDMINT_ERESTORED with a message when its id changed or its seq went
 * backwards: the store was restored or rolled back, and whatever this
 * process holds may be handed out again. A @p got without news changes
 * nothing. Only a first filter: a seq that grew proves nothing (a restored
 * store grows it too); idmint__history_verify is the check.
 * Not thread-safe on one @p seen.
 */
int idmint__history_follow(struct idmint__history *seen, const struct idmint__history *got,
                           const char *ns);
/*
 * Judge the pair @p seen against @p state, what the store said when asked
 * about seen->seq: 0 when the store's history contains @p seen (or, for a
 * witness, descends from it through a fence); IDMINT_ERESTORED with a
 * message naming @p where (the namespace, or the witness file) when the
 * store is a marked backup, or is behind @p seen (seq beyond its head,
 * another tip at that seq, a history id neither seen's nor fenced over it),
 * or cannot show it any more (a holder's seq older than the log): evidence
 * that cannot be established is refused. A holder whose history was fenced
 * over belongs to the lost history: refused too. A @p seen without a pair
 * (id "" or seq 0) is no evidence: 0. Pure; safe from any thread.
 */
int idmint__history_verify(const struct idmint__history *seen,
                           const struct idmint__history_state *state, enum idmint__evidence kind,
                           const char *where);
/* 1 when @p id is a history id: exactly 32 lowercase hex digits. */
int idmint__history_id_valid(const char *id);
/*
 * 1 when @p h names a point of a history (an id and a seq), else 0: a store
 * that keeps no history, or a reply without news, says seq 0 or no id. Pure.
 */
int idmint__history_is_point(const struct idmint__history *h);

/* ==== worker leases (authority_lease.c) ==== */

/* A worker lease as taken or held. Times are in the namespace's time units. */
struct idmint__lease {
    uint32_t region;
    uint32_t worker_id;
    char holder[33];      /* incarnation of the holder: 32 hex digits */
    uint64_t generation;  /* the row's generation after our take */
    uint64_t fence_found; /* E found at take: we mint only after it */
    uint64_t lease_until; /* E as stored by our last take or renewal */
    /*
     * In, for a take or renewal: how many time units past now it grants
     * (the E asked for minus now's unit). The store keeps the largest per
     * namespace, so that a fence cannot quarantine for less than was granted.
     */
    uint64_t granted_units;
    /*
     * Set by a take: how far (ms) the E found lies ahead of the authority's
     * clock. A second or more means the previous holder's clock ran ahead,
     * or ours is behind; the taker waits until then.
     */
    uint64_t fence_ahead_ms;
    struct idmint__history history; /* of the last write: take, renewal, release */
    struct idmint__origin origin;   /* in, for a take: who asks (recorded, never judged) */
};

/* The longest worker lease anyone is granted: 1 day. */
#define IDMINT__LEASE_MAX_MS 86400000u

/* 0 if @p lease_ms is a lease length the authority grants (1 ms to 1 day), else IDMINT_EINVAL. */
int idmint__lease_ms_check(uint64_t lease_ms);

/*
 * Take a worker id of snowflake namespace @p ns (as read through @p a) in
 * region lease->region for holder lease->holder, for @p lease_ms from the
 * authority's clock; the lease rules of docs/design.md "The authority" are applied here, once: the
 * region must fit the layout, the time bits must not have run out, and E is
 * cut at the end of the time bits. Fills every other field of @p lease.
 * 0, IDMINT_EINVAL (bad region, lease length, holder; a range namespace),
 * IDMINT_EEXHAUSTED, IDMINT_ENOWORKER, IDMINT_EDISABLED, IDMINT_ENOTFOUND,
 * IDMINT_EUNAVAILABLE, IDMINT_ESTORE, IDMINT_EACCESS (remote).
 */
int idmint__authority_lease_take(idmint_authority *a, const idmint_ns_info *ns, uint32_t lease_ms,
                                 struct idmint__lease *lease);
/*
 * Extend @p lease to @p lease_ms from the authority's clock (E never moves
 * back); lease->lease_until gets the stored E. 0, IDMINT_ELEASELOST (another
 * holder or generation), IDMINT_EDISABLED (not renewed; the lease runs on to
 * its E), IDMINT_EINVAL, IDMINT_EUNAVAILABLE, IDMINT_ESTORE.
 */
int idmint__authority_lease_renew(idmint_authority *a, const idmint_ns_info *ns,
                                  struct idmint__lease *lease, uint32_t lease_ms);
/*
 * Give @p lease back: the next holder mints only from @p next_unit on (the
 * first time unit this holder did not mint from); the store keeps it
 * between the E this holder found and its own E. lease->lease_until gets
 * the stored E. 0, IDMINT_ELEASELOST, IDMINT_EINVAL, IDMINT_EUNAVAILABLE,
 * IDMINT_ESTORE.
 */
int idmint__authority_lease_release(idmint_authority *a, const idmint_ns_info *ns,
                                    struct idmint__lease *lease, uint64_t next_unit);
/*
 * idmint_worker_force_release, and if @p max_ahead_ms >= 0 also E lowered to
 * at most now + @p max_ahead_ms: for an admin who knows no holder minted
 * past that (a forged E; a runaway clock's IDs thrown away). -1 keeps E.
 * 0, IDMINT_EINVAL (a range namespace), IDMINT_ENOTFOUND, IDMINT_EACCESS,
 * IDMINT_EUNAVAILABLE, IDMINT_ESTORE.
 */
int idmint__authority_force_release(idmint_authority *a, const char *ns, uint32_t region,
                                    uint32_t worker_id, int64_t max_ahead_ms);
/*
 * What the store of @p a says of its history at @p seq (store.h,
 * history_check), into *out: for idmintd to hand its remote holders, who
 * judge it themselves (idmint__authority_history_check). This host's
 * witness of the store is judged against it too and raised to its head, as
 * a local holder's check does. 0, IDMINT_EINVAL (a remote authority, a
 * store without a history log, the witness folder), IDMINT_ERESTORED (the
 * history row is gone, or the store is behind what this host saw),
 * IDMINT_EUNAVAILABLE, IDMINT_ESTORE. Thread-safety: as a's other calls.
 */
int idmint__authority_history_state(idmint_authority *a, uint64_t seq,
                                    struct idmint__history_state *out);
/*
 * The word for region claim state @p state, as records and the CLI write it:
 * "free", "claimed", "releasing", "released", "claiming"; "unknown" for
 * anything else (region_record.c). Static storage; thread-safe.
 */
const char *idmint__region_state_name(idmint_region_state state);
/*
 * Before idmintd hands a grant to a remote holder: prove its @p pair is in
 * the store's history and the store is not behind this host's witness
 * (idmint__authority_history_check, as a local holder's check of a grant
 * of namespace @p ns), so that a store put back under the
 * daemon cannot give a remote holder what it gave before: the daemon's host
 * is its remote holders' host evidence. 0 (also for a pair without a seq:
 * a store without a log), IDMINT_ERESTORED, or the read's errors.
 */
int idmint__authority_grant_proven(idmint_authority *a, const char *ns,
                                   const struct idmint__history *pair);

/* ==== ranges (authority_range.c) ==== */

/* A reserved half-open range [start, end). */
struct idmint__range {
    uint64_t start;
    uint64_t end;
    struct idmint__history history; /* of the grant that made it, also in a replay */
    struct idmint__origin origin;   /* in: who asks (recorded with a new grant, never judged) */
};

/*
 * Reserve up to @p count values of range namespace @p ns for
 * (@p incarnation, @p request_id): a repeat returns the saved range, so a
 * lost reply can be retried. 0, IDMINT_ECONFLICT (the same request with
 * another count), IDMINT_EEXHAUSTED, IDMINT_EINVAL (count above max_block,
 * a snowflake namespace, bad ids), IDMINT_EDISABLED, IDMINT_ENOTFOUND,
 * IDMINT_EUNAVAILABLE, IDMINT_ESTORE.
 */
int idmint__authority_range_reserve(idmint_authority *a, const char *ns, const char *incarnation,
                                    const char *request_id, uint64_t count,
                                    struct idmint__range *out);
/*
 * Delete the request records of (@p ns, @p incarnation) before
 * @p before_request_id (byte order); *forgotten (if not NULL) gets how many.
 * 0, IDMINT_EINVAL (bad ids; a store that keeps every record),
 * IDMINT_EUNAVAILABLE, IDMINT_ESTORE.
 */
int idmint__authority_range_forget(idmint_authority *a, const char *ns, const char *incarnation,
                                   const char *before_request_id, uint64_t *forgotten);

#endif /* IDMINT_SERVICE_H */
