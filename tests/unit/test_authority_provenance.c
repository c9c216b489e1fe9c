/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tests for src/authority_provenance.c: idmint_trace names only a grant
 * whose holder could have minted the ID. A worker grant's window starts at
 * the later of its take and the E its holder found, and an ID of a
 * namespace another was migrated from is none of the new one's. Real
 * handles on a real SQLite file.
 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "idmint.h"
#include "internal.h"
#include "testsupport.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DAY_MS INT64_C(86400000)

struct fixture {
    char *dir;
    char *url;
    idmint_authority *admin;
    int64_t epoch_ms; /* one epoch for every namespace of a test: the same ID decodes alike */
};

static int64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));

    if (f == NULL)
        return -1;
    f->dir = ts_tempdir();
    f->url = ts_sqlite_url(f->dir, "idmint.db");
    if (idmint_authority_open(&f->admin, f->url, 0) != 0)
        return -1;
    f->epoch_ms = now_ms() - 330 * DAY_MS;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;

    idmint_authority_close(f->admin);
    free(f->url);
    ts_rmtree(f->dir);
    free(f);
    return 0;
}

/*
 * A snowflake namespace of the default layout whose epoch lies 330 days
 * back: the first time unit after it is eleven months before any take.
 */
static void create_old_epoch(struct fixture *f, const char *name)
{
    idmint_ns_info info;

    idmint_ns_info_init(&info, IDMINT_KIND_SNOWFLAKE);
    snprintf(info.name, sizeof(info.name), "%s", name);
    info.layout.epoch_ms = f->epoch_ms;
    assert_int_equal(idmint_ns_create(f->admin, &info), 0);
}

static void ns_get(struct fixture *f, const char *name, idmint_ns_info *info)
{
    idmint_ns_info_init(info, IDMINT_KIND_SNOWFLAKE);
    assert_int_equal(idmint_ns_get(f->admin, name, info), 0);
}

/* The ID of @p layout at time unit @p unit, worker @p worker, sequence 0 (region 0). */
static uint64_t id_at(const idmint_layout *l, uint64_t unit, uint32_t worker)
{
    return unit << (l->region_bits + l->worker_bits + l->sequence_bits) | (uint64_t)worker
                                                                              << l->sequence_bits;
}

static uint64_t unit_of(const idmint_layout *l, uint64_t id)
{
    idmint_decoded d;

    assert_int_equal(idmint_decode(l, id, &d), 0);
    return d.time_units;
}

/* How many grants idmint_trace names for @p id in @p ns; the first into @p first if wanted. */
static size_t traced(struct fixture *f, const char *ns, uint64_t id, idmint_grant_info *first)
{
    idmint_grant_info *grants = NULL;
    size_t n = 99;

    assert_int_equal(idmint_trace(f->admin, ns, id, &grants, &n), 0);
    assert_true(n == 0 ? grants == NULL : grants != NULL);
    if (n > 0 && first != NULL)
        *first = *idmint_grant_info_at(grants, 0);
    idmint_free(grants);
    return n;
}

static void handle_info(idmint *m, idmint_handle_info *info)
{
    idmint_handle_info_init(info);
    assert_int_equal(idmint_info(m, info), 0);
}

/*
 * Issue 28, item 5: `idmint trace 4194304` (the first millisecond after the
 * epoch, worker 0) answered "minted" by a holder whose grant was made
 * eleven months later: a fresh worker id's E is 0, and the window started
 * there instead of at the take.
 */
static void test_authority_provenance__a_fresh_worker_grant_starts_at_its_take(void **state)
{
    struct fixture *f = *state;
    idmint_handle_info hi;
    idmint_grant_info g;
    idmint_ns_info ns;
    idmint *m;
    uint64_t id, unit;

    create_old_epoch(f, "fresh");
    ns_get(f, "fresh", &ns);
    assert_int_equal(idmint_open(&m, f->url, "fresh", NULL), 0);
    assert_int_equal(idmint_next(m, &id), 0);
    handle_info(m, &hi);
    assert_int_equal(hi.fence_found, 0); /* the worker id was never held: E found is 0 */
    unit = unit_of(&ns.layout, id);

    /* What its holder minted is its; the first unit after the epoch is not. */
    assert_int_equal(traced(f, "fresh", id, &g), 1);
    assert_int_equal(g.generation, hi.generation);
    assert_int_equal(g.first, 0);
    assert_int_equal(traced(f, "fresh", id_at(&ns.layout, 1, hi.worker_id), NULL), 0);
    /* Nor a second before its take, though [first, last) holds that too. */
    assert_true(unit > 1000);
    assert_int_equal(traced(f, "fresh", id_at(&ns.layout, unit - 1000, hi.worker_id), NULL), 0);
    idmint_close(m);
}

