/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The store contract suite: one set of tests for every backend, chosen by
 * $IDMINT_TEST_STORE ("sqlite", "postgres", "etcd"). It talks only through the
 * idmint__store_* wrappers. Each test uses namespaces with a fresh prefix, so
 * a shared server database needs no cleaning between runs.
 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "idmint.h"
#include "internal.h"
#include "store.h"
#include "testsupport.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NOW_MS   INT64_C(1780000000000)
#define ACTOR    "test-actor"
#define HOLDER_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define HOLDER_B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define HOLDER_C "cccccccccccccccccccccccccccccccc"

struct fx {
    char *dir; /* sqlite: the temp folder; NULL for server backends */
    char *url; /* malloc'd */
    struct store *st;
    char prefix[24]; /* fresh per test: namespace names start with it */
};

/* ==== backends: adding one is one setup function and one row ==== */

static int sqlite_setup(struct fx *f)
{
    f->dir = ts_tempdir();
    if (f->dir == NULL)
        return -1;
    f->url = ts_sqlite_url(f->dir, "store.db");
    return f->url == NULL ? -1 : 0;
}

static int postgres_setup(struct fx *f)
{
    /* A missing server is a failure, never a skip. */
    f->url = ts_pg_url();
    if (f->url == NULL) {
        fprintf(stderr, "no PostgreSQL: set IDMINT_TEST_PG_URL, or IDMINT_PG_ENV to the file "
                        "tests/support/pg-start.sh writes\n");
        return -1;
    }
    return 0;
}

static int etcd_setup(struct fx *f)
{
    /* A missing cluster is a failure, never a skip. */
    f->url = ts_etcd_url();
    if (f->url == NULL) {
        fprintf(stderr, "no etcd: set IDMINT_TEST_ETCD_URL, or IDMINT_ETCD_ENV to the file "
                        "tests/support/etcd-start.sh writes\n");
        return -1;
    }
    return 0;
}

struct backend {
    const char *name;
    int (*setup)(struct fx *f);
};

static const struct backend backends[] = {
    {"sqlite", sqlite_setup},
    {"postgres", postgres_setup},
    {"etcd", etcd_setup},
};

static const struct backend *backend_chosen(void)
{
    const char *name = getenv("IDMINT_TEST_STORE");
    size_t i;

    if (name == NULL || name[0] == '\0')
        name = "sqlite";
    for (i = 0; i < sizeof(backends) / sizeof(backends[0]); i++)
        if (strcmp(backends[i].name, name) == 0)
            return &backends[i];
    return NULL;
}

static int setup(void **state)
{
    static unsigned counter;
    const struct backend *b = backend_chosen();
    struct fx *f = calloc(1, sizeof(*f));

    if (f == NULL || b == NULL || b->setup(f) != 0)
        goto fail;
    snprintf(f->prefix, sizeof(f->prefix), "t%lx-%x-%u", (unsigned long)time(NULL),
             (unsigned)getpid(), counter++);
    if (idmint__store_open(f->url, NULL, &f->st) != 0) {
        fprintf(stderr, "cannot open %s: %s\n", f->url, idmint_errmsg());
        goto fail;
    }
    *state = f;
    return 0;
fail:
    if (f != NULL) {
        ts_rmtree(f->dir);
        free(f->url);
        free(f);
    }
    return -1;
}

static int teardown(void **state)
{
    struct fx *f = *state;

    idmint__store_close(f->st);
    ts_rmtree(f->dir);
    free(f->url);
    free(f);
    return 0;
}

/* ==== helpers ==== */

static void ns_name(const struct fx *f, const char *stem, char out[64])
{
    snprintf(out, 64, "%s-%s", f->prefix, stem);
}

static void make_snowflake(struct fx *f, const char *ns, unsigned region_bits, unsigned worker_bits)
{
    idmint_ns_info i;

    memset(&i, 0, sizeof(i));
    snprintf(i.name, sizeof(i.name), "%s", ns);
    i.kind = IDMINT_KIND_SNOWFLAKE;
    i.layout.time_bits = 41;
    i.layout.region_bits = (uint8_t)region_bits;
    i.layout.worker_bits = (uint8_t)worker_bits;
    i.layout.sequence_bits = 12;
    i.layout.unit_ms = 1;
    i.layout.epoch_ms = IDMINT_DEFAULT_EPOCH_MS;
    assert_int_equal(idmint__store_ns_create(f->st, &i, ACTOR, NOW_MS), 0);
}

static void make_range(struct fx *f, const char *ns, uint64_t next, uint64_t max,
                       uint32_t max_block)
{
    idmint_ns_info i;

    memset(&i, 0, sizeof(i));
    snprintf(i.name, sizeof(i.name), "%s", ns);
    i.kind = IDMINT_KIND_RANGE;
    i.next_value = next;
    i.max_value = max;
    i.block = max_block < 100 ? max_block : 100;
    i.max_block = max_block;
    assert_int_equal(idmint__store_ns_create(f->st, &i, ACTOR, NOW_MS), 0);
}

static void lease_init(struct idmint__lease *l, uint32_t region, const char *holder)
{
    memset(l, 0, sizeof(*l));
    l->region = region;
    snprintf(l->holder, sizeof(l->holder), "%s", holder);
}

/* Audit records of @p ns only (other tests may share a server database). */
static size_t audit_of(struct fx *f, const char *ns, idmint_audit_entry *out, size_t max)
{
    idmint_audit_entry *all = NULL;
    size_t n = 0, i, k = 0;

    assert_int_equal(idmint__store_audit_list(f->st, 0, SIZE_MAX, &all, &n), 0);
    for (i = 0; i < n; i++) {
        if (strcmp(all[i].ns, ns) != 0)
            continue;
        if (k < max)
            out[k] = all[i];
        k++;
    }
    free(all);
    return k;
}

/* Everything a store call could change about one namespace. */
struct snap {
    int has_ns;
    idmint_ns_info ns;
    idmint_worker_info workers[16];
    size_t n_workers;
    size_t n_audit;
};

static void snap_take(struct fx *f, const char *ns, struct snap *s)
{
    idmint_worker_info *w = NULL;
    idmint_audit_entry a[1];
    int rc;

    memset(s, 0, sizeof(*s));
    rc = idmint__store_ns_get(f->st, ns, &s->ns);
    assert_true(rc == 0 || rc == IDMINT_ENOTFOUND);
    s->has_ns = rc == 0;
    assert_int_equal(idmint__store_lease_list(f->st, ns, &w, &s->n_workers), 0);
    assert_true(s->n_workers <= 16);
    if (s->n_workers > 0)
        memcpy(s->workers, w, s->n_workers * sizeof(*w));
    free(w);
    s->n_audit = audit_of(f, ns, a, 0);
}

static void snap_same(struct fx *f, const char *ns, const struct snap *before)
{
    struct snap now;

    snap_take(f, ns, &now);
    assert_int_equal(now.has_ns, before->has_ns);
    assert_memory_equal(&now.ns, &before->ns, sizeof(now.ns));
    assert_int_equal(now.n_workers, before->n_workers);
    assert_memory_equal(now.workers, before->workers, sizeof(now.workers));
    assert_int_equal(now.n_audit, before->n_audit);
}

/* ==== namespaces ==== */

static void test_store__ns_create_then_get_returns_every_field(void **state)
{
    struct fx *f = *state;
    char sf[64], rg[64];
    idmint_ns_info got;

    ns_name(f, "sf", sf);
    ns_name(f, "rg", rg);
    make_snowflake(f, sf, 2, 8);
    make_range(f, rg, 5, 1000, 50);

    assert_int_equal(idmint__store_ns_get(f->st, sf, &got), 0);
    assert_string_equal(got.name, sf);
    assert_int_equal(got.kind, IDMINT_KIND_SNOWFLAKE);
    assert_int_equal(got.layout.time_bits, 41);
    assert_int_equal(got.layout.region_bits, 2);
    assert_int_equal(got.layout.worker_bits, 8);
    assert_int_equal(got.layout.sequence_bits, 12);
    assert_int_equal(got.layout.unit_ms, 1);
    assert_int_equal(got.layout.epoch_ms, IDMINT_DEFAULT_EPOCH_MS);
    assert_int_equal(got.is_disabled, 0);
    assert_int_equal(got.created_ms, NOW_MS);

    assert_int_equal(idmint__store_ns_get(f->st, rg, &got), 0);
    assert_int_equal(got.kind, IDMINT_KIND_RANGE);
    assert_int_equal(got.next_value, 5);
    assert_int_equal(got.max_value, 1000);
    assert_int_equal(got.block, 50);
    assert_int_equal(got.max_block, 50);
}

static void test_store__ns_values_up_to_2_63_minus_1_survive(void **state)
{
    struct fx *f = *state;
    char ns[64];
    idmint_ns_info got;

    ns_name(f, "big", ns);
    make_range(f, ns, IDMINT_MAX_VALUE - 10, IDMINT_MAX_VALUE, 100);
    assert_int_equal(idmint__store_ns_get(f->st, ns, &got), 0);
    assert_true(got.next_value == IDMINT_MAX_VALUE - 10);
    assert_true(got.max_value == IDMINT_MAX_VALUE);
}

static void test_store__ns_create_twice_is_a_conflict_and_keeps_the_first(void **state)
{
    struct fx *f = *state;
    char ns[64];
    idmint_ns_info again;
    struct snap before;

    ns_name(f, "dup", ns);
    make_snowflake(f, ns, 0, 10);
    snap_take(f, ns, &before);
    memset(&again, 0, sizeof(again));
    snprintf(again.name, sizeof(again.name), "%s", ns);
    again.kind = IDMINT_KIND_RANGE;
    again.next_value = 1;
    again.max_value = 10;
    again.block = 1;
    again.max_block = 1;
    assert_int_equal(idmint__store_ns_create(f->st, &again, ACTOR, NOW_MS + 1), IDMINT_ECONFLICT);
    assert_non_null(strstr(idmint_errmsg(), ns));
    snap_same(f, ns, &before);
}

static void test_store__ns_get_of_unknown_name_is_not_found(void **state)
{
    struct fx *f = *state;
    char ns[64];
    idmint_ns_info got;

    ns_name(f, "none", ns);
    memset(&got, 0x5a, sizeof(got));
    assert_int_equal(idmint__store_ns_get(f->st, ns, &got), IDMINT_ENOTFOUND);
    assert_int_equal(got.kind, 0x5a5a5a5a); /* untouched */
}

static void test_store__ns_list_returns_every_namespace_by_name(void **state)
{
    struct fx *f = *state;
    char a[64], b[64], c[64];
    idmint_ns_info *list = NULL;
    size_t n = 0, i, seen = 0;
    const char *last = "";

    ns_name(f, "c", c);
    ns_name(f, "a", a);
    ns_name(f, "b", b);
    make_snowflake(f, c, 0, 10);
    make_range(f, a, 1, 100, 10);
    make_snowflake(f, b, 0, 10);
    assert_int_equal(idmint__store_ns_list(f->st, &list, &n), 0);
    for (i = 0; i < n; i++) {
        assert_true(strcmp(last, list[i].name) < 0);
        last = list[i].name;
        if (strncmp(list[i].name, f->prefix, strlen(f->prefix)) == 0) {
            const char *want = seen == 0 ? a : seen == 1 ? b : c;

            assert_string_equal(list[i].name, want);
            seen++;
        }
    }
    assert_int_equal(seen, 3);
    free(list);
}

static void test_store__ns_disable_and_enable_are_audited(void **state)
{
    struct fx *f = *state;
    char ns[64];
    idmint_ns_info got;
    idmint_audit_entry a[4];

    ns_name(f, "onoff", ns);
    make_range(f, ns, 1, 100, 10);
    assert_int_equal(idmint__store_ns_set_disabled(f->st, ns, 1, "admin-1", NOW_MS + 5), 0);
    assert_int_equal(idmint__store_ns_get(f->st, ns, &got), 0);
    assert_int_equal(got.is_disabled, 1);
    assert_int_equal(idmint__store_ns_set_disabled(f->st, ns, 0, "admin-2", NOW_MS + 9), 0);
    assert_int_equal(idmint__store_ns_get(f->st, ns, &got), 0);
    assert_int_equal(got.is_disabled, 0);

    assert_int_equal(audit_of(f, ns, a, 4), 3);
    assert_string_equal(a[0].action, "ns.create");
    assert_string_equal(a[0].actor, ACTOR);
    assert_int_equal(a[0].at_ms, NOW_MS);
    assert_non_null(strstr(a[0].detail, "range"));
    assert_string_equal(a[1].action, "ns.disable");
    assert_string_equal(a[1].actor, "admin-1");
    assert_int_equal(a[1].at_ms, NOW_MS + 5);
    assert_string_equal(a[2].action, "ns.enable");
    assert_string_equal(a[2].actor, "admin-2");
    assert_true(a[0].seq < a[1].seq && a[1].seq < a[2].seq);
}

