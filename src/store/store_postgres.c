/* SPDX-License-Identifier: Apache-2.0 */
/*
 * PostgreSQL backend ("postgres://…", "postgresql://…", or "postgres:" and a
 * libpq key=value string). Many idmintd nodes share one database: takes,
 * renewals and reservations are single transactions over row locks, so two
 * nodes never win the same worker id or range. The only file that includes
 * libpq-fe.h. No namespace rules (authority.c has them).
 *
 * Values up to 2^63 - 1 live in BIGINT columns; the two that may reach 2^63
 * (a range's exclusive end cut at max_value, and next_value after it) are
 * NUMERIC(20,0), so the database shows true values and compares them right.
 *
 * The authority's history (store.h, version 3) is the one row of
 * idmint.history (its id) and the sequence idmint.history_seq (the grant
 * counter). Every granting statement returns nextval() and the id with its
 * own row, so it costs no round trip; nextval() takes no row lock and is
 * not rolled back, so concurrent grants never queue on the counter. A dump
 * restores the sequence as pg_dump read it (setval), a point-in-time
 * restore or a promoted standby as WAL last logged it: a counter below
 * what processes of the lost history saw, except for grants made in the
 * last moments before (pg_dump reads sequences after its snapshot, and
 * PostgreSQL logs a sequence up to 32 values ahead). So the counter alone
 * proves nothing (store.h, version 6): every granting write also logs
 * (seq, tip), a random tip the caller drew, in idmint.history_log in its
 * own transaction, and history_check reads the log's head and the tip at a
 * seq in one snapshot. A restore loses the log's newest entries and a seq
 * it hands out again gets another tip, so a holder's pair is gone either
 * way. The head is the log's newest committed entry, not the sequence:
 * nextval() is not rolled back, and a holder only ever saw committed ones.
 *
 * Provenance (version 4, schema 4) rides in the granting transactions: a
 * take inserts its worker grant, a renewal moves the grant's last E in its
 * one statement, a release in its transaction, and a reservation inserts
 * its range grant in its one statement, which a replay's unique violation
 * rolls back. Batches and collisions are their own small transactions.
 */
#include "store.h"
#include "internal.h"
#include "dynlib.h"

#include <libpq-fe.h>

#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* 2: fence; 3: history, floor, origin; 4: provenance; 5: batches by owner and key, collisions
 * deduplicated, both expiring by the server's clock; 6: history log, store id, lineage,
 * longest lease */
#define PG_SCHEMA_VERSION      7
#define PG_CONNECT_TIMEOUT_S   "3"    /* libpq default when the URL names none */
#define PG_STATEMENT_TIMEOUT   "5000" /* ms; a stuck lock or server fails the call */
#define PG_RECONNECT_BUDGET_MS 3000   /* total time one call may spend reconnecting */
#define PG_MAX_ATTEMPTS        4      /* runs of one call after retryable failures */
#define PG_MAX_PARAMS          16
#define PG_REPLY_TIMEOUT_MS    6000 /* our own bound: a frozen server never answers */
/* How long an open retries a connect that timed out or found no free slot:
 * a burst of hundreds of processes starting at once outruns the postmaster's
 * one-at-a-time backend starts (500 took over 4 s here), and none of them is
 * wrong to be patient. The same bound as SQLite's writers' queue. */
#define PG_OPEN_BUDGET_MS      10000

/*
 * libpq, bound on the first open (dynlib.h): a process on another store
 * never maps it. Every libpq call goes through pq.
 */
#define PQ_FUNCTIONS(X)                                                                            \
    X(PGconn *, connectdbParams, (const char *const *, const char *const *, int))                  \
    X(void, finish, (PGconn *))                                                                    \
    X(void, reset, (PGconn *))                                                                     \
    X(ConnStatusType, status, (const PGconn *))                                                    \
    X(PGTransactionStatusType, transactionStatus, (const PGconn *))                                \
    X(int, socket, (const PGconn *))                                                               \
    X(char *, host, (const PGconn *))                                                              \
    X(char *, port, (const PGconn *))                                                              \
    X(char *, db, (const PGconn *))                                                                \
    X(char *, errorMessage, (const PGconn *))                                                      \
    X(PQnoticeProcessor, setNoticeProcessor, (PGconn *, PQnoticeProcessor, void *))                \
    X(int, sendQuery, (PGconn *, const char *))                                                    \
    X(int, sendPrepare, (PGconn *, const char *, const char *, int, const Oid *))                  \
    X(int, sendQueryPrepared,                                                                      \
      (PGconn *, const char *, int, const char *const *, const int *, const int *, int))           \
    X(int, isBusy, (PGconn *))                                                                     \
    X(int, consumeInput, (PGconn *))                                                               \
    X(PGresult *, getResult, (PGconn *))                                                           \
    X(void, clear, (PGresult *))                                                                   \
    X(ExecStatusType, resultStatus, (const PGresult *))                                            \
    X(char *, resultErrorMessage, (const PGresult *))                                              \
    X(char *, resultErrorField, (const PGresult *, int))                                           \
    X(int, ntuples, (const PGresult *))                                                            \
    X(int, nfields, (const PGresult *))                                                            \
    X(char *, getvalue, (const PGresult *, int, int))                                              \
    X(char *, cmdTuples, (PGresult *))

enum pq_function {
#define X(ret, name, args) PQF_##name,
    PQ_FUNCTIONS(X)
#undef X
};

static const char *const pq_names[] = {
#define X(ret, name, args) "PQ" #name,
    PQ_FUNCTIONS(X)
#undef X
};

static struct {
#define X(ret, name, args) ret(*name) args;
    PQ_FUNCTIONS(X)
#undef X
} pq;

static void *pq_syms[sizeof(pq_names) / sizeof(pq_names[0])];

/* dlsym gives object pointers; POSIX guarantees they convert to functions. */
static void pq_on_load(void)
{
#define X(ret, name, args) memcpy(&pq.name, &pq_syms[PQF_##name], sizeof(pq.name));
    PQ_FUNCTIONS(X)
#undef X
}

static struct idmint__dynlib pq_lib =
    IDMINT__DYNLIB("libpq.so.5", "libpq5", pq_names, pq_syms, pq_on_load);

/*
 * A reservation that reaches its namespace row later than this after its
 * statement began queued behind others: it commits without waiting for the
 * flush, then runs ST_DURABLE. Uncontended, the row is reached in tens of
 * microseconds; queued, after at least one other caller's flush.
 */
#define RESERVE_QUEUED "100 microseconds"

/* The first value a range namespace may still issue: above its floor, from next_value. */
#define RESERVE_FROM "greatest(next_value, floor::numeric + 1)"

/* Advisory lock keys (bigint form): "idmint" in ASCII, then a tag byte. */
#define PG_LOCK_SCHEMA   "29665293637678081"
#define PG_LOCK_AUDIT    "29665293637678082"
/* With hashtext(namespace): takes hold it shared, a disable exclusive. */
#define PG_LOCK_NS_CLASS "29665293"

/* ==== statements ==== */

enum pg_stmt_id {
    ST_NS_INSERT,
    ST_NS_GET,
    ST_NS_TAKE_LOCK,
    ST_NS_DISABLE_LOCK,
    ST_NS_LIST,
    ST_NS_DISABLE,
    ST_AUDIT_INSERT,
    ST_AUDIT_LIST,
    ST_REGION_LOCK,
    ST_LEASE_TAKE,
    ST_LEASE_COUNT,
    ST_LEASE_INSERT,
    ST_LEASE_RENEW,
    ST_LEASE_RENEW_REFUSAL,
    ST_LEASE_RELEASE,
    ST_LEASE_FORCE,
    ST_LEASE_LIST,
    ST_RANGE_RESERVE,
    ST_RANGE_SAVED,
    ST_DURABLE,
    ST_RANGE_FORGET,
    ST_NS_FENCE_LOCK,
    ST_NS_FENCE,
    ST_HISTORY_FENCE,
    ST_HISTORY_LOG,
    ST_HISTORY_CHECK,
    ST_NS_LEASE_MAX,
    ST_WGRANT_INSERT,
    ST_WGRANT_UPDATE,
    ST_WGRANT_FIND,
    ST_RGRANT_FIND,
    ST_PRUNE_WGRANTS,
    ST_PRUNE_RGRANTS,
    ST_PRUNE_BATCHES,
    ST_PRUNE_COLLISIONS,
    ST_BATCH_GET,
    ST_BATCH_INSERT,
    ST_COLLISION_INSERT,
    ST_COLLISION_FIND,
    ST_COLLISION_LIST,
    ST_RECORD_GET,
    ST_RECORD_INSERT,
    ST_RECORD_UPDATE,
    ST__COUNT
};

#define NS_COLUMNS                                                                                 \
    "name, kind, time_bits, region_bits, worker_bits, sequence_bits, unit_ms, epoch_ms, "          \
    "next_value, max_value, block, max_block, disabled, created_ms, floor, origin"

/*
 * The history of a granting write, as its last three columns over the CTE
 * h of HISTORY_LOG: the seq and tip it logged, and the id, read in the same
 * statement. A fence that commits while the statement waits on a row it
 * changed may leave that one write with the old id and a seq past the
 * fence's: harmless, as the row it wrote is the fenced one (read committed
 * rereads it), and the holder's next check shows the new id.
 */
#define HISTORY_COLUMNS "h.seq, h.tip, (SELECT id FROM idmint.history)"

/*
 * The history log entry of a granting write as two CTEs over the write's
 * one-row CTE @p src: h logs (nextval, tip @p tip) at @p now, and hp prunes
 * (store.h: at least STORE_HISTORY_KEEP entries and a day are kept). Only
 * a write whose seq is a multiple of PG_LOG_PRUNE_EVERY prunes, up to
 * twice that many of the oldest entries, in key order: pruners are rare and
 * never deadlock, and the log never grows past what they remove.
 */
#define PG_LOG_PRUNE_EVERY 64
#define PG_LINEAGE_CHARS   263 /* IDMINT__LINEAGE_MAX ids of 32 digits, a space between */
_Static_assert(PG_LINEAGE_CHARS == IDMINT__LINEAGE_MAX * 33 - 1, "lineage length");
#define PG_LOG_KEEP    "4096"     /* STORE_HISTORY_KEEP, spelled for SQL */
#define PG_LOG_KEEP_MS "86400000" /* STORE_HISTORY_KEEP_MS */
_Static_assert(STORE_HISTORY_KEEP == 4096u && STORE_HISTORY_KEEP_MS == 86400000LL, "log keep");
#define HISTORY_LOG(src, tip, now)                                                                 \
    "h AS (INSERT INTO idmint.history_log (seq, tip, at_ms) SELECT "                               \
    "nextval('idmint.history_seq'), " tip "::bigint, " now "::bigint FROM " src                    \
    " RETURNING seq, tip), "                                                                       \
    "hp AS (DELETE FROM idmint.history_log WHERE (SELECT seq FROM h) % " PG_STR(                   \
        PG_LOG_PRUNE_EVERY) " = 0 AND seq < least((SELECT seq FROM h) - " PG_LOG_KEEP              \
                            ", (SELECT min(seq) FROM idmint.history_log) + 2 * " PG_STR(           \
                                PG_LOG_PRUNE_EVERY) ") AND at_ms < " now "::bigint - 86400000) "

#define LEASE_KEY "namespace = $1::text AND region = $2::bigint AND worker_id = $3::bigint"
/* The worker grant (alias gr) of the lease keyed by $1..$3 and generation $5. */
#define GRANT_KEY                                                                                  \
    "gr.namespace = $1::text AND gr.region = $2::bigint AND gr.worker_id = $3::bigint "            \
    "AND gr.generation = $5::bigint"

#define PG_STR_(x)    #x
#define PG_STR(x)     PG_STR_(x)
#define PG_GRANT_SCAN 16 /* range grants read below a traced value */

#define GRANT_COLUMNS                                                                              \
    "region, worker_id, generation, first, last, holder, host, pid, program, token, granted_ms, "  \
    "updated_ms"

/*
 * DELETE at most $2 rows of @p table whose @p age is below $1, oldest
 * first. By ctid: range grants have no key. The age is checked again on
 * the row the DELETE reaches, so a grant renewed meanwhile (a new row
 * version) stays.
 */
#define PRUNE_SQL(table, age)                                                                      \
    "DELETE FROM idmint." table " WHERE ctid = ANY (ARRAY(SELECT ctid FROM idmint." table          \
    " WHERE " age " < $1::bigint ORDER BY " age " LIMIT $2::bigint)) AND " age " < $1::bigint"

/*
 * The store's clock: the server's, in Unix ms, at the start of the
 * statement (the same for every use in it). Retention of batches and
 * collision records is counted on it, never on a caller's now_ms.
 */
#define PG_NOW_MS "(extract(epoch FROM statement_timestamp()) * 1000)::bigint"

/* DELETE at most $1 rows of @p table whose expiry has passed by the server's clock, oldest first.
 */
#define EXPIRE_SQL(table)                                                                          \
    "DELETE FROM idmint." table " WHERE ctid = ANY (ARRAY(SELECT ctid FROM idmint." table          \
    " WHERE expires_ms < " PG_NOW_MS " ORDER BY expires_ms LIMIT $1::bigint))"                     \
    " AND expires_ms < " PG_NOW_MS

#define COLLISION_COLUMNS                                                                          \
    "seq, namespace, id, first_owner, second_owner, verdict, reporter, observed_ms, "              \
    "reported_ms, note"

