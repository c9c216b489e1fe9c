/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The authority contract suite: one set of tests for every backend, chosen by
 * $IDMINT_TEST_AUTHORITY ("sqlite", "postgres", "etcd", "http"). It talks only
 * through the authority layer (idmint.h and idmint_service.h), with the real
 * clock, so the same assertions hold whether the rules run in this process
 * over a store or in an idmintd reached over http://. For "http" the suite
 * starts a real idmintd ($IDMINT_TEST_IDMINTD) on a loopback port over a
 * private SQLite file, and stops it. Each test uses namespaces with a fresh
 * prefix, so a shared server database needs no cleaning between runs.
 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "idmint.h"
#include "internal.h"
#include "pg_url.h"
#include "testsupport.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define HOLDER_A  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define HOLDER_B  "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define LEASE_MS  10000u
#define INC       "0123456789abcdef0123456789abcdef"
#define RACERS    6
#define RANGE_RUN 40

/* ==== the backend under test, set up once per run ==== */

static struct {
    const char *name;
    char *dir; /* temp folder (sqlite file, idmintd's files) or NULL */
    char *url; /* what every test opens */
    pid_t daemon;
    unsigned seq; /* namespace prefixes */
} backend;

static int start_sqlite(void)
{
    backend.dir = ts_tempdir();
    if (backend.dir == NULL)
        return -1;
    backend.url = ts_sqlite_url(backend.dir, "contract.db");
    return backend.url == NULL ? -1 : 0;
}

static int start_postgres(void)
{
    /* A missing server is a failure, never a skip. */
    backend.url = ts_pg_url();
    if (backend.url == NULL)
        fprintf(stderr, "no PostgreSQL: set IDMINT_TEST_PG_URL, or IDMINT_PG_ENV to the file "
                        "tests/support/pg-start.sh writes\n");
    return backend.url == NULL ? -1 : 0;
}

static int start_etcd(void)
{
    /* A missing cluster is a failure, never a skip. */
    backend.url = ts_etcd_url();
    if (backend.url == NULL)
        fprintf(stderr, "no etcd: set IDMINT_TEST_ETCD_URL, or IDMINT_ETCD_ENV to the file "
                        "tests/support/etcd-start.sh writes\n");
    return backend.url == NULL ? -1 : 0;
}

/* The port idmintd wrote to @p path, or 0 while there is none yet. */
static unsigned read_port(const char *path)
{
    FILE *f = fopen(path, "r");
    unsigned port = 0;

    if (f == NULL)
        return 0;
    if (fscanf(f, "%u", &port) != 1)
        port = 0;
    fclose(f);
    return port;
}

static int start_http(void)
{
    const char *idmintd = getenv("IDMINT_TEST_IDMINTD");
    char port_file[4200], authority[4200], log[4200], url[64];
    unsigned port = 0;
    int i;

    if (idmintd == NULL || idmintd[0] == '\0') {
        fprintf(stderr, "set IDMINT_TEST_IDMINTD to the idmintd to test\n");
        return -1;
    }
    if ((backend.dir = ts_tempdir()) == NULL)
        return -1;
    snprintf(port_file, sizeof(port_file), "%s/port", backend.dir);
    snprintf(authority, sizeof(authority), "sqlite:%s/daemon.db", backend.dir);
    snprintf(log, sizeof(log), "%s/idmintd.log", backend.dir);
    backend.daemon = fork();
    if (backend.daemon < 0)
        return -1;
    if (backend.daemon == 0) {
        FILE *out = freopen(log, "w", stdout);

        if (out == NULL || dup2(fileno(stdout), 2) < 0)
            _exit(126);
        execl(idmintd, idmintd, "--listen", "127.0.0.1:0", "--port-file", port_file, "--authority",
              authority, (char *)NULL);
        _exit(127);
    }
    for (i = 0; i < 1000 * (int)ts_scale() && port == 0; i++) {
        int status;

        if (waitpid(backend.daemon, &status, WNOHANG) == backend.daemon) {
            fprintf(stderr, "idmintd exited before it listened; see %s\n", log);
            backend.daemon = 0;
            return -1;
        }
        port = read_port(port_file);
        if (port == 0)
            idmint__sleep_ms(10);
    }
    if (port == 0) {
        fprintf(stderr, "idmintd wrote no port within 10 s; see %s\n", log);
        return -1;
    }
    snprintf(url, sizeof(url), "http://127.0.0.1:%u", port);
    backend.url = strdup(url);
    return backend.url == NULL ? -1 : 0;
}

static const struct {
    const char *name;
    int (*start)(void);
} backends[] = {
    {"sqlite", start_sqlite},
    {"postgres", start_postgres},
    {"etcd", start_etcd},
    {"http", start_http},
};

