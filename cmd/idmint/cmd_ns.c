/* SPDX-License-Identifier: Apache-2.0 */
/*
 * idmint ns (create, list, show, disable, enable) and idmint workers: the
 * administrator's view of the authority. Flags are checked in full before
 * the store is opened, so bad input changes nothing.
 */
#include "cmd.h"
#include "ns_lookup.h"

#include "idmint.h"
#include "idmint_service.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A layout that runs out sooner than this after creation earns a warning. */
#define WARN_YEARS   10
#define MS_PER_YEAR  31556952000.0 /* 365.2425 days */
#define MAX_UNIT_MS  86400000u
#define MAX_ID_VALUE 9223372036854775807ull

static const char ns_usage[] =
    "usage: idmint ns create NAME --kind snowflake|range [--layout T/R/W/S] [--unit MS]\n"
    "                 [--epoch DATE] [--start N] [--max N] [--block N] [--max-block N]\n"
    "       idmint ns create NAME --from-registry\n"
    "       idmint ns migrate OLD NEW [--kind snowflake|range] [--layout T/R/W/S] [--unit MS]\n"
    "                 [--epoch DATE] [--start N] [--max N] [--block N] [--max-block N]\n"
    "       idmint ns list\n"
    "       idmint ns show NAME\n"
    "       idmint ns disable NAME\n"
    "       idmint ns enable NAME\n"
    "\n"
    "Create, inspect, disable and enable namespaces. A snowflake namespace takes\n"
    "--layout (default 41/0/10/12), --unit (ms per time unit, default 1) and\n"
    "--epoch (ISO-8601 date, UTC date-time or Unix ms; default 2026-01-01); a\n"
    "range namespace takes --start (default 1), --max, --block and --max-block.\n"
    "migrate disables OLD and creates NEW (of OLD's kind unless --kind says\n"
    "otherwise) so that every ID of NEW is greater than every ID OLD issued or\n"
    "can still issue; holders of OLD mint on until their lease or range ends.\n"
    "--from-registry copies the region registry's definition of NAME into an\n"
    "authority that claimed a region (idmint region --help).\n"
    "All commands take --authority URL.\n";

static const char workers_usage[] =
    "usage: idmint workers [--authority URL] NS\n"
    "\n"
    "One line per worker-id lease row of snowflake namespace NS: region, worker,\n"
    "holder (\"-\" when released), generation and lease end (UTC).\n";

static int print_help(const char *text)
{
    fputs(text, stdout);
    return cli_finish_stdout(CLI_EXIT_OK);
}

static void format_iso(int64_t unix_ms, char *buf, size_t size)
{
    if (idmint_format_iso8601(unix_ms, buf, size) != 0)
        snprintf(buf, size, "unix_ms=%" PRId64, unix_ms);
}

static void format_layout(const idmint_layout *l, char *buf, size_t size)
{
    snprintf(buf, size, "%u/%u/%u/%u", l->time_bits, l->region_bits, l->worker_bits,
             l->sequence_bits);
}

/*
 * Open the authority; @p is_read_only: never create one (a command that only
 * looks). A command that creates one says so (cli_note_new_authority()).
 */
static int open_authority(const char *what, const struct args_common *common, int is_read_only,
                          idmint_authority **a)
{
    const char *url = args_authority(common);
    char where[IDMINT_AUTHORITY_TEXT_MAX];
    int is_new = !is_read_only && cli_authority_is_new(url), rc;

    cli_authority_text(url, where, sizeof(where)); /* before the open: it sets the detail */
    rc =
        is_read_only ? idmint_authority_open_existing(a, url, 0) : idmint_authority_open(a, url, 0);
    if (rc != 0)
        return cli_fail(rc, "%s: cannot open %s", what, where);
    if (is_new)
        cli_note_new_authority(url);
    return CLI_EXIT_OK;
}