static const char *const pg_sql[ST__COUNT] = {
    [ST_NS_INSERT] = "INSERT INTO idmint.namespaces (" NS_COLUMNS ") VALUES ($1::text, $2::text, "
                     "$3::integer, $4::integer, $5::integer, $6::integer, $7::bigint, $8::bigint, "
                     "$9::numeric, $10::bigint, $11::bigint, $12::bigint, $13::boolean, "
                     "$14::bigint, $15::bigint, $16::text)",
    [ST_NS_GET] = "SELECT " NS_COLUMNS " FROM idmint.namespaces WHERE name = $1::text",
    /* Before a take reads its namespace: a disable waits for every take under
     * way to commit, and a take that comes after it waits for it and then
     * reads it, so a namespace that a region's release disabled grants
     * nothing after the release read its rows. An advisory lock, not the
     * row's: takes write the row (the longest lease), which from under a
     * shared row lock would deadlock two of them. */
    [ST_NS_TAKE_LOCK] =
        "SELECT pg_advisory_xact_lock_shared(" PG_LOCK_NS_CLASS ", hashtext($1::text))",
    [ST_NS_DISABLE_LOCK] = "SELECT pg_advisory_xact_lock(" PG_LOCK_NS_CLASS ", hashtext($1::text))",
    /* COLLATE "C": the same byte order as SQLite and every client's strcmp. */
    [ST_NS_LIST] = "SELECT " NS_COLUMNS " FROM idmint.namespaces ORDER BY name COLLATE \"C\"",
    [ST_NS_DISABLE] = "UPDATE idmint.namespaces SET disabled = $2::boolean WHERE name = $1::text",
    /* The lock orders audit writers by commit, so a reader paging by seq
     * never skips a record that commits late with a lower seq. */
    [ST_AUDIT_INSERT] = "INSERT INTO idmint.audit (at_ms, actor, action, namespace, detail) "
                        "SELECT $1::bigint, $2::text, $3::text, $4::text, $5::text "
                        "FROM pg_advisory_xact_lock(" PG_LOCK_AUDIT ")",
    [ST_AUDIT_LIST] = "SELECT seq, at_ms, actor, action, namespace, detail FROM idmint.audit "
                      "WHERE seq > $1::bigint ORDER BY seq LIMIT $2::bigint",
    /* Takers of one (namespace, region) queue here until commit, which makes
     * "a new id is the row count" safe. */
    [ST_REGION_LOCK] = "SELECT pg_advisory_xact_lock(hashtext($1::text), "
                       "($2::bigint & 2147483647)::integer)",
    /* A CTE runs once: a LIMIT subquery in FROM may be rescanned per row
     * and so claim a second id. */
    [ST_LEASE_TAKE] = "WITH c AS MATERIALIZED (SELECT worker_id, lease_until "
                      "FROM idmint.worker_leases WHERE namespace = $1::text "
                      "AND region = $2::bigint AND worker_id < $3::bigint "
                      "AND (holder = '' OR lease_until < $6::bigint) "
                      /* As in SQLite: an id whose E has passed first; a
                       * fenced one only when no new id is left. */
                      "AND (lease_until < $6::bigint OR (SELECT count(*) FROM "
                      "idmint.worker_leases WHERE namespace = $1::text AND region = $2::bigint) "
                      ">= $3::bigint) "
                      "ORDER BY lease_until >= $6::bigint, lease_until, worker_id LIMIT 1 "
                      "FOR UPDATE) "
                      "UPDATE idmint.worker_leases w SET holder = $4::text, "
                      "generation = w.generation + 1, "
                      "lease_until = greatest(w.lease_until, $5::bigint), fence = c.lease_until "
                      "FROM c "
                      "WHERE w.namespace = $1::text AND w.region = $2::bigint "
                      "AND w.worker_id = c.worker_id "
                      "RETURNING w.worker_id, w.generation, c.lease_until, w.lease_until",
    [ST_LEASE_COUNT] = "SELECT count(*) FROM idmint.worker_leases "
                       "WHERE namespace = $1::text AND region = $2::bigint",
    [ST_LEASE_INSERT] = "INSERT INTO idmint.worker_leases "
                        "(namespace, region, worker_id, holder, generation, lease_until, fence) "
                        "VALUES ($1::text, $2::bigint, $3::bigint, $4::text, 1, $5::bigint, 0)",
    /* Renewals are frequent: one statement, and the disabled flag is read
     * (not locked) with it. A renewal that races a disable may still land,
     * as it would a moment before. Only a refusal costs a second statement.
     * The grant's last E and updated_ms ($7) move in the same statement (a
     * data-modifying CTE runs once, whether or not it is read); no grant
     * row (pruned, or taken before schema 4) updates nothing. So do its
     * history log entry (tip $8) and the namespace's longest lease ($9
     * units, written only when it grows), and only when the lease moved. */
    [ST_LEASE_RENEW] =
        "WITH w AS (UPDATE idmint.worker_leases SET lease_until = "
        "greatest(lease_until, $6::bigint) WHERE " LEASE_KEY
        " AND holder = $4::text AND generation = $5::bigint AND NOT EXISTS "
        "(SELECT 1 FROM idmint.namespaces WHERE name = $1::text AND disabled) "
        "RETURNING lease_until AS e), " HISTORY_LOG(
            "w", "$8", "$7") ", "
                             "m AS (UPDATE idmint.namespaces SET max_lease_units = $9::bigint "
                             "WHERE name = $1::text AND max_lease_units < $9::bigint "
                             "AND EXISTS (SELECT 1 FROM w)), "
                             "g AS (UPDATE idmint.worker_grants gr SET last = w.e, "
                             "updated_ms = $7::bigint FROM w WHERE " GRANT_KEY ") "
                             "SELECT w.e, " HISTORY_COLUMNS " FROM w, h",
    [ST_LEASE_RENEW_REFUSAL] = "SELECT EXISTS (SELECT 1 FROM idmint.worker_leases WHERE " LEASE_KEY
                               " AND holder = $4::text AND generation = $5::bigint), "
                               "EXISTS (SELECT 1 FROM idmint.namespaces "
                               "WHERE name = $1::text AND disabled)",
    /*
     * The clamp is the store's: E never below the fence (what the previous
     * holder may have minted up to) nor above the holder's own E (a final
     * time from the future would park the id). The CTE locks the row and
     * keeps the E before, for the audit record.
     */
    [ST_LEASE_RELEASE] = "WITH o AS MATERIALIZED (SELECT lease_until FROM idmint.worker_leases "
                         "WHERE " LEASE_KEY " AND holder = $4::text AND generation = $5::bigint "
                         "FOR UPDATE) "
                         "UPDATE idmint.worker_leases w SET holder = '', "
                         "lease_until = least(greatest($6::bigint, w.fence), w.lease_until) "
                         "FROM o WHERE w.namespace = $1::text AND w.region = $2::bigint "
                         "AND w.worker_id = $3::bigint RETURNING o.lease_until, w.lease_until",
    /* E capped at $4: a forged or runaway E must not park the id for years. */
    [ST_LEASE_FORCE] = "WITH o AS MATERIALIZED (SELECT holder, generation, lease_until "
                       "FROM idmint.worker_leases WHERE " LEASE_KEY " FOR UPDATE) "
                       "UPDATE idmint.worker_leases w SET holder = '', "
                       "generation = w.generation + 1, "
                       "lease_until = least(w.lease_until, $4::bigint), "
                       "fence = least(w.lease_until, $4::bigint) "
                       "FROM o WHERE w.namespace = $1::text AND w.region = $2::bigint "
                       "AND w.worker_id = $3::bigint "
                       "RETURNING o.holder, o.generation, o.lease_until, w.lease_until",
    [ST_LEASE_LIST] = "SELECT region, worker_id, holder, generation, lease_until "
                      "FROM idmint.worker_leases WHERE namespace = $1::text "
                      "ORDER BY region, worker_id",
    /*
     * One reservation is one statement, so one round trip and one implicit
     * transaction: one write of the namespace row, the request record and
     * (version 4) the range grant, asked by $6..$10 (the incarnation's
     * fingerprint and the origin). A full block starts count below the new
     * next_value; only the last one, cut at max_value, needs the old
     * next_value, which SET reads into last_start. Writing last_start on
     * every call made each row version's WAL record 50 bytes longer
     * (next_value and last_start are far apart in the row, so PostgreSQL
     * logs everything between them). It does not look for a saved record
     * first, as that lookup cost a tenth of a reservation: a repeated
     * request fails to insert its record (unique_violation), everything
     * rolls back (its grant too: a replay records none), and ST_RANGE_SAVED
     * finds the saved range. A repeat racing its original waits on the
     * namespace row, then on the record, and ends the same way. No row: the
     * namespace refused (or a repeat of a request that the namespace would
     * now refuse), so ST_RANGE_SAVED, then the row and
     * idmint__store_range_grant, say which.
     *
     * A reservation that had to queue for the namespace row (it reached the
     * row more than RESERVE_QUEUED after the statement began) commits
     * without waiting for its WAL flush. The third column says how this
     * transaction will commit, read after the switch whatever the planner
     * did with it.
     * Waiting would hold the row's lock through the flush, and callers of
     * one namespace would take turns at the disk's pace. Such a range is not
     * handed out until ST_DURABLE, run next, has committed durably: WAL is
     * flushed (and sent to synchronous standbys) in order, so that flush
     * covers this commit as well. A reservation lost in a crash before it
     * was never acknowledged, nor was any later one that saw its next_value.
     * One that did not queue commits durably and needs no second statement.
     *
     * The floor is idmint__store_range_grant's rule in SQL (RESERVE_FROM):
     * a reservation starts at max(next_value, floor + 1), and is refused
     * (so the helper says why) when that lies past max_value.
     */
    [ST_RANGE_RESERVE] =
        "WITH fresh AS (UPDATE idmint.namespaces SET last_start = CASE "
        "WHEN " RESERVE_FROM " + $4::bigint > max_value THEN " RESERVE_FROM " ELSE last_start END, "
        "next_value = least(" RESERVE_FROM " + $4::bigint, max_value::numeric + 1) "
        "WHERE name = $1::text AND kind = 'range' AND NOT disabled AND $4::bigint <= max_block "
        "AND " RESERVE_FROM " <= max_value RETURNING CASE WHEN next_value > max_value "
        "THEN last_start ELSE next_value - $4::bigint END AS start, next_value, "
        "CASE WHEN clock_timestamp() - statement_timestamp() > interval '" RESERVE_QUEUED "' "
        "THEN set_config('synchronous_commit', 'off', true) END), "
        "g AS (INSERT INTO idmint.range_grants (namespace, start_value, end_value, holder, host, "
        "pid, program, token, granted_ms) SELECT $1::text, start, next_value, $6::text, $7::text, "
        "$8::bigint, $9::text, $10::text, $5::bigint FROM fresh), " HISTORY_LOG(
            "fresh", "$11",
            "$5") "INSERT INTO idmint.range_leases (namespace, incarnation, request_id, count, "
                  "start_value, "
                  "end_value, created_ms, hseq, htip) "
                  "SELECT $1::text, $2::text, $3::text, $4::bigint, start, next_value, $5::bigint, "
                  "h.seq, h.tip FROM fresh, h RETURNING start_value, end_value, "
                  "current_setting('synchronous_commit') = 'off', hseq, htip, "
                  "(SELECT id FROM idmint.history)",
    /* The pair of the grant that made the record (0, 0 before schema 6),
     * and today's history id. */
    [ST_RANGE_SAVED] = "SELECT count, start_value, end_value, hseq, htip, "
                       "(SELECT id FROM idmint.history) FROM idmint.range_leases "
                       "WHERE namespace = $1::text AND incarnation = $2::text "
                       "AND request_id = $3::text",
    /*
     * The durability barrier after a reservation that committed without
     * waiting: the cheapest transaction that writes WAL and so, with
     * synchronous_commit on, waits at commit for the flush of everything
     * before it. A transactional logical message touches no table;
     * decoding plugins skip it unless asked for messages.
     */
    [ST_DURABLE] = "SELECT pg_logical_emit_message(true, 'idmint', 'durable')",
    /* COLLATE "C": byte order, the order of a supply's request ids, whatever the database's. */
    [ST_RANGE_FORGET] = "DELETE FROM idmint.range_leases WHERE namespace = $1::text "
                        "AND incarnation = $2::text AND request_id COLLATE \"C\" < $3::text",
    /* A fence locks each row it moves before it judges it. */
    [ST_NS_FENCE_LOCK] = "SELECT floor, next_value, max_lease_units FROM idmint.namespaces "
                         "WHERE name = $1::text "
                         "FOR UPDATE",
    [ST_NS_FENCE] = "UPDATE idmint.namespaces SET floor = greatest(floor, $2::bigint), "
                    "next_value = $3::numeric WHERE name = $1::text",
    /* An upsert: a fence also mends a history row deleted by hand. The id
     * replaced goes first in the lineage, which keeps IDMINT__LINEAGE_MAX. */
    [ST_HISTORY_FENCE] =
        "INSERT INTO idmint.history AS cur (id) VALUES ($1::text) "
        "ON CONFLICT (one) DO UPDATE SET lineage = "
        "left(trim(cur.id || ' ' || cur.lineage), " PG_STR(
            PG_LINEAGE_CHARS) "), "
                              "id = excluded.id RETURNING id, "
                              /* and a sequence behind its log (pg_fail) moves past it */
                              "setval('idmint.history_seq', greatest((SELECT last_value FROM "
                              "idmint.history_seq), (SELECT max(seq) FROM idmint.history_log)))",
    /* The history log entry of a write in an explicit transaction: tip $1, at $2. */
    [ST_HISTORY_LOG] = "WITH one AS (SELECT 1), " HISTORY_LOG(
        "one", "$1", "$2") "SELECT " HISTORY_COLUMNS " FROM h",
    /* One statement, one snapshot: the head and the log agree. */
    [ST_RECORD_GET] = "SELECT value, version FROM idmint.records WHERE key = $1::text",
    [ST_RECORD_INSERT] = "INSERT INTO idmint.records (key, value, version, updated_ms) "
                         "VALUES ($1::text, $2::text, 1, $3::bigint) ON CONFLICT (key) DO NOTHING",
    [ST_RECORD_UPDATE] = "UPDATE idmint.records SET value = $2::text, version = version + 1, "
                         "updated_ms = $3::bigint WHERE key = $1::text AND version = $4::bigint",
    [ST_HISTORY_CHECK] = "SELECT hi.id, hi.store_id, hi.lineage, l.seq, l.tip, "
                         "(SELECT min(seq) FROM idmint.history_log), "
                         "(SELECT tip FROM idmint.history_log WHERE seq = $1::bigint) "
                         "FROM idmint.history hi LEFT JOIN LATERAL (SELECT seq, tip FROM "
                         "idmint.history_log ORDER BY seq DESC LIMIT 1) l ON true",
    [ST_NS_LEASE_MAX] = "UPDATE idmint.namespaces SET max_lease_units = $2::bigint "
                        "WHERE name = $1::text AND max_lease_units < $2::bigint",
    [ST_WGRANT_INSERT] = "INSERT INTO idmint.worker_grants (namespace, region, worker_id, "
                         "generation, holder, host, pid, program, token, first, last, granted_ms, "
                         "updated_ms) VALUES ($1::text, $2::bigint, $3::bigint, $4::bigint, "
                         "$5::text, $6::text, $7::bigint, $8::text, $9::text, $10::bigint, "
                         "$11::bigint, $12::bigint, $12::bigint)",
    [ST_WGRANT_UPDATE] = "UPDATE idmint.worker_grants gr SET last = $4::bigint, "
                         "updated_ms = $6::bigint WHERE " GRANT_KEY,
    [ST_WGRANT_FIND] = "SELECT " GRANT_COLUMNS " FROM idmint.worker_grants "
                       "WHERE namespace = $1::text AND region = $2::bigint "
                       "AND worker_id = $3::bigint AND first <= $4::bigint AND last > $4::bigint "
                       "ORDER BY granted_ms, generation LIMIT " PG_STR(STORE_GRANTS_MAX),
    /* Ranges never overlap, so the one holding a value starts at or below it,
     * latest first; a few more below show an overlap a faulty store made. */
    [ST_RGRANT_FIND] = "SELECT 0, 0, 0, start_value, end_value, holder, host, pid, program, "
                       "token, granted_ms, granted_ms FROM idmint.range_grants "
                       "WHERE namespace = $1::text AND start_value <= $2::bigint "
                       "ORDER BY start_value DESC LIMIT " PG_STR(PG_GRANT_SCAN),
    [ST_PRUNE_WGRANTS] = PRUNE_SQL("worker_grants", "updated_ms"),
    [ST_PRUNE_RGRANTS] = PRUNE_SQL("range_grants", "granted_ms"),
    [ST_PRUNE_BATCHES] = EXPIRE_SQL("batches"),
    [ST_PRUNE_COLLISIONS] = EXPIRE_SQL("collisions"),
    [ST_BATCH_GET] = "SELECT namespace, key, owner, count, runs, created_ms, expires_ms "
                     "FROM idmint.batches WHERE owner = $1::text AND key = $2::text",
    [ST_BATCH_INSERT] =
        "INSERT INTO idmint.batches (namespace, key, owner, count, runs, "
        "created_ms, expires_ms) VALUES ($1::text, $2::text, $3::text, $4::bigint, "
        "$5::text, " PG_NOW_MS ", " PG_NOW_MS " + $6::bigint) ON CONFLICT DO NOTHING",
    /*
     * The audit lock first, before the seq is drawn, so that seqs commit in
     * order and a reader paging by seq never skips one (as ST_AUDIT_INSERT);
     * the audit record that follows takes the same lock again.
     */
    [ST_COLLISION_INSERT] = "INSERT INTO idmint.collisions (namespace, id, first_owner, "
                            "second_owner, verdict, reporter, observed_ms, reported_ms, note, "
                            "expires_ms) SELECT $1::text, $2::bigint, $3::text, $4::text, "
                            "$5::text, $6::text, $7::bigint, $8::bigint, $9::text, " PG_NOW_MS
                            " + $10::bigint FROM pg_advisory_xact_lock(" PG_LOCK_AUDIT ") "
                            "ON CONFLICT (namespace, id, reporter) DO NOTHING RETURNING seq",
    [ST_COLLISION_FIND] = "SELECT " COLLISION_COLUMNS " FROM idmint.collisions "
                          "WHERE namespace = $1::text AND id = $2::bigint AND reporter = $3::text",
    [ST_COLLISION_LIST] = "SELECT " COLLISION_COLUMNS " FROM idmint.collisions "
                          "WHERE seq > $1::bigint ORDER BY seq LIMIT $2::bigint",
};

