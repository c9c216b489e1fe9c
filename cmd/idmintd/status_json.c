/* SPDX-License-Identifier: Apache-2.0 */
/*
 * GET /v1/status: the view of status.c as JSON, and nothing computed here.
 * As everywhere in the API, counters and 64-bit values are decimal strings
 * and small numbers (ms, permille, counts of worker ids) JSON numbers.
 */
#include "status.h"

#include "auth.h"
#include "daemon.h"
#include "json.h"

#include <stdio.h>

static void set_iso(struct json *o, const char *key, int64_t ms)
{
    char when[32];

    if (idmint_format_iso8601(ms, when, sizeof(when)) != 0)
        when[0] = '\0';
    json_set_str(o, key, when);
}

static const char *const level_name[] = {"ok", "warn", "bad"};

static const char *state_name(enum status_state s)
{
    return s == STATUS_HELD ? "held" : s == STATUS_RESTING ? "resting" : "free";
}

static void set_bound(struct json *o, const char *key, int bucket)
{
    int64_t us = status_bucket_us(bucket);

    if (us < 0)
        json_set_null(o, key); /* above the largest bound */
    else
        json_set_int(o, key, us);
}

static struct json *workers_json(const struct status_ns *ns)
{
    const struct sampler_rows *r = ns->rows;
    struct json *o = json_new_object(), *drawn, *rows;
    size_t i;

    json_set_int(o, "read_ms", r->read_ms);
    set_iso(o, "read", r->read_ms);
    json_set_str(o, "error", r->rc != 0 ? r->error : "");
    if (r->rc != 0)
        return o;
    json_set_int(o, "regions", (int64_t)ns->regions);
    json_set_int(o, "ids_per_region", (int64_t)ns->ids_per_region);
    json_set_bool(o, "cells", ns->has_cells);
    json_set_int(o, "held", (int64_t)ns->held);
    json_set_int(o, "resting", (int64_t)ns->resting);
    json_set_int(o, "free", (int64_t)ns->free);
    json_set_int(o, "low", (int64_t)ns->low);
    json_set_bool(o, "idle", ns->is_idle);
    drawn = json_new_array();
    for (i = 0; i < ns->n_drawn; i++) {
        const struct status_region *g = &ns->drawn[i];
        struct json *e = json_new_object();

        json_set_int(e, "region", g->region);
        json_set_int(e, "held", g->held);
        json_set_int(e, "resting", g->resting);
        json_set_int(e, "free", g->free);
        json_set_int(e, "low", g->low);
        json_push(drawn, e);
    }
    json_set(o, "drawn", drawn);
    rows = json_new_array();
    for (i = 0; i < ns->n_workers; i++) {
        const struct status_worker *w = &ns->workers[i];
        struct json *e = json_new_object();

        json_set_int(e, "region", w->region);
        json_set_int(e, "worker_id", w->worker_id);
        json_set_str(e, "state", state_name(w->state));
        json_set_str(e, "holder", w->holder);
        json_set_u64_str(e, "generation", w->generation);
        json_set_u64_str(e, "lease_until", w->lease_until);
        json_set_int(e, "lease_end_ms", w->lease_end_ms);
        set_iso(e, "lease_end", w->lease_end_ms);
        json_set_int(e, "margin_ms", w->margin_ms);
        if (w->state == STATUS_HELD) {
            json_set_int(e, "lease_ms", w->lease_ms);
            json_set_int(e, "low_ms", w->low_ms);
        }
        json_set_bool(e, "low", w->is_low);
        json_set_bool(e, "own", w->is_own);
        json_push(rows, e);
    }
    json_set(o, "rows", rows);
    return o;
}

static struct json *handle_json(const struct status_ns *ns)
{
    const struct status_handle *h = ns->own;
    struct json *o = json_new_object(), *per_s = json_new_array();
    size_t k;

