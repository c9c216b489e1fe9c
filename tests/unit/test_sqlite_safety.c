/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for the safety rules of src/store/store_sqlite.c: databases
 * private to one process are refused, a new file appears complete or not at
 * all, files that are not idmint authorities are refused untouched,
 * read-only opens create nothing, a removed or replaced file is never
 * written, and version 1 files are migrated once. The lease contract itself
 * is the store suite's (tests/store/).
 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "idmint.h"
#include "internal.h"
#include "store.h"
#include "testsupport.h"

#include <sqlite3.h>

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ACTOR    "test"
#define NOW_MS   INT64_C(1780000000000)
#define HOLDER_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define HOLDER_B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"

/* The version 1 schema, as idmint 0.1 wrote it (git show 8eb1fb5:src/store/store_sqlite.c). */
static const char v1_schema_sql[] =
    "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL);"
    "CREATE TABLE IF NOT EXISTS namespaces ("
    " name TEXT PRIMARY KEY, kind TEXT NOT NULL,"
    " time_bits INTEGER NOT NULL, region_bits INTEGER NOT NULL,"
    " worker_bits INTEGER NOT NULL, sequence_bits INTEGER NOT NULL,"
    " unit_ms INTEGER NOT NULL, epoch_ms INTEGER NOT NULL,"
    " next_value INTEGER NOT NULL, max_value INTEGER NOT NULL,"
    " block INTEGER NOT NULL, max_block INTEGER NOT NULL,"
    " disabled INTEGER NOT NULL, created_ms INTEGER NOT NULL);"
    "CREATE TABLE IF NOT EXISTS worker_leases ("
    " namespace TEXT NOT NULL, region INTEGER NOT NULL, worker_id INTEGER NOT NULL,"
    " holder TEXT NOT NULL, generation INTEGER NOT NULL, lease_until INTEGER NOT NULL,"
    " PRIMARY KEY (namespace, region, worker_id));"
    "CREATE TABLE IF NOT EXISTS range_leases ("
    " namespace TEXT NOT NULL, incarnation TEXT NOT NULL, request_id TEXT NOT NULL,"
    " count INTEGER NOT NULL, start INTEGER NOT NULL, \"end\" INTEGER NOT NULL,"
    " created_ms INTEGER NOT NULL,"
    " PRIMARY KEY (namespace, incarnation, request_id));"
    "CREATE TABLE IF NOT EXISTS audit ("
    " seq INTEGER PRIMARY KEY AUTOINCREMENT, at_ms INTEGER NOT NULL, actor TEXT NOT NULL,"
    " action TEXT NOT NULL, namespace TEXT NOT NULL, detail TEXT NOT NULL);"
    "INSERT INTO schema_version (version)"
    " SELECT 1 WHERE NOT EXISTS (SELECT 1 FROM schema_version);"
    /* A snowflake namespace with two worker rows: one held until 5000, one released at 3000. */
    "INSERT INTO namespaces VALUES ('old', 'snowflake', 41, 0, 10, 12, 1, 1767225600000,"
    " 0, 0, 0, 0, 0, 1780000000000);"
    "INSERT INTO worker_leases VALUES ('old', 0, 0, '" HOLDER_A "', 1, 5000);"
    "INSERT INTO worker_leases VALUES ('old', 0, 1, '', 4, 3000);";

struct fx {
    char *dir;
    char path[512]; /* <dir>/auth.db */
    char url[600];  /* sqlite:<path> */
    char *old_cwd;
};

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof(*f));

    if (f == NULL || (f->dir = ts_tempdir()) == NULL)
        return -1;
    snprintf(f->path, sizeof(f->path), "%s/auth.db", f->dir);
    snprintf(f->url, sizeof(f->url), "sqlite:%s", f->path);
    /* Relative names ("file:x?mode=memory") land here, where the test can see them. */
    if ((f->old_cwd = getcwd(NULL, 0)) == NULL || chdir(f->dir) != 0)
        return -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;

    if (chdir(f->old_cwd) != 0)
        return -1;
    free(f->old_cwd);
    ts_rmtree(f->dir);
    free(f);
    return 0;
}

/* How many entries (besides . and ..) the folder @p dir has. */
static int dir_entries(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;

    assert_non_null(d);
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            n++;
    closedir(d);
    return n;
}