static int group_setup(void **state)
{
    const char *name = getenv("IDMINT_TEST_AUTHORITY");
    size_t i;

    (void)state;
    unsetenv("IDMINT_TOKEN");
    backend.name = name != NULL && name[0] != '\0' ? name : "sqlite";
    for (i = 0; i < sizeof(backends) / sizeof(backends[0]); i++)
        if (strcmp(backends[i].name, backend.name) == 0)
            return backends[i].start();
    fprintf(stderr, "IDMINT_TEST_AUTHORITY=%s: not sqlite, postgres, etcd or http\n", backend.name);
    return -1;
}

static int group_teardown(void **state)
{
    (void)state;
    if (backend.daemon > 0) {
        kill(backend.daemon, SIGTERM);
        waitpid(backend.daemon, NULL, 0);
    }
    ts_rmtree(backend.dir);
    free(backend.url);
    return 0;
}

/* ==== per test ==== */

struct fx {
    idmint_authority *a;
    char prefix[32];
};

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof(*f));

    if (f == NULL || idmint_authority_open(&f->a, backend.url, 0) != 0) {
        fprintf(stderr, "open %s: %s\n", backend.url, idmint_errmsg());
        free(f);
        return -1;
    }
    /* Fresh names per run and test: a shared database keeps old ones. */
    snprintf(f->prefix, sizeof(f->prefix), "c%lx%u",
             (unsigned long)getpid() ^ (unsigned long)time(NULL), backend.seq++);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;

    idmint_authority_close(f->a);
    free(f);
    return 0;
}

static int64_t wall_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A snowflake namespace "<prefix>-<tag>" with @p worker_bits, 1 ms units; read back into @p out. */
static void snowflake_ns(struct fx *f, const char *tag, unsigned worker_bits, idmint_ns_info *out)
{
    idmint_ns_info i;

    idmint_ns_info_init(&i, IDMINT_KIND_SNOWFLAKE);
    snprintf(i.name, sizeof(i.name), "%s-%s", f->prefix, tag);
    i.layout.time_bits = 41;
    i.layout.region_bits = 2;
    i.layout.worker_bits = (uint8_t)worker_bits;
    i.layout.sequence_bits = (uint8_t)(63 - 41 - 2 - worker_bits);
    i.layout.unit_ms = 1;
    assert_int_equal(idmint_ns_create(f->a, &i), 0);
    idmint_ns_info_init(out, 0);
    assert_int_equal(idmint_ns_get(f->a, i.name, out), 0);
    assert_int_equal(out->size, sizeof(*out));
}

static void range_ns(struct fx *f, const char *tag, uint64_t start, uint64_t max,
                     uint32_t max_block, idmint_ns_info *out)
{
    idmint_ns_info i;

    idmint_ns_info_init(&i, IDMINT_KIND_RANGE);
    snprintf(i.name, sizeof(i.name), "%s-%s", f->prefix, tag);
    i.next_value = start;
    i.max_value = max;
    i.block = max_block;
    i.max_block = max_block;
    assert_int_equal(idmint_ns_create(f->a, &i), 0);
    if (out != NULL) {
        idmint_ns_info_init(out, 0);
        assert_int_equal(idmint_ns_get(f->a, i.name, out), 0);
    }
}

static struct idmint__lease lease_for(const char *holder, uint32_t region)
{
    struct idmint__lease l = {0};

    memset(&l, 0, sizeof(l));
    l.region = region;
    memcpy(l.holder, holder, sizeof(l.holder));
    return l;
}

static void assert_msg_has(const char *needle)
{
    if (strstr(idmint_errmsg(), needle) == NULL)
        fail_msg("message \"%s\" does not say \"%s\"", idmint_errmsg(), needle);
}

/* Does the audit log after @p after_seq hold @p action on @p ns? Its detail goes to @p detail. */
static int audit_has(struct fx *f, int64_t after_seq, const char *action, const char *ns,
                     char *detail, size_t size)
{
    idmint_audit_entry *list = NULL;
    size_t n = 0, i;
    int found = 0;

    assert_int_equal(idmint_audit_list(f->a, after_seq, 100000, &list, &n), 0);
    for (i = 0; i < n && !found; i++) {
        const idmint_audit_entry *e = idmint_audit_entry_at(list, i);

        assert_int_equal(e->size, sizeof(*e));
        if (strcmp(e->action, action) == 0 && strcmp(e->ns, ns) == 0) {
            found = 1;
            if (detail != NULL)
                snprintf(detail, size, "%s", e->detail);
        }
    }
    free(list);
    return found;
}

static int64_t audit_last_seq(struct fx *f)
{
    idmint_audit_entry *list = NULL;
    size_t n = 0;
    int64_t seq = 0;

    assert_int_equal(idmint_audit_list(f->a, 0, 1000000, &list, &n), 0);
    if (n > 0)
        seq = idmint_audit_entry_at(list, n - 1)->seq;
    free(list);
    return seq;
}

