/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for cmd/idmintd/prometheus.c: /metrics is valid Prometheus
 * text (a family is declared once, with HELP before TYPE, before its
 * samples; every value is a number); request counts are summed over threads
 * and over the rows that share a label; histograms are cumulative and end
 * at their count; per-namespace families follow the namespace's kind; the
 * store pool's and the rate limits' figures are the daemon's own.
 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "daemon_fixture.h"
#include "prometheus.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *render(struct td_daemon *t)
{
    size_t len = 0;
    char *text = prometheus_render(&t->d, &len);

    assert_non_null(text);
    assert_int_equal(strlen(text), len);
    return text;
}

/* The value of the sample named exactly @p series ("name{labels}"); NAN when absent. */
static double value_of(const char *text, const char *series)
{
    size_t n = strlen(series);
    const char *p = text;

    while (p != NULL && *p != '\0') {
        if (strncmp(p, series, n) == 0 && p[n] == ' ')
            return strcmp(p + n + 1, "+Inf") == 0 || strncmp(p + n + 1, "+Inf\n", 5) == 0
                       ? INFINITY
                       : strtod(p + n + 1, NULL);
        p = strchr(p, '\n');
        if (p != NULL)
            p++;
    }
    return NAN;
}

/* 1 when value_of found no such sample. */
static int is_absent(double v)
{
    return v != v;
}

/* Lines that start with @p prefix. */
static unsigned lines_starting(const char *text, const char *prefix)
{
    size_t n = strlen(prefix);
    const char *p = text;
    unsigned count = 0;

    while (p != NULL && *p != '\0') {
        count += strncmp(p, prefix, n) == 0;
        p = strchr(p, '\n');
        if (p != NULL)
            p++;
    }
    return count;
}

/* A histogram's sample belongs to the family without its suffix. */
static void family_of(const char *name, const char *declared_types, char *out, size_t size)
{
    static const char *suffix[] = {"_bucket", "_sum", "_count"};
    size_t n = strlen(name), i;

    snprintf(out, size, "%s", name);
    for (i = 0; i < 3; i++) {
        size_t k = strlen(suffix[i]);
        char probe[256];

        if (n > k && strcmp(name + n - k, suffix[i]) == 0) {
            snprintf(probe, sizeof(probe), "\n%.*s histogram\n", (int)(n - k), name);
            if (strstr(declared_types, probe) != NULL)
                snprintf(out, size, "%.*s", (int)(n - k), name);
        }
    }
}