/* Run @p sql on the file @p path with sqlite itself (creating it). */
static void sql_exec(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    char *err = NULL;

    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK)
        fail_msg("sqlite: %s", err != NULL ? err : "?");
    assert_int_equal(sqlite3_close(db), SQLITE_OK);
}

/* One integer from @p sql on @p path, read with sqlite itself; -1 when there is no row. */
static int64_t sql_int(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *q = NULL;
    int64_t v = -1;

    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    /* A process opening the file at the same moment sets up its WAL index:
     * wait for that as every idmint process does, instead of failing BUSY. */
    sqlite3_busy_timeout(db, 5000);
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &q, NULL), SQLITE_OK);
    if (sqlite3_step(q) == SQLITE_ROW)
        v = sqlite3_column_int64(q, 0);
    sqlite3_finalize(q);
    sqlite3_close(db);
    return v;
}

/* The whole of a small file, malloc'd, and its size in *n. */
static char *slurp(const char *path, size_t *n)
{
    FILE *fp = fopen(path, "rb");
    char *buf = malloc(1 << 16);

    assert_non_null(fp);
    assert_non_null(buf);
    *n = fread(buf, 1, 1 << 16, fp);
    fclose(fp);
    return buf;
}

static void snowflake_ns(idmint_ns_info *ns, const char *name)
{
    idmint_ns_info_init(ns, IDMINT_KIND_SNOWFLAKE);
    snprintf(ns->name, sizeof(ns->name), "%s", name);
}

static void lease_init(struct idmint__lease *l, const char *holder)
{
    memset(l, 0, sizeof(*l));
    memcpy(l->holder, holder, sizeof(l->holder));
}

/* ==== 1. databases private to one process ==== */

static void test_sqlite_safety__memory_and_temporary_databases_are_refused(void **state)
{
    struct fx *f = *state;
    static const char *const urls[] = {
        "sqlite::memory:",
        "sqlite:file::memory:",
        "sqlite:file::memory:?cache=shared",
        "sqlite:file:x.db?mode=memory",
        "sqlite:file:x.db?cache=shared&mode=memory",
        "sqlite:file:%3Amemory%3A",
        "sqlite:file:/x.db?vfs=memdb",
        "sqlite:file:",
        "sqlite:file:?mode=rwc",
        "sqlite:file://localhost?mode=rwc",
    };
    struct store *st = (struct store *)f; /* sentinel: must stay as it is */
    size_t i;

    for (i = 0; i < sizeof(urls) / sizeof(urls[0]); i++) {
        assert_int_equal(idmint__store_open(urls[i], NULL, &st), IDMINT_EINVAL);
        if (strstr(idmint_errmsg(), "mint the same IDs; use a file path") == NULL)
            fail_msg("%s: message '%s'", urls[i], idmint_errmsg());
        assert_ptr_equal(st, (struct store *)f);
    }
    assert_int_equal(dir_entries(f->dir), 0); /* not even "x.db" */
}

static void test_sqlite_safety__a_file_uri_with_a_path_still_works(void **state)
{
    struct fx *f = *state;
    struct store *st = NULL;
    char url[700];

    /* %20 is a space: the file is created under its decoded name. */
    snprintf(url, sizeof(url), "sqlite:file://localhost%s/a%%20b.db?mode=rwc", f->dir);
    assert_int_equal(idmint__store_open(url, NULL, &st), 0);
    idmint__store_close(st);
    snprintf(url, sizeof(url), "%s/a b.db", f->dir);
    assert_int_equal(access(url, F_OK), 0);
}

/* ==== 3. a new file is complete, or not there; what is there is judged ==== */

static void test_sqlite_safety__a_new_file_is_complete_when_it_first_appears(void **state)
{
    struct fx *f = *state;
    struct store *st = NULL;
    pid_t pid;
    int status;

    /* A child watches the path and reads the file the moment it appears. */
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct timespec t0, t;
        struct stat sb;

        clock_gettime(CLOCK_MONOTONIC, &t0);
        do {
            if (stat(f->path, &sb) == 0) {
                if (sb.st_size == 0)
                    _exit(2);
                _exit(sql_int(f->path, "SELECT version FROM schema_version") == 7 ? 0 : 3);
            }
            clock_gettime(CLOCK_MONOTONIC, &t);
        } while (t.tv_sec - t0.tv_sec < 10);
        _exit(4);
    }
    nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL);
    assert_int_equal(idmint__store_open(f->url, NULL, &st), 0);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    idmint__store_close(st);
    /* WAL is set in the file itself, and nothing of the making is left behind. */
    assert_int_equal(dir_entries(f->dir), 1);
    assert_int_equal(sql_int(f->path, "SELECT version FROM schema_version"), 7);
    {
        size_t n = 0;
        char *head = slurp(f->path, &n);

        assert_true(n >= 100);
        assert_int_equal(head[18], 2); /* file format: WAL */
        free(head);
    }
}

