/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The authority's storage seam. Each backend in this folder fills one
 * struct store_ops; store.c picks it by the URL scheme and wraps every call.
 * A store is a set of conditional writes and reads: take-if-free-or-expired,
 * renew-if-holder-and-generation, release-if-holder-and-generation,
 * force, reserve-if, forget, list, audit append. It converts no time and
 * applies no rule of the authority (names, layouts, lease lengths, time
 * bits, regions: src/authority*.c); the refusals every backend shares are
 * the helpers at the end of this file. Private: never installed.
 */
#ifndef IDMINT_STORE_H
#define IDMINT_STORE_H

#include "idmint.h"
#include "idmint_service.h"

#include <stddef.h>
#include <stdint.h>

#define STORE_OPS_V1 1u
#define STORE_OPS_V2 2u /* range_forget */
#define STORE_OPS_V3 3u /* backup, fence; history in every lease and range write */
#define STORE_OPS_V4 4u /* provenance, idempotent batches, collisions, prune */
/* batch_get, batch_claim and collision_add as below: batches by (owner, key),
 * collisions deduplicated, both expiring by the store's clock */
#define STORE_OPS_V5 5u
#define STORE_OPS_V6 6u /* history_check; tips and a history log; the longest lease granted */
#define STORE_OPS_V7 7u /* location: where the store is, for this host's witness */
#define STORE_OPS_V8 8u /* records: region claims (src/region.c) */

#define STORE_GRANTS_MAX 16 /* grants one grant_find returns at most */

enum {
    STORE_CAP_TXN = 1u << 0, /* multi-row atomic update */
};

/* Flags of idmint__store_open_flags and the open member. */
enum {
    STORE_OPEN_EXISTING = 1u << 0, /* never create a store: read-only tools */
};

struct store;

/* One namespace's part of a fence (idmint_authority_fence). */
struct idmint__fence_step {
    char ns[64];
    idmint_kind kind;
    uint64_t floor;      /* the namespace never issues an ID at or below it */
    uint64_t next_value; /* range: the next value to reserve; snowflake: 0 */
    /* Snowflake, read when version >= STORE_OPS_V6: */
    uint64_t lease_units; /* the quarantine in time units: the longest lease it covers */
    uint32_t unit_ms;     /* the namespace's time unit, for the refusal's message */
    int allow_short;      /* 1: a quarantine below the longest lease granted (audited) */
};

/* What grant_find looks for: a snowflake ID's coordinates, or a range value. */
struct idmint__grant_query {
    idmint_kind kind;
    uint32_t region;    /* snowflake */
    uint32_t worker_id; /* snowflake */
    uint64_t unit;      /* snowflake: the ID's time unit */
    uint64_t value;     /* range: the ID */
};

struct store_ops {
    uint32_t version;   /* STORE_OPS_V*; members are only ever appended */
    const char *scheme; /* "sqlite", "postgres", "postgresql", "etcd" */
    uint32_t caps;      /* STORE_CAP_* */

    /*
     * @p location is the URL with "scheme:" removed; @p token is a bearer
     * token for backends that authenticate (NULL: none); @p flags are
     * STORE_OPEN_*. EUNAVAILABLE when it cannot be reached; with
     * STORE_OPEN_EXISTING, ENOTFOUND (and nothing created) when a backend
     * that creates its store finds none there yet.
     */
    int (*open)(const char *location, const char *token, unsigned flags, struct store **out);
    void (*close)(struct store *st); /* NULL-safe */

    /* Insert @p ns and one audit record in one transaction. ECONFLICT if the name exists. */
    int (*ns_create)(struct store *st, const idmint_ns_info *ns, const char *actor, int64_t now_ms);
    /* ENOTFOUND if absent. */
    int (*ns_get)(struct store *st, const char *name, idmint_ns_info *out);
    /* All namespaces by name; *out malloc'd (NULL when none). */
    int (*ns_list)(struct store *st, idmint_ns_info **out, size_t *n);
    /* Set the flag and audit in one transaction. ENOTFOUND if absent. */
    int (*ns_set_disabled)(struct store *st, const char *name, int disabled, const char *actor,
                           int64_t now_ms);

