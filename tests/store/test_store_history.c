/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The authority's history through the store interface (store.h, version
 * 3): the grant counter and the history id of every take, renewal,
 * release and reservation, namespace floors and origins, and the fence. On
 * the backend $IDMINT_TEST_STORE names ("postgres", "etcd" or "sqlite"),
 * each test on a store of its own: a PostgreSQL database it creates and
 * drops, a fresh etcd prefix, a temporary SQLite file. A fence or a rewound
 * counter on a shared store would stop the holders of every other test.
 * Restores are made for real where a test can: PostgreSQL's sequence set
 * back, pg_dump and pg_restore, etcd keys as an older idmint left them.
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NOW_MS   INT64_C(1780000000000)
#define ACTOR    "test-actor"
#define HOLDER_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define HOLDER_B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define NEW_ID   "0123456789abcdef0123456789abcdef"
#define NEW_ID_2 "fedcba9876543210fedcba9876543210"

enum backend { BK_SQLITE, BK_POSTGRES, BK_ETCD };

struct fx {
    enum backend backend;
    char *dir;     /* sqlite: the temp folder; else NULL */
    char url[600]; /* this test's store */
    struct store *st;
    /* postgres: the server of $IDMINT_PG_ENV and this test's database */
    char pg_user[64], pg_host[128], pg_port[16], pg_db[64];
    char pg_db2[80]; /* a second database (a restore), dropped too; "" for none */
    /* etcd: the first member "HOST:PORT" and this test's prefix */
    char etcd_member[160], etcd_prefix[200];
};

/* ==== PostgreSQL: a database per test, and psql for what no store call does ==== */

/* "postgresql://USER@HOST:PORT/DB" (what tests/support/pg-start.sh writes) into @p f. */
static int pg_parse(struct fx *f, const char *url)
{
    const char *p = strstr(url, "://"), *at, *colon, *slash;

    if (p == NULL)
        return -1;
    p += 3;
    at = strchr(p, '@');
    colon = at != NULL ? strchr(at, ':') : NULL;
    slash = colon != NULL ? strchr(colon, '/') : NULL;
    if (at == NULL || colon == NULL || slash == NULL || (size_t)(at - p) >= sizeof(f->pg_user) ||
        (size_t)(colon - at - 1) >= sizeof(f->pg_host) ||
        (size_t)(slash - colon - 1) >= sizeof(f->pg_port))
        return -1;
    snprintf(f->pg_user, sizeof(f->pg_user), "%.*s", (int)(at - p), p);
    snprintf(f->pg_host, sizeof(f->pg_host), "%.*s", (int)(colon - at - 1), at + 1);
    snprintf(f->pg_port, sizeof(f->pg_port), "%.*s", (int)(slash - colon - 1), colon + 1);
    return 0;
}

/* @p in in single quotes for sh. */
static void sh_quote(const char *in, char *out, size_t size)
{
    size_t k = 0;

    out[k++] = '\'';
    for (; *in != '\0' && k + 6 < size; in++) {
        if (*in == '\'') {
            memcpy(out + k, "'\\''", 4);
            k += 4;
        } else {
            out[k++] = *in;
        }
    }
    out[k++] = '\'';
    out[k] = '\0';
}

/*
 * Run @p sql in database @p db as the server's superuser (the fixture's
 * "postgres"); the first line of its output (unaligned, tuples only) into
 * @p out if not NULL. The exit status of psql.
 */
static int psql(const struct fx *f, const char *db, const char *sql, char *out, size_t size)
{
    char quoted[2048], cmd[2600], line[512] = "";
    FILE *p;
    int status;

    sh_quote(sql, quoted, sizeof(quoted));
    snprintf(cmd, sizeof(cmd),
             "psql -X -q -t -A -v ON_ERROR_STOP=1 -h %s -p %s -U postgres -d %s -c %s 2>&1",
             f->pg_host, f->pg_port, db, quoted);
    if ((p = popen(cmd, "r")) == NULL)
        return -1;
    if (fgets(line, sizeof(line), p) == NULL)
        line[0] = '\0';
    while (fgetc(p) != EOF)
        ;
    status = pclose(p);
    line[strcspn(line, "\r\n")] = '\0';
    if (out != NULL)
        snprintf(out, size, "%s", line);
    if (status != 0)
        fprintf(stderr, "psql -d %s -c \"%s\": %s\n", db, sql, line);
    return status;
}

static void pg_url_of(const struct fx *f, const char *db, char *out, size_t size)
{
    snprintf(out, size, "postgresql://%s@%s:%s/%s", f->pg_user, f->pg_host, f->pg_port, db);
}

static int pg_create_db(struct fx *f, const char *db)
{
    char sql[256];

    snprintf(sql, sizeof(sql), "CREATE DATABASE %s OWNER %s", db, f->pg_user);
    return psql(f, "postgres", sql, NULL, 0);
}

static void pg_drop_db(struct fx *f, const char *db)
{
    char sql[256];

    if (db[0] == '\0')
        return;
    snprintf(sql, sizeof(sql), "DROP DATABASE IF EXISTS %s WITH (FORCE)", db);
    (void)psql(f, "postgres", sql, NULL, 0);
}

/* ==== etcd: raw keys, for what an older idmint or an operator leaves behind ==== */

static void b64(const char *in, char *out)
{
    static const char d[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t n = strlen(in), i, k = 0;

    for (i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)(unsigned char)in[i] << 16;

        if (i + 1 < n)
            v |= (uint32_t)(unsigned char)in[i + 1] << 8;
        if (i + 2 < n)
            v |= (unsigned char)in[i + 2];
        out[k++] = d[v >> 18 & 63];
        out[k++] = d[v >> 12 & 63];
        out[k++] = i + 1 < n ? d[v >> 6 & 63] : '=';
        out[k++] = i + 2 < n ? d[v & 63] : '=';
    }
    out[k] = '\0';
}

/* POST @p body to @p path of the first member with curl; the reply into @p out. 0 on HTTP 200. */
static int etcd_post(const struct fx *f, const char *path, const char *body, char *out, size_t size)
{
    char quoted[1200], cmd[1600], reply[2048] = "";
    FILE *p;
    size_t n;

    sh_quote(body, quoted, sizeof(quoted));
    snprintf(cmd, sizeof(cmd), "curl -s -f -m 5 -X POST http://%s%s -d %s", f->etcd_member, path,
             quoted);
    if ((p = popen(cmd, "r")) == NULL)
        return -1;
    n = fread(reply, 1, sizeof(reply) - 1, p);
    reply[n] = '\0';
    if (out != NULL)
        snprintf(out, size, "%s", reply);
    return pclose(p);
}

/* Put @p value at P@p sub (P: this test's prefix). */
static int etcd_put(const struct fx *f, const char *sub, const char *value)
{
    char key[400], k64[600], v64[600], body[1400];

    snprintf(key, sizeof(key), "%s%s", f->etcd_prefix, sub);
    b64(key, k64);
    b64(value, v64);
    snprintf(body, sizeof(body), "{\"key\":\"%s\",\"value\":\"%s\"}", k64, v64);
    return etcd_post(f, "/v3/kv/put", body, NULL, 0);
}

static int etcd_delete(const struct fx *f, const char *sub)
{
    char key[400], k64[600], body[800];

    snprintf(key, sizeof(key), "%s%s", f->etcd_prefix, sub);
    b64(key, k64);
    snprintf(body, sizeof(body), "{\"key\":\"%s\"}", k64);
    return etcd_post(f, "/v3/kv/deleterange", body, NULL, 0);
}

/* The reply to a range read of P@p sub, raw (values stay base64). */
static int etcd_get(const struct fx *f, const char *sub, char *out, size_t size)
{
    char key[400], k64[600], body[800];

    snprintf(key, sizeof(key), "%s%s", f->etcd_prefix, sub);
    b64(key, k64);
    snprintf(body, sizeof(body), "{\"key\":\"%s\"}", k64);
    return etcd_post(f, "/v3/kv/range", body, out, size);
}

/* ==== fixture ==== */

