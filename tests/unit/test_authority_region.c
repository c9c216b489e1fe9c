/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for src/authority_region.c on SQLite stores (the drill
 * reliability.regions_drill runs PostgreSQL and etcd): a claim binds, a
 * second claim of a held region is refused and changes nothing, a lease of
 * another region is refused, a namespace that differs from the registry's
 * is refused at creation, a release hands the region on with a floor that
 * the next claimant's takes start after, and a record written over a stale
 * version is refused.
 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "idmint.h"
#include "internal.h"
#include "store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct fx {
    char dir[64], reg[128], a[128], b[128];
};

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof(*f));
    char witness[96];

    snprintf(f->dir, sizeof(f->dir), "/tmp/idmint-region-XXXXXX");
    if (mkdtemp(f->dir) == NULL)
        return -1;
    snprintf(witness, sizeof(witness), "%s/w", f->dir);
    setenv("IDMINT_WITNESS_DIR", witness, 1);
    snprintf(f->reg, sizeof(f->reg), "sqlite:%s/reg.db", f->dir);
    snprintf(f->a, sizeof(f->a), "sqlite:%s/a.db", f->dir);
    snprintf(f->b, sizeof(f->b), "sqlite:%s/b.db", f->dir);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    char cmd[128];

    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
    if (system(cmd) != 0)
        return -1;
    free(f);
    return 0;
}

static void define(const char *url, const char *name, uint8_t worker_bits)
{
    idmint_authority *a = NULL;
    idmint_ns_info ns;

    assert_int_equal(idmint_authority_open(&a, url, 0), 0);
    idmint_ns_info_init(&ns, IDMINT_KIND_SNOWFLAKE);
    snprintf(ns.name, sizeof(ns.name), "%s", name);
    ns.layout.time_bits = 41;
    ns.layout.region_bits = 2;
    ns.layout.worker_bits = worker_bits;
    ns.layout.sequence_bits = (uint8_t)(20 - worker_bits);
    assert_int_equal(idmint_ns_create(a, &ns), 0);
    idmint_authority_close(a);
}

/* Open @p url and claim @p region in the registry: the status. */
static int claim(const char *url, const char *reg, uint32_t region)
{
    idmint_authority *a = NULL;
    int rc;

    assert_int_equal(idmint_authority_open(&a, url, 0), 0);
    rc = idmint_region_claim(a, reg, region);
    idmint_authority_close(a);
    return rc;
}

static int copy_ns(const char *url, const char *name)
{
    idmint_authority *a = NULL;
    idmint_ns_info ns;
    int rc;

    assert_int_equal(idmint_authority_open(&a, url, 0), 0);
    idmint_ns_info_init(&ns, IDMINT_KIND_SNOWFLAKE);
    rc = idmint_region_ns_definition(a, name, &ns);
    if (rc == 0)
        rc = idmint_ns_create(a, &ns);
    idmint_authority_close(a);
    return rc;
}

static int mint_one(const char *url, uint32_t region, uint64_t *id)
{
    idmint_options o;
    idmint *h = NULL;
    int rc;

    idmint_options_init(&o);
    o.region = region;
    rc = idmint_open(&h, url, "ev", &o);
    if (rc == 0)
        rc = idmint_next(h, id);
    idmint_close(h);
    return rc;
}

