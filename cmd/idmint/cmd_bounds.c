/* SPDX-License-Identifier: Apache-2.0 */
/*
 * idmint bounds: the lowest and highest ID a time window can hold, so that
 * a query by time is a range scan on the ID (idmint_ns_bounds,
 * idmint_uuid7_bounds). Reads the namespace; never creates an authority.
 */
#include "cmd.h"
#include "ns_lookup.h"

#include "idmint.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

static const char bounds_usage[] =
    "usage: idmint bounds [--ns NS | --uuid7] --from TIME --to TIME [--json]\n"
    "                     [--authority URL]\n"
    "\n"
    "Print the lowest and highest ID of namespace NS (default \"default\", a\n"
    "snowflake namespace) whose time falls in [FROM, TO): every ID minted in\n"
    "the window lies between them, so\n"
    "  SELECT ... WHERE id BETWEEN lo AND hi\n"
    "finds the rows made then. An edge inside a time unit takes in the whole\n"
    "unit. --uuid7 gives the bounds of UUIDv7s instead (no namespace).\n"
    "TIME is a UTC date (2026-03-01), date-time (2026-03-01T12:00:00Z,\n"
    "2026-03-01T12:00:00.250Z) or Unix milliseconds.\n"
    "Output: from=ISO to=ISO lo=N hi=N, or with --json one object whose lo and\n"
    "hi are strings (64-bit IDs are not exact as JSON numbers in JavaScript).\n";

/* The bounds of the snowflake namespace @p ns; CLI_EXIT_OK with *lo, *hi. */
static int ns_window(const char *authority, const char *ns, int64_t from, int64_t to, uint64_t *lo,
                     uint64_t *hi)
{
    idmint_authority *a = NULL;
    idmint_ns_info info;
    int rc = idmint_authority_open_existing(&a, authority, 0);

    if (rc != 0)
        return cli_fail(rc, "bounds: cannot open %s",
                        authority != NULL ? authority : "the default authority");
    rc = ns_lookup(a, ns, &info);
    idmint_authority_close(a);
    if (rc != 0)
        return cli_fail(rc, "bounds: namespace '%s'", ns);
    rc = idmint_ns_bounds(&info, from, to, lo, hi);
    if (rc != 0)
        return cli_fail(rc, "bounds: namespace '%s'", ns);
    return CLI_EXIT_OK;
}

static int print_bounds(const char *from_iso, const char *to_iso, const char *lo, const char *hi,
                        int as_json)
{
    if (as_json)
        printf("{\"from\":\"%s\",\"to\":\"%s\",\"lo\":\"%s\",\"hi\":\"%s\"}\n", from_iso, to_iso,
               lo, hi);
    else
        printf("from=%s to=%s lo=%s hi=%s\n", from_iso, to_iso, lo, hi);
    return cli_finish_stdout(CLI_EXIT_OK);
}

static int bounds_run(const char *authority, const char *ns, int is_uuid7, const char *from_text,
                      const char *to_text, int as_json)
{
    char from_iso[40], to_iso[40], lo_text[40], hi_text[40];
    int64_t from, to;
    int rc;

    if (idmint_epoch_parse(from_text, &from) != 0)
        return cli_usage("bounds: --from '%s': %s", from_text, idmint_errmsg());
    if (idmint_epoch_parse(to_text, &to) != 0)
        return cli_usage("bounds: --to '%s': %s", to_text, idmint_errmsg());
    if (is_uuid7) {
        uint8_t lo[16], hi[16];

        if ((rc = idmint_uuid7_bounds(from, to, lo, hi)) != 0)
            return cli_fail(rc, "bounds");
        idmint_uuid_format(lo, lo_text);
        idmint_uuid_format(hi, hi_text);
    } else {
        uint64_t lo, hi;

        if ((rc = ns_window(authority, ns, from, to, &lo, &hi)) != CLI_EXIT_OK)
            return rc;
        snprintf(lo_text, sizeof(lo_text), "%" PRIu64, lo);
        snprintf(hi_text, sizeof(hi_text), "%" PRIu64, hi);
    }
    /* Both parsed as times the formatter takes: 1970 up to the year 9999. */
    if (idmint_format_iso8601(from, from_iso, sizeof(from_iso)) != 0 ||
        idmint_format_iso8601(to, to_iso, sizeof(to_iso)) != 0)
        return cli_fail(IDMINT_EINVAL, "bounds: the window cannot be shown");
    return print_bounds(from_iso, to_iso, lo_text, hi_text, as_json);
}

/* The flags' checks once parsed; CLI_EXIT_OK to go on. */
static int check_flags(const char *from, const char *to, const char *uuid7, const char *ns,
                       size_t npos, char **pos)
{
    if (npos > 0)
        return cli_usage("bounds: unexpected argument '%s' (see 'idmint bounds --help')", pos[0]);
    if (from == NULL || to == NULL)
        return cli_usage("bounds: --from and --to are both needed (see 'idmint bounds --help')");
    if (uuid7 != NULL && ns != NULL)
        return cli_usage("bounds: --uuid7 has no namespace; give --ns or --uuid7, not both");
    return ns != NULL ? args_ns_name("bounds", ns) : CLI_EXIT_OK;
}

int cmd_bounds_run(int argc, char **argv, struct args_common *common)
{
    char **pos = malloc(((size_t)argc + 1) * sizeof(*pos));
    const char *ns = NULL, *uuid7 = NULL, *from = NULL, *to = NULL, *json = NULL;
    struct args_opt opts[] = {{"ns", 0, 1, &ns},
                              {"uuid7", 0, 0, &uuid7},
                              {"from", 0, 1, &from},
                              {"to", 0, 1, &to},
                              {"json", 0, 0, &json}};
    size_t npos;
    int rc;

    if (pos == NULL)
        return cli_error("bounds: out of memory");
    rc = args_parse("bounds", argc, argv, opts, sizeof(opts) / sizeof(opts[0]), common, pos, &npos);
    if (rc == CLI_EXIT_OK && common->wants_help) {
        fputs(bounds_usage, stdout);
        rc = cli_finish_stdout(CLI_EXIT_OK);
    } else if (rc == CLI_EXIT_OK &&
               (rc = check_flags(from, to, uuid7, ns, npos, pos)) == CLI_EXIT_OK) {
        rc = bounds_run(args_authority(common), ns != NULL ? ns : "default", uuid7 != NULL, from,
                        to, json != NULL);
    }
    free(pos);
    return rc;
}
