/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Namespace administration and inspection: GET/POST /v1/namespaces,
 * GET /v1/namespaces/{ns}, POST …/disable and …/enable, GET …/workers and
 * GET /v1/audit. Each runs on the calling thread's own authority.
 */
#include "daemon.h"
#include "clocks.h"

#include "idmint_service.h"
#include "json.h"
#include "reply.h"
#include "routes_authority.h"
#include "route_table.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define AUDIT_LIMIT_MAX     1000
#define AUDIT_LIMIT_DEFAULT 100

static struct json *ns_json(const idmint_ns_info *ns)
{
    struct json *o = json_new_object();
    char when[32], layout[32];
    int64_t end_ms;

    json_set_str(o, "name", ns->name);
    json_set_str(o, "kind", ns->kind == IDMINT_KIND_RANGE ? "range" : "snowflake");
    json_set_bool(o, "disabled", ns->is_disabled != 0);
    json_set_int(o, "created_ms", ns->created_ms);
    routes_iso_or_empty(ns->created_ms, when, sizeof(when));
    json_set_str(o, "created", when);
    if (ns->origin[0] != '\0')
        json_set_str(o, "migrated_from", ns->origin);
    if (ns->floor != 0)
        json_set_u64_str(o, "floor", ns->floor);
    if (ns->kind == IDMINT_KIND_RANGE) {
        json_set_u64_str(o, "next_value", ns->next_value);
        json_set_u64_str(o, "max_value", ns->max_value);
        json_set_int(o, "block", ns->block);
        json_set_int(o, "max_block", ns->max_block);
        return o;
    }
    snprintf(layout, sizeof(layout), "%u/%u/%u/%u", ns->layout.time_bits, ns->layout.region_bits,
             ns->layout.worker_bits, ns->layout.sequence_bits);
    json_set_str(o, "layout", layout);
    json_set_int(o, "unit_ms", ns->layout.unit_ms);
    routes_iso_or_empty(ns->layout.epoch_ms, when, sizeof(when));
    json_set_str(o, "epoch", when);
    json_set_int(o, "epoch_ms", ns->layout.epoch_ms);
    if (idmint_layout_end_ms(&ns->layout, &end_ms) == 0) {
        routes_iso_or_empty(end_ms, when, sizeof(when));
        json_set_str(o, "time_runs_out", when);
    }
    return o;
}

void routes_ns_list(struct http_req *r, struct daemon_thread *w, const struct route_match *m)
{
    idmint_authority *a = routes_authority_or_fail(r, w);
    idmint_ns_info *list = NULL;
    struct json *o, *arr;
    size_t n = 0, i;
    uint64_t t0;
    int rc;

    (void)m;
    if (a == NULL)
        return;
    t0 = clocks_mono_ns();
    rc = idmint_ns_list(a, &list, &n);
    routes_store_done(w, t0);
    if (rc != 0) {
        routes_fail(r, rc, NULL);
        return;
    }
    o = json_new_object();
    arr = json_new_array();
    for (i = 0; i < n; i++)
        json_push(arr, ns_json(idmint_ns_info_at(list, i)));
    idmint_free(list);
    json_set(o, "namespaces", arr);
    routes_json_tree(r, 200, o);
}

static void reply_ns(struct http_req *r, struct daemon_thread *w, idmint_authority *a,
                     const char *name, int status)
{
    idmint_ns_info info;
    uint64_t t0;
    int rc;

    idmint_ns_info_init(&info, 0);
    t0 = clocks_mono_ns();
    rc = idmint_ns_get(a, name, &info);

    routes_store_done(w, t0);
    if (rc != 0) {
        routes_fail(r, rc, NULL);
        return;
    }
    routes_json_tree(r, status, ns_json(&info));
}

/* The thread's authority for a route on namespace @p ns; NULL once a 4xx/5xx is sent. */
static idmint_authority *ns_authority_or_fail(struct http_req *r, struct daemon_thread *w,
                                              const char *ns)
{
    if (idmint__ns_name_check(ns) != 0) {
        routes_fail(r, IDMINT_EINVAL, NULL);
        return NULL;
    }
    return routes_authority_or_fail(r, w);
}

void routes_ns_get(struct http_req *r, struct daemon_thread *w, const struct route_match *m)
{
    const char *ns = m->segment;
    idmint_authority *a;

    if ((a = ns_authority_or_fail(r, w, ns)) != NULL)
        reply_ns(r, w, a, ns, 200);
}