/*
 * Versioned migrations: pg_migrations[v - 1] takes the schema from v - 1 to
 * v. Append only; never edit a released step. Rows are never deleted:
 * worker ids are handed out in order and a new id is the row count.
 */
static const char *const pg_migrations[PG_SCHEMA_VERSION] = {
    "CREATE TABLE idmint.namespaces ("
    " name text PRIMARY KEY,"
    " kind text NOT NULL CHECK (kind IN ('snowflake', 'range')),"
    " time_bits integer NOT NULL, region_bits integer NOT NULL,"
    " worker_bits integer NOT NULL, sequence_bits integer NOT NULL,"
    " unit_ms bigint NOT NULL, epoch_ms bigint NOT NULL,"
    " next_value numeric(20, 0) NOT NULL, max_value bigint NOT NULL,"
    " block bigint NOT NULL, max_block bigint NOT NULL,"
    " disabled boolean NOT NULL, created_ms bigint NOT NULL,"
    " last_start numeric(20, 0) NOT NULL DEFAULT 0);"
    "CREATE TABLE idmint.worker_leases ("
    " namespace text NOT NULL, region bigint NOT NULL, worker_id bigint NOT NULL,"
    " holder text NOT NULL, generation bigint NOT NULL, lease_until bigint NOT NULL,"
    " PRIMARY KEY (namespace, region, worker_id));"
    "CREATE TABLE idmint.range_leases ("
    " namespace text NOT NULL, incarnation text NOT NULL, request_id text NOT NULL,"
    " count bigint NOT NULL, start_value bigint NOT NULL, end_value numeric(20, 0) NOT NULL,"
    " created_ms bigint NOT NULL,"
    " PRIMARY KEY (namespace, incarnation, request_id));"
    "CREATE TABLE idmint.audit ("
    " seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, at_ms bigint NOT NULL,"
    " actor text NOT NULL, action text NOT NULL, namespace text NOT NULL,"
    " detail text NOT NULL);",
    /*
     * 2: the fence, E as the last take found it (or as a force left it);
     * release clamps E to at least it. A row taken before this step gets
     * its current E: conservative, since a release then cannot lower E at
     * all. ALTER TABLE locks the table until commit, so no row of an older
     * node slips in without it.
     */
    "ALTER TABLE idmint.worker_leases ADD COLUMN fence bigint;"
    "UPDATE idmint.worker_leases SET fence = lease_until;"
    "ALTER TABLE idmint.worker_leases ALTER COLUMN fence SET NOT NULL;"
    /* A row an older node inserts during a rolling upgrade is new: nothing
     * was minted under it, so 0 is its true fence. */
    "ALTER TABLE idmint.worker_leases ALTER COLUMN fence SET DEFAULT 0;",
    /*
     * 3: the authority's history and the namespaces' floor and origin. The
     * id is new: whatever came before is one history as far as anyone can
     * tell. gen_random_uuid() is core since PostgreSQL 13 (its 122 random
     * bits are plenty for an id that only has to differ). One row, forever:
     * the primary key on a column that can only be true. A node of schema 2
     * still running meanwhile writes namespaces without a floor (0) and
     * grants without the counter; no new one opens (the version is newer).
     */
    "ALTER TABLE idmint.namespaces ADD COLUMN floor bigint NOT NULL DEFAULT 0,"
    " ADD COLUMN origin text NOT NULL DEFAULT '';"
    "CREATE TABLE idmint.history ("
    " one boolean PRIMARY KEY DEFAULT true CHECK (one),"
    " id text NOT NULL CHECK (id ~ '^[0-9a-f]{32}$'));"
    "INSERT INTO idmint.history (id) VALUES (replace(gen_random_uuid()::text, '-', ''));"
    /* CACHE 1 (the default) on purpose: values cached per session would
     * come out of order across connections. */
    "CREATE SEQUENCE idmint.history_seq AS bigint CACHE 1;",
    /*
     * 4: provenance (store.h, version 4), idempotent batches and collision
     * records, all empty: grants made before have no record, which a trace
     * reports as none known. A worker grant is one generation of a worker
     * id, so its key is unique; range grants are not (a faulty store may
     * hand out overlapping ones, which a trace must show). A range's end
     * may be 2^63, so NUMERIC as in range_leases. A node of schema 3 still
     * running meanwhile grants without recording them; no new one opens
     * (the version is newer).
     */
    "CREATE TABLE idmint.worker_grants ("
    " namespace text NOT NULL, region bigint NOT NULL, worker_id bigint NOT NULL,"
    " generation bigint NOT NULL, holder text NOT NULL, host text NOT NULL,"
    " pid bigint NOT NULL, program text NOT NULL, token text NOT NULL,"
    " first bigint NOT NULL, last bigint NOT NULL,"
    " granted_ms bigint NOT NULL, updated_ms bigint NOT NULL,"
    " PRIMARY KEY (namespace, region, worker_id, generation));"
    "CREATE INDEX worker_grants_age ON idmint.worker_grants (updated_ms);"
    "CREATE TABLE idmint.range_grants ("
    " namespace text NOT NULL, start_value bigint NOT NULL, end_value numeric(20, 0) NOT NULL,"
    " holder text NOT NULL, host text NOT NULL, pid bigint NOT NULL,"
    " program text NOT NULL, token text NOT NULL, granted_ms bigint NOT NULL);"
    "CREATE INDEX range_grants_at ON idmint.range_grants (namespace, start_value);"
    "CREATE INDEX range_grants_age ON idmint.range_grants (granted_ms);"
    "CREATE TABLE idmint.batches ("
    " namespace text NOT NULL, key text NOT NULL, owner text NOT NULL, count bigint NOT NULL,"
    " runs text NOT NULL, created_ms bigint NOT NULL, PRIMARY KEY (key));"
    "CREATE INDEX batches_age ON idmint.batches (created_ms);"
    "CREATE TABLE idmint.collisions ("
    " seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, namespace text NOT NULL,"
    " id bigint NOT NULL, first_owner text NOT NULL, second_owner text NOT NULL,"
    " verdict text NOT NULL, reporter text NOT NULL, observed_ms bigint NOT NULL,"
    " reported_ms bigint NOT NULL, note text NOT NULL);",
    /*
     * 5: a batch is keyed by (owner, key), so that one caller's key never
     * blocks another's, and both batches and collision records carry an
     * expiry by the server's clock. Rows saved before get the default
     * retention (IDMINT__KEEP_BATCHES_MS, IDMINT__KEEP_COLLISIONS_MS) from
     * the stamp they had. Collisions repeated by one reporter are folded
     * into the first (each report stays in the audit log), so that the
     * unique index that deduplicates them from now on can be made. The
     * defaults serve a node of schema 4 still running meanwhile, which
     * writes no expiry.
     */
    "ALTER TABLE idmint.batches ADD COLUMN expires_ms bigint;"
    "UPDATE idmint.batches SET expires_ms = created_ms + 86400000;"
    "ALTER TABLE idmint.batches ALTER COLUMN expires_ms SET NOT NULL,"
    " ALTER COLUMN expires_ms SET DEFAULT " PG_NOW_MS " + 86400000,"
    " DROP CONSTRAINT batches_pkey, ADD PRIMARY KEY (owner, key);"
    "DROP INDEX idmint.batches_age;"
    "CREATE INDEX batches_expiry ON idmint.batches (expires_ms);"
    "DELETE FROM idmint.collisions c USING idmint.collisions d WHERE d.namespace = c.namespace"
    " AND d.id = c.id AND d.reporter = c.reporter AND d.seq < c.seq;"
    "ALTER TABLE idmint.collisions ADD COLUMN expires_ms bigint;"
    "UPDATE idmint.collisions SET expires_ms = reported_ms + 2592000000;"
    "ALTER TABLE idmint.collisions ALTER COLUMN expires_ms SET NOT NULL,"
    " ALTER COLUMN expires_ms SET DEFAULT " PG_NOW_MS " + 2592000000;"
    "CREATE UNIQUE INDEX collisions_report ON idmint.collisions (namespace, id, reporter);"
    "CREATE INDEX collisions_expiry ON idmint.collisions (expires_ms);",
    /*
     * 6: the history log (store.h, version 6; src/history.c), the store's
     * identity (kept across fences and restores: a restored copy is the same
     * store) and lineage (the ids fenced over, newest first), each
     * namespace's longest lease, and the pair of the grant that made each
     * request record. A first entry logs the current seq at at_ms 0, the
     * first to be pruned; its tip comes from gen_random_uuid(), the
     * server's strong random source, nonzero and below 2^63. Namespaces
     * start with no longest lease known: a fence then cannot refuse a short
     * --max-lease for leases granted before the upgrade (docs/operations.md).
     * A node of schema 5 still running meanwhile grants without logging:
     * its holders' pairs (tip 0) are judged by the seq alone.
     */
    "ALTER TABLE idmint.history"
    " ADD COLUMN store_id text NOT NULL DEFAULT replace(gen_random_uuid()::text, '-', ''),"
    " ADD COLUMN lineage text NOT NULL DEFAULT '';"
    "ALTER TABLE idmint.namespaces ADD COLUMN max_lease_units bigint NOT NULL DEFAULT 0;"
    "ALTER TABLE idmint.range_leases ADD COLUMN hseq bigint NOT NULL DEFAULT 0,"
    " ADD COLUMN htip bigint NOT NULL DEFAULT 0;"
    "CREATE TABLE idmint.history_log ("
    " seq bigint PRIMARY KEY, tip bigint NOT NULL CHECK (tip > 0), at_ms bigint NOT NULL);"
    "INSERT INTO idmint.history_log (seq, tip, at_ms) VALUES (nextval('idmint.history_seq'),"
    " ('x' || substr(md5(gen_random_uuid()::text), 1, 15))::bit(60)::bigint + 1, 0);",
    /* 7: records (store.h, version 8: region claims). */
    ("CREATE TABLE idmint.records (key text PRIMARY KEY, value text NOT NULL,"
     " version bigint NOT NULL CHECK (version > 0), updated_ms bigint NOT NULL);"),
};

struct pg_store {
    struct store base;                    /* must be first */
    PGconn *conn;                         /* one connection, used by one thread at a time */
    char *where;                          /* host:port/db for messages; never the password */
    unsigned char is_prepared[ST__COUNT]; /* on this connection; cleared by a reset */
    int failure;   /* enum pg_failure of the last error, for the retry loop */
    int is_broken; /* a reply timed out: the connection must be reset before reuse */
};

/* ==== errors ==== */

enum pg_failure {
    PGF_NONE,
    PGF_CONNECTION, /* the connection broke: the outcome of what was sent is unknown */
    PGF_TRANSIENT,  /* the server rolled the transaction back: safe to run again */
    PGF_OTHER,
};

/* Field @p code of the error @p res, or "" when it has none. */
static const char *pg_field(const PGresult *res, int code)
{
    const char *v = res != NULL ? pq.resultErrorField(res, code) : NULL;

    return v != NULL ? v : "";
}

/* The message of @p res (or of the connection), on one line without "ERROR:". */
static void pg_message(const struct pg_store *s, const PGresult *res, char *buf, size_t size)
{
    const char *msg = res != NULL ? pq.resultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;
    size_t len;
    char *p;

    if (msg == NULL && res != NULL)
        msg = pq.resultErrorMessage(res);
    if (msg == NULL || msg[0] == '\0')
        msg = s->conn != NULL ? pq.errorMessage(s->conn) : "no connection";
    snprintf(buf, size, "%s", msg);
    for (p = buf; *p != '\0'; p++)
        if (*p == '\n' || *p == '\r' || *p == '\t')
            *p = ' ';
    len = strlen(buf);
    while (len > 0 && buf[len - 1] == ' ')
        buf[--len] = '\0';
}

/*
 * Map a failed call to an IDMINT code with the server's message, and note
 * for the retry loop whether running the call again is safe. @p res may be
 * NULL (libpq could not even build a result).
 */
static int pg_fail(struct pg_store *s, const PGresult *res, const char *what)
{
    const char *state = res != NULL ? pq.resultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
    char msg[512];

    if (res == NULL && s->is_broken) {
        s->failure = PGF_OTHER; /* the statement may still run: never repeat it */
        return idmint__fail(IDMINT_EUNAVAILABLE, "postgres %s: %s: no reply within %d ms", s->where,
                            what, PG_REPLY_TIMEOUT_MS);
    }
    pg_message(s, res, msg, sizeof(msg));
    if (s->conn == NULL || pq.status(s->conn) != CONNECTION_OK || state == NULL ||
        strncmp(state, "08", 2) == 0 || strncmp(state, "57P", 3) == 0 ||
        strncmp(state, "53", 2) == 0) {
        /* Connection exceptions, shutdown, too many connections. */
        s->failure = PGF_CONNECTION;
        return idmint__fail(IDMINT_EUNAVAILABLE, "postgres %s: %s: %s", s->where, what, msg);
    }
    if (strcmp(state, "40001") == 0 || strcmp(state, "40P01") == 0) {
        s->failure = PGF_TRANSIENT; /* serialization failure, deadlock */
        return idmint__fail(IDMINT_EUNAVAILABLE, "postgres %s: %s: %s", s->where, what, msg);
    }
    s->failure = PGF_OTHER;
    if (strcmp(state, "57014") == 0 || strcmp(state, "55P03") == 0 || strcmp(state, "25006") == 0)
        /* Statement timeout, lock timeout, a read-only (standby) server. */
        return idmint__fail(IDMINT_EUNAVAILABLE, "postgres %s: %s: %s", s->where, what, msg);
    if (strcmp(state, "23505") == 0 &&
        strcmp(pg_field(res, PG_DIAG_CONSTRAINT_NAME), "history_log_pkey") == 0)
        /* A seq logged before: the sequence is behind its own log (set back
         * by hand, or restored apart from it). Nothing commits until a fence
         * moves it past the log. */
        return idmint__fail(IDMINT_ERESTORED,
                            "postgres %s: %s: idmint.history_seq is behind the history log (set "
                            "back, or restored apart from it); run 'idmint authority fence' on it "
                            "(docs/operations.md)",
                            s->where, what);
    if (strcmp(state, "23505") == 0)
        return idmint__fail(IDMINT_ECONFLICT, "postgres %s: %s: %s", s->where, what, msg);
    return idmint__fail(IDMINT_ESTORE, "postgres %s: %s: %s (SQLSTATE %s)", s->where, what, msg,
                        state);
}

