/* SPDX-License-Identifier: Apache-2.0 */
/*
 * SQLite backend ("sqlite:PATH", or a "file:" URI). One database file shared
 * by every process on the machine: WAL with synchronous=FULL so that a
 * committed reservation survives power loss, and every write in BEGIN
 * IMMEDIATE so processes queue on the write lock instead of failing on a
 * lock upgrade. A new file appears at its path complete or not at all, and
 * a write refuses a file that was removed or replaced under it. The only
 * file that includes sqlite3.h. No namespace rules.
 */
#include "sqlite_queue.h"
#include "store.h"
#include "internal.h"

#include <sqlite3.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SQ_BUSY_TIMEOUT_MS    5000 /* wait for a lock, per statement */
/* A waiter retries the lock after 1-2 ms; once it has waited 50 ms, after
 * 0.2-0.4 ms, so that it takes the lock before those that came later. */
#define SQ_BUSY_SLEEP_US      1000
#define SQ_BUSY_AGED_MS       50
#define SQ_BUSY_AGED_SLEEP_US 200
#define SQ_RETRY_MS           10000 /* our extra bound on retrying BEGIN on SQLITE_BUSY */
/* 2: worker_leases.fence; 3: history, floor, origin; 4: provenance; 5: batches by owner and
 * key, expiring by the store's clock; collisions deduplicated and expiring; 6: history log,
 * store id */
#define SQ_SCHEMA_VERSION     7
#define SQ_GRANT_SCAN         16 /* range grants read below a traced value */
/* Owner and group read and write, never others: the authority is one file
 * for every user of a machine who mints, shared through its folder's group
 * (docs/install.md); a root that creates it first must not lock them out. */
#define SQ_FILE_MODE          0660
#define SQ_LOG_PRUNE          8   /* history log entries one write deletes at most */
#define SQ_LINEAGE_CHARS      263 /* IDMINT__LINEAGE_MAX ids of 32 digits, a space between */
_Static_assert(SQ_LINEAGE_CHARS == IDMINT__LINEAGE_MAX * 33 - 1, "lineage length");

/* ==== statements ==== */