/* ==== namespaces ==== */

static void test_contract__ns_create_get_and_conflict(void **state)
{
    struct fx *f = *state;
    idmint_ns_info got, again;
    int64_t before = wall_ms();

    snowflake_ns(f, "s", 4, &got);
    assert_int_equal(got.kind, IDMINT_KIND_SNOWFLAKE);
    assert_int_equal(got.layout.worker_bits, 4);
    assert_int_equal(got.layout.unit_ms, 1);
    assert_true(got.created_ms >= before - 1000 && got.created_ms <= wall_ms() + 1000);
    idmint_ns_info_init(&again, IDMINT_KIND_RANGE);
    memcpy(again.name, got.name, sizeof(again.name));
    assert_int_equal(idmint_ns_create(f->a, &again), IDMINT_ECONFLICT);
    assert_int_equal(idmint_ns_get(f->a, got.name, &again), 0);
    assert_int_equal(again.kind, IDMINT_KIND_SNOWFLAKE); /* the first one stays */
}

static void test_contract__ns_rules_are_applied(void **state)
{
    struct fx *f = *state;
    idmint_ns_info i, got;

    idmint_ns_info_init(&got, 0);
    idmint_ns_info_init(&i, IDMINT_KIND_SNOWFLAKE);
    snprintf(i.name, sizeof(i.name), "%s-Bad", f->prefix);
    assert_int_equal(idmint_ns_create(f->a, &i), IDMINT_EINVAL);
    assert_msg_has("[a-z0-9][a-z0-9_.-]{0,62}");

    idmint_ns_info_init(&i, IDMINT_KIND_SNOWFLAKE);
    snprintf(i.name, sizeof(i.name), "%s-future", f->prefix);
    i.layout.epoch_ms = wall_ms() + 86400000;
    assert_int_equal(idmint_ns_create(f->a, &i), IDMINT_EINVAL);
    assert_msg_has("in the future");
    assert_int_equal(idmint_ns_get(f->a, i.name, &got), IDMINT_ENOTFOUND);

    idmint_ns_info_init(&i, IDMINT_KIND_RANGE);
    snprintf(i.name, sizeof(i.name), "%s-r", f->prefix);
    i.next_value = 0;
    assert_int_equal(idmint_ns_create(f->a, &i), IDMINT_EINVAL);
    assert_int_equal(idmint_ns_get(f->a, i.name, &got), IDMINT_ENOTFOUND);
}

static void test_contract__default_ns_exists_on_first_use(void **state)
{
    struct fx *f = *state;
    idmint_ns_info got;

    idmint_ns_info_init(&got, 0);
    assert_int_equal(idmint_ns_get(f->a, "default", &got), 0);
    assert_int_equal(got.kind, IDMINT_KIND_SNOWFLAKE);
    assert_string_equal(got.name, "default");
}

static void test_contract__ns_disable_and_enable_are_audited(void **state)
{
    struct fx *f = *state;
    idmint_ns_info ns, got;
    int64_t seq;

    snowflake_ns(f, "d", 2, &ns);
    seq = audit_last_seq(f);
    assert_int_equal(idmint_ns_set_disabled(f->a, ns.name, 1), 0);
    idmint_ns_info_init(&got, 0);
    assert_int_equal(idmint_ns_get(f->a, ns.name, &got), 0);
    assert_true(got.is_disabled);
    assert_int_equal(idmint_ns_set_disabled(f->a, ns.name, 0), 0);
    assert_int_equal(idmint_ns_get(f->a, ns.name, &got), 0);
    assert_false(got.is_disabled);
    assert_true(audit_has(f, seq, "ns.disable", ns.name, NULL, 0));
    assert_true(audit_has(f, seq, "ns.enable", ns.name, NULL, 0));
    assert_int_equal(idmint_ns_set_disabled(f->a, "no-such-ns-anywhere", 1), IDMINT_ENOTFOUND);
}

/* ==== worker leases ==== */

static void test_contract__take_gives_distinct_ids_then_no_worker(void **state)
{
    struct fx *f = *state;
    idmint_ns_info ns;
    struct idmint__lease a = lease_for(HOLDER_A, 0), b = lease_for(HOLDER_B, 0);
    struct idmint__lease c = lease_for("cccccccccccccccccccccccccccccccc", 0);
    int64_t before = wall_ms();

    snowflake_ns(f, "t", 1, &ns); /* two worker ids */
    assert_int_equal(idmint__authority_lease_take(f->a, &ns, LEASE_MS, &a), 0);
    assert_int_equal(idmint__authority_lease_take(f->a, &ns, LEASE_MS, &b), 0);
    assert_int_not_equal(a.worker_id, b.worker_id);
    assert_true(a.worker_id < 2 && b.worker_id < 2);
    assert_int_equal(a.generation, 1);
    assert_int_equal(a.fence_found, 0);
    /* E is now + the lease in the namespace's units, by the authority's clock. */
    assert_true(a.lease_until >= idmint__unit_at(&ns.layout, before + LEASE_MS));
    assert_true(a.lease_until <= idmint__unit_at(&ns.layout, wall_ms() + LEASE_MS));
    assert_int_equal(idmint__authority_lease_take(f->a, &ns, LEASE_MS, &c), IDMINT_ENOWORKER);
}