static void test_store__ns_disable_of_unknown_name_is_not_found_and_not_audited(void **state)
{
    struct fx *f = *state;
    char ns[64];
    struct snap before;

    ns_name(f, "ghost", ns);
    snap_take(f, ns, &before);
    assert_int_equal(idmint__store_ns_set_disabled(f->st, ns, 1, ACTOR, NOW_MS), IDMINT_ENOTFOUND);
    snap_same(f, ns, &before);
}

static void test_store__wrappers_refuse_bad_arguments(void **state)
{
    struct fx *f = *state;
    char ns[64];
    struct idmint__lease l = {0};
    struct idmint__range r = {.start = 7, .end = 8};
    idmint_ns_info got;
    struct snap before;

    ns_name(f, "args", ns);
    make_range(f, ns, 1, 100, 10);
    snap_take(f, ns, &before);
    assert_int_equal(idmint__store_ns_get(f->st, "Bad", &got), IDMINT_EINVAL);
    assert_int_equal(idmint__store_ns_get(NULL, ns, &got), IDMINT_EINVAL);
    assert_int_equal(idmint__store_ns_get(f->st, ns, NULL), IDMINT_EINVAL);
    assert_int_equal(idmint__store_range_reserve(f->st, ns, "inc", "r1", 0, NOW_MS, &r),
                     IDMINT_EINVAL);
    assert_int_equal(idmint__store_range_reserve(f->st, ns, "", "r1", 1, NOW_MS, &r),
                     IDMINT_EINVAL);
    assert_int_equal(idmint__store_range_reserve(f->st, ns, "inc", NULL, 1, NOW_MS, &r),
                     IDMINT_EINVAL);
    assert_int_equal(r.start, 7);
    lease_init(&l, 0, "");
    assert_int_equal(idmint__store_lease_take(f->st, ns, 8, 1, 2, &l, ACTOR, NOW_MS),
                     IDMINT_EINVAL);
    lease_init(&l, 0, HOLDER_A);
    assert_int_equal(idmint__store_lease_take(f->st, ns, 0, 1, 2, &l, ACTOR, NOW_MS),
                     IDMINT_EINVAL);
    assert_int_equal(idmint__store_lease_take(f->st, ns, 8, 1, UINT64_MAX, &l, ACTOR, NOW_MS),
                     IDMINT_EINVAL);
    assert_int_equal(l.generation, 0);
    snap_same(f, ns, &before);
}

static void test_store__open_refuses_unknown_scheme_and_empty_location(void **state)
{
    struct store *st = (struct store *)state; /* any non-NULL sentinel */

    assert_int_equal(idmint__store_open("foo:bar", NULL, &st), IDMINT_EINVAL);
    assert_non_null(strstr(idmint_errmsg(), "foo:bar"));
    assert_int_equal(idmint__store_open("sqlite:", NULL, &st), IDMINT_EINVAL);
    assert_int_equal(idmint__store_open("nocolon", NULL, &st), IDMINT_EINVAL);
    assert_ptr_equal(st, (struct store *)state);
    idmint__store_close(NULL);
}

/* ==== worker leases ==== */

static void test_store__lease_take_on_fresh_ns_gets_worker_0_without_fence(void **state)
{
    struct fx *f = *state;
    char ns[64];
    struct idmint__lease l = {0};
    idmint_worker_info *w = NULL;
    size_t n = 0;

    ns_name(f, "fresh", ns);
    make_snowflake(f, ns, 0, 3);
    lease_init(&l, 0, HOLDER_A);
    assert_int_equal(idmint__store_lease_take(f->st, ns, 8, 1000, 1600, &l, ACTOR, NOW_MS), 0);
    assert_int_equal(l.worker_id, 0);
    assert_int_equal(l.generation, 1);
    assert_int_equal(l.fence_found, 0);
    assert_int_equal(l.lease_until, 1600);
    assert_string_equal(l.holder, HOLDER_A);

    assert_int_equal(idmint__store_lease_list(f->st, ns, &w, &n), 0);
    assert_int_equal(n, 1);
    assert_string_equal(w[0].holder, HOLDER_A);
    assert_int_equal(w[0].generation, 1);
    assert_int_equal(w[0].lease_until, 1600);
    free(w);
}

static void test_store__lease_take_picks_the_lowest_free_id(void **state)
{
    struct fx *f = *state;
    char ns[64];
    struct idmint__lease l[3], m = {0};

    ns_name(f, "lowest", ns);
    make_snowflake(f, ns, 0, 3);
    for (int i = 0; i < 3; i++) {
        lease_init(&l[i], 0, i == 0 ? HOLDER_A : i == 1 ? HOLDER_B : HOLDER_C);
        assert_int_equal(idmint__store_lease_take(f->st, ns, 8, 1000, 1600, &l[i], ACTOR, NOW_MS),
                         0);
        assert_int_equal(l[i].worker_id, (uint32_t)i);
    }
    assert_int_equal(idmint__store_lease_release(f->st, ns, &l[1], 1200, ACTOR, NOW_MS), 0);
    assert_int_equal(idmint__store_lease_release(f->st, ns, &l[0], 1100, ACTOR, NOW_MS), 0);
    /* Both released ids are fenced until 1100 and 1200: at 1000 a new id
     * is better, since its taker need not wait. */
    lease_init(&m, 0, HOLDER_C);
    assert_int_equal(idmint__store_lease_take(f->st, ns, 8, 1000, 1600, &m, ACTOR, NOW_MS), 0);
    assert_int_equal(m.worker_id, 3);
    assert_int_equal(m.fence_found, 0);
    /* Once their E has passed, the lowest released id comes first. */
    lease_init(&m, 0, HOLDER_B);
    assert_int_equal(idmint__store_lease_take(f->st, ns, 8, 1300, 1900, &m, ACTOR, NOW_MS), 0);
    assert_int_equal(m.worker_id, 0);
    assert_int_equal(m.fence_found, 1100);
    lease_init(&m, 0, HOLDER_A);
    assert_int_equal(idmint__store_lease_take(f->st, ns, 8, 1300, 1900, &m, ACTOR, NOW_MS), 0);
    assert_int_equal(m.worker_id, 1);
    lease_init(&m, 0, HOLDER_A);
    assert_int_equal(idmint__store_lease_take(f->st, ns, 8, 1000, 1600, &m, ACTOR, NOW_MS), 0);
    assert_int_equal(m.worker_id, 4); /* a new row: nothing free below it */
}

static void test_store__lease_take_when_every_id_is_held_is_no_worker(void **state)
{
    struct fx *f = *state;
    char ns[64];
    struct idmint__lease l = {0}, keep = {0};
    struct snap before;

    ns_name(f, "full", ns);
    make_snowflake(f, ns, 0, 3);
    for (uint32_t i = 0; i < 8; i++) {
        lease_init(&l, 0, HOLDER_A);
        assert_int_equal(idmint__store_lease_take(f->st, ns, 8, 1000, 1600, &l, ACTOR, NOW_MS), 0);
        assert_int_equal(l.worker_id, i);
    }
    snap_take(f, ns, &before);
    lease_init(&l, 0, HOLDER_B);
    keep = l;
    assert_int_equal(idmint__store_lease_take(f->st, ns, 8, 1599, 2000, &l, ACTOR, NOW_MS),
                     IDMINT_ENOWORKER);
    assert_memory_equal(&l, &keep, sizeof(l));
    snap_same(f, ns, &before);
}

static void test_store__lease_take_of_an_expired_id_finds_its_fence(void **state)
{
    struct fx *f = *state;
    char ns[64];
    struct idmint__lease a = {0}, b = {0};

    ns_name(f, "expired", ns);
    make_snowflake(f, ns, 0, 3);
    lease_init(&a, 0, HOLDER_A);
    assert_int_equal(idmint__store_lease_take(f->st, ns, 1, 1000, 1600, &a, ACTOR, NOW_MS), 0);

    /* At E exactly the lease still holds: E must be strictly below now. */
    lease_init(&b, 0, HOLDER_B);
    assert_int_equal(idmint__store_lease_take(f->st, ns, 1, 1600, 2200, &b, ACTOR, NOW_MS),
                     IDMINT_ENOWORKER);
    assert_int_equal(idmint__store_lease_take(f->st, ns, 1, 1601, 2200, &b, ACTOR, NOW_MS), 0);
    assert_int_equal(b.worker_id, 0);
    assert_int_equal(b.fence_found, 1600);
    assert_int_equal(b.generation, 2);
    assert_int_equal(b.lease_until, 2200);

    /* A take never moves E back, whatever until it asks for. */
    lease_init(&a, 0, HOLDER_A);
    assert_int_equal(idmint__store_lease_take(f->st, ns, 1, 2201, 1000, &a, ACTOR, NOW_MS), 0);
    assert_int_equal(a.fence_found, 2200);
    assert_int_equal(a.lease_until, 2200);
    assert_int_equal(a.generation, 3);
}

static void test_store__lease_take_refuses_unknown_disabled_and_range_namespaces(void **state)
{
    struct fx *f = *state;
    char sf[64], rg[64], none[64];
    struct idmint__lease l = {0}, keep = {0};
    struct snap before;

    ns_name(f, "sf", sf);
    ns_name(f, "rg", rg);
    ns_name(f, "none", none);
    make_snowflake(f, sf, 0, 3);
    make_range(f, rg, 1, 100, 10);
    assert_int_equal(idmint__store_ns_set_disabled(f->st, sf, 1, ACTOR, NOW_MS), 0);
    lease_init(&l, 0, HOLDER_A);
    keep = l;

    snap_take(f, sf, &before);
    assert_int_equal(idmint__store_lease_take(f->st, sf, 8, 1, 2, &l, ACTOR, NOW_MS),
                     IDMINT_EDISABLED);
    snap_same(f, sf, &before);
    snap_take(f, rg, &before);
    assert_int_equal(idmint__store_lease_take(f->st, rg, 8, 1, 2, &l, ACTOR, NOW_MS),
                     IDMINT_EINVAL);
    snap_same(f, rg, &before);
    snap_take(f, none, &before);
    assert_int_equal(idmint__store_lease_take(f->st, none, 8, 1, 2, &l, ACTOR, NOW_MS),
                     IDMINT_ENOTFOUND);
    snap_same(f, none, &before);
    assert_memory_equal(&l, &keep, sizeof(l));
}

static void test_store__lease_renew_by_the_holder_extends_and_never_shortens(void **state)
{
    struct fx *f = *state;
    char ns[64];
    struct idmint__lease l = {0};

    ns_name(f, "renew", ns);
    make_snowflake(f, ns, 0, 3);
    lease_init(&l, 0, HOLDER_A);
    assert_int_equal(idmint__store_lease_take(f->st, ns, 8, 1000, 1600, &l, ACTOR, NOW_MS), 0);
    assert_int_equal(idmint__store_lease_renew(f->st, ns, &l, 2000, NOW_MS), 0);
    assert_int_equal(l.lease_until, 2000);
    assert_int_equal(idmint__store_lease_renew(f->st, ns, &l, 1800, NOW_MS), 0);
    assert_int_equal(l.lease_until, 2000);
    assert_int_equal(l.generation, 1);
}

static void test_store__lease_renew_with_a_stale_generation_or_holder_is_lost(void **state)
{
    struct fx *f = *state;
    char ns[64];
    struct idmint__lease l = {0}, stale = {0}, keep = {0};
    struct snap before;

    ns_name(f, "stale", ns);
    make_snowflake(f, ns, 0, 3);
    lease_init(&l, 0, HOLDER_A);
    assert_int_equal(idmint__store_lease_take(f->st, ns, 8, 1000, 1600, &l, ACTOR, NOW_MS), 0);
    snap_take(f, ns, &before);

    stale = l;
    stale.generation = l.generation + 1;
    keep = stale;
    assert_int_equal(idmint__store_lease_renew(f->st, ns, &stale, 5000, NOW_MS), IDMINT_ELEASELOST);
    assert_memory_equal(&stale, &keep, sizeof(stale));
    snap_same(f, ns, &before);

    stale = l;
    snprintf(stale.holder, sizeof(stale.holder), "%s", HOLDER_B);
    keep = stale;
    assert_int_equal(idmint__store_lease_renew(f->st, ns, &stale, 5000, NOW_MS), IDMINT_ELEASELOST);
    assert_memory_equal(&stale, &keep, sizeof(stale));
    snap_same(f, ns, &before);
}

