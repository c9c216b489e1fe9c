/* SPDX-License-Identifier: Apache-2.0 */
/* The idmint.* settings (README.md, "Settings"), defined in module.c. */
#ifndef IDMINT_PG_SETTINGS_H
#define IDMINT_PG_SETTINGS_H

#include <stdbool.h>

extern char *idmint_pg_authority;    /* idmint.authority; "" for the library's default */
extern int idmint_pg_region;         /* idmint.region */
extern int idmint_pg_lease_ms;       /* idmint.lease_ms; 0 for the library's default */
extern int idmint_pg_renew_ms;       /* idmint.renew_ms; 0 for the library's default */
extern int idmint_pg_max_borrow_ms;  /* idmint.max_borrow_ms */
extern int idmint_pg_max_namespaces; /* idmint.max_namespaces */
extern int idmint_pg_max_leases;     /* idmint.max_leases */
/** The largest idmint.max_leases may be. */
#define MAX_LEASES_LIMIT 16
extern char *idmint_pg_namespaces; /* idmint.namespaces: "*" or a comma-separated list */
extern int idmint_pg_wait_ms;      /* idmint.wait_ms */
extern int idmint_pg_max_age_ms;   /* idmint.max_age_ms */

/**
 * Whether this server may mint namespace @p ns (idmint.namespaces).
 */
bool idmint_pg_namespace_allowed(const char *ns);

#endif