static void test_contract__take_applies_the_lease_rules(void **state)
{
    struct fx *f = *state;
    idmint_ns_info ns, r;
    struct idmint__lease l = lease_for(HOLDER_A, 4); /* 2 region bits: 0..3 */

    snowflake_ns(f, "rules", 2, &ns);
    assert_int_equal(idmint__authority_lease_take(f->a, &ns, LEASE_MS, &l), IDMINT_EINVAL);
    assert_msg_has("region bits");
    l = lease_for(HOLDER_A, 3);
    assert_int_equal(idmint__authority_lease_take(f->a, &ns, 0, &l), IDMINT_EINVAL);
    assert_int_equal(idmint__authority_lease_take(f->a, &ns, IDMINT__LEASE_MAX_MS + 1, &l),
                     IDMINT_EINVAL);
    assert_msg_has("one day");
    assert_int_equal(idmint__authority_lease_take(f->a, &ns, LEASE_MS, &l), 0);
    assert_int_equal(l.region, 3);

    range_ns(f, "r", 1, 1000, 10, &r);
    l = lease_for(HOLDER_B, 0);
    assert_int_equal(idmint__authority_lease_take(f->a, &r, LEASE_MS, &l), IDMINT_EINVAL);
}

static void test_contract__e_is_cut_at_the_end_of_the_time_bits(void **state)
{
    struct fx *f = *state;
    idmint_ns_info i, ns;
    struct idmint__lease l = lease_for(HOLDER_A, 0);

    /* 2^20 units of 1 ms end 5 s from now: a 10 s lease stops at the end. */
    idmint_ns_info_init(&i, IDMINT_KIND_SNOWFLAKE);
    snprintf(i.name, sizeof(i.name), "%s-end", f->prefix);
    i.layout.time_bits = 20;
    i.layout.region_bits = 0;
    i.layout.worker_bits = 2;
    i.layout.sequence_bits = 41;
    i.layout.unit_ms = 1;
    i.layout.epoch_ms = wall_ms() - (INT64_C(1) << 20) + 5000;
    assert_int_equal(idmint_ns_create(f->a, &i), 0);
    idmint_ns_info_init(&ns, 0);
    assert_int_equal(idmint_ns_get(f->a, i.name, &ns), 0);
    assert_int_equal(idmint__authority_lease_take(f->a, &ns, LEASE_MS, &l), 0);
    assert_int_equal(l.lease_until, UINT64_C(1) << 20);
    assert_int_equal(idmint__authority_lease_renew(f->a, &ns, &l, LEASE_MS), 0);
    assert_int_equal(l.lease_until, UINT64_C(1) << 20);
}

static void test_contract__renew_extends_only_for_holder_and_generation(void **state)
{
    struct fx *f = *state;
    idmint_ns_info ns;
    struct idmint__lease l = lease_for(HOLDER_A, 0), forged;
    uint64_t first;

    snowflake_ns(f, "renew", 2, &ns);
    assert_int_equal(idmint__authority_lease_take(f->a, &ns, LEASE_MS, &l), 0);
    first = l.lease_until;
    idmint__sleep_ms(20);
    assert_int_equal(idmint__authority_lease_renew(f->a, &ns, &l, LEASE_MS), 0);
    assert_true(l.lease_until > first);
    /* A shorter renewal never moves E back. */
    first = l.lease_until;
    assert_int_equal(idmint__authority_lease_renew(f->a, &ns, &l, 1), 0);
    assert_int_equal(l.lease_until, first);

    forged = l;
    forged.generation++;
    assert_int_equal(idmint__authority_lease_renew(f->a, &ns, &forged, LEASE_MS),
                     IDMINT_ELEASELOST);
    forged = l;
    memcpy(forged.holder, HOLDER_B, sizeof(forged.holder));
    assert_int_equal(idmint__authority_lease_renew(f->a, &ns, &forged, LEASE_MS),
                     IDMINT_ELEASELOST);
    /* The forgery changed nothing: the holder renews on. */
    assert_int_equal(idmint__authority_lease_renew(f->a, &ns, &l, LEASE_MS), 0);
}

