/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The one table between library codes and the HTTP API's errors
 * (docs/http-api.md, "Errors"): idmintd answers a code with its row's status
 * and wire code, and the http:// remote authority turns a wire code back into
 * a library code, both from the rows below. A client's mistake is a 4xx; a
 * server-side failure (store, clock, memory, a forked handle) is 503 so that
 * callers retry elsewhere. tests/unit/test_wire_errors.c checks that every
 * library code has a row and that each survives the trip there and back.
 */
#include "internal.h"

#include <stddef.h>
#include <string.h>

/*
 * A library code's answer is its first row; a wire code's library code is
 * the first row naming it, so "unavailable" reads back as EUNAVAILABLE.
 * Rows marked reply-only are answers of the HTTP layer itself, which no
 * library call returns: their code is what a client makes of them.
 */
static const struct idmint__wire_error rows[] = {
    {IDMINT_EINVAL, 400, "invalid_argument", 0},
    {IDMINT_EUNAVAILABLE, 503, "unavailable", 0},
    {IDMINT_ENOMEM, 503, "unavailable", 0},
    {IDMINT_ENOTFOUND, 404, "not_found", 0},
    {IDMINT_EDISABLED, 409, "disabled", 0},
    {IDMINT_EEXHAUSTED, 409, "exhausted", 0},
    {IDMINT_ENOWORKER, 503, "no_worker", 0},
    {IDMINT_ELEASELOST, 503, "lease_lost", 0},
    {IDMINT_ECLOCK, 503, "unavailable", 0},
    {IDMINT_EFORKED, 503, "unavailable", 0},
    {IDMINT_ECONFLICT, 409, "conflict", 0},
    {IDMINT_ESTORE, 503, "unavailable", 0},
    {IDMINT_ETIMEDOUT, 503, "unavailable", 0},
    {IDMINT_EACCESS, 403, "permission_denied", 0},
    /* Its own code, so a remote holder stops as a local one does (an older
     * client reads an unknown code as unavailable). */
    {IDMINT_ERESTORED, 503, "restored", 0},
    {IDMINT_EACCESS, 401, "unauthenticated", 1},
    {IDMINT_EUNAVAILABLE, 429, "rate_limited", 1},
    {IDMINT_EINVAL, 405, "method_not_allowed", 1},
    {IDMINT_EINVAL, 413, "payload_too_large", 1},
    {IDMINT_EINVAL, 431, "headers_too_large", 1},
    {IDMINT_EINVAL, 414, "uri_too_long", 1},
    {IDMINT_EINVAL, 501, "not_implemented", 1},
    {IDMINT_EINVAL, 505, "http_version_not_supported", 1},
};

static const struct idmint__wire_error fallback = {IDMINT_EUNAVAILABLE, 503, "unavailable", 0};

const struct idmint__wire_error *idmint__wire_error_of(int err)
{
    size_t i;

    for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
        if (rows[i].err == err && !rows[i].is_reply_only)
            return &rows[i];
    return &fallback;
}

const struct idmint__wire_error *idmint__wire_error_named(const char *code)
{
    size_t i;

    if (code == NULL)
        return NULL;
    for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
        if (strcmp(rows[i].code, code) == 0)
            return &rows[i];
    return NULL;
}

int idmint__wire_error_code(const char *code, long status)
{
    const struct idmint__wire_error *row = idmint__wire_error_named(code);

    if (row != NULL)
        return row->err;
    /* A code we do not know: the status class still says whose fault it is. */
    return status >= 500 ? IDMINT_EUNAVAILABLE : IDMINT_EINVAL;
}

size_t idmint__wire_errors(const struct idmint__wire_error **out)
{
    *out = rows;
    return sizeof(rows) / sizeof(rows[0]);
}
