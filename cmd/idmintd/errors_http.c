/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The daemon's view of the one error table (src/wire_errors.c): a library
 * code's status and wire code.
 * errors_http_check_all() proves every code in IDMINT_ERRNO_MAP has a row,
 * so a new library code cannot slip through.
 */
#include "errors_http.h"

#include "idmint.h"

#include <stddef.h>
#include <stdio.h>

const struct idmint__wire_error *errors_http_lookup(int err)
{
    return idmint__wire_error_of(err);
}

int errors_http_check_all(void)
{
    const struct idmint__wire_error *row;
    int missing = 0;

#define XX(name, value, text)                                                                      \
    if (idmint__wire_error_of(IDMINT_##name)->err != IDMINT_##name) {                              \
        fprintf(stderr, "idmintd: IDMINT_%s (%d, \"%s\") has no row in src/wire_errors.c\n",       \
                #name, (int)(value), text);                                                        \
        missing++;                                                                                 \
    }
    IDMINT_ERRNO_MAP(XX)
#undef XX
    row = idmint__wire_error_named(ERRORS_HTTP_RATE_LIMITED_CODE);
    if (row == NULL || row->status != 429) {
        fprintf(stderr, "idmintd: rate_limited has no 429 row in src/wire_errors.c\n");
        missing++;
    }
    return missing;
}
