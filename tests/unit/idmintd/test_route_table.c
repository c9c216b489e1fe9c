/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for cmd/idmintd/route_table.c: the daemon's own table passes
 * its self-check, the self-check refuses each kind of malformed row (rows
 * built here, through route_table_check_rows) with a message naming the
 * row and the problem, and the listing prints one JSON object per row.
 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "json.h"
#include "route_table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void handler(struct http_req *r, struct daemon_thread *w, const struct route_match *m)
{
    (void)r, (void)w, (void)m;
}

static const char *const some_params[] = {"namespace", "count", NULL};

/* A sound row; each test breaks one thing of a copy. */
static struct route_row good(const char *method, const char *path)
{
    struct route_row row = {method, path, AUTH_MINT, handler, "/x", 0, some_params, NULL};

    return row;
}

/* route_table_check_rows(rows, n), with what it wrote to stderr in @p text. */
static int check(const struct route_row *rows, size_t n, char *text, size_t size)
{
    FILE *tmp = tmpfile();
    int saved, bad;
    size_t got;

    assert_non_null(tmp);
    fflush(stderr);
    saved = dup(2);
    assert_true(saved >= 0);
    assert_true(dup2(fileno(tmp), 2) >= 0);
    bad = route_table_check_rows(rows, n);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(tmp);
    got = fread(text, 1, size - 1, tmp);
    text[got] = '\0';
    fclose(tmp);
    return bad;
}

/* One row @p row, refused once, with @p what in its message. */
static void refused_alone(struct route_row row, const char *what)
{
    char text[2048];

    assert_int_equal(check(&row, 1, text, sizeof(text)), 1);
    assert_non_null(strstr(text, "route_table row 0"));
    if (strstr(text, what) == NULL)
        fail_msg("expected '%s' in: %s", what, text);
}

static void test_route_table__the_daemons_table_is_sound(void **state)
{
    char text[2048];

    (void)state;
    assert_true(route_table_len > 0);
    assert_true(route_table_len <= ROUTE_ROWS_MAX);
    assert_int_equal(route_table_check(), 0);
    assert_int_equal(check(route_table, route_table_len, text, sizeof(text)), 0);
    assert_string_equal(text, "");
}

static void test_route_table__a_sound_row_passes(void **state)
{
    struct route_row rows[3] = {good("GET", "/v1/ids"), good("GET", "/v1/ids/{id}/decode"),
                                good("POST", "/v1/ids")};
    char text[256];

    (void)state;
    rows[2].role = AUTH_NONE;
    rows[2].is_store = ROUTE_ON_LEASE;
    assert_int_equal(check(rows, 3, text, sizeof(text)), 0);
}

static void test_route_table__malformed_paths_are_refused(void **state)
{
    (void)state;
    refused_alone(good("GET", "v1/ids"), "does not start with '/'");
    refused_alone(good("GET", NULL), "does not start with '/'");
    refused_alone(good("GET", "/v1//ids"), "has an empty segment");
    refused_alone(good("GET", "/v1/ids/"), "has an empty segment");
    refused_alone(good("GET", "/"), "has an empty segment");
    refused_alone(good("GET", "/a/b/c/d/e/f/g"), "more segments than ROUTE_SEGMENTS_MAX");
    refused_alone(good("GET", "/v1/{ns}/{id}"), "more than one {name} segment");
    refused_alone(good("GET", "/v1/x{id}"), "neither a literal nor a whole {name}");
    refused_alone(good("GET", "/v1/{}"), "neither a literal nor a whole {name}");
    refused_alone(good("GET", "/v1/a b"), "neither a literal nor a whole {name}");
}

static void test_route_table__six_segments_are_the_most_a_path_may_have(void **state)
{
    struct route_row row = good("GET", "/a/b/c/d/e/{f}");
    char text[256];

    (void)state;
    assert_int_equal(check(&row, 1, text, sizeof(text)), 0);
}

static void test_route_table__bad_methods_roles_handlers_and_lanes_are_refused(void **state)
{
    struct route_row row;

    (void)state;
    refused_alone(good("get", "/v1/ids"), "the method is not 1..16 upper-case letters");
    refused_alone(good("", "/v1/ids"), "the method is not 1..16 upper-case letters");
    refused_alone(good(NULL, "/v1/ids"), "the method is not 1..16 upper-case letters");
    refused_alone(good("ABCDEFGHIJKLMNOPQ", "/v1/ids"), "the method is not 1..16");
    row = good("GET", "/v1/ids");
    row.role = (enum auth_role)4;
    refused_alone(row, "the role is not AUTH_NONE..AUTH_ADMIN");
    row = good("GET", "/v1/ids");
    row.handler = NULL;
    refused_alone(row, "has no handler");
    row = good("GET", "/v1/ids");
    row.is_store = 3;
    refused_alone(row, "is_store is not an enum route_runs_on");
    row.is_store = -1;
    refused_alone(row, "is_store is not an enum route_runs_on");
}

static void test_route_table__labels_prometheus_would_escape_are_refused(void **state)
{
    struct route_row row = good("GET", "/v1/ids");

    (void)state;
    row.label = "other"; /* the label of unmatched requests */
    refused_alone(row, "the label is empty, \"other\"");
    row.label = "";
    refused_alone(row, "the label is empty");
    row.label = NULL;
    refused_alone(row, "the label is empty");
    row.label = "/v1/\"ids\"";
    refused_alone(row, "Prometheus would need escaped");
    row.label = "/v1\\ids";
    refused_alone(row, "Prometheus would need escaped");
    row.label = "/v1/ids\n";
    refused_alone(row, "Prometheus would need escaped");
}