static void test_prometheus__the_text_is_valid_exposition(void **state)
{
    struct td_daemon *t = *state;
    char *text = render(t), *copy, *line, *save = NULL;
    char declared[16384] = "\n", helped[16384] = "\n";
    unsigned samples = 0;

    assert_non_null(copy = strdup(text));
    assert_int_equal(text[strlen(text) - 1], '\n');
    for (line = strtok_r(copy, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
        char name[256], family[256], probe[300], *end;
        const char *value;
        size_t n;

        if (strncmp(line, "# HELP ", 7) == 0) {
            n = strcspn(line + 7, " ");
            snprintf(probe, sizeof(probe), "\n%.*s\n", (int)n, line + 7);
            assert_null(strstr(helped, probe)); /* one HELP per family */
            assert_true(strlen(helped) + n + 2 < sizeof(helped));
            strncat(helped, line + 7, n);
            strcat(helped, "\n");
            continue;
        }
        if (strncmp(line, "# TYPE ", 7) == 0) {
            char type[32];

            n = strcspn(line + 7, " ");
            snprintf(probe, sizeof(probe), "\n%.*s\n", (int)n, line + 7);
            assert_non_null(strstr(helped, probe)); /* HELP came first */
            snprintf(probe, sizeof(probe), "\n%.*s ", (int)n, line + 7);
            assert_null(strstr(declared, probe)); /* one TYPE per family */
            snprintf(type, sizeof(type), "%s", line + 7 + n + 1);
            assert_true(strcmp(type, "counter") == 0 || strcmp(type, "gauge") == 0 ||
                        strcmp(type, "histogram") == 0);
            assert_true(strlen(declared) + strlen(line + 7) + 2 < sizeof(declared));
            strcat(declared, line + 7);
            strcat(declared, "\n");
            continue;
        }
        assert_int_not_equal(line[0], '#');
        n = strcspn(line, "{ ");
        assert_true(n > 0 && n < sizeof(name));
        snprintf(name, sizeof(name), "%.*s", (int)n, line);
        family_of(name, declared, family, sizeof(family));
        snprintf(probe, sizeof(probe), "\n%s ", family);
        assert_non_null(strstr(declared, probe)); /* declared before its samples */
        if (line[n] == '{') {
            const char *close = strchr(line + n, '}');

            assert_non_null(close);
            value = close + 1;
        } else {
            value = line + n;
        }
        assert_int_equal(*value, ' ');
        value++;
        if (strcmp(value, "+Inf") != 0) {
            (void)strtod(value, &end);
            assert_true(end != value && *end == '\0');
        }
        samples++;
    }
    assert_true(samples > 20);
    free(copy);
    free(text);
}

static size_t column_of(int status)
{
    size_t i;

    for (i = 0; i < METRICS_CODES - 1; i++)
        if (metrics_codes[i] == status)
            return i;
    return METRICS_CODES - 1;
}

static void test_prometheus__requests_are_summed_over_threads_and_shared_labels(void **state)
{
    struct td_daemon *t = *state;
    const struct route_row *a = NULL, *b = NULL;
    char series[256], *text;
    size_t i, j;

    /* Two rows with one label (GET and POST /v1/namespaces). */
    for (i = 0; i < route_table_len && a == NULL; i++)
        for (j = i + 1; j < route_table_len; j++)
            if (strcmp(route_table[i].label, route_table[j].label) == 0) {
                a = &route_table[i];
                b = &route_table[j];
                break;
            }
    assert_non_null(a);
    assert_int_equal(column_of(418), METRICS_CODES - 1);
    metrics_count_request(&t->d.threads[0].metrics, a, 200, 1000);
    metrics_count_request(&t->d.threads[0].metrics, a, 200, 1000);
    metrics_count_request(&t->d.threads[1].metrics, b, 200, 1000);
    metrics_count_request(&t->d.threads[2].metrics, b, 404, 1000);
    metrics_count_request(&t->d.threads[1].metrics, a, 418, 1000);
    metrics_count_request(&t->d.threads[0].metrics, NULL, 404, 1000);
    text = render(t);
    snprintf(series, sizeof(series), "idmint_http_requests_total{route=\"%s\",code=\"200\"}",
             a->label);
    assert_true(value_of(text, series) == 3.0);
    assert_int_equal(lines_starting(text, series), 1);
    snprintf(series, sizeof(series), "idmint_http_requests_total{route=\"%s\",code=\"404\"}",
             a->label);
    assert_true(value_of(text, series) == 1.0);
    snprintf(series, sizeof(series), "idmint_http_requests_total{route=\"%s\",code=\"other\"}",
             a->label);
    assert_true(value_of(text, series) == 1.0);
    assert_true(value_of(text, "idmint_http_requests_total{route=\"other\",code=\"404\"}") == 1.0);
    /* A count of 0 is left out. */
    assert_true(
        is_absent(value_of(text, "idmint_http_requests_total{route=\"other\",code=\"200\"}")));
    free(text);
}

static void test_prometheus__histograms_are_cumulative_and_end_at_their_count(void **state)
{
    struct td_daemon *t = *state;
    const uint64_t durations_ns[] = {1000, 2000, 3000000, 40000000, 900000000, 60000000000ull};
    double last = 0, inf, sum_s = 0;
    char series[256], *text;
    size_t i;

    for (i = 0; i < sizeof(durations_ns) / sizeof(durations_ns[0]); i++) {
        metrics_count_request(&t->d.threads[i % 2].metrics, NULL, 200, durations_ns[i]);
        sum_s += (double)durations_ns[i] / 1e9;
    }
    text = render(t);
    for (i = 0; i < METRICS_BUCKETS - 1; i++) {
        double v;

        snprintf(series, sizeof(series), "idmint_http_request_duration_seconds_bucket{le=\"%g\"}",
                 metrics_bounds_s[i]);
        v = value_of(text, series);
        assert_false(is_absent(v));
        assert_true(v >= last);
        last = v;
    }
    inf = value_of(text, "idmint_http_request_duration_seconds_bucket{le=\"+Inf\"}");
    assert_true(inf == 6.0);
    assert_true(last < inf); /* 60 s is past every bound */
    assert_true(value_of(text, "idmint_http_request_duration_seconds_count") == 6.0);
    assert_true(fabs(value_of(text, "idmint_http_request_duration_seconds_sum") - sum_s) < 1e-6);
    free(text);
}

static void test_prometheus__namespace_families_follow_the_kind(void **state)
{
    struct td_daemon *t = *state;
    struct ns_handle *snow = handles_find(&t->d.handles, "snow");
    struct ns_handle *rng = handles_find(&t->d.handles, "rng");
    char *text;
    double left;

    assert_non_null(snow);
    assert_non_null(rng);
    metrics_add(&t->d.threads[0].metrics.ids_issued[snow->slot], 7);
    metrics_add(&t->d.threads[1].metrics.ids_issued[snow->slot], 5);
    metrics_add(&t->d.threads[1].metrics.ids_issued[rng->slot], 2);
    text = render(t);
    assert_true(value_of(text, "idmint_ids_issued_total{namespace=\"snow\"}") == 12.0);
    assert_true(value_of(text, "idmint_ids_issued_total{namespace=\"rng\"}") == 2.0);
    left = value_of(text, "idmint_lease_seconds_left{namespace=\"snow\"}");
    assert_true(left > 0 && left <= 60.0);
    assert_true(value_of(text, "idmint_time_bits_seconds_left{namespace=\"snow\"}") > 86400.0);
    assert_true(is_absent(value_of(text, "idmint_lease_seconds_left{namespace=\"rng\"}")));
    assert_true(is_absent(value_of(text, "idmint_time_bits_seconds_left{namespace=\"rng\"}")));
    assert_true(value_of(text, "idmint_range_ids_left{namespace=\"rng\"}") > 0);
    assert_true(is_absent(value_of(text, "idmint_range_ids_left{namespace=\"snow\"}")));
    assert_true(is_absent(value_of(text, "idmint_range_block{namespace=\"snow\"}")));
    /* No sampler pass yet: no workers_free figure rather than a made-up one. */
    assert_true(is_absent(value_of(text, "idmint_workers_free{namespace=\"snow\"}")));
    free(text);
}

static void test_prometheus__pool_and_limit_figures_are_the_daemons(void **state)
{
    struct td_daemon *t = *state;
    char *text;

    ratelimit_count(&t->d.limits, 1, AUTH_MINT);
    ratelimit_count(&t->d.limits, 1, AUTH_MINT);
    ratelimit_count(&t->d.limits, 0, AUTH_ADMIN);
    text = render(t);
    /* Every store thread, the lease threads among them. */
    assert_true(value_of(text, "idmint_store_pool_threads") ==
                (double)(t->d.cfg.store_threads + t->d.cfg.store_lease_threads));
    assert_true(value_of(text, "idmint_store_pool_lease_threads") == 1.0);
    assert_true(value_of(text, "idmint_store_pool_queue_max") == (double)t->d.cfg.store_queue);
    assert_true(value_of(text, "idmint_http_rate_limited_total{by=\"address\",role=\"mint\"}") ==
                2.0);
    assert_true(value_of(text, "idmint_http_rate_limited_total{by=\"token\",role=\"admin\"}") ==
                1.0);
    assert_true(value_of(text, "idmint_http_rate_limited_total{by=\"token\",role=\"mint\"}") ==
                0.0);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_prometheus__the_text_is_valid_exposition, td_setup,
                                        td_teardown),
        cmocka_unit_test_setup_teardown(
            test_prometheus__requests_are_summed_over_threads_and_shared_labels, td_setup,
            td_teardown),
        cmocka_unit_test_setup_teardown(
            test_prometheus__histograms_are_cumulative_and_end_at_their_count, td_setup,
            td_teardown),
        cmocka_unit_test_setup_teardown(test_prometheus__namespace_families_follow_the_kind,
                                        td_setup, td_teardown),
        cmocka_unit_test_setup_teardown(test_prometheus__pool_and_limit_figures_are_the_daemons,
                                        td_setup, td_teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
