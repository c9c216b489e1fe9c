/* SPDX-License-Identifier: Apache-2.0 */
/*
 * GET /v1/ids/{id}/trace, POST /v1/collisions and GET /v1/collisions: who
 * minted an ID, by the grants the authority recorded, and duplicates that
 * systems downstream caught. The authority layer resolves the owners and
 * keeps one record per (namespace, ID, reporter); this file checks what
 * the client sent, bounds how often a caller may report
 * (collision_rate), and shapes the answers.
 */
#include "daemon.h"
#include "clocks.h"

#include "idmint_service.h"
#include "json.h"
#include "log.h"
#include "reply.h"
#include "routes_authority.h"
#include "route_table.h"

#include <stdio.h>
#include <string.h>

#define COLLISIONS_LIMIT_MAX     1000
#define COLLISIONS_LIMIT_DEFAULT 100
#define OBSERVED_MS_MAX          INT64_C(253402300799999) /* 9999-12-31 */

static struct json *grant_json(const idmint_grant_info *g)
{
    struct json *e = json_new_object();
    char when[32];

    json_set_str(e, "kind", g->kind == IDMINT_KIND_RANGE ? "range" : "snowflake");
    json_set_int(e, "region", g->region);
    json_set_int(e, "worker_id", g->worker_id);
    json_set_u64_str(e, "generation", g->generation);
    json_set_u64_str(e, "first", g->first);
    json_set_u64_str(e, "last", g->last);
    json_set_str(e, "incarnation", g->holder);
    json_set_str(e, "host", g->host);
    json_set_int(e, "pid", g->pid);
    json_set_str(e, "program", g->program);
    json_set_str(e, "token", g->token);
    json_set_int(e, "granted_ms", g->granted_ms);
    routes_iso_or_empty(g->granted_ms, when, sizeof(when));
    json_set_str(e, "granted", when);
    json_set_int(e, "updated_ms", g->updated_ms);
    return e;
}

void routes_ids_trace(struct http_req *r, struct daemon_thread *w, const struct route_match *m)
{
    idmint_grant_info *grants = NULL;
    idmint_authority *a;
    struct json *o, *arr;
    char ns[64];
    size_t n = 0;
    uint64_t id, t0;
    int rc;

    if (routes_query_ns(r, ns, sizeof(ns)) != 0)
        return;
    if (idmint_id_parse(m->segment, &id) != 0) {
        routes_fail(r, IDMINT_EINVAL, NULL);
        return;
    }
    if ((a = routes_authority_or_fail(r, w)) == NULL)
        return;
    t0 = clocks_mono_ns();
    rc = idmint_trace(a, ns, id, &grants, &n);
    routes_store_done(w, t0);
    if (rc != 0) {
        routes_fail(r, rc, NULL);
        return;
    }
    o = json_new_object();
    json_set_str(o, "namespace", ns);
    json_set_u64_str(o, "id", id);
    json_set_str(o, "verdict", n == 0 ? "not_minted" : n == 1 ? "minted" : "duplicate");
    if (n == 0)
        json_set_str(o, "message",
                     "not minted under any grant this authority knows (forged, of another "
                     "namespace or authority, minted before this namespace existed, or older "
                     "than the provenance retention)");
    arr = json_new_array();
    for (size_t i = 0; i < n; i++)
        json_push(arr, grant_json(idmint_grant_info_at(grants, i)));
    json_set(o, "grants", arr);
    idmint_free(grants);
    routes_json_tree(r, 200, o);
}

static struct json *collision_json(const idmint_collision *c)
{
    struct json *e = json_new_object();
    char when[32];

    json_set_int(e, "seq", c->seq);
    json_set_str(e, "namespace", c->ns);
    json_set_u64_str(e, "id", c->id);
    json_set_str(e, "verdict", c->verdict);
    json_set_str(e, "first_owner", c->first_owner);
    json_set_str(e, "second_owner", c->second_owner);
    json_set_str(e, "reporter", c->reporter);
    json_set_int(e, "observed_ms", c->observed_ms);
    routes_iso_or_empty(c->observed_ms, when, sizeof(when));
    json_set_str(e, "observed_at", when);
    json_set_int(e, "reported_ms", c->reported_ms);
    json_set_str(e, "note", c->note);
    return e;
}

static int bad(struct http_req *r, const char *text)
{
    routes_fail(r, IDMINT_EINVAL, text);
    return -1;
}

