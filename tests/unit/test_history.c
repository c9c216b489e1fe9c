/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tests for src/history.c: the one place that decides a store went back in
 * time. Each way a store can be behind what a holder or a host saw is
 * refused with ERESTORED; what a store that moved on legitimately says is
 * accepted; a witness (a host's evidence) and a holder (a running process)
 * differ only where the docs say.
 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "idmint.h"
#include "internal.h"

#include <stdio.h>
#include <string.h>

#define ID_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define ID_B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define ID_C "cccccccccccccccccccccccccccccccc"

static struct idmint__history pair(const char *id, uint64_t seq, uint64_t tip)
{
    struct idmint__history h;

    memset(&h, 0, sizeof(h));
    snprintf(h.id, sizeof(h.id), "%s", id);
    h.seq = seq;
    h.tip = tip;
    return h;
}

/* A store whose head is (@p id, @p head_seq), log from @p oldest, tip @p tip at the seq asked. */
static struct idmint__history_state store(const char *id, uint64_t head_seq, uint64_t oldest,
                                          uint64_t tip)
{
    struct idmint__history_state s;

    memset(&s, 0, sizeof(s));
    s.head = pair(id, head_seq, 99);
    s.oldest_seq = oldest;
    s.tip_at_seq = tip;
    return s;
}

static int verify(struct idmint__history seen, struct idmint__history_state s,
                  enum idmint__evidence kind)
{
    return idmint__history_verify(&seen, &s, kind, "namespace 'orders'");
}

static void test_history__a_store_that_moved_on_is_accepted(void **state)
{
    (void)state;
    assert_int_equal(verify(pair(ID_A, 10, 7), store(ID_A, 10, 1, 7), IDMINT__EVIDENCE_HOLDER), 0);
    assert_int_equal(verify(pair(ID_A, 10, 7), store(ID_A, 50, 1, 7), IDMINT__EVIDENCE_HOLDER), 0);
    /* Nothing seen yet, or an older store that sent no tip: nothing to hold it to. */
    assert_int_equal(verify(pair("", 0, 0), store(ID_A, 3, 1, 0), IDMINT__EVIDENCE_HOLDER), 0);
    assert_int_equal(verify(pair(ID_A, 10, 0), store(ID_A, 50, 40, 0), IDMINT__EVIDENCE_HOLDER), 0);
}

static void test_history__each_way_back_in_time_is_refused(void **state)
{
    struct idmint__history_state s;

    (void)state;
    /* Behind the seq seen. */
    assert_int_equal(verify(pair(ID_A, 10, 7), store(ID_A, 9, 1, 0), IDMINT__EVIDENCE_HOLDER),
                     IDMINT_ERESTORED);
    assert_non_null(strstr(idmint_errmsg(), "write 9"));
    /* Restored, then written to again: the same seq with another tip. */
    assert_int_equal(verify(pair(ID_A, 10, 7), store(ID_A, 12, 1, 8), IDMINT__EVIDENCE_WITNESS),
                     IDMINT_ERESTORED);
    assert_non_null(strstr(idmint_errmsg(), "written to since"));
    /* Another history that was never fenced over the one seen. */
    assert_int_equal(verify(pair(ID_A, 10, 7), store(ID_B, 12, 1, 7), IDMINT__EVIDENCE_WITNESS),
                     IDMINT_ERESTORED);
    assert_non_null(strstr(idmint_errmsg(), "nor was it fenced over it"));
    /* A marked backup, whatever was seen. */
    s = store(ID_A, 10, 1, 7);
    s.backup_ms = 1;
    assert_int_equal(verify(pair("", 0, 0), s, IDMINT__EVIDENCE_HOLDER), IDMINT_ERESTORED);
    assert_non_null(strstr(idmint_errmsg(), "backup"));
}

/* Where a holder and a host's witness are judged apart, on purpose. */
static void test_history__holders_and_witnesses_differ_where_documented(void **state)
{
    struct idmint__history_state fenced = store(ID_C, 20, 1, 0);

    (void)state;
    snprintf(fenced.lineage[0], sizeof(fenced.lineage[0]), "%s", ID_B);
    snprintf(fenced.lineage[1], sizeof(fenced.lineage[1]), "%s", ID_A);
    fenced.lineage_n = 2;
    /* Fenced over the history seen: the host's evidence is quarantined, a holder stops. */
    assert_int_equal(verify(pair(ID_A, 10, 7), fenced, IDMINT__EVIDENCE_WITNESS), 0);
    assert_int_equal(verify(pair(ID_A, 10, 7), fenced, IDMINT__EVIDENCE_HOLDER), IDMINT_ERESTORED);
    assert_non_null(strstr(idmint_errmsg(), "fenced after a restore"));
    /* Older than the log: proves nothing for a witness, cannot be established for a holder. */
    assert_int_equal(
        verify(pair(ID_A, 10, 7), store(ID_A, 5000, 4000, 0), IDMINT__EVIDENCE_WITNESS), 0);
    assert_int_equal(verify(pair(ID_A, 10, 7), store(ID_A, 5000, 4000, 0), IDMINT__EVIDENCE_HOLDER),
                     IDMINT_ERESTORED);
    assert_non_null(strstr(idmint_errmsg(), "cannot establish"));
}

/* An http:// remote's counters only: a reply at or below what was seen is a restore. */
static void test_history__following_replies_never_goes_backwards(void **state)
{
    struct idmint__history seen = pair(ID_A, 10, 0), got;

    (void)state;
    got = pair(ID_A, 11, 0);
    assert_int_equal(idmint__history_follow(&seen, &got, "orders"), 0);
    assert_int_equal(seen.seq, 11);
    got = pair(ID_A, 11, 0);
    assert_int_equal(idmint__history_follow(&seen, &got, "orders"), IDMINT_ERESTORED);
    assert_int_equal(seen.seq, 11); /* unchanged by a refusal */
    got = pair(ID_B, 12, 0);
    assert_int_equal(idmint__history_follow(&seen, &got, "orders"), IDMINT_ERESTORED);
    assert_non_null(strstr(idmint_errmsg(), "history changed"));
    got = pair("", 0, 0); /* no news */
    assert_int_equal(idmint__history_follow(&seen, &got, "orders"), 0);
    assert_int_equal(seen.seq, 11);
}

static void test_history__ids_are_32_lower_case_hex_digits(void **state)
{
    (void)state;
    assert_true(idmint__history_id_valid(ID_A));
    assert_true(idmint__history_id_valid("0123456789abcdef0123456789abcdef"));
    assert_false(idmint__history_id_valid("0123456789ABCDEF0123456789abcdef"));
    assert_false(idmint__history_id_valid("0123456789abcdef0123456789abcde"));
    assert_false(idmint__history_id_valid("0123456789abcdef0123456789abcdef0"));
    assert_false(idmint__history_id_valid("0123456789abcdeg0123456789abcdef"));
}

/* A point needs both an id and a seq; the id's form is idmint__history_id_valid's to judge. */
static void test_history__a_point_has_an_id_and_a_seq(void **state)
{
    struct idmint__history h = {"0123456789abcdef0123456789abcdef", 7, 0};

    (void)state;
    assert_true(idmint__history_is_point(&h));
    h.seq = 0;
    assert_false(idmint__history_is_point(&h));
    h.seq = 7;
    h.id[0] = '\0';
    assert_false(idmint__history_is_point(&h));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_history__a_store_that_moved_on_is_accepted),
        cmocka_unit_test(test_history__each_way_back_in_time_is_refused),
        cmocka_unit_test(test_history__holders_and_witnesses_differ_where_documented),
        cmocka_unit_test(test_history__following_replies_never_goes_backwards),
        cmocka_unit_test(test_history__ids_are_32_lower_case_hex_digits),
        cmocka_unit_test(test_history__a_point_has_an_id_and_a_seq),
    };

    return cmocka_run_group_tests_name("history", tests, NULL, NULL);
}
