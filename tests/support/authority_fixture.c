/* SPDX-License-Identifier: Apache-2.0 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "authority_fixture.h"
#include "testsupport.h"

#include <stdlib.h>
#include <string.h>

static int64_t standing_wall_ms(void *ctx)
{
    return *(const int64_t *)ctx;
}

static uint64_t standing_mono_ns(void *ctx)
{
    (void)ctx;
    return 0;
}

void ts_authority_set_now(struct ts_authority *t, int64_t now_ms)
{
    t->now_ms = now_ms;
    idmint__clock_init(&t->clk, standing_wall_ms, standing_mono_ns, &t->now_ms);
}

int ts_authority_open(struct ts_authority *t, int64_t now_ms)
{
    memset(t, 0, sizeof(*t));
    ts_authority_set_now(t, now_ms);
    if ((t->dir = ts_tempdir()) == NULL ||
        (t->url = ts_sqlite_url(t->dir, "authority.db")) == NULL ||
        idmint__authority_open_clock(&t->a, t->url, 0, &t->clk, NULL) != 0) {
        ts_authority_close(t);
        return -1;
    }
    return 0;
}

void ts_authority_close(struct ts_authority *t)
{
    idmint_authority_close(t->a);
    ts_rmtree(t->dir);
    free(t->url);
    memset(t, 0, sizeof(*t));
}

int ts_authority_setup(void **state)
{
    struct ts_authority *t = calloc(1, sizeof(*t));

    if (t == NULL || ts_authority_open(t, TS_AUTHORITY_NOW_MS) != 0) {
        free(t);
        return -1;
    }
    *state = t;
    return 0;
}

int ts_authority_teardown(void **state)
{
    ts_authority_close(*state);
    free(*state);
    return 0;
}

void ts_ns_named(idmint_ns_info *i, idmint_kind kind, const char *name)
{
    size_t len = strlen(name);

    idmint_ns_info_init(i, kind);
    assert_true(len < sizeof(i->name));
    memcpy(i->name, name, len + 1);
}

size_t ts_ns_count(idmint_authority *a)
{
    idmint_ns_info *list = NULL;
    size_t n = 0;

    if (idmint_ns_list(a, &list, &n) != 0)
        return SIZE_MAX;
    free(list);
    return n;
}

size_t ts_audit_count(idmint_authority *a)
{
    idmint_audit_entry *list = NULL;
    size_t n = 0;

    if (idmint_audit_list(a, 0, SIZE_MAX, &list, &n) != 0)
        return SIZE_MAX;
    free(list);
    return n;
}