static int setup(void **state)
{
    static unsigned counter;
    const char *name = getenv("IDMINT_TEST_STORE");
    struct fx *f = calloc(1, sizeof(*f));
    char *env = NULL;

    if (f == NULL)
        return -1;
    if (name == NULL || strcmp(name, "sqlite") == 0 || name[0] == '\0') {
        char *url;

        f->backend = BK_SQLITE;
        if ((f->dir = ts_tempdir()) == NULL || (url = ts_sqlite_url(f->dir, "store.db")) == NULL)
            goto fail;
        snprintf(f->url, sizeof(f->url), "%s", url);
        free(url);
    } else if (strcmp(name, "postgres") == 0) {
        /* A missing server is a failure, never a skip. */
        f->backend = BK_POSTGRES;
        if ((env = ts_pg_url()) == NULL || pg_parse(f, env) != 0) {
            fprintf(stderr, "no PostgreSQL URL of the form postgresql://USER@HOST:PORT/DB: set "
                            "IDMINT_TEST_PG_URL, or IDMINT_PG_ENV to the file "
                            "tests/support/pg-start.sh writes\n");
            goto fail;
        }
        snprintf(f->pg_db, sizeof(f->pg_db), "idmint_hist_%x_%u", (unsigned)getpid(), counter++);
        if (pg_create_db(f, f->pg_db) != 0)
            goto fail;
        pg_url_of(f, f->pg_db, f->url, sizeof(f->url));
    } else if (strcmp(name, "etcd") == 0) {
        const char *members, *slash;

        f->backend = BK_ETCD;
        if ((env = ts_etcd_url()) == NULL || strncmp(env, "etcd://", 7) != 0) {
            fprintf(stderr, "no etcd: set IDMINT_TEST_ETCD_URL, or IDMINT_ETCD_ENV to the file "
                            "tests/support/etcd-start.sh writes\n");
            goto fail;
        }
        members = env + 7;
        slash = strchr(members, '/');
        snprintf(f->etcd_prefix, sizeof(f->etcd_prefix), "/idmint-history/t%lx-%x-%u",
                 (unsigned long)time(NULL), (unsigned)getpid(), counter++);
        snprintf(f->url, sizeof(f->url), "etcd://%.*s%s",
                 slash != NULL ? (int)(slash - members) : (int)strlen(members), members,
                 f->etcd_prefix);
        snprintf(f->etcd_member, sizeof(f->etcd_member), "%.*s", (int)strcspn(members, ",/"),
                 members);
    } else {
        fprintf(stderr, "unknown IDMINT_TEST_STORE '%s'\n", name);
        goto fail;
    }
    free(env);
    env = NULL;
    if (idmint__store_open(f->url, NULL, &f->st) != 0) {
        fprintf(stderr, "cannot open %s: %s\n", f->url, idmint_errmsg());
        goto fail;
    }
    *state = f;
    return 0;
fail:
    free(env);
    if (f->pg_db[0] != '\0')
        pg_drop_db(f, f->pg_db);
    ts_rmtree(f->dir);
    free(f);
    return -1;
}

static int teardown(void **state)
{
    struct fx *f = *state;

    idmint__store_close(f->st);
    if (f->backend == BK_POSTGRES) {
        pg_drop_db(f, f->pg_db);
        pg_drop_db(f, f->pg_db2);
    }
    ts_rmtree(f->dir);
    free(f);
    return 0;
}

static struct store *open_again(const struct fx *f)
{
    struct store *st = NULL;

    if (idmint__store_open(f->url, NULL, &st) != 0)
        fail_msg("cannot open %s again: %s", f->url, idmint_errmsg());
    return st;
}

/* ==== helpers ==== */

static void make_snowflake(struct store *st, const char *ns, uint64_t floor, const char *origin)
{
    idmint_ns_info i;

    memset(&i, 0, sizeof(i));
    snprintf(i.name, sizeof(i.name), "%s", ns);
    i.kind = IDMINT_KIND_SNOWFLAKE;
    i.layout.time_bits = 41;
    i.layout.region_bits = 0;
    i.layout.worker_bits = 4;
    i.layout.sequence_bits = 12;
    i.layout.unit_ms = 1;
    i.layout.epoch_ms = IDMINT_DEFAULT_EPOCH_MS;
    i.floor = floor;
    snprintf(i.origin, sizeof(i.origin), "%s", origin);
    assert_int_equal(idmint__store_ns_create(st, &i, ACTOR, NOW_MS), 0);
}

static void make_range(struct store *st, const char *ns, uint64_t next, uint64_t max,
                       uint64_t floor, const char *origin)
{
    idmint_ns_info i;

    memset(&i, 0, sizeof(i));
    snprintf(i.name, sizeof(i.name), "%s", ns);
    i.kind = IDMINT_KIND_RANGE;
    i.next_value = next;
    i.max_value = max;
    i.block = 100;
    i.max_block = 1000;
    i.floor = floor;
    snprintf(i.origin, sizeof(i.origin), "%s", origin);
    assert_int_equal(idmint__store_ns_create(st, &i, ACTOR, NOW_MS), 0);
}

static void lease_init(struct idmint__lease *l, const char *holder)
{
    memset(l, 0, sizeof(*l));
    snprintf(l->holder, sizeof(l->holder), "%s", holder);
}

static void assert_history_id(const char *id)
{
    size_t i;

    for (i = 0; i < 32; i++)
        if (!((id[i] >= '0' && id[i] <= '9') || (id[i] >= 'a' && id[i] <= 'f')))
            fail_msg("history id '%s' is not 32 lowercase hex digits", id);
    assert_int_equal(id[32], '\0');
}

/*
 * One grant's history after @p prev: the same id (when @p prev has one),
 * 32 hex digits, and a counter strictly above @p prev's. Becomes prev.
 */
static void assert_follows(struct idmint__history *prev, const struct idmint__history *got,
                           const char *what)
{
    assert_history_id(got->id);
    if (prev->id[0] != '\0' && strcmp(prev->id, got->id) != 0)
        fail_msg("%s: history id %s, was %s", what, got->id, prev->id);
    if (got->seq <= prev->seq)
        fail_msg("%s: counter %llu is not above %llu", what, (unsigned long long)got->seq,
                 (unsigned long long)prev->seq);
    *prev = *got;
}

/* A reservation of 1 that must succeed: its history. */
static struct idmint__history reserve_one(struct store *st, const char *ns, const char *req)
{
    struct idmint__range r = {0};

    if (idmint__store_range_reserve(st, ns, "inc-h", req, 1, NOW_MS, &r) != 0)
        fail_msg("reserve %s/%s: %s", ns, req, idmint_errmsg());
    return r.history;
}

static size_t audit_count(struct store *st)
{
    idmint_audit_entry *all = NULL;
    size_t n = 0;

    assert_int_equal(idmint__store_audit_list(st, 0, SIZE_MAX, &all, &n), 0);
    free(all);
    return n;
}

static void assert_ns(struct store *st, const char *ns, uint64_t next, uint64_t floor)
{
    idmint_ns_info got;

    assert_int_equal(idmint__store_ns_get(st, ns, &got), 0);
    if (got.next_value != next || got.floor != floor)
        fail_msg("namespace %s: next_value %llu floor %llu, want %llu and %llu", ns,
                 (unsigned long long)got.next_value, (unsigned long long)got.floor,
                 (unsigned long long)next, (unsigned long long)floor);
}

static struct idmint__fence_step step_of(const char *ns, idmint_kind kind, uint64_t floor,
                                         uint64_t next)
{
    struct idmint__fence_step s;

    memset(&s, 0, sizeof(s));
    snprintf(s.ns, sizeof(s.ns), "%s", ns);
    s.kind = kind;
    s.floor = floor;
    s.next_value = next;
    return s;
}

/* ==== the chain (store.h, version 6): every backend ==== */

/* What the store says about @p seq; fails the test when it cannot say. */
static struct idmint__history_state check_at(struct store *st, uint64_t seq)
{
    struct idmint__history_state hs;

    memset(&hs, 0, sizeof(hs));
    if (idmint__store_history_check(st, seq, &hs) != 0)
        fail_msg("history_check(%llu): %s", (unsigned long long)seq, idmint_errmsg());
    return hs;
}

static void test_history__every_grant_logs_its_pair_and_a_foreign_tip_is_refused(void **state)
{
    struct fx *f = *state;
    struct idmint__history seen = {"", 0, 0}, got, forged;
    struct idmint__history_state hs;
    struct idmint__lease a = {0};

    make_snowflake(f->st, "sf", 0, "");
    make_range(f->st, "rg", 1, 1000000, 0, "");
    lease_init(&a, HOLDER_A);
    assert_int_equal(idmint__store_lease_take(f->st, "sf", 16, 1000, 1600, &a, ACTOR, NOW_MS), 0);
    assert_follows(&seen, &a.history, "take");
    assert_true(a.history.tip != 0);
    got = reserve_one(f->st, "rg", "req-1");
    assert_follows(&seen, &got, "reserve");
    assert_true(got.tip != 0 && got.tip != a.history.tip);
    /* Both pairs are in the log, the head at or past the newest. */
    hs = check_at(f->st, a.history.seq);
    assert_int_equal(hs.tip_at_seq, a.history.tip);
    assert_true(hs.head.seq >= got.seq);
    assert_string_equal(hs.head.id, got.id);
    assert_true(idmint__history_id_valid(hs.store_id));
    assert_true(hs.oldest_seq <= a.history.seq);
    assert_int_equal(idmint__history_verify(&a.history, &hs, IDMINT__EVIDENCE_HOLDER, "sf"), 0);
    hs = check_at(f->st, got.seq);
    assert_int_equal(hs.tip_at_seq, got.tip);
    assert_int_equal(idmint__history_verify(&got, &hs, IDMINT__EVIDENCE_HOLDER, "rg"), 0);
    /* Another tip at that seq (what a store put back and written to shows),
     * or a seq past the head: refused. */
    forged = got;
    forged.tip ^= 1;
    assert_int_equal(idmint__history_verify(&forged, &hs, IDMINT__EVIDENCE_HOLDER, "rg"),
                     IDMINT_ERESTORED);
    forged = got;
    forged.seq = hs.head.seq + 5;
    hs = check_at(f->st, forged.seq);
    assert_int_equal(hs.tip_at_seq, 0);
    assert_int_equal(idmint__history_verify(&forged, &hs, IDMINT__EVIDENCE_WITNESS, "w"),
                     IDMINT_ERESTORED);
}

