/* SPDX-License-Identifier: Apache-2.0 */
/*
 * idmint trace: which recorded grant minted each ID (idmint_trace). An ID
 * no grant covers, or two grants cover, is a failed check (exit 1).
 */
#include "cmd.h"
#include "trace_out.h"

#include "idmint.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char trace_usage[] =
    "usage: idmint trace [--ns NS] [--json] [--authority URL] ID... | -\n"
    "\n"
    "Name the grant that minted each ID of namespace NS (default \"default\"): the\n"
    "worker lease or range it came from, with the host, pid, program, incarnation\n"
    "(its fingerprint), generation and token its holder was recorded with:\n"
    "  ID minted host=H pid=P program=X incarnation=FP generation=G worker=R/W ...\n"
    "  ID not_minted: not minted under any grant this authority knows\n"
    "  ID not_minted: not an ID of 'NS': its time T is before 'NS' was created (C)\n"
    "  ID not_minted: not an ID of 'NS': it lies in a grant of 'OLD', which 'NS' was\n"
    "    migrated from (every ID of 'NS' lies above those): OWNER\n"
    "  ID duplicate: OWNER | OWNER\n"
    "A worker grant could have minted the time units from the later of its take and\n"
    "the E its holder found (exclusive) to the last E stored for it; a range grant,\n"
    "its values. An ID carries no namespace: trace names a grant of NS that could\n"
    "have minted it, and cannot tell it from an ID of another namespace of the same\n"
    "layout whose holder had the same worker id at that time (or, for a range, the\n"
    "same value), unless NS was migrated from that namespace.\n"
    "With --json, one object per ID ('message' says why when not minted). '-'\n"
    "reads the IDs from stdin, one per line. Grants are kept for the provenance\n"
    "retention (30 days for worker leases, 7 for ranges, by default); an older ID\n"
    "reads as not minted.\n"
    "Exit status 1 when an ID is not minted under any grant or is a duplicate.\n";

/* The IDs of stdin, one per line, into a malloc'd array. CLI_EXIT_*. */
static int read_stdin_ids(uint64_t **out, size_t *n)
{
    char line[64];
    size_t cap = 0, len = 0;
    uint64_t *ids = NULL, *grown;

    while (fgets(line, sizeof(line), stdin) != NULL) {
        size_t k = strcspn(line, "\r\n");

        if (k == 0)
            continue;
        line[k] = '\0';
        if (len == cap) {
            cap = cap == 0 ? 1024 : cap * 2;
            if ((grown = realloc(ids, cap * sizeof(*ids))) == NULL) {
                free(ids);
                return cli_error("trace: out of memory");
            }
            ids = grown;
        }
        if (idmint_id_parse(line, &ids[len]) != 0) {
            free(ids);
            return cli_usage("trace: malformed ID '%.32s' (want a decimal in 1..2^63-1)", line);
        }
        len++;
    }
    if (ferror(stdin)) {
        free(ids);
        return cli_error("trace: reading stdin: %s", strerror(errno));
    }
    *out = ids;
    *n = len;
    return CLI_EXIT_OK;
}

static int trace_all(const char *authority, const char *ns, const uint64_t *ids, size_t n,
                     int as_json)
{
    idmint_authority *a = NULL;
    idmint_ns_info info;
    int rc, status = CLI_EXIT_OK, has_info;

    /* Tracing only reads: a wrong --authority must not leave an empty one behind. */
    rc = idmint_authority_open_existing(&a, authority, 0);
    if (rc != 0)
        return cli_fail(rc, "trace: cannot open %s",
                        authority != NULL ? authority : "the default authority");
    /* For saying why an ID is not minted; trace itself reports a missing namespace. */
    idmint_ns_info_init(&info, IDMINT_KIND_SNOWFLAKE);
    has_info = idmint_ns_get(a, ns, &info) == 0;
    for (size_t i = 0; i < n && status != CLI_EXIT_USAGE; i++) {
        idmint_grant_info *grants = NULL;
        char why[768];
        size_t found = 0;

        rc = idmint_trace(a, ns, ids[i], &grants, &found);
        if (rc == IDMINT_EINVAL) {
            status = cli_usage("trace: %s", idmint_errmsg());
            break;
        }
        if (rc != 0) {
            status = cli_fail(rc, "trace: ID %llu of '%s'", (unsigned long long)ids[i], ns);
            break;
        }
        if (found == 0 && has_info)
            trace_out_why(a, &info, ids[i], why, sizeof(why));
        trace_out_print(stdout, ids[i], grants, found, found == 0 && has_info ? why : NULL,
                        as_json);
        if (found != 1)
            status = CLI_EXIT_FAILED;
        idmint_free(grants);
    }
    idmint_authority_close(a);
    return cli_finish_stdout(status);
}

int cmd_trace_run(int argc, char **argv, struct args_common *common)
{
    char **pos = malloc(((size_t)argc + 1) * sizeof(*pos));
    const char *ns = NULL, *json = NULL;
    struct args_opt opts[] = {{"ns", 0, 1, &ns}, {"json", 0, 0, &json}};
    uint64_t *ids = NULL;
    size_t npos, n = 0;
    int rc;

    if (pos == NULL)
        return cli_error("trace: out of memory");
    rc = args_parse("trace", argc, argv, opts, 2, common, pos, &npos);
    if (rc == CLI_EXIT_OK && common->wants_help) {
        fputs(trace_usage, stdout);
        rc = cli_finish_stdout(CLI_EXIT_OK);
        goto out;
    }
    if (rc != CLI_EXIT_OK)
        goto out;
    if (ns == NULL)
        ns = "default";
    if ((rc = args_ns_name("trace", ns)) != CLI_EXIT_OK)
        goto out;
    if (npos == 0) {
        rc = cli_usage("trace: missing ID (see 'idmint trace --help')");
        goto out;
    }
    if (npos == 1 && strcmp(pos[0], "-") == 0) {
        if ((rc = read_stdin_ids(&ids, &n)) != CLI_EXIT_OK)
            goto out;
    } else {
        if ((ids = malloc(npos * sizeof(*ids))) == NULL) {
            rc = cli_error("trace: out of memory");
            goto out;
        }
        /* Syntax first: a malformed ID is a usage error and must not touch the store. */
        for (n = 0; n < npos; n++)
            if (idmint_id_parse(pos[n], &ids[n]) != 0) {
                rc = cli_usage("trace: malformed ID '%s' (want a decimal in 1..2^63-1)", pos[n]);
                goto out;
            }
    }
    rc = trace_all(args_authority(common), ns, ids, n, json != NULL);
out:
    free(ids);
    free(pos);
    return rc;
}
