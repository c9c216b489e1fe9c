/* SPDX-License-Identifier: Apache-2.0 */
/*
 * An authority on a fresh SQLite file with a clock the test sets by hand:
 * the fixture of the unit tests of the authority's rules (src/authority_*.c),
 * where every figure a rule computes from "now" must be one the test knows.
 */
#ifndef IDMINT_AUTHORITY_FIXTURE_H
#define IDMINT_AUTHORITY_FIXTURE_H

#include "idmint.h"
#include "internal.h"

struct ts_authority {
    char *dir;           /* the store's folder, removed by ts_authority_close */
    char *url;           /* sqlite:DIR/FILE */
    idmint_authority *a; /* open on url, its clock lent from clk */
    struct clock clk;    /* reads now_ms and stands still */
    int64_t now_ms;
};

/* Open @p t on a new store with the clock at @p now_ms. 0, or -1 (nothing left behind). */
int ts_authority_open(struct ts_authority *t, int64_t now_ms);
/* Set the clock to @p now_ms, backwards too (a new clock: one clock only goes forward). */
void ts_authority_set_now(struct ts_authority *t, int64_t now_ms);
/* Close the authority and remove its folder. */
void ts_authority_close(struct ts_authority *t);

/* How many namespaces, and audit records, @p a lists; SIZE_MAX when the list fails. */
size_t ts_ns_count(idmint_authority *a);
size_t ts_audit_count(idmint_authority *a);

/* @p i as idmint_ns_info_init makes it for @p kind, named @p name (a test failure when
 * the name does not fit). */
void ts_ns_named(idmint_ns_info *i, idmint_kind kind, const char *name);

/* The time a fixture's clock starts at: 2026-05-28, well inside every default layout. */
#define TS_AUTHORITY_NOW_MS INT64_C(1780000000000)

/* cmocka setup: *state is a new struct ts_authority open at TS_AUTHORITY_NOW_MS. 0 or -1. */
int ts_authority_setup(void **state);
/* cmocka teardown of ts_authority_setup. Always 0. */
int ts_authority_teardown(void **state);

#endif
