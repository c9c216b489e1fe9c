/* SPDX-License-Identifier: Apache-2.0 */
/*
 * idmint mint and idmint uuid7: bulk output, one value per line. Every flag
 * is checked before the store is opened, so a typo never creates or leases
 * anything.
 */
#include "cmd.h"
#include "out.h"

#include "idmint.h"
#include "idmint_service.h"

#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <time.h>

/* IDs fetched per idmint_next_n call: large enough to amortise the call. */
#define MINT_CHUNK 65536u

/* Lease and renew are stored in uint32 milliseconds. */
#define MAX_SECONDS (UINT32_MAX / 1000u)

static const char mint_usage[] =
    "usage: idmint mint [-n N | --count N] [--ns NS] [--authority URL] [--region N]\n"
    "                   [--lease SECONDS] [--renew SECONDS] [--max-borrow-ms N] [--rate N]\n"
    "                   [--deadline-ms N] [--verbose]\n"
    "\n"
    "Mint N IDs (default 1, at most 100000000) from namespace NS (default\n"
    "\"default\") and print them in decimal, one per line. --lease sets the\n"
    "worker lease length (default 600 s), --renew the renewal interval (default\n"
    "a tenth of the lease, and always shorter than it), --max-borrow-ms how far\n"
    "ahead of the clock a full sequence may run (default 0), --deadline-ms how\n"
    "long a range namespace may wait for its next block (default 2000; a start\n"
    "of hundreds of processes at once on one store may need more). --rate paces the\n"
    "output to N IDs a second, in batches of N/100, each written out at once (a\n"
    "steady generator for drills; default: as fast as possible). --verbose names\n"
    "the authority (secrets masked) and the lease or range taken on stderr, with\n"
    "the holder as 'idmint trace' names its grants, in one line:\n"
    "  mint: authority=URL namespace=NS kind=snowflake pid=P incarnation=FP\n"
    "        worker=R/W generation=G lease_end=TIME\n"
    "  mint: authority=URL namespace=NS kind=range pid=P incarnation=FP block=N\n"
    "A command that creates the authority says so on stderr first.\n";

static const char uuid7_usage[] = "usage: idmint uuid7 [-n N | --count N]\n"
                                  "\n"
                                  "Print N UUIDv7s (default 1, at most 100000000), one per line.\n";

static int print_help(const char *text)
{
    fputs(text, stdout);
    return cli_finish_stdout(CLI_EXIT_OK);
}

#define MAX_RATE 100000000u

struct mint_args {
    uint64_t count;
    uint64_t rate; /* IDs per second; 0: unpaced */
    const char *ns;
    idmint_options opts;
    int is_verbose; /* --verbose: name the lease or range supply on stderr */
};

