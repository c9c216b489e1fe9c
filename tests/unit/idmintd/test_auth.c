/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for cmd/idmintd/auth.c: roles, the "role:sha256:hex" form of
 * a configured token, SHA-256, and the Authorization check, which must
 * accept exactly the configured token (and give back its role) and
 * nothing near it.
 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "auth.h"

#include <stdio.h>
#include <string.h>

static void test_auth__role_names_parse_both_ways_and_nothing_else_is_a_role(void **state)
{
    (void)state;
    assert_int_equal(auth_role_parse("mint", 4), AUTH_MINT);
    assert_int_equal(auth_role_parse("generator", 9), AUTH_GENERATOR);
    assert_int_equal(auth_role_parse("admin", 5), AUTH_ADMIN);
    assert_int_equal(auth_role_parse("admins", 5), AUTH_ADMIN); /* len bytes only */
    assert_int_equal(auth_role_parse("admin", 4), AUTH_NONE);
    assert_int_equal(auth_role_parse("Admin", 5), AUTH_NONE);
    assert_int_equal(auth_role_parse("none", 4), AUTH_NONE);
    assert_int_equal(auth_role_parse("", 0), AUTH_NONE);
    assert_string_equal(auth_role_name(AUTH_MINT), "mint");
    assert_string_equal(auth_role_name(AUTH_GENERATOR), "generator");
    assert_string_equal(auth_role_name(AUTH_ADMIN), "admin");
    assert_string_equal(auth_role_name(AUTH_NONE), "none");
    assert_string_equal(auth_role_name((enum auth_role)9), "none");
}

