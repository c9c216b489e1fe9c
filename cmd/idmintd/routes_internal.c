/* SPDX-License-Identifier: Apache-2.0 */
/*
 * POST /internal/workers/lease, /internal/ranges/lease and
 * /internal/ranges/forget: the authority's store over HTTP for remote
 * generators (the http:// remote authority). This file reads and checks the
 * request's fields; the daemon's authority layer applies the lease and range
 * rules with the daemon's clock, as for a generator in this process.
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

#define ID_LEN_MAX       128                    /* incarnation and request_id */
#define MAX_AHEAD_MS_MAX INT64_C(3153600000000) /* 100 years */

static int bad(struct http_req *r, const char *field, const char *what)
{
    char text[192];

    snprintf(text, sizeof(text), "field '%s' %s", field, what);
    routes_fail(r, IDMINT_EINVAL, text);
    return -1;
}

/* A decimal-string 64-bit field (a JSON integer is accepted too). 0 or replied. */
static int need_u64(struct http_req *r, const struct json *body, const char *key, uint64_t *out)
{
    const char *s;
    int64_t v;
    int q = json_get_str(body, key, &s);

    if (q > 0) {
        if (strcmp(s, "0") == 0) {
            *out = 0;
            return 0;
        }
        if (idmint_id_parse(s, out) == 0)
            return 0;
        return bad(r, key, "must be a decimal string below 2^63");
    }
    if (json_get_int(body, key, &v) == 1 && v >= 0) {
        *out = (uint64_t)v;
        return 0;
    }
    return bad(r, key, "is required as a decimal string");
}

static int need_u32(struct http_req *r, const struct json *body, const char *key, uint64_t max,
                    uint32_t *out)
{
    int64_t v;
    int q = json_get_int(body, key, &v);

    if (q != 1 || v < 0 || (uint64_t)v > max) {
        char what[96];

        snprintf(what, sizeof(what), "is required as a whole number from 0 to %llu",
                 (unsigned long long)max);
        return bad(r, key, what);
    }
    *out = (uint32_t)v;
    return 0;
}