static void test_store__lease_release_sets_e_to_final_and_frees_the_id(void **state)
{
    struct fx *f = *state;
    char ns[64];
    struct idmint__lease a = {0}, b = {0};
    idmint_worker_info *w = NULL;
    size_t n = 0;

    ns_name(f, "release", ns);
    make_snowflake(f, ns, 0, 3);
    lease_init(&a, 0, HOLDER_A);
    assert_int_equal(idmint__store_lease_take(f->st, ns, 1, 1000, 1600, &a, ACTOR, NOW_MS), 0);
    /* The holder stopped minting at 1199: E may come down to 1200. */
    assert_int_equal(idmint__store_lease_release(f->st, ns, &a, 1200, ACTOR, NOW_MS), 0);
    assert_int_equal(idmint__store_lease_list(f->st, ns, &w, &n), 0);
    assert_int_equal(n, 1);
    assert_string_equal(w[0].holder, "");
    assert_int_equal(w[0].generation, 1);
    assert_int_equal(w[0].lease_until, 1200);
    free(w);

    /* Free at once, long before E; the next taker learns E. */
    lease_init(&b, 0, HOLDER_B);
    assert_int_equal(idmint__store_lease_take(f->st, ns, 1, 1001, 1700, &b, ACTOR, NOW_MS), 0);
    assert_int_equal(b.worker_id, 0);
    assert_int_equal(b.fence_found, 1200);
    assert_int_equal(b.generation, 2);

    /* final above the holder's own E: E stays at its own E, never beyond. */
    assert_int_equal(idmint__store_lease_release(f->st, ns, &b, 1900, ACTOR, NOW_MS), 0);
    assert_int_equal(b.lease_until, 1700);
    lease_init(&a, 0, HOLDER_A);
    assert_int_equal(idmint__store_lease_take(f->st, ns, 1, 1002, 1700, &a, ACTOR, NOW_MS), 0);
    assert_int_equal(a.fence_found, 1700);
    assert_int_equal(a.lease_until, 1700);
}

static void test_store__lease_release_below_the_fence_keeps_the_fence(void **state)
{
    struct fx *f = *state;
    char ns[64];
    struct idmint__lease a = {0}, b = {0}, c = {0};

    ns_name(f, "relfence", ns);
    make_snowflake(f, ns, 0, 3);
    lease_init(&a, 0, HOLDER_A);
    assert_int_equal(idmint__store_lease_take(f->st, ns, 1, 1000, 1600, &a, ACTOR, NOW_MS), 0);
    assert_int_equal(idmint__store_lease_release(f->st, ns, &a, 1500, ACTOR, NOW_MS), 0);
    /* B found E 1500: A may have minted anything below it. */
    lease_init(&b, 0, HOLDER_B);
    assert_int_equal(idmint__store_lease_take(f->st, ns, 1, 1001, 1700, &b, ACTOR, NOW_MS), 0);
    assert_int_equal(b.fence_found, 1500);
    /* A forged (or buggy) final time of 0 cannot lower E below B's fence. */
    assert_int_equal(idmint__store_lease_release(f->st, ns, &b, 0, ACTOR, NOW_MS), 0);
    assert_int_equal(b.lease_until, 1500);
    lease_init(&c, 0, HOLDER_C);
    assert_int_equal(idmint__store_lease_take(f->st, ns, 1, 1002, 1700, &c, ACTOR, NOW_MS), 0);
    assert_int_equal(c.fence_found, 1500);
}

static void test_store__lease_release_by_another_holder_changes_nothing(void **state)
{
    struct fx *f = *state;
    char ns[64];
    struct idmint__lease a = {0}, forged = {0};
    struct snap before;

    ns_name(f, "relforge", ns);
    make_snowflake(f, ns, 0, 3);
    lease_init(&a, 0, HOLDER_A);
    assert_int_equal(idmint__store_lease_take(f->st, ns, 8, 1000, 1600, &a, ACTOR, NOW_MS), 0);
    snap_take(f, ns, &before);
    /* Right worker id and generation (a listing shows both), wrong secret. */
    forged = a;
    memcpy(forged.holder, HOLDER_B, sizeof(forged.holder));
    assert_int_equal(idmint__store_lease_release(f->st, ns, &forged, 0, ACTOR, NOW_MS),
                     IDMINT_ELEASELOST);
    assert_int_equal(idmint__store_lease_renew(f->st, ns, &forged, 9000, NOW_MS),
                     IDMINT_ELEASELOST);
    snap_same(f, ns, &before);
    /* The real holder still renews. */
    assert_int_equal(idmint__store_lease_renew(f->st, ns, &a, 1700, NOW_MS), 0);
    assert_int_equal(a.lease_until, 1700);
}

static void test_store__lease_renew_in_a_disabled_namespace_is_refused(void **state)
{
    struct fx *f = *state;
    char ns[64];
    struct idmint__lease a = {0};
    struct snap before;

    ns_name(f, "renewdis", ns);
    make_snowflake(f, ns, 0, 3);
    lease_init(&a, 0, HOLDER_A);
    assert_int_equal(idmint__store_lease_take(f->st, ns, 8, 1000, 1600, &a, ACTOR, NOW_MS), 0);
    assert_int_equal(idmint__store_ns_set_disabled(f->st, ns, 1, ACTOR, NOW_MS), 0);
    snap_take(f, ns, &before);
    assert_int_equal(idmint__store_lease_renew(f->st, ns, &a, 2000, NOW_MS), IDMINT_EDISABLED);
    snap_same(f, ns, &before);
    /* Release still works, so a closing holder frees its id. */
    assert_int_equal(idmint__store_ns_set_disabled(f->st, ns, 0, ACTOR, NOW_MS), 0);
    assert_int_equal(idmint__store_lease_renew(f->st, ns, &a, 2000, NOW_MS), 0);
    assert_int_equal(a.lease_until, 2000);
    assert_int_equal(idmint__store_ns_set_disabled(f->st, ns, 1, ACTOR, NOW_MS), 0);
    assert_int_equal(idmint__store_lease_release(f->st, ns, &a, 1100, ACTOR, NOW_MS), 0);
}

static void test_store__take_and_release_are_audited_without_the_holder_secret(void **state)
{
    struct fx *f = *state;
    char ns[64];
    struct idmint__lease a = {0};
    idmint_audit_entry au[4];
    size_t i;

    ns_name(f, "leaseaudit", ns);
    make_snowflake(f, ns, 0, 3);
    lease_init(&a, 0, HOLDER_A);
    assert_int_equal(idmint__store_lease_take(f->st, ns, 8, 1000, 1600, &a, "token:gen", NOW_MS),
                     0);
    assert_int_equal(idmint__store_lease_release(f->st, ns, &a, 1200, "token:gen", NOW_MS + 1), 0);
    assert_int_equal(audit_of(f, ns, au, 4), 3);
    assert_string_equal(au[1].action, "worker.take");
    assert_string_equal(au[2].action, "worker.release");
    for (i = 1; i < 3; i++) {
        assert_string_equal(au[i].actor, "token:gen");
        assert_non_null(strstr(au[i].detail, "aaaaaaaa"));
        assert_null(strstr(au[i].detail, HOLDER_A));
    }
    assert_int_equal(au[2].at_ms, NOW_MS + 1);
    assert_non_null(strstr(au[2].detail, "e_after=1200"));
}

static void test_store__force_release_pulls_a_runaway_e_back(void **state)
{
    struct fx *f = *state;
    char ns[64];
    struct idmint__lease a = {0}, b = {0};
    idmint_worker_info *w = NULL;
    size_t n = 0;

    ns_name(f, "forcecap", ns);
    make_snowflake(f, ns, 0, 3);
    lease_init(&a, 0, HOLDER_A);
    /* A holder whose clock ran far ahead: E lies years away. */
    assert_int_equal(idmint__store_lease_take(f->st, ns, 1, 1000, 900000000, &a, ACTOR, NOW_MS), 0);
    assert_int_equal(
        idmint__store_lease_force_release(f->st, ns, 0, a.worker_id, 5000, "admin", NOW_MS), 0);
    assert_int_equal(idmint__store_lease_list(f->st, ns, &w, &n), 0);
    assert_int_equal(n, 1);
    assert_int_equal(w[0].lease_until, 5000);
    free(w);
    /* The next taker waits only until the capped E, and can release to it. */
    lease_init(&b, 0, HOLDER_B);
    assert_int_equal(idmint__store_lease_take(f->st, ns, 1, 5001, 5600, &b, ACTOR, NOW_MS), 0);
    assert_int_equal(b.fence_found, 5000);
    assert_int_equal(idmint__store_lease_release(f->st, ns, &b, 0, ACTOR, NOW_MS), 0);
    assert_int_equal(b.lease_until, 5000);
    /* A cap above E keeps E. */
    lease_init(&a, 0, HOLDER_A);
    assert_int_equal(idmint__store_lease_take(f->st, ns, 1, 5001, 5600, &a, ACTOR, NOW_MS), 0);
    assert_int_equal(
        idmint__store_lease_force_release(f->st, ns, 0, a.worker_id, 9999, "admin", NOW_MS), 0);
    assert_int_equal(idmint__store_lease_list(f->st, ns, &w, &n), 0);
    assert_int_equal(w[0].lease_until, 5600);
    free(w);
}

static void test_store__lease_release_by_a_stale_holder_is_lost(void **state)
{
    struct fx *f = *state;
    char ns[64];
    struct idmint__lease a = {0}, b = {0};
    struct snap before;

    ns_name(f, "relstale", ns);
    make_snowflake(f, ns, 0, 3);
    lease_init(&a, 0, HOLDER_A);
    assert_int_equal(idmint__store_lease_take(f->st, ns, 1, 1000, 1600, &a, ACTOR, NOW_MS), 0);
    lease_init(&b, 0, HOLDER_B);
    assert_int_equal(idmint__store_lease_take(f->st, ns, 1, 1601, 2200, &b, ACTOR, NOW_MS), 0);
    snap_take(f, ns, &before);
    assert_int_equal(idmint__store_lease_release(f->st, ns, &a, 9000, ACTOR, NOW_MS),
                     IDMINT_ELEASELOST);
    snap_same(f, ns, &before);
}

static void test_store__force_release_makes_the_old_holder_lose_its_lease(void **state)
{
    struct fx *f = *state;
    char ns[64];
    struct idmint__lease a = {0}, b = {0};
    struct snap before;
    idmint_worker_info *w = NULL;
    idmint_audit_entry au[4];
    size_t n = 0;

    ns_name(f, "force", ns);
    make_snowflake(f, ns, 1, 3);
    lease_init(&a, 1, HOLDER_A);
    assert_int_equal(idmint__store_lease_take(f->st, ns, 8, 1000, 1600, &a, ACTOR, NOW_MS), 0);
    assert_int_equal(idmint__store_lease_force_release(f->st, ns, 1, a.worker_id, UINT64_MAX >> 1,
                                                       "admin", NOW_MS + 3),
                     0);
    assert_int_equal(idmint__store_lease_list(f->st, ns, &w, &n), 0);
    assert_int_equal(n, 1);
    assert_string_equal(w[0].holder, "");
    assert_int_equal(w[0].generation, 2);
    assert_int_equal(w[0].lease_until, 1600);
    free(w);

    snap_take(f, ns, &before);
    assert_int_equal(idmint__store_lease_renew(f->st, ns, &a, 3000, NOW_MS), IDMINT_ELEASELOST);
    snap_same(f, ns, &before);

    assert_int_equal(audit_of(f, ns, au, 4), 3);
    assert_string_equal(au[2].action, "worker.force_release");
    assert_string_equal(au[2].actor, "admin");
    assert_int_equal(au[2].at_ms, NOW_MS + 3);
    assert_non_null(strstr(au[2].detail, "aaaaaaaa"));
    assert_null(strstr(au[2].detail, HOLDER_A));

    /* The next taker of that id (the only one left) still mints only after E. */
    lease_init(&b, 1, HOLDER_B);
    assert_int_equal(idmint__store_lease_take(f->st, ns, 1, 1001, 1700, &b, ACTOR, NOW_MS), 0);
    assert_int_equal(b.worker_id, a.worker_id);
    assert_int_equal(b.fence_found, 1600);
    assert_int_equal(b.generation, 3);
}

static void test_store__force_release_of_an_unknown_row_is_not_found(void **state)
{
    struct fx *f = *state;
    char ns[64];
    struct snap before;

    ns_name(f, "forcenone", ns);
    make_snowflake(f, ns, 0, 3);
    snap_take(f, ns, &before);
    assert_int_equal(
        idmint__store_lease_force_release(f->st, ns, 0, 5, UINT64_MAX >> 1, ACTOR, NOW_MS),
        IDMINT_ENOTFOUND);
    snap_same(f, ns, &before);
}