/* A 64-bit value given as a decimal string or a JSON integer. 1, 0 absent, -1 bad. */
static int get_u64(const struct json *body, const char *key, uint64_t *out)
{
    const char *s;
    int q = json_get_str(body, key, &s);

    if (q > 0) {
        size_t len = strlen(s), i;
        uint64_t x = 0;

        if (len == 0 || len > 19 || strspn(s, "0123456789") != len)
            return -1;
        for (i = 0; i < len; i++)
            x = x * 10 + (uint64_t)(s[i] - '0');
        *out = x;
        return 1;
    }
    /* 64-bit values travel as decimal strings (a JSON number loses
     * precision past 2^53): a number here is a client mistake. */
    return q == 0 ? 0 : -1;
}

static int bad_field(char *err, size_t err_size, const char *field, const char *what)
{
    snprintf(err, err_size, "field '%s' %s", field, what);
    return -1;
}

/*
 * Fill @p info from the body of POST /v1/namespaces; *has_start says whether
 * it named a start (a start of "1" is not the default of no start). Fields
 * it does not read are the dispatcher's to refuse (route_table.c). 0, or -1
 * with @p err set.
 */
static int ns_from_body(const struct json *body, idmint_ns_info *info, int *has_start, char *err,
                        size_t err_size)
{
    const char *name, *kind, *text;
    int64_t v;
    uint64_t u;
    int q;

    if (json_get_str(body, "name", &name) != 1)
        return bad_field(err, err_size, "name", "is required and must be a string");
    if (json_get_str(body, "kind", &kind) != 1)
        return bad_field(err, err_size, "kind", "is required: \"snowflake\" or \"range\"");
    if (strcmp(kind, "snowflake") == 0)
        idmint_ns_info_init(info, IDMINT_KIND_SNOWFLAKE);
    else if (strcmp(kind, "range") == 0)
        idmint_ns_info_init(info, IDMINT_KIND_RANGE);
    else
        return bad_field(err, err_size, "kind", "must be \"snowflake\" or \"range\"");
    if (strlen(name) >= sizeof(info->name) || idmint__ns_name_check(name) != 0)
        return bad_field(err, err_size, "name", "must match [a-z0-9][a-z0-9_.-]{0,62}");
    memcpy(info->name, name, strlen(name) + 1);

    if (info->kind == IDMINT_KIND_SNOWFLAKE) {
        static const char *const range_only[] = {"start", "max", "block", "max_block"};
        size_t i;

        for (i = 0; i < 4; i++)
            if (json_get_str(body, range_only[i], &text) != 0 ||
                json_get_int(body, range_only[i], &v) != 0)
                return bad_field(err, err_size, range_only[i], "is for range namespaces only");
        if ((q = json_get_str(body, "layout", &text)) < 0 ||
            (q > 0 && idmint_layout_parse(text, &info->layout) != 0))
            return bad_field(err, err_size, "layout", "must be \"T/R/W/S\", e.g. \"41/0/10/12\"");
        if ((q = json_get_int(body, "unit_ms", &v)) < 0 || (q > 0 && (v < 1 || v > 86400000)))
            return bad_field(err, err_size, "unit_ms", "must be a whole number from 1 to 86400000");
        if (q > 0)
            info->layout.unit_ms = (uint32_t)v;
        if ((q = json_get_str(body, "epoch", &text)) > 0) {
            if (idmint_epoch_parse(text, &info->layout.epoch_ms) != 0)
                return bad_field(err, err_size, "epoch", "must be an ISO-8601 date or Unix ms");
        } else if (q < 0) {
            if (json_get_int(body, "epoch", &v) != 1)
                return bad_field(err, err_size, "epoch", "must be an ISO-8601 date or Unix ms");
            info->layout.epoch_ms = v;
        }
        return 0;
    }
    {
        static const char *const snowflake_only[] = {"layout", "unit_ms", "epoch"};
        size_t i;

        for (i = 0; i < 3; i++)
            if (json_get_str(body, snowflake_only[i], &text) != 0 ||
                json_get_int(body, snowflake_only[i], &v) != 0)
                return bad_field(err, err_size, snowflake_only[i],
                                 "is for snowflake namespaces only");
    }
    if ((q = get_u64(body, "start", &u)) < 0)
        return bad_field(err, err_size, "start", "must be a decimal string");
    if (q > 0)
        info->next_value = u;
    *has_start = q > 0;
    if ((q = get_u64(body, "max", &u)) < 0)
        return bad_field(err, err_size, "max", "must be a decimal string");
    if (q > 0)
        info->max_value = u;
    if ((q = json_get_int(body, "block", &v)) < 0 || (q > 0 && (v < 1 || v > UINT32_MAX)))
        return bad_field(err, err_size, "block", "must be a positive whole number");
    if (q > 0)
        info->block = (uint32_t)v;
    if ((q = json_get_int(body, "max_block", &v)) < 0 || (q > 0 && (v < 1 || v > UINT32_MAX)))
        return bad_field(err, err_size, "max_block", "must be a positive whole number");
    if (q > 0)
        info->max_block = (uint32_t)v;
    return 0;
}