/*
 * `idmint trace --ns b ID` named b's holder for an ID minted in namespace
 * a. A namespace created after the ID was minted has no grant whose window
 * holds it.
 */
static void test_authority_provenance__a_later_namespace_never_owns_an_earlier_id(void **state)
{
    struct fixture *f = *state;
    idmint_handle_info early_hi, late_hi;
    idmint *early, *late;
    uint64_t id, late_id;

    create_old_epoch(f, "early");
    assert_int_equal(idmint_open(&early, f->url, "early", NULL), 0);
    assert_int_equal(idmint_next(early, &id), 0);
    handle_info(early, &early_hi);
    idmint_close(early);
    idmint__sleep_ms(2); /* the next take falls in a later unit */

    create_old_epoch(f, "late"); /* same layout: the ID decodes there as well */
    assert_int_equal(idmint_open(&late, f->url, "late", NULL), 0);
    assert_int_equal(idmint_next(late, &late_id), 0);
    handle_info(late, &late_hi);
    assert_int_equal(late_hi.worker_id, early_hi.worker_id); /* same worker id: a real question */

    assert_int_equal(traced(f, "early", id, NULL), 1);
    assert_int_equal(traced(f, "late", id, NULL), 0);
    assert_int_equal(traced(f, "late", late_id, NULL), 1);
    idmint_close(late);
}

/*
 * After `ns migrate a b`, a's holders mint on until their leases end while
 * b's first holders have already taken their worker ids: b's grants cover
 * those times, but every ID of b lies above b's floor, above every ID of a.
 * An ID in a grant of a is not b's.
 */
static void
test_authority_provenance__an_id_of_the_migrated_from_namespace_is_not_the_new_ones(void **state)
{
    struct fixture *f = *state;
    struct idmint__lease lease;
    idmint_handle_info hi;
    idmint_grant_info g;
    idmint_ns_info old_ns, new_ns;
    idmint_options o;
    idmint *m;
    uint64_t ids[64], take_unit, above;

    create_old_epoch(f, "a");
    idmint_options_init(&o);
    o.lease_ms = 5000; /* a's last IDs come within this of the migration */
    o.renew_ms = 4900;
    assert_int_equal(idmint_open(&m, f->url, "a", &o), 0);
    assert_int_equal(idmint_next(m, &ids[0]), 0);
    handle_info(m, &hi);

    ns_get(f, "a", &old_ns);
    idmint_ns_info_init(&new_ns, IDMINT_KIND_SNOWFLAKE);
    snprintf(new_ns.name, sizeof(new_ns.name), "b");
    new_ns.layout = old_ns.layout;
    assert_int_equal(idmint_ns_migrate(f->admin, "a", &new_ns, NULL), 0);
    ns_get(f, "b", &new_ns);
    assert_string_equal(new_ns.origin, "a");

    /* b's first holder takes its worker id now (a raw take: it would wait
     * past the floor before minting, which is a's E, seconds ahead). */
    memset(&lease, 0, sizeof(lease));
    memcpy(lease.holder, "0123456789abcdef0123456789abcdef", sizeof(lease.holder));
    assert_int_equal(idmint__authority_lease_take(f->admin, &new_ns, 60000, &lease), 0);
    assert_int_equal(lease.worker_id, hi.worker_id); /* the same worker id in both */
    /* Above the floor, that worker id is b's holder's. */
    above = id_at(&new_ns.layout, lease.fence_found + 1, lease.worker_id);
    assert_true(lease.fence_found + 1 < lease.lease_until);
    assert_int_equal(traced(f, "b", above, &g), 1);
    assert_int_equal(g.first, 0); /* recorded as the store found it: before the floor */
    take_unit = idmint__unit_at(&new_ns.layout, g.granted_ms);

    /* a's holder mints on: its lease runs, though a is disabled now. */
    for (int i = 1; i < 64; i++)
        assert_int_equal(idmint_next(m, &ids[i]), 0);
    for (int i = 1; i < 64; i++) {
        /* b's grant covers the time and worker of each of these IDs... */
        assert_true(unit_of(&new_ns.layout, ids[i]) >= take_unit);
        assert_true(unit_of(&new_ns.layout, ids[i]) < g.last);
        /* ... but they are a's, and trace says so. */
        assert_int_equal(traced(f, "a", ids[i], NULL), 1);
        assert_int_equal(traced(f, "b", ids[i], NULL), 0);
    }
    assert_int_equal(traced(f, "b", ids[0], NULL), 0); /* before b existed */
    idmint_close(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
        T(test_authority_provenance__a_fresh_worker_grant_starts_at_its_take),
        T(test_authority_provenance__a_later_namespace_never_owns_an_earlier_id),
        T(test_authority_provenance__an_id_of_the_migrated_from_namespace_is_not_the_new_ones),
#undef T
    };
    return cmocka_run_group_tests_name("authority_provenance", tests, NULL, NULL);
}
