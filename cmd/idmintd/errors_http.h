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

/* The row of @p err; an unknown code maps to 503 "unavailable". Never NULL. */
const struct errors_http_row *errors_http_lookup(int err);

/*
 * Walk IDMINT_ERRNO_MAP and report every code without a row on stderr.
 * Returns how many lack one (0: the table is complete). Run by
 * `idmintd --self-check` and at every start of a debug build.
 */
int errors_http_check_all(void);

#endif /* IDMINTD_ERRORS_HTTP_H */