static void test_sqlite_safety__many_processes_create_one_file_together(void **state)
{
    struct fx *f = *state;
    enum { PROCS = 8 };
    pid_t pids[PROCS];
    int gate[2], k;
    idmint_audit_entry *au = NULL;
    idmint_authority *a = NULL;
    size_t n = 0;

    assert_int_equal(pipe(gate), 0);
    for (k = 0; k < PROCS; k++) {
        pids[k] = fork();
        assert_true(pids[k] >= 0);
        if (pids[k] == 0) {
            idmint_authority *mine = NULL;
            idmint_ns_info ns;
            char c;
            int rc;

            close(gate[1]);
            while (read(gate[0], &c, 1) > 0)
                ;
            rc = idmint_authority_open(&mine, f->url, 0);
            if (rc == 0) {
                idmint_ns_info_init(&ns, IDMINT_KIND_RANGE);
                snprintf(ns.name, sizeof(ns.name), "p%d", k);
                rc = idmint_ns_create(mine, &ns);
            }
            if (rc != 0)
                fprintf(stderr, "child %d: %s: %s\n", k, idmint_strerror(rc), idmint_errmsg());
            idmint_authority_close(mine);
            _exit(rc == 0 ? 0 : 1);
        }
    }
    close(gate[0]);
    close(gate[1]);
    for (k = 0; k < PROCS; k++) {
        int status;

        assert_int_equal(waitpid(pids[k], &status, 0), pids[k]);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
    }
    /* One file, holding every child's namespace. */
    assert_int_equal(idmint_authority_open(&a, f->url, 0), 0);
    assert_int_equal(idmint_audit_list(a, 0, 100, &au, &n), 0);
    assert_int_equal(n, PROCS);
    free(au);
    idmint_authority_close(a);
}

static void test_sqlite_safety__an_empty_file_is_refused_and_left_alone(void **state)
{
    struct fx *f = *state;
    struct store *st = NULL;
    struct stat sb;
    int fd = open(f->path, O_CREAT | O_WRONLY, 0644);

    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(idmint__store_open(f->url, NULL, &st), IDMINT_ESTORE);
    assert_non_null(strstr(idmint_errmsg(), f->path));
    assert_non_null(strstr(idmint_errmsg(), "exists but is empty (0 bytes)"));
    assert_non_null(strstr(idmint_errmsg(), "remove it to start a new, empty authority"));
    assert_null(st);
    assert_int_equal(stat(f->path, &sb), 0);
    assert_int_equal(sb.st_size, 0);
    assert_int_equal(dir_entries(f->dir), 1); /* no -wal, no -shm */
}

static void test_sqlite_safety__another_sqlite_database_is_refused_and_left_alone(void **state)
{
    struct fx *f = *state;
    struct store *st = NULL;
    char *before, *after;
    size_t n_before, n_after;

    sql_exec(f->path, "CREATE TABLE customers (id INTEGER); INSERT INTO customers VALUES (7);");
    before = slurp(f->path, &n_before);
    assert_int_equal(idmint__store_open(f->url, NULL, &st), IDMINT_ESTORE);
    assert_non_null(strstr(idmint_errmsg(), f->path));
    assert_non_null(strstr(idmint_errmsg(), "not an idmint authority"));
    assert_null(st);
    after = slurp(f->path, &n_after);
    /* Byte for byte: not switched to WAL, no table added. */
    assert_int_equal(n_before, n_after);
    assert_memory_equal(before, after, n_before);
    assert_int_equal(dir_entries(f->dir), 1);
    free(before);
    free(after);
}

