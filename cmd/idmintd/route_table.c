/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The route table (route_table.h), its self-check and its listing. Adding a
 * route is one row here plus its handler in a routes_*.c file (declared in
 * route_table.h); the dispatcher, the metrics and the role test follow.
 */
#include "route_table.h"

#include "json.h"

#include <stdlib.h>
#include <string.h>

/*
 * What each route reads besides its path, in one place: the dispatcher
 * refuses any other query parameter or body field (400 invalid_argument,
 * naming it) before the handler runs, so nothing a client sends is
 * silently ignored. A handler that reads a new name needs it added here.
 */
static const char *const q_mint[] = {"namespace", "count", NULL};
static const char *const q_ns[] = {"namespace", NULL};
static const char *const q_page[] = {"after", "limit", NULL};
static const char *const q_window[] = {"from", "to", NULL};
static const char *const f_collision[] = {"namespace", "id", "observed_ms", "note", NULL};
static const char *const f_workers[] = {
    "op",         "namespace",   "region",       "holder", "worker_id", "generation", "lease_ms",
    "final_time", "fence_found", "max_ahead_ms", "host",   "pid",       "program",    NULL};
static const char *const f_ranges[] = {"namespace", "incarnation", "request_id", "count",
                                       "host",      "pid",         "program",    NULL};
static const char *const f_forget[] = {"namespace", "incarnation", "before_request_id", NULL};
static const char *const q_history[] = {"seq", NULL};
static const char *const f_ns[] = {"name",  "kind", "layout", "unit_ms",   "epoch",
                                   "start", "max",  "block",  "max_block", NULL};

/*
 * The label of a route is its path pattern, as /metrics showed it before
 * this table existed; dashboards and tests read these names, so a label is
 * never renamed. GET before POST on one path: the 405 Allow text lists the
 * methods in table order ("GET, POST"). The 1 after the label marks a route
 * that calls the store: it runs on a store thread, never on an event loop
 * (GET /v1/ids decides per request: routes_ids.c). Then the query
 * parameters and the body fields it accepts.
 */
const struct route_row route_table[] = {
    {"GET", "/v1/ids", AUTH_MINT, routes_ids_get, "/v1/ids", 0, q_mint, NULL},
    {"GET", "/v1/ids/{id}/decode", AUTH_MINT, routes_ids_decode, "/v1/ids/{id}/decode", 1, q_ns,
     NULL},
    {"GET", "/v1/ids/{id}/trace", AUTH_MINT, routes_ids_trace, "/v1/ids/{id}/trace", 1, q_ns, NULL},
    {"GET", "/v1/collisions", AUTH_ADMIN, routes_collisions_list, "/v1/collisions", 1, q_page,
     NULL},
    {"POST", "/v1/collisions", AUTH_MINT, routes_collisions_report, "/v1/collisions", 1, NULL,
     f_collision},
    {"POST", "/internal/workers/lease", AUTH_GENERATOR, routes_internal_workers,
     "/internal/workers/lease", ROUTE_ON_LEASE, NULL, f_workers},
    {"POST", "/internal/ranges/lease", AUTH_GENERATOR, routes_internal_ranges,
     "/internal/ranges/lease", ROUTE_ON_LEASE, NULL, f_ranges},
    {"POST", "/internal/ranges/forget", AUTH_GENERATOR, routes_internal_ranges_forget,
     "/internal/ranges/forget", 1, NULL, f_forget},
    {"GET", "/internal/history", AUTH_GENERATOR, routes_internal_history, "/internal/history", 1,
     q_history, NULL},
    {"GET", "/v1/namespaces", AUTH_MINT, routes_ns_list, "/v1/namespaces", 1, NULL, NULL},
    {"POST", "/v1/namespaces", AUTH_ADMIN, routes_ns_create, "/v1/namespaces", 1, NULL, f_ns},
    {"GET", "/v1/namespaces/{ns}", AUTH_MINT, routes_ns_get, "/v1/namespaces/{ns}", 1, NULL, NULL},
    {"POST", "/v1/namespaces/{ns}/disable", AUTH_ADMIN, routes_ns_disable,
     "/v1/namespaces/{ns}/disable", 1, NULL, NULL},
    {"POST", "/v1/namespaces/{ns}/enable", AUTH_ADMIN, routes_ns_enable,
     "/v1/namespaces/{ns}/enable", 1, NULL, NULL},
    {"POST", "/v1/namespaces/{ns}/migrate", AUTH_ADMIN, routes_ns_migrate,
     "/v1/namespaces/{ns}/migrate", 1, NULL, f_ns},
    {"GET", "/v1/namespaces/{ns}/workers", AUTH_MINT, routes_ns_workers,
     "/v1/namespaces/{ns}/workers", 1, NULL, NULL},
    {"GET", "/v1/namespaces/{ns}/bounds", AUTH_MINT, routes_ns_bounds, "/v1/namespaces/{ns}/bounds",
     1, q_window, NULL},
    {"GET", "/v1/audit", AUTH_ADMIN, routes_audit, "/v1/audit", 1, q_page, NULL},
    {"GET", "/v1/status", AUTH_MINT, routes_status_json, "/v1/status", 0, NULL, NULL},
    {"GET", "/status", AUTH_MINT, routes_status_page, "/status", 0, NULL, NULL},
    {"GET", "/metrics", AUTH_NONE, routes_metrics, "/metrics", 0, NULL, NULL},
    {"GET", "/healthz", AUTH_NONE, routes_healthz, "/healthz", 0, NULL, NULL},
    {"GET", "/readyz", AUTH_NONE, routes_readyz, "/readyz", 0, NULL, NULL},
    {"GET", "/v1/openapi.json", AUTH_NONE, routes_openapi, "/v1/openapi.json", 0, NULL, NULL},
};

