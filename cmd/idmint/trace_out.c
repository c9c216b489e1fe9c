/* SPDX-License-Identifier: Apache-2.0 */
#include "trace_out.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define ORIGIN_DEPTH_MAX 16 /* migrations followed back, as the library does */

/* Every text field of a grant is printable ASCII without quotes or backslashes
 * (the authority records it so), so it goes into JSON as it is. */
static void print_grant_json(FILE *out, const idmint_grant_info *g, const char *authority)
{
    const unsigned char *p;

    fprintf(out,
            "{\"kind\":\"%s\",\"region\":%" PRIu32 ",\"worker_id\":%" PRIu32
            ",\"generation\":\"%" PRIu64 "\",\"first\":\"%" PRIu64 "\",\"last\":\"%" PRIu64
            "\",\"incarnation\":\"%s\",\"host\":\"%s\",\"pid\":%" PRIu32
            ",\"program\":\"%s\",\"token\":\"%s\",\"granted_ms\":%" PRId64
            ",\"updated_ms\":%" PRId64,
            g->kind == IDMINT_KIND_RANGE ? "range" : "snowflake", g->region, g->worker_id,
            g->generation, g->first, g->last, g->holder, g->host, g->pid, g->program, g->token,
            g->granted_ms, g->updated_ms);
    if (authority != NULL) {
        /* A path may hold anything: escape what JSON must. */
        fputs(",\"authority\":\"", out);
        for (p = (const unsigned char *)authority; *p != '\0'; p++) {
            if (*p == '"' || *p == '\\')
                fprintf(out, "\\%c", *p);
            else if (*p < 0x20)
                fprintf(out, "\\u%04x", *p);
            else
                fputc(*p, out);
        }
        fputc('"', out);
    }
    fputc('}', out);
}

void trace_out_print(FILE *out, uint64_t id, const idmint_grant_info *grants, size_t n,
                     const char *why, int as_json)
{
    const char *verdict = n == 0 ? "not_minted" : n == 1 ? "minted" : "duplicate";
    char owner[512];

    if (why == NULL)
        why = TRACE_OUT_NO_GRANT;
    if (as_json) {
        fprintf(out, "{\"id\":\"%" PRIu64 "\",\"verdict\":\"%s\",", id, verdict);
        if (n == 0)
            fprintf(out, "\"message\":\"%s\",", why);
        fputs("\"grants\":[", out);
        for (size_t i = 0; i < n; i++) {
            if (i > 0)
                fputc(',', out);
            print_grant_json(out, idmint_grant_info_at(grants, i), NULL);
        }
        fputs("]}\n", out);
        return;
    }
    if (n == 0) {
        fprintf(out, "%" PRIu64 " not_minted: %s\n", id, why);
        return;
    }
    fprintf(out, "%" PRIu64 " %s%s", id, verdict, n > 1 ? ":" : "");
    for (size_t i = 0; i < n; i++) {
        idmint_grant_format(idmint_grant_info_at(grants, i), owner, sizeof(owner));
        fprintf(out, "%s %s", i > 0 ? " |" : "", owner);
    }
    fputc('\n', out);
}

void trace_out_print_sources(FILE *out, uint64_t id, const struct trace_out_source *src,
                             size_t nsrc, int as_json)
{
    size_t total = 0, k, i, printed = 0;
    char owner[512];

    for (k = 0; k < nsrc; k++)
        total += src[k].n;
    if (total == 0) {
        trace_out_print(out, id, NULL, 0, NULL, as_json);
        return;
    }
    if (as_json)
        fprintf(out, "{\"id\":\"%" PRIu64 "\",\"verdict\":\"%s\",\"grants\":[", id,
                total == 1 ? "minted" : "duplicate");
    else
        fprintf(out, "%" PRIu64 " %s%s", id, total == 1 ? "minted" : "duplicate",
                total > 1 ? ":" : "");
    for (k = 0; k < nsrc; k++)
        for (i = 0; i < src[k].n; i++, printed++) {
            const idmint_grant_info *g = idmint_grant_info_at(src[k].grants, i);

            if (as_json) {
                if (printed > 0)
                    fputc(',', out);
                print_grant_json(out, g, src[k].authority);
            } else {
                idmint_grant_format(g, owner, sizeof(owner));
                fprintf(out, "%s %s at %s", printed > 0 ? " |" : "", owner, src[k].authority);
            }
        }
    fputs(as_json ? "]}\n" : "\n", out);
}

/* The first grant of a namespace @p ns was migrated from that covers @p id, formatted. */
static int older_owner(idmint_authority *a, const idmint_ns_info *ns, uint64_t id, char *old_name,
                       size_t old_size, char *owner, size_t owner_size)
{
    idmint_ns_info old;
    char name[sizeof(ns->origin)];

    memcpy(name, ns->origin, sizeof(name));
    for (int depth = 0; depth < ORIGIN_DEPTH_MAX && name[0] != '\0'; depth++) {
        idmint_grant_info *grants = NULL;
        size_t n = 0;

        if (idmint_trace(a, name, id, &grants, &n) == 0 && n > 0) {
            snprintf(old_name, old_size, "%s", name);
            idmint_grant_format(idmint_grant_info_at(grants, 0), owner, owner_size);
            idmint_free(grants);
            return 1;
        }
        idmint_free(grants);
        idmint_ns_info_init(&old, IDMINT_KIND_SNOWFLAKE);
        if (idmint_ns_get(a, name, &old) != 0)
            break;
        memcpy(name, old.origin, sizeof(name));
    }
    return 0;
}

void trace_out_why(idmint_authority *a, const idmint_ns_info *ns, uint64_t id, char *buf,
                   size_t size)
{
    char when[32], created[32], old[64], owner[512];
    idmint_decoded d;

    /* The whole time unit before the creation: a unit that holds it may
     * hold IDs minted after it too. */
    if (ns->kind == IDMINT_KIND_SNOWFLAKE && idmint_decode(&ns->layout, id, &d) == 0 &&
        d.unix_ms <= ns->created_ms - (int64_t)ns->layout.unit_ms &&
        idmint_format_iso8601(d.unix_ms, when, sizeof(when)) == 0 &&
        idmint_format_iso8601(ns->created_ms, created, sizeof(created)) == 0) {
        /* A grant is taken once its namespace exists, and its holder never
         * mints a time unit before its take. */
        snprintf(buf, size, "not an ID of '%s': its time %s is before '%s' was created (%s)",
                 ns->name, when, ns->name, created);
        return;
    }
    if (older_owner(a, ns, id, old, sizeof(old), owner, sizeof(owner))) {
        snprintf(buf, size,
                 "not an ID of '%s': it lies in a grant of '%s', which '%s' was migrated from "
                 "(every ID of '%s' lies above those): %s",
                 ns->name, old, ns->name, ns->name, owner);
        return;
    }
    snprintf(buf, size, "%s", TRACE_OUT_NO_GRANT);
}
