/* SPDX-License-Identifier: Apache-2.0 */
/*
 * idmint authority backup and idmint authority fence: the two halves of a
 * restore that cannot hand out anything twice (docs/operations.md). A
 * backup is marked so that it refuses to grant until it is fenced; the
 * fence moves every namespace past whatever the lost history may have
 * issued. Flags are checked in full before the store is opened.
 */
#include "cmd.h"

#include "idmint.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ID_VALUE      9223372036854775807ull
#define MAX_LEASE_SECONDS 86400u

static const char authority_usage[] =
    "usage: idmint authority backup DEST\n"
    "       idmint authority fence [--above NS=N]... [--skip NS=K]... [--max-lease SECONDS]\n"
    "                              [--force-short-lease]\n"
    "\n"
    "backup copies an SQLite authority to the new file DEST while it serves; the\n"
    "copy refuses every lease and range until it is fenced. fence makes a\n"
    "restored store safe: no worker id of any snowflake namespace mints before\n"
    "now + --max-lease (default 86400, the longest lease the authority grants;\n"
    "less than the longest lease the authority granted is refused unless\n"
    "--force-short-lease, which is audited), every range namespace\n"
    "moves above N (the highest ID in use downstream) or forward by K, and each\n"
    "range namespace must be named. Nothing moves backwards. Both are audited.\n"
    "Read N after every process of the lost history has stopped: a running one\n"
    "may still hand out up to two blocks it holds (docs/operations.md).\n"
    "Run fence after ANY restore: a file copied back, pg_restore, a point-in-time\n"
    "recovery, an etcd snapshot restore, a promoted replica; and after a store was\n"
    "deleted and created anew (or replaced) at the same place, on a host that used\n"
    "the old one: the fence binds this host's witness of the place to the new store.\n";

static int print_help(void)
{
    fputs(authority_usage, stdout);
    return cli_finish_stdout(CLI_EXIT_OK);
}

static int backup(int argc, char **argv, struct args_common *common)
{
    char **pos = malloc(((size_t)argc + 1) * sizeof(*pos));
    idmint_authority *a = NULL;
    size_t npos = 0;
    int rc;

    if (pos == NULL)
        return cli_error("authority backup: out of memory");
    rc = args_parse("authority backup", argc, argv, NULL, 0, common, pos, &npos);
    if (rc == CLI_EXIT_OK && common->wants_help)
        rc = print_help();
    else if (rc == CLI_EXIT_OK && npos != 1)
        rc = cli_usage("authority backup: want exactly one DEST (see 'idmint authority --help')");
    else if (rc == CLI_EXIT_OK) {
        if ((rc = idmint_authority_open_existing(&a, args_authority(common), 0)) != 0)
            rc = cli_fail(rc, "authority backup: cannot open %s", args_authority_name(common));
        else if ((rc = idmint_authority_backup(a, pos[0])) != 0)
            rc = cli_fail(rc, "authority backup");
        else {
            printf("backup of %s written to %s (marked: it grants nothing until 'idmint "
                   "authority fence' runs on it)\n",
                   args_authority_name(common), pos[0]);
            rc = cli_finish_stdout(CLI_EXIT_OK);
        }
    }
    idmint_authority_close(a);
    free(pos);
    return rc;
}

/*
 * "NS=N" into @p r, the name copied into @p name (64 bytes, owned by the
 * caller for as long as @p r), and *n counted up; CLI_EXIT_USAGE with a
 * message when malformed.
 */
static int parse_range_arg(const char *flag, const char *text, int is_skip, char *name,
                           idmint_fence_range *r, size_t *n)
{
    const char *eq = strchr(text, '=');
    size_t len = eq != NULL ? (size_t)(eq - text) : 0;
    char cmd[64];
    uint64_t v;
    int rc;

    snprintf(cmd, sizeof(cmd), "authority fence %s", flag);
    if (eq == NULL || len == 0 || len >= 64)
        return cli_usage("authority fence: %s '%s': want NS=N", flag, text);
    memcpy(name, text, len);
    name[len] = '\0';
    if ((rc = args_ns_name("authority fence", name)) != CLI_EXIT_OK)
        return rc;
    if ((rc = args_u64(cmd, name, eq + 1, is_skip ? 1 : 0, MAX_ID_VALUE, &v)) != CLI_EXIT_OK)
        return rc;
    r->ns = name;
    r->is_skip = is_skip;
    r->value = v;
    (*n)++;
    return CLI_EXIT_OK;
}