enum sq_stmt_id {
    ST_BEGIN,
    ST_COMMIT,
    ST_ROLLBACK,
    ST_VERSION,
    ST_NS_INSERT,
    ST_NS_GET,
    ST_NS_LIST,
    ST_NS_DISABLE,
    ST_NS_ADVANCE,
    ST_AUDIT_INSERT,
    ST_AUDIT_LIST,
    ST_LEASE_FREE,
    ST_LEASE_COUNT,
    ST_LEASE_TAKE,
    ST_LEASE_INSERT,
    ST_LEASE_RENEW,
    ST_LEASE_RELEASE,
    ST_LEASE_GET,
    ST_LEASE_FORCE,
    ST_LEASE_LIST,
    ST_RANGE_FIND,
    ST_RANGE_INSERT,
    ST_RANGE_FORGET,
    ST_HISTORY_BUMP,
    ST_HISTORY_HEAD,
    ST_HISTORY_FENCE,
    ST_HISTORY_LOG,
    ST_HISTORY_PRUNE,
    ST_HISTORY_CHECK,
    ST_NS_LEASE_MAX,
    ST_NS_LEASE_MAX_GET,
    ST_NS_FENCE,
    ST_WGRANT_INSERT,
    ST_WGRANT_UPDATE,
    ST_WGRANT_FIND,
    ST_RGRANT_INSERT,
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

#define SQ_STR_(x) #x
#define SQ_STR(x)  SQ_STR_(x)
#define GRANT_COLUMNS                                                                              \
    "region, worker_id, generation, first, last, holder, host, pid, program, token, granted_ms, "  \
    "updated_ms"

/*
 * The store's clock: SQLite's own 'now' (the host's wall clock, which every
 * process on the file shares), in Unix ms. The same for every use within
 * one statement step. Retention of batches and collision records is
 * counted on it, never on a caller's now_ms.
 */
#define SQ_NOW_MS "CAST(round((julianday('now') - 2440587.5) * 86400000.0) AS INTEGER)"

#define COLLISION_COLUMNS                                                                          \
    "seq, namespace, id, first_owner, second_owner, verdict, reporter, observed_ms, "              \
    "reported_ms, note"

#define NS_COLUMNS                                                                                 \
    "name, kind, time_bits, region_bits, worker_bits, sequence_bits, unit_ms, epoch_ms, "          \
    "next_value, max_value, block, max_block, disabled, created_ms, floor, origin"

static const char *const sq_sql[ST__COUNT] = {
    [ST_BEGIN] = "BEGIN IMMEDIATE",
    [ST_COMMIT] = "COMMIT",
    [ST_ROLLBACK] = "ROLLBACK",
    [ST_VERSION] = "SELECT version FROM schema_version",
    [ST_NS_INSERT] =
        "INSERT INTO namespaces (" NS_COLUMNS ") "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
    [ST_NS_GET] = "SELECT " NS_COLUMNS " FROM namespaces WHERE name = ?1",
    [ST_NS_LIST] = "SELECT " NS_COLUMNS " FROM namespaces ORDER BY name",
    [ST_NS_DISABLE] = "UPDATE namespaces SET disabled = ?2 WHERE name = ?1",
    [ST_NS_ADVANCE] = "UPDATE namespaces SET next_value = ?2 WHERE name = ?1",
    [ST_AUDIT_INSERT] = "INSERT INTO audit (at_ms, actor, action, namespace, detail) "
                        "VALUES (?1, ?2, ?3, ?4, ?5)",
    [ST_AUDIT_LIST] = "SELECT seq, at_ms, actor, action, namespace, detail FROM audit "
                      "WHERE seq > ?1 ORDER BY seq LIMIT ?2",
    /* An id whose E has passed first; one still fenced (released early by a
     * clock running ahead) only when no new id is left, soonest E first:
     * its taker must wait for the clock to pass that E. */
    [ST_LEASE_FREE] = "SELECT worker_id, generation, lease_until FROM worker_leases "
                      "WHERE namespace = ?1 AND region = ?2 AND worker_id < ?3 "
                      "AND (holder = '' OR lease_until < ?4) AND (lease_until < ?4 OR "
                      "(SELECT count(*) FROM worker_leases WHERE namespace = ?1 AND region = ?2) "
                      ">= ?3) ORDER BY lease_until >= ?4, lease_until, worker_id LIMIT 1",
    [ST_LEASE_COUNT] = "SELECT count(*) FROM worker_leases WHERE namespace = ?1 AND region = ?2",
    /* The E found becomes the take's fence (SET reads the old row). */
    [ST_LEASE_TAKE] = "UPDATE worker_leases SET holder = ?4, generation = ?5, lease_until = ?6, "
                      "fence = lease_until WHERE namespace = ?1 AND region = ?2 AND worker_id = ?3",
    [ST_LEASE_INSERT] = "INSERT INTO worker_leases "
                        "(namespace, region, worker_id, holder, generation, lease_until, fence) "
                        "VALUES (?1, ?2, ?3, ?4, 1, ?5, 0)",
    [ST_LEASE_RENEW] = "UPDATE worker_leases SET lease_until = max(lease_until, ?6) "
                       "WHERE namespace = ?1 AND region = ?2 AND worker_id = ?3 "
#ifndef IDMINT_MUTANT_NO_HOLDER_CHECK
                       "AND holder = ?4 AND generation = ?5 AND NOT EXISTS (SELECT 1 FROM "
#else /* a planted wrong rule the simulator must catch (tests/sim): any holder renews */
                       "AND ?4 IS NOT NULL AND ?5 IS NOT NULL AND NOT EXISTS (SELECT 1 FROM "
#endif
                       "namespaces WHERE name = ?1 AND disabled != 0) RETURNING lease_until",
/* Never below the fence (what the previous holder may have minted), never
 * above the holder's own E: the clamp is here, whatever the caller sends. */
#ifndef IDMINT_MUTANT_RELEASE_TRUSTED
    [ST_LEASE_RELEASE] = "UPDATE worker_leases SET lease_until = min(max(?6, fence), lease_until), "
#else /* planted for tests/sim: the holder's final time taken as it comes */
    [ST_LEASE_RELEASE] = "UPDATE worker_leases SET lease_until = ?6, "
#endif
                         "holder = '' WHERE namespace = ?1 AND region = ?2 AND worker_id = ?3 "
                         "AND holder = ?4 AND generation = ?5 RETURNING lease_until",
    [ST_LEASE_GET] = "SELECT holder, generation, lease_until FROM worker_leases "
                     "WHERE namespace = ?1 AND region = ?2 AND worker_id = ?3",
    [ST_LEASE_FORCE] = "UPDATE worker_leases SET holder = '', generation = generation + 1, "
                       "lease_until = min(lease_until, ?4), fence = min(lease_until, ?4) "
                       "WHERE namespace = ?1 AND region = ?2 AND worker_id = ?3 "
                       "RETURNING lease_until",
    [ST_LEASE_LIST] = "SELECT region, worker_id, holder, generation, lease_until "
                      "FROM worker_leases WHERE namespace = ?1 ORDER BY region, worker_id",
    [ST_RANGE_FIND] = "SELECT count, start, \"end\", hseq, htip FROM range_leases "
                      "WHERE namespace = ?1 AND incarnation = ?2 AND request_id = ?3",
    [ST_RANGE_INSERT] = "INSERT INTO range_leases (namespace, incarnation, request_id, count, "
                        "start, \"end\", created_ms, hseq, htip) "
                        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    /* BINARY collation: byte order, the order of a supply's request ids. */
    [ST_RANGE_FORGET] = "DELETE FROM range_leases "
                        "WHERE namespace = ?1 AND incarnation = ?2 AND request_id < ?3",
    /* Inside every granting transaction: the counter grows, then the mark is
     * read. Two statements, not one UPDATE ... RETURNING: SQLite's RETURNING
     * costs about 14 us more on every grant (measured in idmint_bench's
     * fixed-block range case, where a reservation takes about 300 us). */
    [ST_HISTORY_BUMP] = "UPDATE history SET seq = seq + 1, tip = ?1",
    [ST_HISTORY_HEAD] = "SELECT id, seq, backup_ms FROM history",
    /* The id replaced goes first in the lineage, which keeps IDMINT__LINEAGE_MAX ids. */
    [ST_HISTORY_FENCE] =
        "UPDATE history SET lineage = substr(trim(id || ' ' || lineage), 1, " SQ_STR(
            SQ_LINEAGE_CHARS) "), id = ?1, backup_ms = 0, seq = seq + 1, "
                              "tip = ?2 RETURNING seq",
    [ST_HISTORY_LOG] = "INSERT OR REPLACE INTO history_log (seq, tip, at_ms) VALUES (?1, ?2, ?3)",
    /* Only what is both old and far behind: a process checks its seq every
     * second or so, and a host's witness may be a day old. Among the oldest
     * few only, so that a write never scans the log. */
    [ST_HISTORY_PRUNE] = "DELETE FROM history_log WHERE seq IN (SELECT seq FROM (SELECT seq, at_ms "
                         "FROM history_log ORDER BY seq LIMIT " SQ_STR(
                             SQ_LOG_PRUNE) ") "
                                           "WHERE seq < ?1 AND at_ms < ?2)",
    /* One statement, one snapshot: the head and the log agree. */
    [ST_RECORD_GET] = "SELECT value, version FROM records WHERE key = ?1",
    [ST_RECORD_INSERT] = "INSERT INTO records (key, value, version, updated_ms) "
                         "VALUES (?1, ?2, 1, ?3) ON CONFLICT (key) DO NOTHING",
    [ST_RECORD_UPDATE] = "UPDATE records SET value = ?2, version = version + 1, updated_ms = ?3 "
                         "WHERE key = ?1 AND version = ?4",
    [ST_HISTORY_CHECK] = "SELECT id, seq, tip, backup_ms, store_id, lineage, "
                         "(SELECT min(seq) FROM history_log), "
                         "(SELECT tip FROM history_log WHERE seq = ?1) FROM history",
    [ST_NS_LEASE_MAX_GET] = "SELECT max_lease_units FROM namespaces WHERE name = ?1",
    [ST_NS_LEASE_MAX] = "UPDATE namespaces SET max_lease_units = ?2 WHERE name = ?1 AND "
                        "max_lease_units < ?2",
    [ST_NS_FENCE] = "UPDATE namespaces SET floor = max(floor, ?2), next_value = ?3 WHERE name = ?1",
    [ST_WGRANT_INSERT] = "INSERT INTO worker_grants (namespace, region, worker_id, generation, "
                         "holder, host, pid, program, token, first, last, granted_ms, updated_ms) "
                         "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?12)",
    [ST_WGRANT_UPDATE] = "UPDATE worker_grants SET last = ?5, updated_ms = ?6 WHERE namespace = ?1 "
                         "AND region = ?2 AND worker_id = ?3 AND generation = ?4",
    [ST_WGRANT_FIND] = "SELECT " GRANT_COLUMNS " FROM worker_grants WHERE namespace = ?1 "
                       "AND region = ?2 AND worker_id = ?3 AND first <= ?4 AND last > ?4 "
                       "ORDER BY granted_ms, generation LIMIT " SQ_STR(STORE_GRANTS_MAX),
    [ST_RGRANT_INSERT] = "INSERT INTO range_grants (namespace, start, \"end\", holder, host, pid, "
                         "program, token, granted_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    /* Ranges never overlap, so the one holding a value starts at or below it,
     * latest first; a few more below show an overlap a faulty store made. */
    [ST_RGRANT_FIND] = "SELECT 0, 0, 0, start, \"end\", holder, host, pid, program, token, "
                       "granted_ms, granted_ms FROM range_grants WHERE namespace = ?1 "
                       "AND start <= ?2 ORDER BY start DESC LIMIT " SQ_STR(SQ_GRANT_SCAN),
    [ST_PRUNE_WGRANTS] = "DELETE FROM worker_grants WHERE rowid IN (SELECT rowid FROM "
                         "worker_grants WHERE updated_ms < ?1 ORDER BY updated_ms LIMIT ?2)",
    [ST_PRUNE_RGRANTS] = "DELETE FROM range_grants WHERE rowid IN (SELECT rowid FROM "
                         "range_grants WHERE granted_ms < ?1 ORDER BY granted_ms LIMIT ?2)",
    /* ?1 (the caller's clock) is bound but unused: the expiry is the store's. */
    [ST_PRUNE_BATCHES] = "DELETE FROM batches WHERE rowid IN (SELECT rowid FROM batches "
                         "WHERE expires_ms < " SQ_NOW_MS " ORDER BY expires_ms LIMIT ?2)",
    [ST_PRUNE_COLLISIONS] = "DELETE FROM collisions WHERE rowid IN (SELECT rowid FROM collisions "
                            "WHERE expires_ms < " SQ_NOW_MS " ORDER BY expires_ms LIMIT ?2)",
    [ST_BATCH_GET] = "SELECT namespace, key, owner, count, runs, created_ms, expires_ms "
                     "FROM batches WHERE owner = ?1 AND key = ?2",
    [ST_BATCH_INSERT] = "INSERT INTO batches (namespace, key, owner, count, runs, created_ms, "
                        "expires_ms) VALUES (?1, ?2, ?3, ?4, ?5, " SQ_NOW_MS ", " SQ_NOW_MS
                        " + ?6) ON CONFLICT DO NOTHING",
    [ST_COLLISION_INSERT] = "INSERT INTO collisions (namespace, id, first_owner, second_owner, "
                            "verdict, reporter, observed_ms, reported_ms, note, expires_ms) "
                            "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, " SQ_NOW_MS " + ?10) "
                            "ON CONFLICT (namespace, id, reporter) DO NOTHING RETURNING seq",
    [ST_COLLISION_FIND] = "SELECT " COLLISION_COLUMNS " FROM collisions "
                          "WHERE namespace = ?1 AND id = ?2 AND reporter = ?3",
    [ST_COLLISION_LIST] = "SELECT " COLLISION_COLUMNS " FROM collisions "
                          "WHERE seq > ?1 ORDER BY seq LIMIT ?2",
};

#define SQ_V4_TABLES                                                                               \
    "CREATE TABLE worker_grants ("                                                                 \
    " namespace TEXT NOT NULL, region INTEGER NOT NULL, worker_id INTEGER NOT NULL,"               \
    " generation INTEGER NOT NULL, holder TEXT NOT NULL, host TEXT NOT NULL,"                      \
    " pid INTEGER NOT NULL, program TEXT NOT NULL, token TEXT NOT NULL,"                           \
    " first INTEGER NOT NULL, last INTEGER NOT NULL,"                                              \
    " granted_ms INTEGER NOT NULL, updated_ms INTEGER NOT NULL);"                                  \
    "CREATE UNIQUE INDEX worker_grants_key ON worker_grants"                                       \
    " (namespace, region, worker_id, generation);"                                                 \
    "CREATE INDEX worker_grants_age ON worker_grants (updated_ms);"                                \
    "CREATE TABLE range_grants ("                                                                  \
    " namespace TEXT NOT NULL, start INTEGER NOT NULL, \"end\" INTEGER NOT NULL,"                  \
    " holder TEXT NOT NULL, host TEXT NOT NULL, pid INTEGER NOT NULL,"                             \
    " program TEXT NOT NULL, token TEXT NOT NULL, granted_ms INTEGER NOT NULL);"                   \
    "CREATE INDEX range_grants_at ON range_grants (namespace, start);"                             \
    "CREATE INDEX range_grants_age ON range_grants (granted_ms);"                                  \
    "CREATE TABLE batches ("                                                                       \
    " namespace TEXT NOT NULL, key TEXT NOT NULL, owner TEXT NOT NULL, count INTEGER NOT NULL,"    \
    " runs TEXT NOT NULL, created_ms INTEGER NOT NULL, PRIMARY KEY (key));"                        \
    "CREATE INDEX batches_age ON batches (created_ms);"                                            \
    "CREATE TABLE collisions ("                                                                    \
    " seq INTEGER PRIMARY KEY AUTOINCREMENT, namespace TEXT NOT NULL, id INTEGER NOT NULL,"        \
    " first_owner TEXT NOT NULL, second_owner TEXT NOT NULL, verdict TEXT NOT NULL,"               \
    " reporter TEXT NOT NULL, observed_ms INTEGER NOT NULL, reported_ms INTEGER NOT NULL,"         \
    " note TEXT NOT NULL);"

/*
 * Version 4 to 5. A batch is keyed by (owner, key), so that one caller's
 * key never blocks another's, and carries its expiry by the store's clock;
 * SQLite cannot change a primary key in place, so the table is copied.
 * Batches and collision records saved before get the default retention
 * (IDMINT__KEEP_BATCHES_MS, IDMINT__KEEP_COLLISIONS_MS) from the stamp
 * they had. Collisions repeated by the same reporter are
 * folded into the first (each report stays in the audit log), so that the
 * unique index that deduplicates them from now on can be made.
 */
#define SQ_MIGRATE_4_SQL                                                                           \
    "CREATE TABLE batches_v5 ("                                                                    \
    " namespace TEXT NOT NULL, key TEXT NOT NULL, owner TEXT NOT NULL, count INTEGER NOT NULL,"    \
    " runs TEXT NOT NULL, created_ms INTEGER NOT NULL, expires_ms INTEGER NOT NULL,"               \
    " PRIMARY KEY (owner, key));"                                                                  \
    "INSERT INTO batches_v5 SELECT namespace, key, owner, count, runs, created_ms,"                \
    " created_ms + 86400000 FROM batches;"                                                         \
    "DROP TABLE batches;"                                                                          \
    "ALTER TABLE batches_v5 RENAME TO batches;"                                                    \
    "CREATE INDEX batches_expiry ON batches (expires_ms);"                                         \
    "DELETE FROM collisions WHERE seq NOT IN"                                                      \
    " (SELECT min(seq) FROM collisions GROUP BY namespace, id, reporter);"                         \
    "ALTER TABLE collisions ADD COLUMN expires_ms INTEGER NOT NULL DEFAULT 0;"                     \
    "UPDATE collisions SET expires_ms = reported_ms + 2592000000;"                                 \
    "CREATE UNIQUE INDEX collisions_report ON collisions (namespace, id, reporter);"               \
    "CREATE INDEX collisions_expiry ON collisions (expires_ms);"                                   \
    "UPDATE schema_version SET version = 5;"

/*
 * Version 6: the history log (src/history.c: a restored store reuses seq
 * numbers with other tips), the store's identity and lineage (the history
 * ids fenced over, newest first), and each namespace's longest lease.
 */
#define SQ_V6_CHANGES                                                                              \
    "ALTER TABLE history ADD COLUMN tip INTEGER NOT NULL DEFAULT 0;"                               \
    "ALTER TABLE history ADD COLUMN store_id TEXT NOT NULL DEFAULT '';"                            \
    "ALTER TABLE history ADD COLUMN lineage TEXT NOT NULL DEFAULT '';"                             \
    "ALTER TABLE namespaces ADD COLUMN max_lease_units INTEGER NOT NULL DEFAULT 0;"                \
    "ALTER TABLE range_leases ADD COLUMN hseq INTEGER NOT NULL DEFAULT 0;"                         \
    "ALTER TABLE range_leases ADD COLUMN htip INTEGER NOT NULL DEFAULT 0;"                         \
    "CREATE TABLE history_log (seq INTEGER PRIMARY KEY, tip INTEGER NOT NULL,"                     \
    " at_ms INTEGER NOT NULL);"

/*
 * Version 5 to 6: the new columns and the log, then (sq_identity_sql) a
 * store id and a first tip. Namespaces start with no longest lease known:
 * a fence then cannot refuse a short --max-lease for leases granted before
 * the upgrade, and docs/operations.md says so.
 */
static const char sq_migrate_5_sql[] = SQ_V6_CHANGES "UPDATE schema_version SET version = 6;";

/* Version 6 to 7: records (store.h, version 8: region claims). */
static const char sq_migrate_6_sql[] =
    "CREATE TABLE records (key TEXT PRIMARY KEY, value TEXT NOT NULL,"
    " version INTEGER NOT NULL, updated_ms INTEGER NOT NULL);"
    "UPDATE schema_version SET version = 7;";

/*
 * Written into a private temporary file that is then linked into place
 * (sq_create_file), so no process ever sees a half-made authority. Rows are
 * never deleted: worker ids are handed out in order and a new id is the row
 * count. fence comes last, where the migration from version 1 adds it.
 * Schema 5, then sq_migrate_5_sql and sq_migrate_6_sql in the same transaction (sq_fill_new): one
 * string would be longer than C compilers must support.
 */
static const char sq_schema_sql[] =
    "CREATE TABLE schema_version (version INTEGER NOT NULL);"
    "CREATE TABLE namespaces ("
    " name TEXT PRIMARY KEY, kind TEXT NOT NULL,"
    " time_bits INTEGER NOT NULL, region_bits INTEGER NOT NULL,"
    " worker_bits INTEGER NOT NULL, sequence_bits INTEGER NOT NULL,"
    " unit_ms INTEGER NOT NULL, epoch_ms INTEGER NOT NULL,"
    " next_value INTEGER NOT NULL, max_value INTEGER NOT NULL,"
    " block INTEGER NOT NULL, max_block INTEGER NOT NULL,"
    " disabled INTEGER NOT NULL, created_ms INTEGER NOT NULL,"
    " floor INTEGER NOT NULL DEFAULT 0, origin TEXT NOT NULL DEFAULT '');"
    "CREATE TABLE worker_leases ("
    " namespace TEXT NOT NULL, region INTEGER NOT NULL, worker_id INTEGER NOT NULL,"
    " holder TEXT NOT NULL, generation INTEGER NOT NULL, lease_until INTEGER NOT NULL,"
    " fence INTEGER NOT NULL DEFAULT 0,"
    " PRIMARY KEY (namespace, region, worker_id));"
    "CREATE TABLE range_leases ("
    " namespace TEXT NOT NULL, incarnation TEXT NOT NULL, request_id TEXT NOT NULL,"
    " count INTEGER NOT NULL, start INTEGER NOT NULL, \"end\" INTEGER NOT NULL,"
    " created_ms INTEGER NOT NULL,"
    " PRIMARY KEY (namespace, incarnation, request_id));"
    "CREATE TABLE audit ("
    " seq INTEGER PRIMARY KEY AUTOINCREMENT, at_ms INTEGER NOT NULL, actor TEXT NOT NULL,"
    " action TEXT NOT NULL, namespace TEXT NOT NULL, detail TEXT NOT NULL);"
    "CREATE TABLE history (id TEXT NOT NULL, seq INTEGER NOT NULL, backup_ms INTEGER NOT "
    "NULL);" SQ_V4_TABLES "INSERT INTO schema_version (version) VALUES (4);" SQ_MIGRATE_4_SQL;

/*
 * Version 1 to 2, in one BEGIN IMMEDIATE transaction that first reads the
 * version again, so that of many processes opening one old file exactly one
 * migrates it. fence = E is the conservative choice: a release then cannot
 * lower E below what it is now.
 */
static const char sq_migrate_1_sql[] =
    "ALTER TABLE worker_leases ADD COLUMN fence INTEGER NOT NULL DEFAULT 0;"
    "UPDATE worker_leases SET fence = lease_until;"
    "UPDATE schema_version SET version = 2;";

/*
 * Version 2 to 3: the history row (a fresh id: what was before is one
 * history as far as anyone can tell) and the namespaces' floor and origin.
 */
static const char sq_migrate_2_sql[] =
    "ALTER TABLE namespaces ADD COLUMN floor INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE namespaces ADD COLUMN origin TEXT NOT NULL DEFAULT '';"
    "CREATE TABLE history (id TEXT NOT NULL, seq INTEGER NOT NULL, backup_ms INTEGER NOT NULL);"
    "UPDATE schema_version SET version = 3;";

/* Version 3 to 4: provenance, idempotent batches and collisions, empty. */
static const char sq_migrate_3_sql[] = SQ_V4_TABLES "UPDATE schema_version SET version = 4;";

/*
 * The statement that starts a history, with a new id from the kernel's
 * entropy (SQLite's own PRNG was seen to repeat itself across files made in
 * one process). 0 or IDMINT_EUNAVAILABLE.
 */
static int sq_history_insert_sql(char *buf, size_t size)
{
    char hex[33];
    int rc = idmint__incarnation(hex); /* 128 random bits, as a holder's */

    if (rc != 0)
        return rc;
    snprintf(buf, size, "INSERT INTO history (id, seq, backup_ms) VALUES ('%s', 1, 0)", hex);
    return 0;
}

/*
 * The statements that give a store of version 6 its identity: a store id
 * (kept across fences and restores: a restored copy is the same store) and
 * a first tip for the current seq, logged. at_ms 0: the oldest entry, the
 * first to be pruned. 0 or IDMINT_EUNAVAILABLE.
 */
static int sq_identity_sql(char *buf, size_t size)
{
    char hex[33];
    uint64_t tip = 0;
    int rc = idmint__incarnation(hex);

    if (rc != 0 || (rc = idmint__store_history_tip(&tip)) != 0)
        return rc;
    snprintf(
        buf, size,
        "UPDATE history SET store_id = '%s', tip = %lld;"
        "INSERT OR REPLACE INTO history_log (seq, tip, at_ms) SELECT seq, tip, 0 FROM history;",
        hex, (long long)tip);
    return 0;
}

struct sqlite_store {
    struct store base; /* must be first */
    sqlite3 *db;
    char *path;                    /* the location as given, for messages */
    char *file;                    /* the database file's full path, from sqlite */
    dev_t file_dev;                /* the file opened: a write checks that */
    ino_t file_ino;                /* the path still names it */
    sqlite3_stmt *stmt[ST__COUNT]; /* prepared on first use, kept until close */
    int bind_rc;                   /* first failed bind since the last step */
    uint64_t busy_since_ms;        /* when the current wait for a lock began */
    uint64_t busy_jitter;          /* xorshift state for the waits' sleeps */
    struct sq_queue queue;         /* idmint's writers of this file, in turn */
    int has_queue;                 /* the queue was opened (at the first write) */
};

/* ==== errors ==== */

/*
 * Map a failed sqlite call to an IDMINT code with the path and sqlite's own
 * message. Call before anything else touches the connection (a rollback
 * would replace the message).
 */
static int sq_fail(struct sqlite_store *s, int rc, const char *what)
{
    const char *msg = s->db != NULL ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc);

    switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        return idmint__fail(IDMINT_EUNAVAILABLE, "sqlite %s: %s: still locked after %d ms: %s",
                            s->path, what, SQ_BUSY_TIMEOUT_MS, msg);
    case SQLITE_READONLY:
        return idmint__fail(IDMINT_EUNAVAILABLE, "sqlite %s: %s: the database is read-only: %s",
                            s->path, what, msg);
    case SQLITE_CANTOPEN:
    case SQLITE_PERM:
    case SQLITE_IOERR:
    case SQLITE_FULL:
        return idmint__fail(IDMINT_EUNAVAILABLE,
                            "sqlite %s: %s: cannot read or write the database file: %s", s->path,
                            what, msg);
    case SQLITE_NOMEM:
        return idmint__fail(IDMINT_ENOMEM, "sqlite %s: %s: out of memory", s->path, what);
    case SQLITE_CONSTRAINT:
        return idmint__fail(IDMINT_ECONFLICT, "sqlite %s: %s: %s", s->path, what, msg);
    default:
        return idmint__fail(IDMINT_ESTORE, "sqlite %s: %s: %s", s->path, what, msg);
    }
}