    /*
     * Take a worker id of (@p ns, @p lease->region) for @p lease->holder in
     * one conditional write: an id whose E is below @p now_unit (lowest
     * first), else a never-used id below @p worker_count, else a released id
     * whose E is still ahead (soonest E first: a holder whose clock ran
     * ahead released it), else ENOWORKER.
     * Sets E = max(old E, @p until_unit), generation + 1, and keeps the old E
     * in the row as the take's fence (release clamps to it). Fills
     * worker_id, generation, fence_found (E before the take; 0 for a new
     * row) and lease_until. Appends a "worker.take" audit record naming
     * @p actor at @p now_ms, with the holder's fingerprint only
     * (idmint__holder_fingerprint), in the same transaction.
     * ENOTFOUND / EDISABLED from the namespace row.
     */
    int (*lease_take)(struct store *st, const char *ns, uint64_t worker_count, uint64_t now_unit,
                      uint64_t until_unit, struct idmint__lease *lease, const char *actor,
                      int64_t now_ms);
    /*
     * Set E = max(E, @p until_unit) only if holder and generation still match
     * and the namespace is not disabled; else ELEASELOST (another holder or
     * generation) or EDISABLED (nothing changed). On success
     * lease->lease_until is the stored E.
     */
    int (*lease_renew)(struct store *st, const char *ns, struct idmint__lease *lease,
                       uint64_t until_unit, int64_t now_ms);
    /*
     * If holder and generation match: E = min(max(@p final_unit, the row's
     * fence), the row's E), holder cleared, and a "worker.release" audit
     * record (@p actor, @p now_ms, old and new E) in the same transaction.
     * The clamp is the store's, not the caller's: a client cannot move E
     * below what the previous holder may have minted nor above its own E.
     * lease->lease_until gets the stored E. ELEASELOST if holder or
     * generation do not match (nothing changed, nothing audited).
     */
    int (*lease_release)(struct store *st, const char *ns, struct idmint__lease *lease,
                         uint64_t final_unit, const char *actor, int64_t now_ms);
    /* Every row of @p ns; *out malloc'd. */
    int (*lease_list)(struct store *st, const char *ns, idmint_worker_info **out, size_t *n);
    /*
     * Holder cleared, generation + 1, E = min(E, @p max_until_unit) (the
     * authority passes now + the longest lease, so a forged or runaway E
     * cannot park the id for years), fence = the new E; audited with the old
     * and new E. ENOTFOUND if no such row.
     */
    int (*lease_force_release)(struct store *st, const char *ns, uint32_t region,
                               uint32_t worker_id, uint64_t max_until_unit, const char *actor,
                               int64_t now_ms);

    /*
     * Reserve up to @p count values of range namespace @p ns for
     * (@p incarnation, @p request_id), in one transaction with the request
     * record. A replay with the same count returns the saved range; another
     * count is ECONFLICT. A reservation is cut at max_value; none left is
     * EEXHAUSTED. count > max_block is EINVAL. ENOTFOUND, EDISABLED.
     */
    int (*range_reserve)(struct store *st, const char *ns, const char *incarnation,
                         const char *request_id, uint64_t count, int64_t now_ms,
                         struct idmint__range *out);

    /* Audit records with seq > after_seq, oldest first, at most limit. */
    int (*audit_list)(struct store *st, int64_t after_seq, size_t limit, idmint_audit_entry **out,
                      size_t *n);
    /* ---- end of version 1: append new members below ---- */

    /*
     * Delete the request records of (@p ns, @p incarnation) whose request id
     * sorts before @p before_request_id (byte order); *forgotten (if not
     * NULL) gets how many. A repeat of a forgotten request reserves anew:
     * a gap, never a duplicate. Range supplies call it for requests they
     * will never repeat, so that records do not pile up. Read only when
     * version >= STORE_OPS_V2; NULL in a backend that cannot.
     */
    int (*range_forget)(struct store *st, const char *ns, const char *incarnation,
                        const char *before_request_id, uint64_t *forgotten);
    /* ---- end of version 2 ---- */