/* The value of option @p name at argv[*i] ("--name V" or "--name=V"), or NULL. */
static const char *option_value(int argc, char **argv, int *i, const char *name, int *rc)
{
    size_t len = strlen(name);
    const char *a = argv[*i];

    if (strncmp(a, name, len) != 0)
        return NULL;
    if (a[len] == '=')
        return a + len + 1;
    if (a[len] != '\0')
        return NULL;
    if (*i + 1 >= argc) {
        *rc = cli_usage("authority fence: option '%s' needs a value", name);
        return NULL;
    }
    return argv[++*i];
}

static int fence(int argc, char **argv, struct args_common *common)
{
    idmint_fence_range *ranges = calloc((size_t)argc + 1, sizeof(*ranges));
    char(*names)[64] = calloc((size_t)argc + 1, sizeof(*names));
    idmint_authority *a = NULL;
    uint64_t max_lease_s = MAX_LEASE_SECONDS;
    unsigned flags = 0;
    size_t n = 0;
    int i, rc = CLI_EXIT_OK;

    if (ranges == NULL || names == NULL) {
        free(ranges);
        free(names);
        return cli_error("authority fence: out of memory");
    }
    /* --above and --skip repeat, so this command reads its own flags. */
    for (i = 0; i < argc && rc == CLI_EXIT_OK; i++) {
        const char *v;

        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
            common->wants_help = 1;
        else if (strcmp(argv[i], "--force-short-lease") == 0)
            flags |= IDMINT_FENCE_FORCE_SHORT_LEASE;
        else if ((v = option_value(argc, argv, &i, "--above", &rc)) != NULL)
            rc = parse_range_arg("--above", v, 0, names[n], &ranges[n], &n);
        else if (rc == CLI_EXIT_OK && (v = option_value(argc, argv, &i, "--skip", &rc)) != NULL)
            rc = parse_range_arg("--skip", v, 1, names[n], &ranges[n], &n);
        else if (rc == CLI_EXIT_OK &&
                 (v = option_value(argc, argv, &i, "--max-lease", &rc)) != NULL)
            rc = args_u64("authority fence", "--max-lease", v, 1, MAX_LEASE_SECONDS, &max_lease_s);
        else if (rc == CLI_EXIT_OK &&
                 (v = option_value(argc, argv, &i, "--authority", &rc)) != NULL)
            common->authority = v;
        else if (rc == CLI_EXIT_OK)
            rc = cli_usage("authority fence: unexpected argument '%s' (see 'idmint authority "
                           "--help')",
                           argv[i]);
    }
    if (rc == CLI_EXIT_OK && common->wants_help)
        rc = print_help();
    else if (rc == CLI_EXIT_OK) {
        if ((rc = idmint_authority_open_existing(&a, args_authority(common), 0)) != 0)
            rc = cli_fail(rc, "authority fence: cannot open %s", args_authority_name(common));
        else if ((rc = idmint_authority_fence_v2(a, ranges, n, (uint32_t)(max_lease_s * 1000u),
                                                 flags)) != 0)
            rc = cli_fail(rc, "authority fence");
        else {
            printf("fenced %s: a new history; snowflake namespaces mint again after %" PRIu64
                   " s; %zu range namespace%s moved forward\n",
                   args_authority_name(common), max_lease_s, n, n == 1 ? "" : "s");
            rc = cli_finish_stdout(CLI_EXIT_OK);
        }
    }
    idmint_authority_close(a);
    free(ranges);
    free(names);
    return rc;
}

int cmd_authority_run(int argc, char **argv, struct args_common *common)
{
    if (argc < 1)
        return cli_usage("authority: missing subcommand: backup or fence");
    if (strcmp(argv[0], "-h") == 0 || strcmp(argv[0], "--help") == 0)
        return print_help();
    if (strcmp(argv[0], "backup") == 0)
        return backup(argc - 1, argv + 1, common);
    if (strcmp(argv[0], "fence") == 0)
        return fence(argc - 1, argv + 1, common);
    return cli_usage("authority: unknown subcommand '%s' (see 'idmint authority --help')", argv[0]);
}
