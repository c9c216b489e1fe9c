/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for cmd/idmintd/log.c: one line per record in the key=value
 * shape, a message that cannot break its quotes or its line, the level
 * filter, a bounded line, a file made private whatever the umask, and the
 * reopen after logrotate moved the file away.
 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "log.h"
#include "testsupport.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct fx {
    char *dir;
    char path[512];
};

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof(*f));

    if (f == NULL || (f->dir = ts_tempdir()) == NULL)
        return -1;
    snprintf(f->path, sizeof(f->path), "%s/idmintd.log", f->dir);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;

    log_close();
    ts_rmtree(f->dir);
    free(f);
    return 0;
}

/* The file at @p path, whole, in @p buf; its length. */
static size_t slurp(const char *path, char *buf, size_t size)
{
    FILE *fp = fopen(path, "r");
    size_t n;

    assert_non_null(fp);
    n = fread(buf, 1, size - 1, fp);
    buf[n] = '\0';
    fclose(fp);
    return n;
}

static size_t count_lines(const char *text)
{
    size_t n = 0;

    for (; *text != '\0'; text++)
        n += *text == '\n';
    return n;
}

static void test_log__levels_parse_by_name(void **state)
{
    (void)state;
    assert_int_equal(log_level_parse("debug"), LOG_DEBUG);
    assert_int_equal(log_level_parse("info"), LOG_INFO);
    assert_int_equal(log_level_parse("warn"), LOG_WARN);
    assert_int_equal(log_level_parse("warning"), LOG_WARN);
    assert_int_equal(log_level_parse("error"), LOG_ERROR);
    assert_int_equal(log_level_parse("Info"), -1);
    assert_int_equal(log_level_parse(""), -1);
}

static void test_log__a_record_is_one_line_of_key_values(void **state)
{
    struct fx *f = *state;
    char text[4096];

    assert_int_equal(log_open(f->path, LOG_INFO), 0);
    log_write(LOG_WARN, "store slow", "ms=%d store=\"%s\"", 812, "sqlite");
    slurp(f->path, text, sizeof(text));
    assert_int_equal(count_lines(text), 1);
    assert_int_equal(strncmp(text, "ts=", 3), 0);
    /* ts=YYYY-MM-DDTHH:MM:SS.mmmZ */
    assert_int_equal(text[7], '-');
    assert_int_equal(text[13], 'T');
    assert_int_equal(text[26], 'Z');
    assert_non_null(strstr(text, "Z level=warn msg=\"store slow\" ms=812 store=\"sqlite\"\n"));
}

/* Quotes and backslashes are escaped, line breaks become spaces: one record stays one line. */
static void test_log__a_message_cannot_break_its_quotes_or_its_line(void **state)
{
    struct fx *f = *state;
    char text[4096];

    assert_int_equal(log_open(f->path, LOG_DEBUG), 0);
    log_write(LOG_INFO, "a \"quoted\" \\path\nlevel=error msg=\"forged\"\r", NULL);
    slurp(f->path, text, sizeof(text));
    assert_int_equal(count_lines(text), 1);
    assert_non_null(
        strstr(text, "msg=\"a \\\"quoted\\\" \\\\path level=error msg=\\\"forged\\\" \"\n"));
}

static void test_log__records_below_the_level_are_dropped(void **state)
{
    struct fx *f = *state;
    char text[4096];

    assert_int_equal(log_open(f->path, LOG_WARN), 0);
    log_write(LOG_DEBUG, "debug", NULL);
    log_write(LOG_INFO, "info", NULL);
    log_write(LOG_WARN, "warn", NULL);
    log_write(LOG_ERROR, "error", NULL);
    slurp(f->path, text, sizeof(text));
    assert_int_equal(count_lines(text), 2);
    assert_null(strstr(text, "msg=\"info\""));
    assert_non_null(strstr(text, "level=warn msg=\"warn\""));
    assert_non_null(strstr(text, "level=error msg=\"error\""));
}

/* A message and a tail far longer than a line are cut, and the line still ends. */
static void test_log__an_overlong_record_is_cut_to_one_line(void **state)
{
    struct fx *f = *state;
    static char big[8192], text[16384];
    size_t n;

    memset(big, 'm', sizeof(big) - 1);
    assert_int_equal(log_open(f->path, LOG_INFO), 0);
    log_write(LOG_INFO, big, NULL);
    log_write(LOG_INFO, "short", "tail=%s", big);
    n = slurp(f->path, text, sizeof(text));
    assert_int_equal(count_lines(text), 2);
    assert_true(n <= 2 * 2048);
    assert_int_equal(text[n - 1], '\n');
    assert_non_null(strstr(text, "msg=\"short\" tail=mmm"));
}

/* Made 0640 even under umask 000: a log anyone may write could be forged. */
static void test_log__a_new_file_is_private_whatever_the_umask(void **state)
{
    struct fx *f = *state;
    struct stat st;
    mode_t old = umask(0);

    assert_int_equal(log_open(f->path, LOG_INFO), 0);
    umask(old);
    assert_int_equal(stat(f->path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0640);
    assert_int_equal(log_open("/nonexistent-dir/idmintd.log", LOG_INFO), -1);
}

/* After logrotate renames the file, a reopen writes to a new one at the path. */
static void test_log__reopen_follows_a_rotation(void **state)
{
    struct fx *f = *state;
    char rotated[600], text[4096];

    snprintf(rotated, sizeof(rotated), "%s.1", f->path);
    assert_int_equal(log_open(f->path, LOG_INFO), 0);
    log_write(LOG_INFO, "before", NULL);
    assert_int_equal(rename(f->path, rotated), 0);
    log_write(LOG_INFO, "still the old file", NULL);
    assert_int_equal(log_reopen(), 0);
    log_write(LOG_INFO, "after", NULL);
    slurp(rotated, text, sizeof(text));
    assert_non_null(strstr(text, "before"));
    assert_non_null(strstr(text, "still the old file"));
    assert_null(strstr(text, "after"));
    slurp(f->path, text, sizeof(text));
    assert_int_equal(count_lines(text), 1);
    assert_non_null(strstr(text, "msg=\"after\""));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_log__levels_parse_by_name),
        cmocka_unit_test_setup_teardown(test_log__a_record_is_one_line_of_key_values, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_log__a_message_cannot_break_its_quotes_or_its_line,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_log__records_below_the_level_are_dropped, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_log__an_overlong_record_is_cut_to_one_line, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_log__a_new_file_is_private_whatever_the_umask, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_log__reopen_follows_a_rotation, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