/* ==== parameters and columns ==== */

/* Text parameters for one statement; numbers are formatted in place. */
struct pg_args {
    const char *v[PG_MAX_PARAMS];
    char num[PG_MAX_PARAMS][24];
    int n;
};

static void arg_text(struct pg_args *a, const char *v)
{
    a->v[a->n++] = v;
}

static void arg_i64(struct pg_args *a, int64_t v)
{
    snprintf(a->num[a->n], sizeof(a->num[0]), "%" PRId64, v);
    a->v[a->n] = a->num[a->n];
    a->n++;
}

static void arg_u64(struct pg_args *a, uint64_t v)
{
    snprintf(a->num[a->n], sizeof(a->num[0]), "%" PRIu64, v);
    a->v[a->n] = a->num[a->n];
    a->n++;
}

/* @p src (@p size bytes at most) into @p dst: cut to fit, each byte outside printable ASCII '?'. */
static void text_clean(char *dst, const char *src, size_t size)
{
    size_t i;

    for (i = 0; i + 1 < size && src[i] != '\0'; i++)
        dst[i] = src[i] >= ' ' && src[i] <= '~' ? src[i] : '?';
    dst[i] = '\0';
}

/*
 * $k..$k+3: what a grant's holder said of itself (host, pid, program,
 * token), as text PostgreSQL takes: the authority checks an origin
 * (idmint__origin_check), but one that reaches the store unchecked, cut
 * short or not UTF-8, must not fail the grant it is only recorded with.
 * @p clean holds the texts and must outlive the statement.
 */
static void arg_origin(struct pg_args *a, const struct idmint__origin *o,
                       struct idmint__origin *clean)
{
    text_clean(clean->host, o->host, sizeof(o->host));
    text_clean(clean->program, o->program, sizeof(o->program));
    text_clean(clean->token, o->token, sizeof(o->token));
    arg_text(a, clean->host);
    arg_u64(a, o->pid);
    arg_text(a, clean->program);
    arg_text(a, clean->token);
}

static uint64_t col_u64(const PGresult *r, int row, int col)
{
    return strtoull(pq.getvalue(r, row, col), NULL, 10);
}

static int64_t col_i64(const PGresult *r, int row, int col)
{
    return strtoll(pq.getvalue(r, row, col), NULL, 10);
}

static void col_text(const PGresult *r, int row, int col, char *buf, size_t size)
{
    snprintf(buf, size, "%s", pq.getvalue(r, row, col));
}

/*
 * The history of the granting write whose only row is @p r, from its
 * HISTORY_COLUMNS (seq, tip, id) at @p col. IDMINT_ERESTORED without the
 * history row (a
 * partial restore, or deleted by hand): a write we cannot place in a
 * history must not look like news, and its holder must stop. A take,
 * release or forced release rolls back; a renewal or reservation (one
 * statement) has committed by then: an E only pushed later, or a range
 * never handed out, both safe.
 */
static int history_from(const struct pg_store *s, const PGresult *r, int col,
                        struct idmint__history *out)
{
    const char *id = pq.getvalue(r, 0, col + 2);

    if (!idmint__history_id_valid(id))
        return idmint__fail(IDMINT_ERESTORED,
                            "postgres %s: idmint.history holds no history id: a partial restore, "
                            "or the row was deleted; run 'idmint authority fence' on it "
                            "(docs/operations.md)",
                            s->where);
    memcpy(out->id, id, sizeof(out->id));
    out->seq = col_u64(r, 0, col);
    out->tip = col_u64(r, 0, col + 1);
    return 0;
}

/* ==== connection ==== */

/*
 * Wait for the reply to what was just sent, at most PG_REPLY_TIMEOUT_MS:
 * statement_timeout runs on the server, so it cannot bound a server that is
 * frozen or cut off. Returns the last result (the error, if any), or NULL
 * when nothing came; on a timeout the connection is marked for a reset.
 */
static PGresult *pg_reply(struct pg_store *s, int is_sent)
{
    uint64_t deadline_ms = idmint__deadline_now_ms() + PG_REPLY_TIMEOUT_MS;
    PGresult *last = NULL, *r;

    if (!is_sent)
        return NULL;
    for (;;) {
        while (pq.isBusy(s->conn)) {
            uint64_t now_ms = idmint__deadline_now_ms();
            struct pollfd pfd = {pq.socket(s->conn), POLLIN, 0};

            if (now_ms >= deadline_ms) {
                s->is_broken = 1;
                pq.clear(last);
                return NULL;
            }
            if (poll(&pfd, 1, (int)(deadline_ms - now_ms)) < 0 || !pq.consumeInput(s->conn))
                break; /* PQgetResult now reports the broken connection */
        }
        if ((r = pq.getResult(s->conn)) == NULL)
            return last;
        if (last != NULL && pq.resultStatus(last) == PGRES_FATAL_ERROR)
            pq.clear(r); /* keep the first error */
        else {
            pq.clear(last);
            last = r;
        }
    }
}

static PGresult *pg_query(struct pg_store *s, const char *sql)
{
    return pg_reply(s, pq.sendQuery(s->conn, sql));
}

/* Session settings, again after every reconnect. */
static int pg_session(struct pg_store *s)
{
    /* synchronous_commit on: a COMMIT returns only once its WAL is flushed
     * (and, with synchronous standbys, replicated), so an acknowledged lease
     * or range survives a crash or a failover. */
    PGresult *r = pg_query(s, "SET synchronous_commit = on; "
                              "SET statement_timeout = " PG_STATEMENT_TIMEOUT "; "
                              "SET idle_in_transaction_session_timeout = 10000; "
                              "SET default_transaction_isolation = 'read committed'");
    int rc = 0;

    if (pq.resultStatus(r) != PGRES_COMMAND_OK)
        rc = pg_fail(s, r, "set session options");
    pq.clear(r);
    return rc;
}

/*
 * Make the connection usable before a call: a server that restarted while we
 * were idle has closed our socket, which only a read reveals; then reset with
 * short pauses, within PG_RECONNECT_BUDGET_MS. EUNAVAILABLE when it stays down.
 */
static int pg_ready(struct pg_store *s)
{
    static const uint32_t pause_ms[] = {0, 50, 200, 500, 1000};
    uint64_t deadline_ms;
    struct pollfd pfd;
    size_t i;

    if (!s->is_broken && pq.status(s->conn) == CONNECTION_OK &&
        pq.transactionStatus(s->conn) == PQTRANS_IDLE) {
        pfd.fd = pq.socket(s->conn);
        pfd.events = POLLIN;
        pfd.revents = 0;
        if (pfd.fd < 0 || poll(&pfd, 1, 0) == 0)
            return 0;
        /* Input while idle: a shutdown notice or EOF. Reading it updates the status. */
        if (pq.consumeInput(s->conn) == 1 && pq.status(s->conn) == CONNECTION_OK)
            return 0;
    }
    deadline_ms = idmint__deadline_now_ms() + PG_RECONNECT_BUDGET_MS;
    for (i = 0; i < sizeof(pause_ms) / sizeof(pause_ms[0]); i++) {
        if (i > 0) {
            if (idmint__deadline_now_ms() + pause_ms[i] >= deadline_ms)
                break;
            idmint__sleep_ms(pause_ms[i]);
        }
        memset(s->is_prepared, 0, sizeof(s->is_prepared));
        s->is_broken = 0;
        pq.reset(s->conn);
        if (pq.status(s->conn) == CONNECTION_OK && pg_session(s) == 0)
            return 0;
    }
    s->failure = PGF_CONNECTION;
    {
        char msg[512];

        pg_message(s, NULL, msg, sizeof(msg));
        return idmint__fail(IDMINT_EUNAVAILABLE, "postgres %s: cannot reconnect: %s", s->where,
                            msg);
    }
}

/* ==== statement helpers ==== */

/*
 * Run statement @p id (prepared on first use on this connection). On success
 * *out holds the result, which the caller clears; on failure nothing is left
 * to clear.
 */
static int pg_exec(struct pg_store *s, enum pg_stmt_id id, const struct pg_args *a, PGresult **out,
                   const char *what)
{
    char name[16];
    PGresult *r;
    int rc;

    snprintf(name, sizeof(name), "idmint_%d", (int)id);
    if (!s->is_prepared[id]) {
        r = pg_reply(s, pq.sendPrepare(s->conn, name, pg_sql[id], 0, NULL));
        if (pq.resultStatus(r) != PGRES_COMMAND_OK) {
            rc = pg_fail(s, r, what);
            pq.clear(r);
            return rc;
        }
        pq.clear(r);
        s->is_prepared[id] = 1;
    }
    r = pg_reply(s, pq.sendQueryPrepared(s->conn, name, a != NULL ? a->n : 0,
                                         a != NULL ? a->v : NULL, NULL, NULL, 0));
    switch (pq.resultStatus(r)) {
    case PGRES_COMMAND_OK:
    case PGRES_TUPLES_OK:
        *out = r;
        return 0;
    default:
        rc = pg_fail(s, r, what);
        pq.clear(r);
        return rc;
    }
}

/* Run a statement whose rows we do not need; *changed (if not NULL) gets the row count. */
static int pg_run(struct pg_store *s, enum pg_stmt_id id, const struct pg_args *a,
                  uint64_t *changed, const char *what)
{
    PGresult *r = NULL;
    int rc = pg_exec(s, id, a, &r, what);

    if (rc == 0 && changed != NULL)
        *changed = strtoull(pq.cmdTuples(r), NULL, 10);
    pq.clear(r);
    return rc;
}

static int pg_simple(struct pg_store *s, const char *sql, const char *what)
{
    PGresult *r = pg_query(s, sql);
    int rc = 0;

    if (pq.resultStatus(r) != PGRES_COMMAND_OK && pq.resultStatus(r) != PGRES_TUPLES_OK)
        rc = pg_fail(s, r, what);
    pq.clear(r);
    return rc;
}

/* Commit if @p rc is 0, else roll back; returns the outcome. */
static int pg_finish(struct pg_store *s, int rc)
{
    if (rc == 0)
        return pg_simple(s, "COMMIT", "commit");
    if (!s->is_broken && pq.status(s->conn) == CONNECTION_OK &&
        pq.transactionStatus(s->conn) != PQTRANS_IDLE) {
        char saved[512];
        int failure = s->failure;

        /* Keep the message of the failure that caused the rollback. */
        snprintf(saved, sizeof(saved), "%s", idmint_errmsg());
        (void)pg_simple(s, "ROLLBACK", "rollback");
        idmint__fail(0, "%s", saved);
        s->failure = failure;
    }
    return rc;
}

enum {
    PG_TXN = 1u << 0,        /* wrap the body in BEGIN … COMMIT */
    PG_IDEMPOTENT = 1u << 1, /* running it twice is the same as once: retry a lost connection */
};

/*
 * Run @p body (which fills its own result in @p ctx and must reset it on
 * entry) with the connection ready, again after a deadlock or serialization
 * failure, and again after a lost connection when @p flags say that is safe.
 */
static int pg_call(struct pg_store *s, unsigned flags, int (*body)(struct pg_store *, void *),
                   void *ctx)
{
    int rc = 0, attempt;

    for (attempt = 0; attempt < PG_MAX_ATTEMPTS; attempt++) {
        if (attempt > 0)
            idmint__sleep_ms((uint32_t)(5 << attempt));
        s->failure = PGF_NONE;
        if ((rc = pg_ready(s)) != 0)
            return rc;
        if ((flags & PG_TXN) != 0 && (rc = pg_simple(s, "BEGIN", "begin transaction")) != 0) {
            if (s->failure == PGF_CONNECTION)
                continue; /* nothing was done yet */
            return rc;
        }
        rc = body(s, ctx);
        if ((flags & PG_TXN) != 0)
            rc = pg_finish(s, rc);
        if (rc == 0)
            return 0;
        if (s->failure == PGF_TRANSIENT)
            continue;
        if (s->failure == PGF_CONNECTION && (flags & PG_IDEMPOTENT) != 0)
            continue;
        return rc;
    }
    return rc;
}

/* ==== open / close ==== */

/*
 * Wait until every reservation committed so far is durable: see
 * ST_RANGE_RESERVE. A saved range needs it as much as a fresh one, since its
 * original may have committed a moment ago without waiting.
 */
static int pg_durable(struct pg_store *s)
{
    return pg_run(s, ST_DURABLE, NULL, NULL, "make the reservation durable");
}

static int durable_body(struct pg_store *s, void *ctx)
{
    (void)ctx;
    return pg_durable(s);
}

/* Reservations depend on ST_DURABLE: learn at open, not after one has advanced a namespace. */
static int pg_check_durable(struct pg_store *s)
{
    int rc = pg_call(s, PG_IDEMPOTENT, durable_body, NULL);
    char cause[512];

    if (rc == 0 || s->failure != PGF_OTHER)
        return rc;
    snprintf(cause, sizeof(cause), "%s", idmint_errmsg());
    return idmint__fail(rc,
                        "%s; the role needs EXECUTE on pg_logical_emit_message(boolean, text, "
                        "text) to reserve ranges",
                        cause);
}

static void postgres_close(struct store *st)
{
    struct pg_store *s = (struct pg_store *)st;

    if (s == NULL)
        return;
    pq.finish(s->conn);
    free(s->where);
    free(s);
}

/* 0 when the schema does not exist yet, else its version; negative on failure. */
static int pg_schema_version(struct pg_store *s)
{
    /* pg_class itself, not to_regclass: a name looked up as missing stays
     * cached so in this backend until it next takes in the catalog's
     * changes, which an advisory lock does not make it do, and an open that
     * read the version before waiting for another node's migration then
     * saw no schema after it and migrated again ("already exists"). */
    PGresult *r = pg_query(s, "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_class c"
                              " JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace"
                              " WHERE n.nspname = 'idmint' AND c.relname = 'schema_version')");
    int rc = 0, has_table;

    if (pq.resultStatus(r) != PGRES_TUPLES_OK || pq.ntuples(r) != 1) {
        rc = pg_fail(s, r, "look for the schema");
        pq.clear(r);
        return rc;
    }
    has_table = strcmp(pq.getvalue(r, 0, 0), "t") == 0;
    pq.clear(r);
    if (!has_table)
        return 0;
    r = pg_query(s, "SELECT coalesce(max(version), 0) FROM idmint.schema_version");
    if (pq.resultStatus(r) != PGRES_TUPLES_OK || pq.ntuples(r) != 1)
        rc = pg_fail(s, r, "read schema version");
    else
        rc = (int)strtol(pq.getvalue(r, 0, 0), NULL, 10);
    pq.clear(r);
    return rc;
}