static void test_history__a_fence_keeps_the_store_id_and_records_the_id_it_replaced(void **state)
{
    struct fx *f = *state;
    struct idmint__fence_step step = step_of("rg", IDMINT_KIND_RANGE, 0, 100);
    struct idmint__history_state before, after;
    struct idmint__history got;

    make_range(f->st, "rg", 1, 1000000, 0, "");
    got = reserve_one(f->st, "rg", "req-1");
    before = check_at(f->st, got.seq);
    assert_int_equal(idmint__store_fence(f->st, &step, 1, NEW_ID, ACTOR, NOW_MS), 0);
    after = check_at(f->st, got.seq);
    assert_string_equal(after.store_id, before.store_id);
    assert_string_equal(after.head.id, NEW_ID);
    assert_true(after.head.seq > got.seq && after.head.tip != 0);
    assert_true(after.lineage_n >= 1);
    assert_string_equal(after.lineage[0], got.id);
    /* A host's witness of the old history descends through the fence; a
     * holder of it must stop. */
    assert_int_equal(idmint__history_verify(&got, &after, IDMINT__EVIDENCE_WITNESS, "w"), 0);
    assert_int_equal(idmint__history_verify(&got, &after, IDMINT__EVIDENCE_HOLDER, "rg"),
                     IDMINT_ERESTORED);
    /* The fence's own pair is in the log. */
    assert_int_equal(check_at(f->st, after.head.seq).tip_at_seq, after.head.tip);
}

static void
test_history__a_fence_shorter_than_the_longest_lease_is_refused_unless_forced(void **state)
{
    struct fx *f = *state;
    struct idmint__fence_step step = step_of("sf", IDMINT_KIND_SNOWFLAKE, 5000, 0);
    struct idmint__lease a = {0};
    size_t audits;

    make_snowflake(f->st, "sf", 0, "");
    lease_init(&a, HOLDER_A);
    a.granted_units = 600001;
    assert_int_equal(idmint__store_lease_take(f->st, "sf", 16, 1000, 1600, &a, ACTOR, NOW_MS), 0);
    audits = audit_count(f->st);
    step.lease_units = 3001;
    step.unit_ms = 1;
    assert_int_equal(idmint__store_fence(f->st, &step, 1, NEW_ID, ACTOR, NOW_MS), IDMINT_EINVAL);
    assert_non_null(strstr(idmint_errmsg(), "shorter than the longest lease"));
    assert_int_equal(audit_count(f->st), audits); /* nothing changed */
    assert_ns(f->st, "sf", 0, 0);
    step.lease_units = 600001; /* as long: allowed */
    assert_int_equal(idmint__store_fence(f->st, &step, 1, NEW_ID, ACTOR, NOW_MS), 0);
    step.lease_units = 3001;
    step.allow_short = 1;
    assert_int_equal(idmint__store_fence(f->st, &step, 1, NEW_ID_2, ACTOR, NOW_MS), 0);
}

/* ==== the grant counter ==== */

static void test_history__the_counter_grows_with_every_grant_of_two_stores_interleaved(void **state)
{
    struct fx *f = *state;
    struct store *other = open_again(f);
    struct idmint__history seen = {"", 0, 0};
    struct idmint__lease a = {0}, b = {0};
    struct idmint__range r = {0};

    make_snowflake(f->st, "sf", 0, "");
    make_range(f->st, "rg", 1, 1000000, 0, "");
    lease_init(&a, HOLDER_A);
    lease_init(&b, HOLDER_B);
    assert_int_equal(idmint__store_lease_take(f->st, "sf", 16, 1000, 1600, &a, ACTOR, NOW_MS), 0);
    assert_follows(&seen, &a.history, "take (store 1)");
    assert_int_equal(idmint__store_lease_take(other, "sf", 16, 1000, 1600, &b, ACTOR, NOW_MS), 0);
    assert_follows(&seen, &b.history, "take (store 2)");
    assert_int_equal(idmint__store_range_reserve(f->st, "rg", "inc-1", "r1", 10, NOW_MS, &r), 0);
    assert_follows(&seen, &r.history, "reserve (store 1)");
    assert_int_equal(idmint__store_lease_renew(other, "sf", &a, 1700, NOW_MS), 0);
    assert_follows(&seen, &a.history, "renew (store 2)");
    assert_int_equal(idmint__store_lease_renew(f->st, "sf", &b, 1700, NOW_MS), 0);
    assert_follows(&seen, &b.history, "renew (store 1)");
    assert_int_equal(idmint__store_range_reserve(other, "rg", "inc-2", "r1", 10, NOW_MS, &r), 0);
    assert_follows(&seen, &r.history, "reserve (store 2)");
    assert_int_equal(idmint__store_lease_release(f->st, "sf", &a, 1100, ACTOR, NOW_MS), 0);
    assert_follows(&seen, &a.history, "release (store 1)");
    /* A forced release grows the counter too, though nobody is told. */
    assert_int_equal(
        idmint__store_lease_force_release(other, "sf", 0, b.worker_id, 1800, ACTOR, NOW_MS), 0);
    assert_int_equal(idmint__store_range_reserve(f->st, "rg", "inc-1", "r2", 10, NOW_MS, &r), 0);
    if (r.history.seq < seen.seq + 2)
        fail_msg("the reservation after a forced release has counter %llu: the release did not "
                 "count (%llu before it)",
                 (unsigned long long)r.history.seq, (unsigned long long)seen.seq);
    assert_follows(&seen, &r.history, "reserve after a forced release");
    idmint__store_close(other);
}

static void test_history__a_replayed_reservation_reports_its_grant_and_no_news(void **state)
{
    struct fx *f = *state;
    struct idmint__range first = {0}, again = {0};
    struct idmint__history seen = {"", 0, 0};

    make_range(f->st, "rg", 1, 1000000, 0, "");
    assert_int_equal(idmint__store_range_reserve(f->st, "rg", "inc", "req-1", 10, NOW_MS, &first),
                     0);
    assert_follows(&seen, &first.history, "reserve");
    assert_int_equal(idmint__store_range_reserve(f->st, "rg", "inc", "req-1", 10, NOW_MS, &again),
                     0);
    assert_int_equal(again.start, first.start);
    assert_int_equal(again.end, first.end);
    /* Version 6: the pair of the grant that made the record, so that its
     * holder can prove it is still in the log; before, no news. Either way
     * not a new write: the counter does not move. */
    if (idmint__store_has_history_check(f->st)) {
        assert_int_equal(again.history.seq, first.history.seq);
        assert_int_equal(again.history.tip, first.history.tip);
    } else {
        assert_int_equal(again.history.seq, 0);
    }
    /* The counter went on from the grant, not from the replay. */
    assert_int_equal(idmint__store_range_reserve(f->st, "rg", "inc", "req-2", 10, NOW_MS, &again),
                     0);
    assert_follows(&seen, &again.history, "reserve after a replay");
}

static void test_history__the_id_is_32_hex_digits_and_survives_a_reopen(void **state)
{
    struct fx *f = *state;
    struct idmint__history seen = {"", 0, 0}, got;
    struct idmint__lease a = {0};

    make_snowflake(f->st, "sf", 0, "");
    make_range(f->st, "rg", 1, 1000000, 0, "");
    lease_init(&a, HOLDER_A);
    assert_int_equal(idmint__store_lease_take(f->st, "sf", 16, 1000, 1600, &a, ACTOR, NOW_MS), 0);
    assert_follows(&seen, &a.history, "take");
    idmint__store_close(f->st);
    f->st = open_again(f);
    got = reserve_one(f->st, "rg", "req-1");
    assert_follows(&seen, &got, "reserve after a reopen");
    assert_int_equal(idmint__store_lease_renew(f->st, "sf", &a, 1700, NOW_MS), 0);
    assert_follows(&seen, &a.history, "renew after a reopen");
}