/* ==== statement helpers ==== */

static int sq_prep(struct sqlite_store *s, enum sq_stmt_id id, sqlite3_stmt **out)
{
    if (s->stmt[id] == NULL) {
        int rc = sqlite3_prepare_v3(s->db, sq_sql[id], -1, SQLITE_PREPARE_PERSISTENT, &s->stmt[id],
                                    NULL);
        if (rc != SQLITE_OK) {
            s->stmt[id] = NULL;
            return sq_fail(s, rc, "prepare");
        }
    }
    sqlite3_reset(s->stmt[id]);
    s->bind_rc = SQLITE_OK;
    *out = s->stmt[id];
    return 0;
}

static void sq_note_bind(struct sqlite_store *s, int rc)
{
    if (rc != SQLITE_OK && s->bind_rc == SQLITE_OK)
        s->bind_rc = rc;
}

static void bind_i64(struct sqlite_store *s, sqlite3_stmt *q, int i, int64_t v)
{
    sq_note_bind(s, sqlite3_bind_int64(q, i, v));
}

/* Every uint64 is at most 2^63 (store.c checks; see col_u64). */
static void bind_u64(struct sqlite_store *s, sqlite3_stmt *q, int i, uint64_t v)
{
    sq_note_bind(s, sqlite3_bind_int64(q, i, (sqlite3_int64)v));
}

static void bind_text(struct sqlite_store *s, sqlite3_stmt *q, int i, const char *v)
{
    /* SQLITE_STATIC: every statement is reset before the text goes away. */
    sq_note_bind(s, sqlite3_bind_text(q, i, v, -1, SQLITE_STATIC));
}

/* Step once: 1 for a row, 0 when done, else a negative IDMINT code. */
static int sq_step(struct sqlite_store *s, sqlite3_stmt *q, const char *what)
{
    int rc;

    if (s->bind_rc != SQLITE_OK) {
        rc = s->bind_rc;
        s->bind_rc = SQLITE_OK;
        return idmint__fail(rc == SQLITE_NOMEM ? IDMINT_ENOMEM : IDMINT_ESTORE,
                            "sqlite %s: %s: bind: %s", s->path, what, sqlite3_errstr(rc));
    }
    rc = sqlite3_step(q);
    if (rc == SQLITE_ROW)
        return 1;
    if (rc == SQLITE_DONE)
        return 0;
    return sq_fail(s, rc, what);
}

/* Run a statement that returns no rows (or whose rows we do not need). */
static int sq_run(struct sqlite_store *s, sqlite3_stmt *q, const char *what)
{
    int rc;

    while ((rc = sq_step(s, q, what)) == 1)
        ;
    sqlite3_reset(q);
    return rc;
}

/*
 * Values are at most 2^63-1, except the end of a range cut at max_value (and
 * next_value after it), which may be exactly 2^63: stored as the same bits,
 * INT64_MIN. SQL never compares those two columns.
 */
static uint64_t col_u64(sqlite3_stmt *q, int i)
{
    return (uint64_t)sqlite3_column_int64(q, i);
}

static void col_text(sqlite3_stmt *q, int i, char *buf, size_t size)
{
    const unsigned char *t = sqlite3_column_text(q, i);

    snprintf(buf, size, "%s", t != NULL ? (const char *)t : "");
}

/* ==== transactions ==== */

/*
 * sqlite's default busy handler backs off to 100 ms between tries. Under a
 * steady stream of writers (many processes refilling ranges) a waiter that
 * has backed off keeps missing the short moments the lock is free, while
 * writers that arrive fresh take it: one process starved for seconds while
 * the others kept reserving. Here a waiter that has waited long retries
 * more often than the rest, so age wins the next release. Everyone
 * retrying that often instead costs the holder its throughput (8 writers
 * at 0.1-0.6 ms did half the reservations per second of the default).
 * Random sleeps keep waiters from retrying in step.
 */
static int sq_busy_wait(void *arg, int count)
{
    struct sqlite_store *s = arg;
    uint64_t now_ms = idmint__deadline_now_ms(), sleep_us;

    if (count == 0)
        s->busy_since_ms = now_ms;
    else if (now_ms - s->busy_since_ms >= SQ_BUSY_TIMEOUT_MS)
        return 0;
    sleep_us =
        now_ms - s->busy_since_ms >= SQ_BUSY_AGED_MS ? SQ_BUSY_AGED_SLEEP_US : SQ_BUSY_SLEEP_US;
    s->busy_jitter ^= s->busy_jitter << 13;
    s->busy_jitter ^= s->busy_jitter >> 7;
    s->busy_jitter ^= s->busy_jitter << 17;
    idmint__sleep_us(sleep_us + s->busy_jitter % sleep_us);
    return 1;
}

static int sq_exec_id(struct sqlite_store *s, enum sq_stmt_id id, const char *what)
{
    sqlite3_stmt *q = NULL;
    int rc = sq_prep(s, id, &q);

    return rc != 0 ? rc : sq_run(s, q, what);
}

static void sq_rollback(struct sqlite_store *s);

/*
 * 0 while s->file still names the file we opened. A file removed (rm, a
 * cleanup job) or replaced (mv, a restored copy) under us would take our
 * writes where no other process looks: they would mint from an authority
 * of their own. One stat(2) per write, next to the fsync of the commit.
 */
static int sq_check_file(struct sqlite_store *s)
{
    struct stat sb;

    if (stat(s->file, &sb) == 0 && sb.st_dev == s->file_dev && sb.st_ino == s->file_ino &&
        sb.st_nlink > 0)
        return 0;
    return idmint__fail(IDMINT_ESTORE,
                        "sqlite %s: the database file was removed or replaced while in use; "
                        "refusing to write to a file no other process can see",
                        s->path);
}

/*
 * BEGIN IMMEDIATE takes the write lock up front. The busy handler waits
 * up to SQ_BUSY_TIMEOUT_MS; beyond that we retry for a bounded time so a
 * burst of writers (many processes starting at once) queues instead of failing.
 * Then, holding the lock, check that the file is still the one at the path
 * (ESTORE and rolled back if not): nothing is ever written to a lost file.
 */
static int sq_begin(struct sqlite_store *s)
{
    uint64_t deadline_ms = idmint__deadline_now_ms() + SQ_RETRY_MS;
    sqlite3_stmt *q = NULL;
    int rc;

    /* Opened at the first write: a store that only reads makes no side file. */
    if (!s->has_queue) {
        sq_queue_open(&s->queue, s->file);
        s->has_queue = 1;
    }
    if (sq_queue_enter(&s->queue, SQ_RETRY_MS) < 0)
        return idmint__fail(IDMINT_EUNAVAILABLE,
                            "sqlite %s: begin transaction: the writers ahead in its queue held it "
                            "for %d ms (one may be stopped or hung)",
                            s->path, SQ_RETRY_MS);
    for (;;) {
        if ((rc = sq_prep(s, ST_BEGIN, &q)) != 0)
            break;
        rc = sqlite3_step(q);
        sqlite3_reset(q);
        if (rc == SQLITE_DONE) {
            rc = 0;
            break;
        }
        if (((rc & 0xff) != SQLITE_BUSY && (rc & 0xff) != SQLITE_LOCKED) ||
            idmint__deadline_now_ms() >= deadline_ms) {
            rc = sq_fail(s, rc, "begin transaction");
            break;
        }
        idmint__sleep_ms(2);
    }
    if (rc == 0 && (rc = sq_check_file(s)) != 0)
        sq_rollback(s);
    if (rc != 0)
        sq_queue_leave(&s->queue);
    return rc;
}

static void sq_rollback(struct sqlite_store *s)
{
    /* Some errors (IOERR, FULL, BUSY in COMMIT) already rolled back. */
    if (!sqlite3_get_autocommit(s->db)) {
        char saved[512];

        /* Keep the message of the failure that caused the rollback. */
        snprintf(saved, sizeof(saved), "%s", idmint_errmsg());
        (void)sq_exec_id(s, ST_ROLLBACK, "rollback");
        idmint__fail(0, "%s", saved);
    }
}

/* Commit if @p rc is 0, else roll back; returns the outcome. */
static int sq_finish(struct sqlite_store *s, int rc)
{
    if (rc == 0)
        rc = sq_exec_id(s, ST_COMMIT, "commit");
    if (rc != 0)
        sq_rollback(s);
    sq_queue_leave(&s->queue);
    return rc;
}

static int sq_audit(struct sqlite_store *s, int64_t at_ms, const char *actor, const char *action,
                    const char *ns, const char *detail)
{
    sqlite3_stmt *q = NULL;
    int rc = sq_prep(s, ST_AUDIT_INSERT, &q);

    if (rc != 0)
        return rc;
    bind_i64(s, q, 1, at_ms);
    bind_text(s, q, 2, actor);
    bind_text(s, q, 3, action);
    bind_text(s, q, 4, ns);
    bind_text(s, q, 5, detail);
    return sq_run(s, q, "write audit record");
}

/*
 * Record (@p seq, @p tip) in the history log and prune a bounded batch of
 * entries that are both STORE_HISTORY_KEEP behind and older than
 * STORE_HISTORY_KEEP_MS, in the current transaction.
 */
static int sq_history_log(struct sqlite_store *s, uint64_t seq, uint64_t tip, int64_t now_ms)
{
    sqlite3_stmt *q = NULL;
    int rc = sq_prep(s, ST_HISTORY_LOG, &q);

    if (rc != 0)
        return rc;
    bind_u64(s, q, 1, seq);
    bind_u64(s, q, 2, tip);
    bind_i64(s, q, 3, now_ms);
    if ((rc = sq_run(s, q, "log the history")) != 0 || seq <= STORE_HISTORY_KEEP)
        return rc;
    if ((rc = sq_prep(s, ST_HISTORY_PRUNE, &q)) != 0)
        return rc;
    bind_u64(s, q, 1, seq - STORE_HISTORY_KEEP);
    bind_i64(s, q, 2, now_ms - STORE_HISTORY_KEEP_MS);
    return sq_run(s, q, "prune the history log");
}

/*
 * Grow the grant counter inside the current transaction and fill @p out;
 * IDMINT_ERESTORED (the caller rolls back) in a store marked as a backup.
 * First in every granting transaction, so a marked store changes nothing.
 */
static int sq_history(struct sqlite_store *s, int64_t now_ms, struct idmint__history *out)
{
    sqlite3_stmt *q = NULL;
    int64_t backup_ms = 0;
    char where[600];
    uint64_t tip = 0;
    int rc = idmint__store_history_tip(&tip), row = 0;

    if (rc != 0 || (rc = sq_prep(s, ST_HISTORY_BUMP, &q)) != 0)
        return rc;
    bind_u64(s, q, 1, tip);
    if ((rc = sq_run(s, q, "grow the grant counter")) != 0 ||
        (rc = sq_prep(s, ST_HISTORY_HEAD, &q)) != 0)
        return rc;
    while ((rc = sq_step(s, q, "read the grant counter")) == 1) {
        row = 1;
        col_text(q, 0, out->id, sizeof(out->id));
        out->seq = col_u64(q, 1);
        backup_ms = sqlite3_column_int64(q, 2);
    }
    sqlite3_reset(q);
    if (rc < 0)
        return rc;
    if (!row)
        return idmint__fail(IDMINT_ESTORE,
                            "sqlite %s: the history row is missing: a damaged authority", s->path);
    if (backup_ms != 0) {
        snprintf(where, sizeof(where), "sqlite %s", s->path);
        return idmint__store_backup_refusal(where, backup_ms);
    }
    out->tip = tip;
    return sq_history_log(s, out->seq, tip, now_ms);
}

/* ==== open / close ==== */

static void sqlite_close(struct store *st)
{
    struct sqlite_store *s = (struct sqlite_store *)st;
    size_t i;

    if (s == NULL)
        return;
    for (i = 0; i < ST__COUNT; i++)
        sqlite3_finalize(s->stmt[i]);
    sqlite3_close_v2(s->db);
    if (s->has_queue)
        sq_queue_close(&s->queue);
    free(s->file);
    free(s->path);
    free(s);
}

static void errno_text(int err, char *buf, size_t size)
{
    if (strerror_r(err, buf, size) != 0)
        snprintf(buf, size, "errno %d", err);
}

static int sq_private(const char *location)
{
    return idmint__fail(IDMINT_EINVAL,
                        "sqlite '%s': an in-memory or temporary database is private to one "
                        "process: every process would get its own empty authority and mint the "
                        "same IDs; use a file path",
                        location);
}

/* The value of %HH at @p p, or -1. */
static int pct_value(const char *p)
{
    int hi = idmint__hex_value(p[0]), lo = hi < 0 ? -1 : idmint__hex_value(p[1]);

    return lo < 0 ? -1 : hi * 16 + lo;
}

/* What a "file:" URI's mode= allows; sqlite refuses an open whose flags exceed it. */
enum sq_mode {
    SQ_MODE_RW,  /* no mode=, or mode=rw */
    SQ_MODE_RO,  /* mode=ro: never created, never migrated */
    SQ_MODE_RWC, /* mode=rwc: the open must pass SQLITE_OPEN_CREATE */
};

/* 1 if the query of URI @p q (after '?', up to '#') has key=value. */
static int uri_has(const char *q, const char *key, const char *value)
{
    size_t klen = strlen(key), vlen = strlen(value);

    while (q != NULL && *q != '\0' && *q != '#') {
        size_t len = strcspn(q, "&#");

        if (len == klen + 1 + vlen && strncmp(q, key, klen) == 0 && q[klen] == '=' &&
            strncmp(q + klen + 1, value, vlen) == 0)
            return 1;
        q += len;
        if (*q == '&')
            q++;
    }
    return 0;
}

/*
 * The file named by @p location, as sqlite reads it (https://sqlite.org/uri.html
 * for "file:" URIs: an empty or "localhost" authority, %HH escapes, the query
 * after '?'): *path malloc'd, *mode from mode=. EINVAL for the databases
 * that live in one process only (":memory:", "", mode=memory, vfs=memdb).
 */
