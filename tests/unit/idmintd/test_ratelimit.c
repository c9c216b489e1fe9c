/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for cmd/idmintd/ratelimit.c: the GCRA buckets of tokens,
 * writes and client addresses. Time is an argument (ns of a monotonic
 * clock the test makes up), so no test sleeps; the threaded test shares
 * one made-up clock between its threads.
 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "ratelimit.h"
#include "testsupport.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define NS_PER_S UINT64_C(1000000000)
#define T0       (UINT64_C(1000) * NS_PER_S) /* any start well past 0 */

static struct ratelimit *rl_new(void)
{
    struct ratelimit *rl = calloc(1, sizeof(*rl)); /* zeroed: every bucket full */

    assert_non_null(rl);
    ratelimit_init(rl);
    return rl;
}

static void key_of(unsigned n, unsigned char key[16])
{
    memset(key, 0, 16);
    key[0] = 0x20; /* 2001:db8::/32-like, then n */
    key[1] = 0x01;
    memcpy(key + 8, &n, sizeof(n));
}

static void test_ratelimit__a_full_bucket_grants_its_burst_then_names_the_wait(void **state)
{
    const struct ratelimit_rule rule = {.rate = 10, .burst = 5}; /* one every 100 ms */
    struct ratelimit *rl = rl_new();
    int i;

    (void)state;
    for (i = 0; i < 5; i++)
        assert_int_equal(ratelimit_take_token(rl, 3, &rule, T0), 0);
    /* The sixth waits exactly one interval, and asking again changes nothing. */
    assert_int_equal(ratelimit_take_token(rl, 3, &rule, T0), 100000000u);
    assert_int_equal(ratelimit_take_token(rl, 3, &rule, T0), 100000000u);
    assert_int_equal(ratelimit_take_token(rl, 3, &rule, T0 + 99999999u), 1);
    assert_int_equal(ratelimit_take_token(rl, 3, &rule, T0 + 100000000u), 0);
    assert_int_equal(ratelimit_take_token(rl, 3, &rule, T0 + 100000000u), 100000000u);
    free(rl);
}

static void test_ratelimit__burst_zero_means_a_bucket_of_one_second(void **state)
{
    const struct ratelimit_rule rule = {.rate = 4, .burst = 0};
    struct ratelimit *rl = rl_new();
    int i;

    (void)state;
    for (i = 0; i < 4; i++)
        assert_int_equal(ratelimit_take_token(rl, 0, &rule, T0), 0);
    assert_true(ratelimit_take_token(rl, 0, &rule, T0) > 0);
    free(rl);
}

static void test_ratelimit__rate_zero_is_no_limit(void **state)
{
    const struct ratelimit_rule rule = {.rate = 0, .burst = 1};
    unsigned char key[16];
    struct ratelimit *rl = rl_new();
    int i;

    (void)state;
    key_of(1, key);
    for (i = 0; i < 10000; i++) {
        assert_int_equal(ratelimit_take_token(rl, 0, &rule, T0), 0);
        assert_int_equal(ratelimit_take_write(rl, RATELIMIT_BATCH, 0, &rule, T0), 0);
        assert_int_equal(ratelimit_take_address(rl, key, &rule, T0), 0);
    }
    free(rl);
}

static void test_ratelimit__buckets_of_tokens_classes_and_callers_are_separate(void **state)
{
    const struct ratelimit_rule rule = {.rate = 1, .burst = 2};
    struct ratelimit *rl = rl_new();

    (void)state;
    assert_int_equal(ratelimit_take_token(rl, 0, &rule, T0), 0);
    assert_int_equal(ratelimit_take_token(rl, 0, &rule, T0), 0);
    assert_true(ratelimit_take_token(rl, 0, &rule, T0) > 0);
    /* Token 0's debt is its own: another token, and writes, are untouched. */
    assert_int_equal(ratelimit_take_token(rl, RATELIMIT_TOKENS_MAX - 1, &rule, T0), 0);
    assert_int_equal(ratelimit_take_write(rl, RATELIMIT_BATCH, 0, &rule, T0), 0);
    assert_int_equal(ratelimit_take_write(rl, RATELIMIT_BATCH, 0, &rule, T0), 0);
    assert_true(ratelimit_take_write(rl, RATELIMIT_BATCH, 0, &rule, T0) > 0);
    /* The other write class, and the anonymous caller, have buckets of their own. */
    assert_int_equal(ratelimit_take_write(rl, RATELIMIT_COLLISION, 0, &rule, T0), 0);
    assert_int_equal(ratelimit_take_write(rl, RATELIMIT_BATCH, RATELIMIT_ANONYMOUS, &rule, T0), 0);
    assert_int_equal(ratelimit_take_write(rl, RATELIMIT_BATCH, RATELIMIT_ANONYMOUS, &rule, T0), 0);
    assert_true(ratelimit_take_write(rl, RATELIMIT_BATCH, RATELIMIT_ANONYMOUS, &rule, T0) > 0);
    free(rl);
}