static void test_route_table__bad_or_repeated_parameter_and_field_names_are_refused(void **state)
{
    static const char *const upper[] = {"namespace", "Count", NULL};
    static const char *const empty[] = {"", NULL};
    static const char *const dash[] = {"max-count", NULL};
    static const char *const twice[] = {"id", "note", "id", NULL};
    struct route_row row = good("POST", "/v1/collisions");

    (void)state;
    row.params = upper;
    refused_alone(row, "lists a name that is empty or not [a-z0-9_]");
    row.params = empty;
    refused_alone(row, "lists a name that is empty or not [a-z0-9_]");
    row.params = NULL;
    row.fields = dash;
    refused_alone(row, "lists a name that is empty or not [a-z0-9_]");
    row.fields = twice;
    refused_alone(row, "lists a name twice");
}

static void test_route_table__rows_one_path_could_match_are_refused(void **state)
{
    struct route_row rows[2] = {good("GET", "/v1/ids/{id}"), good("GET", "/v1/ids/decode")};
    char text[2048];

    (void)state;
    assert_int_equal(check(rows, 2, text, sizeof(text)), 1);
    assert_non_null(strstr(text, "route_table row 1 (GET /v1/ids/decode): a path could match "
                                 "both this and row 0 (/v1/ids/{id})"));
    rows[1].path = "/v1/ids/{other}";
    assert_int_equal(check(rows, 2, text, sizeof(text)), 1);
    /* Another method, another literal or another length is another route. */
    rows[1].method = "POST";
    assert_int_equal(check(rows, 2, text, sizeof(text)), 0);
    rows[1] = good("GET", "/v2/ids/{id}");
    assert_int_equal(check(rows, 2, text, sizeof(text)), 0);
    rows[1] = good("GET", "/v1/ids/{id}/decode");
    assert_int_equal(check(rows, 2, text, sizeof(text)), 0);
}

static void test_route_table__every_problem_of_a_row_is_counted(void **state)
{
    struct route_row rows[2] = {good("GET", "/v1/ids"), good("get", "v1")};
    char text[2048];

    (void)state;
    rows[1].handler = NULL;
    rows[1].label = "other";
    assert_int_equal(check(rows, 2, text, sizeof(text)), 4);
    assert_null(strstr(text, "row 0"));
}

static void test_route_table__more_rows_than_the_metrics_keep_are_refused(void **state)
{
    struct route_row rows[ROUTE_ROWS_MAX + 1];
    char text[256], path[32];
    static char paths[ROUTE_ROWS_MAX + 1][32];
    size_t i;

    (void)state;
    for (i = 0; i <= ROUTE_ROWS_MAX; i++) {
        snprintf(path, sizeof(path), "/r%zu", i);
        memcpy(paths[i], path, sizeof(path));
        rows[i] = good("GET", paths[i]);
    }
    assert_int_equal(check(rows, ROUTE_ROWS_MAX, text, sizeof(text)), 0);
    assert_true(check(rows, ROUTE_ROWS_MAX + 1, text, sizeof(text)) > 0);
    assert_non_null(strstr(text, "ROUTE_ROWS_MAX"));
}

static void test_route_table__the_listing_is_one_json_object_per_row(void **state)
{
    FILE *tmp = tmpfile();
    char line[4096], err[256];
    size_t n = 0;

    (void)state;
    assert_non_null(tmp);
    assert_int_equal(route_table_list(tmp), 0);
    rewind(tmp);
    while (fgets(line, sizeof(line), tmp) != NULL) {
        const struct route_row *row = &route_table[n];
        struct json *o = json_parse_object(line, strlen(line), err, sizeof(err));
        const char *method = NULL, *path = NULL, *role = NULL, *label = NULL;

        assert_true(n < route_table_len);
        if (o == NULL)
            fail_msg("line %zu is not a JSON object: %s", n, err);
        assert_int_equal(json_get_str(o, "method", &method), 1);
        assert_int_equal(json_get_str(o, "path", &path), 1);
        assert_int_equal(json_get_str(o, "role", &role), 1);
        assert_int_equal(json_get_str(o, "label", &label), 1);
        assert_string_equal(method, row->method);
        assert_string_equal(path, row->path);
        assert_string_equal(role, auth_role_name(row->role));
        assert_string_equal(label, row->label);
        /* Arrays, not strings: a string getter says "another type". */
        assert_int_equal(json_get_str(o, "params", &method), -1);
        assert_int_equal(json_get_str(o, "fields", &method), -1);
        assert_null(json_unknown_key(
            o, (const char *const[]){"method", "path", "role", "label", "params", "fields", NULL}));
        json_free(o);
        n++;
    }
    assert_int_equal(n, route_table_len);
    fclose(tmp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_route_table__the_daemons_table_is_sound),
        cmocka_unit_test(test_route_table__a_sound_row_passes),
        cmocka_unit_test(test_route_table__malformed_paths_are_refused),
        cmocka_unit_test(test_route_table__six_segments_are_the_most_a_path_may_have),
        cmocka_unit_test(test_route_table__bad_methods_roles_handlers_and_lanes_are_refused),
        cmocka_unit_test(test_route_table__labels_prometheus_would_escape_are_refused),
        cmocka_unit_test(test_route_table__bad_or_repeated_parameter_and_field_names_are_refused),
        cmocka_unit_test(test_route_table__rows_one_path_could_match_are_refused),
        cmocka_unit_test(test_route_table__every_problem_of_a_row_is_counted),
        cmocka_unit_test(test_route_table__more_rows_than_the_metrics_keep_are_refused),
        cmocka_unit_test(test_route_table__the_listing_is_one_json_object_per_row),
    };
    return cmocka_run_group_tests_name("route_table", tests, NULL, NULL);
}
