/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Durable range reservations per second through the store seam, on
 * PostgreSQL and SQLite with 1 and 8 caller processes, beside the raw
 * engine doing the bare durable transaction in the same run: pgbench with a
 * one-line UPDATE … RETURNING, and the sqlite3 shell running BEGIN IMMEDIATE;
 * UPDATE … RETURNING; COMMIT in WAL with synchronous=FULL. No thresholds: it
 * prints rates, ratios and whether the targets are met. Starts its own
 * PostgreSQL with tests/support/pg-start.sh unless given a URL.
 */
#include "idmint.h"
#include "internal.h"
#include "pg_url.h"
#include "store.h"

#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BLOCK      100 /* values per reservation: one reservation is one transaction */
#define MAX_PROCS  8
#define TARGET_OPS 1000.0 /* reservations per second, per backend */
#define TARGET_RAW 0.80   /* share of the raw engine's rate */

static double seconds_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void wait_closed(int fd)
{
    char c;

    while (read(fd, &c, 1) > 0)
        ;
}

/* One caller: reserve for @p secs, then write the count to @p out. */
static void caller(const char *url, const char *ns, double secs, int go, int out)
{
    struct store *st = NULL;
    struct idmint__range r = {0};
    char inc[33], req[IDMINT__REQUEST_ID_LEN];
    uint64_t n = 0;
    double end;
    int code = 0;

    if (idmint__store_open(url, NULL, &st) != 0) {
        fprintf(stderr, "bench_reserve: open %s: %s\n", url, idmint_errmsg());
        _exit(2);
    }
    /* Fresh per caller and round: a pid can come back in a later round. */
    if (idmint__incarnation(inc) != 0) {
        fprintf(stderr, "bench_reserve: incarnation: %s\n", idmint_errmsg());
        _exit(2);
    }
    wait_closed(go);
    end = seconds_now() + secs;
    while (seconds_now() < end) {
        idmint__range_request_id(n, req); /* as the library's own refills name them */
        if (idmint__store_range_reserve(st, ns, inc, req, BLOCK, 0, &r) != 0) {
            fprintf(stderr, "bench_reserve: reserve: %s\n", idmint_errmsg());
            code = 3;
            break;
        }
        n++;
    }
    idmint__store_close(st);
    if (write(out, &n, sizeof(n)) != (ssize_t)sizeof(n))
        code = 4;
    _exit(code);
}

/* Reservations per second by @p procs processes at once; negative on failure. */
static double run_store(const char *url, const char *ns, unsigned procs, double secs)
{
    int go[2], res[2], failed = 0;
    pid_t pids[MAX_PROCS];
    uint64_t total = 0, n;
    double t0, t1;

    if (pipe(go) != 0 || pipe(res) != 0)
        return -1;
    for (unsigned i = 0; i < procs; i++) {
        pids[i] = fork();
        if (pids[i] < 0)
            return -1;
        if (pids[i] == 0) {
            close(go[1]);
            close(res[0]);
            caller(url, ns, secs, go[0], res[1]);
        }
    }
    close(go[0]);
    close(res[1]);
    idmint__sleep_ms(300); /* let every caller connect */
    t0 = seconds_now();
    close(go[1]);
    for (unsigned i = 0; i < procs; i++) {
        if (read(res[0], &n, sizeof(n)) == (ssize_t)sizeof(n))
            total += n;
        else
            failed = 1;
    }
    t1 = seconds_now();
    close(res[0]);
    for (unsigned i = 0; i < procs; i++) {
        int status;

        if (waitpid(pids[i], &status, 0) != pids[i] || !WIFEXITED(status) ||
            WEXITSTATUS(status) != 0)
            failed = 1;
    }
    return failed ? -1 : (double)total / (t1 - t0);
}

static int make_range_ns(const char *url, const char *ns)
{
    struct store *st = NULL;
    idmint_ns_info info;
    int rc;

    idmint_ns_info_init(&info, IDMINT_KIND_RANGE);
    snprintf(info.name, sizeof(info.name), "%s", ns);
    info.block = BLOCK;
    info.max_block = BLOCK;
    if ((rc = idmint__store_open(url, NULL, &st)) == 0)
        rc = idmint__store_ns_create(st, &info, "bench", 0);
    if (rc != 0)
        fprintf(stderr, "bench_reserve: create %s on %s: %s\n", ns, url, idmint_errmsg());
    idmint__store_close(st);
    return rc;
}

/* Run a shell command and return its first output line in @p buf; 0 on success. */
static int sh_line(const char *cmd, char *buf, size_t size)
{
    FILE *p = popen(cmd, "r");
    int rc;

    if (p == NULL)
        return -1;
    buf[0] = '\0';
    if (fgets(buf, (int)size, p) == NULL)
        buf[0] = '\0';
    rc = pclose(p);
    buf[strcspn(buf, "\r\n")] = '\0';
    return rc == 0 ? 0 : -1;
}

