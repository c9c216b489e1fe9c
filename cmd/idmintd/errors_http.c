/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The one table from library codes to HTTP. A client's mistake is a 4xx; a
 * server-side failure (store, clock, memory, a forked handle) is 503 so that
 * callers retry elsewhere. errors_http_check_all() proves every code in
 * IDMINT_ERRNO_MAP has a row, so a new library code cannot slip through.
 */
#include "errors_http.h"

#include "idmint.h"

#include <stddef.h>
#include <stdio.h>

static const struct errors_http_row rows[] = {
    {IDMINT_EINVAL, 400, "invalid_argument"},
    {IDMINT_ENOMEM, 503, "unavailable"},
    {IDMINT_ENOTFOUND, 404, "not_found"},
    {IDMINT_EDISABLED, 409, "disabled"},
    {IDMINT_EEXHAUSTED, 409, "exhausted"},
    {IDMINT_ENOWORKER, 503, "no_worker"},
    {IDMINT_ELEASELOST, 503, "lease_lost"},
    {IDMINT_ECLOCK, 503, "unavailable"},
    {IDMINT_EFORKED, 503, "unavailable"},
    {IDMINT_EUNAVAILABLE, 503, "unavailable"},
    {IDMINT_ECONFLICT, 409, "conflict"},
    {IDMINT_ESTORE, 503, "unavailable"},
    {IDMINT_ETIMEDOUT, 503, "unavailable"},
    {IDMINT_EACCESS, 403, "permission_denied"},
    {IDMINT_ERESTORED, 503, "unavailable"},
    /* The daemon's own, below the library's codes (errors_http.h). */
    {ERRORS_HTTP_RATE_LIMITED, 429, ERRORS_HTTP_RATE_LIMITED_CODE},
};

static const struct errors_http_row fallback = {0, 503, "unavailable"};

static const struct errors_http_row *find(int err)
{
    size_t i;

    for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
        if (rows[i].err == err)
            return &rows[i];
    return NULL;
}

const struct errors_http_row *errors_http_lookup(int err)
{
    const struct errors_http_row *row = find(err);

    return row != NULL ? row : &fallback;
}

int errors_http_check_all(void)
{
    int missing = 0;

#define XX(name, value, text)                                                                      \
    if (find(IDMINT_##name) == NULL) {                                                             \
        fprintf(stderr, "idmintd: IDMINT_%s (%d, \"%s\") has no row in errors_http.c\n", #name,    \
                (int)(value), text);                                                               \
        missing++;                                                                                 \
    }
    IDMINT_ERRNO_MAP(XX)
#undef XX
    /* A daemon-only code must never shadow a library one. */
#define XX(name, value, text)                                                                      \
    if ((int)(value) == ERRORS_HTTP_RATE_LIMITED) {                                                \
        fprintf(stderr, "idmintd: IDMINT_%s (%d) collides with ERRORS_HTTP_RATE_LIMITED\n", #name, \
                (int)(value));                                                                     \
        missing++;                                                                                 \
    }
    IDMINT_ERRNO_MAP(XX)
#undef XX
    if (errors_http_lookup(ERRORS_HTTP_RATE_LIMITED)->status != 429) {
        fprintf(stderr, "idmintd: rate_limited has no 429 row in errors_http.c\n");
        missing++;
    }
    return missing;
}
