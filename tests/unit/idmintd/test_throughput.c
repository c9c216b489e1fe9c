/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for cmd/idmintd/throughput.c: each second's count is the
 * growth of the slot's counter, so the ring sums to what was minted; other
 * slots stay 0; a slot past the table reads as zeros; after a stop (which
 * may be repeated) the ring no longer moves.
 * One daemon for the whole file: the ring is one per process.
 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "daemon_fixture.h"
#include "throughput.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* One daemon for the file, as cmocka's group state: the throughput thread is one per process. */
static struct td_daemon *daemon_under_test;

static int group_setup(void **state)
{
    if (td_setup(state) != 0)
        return -1;
    daemon_under_test = *state;
    if (throughput_start(&daemon_under_test->d) != 0) {
        td_teardown(state);
        return -1;
    }
    return 0;
}

static int group_teardown(void **state)
{
    throughput_stop();
    return td_teardown(state);
}

static uint64_t ring_sum(size_t slot, int64_t *end_ms)
{
    uint32_t counts[THROUGHPUT_SECONDS];
    uint64_t sum = 0;
    size_t k;

    throughput_read(slot, counts, end_ms);
    for (k = 0; k < THROUGHPUT_SECONDS; k++)
        sum += counts[k];
    return sum;
}

struct expect {
    size_t slot;
    uint64_t sum;
};

static int sums_to(void *arg)
{
    const struct expect *e = arg;
    int64_t end_ms;

    return ring_sum(e->slot, &end_ms) == e->sum;
}

static void test_throughput__the_ring_sums_to_what_was_minted(void **state)
{
    struct daemon *d = &daemon_under_test->d;
    size_t snow = handles_find(&d->handles, "snow")->slot;
    size_t rng = handles_find(&d->handles, "rng")->slot;
    int64_t end_ms;

    (void)state;
    metrics_add(&d->threads[0].metrics.ids_issued[snow], 1000);
    metrics_add(&d->threads[1].metrics.ids_issued[snow], 234);
    assert_true(td_wait_for(sums_to, &(struct expect){snow, 1234}));
    assert_true(ring_sum(snow, &end_ms) == 1234);
    assert_true(end_ms > 0);
    assert_true(ring_sum(rng, &end_ms) == 0);
    /* Later seconds add only the growth. */
    metrics_add(&d->threads[0].metrics.ids_issued[snow], 66);
    metrics_add(&d->threads[1].metrics.ids_issued[rng], 5);
    assert_true(td_wait_for(sums_to, &(struct expect){snow, 1300}));
    assert_true(td_wait_for(sums_to, &(struct expect){rng, 5}));
}

static void test_throughput__a_slot_past_the_table_reads_as_zeros(void **state)
{
    uint32_t counts[THROUGHPUT_SECONDS];
    int64_t end_ms = 1;
    size_t k;

    (void)state;
    memset(counts, 0xff, sizeof(counts));
    throughput_read(HANDLES_MAX, counts, &end_ms);
    assert_int_equal(end_ms, 0);
    for (k = 0; k < THROUGHPUT_SECONDS; k++)
        assert_int_equal(counts[k], 0);
}

static int ticked_since(void *arg)
{
    int64_t end_ms;

    (void)ring_sum(0, &end_ms);
    return end_ms != *(const int64_t *)arg;
}

static void test_throughput__stop_ends_the_ticks_and_may_be_repeated(void **state)
{
    int64_t before, after;
    uint64_t sum;
    struct timespec ts = {1, 500 * 1000 * 1000}; /* past one tick */

    (void)state;
    (void)ring_sum(0, &before);
    assert_true(td_wait_for(ticked_since, &before)); /* it was ticking */
    throughput_stop();
    throughput_stop();
    sum = ring_sum(0, &before);
    nanosleep(&ts, NULL);
    /* No tick after the stop: the newest second and the counts stay put. */
    assert_true(ring_sum(0, &after) == sum);
    assert_int_equal(after, before);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_throughput__the_ring_sums_to_what_was_minted),
        cmocka_unit_test(test_throughput__a_slot_past_the_table_reads_as_zeros),
        cmocka_unit_test(test_throughput__stop_ends_the_ticks_and_may_be_repeated),
    };

    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