/* pgbench running @p sql (one statement per transaction; :ns is @p ns), @p clients at once. */
static double pgbench_tps(const char *url, const char *dir, const char *sql, const char *ns,
                          unsigned clients, double secs)
{
    char script[512], cmd[2048], line[256];
    FILE *f;

    snprintf(script, sizeof(script), "%s/pgbench.sql", dir);
    if ((f = fopen(script, "w")) == NULL)
        return -1;
    fprintf(f, "%s\n", sql);
    fclose(f);
    snprintf(cmd, sizeof(cmd),
             "pgbench -n -M prepared -f '%s' -D ns='%s' -c %u -j %u -T %d '%s' 2>&1 | "
             "sed -n 's/^tps = \\([0-9.]*\\).*/\\1/p' | tail -n 1",
             script, ns, clients, clients, (int)(secs + 0.5), url);
    if (sh_line(cmd, line, sizeof(line)) != 0 || line[0] == '\0')
        return -1;
    return strtod(line, NULL);
}

/* The raw engine: the bare UPDATE … RETURNING on the namespace row. */
static double run_pgbench(const char *url, const char *ns, const char *dir, unsigned clients,
                          double secs)
{
    char sql[256];

    snprintf(sql, sizeof(sql),
             "UPDATE idmint.namespaces SET next_value = next_value + %d "
             "WHERE name = :ns RETURNING next_value;",
             BLOCK);
    return pgbench_tps(url, dir, sql, ns, clients, secs);
}

/*
 * PostgreSQL's own sequence, for reference: nextval() is not transactional
 * and its commit does not wait for a flush, so it is not a durable peer.
 */
static double run_nextval(const char *url, const char *dir, unsigned clients, double secs)
{
    char cmd[1024], line[64];

    snprintf(cmd, sizeof(cmd),
             "psql -qX '%s' -c 'CREATE SEQUENCE IF NOT EXISTS idmint_bench_nextval' "
             ">/dev/null 2>&1 && echo ok",
             url);
    if (sh_line(cmd, line, sizeof(line)) != 0 || strcmp(line, "ok") != 0)
        return -1;
    return pgbench_tps(url, dir, "SELECT nextval('idmint_bench_nextval');", "-", clients, secs);
}

/* The sqlite3 shell: BEGIN IMMEDIATE; UPDATE … RETURNING; COMMIT, @p procs shells at once. */
static double run_sqlite_raw(const char *dir, unsigned procs, double secs)
{
    char db[512], script[512], cmd[2048], line[256];
    /* Enough transactions to outlast @p secs at a few thousand per second. */
    unsigned long txns = (unsigned long)(secs * 2500.0 / procs) + 100;
    double t0, t1;
    FILE *f;

    snprintf(db, sizeof(db), "%s/raw.db", dir);
    snprintf(script, sizeof(script), "%s/raw.sql", dir);
    if ((f = fopen(script, "w")) == NULL)
        return -1;
    fprintf(f, ".timeout 10000\nPRAGMA journal_mode=WAL;\nPRAGMA synchronous=FULL;\n");
    for (unsigned long i = 0; i < txns; i++)
        fprintf(f,
                "BEGIN IMMEDIATE;\nUPDATE counter SET next_value = next_value + %d "
                "WHERE name = 'bench' RETURNING next_value;\nCOMMIT;\n",
                BLOCK);
    fclose(f);
    snprintf(cmd, sizeof(cmd),
             "rm -f '%s'* && sqlite3 '%s' 'PRAGMA journal_mode=WAL; CREATE TABLE counter "
             "(name TEXT PRIMARY KEY, next_value INTEGER NOT NULL); INSERT INTO counter "
             "VALUES (\"bench\", 1);' >/dev/null && echo ok",
             db, db);
    if (sh_line(cmd, line, sizeof(line)) != 0)
        return -1;
    snprintf(cmd, sizeof(cmd),
             "for i in $(seq %u); do sqlite3 '%s' < '%s' >/dev/null & done; wait; echo done", procs,
             db, script);
    t0 = seconds_now();
    if (sh_line(cmd, line, sizeof(line)) != 0)
        return -1;
    t1 = seconds_now();
    return (double)txns * procs / (t1 - t0);
}

