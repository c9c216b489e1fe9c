/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A real SQLite authority in a fresh folder and an admin handle on it: the
 * fixture of the tests of minting handles through the public API
 * (tests/unit/test_handle.c, test_lease.c, test_range.c).
 */
#ifndef IDMINT_HANDLE_FIXTURE_H
#define IDMINT_HANDLE_FIXTURE_H

#include "idmint.h"

#include <stdint.h>

struct ts_handle_fixture {
    char *dir;               /* removed by ts_handle_teardown */
    char *url;               /* sqlite:DIR/idmint.db */
    idmint_authority *admin; /* open on url */
};

/* cmocka setup: *state is a new struct ts_handle_fixture. 0 or -1. */
int ts_handle_setup(void **state);
/* cmocka teardown of ts_handle_setup. Always 0. */
int ts_handle_teardown(void **state);

/* A snowflake namespace of @p layout ("T/R/W/S"); @p unit_ms 0 keeps the layout's time unit. */
void ts_create_snowflake_unit(struct ts_handle_fixture *f, const char *name, const char *layout,
                              uint32_t unit_ms);
void ts_create_snowflake(struct ts_handle_fixture *f, const char *name, const char *layout);
/* A range namespace from @p start to @p max with blocks of exactly @p block. */
void ts_create_range(struct ts_handle_fixture *f, const char *name, uint64_t start, uint64_t max,
                     uint32_t block);
/* The time field of @p id under @p l. */
uint64_t ts_time_of(const idmint_layout *l, uint64_t id);

#endif