static int sq_location(const char *location, char **path, enum sq_mode *mode)
{
    const char *p = location, *end, *query;
    int is_uri = strncmp(location, "file:", 5) == 0;
    char *out;
    size_t n = 0;

    *mode = SQ_MODE_RW;
    if (is_uri) {
        p = location + 5;
        if (strncmp(p, "//", 2) == 0) {
            const char *host = p + 2;
            size_t host_len = strcspn(host, "/?#");

            if (host_len != 0 && !(host_len == 9 && strncmp(host, "localhost", 9) == 0))
                return idmint__fail(IDMINT_EINVAL,
                                    "sqlite '%s': a file: URI names a local file; its authority "
                                    "must be empty or localhost",
                                    location);
            p = host + host_len;
        }
        end = p + strcspn(p, "?#");
        query = *end == '?' ? end + 1 : NULL;
        if (uri_has(query, "mode", "memory") || uri_has(query, "vfs", "memdb"))
            return sq_private(location);
        if (uri_has(query, "mode", "ro"))
            *mode = SQ_MODE_RO;
        else if (uri_has(query, "mode", "rwc"))
            *mode = SQ_MODE_RWC;
    } else {
        end = p + strlen(p);
    }
    if ((out = malloc((size_t)(end - p) + 1)) == NULL)
        return idmint__fail(IDMINT_ENOMEM, "out of memory opening sqlite store");
    while (p < end) {
        int c = is_uri && *p == '%' && end - p >= 3 ? pct_value(p + 1) : -1;

        if (c > 0) {
            out[n++] = (char)c;
            p += 3;
        } else {
            out[n++] = *p++;
        }
    }
    out[n] = '\0';
    if (out[0] == '\0' || strcmp(out, ":memory:") == 0) {
        free(out);
        return sq_private(location);
    }
    *path = out;
    return 0;
}

/* Remove @p base and the -wal, -shm and -journal files sqlite may have left beside it. */
static void unlink_db(const char *base)
{
    static const char *const suffix[] = {"", "-wal", "-shm", "-journal"};
    char name[4200];
    size_t i;

    for (i = 0; i < sizeof(suffix) / sizeof(suffix[0]); i++)
        if ((size_t)snprintf(name, sizeof(name), "%s%s", base, suffix[i]) < sizeof(name))
            (void)unlink(name);
}

/* Make the schema in the new, empty, private file @p tmp, WAL set, and close it cleanly. */
static int sq_fill_new(const char *location, const char *tmp)
{
    char history[128], identity[256];
    const char *const steps[] = {"PRAGMA journal_mode=WAL",
                                 "PRAGMA synchronous=FULL",
                                 "BEGIN IMMEDIATE",
                                 sq_schema_sql,
                                 sq_migrate_5_sql,
                                 sq_migrate_6_sql,
                                 history,
                                 identity,
                                 "COMMIT"};
    sqlite3 *db = NULL;
    char *err = NULL;
    size_t i;
    int rc = sq_history_insert_sql(history, sizeof(history));

    if (rc != 0 || (rc = sq_identity_sql(identity, sizeof(identity))) != 0)
        return rc;
    rc = sqlite3_open_v2(tmp, &db, SQLITE_OPEN_READWRITE, NULL);

    for (i = 0; rc == SQLITE_OK && i < sizeof(steps) / sizeof(steps[0]); i++)
        rc = sqlite3_exec(db, steps[i], NULL, NULL, &err);
    if (rc != SQLITE_OK) {
        rc = idmint__fail(rc == SQLITE_NOMEM ? IDMINT_ENOMEM : IDMINT_EUNAVAILABLE,
                          "sqlite %s: cannot create a new database in %s: %s", location, tmp,
                          err != NULL  ? err
                          : db != NULL ? sqlite3_errmsg(db)
                                       : sqlite3_errstr(rc));
        sqlite3_free(err);
        sqlite3_close(db);
        return rc;
    }
    /* The last connection's close checkpoints the WAL into the file and removes it. */
    if ((rc = sqlite3_close(db)) != SQLITE_OK)
        return idmint__fail(IDMINT_EUNAVAILABLE, "sqlite %s: cannot close the new database %s: %s",
                            location, tmp, sqlite3_errstr(rc));
    return 0;
}

/* Sync the folder of @p path so that a link made in it survives a power loss. */
static void sync_dir_of(const char *path, const char *slash)
{
    char dir[4200];
    int fd;

    if (slash == NULL)
        snprintf(dir, sizeof(dir), ".");
    else if ((size_t)snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path + 1), path) >=
             sizeof(dir))
        return;
    if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
        (void)fsync(fd);
        close(fd);
    }
}

/* The folder of file @p path: "." for a bare name, "/" for one at the root. */
static void dir_of(const char *path, char *buf, size_t size)
{
    const char *slash = strrchr(path, '/');

    if (slash == NULL)
        snprintf(buf, size, ".");
    else
        snprintf(buf, size, "%.*s", slash == path ? 1 : (int)(slash - path), path);
}

/*
 * The refusal of a path this user may not use. Never a private authority
 * instead: a second file would mint the same IDs as the first (a root daemon
 * and a user's CLI on "the default" minted 520,000 duplicates that way).
 * EINVAL: a set-up to fix, not an outage to wait out.
 */
static int sq_denied(const char *path, const char *what, int err)
{
    char text[128], who[32], dir[4200];

    errno_text(err, text, sizeof(text));
    snprintf(who, sizeof(who), "uid %lu", (unsigned long)geteuid());
    dir_of(path, dir, sizeof(dir));
    return idmint__fail(
        IDMINT_EINVAL,
        "the authority %s: %s: %s (as %s). Every process that mints its "
        "namespaces must use this one file, so no private one is made instead. "
        "Share it through a group (as its owner: chgrp -R GROUP %s && chmod 2770 "
        "%s && chmod 660 %s*, then adduser USER GROUP), or pass --authority / set "
        "IDMINT_AUTHORITY to the authority that all minters of these namespaces use",
        path, what, text, who, dir, dir, path);
}

/*
 * 0 when this user may use @p path as an authority: read and write it (unless
 * @p read_only) and, for WAL's -wal and -shm files, write in its folder.
 */
static int sq_access(const char *path, int read_only)
{
    char dir[4200];

    if (faccessat(AT_FDCWD, path, read_only ? R_OK : R_OK | W_OK, AT_EACCESS) != 0)
        return errno == ENOENT ? 0 : sq_denied(path, "cannot read and write the file", errno);
    if (read_only)
        return 0;
    dir_of(path, dir, sizeof(dir));
    if (faccessat(AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS) != 0)
        return sq_denied(path, "cannot create its -wal and -shm files in its folder", errno);
    return 0;
}

/*
 * Give the new file @p fd, to be linked at @p path, the mode the service
 * group needs whatever the creator's umask (root's 022 made it 0640: the
 * group could not write, and a daemon's user could not open a file root's
 * CLI made first), and its folder's group, as a set-group-id folder would.
 * SQLite gives -wal and -shm the database file's mode. Best effort: a
 * group this user may not give is left as it is, and sq_access says so to
 * whoever cannot use it.
 */
static void sq_share_mode(int fd, const char *path)
{
    char dir[4200];
    struct stat sb;

    (void)fchmod(fd, SQ_FILE_MODE);
    dir_of(path, dir, sizeof(dir));
    if (stat(dir, &sb) == 0 && sb.st_gid != getegid() && fchown(fd, (uid_t)-1, sb.st_gid) != 0)
        return; /* not a group of ours: left as it is */
}

/*
 * Make sure an idmint database is at @p path. If nothing is there: with
 * @p must_exist, ENOTFOUND and nothing created; else build the schema in a
 * private file of the same folder and link(2) it into place, so the path
 * names a complete authority or nothing (EEXIST: another process got there
 * first; theirs is as good). A file that is there is judged at open; one
 * this user may not read and write, or a folder that is not there, is a
 * set-up to fix (EINVAL).
 */
static int sq_create_file(const char *location, const char *path, int must_exist, int read_only)
{
    const char *slash = strrchr(path, '/');
    char tmp[4200], text[128];
    uint64_t rnd = 0;
    struct stat sb;
    int fd, rc, err;

    if (stat(path, &sb) == 0)
        return sq_access(path, read_only);
    if ((err = errno) == EACCES)
        return sq_denied(path, "cannot look into its folder", err);
    if (err != ENOENT) {
        errno_text(err, text, sizeof(text));
        return idmint__fail(IDMINT_EUNAVAILABLE, "sqlite %s: cannot look at %s: %s", location, path,
                            text);
    }
    if (must_exist)
        return idmint__fail(IDMINT_ENOTFOUND,
                            "no authority at %s yet: nothing has been created there; create a "
                            "namespace first, or check --authority",
                            path);
    if (idmint__entropy(&rnd, sizeof(rnd)) != 0)
        rnd = (uint64_t)getpid() << 32 ^ idmint__deadline_now_ms();
    if ((size_t)snprintf(tmp, sizeof(tmp), "%.*s.idmint-new-%016llx",
                         slash != NULL ? (int)(slash - path + 1) : 0, path,
                         (unsigned long long)rnd) >= sizeof(tmp))
        return idmint__fail(IDMINT_EINVAL, "sqlite %s: the path is too long", location);
    fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, SQ_FILE_MODE);
    if (fd < 0 && (errno == EACCES || errno == EPERM || errno == EROFS))
        return sq_denied(path, "cannot create it in its folder", errno);
    if (fd < 0 && errno == ENOENT)
        return idmint__fail(IDMINT_EINVAL,
                            "sqlite %s: the folder of %s does not exist; idmint makes no folder "
                            "for a path it is given: create it, or check --authority",
                            location, path);
    if (fd < 0) {
        errno_text(errno, text, sizeof(text));
        return idmint__fail(IDMINT_EUNAVAILABLE,
                            "sqlite %s: cannot open or create the database: cannot create a "
                            "file in its folder: %s",
                            location, text);
    }
    sq_share_mode(fd, path);
    close(fd);
    rc = sq_fill_new(location, tmp);
    if (rc == 0 && link(tmp, path) != 0 && (err = errno) != EEXIST) {
        errno_text(err, text, sizeof(text));
        rc = idmint__fail(IDMINT_EUNAVAILABLE,
                          "sqlite %s: cannot link the new database into place (link(2) of %s: "
                          "%s); create it on a file system with hard links",
                          location, tmp, text);
    }
    unlink_db(tmp);
    if (rc == 0)
        sync_dir_of(path, slash);
    return rc;
}

/*
 * Refuse a file that is not an idmint authority, before anything writes to
 * it: *version gets 1 (to migrate) or SQ_SCHEMA_VERSION. @p size_bytes is
 * the file's size, to tell an empty file from another application's
 * database.
 */
static int sq_schema_version(struct sqlite_store *s, off_t size_bytes, int64_t *version)
{
    sqlite3_stmt *q = NULL;
    int rc = sqlite3_prepare_v2(s->db, sq_sql[ST_VERSION], -1, &q, NULL);

    if ((rc & 0xff) == SQLITE_NOTADB)
        return idmint__fail(IDMINT_ESTORE,
                            "sqlite %s: exists but is not an SQLite database (%s): not an idmint "
                            "authority; check --authority",
                            s->path, sqlite3_errmsg(s->db));
    if ((rc & 0xff) == SQLITE_ERROR && size_bytes == 0)
        return idmint__fail(IDMINT_ESTORE,
                            "sqlite %s: exists but is empty (0 bytes): not an idmint authority; a "
                            "truncated copy? remove it to start a new, empty authority",
                            s->path);
    if ((rc & 0xff) == SQLITE_ERROR)
        return idmint__fail(IDMINT_ESTORE,
                            "sqlite %s: an SQLite database without idmint's schema_version table "
                            "(%s): not an idmint authority, and idmint does not add its tables "
                            "to another database; check --authority",
                            s->path, sqlite3_errmsg(s->db));
    if (rc != SQLITE_OK)
        return sq_fail(s, rc, "read schema version");
    rc = sq_step(s, q, "read schema version");
    if (rc == 1)
        *version = sqlite3_column_int64(q, 0);
    sqlite3_finalize(q);
    if (rc < 0)
        return rc;
    if (rc == 0)
        return idmint__fail(IDMINT_ESTORE,
                            "sqlite %s: schema_version has no row: not an idmint authority, or a "
                            "damaged one",
                            s->path);
    if (*version < 1 || *version > SQ_SCHEMA_VERSION)
        return idmint__fail(IDMINT_ESTORE,
                            "sqlite %s: schema version %lld is not supported (this idmint knows "
                            "1 to %d); made by a newer idmint?",
                            s->path, (long long)*version, SQ_SCHEMA_VERSION);
    return 0;
}

/* Each step up to SQ_SCHEMA_VERSION exactly once, however many processes open the old file at once.
 */
/*
 * One schema step from version @p from to from + 1: @p sql, then @p extra
 * (statements made for this store, NULL: none), in the caller's transaction.
 */
static int sq_migrate_step(struct sqlite_store *s, const char *sql, const char *extra, int64_t from)
{
    char *err = NULL, what[64];
    int rc = sqlite3_exec(s->db, sql, NULL, NULL, &err);

    sqlite3_free(err);
    err = NULL;
    if (rc == SQLITE_OK && extra != NULL) {
        rc = sqlite3_exec(s->db, extra, NULL, NULL, &err);
        sqlite3_free(err);
    }
    if (rc == SQLITE_OK)
        return 0;
    snprintf(what, sizeof(what), "migrate schema version %lld to %lld", (long long)from,
             (long long)from + 1);
    return sq_fail(s, rc, what);
}

static int sq_migrate(struct sqlite_store *s)
{
    char history[128], identity[256];
    sqlite3_stmt *q = NULL;
    int64_t version = 0;
    int rc;

    if ((rc = sq_begin(s)) != 0)
        return rc;
    if ((rc = sq_prep(s, ST_VERSION, &q)) == 0) {
        rc = sq_step(s, q, "read schema version");
        if (rc == 1)
            version = sqlite3_column_int64(q, 0);
        sqlite3_reset(q);
        rc = rc < 0 ? rc : 0;
    }
    if (rc == 0 && version == 1)
        rc = sq_migrate_step(s, sq_migrate_1_sql, NULL, version++);
    if (rc == 0 && version == 2 && (rc = sq_history_insert_sql(history, sizeof(history))) == 0)
        rc = sq_migrate_step(s, sq_migrate_2_sql, history, version++);
    if (rc == 0 && version == 3)
        rc = sq_migrate_step(s, sq_migrate_3_sql, NULL, version++);
    if (rc == 0 && version == 4)
        rc = sq_migrate_step(s, SQ_MIGRATE_4_SQL, NULL, version++);
    if (rc == 0 && version == 5 && (rc = sq_identity_sql(identity, sizeof(identity))) == 0)
        rc = sq_migrate_step(s, sq_migrate_5_sql, identity, version++);
    if (rc == 0 && version == 6)
        rc = sq_migrate_step(s, sq_migrate_6_sql, NULL, version++);
    return sq_finish(s, rc);
}

