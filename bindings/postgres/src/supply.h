/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The server's ID supply, in shared memory: one slot per namespace, each a
 * ring of IDs that the background worker (worker.c) mints into under the
 * server's one lease or range supply, and that every backend takes from.
 *
 * Why a ring in shared memory: a libidmint handle lives in one process, and
 * a backend lives only as long as its session. The one process that lives
 * as long as the server is a background worker, so it holds the handles and
 * the sessions share what it mints. A ring is taken in order under the
 * slot's spinlock, so the IDs a server hands out increase across all its
 * sessions while one handle serves the namespace.
 */
#ifndef IDMINT_PG_SUPPLY_H
#define IDMINT_PG_SUPPLY_H

#include "postgres.h"

#include "datatype/timestamp.h"

#include <stdint.h>

#include "idmint.h"

/** IDs one namespace's ring holds. */
#define SUPPLY_RING      16384u
/** Unix ms of PostgreSQL's epoch, 2000-01-01: its timestamps count µs from there. */
#define PG_EPOCH_UNIX_MS ((int64_t)(POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY * 1000)

/** idmint.max_age_ms's default: a snowflake ID older than this is dropped. */
#define MAX_AGE_DEFAULT_MS 5
/** The fewest IDs the worker mints into a ring at a time. */
#define SUPPLY_MIN_FILL    64u
/** Longest namespace name plus its NUL (idmint_ns_info.name). */
#define SUPPLY_NAME_MAX    64
/** Room for the library's message of the worker's last failure. */
#define SUPPLY_MSG_MAX     256

/** What the worker publishes of a namespace, for idmint_status(). */
typedef struct supply_status {
    char name[SUPPLY_NAME_MAX];
    bool is_open;        /* the worker holds a handle on it */
    bool is_range;       /* known once the handle or the definition was read */
    uint32_t worker_id;  /* snowflake: the leased worker id */
    uint64_t generation; /* snowflake: the lease's generation */
    uint32_t leases;     /* snowflake: worker ids the server holds on it now */
    uint32_t buffered;   /* IDs in the ring now */
    uint64_t handed_out; /* IDs taken by sessions since the server started */
    uint64_t discarded;  /* IDs minted and dropped: too old, or below an earlier one */
    uint64_t handles;    /* handles the worker opened on it since the server started */
    int last_error;      /* 0, or the library's code of the worker's last failure */
    char last_message[SUPPLY_MSG_MAX];
} supply_status;

/* ---- set-up, in the postmaster (module.c) ---- */

/** Ask for the shared memory and locks of @p max_namespaces slots (shmem_request_hook). */
void supply_shmem_request(int max_namespaces);

/**
 * Find or create the supply in shared memory (shmem_startup_hook). Must run
 * with AddinShmemInitLock held, as the hook does.
 */
void supply_shmem_init(int max_namespaces);

/** Whether the supply exists: false when the module was not preloaded. */
bool supply_attached(void);

/** How many namespace slots there are (idmint.max_namespaces). */
int supply_slot_count(void);

/* ---- backends (functions.c) ---- */

/**
 * Take @p n IDs of namespace @p ns into @p out, increasing, waiting for the
 * worker at most @p wait_ms. IDs of a snowflake namespace older than
 * @p max_age_ms are dropped rather than handed out (a quiet server must not
 * give a row an ID whose time is long past). Raises a PostgreSQL ERROR on
 * failure (errors.h), with the library's message; some of @p out may then
 * have been written, and those IDs are simply never used (a gap, as with a
 * sequence). Interruptible (statement_timeout, cancel).
 */
void supply_take(const char *ns, uint64_t *out, uint32_t n, int wait_ms, int max_age_ms);

/**
 * The definition of namespace @p ns as the worker read it from the
 * authority, into @p out (set up by idmint_ns_info_init()). Raises an ERROR
 * as supply_take() does.
 */
void supply_definition(const char *ns, idmint_ns_info *out, int wait_ms);

/**
 * Copy the status of the namespace slot at @p index (0..max) into @p out.
 * @return false when there is no namespace at @p index.
 */
bool supply_status_at(int index, supply_status *out);

/* ---- the background worker (worker.c) ---- */

/** The worker's view of one slot's requests, taken under the slot's lock. */
typedef struct supply_demand {
    char name[SUPPLY_NAME_MAX];
    uint32_t asked;       /* requests so far: the worker answers each one */
    bool wants_ids;       /* someone wants IDs (else only the definition) */
    uint32_t buffered;    /* IDs in the ring */
    uint32_t fill_target; /* how many IDs the ring should hold */
    uint32_t epoch;       /* which name the slot serves: pass it back to every call below */
    int64_t dry_ms_ago;   /* since a session last found the ring empty (ms) */
} supply_demand;

/** Record this process as the worker, so that backends can wake it. */
void supply_worker_attach(void);

/** Read slot @p index's demand. @return false when the slot is unused. */
bool supply_demand_of(int index, supply_demand *out);

/*
 * The calls below act on slot @p index only while it still serves the name
 * of @p epoch (supply_demand.epoch), and return false, doing nothing, when
 * it went to another name: the worker then closes what it held for it.
 */

/**
 * Append @p n increasing IDs to slot @p index's ring, each minted at
 * @p minted_ms (Unix ms); IDs at or below the last one appended are dropped,
 * so the ring never goes backwards, even across a new handle. Clears the
 * slot's error and wakes waiting backends.
 */
bool supply_append(int index, uint32_t epoch, const uint64_t *ids, uint32_t n, int64_t minted_ms);

/**
 * Answer every request of slot @p index up to @p asked with the failure
 * @p code and @p message, and wake the backends that wait for it. With
 * @p drop_ring, the IDs still in the ring are dropped too: their handle's
 * lease is gone and the server stops minting at once.
 */
bool supply_fail(int index, uint32_t epoch, uint32_t asked, int code, const char *message,
                 bool drop_ring);

/** Publish @p info as slot @p index's definition and wake the backends that wait for it. */
bool supply_publish_definition(int index, uint32_t epoch, const idmint_ns_info *info);

/** Publish what the worker holds for slot @p index (idmint_status()); a new handle counts once. */
bool supply_publish_handle(int index, uint32_t epoch, bool is_open, bool is_range,
                           uint32_t worker_id, uint64_t generation, uint32_t leases, bool is_new);

/** Unix ms by PostgreSQL's clock, as the ring's ages are kept. */
int64_t supply_now_ms(void);

/** Unix µs by PostgreSQL's clock. */
int64_t supply_now_us(void);

#endif