/* ==== floors and origins ==== */

static void test_history__ns_create_keeps_floor_and_origin(void **state)
{
    struct fx *f = *state;
    idmint_ns_info got, *list = NULL;
    size_t n = 0, i, found = 0;

    make_range(f->st, "rg-new", 501, 1000000, 500, "rg-old");
    make_snowflake(f->st, "sf-new", UINT64_C(0x7fffffffffffffff), "sf-old");
    make_range(f->st, "rg-plain", 1, 1000, 0, "");
    assert_int_equal(idmint__store_ns_get(f->st, "rg-new", &got), 0);
    assert_int_equal(got.floor, 500);
    assert_string_equal(got.origin, "rg-old");
    assert_int_equal(got.next_value, 501);
    assert_int_equal(idmint__store_ns_get(f->st, "sf-new", &got), 0);
    assert_true(got.floor == UINT64_C(0x7fffffffffffffff)); /* the largest floor there is */
    assert_string_equal(got.origin, "sf-old");
    assert_int_equal(idmint__store_ns_get(f->st, "rg-plain", &got), 0);
    assert_int_equal(got.floor, 0);
    assert_string_equal(got.origin, "");
    assert_int_equal(idmint__store_ns_list(f->st, &list, &n), 0);
    for (i = 0; i < n; i++) {
        if (strcmp(list[i].name, "rg-new") == 0) {
            assert_int_equal(list[i].floor, 500);
            assert_string_equal(list[i].origin, "rg-old");
            found++;
        } else if (strcmp(list[i].name, "sf-new") == 0) {
            assert_string_equal(list[i].origin, "sf-old");
            found++;
        }
    }
    free(list);
    assert_int_equal(found, 2);
}

static void test_history__a_reservation_starts_above_the_floor_it_was_created_with(void **state)
{
    struct fx *f = *state;
    struct idmint__range r = {0};

    /* next_value below the floor: the floor wins. */
    make_range(f->st, "rg", 1, 1000000, 1000, "rg-old");
    assert_int_equal(idmint__store_range_reserve(f->st, "rg", "inc", "req-1", 10, NOW_MS, &r), 0);
    assert_int_equal(r.start, 1001);
    assert_int_equal(r.end, 1011);
    assert_ns(f->st, "rg", 1011, 1000);
    assert_int_equal(idmint__store_range_reserve(f->st, "rg", "inc", "req-2", 10, NOW_MS, &r), 0);
    assert_int_equal(r.start, 1011);
}

static void test_history__a_reservation_after_a_fence_starts_above_its_floor(void **state)
{
    struct fx *f = *state;
    struct idmint__fence_step step = step_of("rg", IDMINT_KIND_RANGE, 5000, 11);
    struct idmint__range r = {0};

    make_range(f->st, "rg", 1, 5050, 0, "");
    assert_int_equal(idmint__store_range_reserve(f->st, "rg", "inc", "req-1", 10, NOW_MS, &r), 0);
    assert_int_equal(r.start, 1);
    /* The floor moves, next_value stays: only the floor can lift the next start. */
    assert_int_equal(idmint__store_fence(f->st, &step, 1, NEW_ID, ACTOR, NOW_MS), 0);
    assert_ns(f->st, "rg", 11, 5000);
    /* Cut at max_value, from above the floor. */
    assert_int_equal(idmint__store_range_reserve(f->st, "rg", "inc", "req-2", 100, NOW_MS, &r), 0);
    assert_int_equal(r.start, 5001);
    assert_int_equal(r.end, 5051);
    assert_string_equal(r.history.id, NEW_ID);
    assert_ns(f->st, "rg", 5051, 5000);
    assert_int_equal(idmint__store_range_reserve(f->st, "rg", "inc", "req-3", 1, NOW_MS, &r),
                     IDMINT_EEXHAUSTED);
}

static void test_history__a_floor_at_max_value_leaves_nothing_to_reserve(void **state)
{
    struct fx *f = *state;
    struct idmint__fence_step step = step_of("rg", IDMINT_KIND_RANGE, 100, 11);
    struct idmint__range r = {0};

    make_range(f->st, "rg", 1, 100, 0, "");
    assert_int_equal(idmint__store_range_reserve(f->st, "rg", "inc", "req-1", 10, NOW_MS, &r), 0);
    assert_int_equal(idmint__store_fence(f->st, &step, 1, NEW_ID, ACTOR, NOW_MS), 0);
    assert_int_equal(idmint__store_range_reserve(f->st, "rg", "inc", "req-2", 1, NOW_MS, &r),
                     IDMINT_EEXHAUSTED);
    assert_non_null(strstr(idmint_errmsg(), "all values up to 100"));
    assert_ns(f->st, "rg", 11, 100);
}

/* ==== the fence ==== */

static void test_history__a_fence_gives_a_new_history_and_audits_every_step(void **state)
{
    struct fx *f = *state;
    struct idmint__fence_step steps[2] = {step_of("rg", IDMINT_KIND_RANGE, 500, 501),
                                          step_of("sf", IDMINT_KIND_SNOWFLAKE, 123456789, 0)};
    struct idmint__history before, after;
    idmint_audit_entry *all = NULL;
    size_t n = 0, i, have_rg = 0, have_sf = 0, have_sum = 0, old_n;
    int64_t base;

    make_range(f->st, "rg", 1, 1000000, 0, "");
    make_snowflake(f->st, "sf", 0, "");
    before = reserve_one(f->st, "rg", "req-1");
    assert_int_not_equal(strcmp(before.id, NEW_ID), 0);
    assert_int_equal(idmint__store_audit_list(f->st, 0, SIZE_MAX, &all, &n), 0);
    old_n = n;
    base = n > 0 ? all[n - 1].seq : 0;
    free(all);

    assert_int_equal(idmint__store_fence(f->st, steps, 2, NEW_ID, ACTOR, NOW_MS), 0);
    assert_ns(f->st, "rg", 501, 500);
    assert_ns(f->st, "sf", 0, 123456789);
    after = reserve_one(f->st, "rg", "req-2");
    assert_string_equal(after.id, NEW_ID);
    assert_true(after.seq > before.seq);

    assert_int_equal(idmint__store_audit_list(f->st, base, SIZE_MAX, &all, &n), 0);
    for (i = 0; i < n; i++) {
        if (strcmp(all[i].action, "authority.fence") != 0)
            continue;
        if (strcmp(all[i].ns, "rg") == 0) {
            assert_string_equal(all[i].detail, "floor=0->500 next_value=2->501");
            have_rg++;
        } else if (strcmp(all[i].ns, "sf") == 0) {
            assert_string_equal(all[i].detail, "floor=0->123456789");
            have_sf++;
        } else if (strcmp(all[i].ns, "") == 0) {
            assert_non_null(strstr(all[i].detail, "history=01234567"));
            assert_non_null(strstr(all[i].detail, "namespaces=2"));
            have_sum++;
        }
        assert_string_equal(all[i].actor, ACTOR);
        assert_int_equal(all[i].at_ms, NOW_MS);
    }
    free(all);
    assert_int_equal(have_rg, 1);
    assert_int_equal(have_sf, 1);
    assert_int_equal(have_sum, 1);
    assert_int_equal(audit_count(f->st), old_n + 3);

    /* The new history is the store's, for every connection from now on. */
    idmint__store_close(f->st);
    f->st = open_again(f);
    after = reserve_one(f->st, "rg", "req-3");
    assert_string_equal(after.id, NEW_ID);
}

static void test_history__a_fence_that_would_move_back_changes_nothing(void **state)
{
    struct fx *f = *state;
    /* The backwards step last: a fence that applied steps one by one would
     * already have moved the first. */
    struct idmint__fence_step steps[2] = {step_of("sf", IDMINT_KIND_SNOWFLAKE, 999999, 0),
                                          step_of("rg", IDMINT_KIND_RANGE, 10, 11)};
    struct idmint__range r = {0};
    struct idmint__history seen = {"", 0, 0}, got;
    size_t audits;

    make_snowflake(f->st, "sf", 0, "");
    make_range(f->st, "rg", 1, 1000000, 0, "");
    assert_int_equal(idmint__store_range_reserve(f->st, "rg", "inc", "req-1", 20, NOW_MS, &r), 0);
    assert_follows(&seen, &r.history, "reserve");
    audits = audit_count(f->st);
    assert_int_equal(idmint__store_fence(f->st, steps, 2, NEW_ID, ACTOR, NOW_MS), IDMINT_ECONFLICT);
    assert_non_null(strstr(idmint_errmsg(), "backwards"));
    assert_ns(f->st, "rg", 21, 0);
    assert_ns(f->st, "sf", 0, 0);
    assert_int_equal(audit_count(f->st), audits);
    got = reserve_one(f->st, "rg", "req-2");
    assert_follows(&seen, &got, "reserve after a refused fence"); /* the same history */
    assert_int_equal(audit_count(f->st), audits);
}

