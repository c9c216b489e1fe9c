/* SPDX-License-Identifier: Apache-2.0 */
/* How idmint trace and idmint verify --ns print what provenance says of an ID. */
#ifndef IDMINT_CLI_TRACE_OUT_H
#define IDMINT_CLI_TRACE_OUT_H

#include "idmint.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * One line for @p id and the @p n grants covering it (idmint_trace): "ID
 * minted OWNER", "ID not_minted: ...", "ID duplicate: OWNER | OWNER ...",
 * or with @p as_json one object {"id","verdict","grants":[...]}.
 */
void trace_out_print(FILE *out, uint64_t id, const idmint_grant_info *grants, size_t n,
                     int as_json);

#endif /* IDMINT_CLI_TRACE_OUT_H */