/* Parse the subcommand's flags and require exactly @p want positionals. */
static int parse_exact(const char *cmd, int argc, char **argv, const struct args_opt *opts,
                       size_t nopts, struct args_common *common, char **pos, size_t want,
                       const char *what)
{
    size_t npos;
    int rc = args_parse(cmd, argc, argv, opts, nopts, common, pos, &npos);

    if (rc != CLI_EXIT_OK || common->wants_help)
        return rc;
    if (npos < want)
        return cli_usage("%s: missing %s (see 'idmint ns --help')", cmd, what);
    if (npos > want)
        return cli_usage("%s: unexpected argument '%s'", cmd, pos[want]);
    return CLI_EXIT_OK;
}

/* ==== ns create ==== */

struct create_flags {
    const char *kind, *layout, *unit, *epoch, *start, *max, *block, *max_block, *from_registry;
};

static int create_snowflake_flags(const struct create_flags *f, idmint_ns_info *info)
{
    uint64_t v;
    int rc;

    if (f->start != NULL || f->max != NULL || f->block != NULL || f->max_block != NULL)
        return cli_usage("ns create: --start, --max, --block and --max-block are for "
                         "--kind range only");
    if (f->layout != NULL && (rc = idmint_layout_parse(f->layout, &info->layout)) != 0) {
        cli_fail(rc, "ns create: bad --layout '%s' (want T/R/W/S)", f->layout);
        return CLI_EXIT_USAGE;
    }
    if (f->unit != NULL) {
        if ((rc = args_u64("ns create", "--unit", f->unit, 1, MAX_UNIT_MS, &v)) != CLI_EXIT_OK)
            return rc;
        info->layout.unit_ms = (uint32_t)v;
    }
    if (f->epoch != NULL && (rc = idmint_epoch_parse(f->epoch, &info->layout.epoch_ms)) != 0) {
        cli_fail(rc, "ns create: bad --epoch '%s'", f->epoch);
        return CLI_EXIT_USAGE;
    }
    if ((rc = idmint_layout_validate(&info->layout)) != 0) {
        char text[32];

        format_layout(&info->layout, text, sizeof(text));
        cli_fail(rc, "ns create: bad layout %s", text);
        return CLI_EXIT_USAGE;
    }
    return CLI_EXIT_OK;
}

static int create_range_flags(const struct create_flags *f, idmint_ns_info *info)
{
    uint64_t v;
    int rc;

    if (f->layout != NULL || f->unit != NULL || f->epoch != NULL)
        return cli_usage("ns create: --layout, --unit and --epoch are for --kind snowflake only");
    if (f->start != NULL) {
        if ((rc = args_u64("ns create", "--start", f->start, 1, MAX_ID_VALUE, &v)) != CLI_EXIT_OK)
            return rc;
        info->next_value = v;
    }
    if (f->max != NULL) {
        if ((rc = args_u64("ns create", "--max", f->max, 1, MAX_ID_VALUE, &v)) != CLI_EXIT_OK)
            return rc;
        info->max_value = v;
    }
    if (f->block != NULL) {
        if ((rc = args_u64("ns create", "--block", f->block, 1, UINT32_MAX, &v)) != CLI_EXIT_OK)
            return rc;
        info->block = (uint32_t)v;
    }
    if (f->max_block != NULL) {
        if ((rc = args_u64("ns create", "--max-block", f->max_block, 1, UINT32_MAX, &v)) !=
            CLI_EXIT_OK)
            return rc;
        info->max_block = (uint32_t)v;
    }
    if (info->next_value > info->max_value)
        return cli_usage("ns create: --start %" PRIu64 " is past --max %" PRIu64, info->next_value,
                         info->max_value);
    if (info->block > info->max_block)
        return cli_usage("ns create: --block %" PRIu32 " is larger than --max-block %" PRIu32,
                         info->block, info->max_block);
    return CLI_EXIT_OK;
}