static int sq_pragmas(struct sqlite_store *s)
{
    uint64_t deadline_ms = idmint__deadline_now_ms() + SQ_RETRY_MS;
    int rc;

    /* Switching to WAL needs a moment of exclusive access; retry while others open. */
    for (;;) {
        rc = sqlite3_exec(s->db, "PRAGMA journal_mode=WAL", NULL, NULL, NULL);
        if (rc == SQLITE_OK)
            break;
        if (((rc & 0xff) != SQLITE_BUSY && (rc & 0xff) != SQLITE_LOCKED) ||
            idmint__deadline_now_ms() >= deadline_ms)
            return sq_fail(s, rc, "set WAL mode");
        idmint__sleep_ms(2);
    }
    /* FULL: each commit is synced before we acknowledge a reservation or lease. */
    rc = sqlite3_exec(s->db, "PRAGMA synchronous=FULL", NULL, NULL, NULL);
    return rc == SQLITE_OK ? 0 : sq_fail(s, rc, "set synchronous=FULL");
}

/*
 * Open the file sq_create_file made sure of, never creating one: record
 * which file it is (sq_check_file), judge it (sq_schema_version), migrate
 * it, then set the pragmas. Nothing writes to a file before it is judged.
 */
static int sq_open_db(struct sqlite_store *s, const char *location, int mode)
{
    const char *file;
    int64_t version = 0;
    struct stat sb;
    char text[128];
    int rc;

    /* No SQLITE_OPEN_CREATE: sq_create_file made the file. With mode=rwc sqlite
     * insists on it; the file is there, so it creates nothing either way. */
    rc = sqlite3_open_v2(location, &s->db,
                         SQLITE_OPEN_READWRITE | SQLITE_OPEN_URI |
                             (mode == SQ_MODE_RWC ? SQLITE_OPEN_CREATE : 0),
                         NULL);
    if (rc != SQLITE_OK)
        return idmint__fail(rc == SQLITE_NOMEM ? IDMINT_ENOMEM : IDMINT_EUNAVAILABLE,
                            "sqlite %s: cannot open the database: %s", location,
                            s->db != NULL ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc));
    sqlite3_extended_result_codes(s->db, 1);
    if (idmint__entropy(&s->busy_jitter, sizeof(s->busy_jitter)) != 0 || s->busy_jitter == 0)
        s->busy_jitter = (uint64_t)(uintptr_t)s | 1u; /* any nonzero seed will do */
    sqlite3_busy_handler(s->db, sq_busy_wait, s);
    /* sqlite's own idea of the file: a full path, so a chdir() cannot move it. */
    file = sqlite3_db_filename(s->db, "main");
    if (file == NULL || file[0] == '\0')
        return sq_private(location);
    if ((s->file = strdup(file)) == NULL)
        return idmint__fail(IDMINT_ENOMEM, "out of memory opening sqlite store");
    if (stat(s->file, &sb) != 0) {
        errno_text(errno, text, sizeof(text));
        return idmint__fail(IDMINT_EUNAVAILABLE, "sqlite %s: cannot look at %s: %s", location,
                            s->file, text);
    }
    s->file_dev = sb.st_dev;
    s->file_ino = sb.st_ino;
    if ((rc = sq_schema_version(s, sb.st_size, &version)) != 0)
        return rc;
    /* A read-only copy of an old file is read as it is; it cannot be written anyway. */
    if (version < SQ_SCHEMA_VERSION && mode != SQ_MODE_RO &&
        sqlite3_db_readonly(s->db, "main") != 1 && (rc = sq_migrate(s)) != 0)
        return rc;
    return sq_pragmas(s);
}

static int sqlite_open(const char *location, const char *token, unsigned flags, struct store **out)
{
    (void)token; /* a local file: access is the file system's business */
    struct sqlite_store *s;
    char *path = NULL;
    enum sq_mode mode = SQ_MODE_RW;
    int rc;

    if ((rc = sq_location(location, &path, &mode)) != 0)
        return rc;
    rc = sq_create_file(location, path, mode == SQ_MODE_RO || (flags & STORE_OPEN_EXISTING) != 0,
                        mode == SQ_MODE_RO);
    free(path);
    if (rc != 0)
        return rc;
    s = calloc(1, sizeof(*s));
    if (s == NULL)
        return idmint__fail(IDMINT_ENOMEM, "out of memory opening sqlite store");
    s->base.ops = &idmint__store_sqlite;
    s->path = strdup(location);
    if (s->path == NULL) {
        free(s);
        return idmint__fail(IDMINT_ENOMEM, "out of memory opening sqlite store");
    }
    if ((rc = sq_open_db(s, location, mode)) != 0) {
        sqlite_close(&s->base);
        return rc;
    }
    *out = &s->base;
    return 0;
}

/* ==== namespaces ==== */

static const char *kind_text(idmint_kind kind)
{
    return kind == IDMINT_KIND_RANGE ? "range" : "snowflake";
}

static void ns_from_row(sqlite3_stmt *q, idmint_ns_info *out)
{
    const unsigned char *kind = sqlite3_column_text(q, 1);

    memset(out, 0, sizeof(*out));
    col_text(q, 0, out->name, sizeof(out->name));
    out->kind = kind != NULL && strcmp((const char *)kind, "range") == 0 ? IDMINT_KIND_RANGE
                                                                         : IDMINT_KIND_SNOWFLAKE;
    out->layout.time_bits = (uint8_t)sqlite3_column_int(q, 2);
    out->layout.region_bits = (uint8_t)sqlite3_column_int(q, 3);
    out->layout.worker_bits = (uint8_t)sqlite3_column_int(q, 4);
    out->layout.sequence_bits = (uint8_t)sqlite3_column_int(q, 5);
    out->layout.unit_ms = (uint32_t)sqlite3_column_int64(q, 6);
    out->layout.epoch_ms = sqlite3_column_int64(q, 7);
    out->next_value = col_u64(q, 8);
    out->max_value = col_u64(q, 9);
    out->block = (uint32_t)sqlite3_column_int64(q, 10);
    out->max_block = (uint32_t)sqlite3_column_int64(q, 11);
    out->is_disabled = sqlite3_column_int(q, 12) != 0;
    out->created_ms = sqlite3_column_int64(q, 13);
    out->floor = col_u64(q, 14);
    col_text(q, 15, out->origin, sizeof(out->origin));
}

/* Read one namespace row: 0, IDMINT_ENOTFOUND or an error. */
static int sq_ns_read(struct sqlite_store *s, const char *name, idmint_ns_info *out)
{
    sqlite3_stmt *q = NULL;
    int rc = sq_prep(s, ST_NS_GET, &q);

    if (rc != 0)
        return rc;
    bind_text(s, q, 1, name);
    rc = sq_step(s, q, "read namespace");
    if (rc == 1)
        ns_from_row(q, out);
    sqlite3_reset(q);
    if (rc == 0)
        return idmint__store_ns_missing(name);
    return rc < 0 ? rc : 0;
}

static int sqlite_ns_create(struct store *st, const idmint_ns_info *ns, const char *actor,
                            int64_t now_ms)
{
    struct sqlite_store *s = (struct sqlite_store *)st;
    const idmint_layout *l = &ns->layout;
    char detail[256];
    sqlite3_stmt *q = NULL;
    int rc;

    idmint__store_ns_create_detail(ns, detail, sizeof(detail));
    if ((rc = sq_begin(s)) != 0)
        return rc;
    if ((rc = sq_prep(s, ST_NS_INSERT, &q)) == 0) {
        bind_text(s, q, 1, ns->name);
        bind_text(s, q, 2, kind_text(ns->kind));
        bind_i64(s, q, 3, l->time_bits);
        bind_i64(s, q, 4, l->region_bits);
        bind_i64(s, q, 5, l->worker_bits);
        bind_i64(s, q, 6, l->sequence_bits);
        bind_i64(s, q, 7, l->unit_ms);
        bind_i64(s, q, 8, l->epoch_ms);
        bind_u64(s, q, 9, ns->next_value);
        bind_u64(s, q, 10, ns->max_value);
        bind_i64(s, q, 11, ns->block);
        bind_i64(s, q, 12, ns->max_block);
        bind_i64(s, q, 13, ns->is_disabled != 0);
        bind_i64(s, q, 14, now_ms);
        bind_u64(s, q, 15, ns->floor);
        bind_text(s, q, 16, ns->origin);
        rc = sq_run(s, q, "create namespace");
        if (rc == IDMINT_ECONFLICT)
            rc = idmint__fail(IDMINT_ECONFLICT, "namespace '%s' already exists", ns->name);
    }
    if (rc == 0)
        rc = sq_audit(s, now_ms, actor, "ns.create", ns->name, detail);
    return sq_finish(s, rc);
}

static int sqlite_ns_get(struct store *st, const char *name, idmint_ns_info *out)
{
    idmint_ns_info info;
    int rc = sq_ns_read((struct sqlite_store *)st, name, &info);

    if (rc == 0)
        *out = info;
    return rc;
}

/* ==== lists ==== */

/* Fill one list element @p out (zeroed) from the current row of @p q. */
typedef void (*sq_row_fn)(sqlite3_stmt *q, void *out);

/*
 * Step the prepared, bound query @p q to its end, one element of @p elem_size
 * per row, then reset it. *out (malloc'd; NULL for none) and *n on success,
 * nothing to free on error.
 */
static int sq_list(struct sqlite_store *s, sqlite3_stmt *q, const char *what, size_t elem_size,
                   sq_row_fn from_row, void **out, size_t *n)
{
    char *list = NULL, *grown;
    size_t len = 0, cap = 0;
    int rc;

    while ((rc = sq_step(s, q, what)) == 1) {
        if (len == cap) {
            cap = cap == 0 ? 16 : cap * 2;
            if ((grown = realloc(list, cap * elem_size)) == NULL) {
                rc = idmint__fail(IDMINT_ENOMEM, "out of memory: %s", what);
                break;
            }
            list = grown;
        }
        memset(list + len * elem_size, 0, elem_size);
        from_row(q, list + len * elem_size);
        len++;
    }
    sqlite3_reset(q);
    if (rc != 0) {
        free(list);
        return rc;
    }
    *out = list;
    *n = len;
    return 0;
}

static void ns_row(sqlite3_stmt *q, void *out)
{
    ns_from_row(q, out);
}

static int sqlite_ns_list(struct store *st, idmint_ns_info **out, size_t *n)
{
    struct sqlite_store *s = (struct sqlite_store *)st;
    sqlite3_stmt *q = NULL;
    void *list;
    int rc = sq_prep(s, ST_NS_LIST, &q);

    if (rc == 0 && (rc = sq_list(s, q, "list namespaces", sizeof(**out), ns_row, &list, n)) == 0)
        *out = list;
    return rc;
}

static int sqlite_ns_set_disabled(struct store *st, const char *name, int disabled,
                                  const char *actor, int64_t now_ms)
{
    struct sqlite_store *s = (struct sqlite_store *)st;
    sqlite3_stmt *q = NULL;
    int rc;

    if ((rc = sq_begin(s)) != 0)
        return rc;
    if ((rc = sq_prep(s, ST_NS_DISABLE, &q)) == 0) {
        bind_text(s, q, 1, name);
        bind_i64(s, q, 2, disabled != 0);
        rc = sq_run(s, q, disabled ? "disable namespace" : "enable namespace");
        if (rc == 0 && sqlite3_changes(s->db) == 0)
            rc = idmint__store_ns_missing(name);
    }
    if (rc == 0)
        rc = sq_audit(s, now_ms, actor, disabled ? "ns.disable" : "ns.enable", name,
                      disabled ? "disabled" : "enabled");
    return sq_finish(s, rc);
}

/* ==== worker leases ==== */

static int sq_lease_take(struct sqlite_store *s, const char *ns, uint64_t worker_count,
                         uint64_t now_unit, uint64_t until_unit, const struct idmint__lease *in,
                         struct idmint__lease *res)
{
    idmint_ns_info info;
    uint64_t old_until = 0;
    sqlite3_stmt *q = NULL;
    int rc, found;

    if ((rc = sq_ns_read(s, ns, &info)) != 0 || (rc = idmint__store_lease_refusal(&info)) != 0)
        return rc;

    if ((rc = sq_prep(s, ST_LEASE_FREE, &q)) != 0)
        return rc;
    bind_text(s, q, 1, ns);
    bind_i64(s, q, 2, in->region);
    bind_u64(s, q, 3, worker_count);
    bind_u64(s, q, 4, now_unit);
    found = sq_step(s, q, "find a free worker id");
    if (found == 1) {
        res->worker_id = (uint32_t)sqlite3_column_int64(q, 0);
        res->generation = col_u64(q, 1) + 1;
        old_until = col_u64(q, 2);
    }
    sqlite3_reset(q);
    if (found < 0)
        return found;

    if (found == 1) {
        res->fence_found = old_until;
        res->lease_until = old_until > until_unit ? old_until : until_unit;
        if ((rc = sq_prep(s, ST_LEASE_TAKE, &q)) != 0)
            return rc;
        bind_text(s, q, 1, ns);
        bind_i64(s, q, 2, in->region);
        bind_i64(s, q, 3, res->worker_id);
        bind_text(s, q, 4, in->holder);
        bind_u64(s, q, 5, res->generation);
        bind_u64(s, q, 6, res->lease_until);
        return sq_run(s, q, "take worker id");
    }

    if ((rc = sq_prep(s, ST_LEASE_COUNT, &q)) != 0)
        return rc;
    bind_text(s, q, 1, ns);
    bind_i64(s, q, 2, in->region);
    rc = sq_step(s, q, "count worker ids");
    if (rc == 1) {
        res->worker_id = (uint32_t)sqlite3_column_int64(q, 0);
        rc = col_u64(q, 0) < worker_count ? 0 : 1;
    } else if (rc == 0) {
        rc = idmint__fail(IDMINT_ESTORE, "sqlite %s: count returned no row", s->path);
    }
    sqlite3_reset(q);
    if (rc < 0)
        return rc;
    if (rc == 1)
        return idmint__store_no_worker(ns, in->region, worker_count);
    res->generation = 1;
    res->fence_found = 0;
    res->lease_until = until_unit;
    if ((rc = sq_prep(s, ST_LEASE_INSERT, &q)) != 0)
        return rc;
    bind_text(s, q, 1, ns);
    bind_i64(s, q, 2, in->region);
    bind_i64(s, q, 3, res->worker_id);
    bind_text(s, q, 4, in->holder);
    bind_u64(s, q, 5, until_unit);
    return sq_run(s, q, "add worker id");
}

/* ==== provenance: grants recorded in the transaction that makes them ==== */

static void bind_origin(struct sqlite_store *s, sqlite3_stmt *q, int first,
                        const struct idmint__origin *o)
{
    bind_text(s, q, first, o->host);
    bind_i64(s, q, first + 1, o->pid);
    bind_text(s, q, first + 2, o->program);
    bind_text(s, q, first + 3, o->token);
}

