/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests for src/snowflake.c. Time is an argument: no test sleeps. */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "idmint.h"
#include "internal.h"
#include "testsupport.h"

#include <pthread.h>
#include <stdlib.h>

static idmint_layout layout_of(unsigned t, unsigned r, unsigned w, unsigned s)
{
    idmint_layout l = {.time_bits = (uint8_t)t,
                       .region_bits = (uint8_t)r,
                       .worker_bits = (uint8_t)w,
                       .sequence_bits = (uint8_t)s,
                       .unit_ms = 1,
                       .epoch_ms = 0};
    return l;
}

static uint64_t time_of(const idmint_layout *l, uint64_t id)
{
    return id >> (l->region_bits + l->worker_bits + l->sequence_bits);
}

static uint64_t seq_of(const idmint_layout *l, uint64_t id)
{
    return id & ((UINT64_C(1) << l->sequence_bits) - 1);
}

static int next1(struct snowflake *sf, uint64_t now, uint64_t *id)
{
    size_t got = 0;
    int rc = idmint__snowflake_next(sf, now, id, 1, &got);

    if (rc == 0)
        assert_int_equal(got, 1);
    return rc;
}

static void test_snowflake__same_unit_ids_increase_and_new_unit_restarts_sequence(void **state)
{
    idmint_layout l = layout_of(41, 0, 10, 12);
    struct snowflake sf;
    uint64_t a, b, c;

    (void)state;
    idmint__snowflake_init(&sf, &l, 0, 7, 0, 100000, 0);
    assert_int_equal(next1(&sf, 1000, &a), 0);
    assert_int_equal(next1(&sf, 1000, &b), 0);
    assert_true(b == a + 1);
    assert_int_equal(time_of(&l, a), 1000);
    assert_int_equal((a >> 12) & 1023, 7);
    assert_int_equal(next1(&sf, 1001, &c), 0);
    assert_int_equal(time_of(&l, c), 1001);
    assert_int_equal(seq_of(&l, c), 0);
}

static void test_snowflake__full_sequence_waits_without_borrowing(void **state)
{
    idmint_layout l = layout_of(41, 0, 10, 2); /* 4 IDs per unit */
    struct snowflake sf;
    uint64_t id = 0, before;

    (void)state;
    idmint__snowflake_init(&sf, &l, 0, 1, 0, 100000, 0);
    for (int i = 0; i < 4; i++)
        assert_int_equal(next1(&sf, 50, &id), 0);
    before = atomic_load(&sf.state);
    id = 0;
    assert_int_equal(next1(&sf, 50, &id), IDMINT__SNOWFLAKE_WAIT);
    assert_int_equal(id, 0);                          /* untouched on error */
    assert_int_equal(atomic_load(&sf.state), before); /* nothing consumed */
    assert_int_equal(next1(&sf, 51, &id), 0);
    assert_int_equal(time_of(&l, id), 51);
}

static void test_snowflake__borrowing_runs_ahead_at_most_max_borrow(void **state)
{
    idmint_layout l = layout_of(41, 0, 10, 2);
    struct snowflake sf;
    uint64_t id = 0;

    (void)state;
    idmint__snowflake_init(&sf, &l, 0, 1, 0, 100000, 2);
    for (int i = 0; i < 12; i++) {
        assert_int_equal(next1(&sf, 50, &id), 0);
        assert_true(time_of(&l, id) <= 52);
    }
    assert_int_equal(time_of(&l, id), 52);
    assert_int_equal(next1(&sf, 50, &id), IDMINT__SNOWFLAKE_WAIT);
}

static void test_snowflake__first_id_is_after_the_fence_found(void **state)
{
    idmint_layout l = layout_of(41, 0, 10, 12);
    struct snowflake sf;
    uint64_t id;

    (void)state;
    idmint__snowflake_init(&sf, &l, 0, 3, 5000, 100000, 0);
    assert_int_equal(next1(&sf, 5001, &id), 0);
    assert_true(time_of(&l, id) > 5000);
    /* A clock that reads the fence itself cannot mint: it must wait. */
    idmint__snowflake_init(&sf, &l, 0, 3, 5000, 100000, 0);
    assert_int_equal(next1(&sf, 5000, &id), IDMINT__SNOWFLAKE_WAIT);
}

static void test_snowflake__no_id_at_or_after_own_lease_end(void **state)
{
    idmint_layout l = layout_of(41, 0, 10, 2);
    struct snowflake sf;
    uint64_t id = 0;

    (void)state;
    idmint__snowflake_init(&sf, &l, 0, 1, 0, 60, 100); /* borrowing may not reach E either */
    assert_int_equal(next1(&sf, 59, &id), 0);
    assert_int_equal(time_of(&l, id), 59);
    for (int i = 0; i < 3; i++)
        assert_int_equal(next1(&sf, 59, &id), 0);
    id = 0;
    /* Unit 59 is full and the next one is E: waiting could not help. */
    assert_int_equal(next1(&sf, 59, &id), IDMINT_ELEASELOST);
    assert_int_equal(next1(&sf, 60, &id), IDMINT_ELEASELOST);
    assert_int_equal(id, 0);
}

