/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE /* syscall(), SYS_fork, SYS_clone, vfork(); this file only */
/*
 * Tests for src/fork_gate.c: every copy of a process the kernel can make
 * (libc's fork(), the raw fork and clone system calls, which run no atfork
 * handler, and vfork()) is told apart from its parent, so nothing is minted
 * twice from one lease, range or UUIDv7 pool. Real processes on a real
 * SQLite file; every ID of parent and child is collected and checked. Run a
 * second time on the getpid() fallback (unit.fork_gate_fallback).
 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "idmint.h"
#include "internal.h"
#include "testsupport.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define COUNT         100000u /* IDs each side mints, before and after the copy */
#define UUID_LEN      16u
#define RAND_TAIL_OFF 9u /* bytes 9..15 of a UUIDv7 hold 56 bits from the kernel */

/*
 * TSan cannot start threads in the child of a threaded fork; it knows
 * nothing of a raw clone (its shadow state keeps the parent's threads
 * running in the child and reports races with them); and it turns vfork()
 * into fork(). Under TSan only the libc fork() cases run, without threads
 * in the child.
 */
#ifdef __SANITIZE_THREAD__
#define CHILD_MAY_START_THREADS 0
#define SKIP_UNDER_TSAN()       skip()
#else
#define CHILD_MAY_START_THREADS 1
#define SKIP_UNDER_TSAN()       ((void)0)
#endif

enum how { HOW_LIBC_FORK, HOW_SYS_FORK, HOW_SYS_CLONE };

struct fixture {
    char *dir;
    char *url;
};

/* What a child reports before its IDs. */
struct child_report {
    int inherited_rc; /* the first call on the parent's handle */
    int own_rc;       /* opening and minting from a handle of its own */
    uint64_t n;       /* IDs that follow (or UUIDs) */
};

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));
    idmint_authority *a;
    idmint_ns_info info;

    if (f == NULL)
        return -1;
    f->dir = ts_tempdir();
    f->url = ts_sqlite_url(f->dir, "idmint.db");
    if (idmint_authority_open(&a, f->url, 0) != 0)
        return -1;
    idmint_ns_info_init(&info, IDMINT_KIND_SNOWFLAKE);
    snprintf(info.name, sizeof(info.name), "sf");
    if (idmint_ns_create(a, &info) != 0)
        return -1;
    idmint_ns_info_init(&info, IDMINT_KIND_RANGE);
    snprintf(info.name, sizeof(info.name), "rng");
    info.block = 1000000; /* few refills: a raw clone cannot wait for one to end */
    if (idmint_ns_create(a, &info) != 0)
        return -1;
    idmint_authority_close(a);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;

    free(f->url);
    ts_rmtree(f->dir);
    free(f);
    return 0;
}

/*
 * A copy of this process made @p how. The raw calls run no atfork handler,
 * as sandboxes and checkpoint tools that clone without libc do; without
 * CLONE_VM the child gets a copy of the memory and goes on, on a copy of
 * this stack, like fork().
 */
static pid_t copy_process(enum how how)
{
    if (how != HOW_LIBC_FORK)
        SKIP_UNDER_TSAN();
    switch (how) {
    case HOW_LIBC_FORK:
        return fork();
    case HOW_SYS_FORK:
#ifdef SYS_fork
        return (pid_t)syscall(SYS_fork);
#endif
    case HOW_SYS_CLONE:
        break;
    }
    return (pid_t)syscall(SYS_clone, (unsigned long)SIGCHLD, 0UL, 0UL, 0UL, 0UL);
}