/* Record the worker grant of the take @p res (a new generation of its row). */
static int sq_worker_grant(struct sqlite_store *s, const char *ns, const struct idmint__lease *res,
                           int64_t now_ms)
{
    char fp[IDMINT_HOLDER_FP_LEN + 1];
    sqlite3_stmt *q = NULL;
    int rc = sq_prep(s, ST_WGRANT_INSERT, &q);

    if (rc != 0)
        return rc;
    idmint__holder_fingerprint(res->holder, fp);
    bind_text(s, q, 1, ns);
    bind_i64(s, q, 2, res->region);
    bind_i64(s, q, 3, res->worker_id);
    bind_u64(s, q, 4, res->generation);
    bind_text(s, q, 5, fp);
    bind_origin(s, q, 6, &res->origin);
    bind_u64(s, q, 10, res->fence_found);
    bind_u64(s, q, 11, res->lease_until);
    bind_i64(s, q, 12, now_ms);
    return sq_run(s, q, "record worker grant");
}

/* The grant of @p lease now ends at @p stored (renewal or release at @p now_ms). */
static int sq_worker_grant_update(struct sqlite_store *s, const char *ns,
                                  const struct idmint__lease *lease, uint64_t stored,
                                  int64_t now_ms)
{
    sqlite3_stmt *q = NULL;
    int rc = sq_prep(s, ST_WGRANT_UPDATE, &q);

    if (rc != 0)
        return rc;
    bind_text(s, q, 1, ns);
    bind_i64(s, q, 2, lease->region);
    bind_i64(s, q, 3, lease->worker_id);
    bind_u64(s, q, 4, lease->generation);
    bind_u64(s, q, 5, stored);
    bind_i64(s, q, 6, now_ms);
    return sq_run(s, q, "update worker grant");
}

/*
 * Keep the longest lease granted in @p ns (@p units past now), in the
 * current transaction: a fence's quarantine must cover it. Writes only when
 * it grows, so renewals do not all rewrite the namespace row.
 */
static int sq_lease_max(struct sqlite_store *s, const char *ns, uint64_t units)
{
    sqlite3_stmt *q = NULL;
    int rc = sq_prep(s, ST_NS_LEASE_MAX, &q);

    if (rc != 0)
        return rc;
    bind_text(s, q, 1, ns);
    bind_u64(s, q, 2, units);
    return sq_run(s, q, "record the longest lease");
}

static int sqlite_lease_take(struct store *st, const char *ns, uint64_t worker_count,
                             uint64_t now_unit, uint64_t until_unit, struct idmint__lease *lease,
                             const char *actor, int64_t now_ms)
{
    struct sqlite_store *s = (struct sqlite_store *)st;
    struct idmint__lease res = *lease;
    char detail[256];
    int rc;

    if ((rc = sq_begin(s)) != 0)
        return rc;
    rc = sq_history(s, now_ms, &res.history);
    if (rc == 0)
        rc = sq_lease_take(s, ns, worker_count, now_unit, until_unit, lease, &res);
    if (rc == 0)
        rc = sq_lease_max(s, ns, lease->granted_units);
    if (rc == 0)
        rc = sq_worker_grant(s, ns, &res, now_ms);
    if (rc == 0) {
        idmint__store_lease_detail(&res, res.fence_found, res.lease_until, detail, sizeof(detail));
        rc = sq_audit(s, now_ms, actor, "worker.take", ns, detail);
    }
    rc = sq_finish(s, rc);
    if (rc == 0)
        *lease = res;
    return rc;
}

static void bind_lease_key(struct sqlite_store *s, sqlite3_stmt *q, const char *ns,
                           const struct idmint__lease *lease)
{
    bind_text(s, q, 1, ns);
    bind_i64(s, q, 2, lease->region);
    bind_i64(s, q, 3, lease->worker_id);
    bind_text(s, q, 4, lease->holder);
    bind_u64(s, q, 5, lease->generation);
}

/*
 * Run the bound conditional UPDATE @p q that returns the stored E: 1 and
 * *stored when a row matched, 0 when none did, else an error.
 */
static int sq_update_returning(struct sqlite_store *s, sqlite3_stmt *q, const char *what,
                               uint64_t *stored)
{
    int rc, row = 0;

    while ((rc = sq_step(s, q, what)) == 1) {
        row = 1;
        *stored = col_u64(q, 0);
    }
    sqlite3_reset(q);
    return rc < 0 ? rc : row;
}

/*
 * Read the row of (@p ns, @p region, @p worker_id): 1 with its holder
 * (33 bytes), generation and E, 0 when there is none, else an error.
 */
static int sq_lease_row(struct sqlite_store *s, const char *ns, uint32_t region, uint32_t worker_id,
                        char *holder, uint64_t *generation, uint64_t *until)
{
    sqlite3_stmt *q = NULL;
    int rc = sq_prep(s, ST_LEASE_GET, &q);

    if (rc != 0)
        return rc;
    bind_text(s, q, 1, ns);
    bind_i64(s, q, 2, region);
    bind_i64(s, q, 3, worker_id);
    rc = sq_step(s, q, "read worker id");
    if (rc == 1) {
        col_text(q, 0, holder, 33);
        *generation = col_u64(q, 1);
        *until = col_u64(q, 2);
    }
    sqlite3_reset(q);
    return rc;
}

/*
 * 1 and the row's E in *until when holder and generation are still
 * @p lease's, 0 when they are not (or there is no row), else an error.
 */
static int sq_lease_held(struct sqlite_store *s, const char *ns, const struct idmint__lease *lease,
                         uint64_t *until)
{
    char holder[33] = "";
    uint64_t generation = 0;
    int rc = sq_lease_row(s, ns, lease->region, lease->worker_id, holder, &generation, until);

    if (rc <= 0)
        return rc;
    return strcmp(holder, lease->holder) == 0 && generation == lease->generation;
}

static int sqlite_lease_renew(struct store *st, const char *ns, struct idmint__lease *lease,
                              uint64_t until_unit, int64_t now_ms)
{
    struct sqlite_store *s = (struct sqlite_store *)st;
    struct idmint__history history = {"", 0, 0};
    uint64_t stored = 0, until = 0;
    sqlite3_stmt *q = NULL;
    int rc;

    if ((rc = sq_begin(s)) != 0)
        return rc;
    if ((rc = sq_history(s, now_ms, &history)) == 0 && (rc = sq_prep(s, ST_LEASE_RENEW, &q)) == 0) {
        bind_lease_key(s, q, ns, lease);
        bind_u64(s, q, 6, until_unit);
        rc = sq_update_returning(s, q, "renew worker lease", &stored);
    }
    if (rc == 0) {
        /* No row matched. A lost lease outranks a disabled namespace: it stops
         * minting at once, a disabled namespace only at the lease's end. */
        rc = sq_lease_held(s, ns, lease, &until);
        if (rc == 0)
            rc = idmint__store_lease_lost(ns, lease);
        else if (rc == 1)
            rc = idmint__fail(IDMINT_EDISABLED,
                              "namespace '%s' is disabled: the lease is not renewed; minting "
                              "stops at its end",
                              ns);
    }
    if (rc == 1 && (rc = sq_lease_max(s, ns, lease->granted_units)) == 0)
        rc = sq_worker_grant_update(s, ns, lease, stored, now_ms);
    rc = sq_finish(s, rc);
    if (rc == 0) {
        lease->lease_until = stored;
        lease->history = history;
    }
    return rc;
}

static int sq_lease_release(struct sqlite_store *s, const char *ns,
                            const struct idmint__lease *lease, uint64_t final_unit,
                            const char *actor, int64_t now_ms, uint64_t *stored)
{
    uint64_t before = 0;
    sqlite3_stmt *q = NULL;
    char detail[256];
    int rc = sq_lease_held(s, ns, lease, &before);

    if (rc == 0)
        return idmint__store_lease_lost(ns, lease);
    if (rc < 0 || (rc = sq_prep(s, ST_LEASE_RELEASE, &q)) != 0)
        return rc;
    bind_lease_key(s, q, ns, lease);
    bind_u64(s, q, 6, final_unit);
    rc = sq_update_returning(s, q, "release worker lease", stored);
    if (rc == 0)
        return idmint__store_lease_lost(ns, lease);
    if (rc < 0)
        return rc;
    if ((rc = sq_worker_grant_update(s, ns, lease, *stored, now_ms)) != 0)
        return rc;
    idmint__store_lease_detail(lease, before, *stored, detail, sizeof(detail));
    return sq_audit(s, now_ms, actor, "worker.release", ns, detail);
}

static int sqlite_lease_release(struct store *st, const char *ns, struct idmint__lease *lease,
                                uint64_t final_unit, const char *actor, int64_t now_ms)
{
    struct sqlite_store *s = (struct sqlite_store *)st;
    struct idmint__history history = {"", 0, 0};
    uint64_t stored = 0;
    int rc = sq_begin(s);

    if (rc != 0)
        return rc;
    rc = sq_history(s, now_ms, &history);
    if (rc == 0)
        rc = sq_lease_release(s, ns, lease, final_unit, actor, now_ms, &stored);
    rc = sq_finish(s, rc);
    if (rc == 0) {
        lease->lease_until = stored;
        lease->history = history;
    }
    return rc;
}

static void worker_row(sqlite3_stmt *q, void *out)
{
    idmint_worker_info *w = out;

    w->region = (uint32_t)sqlite3_column_int64(q, 0);
    w->worker_id = (uint32_t)sqlite3_column_int64(q, 1);
    col_text(q, 2, w->holder, sizeof(w->holder));
    w->generation = col_u64(q, 3);
    w->lease_until = col_u64(q, 4);
}

static int sqlite_lease_list(struct store *st, const char *ns, idmint_worker_info **out, size_t *n)
{
    struct sqlite_store *s = (struct sqlite_store *)st;
    sqlite3_stmt *q = NULL;
    void *list;
    int rc = sq_prep(s, ST_LEASE_LIST, &q);

    if (rc != 0)
        return rc;
    bind_text(s, q, 1, ns);
    if ((rc = sq_list(s, q, "list worker ids", sizeof(**out), worker_row, &list, n)) == 0)
        *out = list;
    return rc;
}

static int sq_force_release(struct sqlite_store *s, const char *ns, uint32_t region,
                            uint32_t worker_id, uint64_t max_until_unit, const char *actor,
                            int64_t now_ms)
{
    char holder[33] = "", detail[256];
    uint64_t generation = 0, until = 0, stored = 0;
    sqlite3_stmt *q = NULL;
    int rc = sq_lease_row(s, ns, region, worker_id, holder, &generation, &until);

    if (rc < 0)
        return rc;
    if (rc == 0)
        return idmint__fail(IDMINT_ENOTFOUND, "namespace '%s' has no worker id %u in region %u", ns,
                            (unsigned)worker_id, (unsigned)region);
    if ((rc = sq_prep(s, ST_LEASE_FORCE, &q)) != 0)
        return rc;
    bind_text(s, q, 1, ns);
    bind_i64(s, q, 2, region);
    bind_i64(s, q, 3, worker_id);
    bind_u64(s, q, 4, max_until_unit);
    if ((rc = sq_update_returning(s, q, "force release", &stored)) <= 0)
        return rc < 0
                   ? rc
                   : idmint__fail(IDMINT_ESTORE, "sqlite %s: force release found no row", s->path);
    idmint__store_force_detail(region, worker_id, holder, generation, until, stored, detail,
                               sizeof(detail));
    return sq_audit(s, now_ms, actor, "worker.force_release", ns, detail);
}

static int sqlite_lease_force_release(struct store *st, const char *ns, uint32_t region,
                                      uint32_t worker_id, uint64_t max_until_unit,
                                      const char *actor, int64_t now_ms)
{
    struct sqlite_store *s = (struct sqlite_store *)st;
    struct idmint__history history;
    int rc = sq_begin(s);

    if (rc != 0)
        return rc;
    rc = sq_history(s, now_ms, &history);
    if (rc == 0)
        rc = sq_force_release(s, ns, region, worker_id, max_until_unit, actor, now_ms);
    return sq_finish(s, rc);
}

/* ==== ranges ==== */

/* The store's history id into out->id, in the current transaction. */
static int sq_history_id(struct sqlite_store *s, struct idmint__history *out)
{
    sqlite3_stmt *q = NULL;
    int rc = sq_prep(s, ST_HISTORY_CHECK, &q);

    if (rc != 0)
        return rc;
    bind_u64(s, q, 1, 0);
    rc = sq_step(s, q, "read the history id");
    if (rc == 1)
        col_text(q, 0, out->id, sizeof(out->id));
    sqlite3_reset(q);
    return rc < 0 ? rc : 0;
}

/* Record the range grant @p res of @p incarnation, asked by res->origin. */
static int sq_range_grant(struct sqlite_store *s, const char *ns, const char *incarnation,
                          const struct idmint__range *res, int64_t now_ms)
{
    char fp[IDMINT_HOLDER_FP_LEN + 1];
    sqlite3_stmt *q = NULL;
    int rc = sq_prep(s, ST_RGRANT_INSERT, &q);

    if (rc != 0)
        return rc;
    idmint__holder_fingerprint(incarnation, fp);
    bind_text(s, q, 1, ns);
    bind_u64(s, q, 2, res->start);
    bind_u64(s, q, 3, res->end);
    bind_text(s, q, 4, fp);
    bind_origin(s, q, 5, &res->origin);
    bind_i64(s, q, 9, now_ms);
    return sq_run(s, q, "record range grant");
}

static int sq_range_reserve(struct sqlite_store *s, const char *ns, const char *incarnation,
                            const char *request_id, uint64_t count, int64_t now_ms,
                            struct idmint__range *res)
{
    idmint_ns_info info;
    uint64_t saved_count = 0;
    sqlite3_stmt *q = NULL;
    int rc = sq_prep(s, ST_RANGE_FIND, &q);

    if (rc != 0)
        return rc;
    bind_text(s, q, 1, ns);
    bind_text(s, q, 2, incarnation);
    bind_text(s, q, 3, request_id);
    rc = sq_step(s, q, "find range request");
    if (rc == 1) {
        saved_count = col_u64(q, 0);
        res->start = col_u64(q, 1);
        res->end = col_u64(q, 2);
        res->history.seq = col_u64(q, 3);
        res->history.tip = col_u64(q, 4);
    }
    sqlite3_reset(q);
    if (rc < 0)
        return rc;
    if (rc == 1) {
        /* A retry after a lost reply: answer from the record, never reserve twice. */
        if (saved_count != count)
            return idmint__store_range_replay_conflict(ns, incarnation, request_id, saved_count,
                                                       count);
        /* The pair of the grant that made the record (seq 0 for a record
         * older than version 6), under today's history id: the holder proves
         * it is still in the log before it uses the range, because the record
         * may be a restored store's (src/history.c). */
        return res->history.seq == 0 ? 0 : sq_history_id(s, &res->history);
    }