#define ROWS (sizeof(route_table) / sizeof(route_table[0]))

_Static_assert(ROWS <= ROUTE_ROWS_MAX, "route_table has more rows than ROUTE_ROWS_MAX");

const size_t route_table_len = ROWS;

/* ==== self-check ==== */

struct pattern {
    const char *seg[ROUTE_SEGMENTS_MAX];
    size_t len[ROUTE_SEGMENTS_MAX];
    size_t n;
};

static int is_capture(const char *seg, size_t len)
{
    return len >= 3 && seg[0] == '{' && seg[len - 1] == '}';
}

/* Split @p path into *p. NULL, or what is wrong with it. */
static const char *pattern_split(const char *path, struct pattern *p)
{
    size_t i = 0, captures = 0;

    p->n = 0;
    if (path == NULL || path[0] != '/')
        return "does not start with '/'";
    while (path[i] == '/') {
        size_t start = ++i, k;

        while (path[i] != '\0' && path[i] != '/')
            i++;
        if (i == start)
            return "has an empty segment";
        if (p->n == ROUTE_SEGMENTS_MAX)
            return "has more segments than ROUTE_SEGMENTS_MAX";
        p->seg[p->n] = path + start;
        p->len[p->n] = i - start;
        if (is_capture(p->seg[p->n], p->len[p->n])) {
            captures++;
        } else {
            for (k = start; k < i; k++)
                if (path[k] == '{' || path[k] == '}' || (unsigned char)path[k] <= ' ' ||
                    (unsigned char)path[k] >= 0x7f)
                    return "has a segment that is neither a literal nor a whole {name}";
        }
        p->n++;
    }
    if (captures > 1)
        return "has more than one {name} segment (struct route_match holds one)";
    return NULL;
}

/* 1 when some path would match both @p a and @p b. */
static int patterns_overlap(const struct pattern *a, const struct pattern *b)
{
    size_t k;

    if (a->n != b->n)
        return 0;
    for (k = 0; k < a->n; k++) {
        if (is_capture(a->seg[k], a->len[k]) || is_capture(b->seg[k], b->len[k]))
            continue;
        if (a->len[k] != b->len[k] || memcmp(a->seg[k], b->seg[k], a->len[k]) != 0)
            return 0;
    }
    return 1;
}

static int method_ok(const char *m)
{
    size_t i;

    if (m == NULL || m[0] == '\0' || strlen(m) > 16)
        return 0;
    for (i = 0; m[i] != '\0'; i++)
        if (m[i] < 'A' || m[i] > 'Z')
            return 0;
    return 1;
}

/* A Prometheus label value we print unescaped. */
static int label_ok(const char *label)
{
    size_t i;

    if (label == NULL || label[0] == '\0' || strcmp(label, "other") == 0)
        return 0;
    for (i = 0; label[i] != '\0'; i++) {
        unsigned char c = (unsigned char)label[i];

        if (c < ' ' || c >= 0x7f || c == '"' || c == '\\')
            return 0;
    }
    return 1;
}