    /*
     * Version 3 also binds every member above: lease_take, lease_renew,
     * lease_release and lease_force_release, and range_reserve (not its
     * replays) grow the store's grant counter in their transaction and fill
     * the result's history (idmint_service.h; a replay reports the grant that
     * made the record, seq 0 for a record older than version 6); in a
     * store marked as a backup each of them refuses with
     * idmint__store_backup_refusal() and changes nothing. ns_create stores
     * ns->floor and ns->origin.
     */

    /*
     * Copy the store to the new file @p dest (a consistent online copy),
     * marked as a backup taken at @p now_ms, and audit it here. ECONFLICT
     * when @p dest exists. NULL in a backend whose server has its own tools.
     */
    int (*backup)(struct store *st, const char *dest, const char *actor, int64_t now_ms);
    /*
     * Apply the @p n steps in one transaction, each audited: a step raises
     * the namespace's floor to at least step->floor and, for a range
     * namespace, sets next_value to step->next_value, which must not be
     * below the stored one (ECONFLICT, nothing changed: it moved since the
     * plan was made, or the plan goes backwards). Then the store gets the
     * history id @p history_id, its backup mark is cleared and the counter
     * grows. ENOTFOUND for a missing namespace.
     */
    int (*fence)(struct store *st, const struct idmint__fence_step *steps, size_t n,
                 const char *history_id, const char *actor, int64_t now_ms);
    /* ---- end of version 3 ---- */

    /*
     * Version 4 also binds these members above, each in its own transaction:
     * - lease_take records a worker grant keyed (ns, region, worker_id,
     *   generation): holder fingerprint (idmint__holder_fingerprint),
     *   lease->origin, granted_ms = updated_ms = @p now_ms, first = the E
     *   found (fence_found), last = the stored E;
     * - lease_renew and lease_release set that grant's last to the stored E
     *   and its updated_ms to their @p now_ms (no grant row: nothing to set,
     *   not an error: it was pruned or predates version 4);
     * - range_reserve (not its replays) records a range grant keyed
     *   (ns, start): end, the incarnation's fingerprint, out->origin,
     *   granted_ms = updated_ms = @p now_ms. out->origin is read as input.
     * lease_force_release leaves the grant as it is: its holder may have
     * minted up to its last E.
     */

    /*
     * Version 5 gave batch_get, batch_claim and collision_add the
     * signatures and contracts below (in version 4 a key named one batch
     * in the whole store, and collisions were neither deduplicated nor
     * kept for a bounded time). They are read only when version >=
     * STORE_OPS_V5: a backend of version 4 keeps no batches or collisions.
     */

