/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for cmd/idmintd/config.c: every refusal names the problem
 * (and, from a file, the file and line) and leaves the settings as they
 * were; bounds are inclusive; a file with [tokens] must be private; the
 * environment and the cross-field checks. Files live in a temp folder.
 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "auth.h"
#include "config.h"
#include "log.h"
#include "testsupport.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define HASH_A "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static struct config *cfg_new(void)
{
    struct config *cfg = malloc(sizeof(*cfg));

    assert_non_null(cfg);
    config_defaults(cfg);
    return cfg;
}

/* config_load_file refuses @p path with @p what in its message, and changes nothing. */
static void file_refused(struct config *cfg, const char *path, const char *what)
{
    struct config *before = malloc(sizeof(*before));
    char err[512] = "";

    assert_non_null(before);
    memcpy(before, cfg, sizeof(*cfg));
    assert_int_equal(config_load_file(cfg, path, err, sizeof(err)), -1);
    if (strstr(err, what) == NULL)
        fail_msg("%s: expected '%s' in '%s'", path, what, err);
    assert_memory_equal(cfg, before, sizeof(*cfg)); /* no line before the bad one took */
    free(before);
}

/* config_set refuses @p value with @p what in its message, and changes nothing. */
static void refused(struct config *cfg, const char *section, const char *key, const char *value,
                    const char *what)
{
    struct config *before = malloc(sizeof(*before));
    char err[512] = "";

    assert_non_null(before);
    memcpy(before, cfg, sizeof(*cfg));
    assert_int_equal(config_set(cfg, section, key, value, err, sizeof(err)), -1);
    if (strstr(err, what) == NULL)
        fail_msg("[%s] %s = %s: expected '%s' in '%s'", section, key, value, what, err);
    assert_memory_equal(cfg, before, sizeof(*cfg));
    free(before);
}

static void accepted(struct config *cfg, const char *section, const char *key, const char *value)
{
    char err[512] = "";

    if (config_set(cfg, section, key, value, err, sizeof(err)) != 0)
        fail_msg("[%s] %s = %s refused: %s", section, key, value, err);
}

static void test_config__the_defaults_pass_the_final_checks(void **state)
{
    struct config *cfg = cfg_new();
    char err[256];

    (void)state;
    assert_int_equal(config_finish(cfg, err, sizeof(err)), 0);
    assert_int_equal(cfg->ready_margin_ms, cfg->lease_ms / 10);
    assert_string_equal(cfg->listen, "127.0.0.1:8080");
    assert_string_equal(cfg->authority, ""); /* the library's default, never a path of ours */
    assert_int_equal(cfg->limits[RATELIMIT_BATCH].rate, RATELIMIT_BATCH_RATE);
    assert_int_equal(cfg->limits[RATELIMIT_GRANT].rate, RATELIMIT_GRANT_RATE);
    assert_int_equal(cfg->limits[RATELIMIT_GRANT].burst, RATELIMIT_GRANT_BURST);
    assert_int_equal(cfg->limits[RATELIMIT_RENEW].rate, RATELIMIT_RENEW_RATE);
    assert_int_equal(cfg->limits[RATELIMIT_MINT].rate, 0);
    free(cfg);
}

static void test_config__numbers_are_taken_at_both_bounds_and_refused_past_them(void **state)
{
    struct config *cfg = cfg_new();

    (void)state;
    accepted(cfg, "server", "threads", "1");
    assert_int_equal(cfg->threads, 1);
    accepted(cfg, "server", "threads", "64");
    assert_int_equal(cfg->threads, 64);
    refused(cfg, "server", "threads", "0", "0 is outside 1..64");
    refused(cfg, "server", "threads", "65", "65 is outside 1..64");
    accepted(cfg, "server", "client_prefix_v4", "8");
    refused(cfg, "server", "client_prefix_v4", "33", "outside 8..32");
    refused(cfg, "server", "client_prefix_v6", "65", "outside 16..64");
    accepted(cfg, "server", "max_count", "1000000");
    assert_int_equal(cfg->max_count, 1000000);
    refused(cfg, "server", "max_count", "1000001", "outside 1..1000000");
    refused(cfg, "server", "max_body_bytes", "15", "outside 16..67108864");
    accepted(cfg, "authority", "region", "65535");
    assert_int_equal(cfg->region, 65535);
    refused(cfg, "authority", "region", "65536", "outside 0..65535");
    refused(cfg, "mint", "lease_ms", "999", "outside 1000..86400000");
    refused(cfg, "store", "deadline_ms", "9", "outside 10..600000");
    refused(cfg, "provenance", "batches_s", "0", "outside 1..315576000");
    free(cfg);
}