static void test_store__lease_regions_are_independent(void **state)
{
    struct fx *f = *state;
    char ns[64];
    struct idmint__lease r0 = {0}, r1 = {0}, r2 = {0};

    ns_name(f, "regions", ns);
    make_snowflake(f, ns, 2, 1);
    lease_init(&r0, 0, HOLDER_A);
    assert_int_equal(idmint__store_lease_take(f->st, ns, 2, 1000, 1600, &r0, ACTOR, NOW_MS), 0);
    lease_init(&r1, 1, HOLDER_B);
    assert_int_equal(idmint__store_lease_take(f->st, ns, 2, 1000, 1600, &r1, ACTOR, NOW_MS), 0);
    assert_int_equal(r0.worker_id, 0);
    assert_int_equal(r1.worker_id, 0);
    assert_int_equal(r1.region, 1);
    assert_int_equal(r1.fence_found, 0);
    lease_init(&r2, 0, HOLDER_C);
    assert_int_equal(idmint__store_lease_take(f->st, ns, 2, 1000, 1600, &r2, ACTOR, NOW_MS), 0);
    assert_int_equal(r2.worker_id, 1);
    lease_init(&r2, 0, HOLDER_C);
    assert_int_equal(idmint__store_lease_take(f->st, ns, 2, 1000, 1600, &r2, ACTOR, NOW_MS),
                     IDMINT_ENOWORKER);
    lease_init(&r2, 1, HOLDER_C);
    assert_int_equal(idmint__store_lease_take(f->st, ns, 2, 1000, 1600, &r2, ACTOR, NOW_MS), 0);
    assert_int_equal(r2.worker_id, 1);
    /* Releasing in region 1 leaves region 0 held. */
    assert_int_equal(idmint__store_lease_release(f->st, ns, &r1, 1000, ACTOR, NOW_MS), 0);
    lease_init(&r2, 0, HOLDER_C);
    assert_int_equal(idmint__store_lease_take(f->st, ns, 2, 1000, 1600, &r2, ACTOR, NOW_MS),
                     IDMINT_ENOWORKER);
}

/* ==== ranges ==== */

static void test_store__range_sequential_reservations_do_not_overlap(void **state)
{
    struct fx *f = *state;
    char ns[64], req[32];
    struct idmint__range r = {0};
    uint64_t expect = 10;
    idmint_ns_info got;

    ns_name(f, "seq", ns);
    make_range(f, ns, 10, 1000000, 1000);
    for (unsigned i = 1; i <= 20; i++) {
        snprintf(req, sizeof(req), "r%u", i);
        assert_int_equal(idmint__store_range_reserve(f->st, ns, "inc-1", req, i * 7, NOW_MS, &r),
                         0);
        assert_int_equal(r.start, expect);
        assert_int_equal(r.end, expect + i * 7);
        expect = r.end;
    }
    assert_int_equal(idmint__store_ns_get(f->st, ns, &got), 0);
    assert_int_equal(got.next_value, expect);
}

static void test_store__range_replay_of_a_request_returns_the_saved_range(void **state)
{
    struct fx *f = *state;
    char ns[64];
    struct idmint__range a = {0}, b = {0}, again = {0};
    struct snap before;

    ns_name(f, "replay", ns);
    make_range(f, ns, 1, 1000, 100);
    assert_int_equal(idmint__store_range_reserve(f->st, ns, "inc", "req-1", 10, NOW_MS, &a), 0);
    assert_int_equal(idmint__store_range_reserve(f->st, ns, "inc", "req-2", 10, NOW_MS, &b), 0);
    snap_take(f, ns, &before);
    assert_int_equal(idmint__store_range_reserve(f->st, ns, "inc", "req-1", 10, NOW_MS, &again), 0);
    assert_int_equal(again.start, a.start);
    assert_int_equal(again.end, a.end);
    snap_same(f, ns, &before);
    /* Another incarnation with the same request id is a new request. */
    assert_int_equal(idmint__store_range_reserve(f->st, ns, "other", "req-1", 10, NOW_MS, &again),
                     0);
    assert_int_equal(again.start, b.end);
}

static void test_store__range_replay_with_another_count_is_a_conflict(void **state)
{
    struct fx *f = *state;
    char ns[64];
    struct idmint__range a = {0}, r = {.start = 3, .end = 4};
    struct snap before;

    ns_name(f, "conflict", ns);
    make_range(f, ns, 1, 1000, 100);
    assert_int_equal(idmint__store_range_reserve(f->st, ns, "inc", "req-1", 10, NOW_MS, &a), 0);
    snap_take(f, ns, &before);
    assert_int_equal(idmint__store_range_reserve(f->st, ns, "inc", "req-1", 11, NOW_MS, &r),
                     IDMINT_ECONFLICT);
    assert_int_equal(r.start, 3);
    assert_int_equal(r.end, 4);
    snap_same(f, ns, &before);
}

static void test_store__range_count_above_max_block_is_invalid(void **state)
{
    struct fx *f = *state;
    char ns[64];
    struct idmint__range r = {.start = 3, .end = 4};
    struct snap before;

    ns_name(f, "maxblock", ns);
    make_range(f, ns, 1, 1000, 100);
    snap_take(f, ns, &before);
    assert_int_equal(idmint__store_range_reserve(f->st, ns, "inc", "req-1", 101, NOW_MS, &r),
                     IDMINT_EINVAL);
    assert_int_equal(r.start, 3);
    snap_same(f, ns, &before);
    /* The refused request id was not recorded: it may be used again. */
    assert_int_equal(idmint__store_range_reserve(f->st, ns, "inc", "req-1", 100, NOW_MS, &r), 0);
    assert_int_equal(r.start, 1);
    assert_int_equal(r.end, 101);
}

static void test_store__range_is_cut_at_max_value_then_exhausted(void **state)
{
    struct fx *f = *state;
    char ns[64];
    struct idmint__range r = {0}, keep = {0};
    struct snap before;

    ns_name(f, "cut", ns);
    make_range(f, ns, IDMINT_MAX_VALUE - 14, IDMINT_MAX_VALUE, 100);
    assert_int_equal(idmint__store_range_reserve(f->st, ns, "inc", "a", 10, NOW_MS, &r), 0);
    assert_true(r.start == IDMINT_MAX_VALUE - 14 && r.end == IDMINT_MAX_VALUE - 4);
    assert_int_equal(idmint__store_range_reserve(f->st, ns, "inc", "b", 10, NOW_MS, &r), 0);
    assert_true(r.start == IDMINT_MAX_VALUE - 4);
    assert_true(r.end == IDMINT_MAX_VALUE + 1); /* half-open: max_value itself is issued */

    snap_take(f, ns, &before);
    assert_true(before.ns.next_value == IDMINT_MAX_VALUE + 1);
    keep = r;
    assert_int_equal(idmint__store_range_reserve(f->st, ns, "inc", "c", 1, NOW_MS, &r),
                     IDMINT_EEXHAUSTED);
    assert_memory_equal(&r, &keep, sizeof(r));
    snap_same(f, ns, &before);
    /* A replay of an answered request still works after exhaustion. */
    assert_int_equal(idmint__store_range_reserve(f->st, ns, "inc", "b", 10, NOW_MS, &r), 0);
    assert_true(r.start == IDMINT_MAX_VALUE - 4);
}

/* A block that ends exactly at max_value is whole, and the next is exhausted. */
static void test_store__range_that_ends_exactly_at_max_value_is_whole(void **state)
{
    struct fx *f = *state;
    char ns[64];
    struct idmint__range r = {0};

    ns_name(f, "exact", ns);
    make_range(f, ns, 1000, 1019, 100);
    assert_int_equal(idmint__store_range_reserve(f->st, ns, "inc", "a", 7, NOW_MS, &r), 0);
    assert_true(r.start == 1000 && r.end == 1007);
    assert_int_equal(idmint__store_range_reserve(f->st, ns, "inc", "b", 13, NOW_MS, &r), 0);
    assert_true(r.start == 1007 && r.end == 1020);
    assert_int_equal(idmint__store_range_reserve(f->st, ns, "inc", "c", 1, NOW_MS, &r),
                     IDMINT_EEXHAUSTED);
    /* The saved ranges come back whole on replay. */
    assert_int_equal(idmint__store_range_reserve(f->st, ns, "inc", "b", 13, NOW_MS, &r), 0);
    assert_true(r.start == 1007 && r.end == 1020);
    assert_int_equal(idmint__store_range_reserve(f->st, ns, "inc", "a", 7, NOW_MS, &r), 0);
    assert_true(r.start == 1000 && r.end == 1007);
}

/*
 * Forgetting deletes only the records of that namespace and incarnation
 * that sort before the given id. A forgotten request repeated reserves
 * anew: the old range is a gap, and the new one overlaps nothing.
 */
static void test_store__range_forget_drops_only_older_records_of_that_incarnation(void **state)
{
    struct fx *f = *state;
    char ns[64], other[64], id[IDMINT__REQUEST_ID_LEN], id3[IDMINT__REQUEST_ID_LEN];
    struct idmint__range mine[5] = {{0}}, theirs = {0}, elsewhere = {0}, r = {0};
    uint64_t forgotten = 99;

    ns_name(f, "forget", ns);
    ns_name(f, "forget2", other);
    make_range(f, ns, 1, 1000, 100);
    make_range(f, other, 1, 1000, 100);
    for (uint64_t i = 0; i < 5; i++) {
        idmint__range_request_id(i, id);
        assert_int_equal(idmint__store_range_reserve(f->st, ns, "inc", id, 10, NOW_MS, &mine[i]),
                         0);
    }
    idmint__range_request_id(0, id);
    assert_int_equal(idmint__store_range_reserve(f->st, ns, "inc-b", id, 10, NOW_MS, &theirs), 0);
    assert_int_equal(idmint__store_range_reserve(f->st, other, "inc", id, 10, NOW_MS, &elsewhere),
                     0);

    idmint__range_request_id(3, id3);
    assert_int_equal(idmint__store_range_forget(f->st, ns, "inc", id3, &forgotten), 0);
    assert_int_equal(forgotten, 3);
    /* Kept: request 3 and later, the other incarnation, the other namespace. */
    for (uint64_t i = 3; i < 5; i++) {
        idmint__range_request_id(i, id);
        assert_int_equal(idmint__store_range_reserve(f->st, ns, "inc", id, 10, NOW_MS, &r), 0);
        assert_true(r.start == mine[i].start && r.end == mine[i].end);
    }
    idmint__range_request_id(0, id);
    assert_int_equal(idmint__store_range_reserve(f->st, ns, "inc-b", id, 10, NOW_MS, &r), 0);
    assert_true(r.start == theirs.start && r.end == theirs.end);
    assert_int_equal(idmint__store_range_reserve(f->st, other, "inc", id, 10, NOW_MS, &r), 0);
    assert_true(r.start == elsewhere.start && r.end == elsewhere.end);
    /* Forgotten: request 0 again is a new reservation, after everything. */
    assert_int_equal(idmint__store_range_reserve(f->st, ns, "inc", id, 10, NOW_MS, &r), 0);
    assert_true(r.start >= theirs.end && r.start >= mine[4].end);
    /* Idempotent: only that new record of request 0 is left to forget. */
    assert_int_equal(idmint__store_range_forget(f->st, ns, "inc", id3, &forgotten), 0);
    assert_int_equal(forgotten, 1);
    assert_int_equal(idmint__store_range_forget(f->st, ns, "inc", id3, &forgotten), 0);
    assert_int_equal(forgotten, 0);
    assert_int_equal(idmint__store_range_forget(f->st, ns, "", id3, NULL), IDMINT_EINVAL);
    assert_int_equal(idmint__store_range_forget(f->st, ns, "inc", NULL, NULL), IDMINT_EINVAL);
}

static void test_store__range_refuses_disabled_unknown_and_snowflake_namespaces(void **state)
{
    struct fx *f = *state;
    char rg[64], sf[64], none[64];
    struct idmint__range r = {.start = 3, .end = 4};
    struct snap before;

    ns_name(f, "rg", rg);
    ns_name(f, "sf", sf);
    ns_name(f, "none", none);
    make_range(f, rg, 1, 1000, 100);
    make_snowflake(f, sf, 0, 10);
    assert_int_equal(idmint__store_ns_set_disabled(f->st, rg, 1, ACTOR, NOW_MS), 0);

    snap_take(f, rg, &before);
    assert_int_equal(idmint__store_range_reserve(f->st, rg, "inc", "a", 1, NOW_MS, &r),
                     IDMINT_EDISABLED);
    snap_same(f, rg, &before);
    snap_take(f, sf, &before);
    assert_int_equal(idmint__store_range_reserve(f->st, sf, "inc", "a", 1, NOW_MS, &r),
                     IDMINT_EINVAL);
    snap_same(f, sf, &before);
    snap_take(f, none, &before);
    assert_int_equal(idmint__store_range_reserve(f->st, none, "inc", "a", 1, NOW_MS, &r),
                     IDMINT_ENOTFOUND);
    snap_same(f, none, &before);
    assert_int_equal(r.start, 3);

    assert_int_equal(idmint__store_ns_set_disabled(f->st, rg, 0, ACTOR, NOW_MS), 0);
    assert_int_equal(idmint__store_range_reserve(f->st, rg, "inc", "a", 1, NOW_MS, &r), 0);
    assert_int_equal(r.start, 1);
}

