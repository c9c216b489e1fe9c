/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for src/authority.c through the public admin API: audit actors
 * and times, worker and audit lists, the size of their elements, and store
 * URLs that cannot work. The namespace rules are test_authority_ns.c's;
 * storage semantics the store contract suite's (tests/store/).
 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "authority_fixture.h"
#include "idmint.h"
#include "internal.h"
#include "testsupport.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define FAKE_NOW_MS INT64_C(1780000000000) /* 2026-05-28 */

struct fx {
    char *dir;
    char *url;
    idmint_authority *a;
    struct clock clk; /* lent to the authority: reads fake_now */
};

static int64_t fixed_clock(void *ctx)
{
    return *(const int64_t *)ctx;
}

static uint64_t still_mono(void *ctx)
{
    (void)ctx;
    return 0;
}

static int64_t fake_now = FAKE_NOW_MS;

/* Set the authority's clock to @p ms, also backwards (a new clock: the old one only goes forward).
 */
static void set_now(struct fx *f, int64_t ms)
{
    fake_now = ms;
    idmint__clock_init(&f->clk, fixed_clock, still_mono, &fake_now);
}

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof(*f));

    if (f == NULL || (f->dir = ts_tempdir()) == NULL ||
        (f->url = ts_sqlite_url(f->dir, "auth.db")) == NULL)
        return -1;
    unsetenv("IDMINT_ACTOR");
    set_now(f, FAKE_NOW_MS);
    if (idmint__authority_open_clock(&f->a, f->url, 0, &f->clk, NULL) != 0)
        return -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;

    idmint_authority_close(f->a);
    ts_rmtree(f->dir);
    free(f->url);
    free(f);
    return 0;
}

/* ==== validation ==== */

/* ==== reading, default, audit ==== */

static void test_authority__actor_is_the_os_user_never_idmint_actor(void **state)
{
    struct fx *f = *state;
    idmint_ns_info i;
    idmint_audit_entry *au = NULL;
    char want[64];
    size_t n = 0;

    /* Any process can set an environment variable: it must not name anyone. */
    setenv("IDMINT_ACTOR", "alice@ops", 1);
    ts_ns_named(&i, IDMINT_KIND_RANGE, "ledger");
    assert_int_equal(idmint_ns_create(f->a, &i), 0);
    fake_now += 60000;
    assert_int_equal(idmint_ns_set_disabled(f->a, "ledger", 1), 0);
    unsetenv("IDMINT_ACTOR");
    assert_int_equal(idmint_audit_list(f->a, 0, 100, &au, &n), 0);
    assert_int_equal(n, 2);
    snprintf(want, sizeof(want), "(%lu)", (unsigned long)getuid());
    assert_null(strstr(idmint_audit_entry_at(au, 0)->actor, "alice"));
    assert_non_null(strstr(idmint_audit_entry_at(au, 0)->actor, want));
    assert_string_equal(idmint_audit_entry_at(au, 1)->action, "ns.disable");
    assert_string_equal(idmint_audit_entry_at(au, 1)->actor, idmint_audit_entry_at(au, 0)->actor);
    assert_int_equal(idmint_audit_entry_at(au, 1)->at_ms, FAKE_NOW_MS + 60000);
    free(au);
}

static void test_authority__workers_list_shows_fingerprints_only(void **state)
{
    struct fx *f = *state;
    idmint_ns_info i;
    idmint_worker_info *w = NULL;
    idmint_handle_info info;
    idmint_options o;
    idmint *m = NULL;
    size_t n = 0;

    ts_ns_named(&i, IDMINT_KIND_SNOWFLAKE, "fp");
    i.layout.epoch_ms = FAKE_NOW_MS - 1000;
    assert_int_equal(idmint_ns_create(f->a, &i), 0);
    idmint_options_init(&o);
    assert_int_equal(idmint_open(&m, f->url, "fp", &o), 0);
    idmint_handle_info_init(&info);
    assert_int_equal(idmint_info(m, &info), 0);
    assert_int_equal(idmint_workers_list(f->a, "fp", &w, &n), 0);
    assert_int_equal(n, 1);
    assert_int_equal(idmint_worker_info_at(w, 0)->size, sizeof(*w));
    assert_int_equal(strlen(idmint_worker_info_at(w, 0)->holder), 8);
    assert_memory_equal(idmint_worker_info_at(w, 0)->holder, info.incarnation, 8);
    assert_null(strstr(idmint_worker_info_at(w, 0)->holder, info.incarnation));
    free(w);
    idmint_close(m);
}

