/* SPDX-License-Identifier: Apache-2.0 */
/*
 * idmint: the command-line tool (docs/man/idmint.1). Dispatches to one
 * cmd_*.c per subcommand; uses only the public header idmint.h.
 */
#include "cmd.h"

#include "idmint.h"

#include <stdio.h>
#include <string.h>

struct command {
    const char *name;
    int (*run)(int argc, char **argv, struct args_common *common);
};

static const struct command commands[] = {
    {"mint", cmd_mint_run},     {"uuid7", cmd_uuid7_run},         {"decode", cmd_decode_run},
    {"ns", cmd_ns_run},         {"workers", cmd_workers_run},     {"verify", cmd_verify_run},
    {"bench", cmd_bench_run},   {"authority", cmd_authority_run}, {"trace", cmd_trace_run},
    {"bounds", cmd_bounds_run}, {"region", cmd_region_run},
};

static const char usage_text[] =
    "usage: idmint [--authority URL] COMMAND [ARGS]\n"
    "       idmint --version | --help\n"
    "\n"
    "  mint [-n N | --count N] [--ns NS] [--region N] [--lease SECONDS]\n"
    "       [--renew SECONDS] [--max-borrow-ms N] [--rate N] [--deadline-ms N]\n"
    "       [--verbose]\n"
    "                                           mint IDs, one per line\n"
    "  uuid7 [-n N | --count N]                 UUIDv7s, one per line\n"
    "  decode [--ns NS] [--json] ID...          take snowflake IDs apart\n"
    "  bounds [--ns NS | --uuid7] --from TIME --to TIME [--json]\n"
    "                                           the lowest and highest ID of a window\n"
    "  ns create NAME --kind snowflake|range [--layout T/R/W/S] [--unit MS]\n"
    "            [--epoch DATE] [--start N] [--max N] [--block N] [--max-block N]\n"
    "  ns create NAME --from-registry           copy the region registry's definition\n"
    "  ns migrate OLD NEW [ns create's flags]   NEW above every ID of OLD\n"
    "  ns list | show NAME | disable NAME | enable NAME\n"
    "  authority backup DEST                    a marked online copy (SQLite)\n"
    "  authority fence [--above NS=N]... [--skip NS=K]... [--max-lease SECONDS]\n"
    "                                           make a restored store safe\n"
    "  region claim --registry URL --region N | release | show\n"
    "                                           bind this authority to a region\n"
    "  workers NS                               the worker-id leases of NS\n"
    "  verify [--ns NS [--json]]                IDs on stdin: count, duplicates, order;\n"
    "                                           with --ns each duplicate's two owners\n"
    "  trace [--ns NS] [--json] ID... | -       which grant minted each ID\n"
    "  bench                                    minting speed of this machine\n"
    "\n"
    "--authority URL works with every command; default $IDMINT_AUTHORITY, else\n"
    "one fixed file for every user of the machine, " IDMINT_DEFAULT_AUTHORITY ".\n"
    "Commands that only read never create an authority; one that creates it\n"
    "says so on stderr, naming the path. 'ns show' and 'mint --verbose' name the\n"
    "authority in use. 'idmint COMMAND --help' describes one command.\n"
    "Exit status: 0 success, 1 a failed operation or check, 2 bad usage.\n";

int main(int argc, char **argv)
{
    struct args_common common = {NULL, 0};
    int i = 1;
    size_t c;

    /* A leading --authority applies to whichever command follows. */
    while (i < argc && strncmp(argv[i], "--authority", 11) == 0) {
        if (argv[i][11] == '=') {
            common.authority = argv[i] + 12;
            i++;
        } else if (argv[i][11] == '\0' && i + 1 < argc) {
            common.authority = argv[i + 1];
            i += 2;
        } else if (argv[i][11] == '\0') {
            return cli_usage("option '--authority' needs a value");
        } else {
            break;
        }
    }
    if (i >= argc)
        return cli_usage("missing command (see 'idmint --help')");
    if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0 ||
        strcmp(argv[i], "help") == 0) {
        fputs(usage_text, stdout);
        return cli_finish_stdout(CLI_EXIT_OK);
    }
    if (strcmp(argv[i], "--version") == 0) {
        unsigned v = idmint_version();

        printf("idmint %u.%u.%u\n", (v >> 16) & 0xffu, (v >> 8) & 0xffu, v & 0xffu);
        return cli_finish_stdout(CLI_EXIT_OK);
    }
    for (c = 0; c < sizeof(commands) / sizeof(commands[0]); c++)
        if (strcmp(argv[i], commands[c].name) == 0)
            return commands[c].run(argc - i - 1, argv + i + 1, &common);
    if (argv[i][0] == '-')
        return cli_usage("unknown option '%s' (see 'idmint --help')", argv[i]);
    return cli_usage("unknown command '%s' (see 'idmint --help')", argv[i]);
}