/* The body of POST /v1/collisions into its fields. 0, or -1 after replying 400. */
static int collision_body(struct http_req *r, const struct json *body, const char **ns,
                          uint64_t *id, int64_t *observed_ms, const char **note)
{
    const char *text;
    int64_t v;

    if (json_get_str(body, "namespace", ns) != 1)
        return bad(r, "field 'namespace' is required");
    if (idmint__ns_name_check(*ns) != 0) {
        routes_fail(r, IDMINT_EINVAL, NULL);
        return -1;
    }
    if (json_get_str(body, "id", &text) != 1 || idmint_id_parse(text, id) != 0)
        return bad(r, "field 'id' is required as a decimal string from 1 to 2^63-1");
    *observed_ms = 0;
    if (json_get_str(body, "observed_ms", &text) == 1) {
        uint64_t u;

        if (strcmp(text, "0") != 0 && (idmint_id_parse(text, &u) != 0 || u > OBSERVED_MS_MAX))
            return bad(r, "field 'observed_ms' must be Unix ms from 0 to 253402300799999");
        *observed_ms = strcmp(text, "0") == 0 ? 0 : (int64_t)u;
    } else if (json_get_int(body, "observed_ms", &v) == 1) {
        if (v < 0 || v > OBSERVED_MS_MAX)
            return bad(r, "field 'observed_ms' must be Unix ms from 0 to 253402300799999");
        *observed_ms = v;
    } else if (json_get_int(body, "observed_ms", &v) < 0) {
        return bad(r, "field 'observed_ms' must be Unix ms from 0 to 253402300799999");
    }
    *note = "";
    if (json_get_str(body, "note", note) < 0)
        return bad(r, "field 'note' must be a string");
    return 0;
}

void routes_collisions_report(struct http_req *r, struct daemon_thread *w,
                              const struct route_match *m)
{
    char err[256];
    struct json *body = json_parse_object(r->body, r->body_len, err, sizeof(err));
    const char *ns, *note;
    idmint_collision c;
    idmint_authority *a;
    int64_t observed_ms;
    uint64_t id, t0;
    int rc, is_new = 0;

    (void)m;
    if (body == NULL) {
        routes_fail(r, IDMINT_EINVAL, err);
        return;
    }
    if (collision_body(r, body, &ns, &id, &observed_ms, &note) != 0 ||
        routes_write_allowed(r, w, RATELIMIT_COLLISION) != 0 ||
        (a = routes_authority_or_fail(r, w)) == NULL)
        goto out;
    memset(&c, 0, sizeof(c));
    c.size = sizeof(c);
    t0 = clocks_mono_ns();
    rc = idmint__collision_report(a, ns, id, observed_ms, note, &c, &is_new);
    routes_store_done(w, t0);
    if (rc != 0) {
        routes_fail(r, rc, NULL);
        goto out;
    }
    if (is_new) {
        metrics_collision();
        log_write(LOG_ERROR, "duplicate ID reported",
                  "namespace=%s id=%llu verdict=%s reporter=%s seq=%lld first_owner=\"%s\" "
                  "second_owner=\"%s\"",
                  c.ns, (unsigned long long)c.id, c.verdict, c.reporter, (long long)c.seq,
                  c.first_owner, c.second_owner);
    } else {
        /* Recorded, counted and logged once already: a repeat is no news. */
        log_write(LOG_INFO, "duplicate ID report repeated",
                  "namespace=%s id=%llu reporter=%s seq=%lld", c.ns, (unsigned long long)c.id,
                  c.reporter, (long long)c.seq);
    }
    {
        struct json *o = json_new_object();

        json_set(o, "collision", collision_json(&c));
        routes_json_tree(r, is_new ? 201 : 200, o);
    }
out:
    json_free(body);
}

void routes_collisions_list(struct http_req *r, struct daemon_thread *w,
                            const struct route_match *m)
{
    idmint_collision *list = NULL;
    idmint_authority *a;
    struct json *o, *arr;
    int64_t after, limit;
    size_t n = 0;
    uint64_t t0;
    int rc;

    (void)m;
    if (routes_query_int(r, "after", 0, INT64_MAX / 10, 0, &after) != 0 ||
        routes_query_int(r, "limit", 1, COLLISIONS_LIMIT_MAX, COLLISIONS_LIMIT_DEFAULT, &limit) !=
            0)
        return;
    if ((a = routes_authority_or_fail(r, w)) == NULL)
        return;
    t0 = clocks_mono_ns();
    rc = idmint_collisions_list(a, after, (size_t)limit, &list, &n);
    routes_store_done(w, t0);
    if (rc != 0) {
        routes_fail(r, rc, NULL);
        return;
    }
    o = json_new_object();
    arr = json_new_array();
    for (size_t i = 0; i < n; i++)
        json_push(arr, collision_json(idmint_collision_at(list, i)));
    json_set(o, "collisions", arr);
    idmint_free(list);
    routes_json_tree(r, 200, o);
}
