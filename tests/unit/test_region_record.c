/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for src/region_record.c: a region claim as one line of text.
 * Every field comes back as it went in, spaces and '%' included; a garbled
 * record, or one without its state or region, is refused; a field a later
 * version adds is skipped.
 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "internal.h"
#include "region_record.h"

#include <stdio.h>
#include <string.h>

static void test_region_record__round_trip(void **state)
{
    idmint_region_record in, out;
    char text[1024];

    (void)state;
    memset(&in, 0, sizeof(in));
    in.region = 65535;
    in.state = IDMINT_REGION_RELEASING;
    snprintf(in.holder, sizeof(in.holder), "0123456789abcdef0123456789abcdef");
    snprintf(in.where, sizeof(in.where), "sqlite:/srv/my dir/100%%.db");
    snprintf(in.registry, sizeof(in.registry), "etcd://a:2379,b:2379/reg x");
    in.since_ms = 1796601773670;
    in.floor_ms = 1796601773689;
    assert_int_equal(idmint__region_record_format(&in, text, sizeof(text)), 0);
    assert_non_null(strstr(text, "where=sqlite:/srv/my%20dir/100%25.db registry="));
    assert_int_equal(idmint__region_record_parse(text, &out), 0);
    assert_int_equal(out.region, in.region);
    assert_int_equal(out.state, in.state);
    assert_string_equal(out.holder, in.holder);
    assert_string_equal(out.where, in.where);
    assert_string_equal(out.registry, in.registry);
    assert_int_equal(out.since_ms, in.since_ms);
    assert_int_equal(out.floor_ms, in.floor_ms);
}

static void test_region_record__empty_fields_come_back_empty(void **state)
{
    idmint_region_record in, out;
    char text[1024];

    (void)state;
    memset(&in, 0, sizeof(in));
    in.region = 3;
    assert_int_equal(idmint__region_record_format(&in, text, sizeof(text)), 0);
    assert_int_equal(idmint__region_record_parse(text, &out), 0);
    assert_int_equal(out.state, IDMINT_REGION_FREE);
    assert_string_equal(out.holder, "");
    assert_string_equal(out.where, "");
    assert_string_equal(out.registry, "");
}

static void test_region_record__garbled_is_refused(void **state)
{
    idmint_region_record out;
    static const char *const bad[] = {
        "state=claimed",                    /* no region */
        "region=1",                         /* no state */
        "state=owned region=1",             /* an unknown state */
        "state=claimed region=70000",       /* above 16 bits */
        "state=claimed region=-1",          /* negative */
        "state=claimed region=1 where=%G0", /* a bad escape */
        "state=claimed region=1 where=%2",  /* a cut escape */
        "state=claimed region=1 floor",     /* no '=' */
    };
    size_t i;

    (void)state;
    out.region = 77;
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(idmint__region_record_parse(bad[i], &out), IDMINT_ESTORE);
        assert_int_equal(out.region, 77); /* written only on success */
    }
}

static void test_region_record__later_fields_are_skipped(void **state)
{
    idmint_region_record out;

    (void)state;
    assert_int_equal(idmint__region_record_parse("state=free region=2 colour=blue floor=9", &out),
                     0);
    assert_int_equal(out.region, 2);
    assert_int_equal(out.floor_ms, 9);
}

static void test_region_record__too_small_is_refused(void **state)
{
    idmint_region_record in;
    char text[40];

    (void)state;
    memset(&in, 0, sizeof(in));
    snprintf(in.registry, sizeof(in.registry), "postgresql://idmint@registry.example/idmint");
    assert_int_equal(idmint__region_record_format(&in, text, sizeof(text)), IDMINT_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_region_record__round_trip),
        cmocka_unit_test(test_region_record__empty_fields_come_back_empty),
        cmocka_unit_test(test_region_record__garbled_is_refused),
        cmocka_unit_test(test_region_record__later_fields_are_skipped),
        cmocka_unit_test(test_region_record__too_small_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