    /*
     * The grants of @p ns that cover @p q (store.h's idmint__grant_query):
     * snowflake, those of (region, worker_id) with first <= unit < last;
     * range, those with start <= value < end; oldest granted first, at most
     * STORE_GRANTS_MAX. *out malloc'd (NULL when *n == 0); elements of
     * sizeof(idmint_grant_info) with size set. No namespace check: a
     * namespace with no grants gives *n == 0.
     */
    int (*grant_find)(struct store *st, const char *ns, const struct idmint__grant_query *q,
                      idmint_grant_info **out, size_t *n);
    /*
     * Delete up to @p limit records of @p what (enum idmint__retained),
     * oldest first. Worker grants whose updated_ms and range grants whose
     * granted_ms is below @p before_ms (the caller's clock). A worker grant
     * whose lease is still held is renewed, so never that old. Batches and
     * collision records whose expiry has passed by the store's own clock
     * (the SQLite host's, the PostgreSQL server's; etcd deletes them itself
     * when their lease runs out): @p before_ms does not move their end, so
     * no caller's clock or retention removes one early. *pruned (if not
     * NULL) gets how many.
     */
    int (*prune)(struct store *st, int what, int64_t before_ms, size_t limit, uint64_t *pruned);
    /*
     * The batch @p owner saved under @p key into @p out (runs malloc'd),
     * whatever its namespace, so a repeat with another namespace can be
     * refused; another owner's batch of the same key is not it. A batch past
     * its expiry but not yet pruned may still be found. ENOTFOUND if none.
     */
    int (*batch_get)(struct store *st, const char *owner, const char *key,
                     struct idmint__batch *out);
    /*
     * Insert @p b unless a batch of (b->owner, b->key) exists, in one
     * transaction, stamped created_ms = the store's clock now and
     * expires_ms = created_ms + b->keep_ms (b->created_ms and b->expires_ms
     * are not read); @p saved gets the stored record either way (runs
     * malloc'd), and *inserted 1 when it is @p b's. Durable on return.
     */
    int (*batch_claim)(struct store *st, const struct idmint__batch *b, struct idmint__batch *saved,
                       int *inserted);
    /*
     * Unless a record of (c->ns, c->id, c->reporter) exists: append
     * collision record @p c (its seq is assigned; reported_ms is @p now_ms),
     * to be kept @p keep_ms by the store's clock, and a "collision.report"
     * audit record naming @p actor at @p now_ms, in one transaction, with
     * *inserted 1. Else change nothing, *inserted 0. Either way @p saved
     * gets the stored record (size set).
     */
    int (*collision_add)(struct store *st, const idmint_collision *c, const char *actor,
                         int64_t now_ms, int64_t keep_ms, idmint_collision *saved, int *inserted);
    /* Collision records with seq > @p after_seq, oldest first, at most @p limit; as audit_list. */
    int (*collision_list)(struct store *st, int64_t after_seq, size_t limit, idmint_collision **out,
                          size_t *n);
    /* ---- end of version 4 ---- */

    /*
     * Version 6 adds history_check and also binds these members above:
     * - every write that grows the history's seq draws a random nonzero tip
     *   and records (seq, tip) in the store's history log in the same
     *   transaction, and fills history.tip; the store prunes the log itself,
     *   keeping at least the newest STORE_HISTORY_KEEP entries and every
     *   entry younger than STORE_HISTORY_KEEP_MS;
     * - lease_take and lease_renew keep, per namespace, the largest
     *   lease->granted_units ever asked for (only ever grows);
     * - fence refuses, with idmint__store_fence_short() and nothing changed,
     *   a snowflake step whose lease_units is below that record unless
     *   allow_short, which its audit record then names; it also records the
     *   history id it replaces in the lineage (newest first, at most
     *   IDMINT__LINEAGE_MAX kept) and keeps the store id;
     * - a new store gets a random store id; an older one gets one at upgrade.
     */

    /*
     * Read, in one read transaction, what @p out describes: the store id,
     * the head of the history, the backup mark, the oldest seq of the log,
     * the tip the log holds at @p seq (0 when none), and the lineage.
     * Changes nothing; never refused by a backup mark (the caller judges).
     */
    int (*history_check)(struct store *st, uint64_t seq, struct idmint__history_state *out);
    /* ---- end of version 6 ---- */

    /*
     * Where this store is, as a key that every process of this host that
     * opens the same place writes alike (whatever URL form it was given),
     * into @p buf: "sqlite:" and the file's real path; "postgres://HOST:PORT/DB"
     * as the connection reached them. No password or token, ever: the key is
     * kept in the host's witness folder in clear. 0, or IDMINT_EINVAL when it
     * does not fit @p size. No I/O beyond the file system's name lookups;
     * thread-safe as history_check. NULL (or version < 7): the store layer
     * derives the key from the URL (idmint__store_location).
     */
    int (*location)(const struct store *st, char *buf, size_t size);
    /* ---- end of version 7 ---- */