static void test_config__a_number_must_be_digits_only(void **state)
{
    struct config *cfg = cfg_new();

    (void)state;
    refused(cfg, "server", "max_count", "", "a number is required");
    refused(cfg, "server", "max_count", "12a", "'12a' is not a whole number");
    refused(cfg, "server", "max_count", "-1", "'-1' is not a whole number");
    refused(cfg, "server", "max_count", " 5", "is not a whole number");
    refused(cfg, "server", "max_count", "0x10", "is not a whole number");
    refused(cfg, "server", "max_count", "1e3", "is not a whole number");
    /* Past 2^64 is refused as too large, not wrapped into range. */
    refused(cfg, "server", "max_count", "18446744073709551617", "is too large");
    refused(cfg, "server", "max_count", "99999999999999999999999", "is too large");
    refused(cfg, "authority", "region", "18446744073709551616", "is too large");
    accepted(cfg, "server", "max_count", "0000042");
    assert_int_equal(cfg->max_count, 42);
    free(cfg);
}

static void test_config__a_text_too_long_for_its_field_is_refused_whole(void **state)
{
    struct config *cfg = cfg_new();
    char text[1100];

    (void)state;
    memset(text, 'a', sizeof(text) - 1);
    text[sizeof(text) - 1] = '\0';
    text[255] = '\0'; /* listen holds 255 characters */
    accepted(cfg, "server", "listen", text);
    assert_int_equal(strlen(cfg->listen), 255);
    text[255] = 'a';
    text[256] = '\0';
    refused(cfg, "server", "listen", text, "value is longer than 255 characters");
    text[256] = 'a';
    text[1024] = '\0';
    refused(cfg, "authority", "url", text, "value is longer than 1023 characters");
    refused(cfg, "server", "tls_key", text, "value is longer than 1023 characters");
    free(cfg);
}

static void test_config__unknown_sections_and_keys_are_named(void **state)
{
    struct config *cfg = cfg_new();

    (void)state;
    refused(cfg, "serve", "threads", "2", "unknown section [serve]");
    refused(cfg, "server", "thread", "2", "unknown key 'thread' in [server]");
    refused(cfg, "limits", "mintx_rate", "2", "unknown key 'mintx_rate' in [limits]");
    refused(cfg, "limits", "mint_rates", "2", "unknown key 'mint_rates' in [limits]");
    refused(cfg, "limits", "mint", "2", "unknown key 'mint' in [limits]");
    refused(cfg, "log", "level", "verbose",
            "log level 'verbose' is not debug, info, warn or error");
    free(cfg);
}

static void test_config__limits_take_rate_zero_but_never_burst_zero(void **state)
{
    struct config *cfg = cfg_new();

    (void)state;
    accepted(cfg, "limits", "batch_rate", "0"); /* an operator lifts the write limit */
    assert_int_equal(cfg->limits[RATELIMIT_BATCH].rate, 0);
    accepted(cfg, "limits", "collision_burst", "1000000");
    assert_int_equal(cfg->limits[RATELIMIT_COLLISION].burst, 1000000);
    accepted(cfg, "limits", "address_rate", "7");
    assert_int_equal(cfg->limits[RATELIMIT_ADDRESS].rate, 7);
    accepted(cfg, "limits", "generator_burst", "3");
    assert_int_equal(cfg->limits[RATELIMIT_GENERATOR].burst, 3);
    accepted(cfg, "limits", "grant_rate", "5");
    assert_int_equal(cfg->limits[RATELIMIT_GRANT].rate, 5);
    refused(cfg, "limits", "mint_burst", "0", "outside 1..1000000");
    refused(cfg, "limits", "admin_rate", "1000001", "outside 0..1000000");
    free(cfg);
}