/* Warn (but go on) when the time bits run out within WARN_YEARS; past ends are the library's. */
static void warn_if_short(const idmint_layout *l)
{
    int64_t end_ms, now_ms = cli_now_ms();
    char iso[40];

    if (idmint_layout_end_ms(l, &end_ms) != 0 || end_ms <= now_ms)
        return;
    if ((double)(end_ms - now_ms) >= WARN_YEARS * MS_PER_YEAR)
        return;
    format_iso(end_ms, iso, sizeof(iso));
    fprintf(stderr, "idmint: warning: layout runs out on %s, within %d years\n", iso, WARN_YEARS);
}

/* ns create NAME --from-registry: the copy of the registry's definition (regions). */
static int ns_create_from_registry(const struct create_flags *f, struct args_common *common,
                                   const char *name)
{
    idmint_authority *a = NULL;
    idmint_ns_info info;
    int rc;

    if (f->kind != NULL || f->layout != NULL || f->unit != NULL || f->epoch != NULL ||
        f->start != NULL || f->max != NULL || f->block != NULL || f->max_block != NULL)
        return cli_usage("ns create: --from-registry takes no other flag: the registry's "
                         "definition is copied whole");
    if ((rc = open_authority("ns create", common, 0, &a)) != CLI_EXIT_OK)
        return rc;
    idmint_ns_info_init(&info, IDMINT_KIND_SNOWFLAKE);
    if ((rc = idmint_region_ns_definition(a, name, &info)) != 0)
        rc = cli_fail(rc, "ns create: namespace '%s' from the registry", name);
    else if ((rc = idmint_ns_create(a, &info)) != 0)
        rc = cli_fail(rc, "ns create: cannot create namespace '%s'", name);
    else {
        printf("created %s namespace '%s' from the registry\n",
               info.kind == IDMINT_KIND_SNOWFLAKE ? "snowflake" : "range", name);
        rc = cli_finish_stdout(CLI_EXIT_OK);
    }
    idmint_authority_close(a);
    return rc;
}