static void test_authority__workers_list_shows_rows_of_an_existing_ns(void **state)
{
    struct fx *f = *state;
    idmint_ns_info i;
    idmint_worker_info *w = NULL;
    size_t n = 99;

    ts_ns_named(&i, IDMINT_KIND_SNOWFLAKE, "empty");
    assert_int_equal(idmint_ns_create(f->a, &i), 0);
    assert_int_equal(idmint_workers_list(f->a, "empty", &w, &n), 0);
    assert_int_equal(n, 0);
    idmint_free(w);
}

/* ==== ABI guards: the struct sizes of idmint.h ==== */

static void test_authority__lists_carry_the_element_size(void **state)
{
    struct fx *f = *state;
    const char *names[] = {"alpha", "beta", "gamma"};
    idmint_ns_info i, *list = NULL;
    idmint_audit_entry *au = NULL;
    size_t n = 0, k;

    for (k = 0; k < 3; k++) {
        ts_ns_named(&i, IDMINT_KIND_RANGE, names[k]);
        assert_int_equal(idmint_ns_create(f->a, &i), 0);
    }
    assert_int_equal(idmint_ns_list(f->a, &list, &n), 0);
    assert_int_equal(n, 3);
    for (k = 0; k < n; k++) {
        /* Built from the same header, both walks agree. */
        assert_ptr_equal(idmint_ns_info_at(list, k), &list[k]);
        assert_string_equal(idmint_ns_info_at(list, k)->name, list[k].name);
        assert_string_equal(idmint_ns_info_at(list, k)->name, names[k]);
        assert_int_equal(list[k].size, sizeof(list[k]));
    }
    idmint_free(list);
    assert_int_equal(idmint_audit_list(f->a, 0, 100, &au, &n), 0);
    assert_int_equal(n, 3);
    for (k = 0; k < n; k++) {
        assert_ptr_equal(idmint_audit_entry_at(au, k), &au[k]);
        assert_int_equal(au[k].size, sizeof(au[k]));
        assert_string_equal(idmint_audit_entry_at(au, k)->ns, names[k]);
    }
    idmint_free(au);
}

/*
 * An array as a newer library returns it: every element larger than this
 * header's struct and saying so in its size. The accessors land on each
 * element where list[i] would not.
 */
#define NEWER_PAD 32

