/* SPDX-License-Identifier: Apache-2.0 */
/*
 * idmint decode: take snowflake IDs apart by their namespace's layout. All
 * IDs are checked before anything is printed, so output is all or nothing.
 */
#include "cmd.h"
#include "ns_lookup.h"

#include "idmint.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

static const char decode_usage[] =
    "usage: idmint decode [--ns NS] [--json] [--authority URL] ID...\n"
    "\n"
    "Print each snowflake ID of namespace NS (default \"default\") as\n"
    "  ID time=YYYY-MM-DDTHH:MM:SS.mmmZ unix_ms=N region=N worker=N sequence=N\n"
    "or, with --json, as one JSON object per line. Times are UTC.\n";

static void print_decoded(const char *id_text, const idmint_decoded *d, const char *iso,
                          int as_json)
{
    if (as_json)
        printf("{\"id\":\"%s\",\"time\":\"%s\",\"unix_ms\":%" PRId64 ",\"region\":%" PRIu32
               ",\"worker\":%" PRIu32 ",\"sequence\":%" PRIu64 "}\n",
               id_text, iso, d->unix_ms, d->region, d->worker, d->sequence);
    else
        printf("%s time=%s unix_ms=%" PRId64 " region=%" PRIu32 " worker=%" PRIu32
               " sequence=%" PRIu64 "\n",
               id_text, iso, d->unix_ms, d->region, d->worker, d->sequence);
}

static int decode_all(const char *authority, const char *ns, char **ids_text, size_t n, int as_json)
{
    idmint_authority *a = NULL;
    idmint_ns_info info;
    idmint_decoded *dec;
    uint64_t *ids;
    size_t i;
    int rc, status = CLI_EXIT_OK;

    ids = malloc(n * sizeof(*ids));
    dec = malloc(n * sizeof(*dec));
    if (ids == NULL || dec == NULL) {
        free(ids);
        free(dec);
        return cli_error("decode: out of memory");
    }
    /* Syntax first: a malformed ID is a usage error and must not touch the store. */
    for (i = 0; i < n; i++) {
        rc = idmint_id_parse(ids_text[i], &ids[i]);
        if (rc != 0) {
            status =
                cli_usage("decode: malformed ID '%s' (want a decimal in 1..2^63-1)", ids_text[i]);
            goto out;
        }
    }
    /* Decoding only reads: a wrong --authority must not leave a new, empty authority behind. */
    rc = idmint_authority_open_existing(&a, authority, 0);
    if (rc != 0) {
        status = cli_fail(rc, "decode: cannot open %s",
                          authority != NULL ? authority : "the default authority");
        goto out;
    }
    rc = ns_lookup(a, ns, &info);
    if (rc != 0) {
        status = cli_fail(rc, "decode: namespace '%s'", ns);
        goto out;
    }
    if (info.kind != IDMINT_KIND_SNOWFLAKE) {
        status = cli_error("decode: namespace '%s' is a range namespace; its IDs carry no "
                           "time, region or worker",
                           ns);
        goto out;
    }
    for (i = 0; i < n; i++) {
        if (info.floor != 0 && ids[i] <= info.floor)
            continue; /* reported below */
        rc = idmint_decode(&info.layout, ids[i], &dec[i]);
        if (rc != 0) {
            status = cli_usage("decode: malformed ID '%s': not a valid ID for the layout of "
                               "'%s'",
                               ids_text[i], ns);
            goto out;
        }
    }
    for (i = 0; i < n; i++) {
        char iso[40];

        /* An ID of the namespace this one was migrated from decodes to a
         * wrong date under this layout: say what it is instead. */
        if (info.floor != 0 && ids[i] <= info.floor) {
            status = cli_error("decode: ID %s is at or below the floor %llu of '%s': it is not "
                               "one of its IDs%s%s%s",
                               ids_text[i], (unsigned long long)info.floor, ns,
                               info.origin[0] != '\0' ? " (decode it with --ns " : "", info.origin,
                               info.origin[0] != '\0' ? ")" : "");
            continue;
        }
        rc = idmint_format_iso8601(dec[i].unix_ms, iso, sizeof(iso));
        if (rc != 0) {
            status = cli_fail(rc, "decode: time of ID '%s' cannot be shown", ids_text[i]);
            break;
        }
        print_decoded(ids_text[i], &dec[i], iso, as_json);
    }
    status = cli_finish_stdout(status);
out:
    idmint_authority_close(a);
    free(ids);
    free(dec);
    return status;
}

int cmd_decode_run(int argc, char **argv, struct args_common *common)
{
    char **pos = malloc(((size_t)argc + 1) * sizeof(*pos));
    const char *ns = NULL, *json = NULL;
    struct args_opt opts[] = {{"ns", 0, 1, &ns}, {"json", 0, 0, &json}};
    size_t npos;
    int rc;

    if (pos == NULL)
        return cli_error("decode: out of memory");
    rc = args_parse("decode", argc, argv, opts, 2, common, pos, &npos);
    if (rc == CLI_EXIT_OK && common->wants_help) {
        fputs(decode_usage, stdout);
        rc = cli_finish_stdout(CLI_EXIT_OK);
    } else if (rc == CLI_EXIT_OK) {
        if (ns == NULL)
            ns = "default";
        if (npos == 0)
            rc = cli_usage("decode: missing ID (see 'idmint decode --help')");
        else if ((rc = args_ns_name("decode", ns)) == CLI_EXIT_OK)
            rc = decode_all(args_authority(common), ns, pos, npos, json != NULL);
    }
    free(pos);
    return rc;
}