static void test_auth__sha256_hex_is_the_standard_digest(void **state)
{
    char hex[65];

    (void)state;
    /* FIPS 180-2 appendix B.1 and the empty message. */
    assert_int_equal(auth_sha256_hex("abc", 3, hex), 0);
    assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    assert_int_equal(auth_sha256_hex("", 0, hex), 0);
    assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

static void test_auth__a_token_line_parses_into_role_and_hash(void **state)
{
    struct auth_token a, b;
    char err[256];

    (void)state;
    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    snprintf(a.name, sizeof(a.name), "kept");
    assert_int_equal(
        auth_token_parse(
            "generator:sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", &a,
            err, sizeof(err)),
        0);
    assert_int_equal(a.role, AUTH_GENERATOR);
    assert_int_equal(a.hash[0], 0xba);
    assert_int_equal(a.hash[31], 0xad);
    assert_string_equal(a.name, "kept"); /* the name is the caller's */
    /* Upper-case hex is the same hash. */
    assert_int_equal(
        auth_token_parse(
            "generator:sha256:BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD", &b,
            err, sizeof(err)),
        0);
    assert_memory_equal(a.hash, b.hash, AUTH_HASH_BYTES);
}

static void parse_refused(const char *text, const char *what)
{
    struct auth_token t, before;
    char err[256] = "";

    memset(&t, 0x5a, sizeof(t)); /* a pattern no parse writes */
    t.role = AUTH_NONE;
    before = t;
    assert_int_equal(auth_token_parse(text, &t, err, sizeof(err)), -1);
    if (strstr(err, what) == NULL)
        fail_msg("'%s': expected '%s' in '%s'", text, what, err);
    /* No role is granted by a refused line, and no half-parsed hash is left. */
    assert_memory_equal(&t, &before, sizeof(t));
}

static void test_auth__a_malformed_token_line_is_refused_with_its_problem(void **state)
{
    (void)state;
    parse_refused("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
                  "token must be ROLE:sha256:HEX");
    parse_refused(":sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
                  "unknown role ''");
    parse_refused("root:sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
                  "unknown role 'root' (mint, generator or admin)");
    parse_refused("mint:SHA256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
                  "token hash must start with sha256:");
    parse_refused("mint:sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015a",
                  "must be 64 hex digits, got 63 characters");
    parse_refused("mint:sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad0",
                  "must be 64 hex digits, got 65 characters");
    parse_refused("mint:sha256:", "must be 64 hex digits, got 0 characters");
    parse_refused("mint:sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015a ",
                  "non-hex character");
    parse_refused("mint:sha256:xa7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
                  "non-hex character");
}

/* Three tokens whose secrets are "m-secret", "g-secret" and "a-secret". */
static void three_tokens(struct auth_token t[3])
{
    static const char *const secrets[3] = {"m-secret", "g-secret", "a-secret"};
    static const enum auth_role roles[3] = {AUTH_MINT, AUTH_GENERATOR, AUTH_ADMIN};
    char hex[65], line[128], err[128];
    size_t i;

    for (i = 0; i < 3; i++) {
        memset(&t[i], 0, sizeof(t[i]));
        assert_int_equal(auth_sha256_hex(secrets[i], strlen(secrets[i]), hex), 0);
        snprintf(line, sizeof(line), "%s:sha256:%s", auth_role_name(roles[i]), hex);
        assert_int_equal(auth_token_parse(line, &t[i], err, sizeof(err)), 0);
        snprintf(t[i].name, sizeof(t[i].name), "token%zu", i);
    }
}

static const struct auth_token *check(const struct auth_token t[3], const char *header,
                                      int *is_missing)
{
    *is_missing = -1;
    return auth_check(t, 3, header, header != NULL ? strlen(header) : 0, is_missing);
}

static void test_auth__each_token_is_accepted_with_its_own_role(void **state)
{
    struct auth_token t[3];
    int is_missing;

    (void)state;
    three_tokens(t);
    assert_ptr_equal(check(t, "Bearer m-secret", &is_missing), &t[0]);
    assert_int_equal(is_missing, 0);
    assert_int_equal(check(t, "Bearer m-secret", &is_missing)->role, AUTH_MINT);
    assert_ptr_equal(check(t, "Bearer g-secret", &is_missing), &t[1]);
    assert_int_equal(check(t, "Bearer g-secret", &is_missing)->role, AUTH_GENERATOR);
    assert_ptr_equal(check(t, "Bearer a-secret", &is_missing), &t[2]);
    assert_int_equal(check(t, "Bearer a-secret", &is_missing)->role, AUTH_ADMIN);
}

static void test_auth__anything_near_a_token_is_refused_as_presented(void **state)
{
    static const char *const near[] = {
        "Bearer m-secre",  "Bearer m-secrett", "Bearer M-secret",
        "Bearer m-secreu", "Bearer n-secret",  "Bearer m-secret\n",
        "Bearer sha256:0", "Bearer token0",    "Bearer mint",
    };
    struct auth_token t[3];
    int is_missing;
    size_t i;

    (void)state;
    three_tokens(t);
    for (i = 0; i < sizeof(near) / sizeof(near[0]); i++) {
        if (check(t, near[i], &is_missing) != NULL)
            fail_msg("'%s' was accepted", near[i]);
        assert_int_equal(is_missing, 0);
    }
    /* A NUL is a byte of the token like any other. */
    assert_null(auth_check(t, 3, "Bearer m-secret\0", 16, &is_missing));
    assert_int_equal(is_missing, 0);
    /* The hash itself is not the token. */
    {
        char hex[65], header[80];

        assert_int_equal(auth_sha256_hex("a-secret", 8, hex), 0);
        snprintf(header, sizeof(header), "Bearer %s", hex);
        assert_null(check(t, header, &is_missing));
    }
}

static void test_auth__whitespace_around_is_dropped_but_never_inside(void **state)
{
    struct auth_token t[3];
    int is_missing;

    (void)state;
    three_tokens(t);
    assert_ptr_equal(check(t, "  \tBearer a-secret \t ", &is_missing), &t[2]);
    assert_ptr_equal(check(t, "Bearer    a-secret", &is_missing), &t[2]);
    assert_ptr_equal(check(t, "bEARER a-secret", &is_missing), &t[2]); /* the scheme's case */
    assert_null(check(t, "Bearer a-sec ret", &is_missing));
    assert_int_equal(is_missing, 0);
    assert_null(check(t, "Bearer a-secret x", &is_missing));
    assert_int_equal(is_missing, 0);
    assert_null(check(t, "Bearer a-sec\tret", &is_missing));
    assert_int_equal(is_missing, 0);
    assert_null(check(t, "Bearer \ta-secret", &is_missing));
    assert_int_equal(is_missing, 0);
}

static void test_auth__no_bearer_token_is_reported_as_missing(void **state)
{
    static const char *const missing[] = {"",
                                          "Bearer",
                                          "Bearer ",
                                          "Bearer    ",
                                          "Basic a",
                                          "Bearera-secret",
                                          "Bearer\ta-secret",
                                          "   ",
                                          "Token a-secret"};
    struct auth_token t[3];
    int is_missing;
    size_t i;

    (void)state;
    three_tokens(t);
    assert_null(check(t, NULL, &is_missing));
    assert_int_equal(is_missing, 1);
    for (i = 0; i < sizeof(missing) / sizeof(missing[0]); i++) {
        assert_null(check(t, missing[i], &is_missing));
        if (is_missing != 1)
            fail_msg("'%s' not reported missing", missing[i]);
    }
}

static void test_auth__only_header_len_bytes_are_read(void **state)
{
    static const char header[] = "Bearer a-secretXYZ";
    struct auth_token t[3];
    int is_missing = -1;

    (void)state;
    three_tokens(t);
    assert_ptr_equal(auth_check(t, 3, header, sizeof(header) - 1 - 3, &is_missing), &t[2]);
    assert_null(auth_check(t, 3, header, sizeof(header) - 1, &is_missing));
    assert_null(auth_check(t, 3, header, sizeof(header) - 1 - 4, &is_missing));
}

static void test_auth__no_tokens_accept_nobody_and_a_repeated_hash_gives_the_first(void **state)
{
    struct auth_token t[3];
    int is_missing;

    (void)state;
    three_tokens(t);
    assert_null(auth_check(t, 0, "Bearer m-secret", 15, &is_missing));
    assert_int_equal(is_missing, 0);
    /* Two names for one secret: the first row wins, whatever comes after. */
    memcpy(t[2].hash, t[1].hash, AUTH_HASH_BYTES);
    assert_ptr_equal(check(t, "Bearer g-secret", &is_missing), &t[1]);
    assert_null(check(t, "Bearer a-secret", &is_missing));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_auth__role_names_parse_both_ways_and_nothing_else_is_a_role),
        cmocka_unit_test(test_auth__sha256_hex_is_the_standard_digest),
        cmocka_unit_test(test_auth__a_token_line_parses_into_role_and_hash),
        cmocka_unit_test(test_auth__a_malformed_token_line_is_refused_with_its_problem),
        cmocka_unit_test(test_auth__each_token_is_accepted_with_its_own_role),
        cmocka_unit_test(test_auth__anything_near_a_token_is_refused_as_presented),
        cmocka_unit_test(test_auth__whitespace_around_is_dropped_but_never_inside),
        cmocka_unit_test(test_auth__no_bearer_token_is_reported_as_missing),
        cmocka_unit_test(test_auth__only_header_len_bytes_are_read),
        cmocka_unit_test(test_auth__no_tokens_accept_nobody_and_a_repeated_hash_gives_the_first),
    };
    return cmocka_run_group_tests_name("auth", tests, NULL, NULL);
}