static int mint_parse(int argc, char **argv, struct args_common *common, struct mint_args *ma,
                      char **pos)
{
    const char *count_text = NULL, *region_text = NULL, *lease_text = NULL, *renew_text = NULL;
    const char *borrow_text = NULL, *rate_text = NULL, *verbose = NULL, *deadline_text = NULL;
    struct args_opt opts[] = {
        {"verbose", 0, 0, &verbose},           {"rate", 0, 1, &rate_text},
        {"count", 'n', 1, &count_text},        {"ns", 0, 1, &ma->ns},
        {"region", 0, 1, &region_text},        {"lease", 0, 1, &lease_text},
        {"renew", 0, 1, &renew_text},          {"max-borrow-ms", 0, 1, &borrow_text},
        {"deadline-ms", 0, 1, &deadline_text},
    };
    size_t npos;
    uint64_t v;
    int rc;

    rc = args_parse("mint", argc, argv, opts, sizeof(opts) / sizeof(opts[0]), common, pos, &npos);
    if (rc != CLI_EXIT_OK || common->wants_help)
        return rc;
    if (npos > 0)
        return cli_usage("mint: unexpected argument '%s'", pos[0]);
    ma->is_verbose = verbose != NULL;
    ma->count = 1;
    if (count_text != NULL &&
        (rc = args_u64("mint", "-n", count_text, 1, CLI_MAX_COUNT, &ma->count)) != CLI_EXIT_OK)
        return rc;
    if (ma->ns == NULL)
        ma->ns = "default";
    if ((rc = args_ns_name("mint", ma->ns)) != CLI_EXIT_OK)
        return rc;
    idmint_options_init(&ma->opts);
    if (region_text != NULL) {
        if ((rc = args_u64("mint", "--region", region_text, 0, 65535, &v)) != CLI_EXIT_OK)
            return rc;
        ma->opts.region = (uint32_t)v;
    }
    if (lease_text != NULL) {
        if ((rc = args_u64("mint", "--lease", lease_text, 1, MAX_SECONDS, &v)) != CLI_EXIT_OK)
            return rc;
        ma->opts.lease_ms = (uint32_t)(v * 1000u);
        ma->opts.renew_ms = ma->opts.lease_ms / 10u;
    }
    if (renew_text != NULL) {
        if ((rc = args_u64("mint", "--renew", renew_text, 1, MAX_SECONDS, &v)) != CLI_EXIT_OK)
            return rc;
        ma->opts.renew_ms = (uint32_t)(v * 1000u);
    }
    if (ma->opts.renew_ms >= ma->opts.lease_ms)
        return cli_usage("mint: --renew (%u s) must be shorter than the lease (%u s)",
                         ma->opts.renew_ms / 1000u, ma->opts.lease_ms / 1000u);
    if (rate_text != NULL &&
        (rc = args_u64("mint", "--rate", rate_text, 1, MAX_RATE, &ma->rate)) != CLI_EXIT_OK)
        return rc;
    if (borrow_text != NULL) {
        if ((rc = args_u64("mint", "--max-borrow-ms", borrow_text, 0, UINT32_MAX, &v)) !=
            CLI_EXIT_OK)
            return rc;
        ma->opts.max_borrow_ms = (uint32_t)v;
    }
    if (deadline_text != NULL) {
        if ((rc = args_u64("mint", "--deadline-ms", deadline_text, 1, UINT32_MAX, &v)) !=
            CLI_EXIT_OK)
            return rc;
        ma->opts.deadline_ms = (uint32_t)v;
    }
    return CLI_EXIT_OK;
}

static double mono_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* With --rate: sleep until @p done IDs are due since @p start. */
static void pace(const struct mint_args *ma, double start, uint64_t done)
{
    double wait = start + (double)done / (double)ma->rate - mono_s();

    if (wait > 0) {
        struct timespec ts = {(time_t)wait, (long)((wait - (double)(time_t)wait) * 1e9)};

        nanosleep(&ts, NULL);
    }
}

/*
 * Name what @p m mints under on stderr, one line of key=value words (tests
 * split it so), the holder as idmint trace will name it: "mint:
 * authority=URL namespace=NS kind=snowflake pid=P incarnation=FP worker=R/W
 * generation=G lease_end=TIME", or for a range "kind=range ... block=N".
 */
static void print_holder(idmint *m, const char *authority, const char *ns)
{
    char text[IDMINT_AUTHORITY_TEXT_MAX], end[40];
    idmint_handle_info info;
    int64_t end_ms;

    idmint_handle_info_init_v2(&info);
    if (idmint_info(m, &info) != 0)
        return;
    cli_authority_text(authority, text, sizeof(text));
    fprintf(stderr, "mint: authority=%s namespace=%s kind=%s pid=%ld incarnation=%.8s", text, ns,
            info.is_range ? "range" : "snowflake", (long)getpid(), info.incarnation);
    if (info.is_range) {
        fprintf(stderr, " block=%llu\n", (unsigned long long)info.range_block);
        return;
    }
    /* lease_until is in the layout's time units from its epoch. */
    end_ms = idmint__unit_start_ms(&info.layout, info.lease_until);
    if (end_ms == INT64_MAX || idmint_format_iso8601(end_ms, end, sizeof(end)) != 0)
        snprintf(end, sizeof(end), "units:%llu", (unsigned long long)info.lease_until);
    fprintf(stderr, " worker=%u/%u generation=%llu lease_end=%s\n", (unsigned)info.region,
            (unsigned)info.worker_id, (unsigned long long)info.generation, end);
}

