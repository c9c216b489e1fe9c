/* SPDX-License-Identifier: Apache-2.0 */
/*
 * IDMINT_E* -> one HTTP status and one stable JSON code (docs/http-api.md,
 * "Errors"), from the one table in errors_http.c.
 */
#ifndef IDMINTD_ERRORS_HTTP_H
#define IDMINTD_ERRORS_HTTP_H

struct errors_http_row {
    int err;          /* IDMINT_E* */
    int status;       /* HTTP status */
    const char *code; /* JSON error.code */
};

/*
 * Codes the daemon answers that no library call returns, in the same
 * table (errors_http.c) so that one file lists every status and code.
 * Values below every IDMINT_E* code; errors_http_check_all() checks that
 * none collides with one.
 */
#define ERRORS_HTTP_RATE_LIMITED      (-1000)
#define ERRORS_HTTP_RATE_LIMITED_CODE "rate_limited"

/* The row of @p err; an unknown code maps to 503 "unavailable". Never NULL. */
const struct errors_http_row *errors_http_lookup(int err);

/*
 * Walk IDMINT_ERRNO_MAP and report every code without a row on stderr.
 * Returns how many lack one (0: the table is complete). Run by
 * `idmintd --self-check` and at every start of a debug build.
 */
int errors_http_check_all(void);

#endif /* IDMINTD_ERRORS_HTTP_H */