static void test_contract__release_leaves_a_fence_the_next_taker_finds(void **state)
{
    struct fx *f = *state;
    idmint_ns_info ns;
    struct idmint__lease a = lease_for(HOLDER_A, 0), b = lease_for(HOLDER_B, 0);
    uint64_t now_unit;

    snowflake_ns(f, "fence", 0, &ns); /* one worker id */
    assert_int_equal(idmint__authority_lease_take(f->a, &ns, LEASE_MS, &a), 0);
    now_unit = idmint__unit_at(&ns.layout, wall_ms());
    assert_int_equal(idmint__authority_lease_release(f->a, &ns, &a, now_unit + 50), 0);
    assert_int_equal(a.lease_until, now_unit + 50);
    assert_int_equal(idmint__authority_lease_take(f->a, &ns, LEASE_MS, &b), 0);
    assert_int_equal(b.worker_id, a.worker_id);
    assert_int_equal(b.generation, a.generation + 1);
    assert_int_equal(b.fence_found, now_unit + 50);
    /* A release cannot reopen what the previous holder minted: the fence stays. */
    assert_int_equal(idmint__authority_lease_release(f->a, &ns, &b, 1), 0);
    assert_int_equal(b.lease_until, now_unit + 50);
}

static void test_contract__release_cannot_park_the_id_past_its_lease(void **state)
{
    struct fx *f = *state;
    idmint_ns_info ns;
    struct idmint__lease a = lease_for(HOLDER_A, 0), forged;
    uint64_t own_e;

    snowflake_ns(f, "park", 0, &ns);
    assert_int_equal(idmint__authority_lease_take(f->a, &ns, LEASE_MS, &a), 0);
    own_e = a.lease_until;
    forged = a;
    memcpy(forged.holder, HOLDER_B, sizeof(forged.holder));
    assert_int_equal(idmint__authority_lease_release(f->a, &ns, &forged, own_e), IDMINT_ELEASELOST);
    assert_int_equal(idmint__authority_lease_renew(f->a, &ns, &a, LEASE_MS), 0);
    own_e = a.lease_until;
    assert_int_equal(idmint__authority_lease_release(f->a, &ns, &a, UINT64_C(1) << 40), 0);
    assert_int_equal(a.lease_until, own_e);
    /* Released: a second release of the same lease is lost, not a second free. */
    assert_int_equal(idmint__authority_lease_release(f->a, &ns, &a, own_e), IDMINT_ELEASELOST);
}

static void test_contract__acquire_waits_past_the_fence_or_gives_the_id_back(void **state)
{
    struct fx *f = *state;
    idmint_ns_info ns;
    struct idmint__lease a = lease_for(HOLDER_A, 0), b = lease_for(HOLDER_B, 0);
    uint64_t fence;

    snowflake_ns(f, "wait", 0, &ns);
    assert_int_equal(idmint__authority_lease_take(f->a, &ns, LEASE_MS, &a), 0);
    /* A second ahead: the release's round trip on a loaded machine must not use it up. */
    fence = idmint__unit_at(&ns.layout, wall_ms()) + 1000;
    assert_int_equal(idmint__authority_lease_release(f->a, &ns, &a, fence), 0);

    /* 50 ms is not enough to pass a fence a second ahead: ECLOCK, and the id is free again. */
    assert_int_equal(idmint__authority_lease_acquire(f->a, &ns, LEASE_MS, 50, &b), IDMINT_ECLOCK);
    assert_msg_has("behind the fence");
    b = lease_for(HOLDER_B, 0);
    assert_int_equal(idmint__authority_lease_acquire(f->a, &ns, LEASE_MS, 5000, &b), 0);
    assert_int_equal(b.fence_found, fence);
    assert_true(idmint__unit_at(&ns.layout, wall_ms()) > fence);
    assert_true(b.lease_until > fence);
}

static void test_contract__disabled_namespace_refuses_take_and_renew(void **state)
{
    struct fx *f = *state;
    idmint_ns_info ns;
    struct idmint__lease a = lease_for(HOLDER_A, 0), b = lease_for(HOLDER_B, 0);

    snowflake_ns(f, "off", 2, &ns);
    assert_int_equal(idmint__authority_lease_take(f->a, &ns, LEASE_MS, &a), 0);
    assert_int_equal(idmint_ns_set_disabled(f->a, ns.name, 1), 0);
    assert_int_equal(idmint__authority_lease_renew(f->a, &ns, &a, LEASE_MS), IDMINT_EDISABLED);
    assert_int_equal(idmint__authority_lease_take(f->a, &ns, LEASE_MS, &b), IDMINT_EDISABLED);
    /* The holder keeps its lease until E, and may release it. */
    assert_int_equal(idmint__authority_lease_release(f->a, &ns, &a, a.fence_found), 0);
}