static int write_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;

    while (len > 0) {
        ssize_t n = write(fd, p, len);

        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static int read_all(int fd, void *buf, size_t len)
{
    char *p = buf;

    while (len > 0) {
        ssize_t n = read(fd, p, len);

        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Mint @p n IDs one call at a time (the range's thread-cache path). 0 or the first error. */
static int mint(idmint *m, uint64_t *ids, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int rc = idmint_next(m, &ids[i]);

        if (rc != 0)
            return rc;
    }
    return 0;
}

static void wait_ok(pid_t pid)
{
    int status = 0;

    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

/*
 * The child of copy_case: mint on from the parent's handle for as long as
 * it lets us (an old library did, from the parent's lease or range), then
 * from a handle of its own; send everything to the parent. Exits.
 */
static void copy_child(const char *url, const char *ns, idmint *m, uint64_t *buf, int fd)
{
    struct child_report r = {0, 0, 0};
    idmint *own = NULL;

    alarm(60); /* a wedged child fails the test instead of hanging it */
    r.inherited_rc = mint(m, buf, COUNT);
    if (r.inherited_rc == 0)
        r.n = COUNT;
    idmint_close(m); /* in a copy: frees memory, leaves the parent's lease alone */
    if (CHILD_MAY_START_THREADS && (r.own_rc = idmint_open(&own, url, ns, NULL)) == 0) {
        r.own_rc = mint(own, buf + r.n, COUNT);
        if (r.own_rc == 0)
            r.n += COUNT;
        idmint_close(own);
    }
    if (write_all(fd, &r, sizeof(r)) != 0 || write_all(fd, buf, r.n * sizeof(*buf)) != 0)
        _exit(2);
    _exit(0);
}

/*
 * Open @p ns with its background thread idle when the process is copied:
 * a raw clone cannot wait for it, and a child cloned while it was inside
 * malloc() (reserving a range) would wait forever on the allocator's lock
 * in its own first allocation. So a range handle reserves its next range
 * at once (refill at 100% left) and is then left alone until the current
 * one of 10^6 values runs out, which these tests never reach.
 */
static void open_quiet(struct fixture *f, const char *ns, idmint **out)
{
    idmint_handle_info info;
    idmint_options o;

    idmint_options_init(&o);
    o.range_block = 1000000;
    o.refill_percent = 100;
    assert_int_equal(idmint_open(out, f->url, ns, &o), 0);
    idmint_handle_info_init(&info);
    for (int i = 0; i < 10000; i++) {
        assert_int_equal(idmint_info(*out, &info), 0);
        if (!info.is_range || info.range_reservations >= 2)
            return;
        idmint__sleep_ms(1);
    }
    fail_msg("the range's next block was not reserved within 10 s");
}

/*
 * Open @p ns, mint, copy the process @p how, and mint on in both: the child
 * must be refused on the parent's handle (IDMINT_EFORKED), may mint from a
 * handle of its own, and no ID may occur twice among all of them.
 */
static void copy_case(struct fixture *f, const char *ns, enum how how)
{
    uint64_t *all;
    struct child_report r;
    size_t n;
    idmint *m;
    pid_t pid;
    int fds[2];

    /* Before the handle opens: a skip with its renewal thread running would
     * leave that thread unjoined, which TSan reports as a leak and fails. */
    if (how != HOW_LIBC_FORK)
        SKIP_UNDER_TSAN();
    all = malloc(4 * (size_t)COUNT * sizeof(*all));
    assert_non_null(all);
    open_quiet(f, ns, &m);
    assert_int_equal(mint(m, all, COUNT), 0); /* fills the thread's range cache too */
    assert_int_equal(pipe(fds), 0);
    pid = copy_process(how);
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        copy_child(f->url, ns, m, all + 2 * (size_t)COUNT, fds[1]);
    }
    close(fds[1]);
    assert_int_equal(mint(m, all + COUNT, COUNT), 0);
    assert_int_equal(read_all(fds[0], &r, sizeof(r)), 0);
    assert_true(r.n <= 2 * (uint64_t)COUNT);
    assert_int_equal(read_all(fds[0], all + 2 * (size_t)COUNT, r.n * sizeof(*all)), 0);
    close(fds[0]);
    wait_ok(pid);
    n = 2 * (size_t)COUNT + r.n;
    print_message("%s: child on the parent's handle: %s; %llu child IDs; duplicates: %zu\n", ns,
                  idmint_strerror(r.inherited_rc), (unsigned long long)r.n,
                  ts_count_duplicates(all, n));
    assert_int_equal(ts_count_duplicates(all, n), 0);
    assert_int_equal(r.inherited_rc, IDMINT_EFORKED);
    assert_int_equal(r.own_rc, 0);
    assert_int_equal(idmint_next(m, &all[0]), 0); /* the child left the lease or range alone */
    idmint_close(m);
    free(all);
}

static int cmp_uuid(const void *a, const void *b)
{
    return memcmp(a, b, UUID_LEN);
}

/* Bytes 9..15: 56 bits straight from the kernel, no time, no counter. */
static int cmp_tail(const void *a, const void *b)
{
    return memcmp((const uint8_t *)a + RAND_TAIL_OFF, (const uint8_t *)b + RAND_TAIL_OFF,
                  UUID_LEN - RAND_TAIL_OFF);
}

/* Sort @p u by @p cmp and count the neighbours it calls equal. */
static size_t count_equal(uint8_t (*u)[UUID_LEN], size_t n, int (*cmp)(const void *, const void *))
{
    size_t dups = 0;

    qsort(u, n, UUID_LEN, cmp);
    for (size_t i = 1; i < n; i++)
        dups += cmp(u[i - 1], u[i]) == 0;
    return dups;
}

static size_t count_duplicate_uuids(uint8_t (*u)[UUID_LEN], size_t n)
{
    return count_equal(u, n, cmp_uuid);
}

/* UUIDv7 before and after a copy made @p how, in both processes: none twice. */
static void uuid_case(enum how how)
{
    uint8_t(*all)[UUID_LEN] = malloc(3 * (size_t)COUNT * UUID_LEN);
    pid_t pid;
    int fds[2];
    size_t dups, tails;

    assert_non_null(all);
    for (unsigned i = 0; i < COUNT; i++) /* leaves unused random bytes in the pool */
        assert_int_equal(idmint_uuid7(all[i]), 0);
    assert_int_equal(pipe(fds), 0);
    pid = copy_process(how);
    assert_true(pid >= 0);
    if (pid == 0) {
        int ok = 1;

        close(fds[0]);
        alarm(60);
        for (unsigned i = 0; i < COUNT && ok; i++)
            ok = idmint_uuid7(all[2 * (size_t)COUNT + i]) == 0;
        ok = ok && write_all(fds[1], all[2 * (size_t)COUNT], (size_t)COUNT * UUID_LEN) == 0;
        _exit(ok ? 0 : 1);
    }
    close(fds[1]);
    for (unsigned i = 0; i < COUNT; i++)
        assert_int_equal(idmint_uuid7(all[COUNT + i]), 0);
    assert_int_equal(read_all(fds[0], all[2 * (size_t)COUNT], (size_t)COUNT * UUID_LEN), 0);
    close(fds[0]);
    wait_ok(pid);
    dups = count_duplicate_uuids(all, 3 * (size_t)COUNT);
    tails = count_equal(all, 3 * (size_t)COUNT, cmp_tail);
    print_message("uuid7: duplicates: %zu; equal random tails: %zu\n", dups, tails);
    assert_int_equal(dups, 0);
    /* A child drawing from the parent's pool repeats its random bits even
     * where the clock or counter differ: equal tails show it at once. */
    assert_int_equal(tails, 0);
    free(all);
}

static void test_fork_gate__a_libc_fork_child_is_refused_the_parents_lease(void **state)
{
    copy_case(*state, "sf", HOW_LIBC_FORK);
}

static void test_fork_gate__a_sys_fork_child_is_refused_the_parents_lease(void **state)
{
    copy_case(*state, "sf", HOW_SYS_FORK);
}

static void test_fork_gate__a_sys_clone_child_is_refused_the_parents_lease(void **state)
{
    copy_case(*state, "sf", HOW_SYS_CLONE);
}

static void test_fork_gate__a_libc_fork_child_is_refused_the_parents_range(void **state)
{
    copy_case(*state, "rng", HOW_LIBC_FORK);
}

static void test_fork_gate__a_sys_fork_child_is_refused_the_parents_range(void **state)
{
    copy_case(*state, "rng", HOW_SYS_FORK);
}

static void test_fork_gate__a_sys_clone_child_is_refused_the_parents_range(void **state)
{
    copy_case(*state, "rng", HOW_SYS_CLONE);
}

static void test_fork_gate__a_sys_fork_child_draws_uuids_of_its_own(void **state)
{
    (void)state;
    uuid_case(HOW_SYS_FORK);
}

static void test_fork_gate__a_sys_clone_child_draws_uuids_of_its_own(void **state)
{
    (void)state;
    uuid_case(HOW_SYS_CLONE);
}

/*
 * A vfork() child shares its parent's memory while the parent's thread
 * waits for it to exit: POSIX allows it only _exit() or exec. A mint there
 * either goes on from the parent's very own state (the page is shared, so
 * the id matches: the parent then continues after it) or, on the getpid()
 * fallback, is refused. Either way nothing is minted twice, and the
 * parent's handles keep working.
 */
static void test_fork_gate__a_vfork_child_never_repeats_the_parent(void **state)
{
    struct fixture *f = *state;
    uint64_t *ids;
    uint8_t(*uuids)[UUID_LEN];
    volatile int child_rc[3] = {1, 1, 1};
    idmint *sf, *rng;
    pid_t pid;
    size_t n;
    int want = idmint__fork_gate_is_wiping() ? 0 : IDMINT_EFORKED;

    SKIP_UNDER_TSAN();
    ids = malloc(6 * (size_t)COUNT * sizeof(*ids));
    uuids = malloc(2 * (size_t)COUNT * UUID_LEN);
    assert_non_null(ids);
    assert_non_null(uuids);
    open_quiet(f, "sf", &sf);
    open_quiet(f, "rng", &rng);
    assert_int_equal(mint(sf, ids, COUNT), 0);
    assert_int_equal(mint(rng, ids + COUNT, COUNT), 0);
    assert_int_equal(idmint_uuid7(uuids[0]), 0);
    memset(ids + 2 * (size_t)COUNT, 0, 2 * (size_t)COUNT * sizeof(*ids));
    pid = vfork();
    if (pid == 0) {
        /* Only mints into memory the parent reads after we exit. */
        child_rc[0] = mint(sf, ids + 2 * (size_t)COUNT, COUNT);
        child_rc[1] = mint(rng, ids + 3 * (size_t)COUNT, COUNT);
        child_rc[2] = 0;
        for (unsigned i = 1; i < COUNT && child_rc[2] == 0; i++)
            child_rc[2] = idmint_uuid7(uuids[i]);
        _exit(0);
    }
    assert_true(pid > 0);
    wait_ok(pid);
    assert_int_equal(mint(sf, ids + 4 * (size_t)COUNT, COUNT), 0);
    assert_int_equal(mint(rng, ids + 5 * (size_t)COUNT, COUNT), 0);
    for (unsigned i = 0; i < COUNT; i++)
        assert_int_equal(idmint_uuid7(uuids[COUNT + i]), 0);
    print_message("vfork: child's mints: %s, %s, uuid7 %s\n", idmint_strerror(child_rc[0]),
                  idmint_strerror(child_rc[1]), idmint_strerror(child_rc[2]));
    assert_int_equal(child_rc[0], want);
    assert_int_equal(child_rc[1], want);
    assert_int_equal(child_rc[2], 0); /* a UUID needs no lease: a fresh draw either way */
    /* Refused mints wrote nothing: keep only what was minted. */
    n = 0;
    for (size_t i = 0; i < 6 * (size_t)COUNT; i++)
        if (ids[i] != 0)
            ids[n++] = ids[i];
    assert_int_equal(n, want == 0 ? 6 * (size_t)COUNT : 4 * (size_t)COUNT);
    assert_int_equal(ts_count_duplicates(ids, n), 0);
    assert_int_equal(count_duplicate_uuids(uuids, 2 * (size_t)COUNT), 0);
    idmint_close(rng);
    idmint_close(sf);
    free(uuids);
    free(ids);
}

/*
 * A raw clone runs no atfork handler, so the process clock's ticker (a
 * thread the child does not have) would be trusted on: the child's first
 * idmint_open must set the clock up again, as the handler does.
 */
static void test_fork_gate__a_raw_clone_starts_the_process_clock_over(void **state)
{
    struct clock *c = idmint__clock_system();
    uint64_t start = idmint__deadline_now_ms();
    pid_t pid;

    (void)state;
    /* Read in every millisecond until the ticker runs (it starts at 48 of 64). */
    while (!atomic_load(&c->is_ticking) && idmint__deadline_now_ms() - start < 10000)
        (void)idmint__clock_now_ms(c);
    if (!atomic_load(&c->is_ticking))
        skip(); /* no invariant TSC here: the clock never ticks */
    pid = copy_process(HOW_SYS_FORK);
    assert_true(pid >= 0);
    if (pid == 0) {
        int was_ticking = atomic_load(&c->is_ticking);

        idmint__fork_sync(); /* what idmint_open does first */
        _exit(was_ticking && !atomic_load(&c->is_ticking) ? 0 : 1);
    }
    wait_ok(pid);
}

/*
 * A handle lives on mmap'd pages, which LeakSanitizer does not scan unless
 * told: a program that exits with a handle open, after a lost lease ended
 * its renewal thread, must not read as leaking what the handle holds. The
 * check runs in a child, whose exit runs LSan (ASan builds; elsewhere the
 * child just exits 0).
 */
static void test_fork_gate__a_handle_left_open_leaks_nothing(void **state)
{
    struct fixture *f = *state;
    pid_t pid;

    if (!CHILD_MAY_START_THREADS)
        skip();
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        static idmint *left_open; /* a global, as a program keeps its handle */
        idmint_authority *a;
        idmint_handle_info info;
        idmint_options o;
        uint64_t id;

        alarm(60);
        idmint_options_init(&o);
        o.lease_ms = 2000;
        o.renew_ms = 50;
        if (idmint_open(&left_open, f->url, "sf", &o) != 0)
            _exit(2);
        idmint_handle_info_init(&info);
        if (idmint_info(left_open, &info) != 0 || idmint_authority_open(&a, f->url, 0) != 0 ||
            idmint_worker_force_release(a, "sf", 0, info.worker_id) != 0)
            _exit(3);
        idmint_authority_close(a);
        for (int i = 0; i < 2000 && idmint_next(left_open, &id) != IDMINT_ELEASELOST; i++)
            idmint__sleep_ms(5); /* the renewal is refused: its thread ends */
        exit(0);                 /* runs the leak check, with the handle still open */
    }
    wait_ok(pid);
}

/* Two fork ids of one process agree; a child's differs from its parent's. */
static void test_fork_gate__a_childs_fork_id_differs_from_its_parents(void **state)
{
    uint64_t parent = idmint__fork_id();
    const _Atomic uint64_t *word = idmint__fork_word();
    int fds[2];
    pid_t pid;

    (void)state;
    assert_int_not_equal(parent, 0);
    assert_int_equal(idmint__fork_id(), parent);
    assert_false(idmint__fork_is_other(word, parent));
    assert_int_equal(atomic_load(word), idmint__fork_gate_is_wiping() ? parent : 0);
    assert_int_equal(pipe(fds), 0);
    pid = copy_process(HOW_SYS_FORK);
    assert_true(pid >= 0);
    if (pid == 0) {
        uint64_t got[3];

        got[0] = atomic_load(word); /* before anything claims: 0 on a wiping kernel */
        got[1] = idmint__fork_id();
        got[2] = (uint64_t)idmint__fork_is_other(word, parent);
        _exit(write_all(fds[1], got, sizeof(got)) == 0 ? 0 : 1);
    }
    {
        uint64_t got[3];

        close(fds[1]);
        assert_int_equal(read_all(fds[0], got, sizeof(got)), 0);
        close(fds[0]);
        wait_ok(pid);
        assert_int_equal(got[0], 0);
        assert_int_not_equal(got[1], 0);
        assert_int_not_equal(got[1], parent);
        assert_int_equal(got[2], 1);
    }
    assert_int_equal(idmint__fork_id(), parent); /* the parent is still itself */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
        T(test_fork_gate__a_childs_fork_id_differs_from_its_parents),
        T(test_fork_gate__a_libc_fork_child_is_refused_the_parents_lease),
        T(test_fork_gate__a_sys_fork_child_is_refused_the_parents_lease),
        T(test_fork_gate__a_sys_clone_child_is_refused_the_parents_lease),
        T(test_fork_gate__a_libc_fork_child_is_refused_the_parents_range),
        T(test_fork_gate__a_sys_fork_child_is_refused_the_parents_range),
        T(test_fork_gate__a_sys_clone_child_is_refused_the_parents_range),
        T(test_fork_gate__a_sys_fork_child_draws_uuids_of_its_own),
        T(test_fork_gate__a_sys_clone_child_draws_uuids_of_its_own),
        T(test_fork_gate__a_vfork_child_never_repeats_the_parent),
        T(test_fork_gate__a_raw_clone_starts_the_process_clock_over),
        T(test_fork_gate__a_handle_left_open_leaks_nothing),
#undef T
    };

    /* The second run (CTest unit.fork_gate_fallback): a kernel without MADV_WIPEONFORK. */
    if (getenv("IDMINT_TEST_FORK_FALLBACK") != NULL && idmint__fork_gate_refuse_wipe() != 0)
        return 1;
    return cmocka_run_group_tests_name("fork_gate", tests, NULL, NULL);
}