/* ==== audit ==== */

static void test_store__audit_list_pages_by_sequence(void **state)
{
    struct fx *f = *state;
    char ns[64];
    idmint_audit_entry *page = NULL, *rest = NULL;
    size_t n = 0, m = 0;

    ns_name(f, "pages", ns);
    make_range(f, ns, 1, 100, 10);
    for (int i = 0; i < 4; i++)
        assert_int_equal(idmint__store_ns_set_disabled(f->st, ns, i % 2 == 0, ACTOR, NOW_MS), 0);
    assert_int_equal(idmint__store_audit_list(f->st, 0, 2, &page, &n), 0);
    assert_int_equal(n, 2);
    assert_true(page[0].seq < page[1].seq);
    assert_int_equal(idmint__store_audit_list(f->st, page[1].seq, SIZE_MAX, &rest, &m), 0);
    assert_true(m >= 3);
    assert_true(rest[0].seq > page[1].seq);
    for (size_t i = 1; i < m; i++)
        assert_true(rest[i].seq > rest[i - 1].seq);
    free(page);
    free(rest);
}

/* ==== many processes at once ==== */

/* Block every child on @p gate until the parent closes its write end. */
static void gate_wait(int gate)
{
    char c;

    while (read(gate, &c, 1) > 0)
        ;
}

struct take_result {
    int rc;
    uint32_t worker_id;
};

static void take_child(const char *url, const char *ns, int gate, int out, unsigned idx)
{
    struct take_result res = {IDMINT_ESTORE, 0};
    struct store *st = NULL;
    struct idmint__lease l = {0};
    int rc;

    if ((rc = idmint__store_open(url, NULL, &st)) != 0) {
        res.rc = rc;
    } else {
        lease_init(&l, 0, HOLDER_A);
        snprintf(l.holder, sizeof(l.holder), "holder%026u", idx);
        gate_wait(gate);
        res.rc = idmint__store_lease_take(st, ns, 8, 1000, 1600, &l, ACTOR, NOW_MS);
        res.worker_id = l.worker_id;
    }
    idmint__store_close(st);
    _exit(write(out, &res, sizeof(res)) == (ssize_t)sizeof(res) ? 0 : 1);
}

/* Take worker ids of @p ns at ever later units until the namespace is disabled; exit 0 then. */
static void take_until_disabled(const char *url, const char *ns, unsigned child)
{
    struct store *st = NULL;
    uint64_t unit = 1000 + child;

    if (idmint__store_open(url, NULL, &st) != 0)
        _exit(2);
    for (;;) {
        struct idmint__lease l;
        int rc;

        lease_init(&l, 0, child % 2 ? HOLDER_A : HOLDER_B);
        unit += 16;
        rc = idmint__store_lease_take(st, ns, 8, unit, unit + 8, &l, ACTOR, NOW_MS);
        if (rc == IDMINT_EDISABLED)
            break;
        if (rc != 0 && rc != IDMINT_ENOWORKER && rc != IDMINT_EUNAVAILABLE) {
            fprintf(stderr, "take: %s: %s\n", idmint_strerror(rc), idmint_errmsg());
            _exit(3);
        }
    }
    idmint__store_close(st);
    _exit(0);
}

/*
 * A disable is a mark no take passes (a region's release relies on it,
 * src/authority_region.c): once ns_set_disabled has returned, no take
 * under way when it ran lands after it. Four processes take in a loop; the
 * rows read right after the disable must be the rows at the end.
 */