static void test_contract__force_release_keeps_e_unless_bounded(void **state)
{
    struct fx *f = *state;
    idmint_ns_info ns;
    struct idmint__lease a = lease_for(HOLDER_A, 1), b = lease_for(HOLDER_B, 1);
    struct idmint__lease c = lease_for("cccccccccccccccccccccccccccccccc", 1);
    uint64_t bound;

    snowflake_ns(f, "force", 0, &ns);
    assert_int_equal(idmint__authority_lease_take(f->a, &ns, LEASE_MS, &a), 0);
    assert_int_equal(idmint__authority_force_release(f->a, ns.name, 1, a.worker_id, -1), 0);
    assert_int_equal(idmint__authority_lease_renew(f->a, &ns, &a, LEASE_MS), IDMINT_ELEASELOST);
    assert_int_equal(idmint__authority_lease_take(f->a, &ns, LEASE_MS, &b), 0);
    assert_int_equal(b.fence_found, a.lease_until); /* the forced holder may have minted to E */

    /* An admin's bound pulls E back to now + max_ahead_ms, by the authority's clock. */
    assert_int_equal(idmint__authority_force_release(f->a, ns.name, 1, b.worker_id, 0), 0);
    bound = idmint__unit_at(&ns.layout, wall_ms()) + 1;
    assert_int_equal(idmint__authority_lease_take(f->a, &ns, LEASE_MS, &c), 0);
    assert_true(c.fence_found <= bound);
    assert_true(c.fence_found < b.lease_until);

    assert_int_equal(idmint__authority_force_release(f->a, ns.name, 1, 7, -1), IDMINT_ENOTFOUND);
    assert_int_equal(idmint__authority_force_release(f->a, ns.name, 9, 0, -1), IDMINT_EINVAL);
}

static void test_contract__listings_and_audit_show_only_a_fingerprint(void **state)
{
    struct fx *f = *state;
    idmint_ns_info ns;
    struct idmint__lease a = lease_for(HOLDER_A, 0);
    idmint_worker_info *list = NULL;
    char detail[256];
    size_t n = 0;
    int64_t seq;

    snowflake_ns(f, "fp", 2, &ns);
    seq = audit_last_seq(f);
    assert_int_equal(idmint__authority_lease_take(f->a, &ns, LEASE_MS, &a), 0);
    assert_int_equal(idmint_workers_list(f->a, ns.name, &list, &n), 0);
    assert_int_equal(n, 1);
    assert_int_equal(idmint_worker_info_at(list, 0)->size, sizeof(*list));
    assert_string_equal(idmint_worker_info_at(list, 0)->holder, "aaaaaaaa");
    assert_int_equal(idmint_worker_info_at(list, 0)->worker_id, a.worker_id);
    free(list);
    assert_true(audit_has(f, seq, "worker.take", ns.name, detail, sizeof(detail)));
    assert_non_null(strstr(detail, "holder=aaaaaaaa "));
    assert_null(strstr(detail, HOLDER_A));
    assert_int_equal(idmint__authority_lease_release(f->a, &ns, &a, a.fence_found), 0);
    assert_true(audit_has(f, seq, "worker.release", ns.name, NULL, 0));
}

/* Whatever a backend puts in its rows, every listed element carries the library's size. */
static void test_contract__listings_carry_the_element_size(void **state)
{
    struct fx *f = *state;
    idmint_ns_info ns, *list = NULL;
    size_t n = 0, i;
    int found = 0;

    snowflake_ns(f, "sized", 2, &ns);
    assert_int_equal(idmint_ns_list(f->a, &list, &n), 0);
    for (i = 0; i < n; i++) {
        const idmint_ns_info *e = idmint_ns_info_at(list, i);

        assert_int_equal(e->size, sizeof(*e));
        found += strcmp(e->name, ns.name) == 0;
    }
    assert_int_equal(found, 1);
    idmint_free(list);
}

/* Each child takes one id through its own authority: @p n children, 2^@p bits ids. */
static void race_takes(const idmint_ns_info *ns, int n, uint32_t *ids, int *won)
{
    int fds[RACERS][2], i;
    pid_t pids[RACERS];

    for (i = 0; i < n; i++) {
        assert_int_equal(pipe(fds[i]), 0);
        pids[i] = fork();
        assert_true(pids[i] >= 0);
        if (pids[i] == 0) {
            idmint_authority *a = NULL;
            struct idmint__lease l = {0};
            int64_t out[2] = {-1, 0};
            char holder[33];

            snprintf(holder, sizeof(holder), "%032x", i + 1);
            l = lease_for(holder, 0);
            if (idmint_authority_open(&a, backend.url, 0) == 0) {
                int rc = idmint__authority_lease_take(a, ns, LEASE_MS, &l);

                out[0] = rc;
                out[1] = rc == 0 ? l.worker_id : 0;
            }
            if (write(fds[i][1], out, sizeof(out)) != (ssize_t)sizeof(out))
                _exit(2);
            _exit(0);
        }
        close(fds[i][1]);
    }
    *won = 0;
    for (i = 0; i < n; i++) {
        int64_t got[2];

        assert_int_equal(read(fds[i][0], got, sizeof(got)), (ssize_t)sizeof(got));
        close(fds[i][0]);
        waitpid(pids[i], NULL, 0);
        if (got[0] == 0)
            ids[(*won)++] = (uint32_t)got[1];
        else if (got[0] != IDMINT_ENOWORKER)
            fail_msg("a racer got %lld", (long long)got[0]);
    }
}