static int pg_migrate_body(struct pg_store *s, void *ctx)
{
    int version, v, rc;
    char sql[128];

    (void)ctx;
    /* Nodes starting at once queue here; DDL is transactional, so each
     * step and its version row commit together or not at all. */
    if ((rc = pg_simple(s, "SELECT pg_advisory_xact_lock(" PG_LOCK_SCHEMA ")", "lock schema")) != 0)
        return rc;
    if ((version = pg_schema_version(s)) < 0)
        return version;
    if (version > PG_SCHEMA_VERSION)
        return idmint__fail(IDMINT_ESTORE,
                            "postgres %s: schema version %d is newer than this build (%d)",
                            s->where, version, PG_SCHEMA_VERSION);
    if (version == 0 &&
        (rc = pg_simple(s,
                        "CREATE SCHEMA IF NOT EXISTS idmint; "
                        "CREATE TABLE IF NOT EXISTS idmint.schema_version ("
                        " version integer PRIMARY KEY, applied_at timestamptz NOT NULL)",
                        "create schema")) != 0)
        return rc;
    /* pg_migrations[k] takes the schema from version k to k + 1. */
    for (v = version; v < PG_SCHEMA_VERSION; v++) {
        if ((rc = pg_simple(s, pg_migrations[v], "migrate schema")) != 0)
            return rc;
        snprintf(sql, sizeof(sql),
                 "INSERT INTO idmint.schema_version (version, applied_at) VALUES (%d, now())",
                 v + 1);
        if ((rc = pg_simple(s, sql, "record schema version")) != 0)
            return rc;
    }
    return 0;
}

/* Read the schema's version into *(int *)ctx, outside any migration's transaction. */
static int pg_version_body(struct pg_store *s, void *ctx)
{
    int version = pg_schema_version(s);

    if (version < 0)
        return version;
    *(int *)ctx = version;
    return 0;
}

/*
 * Bring the schema to PG_SCHEMA_VERSION. A current schema is read without
 * the schema lock: every open of a start burst took it in turn, and at 500
 * processes the last ones timed out waiting. The read is a transaction of
 * its own (pg_schema_version says why it reads pg_class).
 */
static int pg_migrate(struct pg_store *s)
{
    int version = -1, rc = pg_call(s, PG_IDEMPOTENT, pg_version_body, &version);

    if (rc != 0 || version == PG_SCHEMA_VERSION)
        return rc;
    return pg_call(s, PG_TXN, pg_migrate_body, NULL);
}

/* libpq prints server notices to stderr by default; a library never prints. */
static void pg_notice_ignore(void *arg, const char *message)
{
    (void)arg;
    (void)message;
}

/*
 * libpq defaults that the URL may override (it comes last, and later
 * keywords win): a bounded connect, dead-peer detection, and never a standby.
 */
static const char *const pg_keywords[] = {
    "connect_timeout",  "keepalives",
    "keepalives_idle",  "keepalives_interval",
    "keepalives_count", "tcp_user_timeout",
    "application_name", "target_session_attrs",
    "dbname",           NULL,
};

/*
 * A connect refused for now (the server is busy or starting), not for good.
 * libpq gives a failed connect no SQLSTATE, only text: a message translated
 * by NLS matches nothing here, and the open fails at once, as it did before
 * it learned to wait.
 */
static int pg_connect_is_busy(PGconn *conn)
{
    const char *msg = pq.errorMessage(conn);

    return msg != NULL &&
           (strstr(msg, "timeout expired") != NULL || strstr(msg, "too many clients") != NULL ||
            strstr(msg, "too many connections") != NULL ||
            strstr(msg, "remaining connection slots") != NULL ||
            strstr(msg, "is starting up") != NULL);
}

/*
 * Connect, retrying a busy server for up to PG_OPEN_BUDGET_MS with jittered
 * pauses, so that a burst's retries do not arrive together again. Any other
 * failure (authentication, no such database) is final at once. NULL only
 * when out of memory; else the caller checks the status.
 */
static PGconn *pg_connect_patiently(const char *const *values)
{
    uint64_t deadline_ms = idmint__deadline_now_ms() + PG_OPEN_BUDGET_MS;
    unsigned jitter = (unsigned)getpid() * 2654435761u;

    for (;;) {
        PGconn *conn = pq.connectdbParams(pg_keywords, values, 1);
        uint32_t pause_ms;

        if (conn == NULL || pq.status(conn) == CONNECTION_OK || !pg_connect_is_busy(conn))
            return conn;
        jitter = jitter * 1103515245u + 12345u;
        pause_ms = 50 + (jitter >> 16) % 200;
        if (idmint__deadline_now_ms() + pause_ms >= deadline_ms)
            return conn;
        pq.finish(conn);
        idmint__sleep_ms(pause_ms);
    }
}

static int pg_open_as(const struct store_ops *ops, const char *location, struct store **out)
{
    const char *values[sizeof(pg_keywords) / sizeof(pg_keywords[0])] = {
        PG_CONNECT_TIMEOUT_S, "1", "5", "2", "2", "5000", "idmint", "read-write", NULL, NULL};
    struct pg_store *s;
    char *conninfo, where[300];
    size_t len;
    int rc;

    if ((rc = idmint__dynlib_load(&pq_lib)) != 0)
        return rc;
    /* A URL keeps its scheme for libpq; anything else is a key=value string. */
    len = strlen(ops->scheme) + 1 + strlen(location) + 1;
    conninfo = malloc(len);
    s = calloc(1, sizeof(*s));
    if (conninfo == NULL || s == NULL) {
        free(conninfo);
        free(s);
        return idmint__fail(IDMINT_ENOMEM, "out of memory opening postgres store");
    }
    if (strncmp(location, "//", 2) == 0)
        snprintf(conninfo, len, "%s:%s", ops->scheme, location);
    else
        snprintf(conninfo, len, "%s", location);
    values[8] = conninfo;
    s->base.ops = ops;
    s->conn = pg_connect_patiently(values);
    free(conninfo);
    if (s->conn == NULL) {
        free(s);
        return idmint__fail(IDMINT_ENOMEM, "out of memory opening postgres store");
    }
    /* Kept across PQreset. */
    pq.setNoticeProcessor(s->conn, pg_notice_ignore, NULL);
    snprintf(where, sizeof(where), "%s:%s/%s", pq.host(s->conn) != NULL ? pq.host(s->conn) : "?",
             pq.port(s->conn) != NULL ? pq.port(s->conn) : "?",
             pq.db(s->conn) != NULL ? pq.db(s->conn) : "?");
    s->where = strdup(where);
    if (s->where == NULL) {
        postgres_close(&s->base);
        return idmint__fail(IDMINT_ENOMEM, "out of memory opening postgres store");
    }
    if (pq.status(s->conn) != CONNECTION_OK) {
        char msg[512];

        pg_message(s, NULL, msg, sizeof(msg));
        rc = idmint__fail(IDMINT_EUNAVAILABLE, "postgres %s: cannot connect: %s", s->where, msg);
        postgres_close(&s->base);
        return rc;
    }
    if ((rc = pg_session(s)) != 0 || (rc = pg_migrate(s)) != 0 || (rc = pg_check_durable(s)) != 0) {
        postgres_close(&s->base);
        return rc;
    }
    *out = &s->base;
    return 0;
}

/* Credentials belong in the connection string, ~/.pgpass or PGPASSWORD: @p token is unused. */
static int postgres_open(const char *location, const char *token, unsigned flags,
                         struct store **out)
{
    (void)token;
    (void)flags;
    return pg_open_as(&idmint__store_postgres, location, out);
}

static int postgresql_open(const char *location, const char *token, unsigned flags,
                           struct store **out)
{
    (void)token;
    (void)flags;
    return pg_open_as(&idmint__store_postgresql, location, out);
}

/* ==== namespaces ==== */

static void ns_from_row(const PGresult *r, int row, idmint_ns_info *out)
{
    memset(out, 0, sizeof(*out));
    col_text(r, row, 0, out->name, sizeof(out->name));
    out->kind =
        strcmp(pq.getvalue(r, row, 1), "range") == 0 ? IDMINT_KIND_RANGE : IDMINT_KIND_SNOWFLAKE;
    out->layout.time_bits = (uint8_t)col_u64(r, row, 2);
    out->layout.region_bits = (uint8_t)col_u64(r, row, 3);
    out->layout.worker_bits = (uint8_t)col_u64(r, row, 4);
    out->layout.sequence_bits = (uint8_t)col_u64(r, row, 5);
    out->layout.unit_ms = (uint32_t)col_u64(r, row, 6);
    out->layout.epoch_ms = col_i64(r, row, 7);
    out->next_value = col_u64(r, row, 8);
    out->max_value = col_u64(r, row, 9);
    out->block = (uint32_t)col_u64(r, row, 10);
    out->max_block = (uint32_t)col_u64(r, row, 11);
    out->is_disabled = strcmp(pq.getvalue(r, row, 12), "t") == 0;
    out->created_ms = col_i64(r, row, 13);
    out->floor = col_u64(r, row, 14);
    col_text(r, row, 15, out->origin, sizeof(out->origin));
}

static int pg_audit(struct pg_store *s, int64_t at_ms, const char *actor, const char *action,
                    const char *ns, const char *detail)
{
    struct pg_args a = {.n = 0};

    arg_i64(&a, at_ms);
    arg_text(&a, actor);
    arg_text(&a, action);
    arg_text(&a, ns);
    arg_text(&a, detail);
    return pg_run(s, ST_AUDIT_INSERT, &a, NULL, "write audit record");
}

struct ns_create_call {
    const idmint_ns_info *ns;
    const char *actor;
    int64_t now_ms;
};

/*
 * Log a new history entry in the current transaction (a take, release,
 * forced release or fence) and fill @p out with its pair and the id.
 */
static int pg_history(struct pg_store *s, int64_t now_ms, struct idmint__history *out)
{
    struct pg_args a = {.n = 0};
    PGresult *r = NULL;
    uint64_t tip = 0;
    int rc;

    if ((rc = idmint__store_history_tip(&tip)) != 0)
        return rc;
    arg_u64(&a, tip);
    arg_i64(&a, now_ms);
    if ((rc = pg_exec(s, ST_HISTORY_LOG, &a, &r, "log the history")) != 0)
        return rc;
    rc = pq.ntuples(r) == 1 ? history_from(s, r, 0, out)
                            : idmint__fail(IDMINT_ESTORE, "postgres %s: log the history: %d rows",
                                           s->where, pq.ntuples(r));
    pq.clear(r);
    return rc;
}

/* Keep the longest lease granted in @p ns (@p units), in the current transaction. */
static int pg_lease_max(struct pg_store *s, const char *ns, uint64_t units)
{
    struct pg_args a = {.n = 0};

    arg_text(&a, ns);
    arg_u64(&a, units);
    return pg_run(s, ST_NS_LEASE_MAX, &a, NULL, "record the longest lease");
}

static int ns_create_body(struct pg_store *s, void *ctx)
{
    const struct ns_create_call *c = ctx;
    const idmint_ns_info *ns = c->ns;
    const idmint_layout *l = &ns->layout;
    struct pg_args a = {.n = 0};
    char detail[256];
    int rc;

    idmint__store_ns_create_detail(ns, detail, sizeof(detail));
    arg_text(&a, ns->name);
    arg_text(&a, ns->kind == IDMINT_KIND_RANGE ? "range" : "snowflake");
    arg_u64(&a, l->time_bits);
    arg_u64(&a, l->region_bits);
    arg_u64(&a, l->worker_bits);
    arg_u64(&a, l->sequence_bits);
    arg_u64(&a, l->unit_ms);
    arg_i64(&a, l->epoch_ms);
    arg_u64(&a, ns->next_value);
    arg_u64(&a, ns->max_value);
    arg_u64(&a, ns->block);
    arg_u64(&a, ns->max_block);
    arg_text(&a, ns->is_disabled ? "true" : "false");
    arg_i64(&a, c->now_ms);
    arg_u64(&a, ns->floor);
    arg_text(&a, ns->origin);
    rc = pg_run(s, ST_NS_INSERT, &a, NULL, "create namespace");
    if (rc == IDMINT_ECONFLICT)
        rc = idmint__fail(IDMINT_ECONFLICT, "namespace '%s' already exists", ns->name);
    if (rc == 0)
        rc = pg_audit(s, c->now_ms, c->actor, "ns.create", ns->name, detail);
    return rc;
}

static int postgres_ns_create(struct store *st, const idmint_ns_info *ns, const char *actor,
                              int64_t now_ms)
{
    struct ns_create_call c = {ns, actor, now_ms};

    return pg_call((struct pg_store *)st, PG_TXN, ns_create_body, &c);
}

struct ns_get_call {
    const char *name;
    idmint_ns_info info;
};

static int ns_get_body(struct pg_store *s, void *ctx)
{
    struct ns_get_call *c = ctx;
    struct pg_args a = {.n = 0};
    PGresult *r = NULL;
    int rc;

    arg_text(&a, c->name);
    if ((rc = pg_exec(s, ST_NS_GET, &a, &r, "read namespace")) != 0)
        return rc;
    if (pq.ntuples(r) == 1)
        ns_from_row(r, 0, &c->info);
    else
        rc = idmint__store_ns_missing(c->name);
    pq.clear(r);
    return rc;
}

static int postgres_ns_get(struct store *st, const char *name, idmint_ns_info *out)
{
    struct ns_get_call c;
    int rc;

    memset(&c, 0, sizeof(c));
    c.name = name;
    rc = pg_call((struct pg_store *)st, PG_IDEMPOTENT, ns_get_body, &c);
    if (rc == 0)
        *out = c.info;
    return rc;
}

/* ==== lists ==== */

/* Fill list element @p out from row @p row of @p r. */
typedef void (*pg_row_fn)(const PGresult *r, int row, void *out);

struct list_call {
    enum pg_stmt_id stmt;
    struct pg_args args;
    const char *what; /* "list namespaces", for messages */
    size_t elem_size;
    pg_row_fn from_row;
    void *list; /* calloc'd, elem_size per row; NULL for none */
    size_t n;
};

static int list_body(struct pg_store *s, void *ctx)
{
    struct list_call *c = ctx;
    PGresult *r = NULL;
    int rc, i, rows;

    if ((rc = pg_exec(s, c->stmt, &c->args, &r, c->what)) != 0)
        return rc;
    rows = pq.ntuples(r);
    if (rows > 0 && (c->list = calloc((size_t)rows, c->elem_size)) == NULL) {
        pq.clear(r);
        return idmint__fail(IDMINT_ENOMEM, "out of memory: %s", c->what);
    }
    for (i = 0; i < rows; i++)
        c->from_row(r, i, (char *)c->list + (size_t)i * c->elem_size);
    c->n = (size_t)rows;
    pq.clear(r);
    return 0;
}

/* Run the list query of @p c; read-only, so retried. *out (the caller frees it) and *n. */
static int pg_list(struct store *st, struct list_call *c, void **out, size_t *n)
{
    int rc = pg_call((struct pg_store *)st, PG_IDEMPOTENT, list_body, c);

    if (rc == 0) {
        *out = c->list;
        *n = c->n;
    }
    return rc;
}

static void ns_row(const PGresult *r, int row, void *out)
{
    ns_from_row(r, row, out);
}

static int postgres_ns_list(struct store *st, idmint_ns_info **out, size_t *n)
{
    struct list_call c = {.stmt = ST_NS_LIST,
                          .what = "list namespaces",
                          .elem_size = sizeof(**out),
                          .from_row = ns_row};
    void *list;
    int rc = pg_list(st, &c, &list, n);

    if (rc == 0)
        *out = list;
    return rc;
}

struct ns_disable_call {
    const char *name;
    int disabled;
    const char *actor;
    int64_t now_ms;
};

