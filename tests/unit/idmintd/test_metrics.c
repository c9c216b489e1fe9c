/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for cmd/idmintd/metrics.c: a request lands in its route's
 * row and its status's column (an unknown status in "other"), a duration
 * in the first bucket whose bound holds it, and the shared counters add
 * up, also from many threads at once.
 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "metrics.h"
#include "route_table.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t get(const _Atomic uint64_t *c)
{
    return atomic_load_explicit(c, memory_order_relaxed);
}

static size_t code_column(int status)
{
    size_t i;

    for (i = 0; i < METRICS_CODES - 1; i++)
        if (metrics_codes[i] == status)
            return i;
    return METRICS_CODES - 1;
}

static void test_metrics__a_request_lands_in_its_route_and_status(void **state)
{
    struct metrics_thread *m = calloc(1, sizeof(*m));
    const struct route_row *row = &route_table[route_table_len - 1];
    size_t r = route_table_len - 1;

    (void)state;
    assert_non_null(m);
    assert_true(route_table_len <= ROUTE_ROWS_MAX);
    metrics_count_request(m, row, 404, 1000);
    metrics_count_request(m, row, 404, 1000);
    metrics_count_request(m, row, 418, 1000); /* not counted apart: "other" */
    metrics_count_request(m, NULL, 200, 1000);
    assert_int_equal(get(&m->http[r][code_column(404)]), 2);
    assert_int_equal(code_column(418), METRICS_CODES - 1);
    assert_int_equal(get(&m->http[r][METRICS_CODES - 1]), 1);
    assert_int_equal(get(&m->http[ROUTE_ROWS_MAX][code_column(200)]), 1);
    assert_int_equal(get(&m->http[r][code_column(200)]), 0);
    assert_int_equal(get(&m->http_duration.count), 4);
    assert_int_equal(get(&m->http_duration.sum_ns), 4000);
    free(m);
}

/* A bound is inclusive; past the last one is +Inf. */
static void test_metrics__a_duration_goes_to_the_first_bucket_that_holds_it(void **state)
{
    struct metrics_thread *m = calloc(1, sizeof(*m));
    size_t i;

    (void)state;
    assert_non_null(m);
    metrics_store_time(m, 5000);              /* 5 us: the first bound */
    metrics_store_time(m, 5001);              /* just past it */
    metrics_store_time(m, 1000000000);        /* 1 s: the last bound */
    metrics_store_time(m, 1000000001);        /* +Inf */
    metrics_store_time(m, UINT64_C(1) << 62); /* far past: still +Inf */
    assert_int_equal(get(&m->store_latency.bucket[0]), 1);
    assert_int_equal(get(&m->store_latency.bucket[1]), 1);
    assert_int_equal(get(&m->store_latency.bucket[METRICS_BUCKETS - 2]), 1);
    assert_int_equal(get(&m->store_latency.bucket[METRICS_BUCKETS - 1]), 2);
    for (i = 2; i < METRICS_BUCKETS - 2; i++)
        assert_int_equal(get(&m->store_latency.bucket[i]), 0);
    assert_int_equal(get(&m->store_latency.count), 5);
    /* The bounds grow, so "the first that holds it" is well defined. */
    for (i = 1; i < METRICS_BUCKETS - 1; i++)
        assert_true(metrics_bounds_s[i] > metrics_bounds_s[i - 1]);
    free(m);
}

static void *reserve_many(void *arg)
{
    int i;

    for (i = 0; i < 1000; i++)
        metrics_range_reserved((const char *)arg);
    metrics_batch(METRICS_BATCH_REPLAYED);
    metrics_collision();
    return NULL;
}

/* The shared counters, bumped from 8 threads: nothing lost, each namespace apart. */
static void test_metrics__shared_counters_add_up_across_threads(void **state)
{
    static char names[][2] = {"a", "b", "a", "b", "c", "a", "b", "c"};
    struct metrics_range_count got[8];
    pthread_t t[8];
    size_t n, i;
    uint64_t a = 0, b = 0, c = 0;

    (void)state;
    for (i = 0; i < 8; i++)
        assert_int_equal(pthread_create(&t[i], NULL, reserve_many, names[i]), 0);
    for (i = 0; i < 8; i++)
        assert_int_equal(pthread_join(t[i], NULL), 0);
    n = metrics_ranges_reserved(got, 8);
    assert_int_equal(n, 3);
    for (i = 0; i < n; i++) {
        if (strcmp(got[i].name, "a") == 0)
            a = got[i].n;
        else if (strcmp(got[i].name, "b") == 0)
            b = got[i].n;
        else if (strcmp(got[i].name, "c") == 0)
            c = got[i].n;
    }
    assert_int_equal(a, 3000);
    assert_int_equal(b, 3000);
    assert_int_equal(c, 2000);
    assert_int_equal(metrics_ranges_reserved(got, 1), 1); /* the cap holds */
    assert_int_equal(metrics_batches(METRICS_BATCH_REPLAYED), 8);
    assert_int_equal(metrics_batches(METRICS_BATCH_MINTED), 0);
    assert_int_equal(metrics_collisions_total(), 8);
}

/* Past METRICS_MAX_NS namespaces a new one is not counted: the table never grows. */
static void test_metrics__the_namespace_table_is_bounded(void **state)
{
    struct metrics_range_count *got = calloc(METRICS_MAX_NS + 1, sizeof(*got));
    char name[32];
    size_t i;

    (void)state;
    assert_non_null(got);
    for (i = 0; i < METRICS_MAX_NS + 10; i++) {
        snprintf(name, sizeof(name), "ns%zu", i);
        metrics_range_reserved(name);
    }
    assert_int_equal(metrics_ranges_reserved(got, METRICS_MAX_NS + 1), METRICS_MAX_NS);
    free(got);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_metrics__a_request_lands_in_its_route_and_status),
        cmocka_unit_test(test_metrics__a_duration_goes_to_the_first_bucket_that_holds_it),
        cmocka_unit_test(test_metrics__shared_counters_add_up_across_threads),
        cmocka_unit_test(test_metrics__the_namespace_table_is_bounded),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