static void test_sqlite_safety__a_file_that_is_no_database_is_refused(void **state)
{
    struct fx *f = *state;
    struct store *st = NULL;
    FILE *fp = fopen(f->path, "w");
    char *after;
    size_t n = 0;

    assert_non_null(fp);
    fputs("name,value\norders,1\n", fp);
    fclose(fp);
    assert_int_equal(idmint__store_open(f->url, NULL, &st), IDMINT_ESTORE);
    assert_non_null(strstr(idmint_errmsg(), "not an SQLite database"));
    assert_null(st);
    after = slurp(f->path, &n);
    assert_int_equal(n, 20);
    assert_memory_equal(after, "name,value\norders,1\n", 20);
    free(after);
}

static void test_sqlite_safety__a_newer_schema_is_refused(void **state)
{
    struct fx *f = *state;
    struct store *st = NULL;

    assert_int_equal(idmint__store_open(f->url, NULL, &st), 0);
    idmint__store_close(st);
    st = NULL;
    sql_exec(f->path, "UPDATE schema_version SET version = 8");
    assert_int_equal(idmint__store_open(f->url, NULL, &st), IDMINT_ESTORE);
    assert_non_null(strstr(idmint_errmsg(), "schema version 8 is not supported"));
    assert_null(st);
}

/* ==== 4. opens that must not create ==== */

static void test_sqlite_safety__an_existing_only_open_creates_nothing(void **state)
{
    struct fx *f = *state;
    struct store *st = NULL;
    idmint_authority *a = NULL;
    idmint_ns_info got;
    char url[700];

    assert_int_equal(idmint__store_open_flags(f->url, NULL, STORE_OPEN_EXISTING, &st),
                     IDMINT_ENOTFOUND);
    assert_null(st);
    assert_int_equal(idmint_authority_open_existing(&a, f->url, 0), IDMINT_ENOTFOUND);
    assert_null(a);
    assert_non_null(strstr(idmint_errmsg(), "no authority at"));
    assert_non_null(strstr(idmint_errmsg(), f->path));
    assert_non_null(strstr(idmint_errmsg(), "nothing has been created there"));
    /* A read-only URI never creates either. */
    snprintf(url, sizeof(url), "sqlite:file:%s?mode=ro", f->path);
    assert_int_equal(idmint_authority_open(&a, url, 0), IDMINT_ENOTFOUND);
    assert_int_equal(dir_entries(f->dir), 0);

    /* Once there, it opens as usual. */
    assert_int_equal(idmint_authority_open(&a, f->url, 0), 0);
    idmint_ns_info_init(&got, 0);
    assert_int_equal(idmint_ns_get(a, "default", &got), 0);
    idmint_authority_close(a);
    a = NULL;
    assert_int_equal(idmint_authority_open_existing(&a, f->url, 0), 0);
    assert_int_equal(idmint_ns_get(a, "default", &got), 0);
    idmint_authority_close(a);
}

/* ==== 5. a file removed or replaced under an open store ==== */

static void test_sqlite_safety__a_removed_file_is_never_written(void **state)
{
    struct fx *f = *state;
    struct store *st = NULL;
    struct idmint__lease l = {0};
    struct idmint__range r = {.start = 0, .end = 0};
    idmint_ns_info ns, got;
    char wal[600];

    assert_int_equal(idmint__store_open(f->url, NULL, &st), 0);
    snowflake_ns(&ns, "before");
    assert_int_equal(idmint__store_ns_create(st, &ns, ACTOR, NOW_MS), 0);
    lease_init(&l, HOLDER_A);
    assert_int_equal(idmint__store_lease_take(st, "before", 8, 1000, 1600, &l, ACTOR, NOW_MS), 0);

    /* rm auth.db, as a cleanup job would: the -wal and -shm stay. */
    assert_int_equal(unlink(f->path), 0);
    snowflake_ns(&ns, "after");
    assert_int_equal(idmint__store_ns_create(st, &ns, ACTOR, NOW_MS), IDMINT_ESTORE);
    assert_non_null(strstr(idmint_errmsg(), "the database file was removed or replaced while in "
                                            "use; refusing to write to a file no other process "
                                            "can see"));
    assert_non_null(strstr(idmint_errmsg(), f->path));
    assert_int_equal(idmint__store_lease_renew(st, "before", &l, 2000, INT64_C(1780000000000)),
                     IDMINT_ESTORE);
    assert_int_equal(l.lease_until, 1600);
    assert_int_equal(idmint__store_lease_release(st, "before", &l, 1200, ACTOR, NOW_MS),
                     IDMINT_ESTORE);
    assert_int_equal(idmint__store_ns_set_disabled(st, "before", 1, ACTOR, NOW_MS), IDMINT_ESTORE);
    assert_int_equal(idmint__store_range_reserve(st, "before", "inc", "r1", 1, NOW_MS, &r),
                     IDMINT_ESTORE);
    /* Nothing was written, not even to the unlinked file the store still reads. */
    assert_int_equal(idmint__store_ns_get(st, "after", &got), IDMINT_ENOTFOUND);
    assert_int_equal(idmint__store_ns_get(st, "before", &got), 0);
    assert_int_equal(got.is_disabled, 0);
    idmint__store_close(st);
    /* And nothing came back at the path. */
    assert_int_equal(access(f->path, F_OK), -1);
    snprintf(wal, sizeof(wal), "%s-wal", f->path);
    (void)unlink(wal);
}