    if ((rc = sq_history(s, now_ms, &res->history)) != 0 || (rc = sq_ns_read(s, ns, &info)) != 0 ||
        (rc = idmint__store_range_grant(&info, count, res)) != 0)
        return rc;

    if ((rc = sq_prep(s, ST_RANGE_INSERT, &q)) != 0)
        return rc;
    bind_text(s, q, 1, ns);
    bind_text(s, q, 2, incarnation);
    bind_text(s, q, 3, request_id);
    bind_u64(s, q, 4, count);
    bind_u64(s, q, 5, res->start);
    bind_u64(s, q, 6, res->end);
    bind_i64(s, q, 7, now_ms);
    bind_u64(s, q, 8, res->history.seq);
    bind_u64(s, q, 9, res->history.tip);
    if ((rc = sq_run(s, q, "record range request")) != 0 ||
        (rc = sq_range_grant(s, ns, incarnation, res, now_ms)) != 0)
        return rc;
    if ((rc = sq_prep(s, ST_NS_ADVANCE, &q)) != 0)
        return rc;
    bind_text(s, q, 1, ns);
    bind_u64(s, q, 2, res->end);
    return sq_run(s, q, "advance next_value");
}

static int sqlite_range_reserve(struct store *st, const char *ns, const char *incarnation,
                                const char *request_id, uint64_t count, int64_t now_ms,
                                struct idmint__range *out)
{
    struct sqlite_store *s = (struct sqlite_store *)st;
    struct idmint__range res = {.start = 0, .origin = out->origin};
    int rc = sq_begin(s);

    if (rc != 0)
        return rc;
    rc = sq_finish(s, sq_range_reserve(s, ns, incarnation, request_id, count, now_ms, &res));
    if (rc == 0)
        *out = res;
    return rc;
}

static int sqlite_range_forget(struct store *st, const char *ns, const char *incarnation,
                               const char *before_request_id, uint64_t *forgotten)
{
    struct sqlite_store *s = (struct sqlite_store *)st;
    sqlite3_stmt *q = NULL;
    uint64_t n = 0;
    int rc = sq_begin(s);

    if (rc != 0)
        return rc;
    if ((rc = sq_prep(s, ST_RANGE_FORGET, &q)) == 0) {
        bind_text(s, q, 1, ns);
        bind_text(s, q, 2, incarnation);
        bind_text(s, q, 3, before_request_id);
        if ((rc = sq_run(s, q, "forget request records")) == 0)
            n = (uint64_t)sqlite3_changes(s->db);
    }
    if ((rc = sq_finish(s, rc)) == 0 && forgotten != NULL)
        *forgotten = n;
    return rc;
}

/* ==== audit ==== */

static void audit_row(sqlite3_stmt *q, void *out)
{
    idmint_audit_entry *e = out;

    e->seq = sqlite3_column_int64(q, 0);
    e->at_ms = sqlite3_column_int64(q, 1);
    col_text(q, 2, e->actor, sizeof(e->actor));
    col_text(q, 3, e->action, sizeof(e->action));
    col_text(q, 4, e->ns, sizeof(e->ns));
    col_text(q, 5, e->detail, sizeof(e->detail));
}

static int sqlite_audit_list(struct store *st, int64_t after_seq, size_t limit,
                             idmint_audit_entry **out, size_t *n)
{
    struct sqlite_store *s = (struct sqlite_store *)st;
    sqlite3_stmt *q = NULL;
    void *list;
    int rc = sq_prep(s, ST_AUDIT_LIST, &q);

    if (rc != 0)
        return rc;
    bind_i64(s, q, 1, after_seq);
    bind_i64(s, q, 2, limit > (size_t)INT64_MAX ? INT64_MAX : (int64_t)limit);
    if ((rc = sq_list(s, q, "list audit records", sizeof(**out), audit_row, &list, n)) == 0)
        *out = list;
    return rc;
}

/* ==== version 4: trace, prune, batches, collisions ==== */

static void grant_row(sqlite3_stmt *q, void *out)
{
    idmint_grant_info *g = out;

    g->size = sizeof(*g);
    g->region = (uint32_t)sqlite3_column_int64(q, 0);
    g->worker_id = (uint32_t)sqlite3_column_int64(q, 1);
    g->generation = col_u64(q, 2);
    g->first = col_u64(q, 3);
    g->last = col_u64(q, 4);
    col_text(q, 5, g->holder, sizeof(g->holder));
    col_text(q, 6, g->host, sizeof(g->host));
    g->pid = (uint32_t)sqlite3_column_int64(q, 7);
    col_text(q, 8, g->program, sizeof(g->program));
    col_text(q, 9, g->token, sizeof(g->token));
    g->granted_ms = sqlite3_column_int64(q, 10);
    g->updated_ms = sqlite3_column_int64(q, 11);
}

static int sqlite_grant_find(struct store *st, const char *ns, const struct idmint__grant_query *gq,
                             idmint_grant_info **out, size_t *n)
{
    struct sqlite_store *s = (struct sqlite_store *)st;
    int range = gq->kind == IDMINT_KIND_RANGE;
    sqlite3_stmt *q = NULL;
    void *list = NULL;
    int rc = sq_prep(s, range ? ST_RGRANT_FIND : ST_WGRANT_FIND, &q);

    if (rc != 0)
        return rc;
    bind_text(s, q, 1, ns);
    if (range) {
        bind_u64(s, q, 2, gq->value);
    } else {
        bind_i64(s, q, 2, gq->region);
        bind_i64(s, q, 3, gq->worker_id);
        bind_u64(s, q, 4, gq->unit);
    }
    if ((rc = sq_list(s, q, "find grants", sizeof(**out), grant_row, &list, n)) != 0)
        return rc;
    if (range)
        idmint__store_grants_covering(list, n, gq->value);
    else
        for (size_t i = 0; i < *n; i++)
            ((idmint_grant_info *)list)[i].kind = IDMINT_KIND_SNOWFLAKE;
    if (*n == 0) {
        free(list);
        list = NULL;
    }
    *out = list;
    return 0;
}

static int sqlite_prune(struct store *st, int what, int64_t before_ms, size_t limit,
                        uint64_t *pruned)
{
    static const enum sq_stmt_id stmt[IDMINT__KEEP__COUNT] = {
        [IDMINT__KEEP_WORKER_GRANTS] = ST_PRUNE_WGRANTS,
        [IDMINT__KEEP_RANGE_GRANTS] = ST_PRUNE_RGRANTS,
        [IDMINT__KEEP_BATCHES] = ST_PRUNE_BATCHES,
        [IDMINT__KEEP_COLLISIONS] = ST_PRUNE_COLLISIONS,
    };
    struct sqlite_store *s = (struct sqlite_store *)st;
    sqlite3_stmt *q = NULL;
    int rc = sq_begin(s);

    if (rc != 0)
        return rc;
    if ((rc = sq_prep(s, stmt[what], &q)) == 0) {
        bind_i64(s, q, 1, before_ms);
        bind_i64(s, q, 2, (int64_t)limit);
        rc = sq_run(s, q, "prune old records");
    }
    if (rc == 0 && pruned != NULL)
        *pruned = (uint64_t)sqlite3_changes(s->db);
    return sq_finish(s, rc);
}

/* Read the batch of (@p owner, @p key) into @p out: 1, 0 when none, else an error. */
static int sq_batch_read(struct sqlite_store *s, const char *owner, const char *key,
                         struct idmint__batch *out)
{
    sqlite3_stmt *q = NULL;
    int rc = sq_prep(s, ST_BATCH_GET, &q);

    if (rc != 0)
        return rc;
    bind_text(s, q, 1, owner);
    bind_text(s, q, 2, key);
    rc = sq_step(s, q, "read batch");
    if (rc == 1) {
        const unsigned char *runs = sqlite3_column_text(q, 4);

        col_text(q, 0, out->ns, sizeof(out->ns));
        col_text(q, 1, out->key, sizeof(out->key));
        col_text(q, 2, out->owner, sizeof(out->owner));
        out->count = (uint32_t)sqlite3_column_int64(q, 3);
        out->created_ms = sqlite3_column_int64(q, 5);
        out->expires_ms = sqlite3_column_int64(q, 6);
        free(out->runs);
        out->runs = strdup(runs != NULL ? (const char *)runs : "");
        if (out->runs == NULL)
            rc = idmint__fail(IDMINT_ENOMEM, "out of memory reading batch '%s'", key);
    }
    sqlite3_reset(q);
    return rc;
}

static int sqlite_batch_get(struct store *st, const char *owner, const char *key,
                            struct idmint__batch *out)
{
    struct sqlite_store *s = (struct sqlite_store *)st;
    int rc = sq_batch_read(s, owner, key, out);

    if (rc == 0)
        return idmint__fail(IDMINT_ENOTFOUND, "no batch was saved under key '%s'", key);
    return rc < 0 ? rc : 0;
}

static int sqlite_batch_claim(struct store *st, const struct idmint__batch *b,
                              struct idmint__batch *saved, int *inserted)
{
    struct sqlite_store *s = (struct sqlite_store *)st;
    sqlite3_stmt *q = NULL;
    int rc = sq_begin(s);

    if (rc != 0)
        return rc;
    if ((rc = sq_prep(s, ST_BATCH_INSERT, &q)) == 0) {
        bind_text(s, q, 1, b->ns);
        bind_text(s, q, 2, b->key);
        bind_text(s, q, 3, b->owner);
        bind_i64(s, q, 4, b->count);
        bind_text(s, q, 5, b->runs);
        bind_i64(s, q, 6, b->keep_ms);
        rc = sq_run(s, q, "save batch");
    }
    if (rc == 0) {
        *inserted = sqlite3_changes(s->db) == 1;
        rc = sq_batch_read(s, b->owner, b->key, saved);
        rc = rc == 1 ? 0
             : rc == 0
                 ? idmint__fail(IDMINT_ESTORE, "sqlite %s: batch '%s' vanished", s->path, b->key)
                 : rc;
    }
    rc = sq_finish(s, rc);
    if (rc != 0)
        idmint__batch_clear(saved);
    return rc;
}

static void collision_row(sqlite3_stmt *q, void *out);

/* The record of (c->ns, c->id, c->reporter) into @p out: 1, 0 when none, else an error. */
static int sq_collision_find(struct sqlite_store *s, const idmint_collision *c,
                             idmint_collision *out)
{
    sqlite3_stmt *q = NULL;
    int rc = sq_prep(s, ST_COLLISION_FIND, &q);

    if (rc != 0)
        return rc;
    bind_text(s, q, 1, c->ns);
    bind_u64(s, q, 2, c->id);
    bind_text(s, q, 3, c->reporter);
    if ((rc = sq_step(s, q, "find collision")) == 1) {
        memset(out, 0, sizeof(*out));
        collision_row(q, out);
    }
    sqlite3_reset(q);
    return rc;
}

static int sqlite_collision_add(struct store *st, const idmint_collision *c, const char *actor,
                                int64_t now_ms, int64_t keep_ms, idmint_collision *saved,
                                int *inserted)
{
    struct sqlite_store *s = (struct sqlite_store *)st;
    sqlite3_stmt *q = NULL;
    char detail[256];
    int rc = sq_begin(s), row = 0;

    if (rc != 0)
        return rc;
    if ((rc = sq_prep(s, ST_COLLISION_INSERT, &q)) == 0) {
        bind_text(s, q, 1, c->ns);
        bind_u64(s, q, 2, c->id);
        bind_text(s, q, 3, c->first_owner);
        bind_text(s, q, 4, c->second_owner);
        bind_text(s, q, 5, c->verdict);
        bind_text(s, q, 6, c->reporter);
        bind_i64(s, q, 7, c->observed_ms);
        bind_i64(s, q, 8, now_ms);
        bind_text(s, q, 9, c->note);
        bind_i64(s, q, 10, keep_ms);
        while ((rc = sq_step(s, q, "record collision")) == 1)
            row = 1; /* none: (ns, id, reporter) was reported before */
        sqlite3_reset(q);
    }
    if (rc == 0 && (rc = sq_collision_find(s, c, saved)) == 0)
        rc = idmint__fail(IDMINT_ESTORE, "sqlite %s: collision record vanished", s->path);
    if (rc == 1 && row) {
        idmint__store_collision_detail(c, detail, sizeof(detail));
        rc = sq_audit(s, now_ms, actor, "collision.report", c->ns, detail);
    }
    rc = sq_finish(s, rc == 1 ? 0 : rc);
    if (rc == 0)
        *inserted = row;
    return rc;
}

/* One row of COLLISION_COLUMNS into @p out. */
static void collision_row(sqlite3_stmt *q, void *out)
{
    idmint_collision *c = out;

    c->size = sizeof(*c);
    c->seq = sqlite3_column_int64(q, 0);
    col_text(q, 1, c->ns, sizeof(c->ns));
    c->id = col_u64(q, 2);
    col_text(q, 3, c->first_owner, sizeof(c->first_owner));
    col_text(q, 4, c->second_owner, sizeof(c->second_owner));
    col_text(q, 5, c->verdict, sizeof(c->verdict));
    col_text(q, 6, c->reporter, sizeof(c->reporter));
    c->observed_ms = sqlite3_column_int64(q, 7);
    c->reported_ms = sqlite3_column_int64(q, 8);
    col_text(q, 9, c->note, sizeof(c->note));
}

static int sqlite_collision_list(struct store *st, int64_t after_seq, size_t limit,
                                 idmint_collision **out, size_t *n)
{
    struct sqlite_store *s = (struct sqlite_store *)st;
    sqlite3_stmt *q = NULL;
    void *list;
    int rc = sq_prep(s, ST_COLLISION_LIST, &q);

    if (rc != 0)
        return rc;
    bind_i64(s, q, 1, after_seq);
    bind_i64(s, q, 2, (int64_t)limit);
    if ((rc = sq_list(s, q, "list collisions", sizeof(**out), collision_row, &list, n)) == 0)
        *out = list;
    return rc;
}

/* ==== backup and fence ==== */

static void unlink_copy(const char *dest)
{
    char side[4300]; /* a path of up to 4200 bytes and a suffix */

    unlink(dest);
    snprintf(side, sizeof(side), "%s-wal", dest);
    unlink(side);
    snprintf(side, sizeof(side), "%s-shm", dest);
    unlink(side);
    snprintf(side, sizeof(side), "%s-journal", dest);
    unlink(side);
}

/*
 * Copy every page of s->db into the new file @p dest under one read
 * transaction (consistent: writers go on meanwhile in WAL mode), mark the
 * copy, and fold its WAL into the file (journal_mode=DELETE) so that it is
 * one self-contained file whose mark is in the file itself: a copy of the
 * .db alone keeps it.
 */