static void test_snowflake__lost_lease_stops_minting_at_once(void **state)
{
    idmint_layout l = layout_of(41, 0, 10, 12);
    struct snowflake sf;
    uint64_t id = 0;

    (void)state;
    idmint__snowflake_init(&sf, &l, 0, 1, 0, 100000, 0);
    assert_int_equal(next1(&sf, 10, &id), 0);
    atomic_store(&sf.lease_until, 0);
    id = 0;
    assert_int_equal(next1(&sf, 11, &id), IDMINT_ELEASELOST);
    assert_int_equal(id, 0);
}

static void test_snowflake__time_bits_running_out_is_exhausted(void **state)
{
    idmint_layout l = layout_of(4, 0, 10, 1); /* last time unit is 15 */
    struct snowflake sf;
    uint64_t id;

    (void)state;
    idmint__snowflake_init(&sf, &l, 0, 1, 0, 1000, 0);
    assert_int_equal(next1(&sf, 15, &id), 0);
    assert_int_equal(next1(&sf, 15, &id), 0);
    assert_int_equal(next1(&sf, 16, &id), IDMINT_EEXHAUSTED);
}

static void test_snowflake__batch_is_contiguous_and_cut_at_the_unit_limit(void **state)
{
    idmint_layout l = layout_of(41, 3, 5, 4); /* 16 per unit */
    struct snowflake sf;
    uint64_t ids[40];
    size_t got = 0;

    (void)state;
    idmint__snowflake_init(&sf, &l, 5, 9, 0, 100000, 1);
    assert_int_equal(idmint__snowflake_next(&sf, 100, ids, 40, &got), 0);
    assert_int_equal(got, 32); /* units 100 and 101 (one borrowed), 16 each */
    for (size_t i = 0; i < got; i++) {
        assert_int_equal((ids[i] >> 4) & 31, 9); /* worker */
        assert_int_equal((ids[i] >> 9) & 7, 5);  /* region */
        assert_int_equal(seq_of(&l, ids[i]), i % 16);
        assert_int_equal(time_of(&l, ids[i]), 100 + i / 16);
        if (i > 0)
            assert_true(ids[i] > ids[i - 1]);
    }
}

struct race {
    struct snowflake *sf;
    uint64_t *out;
    size_t n;
    _Atomic uint64_t *clock;
};

static void *race_main(void *arg)
{
    struct race *r = arg;

    for (size_t i = 0; i < r->n;) {
        uint64_t now = atomic_fetch_add(r->clock, 1) / 512; /* time moves as threads mint */
        int rc = next1(r->sf, now, &r->out[i]);

        if (rc == 0) {
            if (i > 0 && r->out[i] <= r->out[i - 1])
                return (void *)1;
            i++;
        } else if (rc != IDMINT__SNOWFLAKE_WAIT) {
            return (void *)2;
        }
    }
    return NULL;
}

static void test_snowflake__threads_racing_never_share_an_id(void **state)
{
    idmint_layout l = layout_of(41, 0, 10, 8);
    struct snowflake sf;
    enum { THREADS = 4, PER = 200000 };
    uint64_t *all = malloc(sizeof(uint64_t) * THREADS * PER);
    _Atomic uint64_t clock = 0;
    struct race r[THREADS];
    pthread_t th[THREADS];

    (void)state;
    assert_non_null(all);
    idmint__snowflake_init(&sf, &l, 0, 2, 0, UINT64_C(1) << 40, 0);
    for (int i = 0; i < THREADS; i++) {
        r[i] = (struct race){.sf = &sf, .out = all + (size_t)i * PER, .n = PER, .clock = &clock};
        assert_int_equal(pthread_create(&th[i], NULL, race_main, &r[i]), 0);
    }
    for (int i = 0; i < THREADS; i++) {
        void *res;

        pthread_join(th[i], &res);
        assert_null(res); /* increasing within each thread, no error */
    }
    assert_int_equal(ts_count_duplicates(all, (size_t)THREADS * PER), 0);
    free(all);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_snowflake__same_unit_ids_increase_and_new_unit_restarts_sequence),
        cmocka_unit_test(test_snowflake__full_sequence_waits_without_borrowing),
        cmocka_unit_test(test_snowflake__borrowing_runs_ahead_at_most_max_borrow),
        cmocka_unit_test(test_snowflake__first_id_is_after_the_fence_found),
        cmocka_unit_test(test_snowflake__no_id_at_or_after_own_lease_end),
        cmocka_unit_test(test_snowflake__lost_lease_stops_minting_at_once),
        cmocka_unit_test(test_snowflake__time_bits_running_out_is_exhausted),
        cmocka_unit_test(test_snowflake__batch_is_contiguous_and_cut_at_the_unit_limit),
        cmocka_unit_test(test_snowflake__threads_racing_never_share_an_id),
    };
    return cmocka_run_group_tests_name("snowflake", tests, NULL, NULL);
}
