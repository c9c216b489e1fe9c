/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libidmint's failures as PostgreSQL errors: the one place that maps the
 * library's codes to SQLSTATEs (README.md, "Errors").
 */
#ifndef IDMINT_PG_ERRORS_H
#define IDMINT_PG_ERRORS_H

#include "postgres.h"

/** The SQLSTATE for library code @p code (an IDMINT_E* value). */
int idmint_pg_sqlstate(int code);

/**
 * Raise an ERROR for library code @p code with @p message (the library's
 * idmint_errmsg(), or ours); "idmint: " and the code's name lead it.
 * Does not return.
 */
void idmint_pg_raise_text(int code, const char *message) pg_attribute_noreturn();

/** Raise the ERROR of the last library call of this thread that failed with @p code. */
void idmint_pg_raise(int code) pg_attribute_noreturn();

/** Raise the ERROR of a call that waited @p wait_ms for the worker in vain. */
void idmint_pg_raise_timeout(const char *ns, int wait_ms) pg_attribute_noreturn();

/** Raise the ERROR of a call made when the module was not preloaded. */
void idmint_pg_raise_not_loaded(void) pg_attribute_noreturn();

#endif