/* routes_parse_ns_body(), and whether the body named a start. */
static int parse_ns_body(const char *text, size_t len, idmint_ns_info *out, int *has_start,
                         char *err, size_t err_size)
{
    struct json *body = json_parse_object(text, len, err, err_size);
    idmint_ns_info info;
    int rc, named = 0;

    if (body == NULL)
        return -1;
    rc = ns_from_body(body, &info, &named, err, err_size);
    json_free(body);
    if (rc == 0) {
        *out = info;
        *has_start = named;
    }
    return rc;
}

int routes_parse_ns_body(const char *text, size_t len, idmint_ns_info *out, char *err,
                         size_t err_size)
{
    int has_start;

    return parse_ns_body(text, len, out, &has_start, err, err_size);
}

void routes_ns_create(struct http_req *r, struct daemon_thread *w, const struct route_match *m)
{
    char err[256];
    idmint_authority *a;
    idmint_ns_info info;
    uint64_t t0;
    int rc;

    (void)m;
    if (routes_parse_ns_body(r->body, r->body_len, &info, err, sizeof(err)) != 0) {
        routes_fail(r, IDMINT_EINVAL, err);
        return;
    }
    if ((a = routes_authority_or_fail(r, w)) == NULL)
        return;
    t0 = clocks_mono_ns();
    rc = idmint_ns_create(a, &info);
    routes_store_done(w, t0);
    if (rc != 0) {
        routes_fail(r, rc, NULL);
        return;
    }
    reply_ns(r, w, a, info.name, 201);
}

void routes_ns_migrate(struct http_req *r, struct daemon_thread *w, const struct route_match *m)
{
    const char *old = m->segment;
    char err[256];
    idmint_authority *a;
    idmint_ns_info info;
    uint64_t t0;
    int rc, has_start;

    if (idmint__ns_name_check(old) != 0) {
        routes_fail(r, IDMINT_EINVAL, NULL);
        return;
    }
    if (parse_ns_body(r->body, r->body_len, &info, &has_start, err, sizeof(err)) != 0) {
        routes_fail(r, IDMINT_EINVAL, err);
        return;
    }
    if ((a = routes_authority_or_fail(r, w)) == NULL)
        return;
    t0 = clocks_mono_ns();
    /* A start the body names is honoured or refused, "1" included. */
    rc = has_start ? idmint_ns_migrate_start(a, old, &info, info.next_value, NULL)
                   : idmint_ns_migrate(a, old, &info, NULL);
    routes_store_done(w, t0);
    if (rc != 0) {
        routes_fail(r, rc, NULL);
        return;
    }
    reply_ns(r, w, a, info.name, 201);
}

static void ns_set_disabled(struct http_req *r, struct daemon_thread *w, const char *ns,
                            int disabled)
{
    idmint_authority *a;
    uint64_t t0;
    int rc;

    if ((a = ns_authority_or_fail(r, w, ns)) == NULL)
        return;
    t0 = clocks_mono_ns();
    rc = idmint_ns_set_disabled(a, ns, disabled);
    routes_store_done(w, t0);
    if (rc != 0) {
        routes_fail(r, rc, NULL);
        return;
    }
    reply_ns(r, w, a, ns, 200);
}

void routes_ns_disable(struct http_req *r, struct daemon_thread *w, const struct route_match *m)
{
    ns_set_disabled(r, w, m->segment, 1);
}

void routes_ns_enable(struct http_req *r, struct daemon_thread *w, const struct route_match *m)
{
    ns_set_disabled(r, w, m->segment, 0);
}