static int ns_disable_body(struct pg_store *s, void *ctx)
{
    const struct ns_disable_call *c = ctx;
    struct pg_args a = {.n = 0};
    uint64_t changed = 0;
    int rc;

    arg_text(&a, c->name);
    if (c->disabled &&
        (rc = pg_run(s, ST_NS_DISABLE_LOCK, &a, NULL, "wait for the takes under way")) != 0)
        return rc;
    arg_text(&a, c->disabled ? "true" : "false");
    rc = pg_run(s, ST_NS_DISABLE, &a, &changed,
                c->disabled ? "disable namespace" : "enable namespace");
    if (rc == 0 && changed == 0)
        rc = idmint__store_ns_missing(c->name);
    if (rc == 0)
        rc = pg_audit(s, c->now_ms, c->actor, c->disabled ? "ns.disable" : "ns.enable", c->name,
                      c->disabled ? "disabled" : "enabled");
    return rc;
}

static int postgres_ns_set_disabled(struct store *st, const char *name, int disabled,
                                    const char *actor, int64_t now_ms)
{
    struct ns_disable_call c = {name, disabled != 0, actor, now_ms};

    return pg_call((struct pg_store *)st, PG_TXN, ns_disable_body, &c);
}

/* ==== worker leases ==== */

struct lease_take_call {
    const char *ns;
    uint64_t worker_count, now_unit, until_unit;
    const struct idmint__lease *in;
    const char *actor;
    int64_t now_ms;
    struct idmint__lease res;
};

/*
 * Claim a worker id for the take of @p c (the namespace checked and the
 * region locked, args $1 ns and $2 region in @p a): c->res filled, or
 * ENOWORKER with nothing changed.
 */
static int lease_claim(struct pg_store *s, struct lease_take_call *c, struct pg_args *a)
{
    struct idmint__lease *res = &c->res;
    PGresult *r = NULL;
    uint64_t count;
    int rc;

    /* $1 ns, $2 region, $3 worker_count, $4 holder, $5 until, $6 now. */
    arg_u64(a, c->worker_count);
    arg_text(a, c->in->holder);
    arg_u64(a, c->until_unit);
    arg_u64(a, c->now_unit);
    if ((rc = pg_exec(s, ST_LEASE_TAKE, a, &r, "take worker id")) != 0)
        return rc;
    if (pq.ntuples(r) > 1) {
        pq.clear(r);
        return idmint__fail(IDMINT_ESTORE, "postgres %s: take worker id changed several rows",
                            s->where);
    }
    if (pq.ntuples(r) == 1) {
        res->worker_id = (uint32_t)col_u64(r, 0, 0);
        res->generation = col_u64(r, 0, 1);
        res->fence_found = col_u64(r, 0, 2);
        res->lease_until = col_u64(r, 0, 3);
        pq.clear(r);
        return 0;
    }
    pq.clear(r);

    a->n = 2;
    if ((rc = pg_exec(s, ST_LEASE_COUNT, a, &r, "count worker ids")) != 0)
        return rc;
    count = pq.ntuples(r) == 1 ? col_u64(r, 0, 0) : UINT64_MAX;
    pq.clear(r);
    if (count >= c->worker_count)
        return idmint__store_no_worker(c->ns, c->in->region, c->worker_count);
    res->worker_id = (uint32_t)count;
    res->generation = 1;
    res->fence_found = 0;
    res->lease_until = c->until_unit;
    a->n = 2;
    arg_u64(a, count);
    arg_text(a, c->in->holder);
    arg_u64(a, c->until_unit);
    return pg_run(s, ST_LEASE_INSERT, a, NULL, "add worker id");
}

/* Record the worker grant of the take @p res (a new generation of its row). */
static int worker_grant(struct pg_store *s, const char *ns, const struct idmint__lease *res,
                        int64_t now_ms)
{
    char fp[IDMINT_HOLDER_FP_LEN + 1];
    struct idmint__origin origin;
    struct pg_args a = {.n = 0};

    idmint__holder_fingerprint(res->holder, fp);
    arg_text(&a, ns);
    arg_u64(&a, res->region);
    arg_u64(&a, res->worker_id);
    arg_u64(&a, res->generation);
    arg_text(&a, fp);
    arg_origin(&a, &res->origin, &origin);
    arg_u64(&a, res->fence_found);
    arg_u64(&a, res->lease_until);
    arg_i64(&a, now_ms);
    return pg_run(s, ST_WGRANT_INSERT, &a, NULL, "record worker grant");
}

static int lease_take_body(struct pg_store *s, void *ctx)
{
    struct lease_take_call *c = ctx;
    struct pg_args a = {.n = 0};
    PGresult *r = NULL;
    idmint_ns_info info;
    char detail[256];
    int rc, rows;

    c->res = *c->in;
    arg_text(&a, c->ns);
    if ((rc = pg_run(s, ST_NS_TAKE_LOCK, &a, NULL, "wait for a disable of the namespace")) != 0 ||
        (rc = pg_exec(s, ST_NS_GET, &a, &r, "read namespace")) != 0)
        return rc;
    rows = pq.ntuples(r);
    if (rows == 1)
        ns_from_row(r, 0, &info);
    pq.clear(r);
    if (rows != 1)
        return idmint__store_ns_missing(c->ns);
    if ((rc = idmint__store_lease_refusal(&info)) != 0)
        return rc;

    arg_u64(&a, c->in->region);
    if ((rc = pg_run(s, ST_REGION_LOCK, &a, NULL, "lock the region's worker ids")) != 0 ||
        (rc = lease_claim(s, c, &a)) != 0 ||
        (rc = pg_history(s, c->now_ms, &c->res.history)) != 0 ||
        (rc = pg_lease_max(s, c->ns, c->res.granted_units)) != 0 ||
        (rc = worker_grant(s, c->ns, &c->res, c->now_ms)) != 0)
        return rc;
    /* Last in the transaction: the audit lock is the last one it takes. */
    idmint__store_lease_detail(&c->res, c->res.fence_found, c->res.lease_until, detail,
                               sizeof(detail));
    return pg_audit(s, c->now_ms, c->actor, "worker.take", c->ns, detail);
}

static int postgres_lease_take(struct store *st, const char *ns, uint64_t worker_count,
                               uint64_t now_unit, uint64_t until_unit, struct idmint__lease *lease,
                               const char *actor, int64_t now_ms)
{
    struct lease_take_call c;
    int rc;

    memset(&c, 0, sizeof(c));
    c.ns = ns;
    c.worker_count = worker_count;
    c.now_unit = now_unit;
    c.until_unit = until_unit;
    c.in = lease;
    c.actor = actor;
    c.now_ms = now_ms;
    rc = pg_call((struct pg_store *)st, PG_TXN, lease_take_body, &c);
    if (rc == 0)
        *lease = c.res;
    return rc;
}

static void arg_lease_key(struct pg_args *a, const char *ns, const struct idmint__lease *lease)
{
    arg_text(a, ns);
    arg_u64(a, lease->region);
    arg_u64(a, lease->worker_id);
    arg_text(a, lease->holder);
    arg_u64(a, lease->generation);
}

struct lease_renew_call {
    const char *ns;
    const struct idmint__lease *lease;
    uint64_t until_unit;
    int64_t now_ms;  /* the grant's updated_ms */
    uint64_t stored; /* E after the renewal */
    struct idmint__history history;
};

/*
 * Why a renewal changed nothing (args $1..$5 of the lease key in @p a):
 * ELEASELOST if the lease is no longer ours, else EDISABLED. A lease still
 * ours in an enabled namespace means either changed in between: run again.
 */
static int renew_refusal(struct pg_store *s, const struct lease_renew_call *c,
                         const struct pg_args *a)
{
    PGresult *r = NULL;
    int rc, is_held, is_disabled;

    if ((rc = pg_exec(s, ST_LEASE_RENEW_REFUSAL, a, &r, "read worker lease")) != 0)
        return rc;
    is_held = pq.ntuples(r) == 1 && strcmp(pq.getvalue(r, 0, 0), "t") == 0;
    is_disabled = pq.ntuples(r) == 1 && strcmp(pq.getvalue(r, 0, 1), "t") == 0;
    pq.clear(r);
    if (!is_held)
        return idmint__store_lease_lost(c->ns, c->lease);
    if (is_disabled)
        return idmint__fail(IDMINT_EDISABLED,
                            "namespace '%s' is disabled: the lease is not renewed; minting "
                            "stops at its end",
                            c->ns);
    s->failure = PGF_TRANSIENT;
    return idmint__fail(IDMINT_EUNAVAILABLE,
                        "postgres %s: namespace '%s' was enabled during the renewal", s->where,
                        c->ns);
}

static int lease_renew_body(struct pg_store *s, void *ctx)
{
    struct lease_renew_call *c = ctx;
    struct pg_args a = {.n = 0};
    PGresult *r = NULL;
    uint64_t tip = 0;
    int rc, rows;

    if ((rc = idmint__store_history_tip(&tip)) != 0)
        return rc;
    arg_lease_key(&a, c->ns, c->lease);
    arg_u64(&a, c->until_unit);
    arg_i64(&a, c->now_ms);
    arg_u64(&a, tip);
    arg_u64(&a, c->lease->granted_units);
    if ((rc = pg_exec(s, ST_LEASE_RENEW, &a, &r, "renew worker lease")) != 0)
        return rc;
    rows = pq.ntuples(r);
    if (rows == 1) {
        c->stored = col_u64(r, 0, 0);
        rc = history_from(s, r, 1, &c->history);
    }
    pq.clear(r);
    if (rows == 1)
        return rc;
    a.n = 5;
    return renew_refusal(s, c, &a);
}

static int postgres_lease_renew(struct store *st, const char *ns, struct idmint__lease *lease,
                                uint64_t until_unit, int64_t now_ms)
{
    struct lease_renew_call c = {ns, lease, until_unit, now_ms, 0, {"", 0, 0}};
    /* E = max(E, until) under a holder and generation match, and the grant's
     * last = that E: a repeat is harmless. */
    int rc = pg_call((struct pg_store *)st, PG_IDEMPOTENT, lease_renew_body, &c);

    if (rc == 0) {
        lease->lease_until = c.stored;
        lease->history = c.history;
    }
    return rc;
}

struct lease_release_call {
    const char *ns;
    const struct idmint__lease *lease;
    uint64_t final_unit;
    const char *actor;
    int64_t now_ms;
    uint64_t stored; /* E after the release */
    struct idmint__history history;
};

/*
 * The grant of @p lease now ends at @p stored (a release at @p now_ms). No
 * grant row (pruned, or taken before schema 4): nothing to update.
 */
static int worker_grant_update(struct pg_store *s, const char *ns,
                               const struct idmint__lease *lease, uint64_t stored, int64_t now_ms)
{
    struct pg_args a = {.n = 0};

    /* $1..$3 and $5 the grant's key (GRANT_KEY), $4 its last E, $6 the time. */
    arg_text(&a, ns);
    arg_u64(&a, lease->region);
    arg_u64(&a, lease->worker_id);
    arg_u64(&a, stored);
    arg_u64(&a, lease->generation);
    arg_i64(&a, now_ms);
    return pg_run(s, ST_WGRANT_UPDATE, &a, NULL, "update worker grant");
}

static int lease_release_body(struct pg_store *s, void *ctx)
{
    struct lease_release_call *c = ctx;
    struct pg_args a = {.n = 0};
    PGresult *r = NULL;
    uint64_t before = 0;
    char detail[256];
    int rc, rows;

    arg_lease_key(&a, c->ns, c->lease);
    arg_u64(&a, c->final_unit);
    if ((rc = pg_exec(s, ST_LEASE_RELEASE, &a, &r, "release worker lease")) != 0)
        return rc;
    rows = pq.ntuples(r);
    if (rows == 1) {
        before = col_u64(r, 0, 0);
        c->stored = col_u64(r, 0, 1);
    }
    pq.clear(r);
    if (rows != 1)
        return idmint__store_lease_lost(c->ns, c->lease);
    if ((rc = pg_history(s, c->now_ms, &c->history)) != 0 ||
        (rc = worker_grant_update(s, c->ns, c->lease, c->stored, c->now_ms)) != 0)
        return rc;
    idmint__store_lease_detail(c->lease, before, c->stored, detail, sizeof(detail));
    return pg_audit(s, c->now_ms, c->actor, "worker.release", c->ns, detail);
}

static int postgres_lease_release(struct store *st, const char *ns, struct idmint__lease *lease,
                                  uint64_t final_unit, const char *actor, int64_t now_ms)
{
    struct lease_release_call c = {ns, lease, final_unit, actor, now_ms, 0, {"", 0, 0}};
    /* Not retried after a lost connection: a repeat would report a lease lost. */
    int rc = pg_call((struct pg_store *)st, PG_TXN, lease_release_body, &c);

    if (rc == 0) {
        lease->lease_until = c.stored;
        lease->history = c.history;
    }
    return rc;
}

static void worker_row(const PGresult *r, int row, void *out)
{
    idmint_worker_info *w = out;

    w->region = (uint32_t)col_u64(r, row, 0);
    w->worker_id = (uint32_t)col_u64(r, row, 1);
    col_text(r, row, 2, w->holder, sizeof(w->holder));
    w->generation = col_u64(r, row, 3);
    w->lease_until = col_u64(r, row, 4);
}

/* The full holder: the authority fingerprints it for those it shows it to. */
static int postgres_lease_list(struct store *st, const char *ns, idmint_worker_info **out,
                               size_t *n)
{
    struct list_call c = {.stmt = ST_LEASE_LIST,
                          .what = "list worker ids",
                          .elem_size = sizeof(**out),
                          .from_row = worker_row};
    void *list;
    int rc;

    arg_text(&c.args, ns);
    if ((rc = pg_list(st, &c, &list, n)) == 0)
        *out = list;
    return rc;
}

struct force_call {
    const char *ns;
    uint32_t region, worker_id;
    uint64_t max_until_unit;
    const char *actor;
    int64_t now_ms;
};

static int force_body(struct pg_store *s, void *ctx)
{
    const struct force_call *c = ctx;
    char holder[33] = "", detail[256];
    uint64_t generation = 0, before = 0, after = 0;
    struct idmint__history history; /* the counter grew; nobody to tell */
    struct pg_args a = {.n = 0};
    PGresult *r = NULL;
    int rc, rows;

    arg_text(&a, c->ns);
    arg_u64(&a, c->region);
    arg_u64(&a, c->worker_id);
    arg_u64(&a, c->max_until_unit);
    if ((rc = pg_exec(s, ST_LEASE_FORCE, &a, &r, "force release")) != 0)
        return rc;
    rows = pq.ntuples(r);
    if (rows == 1) {
        col_text(r, 0, 0, holder, sizeof(holder));
        generation = col_u64(r, 0, 1);
        before = col_u64(r, 0, 2);
        after = col_u64(r, 0, 3);
    }
    pq.clear(r);
    if (rows != 1)
        return idmint__fail(IDMINT_ENOTFOUND, "namespace '%s' has no worker id %u in region %u",
                            c->ns, (unsigned)c->worker_id, (unsigned)c->region);
    if ((rc = pg_history(s, c->now_ms, &history)) != 0)
        return rc;
    idmint__store_force_detail(c->region, c->worker_id, holder, generation, before, after, detail,
                               sizeof(detail));
    return pg_audit(s, c->now_ms, c->actor, "worker.force_release", c->ns, detail);
}