    json_set_u64_str(o, "ids_issued", h->ids_issued);
    json_set_bool(o, "usable", h->has_info);
    if (ns->kind == IDMINT_KIND_RANGE) {
        json_set_u64_str(o, "range_left", h->has_info ? h->info.range_left : 0);
    } else {
        json_set_int(o, "region", h->info.region);
        json_set_int(o, "worker_id", h->info.worker_id);
        json_set_int(o, "lease_end_ms", h->lease_end_ms);
        json_set_int(o, "lease_left_ms", h->lease_left_ms);
        json_set_str(o, "lease_level", h->is_lease_low ? "bad" : "ok");
        json_set_u64_str(o, "sequence_waits", h->info.sequence_waits);
        if (h->workers_free >= 0)
            json_set_int(o, "workers_free", h->workers_free);
        else
            json_set_null(o, "workers_free");
    }
    for (k = 0; k < THROUGHPUT_SECONDS; k++)
        json_push(per_s, json_new_int(ns->per_s[k]));
    json_set(o, "per_s", per_s);
    json_set_int(o, "per_s_end_ms", ns->per_s_end_ms);
    json_set_u64_str(o, "window_total", ns->window_total);
    json_set_int(o, "peak_per_s", ns->peak_per_s);
    json_set_int(o, "last_per_s", ns->last_per_s);
    return o;
}

static struct json *ns_json(const struct status_ns *ns)
{
    struct json *o = json_new_object();
    char layout[32];

    json_set_str(o, "name", ns->name);
    json_set_str(o, "kind", ns->kind == IDMINT_KIND_RANGE ? "range" : "snowflake");
    json_set_bool(o, "listed", ns->is_listed);
    if (ns->is_listed)
        json_set_bool(o, "disabled", ns->is_disabled);
    else
        json_set_null(o, "disabled");
    if (ns->kind == IDMINT_KIND_SNOWFLAKE) {
        snprintf(layout, sizeof(layout), "%u/%u/%u/%u", ns->layout.time_bits,
                 ns->layout.region_bits, ns->layout.worker_bits, ns->layout.sequence_bits);
        json_set_str(o, "layout", layout);
        json_set_int(o, "unit_ms", ns->layout.unit_ms);
        json_set_int(o, "epoch_ms", ns->layout.epoch_ms);
        set_iso(o, "epoch", ns->layout.epoch_ms);
        if (ns->has_end) {
            json_set_int(o, "time_runs_out_ms", ns->end_ms);
            set_iso(o, "time_runs_out", ns->end_ms);
        }
        json_set_int(o, "lifetime_used_permille", ns->lifetime_permille);
        json_set_str(o, "lifetime_level", level_name[ns->lifetime_level]);
        if (ns->rows != NULL)
            json_set(o, "workers", workers_json(ns));
        else
            json_set_null(o, "workers");
    } else if (ns->is_listed) {
        json_set_u64_str(o, "next_value", ns->next_value);
        json_set_u64_str(o, "max_value", ns->max_value);
        json_set_int(o, "block", ns->block);
        json_set_int(o, "max_block", ns->max_block);
        json_set_u64_str(o, "values_left", ns->values_left);
        json_set_int(o, "left_permille", ns->left_permille);
        json_set_str(o, "left_level", level_name[ns->left_level]);
    }
    if (ns->own != NULL)
        json_set(o, "handle", handle_json(ns));
    else
        json_set_null(o, "handle");
    return o;
}

static struct json *events_json(const struct status_view *v)
{
    const struct status_live *l = &v->live;
    struct json *o = json_new_object(), *lat = json_new_object(), *per_by = json_new_object();
    int by;

    json_set_u64_str(o, "sequence_waits", v->sequence_waits);
    json_set_u64_str(o, "range_refills", l->range_refills);
    json_set_u64_str(o, "renewals", l->renewals);
    json_set_u64_str(o, "renewal_failures", l->renewal_failures);
    json_set_str(o, "renewal_failures_level", level_name[v->renewal_level]);
    json_set_u64_str(o, "clock_backsteps", l->clock_backsteps);
    json_set_str(o, "clock_backsteps_level", level_name[v->backstep_level]);
    json_set_u64_str(lat, "count", l->store_latency.count);
    json_set_u64_str(lat, "sum_ns", l->store_latency.sum_ns);
    json_set_int(lat, "mean_us", (int64_t)v->store_mean_us);
    set_bound(lat, "p50_le_us", v->store_p50);
    set_bound(lat, "p99_le_us", v->store_p99);
    json_set(o, "store_latency", lat);
    json_set_u64_str(o, "collisions", l->collisions);
    json_set_str(o, "collisions_level", level_name[v->collision_level]);
    json_set_u64_str(o, "rate_limited", l->rate_limited_total);
    json_set_str(o, "rate_limited_level", level_name[v->rate_limited_level]);
    json_set_bool(o, "limits_set", v->has_limits);
    for (by = 0; by < 2; by++) {
        struct json *roles = json_new_object();
        unsigned role;

        for (role = 0; role < 4; role++)
            json_set_u64_str(roles, auth_role_name((enum auth_role)role),
                             l->rate_limited[by][role]);
        json_set(per_by, by == 0 ? "token" : "address", roles);
    }
    json_set(o, "rate_limited_by", per_by);
    return o;
}