static void test_config__tokens_are_checked_and_named_once(void **state)
{
    struct config *cfg = cfg_new();
    char name[80];
    size_t i;

    (void)state;
    accepted(cfg, "tokens", "ci", "admin:" HASH_A);
    assert_int_equal(cfg->n_tokens, 1);
    assert_string_equal(cfg->tokens[0].name, "ci");
    assert_int_equal(cfg->tokens[0].role, AUTH_ADMIN);
    assert_int_equal(cfg->tokens[0].hash[0], 0x01);
    assert_int_equal(cfg->tokens[0].hash[31], 0xef);
    refused(cfg, "tokens", "ci", "mint:" HASH_A, "token 'ci' is defined twice");
    refused(cfg, "tokens", "x", "root:" HASH_A, "unknown role 'root'");
    refused(cfg, "tokens", "x", "mint", "token must be ROLE:sha256:HEX");
    refused(cfg, "tokens", "x", "mint:md5:00", "token hash must start with sha256:");
    refused(cfg, "tokens", "x", "mint:sha256:0123", "must be 64 hex digits, got 4 characters");
    refused(cfg, "tokens", "x",
            "mint:sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdeg",
            "non-hex character");
    memset(name, 'n', sizeof(name));
    name[64] = '\0';
    refused(cfg, "tokens", name, "mint:" HASH_A, "token name must be 1..63 characters");
    name[63] = '\0';
    accepted(cfg, "tokens", name, "mint:" HASH_A);
    for (i = cfg->n_tokens; i < DAEMON_MAX_TOKENS; i++) {
        snprintf(name, sizeof(name), "t%zu", i);
        accepted(cfg, "tokens", name, "generator:" HASH_A);
    }
    refused(cfg, "tokens", "one_more", "mint:" HASH_A, "more than 64 tokens");
    free(cfg);
}