static void test_sqlite_safety__a_replaced_file_is_never_written(void **state)
{
    struct fx *f = *state;
    struct store *st = NULL, *other = NULL;
    idmint_ns_info ns, got;
    char other_path[600], other_url[700];

    snprintf(other_path, sizeof(other_path), "%s/other.db", f->dir);
    snprintf(other_url, sizeof(other_url), "sqlite:%s", other_path);
    assert_int_equal(idmint__store_open(f->url, NULL, &st), 0);
    assert_int_equal(idmint__store_open(other_url, NULL, &other), 0);
    idmint__store_close(other);
    other = NULL;
    /* mv other.db auth.db: a restored copy put in place under a running process. */
    assert_int_equal(rename(other_path, f->path), 0);
    snowflake_ns(&ns, "lost");
    assert_int_equal(idmint__store_ns_create(st, &ns, ACTOR, NOW_MS), IDMINT_ESTORE);
    assert_non_null(strstr(idmint_errmsg(), "removed or replaced"));
    idmint__store_close(st);
    assert_int_equal(idmint__store_open(f->url, NULL, &other), 0);
    assert_int_equal(idmint__store_ns_get(other, "lost", &got), IDMINT_ENOTFOUND);
    /* A store opened on the file now there writes as usual. */
    assert_int_equal(idmint__store_ns_create(other, &ns, ACTOR, NOW_MS), 0);
    idmint__store_close(other);
}

/* ==== the migration from schema version 1 ==== */

static void test_sqlite_safety__a_version_1_file_gets_fences_at_its_e(void **state)
{
    struct fx *f = *state;
    struct store *st = NULL;
    struct idmint__lease a = {0}, b = {0};

    sql_exec(f->path, "PRAGMA journal_mode=WAL");
    sql_exec(f->path, v1_schema_sql);
    assert_int_equal(sql_int(f->path, "SELECT version FROM schema_version"), 1);

    assert_int_equal(idmint__store_open(f->url, NULL, &st), 0);
    assert_int_equal(sql_int(f->path, "SELECT version FROM schema_version"), 7);
    assert_int_equal(sql_int(f->path, "SELECT fence FROM worker_leases WHERE worker_id = 0"), 5000);
    assert_int_equal(sql_int(f->path, "SELECT fence FROM worker_leases WHERE worker_id = 1"), 3000);

    /* The old holder releases with a final time below its E: the fence keeps E. */
    lease_init(&a, HOLDER_A);
    a.worker_id = 0;
    a.generation = 1;
    a.lease_until = 5000;
    assert_int_equal(idmint__store_lease_release(st, "old", &a, 100, ACTOR, NOW_MS), 0);
    assert_int_equal(a.lease_until, 5000);
    assert_int_equal(sql_int(f->path, "SELECT lease_until FROM worker_leases WHERE worker_id = 0"),
                     5000);
    /* A take of a migrated row keeps its E as the new fence. */
    lease_init(&b, HOLDER_B);
    assert_int_equal(idmint__store_lease_take(st, "old", 2, 3001, 3600, &b, ACTOR, NOW_MS), 0);
    assert_int_equal(b.worker_id, 1);
    assert_int_equal(b.fence_found, 3000);
    assert_int_equal(idmint__store_lease_release(st, "old", &b, 0, ACTOR, NOW_MS), 0);
    assert_int_equal(b.lease_until, 3000);
    idmint__store_close(st);
    /* A second open finds version 2 and changes nothing. */
    assert_int_equal(idmint__store_open(f->url, NULL, &st), 0);
    idmint__store_close(st);
    assert_int_equal(sql_int(f->path, "SELECT count(*) FROM worker_leases"), 2);
}