static int postgres_lease_force_release(struct store *st, const char *ns, uint32_t region,
                                        uint32_t worker_id, uint64_t max_until_unit,
                                        const char *actor, int64_t now_ms)
{
    struct force_call c = {ns, region, worker_id, max_until_unit, actor, now_ms};

    return pg_call((struct pg_store *)st, PG_TXN, force_body, &c);
}

/* ==== ranges ==== */

struct range_call {
    const char *ns, *incarnation, *request_id;
    uint64_t count;
    int64_t now_ms;
    struct idmint__range res;
};

/* Why the namespace refused a reservation that found no saved request. */
static int range_refusal(struct pg_store *s, const struct range_call *c)
{
    struct pg_args a = {.n = 0};
    PGresult *r = NULL;
    idmint_ns_info info;
    int rc, rows;

    arg_text(&a, c->ns);
    if ((rc = pg_exec(s, ST_NS_GET, &a, &r, "read namespace")) != 0)
        return rc;
    rows = pq.ntuples(r);
    if (rows == 1)
        ns_from_row(r, 0, &info);
    pq.clear(r);
    if (rows != 1)
        return idmint__store_ns_missing(c->ns);
    if ((rc = idmint__store_range_grant(&info, c->count, NULL)) != 0)
        return rc;
    /* Changed since the reservation looked (enabled, max raised): look again. */
    s->failure = PGF_TRANSIENT;
    return idmint__fail(IDMINT_EUNAVAILABLE, "postgres %s: namespace '%s' changed during the call",
                        s->where, c->ns);
}

/*
 * The saved range of a repeated request: 0 and c->res filled, ECONFLICT for
 * another count, or 1 when no record exists.
 */
static int range_saved(struct pg_store *s, struct range_call *c)
{
    struct pg_args a = {.n = 0};
    PGresult *r = NULL;
    uint64_t saved_count;
    int rc;

    arg_text(&a, c->ns);
    arg_text(&a, c->incarnation);
    arg_text(&a, c->request_id);
    if ((rc = pg_exec(s, ST_RANGE_SAVED, &a, &r, "read saved range")) != 0)
        return rc;
    if (pq.ntuples(r) != 1) {
        pq.clear(r);
        return 1;
    }
    saved_count = col_u64(r, 0, 0);
    c->res.start = col_u64(r, 0, 1);
    c->res.end = col_u64(r, 0, 2);
    /* The pair of the grant that made the record (seq 0 for a record older
     * than schema 6: no news), under today's history id: the holder proves
     * it is still in the log before it uses the range, because the record
     * may be a restored store's (src/history.c). */
    if (col_u64(r, 0, 3) != 0) {
        rc = history_from(s, r, 3, &c->res.history);
        if (rc != 0) {
            pq.clear(r);
            return rc;
        }
    }
    pq.clear(r);
    if (saved_count != c->count)
        return idmint__store_range_replay_conflict(c->ns, c->incarnation, c->request_id,
                                                   saved_count, c->count);
    return 0;
}

static int range_body(struct pg_store *s, void *ctx)
{
    struct range_call *c = ctx;
    char fp[IDMINT_HOLDER_FP_LEN + 1];
    struct idmint__origin origin;
    struct pg_args a = {.n = 0};
    PGresult *r = NULL;
    uint64_t tip = 0;
    int rc, rows, is_async;

    /* A repeat (of our own attempt too) carries its record's pair, if any. */
    memset(&c->res.history, 0, sizeof(c->res.history));
    if ((rc = idmint__store_history_tip(&tip)) != 0)
        return rc;
    arg_text(&a, c->ns);
    arg_text(&a, c->incarnation);
    arg_text(&a, c->request_id);
    arg_u64(&a, c->count);
    arg_i64(&a, c->now_ms);
    idmint__holder_fingerprint(c->incarnation, fp);
    arg_text(&a, fp);
    arg_origin(&a, &c->res.origin, &origin);
    arg_u64(&a, tip);
    rc = pg_exec(s, ST_RANGE_RESERVE, &a, &r, "reserve range");
    if (rc == 0) {
        rows = pq.ntuples(r);
        if (rows == 1 && pq.nfields(r) == 6) {
            c->res.start = col_u64(r, 0, 0);
            c->res.end = col_u64(r, 0, 1);
            is_async = strcmp(pq.getvalue(r, 0, 2), "t") == 0;
            rc = history_from(s, r, 3, &c->res.history);
            pq.clear(r);
            return rc != 0 ? rc : is_async ? pg_durable(s) : 0;
        }
        pq.clear(r);
        if (rows != 0)
            return idmint__fail(IDMINT_ESTORE, "postgres %s: reserve range returned %d rows",
                                s->where, rows);
        /* Refused; but a repeat of a request saved before returns its range. */
        if ((rc = range_saved(s, c)) == 1)
            return range_refusal(s, c);
    } else if (rc == IDMINT_ECONFLICT) {
        /* unique_violation: this request was saved before; nothing here was kept. */
        if ((rc = range_saved(s, c)) == 1) {
            s->failure = PGF_TRANSIENT; /* the record has gone since: reserve again */
            return idmint__fail(
                IDMINT_EUNAVAILABLE,
                "postgres %s: request %s/%s of namespace '%s' changed during the call", s->where,
                c->incarnation, c->request_id, c->ns);
        }
    }
    /* A saved range: its original may have committed a moment ago, unflushed. */
    return rc != 0 ? rc : pg_durable(s);
}

static int postgres_range_reserve(struct store *st, const char *ns, const char *incarnation,
                                  const char *request_id, uint64_t count, int64_t now_ms,
                                  struct idmint__range *out)
{
    struct range_call c = {ns, incarnation, request_id, count, now_ms, {.start = 0}};
    int rc;

    c.res.origin = out->origin; /* input: who asks, recorded with a fresh grant */
    /* The request record makes a repeat return the saved range: safe to retry. */
    rc = pg_call((struct pg_store *)st, PG_IDEMPOTENT, range_body, &c);
    if (rc == 0)
        *out = c.res;
    return rc;
}

struct forget_call {
    const char *ns, *incarnation, *before;
    uint64_t forgotten;
};

static int forget_body(struct pg_store *s, void *ctx)
{
    struct forget_call *c = ctx;
    struct pg_args a = {.n = 0};

    arg_text(&a, c->ns);
    arg_text(&a, c->incarnation);
    arg_text(&a, c->before);
    return pg_run(s, ST_RANGE_FORGET, &a, &c->forgotten, "forget request records");
}

static int postgres_range_forget(struct store *st, const char *ns, const char *incarnation,
                                 const char *before_request_id, uint64_t *forgotten)
{
    struct forget_call c = {ns, incarnation, before_request_id, 0};
    /* Deleting what is already gone deletes nothing: safe to retry. */
    int rc = pg_call((struct pg_store *)st, PG_IDEMPOTENT, forget_body, &c);

    if (rc == 0 && forgotten != NULL)
        *forgotten = c.forgotten;
    return rc;
}

/* ==== fence ==== */

struct fence_call {
    const struct idmint__fence_step *steps;
    size_t n;
    const char *history_id, *actor;
    int64_t now_ms;
    char (*details)[384]; /* one per step */
};

/* Lock, judge and move the namespace of @p step; its audit detail into @p detail. */
static int fence_step(struct pg_store *s, const struct idmint__fence_step *step, char *detail,
                      size_t size)
{
    struct pg_args a = {.n = 0};
    PGresult *r = NULL;
    uint64_t old_floor = 0, old_next = 0, longest = 0;
    size_t len;
    int rc, rows;

    arg_text(&a, step->ns);
    if ((rc = pg_exec(s, ST_NS_FENCE_LOCK, &a, &r, "lock namespace")) != 0)
        return rc;
    rows = pq.ntuples(r);
    if (rows == 1) {
        old_floor = col_u64(r, 0, 0);
        old_next = col_u64(r, 0, 1);
        longest = col_u64(r, 0, 2);
    }
    pq.clear(r);
    if (rows != 1)
        return idmint__store_ns_missing(step->ns);
    if (step->kind == IDMINT_KIND_RANGE && step->next_value < old_next)
        return idmint__store_fence_backwards(step, old_next);
    if (step->kind != IDMINT_KIND_SNOWFLAKE)
        longest = 0;
    if (step->lease_units < longest && !step->allow_short)
        return idmint__store_fence_short(step, longest);
    arg_u64(&a, step->floor);
    arg_u64(&a, step->kind == IDMINT_KIND_RANGE ? step->next_value : old_next);
    if ((rc = pg_run(s, ST_NS_FENCE, &a, NULL, "fence namespace")) != 0)
        return rc;
    idmint__store_fence_detail(step, old_floor, old_next, detail, size);
    len = strlen(detail);
    if (step->lease_units < longest && len < size)
        snprintf(detail + len, size - len,
                 " short_lease=forced quarantine_units=%llu longest_lease_units=%llu",
                 (unsigned long long)step->lease_units, (unsigned long long)longest);
    return 0;
}

static int fence_body(struct pg_store *s, void *ctx)
{
    const struct fence_call *c = ctx;
    struct idmint__history history;
    struct pg_args a = {.n = 0};
    PGresult *r = NULL;
    char detail[128];
    size_t i;
    int rc = 0, rows;

    for (i = 0; i < c->n && rc == 0; i++)
        rc = fence_step(s, &c->steps[i], c->details[i], sizeof(c->details[i]));
    /* The audit lock last, as everywhere: it is the one every audited write takes. */
    for (i = 0; i < c->n && rc == 0; i++)
        rc = pg_audit(s, c->now_ms, c->actor, "authority.fence", c->steps[i].ns, c->details[i]);
    if (rc != 0)
        return rc;
    arg_text(&a, c->history_id);
    if ((rc = pg_exec(s, ST_HISTORY_FENCE, &a, &r, "start a new history")) != 0)
        return rc;
    rows = pq.ntuples(r);
    pq.clear(r);
    if (rows != 1)
        return idmint__fail(IDMINT_ESTORE, "postgres %s: start a new history: %d rows", s->where,
                            rows);
    if ((rc = pg_history(s, c->now_ms, &history)) != 0)
        return rc;
    /* No backup mark to clear: PostgreSQL's backups are its own tools'. */
    snprintf(detail, sizeof(detail), "history=%.8s namespaces=%zu", c->history_id, c->n);
    return pg_audit(s, c->now_ms, c->actor, "authority.fence", "", detail);
}

static int postgres_fence(struct store *st, const struct idmint__fence_step *steps, size_t n,
                          const char *history_id, const char *actor, int64_t now_ms)
{
    struct fence_call c = {steps, n, history_id, actor, now_ms, NULL};
    int rc;

    if (n > 0 && (c.details = calloc(n, sizeof(*c.details))) == NULL)
        return idmint__fail(IDMINT_ENOMEM, "fence: out of memory");
    /* Not retried after a lost connection: a repeat would audit twice. */
    rc = pg_call((struct pg_store *)st, PG_TXN, fence_body, &c);
    free(c.details);
    return rc;
}

/* ==== history ==== */

/* Split @p text, ids separated by spaces, newest first, into out->lineage. */
static void lineage_parse(const char *text, struct idmint__history_state *out)
{
    const char *p = text;

    out->lineage_n = 0;
    while (*p != '\0' && out->lineage_n < IDMINT__LINEAGE_MAX) {
        size_t len = strcspn(p, " ");

        if (len == 32) {
            memcpy(out->lineage[out->lineage_n], p, 32);
            out->lineage[out->lineage_n++][32] = '\0';
        }
        p += len;
        p += strspn(p, " ");
    }
}

struct history_check_call {
    uint64_t seq;
    struct idmint__history_state *out;
};

static int history_check_body(struct pg_store *s, void *ctx)
{
    struct history_check_call *c = ctx;
    struct pg_args a = {.n = 0};
    PGresult *r = NULL;
    int rc, rows;

    arg_u64(&a, c->seq);
    if ((rc = pg_exec(s, ST_HISTORY_CHECK, &a, &r, "read the history")) != 0)
        return rc;
    rows = pq.ntuples(r);
    if (rows == 1 && idmint__history_id_valid(pq.getvalue(r, 0, 0))) {
        col_text(r, 0, 0, c->out->head.id, sizeof(c->out->head.id));
        col_text(r, 0, 1, c->out->store_id, sizeof(c->out->store_id));
        lineage_parse(pq.getvalue(r, 0, 2), c->out);
        c->out->head.seq = col_u64(r, 0, 3); /* NULL (an empty log) reads as 0 */
        c->out->head.tip = col_u64(r, 0, 4);
        c->out->oldest_seq = col_u64(r, 0, 5);
        c->out->tip_at_seq = col_u64(r, 0, 6);
        c->out->backup_ms = 0; /* PostgreSQL's backups are its own tools': none is marked */
    }
    pq.clear(r);
    if (rows != 1 || c->out->head.id[0] == '\0')
        return idmint__fail(IDMINT_ERESTORED,
                            "postgres %s: idmint.history holds no history id: a partial restore, "
                            "or the row was deleted; run 'idmint authority fence' on it "
                            "(docs/operations.md)",
                            s->where);
    return 0;
}

static int postgres_history_check(struct store *st, uint64_t seq, struct idmint__history_state *out)
{
    struct history_check_call c = {seq, out};

    /* A read: safe to run again after a lost connection. */
    return pg_call((struct pg_store *)st, PG_IDEMPOTENT, history_check_body, &c);
}

/* ==== records ==== */

struct record_call {
    const char *key, *value;
    char *out;
    size_t size;
    uint64_t expect, *version;
    const char *actor, *action;
    int64_t now_ms;
};

static int record_get_body(struct pg_store *s, void *ctx)
{
    struct record_call *c = ctx;
    struct pg_args a = {.n = 0};
    PGresult *r = NULL;
    int rc, rows;

    arg_text(&a, c->key);
    if ((rc = pg_exec(s, ST_RECORD_GET, &a, &r, "read a record")) != 0)
        return rc;
    if ((rows = pq.ntuples(r)) == 1) {
        col_text(r, 0, 0, c->out, c->size);
        *c->version = col_u64(r, 0, 1);
    }
    pq.clear(r);
    if (rows != 1)
        return idmint__fail(IDMINT_ENOTFOUND, "postgres %s: no record '%s'", s->where, c->key);
    return 0;
}

static int postgres_record_get(struct store *st, const char *key, char *value, size_t size,
                               uint64_t *version)
{
    struct record_call c = {.key = key, .out = value, .size = size, .version = version};

    return pg_call((struct pg_store *)st, PG_IDEMPOTENT, record_get_body, &c);
}

static int record_put_body(struct pg_store *s, void *ctx)
{
    const struct record_call *c = ctx;
    struct pg_args a = {.n = 0};
    uint64_t changed = 0;
    int rc;

    arg_text(&a, c->key);
    arg_text(&a, c->value);
    arg_i64(&a, c->now_ms);
    if (c->expect != 0)
        arg_u64(&a, c->expect);
    rc = pg_run(s, c->expect == 0 ? ST_RECORD_INSERT : ST_RECORD_UPDATE, &a, &changed,
                "write a record");
    if (rc == 0 && changed == 0)
        rc = idmint__fail(IDMINT_ECONFLICT,
                          "postgres %s: record '%s' changed since it was read (another writer)",
                          s->where, c->key);
    if (rc == 0)
        rc = pg_audit(s, c->now_ms, c->actor, c->action, "", c->value);
    return rc;
}