static int sq_copy_marked(struct sqlite_store *s, const char *dest, int64_t now_ms)
{
    uint64_t deadline_ms = idmint__deadline_now_ms() + SQ_RETRY_MS;
    sqlite3_backup *b;
    sqlite3 *out = NULL;
    char sql[64];
    int rc = sqlite3_open_v2(dest, &out, SQLITE_OPEN_READWRITE, NULL);

    if (rc != SQLITE_OK) {
        rc = idmint__fail(IDMINT_EUNAVAILABLE, "backup: cannot open %s: %s", dest,
                          out != NULL ? sqlite3_errmsg(out) : sqlite3_errstr(rc));
        sqlite3_close_v2(out);
        return rc;
    }
    if ((b = sqlite3_backup_init(out, "main", s->db, "main")) == NULL) {
        rc = idmint__fail(IDMINT_ESTORE, "backup to %s: %s", dest, sqlite3_errmsg(out));
        sqlite3_close_v2(out);
        return rc;
    }
    while ((rc = sqlite3_backup_step(b, -1)) == SQLITE_BUSY || rc == SQLITE_LOCKED) {
        if (idmint__deadline_now_ms() >= deadline_ms)
            break;
        idmint__sleep_ms(5);
    }
    sqlite3_backup_finish(b);
    if (rc != SQLITE_DONE) {
        rc = idmint__fail(rc == SQLITE_BUSY ? IDMINT_EUNAVAILABLE : IDMINT_ESTORE,
                          "backup to %s: %s", dest, sqlite3_errstr(rc));
        sqlite3_close_v2(out);
        return rc;
    }
    snprintf(sql, sizeof(sql), "UPDATE history SET backup_ms = %lld", (long long)now_ms);
    rc = sqlite3_exec(out, "PRAGMA synchronous=FULL", NULL, NULL, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(out, sql, NULL, NULL, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(out, "PRAGMA journal_mode=DELETE", NULL, NULL, NULL);
    if (rc != SQLITE_OK)
        rc = idmint__fail(IDMINT_ESTORE, "backup: cannot mark %s as a backup: %s", dest,
                          sqlite3_errmsg(out));
    sqlite3_close_v2(out);
    return rc == SQLITE_OK ? 0 : rc;
}

/* fsync(2) the file at @p path: 0, or the errno. */
static int sync_file(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC), err = 0;

    if (fd < 0)
        return errno;
    if (fsync(fd) != 0)
        err = errno;
    close(fd);
    return err;
}

/*
 * Build the copy aside, at a private name beside @p dest, mark it there and
 * make it one self-contained file (no -wal), sync it, and only then link(2)
 * it to @p dest: a backup is never visible under its name unmarked or
 * incomplete, whenever the process is killed (a copy killed half-way used
 * to be complete, unmarked, and served at once), and link() never replaces
 * a file that is there (ECONFLICT).
 */
static int sqlite_backup(struct store *st, const char *dest, const char *actor, int64_t now_ms)
{
    struct sqlite_store *s = (struct sqlite_store *)st;
    const char *slash = strrchr(dest, '/');
    char detail[600], text[128], tmp[4200];
    uint64_t rnd = 0;
    struct stat sb;
    int fd, rc, err;

    if (lstat(dest, &sb) == 0)
        return idmint__fail(IDMINT_ECONFLICT,
                            "backup: %s exists (a backup never overwrites a file)", dest);
    if (idmint__entropy(&rnd, sizeof(rnd)) != 0)
        rnd = (uint64_t)getpid() << 32 ^ idmint__deadline_now_ms();
    if ((size_t)snprintf(tmp, sizeof(tmp), "%.*s.idmint-backup-%016llx",
                         slash != NULL ? (int)(slash - dest + 1) : 0, dest,
                         (unsigned long long)rnd) >= sizeof(tmp))
        return idmint__fail(IDMINT_EINVAL, "backup: the path %s is too long", dest);
    fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, SQ_FILE_MODE);
    if (fd < 0) {
        errno_text(errno, text, sizeof(text));
        return idmint__fail(IDMINT_EUNAVAILABLE, "backup: cannot create %s beside %s: %s", tmp,
                            dest, text);
    }
    sq_share_mode(fd, dest);
    close(fd);
    /* Audited first, so that the copy holds its own record. */
    snprintf(detail, sizeof(detail), "dest=%s", dest);
    if ((rc = sq_begin(s)) == 0)
        rc = sq_finish(s, sq_audit(s, now_ms, actor, "authority.backup", "", detail));
    if (rc == 0)
        rc = sq_copy_marked(s, tmp, now_ms);
    if (rc == 0 && (err = sync_file(tmp)) != 0) {
        errno_text(err, text, sizeof(text));
        rc = idmint__fail(IDMINT_EUNAVAILABLE, "backup: cannot sync %s: %s", tmp, text);
    }
    if (rc == 0 && link(tmp, dest) != 0) {
        err = errno;
        errno_text(err, text, sizeof(text));
        rc = idmint__fail(err == EEXIST ? IDMINT_ECONFLICT : IDMINT_EUNAVAILABLE,
                          "backup: cannot link the finished copy to %s: %s%s", dest, text,
                          err == EEXIST ? " (a backup never overwrites a file)" : "");
    }
    unlink_copy(tmp);
    if (rc == 0)
        sync_dir_of(dest, slash);
    return rc;
}

static int sq_fence_step(struct sqlite_store *s, const struct idmint__fence_step *step,
                         const char *actor, int64_t now_ms)
{
    idmint_ns_info info;
    sqlite3_stmt *q = NULL;
    char detail[384];
    uint64_t next, longest = 0;
    int rc = sq_ns_read(s, step->ns, &info);

    if (rc != 0)
        return rc;
    if (step->kind == IDMINT_KIND_RANGE && step->next_value < info.next_value)
        return idmint__store_fence_backwards(step, info.next_value);
    if (step->kind == IDMINT_KIND_SNOWFLAKE) {
        if ((rc = sq_prep(s, ST_NS_LEASE_MAX_GET, &q)) != 0)
            return rc;
        bind_text(s, q, 1, step->ns);
        rc = sq_step(s, q, "read the longest lease");
        longest = rc == 1 ? col_u64(q, 0) : 0;
        sqlite3_reset(q);
        if (rc < 0)
            return rc;
        if (step->lease_units < longest && !step->allow_short)
            return idmint__store_fence_short(step, longest);
    }
    next = step->kind == IDMINT_KIND_RANGE ? step->next_value : info.next_value;
    if ((rc = sq_prep(s, ST_NS_FENCE, &q)) != 0)
        return rc;
    bind_text(s, q, 1, step->ns);
    bind_u64(s, q, 2, step->floor);
    bind_u64(s, q, 3, next);
    if ((rc = sq_run(s, q, "fence namespace")) != 0)
        return rc;
    idmint__store_fence_detail(step, info.floor, info.next_value, detail, sizeof(detail));
    if (step->kind == IDMINT_KIND_SNOWFLAKE && step->lease_units < longest)
        snprintf(detail + strlen(detail), sizeof(detail) - strlen(detail),
                 " short_lease=forced quarantine_units=%llu longest_lease_units=%llu",
                 (unsigned long long)step->lease_units, (unsigned long long)longest);
    return sq_audit(s, now_ms, actor, "authority.fence", step->ns, detail);
}

static int sqlite_fence(struct store *st, const struct idmint__fence_step *steps, size_t n,
                        const char *history_id, const char *actor, int64_t now_ms)
{
    struct sqlite_store *s = (struct sqlite_store *)st;
    sqlite3_stmt *q = NULL;
    uint64_t tip = 0, seq = 0;
    char detail[128];
    size_t i;
    int rc = sq_begin(s);

    if (rc != 0)
        return rc;
    for (i = 0; i < n && rc == 0; i++)
        rc = sq_fence_step(s, &steps[i], actor, now_ms);
    if (rc == 0)
        rc = idmint__store_history_tip(&tip);
    if (rc == 0 && (rc = sq_prep(s, ST_HISTORY_FENCE, &q)) == 0) {
        bind_text(s, q, 1, history_id);
        bind_u64(s, q, 2, tip);
        rc = sq_update_returning(s, q, "start a new history", &seq);
        rc = rc == 1 ? sq_history_log(s, seq, tip, now_ms)
             : rc == 0
                 ? idmint__fail(IDMINT_ESTORE, "sqlite %s: the history row is missing", s->path)
                 : rc;
    }
    if (rc == 0) {
        snprintf(detail, sizeof(detail), "history=%.8s namespaces=%zu backup_mark=cleared",
                 history_id, n);
        rc = sq_audit(s, now_ms, actor, "authority.fence", "", detail);
    }
    return sq_finish(s, rc);
}

/* ==== history ==== */

/* Split @p text, ids separated by spaces, newest first, into out->lineage. */
static void lineage_parse(const char *text, struct idmint__history_state *out)
{
    const char *p = text;

    out->lineage_n = 0;
    while (p != NULL && *p != '\0' && out->lineage_n < IDMINT__LINEAGE_MAX) {
        size_t len = strcspn(p, " ");

        if (len == 32) {
            memcpy(out->lineage[out->lineage_n], p, 32);
            out->lineage[out->lineage_n++][32] = '\0';
        }
        p += len;
        p += strspn(p, " ");
    }
}

static int sqlite_history_check(struct store *st, uint64_t seq, struct idmint__history_state *out)
{
    struct sqlite_store *s = (struct sqlite_store *)st;
    char lineage[SQ_LINEAGE_CHARS + 1];
    sqlite3_stmt *q = NULL;
    int rc;

    /* A file moved into place under us: this connection still reads the old
     * one, so what it says proves nothing about the store at the path, and
     * our grants are not in the new file. */
    if (sq_check_file(s) != 0)
        return idmint__fail(IDMINT_ERESTORED,
                            "sqlite %s: the database file was removed or replaced while in use "
                            "(a copy put in its place?): what this process holds is not in it",
                            s->path);
    if ((rc = sq_prep(s, ST_HISTORY_CHECK, &q)) != 0)
        return rc;
    bind_u64(s, q, 1, seq);
    rc = sq_step(s, q, "read the history");
    if (rc == 1) {
        col_text(q, 0, out->head.id, sizeof(out->head.id));
        out->head.seq = col_u64(q, 1);
        out->head.tip = col_u64(q, 2);
        out->backup_ms = sqlite3_column_int64(q, 3);
        col_text(q, 4, out->store_id, sizeof(out->store_id));
        col_text(q, 5, lineage, sizeof(lineage));
        out->oldest_seq = col_u64(q, 6);
        out->tip_at_seq = col_u64(q, 7);
        lineage_parse(lineage, out);
    }
    sqlite3_reset(q);
    if (rc == 0)
        return idmint__fail(IDMINT_ESTORE,
                            "sqlite %s: the history row is missing: a damaged authority", s->path);
    return rc < 0 ? rc : 0;
}

/*
 * The file's full path as SQLite made it when the store was opened
 * (sqlite3_db_filename: absolute, with "." and ".." and symbolic links
 * resolved by the unix VFS), so that a relative path or a link names the
 * same place as the file itself.
 */
static int sqlite_location(const struct store *st, char *buf, size_t size)
{
    const struct sqlite_store *s = (const struct sqlite_store *)st;
    int n = snprintf(buf, size, "sqlite:%s", s->file);

    if (n < 0 || (size_t)n >= size)
        return idmint__fail(IDMINT_EINVAL, "sqlite %s: the path is too long for its location key",
                            s->path);
    return 0;
}

/* ==== records ==== */

static int sqlite_record_get(struct store *st, const char *key, char *value, size_t size,
                             uint64_t *version)
{
    struct sqlite_store *s = (struct sqlite_store *)st;
    sqlite3_stmt *q = NULL;
    int rc = sq_prep(s, ST_RECORD_GET, &q);

    if (rc != 0)
        return rc;
    bind_text(s, q, 1, key);
    rc = sq_step(s, q, "read a record");
    if (rc == 1) {
        col_text(q, 0, value, size);
        *version = col_u64(q, 1);
    }
    sqlite3_reset(q);
    if (rc == 0)
        return idmint__fail(IDMINT_ENOTFOUND, "sqlite %s: no record '%s'", s->path, key);
    return rc < 0 ? rc : 0;
}

static int sqlite_record_put(struct store *st, const char *key, const char *value, uint64_t expect,
                             const char *actor, const char *action, int64_t now_ms)
{
    struct sqlite_store *s = (struct sqlite_store *)st;
    sqlite3_stmt *q = NULL;
    int rc;

    if ((rc = sq_begin(s)) != 0)
        return rc;
    if ((rc = sq_prep(s, expect == 0 ? ST_RECORD_INSERT : ST_RECORD_UPDATE, &q)) == 0) {
        bind_text(s, q, 1, key);
        bind_text(s, q, 2, value);
        bind_i64(s, q, 3, now_ms);
        if (expect != 0)
            bind_u64(s, q, 4, expect);
        rc = sq_run(s, q, "write a record");
        if (rc == 0 && sqlite3_changes(s->db) == 0)
            rc = idmint__fail(IDMINT_ECONFLICT,
                              "sqlite %s: record '%s' changed since it was read (another writer)",
                              s->path, key);
    }
    if (rc == 0)
        rc = sq_audit(s, now_ms, actor, action, "", value);
    return sq_finish(s, rc);
}

const struct store_ops idmint__store_sqlite = {
    .version = STORE_OPS_V8,
    .scheme = "sqlite",
    .caps = STORE_CAP_TXN,
    .open = sqlite_open,
    .close = sqlite_close,
    .ns_create = sqlite_ns_create,
    .ns_get = sqlite_ns_get,
    .ns_list = sqlite_ns_list,
    .ns_set_disabled = sqlite_ns_set_disabled,
    .lease_take = sqlite_lease_take,
    .lease_renew = sqlite_lease_renew,
    .lease_release = sqlite_lease_release,
    .lease_list = sqlite_lease_list,
    .lease_force_release = sqlite_lease_force_release,
    .range_reserve = sqlite_range_reserve,
    .audit_list = sqlite_audit_list,
    .range_forget = sqlite_range_forget,
    .backup = sqlite_backup,
    .fence = sqlite_fence,
    .grant_find = sqlite_grant_find,
    .prune = sqlite_prune,
    .batch_get = sqlite_batch_get,
    .batch_claim = sqlite_batch_claim,
    .collision_add = sqlite_collision_add,
    .collision_list = sqlite_collision_list,
    .history_check = sqlite_history_check,
    .location = sqlite_location,
    .record_get = sqlite_record_get,
    .record_put = sqlite_record_put,
};