static void test_sqlite_safety__many_processes_migrate_one_file_once(void **state)
{
    struct fx *f = *state;
    enum { PROCS = 8 };
    pid_t pids[PROCS];
    int gate[2], k;

    sql_exec(f->path, "PRAGMA journal_mode=WAL");
    sql_exec(f->path, v1_schema_sql);
    assert_int_equal(pipe(gate), 0);
    for (k = 0; k < PROCS; k++) {
        pids[k] = fork();
        assert_true(pids[k] >= 0);
        if (pids[k] == 0) {
            struct store *st = NULL;
            char c;
            int rc;

            close(gate[1]);
            while (read(gate[0], &c, 1) > 0)
                ;
            /* A second migration would fail: "duplicate column name: fence". */
            rc = idmint__store_open(f->url, NULL, &st);
            if (rc != 0)
                fprintf(stderr, "child %d: %s: %s\n", k, idmint_strerror(rc), idmint_errmsg());
            idmint__store_close(st);
            _exit(rc == 0 ? 0 : 1);
        }
    }
    close(gate[0]);
    close(gate[1]);
    for (k = 0; k < PROCS; k++) {
        int status;

        assert_int_equal(waitpid(pids[k], &status, 0), pids[k]);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
    }
    assert_int_equal(sql_int(f->path, "SELECT version FROM schema_version"), 7);
    assert_int_equal(sql_int(f->path, "SELECT count(*) FROM schema_version"), 1);
    assert_int_equal(sql_int(f->path, "SELECT count(*) FROM history"), 1);
    assert_int_equal(sql_int(f->path, "SELECT fence FROM worker_leases WHERE worker_id = 0"), 5000);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

/* ==== the migration from schema version 4 ==== */

/*
 * A new file taken back to schema 4: without schema 6's history log, store
 * id, lineage, longest leases and range records' pairs, and with schema 4's
 * batches and collisions (a key in the whole store, no expiry).
 */
static const char v4_tables_sql[] =
    "DROP TABLE history_log; DROP TABLE records;"
    "ALTER TABLE history DROP COLUMN tip;"
    "ALTER TABLE history DROP COLUMN store_id;"
    "ALTER TABLE history DROP COLUMN lineage;"
    "ALTER TABLE namespaces DROP COLUMN max_lease_units;"
    "ALTER TABLE range_leases DROP COLUMN hseq;"
    "ALTER TABLE range_leases DROP COLUMN htip;"
    "DROP TABLE batches;"
    "CREATE TABLE batches ("
    " namespace TEXT NOT NULL, key TEXT NOT NULL, owner TEXT NOT NULL, count INTEGER NOT NULL,"
    " runs TEXT NOT NULL, created_ms INTEGER NOT NULL, PRIMARY KEY (key));"
    "CREATE INDEX batches_age ON batches (created_ms);"
    "DROP INDEX collisions_report;"
    "DROP INDEX collisions_expiry;"
    "ALTER TABLE collisions DROP COLUMN expires_ms;"
    "UPDATE schema_version SET version = 4;"
    "INSERT INTO batches VALUES ('orders', 'k-1', 'shop', 3, '100+3', 1780000000000);"
    "INSERT INTO collisions (namespace, id, first_owner, second_owner, verdict, reporter,"
    " observed_ms, reported_ms, note) VALUES"
    " ('orders', 7, '', '', 'reported', 'shop', 1, 1780000000001, 'first'),"
    " ('orders', 7, '', '', 'reported', 'shop', 2, 1780000000002, 'again'),"
    " ('orders', 7, '', '', 'reported', 'db', 3, 1780000000003, 'other reporter');";

/*
 * A file of schema 4 keeps its batches, now under their owners, each with
 * the default retention from its old stamp; a reporter's repeated
 * collision records fold into its first, and the unique index holds from
 * then on (step 4 to 5). Step 5 to 6 follows in the same open: the file
 * gets a store id and a history log holding its current seq.
 */
static void test_sqlite_safety__a_version_4_file_keeps_its_batches_under_their_owners(void **state)
{
    struct fx *f = *state;
    struct store *st = NULL;
    struct idmint__batch got, b, saved;
    idmint_collision c, first;
    char runs[] = "500+2";
    int inserted = 0;

    assert_int_equal(idmint__store_open(f->url, NULL, &st), 0);
    idmint__store_close(st);
    st = NULL;
    sql_exec(f->path, v4_tables_sql);
    assert_int_equal(sql_int(f->path, "SELECT count(*) FROM collisions"), 3);

    assert_int_equal(idmint__store_open(f->url, NULL, &st), 0);
    assert_int_equal(sql_int(f->path, "SELECT version FROM schema_version"), 7);
    memset(&got, 0, sizeof(got));
    assert_int_equal(idmint__store_batch_get(st, "shop", "k-1", &got), 0);
    assert_string_equal(got.runs, "100+3");
    assert_int_equal(got.created_ms, 1780000000000);
    assert_int_equal(got.expires_ms, 1780000000000 + 86400000);
    idmint__batch_clear(&got);
    assert_int_equal(idmint__store_batch_get(st, "other", "k-1", &got), IDMINT_ENOTFOUND);
    /* Another owner's key of that name is a batch of its own. */
    memset(&b, 0, sizeof(b));
    snprintf(b.ns, sizeof(b.ns), "orders");
    snprintf(b.key, sizeof(b.key), "k-1");
    snprintf(b.owner, sizeof(b.owner), "other");
    b.count = 2;
    b.runs = runs;
    b.keep_ms = 60000;
    memset(&saved, 0, sizeof(saved));
    assert_int_equal(idmint__store_batch_claim(st, &b, &saved, &inserted), 0);
    assert_int_equal(inserted, 1);
    idmint__batch_clear(&saved);

    assert_int_equal(sql_int(f->path, "SELECT count(*) FROM collisions"), 2);
    assert_int_equal(sql_int(f->path, "SELECT min(expires_ms) FROM collisions"),
                     1780000000001 + INT64_C(2592000000));
    memset(&c, 0, sizeof(c));
    c.size = sizeof(c);
    snprintf(c.ns, sizeof(c.ns), "orders");
    c.id = 7;
    snprintf(c.verdict, sizeof(c.verdict), "reported");
    snprintf(c.reporter, sizeof(c.reporter), "shop");
    assert_int_equal(idmint__store_collision_add(st, &c, "shop", NOW_MS, 60000, &first, &inserted),
                     0);
    assert_int_equal(inserted, 0);
    assert_string_equal(first.note, "first");

    /* Schema 6 on top: a store id, the current seq's tip logged, history_check answers. */
    assert_int_equal(sql_int(f->path, "SELECT length(store_id) FROM history"), 32);
    assert_int_equal(sql_int(f->path, "SELECT count(*) FROM history_log h, history c"
                                      " WHERE h.seq = c.seq AND h.tip = c.tip AND h.tip != 0"),
                     1);
    assert_int_equal(sql_int(f->path, "SELECT count(max_lease_units) FROM namespaces"), 0);
    {
        struct idmint__history_state hs;
        uint64_t seq = (uint64_t)sql_int(f->path, "SELECT seq FROM history");

        memset(&hs, 0, sizeof(hs));
        assert_int_equal(idmint__store_history_check(st, seq, &hs), 0);
        assert_int_equal(strlen(hs.store_id), 32);
        assert_int_equal(hs.head.seq, seq);
        assert_true(hs.tip_at_seq != 0);
    }
    idmint__store_close(st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_sqlite_safety__memory_and_temporary_databases_are_refused),
        T(test_sqlite_safety__a_file_uri_with_a_path_still_works),
        T(test_sqlite_safety__a_new_file_is_complete_when_it_first_appears),
        T(test_sqlite_safety__many_processes_create_one_file_together),
        T(test_sqlite_safety__an_empty_file_is_refused_and_left_alone),
        T(test_sqlite_safety__another_sqlite_database_is_refused_and_left_alone),
        T(test_sqlite_safety__a_file_that_is_no_database_is_refused),
        T(test_sqlite_safety__a_newer_schema_is_refused),
        T(test_sqlite_safety__an_existing_only_open_creates_nothing),
        T(test_sqlite_safety__a_removed_file_is_never_written),
        T(test_sqlite_safety__a_replaced_file_is_never_written),
        T(test_sqlite_safety__a_version_1_file_gets_fences_at_its_e),
        T(test_sqlite_safety__many_processes_migrate_one_file_once),
        T(test_sqlite_safety__a_version_4_file_keeps_its_batches_under_their_owners),
    };

    return cmocka_run_group_tests_name("sqlite_safety", tests, NULL, NULL);
}