/* Mint and print; the handle is always closed so the lease is released. */
static int mint_run(const char *authority, const struct mint_args *ma)
{
    size_t chunk = ma->count < MINT_CHUNK ? (size_t)ma->count : MINT_CHUNK;
    size_t paced = ma->rate / 100 > 0 ? (size_t)(ma->rate / 100) : 1;
    double start;
    uint64_t *ids = malloc(chunk * sizeof(*ids));
    struct out_buf *out = malloc(sizeof(*out));
    uint64_t left = ma->count;
    idmint *m = NULL;
    int status = CLI_EXIT_OK, rc, is_new;
    char where[IDMINT_AUTHORITY_TEXT_MAX];

    if (ids == NULL || out == NULL) {
        free(ids);
        free(out);
        return cli_error("mint: out of memory");
    }
    out_init(out);
    is_new = cli_authority_is_new(authority);
    cli_authority_text(authority, where, sizeof(where)); /* before the open: it sets the detail */
    rc = idmint_open(&m, authority, ma->ns, &ma->opts);
    if (rc != 0) {
        status = cli_fail(rc, "mint: cannot open namespace '%s' at %s", ma->ns, where);
        goto done;
    }
    if (is_new)
        cli_note_new_authority(authority);
    if (ma->is_verbose)
        print_holder(m, authority, ma->ns);
    if (ma->rate > 0 && paced < chunk)
        chunk = paced;
    start = mono_s();
    while (left > 0) {
        size_t n = left < chunk ? (size_t)left : chunk, i;

        rc = idmint_next_n(m, ids, n);
        if (rc != 0) {
            status = cli_fail(rc, "mint: minting from '%s' failed after %llu IDs", ma->ns,
                              (unsigned long long)(ma->count - left));
            break;
        }
        for (i = 0; i < n; i++)
            if (out_u64_line(out, ids[i]) != 0)
                break;
        if (out->write_err != 0)
            break;
        left -= n;
        if (ma->rate > 0) {
            if (out_flush(out) != 0)
                break;
            pace(ma, start, ma->count - left);
        }
    }
    status = out_finish(out, status);
done:
    idmint_close(m);
    free(ids);
    free(out);
    return status;
}

int cmd_mint_run(int argc, char **argv, struct args_common *common)
{
    char **pos = malloc(((size_t)argc + 1) * sizeof(*pos));
    struct mint_args ma = {0, 0, NULL, {0}, 0};
    int rc;

    if (pos == NULL)
        return cli_error("mint: out of memory");
    rc = mint_parse(argc, argv, common, &ma, pos);
    free(pos);
    if (rc != CLI_EXIT_OK)
        return rc;
    if (common->wants_help)
        return print_help(mint_usage);
    return mint_run(args_authority(common), &ma);
}

#define UUID_CHUNK 1024 /* UUIDs per idmint_uuid7_n call */

int cmd_uuid7_run(int argc, char **argv, struct args_common *common)
{
    char **pos = malloc(((size_t)argc + 1) * sizeof(*pos));
    const char *count_text = NULL;
    struct args_opt opts[] = {{"count", 'n', 1, &count_text}};
    struct out_buf *out;
    uint64_t count = 1, i;
    size_t npos;
    int rc, status = CLI_EXIT_OK, write_failed = 0;

    if (pos == NULL)
        return cli_error("uuid7: out of memory");
    rc = args_parse("uuid7", argc, argv, opts, 1, common, pos, &npos);
    if (rc == CLI_EXIT_OK && !common->wants_help && npos > 0)
        rc = cli_usage("uuid7: unexpected argument '%s'", pos[0]);
    free(pos);
    if (rc != CLI_EXIT_OK)
        return rc;
    if (common->wants_help)
        return print_help(uuid7_usage);
    if (count_text != NULL &&
        (rc = args_u64("uuid7", "-n", count_text, 1, CLI_MAX_COUNT, &count)) != CLI_EXIT_OK)
        return rc;
    out = malloc(sizeof(*out));
    if (out == NULL)
        return cli_error("uuid7: out of memory");
    out_init(out);
    /* A failed write ends the loop; out_finish reports it. */
    for (i = 0; i < count && status == CLI_EXIT_OK && !write_failed;) {
        uint8_t u[UUID_CHUNK][16];
        size_t n = count - i < UUID_CHUNK ? (size_t)(count - i) : UUID_CHUNK;

        rc = idmint_uuid7_n(u, n);
        if (rc != 0) {
            status = cli_fail(rc, "uuid7: generating UUIDv7 failed");
            break;
        }
        for (size_t k = 0; k < n; k++) {
            char text[37];

            idmint_uuid_format(u[k], text);
            text[36] = '\n';
            if (out_bytes(out, text, sizeof(text)) != 0) {
                write_failed = 1;
                break;
            }
        }
        i += n;
    }
    status = out_finish(out, status);
    free(out);
    return status;
}