static void test_store__no_take_lands_after_a_disable_returned(void **state)
{
    struct fx *f = *state;
    enum { PROCS = 4 };
    char ns[64];
    pid_t pids[PROCS];
    struct snap after;
    idmint_worker_info *w = NULL;
    size_t n = 0;

    ns_name(f, "mark", ns);
    make_snowflake(f, ns, 0, 3);
    for (unsigned i = 0; i < PROCS; i++) {
        pids[i] = fork();
        assert_true(pids[i] >= 0);
        if (pids[i] == 0)
            take_until_disabled(f->url, ns, i);
    }
    /* Until the takes are well under way: some row has moved past its first generation. */
    for (int tries = 0; tries < 2000; tries++) {
        size_t i, moved = 0;

        assert_int_equal(idmint__store_lease_list(f->st, ns, &w, &n), 0);
        for (i = 0; i < n; i++)
            moved += idmint_worker_info_at(w, i)->generation > 2;
        idmint_free(w);
        w = NULL;
        if (moved > 0)
            break;
        nanosleep(&(struct timespec){0, 2 * 1000 * 1000}, NULL);
    }
    assert_int_equal(idmint__store_ns_set_disabled(f->st, ns, 1, ACTOR, NOW_MS), 0);
    snap_take(f, ns, &after);
    for (unsigned i = 0; i < PROCS; i++) {
        int status;

        assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    assert_true(after.n_workers > 0);
    snap_same(f, ns, &after);
}

/* Records (store.h, version 8): a compare-and-set text per key, audited. */
static void test_store__records_are_written_only_over_the_version_read(void **state)
{
    struct fx *f = *state;
    char key[64], value[STORE_RECORD_MAX], text[64];
    uint64_t v0 = 7, v1 = 0, v2 = 0;
    idmint_audit_entry *all = NULL;
    size_t n = 0, i, audited = 0;

    snprintf(key, sizeof(key), "region/%s", f->prefix);
    snprintf(text, sizeof(text), "state=claimed region=1 holder=%s", f->prefix);
    assert_true(idmint__store_has_records(f->st));
    assert_int_equal(idmint__store_record_get(f->st, key, value, sizeof(value), &v0),
                     IDMINT_ENOTFOUND);
    assert_int_equal(v0, 0);
    assert_int_equal(idmint__store_record_put(f->st, key, text, 0, ACTOR, "region.claim", NOW_MS),
                     0);
    assert_int_equal(idmint__store_record_get(f->st, key, value, sizeof(value), &v1), 0);
    assert_string_equal(value, text);
    assert_true(v1 > 0);
    /* A second writer that read "none", or an old version, changes nothing. */
    assert_int_equal(
        idmint__store_record_put(f->st, key, "other", 0, ACTOR, "region.claim", NOW_MS),
        IDMINT_ECONFLICT);
    assert_int_equal(
        idmint__store_record_put(f->st, key, "other", v1 + 1, ACTOR, "region.claim", NOW_MS),
        IDMINT_ECONFLICT);
    assert_int_equal(idmint__store_record_get(f->st, key, value, sizeof(value), &v2), 0);
    assert_string_equal(value, text);
    assert_int_equal(v2, v1);
    assert_int_equal(idmint__store_record_put(f->st, key, "state=free region=1", v1, ACTOR,
                                              "region.release", NOW_MS),
                     0);
    assert_int_equal(idmint__store_record_get(f->st, key, value, sizeof(value), &v2), 0);
    assert_string_equal(value, "state=free region=1");
    assert_true(v2 > v1);
    /* Each write that happened left one audit record, with the value as its detail. */
    assert_int_equal(idmint__store_audit_list(f->st, 0, SIZE_MAX, &all, &n), 0);
    for (i = 0; i < n; i++) {
        const idmint_audit_entry *e = &all[i];

        if (strcmp(e->detail, text) == 0 && strcmp(e->action, "region.claim") == 0)
            audited++;
    }
    free(all);
    assert_int_equal(audited, 1);
}

static void test_store__lease_take_race_of_16_processes_gives_8_distinct_ids(void **state)
{
    struct fx *f = *state;
    enum { PROCS = 16, IDS = 8 };
    char ns[64];
    int gate[2], res[2], won = 0, busy = 0, seen[IDS] = {0};
    pid_t pids[PROCS];

    ns_name(f, "race", ns);
    make_snowflake(f, ns, 0, 3);
    assert_int_equal(pipe(gate), 0);
    assert_int_equal(pipe(res), 0);
    for (unsigned i = 0; i < PROCS; i++) {
        pids[i] = fork();
        assert_true(pids[i] >= 0);
        if (pids[i] == 0) {
            close(gate[1]);
            close(res[0]);
            take_child(f->url, ns, gate[0], res[1], i);
        }
    }
    close(gate[0]);
    close(res[1]);
    close(gate[1]); /* go */
    for (unsigned i = 0; i < PROCS; i++) {
        struct take_result r;

        assert_int_equal(read(res[0], &r, sizeof(r)), sizeof(r));
        if (r.rc == 0) {
            assert_true(r.worker_id < IDS);
            assert_int_equal(seen[r.worker_id], 0);
            seen[r.worker_id] = 1;
            won++;
        } else {
            assert_int_equal(r.rc, IDMINT_ENOWORKER);
            busy++;
        }
    }
    close(res[0]);
    for (unsigned i = 0; i < PROCS; i++) {
        int status;

        assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    assert_int_equal(won, IDS);
    assert_int_equal(busy, PROCS - IDS);
}

struct span {
    uint64_t start, end;
};

/* Reserve @p n ranges as incarnation @p inc (requests req-0…), counts varied by @p seed. */
static void reserve_child(const char *url, const char *ns, const char *inc, unsigned seed, int gate,
                          int out, unsigned n)
{
    struct store *st = NULL;
    struct span s;
    struct idmint__range r = {0};
    char req[32];
    int code = 0;

    if (idmint__store_open(url, NULL, &st) != 0)
        _exit(2);
    gate_wait(gate);
    for (unsigned i = 0; i < n; i++) {
        int rc, tries = 0;

        snprintf(req, sizeof(req), "req-%u", i);
        /* As a range supply does: a store that stays locked past its wait
         * (a sanitizer build on a loaded machine) is retried with the same
         * request, which is answered from its record if it was granted. */
        do
            rc = idmint__store_range_reserve(st, ns, inc, req, 1 + (i + seed) % 13, NOW_MS, &r);
        while (rc == IDMINT_EUNAVAILABLE && ++tries < 20);
        if (rc != 0) {
            fprintf(stderr, "%s: reserve %u: %s\n", inc, i, idmint_errmsg());
            code = 3;
            break;
        }
        s.start = r.start;
        s.end = r.end;
        if (write(out, &s, sizeof(s)) != (ssize_t)sizeof(s)) {
            code = 4;
            break;
        }
    }
    idmint__store_close(st);
    _exit(code);
}

static int span_cmp(const void *a, const void *b)
{
    const struct span *x = a, *y = b;

    return x->start < y->start ? -1 : x->start > y->start;
}

/*
 * Fork @p procs reservers that start at once; child k reserves @p each ranges
 * as incarnation "child-k", or all as "shared" when @p is_shared (every
 * request then sent by every child at the same moment). Child k's ranges land
 * in all[k * each …], in request order.
 */
static void race_reservers(const struct fx *f, const char *ns, unsigned procs, unsigned each,
                           int is_shared, struct span *all)
{
    int gate[2], outs[16];
    pid_t pids[16];

    assert_true(procs <= 16);
    assert_int_equal(pipe(gate), 0);
    for (unsigned i = 0; i < procs; i++) {
        int p[2];

        assert_int_equal(pipe(p), 0);
        pids[i] = fork();
        assert_true(pids[i] >= 0);
        if (pids[i] == 0) {
            char inc[32];

            close(gate[1]);
            close(p[0]);
            snprintf(inc, sizeof(inc), is_shared ? "shared" : "child-%u", i);
            reserve_child(f->url, ns, inc, is_shared ? 0 : i, gate[0], p[1], each);
        }
        close(p[1]);
        outs[i] = p[0];
    }
    close(gate[0]);
    close(gate[1]); /* go */
    for (unsigned i = 0; i < procs; i++) {
        struct span s;
        unsigned n = 0;
        int status;

        while (n < each && read(outs[i], &s, sizeof(s)) == (ssize_t)sizeof(s))
            all[i * each + n++] = s;
        close(outs[i]);
        assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
        assert_int_equal(n, each);
    }
}

/*
 * Sort @p spans and check they tile [1, next_value) of @p ns: no overlap, no
 * gap, and the namespace advanced by exactly what they cover.
 */
static void assert_spans_tile(struct fx *f, const char *ns, struct span *spans, size_t n)
{
    idmint_ns_info got;

    qsort(spans, n, sizeof(*spans), span_cmp);
    assert_int_equal(spans[0].start, 1);
    for (size_t i = 0; i < n; i++) {
        assert_true(spans[i].start < spans[i].end);
        if (i > 0)
            assert_int_equal(spans[i - 1].end, spans[i].start);
    }
    assert_int_equal(idmint__store_ns_get(f->st, ns, &got), 0);
    assert_int_equal(got.next_value, spans[n - 1].end);
}

static void test_store__range_race_of_8_processes_never_overlaps(void **state)
{
    struct fx *f = *state;
    enum { PROCS = 8, EACH = 200 };
    char ns[64];
    struct span *all = calloc(PROCS * EACH, sizeof(*all));

    assert_non_null(all);
    ns_name(f, "rrace", ns);
    make_range(f, ns, 1, IDMINT_MAX_VALUE, 100);
    race_reservers(f, ns, PROCS, EACH, 0, all);
    assert_spans_tile(f, ns, all, PROCS * EACH);
    free(all);
}

/* A lost reply retried while the original is still running: both get one range. */
static void test_store__range_repeats_racing_their_original_get_the_same_range(void **state)
{
    struct fx *f = *state;
    enum { PROCS = 4, EACH = 150 };
    char ns[64];
    struct span *all = calloc(PROCS * EACH, sizeof(*all));

    assert_non_null(all);
    ns_name(f, "rrepeat", ns);
    make_range(f, ns, 1, IDMINT_MAX_VALUE, 100);
    race_reservers(f, ns, PROCS, EACH, 1, all);
    for (unsigned i = 0; i < EACH; i++) {
        for (unsigned k = 1; k < PROCS; k++) {
            assert_int_equal(all[k * EACH + i].start, all[i].start);
            assert_int_equal(all[k * EACH + i].end, all[i].end);
        }
        assert_int_equal(all[i].end - all[i].start, 1 + i % 13);
    }
    /* Each request advanced the namespace once, however many sent it. */
    assert_spans_tile(f, ns, all, EACH);
    free(all);
}

/* ==== version 4: provenance, batches, collisions ==== */

static void origin_set(struct idmint__origin *o, const char *host, uint32_t pid, const char *token)
{
    memset(o, 0, sizeof(*o));
    snprintf(o->host, sizeof(o->host), "%s", host);
    o->pid = pid;
    snprintf(o->program, sizeof(o->program), "prog-%u", (unsigned)pid);
    snprintf(o->token, sizeof(o->token), "%s", token);
}

/* The grants of @p ns covering time unit @p unit of worker (0, @p worker); *out to free. */
static size_t grants_at_unit(struct fx *f, const char *ns, uint32_t worker, uint64_t unit,
                             idmint_grant_info **out)
{
    struct idmint__grant_query q = {
        .kind = IDMINT_KIND_SNOWFLAKE, .worker_id = worker, .unit = unit};
    size_t n = 99;

    *out = NULL;
    assert_int_equal(idmint__store_grant_find(f->st, ns, &q, out, &n), 0);
    assert_true(n <= STORE_GRANTS_MAX);
    return n;
}

static size_t grants_at_value(struct fx *f, const char *ns, uint64_t value, idmint_grant_info **out)
{
    struct idmint__grant_query q = {.kind = IDMINT_KIND_RANGE, .value = value};
    size_t n = 99;

    *out = NULL;
    assert_int_equal(idmint__store_grant_find(f->st, ns, &q, out, &n), 0);
    return n;
}

static void test_store__take_records_a_grant_that_renew_and_release_extend(void **state)
{
    struct fx *f = *state;
    idmint_grant_info *g = NULL;
    struct idmint__lease l = {0};
    char ns[64];

    ns_name(f, "prov", ns);
    make_snowflake(f, ns, 0, 3);
    lease_init(&l, 0, HOLDER_A);
    origin_set(&l.origin, "host-a", 4242, "tok-a");
    assert_int_equal(idmint__store_lease_take(f->st, ns, 8, 1000, 1600, &l, ACTOR, NOW_MS), 0);

    assert_int_equal(grants_at_unit(f, ns, l.worker_id, 1599, &g), 1);
    assert_int_equal(g[0].size, sizeof(g[0]));
    assert_int_equal(g[0].kind, IDMINT_KIND_SNOWFLAKE);
    assert_int_equal(g[0].worker_id, l.worker_id);
    assert_int_equal(g[0].generation, l.generation);
    assert_int_equal(g[0].first, 0);
    assert_int_equal(g[0].last, 1600);
    assert_string_equal(g[0].holder, "aaaaaaaa"); /* the fingerprint, never the secret */
    assert_string_equal(g[0].host, "host-a");
    assert_int_equal(g[0].pid, 4242);
    assert_string_equal(g[0].program, "prog-4242");
    assert_string_equal(g[0].token, "tok-a");
    assert_int_equal(g[0].granted_ms, NOW_MS);
    assert_int_equal(g[0].updated_ms, NOW_MS);
    free(g);
    assert_int_equal(grants_at_unit(f, ns, l.worker_id, 1600, &g), 0); /* [first, last) */
    assert_null(g);
    assert_int_equal(grants_at_unit(f, ns, l.worker_id + 1, 1500, &g), 0);

    assert_int_equal(idmint__store_lease_renew(f->st, ns, &l, 2000, NOW_MS + 7), 0);
    assert_int_equal(grants_at_unit(f, ns, l.worker_id, 1999, &g), 1);
    assert_int_equal(g[0].last, 2000);
    assert_int_equal(g[0].updated_ms, NOW_MS + 7);
    assert_int_equal(g[0].granted_ms, NOW_MS);
    free(g);

    assert_int_equal(idmint__store_lease_release(f->st, ns, &l, 1700, ACTOR, NOW_MS + 9), 0);
    assert_int_equal(grants_at_unit(f, ns, l.worker_id, 1699, &g), 1);
    assert_int_equal(g[0].last, 1700);
    assert_int_equal(g[0].updated_ms, NOW_MS + 9);
    free(g);
    assert_int_equal(grants_at_unit(f, ns, l.worker_id, 1700, &g), 0);
}

/* Generations of one worker id own disjoint spans: each ID has one owner. */
static void test_store__each_generation_owns_the_units_from_its_fence(void **state)
{
    struct fx *f = *state;
    idmint_grant_info *g = NULL;
    struct idmint__lease a = {0}, b = {0};
    char ns[64];

    ns_name(f, "gens", ns);
    make_snowflake(f, ns, 0, 0); /* one worker id */
    lease_init(&a, 0, HOLDER_A);
    origin_set(&a.origin, "host-a", 1, "");
    assert_int_equal(idmint__store_lease_take(f->st, ns, 1, 1000, 1600, &a, ACTOR, NOW_MS), 0);
    lease_init(&b, 0, HOLDER_B);
    origin_set(&b.origin, "host-b", 2, "");
    assert_int_equal(idmint__store_lease_take(f->st, ns, 1, 1700, 2300, &b, ACTOR, NOW_MS + 1), 0);
    assert_int_equal(b.fence_found, 1600);
    assert_int_equal(b.generation, a.generation + 1);

    assert_int_equal(grants_at_unit(f, ns, 0, 1599, &g), 1);
    assert_string_equal(g[0].host, "host-a");
    free(g);
    assert_int_equal(grants_at_unit(f, ns, 0, 1600, &g), 1);
    assert_string_equal(g[0].host, "host-b");
    assert_int_equal(g[0].first, 1600);
    assert_int_equal(g[0].generation, b.generation);
    assert_string_equal(g[0].token, "");
    free(g);
    /* A forced release leaves the grant covering what its holder may have minted. */
    assert_int_equal(idmint__store_lease_force_release(f->st, ns, 0, 0, 5000, ACTOR, NOW_MS + 2),
                     0);
    assert_int_equal(grants_at_unit(f, ns, 0, 2299, &g), 1);
    assert_string_equal(g[0].host, "host-b");
    free(g);
}

static void test_store__range_grants_are_found_by_value_and_replays_add_none(void **state)
{
    struct fx *f = *state;
    idmint_grant_info *g = NULL;
    struct idmint__range r1 = {0}, r2 = {0}, again = {0};
    char ns[64];

    ns_name(f, "rprov", ns);
    make_range(f, ns, 1, IDMINT_MAX_VALUE, 1000);
    memset(&r1, 0, sizeof(r1));
    origin_set(&r1.origin, "host-r1", 11, "tok-r");
    assert_int_equal(idmint__store_range_reserve(f->st, ns, HOLDER_A, "r1", 100, NOW_MS, &r1), 0);
    memset(&r2, 0, sizeof(r2));
    origin_set(&r2.origin, "host-r2", 22, "");
    assert_int_equal(idmint__store_range_reserve(f->st, ns, HOLDER_B, "r1", 50, NOW_MS + 1, &r2),
                     0);
    again = r1;
    assert_int_equal(
        idmint__store_range_reserve(f->st, ns, HOLDER_A, "r1", 100, NOW_MS + 2, &again), 0);
    assert_int_equal(again.start, r1.start);

    assert_int_equal(grants_at_value(f, ns, r1.start, &g), 1);
    assert_int_equal(g[0].kind, IDMINT_KIND_RANGE);
    assert_int_equal(g[0].first, r1.start);
    assert_int_equal(g[0].last, r1.end);
    assert_string_equal(g[0].host, "host-r1");
    assert_int_equal(g[0].pid, 11);
    assert_string_equal(g[0].token, "tok-r");
    assert_string_equal(g[0].holder, "aaaaaaaa");
    assert_int_equal(g[0].granted_ms, NOW_MS);
    free(g);
    assert_int_equal(grants_at_value(f, ns, r1.end - 1, &g), 1);
    assert_string_equal(g[0].host, "host-r1");
    free(g);
    assert_int_equal(grants_at_value(f, ns, r2.start, &g), 1);
    assert_string_equal(g[0].host, "host-r2");
    assert_string_equal(g[0].holder, "bbbbbbbb");
    free(g);
    assert_int_equal(grants_at_value(f, ns, r2.end, &g), 0);
    assert_null(g);
    assert_int_equal(grants_at_value(f, ns, IDMINT_MAX_VALUE, &g), 0);
}

/* Make a worker grant and a range grant stamped @p at_ms, in @p sf / @p rg. */
static void make_old_records(struct fx *f, const char *sf, const char *rg, unsigned i,
                             int64_t at_ms)
{
    struct idmint__lease l = {0};
    struct idmint__range r = {0};
    char req[16];

    lease_init(&l, 0, HOLDER_A);
    /* Each take finds the last one's E passed: one more grant of worker 0. */
    assert_int_equal(
        idmint__store_lease_take(f->st, sf, 1, 100 * i + 50, 100 * i + 60, &l, ACTOR, at_ms), 0);
    memset(&r, 0, sizeof(r));
    snprintf(req, sizeof(req), "q%02u", i);
    assert_int_equal(idmint__store_range_reserve(f->st, rg, HOLDER_A, req, 10, at_ms, &r), 0);
}

static void test_store__prune_deletes_only_old_grants_and_at_most_its_limit(void **state)
{
    struct fx *f = *state;
    const int64_t day = 86400000, old_ms = NOW_MS - 10 * day;
    idmint_grant_info *g = NULL;
    char sf[64], rg[64];
    uint64_t pruned;

    ns_name(f, "psf", sf);
    ns_name(f, "prg", rg);
    make_snowflake(f, sf, 0, 0);
    make_range(f, rg, 1, IDMINT_MAX_VALUE, 100);
    for (unsigned i = 0; i < 5; i++)
        make_old_records(f, sf, rg, i, old_ms + i);
    make_old_records(f, sf, rg, 5, NOW_MS);

    for (int what = 0; what < IDMINT__KEEP_BATCHES; what++) {
        pruned = 99;
        assert_int_equal(idmint__store_prune(f->st, what, NOW_MS - 5 * day, 3, &pruned), 0);
        assert_int_equal(pruned, 3);
        assert_int_equal(idmint__store_prune(f->st, what, NOW_MS - 5 * day, 3, &pruned), 0);
        assert_int_equal(pruned, 2);
        assert_int_equal(idmint__store_prune(f->st, what, NOW_MS - 5 * day, 3, &pruned), 0);
        assert_int_equal(pruned, 0);
    }
    /* The old ones are gone (oldest first), the new ones stay. */
    assert_int_equal(grants_at_unit(f, sf, 0, 455, &g), 0);
    assert_int_equal(grants_at_unit(f, sf, 0, 555, &g), 1);
    free(g);
    assert_int_equal(grants_at_value(f, rg, 41, &g), 0);
    assert_int_equal(grants_at_value(f, rg, 51, &g), 1);
    assert_int_equal(g[0].granted_ms, NOW_MS);
    free(g);
    assert_int_equal(idmint__store_prune(f->st, IDMINT__KEEP__COUNT, NOW_MS, 3, &pruned),
                     IDMINT_EINVAL);
    assert_int_equal(idmint__store_prune(f->st, 0, NOW_MS, 0, &pruned), IDMINT_EINVAL);
}

static void batch_set(struct idmint__batch *b, const char *ns, const char *key, uint32_t count,
                      char *runs)
{
    memset(b, 0, sizeof(*b));
    snprintf(b->ns, sizeof(b->ns), "%s", ns);
    snprintf(b->key, sizeof(b->key), "%s", key);
    snprintf(b->owner, sizeof(b->owner), "tok-1");
    b->count = count;
    b->runs = runs;
    b->keep_ms = 3600000;
}

static void test_store__batch_claim_saves_the_first_and_returns_it_to_every_repeat(void **state)
{
    struct fx *f = *state;
    struct idmint__batch first, second, saved, got;
    char ns[64], ns2[64], key[64], key2[64], key3[64], runs1[] = "100+1000,5000+3", runs2[] = "9+5";
    int inserted = 7;

    ns_name(f, "batch", ns);
    ns_name(f, "batch2", ns2);
    snprintf(key, sizeof(key), "%s:k-1.A_b", f->prefix);
    snprintf(key2, sizeof(key2), "%s:k-2", f->prefix);
    snprintf(key3, sizeof(key3), "%s:k-3", f->prefix);
    batch_set(&first, ns, key, 1003, runs1);
    memset(&saved, 0, sizeof(saved));
    assert_int_equal(idmint__store_batch_claim(f->st, &first, &saved, &inserted), 0);
    assert_int_equal(inserted, 1);
    assert_string_equal(saved.runs, "100+1000,5000+3");
    assert_int_equal(saved.count, 1003);
    assert_string_equal(saved.owner, "tok-1");
    /* The store's clock stamps it (etcd keeps no time: its lease ends the batch). */
    assert_true(saved.expires_ms == 0 || saved.expires_ms == saved.created_ms + 3600000);
    idmint__batch_clear(&saved);

    batch_set(&second, ns, key, 5, runs2);
    assert_int_equal(idmint__store_batch_claim(f->st, &second, &saved, &inserted), 0);
    assert_int_equal(inserted, 0);
    assert_string_equal(saved.runs, "100+1000,5000+3");
    assert_int_equal(saved.count, 1003);
    idmint__batch_clear(&saved);

    memset(&got, 0, sizeof(got));
    assert_int_equal(idmint__store_batch_get(f->st, "tok-1", key, &got), 0);
    assert_string_equal(got.runs, "100+1000,5000+3");
    assert_string_equal(got.ns, ns);
    assert_string_equal(got.key, key);
    idmint__batch_clear(&got);
    assert_int_equal(idmint__store_batch_get(f->st, "tok-1", key2, &got), IDMINT_ENOTFOUND);
    /* A key names one batch of its owner: another namespace finds it too. */
    batch_set(&second, ns2, key, 5, runs2);
    assert_int_equal(idmint__store_batch_claim(f->st, &second, &saved, &inserted), 0);
    assert_int_equal(inserted, 0);
    assert_string_equal(saved.ns, ns);
    idmint__batch_clear(&saved);
    /* Bad keys, owners and retentions never reach the store. */
    assert_int_equal(idmint__store_batch_get(f->st, "tok-1", "has space", &got), IDMINT_EINVAL);
    assert_int_equal(idmint__store_batch_get(f->st, "tok-1", "", &got), IDMINT_EINVAL);
    assert_int_equal(idmint__store_batch_get(f->st, "", key, &got), IDMINT_EINVAL);
    assert_int_equal(idmint__store_batch_get(f->st, NULL, key, &got), IDMINT_EINVAL);
    batch_set(&second, ns, key3, 0, runs2);
    assert_int_equal(idmint__store_batch_claim(f->st, &second, &saved, &inserted), IDMINT_EINVAL);
    batch_set(&second, ns, key3, 5, runs2);
    second.keep_ms = 0;
    assert_int_equal(idmint__store_batch_claim(f->st, &second, &saved, &inserted), IDMINT_EINVAL);
    batch_set(&second, ns, key3, 5, runs2);
    second.owner[0] = '\0';
    assert_int_equal(idmint__store_batch_claim(f->st, &second, &saved, &inserted), IDMINT_EINVAL);
    assert_int_equal(idmint__store_batch_get(f->st, "tok-1", key3, &got), IDMINT_ENOTFOUND);
}

/*
 * Issue 28: keys are one store-wide space no more. Another caller's use of
 * a key is another batch (no conflict, nothing of the first owner's
 * changes), and neither can read the other's.
 */
static void test_store__batch_keys_are_scoped_to_their_owner(void **state)
{
    struct fx *f = *state;
    struct idmint__batch a, b, saved, got;
    char ns[64], ns2[64], key[64], runs_a[] = "100+3", runs_b[] = "900+7";
    int inserted = 0;

    ns_name(f, "scope", ns);
    ns_name(f, "scope2", ns2);
    snprintf(key, sizeof(key), "%s:shared-key", f->prefix);
    batch_set(&a, ns, key, 3, runs_a);
    snprintf(a.owner, sizeof(a.owner), "token-a");
    memset(&saved, 0, sizeof(saved));
    assert_int_equal(idmint__store_batch_claim(f->st, &a, &saved, &inserted), 0);
    assert_int_equal(inserted, 1);
    idmint__batch_clear(&saved);
    /* Token B takes the same key, in another namespace and count. */
    batch_set(&b, ns2, key, 7, runs_b);
    snprintf(b.owner, sizeof(b.owner), "token-b");
    assert_int_equal(idmint__store_batch_claim(f->st, &b, &saved, &inserted), 0);
    assert_int_equal(inserted, 1);
    assert_string_equal(saved.owner, "token-b");
    assert_string_equal(saved.runs, "900+7");
    idmint__batch_clear(&saved);

    memset(&got, 0, sizeof(got));
    assert_int_equal(idmint__store_batch_get(f->st, "token-a", key, &got), 0);
    assert_string_equal(got.runs, "100+3");
    assert_string_equal(got.ns, ns);
    assert_int_equal(got.count, 3);
    idmint__batch_clear(&got);
    assert_int_equal(idmint__store_batch_get(f->st, "token-b", key, &got), 0);
    assert_string_equal(got.runs, "900+7");
    assert_string_equal(got.ns, ns2);
    idmint__batch_clear(&got);
    assert_int_equal(idmint__store_batch_get(f->st, "token-c", key, &got), IDMINT_ENOTFOUND);
    /* A repeat of A's claim still gets A's batch. */
    batch_set(&a, ns, key, 3, runs_b);
    snprintf(a.owner, sizeof(a.owner), "token-a");
    assert_int_equal(idmint__store_batch_claim(f->st, &a, &saved, &inserted), 0);
    assert_int_equal(inserted, 0);
    assert_string_equal(saved.runs, "100+3");
    idmint__batch_clear(&saved);
}

/*
 * Prune with @p before_ms until the batch of (@p owner, @p key) is gone or
 * @p seconds have passed; 1 when it is gone. On etcd its lease ends it, and
 * the prune does nothing.
 */
static int batch_gone_within(struct fx *f, int64_t before_ms, const char *owner, const char *key,
                             unsigned seconds)
{
    struct idmint__batch got;

    for (unsigned i = 0; i < seconds * 10 * ts_scale(); i++) {
        struct timespec tenth = {0, 100000000};
        uint64_t pruned = 0;
        int rc;

        assert_int_equal(idmint__store_prune(f->st, IDMINT__KEEP_BATCHES, before_ms, 1000, &pruned),
                         0);
        memset(&got, 0, sizeof(got));
        rc = idmint__store_batch_get(f->st, owner, key, &got);
        idmint__batch_clear(&got);
        if (rc == IDMINT_ENOTFOUND)
            return 1;
        assert_int_equal(rc, 0);
        nanosleep(&tenth, NULL);
    }
    return 0;
}

/*
 * Issue 28: a replay after another node with a clock far ahead (or a
 * retention far shorter, which is the same bound passed to the store)
 * prunes still finds the same IDs: a batch's end is the store's, set when
 * it was saved. And the store does end it: once its retention has passed
 * by the store's clock, a prune whose caller's clock is far behind takes
 * it all the same.
 */
static void
test_store__batch_outlives_a_prune_by_a_skewed_clock_and_ends_by_the_stores(void **state)
{
    struct fx *f = *state;
    const int64_t year = INT64_C(365) * 86400000;
    struct idmint__batch b, saved, got;
    char ns[64], key[64], key2[64], runs[] = "4242+5";
    uint64_t pruned = 99;
    int inserted = 0;

    ns_name(f, "skew", ns);
    snprintf(key, sizeof(key), "%s:replay", f->prefix);
    snprintf(key2, sizeof(key2), "%s:short", f->prefix);
    batch_set(&b, ns, key, 5, runs);
    memset(&saved, 0, sizeof(saved));
    assert_int_equal(idmint__store_batch_claim(f->st, &b, &saved, &inserted), 0);
    assert_int_equal(inserted, 1);
    idmint__batch_clear(&saved);
    for (int i = 1; i <= 3; i++) {
        /* A node whose clock runs years ahead, or whose retention is years shorter. */
        assert_int_equal(
            idmint__store_prune(f->st, IDMINT__KEEP_BATCHES, NOW_MS + i * year, 1000, &pruned), 0);
        memset(&got, 0, sizeof(got));
        assert_int_equal(idmint__store_batch_get(f->st, "tok-1", key, &got), 0);
        assert_string_equal(got.runs, "4242+5");
        idmint__batch_clear(&got);
    }
    /* Kept 1 ms by the store's clock: gone, though every prune's clock says 1970. */
    batch_set(&b, ns, key2, 5, runs);
    b.keep_ms = 1;
    assert_int_equal(idmint__store_batch_claim(f->st, &b, &saved, &inserted), 0);
    assert_int_equal(inserted, 1);
    idmint__batch_clear(&saved);
    assert_int_equal(batch_gone_within(f, 0, "tok-1", key2, 30), 1);
    memset(&got, 0, sizeof(got));
    assert_int_equal(idmint__store_batch_get(f->st, "tok-1", key, &got), 0);
    idmint__batch_clear(&got);
}

/* Children claim one key at once, each with its own runs; all read back one answer. */
static void test_store__batch_claims_racing_from_8_processes_agree(void **state)
{
    struct fx *f = *state;
    enum { PROCS = 8 };
    char ns[64], first[64] = "";
    int res[2], winners = 0;
    pid_t pids[PROCS];

    ns_name(f, "brace", ns);
    assert_int_equal(pipe(res), 0);
    for (unsigned i = 0; i < PROCS; i++) {
        pids[i] = fork();
        assert_true(pids[i] >= 0);
        if (pids[i] == 0) {
            struct store *st = NULL;
            struct idmint__batch b, saved;
            char runs[32], line[64];
            int inserted = 0, rc;

            close(res[0]);
            snprintf(runs, sizeof(runs), "%u+10", 1000 * (i + 1));
            char key[64];

            snprintf(key, sizeof(key), "%s:race", f->prefix);
            batch_set(&b, ns, key, 10, runs);
            memset(&saved, 0, sizeof(saved));
            rc = idmint__store_open(f->url, NULL, &st);
            if (rc == 0)
                rc = idmint__store_batch_claim(st, &b, &saved, &inserted);
            memset(line, 0, sizeof(line));
            snprintf(line, sizeof(line), "%d %d %s\n", rc, inserted, rc == 0 ? saved.runs : "-");
            if (write(res[1], line, 48) != 48)
                _exit(3);
            _exit(0);
        }
    }
    close(res[1]);
    for (unsigned i = 0; i < PROCS; i++) {
        char line[49] = "", runs[48];
        int rc = -1, inserted = -1;

        assert_int_equal(read(res[0], line, 48), 48);
        assert_int_equal(sscanf(line, "%d %d %47s", &rc, &inserted, runs), 3);
        assert_int_equal(rc, 0);
        winners += inserted;
        if (first[0] == '\0')
            snprintf(first, sizeof(first), "%s", runs);
        assert_string_equal(runs, first);
    }
    close(res[0]);
    for (unsigned i = 0; i < PROCS; i++) {
        int status;

        assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    assert_int_equal(winners, 1);
}

static void test_store__collisions_are_listed_in_order_and_audited(void **state)
{
    struct fx *f = *state;
    idmint_collision c, saved, *list = NULL;
    idmint_audit_entry a[4];
    int64_t seq1 = 0, seq2 = 0;
    char ns[64];
    size_t n = 0, mine = 0;
    int inserted = 0;

    ns_name(f, "coll", ns);
    memset(&c, 0, sizeof(c));
    c.size = sizeof(c);
    snprintf(c.ns, sizeof(c.ns), "%s", ns);
    c.id = 123456789;
    snprintf(c.first_owner, sizeof(c.first_owner), "host=a pid=1");
    snprintf(c.second_owner, sizeof(c.second_owner), "host=b pid=2");
    snprintf(c.verdict, sizeof(c.verdict), "duplicate");
    snprintf(c.reporter, sizeof(c.reporter), "token:db");
    c.observed_ms = NOW_MS - 5;
    snprintf(c.note, sizeof(c.note), "unique violation on orders.id");
    assert_int_equal(
        idmint__store_collision_add(f->st, &c, "token:db", NOW_MS, 3600000, &saved, &inserted), 0);
    assert_int_equal(inserted, 1);
    seq1 = saved.seq;
    assert_int_equal(saved.size, sizeof(saved));
    assert_int_equal(saved.id, 123456789);
    c.id = 42;
    snprintf(c.verdict, sizeof(c.verdict), "reported");
    assert_int_equal(
        idmint__store_collision_add(f->st, &c, "token:db", NOW_MS + 1, 3600000, &saved, &inserted),
        0);
    assert_int_equal(inserted, 1);
    seq2 = saved.seq;
    assert_true(seq2 > seq1);

    assert_int_equal(idmint__store_collision_list(f->st, seq1 - 1, 100, &list, &n), 0);
    for (size_t i = 0; i < n; i++) {
        const idmint_collision *e = idmint_collision_at(list, i);

        if (strcmp(e->ns, ns) != 0)
            continue;
        if (mine == 0) {
            assert_int_equal(e->seq, seq1);
            assert_int_equal(e->id, 123456789);
            assert_string_equal(e->first_owner, "host=a pid=1");
            assert_string_equal(e->second_owner, "host=b pid=2");
            assert_string_equal(e->verdict, "duplicate");
            assert_string_equal(e->reporter, "token:db");
            assert_int_equal(e->observed_ms, NOW_MS - 5);
            assert_int_equal(e->reported_ms, NOW_MS);
            assert_string_equal(e->note, "unique violation on orders.id");
        } else {
            assert_int_equal(e->seq, seq2);
            assert_int_equal(e->id, 42);
            assert_string_equal(e->verdict, "reported");
        }
        mine++;
    }
    free(list);
    assert_int_equal(mine, 2);
    assert_int_equal(idmint__store_collision_list(f->st, seq2, 100, &list, &n), 0);
    for (size_t i = 0; i < n; i++)
        assert_true(idmint_collision_at(list, i)->seq > seq2);
    free(list);
    assert_int_equal(audit_of(f, ns, a, 4), 2);
    assert_string_equal(a[0].action, "collision.report");
    assert_string_equal(a[0].actor, "token:db");
    assert_non_null(strstr(a[0].detail, "id=123456789"));
}

/* Records of @p ns in the collision list; the one of @p id into @p out (if not NULL). */
static size_t collisions_of(struct fx *f, const char *ns, uint64_t id, idmint_collision *out)
{
    int64_t after = 0;
    size_t k = 0, n;

    do { /* page by seq: a shared server may hold more than one list's worth */
        idmint_collision *list = NULL;

        n = 0;
        assert_int_equal(idmint__store_collision_list(f->st, after, 1000, &list, &n), 0);
        for (size_t i = 0; i < n; i++) {
            const idmint_collision *e = idmint_collision_at(list, i);

            after = e->seq;
            if (strcmp(e->ns, ns) != 0)
                continue;
            if (out != NULL && e->id == id)
                *out = *e;
            k++;
        }
        free(list);
    } while (n == 1000);
    return k;
}

/*
 * Issue 28: a reporter repeating one report makes one record and one audit
 * entry; every repeat gets the first record back, unchanged. Another
 * reporter, or another ID, is another record.
 */
static void test_store__a_repeated_collision_report_is_one_record(void **state)
{
    struct fx *f = *state;
    enum { REPEATS = 100 };
    idmint_collision c, saved, first, listed;
    idmint_audit_entry a[4];
    char ns[64];
    int inserted = 0;

    ns_name(f, "dedupe", ns);
    memset(&c, 0, sizeof(c));
    c.size = sizeof(c);
    snprintf(c.ns, sizeof(c.ns), "%s", ns);
    c.id = 987654321;
    snprintf(c.verdict, sizeof(c.verdict), "reported");
    snprintf(c.reporter, sizeof(c.reporter), "token-m");
    c.observed_ms = NOW_MS - 9;
    snprintf(c.note, sizeof(c.note), "first");
    assert_int_equal(
        idmint__store_collision_add(f->st, &c, "token-m", NOW_MS, 3600000, &first, &inserted), 0);
    assert_int_equal(inserted, 1);
    for (int i = 0; i < REPEATS; i++) {
        snprintf(c.note, sizeof(c.note), "repeat %d", i);
        c.observed_ms = NOW_MS + i;
        assert_int_equal(idmint__store_collision_add(f->st, &c, "token-m", NOW_MS + 1 + i, 3600000,
                                                     &saved, &inserted),
                         0);
        assert_int_equal(inserted, 0);
        assert_int_equal(saved.seq, first.seq);
        assert_string_equal(saved.note, "first");
        assert_int_equal(saved.reported_ms, NOW_MS);
    }
    assert_int_equal(collisions_of(f, ns, c.id, &listed), 1);
    assert_int_equal(listed.seq, first.seq);
    assert_string_equal(listed.note, "first");
    assert_int_equal(audit_of(f, ns, a, 4), 1);

    /* Another reporter of the same ID, and the same reporter of another ID: two more. */
    snprintf(c.reporter, sizeof(c.reporter), "token-n");
    assert_int_equal(
        idmint__store_collision_add(f->st, &c, "token-n", NOW_MS, 3600000, &saved, &inserted), 0);
    assert_int_equal(inserted, 1);
    assert_true(saved.seq != first.seq);
    snprintf(c.reporter, sizeof(c.reporter), "token-m");
    c.id = 987654322;
    assert_int_equal(
        idmint__store_collision_add(f->st, &c, "token-m", NOW_MS, 3600000, &saved, &inserted), 0);
    assert_int_equal(inserted, 1);
    assert_int_equal(collisions_of(f, ns, 0, NULL), 3);
    assert_int_equal(audit_of(f, ns, a, 4), 3);
    assert_int_equal(
        idmint__store_collision_add(f->st, &c, "token-m", NOW_MS, 0, &saved, &inserted),
        IDMINT_EINVAL);
}

/*
 * Issue 28: collision records are kept for a bounded time, by the store's
 * clock: one kept 1 ms is gone after a prune whose caller's clock says
 * 1970 (on etcd, its lease ends it), and one kept an hour outlives a prune
 * whose caller's clock is years ahead. After its end a report makes a new
 * record.
 */
static void test_store__collision_records_end_by_the_stores_clock(void **state)
{
    struct fx *f = *state;
    const int64_t year = INT64_C(365) * 86400000;
    idmint_collision c, saved;
    char ns[64];
    uint64_t pruned = 0;
    int inserted = 0, gone = 0;

    ns_name(f, "cexp", ns);
    memset(&c, 0, sizeof(c));
    c.size = sizeof(c);
    snprintf(c.ns, sizeof(c.ns), "%s", ns);
    snprintf(c.verdict, sizeof(c.verdict), "reported");
    snprintf(c.reporter, sizeof(c.reporter), "token-m");
    c.id = 1;
    assert_int_equal(
        idmint__store_collision_add(f->st, &c, "token-m", NOW_MS, 3600000, &saved, &inserted), 0);
    c.id = 2;
    assert_int_equal(
        idmint__store_collision_add(f->st, &c, "token-m", NOW_MS, 1, &saved, &inserted), 0);
    assert_int_equal(collisions_of(f, ns, 0, NULL), 2);
    for (unsigned i = 0; i < 30 * 10 * ts_scale() && !gone; i++) {
        struct timespec tenth = {0, 100000000};

        assert_int_equal(idmint__store_prune(f->st, IDMINT__KEEP_COLLISIONS, 0, 1000, &pruned), 0);
        gone = collisions_of(f, ns, 0, NULL) == 1;
        if (!gone)
            nanosleep(&tenth, NULL);
    }
    assert_true(gone);
    assert_int_equal(
        idmint__store_prune(f->st, IDMINT__KEEP_COLLISIONS, NOW_MS + 5 * year, 1000, &pruned), 0);
    assert_int_equal(collisions_of(f, ns, 1, &saved), 1);
    assert_int_equal(saved.id, 1);
    /* Reported again after its end: a record anew. */
    c.id = 2;
    assert_int_equal(
        idmint__store_collision_add(f->st, &c, "token-m", NOW_MS, 3600000, &saved, &inserted), 0);
    assert_int_equal(inserted, 1);
    assert_int_equal(collisions_of(f, ns, 0, NULL), 2);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_store__ns_create_then_get_returns_every_field),
        T(test_store__ns_values_up_to_2_63_minus_1_survive),
        T(test_store__ns_create_twice_is_a_conflict_and_keeps_the_first),
        T(test_store__ns_get_of_unknown_name_is_not_found),
        T(test_store__ns_list_returns_every_namespace_by_name),
        T(test_store__ns_disable_and_enable_are_audited),
        T(test_store__ns_disable_of_unknown_name_is_not_found_and_not_audited),
        T(test_store__wrappers_refuse_bad_arguments),
        cmocka_unit_test(test_store__open_refuses_unknown_scheme_and_empty_location),
        T(test_store__lease_take_on_fresh_ns_gets_worker_0_without_fence),
        T(test_store__lease_take_picks_the_lowest_free_id),
        T(test_store__lease_take_when_every_id_is_held_is_no_worker),
        T(test_store__lease_take_of_an_expired_id_finds_its_fence),
        T(test_store__lease_take_refuses_unknown_disabled_and_range_namespaces),
        T(test_store__lease_renew_by_the_holder_extends_and_never_shortens),
        T(test_store__lease_renew_with_a_stale_generation_or_holder_is_lost),
        T(test_store__lease_release_sets_e_to_final_and_frees_the_id),
        T(test_store__lease_release_by_a_stale_holder_is_lost),
        T(test_store__lease_release_below_the_fence_keeps_the_fence),
        T(test_store__lease_release_by_another_holder_changes_nothing),
        T(test_store__lease_renew_in_a_disabled_namespace_is_refused),
        T(test_store__take_and_release_are_audited_without_the_holder_secret),
        T(test_store__force_release_pulls_a_runaway_e_back),
        T(test_store__force_release_makes_the_old_holder_lose_its_lease),
        T(test_store__force_release_of_an_unknown_row_is_not_found),
        T(test_store__lease_regions_are_independent),
        T(test_store__range_sequential_reservations_do_not_overlap),
        T(test_store__range_replay_of_a_request_returns_the_saved_range),
        T(test_store__range_replay_with_another_count_is_a_conflict),
        T(test_store__range_that_ends_exactly_at_max_value_is_whole),
        T(test_store__range_forget_drops_only_older_records_of_that_incarnation),
        T(test_store__range_count_above_max_block_is_invalid),
        T(test_store__range_is_cut_at_max_value_then_exhausted),
        T(test_store__range_refuses_disabled_unknown_and_snowflake_namespaces),
        T(test_store__audit_list_pages_by_sequence),
        T(test_store__lease_take_race_of_16_processes_gives_8_distinct_ids),
        T(test_store__no_take_lands_after_a_disable_returned),
        T(test_store__records_are_written_only_over_the_version_read),
        T(test_store__range_race_of_8_processes_never_overlaps),
        T(test_store__range_repeats_racing_their_original_get_the_same_range),
        T(test_store__take_records_a_grant_that_renew_and_release_extend),
        T(test_store__each_generation_owns_the_units_from_its_fence),
        T(test_store__range_grants_are_found_by_value_and_replays_add_none),
        T(test_store__prune_deletes_only_old_grants_and_at_most_its_limit),
        T(test_store__batch_claim_saves_the_first_and_returns_it_to_every_repeat),
        T(test_store__batch_keys_are_scoped_to_their_owner),
        T(test_store__batch_outlives_a_prune_by_a_skewed_clock_and_ends_by_the_stores),
        T(test_store__batch_claims_racing_from_8_processes_agree),
        T(test_store__collisions_are_listed_in_order_and_audited),
        T(test_store__a_repeated_collision_report_is_one_record),
        T(test_store__collision_records_end_by_the_stores_clock),
    };
    const struct backend *b = backend_chosen();

    if (b == NULL) {
        fprintf(stderr, "unknown IDMINT_TEST_STORE '%s'\n", getenv("IDMINT_TEST_STORE"));
        return 1;
    }
    return cmocka_run_group_tests_name(b->name, tests, NULL, NULL);
}