static int ns_create(int argc, char **argv, struct args_common *common, char **pos)
{
    struct create_flags f = {NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    struct args_opt opts[] = {
        {"kind", 0, 1, &f.kind},
        {"layout", 0, 1, &f.layout},
        {"unit", 0, 1, &f.unit},
        {"epoch", 0, 1, &f.epoch},
        {"start", 0, 1, &f.start},
        {"max", 0, 1, &f.max},
        {"block", 0, 1, &f.block},
        {"max-block", 0, 1, &f.max_block},
        {"from-registry", 0, 0, &f.from_registry},
    };
    idmint_authority *a = NULL;
    idmint_ns_info info;
    int rc;

    rc = parse_exact("ns create", argc, argv, opts, sizeof(opts) / sizeof(opts[0]), common, pos, 1,
                     "NAME");
    if (rc != CLI_EXIT_OK || common->wants_help)
        return rc;
    if ((rc = args_ns_name("ns create", pos[0])) != CLI_EXIT_OK)
        return rc;
    if (f.from_registry != NULL)
        return ns_create_from_registry(&f, common, pos[0]);
    if (f.kind == NULL)
        return cli_usage("ns create: missing --kind snowflake|range");
    if (strcmp(f.kind, "snowflake") == 0) {
        idmint_ns_info_init(&info, IDMINT_KIND_SNOWFLAKE);
        rc = create_snowflake_flags(&f, &info);
    } else if (strcmp(f.kind, "range") == 0) {
        idmint_ns_info_init(&info, IDMINT_KIND_RANGE);
        rc = create_range_flags(&f, &info);
    } else {
        return cli_usage("ns create: --kind '%s' is neither snowflake nor range", f.kind);
    }
    if (rc != CLI_EXIT_OK)
        return rc;
    memcpy(info.name, pos[0], strlen(pos[0]) + 1);
    if ((rc = open_authority("ns create", common, 0, &a)) != CLI_EXIT_OK)
        return rc;
    if (info.kind == IDMINT_KIND_SNOWFLAKE)
        warn_if_short(&info.layout);
    rc = idmint_ns_create(a, &info);
    if (rc != 0) {
        rc = cli_fail(rc, "ns create: cannot create namespace '%s'", info.name);
    } else {
        printf("created %s namespace '%s'\n",
               info.kind == IDMINT_KIND_SNOWFLAKE ? "snowflake" : "range", info.name);
        rc = cli_finish_stdout(CLI_EXIT_OK);
    }
    idmint_authority_close(a);
    return rc;
}

/* ==== ns migrate ==== */

/* What NEW looks like after a migration: its floor, and when a snowflake NEW mints from. */
static void print_migrated(const char *old, const idmint_ns_info *ns)
{
    printf("namespace '%s' disabled; created %s namespace '%s' with floor %" PRIu64 "\n", old,
           ns->kind == IDMINT_KIND_SNOWFLAKE ? "snowflake" : "range", ns->name, ns->floor);
    if (ns->kind == IDMINT_KIND_RANGE) {
        printf("first value: %" PRIu64 "\n", ns->next_value);
        return;
    }
    {
        const idmint_layout *l = &ns->layout;
        unsigned shift = (unsigned)l->region_bits + l->worker_bits + l->sequence_bits;
        int64_t from_ms = idmint__unit_start_ms(l, (ns->floor >> shift) + 1);
        char iso[40];

        format_iso(from_ms, iso, sizeof(iso));
        printf("mints from: %s%s\n", iso,
               from_ms > cli_now_ms() ? " (in the future: takes wait for it)" : "");
    }
}

static int ns_migrate(int argc, char **argv, struct args_common *common, char **pos)
{
    struct create_flags f = {NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    struct args_opt opts[] = {
        {"kind", 0, 1, &f.kind},   {"layout", 0, 1, &f.layout},       {"unit", 0, 1, &f.unit},
        {"epoch", 0, 1, &f.epoch}, {"start", 0, 1, &f.start},         {"max", 0, 1, &f.max},
        {"block", 0, 1, &f.block}, {"max-block", 0, 1, &f.max_block},
    };
    idmint_authority *a = NULL;
    idmint_ns_info old, info, created;
    int rc;

    rc = parse_exact("ns migrate", argc, argv, opts, sizeof(opts) / sizeof(opts[0]), common, pos, 2,
                     "OLD and NEW");
    if (rc != CLI_EXIT_OK || common->wants_help)
        return rc;
    if ((rc = args_ns_name("ns migrate", pos[0])) != CLI_EXIT_OK ||
        (rc = args_ns_name("ns migrate", pos[1])) != CLI_EXIT_OK)
        return rc;
    if (f.kind != NULL && strcmp(f.kind, "snowflake") != 0 && strcmp(f.kind, "range") != 0)
        return cli_usage("ns migrate: --kind '%s' is neither snowflake nor range", f.kind);
    if ((rc = open_authority("ns migrate", common, 1, &a)) != CLI_EXIT_OK)
        return rc;
    idmint_ns_info_init(&old, 0);
    if ((rc = idmint_ns_get(a, pos[0], &old)) != 0) {
        rc = cli_fail(rc, "ns migrate: namespace '%s'", pos[0]);
        goto out;
    }
    idmint_ns_info_init(&info, f.kind == NULL     ? old.kind
                               : f.kind[0] == 's' ? IDMINT_KIND_SNOWFLAKE
                                                  : IDMINT_KIND_RANGE);
    /* Without flags a range NEW starts just above the floor (the library's rule). */
    rc = info.kind == IDMINT_KIND_SNOWFLAKE ? create_snowflake_flags(&f, &info)
                                            : create_range_flags(&f, &info);
    if (rc != CLI_EXIT_OK)
        goto out;
    memcpy(info.name, pos[1], strlen(pos[1]) + 1);
    idmint_ns_info_init(&created, info.kind);
    /* --start N is honoured or refused, 1 included: idmint_ns_migrate()
     * would read a next_value of 1 as its default, "just above the floor". */
    rc = f.start != NULL ? idmint_ns_migrate_start(a, pos[0], &info, info.next_value, &created)
                         : idmint_ns_migrate(a, pos[0], &info, &created);
    if (rc != 0) {
        rc = cli_fail(rc, "ns migrate: cannot migrate '%s' to '%s'", pos[0], pos[1]);
    } else {
        print_migrated(pos[0], &created);
        rc = cli_finish_stdout(CLI_EXIT_OK);
    }
out:
    idmint_authority_close(a);
    return rc;
}

/* ==== ns list, show, disable, enable ==== */

static void print_summary(const idmint_ns_info *ns)
{
    const char *state = ns->is_disabled ? "disabled" : "enabled";

    if (ns->kind == IDMINT_KIND_SNOWFLAKE) {
        char layout[32], epoch[40];

        format_layout(&ns->layout, layout, sizeof(layout));
        format_iso(ns->layout.epoch_ms, epoch, sizeof(epoch));
        printf("%s snowflake %s layout=%s unit_ms=%" PRIu32 " epoch=%s\n", ns->name, state, layout,
               ns->layout.unit_ms, epoch);
    } else {
        printf("%s range %s next=%" PRIu64 " max=%" PRIu64 "\n", ns->name, state, ns->next_value,
               ns->max_value);
        if (ns->origin[0] != '\0')
            printf("  migrated from %s, floor %" PRIu64 "\n", ns->origin, ns->floor);
    }
}

static int ns_list(int argc, char **argv, struct args_common *common, char **pos)
{
    idmint_authority *a = NULL;
    idmint_ns_info *list = NULL;
    size_t n = 0, i;
    int rc;

    rc = parse_exact("ns list", argc, argv, NULL, 0, common, pos, 0, "");
    if (rc != CLI_EXIT_OK || common->wants_help)
        return rc;
    if ((rc = open_authority("ns list", common, 1, &a)) != CLI_EXIT_OK)
        return rc;
    rc = idmint_ns_list(a, &list, &n);
    if (rc != 0) {
        rc = cli_fail(rc, "ns list: cannot list namespaces");
    } else {
        for (i = 0; i < n; i++)
            print_summary(idmint_ns_info_at(list, i));
        rc = cli_finish_stdout(CLI_EXIT_OK);
    }
    idmint_free(list);
    idmint_authority_close(a);
    return rc;
}

/* The capacity plan of a snowflake namespace: how long, how fast, how many workers. */
static int show_snowflake(idmint_authority *a, const idmint_ns_info *ns)
{
    const idmint_layout *l = &ns->layout;
    idmint_worker_info *rows = NULL;
    int64_t end_ms, now_ms = cli_now_ms();
    uint64_t per_region = UINT64_C(1) << l->worker_bits;
    uint64_t regions = UINT64_C(1) << l->region_bits, held = 0;
    char layout[32], iso[40];
    size_t n = 0, i;
    int rc;

    format_layout(l, layout, sizeof(layout));
    printf("layout: %s\n", layout);
    printf("unit_ms: %" PRIu32 "\n", l->unit_ms);
    format_iso(l->epoch_ms, iso, sizeof(iso));
    printf("epoch: %s\n", iso);
    rc = idmint_layout_end_ms(l, &end_ms);
    if (rc != 0)
        return cli_fail(rc, "ns show: layout of '%s'", ns->name);
    format_iso(end_ms, iso, sizeof(iso));
    if (end_ms > now_ms)
        printf("time_runs_out: %s (%.1f years left)\n", iso,
               (double)(end_ms - now_ms) / MS_PER_YEAR);
    else
        printf("time_runs_out: %s (already past)\n", iso);
    if (l->sequence_bits < 54)
        printf("ids_per_second_per_worker: %" PRIu64 "\n",
               (uint64_t)((UINT64_C(1) << l->sequence_bits) * 1000u / l->unit_ms));
    else
        printf("ids_per_second_per_worker: %.6g\n",
               (double)(UINT64_C(1) << l->sequence_bits) * 1000.0 / l->unit_ms);
    rc = idmint_workers_list(a, ns->name, &rows, &n);
    if (rc != 0)
        return cli_fail(rc, "ns show: cannot list workers of '%s'", ns->name);
    for (i = 0; i < n; i++) {
        const idmint_worker_info *w = idmint_worker_info_at(rows, i);

        if (w->holder[0] != '\0' && idmint__unit_start_ms(l, w->lease_until) > now_ms)
            held++;
    }
    idmint_free(rows);
    printf("worker_ids: %" PRIu64 " per region, %" PRIu64 " region%s, %" PRIu64 " total\n",
           per_region, regions, regions == 1 ? "" : "s", per_region * regions);
    printf("workers_held: %" PRIu64 "\n", held);
    printf("workers_free: %" PRIu64 "\n", per_region * regions - held);
    return CLI_EXIT_OK;
}

static void show_range(const idmint_ns_info *ns)
{
    uint64_t left = ns->next_value <= ns->max_value ? ns->max_value - ns->next_value + 1 : 0;

    printf("next: %" PRIu64 "\n", ns->next_value);
    printf("max: %" PRIu64 "\n", ns->max_value);
    printf("values_left: %" PRIu64 "\n", left);
    printf("block: %" PRIu32 "\n", ns->block);
    printf("max_block: %" PRIu32 "\n", ns->max_block);
}

static int ns_show(int argc, char **argv, struct args_common *common, char **pos)
{
    idmint_authority *a = NULL;
    idmint_ns_info ns;
    char created[40], where[IDMINT_AUTHORITY_TEXT_MAX];
    int rc;

    rc = parse_exact("ns show", argc, argv, NULL, 0, common, pos, 1, "NAME");
    if (rc != CLI_EXIT_OK || common->wants_help)
        return rc;
    if ((rc = args_ns_name("ns show", pos[0])) != CLI_EXIT_OK)
        return rc;
    if ((rc = open_authority("ns show", common, 1, &a)) != CLI_EXIT_OK)
        return rc;
    rc = ns_lookup(a, pos[0], &ns);
    if (rc != 0) {
        rc = cli_fail(rc, "ns show: namespace '%s'", pos[0]);
        goto out;
    }
    if (ns.created_ms == 0) {
        rc = cli_error("ns show: namespace '%s' does not exist yet; the first mint creates it "
                       "with the default layout",
                       pos[0]);
        goto out;
    }
    format_iso(ns.created_ms, created, sizeof(created));
    cli_authority_text(args_authority(common), where, sizeof(where));
    printf("name: %s\n", ns.name);
    printf("authority: %s\n", where);
    printf("kind: %s\n", ns.kind == IDMINT_KIND_SNOWFLAKE ? "snowflake" : "range");
    printf("state: %s\n", ns.is_disabled ? "disabled" : "enabled");
    printf("created: %s\n", created);
    if (ns.origin[0] != '\0')
        printf("migrated_from: %s\n", ns.origin);
    if (ns.floor != 0)
        printf("floor: %" PRIu64 " (no ID at or below it is ever issued here)\n", ns.floor);
    rc = CLI_EXIT_OK;
    if (ns.kind == IDMINT_KIND_SNOWFLAKE)
        rc = show_snowflake(a, &ns);
    else
        show_range(&ns);
    rc = cli_finish_stdout(rc);
out:
    idmint_authority_close(a);
    return rc;
}

static int ns_set_disabled(const char *cmd, int disabled, int argc, char **argv,
                           struct args_common *common, char **pos)
{
    idmint_authority *a = NULL;
    int rc;

    rc = parse_exact(cmd, argc, argv, NULL, 0, common, pos, 1, "NAME");
    if (rc != CLI_EXIT_OK || common->wants_help)
        return rc;
    if ((rc = args_ns_name(cmd, pos[0])) != CLI_EXIT_OK)
        return rc;
    if ((rc = open_authority(cmd, common, 0, &a)) != CLI_EXIT_OK)
        return rc;
    rc = idmint_ns_set_disabled(a, pos[0], disabled);
    if (rc != 0) {
        rc = cli_fail(rc, "%s: namespace '%s'", cmd, pos[0]);
    } else {
        printf("namespace '%s' %s\n", pos[0], disabled ? "disabled" : "enabled");
        rc = cli_finish_stdout(CLI_EXIT_OK);
    }
    idmint_authority_close(a);
    return rc;
}

int cmd_ns_run(int argc, char **argv, struct args_common *common)
{
    char **pos;
    const char *sub;
    int rc;

    if (argc < 1)
        return cli_usage("ns: missing subcommand: create, migrate, list, show, disable or enable");
    sub = argv[0];
    if (strcmp(sub, "-h") == 0 || strcmp(sub, "--help") == 0)
        return print_help(ns_usage);
    pos = malloc((size_t)argc * sizeof(*pos));
    if (pos == NULL)
        return cli_error("ns: out of memory");
    if (strcmp(sub, "create") == 0)
        rc = ns_create(argc - 1, argv + 1, common, pos);
    else if (strcmp(sub, "migrate") == 0)
        rc = ns_migrate(argc - 1, argv + 1, common, pos);
    else if (strcmp(sub, "list") == 0)
        rc = ns_list(argc - 1, argv + 1, common, pos);
    else if (strcmp(sub, "show") == 0)
        rc = ns_show(argc - 1, argv + 1, common, pos);
    else if (strcmp(sub, "disable") == 0)
        rc = ns_set_disabled("ns disable", 1, argc - 1, argv + 1, common, pos);
    else if (strcmp(sub, "enable") == 0)
        rc = ns_set_disabled("ns enable", 0, argc - 1, argv + 1, common, pos);
    else
        rc = cli_usage("ns: unknown subcommand '%s' (see 'idmint ns --help')", sub);
    free(pos);
    if (rc == CLI_EXIT_OK && common->wants_help)
        return print_help(ns_usage);
    return rc;
}

/* ==== workers ==== */

int cmd_workers_run(int argc, char **argv, struct args_common *common)
{
    char **pos = malloc(((size_t)argc + 1) * sizeof(*pos));
    idmint_authority *a = NULL;
    idmint_worker_info *rows = NULL;
    idmint_ns_info ns;
    size_t n = 0, i;
    int rc;

    if (pos == NULL)
        return cli_error("workers: out of memory");
    rc = parse_exact("workers", argc, argv, NULL, 0, common, pos, 1, "NS");
    if (rc == CLI_EXIT_OK && common->wants_help)
        rc = print_help(workers_usage);
    else if (rc == CLI_EXIT_OK && (rc = args_ns_name("workers", pos[0])) == CLI_EXIT_OK &&
             (rc = open_authority("workers", common, 1, &a)) == CLI_EXIT_OK) {
        rc = ns_lookup(a, pos[0], &ns);
        if (rc != 0)
            rc = cli_fail(rc, "workers: namespace '%s'", pos[0]);
        else if (ns.kind != IDMINT_KIND_SNOWFLAKE)
            rc = cli_error("workers: namespace '%s' is a range namespace; it has no worker ids",
                           pos[0]);
        else if ((rc = idmint_workers_list(a, pos[0], &rows, &n)) != 0)
            rc = cli_fail(rc, "workers: cannot list workers of '%s'", pos[0]);
        else {
            for (i = 0; i < n; i++) {
                const idmint_worker_info *w = idmint_worker_info_at(rows, i);
                char iso[40];

                format_iso(idmint__unit_start_ms(&ns.layout, w->lease_until), iso, sizeof(iso));
                printf("region=%" PRIu32 " worker=%" PRIu32 " holder=%s generation=%" PRIu64
                       " lease_until=%s\n",
                       w->region, w->worker_id, w->holder[0] != '\0' ? w->holder : "-",
                       w->generation, iso);
            }
            rc = cli_finish_stdout(CLI_EXIT_OK);
        }
    }
    idmint_free(rows);
    idmint_authority_close(a);
    free(pos);
    return rc;
}