static struct json *audit_json(const struct status_view *v)
{
    const struct sampler_cache *c = v->cache;
    struct json *o = json_new_object(), *arr;
    size_t i;

    json_set_bool(o, "shown", v->shows_audit);
    if (!v->shows_audit) {
        json_set_str(o, "error", "the audit log needs the admin role");
        return o;
    }
    if (c == NULL || !c->is_full) {
        json_set_str(o, "error", "not read yet");
        return o;
    }
    json_set_str(o, "error", c->audit_rc != 0 ? c->audit_error : "");
    arr = json_new_array();
    for (i = 0; i < c->n_audit; i++) {
        const idmint_audit_entry *ae = &c->audit[i];
        struct json *e = json_new_object();

        json_set_int(e, "seq", ae->seq);
        json_set_int(e, "at_ms", ae->at_ms);
        set_iso(e, "time", ae->at_ms);
        json_set_str(e, "actor", ae->actor);
        json_set_str(e, "action", ae->action);
        json_set_str(e, "namespace", ae->ns);
        json_set_str(e, "detail", ae->detail);
        json_set_str(e, "detail_iso", v->audit_detail != NULL ? v->audit_detail[i] : ae->detail);
        json_push(arr, e);
    }
    json_set(o, "entries", arr);
    return o;
}

struct json *status_json(const struct daemon *d, const struct status_view *v)
{
    const struct sampler_cache *c = v->cache;
    struct json *o = json_new_object(), *dm = json_new_object(), *st = json_new_object(), *arr, *lv;
    size_t i;

    json_set_str(dm, "version", DAEMON_VERSION);
    json_set_str(dm, "authority", d->handles.authority_text);
    json_set_int(dm, "region", d->cfg.region);
    json_set_int(dm, "now_ms", v->live.now_ms);
    set_iso(dm, "now", v->live.now_ms);
    json_set_bool(dm, "ready", v->is_ready);
    json_set_str(dm, "ready_reason", v->ready_reason);
    json_set_int(dm, "ready_margin_ms", d->cfg.ready_margin_ms);
    json_set_int(dm, "lease_ms", d->cfg.lease_ms);
    /* A holder is low at this share of its own lease: ready_margin_ms of lease_ms. */
    json_set_int(dm, "low_share_permille",
                 (int64_t)((uint64_t)d->cfg.ready_margin_ms * 1000 / d->cfg.lease_ms));
    lv = json_new_object();
    json_set_int(lv, "lifetime_warn_permille", STATUS_LIFETIME_WARN);
    json_set_int(lv, "lifetime_bad_permille", STATUS_LIFETIME_BAD);
    json_set_int(lv, "left_warn_permille", STATUS_LEFT_WARN);
    json_set_int(lv, "left_bad_permille", STATUS_LEFT_BAD);
    json_set(dm, "levels", lv);
    json_set(o, "daemon", dm);

    json_set_int(st, "period_ms", SAMPLER_PERIOD_MS);
    json_set_bool(st, "sampled", c != NULL);
    json_set_bool(st, "full", c != NULL && c->is_full);
    json_set_int(st, "read_ms", c != NULL ? c->read_ms : 0);
    set_iso(st, "read", c != NULL ? c->read_ms : 0);
    json_set_str(st, "level", level_name[v->store_level]);
    json_set_str(st, "problem", v->store_problem);
    json_set(o, "store", st);

    arr = json_new_array();
    for (i = 0; i < v->n_ns; i++)
        json_push(arr, ns_json(&v->ns[i]));
    json_set(o, "namespaces", arr);
    json_set(o, "events", events_json(v));
    json_set(o, "audit", audit_json(v));
    return o;
}
