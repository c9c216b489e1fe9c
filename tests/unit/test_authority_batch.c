/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for src/authority_batch.c: a keyed batch is saved once per
 * (owner, key), a repeat finds the first one whatever it asks, another
 * owner's key is another batch, and the retention is the authority's.
 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "authority_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOW_MS TS_AUTHORITY_NOW_MS

/* A batch of @p n IDs from @p first (every other value) for @p owner under @p key. */
static void batch_of(struct idmint__batch *b, const char *owner, const char *key, uint64_t first,
                     uint32_t n)
{
    uint64_t ids[8];
    uint32_t i;

    assert_true(n <= 8);
    memset(b, 0, sizeof(*b));
    snprintf(b->ns, sizeof(b->ns), "orders");
    snprintf(b->owner, sizeof(b->owner), "%s", owner);
    snprintf(b->key, sizeof(b->key), "%s", key);
    for (i = 0; i < n; i++)
        ids[i] = first + 2 * i;
    b->count = n;
    assert_int_equal(idmint__batch_runs_encode(b, ids, n), 0);
}

static void test_authority_batch__saved_once_then_found_by_its_owner(void **state)
{
    struct ts_authority *f = *state;
    struct idmint__batch b, saved = {0}, found = {0};
    int64_t keep[IDMINT__KEEP__COUNT];

    batch_of(&b, "alice", "order-1", 100, 3);
    assert_int_equal(idmint__authority_batch_claim(f->a, &b, &saved), 0);
    assert_string_equal(saved.runs, b.runs);
    assert_int_equal(saved.count, 3);
    /* Kept for the authority's batch retention, whatever the caller set. */
    idmint__retention_defaults(keep);
    assert_int_equal(b.keep_ms, keep[IDMINT__KEEP_BATCHES]);
    assert_int_equal(saved.expires_ms - saved.created_ms, keep[IDMINT__KEEP_BATCHES]);
    assert_int_equal(idmint__authority_batch_get(f->a, "alice", "order-1", &found), 0);
    assert_string_equal(found.ns, "orders");
    assert_string_equal(found.runs, b.runs);
    assert_int_equal(found.count, 3);
    idmint__batch_clear(&b);
    idmint__batch_clear(&saved);
    idmint__batch_clear(&found);
}

/* A second claim of the key gets the first batch back, and the store keeps the first. */
static void test_authority_batch__a_repeat_gets_the_first_batch(void **state)
{
    struct ts_authority *f = *state;
    struct idmint__batch first, second, saved = {0};

    batch_of(&first, "alice", "k", 100, 3);
    batch_of(&second, "alice", "k", 900, 5);
    assert_int_equal(idmint__authority_batch_claim(f->a, &first, &saved), 0);
    idmint__batch_clear(&saved);
    assert_int_equal(idmint__authority_batch_claim(f->a, &second, &saved), 0);
    assert_string_equal(saved.runs, first.runs);
    assert_int_equal(saved.count, 3);
    idmint__batch_clear(&saved);
    assert_int_equal(idmint__authority_batch_get(f->a, "alice", "k", &saved), 0);
    assert_string_equal(saved.runs, first.runs);
    idmint__batch_clear(&first);
    idmint__batch_clear(&second);
    idmint__batch_clear(&saved);
}

/* The same key of another owner is another batch: never found, never a conflict. */
static void test_authority_batch__a_key_belongs_to_its_owner(void **state)
{
    struct ts_authority *f = *state;
    struct idmint__batch a, b, saved = {0};

    batch_of(&a, "alice", "k", 100, 2);
    batch_of(&b, "bob", "k", 500, 2);
    assert_int_equal(idmint__authority_batch_claim(f->a, &a, &saved), 0);
    idmint__batch_clear(&saved);
    assert_int_equal(idmint__authority_batch_get(f->a, "bob", "k", &saved), IDMINT_ENOTFOUND);
    assert_null(saved.runs);
    assert_int_equal(idmint__authority_batch_claim(f->a, &b, &saved), 0);
    assert_string_equal(saved.runs, b.runs);
    idmint__batch_clear(&saved);
    assert_int_equal(idmint__authority_batch_get(f->a, "alice", "k", &saved), 0);
    assert_string_equal(saved.runs, a.runs);
    idmint__batch_clear(&a);
    idmint__batch_clear(&b);
    idmint__batch_clear(&saved);
}

static void test_authority_batch__bad_arguments_save_nothing(void **state)
{
    struct ts_authority *f = *state;
    struct idmint__batch b, saved = {0};

    batch_of(&b, "alice", "bad key", 1, 1);
    assert_int_equal(idmint__authority_batch_claim(f->a, &b, &saved), IDMINT_EINVAL);
    assert_int_equal(idmint__authority_batch_get(f->a, "alice", "bad key", &saved), IDMINT_EINVAL);
    idmint__batch_clear(&b);
    batch_of(&b, "alice", "good", 1, 1);
    assert_int_equal(idmint__authority_batch_claim(f->a, &b, NULL), IDMINT_EINVAL);
    assert_int_equal(idmint__authority_batch_claim(f->a, NULL, &saved), IDMINT_EINVAL);
    assert_int_equal(idmint__authority_batch_get(f->a, "alice", "good", NULL), IDMINT_EINVAL);
    assert_int_equal(idmint__authority_batch_claim(NULL, &b, &saved), IDMINT_EINVAL);
    assert_int_equal(idmint__authority_batch_get(f->a, "alice", "good", &saved), IDMINT_ENOTFOUND);
    idmint__batch_clear(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_authority_batch__saved_once_then_found_by_its_owner,
                                        ts_authority_setup, ts_authority_teardown),
        cmocka_unit_test_setup_teardown(test_authority_batch__a_repeat_gets_the_first_batch,
                                        ts_authority_setup, ts_authority_teardown),
        cmocka_unit_test_setup_teardown(test_authority_batch__a_key_belongs_to_its_owner,
                                        ts_authority_setup, ts_authority_teardown),
        cmocka_unit_test_setup_teardown(test_authority_batch__bad_arguments_save_nothing,
                                        ts_authority_setup, ts_authority_teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