static void test_authority_region__claim_binds_and_refuses_a_second(void **state)
{
    struct fx *f = *state;
    idmint_region_record before, after, own;
    idmint_authority *b = NULL;
    uint64_t id = 0;

    define(f->reg, "ev", 8);
    assert_int_equal(claim(f->a, f->reg, 1), 0);
    assert_int_equal(idmint_registry_get(f->reg, 1, &before), 0);
    assert_int_equal(before.state, IDMINT_REGION_CLAIMED);

    assert_int_equal(claim(f->b, f->reg, 1), IDMINT_ECONFLICT);
    assert_non_null(strstr(idmint_errmsg(), before.holder));
    assert_int_equal(idmint_registry_get(f->reg, 1, &after), 0);
    assert_memory_equal(&before, &after, sizeof(before));
    assert_int_equal(idmint_authority_open(&b, f->b, 0), 0);
    assert_int_equal(idmint_region_get(b, &own), IDMINT_ENOTFOUND);
    idmint_authority_close(b);

    /* Claimed again by its holder: a claim run twice is one claim. */
    assert_int_equal(claim(f->a, f->reg, 1), 0);
    assert_int_equal(copy_ns(f->a, "ev"), 0);
    assert_int_equal(mint_one(f->a, 1, &id), 0);
    assert_int_equal((id >> 20) & 3, 1);
    assert_int_equal(mint_one(f->a, 0, &id), IDMINT_EACCESS);
    assert_non_null(strstr(idmint_errmsg(), "serves region 1 only"));
}

static void test_authority_region__a_differing_namespace_is_refused(void **state)
{
    struct fx *f = *state;
    idmint_authority *a = NULL;
    idmint_ns_info ns;

    define(f->reg, "ev", 8);
    define(f->b, "ev", 9); /* made before any claim */
    assert_int_equal(claim(f->b, f->reg, 2), IDMINT_EINVAL);
    assert_non_null(strstr(idmint_errmsg(), "worker bits 9 here, 8 in the registry"));
    assert_int_equal(idmint_registry_get(f->reg, 2, &(idmint_region_record){0}), IDMINT_ENOTFOUND);

    assert_int_equal(claim(f->a, f->reg, 2), 0);
    assert_int_equal(idmint_authority_open(&a, f->a, 0), 0);
    idmint_ns_info_init(&ns, IDMINT_KIND_SNOWFLAKE);
    snprintf(ns.name, sizeof(ns.name), "ev");
    ns.layout.region_bits = 2;
    ns.layout.worker_bits = 10;
    ns.layout.sequence_bits = 10;
    assert_int_equal(idmint_ns_create(a, &ns), IDMINT_EINVAL);
    assert_non_null(strstr(idmint_errmsg(), "differs from the registry"));
    snprintf(ns.name, sizeof(ns.name), "nodef");
    assert_int_equal(idmint_ns_create(a, &ns), IDMINT_ENOTFOUND);
    assert_int_equal(idmint_ns_get(a, "ev", &ns), IDMINT_ENOTFOUND);
    idmint_authority_close(a);
}

static void test_authority_region__release_hands_on_above_the_floor(void **state)
{
    struct fx *f = *state;
    idmint_region_record rec;
    idmint_authority *a = NULL;
    uint64_t first = 0, next = 0;

    define(f->reg, "ev", 8);
    assert_int_equal(claim(f->a, f->reg, 3), 0);
    assert_int_equal(copy_ns(f->a, "ev"), 0);
    assert_int_equal(mint_one(f->a, 3, &first), 0);

    assert_int_equal(idmint_authority_open(&a, f->a, 0), 0);
    assert_int_equal(idmint_region_release(a), 0);
    assert_int_equal(idmint_region_get(a, &rec), 0);
    assert_int_equal(rec.state, IDMINT_REGION_RELEASED);
    assert_int_equal(idmint_region_release(a), 0); /* run again: nothing more to do */
    idmint_authority_close(a);
    assert_int_equal(mint_one(f->a, 3, &next), IDMINT_EACCESS);

    assert_int_equal(idmint_registry_get(f->reg, 3, &rec), 0);
    assert_int_equal(rec.state, IDMINT_REGION_FREE);
    assert_true(rec.floor_ms > 0);
    assert_int_equal(claim(f->b, f->reg, 3), 0);
    assert_int_equal(copy_ns(f->b, "ev"), 0);
    assert_int_equal(mint_one(f->b, 3, &next), 0);
    assert_true(next > first);
}

/* A lease of @p region in ev of @p url taken straight in the store, with E at @p until_unit. */
static void take_raw(const char *url, uint32_t region, uint64_t now_unit, uint64_t until_unit,
                     struct idmint__lease *lease)
{
    struct store *st = NULL;