static int postgres_record_put(struct store *st, const char *key, const char *value,
                               uint64_t expect, const char *actor, const char *action,
                               int64_t now_ms)
{
    struct record_call c = {.key = key,
                            .value = value,
                            .expect = expect,
                            .actor = actor,
                            .action = action,
                            .now_ms = now_ms};

    return pg_call((struct pg_store *)st, PG_TXN, record_put_body, &c);
}

/* ==== audit ==== */

static void audit_row(const PGresult *r, int row, void *out)
{
    idmint_audit_entry *e = out;

    e->seq = col_i64(r, row, 0);
    e->at_ms = col_i64(r, row, 1);
    col_text(r, row, 2, e->actor, sizeof(e->actor));
    col_text(r, row, 3, e->action, sizeof(e->action));
    col_text(r, row, 4, e->ns, sizeof(e->ns));
    col_text(r, row, 5, e->detail, sizeof(e->detail));
}

static int postgres_audit_list(struct store *st, int64_t after_seq, size_t limit,
                               idmint_audit_entry **out, size_t *n)
{
    struct list_call c = {.stmt = ST_AUDIT_LIST,
                          .what = "list audit records",
                          .elem_size = sizeof(**out),
                          .from_row = audit_row};
    void *list;
    int rc;

    arg_i64(&c.args, after_seq);
    arg_i64(&c.args, limit > (size_t)INT64_MAX ? INT64_MAX : (int64_t)limit);
    if ((rc = pg_list(st, &c, &list, n)) == 0)
        *out = list;
    return rc;
}

/* ==== version 4: trace, prune, batches, collisions ==== */

static void grant_row(const PGresult *r, int row, void *out)
{
    idmint_grant_info *g = out;

    g->size = sizeof(*g);
    g->region = (uint32_t)col_u64(r, row, 0);
    g->worker_id = (uint32_t)col_u64(r, row, 1);
    g->generation = col_u64(r, row, 2);
    g->first = col_u64(r, row, 3);
    g->last = col_u64(r, row, 4);
    col_text(r, row, 5, g->holder, sizeof(g->holder));
    col_text(r, row, 6, g->host, sizeof(g->host));
    g->pid = (uint32_t)col_u64(r, row, 7);
    col_text(r, row, 8, g->program, sizeof(g->program));
    col_text(r, row, 9, g->token, sizeof(g->token));
    g->granted_ms = col_i64(r, row, 10);
    g->updated_ms = col_i64(r, row, 11);
}

static int postgres_grant_find(struct store *st, const char *ns,
                               const struct idmint__grant_query *q, idmint_grant_info **out,
                               size_t *n)
{
    int is_range = q->kind == IDMINT_KIND_RANGE;
    struct list_call c = {.stmt = is_range ? ST_RGRANT_FIND : ST_WGRANT_FIND,
                          .what = "find grants",
                          .elem_size = sizeof(**out),
                          .from_row = grant_row};
    idmint_grant_info *list;
    void *raw = NULL;
    size_t count = 0;
    int rc;

    arg_text(&c.args, ns);
    if (is_range) {
        arg_u64(&c.args, q->value);
    } else {
        arg_u64(&c.args, q->region);
        arg_u64(&c.args, q->worker_id);
        arg_u64(&c.args, q->unit);
    }
    if ((rc = pg_list(st, &c, &raw, &count)) != 0)
        return rc;
    list = raw;
    if (is_range)
        idmint__store_grants_covering(list, &count, q->value);
    else
        for (size_t i = 0; i < count; i++)
            list[i].kind = IDMINT_KIND_SNOWFLAKE;
    if (count == 0) {
        free(list);
        list = NULL;
    }
    *out = list;
    *n = count;
    return 0;
}

struct prune_call {
    enum pg_stmt_id stmt;
    int64_t before_ms; /* grants only: batches and collisions expire by the server's clock */
    size_t limit;
    uint64_t pruned;
};

static int prune_body(struct pg_store *s, void *ctx)
{
    struct prune_call *c = ctx;
    struct pg_args a = {.n = 0};

    c->pruned = 0;
    if (c->stmt != ST_PRUNE_BATCHES && c->stmt != ST_PRUNE_COLLISIONS)
        arg_i64(&a, c->before_ms);
    arg_u64(&a, c->limit);
    return pg_run(s, c->stmt, &a, &c->pruned, "prune old records");
}

static int postgres_prune(struct store *st, int what, int64_t before_ms, size_t limit,
                          uint64_t *pruned)
{
    static const enum pg_stmt_id stmt[IDMINT__KEEP__COUNT] = {
        [IDMINT__KEEP_WORKER_GRANTS] = ST_PRUNE_WGRANTS,
        [IDMINT__KEEP_RANGE_GRANTS] = ST_PRUNE_RGRANTS,
        [IDMINT__KEEP_BATCHES] = ST_PRUNE_BATCHES,
        [IDMINT__KEEP_COLLISIONS] = ST_PRUNE_COLLISIONS,
    };
    struct prune_call c = {stmt[what], before_ms, limit, 0};
    /* One statement. Not retried after a lost connection: a repeat of one
     * that committed would delete up to @p limit more and count only those. */
    int rc = pg_call((struct pg_store *)st, 0, prune_body, &c);

    if (rc == 0 && pruned != NULL)
        *pruned = c.pruned;
    return rc;
}

/* Read the batch of (@p owner, @p key) into @p out (runs malloc'd): 1, 0 when none, else an error.
 */
static int batch_read(struct pg_store *s, const char *owner, const char *key,
                      struct idmint__batch *out)
{
    struct pg_args a = {.n = 0};
    PGresult *r = NULL;
    int rc;

    arg_text(&a, owner);
    arg_text(&a, key);
    if ((rc = pg_exec(s, ST_BATCH_GET, &a, &r, "read batch")) != 0)
        return rc;
    if (pq.ntuples(r) != 1) {
        pq.clear(r);
        return 0;
    }
    col_text(r, 0, 0, out->ns, sizeof(out->ns));
    col_text(r, 0, 1, out->key, sizeof(out->key));
    col_text(r, 0, 2, out->owner, sizeof(out->owner));
    out->count = (uint32_t)col_u64(r, 0, 3);
    out->created_ms = col_i64(r, 0, 5);
    out->expires_ms = col_i64(r, 0, 6);
    free(out->runs);
    out->runs = strdup(pq.getvalue(r, 0, 4));
    pq.clear(r);
    if (out->runs == NULL)
        return idmint__fail(IDMINT_ENOMEM, "out of memory reading batch '%s'", key);
    return 1;
}

struct batch_get_call {
    const char *owner;
    const char *key;
    struct idmint__batch *out;
};

static int batch_get_body(struct pg_store *s, void *ctx)
{
    struct batch_get_call *c = ctx;
    int rc = batch_read(s, c->owner, c->key, c->out);

    if (rc == 0)
        return idmint__fail(IDMINT_ENOTFOUND, "no batch was saved under key '%s'", c->key);
    return rc < 0 ? rc : 0;
}

static int postgres_batch_get(struct store *st, const char *owner, const char *key,
                              struct idmint__batch *out)
{
    struct batch_get_call c = {owner, key, out};
    int rc = pg_call((struct pg_store *)st, PG_IDEMPOTENT, batch_get_body, &c);

    if (rc != 0)
        idmint__batch_clear(out);
    return rc;
}

struct batch_claim_call {
    const struct idmint__batch *b;
    struct idmint__batch *saved;
    int inserted;
    unsigned runs; /* of the body: above 1, an earlier one may have committed unseen */
};

/* Whether the stored batch @p saved is @p b itself: the runs are IDs, and no two mints share one.
 */
static int batch_same(const struct idmint__batch *b, const struct idmint__batch *saved)
{
    return saved->count == b->count && strcmp(saved->runs, b->runs) == 0;
}

static int batch_claim_body(struct pg_store *s, void *ctx)
{
    struct batch_claim_call *c = ctx;
    const struct idmint__batch *b = c->b;
    struct pg_args a = {.n = 0};
    uint64_t changed = 0;
    int rc;

    c->inserted = 0;
    c->runs++;
    arg_text(&a, b->ns);
    arg_text(&a, b->key);
    arg_text(&a, b->owner);
    arg_u64(&a, b->count);
    arg_text(&a, b->runs);
    arg_i64(&a, b->keep_ms);
    if ((rc = pg_run(s, ST_BATCH_INSERT, &a, &changed, "save batch")) != 0)
        return rc;
    /* Read committed: this statement sees the row that made ours do nothing. */
    if ((rc = batch_read(s, b->owner, b->key, c->saved)) < 0)
        return rc;
    if (rc == 0) {
        s->failure = PGF_TRANSIENT; /* pruned in between: claim again */
        return idmint__fail(IDMINT_EUNAVAILABLE,
                            "postgres %s: batch '%s' of namespace '%s' vanished during the call",
                            s->where, b->key, b->ns);
    }
    /* A repeat after a lost reply finds the row its first run committed. */
    c->inserted = changed == 1 || (c->runs > 1 && batch_same(b, c->saved));
    return 0;
}

static int postgres_batch_claim(struct store *st, const struct idmint__batch *b,
                                struct idmint__batch *saved, int *inserted)
{
    struct batch_claim_call c = {b, saved, 0, 0};
    /* Insert if absent, then read: a repeat returns what is stored, safe to retry. */
    int rc = pg_call((struct pg_store *)st, PG_TXN | PG_IDEMPOTENT, batch_claim_body, &c);

    if (rc != 0) {
        idmint__batch_clear(saved);
        return rc;
    }
    *inserted = c.inserted;
    return 0;
}

struct collision_call {
    const idmint_collision *c;
    const char *actor;
    int64_t now_ms;
    int64_t keep_ms;
    idmint_collision *saved;
    int inserted;
};

static void collision_row(const PGresult *r, int row, void *out);

static int collision_body(struct pg_store *s, void *ctx)
{
    struct collision_call *cc = ctx;
    const idmint_collision *c = cc->c;
    struct pg_args a = {.n = 0};
    PGresult *r = NULL;
    char detail[256];
    int rc, rows;

    arg_text(&a, c->ns);
    arg_u64(&a, c->id);
    arg_text(&a, c->first_owner);
    arg_text(&a, c->second_owner);
    arg_text(&a, c->verdict);
    arg_text(&a, c->reporter);
    arg_i64(&a, c->observed_ms);
    arg_i64(&a, cc->now_ms);
    arg_text(&a, c->note);
    arg_i64(&a, cc->keep_ms);
    if ((rc = pg_exec(s, ST_COLLISION_INSERT, &a, &r, "record collision")) != 0)
        return rc;
    cc->inserted = pq.ntuples(r) == 1; /* none: (ns, id, reporter) was reported before */
    pq.clear(r);
    a.n = 0;
    arg_text(&a, c->ns);
    arg_u64(&a, c->id);
    arg_text(&a, c->reporter);
    if ((rc = pg_exec(s, ST_COLLISION_FIND, &a, &r, "find collision")) != 0)
        return rc;
    if ((rows = pq.ntuples(r)) == 1) {
        memset(cc->saved, 0, sizeof(*cc->saved));
        collision_row(r, 0, cc->saved);
    }
    pq.clear(r);
    if (rows != 1)
        return idmint__fail(IDMINT_ESTORE, "postgres %s: find collision returned %d rows", s->where,
                            rows);
    if (!cc->inserted)
        return 0;
    idmint__store_collision_detail(c, detail, sizeof(detail));
    return pg_audit(s, cc->now_ms, cc->actor, "collision.report", c->ns, detail);
}

static int postgres_collision_add(struct store *st, const idmint_collision *c, const char *actor,
                                  int64_t now_ms, int64_t keep_ms, idmint_collision *saved,
                                  int *inserted)
{
    struct collision_call cc = {c, actor, now_ms, keep_ms, saved, 0};
    /* Not retried after a lost connection: a repeat would find its own record as a repeat. */
    int rc = pg_call((struct pg_store *)st, PG_TXN, collision_body, &cc);

    if (rc == 0)
        *inserted = cc.inserted;
    return rc;
}

static void collision_row(const PGresult *r, int row, void *out)
{
    idmint_collision *c = out;

    c->size = sizeof(*c);
    c->seq = col_i64(r, row, 0);
    col_text(r, row, 1, c->ns, sizeof(c->ns));
    c->id = col_u64(r, row, 2);
    col_text(r, row, 3, c->first_owner, sizeof(c->first_owner));
    col_text(r, row, 4, c->second_owner, sizeof(c->second_owner));
    col_text(r, row, 5, c->verdict, sizeof(c->verdict));
    col_text(r, row, 6, c->reporter, sizeof(c->reporter));
    c->observed_ms = col_i64(r, row, 7);
    c->reported_ms = col_i64(r, row, 8);
    col_text(r, row, 9, c->note, sizeof(c->note));
}

static int postgres_collision_list(struct store *st, int64_t after_seq, size_t limit,
                                   idmint_collision **out, size_t *n)
{
    struct list_call c = {.stmt = ST_COLLISION_LIST,
                          .what = "list collisions",
                          .elem_size = sizeof(**out),
                          .from_row = collision_row};
    void *list;
    int rc;

    arg_i64(&c.args, after_seq);
    arg_i64(&c.args, limit > (size_t)INT64_MAX ? INT64_MAX : (int64_t)limit);
    if ((rc = pg_list(st, &c, &list, n)) == 0)
        *out = list;
    return rc;
}

/*
 * The server and database the connection reached (never the password),
 * one spelling for both schemes, a URL and a key=value string alike.
 */
static int postgres_location(const struct store *st, char *buf, size_t size)
{
    const struct pg_store *s = (const struct pg_store *)st;
    int n = snprintf(buf, size, "postgres://%s", s->where);

    if (n < 0 || (size_t)n >= size)
        return idmint__fail(IDMINT_EINVAL, "postgres %s: too long for a location key", s->where);
    return 0;
}

/* Two schemes, one backend: libpq accepts both URL spellings. */
#define PG_OPS(scheme_name, open_fn)                                                               \
    {                                                                                              \
        .version = STORE_OPS_V8, .scheme = scheme_name, .caps = STORE_CAP_TXN, .open = open_fn,    \
        .close = postgres_close, .ns_create = postgres_ns_create, .ns_get = postgres_ns_get,       \
        .ns_list = postgres_ns_list, .ns_set_disabled = postgres_ns_set_disabled,                  \
        .lease_take = postgres_lease_take, .lease_renew = postgres_lease_renew,                    \
        .lease_release = postgres_lease_release, .lease_list = postgres_lease_list,                \
        .lease_force_release = postgres_lease_force_release,                                       \
        .range_reserve = postgres_range_reserve, .audit_list = postgres_audit_list,                \
        .range_forget = postgres_range_forget, .backup = NULL, .fence = postgres_fence,            \
        .grant_find = postgres_grant_find, .prune = postgres_prune,                                \
        .batch_get = postgres_batch_get, .batch_claim = postgres_batch_claim,                      \
        .collision_add = postgres_collision_add, .collision_list = postgres_collision_list,        \
        .history_check = postgres_history_check, .location = postgres_location,                    \
        .record_get = postgres_record_get, .record_put = postgres_record_put,                      \
    }

const struct store_ops idmint__store_postgres = PG_OPS("postgres", postgres_open);
const struct store_ops idmint__store_postgresql = PG_OPS("postgresql", postgresql_open);