    /*
     * Records: short named texts kept beside the tables, for what is one
     * row of its kind (a registry's claim of each region, an authority's
     * own claim: src/region.c, which alone reads and writes them). Keys are
     * checked by the store layer: 1..63 bytes of [a-z0-9/._-]; values
     * 1..STORE_RECORD_MAX - 1 bytes of printable ASCII.
     *
     * record_get: @p key's value into @p value (NUL-terminated; @p size is
     * at least STORE_RECORD_MAX) and its version (1 or more); 0, or
     * IDMINT_ENOTFOUND with *version = 0 when there is none. Changes nothing.
     *
     * record_put: in one transaction, @p value under @p key when the key's
     * version is @p expect (0: the key must not exist), the version becoming
     * expect + 1, and an audit row (@p action, namespace "", detail the
     * value). IDMINT_ECONFLICT, nothing changed, when the version is not
     * @p expect: another writer came first; read again and judge again.
     */
    int (*record_get)(struct store *st, const char *key, char *value, size_t size,
                      uint64_t *version);
    int (*record_put)(struct store *st, const char *key, const char *value, uint64_t expect,
                      const char *actor, const char *action, int64_t now_ms);
    /* ---- end of version 8 ---- */
};

#define STORE_RECORD_MAX 1024u /* a record's value with its NUL */

#define STORE_HISTORY_KEEP    4096u        /* log entries a store keeps at least, */
#define STORE_HISTORY_KEEP_MS (86400000LL) /* and for at least a day (the longest lease) */

/* Every backend's private struct starts with this. */
struct store {
    const struct store_ops *ops;
};

extern const struct store_ops idmint__store_sqlite;
extern const struct store_ops idmint__store_postgres;   /* "postgres:" */
extern const struct store_ops idmint__store_postgresql; /* "postgresql:", the same backend */
extern const struct store_ops idmint__store_etcd;       /* "etcd://h1:p,h2:p/prefix" */

/*
 * Register an extra backend (tests: the fault wrapper). Not thread-safe;
 * call before any idmint__store_open. Returns 0 or IDMINT_ENOMEM when full.
 */
int idmint__store_register(const struct store_ops *ops);

/*
 * Open the store named by @p url ("sqlite:PATH"), creating it if the
 * backend creates stores. EINVAL for an unknown scheme or empty location
 * (with a message), else what the backend returns.
 */
int idmint__store_open(const char *url, const char *token, struct store **out);
/*
 * Judge only the form of store URL @p url: a registered scheme and a
 * non-empty location. 0 or EINVAL with a message. Opens nothing.
 */
int idmint__store_url_check(const char *url);
/* The same with STORE_OPEN_* @p flags (STORE_OPEN_EXISTING: ENOTFOUND, never create). */
int idmint__store_open_flags(const char *url, const char *token, unsigned flags,
                             struct store **out);
void idmint__store_close(struct store *st);

/* Wrappers: check arguments, then call the backend. Same contracts as above. */
int idmint__store_ns_create(struct store *st, const idmint_ns_info *ns, const char *actor,
                            int64_t now_ms);
int idmint__store_ns_get(struct store *st, const char *name, idmint_ns_info *out);
int idmint__store_ns_list(struct store *st, idmint_ns_info **out, size_t *n);
int idmint__store_ns_set_disabled(struct store *st, const char *name, int disabled,
                                  const char *actor, int64_t now_ms);
int idmint__store_lease_take(struct store *st, const char *ns, uint64_t worker_count,
                             uint64_t now_unit, uint64_t until_unit, struct idmint__lease *lease,
                             const char *actor, int64_t now_ms);
int idmint__store_lease_renew(struct store *st, const char *ns, struct idmint__lease *lease,
                              uint64_t until_unit, int64_t now_ms);
int idmint__store_lease_release(struct store *st, const char *ns, struct idmint__lease *lease,
                                uint64_t final_unit, const char *actor, int64_t now_ms);
