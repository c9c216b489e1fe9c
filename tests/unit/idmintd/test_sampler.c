/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for cmd/idmintd/sampler.c: the first pass comes at once and
 * reads only the worker rows of the daemon's own snowflake namespaces; a
 * status request makes the passes full (the namespace list, every
 * snowflake namespace's rows, the audit tail, newest first); a pass a
 * reader holds outlives the passes after it (ASan would see it freed); the
 * sampler stops, twice, and leaves no pass behind. One daemon for the whole
 * file: the sampler is one per process.
 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "daemon_fixture.h"
#include "sampler.h"

#include <stdlib.h>
#include <string.h>

/* One daemon for the file, as cmocka's group state: the sampler thread is one per process. */
static struct td_daemon *daemon_under_test;

static int group_setup(void **state)
{
    if (td_setup(state) != 0)
        return -1;
    daemon_under_test = *state;
    if (sampler_start(&daemon_under_test->d) != 0) {
        td_teardown(state);
        return -1;
    }
    return 0;
}

static int group_teardown(void **state)
{
    sampler_stop();
    return td_teardown(state);
}

static int has_pass(void *arg)
{
    const struct sampler_cache *c = sampler_cache_get();
    int ok = c != NULL && (arg == NULL || c != arg);

    sampler_cache_put(c);
    return ok;
}

static void test_sampler__the_first_pass_reads_only_the_own_snowflake_rows(void **state)
{
    const struct sampler_cache *c;
    const struct sampler_rows *rows;
    idmint_handle_info info;
    size_t i;
    int is_ours = 0;

    (void)state;
    assert_true(td_wait_for(has_pass, NULL));
    c = sampler_cache_get();
    assert_non_null(c);
    assert_false(c->is_full);
    assert_null(c->ns);
    assert_int_equal(c->n_audit, 0);
    assert_int_equal(c->n_workers, 1); /* rng is a range namespace: no rows */
    assert_null(sampler_rows_find(c, "rng"));
    assert_non_null(rows = sampler_rows_find(c, "snow"));
    assert_int_equal(rows->rc, 0);
    assert_true(rows->read_ms >= c->read_ms);
    idmint_handle_info_init(&info);
    assert_int_equal(handles_info(handles_find(&daemon_under_test->d.handles, "snow"), &info), 0);
    for (i = 0; i < rows->n; i++)
        is_ours |= idmint_worker_info_at(rows->rows, i)->worker_id == info.worker_id;
    assert_true(is_ours);
    sampler_cache_put(c);
}

static void test_sampler__a_status_request_makes_the_passes_full(void **state)
{
    const struct sampler_cache *c;
    size_t i;
    int has_snow = 0, has_rng = 0;

    (void)state;
    sampler_watch();
    assert_true(td_sampler_full_pass());
    c = sampler_cache_get();
    assert_int_equal(c->ns_rc, 0);
    assert_int_equal(c->n_ns, 2);
    for (i = 0; i < c->n_ns; i++) {
        has_snow |= strcmp(idmint_ns_info_at(c->ns, i)->name, "snow") == 0;
        has_rng |= strcmp(idmint_ns_info_at(c->ns, i)->name, "rng") == 0;
    }
    assert_true(has_snow && has_rng);
    assert_non_null(sampler_rows_find(c, "snow"));
    assert_int_equal(c->audit_rc, 0);
    assert_true(c->n_audit > 0); /* the namespaces' creation, at least */
    for (i = 1; i < c->n_audit; i++)
        assert_true(c->audit[i - 1].seq > c->audit[i].seq); /* newest first */
    sampler_cache_put(c);
}

static void test_sampler__a_held_pass_outlives_the_next(void **state)
{
    const struct sampler_cache *old, *cur;

    (void)state;
    assert_non_null(old = sampler_cache_get());
    assert_true(td_wait_for(has_pass, (void *)(uintptr_t)old));
    cur = sampler_cache_get();
    assert_ptr_not_equal(cur, old);
    assert_true(cur->read_ms >= old->read_ms);
    /* Still ours to read: freed only when we put it back. */
    assert_string_equal(old->workers[0].name, "snow");
    sampler_cache_put(old);
    sampler_cache_put(cur);
}

static void test_sampler__stop_leaves_no_pass_and_may_be_repeated(void **state)
{
    (void)state;
    sampler_stop();
    assert_null(sampler_cache_get());
    sampler_stop();
    assert_null(sampler_cache_get());
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sampler__the_first_pass_reads_only_the_own_snowflake_rows),
        cmocka_unit_test(test_sampler__a_status_request_makes_the_passes_full),
        cmocka_unit_test(test_sampler__a_held_pass_outlives_the_next),
        cmocka_unit_test(test_sampler__stop_leaves_no_pass_and_may_be_repeated),
    };

    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
