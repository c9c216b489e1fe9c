/* SPDX-License-Identifier: Apache-2.0 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "handle_fixture.h"
#include "testsupport.h"

#include <stdio.h>
#include <stdlib.h>

int ts_handle_setup(void **state)
{
    struct ts_handle_fixture *f = calloc(1, sizeof(*f));

    if (f == NULL)
        return -1;
    if ((f->dir = ts_tempdir()) == NULL || (f->url = ts_sqlite_url(f->dir, "idmint.db")) == NULL ||
        idmint_authority_open(&f->admin, f->url, 0) != 0) {
        free(f->url);
        ts_rmtree(f->dir);
        free(f);
        return -1;
    }
    *state = f;
    return 0;
}

int ts_handle_teardown(void **state)
{
    struct ts_handle_fixture *f = *state;

    idmint_authority_close(f->admin);
    free(f->url);
    ts_rmtree(f->dir);
    free(f);
    return 0;
}

void ts_create_snowflake_unit(struct ts_handle_fixture *f, const char *name, const char *layout,
                              uint32_t unit_ms)
{
    idmint_ns_info info;

    idmint_ns_info_init(&info, IDMINT_KIND_SNOWFLAKE);
    snprintf(info.name, sizeof(info.name), "%s", name);
    assert_int_equal(idmint_layout_parse(layout, &info.layout), 0);
    if (unit_ms != 0)
        info.layout.unit_ms = unit_ms;
    assert_int_equal(idmint_ns_create(f->admin, &info), 0);
}

void ts_create_snowflake(struct ts_handle_fixture *f, const char *name, const char *layout)
{
    ts_create_snowflake_unit(f, name, layout, 0);
}

void ts_create_range(struct ts_handle_fixture *f, const char *name, uint64_t start, uint64_t max,
                     uint32_t block)
{
    idmint_ns_info info;

    idmint_ns_info_init(&info, IDMINT_KIND_RANGE);
    snprintf(info.name, sizeof(info.name), "%s", name);
    info.next_value = start;
    info.max_value = max;
    info.block = block;
    info.max_block = block;
    assert_int_equal(idmint_ns_create(f->admin, &info), 0);
}

uint64_t ts_time_of(const idmint_layout *l, uint64_t id)
{
    return id >> (l->region_bits + l->worker_bits + l->sequence_bits);
}