static int is_hex32(const char *s)
{
    size_t i;

    for (i = 0; i < 32; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return 0;
    return s[32] == '\0';
}

/* Copy text field @p key of @p body into @p buf (@p size bytes). 0, or replied. */
static int origin_text(struct http_req *r, const struct json *body, const char *key, char *buf,
                       size_t size)
{
    const char *s;
    int q = json_get_str(body, key, &s);

    if (q == 0)
        return 0;
    if (q != 1 || strlen(s) >= size) {
        char what[96];

        snprintf(what, sizeof(what), "must be a string of at most %zu bytes", size - 1);
        return bad(r, key, what);
    }
    memcpy(buf, s, strlen(s) + 1);
    return 0;
}

/*
 * What a remote generator says of itself (host, pid, program: recorded with
 * its grant, never trusted), and the token it came with, into @p o; then
 * the thread's authority records its grants so. 0, or replied.
 */
static int body_origin(struct http_req *r, struct daemon_thread *w, const struct json *body,
                       idmint_authority *a, struct idmint__origin *o)
{
    int64_t pid = 0;

    memset(o, 0, sizeof(*o));
    if (origin_text(r, body, "host", o->host, sizeof(o->host)) != 0 ||
        origin_text(r, body, "program", o->program, sizeof(o->program)) != 0)
        return -1;
    if (json_get_int(body, "pid", &pid) < 0 || pid < 0 || pid > UINT32_MAX)
        return bad(r, "pid", "must be a whole number from 0 to 4294967295");
    o->pid = (uint32_t)pid;
    if (w->d->cfg.n_tokens > 0)
        snprintf(o->token, sizeof(o->token), "%s", w->actor);
    if (idmint__origin_check(o) != 0) {
        routes_fail(r, IDMINT_EINVAL, NULL);
        return -1;
    }
    idmint__authority_on_behalf(a, o);
    return 0;
}

/*
 * A take that finds E ahead of our clock: a release sets E to the last time
 * its holder minted + 1, so an E a second or more ahead means that holder's
 * clock ran ahead (or ours is behind), and the id stays fenced until the
 * clocks meet. Say so, naming the skew and the holder.
 */
#define FENCE_SKEW_WARN_MS 1000
static void warn_fence_ahead(const char *ns, const struct idmint__lease *lease, const char *actor)
{
    char fp[IDMINT_HOLDER_FP_LEN + 1];

    if (lease->fence_ahead_ms < FENCE_SKEW_WARN_MS)
        return;
    idmint__holder_fingerprint(lease->holder, fp);
    log_write(LOG_WARN, "worker id fenced far ahead of this clock",
              "namespace=%s region=%u worker=%u skew_ms=%llu previous_generation=%llu "
              "taker=%s holder=%s reason=\"the previous holder's clock ran ahead (see its "
              "worker.release in the audit log) or ours is behind; the taker waits until then\"",
              ns, (unsigned)lease->region, (unsigned)lease->worker_id,
              (unsigned long long)lease->fence_ahead_ms,
              (unsigned long long)(lease->generation - 1), actor, fp);
}

/* Where in the authority's history a grant happened, so a remote holder can tell a rewind. */
static void set_history(struct json *o, const struct idmint__history *h)
{
    if (h->seq == 0 || h->id[0] == '\0')
        return;
    json_set_str(o, "history", h->id);
    json_set_u64_str(o, "grant_seq", h->seq);
    /* With the tip, the holder's pair is judged as a local holder's: a
     * restored store that counted past it again still differs there. */
    if (h->tip != 0)
        json_set_u64_str(o, "grant_tip", h->tip);
}

static void reply_lease(struct http_req *r, const char *ns, const struct idmint__lease *lease)
{
    struct json *o = json_new_object();

    json_set_str(o, "namespace", ns);
    json_set_int(o, "region", lease->region);
    json_set_int(o, "worker_id", lease->worker_id);
    json_set_str(o, "holder", lease->holder);
    json_set_u64_str(o, "generation", lease->generation);
    json_set_u64_str(o, "fence_found", lease->fence_found);
    json_set_u64_str(o, "lease_until", lease->lease_until);
    set_history(o, &lease->history);
    routes_json_tree(r, 200, o);
}

static void workers_op(struct http_req *r, struct daemon_thread *w, const struct json *body,
                       const char *op, int role)
{
    const struct config *cfg = &w->d->cfg;
    int is_take = strcmp(op, "take") == 0, is_renew = strcmp(op, "renew") == 0;
    int is_release = strcmp(op, "release") == 0, is_force = strcmp(op, "force_release") == 0;
    const char *ns, *holder = NULL, *ns_unused;
    idmint_authority *a;
    idmint_ns_info info;
    struct idmint__lease lease;
    uint32_t region = 0, lease_ms = cfg->lease_ms;
    uint64_t t0, final_time = 0;
    int64_t v, max_ahead_ms = -1;
    int rc;

    if (!is_take && !is_renew && !is_release && !is_force) {
        bad(r, "op", "must be take, renew, release or force_release");
        return;
    }
    if (is_force && role < AUTH_ADMIN) {
        routes_fail(r, IDMINT_EACCESS, "force_release needs the admin role");
        return;
    }
    if (json_get_str(body, "namespace", &ns) != 1) {
        bad(r, "namespace", "is required");
        return;
    }
    if (idmint__ns_name_check(ns) != 0) {
        routes_fail(r, IDMINT_EINVAL, NULL);
        return;
    }
    memset(&lease, 0, sizeof(lease));
    if (json_get_int(body, "region", &v) != 0 && need_u32(r, body, "region", 0xffff, &region) != 0)
        return;
    lease.region = region;
    if (!is_take && need_u32(r, body, "worker_id", UINT32_MAX, &lease.worker_id) != 0)
        return;
    if (!is_force) {
        if (json_get_str(body, "holder", &holder) != 1 || !is_hex32(holder)) {
            bad(r, "holder", "is required as 32 lowercase hex digits");
            return;
        }
        memcpy(lease.holder, holder, 33);
    }
    if ((is_renew || is_release) && need_u64(r, body, "generation", &lease.generation) != 0)
        return;
    /* Its bounds are the authority's rule (idmint__lease_ms_check). */
    if ((is_take || is_renew) && json_get_int(body, "lease_ms", &v) != 0 &&
        need_u32(r, body, "lease_ms", UINT32_MAX, &lease_ms) != 0)
        return;
    if (is_release && need_u64(r, body, "final_time", &final_time) != 0)
        return;
    if (json_get_int(body, "max_ahead_ms", &v) != 0) {
        /* An admin vouches that no holder minted past now + this. */
        if (!is_force) {
            bad(r, "max_ahead_ms", "is only for force_release");
            return;
        }
        if (json_get_int(body, "max_ahead_ms", &max_ahead_ms) != 1 || max_ahead_ms < 0 ||
            max_ahead_ms > MAX_AHEAD_MS_MAX) {
            bad(r, "max_ahead_ms", "must be a whole number of ms from 0 to 3153600000000");
            return;
        }
    }
    if ((is_renew || is_release) && json_get_str(body, "fence_found", &ns_unused) != 0 &&
        need_u64(r, body, "fence_found", &lease.fence_found) != 0)
        return;

    if (!is_take &&
        (json_get_str(body, "host", &ns_unused) != 0 ||
         json_get_str(body, "program", &ns_unused) != 0 || json_get_int(body, "pid", &v) != 0)) {
        bad(r, "host, pid and program", "are only for take");
        return;
    }
    if (routes_snowflake_ns(r, w, ns, &a, &info,
                            "worker leases are for snowflake namespaces; this one is a range") != 0)
        return;
    if (is_take && (body_origin(r, w, body, a, &lease.origin) != 0 ||
                    routes_write_allowed(r, w, RATELIMIT_GRANT) != 0))
        return;
    if (is_renew && routes_write_allowed(r, w, RATELIMIT_RENEW) != 0)
        return;
    t0 = clocks_mono_ns();
    if (is_force) {
        rc = idmint__authority_force_release(a, ns, region, lease.worker_id, max_ahead_ms);
        routes_store_done(w, t0);
        if (rc != 0) {
            routes_fail(r, rc, NULL);
            return;
        }
        {
            struct json *o = json_new_object();

            json_set_str(o, "namespace", ns);
            json_set_int(o, "region", region);
            json_set_int(o, "worker_id", lease.worker_id);
            routes_json_tree(r, 200, o);
        }
        return;
    }
    if (is_take) {
        rc = idmint__authority_lease_take(a, &info, lease_ms, &lease);
        if (rc == 0) {
            char actor[64];

            idmint__authority_actor(a, actor, sizeof(actor));
            warn_fence_ahead(ns, &lease, actor);
        }
    } else if (is_renew) {
        rc = idmint__authority_lease_renew(a, &info, &lease, lease_ms);
    } else {
        rc = idmint__authority_lease_release(a, &info, &lease, final_time);
    }
    /* A take or renewal is proven here, on the daemon's host, before its holder mints on it. */
    if (rc == 0 && (is_take || is_renew))
        rc = idmint__authority_grant_proven(a, ns, &lease.history);
    routes_store_done(w, t0);
    if (rc != 0) {
        routes_fail(r, rc, NULL);
        return;
    }
    reply_lease(r, ns, &lease);
}

void routes_internal_workers(struct http_req *r, struct daemon_thread *w,
                             const struct route_match *m)
{
    char err[256];
    struct json *body = json_parse_object(r->body, r->body_len, err, sizeof(err));
    const char *op;
    const int role = (int)m->role; /* force_release needs admin */

    if (body == NULL) {
        routes_fail(r, IDMINT_EINVAL, err);
        return;
    }
    if (json_get_str(body, "op", &op) != 1)
        bad(r, "op", "is required: take, renew, release or force_release");
    else
        workers_op(r, w, body, op, role);
    json_free(body);
}

/*
 * Parse a range body (its fields were checked against the route table's
 * row): its namespace, incarnation and request id (under @p id_key). The
 * body (free with json_free), or NULL after replying 400.
 */
static struct json *range_body(struct http_req *r, const char *id_key, const char **ns,
                               const char **incarnation, const char **id)
{
    char err[256];
    struct json *body = json_parse_object(r->body, r->body_len, err, sizeof(err));

    if (body == NULL) {
        routes_fail(r, IDMINT_EINVAL, err);
        return NULL;
    }
    if (json_get_str(body, "namespace", ns) != 1)
        bad(r, "namespace", "is required");
    else if (idmint__ns_name_check(*ns) != 0)
        routes_fail(r, IDMINT_EINVAL, NULL);
    else if (json_get_str(body, "incarnation", incarnation) != 1 || (*incarnation)[0] == '\0' ||
             strlen(*incarnation) > ID_LEN_MAX)
        bad(r, "incarnation", "is required as a string of 1..128 characters");
    else if (json_get_str(body, id_key, id) != 1 || (*id)[0] == '\0' || strlen(*id) > ID_LEN_MAX)
        bad(r, id_key, "is required as a string of 1..128 characters");
    else
        return body;
    json_free(body);
    return NULL;
}

void routes_internal_ranges(struct http_req *r, struct daemon_thread *w,
                            const struct route_match *m)
{
    const char *ns, *incarnation, *request_id;
    struct json *body = range_body(r, "request_id", &ns, &incarnation, &request_id), *o;
    idmint_authority *a;
    struct idmint__range range;
    int64_t count;
    uint64_t t0;
    int rc;

    (void)m;
    if (body == NULL)
        return;
    if (json_get_int(body, "count", &count) != 1 || count < 1) {
        bad(r, "count", "is required as a whole number of at least 1");
        goto out;
    }
    if ((rc = routes_authority(w, &a)) != 0) {
        routes_fail(r, rc, NULL);
        goto out;
    }
    if (body_origin(r, w, body, a, &range.origin) != 0 ||
        routes_write_allowed(r, w, RATELIMIT_GRANT) != 0)
        goto out;
    t0 = clocks_mono_ns();
    rc = idmint__authority_range_reserve(a, ns, incarnation, request_id, (uint64_t)count, &range);
    if (rc == 0)
        rc = idmint__authority_grant_proven(a, ns, &range.history);
    routes_store_done(w, t0);
    if (rc != 0) {
        routes_fail(r, rc, NULL);
        goto out;
    }
    metrics_range_reserved(ns);
    o = json_new_object();
    json_set_str(o, "namespace", ns);
    json_set_u64_str(o, "start", range.start);
    json_set_u64_str(o, "end", range.end);
    set_history(o, &range.history);
    routes_json_tree(r, 200, o);
out:
    json_free(body);
}

void routes_internal_ranges_forget(struct http_req *r, struct daemon_thread *w,
                                   const struct route_match *m)
{
    const char *ns, *incarnation, *before;
    struct json *body = range_body(r, "before_request_id", &ns, &incarnation, &before), *o;
    idmint_authority *a;
    uint64_t forgotten = 0, t0;
    int rc;

    (void)m;
    if (body == NULL)
        return;
    if ((rc = routes_authority(w, &a)) != 0) {
        routes_fail(r, rc, NULL);
        goto out;
    }
    t0 = clocks_mono_ns();
    rc = idmint__authority_range_forget(a, ns, incarnation, before, &forgotten);
    routes_store_done(w, t0);
    if (rc != 0) {
        routes_fail(r, rc, NULL);
        goto out;
    }
    o = json_new_object();
    json_set_str(o, "namespace", ns);
    json_set_u64_str(o, "forgotten", forgotten);
    routes_json_tree(r, 200, o);
out:
    json_free(body);
}

void routes_internal_history(struct http_req *r, struct daemon_thread *w,
                             const struct route_match *m)
{
    struct idmint__history_state st;
    idmint_authority *a;
    struct json *o, *lineage;
    int64_t seq;
    uint64_t t0;
    size_t i;
    int rc;

    (void)m;
    if (routes_query_int(r, "seq", 0, INT64_MAX, 0, &seq) != 0)
        return;
    if ((rc = routes_authority(w, &a)) != 0) {
        routes_fail(r, rc, NULL);
        return;
    }
    memset(&st, 0, sizeof(st));
    t0 = clocks_mono_ns();
    rc = idmint__authority_history_state(a, (uint64_t)seq, &st);
    routes_store_done(w, t0);
    if (rc != 0) {
        routes_fail(r, rc, NULL);
        return;
    }
    o = json_new_object();
    json_set_str(o, "store_id", st.store_id);
    json_set_str(o, "history", st.head.id);
    json_set_u64_str(o, "seq", st.head.seq);
    json_set_u64_str(o, "tip", st.head.tip);
    json_set_u64_str(o, "oldest_seq", st.oldest_seq);
    json_set_u64_str(o, "tip_at_seq", st.tip_at_seq);
    json_set_int(o, "backup_ms", st.backup_ms);
    lineage = json_new_array();
    for (i = 0; i < st.lineage_n && i < IDMINT__LINEAGE_MAX; i++)
        json_push(lineage, json_new_str(st.lineage[i]));
    json_set(o, "lineage", lineage);
    routes_json_tree(r, 200, o);
}