/*
 * A caller that asks every millisecond for as much as it may gets the
 * burst and then the rate: over D seconds, at most rate * D + burst, and
 * never less than rate * D.
 */
static void test_ratelimit__a_greedy_caller_gets_rate_times_time_plus_burst(void **state)
{
    const struct ratelimit_rule rule = {.rate = 100, .burst = 20};
    const uint64_t seconds = 10;
    unsigned char key[16];
    uint64_t t, tokens = 0, writes = 0, addresses = 0;
    struct ratelimit *rl = rl_new();

    (void)state;
    key_of(7, key);
    for (t = T0; t <= T0 + seconds * NS_PER_S; t += 1000000u) {
        while (ratelimit_take_token(rl, 1, &rule, t) == 0)
            tokens++;
        while (ratelimit_take_write(rl, RATELIMIT_COLLISION, 1, &rule, t) == 0)
            writes++;
        while (ratelimit_take_address(rl, key, &rule, t) == 0)
            addresses++;
    }
    assert_int_equal(tokens, 100 * seconds + 20);
    assert_int_equal(writes, 100 * seconds + 20);
    /* Address buckets keep µs rounded up: never more, at most one interval fewer. */
    assert_true(addresses <= 100 * seconds + 20);
    assert_true(addresses >= 100 * seconds + 19);
    free(rl);
}

/*
 * A rate that does not divide a second: the interval is rounded up, so a
 * caller gets a little less than the rate, never more. At 600,000,000 a
 * second the interval is 1.67 ns: rounded down (1 ns) it granted 1e9.
 */
static void test_ratelimit__a_rate_that_does_not_divide_a_second_never_over_grants(void **state)
{
    static const uint32_t rates[] = {3, 7, 600000000u, 4000000000u};
    const uint64_t span = NS_PER_S / 1000u; /* 1 ms of made-up time, 1 ns steps */
    unsigned char key[16];
    size_t i;

    (void)state;
    key_of(9, key);
    for (i = 0; i < sizeof(rates) / sizeof(rates[0]); i++) {
        const struct ratelimit_rule rule = {.rate = rates[i], .burst = 1};
        struct ratelimit *rl = rl_new();
        uint64_t t, step = rates[i] < 1000u ? 1000000u : 1u, tokens = 0, addresses = 0;
        uint64_t end = rates[i] < 1000u ? T0 + 100 * NS_PER_S : T0 + span;
        double allowed = (double)rates[i] * (double)(end - T0) / 1e9 + 1.0; /* + burst */

        for (t = T0; t < end; t += step) {
            while (ratelimit_take_token(rl, 2, &rule, t) == 0)
                tokens++;
            while (ratelimit_take_address(rl, key, &rule, t) == 0)
                addresses++;
        }
        assert_true((double)tokens <= allowed);
        assert_true((double)addresses <= allowed);
        assert_true(tokens > 0 && addresses > 0);
        free(rl);
    }
}

struct race {
    struct ratelimit *rl;
    const struct ratelimit_rule *rule;
    _Atomic uint64_t clock_ns; /* shared made-up clock: each take advances it */
    uint64_t step_ns;
    uint64_t end_ns;
    _Atomic uint64_t granted;
};

static void *race_main(void *arg)
{
    struct race *r = arg;

    for (;;) {
        uint64_t now = atomic_fetch_add(&r->clock_ns, r->step_ns), wait;

        if (now > r->end_ns)
            break;
        wait = ratelimit_take_token(r->rl, 5, r->rule, now);
        if (wait == 0)
            atomic_fetch_add(&r->granted, 1);
    }
    return NULL;
}

/* Several threads on one bucket: the compare-and-swap never lets one grant slip through twice. */
static void test_ratelimit__threads_on_one_token_bucket_never_exceed_the_limit(void **state)
{
    const struct ratelimit_rule rule = {.rate = 1000, .burst = 50};
    const uint64_t seconds = 20 / ts_scale() + 2;
    struct race r;
    pthread_t th[4];
    size_t i;

    (void)state;
    memset(&r, 0, sizeof(r));
    r.rl = rl_new();
    r.rule = &rule;
    r.step_ns = 50000; /* 20 asks per interval of the rule, over all threads */
    atomic_store(&r.clock_ns, T0);
    r.end_ns = T0 + seconds * NS_PER_S;
    for (i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&th[i], NULL, race_main, &r), 0);
    for (i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    assert_true(atomic_load(&r.granted) <= rule.rate * seconds + rule.burst);
    /* And the limit is not starved by the contention either. */
    assert_true(atomic_load(&r.granted) >= rule.rate * seconds - rule.rate / 10);
    free(r.rl);
}

