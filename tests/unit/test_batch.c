/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tests for src/batch.c: an idempotent batch's IDs as runs of consecutive
 * values ("START+LEN,..."), written and read back exactly, and every
 * malformed or inconsistent text a store could hand back refused (a replay
 * must never hand out IDs the batch did not hold).
 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "idmint.h"
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void round_trip(const uint64_t *ids, size_t n, const char *want)
{
    struct idmint__batch b;
    uint64_t *back = calloc(n, sizeof(*back));

    assert_non_null(back);
    memset(&b, 0, sizeof(b));
    assert_int_equal(idmint__batch_runs_encode(&b, ids, n), 0);
    assert_int_equal(b.count, n);
    if (want != NULL)
        assert_string_equal(b.runs, want);
    assert_int_equal(idmint__batch_runs_decode(&b, back), 0);
    assert_memory_equal(back, ids, n * sizeof(*ids));
    idmint__batch_clear(&b);
    assert_null(b.runs);
    free(back);
}

static void test_batch__runs_are_written_and_read_back_exactly(void **state)
{
    const uint64_t one[] = {42};
    const uint64_t runs[] = {5, 6, 7, 9, 10, 100};
    const uint64_t max[] = {IDMINT_MAX_VALUE - 1, IDMINT_MAX_VALUE, 1};
    uint64_t *many = malloc(100000 * sizeof(*many));
    size_t i;

    (void)state;
    round_trip(one, 1, "42+1");
    round_trip(runs, 6, "5+3,9+2,100+1");
    round_trip(max, 3, "9223372036854775806+2,1+1");
    assert_non_null(many);
    for (i = 0; i < 100000; i++) /* runs of 7, each 1000 apart: every run ends inside */
        many[i] = (i / 7) * 1000 + i % 7 + 1;
    round_trip(many, 100000, NULL);
    for (i = 0; i < 100000; i++) /* nothing consecutive: the text's worst case */
        many[i] = IDMINT_MAX_VALUE - 2 * i;
    round_trip(many, 100000, NULL);
    free(many);
}

static void refused(const char *runs, uint32_t count)
{
    struct idmint__batch b;
    uint64_t ids[8];

    memset(&b, 0, sizeof(b));
    snprintf(b.key, sizeof(b.key), "k");
    snprintf(b.ns, sizeof(b.ns), "orders");
    b.runs = runs != NULL ? strdup(runs) : NULL;
    b.count = count;
    assert_int_equal(idmint__batch_runs_decode(&b, ids), IDMINT_ESTORE);
    assert_non_null(strstr(idmint_errmsg(), "malformed runs"));
    idmint__batch_clear(&b);
}

static void test_batch__malformed_or_inconsistent_runs_are_refused(void **state)
{
    (void)state;
    refused(NULL, 1);
    refused("", 1);
    refused("5", 1); /* no length */
    refused("5+", 1);
    refused("5+0", 1); /* an empty run */
    refused("+5", 1);
    refused("-5+1", 1);
    refused(" 5+1", 1);
    refused("5+1,", 2); /* a trailing comma */
    refused("5+1;6+1", 2);
    refused("5+2", 1);     /* more than the count */
    refused("5+8", 8 + 1); /* fewer than the count */
    refused("5+1,6+1", 1);
    refused("9223372036854775808+1", 1);  /* above the largest ID */
    refused("9223372036854775807+2", 2);  /* runs past it */
    refused("99999999999999999999+1", 1); /* past 64 bits */
    refused("5+18446744073709551615", 8); /* a length past 64 bits */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_batch__runs_are_written_and_read_back_exactly),
        cmocka_unit_test(test_batch__malformed_or_inconsistent_runs_are_refused),
    };

    return cmocka_run_group_tests_name("batch", tests, NULL, NULL);
}