static void test_history__a_fence_naming_an_unknown_namespace_changes_nothing(void **state)
{
    struct fx *f = *state;
    struct idmint__fence_step steps[2] = {step_of("rg", IDMINT_KIND_RANGE, 100, 101),
                                          step_of("nope", IDMINT_KIND_SNOWFLAKE, 5, 0)};
    struct idmint__history seen = {"", 0, 0}, got;
    size_t audits;

    make_range(f->st, "rg", 1, 1000000, 0, "");
    got = reserve_one(f->st, "rg", "req-1");
    assert_follows(&seen, &got, "reserve");
    audits = audit_count(f->st);
    assert_int_equal(idmint__store_fence(f->st, steps, 2, NEW_ID, ACTOR, NOW_MS), IDMINT_ENOTFOUND);
    assert_ns(f->st, "rg", 2, 0);
    assert_int_equal(audit_count(f->st), audits);
    got = reserve_one(f->st, "rg", "req-2");
    assert_follows(&seen, &got, "reserve after a refused fence");
}

static void test_history__a_fence_refuses_an_id_that_is_not_32_hex_digits(void **state)
{
    struct fx *f = *state;
    struct idmint__fence_step step = step_of("rg", IDMINT_KIND_RANGE, 100, 101);
    static const char *const bad[] = {"abc", "0123456789ABCDEF0123456789ABCDEF",
                                      "0123456789abcdef0123456789abcdef0", "x"};

    /* The wrapper refuses them, for every backend. */
    make_range(f->st, "rg", 1, 1000000, 0, "");
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(idmint__store_fence(f->st, &step, 1, bad[i], ACTOR, NOW_MS),
                         IDMINT_EINVAL);
    assert_ns(f->st, "rg", 1, 0);
}

/* ==== the audit log around a fence ==== */

/*
 * Paging by seq with any limit yields every record once, in order: on etcd
 * a fence's records share one revision, and a page must never end among
 * them.
 */
static void test_history__audit_pages_of_any_size_hold_every_record_once(void **state)
{
    struct fx *f = *state;
    struct idmint__fence_step steps[3] = {step_of("a", IDMINT_KIND_SNOWFLAKE, 10, 0),
                                          step_of("b", IDMINT_KIND_SNOWFLAKE, 20, 0),
                                          step_of("c", IDMINT_KIND_SNOWFLAKE, 30, 0)};
    idmint_audit_entry *all = NULL;
    size_t n_all = 0;

    make_snowflake(f->st, "a", 0, "");
    make_snowflake(f->st, "b", 0, "");
    assert_int_equal(idmint__store_fence(f->st, steps, 0, NEW_ID, ACTOR, NOW_MS), 0);
    make_snowflake(f->st, "c", 0, "");
    assert_int_equal(idmint__store_fence(f->st, steps, 3, NEW_ID_2, ACTOR, NOW_MS), 0);
    assert_int_equal(idmint__store_ns_set_disabled(f->st, "a", 1, ACTOR, NOW_MS), 0);
    assert_int_equal(idmint__store_audit_list(f->st, 0, SIZE_MAX, &all, &n_all), 0);
    assert_true(n_all >= 9); /* 3 creates, 1 + 4 fence records, 1 disable */
    for (size_t limit = 1; limit <= 5; limit++) {
        int64_t after = 0;
        size_t got = 0, rounds = 0;

        for (;;) {
            idmint_audit_entry *page = NULL;
            size_t n = 0;

            assert_true(rounds++ < 4 * n_all);
            assert_int_equal(idmint__store_audit_list(f->st, after, limit, &page, &n), 0);
            if (n == 0) {
                free(page);
                break;
            }
            for (size_t i = 0; i < n; i++) {
                if (got + i >= n_all || page[i].seq != all[got + i].seq ||
                    strcmp(page[i].ns, all[got + i].ns) != 0 ||
                    strcmp(page[i].detail, all[got + i].detail) != 0)
                    fail_msg("limit %zu: record %zu of the pages is not record %zu of the log",
                             limit, got + i, got + i);
                assert_true(page[i].seq > after);
            }
            got += n;
            after = page[n - 1].seq;
            free(page);
        }
        if (got != n_all)
            fail_msg("limit %zu: the pages hold %zu records, the log %zu", limit, got, n_all);
    }
    free(all);
}

/* ==== PostgreSQL: restores ==== */

/*
 * The sequence alone set back (by hand; a restore brings back the log with
 * it): the log still holds every pair, so what holders saw stays proven,
 * and no write reuses a logged seq: each is refused until a fence moves the
 * sequence past the log.
 */
static void
test_history__postgres_a_sequence_set_back_below_its_log_refuses_grants_until_a_fence(void **state)
{
    struct fx *f = *state;
    struct idmint__history seen = {"", 0, 0}, got;
    struct idmint__fence_step step = step_of("rg", IDMINT_KIND_RANGE, 0, 100);
    struct idmint__history_state hs;
    struct idmint__lease a = {0};
    struct idmint__range r = {0};
    char sql[128];

    make_snowflake(f->st, "sf", 0, "");
    make_range(f->st, "rg", 1, 1000000, 0, "");
    lease_init(&a, HOLDER_A);
    assert_int_equal(idmint__store_lease_take(f->st, "sf", 16, 1000, 1600, &a, ACTOR, NOW_MS), 0);
    assert_follows(&seen, &a.history, "take");
    got = reserve_one(f->st, "rg", "req-1");
    assert_follows(&seen, &got, "reserve");
    got = reserve_one(f->st, "rg", "req-2");
    assert_follows(&seen, &got, "reserve");
    /* What a restore from before the last two grants does to the counter. */
    snprintf(sql, sizeof(sql), "SELECT setval('idmint.history_seq', %llu)",
             (unsigned long long)a.history.seq);
    assert_int_equal(psql(f, f->pg_db, sql, NULL, 0), 0);
    assert_int_equal(idmint__store_lease_renew(f->st, "sf", &a, 1700, NOW_MS), IDMINT_ERESTORED);
    assert_int_equal(idmint__store_range_reserve(f->st, "rg", "inc-1", "req-3", 1, NOW_MS, &r),
                     IDMINT_ERESTORED);
    assert_int_equal(idmint__store_history_check(f->st, seen.seq, &hs), 0);
    assert_int_equal(idmint__history_verify(&seen, &hs, IDMINT__EVIDENCE_HOLDER, "sf"), 0);
    assert_int_equal(idmint__store_fence(f->st, &step, 1, NEW_ID, ACTOR, NOW_MS), 0);
    assert_int_equal(idmint__store_range_reserve(f->st, "rg", "inc-1", "req-3", 1, NOW_MS, &r), 0);
    assert_true(r.history.seq > seen.seq);
    assert_string_equal(r.history.id, NEW_ID);
}