void routes_ns_workers(struct http_req *r, struct daemon_thread *w, const struct route_match *m)
{
    const char *ns = m->segment;
    idmint_authority *a;
    idmint_worker_info *rows = NULL;
    struct json *o, *arr;
    size_t n = 0, i;
    uint64_t t0;
    int rc;

    if ((a = ns_authority_or_fail(r, w, ns)) == NULL)
        return;
    t0 = clocks_mono_ns();
    rc = idmint_workers_list(a, ns, &rows, &n);
    routes_store_done(w, t0);
    if (rc != 0) {
        routes_fail(r, rc, NULL);
        return;
    }
    o = json_new_object();
    json_set_str(o, "namespace", ns);
    arr = json_new_array();
    for (i = 0; i < n; i++) {
        const idmint_worker_info *wi = idmint_worker_info_at(rows, i);
        struct json *row = json_new_object();

        json_set_int(row, "region", wi->region);
        json_set_int(row, "worker_id", wi->worker_id);
        json_set_str(row, "holder", wi->holder);
        json_set_u64_str(row, "generation", wi->generation);
        json_set_u64_str(row, "lease_until", wi->lease_until);
        json_push(arr, row);
    }
    idmint_free(rows);
    json_set(o, "workers", arr);
    routes_json_tree(r, 200, o);
}

/* Query time @p name (ISO-8601 UTC or Unix ms) into *out. 0, or -1 after replying 400. */
static int query_time(struct http_req *r, const char *name, int64_t *out)
{
    char text[64], msg[300];
    int found = routes_query(r, name, text, sizeof(text));

    if (found == 0)
        snprintf(msg, sizeof(msg), "query parameter '%s' is required (ISO-8601 UTC or Unix ms)",
                 name);
    else if (found < 0)
        snprintf(msg, sizeof(msg), "query parameter '%s' is malformed", name);
    else if (idmint_epoch_parse(text, out) != 0)
        snprintf(msg, sizeof(msg), "query parameter '%s': %s", name, idmint_errmsg());
    else
        return 0;
    routes_fail(r, IDMINT_EINVAL, msg);
    return -1;
}

void routes_ns_bounds(struct http_req *r, struct daemon_thread *w, const struct route_match *m)
{
    const char *ns = m->segment;
    char from_iso[32], to_iso[32];
    idmint_authority *a;
    idmint_ns_info info;
    int64_t from, to;
    uint64_t lo, hi;
    struct json *o;
    int rc;

    if (query_time(r, "from", &from) != 0 || query_time(r, "to", &to) != 0)
        return;
    /* The name is checked where the namespace is resolved. */
    if (routes_snowflake_ns(r, w, ns, &a, &info,
                            "namespace is a range namespace: its IDs carry no time") != 0)
        return;
    if ((rc = idmint_ns_bounds(&info, from, to, &lo, &hi)) != 0) {
        routes_fail(r, rc, NULL);
        return;
    }
    routes_iso_or_empty(from, from_iso, sizeof(from_iso));
    routes_iso_or_empty(to, to_iso, sizeof(to_iso));
    o = json_new_object();
    json_set_str(o, "namespace", ns);
    json_set_str(o, "from", from_iso);
    json_set_str(o, "to", to_iso);
    json_set_int(o, "from_ms", from);
    json_set_int(o, "to_ms", to);
    json_set_u64_str(o, "lo", lo);
    json_set_u64_str(o, "hi", hi);
    routes_json_tree(r, 200, o);
}

/* Query number @p name within [min, max], default @p def. 0 or replied. */
void routes_audit(struct http_req *r, struct daemon_thread *w, const struct route_match *m)
{
    idmint_authority *a;
    idmint_audit_entry *list = NULL;
    struct json *o, *arr;
    int64_t after, limit;
    size_t n = 0, i;
    uint64_t t0;
    int rc;

    (void)m;
    if (routes_query_int(r, "after", 0, INT64_MAX / 10, 0, &after) != 0 ||
        routes_query_int(r, "limit", 1, AUDIT_LIMIT_MAX, AUDIT_LIMIT_DEFAULT, &limit) != 0)
        return;
    if ((a = routes_authority_or_fail(r, w)) == NULL)
        return;
    t0 = clocks_mono_ns();
    rc = idmint_audit_list(a, after, (size_t)limit, &list, &n);
    routes_store_done(w, t0);
    if (rc != 0) {
        routes_fail(r, rc, NULL);
        return;
    }
    o = json_new_object();
    arr = json_new_array();
    for (i = 0; i < n; i++) {
        const idmint_audit_entry *ae = idmint_audit_entry_at(list, i);
        struct json *e = json_new_object();
        char when[32];

        routes_iso_or_empty(ae->at_ms, when, sizeof(when));
        json_set_int(e, "seq", ae->seq);
        json_set_int(e, "at_ms", ae->at_ms);
        json_set_str(e, "time", when);
        json_set_str(e, "actor", ae->actor);
        json_set_str(e, "action", ae->action);
        json_set_str(e, "namespace", ae->ns);
        json_set_str(e, "detail", ae->detail);
        json_push(arr, e);
    }
    idmint_free(list);
    json_set(o, "entries", arr);
    routes_json_tree(r, 200, o);
}
