/* SPDX-License-Identifier: Apache-2.0 */
/*
 * idmint bench: a quick look at this machine's minting speed, about one
 * second per case, in a throwaway SQLite store. Not a benchmark suite
 * (that is bench/); no case is compared with anything.
 */
#include "cmd.h"

#include "idmint.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CASE_NS      1000000000ull /* run each case this long */
#define BATCH        1024u         /* calls between clock reads */
#define RANGE_BLOCK  4194304u      /* large, so refills stay off the measured path */
#define SNOWFLAKE_NS "bench-snowflake"
#define RANGE_NS     "bench-range"

static const char bench_usage[] =
    "usage: idmint bench\n"
    "\n"
    "Mint for about a second each from a snowflake namespace, a range namespace\n"
    "(one thread each, in a temporary SQLite store) and UUIDv7, and print the\n"
    "mean time per ID and IDs per second. The default snowflake layout caps one\n"
    "worker at 4096 IDs per ms.\n";

static uint64_t mono_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void print_result(const char *name, uint64_t n, uint64_t elapsed_ns)
{
    double per_id = (double)elapsed_ns / (double)n;

    printf("%-22s %10.1f ns/ID %14.0f IDs/s\n", name, per_id, 1e9 / per_id);
}

/* Mint from @p ns for CASE_NS; 0 or CLI_EXIT_FAILED after printing why. */
static int bench_handle(const char *authority, const char *ns, const char *name)
{
    uint64_t start, now, n = 0, id;
    idmint *m = NULL;
    unsigned i;
    int rc = idmint_open(&m, authority, ns, NULL);

    if (rc != 0)
        return cli_fail(rc, "bench: cannot open namespace '%s'", ns);
    start = mono_ns();
    do {
        for (i = 0; i < BATCH; i++) {
            rc = idmint_next(m, &id);
            if (rc != 0) {
                rc = cli_fail(rc, "bench: minting from '%s' failed", ns);
                idmint_close(m);
                return rc;
            }
        }
        n += BATCH;
        now = mono_ns();
    } while (now - start < CASE_NS);
    idmint_close(m);
    print_result(name, n, now - start);
    return CLI_EXIT_OK;
}

static int bench_uuid7(void)
{
    uint64_t start, now, n = 0;
    uint8_t u[16];
    unsigned i;
    int rc;

    start = mono_ns();
    do {
        for (i = 0; i < BATCH; i++)
            if ((rc = idmint_uuid7(u)) != 0)
                return cli_fail(rc, "bench: uuid7 failed");
        n += BATCH;
        now = mono_ns();
    } while (now - start < CASE_NS);
    print_result("uuid7", n, now - start);
    return CLI_EXIT_OK;
}

static int create_namespaces(const char *authority)
{
    idmint_authority *a = NULL;
    idmint_ns_info info;
    int rc = idmint_authority_open(&a, authority, 0);

    if (rc != 0)
        return cli_fail(rc, "bench: cannot open temporary store %s", authority);
    idmint_ns_info_init(&info, IDMINT_KIND_SNOWFLAKE);
    memcpy(info.name, SNOWFLAKE_NS, sizeof(SNOWFLAKE_NS));
    rc = idmint_ns_create(a, &info);
    if (rc != 0) {
        rc = cli_fail(rc, "bench: cannot create namespace '%s'", SNOWFLAKE_NS);
        goto out;
    }
    idmint_ns_info_init(&info, IDMINT_KIND_RANGE);
    memcpy(info.name, RANGE_NS, sizeof(RANGE_NS));
    info.block = RANGE_BLOCK;
    if (info.max_block < RANGE_BLOCK)
        info.max_block = RANGE_BLOCK;
    rc = idmint_ns_create(a, &info);
    if (rc != 0)
        rc = cli_fail(rc, "bench: cannot create namespace '%s'", RANGE_NS);
out:
    idmint_authority_close(a);
    return rc;
}

/* Remove the temporary store: the database and whatever SQLite left beside it. */
static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[4096];

    if (d != NULL) {
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            if (snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) < (int)sizeof(path))
                unlink(path);
        }
        closedir(d);
    }
    rmdir(dir);
}

static int bench_run(void)
{
    const char *tmp = getenv("TMPDIR");
    char dir[4096], authority[4200];
    int rc;

    if (tmp == NULL || tmp[0] == '\0')
        tmp = "/tmp";
    snprintf(dir, sizeof(dir), "%s/idmint-bench.XXXXXX", tmp);
    if (mkdtemp(dir) == NULL)
        return cli_error("bench: cannot make a temporary directory in %s: %s", tmp,
                         strerror(errno));
    snprintf(authority, sizeof(authority), "sqlite:%s/bench.db", dir);
    rc = create_namespaces(authority);
    if (rc == CLI_EXIT_OK)
        rc = bench_handle(authority, SNOWFLAKE_NS, "snowflake (1 thread)");
    if (rc == CLI_EXIT_OK) {
        fflush(stdout);
        rc = bench_handle(authority, RANGE_NS, "range (1 thread)");
    }
    if (rc == CLI_EXIT_OK) {
        fflush(stdout);
        rc = bench_uuid7();
    }
    remove_dir(dir);
    return cli_finish_stdout(rc);
}

int cmd_bench_run(int argc, char **argv, struct args_common *common)
{
    char **pos = malloc(((size_t)argc + 1) * sizeof(*pos));
    size_t npos;
    int rc;

    if (pos == NULL)
        return cli_error("bench: out of memory");
    rc = args_parse("bench", argc, argv, NULL, 0, common, pos, &npos);
    if (rc == CLI_EXIT_OK && !common->wants_help && npos > 0)
        rc = cli_usage("bench: unexpected argument '%s'", pos[0]);
    free(pos);
    if (rc != CLI_EXIT_OK)
        return rc;
    if (common->wants_help) {
        fputs(bench_usage, stdout);
        return cli_finish_stdout(CLI_EXIT_OK);
    }
    return bench_run();
}