    memset(lease, 0, sizeof(*lease));
    lease->region = region;
    snprintf(lease->holder, sizeof(lease->holder), "0123456789abcdef0123456789abcdef");
    lease->granted_units = 1;
    assert_int_equal(idmint__store_open(url, NULL, &st), 0);
    assert_int_equal(
        idmint__store_lease_take(st, "ev", 256, now_unit, until_unit, lease, "test", 1), 0);
    idmint__store_close(st);
}

/*
 * A claim starts a new epoch (models/region.pml, NO_EPOCH): a live lease
 * refuses the claim; a lease whose E has passed (a holder killed, or one
 * whose clock lags) is not renewed under the claim.
 */
static void test_authority_region__a_claim_ends_earlier_leases(void **state)
{
    struct fx *f = *state;
    struct idmint__lease live, old;
    struct store *st = NULL;
    struct timespec ts;
    uint64_t now_unit;

    clock_gettime(CLOCK_REALTIME, &ts);
    now_unit =
        (uint64_t)((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000 - IDMINT_DEFAULT_EPOCH_MS);

    define(f->reg, "ev", 8);
    define(f->a, "ev", 8);
    take_raw(f->a, 2, now_unit, now_unit + 600000, &live);
    assert_int_equal(claim(f->a, f->reg, 1), IDMINT_EINVAL);
    assert_non_null(strstr(idmint_errmsg(), "is held"));
    assert_int_equal(idmint_registry_get(f->reg, 1, &(idmint_region_record){0}), IDMINT_ENOTFOUND);

    define(f->b, "ev", 8);
    take_raw(f->b, 2, now_unit - 5000, now_unit - 1000, &old);
    assert_int_equal(claim(f->b, f->reg, 1), 0);
    assert_int_equal(idmint__store_open(f->b, NULL, &st), 0);
    assert_int_equal(idmint__store_lease_renew(st, "ev", &old, now_unit + 1000, 2),
                     IDMINT_ELEASELOST);
    idmint__store_close(st);
    (void)live;
}

static void test_authority_region__a_stale_record_write_is_refused(void **state)
{
    struct fx *f = *state;
    struct store *st = NULL;
    char value[STORE_RECORD_MAX];
    uint64_t version = 0;

    assert_int_equal(idmint__store_open(f->reg, NULL, &st), 0);
    assert_int_equal(idmint__store_record_put(st, "k", "one", 0, "t", "test", 1), 0);
    assert_int_equal(idmint__store_record_put(st, "k", "two", 0, "t", "test", 2), IDMINT_ECONFLICT);
    assert_int_equal(idmint__store_record_get(st, "k", value, sizeof(value), &version), 0);
    assert_string_equal(value, "one");
    assert_int_equal(idmint__store_record_put(st, "k", "three", version + 1, "t", "test", 3),
                     IDMINT_ECONFLICT);
    assert_int_equal(idmint__store_record_put(st, "k", "four", version, "t", "test", 4), 0);
    assert_int_equal(idmint__store_record_get(st, "k", value, sizeof(value), &version), 0);
    assert_string_equal(value, "four");
    assert_int_equal(idmint__store_record_put(st, "K!", "x", 0, "t", "test", 5), IDMINT_EINVAL);
    assert_int_equal(idmint__store_record_put(st, "k2", "a\nb", 0, "t", "test", 5), IDMINT_EINVAL);
    assert_int_equal(idmint__store_record_get(st, "k2", value, sizeof(value), &version),
                     IDMINT_ENOTFOUND);
    idmint__store_close(st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_authority_region__claim_binds_and_refuses_a_second,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_authority_region__a_differing_namespace_is_refused,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_authority_region__release_hands_on_above_the_floor,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_authority_region__a_claim_ends_earlier_leases, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_authority_region__a_stale_record_write_is_refused,
                                        setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
