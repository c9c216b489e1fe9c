/* SPDX-License-Identifier: Apache-2.0 */
/*
 * IDMINT_E* -> one HTTP status and one stable JSON code (docs/http-api.md,
 * "Errors"), from the one table in src/wire_errors.c.
 */
#ifndef IDMINTD_ERRORS_HTTP_H
#define IDMINTD_ERRORS_HTTP_H

#include "idmint_service.h"

/* The daemon's own answer to a caller over its rate (a reply-only row of src/wire_errors.c). */
#define ERRORS_HTTP_RATE_LIMITED_CODE "rate_limited"

/* The row of @p err; an unknown code maps to 503 "unavailable". Never NULL. Thread-safe. */
const struct idmint__wire_error *errors_http_lookup(int err);

/*
 * Walk IDMINT_ERRNO_MAP and report every code without a row on stderr.
 * Returns how many lack one (0: the table is complete). Run by
 * `idmintd --self-check` and at every start of a debug build.
 */
int errors_http_check_all(void);

#endif /* IDMINTD_ERRORS_HTTP_H */