static void test_ratelimit__an_address_bucket_is_one_per_address(void **state)
{
    const struct ratelimit_rule rule = {.rate = 1, .burst = 3};
    unsigned char a[16], b[16];
    struct ratelimit *rl = rl_new();
    uint64_t wait;
    int i;

    (void)state;
    key_of(1, a);
    key_of(2, b);
    for (i = 0; i < 3; i++)
        assert_int_equal(ratelimit_take_address(rl, a, &rule, T0), 0);
    wait = ratelimit_take_address(rl, a, &rule, T0);
    assert_true(wait > 0 && wait <= NS_PER_S);
    assert_int_equal(ratelimit_take_address(rl, b, &rule, T0), 0);
    assert_int_equal(ratelimit_take_address(rl, a, &rule, T0 + wait), 0);
    free(rl);
}

/*
 * Eviction takes the bucket closest to full: a client over its limit
 * cannot shed its debt by sending from many other addresses, which only
 * push each other out.
 */
static void test_ratelimit__other_addresses_never_evict_one_in_debt(void **state)
{
    const struct ratelimit_rule rule = {.rate = 1, .burst = 5};
    unsigned char a[16], other[16];
    struct ratelimit *rl = rl_new();
    unsigned n;
    int i;

    (void)state;
    key_of(0, a);
    for (i = 0; i < 5; i++)
        assert_int_equal(ratelimit_take_address(rl, a, &rule, T0), 0);
    for (n = 1; n <= 4 * RATELIMIT_SETS * RATELIMIT_WAYS; n++) {
        key_of(n, other);
        assert_int_equal(ratelimit_take_address(rl, other, &rule, T0 + n), 0);
    }
    assert_true(ratelimit_take_address(rl, a, &rule, T0 + n) > 0);
    free(rl);
}

/*
 * Threads read the clock before they take (routes.c), so a take may come
 * with a reading older than the one that filled the bucket: the debt
 * stands.
 */
static void test_ratelimit__an_older_clock_reading_does_not_erase_a_token_debt(void **state)
{
    const struct ratelimit_rule rule = {.rate = 1, .burst = 2};
    struct ratelimit *rl = rl_new();

    (void)state;
    assert_int_equal(ratelimit_take_token(rl, 2, &rule, T0), 0);
    assert_int_equal(ratelimit_take_token(rl, 2, &rule, T0), 0);
    assert_true(ratelimit_take_token(rl, 2, &rule, T0 - 1000000) > 0);
    assert_true(ratelimit_take_token(rl, 2, &rule, T0 - NS_PER_S) > 0);
    free(rl);
}

/*
 * A take whose clock was read before another thread's take (routes.c reads
 * it before the dispatch) sees the debt past the limit: still a debt, not a
 * wrap that fills the bucket again (4 threads on one address were granted
 * 5% over rate x time + burst before).
 */
static void test_ratelimit__an_older_clock_reading_keeps_an_address_debt(void **state)
{
    const struct ratelimit_rule rule = {.rate = 1, .burst = 2};
    unsigned char a[16];
    struct ratelimit *rl = rl_new();

    (void)state;
    key_of(11, a);
    assert_int_equal(ratelimit_take_address(rl, a, &rule, T0), 0);
    assert_int_equal(ratelimit_take_address(rl, a, &rule, T0), 0);
    assert_true(ratelimit_take_address(rl, a, &rule, T0 - 1000000) > 0);
    assert_true(ratelimit_take_address(rl, a, &rule, T0 - 900000000) > 0);
    free(rl);
}

