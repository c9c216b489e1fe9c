/* SPDX-License-Identifier: Apache-2.0 */
/*
 * idmint region claim, release and show: the regional set-up of
 * docs/multi-node.md, "Regions". The authority is --authority (its own
 * store, never an http:// daemon); the registry is --registry.
 */
#include "cmd.h"

#include "idmint.h"
#include "idmint_service.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char region_usage[] =
    "usage: idmint [--authority URL] region claim --registry URL --region N\n"
    "       idmint [--authority URL] region release\n"
    "       idmint [--authority URL] region show\n"
    "       idmint region show --registry URL --region N\n"
    "\n"
    "claim    claim region N in the registry for this authority, which from\n"
    "         then on grants leases of region N only, after the registry's\n"
    "         floor for it, and namespaces with region bits only as the\n"
    "         registry defines them. Refused while another authority holds N.\n"
    "release  stop granting for good (namespaces with region bits are\n"
    "         disabled, every lease ends at its E) and hand region N back to\n"
    "         the registry with the highest E as its floor. Audited.\n"
    "show     this authority's claim; with --registry and --region, the\n"
    "         registry's record of that region.\n"
    "Both claim and release may be run again after a failure to finish.\n";

static int print_help(void)
{
    fputs(region_usage, stdout);
    return cli_finish_stdout(CLI_EXIT_OK);
}

static void print_record(const idmint_region_record *r)
{
    printf("region=%" PRIu32 " state=%s holder=%s where=%s since_ms=%" PRId64 " floor_ms=%" PRId64
           "%s%s\n",
           r->region, idmint__region_state_name(r->state), r->holder[0] != '\0' ? r->holder : "-",
           r->where[0] != '\0' ? r->where : "-", r->since_ms, r->floor_ms,
           r->registry[0] != '\0' ? " registry=" : "", r->registry);
}

/* Parse the subcommand's flags into *registry and *region (UINT32_MAX: none). */
static int parse(const char *cmd, int argc, char **argv, struct args_common *common,
                 const char **registry, uint32_t *region)
{
    const char *region_text = NULL;
    const struct args_opt opts[] = {{"registry", 0, 1, registry}, {"region", 0, 1, &region_text}};
    char **pos = malloc(((size_t)argc + 1) * sizeof(*pos));
    size_t npos = 0;
    uint64_t v = 0;
    int rc;

    if (pos == NULL)
        return cli_error("%s: out of memory", cmd);
    *region = UINT32_MAX;
    rc = args_parse(cmd, argc, argv, opts, 2, common, pos, &npos);
    if (rc == CLI_EXIT_OK && npos != 0)
        rc = cli_usage("%s: unexpected argument '%s' (see 'idmint region --help')", cmd, pos[0]);
    if (rc == CLI_EXIT_OK && region_text != NULL &&
        (rc = args_u64(cmd, "--region", region_text, 0, 65535, &v)) == CLI_EXIT_OK)
        *region = (uint32_t)v;
    free(pos);
    return rc;
}

/* After the act @p rc of @p cmd on @p a: its claim as it now stands, or the failure. */
static int report_own(const char *cmd, idmint_authority *a, int rc)
{
    idmint_region_record r;

    if (rc != 0 || (rc = idmint_region_get(a, &r)) != 0)
        return cli_fail(rc, "%s", cmd);
    print_record(&r);
    return cli_finish_stdout(CLI_EXIT_OK);
}

/* A claim may be the first act on a new authority; the others need one that exists. */
static int open_own(const char *cmd, struct args_common *common, idmint_authority **a)
{
    int is_new = strcmp(cmd, "region claim") == 0 && cli_authority_is_new(args_authority(common));
    int rc = strcmp(cmd, "region claim") == 0
                 ? idmint_authority_open(a, args_authority(common), 0)
                 : idmint_authority_open_existing(a, args_authority(common), 0);

    if (rc == 0 && is_new)
        cli_note_new_authority(args_authority(common));

    return rc != 0 ? cli_fail(rc, "%s: cannot open %s", cmd, args_authority_name(common))
                   : CLI_EXIT_OK;
}

static int claim(int argc, char **argv, struct args_common *common)
{
    const char *registry = NULL;
    idmint_authority *a = NULL;
    uint32_t region;
    int rc = parse("region claim", argc, argv, common, &registry, &region);

    if (rc != CLI_EXIT_OK || common->wants_help)
        return rc != CLI_EXIT_OK ? rc : print_help();
    if (registry == NULL || region == UINT32_MAX)
        return cli_usage("region claim: --registry and --region are both needed");
    if ((rc = open_own("region claim", common, &a)) != CLI_EXIT_OK)
        return rc;
    rc = report_own("region claim", a, idmint_region_claim(a, registry, region));
    idmint_authority_close(a);
    return rc;
}

static int release(int argc, char **argv, struct args_common *common)
{
    const char *registry = NULL;
    idmint_authority *a = NULL;
    uint32_t region;
    int rc = parse("region release", argc, argv, common, &registry, &region);

    if (rc != CLI_EXIT_OK || common->wants_help)
        return rc != CLI_EXIT_OK ? rc : print_help();
    if (registry != NULL || region != UINT32_MAX)
        return cli_usage("region release: takes no --registry or --region: the claim names them");
    if ((rc = open_own("region release", common, &a)) != CLI_EXIT_OK)
        return rc;
    rc = report_own("region release", a, idmint_region_release(a));
    idmint_authority_close(a);
    return rc;
}

static int show(int argc, char **argv, struct args_common *common)
{
    const char *registry = NULL;
    idmint_authority *a = NULL;
    idmint_region_record r;
    uint32_t region;
    int rc = parse("region show", argc, argv, common, &registry, &region);

    if (rc != CLI_EXIT_OK || common->wants_help)
        return rc != CLI_EXIT_OK ? rc : print_help();
    if ((registry == NULL) != (region == UINT32_MAX))
        return cli_usage("region show: give --registry and --region together, or neither");
    if (registry != NULL) {
        if ((rc = idmint_registry_get(registry, region, &r)) != 0)
            return cli_fail(rc, "region show: region %" PRIu32 " in %s", region, registry);
        print_record(&r);
        return cli_finish_stdout(CLI_EXIT_OK);
    }
    if ((rc = open_own("region show", common, &a)) != CLI_EXIT_OK)
        return rc;
    rc = report_own("region show", a, 0);
    idmint_authority_close(a);
    return rc;
}

int cmd_region_run(int argc, char **argv, struct args_common *common)
{
    if (argc < 1)
        return cli_usage("region: missing subcommand: claim, release or show");
    if (strcmp(argv[0], "-h") == 0 || strcmp(argv[0], "--help") == 0)
        return print_help();
    if (strcmp(argv[0], "claim") == 0)
        return claim(argc - 1, argv + 1, common);
    if (strcmp(argv[0], "release") == 0)
        return release(argc - 1, argv + 1, common);
    if (strcmp(argv[0], "show") == 0)
        return show(argc - 1, argv + 1, common);
    return cli_usage("region: unknown subcommand '%s' (see 'idmint region --help')", argv[0]);
}