static void test_authority__accessors_step_by_the_element_size(void **state)
{
    enum { N = 5 };
    size_t k;
    size_t ns_stride = sizeof(idmint_ns_info) + NEWER_PAD;
    size_t w_stride = sizeof(idmint_worker_info) + NEWER_PAD;
    size_t au_stride = sizeof(idmint_audit_entry) + NEWER_PAD;
    char *ns_buf = calloc(N, ns_stride), *w_buf = calloc(N, w_stride);
    char *au_buf = calloc(N, au_stride);

    (void)state;
    assert_non_null(ns_buf);
    assert_non_null(w_buf);
    assert_non_null(au_buf);
    for (k = 0; k < N; k++) {
        idmint_ns_info *ns = (idmint_ns_info *)(void *)(ns_buf + k * ns_stride);
        idmint_worker_info *w = (idmint_worker_info *)(void *)(w_buf + k * w_stride);
        idmint_audit_entry *e = (idmint_audit_entry *)(void *)(au_buf + k * au_stride);

        ns->size = ns_stride;
        snprintf(ns->name, sizeof(ns->name), "ns-%zu", k);
        w->size = w_stride;
        w->worker_id = (uint32_t)(100 + k);
        e->size = au_stride;
        e->seq = (int64_t)(1000 + k);
    }
    for (k = 0; k < N; k++) {
        const idmint_ns_info *ns = idmint_ns_info_at((const idmint_ns_info *)(void *)ns_buf, k);
        const idmint_worker_info *w =
            idmint_worker_info_at((const idmint_worker_info *)(void *)w_buf, k);
        const idmint_audit_entry *e =
            idmint_audit_entry_at((const idmint_audit_entry *)(void *)au_buf, k);
        char want[16];

        assert_ptr_equal(ns, ns_buf + k * ns_stride);
        snprintf(want, sizeof(want), "ns-%zu", k);
        assert_string_equal(ns->name, want);
        assert_ptr_equal(w, w_buf + k * w_stride);
        assert_int_equal(w->worker_id, 100 + k);
        assert_ptr_equal(e, au_buf + k * au_stride);
        assert_int_equal(e->seq, 1000 + k);
    }
    free(ns_buf);
    free(w_buf);
    free(au_buf);
}

/* ==== stores that cannot work ==== */

/* A folder that is not there will not appear by waiting: a set-up to fix, not an outage. */
static void test_authority__a_missing_folder_is_invalid_and_made_by_no_one(void **state)
{
    idmint_authority *a = (idmint_authority *)state; /* sentinel */
    struct stat sb;

    assert_int_equal(idmint_authority_open(&a, "sqlite:/nonexistent-dir/x.db", 0), IDMINT_EINVAL);
    assert_non_null(strstr(idmint_errmsg(), "/nonexistent-dir/x.db"));
    assert_non_null(strstr(idmint_errmsg(), "does not exist"));
    assert_int_equal(stat("/nonexistent-dir", &sb), -1);
    assert_ptr_equal(a, (idmint_authority *)state);
}

static void test_authority__unknown_scheme_is_invalid(void **state)
{
    idmint_authority *a = (idmint_authority *)state;

    assert_int_equal(idmint_authority_open(&a, "foo:bar", 0), IDMINT_EINVAL);
    assert_non_null(strstr(idmint_errmsg(), "foo:bar"));
    assert_int_equal(idmint_authority_open(&a, "sqlite:", 0), IDMINT_EINVAL);
    assert_int_equal(idmint_authority_open(&a, "sqlite:/tmp/x.db", 70000), IDMINT_EINVAL);
    assert_int_equal(idmint_authority_open(NULL, "sqlite:/tmp/x.db", 0), IDMINT_EINVAL);
    assert_ptr_equal(a, (idmint_authority *)state);
    idmint_authority_close(NULL);
}

static void test_authority__read_only_store_refuses_writes_as_unavailable(void **state)
{
    struct fx *f = *state;
    idmint_authority *ro = NULL;
    idmint_ns_info i, got;
    char url[600];

    ts_ns_named(&i, IDMINT_KIND_RANGE, "kept");
    assert_int_equal(idmint_ns_create(f->a, &i), 0);
    /* Root ignores file modes, so read-only comes from SQLite's URI mode=ro. */
    snprintf(url, sizeof(url), "sqlite:file:%s/auth.db?mode=ro", f->dir);
    assert_int_equal(idmint_authority_open(&ro, url, 0), 0);
    idmint_ns_info_init(&got, 0);
    assert_int_equal(idmint_ns_get(ro, "kept", &got), 0);
    ts_ns_named(&i, IDMINT_KIND_RANGE, "new");
    assert_int_equal(idmint_ns_create(ro, &i), IDMINT_EUNAVAILABLE);
    assert_non_null(strstr(idmint_errmsg(), "read-only"));
    assert_int_equal(idmint_ns_set_disabled(ro, "kept", 1), IDMINT_EUNAVAILABLE);
    /* Nor is "default" conjured up on a store that cannot keep it. */
    assert_int_equal(idmint_ns_get(ro, "default", &got), IDMINT_EUNAVAILABLE);
    idmint_authority_close(ro);
    assert_int_equal(ts_ns_count(f->a), 1);
    assert_int_equal(ts_audit_count(f->a), 1);
    assert_int_equal(idmint_ns_get(f->a, "kept", &got), 0);
    assert_int_equal(got.is_disabled, 0);
}