/* A file under @p dir with @p text, mode @p mode; the path is malloc'd. */
static char *write_file(const char *dir, const char *name, const char *text, mode_t mode)
{
    size_t len = strlen(dir) + strlen(name) + 2;
    char *path = malloc(len);
    FILE *f;

    assert_non_null(path);
    snprintf(path, len, "%s/%s", dir, name);
    f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fputs(text, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(chmod(path, mode), 0);
    return path;
}

static void test_config__a_file_sets_what_it_names(void **state)
{
    char *dir = ts_tempdir(), *path, err[512] = "";
    struct config *cfg = cfg_new();

    (void)state;
    assert_non_null(dir);
    path = write_file(dir, "ok.ini",
                      "; a comment\n[server]\nthreads = 3\nmax_count=500\n\n[mint]\n"
                      "lease_ms = 5000\nrenew_ms = 1000\n[log]\nlevel = warning\n",
                      0644);
    assert_int_equal(config_load_file(cfg, path, err, sizeof(err)), 0);
    assert_int_equal(cfg->threads, 3);
    assert_int_equal(cfg->max_count, 500);
    assert_int_equal(cfg->lease_ms, 5000);
    assert_int_equal(cfg->log_level, LOG_WARN);
    assert_int_equal(config_finish(cfg, err, sizeof(err)), 0);
    free(path);
    free(cfg);
    ts_rmtree(dir);
}

static void test_config__a_bad_file_names_its_file_and_line(void **state)
{
    char *dir = ts_tempdir(), *path, err[512] = "", want[600];
    struct config *cfg = cfg_new();

    (void)state;
    assert_non_null(dir);
    path =
        write_file(dir, "bad.ini", "[server]\nthreads = 2\n\nmax_count = 0\nthreads = 99\n", 0644);
    assert_int_equal(config_load_file(cfg, path, err, sizeof(err)), -1);
    /* The first problem, on line 4. */
    snprintf(want, sizeof(want), "%s:4: 0 is outside 1..1000000", path);
    assert_string_equal(err, want);
    assert_int_not_equal(cfg->threads, 2); /* line 2 did not take either */
    file_refused(cfg, path, want);
    free(path);

    path = write_file(dir, "syntax.ini", "[server]\nthreads = 2\nthis line is no setting\n", 0644);
    snprintf(want, sizeof(want), "%s:3: syntax error", path);
    file_refused(cfg, path, want);
    free(path);

    path = write_file(dir, "section.ini", "threads = 2\n", 0644);
    snprintf(want, sizeof(want), "%s:1: unknown section []", path);
    file_refused(cfg, path, want);
    free(path);

    file_refused(cfg, "/nonexistent/idmintd.ini", "/nonexistent/idmintd.ini: cannot open: ");
    free(cfg);
    ts_rmtree(dir);
}

static void test_config__a_file_with_tokens_must_be_private(void **state)
{
    static const char text[] = "[tokens]\nci = mint:" HASH_A "\n";
    char *dir = ts_tempdir(), *path, err[512] = "";
    struct config *cfg = cfg_new();

    (void)state;
    assert_non_null(dir);
    path = write_file(dir, "open.ini", text, 0644);
    assert_int_equal(config_load_file(cfg, path, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "is not private: its mode is 0644 (others have access)"));
    assert_non_null(strstr(err, "chmod 600"));
    assert_int_equal(cfg->n_tokens, 0); /* the refused file's token was not taken */
    free(path);
    path = write_file(dir, "group_w.ini", text, 0620);
    config_defaults(cfg);
    file_refused(cfg, path, "its group may write it");
    free(path);
    path = write_file(dir, "private.ini", text, 0600);
    config_defaults(cfg);
    assert_int_equal(config_load_file(cfg, path, err, sizeof(err)), 0);
    assert_int_equal(cfg->n_tokens, 1);
    free(path);
    path = write_file(dir, "group_r.ini", text, 0640);
    config_defaults(cfg);
    assert_int_equal(config_load_file(cfg, path, err, sizeof(err)), 0);
    free(path);
    /* Without [tokens] the mode is not the file's business. */
    path = write_file(dir, "no_tokens.ini", "[server]\nthreads = 2\n", 0666);
    config_defaults(cfg);
    assert_int_equal(config_load_file(cfg, path, err, sizeof(err)), 0);
    free(path);
    free(cfg);
    ts_rmtree(dir);
}

static void test_config__the_environment_overrides_and_names_its_variable(void **state)
{
    struct config *cfg = cfg_new();
    char err[512] = "";

    (void)state;
    setenv("IDMINT_MAX_COUNT", "77", 1);
    setenv("IDMINT_LIMITS_COLLISION_BURST", "9", 1);
    setenv("IDMINT_REGION", "", 1); /* empty: not set */
    assert_int_equal(config_apply_env(cfg, err, sizeof(err)), 0);
    assert_int_equal(cfg->max_count, 77);
    assert_int_equal(cfg->limits[RATELIMIT_COLLISION].burst, 9);
    assert_int_equal(cfg->region, 0);
    setenv("IDMINT_STORE_QUEUE", "0", 1);
    assert_int_equal(config_apply_env(cfg, err, sizeof(err)), -1);
    assert_string_equal(err, "IDMINT_STORE_QUEUE: 0 is outside 1..100000");
    assert_int_equal(cfg->store_queue, 256);
    unsetenv("IDMINT_STORE_QUEUE");
    unsetenv("IDMINT_MAX_COUNT");
    unsetenv("IDMINT_LIMITS_COLLISION_BURST");
    unsetenv("IDMINT_REGION");
    free(cfg);
}

static void test_config__the_final_checks_refuse_settings_that_cannot_work_together(void **state)
{
    struct config *cfg = cfg_new();
    char err[512] = "";

    (void)state;
    accepted(cfg, "server", "tls_cert", "/etc/idmint/cert.pem");
    assert_int_equal(config_finish(cfg, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "TLS needs both tls_cert and tls_key"));
    assert_non_null(strstr(err, "only tls_cert is set"));
    config_defaults(cfg);
    accepted(cfg, "server", "tls_key", "/etc/idmint/key.pem");
    assert_int_equal(config_finish(cfg, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "only tls_key is set"));
    accepted(cfg, "server", "tls_cert", "/etc/idmint/cert.pem");
    assert_int_equal(config_finish(cfg, err, sizeof(err)), 0);

    config_defaults(cfg);
    accepted(cfg, "mint", "lease_ms", "5000");
    accepted(cfg, "mint", "renew_ms", "5000");
    assert_int_equal(config_finish(cfg, err, sizeof(err)), -1);
    assert_string_equal(err, "renew_ms (5000) must be below lease_ms (5000)");
    accepted(cfg, "mint", "renew_ms", "4999");
    accepted(cfg, "mint", "ready_margin_ms", "5000");
    assert_int_equal(config_finish(cfg, err, sizeof(err)), -1);
    assert_string_equal(err, "ready_margin_ms (5000) must be below lease_ms (5000)");
    accepted(cfg, "mint", "ready_margin_ms", "4999");
    assert_int_equal(config_finish(cfg, err, sizeof(err)), 0);
    assert_int_equal(cfg->ready_margin_ms, 4999);
    free(cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config__the_defaults_pass_the_final_checks),
        cmocka_unit_test(test_config__numbers_are_taken_at_both_bounds_and_refused_past_them),
        cmocka_unit_test(test_config__a_number_must_be_digits_only),
        cmocka_unit_test(test_config__a_text_too_long_for_its_field_is_refused_whole),
        cmocka_unit_test(test_config__unknown_sections_and_keys_are_named),
        cmocka_unit_test(test_config__limits_take_rate_zero_but_never_burst_zero),
        cmocka_unit_test(test_config__tokens_are_checked_and_named_once),
        cmocka_unit_test(test_config__a_file_sets_what_it_names),
        cmocka_unit_test(test_config__a_bad_file_names_its_file_and_line),
        cmocka_unit_test(test_config__a_file_with_tokens_must_be_private),
        cmocka_unit_test(test_config__the_environment_overrides_and_names_its_variable),
        cmocka_unit_test(test_config__the_final_checks_refuse_settings_that_cannot_work_together),
    };
    return cmocka_run_group_tests_name("config", tests, NULL, NULL);
}