int idmint__store_lease_list(struct store *st, const char *ns, idmint_worker_info **out, size_t *n);
int idmint__store_lease_force_release(struct store *st, const char *ns, uint32_t region,
                                      uint32_t worker_id, uint64_t max_until_unit,
                                      const char *actor, int64_t now_ms);
int idmint__store_range_reserve(struct store *st, const char *ns, const char *incarnation,
                                const char *request_id, uint64_t count, int64_t now_ms,
                                struct idmint__range *out);
int idmint__store_audit_list(struct store *st, int64_t after_seq, size_t limit,
                             idmint_audit_entry **out, size_t *n);
/* As range_forget; IDMINT_EINVAL (with a message) when the backend has none. */
int idmint__store_range_forget(struct store *st, const char *ns, const char *incarnation,
                               const char *before_request_id, uint64_t *forgotten);

/* As the ops above; IDMINT_EINVAL (with a message) when the backend has none. */
int idmint__store_backup(struct store *st, const char *dest, const char *actor, int64_t now_ms);
int idmint__store_fence(struct store *st, const struct idmint__fence_step *steps, size_t n,
                        const char *history_id, const char *actor, int64_t now_ms);
/*
 * As history_check; IDMINT_EINVAL (with a message) when the backend has
 * none (a store older than version 6: no periodic check is possible).
 */
int idmint__store_history_check(struct store *st, uint64_t seq, struct idmint__history_state *out);
/*
 * As record_get and record_put, with the key and value checked first
 * (IDMINT_EINVAL, with a message, and nothing read or written); IDMINT_EINVAL
 * also when the backend keeps no records (below version 8). Thread-safety as
 * the backend's other calls.
 */
/* 1 when @p st keeps records (version 8 or later); thread-safe. */
int idmint__store_has_records(const struct store *st);
int idmint__store_record_get(struct store *st, const char *key, char *value, size_t size,
                             uint64_t *version);
int idmint__store_record_put(struct store *st, const char *key, const char *value, uint64_t expect,
                             const char *actor, const char *action, int64_t now_ms);
/* 1 when @p st answers history_check. */
int idmint__store_has_history_check(const struct store *st);
/*
 * The location key of @p st, opened from @p url, into @p buf
 * (src/store/location.c): the backend's own (the location member) when it
 * has one; else, for etcd://, the URL normalised: members lower-cased with
 * their port (2379 when none), sorted and deduplicated, and the key prefix
 * without trailing '/' ("/idmint" when none): "etcd://h1:p,h2:p/prefix".
 * 0; 1 when no key is known (another backend: nothing is bound); IDMINT_EINVAL
 * when it does not fit @p size or @p url is malformed. Reads nothing of the
 * store; thread-safe.
 */
int idmint__store_location(const struct store *st, const char *url, char *buf, size_t size);

/*
 * As the version 4 ops above; IDMINT_EINVAL (with a message) when the
 * backend has none: "this store keeps no provenance" (for batch_get,
 * batch_claim and collision_add also a backend below version 5). Batches
 * are checked for an owner of 1..63 bytes, a valid key and a keep_ms of
 * 1 ms .. 10 years; collision_add for a keep_ms as well.
 */
int idmint__store_grant_find(struct store *st, const char *ns, const struct idmint__grant_query *q,
                             idmint_grant_info **out, size_t *n);
int idmint__store_prune(struct store *st, int what, int64_t before_ms, size_t limit,
                        uint64_t *pruned);
int idmint__store_batch_get(struct store *st, const char *owner, const char *key,
                            struct idmint__batch *out);
int idmint__store_batch_claim(struct store *st, const struct idmint__batch *b,
                              struct idmint__batch *saved, int *inserted);
int idmint__store_collision_add(struct store *st, const idmint_collision *c, const char *actor,
                                int64_t now_ms, int64_t keep_ms, idmint_collision *saved,
                                int *inserted);
int idmint__store_collision_list(struct store *st, int64_t after_seq, size_t limit,
                                 idmint_collision **out, size_t *n);

