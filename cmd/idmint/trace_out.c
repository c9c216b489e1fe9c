/* SPDX-License-Identifier: Apache-2.0 */
#include "trace_out.h"

#include <inttypes.h>

/* Every text field of a grant is printable ASCII without quotes or backslashes
 * (the authority records it so), so it goes into JSON as it is. */
static void print_grant_json(FILE *out, const idmint_grant_info *g)
{
    fprintf(out,
            "{\"kind\":\"%s\",\"region\":%" PRIu32 ",\"worker_id\":%" PRIu32
            ",\"generation\":\"%" PRIu64 "\",\"first\":\"%" PRIu64 "\",\"last\":\"%" PRIu64
            "\",\"incarnation\":\"%s\",\"host\":\"%s\",\"pid\":%" PRIu32
            ",\"program\":\"%s\",\"token\":\"%s\",\"granted_ms\":%" PRId64
            ",\"updated_ms\":%" PRId64 "}",
            g->kind == IDMINT_KIND_RANGE ? "range" : "snowflake", g->region, g->worker_id,
            g->generation, g->first, g->last, g->holder, g->host, g->pid, g->program, g->token,
            g->granted_ms, g->updated_ms);
}

void trace_out_print(FILE *out, uint64_t id, const idmint_grant_info *grants, size_t n, int as_json)
{
    const char *verdict = n == 0 ? "not_minted" : n == 1 ? "minted" : "duplicate";
    char owner[512];

    if (as_json) {
        fprintf(out, "{\"id\":\"%" PRIu64 "\",\"verdict\":\"%s\",\"grants\":[", id, verdict);
        for (size_t i = 0; i < n; i++) {
            if (i > 0)
                fputc(',', out);
            print_grant_json(out, idmint_grant_info_at(grants, i));
        }
        fputs("]}\n", out);
        return;
    }
    if (n == 0) {
        fprintf(out, "%" PRIu64 " not_minted: not minted under any grant this authority knows\n",
                id);
        return;
    }
    fprintf(out, "%" PRIu64 " %s%s", id, verdict, n > 1 ? ":" : "");
    for (size_t i = 0; i < n; i++) {
        idmint_grant_format(idmint_grant_info_at(grants, i), owner, sizeof(owner));
        fprintf(out, "%s %s", i > 0 ? " |" : "", owner);
    }
    fputc('\n', out);
}