static void test_contract__racing_takers_never_share_a_worker_id(void **state)
{
    struct fx *f = *state;
    idmint_ns_info ns;
    uint32_t ids[RACERS];
    int won, i, j;

    snowflake_ns(f, "race", 2, &ns); /* 4 ids for 6 racers */
    race_takes(&ns, RACERS, ids, &won);
    assert_int_equal(won, 4);
    for (i = 0; i < won; i++)
        for (j = i + 1; j < won; j++)
            assert_int_not_equal(ids[i], ids[j]);
}

/* ==== ranges ==== */

static void test_contract__ranges_do_not_overlap_and_replays_return_the_saved_one(void **state)
{
    struct fx *f = *state;
    idmint_ns_info ns;
    struct idmint__range r1 = {0}, r2 = {0}, again = {0};

    range_ns(f, "seq", 100, 100000, 1000, &ns);
    assert_int_equal(idmint__authority_range_reserve(f->a, ns.name, INC, "0001", 10, &r1), 0);
    assert_int_equal(idmint__authority_range_reserve(f->a, ns.name, INC, "0002", 10, &r2), 0);
    assert_int_equal(r1.start, 100);
    assert_int_equal(r1.end, 110);
    assert_int_equal(r2.start, 110);
    assert_int_equal(idmint__authority_range_reserve(f->a, ns.name, INC, "0001", 10, &again), 0);
    assert_int_equal(again.start, r1.start);
    assert_int_equal(again.end, r1.end);
    assert_int_equal(idmint__authority_range_reserve(f->a, ns.name, INC, "0001", 11, &again),
                     IDMINT_ECONFLICT);
    assert_int_equal(idmint__authority_range_reserve(f->a, ns.name, INC, "0003", 1001, &again),
                     IDMINT_EINVAL);
    assert_msg_has("max_block");
}

static void test_contract__ranges_are_cut_at_max_then_exhausted(void **state)
{
    struct fx *f = *state;
    idmint_ns_info ns;
    struct idmint__range r = {0};

    range_ns(f, "cut", 1, 15, 10, &ns);
    assert_int_equal(idmint__authority_range_reserve(f->a, ns.name, INC, "a", 10, &r), 0);
    assert_int_equal(idmint__authority_range_reserve(f->a, ns.name, INC, "b", 10, &r), 0);
    assert_int_equal(r.start, 11);
    assert_int_equal(r.end, 16);
    assert_int_equal(idmint__authority_range_reserve(f->a, ns.name, INC, "c", 1, &r),
                     IDMINT_EEXHAUSTED);
}

static void test_contract__ranges_refuse_disabled_unknown_and_snowflake(void **state)
{
    struct fx *f = *state;
    idmint_ns_info ns, s;
    struct idmint__range r = {0};

    range_ns(f, "refuse", 1, 1000, 10, &ns);
    snowflake_ns(f, "snow", 2, &s);
    assert_int_equal(idmint_ns_set_disabled(f->a, ns.name, 1), 0);
    assert_int_equal(idmint__authority_range_reserve(f->a, ns.name, INC, "a", 1, &r),
                     IDMINT_EDISABLED);
    assert_int_equal(idmint__authority_range_reserve(f->a, s.name, INC, "a", 1, &r), IDMINT_EINVAL);
    assert_int_equal(idmint__authority_range_reserve(f->a, "no-such-range-ns", INC, "a", 1, &r),
                     IDMINT_ENOTFOUND);
    assert_int_equal(idmint_ns_set_disabled(f->a, ns.name, 0), 0);
    assert_int_equal(idmint__authority_range_reserve(f->a, ns.name, INC, "a", 1, &r), 0);
    assert_int_equal(r.start, 1);
}

