/* SPDX-License-Identifier: Apache-2.0 */
/*
 * 100 million UUIDv7 from two threads of one process, in batches
 * (idmint_uuid7_n): each thread's UUIDs increase, and the two merged by
 * byte order never meet (the process's one order, src/uuid7.c); every one
 * has version 7 and the RFC variant; the 62 random bits pass a frequency
 * test bit by bit and repeat at most once (a 62-bit draw repeats in 10^8
 * with probability 0.1%, twice with 5e-7; a shared or replayed stream
 * repeats millions of times). Every 100th UUID is written to the file
 * argv[1] as 16 raw bytes, for check_uuid7_sample.py (which runs this
 * program) to read with Python's uuid module.
 * Release stage only (label slow): 1.6 GB and a few seconds at speed.
 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "idmint.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PER_THREAD   50000000u
#define TOTAL        (2 * (size_t)PER_THREAD)
#define BATCH        4096u
#define SAMPLE_EVERY 100u
#define RANDOM_BITS  62u

static FILE *sample; /* argv[1] */

struct producer {
    pthread_t thread;
    uint8_t (*out)[16];
    int rc;
};

static void *produce(void *arg)
{
    struct producer *p = arg;

    for (size_t done = 0; done < PER_THREAD; done += BATCH) {
        size_t n = PER_THREAD - done < BATCH ? PER_THREAD - done : BATCH;

        p->rc = idmint_uuid7_n(p->out + done, n);
        if (p->rc != 0)
            break;
    }
    return NULL;
}

static uint64_t random_bits(const uint8_t u[16])
{
    uint64_t v = 0;

    for (unsigned i = 8; i < 16; i++)
        v = v << 8 | u[i];
    return v & ((UINT64_C(1) << RANDOM_BITS) - 1);
}

/* LSD radix sort of @p n values, 16 bits a pass, through @p tmp. */
static void radix_sort(uint64_t *v, uint64_t *tmp, size_t n)
{
    static size_t count[1u << 16];

    for (unsigned shift = 0; shift < 64; shift += 16) {
        size_t sum = 0;

        memset(count, 0, sizeof(count));
        for (size_t i = 0; i < n; i++)
            count[(v[i] >> shift) & 0xffff]++;
        for (size_t d = 0; d < (1u << 16); d++) {
            size_t c = count[d];

            count[d] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++)
            tmp[count[(v[i] >> shift) & 0xffff]++] = v[i];
        memcpy(v, tmp, n * sizeof(*v));
    }
}

static void check_each_increases_and_merged_never_meet(uint8_t (*a)[16], uint8_t (*b)[16])
{
    size_t i = 0, j = 0;

    for (size_t k = 1; k < PER_THREAD; k++) {
        if (memcmp(a[k - 1], a[k], 16) >= 0 || memcmp(b[k - 1], b[k], 16) >= 0)
            fail_msg("a thread's UUID %zu does not increase", k);
    }
    while (i < PER_THREAD && j < PER_THREAD) {
        int c = memcmp(a[i], b[j], 16);

        if (c == 0)
            fail_msg("the threads' UUIDs %zu and %zu are equal", i, j);
        if (c < 0)
            i++;
        else
            j++;
    }
}

static void test_uuid7_volume__hundred_million_from_two_threads(void **state)
{
    uint8_t(*all)[16] = malloc(TOTAL * 16);
    uint64_t *bits = malloc(TOTAL * sizeof(uint64_t)), *tmp;
    size_t ones[RANDOM_BITS] = {0}, repeats = 0;
    struct producer p[2];

    (void)state;
    assert_non_null(all);
    assert_non_null(bits);
    for (int t = 0; t < 2; t++) {
        p[t].out = all + (size_t)t * PER_THREAD;
        p[t].rc = -1;
        assert_int_equal(pthread_create(&p[t].thread, NULL, produce, &p[t]), 0);
    }
    for (int t = 0; t < 2; t++) {
        assert_int_equal(pthread_join(p[t].thread, NULL), 0);
        assert_int_equal(p[t].rc, 0);
    }
    check_each_increases_and_merged_never_meet(all, all + PER_THREAD);

    for (size_t k = 0; k < TOTAL; k++) {
        uint64_t r;

        if (all[k][6] >> 4 != 7 || all[k][8] >> 6 != 2)
            fail_msg("UUID %zu: version %d, variant bits %d", k, all[k][6] >> 4, all[k][8] >> 6);
        r = bits[k] = random_bits(all[k]);
        for (unsigned b = 0; b < RANDOM_BITS; b++)
            ones[b] += (r >> b) & 1;
        if (k % SAMPLE_EVERY == 0 && fwrite(all[k], 16, 1, sample) != 1)
            fail_msg("writing the sample failed");
    }
    if (fflush(sample) != 0)
        fail_msg("writing the sample failed");
    /* Each bit is 1 in half the draws: 6 standard deviations (5,000 here)
     * is a chance of 2e-9 per bit of a false alarm; a stuck or biased bit
     * is off by millions. */
    for (unsigned b = 0; b < RANDOM_BITS; b++) {
        double dev = fabs((double)ones[b] - TOTAL / 2.0) / sqrt(TOTAL / 4.0);

        if (dev > 6.0)
            fail_msg("random bit %u is 1 in %zu of %zu draws (%.1f sd)", b, ones[b], TOTAL, dev);
    }
    free(all); /* the sort's scratch takes its place */
    tmp = malloc(TOTAL * sizeof(uint64_t));
    assert_non_null(tmp);
    radix_sort(bits, tmp, TOTAL);
    for (size_t k = 1; k < TOTAL; k++)
        repeats += bits[k - 1] == bits[k];
    fprintf(stderr, "%zu UUIDs from 2 threads: ordered, v7, random bits balanced, %zu repeats\n",
            TOTAL, repeats);
    if (repeats > 1)
        fail_msg("the 62 random bits repeated %zu times in %zu draws", repeats, TOTAL);
    free(tmp);
    free(bits);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_uuid7_volume__hundred_million_from_two_threads),
    };

    if (argc != 2 || (sample = fopen(argv[1], "wb")) == NULL) {
        fprintf(stderr, "usage: %s SAMPLE_FILE (written: every %uth UUID, 16 bytes each)\n",
                argv[0], SAMPLE_EVERY);
        return 2;
    }
    return cmocka_run_group_tests_name("uuid7_volume", tests, NULL, NULL);
}