/* The audit detail of collision record @p c, for the backends. */
void idmint__store_collision_detail(const idmint_collision *c, char *buf, size_t size);

/* IDMINT_ELEASELOST naming @p lease: renew or release found another holder or generation. */
int idmint__store_lease_lost(const char *ns, const struct idmint__lease *lease);
/* The audit detail of a take or release of @p lease (fingerprint, E before and after). */
void idmint__store_lease_detail(const struct idmint__lease *lease, uint64_t e_before,
                                uint64_t e_after, char *buf, size_t size);
/*
 * The audit detail of a forced release of (@p region, @p worker_id), whose
 * row had @p holder ("" when free) and @p generation before the force.
 */
void idmint__store_force_detail(uint32_t region, uint32_t worker_id, const char *holder,
                                uint64_t generation, uint64_t e_before, uint64_t e_after, char *buf,
                                size_t size);
/* The audit detail of creating @p ns (its kind and layout or bounds), for the backends. */
void idmint__store_ns_create_detail(const idmint_ns_info *ns, char *buf, size_t size);

/* ==== the refusals every backend shares, decided on rows read in its transaction ==== */

/*
 * IDMINT_ERESTORED: the store at @p where is a backup taken at @p backup_ms
 * and not fenced yet, so it refuses to grant anything.
 */
int idmint__store_backup_refusal(const char *where, int64_t backup_ms);
/* The audit detail of fence step @p step, from @p old_floor / @p old_next. */
void idmint__store_fence_detail(const struct idmint__fence_step *step, uint64_t old_floor,
                                uint64_t old_next, char *buf, size_t size);
/*
 * IDMINT_EINVAL: snowflake fence step @p step quarantines for less than
 * @p longest_units, the longest lease the store granted in its namespace.
 */
int idmint__store_fence_short(const struct idmint__fence_step *step, uint64_t longest_units);
/* A new nonzero tip for a history write: 0 or IDMINT_EUNAVAILABLE (no entropy). */
int idmint__store_history_tip(uint64_t *tip);
/* IDMINT_ECONFLICT: fence step @p step would move next_value back from @p stored_next. */
int idmint__store_fence_backwards(const struct idmint__fence_step *step, uint64_t stored_next);

/* IDMINT_ENOTFOUND: namespace @p ns does not exist. */
int idmint__store_ns_missing(const char *ns);
/*
 * Whether the namespace row @p row gives worker leases: 0, IDMINT_EINVAL (a
 * range namespace) or IDMINT_EDISABLED.
 */
int idmint__store_lease_refusal(const idmint_ns_info *row);
/* IDMINT_ENOWORKER: every one of the @p worker_count ids of (@p ns, @p region) is held. */
int idmint__store_no_worker(const char *ns, uint32_t region, uint64_t worker_count);
/*
 * Of the range grants @p list (*n of them), keep in place those that hold
 * @p value (first <= value < last), oldest granted first, as kind
 * IDMINT_KIND_RANGE; *n becomes their count. The order trace reports, for a
 * backend that cannot filter and sort in its query. Pure.
 */
void idmint__store_grants_covering(idmint_grant_info *list, size_t *n, uint64_t value);
/*
 * Whether range namespace row @p row grants @p count values now: 0 with
 * @p out (if not NULL) set to [next_value, next_value + count) cut at
 * max_value; IDMINT_EINVAL (a snowflake namespace; count above max_block),
 * IDMINT_EDISABLED or IDMINT_EEXHAUSTED. A backend that reserves in one
 * SQL statement writes the same arithmetic there and asks this helper why
 * the statement refused.
 */
int idmint__store_range_grant(const idmint_ns_info *row, uint64_t count, struct idmint__range *out);
/* IDMINT_ECONFLICT: request (@p incarnation, @p request_id) was saved with @p saved_count values.
 */
int idmint__store_range_replay_conflict(const char *ns, const char *incarnation,
                                        const char *request_id, uint64_t saved_count,
                                        uint64_t count);

#endif /* IDMINT_STORE_H */