static void test_authority__null_url_reads_idmint_authority(void **state)
{
    struct fx *f = *state;
    idmint_authority *a = NULL;
    idmint_ns_info i, got;
    char *url = ts_sqlite_url(f->dir, "env.db");
    char path[600];
    struct stat sb;

    assert_non_null(url);
    setenv("IDMINT_AUTHORITY", url, 1);
    assert_int_equal(idmint_authority_open(&a, NULL, 0), 0);
    unsetenv("IDMINT_AUTHORITY");
    ts_ns_named(&i, IDMINT_KIND_RANGE, "via-env");
    assert_int_equal(idmint_ns_create(a, &i), 0);
    idmint_authority_close(a);
    snprintf(path, sizeof(path), "%s/env.db", f->dir);
    assert_int_equal(stat(path, &sb), 0);
    idmint_ns_info_init(&got, 0);
    assert_int_equal(idmint_ns_get(f->a, "via-env", &got), IDMINT_ENOTFOUND);
    free(url);
}

static void test_authority__many_processes_open_one_new_file_at_once(void **state)
{
    struct fx *f = *state;
    enum { PROCS = 8 };
    char *url = ts_sqlite_url(f->dir, "new.db");
    idmint_authority *a = NULL;
    idmint_audit_entry *au = NULL;
    pid_t pids[PROCS];
    int gate[2];
    size_t n = 0;

    assert_non_null(url);
    assert_int_equal(pipe(gate), 0);
    for (int k = 0; k < PROCS; k++) {
        pids[k] = fork();
        assert_true(pids[k] >= 0);
        if (pids[k] == 0) {
            idmint_authority *mine = NULL;
            idmint_ns_info got;
            char c;
            int rc;

            close(gate[1]);
            while (read(gate[0], &c, 1) > 0)
                ;
            rc = idmint_authority_open(&mine, url, 0);
            idmint_ns_info_init(&got, 0);
            if (rc == 0)
                rc = idmint_ns_get(mine, "default", &got);
            if (rc != 0)
                fprintf(stderr, "child %d: %s: %s\n", k, idmint_strerror(rc), idmint_errmsg());
            idmint_authority_close(mine);
            _exit(rc == 0 ? 0 : 1);
        }
    }
    close(gate[0]);
    close(gate[1]);
    for (int k = 0; k < PROCS; k++) {
        int status;

        assert_int_equal(waitpid(pids[k], &status, 0), pids[k]);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
    }
    assert_int_equal(idmint_authority_open(&a, url, 0), 0);
    assert_int_equal(idmint_audit_list(a, 0, 100, &au, &n), 0);
    assert_int_equal(n, 1); /* "default" was created exactly once */
    free(au);
    idmint_authority_close(a);
    free(url);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_authority__actor_is_the_os_user_never_idmint_actor),
        T(test_authority__workers_list_shows_fingerprints_only),
        T(test_authority__workers_list_shows_rows_of_an_existing_ns),
        T(test_authority__lists_carry_the_element_size),
        cmocka_unit_test(test_authority__accessors_step_by_the_element_size),
        cmocka_unit_test(test_authority__a_missing_folder_is_invalid_and_made_by_no_one),
        cmocka_unit_test(test_authority__unknown_scheme_is_invalid),
        T(test_authority__read_only_store_refuses_writes_as_unavailable),
        T(test_authority__null_url_reads_idmint_authority),
        T(test_authority__many_processes_open_one_new_file_at_once),
    };

    return cmocka_run_group_tests_name("authority", tests, NULL, NULL);
}