static void test_history__postgres_a_dump_restored_under_running_holders_is_caught(void **state)
{
    struct fx *f = *state;
    struct idmint__history seen = {"", 0, 0}, got, fenced = {"", 0, 0};
    struct idmint__fence_step step = step_of("rg", IDMINT_KIND_RANGE, 0, 0);
    struct idmint__history_state hs;
    struct idmint__lease a = {0};
    struct idmint__range r = {0};
    struct store *restored = NULL;
    char dump[700], cmd[1600], url[600];
    idmint_ns_info info;

    make_snowflake(f->st, "sf", 0, "");
    make_range(f->st, "rg", 1, 1000000, 0, "");
    lease_init(&a, HOLDER_A);
    assert_int_equal(idmint__store_lease_take(f->st, "sf", 16, 1000, 1600, &a, ACTOR, NOW_MS), 0);
    assert_follows(&seen, &a.history, "take");
    f->dir = ts_tempdir();
    assert_non_null(f->dir);
    snprintf(dump, sizeof(dump), "%s/dump", f->dir);
    snprintf(cmd, sizeof(cmd), "pg_dump -h %s -p %s -U postgres -d %s -Fc -f %s", f->pg_host,
             f->pg_port, f->pg_db, dump);
    assert_int_equal(system(cmd), 0);
    /* The history goes on after the dump... */
    for (int i = 0; i < 3; i++) {
        char req[16];

        snprintf(req, sizeof(req), "req-%d", i);
        got = reserve_one(f->st, "rg", req);
        assert_follows(&seen, &got, "reserve after the dump");
    }
    assert_int_equal(idmint__store_lease_renew(f->st, "sf", &a, 1700, NOW_MS), 0);
    assert_follows(&seen, &a.history, "renew after the dump");
    /* ...and the dump comes back under the running holders. */
    snprintf(f->pg_db2, sizeof(f->pg_db2), "%s_r", f->pg_db);
    assert_int_equal(pg_create_db(f, f->pg_db2), 0);
    snprintf(cmd, sizeof(cmd), "pg_restore -h %s -p %s -U postgres -d %s %s", f->pg_host,
             f->pg_port, f->pg_db2, dump);
    assert_int_equal(system(cmd), 0);
    pg_url_of(f, f->pg_db2, url, sizeof(url));
    assert_int_equal(idmint__store_open(url, NULL, &restored), 0);
    assert_int_equal(idmint__store_ns_get(restored, "rg", &info), 0);
    assert_int_equal(info.next_value, 1); /* as dumped */
    /* The chain: the restored log lacks the pair the holder saw last. */
    assert_int_equal(idmint__store_history_check(restored, seen.seq, &hs), 0);
    assert_true(hs.head.seq < seen.seq);
    assert_int_equal(idmint__history_verify(&seen, &hs, IDMINT__EVIDENCE_HOLDER, "sf"),
                     IDMINT_ERESTORED);
    /* The holder's next contact: the same history, a counter gone back. */
    assert_int_equal(idmint__store_lease_renew(restored, "sf", &a, 1800, NOW_MS), 0);
    assert_string_equal(a.history.id, seen.id);
    assert_true(a.history.seq <= seen.seq);
    assert_int_equal(idmint__history_follow(&seen, &a.history, "sf"), IDMINT_ERESTORED);
    /* Fenced, the restore is a history of its own: its holders' counters go on. */
    step.next_value = 4; /* the downstream says 1..3 were used */
    step.floor = 3;
    assert_int_equal(idmint__store_fence(restored, &step, 1, NEW_ID, ACTOR, NOW_MS), 0);
    assert_int_equal(idmint__store_range_reserve(restored, "rg", "inc-n", "req-0", 1, NOW_MS, &r),
                     0);
    assert_int_equal(r.start, 4);
    assert_follows(&fenced, &r.history, "reserve after the fence");
    assert_string_equal(fenced.id, NEW_ID);
    assert_int_equal(idmint__history_follow(&seen, &r.history, "rg"), IDMINT_ERESTORED);
    idmint__store_close(restored);
}

static void test_history__postgres_a_deleted_history_row_stops_grants_until_a_fence(void **state)
{
    struct fx *f = *state;
    struct idmint__fence_step step = step_of("rg", IDMINT_KIND_RANGE, 0, 100);
    struct idmint__history got;
    struct idmint__lease a = {0};
    struct idmint__range r = {0};
    idmint_worker_info *rows = NULL;
    size_t n = 0;

    make_snowflake(f->st, "sf", 0, "");
    make_range(f->st, "rg", 1, 1000000, 0, "");
    (void)reserve_one(f->st, "rg", "req-1");
    assert_int_equal(psql(f, f->pg_db, "DELETE FROM idmint.history", NULL, 0), 0);
    lease_init(&a, HOLDER_A);
    assert_int_equal(idmint__store_lease_take(f->st, "sf", 16, 1000, 1600, &a, ACTOR, NOW_MS),
                     IDMINT_ERESTORED);
    assert_non_null(strstr(idmint_errmsg(), "fence"));
    /* The take rolled back: no row. */
    assert_int_equal(idmint__store_lease_list(f->st, "sf", &rows, &n), 0);
    assert_int_equal(n, 0);
    free(rows);
    assert_int_equal(idmint__store_range_reserve(f->st, "rg", "inc", "req-2", 1, NOW_MS, &r),
                     IDMINT_ERESTORED);
    assert_int_equal(idmint__store_fence(f->st, &step, 1, NEW_ID, ACTOR, NOW_MS), 0);
    got = reserve_one(f->st, "rg", "req-3");
    assert_string_equal(got.id, NEW_ID);
    assert_int_equal(idmint__store_lease_take(f->st, "sf", 16, 1000, 1600, &a, ACTOR, NOW_MS), 0);
    assert_string_equal(a.history.id, NEW_ID);
    assert_true(a.history.seq > got.seq);
}

/* Run @p sql on the fixture's SQLite file with sqlite itself, beside the store's own connection. */
static void sqlite_exec(const struct fx *f, const char *sql)
{
    char path[4200];
    sqlite3 *db = NULL;
    char *err = NULL;

    snprintf(path, sizeof(path), "%s/store.db", f->dir);
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
    sqlite3_busy_timeout(db, 5000);
    if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK)
        fail_msg("sqlite: %s", err != NULL ? err : "?");
    assert_int_equal(sqlite3_close(db), SQLITE_OK);
}

/*
 * Every granting transaction grows the counter, then reads the history row:
 * a row marked as a backup refuses the grant, a missing row is a damaged
 * authority, and either way the transaction rolls back whole (the counter,
 * the log, the range and the lease are as they were).
 */
static void test_history__sqlite_a_marked_or_missing_history_row_refuses_every_grant(void **state)
{
    struct fx *f = *state;
    struct idmint__history before, after;
    struct idmint__lease a = {0};
    struct idmint__range r = {0};
    idmint_worker_info *rows = NULL;
    size_t n = 0;
    uint64_t next = 2;

    make_snowflake(f->st, "sf", 0, "");
    make_range(f->st, "rg", 1, 1000000, 0, "");
    before = reserve_one(f->st, "rg", "req-1");
    assert_ns(f->st, "rg", next, 0);
    lease_init(&a, HOLDER_A);
    for (int missing = 0; missing < 2; missing++) {
        sqlite_exec(f, missing ? "DELETE FROM history" : "UPDATE history SET backup_ms = 1");
        assert_int_equal(idmint__store_range_reserve(f->st, "rg", "inc", "req-2", 1, NOW_MS, &r),
                         missing ? IDMINT_ESTORE : IDMINT_ERESTORED);
        assert_non_null(strstr(idmint_errmsg(), missing ? "history row is missing" : "backup"));
        assert_int_equal(idmint__store_lease_take(f->st, "sf", 16, 1000, 1600, &a, ACTOR, NOW_MS),
                         missing ? IDMINT_ESTORE : IDMINT_ERESTORED);
        assert_ns(f->st, "rg", next, 0);
        assert_int_equal(idmint__store_lease_list(f->st, "sf", &rows, &n), 0);
        assert_int_equal(n, 0);
        free(rows);
        if (!missing) {
            /* The counter and the log are as the last grant left them. */
            sqlite_exec(f, "UPDATE history SET backup_ms = 0");
            after = reserve_one(f->st, "rg", "req-3");
            assert_string_equal(after.id, before.id);
            assert_true(after.seq == before.seq + 1);
            before = after;
            assert_ns(f->st, "rg", ++next, 0);
        }
    }
}

/* Open the store at @p url, reserve once and write the history id to @p out: exit 0 on success. */
static void open_child(const char *url, const char *ns, int gate, int out, unsigned idx)
{
    struct idmint__range r = {0};
    struct store *st = NULL;
    char req[32], id[33] = "";
    char c;

    while (read(gate, &c, 1) > 0)
        ;
    snprintf(req, sizeof(req), "child-%u", idx);
    if (idmint__store_open(url, NULL, &st) == 0 &&
        idmint__store_range_reserve(st, ns, "inc-c", req, 1, NOW_MS, &r) == 0)
        memcpy(id, r.history.id, sizeof(id));
    else
        fprintf(stderr, "child %u: %s\n", idx, idmint_errmsg());
    idmint__store_close(st);
    _exit(write(out, id, sizeof(id)) == (ssize_t)sizeof(id) && id[0] != '\0' ? 0 : 1);
}

/*
 * Many processes opening an older store at once: each opens, one upgrades
 * it, and all of them grant in the one history it got.
 */