/* NULL when @p names is NULL or each entry is a non-empty [a-z0-9_] name listed once. */
static const char *names_problem(const char *const *names)
{
    size_t i, j;

    for (i = 0; names != NULL && names[i] != NULL; i++) {
        if (names[i][0] == '\0' ||
            strspn(names[i], "abcdefghijklmnopqrstuvwxyz0123456789_") != strlen(names[i]))
            return "lists a name that is empty or not [a-z0-9_]";
        for (j = 0; j < i; j++)
            if (strcmp(names[i], names[j]) == 0)
                return "lists a name twice";
    }
    return NULL;
}

static int report(const struct route_row *rows, size_t i, const char *what)
{
    const struct route_row *row = &rows[i];

    fprintf(stderr, "idmintd: route_table row %zu (%s %s): %s\n", i,
            row->method != NULL ? row->method : "?", row->path != NULL ? row->path : "?", what);
    return 1;
}

int route_table_check_rows(const struct route_row *rows, size_t n)
{
    struct pattern p[ROUTE_ROWS_MAX];
    size_t i, j;
    int bad = 0;

    if (n > ROUTE_ROWS_MAX) {
        fprintf(stderr, "idmintd: route_table has %zu rows, more than ROUTE_ROWS_MAX\n", n);
        return 1;
    }
    for (i = 0; i < n; i++) {
        const struct route_row *row = &rows[i];
        const char *why = pattern_split(row->path, &p[i]);

        if (why != NULL)
            bad += report(rows, i, why);
        if (!method_ok(row->method))
            bad += report(rows, i, "the method is not 1..16 upper-case letters");
        if ((int)row->role < (int)AUTH_NONE || (int)row->role > (int)AUTH_ADMIN)
            bad += report(rows, i, "the role is not AUTH_NONE..AUTH_ADMIN");
        if (row->handler == NULL)
            bad += report(rows, i, "has no handler");
        if (row->is_store < ROUTE_ON_LOOP || row->is_store > ROUTE_ON_LEASE)
            bad += report(rows, i, "is_store is not an enum route_runs_on");
        if (!label_ok(row->label))
            bad += report(rows, i,
                          "the label is empty, \"other\", or has a character Prometheus "
                          "would need escaped");
        if (names_problem(row->params) != NULL)
            bad += report(rows, i, names_problem(row->params));
        if (names_problem(row->fields) != NULL)
            bad += report(rows, i, names_problem(row->fields));
        for (j = 0; j < i && why == NULL; j++) {
            const struct route_row *prev = &rows[j];

            if (prev->method != NULL && row->method != NULL &&
                strcmp(prev->method, row->method) == 0 && patterns_overlap(&p[j], &p[i])) {
                char text[300];

                snprintf(text, sizeof(text), "a path could match both this and row %zu (%s)", j,
                         prev->path);
                bad += report(rows, i, text);
            }
        }
    }
    return bad;
}

int route_table_check(void)
{
    return route_table_check_rows(route_table, ROWS);
}

/* ==== listing ==== */

/* @p names (NULL: none) as a JSON array of strings. */
static struct json *names_json(const char *const *names)
{
    struct json *arr = json_new_array();
    size_t i;

    for (i = 0; names != NULL && names[i] != NULL; i++)
        json_push(arr, json_new_str(names[i]));
    return arr;
}

int route_table_list(FILE *out)
{
    size_t i;

    for (i = 0; i < ROWS; i++) {
        const struct route_row *row = &route_table[i];
        struct json *o = json_new_object();
        size_t len = 0;
        char *text;

        json_set_str(o, "method", row->method);
        json_set_str(o, "path", row->path);
        json_set_str(o, "role", auth_role_name(row->role));
        json_set_str(o, "label", row->label);
        json_set(o, "params", names_json(row->params));
        json_set(o, "fields", names_json(row->fields));
        text = json_dump(o, &len);
        json_free(o);
        if (text == NULL)
            return -1;
        if (fwrite(text, 1, len, out) != len || fputc('\n', out) == EOF) {
            free(text);
            return -1;
        }
        free(text);
    }
    return fflush(out) == 0 ? 0 : -1;
}