/* The source tree: $IDMINT_SOURCE_DIR, else the folder above this file. */
static void source_dir(char *buf, size_t size)
{
    const char *env = getenv("IDMINT_SOURCE_DIR");
    char *slash;

    snprintf(buf, size, "%s", env != NULL && env[0] != '\0' ? env : __FILE__);
    if (env != NULL && env[0] != '\0')
        return;
    for (int i = 0; i < 2 && (slash = strrchr(buf, '/')) != NULL; i++)
        *slash = '\0';
    if (strchr(buf, '/') == NULL && strcmp(buf, "bench") == 0)
        snprintf(buf, size, ".");
}

/*
 * One case (a backend and a caller count) over its rounds: each side's mean
 * rate, and the ratio of each round's two sides, run back to back. Any
 * failed round fails the case.
 */
struct bench_case {
    double ours, raw;   /* mean rates over the rounds; negative on failure */
    double ratios[600]; /* ours / raw, per round */
    unsigned rounds;
};

static void add_round(struct bench_case *c, double ours, double raw, unsigned rounds)
{
    if (c->ours < 0 || ours < 0 || raw <= 0) {
        c->ours = c->raw = -1;
        return;
    }
    c->ours += ours / rounds;
    c->raw += raw / rounds;
    c->ratios[c->rounds++] = ours / raw;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

/* The median of the per-round ratios: see the comment in main. */
static double median_ratio(struct bench_case *c)
{
    qsort(c->ratios, c->rounds, sizeof(c->ratios[0]), cmp_double);
    return c->rounds % 2 ? c->ratios[c->rounds / 2]
                         : (c->ratios[c->rounds / 2 - 1] + c->ratios[c->rounds / 2]) / 2;
}

static void print_row(const char *backend, unsigned procs, struct bench_case *c)
{
    double median;

    if (c->ours < 0 || c->rounds == 0) {
        printf("%-10s %7u %12s %12s %7s\n", backend, procs, "error", "", "");
        return;
    }
    median = median_ratio(c); /* sorts the ratios: before reading the lowest and highest */
    printf("%-10s %7u %12.0f %12.0f %6.0f%% %5.0f-%.0f%%\n", backend, procs, c->ours, c->raw,
           100.0 * median, 100.0 * c->ratios[0], 100.0 * c->ratios[c->rounds - 1]);
}

int main(int argc, char **argv)
{
    static const unsigned callers[] = {1, 8};
    static struct bench_case pg[2], sq[2];
    double secs = 8.0, pg_nextval[2];
    char tmpl[] = "/tmp/idmint-bench-XXXXXX", src[1024], cmd[4096], line[1024], ns[64];
    char *url = NULL, *sq_url = NULL, *dir;
    int own_pg = 0, failed = 0;
    unsigned rounds;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) {
            char *end;

            secs = strtod(argv[++i], &end);
            if (*end != '\0' || !(secs >= 1 && secs <= 600)) {
                fprintf(stderr, "bench_reserve: --seconds: want 1..600, got '%s'\n", argv[i]);
                return 2;
            }
        } else if (strcmp(argv[i], "--pg-url") == 0 && i + 1 < argc)
            url = strdup(argv[++i]);
        else {
            fprintf(stderr, "usage: bench_reserve [--seconds S] [--pg-url URL]\n"
                            "  S: per case and side (default 8), in rounds of 1 s\n"
                            "  URL defaults to $IDMINT_TEST_PG_URL, the file $IDMINT_PG_ENV, or a\n"
                            "  private cluster started with tests/support/pg-start.sh\n");
            return 2;
        }
    }
    if (secs < 1)
        secs = 1;
    /* pgbench counts whole seconds: rounds of about 1 s. */
    rounds = (unsigned)secs;
    if ((dir = mkdtemp(tmpl)) == NULL) {
        fprintf(stderr, "bench_reserve: mkdtemp: %s\n", strerror(errno));
        return 1;
    }
    /* The private cluster runs as the postgres user, who must reach its folder inside. */
    if (chmod(dir, 0711) != 0) {
        fprintf(stderr, "bench_reserve: chmod %s: %s\n", dir, strerror(errno));
        return 1;
    }
    source_dir(src, sizeof(src));
    if (url == NULL)
        url = ts_pg_url();
    if (url == NULL) {
        snprintf(cmd, sizeof(cmd), "bash '%s/tests/support/pg-start.sh' '%s/pg' && cat '%s/pg/env'",
                 src, dir, dir);
        if (sh_line(cmd, line, sizeof(line)) != 0 || line[0] == '\0') {
            fprintf(stderr, "bench_reserve: cannot start PostgreSQL with %s\n", cmd);
            return 1;
        }
        url = strdup(line);
        own_pg = 1;
    }
    sq_url = malloc(strlen(dir) + 32);
    if (url == NULL || sq_url == NULL)
        return 1;
    snprintf(sq_url, strlen(dir) + 32, "sqlite:%s/store.db", dir);

    for (int k = 0; k < 2; k++) {
        snprintf(ns, sizeof(ns), "bench-%lx-%x-%u", (unsigned long)time(NULL), (unsigned)getpid(),
                 callers[k]);
        if (make_range_ns(url, ns) != 0 || make_range_ns(sq_url, ns) != 0) {
            pg[k].ours = sq[k].ours = pg_nextval[k] = -1;
            continue;
        }
        /*
         * A shared virtual disk's flush time drifts by 2x within a minute, so
         * idmint and the raw engine take turns in short rounds, each
         * backend's two sides back to back (the order swapped each round).
         * The ratio is the median of the rounds' ratios: a drift shared by
         * both sides of a round cancels, and one round where a stall hit
         * one side does not move it.
         */
        for (unsigned r = 0; r < rounds; r++) {
            double round_secs = secs / rounds, o[2] = {-1, -1}, w[2] = {-1, -1};
            int first = r % 2;

            for (int turn = 0; turn < 2; turn++) {
                if ((turn ^ first) == 0)
                    o[0] = run_store(url, ns, callers[k], round_secs);
                else
                    w[0] = run_pgbench(url, ns, dir, callers[k], round_secs);
            }
            for (int turn = 0; turn < 2; turn++) {
                if ((turn ^ first) == 0)
                    o[1] = run_store(sq_url, ns, callers[k], round_secs);
                else
                    w[1] = run_sqlite_raw(dir, callers[k], round_secs);
            }
            add_round(&pg[k], o[0], w[0], rounds);
            add_round(&sq[k], o[1], w[1], rounds);
        }
        pg_nextval[k] = run_nextval(url, dir, callers[k], 2);
    }

    printf("durable range reservations per second (%d values each, %.1f s per case in %u "
           "alternating rounds)\n",
           BLOCK, secs, rounds);
    printf("postgres: %s\n", url);
    printf("%-10s %7s %12s %12s %7s %9s\n", "backend", "callers", "idmint/s", "raw/s", "ratio",
           "rounds");
    for (int k = 0; k < 2; k++)
        print_row("postgres", callers[k], &pg[k]);
    for (int k = 0; k < 2; k++)
        print_row("sqlite", callers[k], &sq[k]);
    printf("idmint/s, raw/s: means over the rounds; ratio: the median of the rounds' own\n"
           "ratios (idmint / raw, run back to back); rounds: their lowest and highest\n");
    printf("raw: pgbench -M prepared, one UPDATE ... RETURNING per transaction; sqlite3 shell,\n"
           "BEGIN IMMEDIATE; UPDATE ... RETURNING; COMMIT in WAL with synchronous=FULL\n");
    printf("reference, not durable: PostgreSQL's own SELECT nextval() through pgbench -M "
           "prepared:\n");
    for (int k = 0; k < 2; k++) {
        if (pg_nextval[k] < 0)
            printf("  %u caller%s: error\n", callers[k], callers[k] == 1 ? " " : "s");
        else
            printf("  %u caller%s: %.0f/s, one value each (a reservation above: %d values)\n",
                   callers[k], callers[k] == 1 ? " " : "s", pg_nextval[k], BLOCK);
    }
    printf("targets (>= %.0f/s, >= %.0f%% of raw):\n", TARGET_OPS, 100.0 * TARGET_RAW);
    for (int k = 0; k < 2; k++) {
        const char *names[2] = {"postgres", "sqlite"};
        struct bench_case *cases[2] = {&pg[k], &sq[k]};

        for (int b = 0; b < 2; b++) {
            struct bench_case *c = cases[b];
            int broken = c->ours < 0 || c->rounds == 0;
            int met = !broken && c->ours >= TARGET_OPS && median_ratio(c) >= TARGET_RAW;

            failed |= broken;
            printf("  %-8s %u caller%s: %s\n", names[b], callers[k], callers[k] == 1 ? " " : "s",
                   broken ? "error"
                   : met  ? "met"
                          : "NOT MET");
        }
    }

    /* Leave a database given with --pg-url as it was. */
    snprintf(cmd, sizeof(cmd),
             "psql -qX '%s' -c 'DROP SEQUENCE IF EXISTS idmint_bench_nextval' >/dev/null 2>&1; "
             "echo ok",
             url);
    (void)sh_line(cmd, line, sizeof(line));
    if (own_pg) {
        snprintf(cmd, sizeof(cmd), "bash '%s/tests/support/pg-stop.sh' '%s/pg' && echo ok", src,
                 dir);
        (void)sh_line(cmd, line, sizeof(line));
    }
    snprintf(cmd, sizeof(cmd), "rm -rf '%s' && echo ok", dir);
    (void)sh_line(cmd, line, sizeof(line));
    free(url);
    free(sq_url);
    return failed;
}