static void test_contract__forget_drops_older_records_so_a_repeat_gets_a_gap(void **state)
{
    struct fx *f = *state;
    idmint_ns_info ns;
    struct idmint__range r1 = {0}, r2 = {0}, r3 = {0}, again = {0};
    uint64_t forgotten = 99;

    range_ns(f, "forget", 1, 100000, 100, &ns);
    assert_int_equal(idmint__authority_range_reserve(f->a, ns.name, INC, "0001", 5, &r1), 0);
    assert_int_equal(idmint__authority_range_reserve(f->a, ns.name, INC, "0002", 5, &r2), 0);
    assert_int_equal(idmint__authority_range_reserve(f->a, ns.name, INC, "0003", 5, &r3), 0);
    assert_int_equal(idmint__authority_range_forget(f->a, ns.name, INC, "0003", &forgotten), 0);
    assert_int_equal(forgotten, 2);
    /* 0003 is kept; a repeat of forgotten 0001 reserves anew: a gap, never a duplicate. */
    assert_int_equal(idmint__authority_range_reserve(f->a, ns.name, INC, "0003", 5, &again), 0);
    assert_int_equal(again.start, r3.start);
    assert_int_equal(idmint__authority_range_reserve(f->a, ns.name, INC, "0001", 5, &again), 0);
    assert_true(again.start >= r3.end);
}

static void test_contract__racing_reservations_never_overlap(void **state)
{
    struct fx *f = *state;
    idmint_ns_info ns;
    int fds[RACERS][2], i, k;
    pid_t pids[RACERS];
    uint64_t *starts = calloc(RACERS * RANGE_RUN, sizeof(*starts));
    size_t n = 0, a, b;

    assert_non_null(starts);
    range_ns(f, "rrace", 1, IDMINT_MAX_VALUE, 7, &ns);
    for (i = 0; i < RACERS; i++) {
        assert_int_equal(pipe(fds[i]), 0);
        pids[i] = fork();
        assert_true(pids[i] >= 0);
        if (pids[i] == 0) {
            idmint_authority *au = NULL;
            char inc[33], req[17];
            uint64_t got[RANGE_RUN];

            memset(got, 0, sizeof(got));
            snprintf(inc, sizeof(inc), "%032x", i + 100);
            if (idmint_authority_open(&au, backend.url, 0) == 0)
                for (k = 0; k < RANGE_RUN; k++) {
                    struct idmint__range r = {0};

                    snprintf(req, sizeof(req), "%016x", k);
                    if (idmint__authority_range_reserve(au, ns.name, inc, req, 7, &r) != 0 ||
                        r.end != r.start + 7)
                        break;
                    got[k] = r.start;
                }
            if (write(fds[i][1], got, sizeof(got)) != (ssize_t)sizeof(got))
                _exit(2);
            _exit(0);
        }
        close(fds[i][1]);
    }
    for (i = 0; i < RACERS; i++) {
        uint64_t got[RANGE_RUN];

        assert_int_equal(read(fds[i][0], got, sizeof(got)), (ssize_t)sizeof(got));
        close(fds[i][0]);
        waitpid(pids[i], NULL, 0);
        for (k = 0; k < RANGE_RUN; k++) {
            assert_int_not_equal(got[k], 0); /* every reservation succeeded */
            starts[n++] = got[k];
        }
    }
    /* Every range is 7 values: no two starts closer than 7. */
    for (a = 0; a < n; a++)
        for (b = a + 1; b < n; b++) {
            uint64_t d = starts[a] > starts[b] ? starts[a] - starts[b] : starts[b] - starts[a];

            assert_true(d >= 7);
        }
    free(starts);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(test_contract__##name, setup, teardown)
        T(ns_create_get_and_conflict),
        T(ns_rules_are_applied),
        T(default_ns_exists_on_first_use),
        T(ns_disable_and_enable_are_audited),
        T(take_gives_distinct_ids_then_no_worker),
        T(take_applies_the_lease_rules),
        T(e_is_cut_at_the_end_of_the_time_bits),
        T(renew_extends_only_for_holder_and_generation),
        T(release_leaves_a_fence_the_next_taker_finds),
        T(release_cannot_park_the_id_past_its_lease),
        T(acquire_waits_past_the_fence_or_gives_the_id_back),
        T(disabled_namespace_refuses_take_and_renew),
        T(force_release_keeps_e_unless_bounded),
        T(listings_and_audit_show_only_a_fingerprint),
        T(listings_carry_the_element_size),
        T(racing_takers_never_share_a_worker_id),
        T(ranges_do_not_overlap_and_replays_return_the_saved_one),
        T(ranges_are_cut_at_max_then_exhausted),
        T(ranges_refuse_disabled_unknown_and_snowflake),
        T(forget_drops_older_records_so_a_repeat_gets_a_gap),
        T(racing_reservations_never_overlap),
#undef T
    };

    return cmocka_run_group_tests_name(
        getenv("IDMINT_TEST_AUTHORITY") != NULL ? getenv("IDMINT_TEST_AUTHORITY") : "sqlite", tests,
        group_setup, group_teardown);
}
