/* SPDX-License-Identifier: Apache-2.0 */
/* How idmint trace and idmint verify --ns print what provenance says of an ID. */
#ifndef IDMINT_CLI_TRACE_OUT_H
#define IDMINT_CLI_TRACE_OUT_H

#include "idmint.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define TRACE_OUT_NO_GRANT "not minted under any grant this authority knows"

/*
 * One line for @p id and the @p n grants covering it (idmint_trace): "ID
 * minted OWNER", "ID not_minted: WHY", "ID duplicate: OWNER | OWNER ...",
 * or with @p as_json one object {"id","verdict","grants":[...]}, with
 * "message": WHY when not minted. @p why NULL: TRACE_OUT_NO_GRANT.
 */
void trace_out_print(FILE *out, uint64_t id, const idmint_grant_info *grants, size_t n,
                     const char *why, int as_json);

/* The grants one authority's idmint_trace() found for an ID, and its name for a person. */
struct trace_out_source {
    const char *authority; /* as cli_authority_text() writes it: no secret */
    const idmint_grant_info *grants;
    size_t n;
};

/*
 * As trace_out_print, for the grants several authorities found (the regions
 * of one namespace, each on its own authority): the verdict counts them all,
 * each owner is followed by " at AUTHORITY" (JSON: an "authority" member in
 * each grant), and a not_minted line names no reason beyond TRACE_OUT_NO_GRANT.
 */
void trace_out_print_sources(FILE *out, uint64_t id, const struct trace_out_source *src,
                             size_t nsrc, int as_json);

/*
 * Why no grant of namespace @p ns (as idmint_ns_get read it) covers @p id,
 * into @p buf (@p size bytes), as far as the ID and the namespace can say:
 * a snowflake ID's time before @p ns was created, or an ID in a grant of a
 * namespace @p ns was migrated from (which idmint_trace therefore leaves
 * out); else TRACE_OUT_NO_GRANT. Reads through @p a; a failed read gives
 * TRACE_OUT_NO_GRANT. Printable ASCII without quotes or backslashes, so it
 * goes into JSON as it is.
 */
void trace_out_why(idmint_authority *a, const idmint_ns_info *ns, uint64_t id, char *buf,
                   size_t size);

#endif /* IDMINT_CLI_TRACE_OUT_H */