/* An address bucket's 44-bit µs time wraps; a time too far ahead is old, not a debt. */
static void test_ratelimit__an_address_debt_is_not_revived_by_the_time_wrap(void **state)
{
    const struct ratelimit_rule rule = {.rate = 1, .burst = 2};
    const uint64_t half_wrap_ns = (UINT64_C(1) << 43) * 1000u; /* about 102 days */
    unsigned char a[16];
    struct ratelimit *rl = rl_new();

    (void)state;
    key_of(9, a);
    assert_int_equal(ratelimit_take_address(rl, a, &rule, T0), 0);
    assert_int_equal(ratelimit_take_address(rl, a, &rule, T0), 0);
    assert_true(ratelimit_take_address(rl, a, &rule, T0) > 0);
    /* Half a wrap later the stored time reads as far ahead: the bucket is full again. */
    assert_int_equal(ratelimit_take_address(rl, a, &rule, T0 + half_wrap_ns), 0);
    assert_int_equal(ratelimit_take_address(rl, a, &rule, T0 + half_wrap_ns), 0);
    assert_true(ratelimit_take_address(rl, a, &rule, T0 + half_wrap_ns) > 0);
    free(rl);
}

static void test_ratelimit__refusals_are_counted_by_kind_and_role(void **state)
{
    struct ratelimit *rl = rl_new();

    (void)state;
    ratelimit_count(rl, 0, 1);
    ratelimit_count(rl, 0, 1);
    ratelimit_count(rl, 7, 3); /* any nonzero is the address */
    ratelimit_count(rl, 1, 4); /* no such role: ignored */
    assert_int_equal(ratelimit_refused_total(rl, 0, 1), 2);
    assert_int_equal(ratelimit_refused_total(rl, 1, 1), 0);
    assert_int_equal(ratelimit_refused_total(rl, 1, 3), 1);
    assert_int_equal(ratelimit_refused_total(rl, 0, 3), 0);
    assert_int_equal(ratelimit_refused_total(rl, 1, 4), 0);
    free(rl);
}

static void test_ratelimit__retry_after_rounds_up_to_whole_seconds_at_least_one(void **state)
{
    (void)state;
    assert_int_equal(ratelimit_retry_after_s(0), 1);
    assert_int_equal(ratelimit_retry_after_s(1), 1);
    assert_int_equal(ratelimit_retry_after_s(NS_PER_S), 1);
    assert_int_equal(ratelimit_retry_after_s(NS_PER_S + 1), 2);
    assert_int_equal(ratelimit_retry_after_s(3600 * NS_PER_S), 3600);
}

static void test_ratelimit__class_names_are_the_settings_prefixes(void **state)
{
    (void)state;
    assert_string_equal(ratelimit_class_name(RATELIMIT_MINT), "mint");
    assert_string_equal(ratelimit_class_name(RATELIMIT_GENERATOR), "generator");
    assert_string_equal(ratelimit_class_name(RATELIMIT_ADMIN), "admin");
    assert_string_equal(ratelimit_class_name(RATELIMIT_ADDRESS), "address");
    assert_string_equal(ratelimit_class_name(RATELIMIT_BATCH), "batch");
    assert_string_equal(ratelimit_class_name(RATELIMIT_COLLISION), "collision");
    assert_string_equal(ratelimit_class_name(RATELIMIT_GRANT), "grant");
    assert_string_equal(ratelimit_class_name(RATELIMIT_RENEW), "renew");
    assert_string_equal(ratelimit_class_name(RATELIMIT_CLASSES), "none");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ratelimit__a_full_bucket_grants_its_burst_then_names_the_wait),
        cmocka_unit_test(test_ratelimit__burst_zero_means_a_bucket_of_one_second),
        cmocka_unit_test(test_ratelimit__rate_zero_is_no_limit),
        cmocka_unit_test(test_ratelimit__buckets_of_tokens_classes_and_callers_are_separate),
        cmocka_unit_test(test_ratelimit__a_greedy_caller_gets_rate_times_time_plus_burst),
        cmocka_unit_test(test_ratelimit__a_rate_that_does_not_divide_a_second_never_over_grants),
        cmocka_unit_test(test_ratelimit__threads_on_one_token_bucket_never_exceed_the_limit),
        cmocka_unit_test(test_ratelimit__an_address_bucket_is_one_per_address),
        cmocka_unit_test(test_ratelimit__other_addresses_never_evict_one_in_debt),
        cmocka_unit_test(test_ratelimit__an_older_clock_reading_does_not_erase_a_token_debt),
        cmocka_unit_test(test_ratelimit__an_older_clock_reading_keeps_an_address_debt),
        cmocka_unit_test(test_ratelimit__an_address_debt_is_not_revived_by_the_time_wrap),
        cmocka_unit_test(test_ratelimit__refusals_are_counted_by_kind_and_role),
        cmocka_unit_test(test_ratelimit__retry_after_rounds_up_to_whole_seconds_at_least_one),
        cmocka_unit_test(test_ratelimit__class_names_are_the_settings_prefixes),
    };
    return cmocka_run_group_tests_name("ratelimit", tests, NULL, NULL);
}