static void open_many(const struct fx *f, const char *ns, char first[33])
{
    enum { PROCS = 6 };
    int gate[2], res[2];
    pid_t pids[PROCS];

    assert_int_equal(pipe(gate), 0);
    assert_int_equal(pipe(res), 0);
    for (unsigned i = 0; i < PROCS; i++) {
        pids[i] = fork();
        assert_true(pids[i] >= 0);
        if (pids[i] == 0) {
            close(gate[1]);
            close(res[0]);
            open_child(f->url, ns, gate[0], res[1], i);
        }
    }
    close(gate[0]);
    close(res[1]);
    close(gate[1]); /* go */
    for (unsigned i = 0; i < PROCS; i++) {
        char id[33];

        assert_int_equal(read(res[0], id, sizeof(id)), sizeof(id));
        if (id[0] == '\0')
            fail_msg("a process could not open the older store or grant in it");
        assert_history_id(id);
        if (i == 0)
            memcpy(first, id, sizeof(id));
        else
            assert_string_equal(id, first);
    }
    close(res[0]);
    for (unsigned i = 0; i < PROCS; i++) {
        int status;

        assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
}

static void test_history__postgres_schema_2_is_upgraded_once_by_many_openers(void **state)
{
    struct fx *f = *state;
    char id[33], out[128];
    idmint_ns_info info;

    make_range(f->st, "rg", 1, 1000000, 0, "");
    (void)reserve_one(f->st, "rg", "req-1");
    idmint__store_close(f->st);
    f->st = NULL;
    /* Back to schema 2: what an idmint of before the history left. */
    assert_int_equal(psql(f, f->pg_db,
                          "BEGIN; DROP TABLE idmint.worker_grants, idmint.range_grants, "
                          "idmint.batches, idmint.collisions; "
                          "DROP SEQUENCE idmint.history_seq; DROP TABLE idmint.history; "
                          "DROP TABLE idmint.history_log; DROP TABLE idmint.records; ALTER TABLE "
                          "idmint.range_leases "
                          "DROP COLUMN hseq, DROP COLUMN htip; "
                          "ALTER TABLE idmint.namespaces DROP COLUMN floor, DROP COLUMN origin, "
                          "DROP COLUMN max_lease_units; "
                          "DELETE FROM idmint.schema_version WHERE version >= 3; COMMIT",
                          NULL, 0),
                     0);
    open_many(f, "rg", id);
    assert_int_equal(psql(f, f->pg_db,
                          "SELECT (SELECT count(*) FROM idmint.history) || ' ' || "
                          "(SELECT count(*) FROM idmint.schema_version WHERE version = 4) || ' ' "
                          "|| (SELECT id FROM idmint.history)",
                          out, sizeof(out)),
                     0);
    assert_true(strncmp(out, "1 1 ", 4) == 0);
    assert_string_equal(out + 4, id);
    f->st = open_again(f);
    assert_int_equal(idmint__store_ns_get(f->st, "rg", &info), 0);
    assert_int_equal(info.floor, 0);
    assert_string_equal(info.origin, "");
    assert_int_equal(info.next_value, 8); /* one reservation before, six during */
}

/*
 * Schema 4 to 5 (issue 28): a batch saved under schema 4 is kept under its
 * owner, with the default retention from its old stamp; another owner's key
 * of that name is a batch of its own; a reporter's repeated collision
 * records fold into the first, which answers every repeat from then on.
 */
static void test_history__postgres_schema_4_keeps_batches_under_their_owners(void **state)
{
    struct fx *f = *state;
    struct idmint__batch got, b, saved;
    idmint_collision c, first;
    char out[128], runs[] = "500+2";
    int inserted = 0;

    idmint__store_close(f->st);
    f->st = NULL;
    /* Back to schema 4: one key in the whole store, no expiry, no deduplication. */
    assert_int_equal(
        psql(f, f->pg_db,
             "BEGIN; DROP INDEX idmint.batches_expiry; DROP INDEX idmint.collisions_report; "
             "DROP INDEX idmint.collisions_expiry; ALTER TABLE idmint.batches DROP COLUMN "
             "expires_ms, DROP CONSTRAINT batches_pkey, ADD PRIMARY KEY (key); "
             "CREATE INDEX batches_age ON idmint.batches (created_ms); "
             "ALTER TABLE idmint.collisions DROP COLUMN expires_ms; "
             "DROP TABLE idmint.history_log, idmint.records; ALTER TABLE idmint.range_leases DROP "
             "COLUMN hseq, "
             "DROP COLUMN htip; ALTER TABLE idmint.namespaces DROP COLUMN max_lease_units; "
             "ALTER TABLE idmint.history DROP COLUMN store_id, DROP COLUMN lineage; "
             "DELETE FROM idmint.schema_version WHERE version >= 5; "
             "INSERT INTO idmint.batches VALUES ('orders', 'k-1', 'shop', 3, '100+3', "
             "1780000000000); "
             "INSERT INTO idmint.collisions (namespace, id, first_owner, second_owner, verdict, "
             "reporter, observed_ms, reported_ms, note) VALUES "
             "('orders', 7, '', '', 'reported', 'shop', 1, 1780000000001, 'first'), "
             "('orders', 7, '', '', 'reported', 'shop', 2, 1780000000002, 'again'), "
             "('orders', 7, '', '', 'reported', 'db', 3, 1780000000003, 'other'); COMMIT",
             NULL, 0),
        0);
    f->st = open_again(f);
    assert_int_equal(psql(f, f->pg_db,
                          "SELECT (SELECT max(version) FROM idmint.schema_version) || ' ' || "
                          "(SELECT count(*) FROM idmint.collisions)",
                          out, sizeof(out)),
                     0);
    assert_string_equal(out, "7 2");
    memset(&got, 0, sizeof(got));
    assert_int_equal(idmint__store_batch_get(f->st, "shop", "k-1", &got), 0);
    assert_string_equal(got.runs, "100+3");
    assert_int_equal(got.expires_ms, 1780000000000 + 86400000);
    idmint__batch_clear(&got);
    assert_int_equal(idmint__store_batch_get(f->st, "other", "k-1", &got), IDMINT_ENOTFOUND);
    memset(&b, 0, sizeof(b));
    snprintf(b.ns, sizeof(b.ns), "orders");
    snprintf(b.key, sizeof(b.key), "k-1");
    snprintf(b.owner, sizeof(b.owner), "other");
    b.count = 2;
    b.runs = runs;
    b.keep_ms = 60000;
    memset(&saved, 0, sizeof(saved));
    assert_int_equal(idmint__store_batch_claim(f->st, &b, &saved, &inserted), 0);
    assert_int_equal(inserted, 1);
    idmint__batch_clear(&saved);
    memset(&c, 0, sizeof(c));
    c.size = sizeof(c);
    snprintf(c.ns, sizeof(c.ns), "orders");
    c.id = 7;
    snprintf(c.verdict, sizeof(c.verdict), "reported");
    snprintf(c.reporter, sizeof(c.reporter), "shop");
    assert_int_equal(
        idmint__store_collision_add(f->st, &c, "shop", NOW_MS, 60000, &first, &inserted), 0);
    assert_int_equal(inserted, 0);
    assert_string_equal(first.note, "first");
}

/* ==== etcd: what an older idmint or an operator leaves under the prefix ==== */

static void test_history__etcd_a_version_1_prefix_is_upgraded_once_by_many_openers(void **state)
{
    struct fx *f = *state;
    char id[33], reply[2048];
    idmint_ns_info info;

    make_range(f->st, "rg", 1, 1000000, 0, "");
    (void)reserve_one(f->st, "rg", "req-1");
    idmint__store_close(f->st);
    f->st = NULL;
    /* Version 1: a schema key saying so, and no history key. */
    assert_int_equal(etcd_delete(f, "/history"), 0);
    assert_int_equal(etcd_put(f, "/schema", "1"), 0);
    open_many(f, "rg", id);
    assert_int_equal(etcd_get(f, "/schema", reply, sizeof(reply)), 0);
    assert_non_null(strstr(reply, "\"value\":\"NQ==\"")); /* "5" */
    f->st = open_again(f);
    assert_int_equal(idmint__store_ns_get(f->st, "rg", &info), 0);
    assert_int_equal(info.floor, 0);
    assert_int_equal(info.next_value, 8);
}

static void test_history__etcd_a_missing_history_key_refuses_every_grant_until_a_fence(void **state)
{
    struct fx *f = *state;
    struct idmint__fence_step step = step_of("rg", IDMINT_KIND_RANGE, 0, 2);
    struct idmint__lease a = {0}, b = {0};
    struct idmint__range r = {0};
    struct idmint__history got;
    idmint_worker_info *rows = NULL;
    size_t n = 0;

    make_snowflake(f->st, "sf", 0, "");
    make_range(f->st, "rg", 1, 1000000, 0, "");
    lease_init(&a, HOLDER_A);
    lease_init(&b, HOLDER_B);
    assert_int_equal(idmint__store_lease_take(f->st, "sf", 16, 1000, 1600, &a, ACTOR, NOW_MS), 0);
    (void)reserve_one(f->st, "rg", "req-1");
    assert_int_equal(etcd_delete(f, "/history"), 0);
    assert_int_equal(idmint__store_lease_take(f->st, "sf", 16, 1000, 1600, &b, ACTOR, NOW_MS),
                     IDMINT_ERESTORED);
    assert_non_null(strstr(idmint_errmsg(), "history key"));
    assert_int_equal(idmint__store_lease_renew(f->st, "sf", &a, 1700, NOW_MS), IDMINT_ERESTORED);
    assert_int_equal(idmint__store_lease_release(f->st, "sf", &a, 1100, ACTOR, NOW_MS),
                     IDMINT_ERESTORED);
    assert_int_equal(idmint__store_range_reserve(f->st, "rg", "inc", "req-2", 1, NOW_MS, &r),
                     IDMINT_ERESTORED);
    /* Nothing moved: one row, held by a as taken; the namespace where it was. */
    assert_int_equal(idmint__store_lease_list(f->st, "sf", &rows, &n), 0);
    assert_int_equal(n, 1);
    assert_string_equal(rows[0].holder, HOLDER_A);
    assert_int_equal(rows[0].lease_until, 1600);
    free(rows);
    assert_ns(f->st, "rg", 2, 0);
    /* A reopen does not make one up; a fence does. */
    idmint__store_close(f->st);
    f->st = open_again(f);
    assert_int_equal(idmint__store_range_reserve(f->st, "rg", "inc", "req-2", 1, NOW_MS, &r),
                     IDMINT_ERESTORED);
    assert_int_equal(idmint__store_fence(f->st, &step, 1, NEW_ID, ACTOR, NOW_MS), 0);
    got = reserve_one(f->st, "rg", "req-3");
    assert_string_equal(got.id, NEW_ID);
    assert_int_equal(idmint__store_lease_renew(f->st, "sf", &a, 1700, NOW_MS), 0);
    assert_string_equal(a.history.id, NEW_ID);
    assert_true(a.history.seq > got.seq);
}

/* ==== a store deleted and made anew at its place (the host's witness binds places) ==== */

/* Create range namespace @p ns through the authority at @p url (a new store there if none). */
static void authority_range(const char *url, const char *ns)
{
    idmint_authority *a = NULL;
    idmint_ns_info info;

    assert_int_equal(idmint_authority_open(&a, url, 0), 0);
    idmint_ns_info_init_v2(&info, IDMINT_KIND_RANGE);
    snprintf(info.name, sizeof(info.name), "%s", ns);
    info.block = 10;
    assert_int_equal(idmint_ns_create(a, &info), 0);
    idmint_authority_close(a);
}

/* A handle on @p ns at @p url mints one ID into *id: the handle's result. */
static int handle_mint(const char *url, const char *ns, uint64_t *id)
{
    idmint *m = NULL;
    int rc = idmint_open(&m, url, ns, NULL);

    if (rc == 0) {
        rc = idmint_next(m, id);
        idmint_close(m);
    }
    return rc;
}

/*
 * Delete the test's store and leave its place empty, as an operator does:
 * the SQLite file removed, the database dropped and created again, every
 * key under the etcd prefix deleted.
 */
static void delete_in_place(struct fx *f)
{
    char path[700], key[400], end[400], k64[600], e64[600], body[1400];

    idmint__store_close(f->st); /* the fixture's own connection, not a holder */
    f->st = NULL;
    switch (f->backend) {
    case BK_SQLITE:
        snprintf(path, sizeof(path), "%s", f->url + strlen("sqlite:"));
        assert_int_equal(unlink(path), 0);
        strcat(path, "-wal");
        (void)unlink(path);
        path[strlen(path) - 4] = '\0';
        strcat(path, "-shm");
        (void)unlink(path);
        break;
    case BK_POSTGRES:
        pg_drop_db(f, f->pg_db);
        assert_int_equal(pg_create_db(f, f->pg_db), 0);
        break;
    case BK_ETCD:
        /* [P/, P0): every key of this prefix and none of a longer one. */
        snprintf(key, sizeof(key), "%s/", f->etcd_prefix);
        snprintf(end, sizeof(end), "%s0", f->etcd_prefix);
        b64(key, k64);
        b64(end, e64);
        snprintf(body, sizeof(body), "{\"key\":\"%s\",\"range_end\":\"%s\"}", k64, e64);
        assert_int_equal(etcd_post(f, "/v3/kv/deleterange", body, NULL, 0), 0);
        break;
    }
}

static void test_history__a_store_made_anew_at_its_place_is_refused_until_fenced(void **state)
{
    struct fx *f = *state;
    char *wdir = ts_tempdir(), *saved = getenv("IDMINT_WITNESS_DIR");
    idmint_fence_range above = {"rg", 0, 0};
    idmint_authority *a = NULL;
    uint64_t id = 0, high = 0;
    int i;

    assert_non_null(wdir);
    saved = saved != NULL ? strdup(saved) : NULL;
    setenv("IDMINT_WITNESS_DIR", wdir, 1);
    authority_range(f->url, "rg");
    for (i = 0; i < 15; i++) {
        assert_int_equal(handle_mint(f->url, "rg", &id), 0);
        high = id > high ? id : high;
    }
    delete_in_place(f);
    authority_range(f->url, "rg"); /* made anew: it would start at 1 again */
    assert_int_equal(handle_mint(f->url, "rg", &id), IDMINT_ERESTORED);
    assert_non_null(strstr(idmint_errmsg(), "deleted and created anew"));
    /* Nothing was granted: the new store's rg still starts at 1. */
    f->st = open_again(f);
    assert_ns(f->st, "rg", 1, 0);
    /* A fence on this host accepts it, above what the old store issued. */
    above.value = high;
    assert_int_equal(idmint_authority_open_existing(&a, f->url, 0), 0);
    assert_int_equal(idmint_authority_fence(a, &above, 1, 0), 0);
    idmint_authority_close(a);
    assert_int_equal(handle_mint(f->url, "rg", &id), 0);
    assert_true(id > high);
    if (saved != NULL)
        setenv("IDMINT_WITNESS_DIR", saved, 1);
    else
        unsetenv("IDMINT_WITNESS_DIR");
    free(saved);
    ts_rmtree(wdir);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest common[] = {
        T(test_history__every_grant_logs_its_pair_and_a_foreign_tip_is_refused),
        T(test_history__a_fence_keeps_the_store_id_and_records_the_id_it_replaced),
        T(test_history__a_fence_shorter_than_the_longest_lease_is_refused_unless_forced),
        T(test_history__the_counter_grows_with_every_grant_of_two_stores_interleaved),
        T(test_history__a_replayed_reservation_reports_its_grant_and_no_news),
        T(test_history__the_id_is_32_hex_digits_and_survives_a_reopen),
        T(test_history__ns_create_keeps_floor_and_origin),
        T(test_history__a_reservation_starts_above_the_floor_it_was_created_with),
        T(test_history__a_reservation_after_a_fence_starts_above_its_floor),
        T(test_history__a_floor_at_max_value_leaves_nothing_to_reserve),
        T(test_history__a_fence_gives_a_new_history_and_audits_every_step),
        T(test_history__a_fence_that_would_move_back_changes_nothing),
        T(test_history__a_fence_naming_an_unknown_namespace_changes_nothing),
        T(test_history__a_fence_refuses_an_id_that_is_not_32_hex_digits),
        T(test_history__audit_pages_of_any_size_hold_every_record_once),
        T(test_history__a_store_made_anew_at_its_place_is_refused_until_fenced),
    };
    const struct CMUnitTest sqlite[] = {
        T(test_history__sqlite_a_marked_or_missing_history_row_refuses_every_grant),
    };
    const struct CMUnitTest postgres[] = {
        T(test_history__postgres_a_sequence_set_back_below_its_log_refuses_grants_until_a_fence),
        T(test_history__postgres_a_dump_restored_under_running_holders_is_caught),
        T(test_history__postgres_a_deleted_history_row_stops_grants_until_a_fence),
        T(test_history__postgres_schema_2_is_upgraded_once_by_many_openers),
        T(test_history__postgres_schema_4_keeps_batches_under_their_owners),
    };
    const struct CMUnitTest etcd[] = {
        T(test_history__etcd_a_version_1_prefix_is_upgraded_once_by_many_openers),
        T(test_history__etcd_a_missing_history_key_refuses_every_grant_until_a_fence),
    };
    const char *name = getenv("IDMINT_TEST_STORE");
    int rc;

    if (name == NULL || name[0] == '\0')
        name = "sqlite";
    rc = cmocka_run_group_tests_name(name, common, NULL, NULL);
    if (strcmp(name, "sqlite") == 0)
        rc |= cmocka_run_group_tests_name("sqlite", sqlite, NULL, NULL);
    else if (strcmp(name, "postgres") == 0)
        rc |= cmocka_run_group_tests_name("postgres", postgres, NULL, NULL);
    else if (strcmp(name, "etcd") == 0)
        rc |= cmocka_run_group_tests_name("etcd", etcd, NULL, NULL);
    return rc;
#undef T
}
