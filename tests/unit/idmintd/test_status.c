/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for cmd/idmintd/status.c, the one place the status figures
 * are judged: before the sampler's first full pass the store is "being
 * read" and only the daemon's own namespaces are known; after it, every
 * namespace is listed by name with its derived figures (a range's values
 * left and their share, a layout's lifetime used, the worker rows with the
 * daemon's own marked); times in the audit are spelled out for an admin
 * only; counters turn into the levels the page shows; latency buckets grow.
 * One daemon for the whole file, in order: the sampler is one per process.
 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "daemon_fixture.h"
#include "status.h"

#include <stdlib.h>
#include <string.h>

/* One daemon for the file, as cmocka's group state: the sampler is one per process. */
static struct td_daemon *daemon_under_test;

static int group_setup(void **state)
{
    if (td_setup(state) != 0)
        return -1;
    daemon_under_test = *state;
    return 0;
}

static int group_teardown(void **state)
{
    sampler_stop();
    return td_teardown(state);
}

static const struct status_ns *ns_named(const struct status_view *v, const char *name)
{
    size_t i;

    for (i = 0; i < v->n_ns; i++)
        if (strcmp(v->ns[i].name, name) == 0)
            return &v->ns[i];
    return NULL;
}

static void test_status__before_a_full_pass_only_the_own_namespaces_are_known(void **state)
{
    struct status_view v;
    const struct status_ns *snow, *rng;

    (void)state;
    assert_int_equal(status_view_take(&daemon_under_test->d, 1, &v), 0);
    assert_null(v.cache);
    assert_int_equal(v.store_level, STATUS_WARN);
    assert_non_null(strstr(v.store_problem, "reading the store"));
    assert_int_equal(v.n_ns, 2);
    assert_string_equal(v.ns[0].name, "rng"); /* by name */
    assert_string_equal(v.ns[1].name, "snow");
    assert_non_null(rng = ns_named(&v, "rng"));
    assert_non_null(snow = ns_named(&v, "snow"));
    assert_false(rng->is_listed);
    assert_int_equal(rng->kind, IDMINT_KIND_RANGE);
    assert_int_equal(rng->values_left, 0); /* not listed: not known */
    assert_non_null(rng->own);
    assert_int_equal(snow->kind, IDMINT_KIND_SNOWFLAKE);
    assert_null(snow->rows);
    /* main.c sets is_ready once the eager namespaces are open. */
    assert_false(v.is_ready);
    assert_non_null(strstr(v.ready_reason, "starting"));
    assert_null(v.audit_detail);
    status_view_free(&v);
    atomic_store(&daemon_under_test->d.is_ready, 1);
    assert_int_equal(status_view_take(&daemon_under_test->d, 1, &v), 0);
    assert_true(v.is_ready);
    assert_string_equal(v.ready_reason, "");
    status_view_free(&v);
}

static void test_status__a_full_pass_lists_every_namespace_with_its_figures(void **state)
{
    struct status_view v;
    const struct status_ns *snow, *rng;
    idmint_handle_info info;
    int64_t end_ms;
    int expect;
    size_t i;
    int has_own = 0;

    (void)state;
    assert_int_equal(sampler_start(&daemon_under_test->d), 0);
    sampler_watch();
    assert_true(td_sampler_full_pass());
    assert_int_equal(status_view_take(&daemon_under_test->d, 1, &v), 0);
    assert_int_equal(v.store_level, STATUS_OK);
    assert_string_equal(v.store_problem, "");
    assert_non_null(rng = ns_named(&v, "rng"));
    assert_non_null(snow = ns_named(&v, "snow"));
    assert_true(rng->is_listed && snow->is_listed);

    /* A range: values left from the store's next value to its last. */
    assert_true(rng->next_value > 1); /* the daemon's handle reserved a block */
    assert_int_equal(rng->values_left, rng->max_value - rng->next_value + 1);
    assert_int_equal(rng->left_permille,
                     (int)(1000.0 * (double)rng->values_left / (double)rng->max_value));
    assert_int_equal(rng->left_level, STATUS_OK);

    /* A snowflake layout: the share of its lifetime gone by now. */
    assert_int_equal(idmint_layout_end_ms(&snow->layout, &end_ms), 0);
    assert_true(snow->has_end);
    assert_int_equal(snow->end_ms, end_ms);
    expect = (int)(1000.0 * (double)(v.live.now_ms - snow->layout.epoch_ms) /
                   (double)(end_ms - snow->layout.epoch_ms));
    assert_int_equal(snow->lifetime_permille, expect);

    /* Its worker rows, the daemon's own among them, held. */
    assert_non_null(snow->rows);
    assert_true(snow->held >= 1);
    idmint_handle_info_init(&info);
    assert_int_equal(handles_info(handles_find(&daemon_under_test->d.handles, "snow"), &info), 0);
    for (i = 0; i < snow->n_workers; i++)
        if (snow->workers[i].is_own) {
            assert_int_equal(snow->workers[i].worker_id, info.worker_id);
            assert_int_equal(snow->workers[i].state, STATUS_HELD);
            has_own = 1;
        }
    assert_true(has_own);
    assert_non_null(snow->per_s); /* the daemon mints from it: its per-second history */
    assert_true(v.store_p50 <= v.store_p99);

    /* The audit for an admin, its times spelled out beside the raw figure. */
    assert_true(v.shows_audit);
    assert_non_null(v.audit_detail);
    for (i = 0; i < v.cache->n_audit; i++)
        if (strstr(v.cache->audit[i].detail, "epoch_ms=") != NULL)
            break;
    assert_true(i < v.cache->n_audit);
    assert_non_null(strstr(v.audit_detail[i], "epoch_ms="));
    assert_non_null(strstr(v.audit_detail[i], "Z ("));
    status_view_free(&v);

    /* Not for anyone else. */
    assert_int_equal(status_view_take(&daemon_under_test->d, 0, &v), 0);
    assert_false(v.shows_audit);
    assert_null(v.audit_detail);
    status_view_free(&v);
}

static void test_status__counters_turn_into_levels(void **state)
{
    struct daemon *d = &daemon_under_test->d;
    struct status_view v;

    (void)state;
    assert_int_equal(status_view_take(d, 0, &v), 0);
    assert_int_equal(v.collision_level, STATUS_OK);
    assert_int_equal(v.rate_limited_level, STATUS_OK);
    assert_int_equal(v.backstep_level, STATUS_OK);
    assert_int_equal(v.renewal_level, STATUS_OK);
    status_view_free(&v);

    metrics_collision();
    ratelimit_count(&d->limits, 0, AUTH_MINT);
    atomic_fetch_add(&d->clock_backsteps, 1);
    atomic_fetch_add(&d->handles.renewal_failures, 1);
    assert_int_equal(status_view_take(d, 0, &v), 0);
    assert_int_equal(v.collision_level, STATUS_BAD); /* a duplicate is what idmint prevents */
    assert_int_equal(v.rate_limited_level, STATUS_WARN);
    assert_int_equal(v.backstep_level, STATUS_WARN);
    assert_int_equal(v.renewal_level, STATUS_BAD);
    status_view_free(&v);
}

static void test_status__latency_buckets_grow_and_end_unbounded(void **state)
{
    int i;

    (void)state;
    assert_true(status_bucket_us(0) > 0);
    for (i = 1; i < METRICS_BUCKETS - 1; i++)
        assert_true(status_bucket_us(i) > status_bucket_us(i - 1));
    assert_int_equal(status_bucket_us(METRICS_BUCKETS - 1), -1);
    assert_int_equal(status_bucket_us(-1), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_status__before_a_full_pass_only_the_own_namespaces_are_known),
        cmocka_unit_test(test_status__a_full_pass_lists_every_namespace_with_its_figures),
        cmocka_unit_test(test_status__counters_turn_into_levels),
        cmocka_unit_test(test_status__latency_buckets_grow_and_end_unbounded),
    };

    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
