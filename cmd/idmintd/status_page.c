/* SPDX-License-Identifier: Apache-2.0 */
/*
 * GET /status: the view of status.c as one HTML page, its style and script
 * inline (status_assets.h), so the page needs nothing but this daemon. The
 * script (assets/status.js) redraws <main> from GET /v1/status with the
 * same markup, section for section; a change here needs the same change
 * there, and tests/daemon/test_status.py compares the two renderings.
 * Every element with a data-k attribute is a figure the test checks.
 */
#include "status.h"

#include "auth.h"
#include "daemon.h"
#include "idmint_service.h"
#include "status_assets.h"
#include "textbuf.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define STATUS_WIDE_IDS 256

#define P(...) textbuf_printf(b, __VA_ARGS__)
#define H(s)   textbuf_html(b, s)

static const char *const level_class[] = {"ok", "warn", "bad"};
static const char *const level_mark[] = {"", "\u25b2 ", "\u2716 "}; /* ▲ ✖ */

/* ==== the formats, one for one with status.js ==== */

/* 1234567 -> "1,234,567" */
static void put_count(struct textbuf *b, uint64_t v)
{
    char digits[24], out[32];
    size_t n = (size_t)snprintf(digits, sizeof(digits), "%" PRIu64, v), i, o = 0;

    for (i = 0; i < n; i++) {
        if (i > 0 && (n - i) % 3 == 0)
            out[o++] = ',';
        out[o++] = digits[i];
    }
    out[o] = '\0';
    P("%s", out);
}

/* 3 -> "0.3%" */
static void put_permille(struct textbuf *b, int p)
{
    P("%d.%d%%", p / 10, p % 10);
}

/* ms -> seconds with one decimal, cut toward zero: 5549 -> "5.5 s" */
static void put_secs(struct textbuf *b, int64_t ms)
{
    int64_t a = ms < 0 ? -ms : ms;

    P("%s%" PRId64 ".%" PRId64 " s", ms < 0 ? "-" : "", a / 1000, a % 1000 / 100);
}

/* A latency bucket bound: "≤ 50 µs", "≤ 5 ms", "≤ 1 s", "> 1 s". */
static void put_bound(struct textbuf *b, int64_t us)
{
    if (us < 0)
        P("> 1 s");
    else if (us < 1000)
        P("\u2264 %" PRId64 " \u00b5s", us);
    else if (us < 1000000)
        P("\u2264 %" PRId64 " ms", us / 1000);
    else
        P("\u2264 %" PRId64 " s", us / 1000000);
}

static void put_iso(struct textbuf *b, int64_t ms)
{
    char when[32];

    if (idmint_format_iso8601(ms, when, sizeof(when)) != 0)
        when[0] = '\0';
    P("%s", when);
}

/* The date of an instant: "2095-09-07". */
static void put_date(struct textbuf *b, int64_t ms)
{
    char when[32];

    if (idmint_format_iso8601(ms, when, sizeof(when)) != 0)
        when[0] = '\0';
    when[10] = '\0';
    P("%s", when);
}

/* A counter: "0 (none yet)" or the count, marked when @p lv is not OK. */
static void put_event(struct textbuf *b, uint64_t v, enum status_level lv)
{
    P("<span class=\"lv %s\">%s", level_class[lv], level_mark[lv]);
    put_count(b, v);
    P("%s</span>", v == 0 ? " (none yet)" : "");
}

/* ==== sections ==== */

static void section_ready(struct textbuf *b, const struct daemon *d, const struct status_view *v)
{
    const struct sampler_cache *c = v->cache;

    P("<section id=\"s-ready\" aria-labelledby=\"h-ready\"><h2 id=\"h-ready\">Readiness</h2>");
    if (v->is_ready) {
        P("<p class=\"banner ok\" data-k=\"ready\">\u2714 Ready: every lease this daemon mints "
          "under has more than ");
        put_secs(b, d->cfg.ready_margin_ms);
        P(" left.</p>");
    } else {
        P("<p class=\"banner bad\" data-k=\"ready\">\u2716 Not ready: ");
        H(v->ready_reason);
        P("</p>");
    }
    if (v->store_level != STATUS_OK) {
        P("<p class=\"banner %s\" data-k=\"store\">%s", level_class[v->store_level],
          level_mark[v->store_level]);
        H(v->store_problem);
        P("</p>");
    }
    P("<p class=\"meta\">Authority <span data-k=\"authority\">");
    H(d->handles.authority_text);
    P("</span>.</p><p class=\"meta\">Store read <span data-k=\"store/read\">");
    if (c != NULL)
        put_iso(b, c->read_ms);
    else
        P("never");
    P("</span>, every %u s while this page is open. Figures of <span data-k=\"now\" "
      "data-live=\"1\">",
      SAMPLER_PERIOD_MS / 1000);
    put_iso(b, v->live.now_ms);
    P("</span>.</p></section>");
}

static void ns_row(struct textbuf *b, const struct status_ns *ns)
{
    const char *n = ns->name; /* [a-z0-9_.-]: nothing to escape */

    P("<tr><th scope=\"row\">%s</th>", n);
    if (ns->kind == IDMINT_KIND_SNOWFLAKE) {
        P("<td data-label=\"Kind\">snowflake</td><td data-label=\"Layout, unit\">%u/%u/%u/%u, %u "
          "ms</td>"
          "<td data-label=\"Epoch\">",
          ns->layout.time_bits, ns->layout.region_bits, ns->layout.worker_bits,
          ns->layout.sequence_bits, ns->layout.unit_ms);
        put_date(b, ns->layout.epoch_ms);
        P("</td><td data-label=\"Time bits run out\" data-k=\"ns/%s/runs_out\">", n);
        if (ns->has_end)
            put_date(b, ns->end_ms);
        else
            P("\u2014");
        P("</td><td data-label=\"Lifetime used\"><meter min=\"0\" max=\"1000\" low=\"%d\" "
          "high=\"%d\" optimum=\"0\" "
          "value=\"%d\" aria-label=\"%s: lifetime used\"></meter> <span class=\"lv %s\" "
          "data-k=\"ns/%s/used\">%s",
          STATUS_LIFETIME_WARN, STATUS_LIFETIME_BAD, ns->lifetime_permille, n,
          level_class[ns->lifetime_level], n, level_mark[ns->lifetime_level]);
        put_permille(b, ns->lifetime_permille);
        P("</span></td>");
    } else {
        P("<td data-label=\"Kind\">range</td><td data-label=\"Layout, unit\">\u2014</td>"
          "<td data-label=\"Epoch\">\u2014</td><td data-label=\"Time bits run out\">\u2014</td>"
          "<td data-label=\"Lifetime used\">\u2014</td>");
    }
    P("<td data-label=\"State\" data-k=\"ns/%s/state\">", n);
    if (!ns->is_listed)
        P("<span class=\"lv warn\">\u25b2 not read yet</span>");
    else if (ns->is_disabled)
        P("<span class=\"lv warn\">\u25b2 disabled</span>");
    else
        P("<span class=\"lv ok\">enabled</span>");
    P("</td><td data-label=\"Values left\">");
    if (ns->kind == IDMINT_KIND_RANGE && ns->is_listed) {
        P("<meter min=\"0\" max=\"1000\" low=\"%d\" high=\"%d\" optimum=\"1000\" value=\"%d\" "
          "aria-label=\"%s: values left\"></meter> <span class=\"lv %s\" "
          "data-k=\"ns/%s/left\">%s",
          STATUS_LEFT_BAD, STATUS_LEFT_WARN, ns->left_permille, n, level_class[ns->left_level], n,
          level_mark[ns->left_level]);
        put_count(b, ns->values_left);
        P(" (");
        put_permille(b, ns->left_permille);
        P(")</span>");
    } else {
        P("\u2014");
    }
    P("</td></tr>");
}

static void section_namespaces(struct textbuf *b, const struct status_view *v)
{
    size_t i;

    P("<section id=\"s-ns\" aria-labelledby=\"h-ns\"><h2 id=\"h-ns\">Namespaces</h2>"
      "<div class=\"scroll\"><table class=\"cards\"><thead><tr><th scope=\"col\">Namespace</th>"
      "<th scope=\"col\">Kind</th><th scope=\"col\">Layout, unit</th><th scope=\"col\">Epoch</th>"
      "<th scope=\"col\">Time bits run out</th><th scope=\"col\">Lifetime used</th>"
      "<th scope=\"col\">State</th><th scope=\"col\">Values left</th></tr></thead><tbody>");
    for (i = 0; i < v->n_ns; i++)
        ns_row(b, &v->ns[i]);
    if (v->n_ns == 0)
        P("<tr><td colspan=\"8\">No namespaces yet.</td></tr>");
    P("</tbody></table></div></section>");
}

static void chart(struct textbuf *b, const struct status_ns *ns)
{
    const char *n = ns->name;
    uint32_t peak = ns->peak_per_s;
    size_t k;

    P("<figure class=\"chart\"><figcaption><strong>%s</strong>: <span data-k=\"rate/%s/total\">", n,
      n);
    put_count(b, ns->window_total);
    P("</span> in 10 min, peak <span data-k=\"rate/%s/peak\">", n);
    put_count(b, peak);
    P("</span>/s, last second <span data-k=\"rate/%s/last\">", n);
    put_count(b, ns->last_per_s);
    P("</span>/s</figcaption><svg viewBox=\"0 0 %d 100\" preserveAspectRatio=\"none\" "
      "role=\"img\" aria-label=\"%s: IDs minted per second over the last 10 minutes, peak %u "
      "per second\"><polyline points=\"",
      THROUGHPUT_SECONDS - 1, n, peak);
    for (k = 0; k < THROUGHPUT_SECONDS; k++)
        P("%s%zu,%u", k > 0 ? " " : "", k,
          peak > 0 ? 100u - (uint32_t)((uint64_t)ns->per_s[k] * 100u / peak) : 100u);
    P("\"/></svg><div class=\"axis\"><span>\u221210 min</span><span>now</span></div></figure>");
}

static void section_mint(struct textbuf *b, const struct status_view *v)
{
    size_t i, shown = 0;

    P("<section id=\"s-mint\" aria-labelledby=\"h-mint\"><h2 id=\"h-mint\">Minting here</h2>"
      "<div class=\"scroll\"><table class=\"cards\"><thead><tr><th scope=\"col\">Namespace</th>"
      "<th scope=\"col\">Worker</th><th scope=\"col\">Lease left</th>"
      "<th scope=\"col\">IDs issued</th><th scope=\"col\">Sequence waits</th>"
      "<th scope=\"col\">Values in hand</th></tr></thead><tbody>");
    for (i = 0; i < v->n_ns; i++) {
        const struct status_ns *ns = &v->ns[i];
        const struct status_handle *h = ns->own;
        const char *n = ns->name;

        if (h == NULL)
            continue;
        shown++;
        P("<tr><th scope=\"row\">%s</th><td data-label=\"Worker\" data-k=\"h/%s/worker\">", n, n);
        if (!h->has_info)
            P("<span class=\"lv bad\">\u2716 handle unusable</span>");
        else if (ns->kind == IDMINT_KIND_RANGE)
            P("\u2014");
        else
            P("region %u, worker %u", h->info.region, h->info.worker_id);
        P("</td><td data-label=\"Lease left\" data-k=\"h/%s/lease\" data-live=\"1\">", n);
        if (ns->kind == IDMINT_KIND_RANGE || !h->has_info) {
            P("\u2014");
        } else if (h->lease_end_ms == 0) {
            P("<span class=\"lv bad\">\u2716 lost</span>");
        } else {
            enum status_level lv = h->is_lease_low ? STATUS_BAD : STATUS_OK;

            P("<span class=\"lv %s\">%s", level_class[lv], level_mark[lv]);
            put_secs(b, h->lease_left_ms);
            P("</span>");
        }
        P("</td><td data-label=\"IDs issued\" data-k=\"h/%s/ids\">", n);
        put_count(b, h->ids_issued);
        P("</td><td data-label=\"Sequence waits\" data-k=\"h/%s/waits\">", n);
        if (ns->kind == IDMINT_KIND_SNOWFLAKE && h->has_info)
            put_count(b, h->info.sequence_waits);
        else
            P("\u2014");
        P("</td><td data-label=\"Values in hand\" data-k=\"h/%s/left\">", n);
        if (ns->kind == IDMINT_KIND_RANGE && h->has_info)
            put_count(b, h->info.range_left);
        else
            P("\u2014");
        P("</td></tr>");
    }
    if (shown == 0)
        P("<tr><td colspan=\"6\">This daemon mints from no namespace yet (GET /v1/ids opens "
          "one).</td></tr>");
    P("</tbody></table></div><h3>IDs minted per second, last 10 minutes</h3>"
      "<p class=\"meta\">Counted by this daemon (GET /v1/ids), sampled every second; IDs that "
      "library processes mint in their own memory are not seen here.</p><div class=\"charts\">");
    for (i = 0; i < v->n_ns; i++)
        if (v->ns[i].own != NULL)
            chart(b, &v->ns[i]);
    P("</div></section>");
}

/* The state of worker @p id of region @p region: its row, or NULL (free). */
static const struct status_worker *row_at(const struct status_ns *ns, size_t *cursor,
                                          uint32_t region, uint64_t id)
{
    while (*cursor < ns->n_workers) {
        const struct status_worker *w = &ns->workers[*cursor];

        if (w->region > region || (w->region == region && w->worker_id > id))
            return NULL;
        (*cursor)++;
        if (w->region == region && w->worker_id == id)
            return w;
    }
    return NULL;
}

static void grid(struct textbuf *b, const struct status_ns *ns, const struct status_region *g)
{
    size_t cursor = 0;
    uint64_t id;

    /* A region of more than STATUS_WIDE_IDS ids takes a whole row of the page. */
    P("<div class=\"region%s\"><h4>Region %u: %u held, %u resting, %u free</h4>"
      "<div class=\"grid\" role=\"img\" aria-label=\"%s region %u: %u held, %u resting, %u free, "
      "%u with a low margin\">",
      ns->ids_per_region > STATUS_WIDE_IDS ? " wide" : "", g->region, g->held, g->resting, g->free,
      ns->name, g->region, g->held, g->resting, g->free, g->low);
    for (id = 0; id < ns->ids_per_region; id++) {
        const struct status_worker *w = row_at(ns, &cursor, g->region, id);

        if (w == NULL || w->state == STATUS_FREE) {
            P("<span class=\"c f\"></span>");
        } else if (w->state == STATUS_RESTING) {
            P("<span class=\"c r\" title=\"worker %" PRIu64 ": resting, free in ", id);
            put_secs(b, w->margin_ms);
            P("\">r</span>");
        } else {
            P("<span class=\"c h%s\" title=\"worker %" PRIu64 ": held by %s, ",
              w->is_low ? " low" : "", id, w->holder);
            put_secs(b, w->margin_ms);
            P(" left of its ");
            put_secs(b, w->lease_ms);
            P(" lease");
            if (w->is_low) {
                P(", at most ");
                put_secs(b, w->low_ms);
                P(": low");
            }
            P("\">%s</span>", w->is_low ? "!" : "H");
        }
    }
    P("</div></div>");
}

static void worker_rows(struct textbuf *b, const struct status_ns *ns)
{
    size_t i, shown = 0;

    P("<div class=\"scroll\"><table><thead><tr><th scope=\"col\">Region</th>"
      "<th scope=\"col\">Worker</th><th scope=\"col\">State</th><th scope=\"col\">Holder</th>"
      "<th scope=\"col\">Lease ends (E)</th><th scope=\"col\">Margin</th></tr></thead><tbody>");
    for (i = 0; i < ns->n_workers; i++) {
        const struct status_worker *w = &ns->workers[i];
        const char *n = ns->name;

        if (w->state == STATUS_FREE)
            continue;
        shown++;
        P("<tr><td>%u</td><td>%u</td><td data-k=\"w/%s/%u/%u/state\">%s</td><td>", w->region,
          w->worker_id, n, w->region, w->worker_id, w->state == STATUS_HELD ? "held" : "resting");
        H(w->holder[0] != '\0' ? w->holder : "\u2014");
        P("%s</td><td>", w->is_own ? " (this daemon)" : "");
        put_iso(b, w->lease_end_ms);
        P("</td><td data-k=\"w/%s/%u/%u/margin\">", n, w->region, w->worker_id);
        if (w->state == STATUS_RESTING) {
            P("free in ");
            put_secs(b, w->margin_ms);
        } else {
            P("<span class=\"lv %s\">%s", w->is_low ? "bad" : "ok", w->is_low ? "\u2716 " : "");
            put_secs(b, w->margin_ms);
            if (w->is_low) {
                P(", at most ");
                put_secs(b, w->low_ms);
            }
            P(" of its ");
            put_secs(b, w->lease_ms);
            P(" lease</span>");
        }
        P("</td></tr>");
    }
    if (shown == 0)
        P("<tr><td colspan=\"6\">No worker id is held or resting.</td></tr>");
    P("</tbody></table></div>");
}

static void section_workers(struct textbuf *b, const struct daemon *d, const struct status_view *v)
{
    size_t i, k, snowflakes = 0, idle = 0;

    P("<section id=\"s-workers\" aria-labelledby=\"h-workers\"><h2 id=\"h-workers\">Worker "
      "ids</h2><p class=\"legend\"><span class=\"c h\">H</span> held <span class=\"c r\">r</span> "
      "resting until its E <span class=\"c f\"></span> free <span class=\"c h low\">!</span> "
      "held with at most ");
    put_permille(b, (int)((uint64_t)d->cfg.ready_margin_ms * 1000 / d->cfg.lease_ms));
    P(" of its own lease left: the share at which this daemon is no longer ready (");
    put_secs(b, d->cfg.ready_margin_ms);
    P(" of its ");
    put_secs(b, d->cfg.lease_ms);
    P(" lease). A holder's lease is the longest margin this daemon has seen it hold. Margins "
      "are as of the store's reading.</p>");
    for (i = 0; i < v->n_ns; i++) {
        const struct status_ns *ns = &v->ns[i];

        if (ns->kind != IDMINT_KIND_SNOWFLAKE || ns->rows == NULL || ns->rows->rc != 0 ||
            !ns->is_idle)
            continue;
        P("%s%s%s", idle++ == 0 ? "<p data-k=\"w/idle\">Idle, every worker id free: " : ", ",
          ns->name, ns->is_listed && ns->is_disabled ? " (disabled)" : "");
    }
    if (idle > 0)
        P(".</p>");
    for (i = 0; i < v->n_ns; i++) {
        const struct status_ns *ns = &v->ns[i];
        const char *n = ns->name;

        if (ns->kind != IDMINT_KIND_SNOWFLAKE)
            continue;
        snowflakes++;
        if (ns->rows != NULL && ns->rows->rc == 0 && ns->is_idle)
            continue; /* on the idle line */
        P("<h3>%s</h3>", n);
        if (ns->rows == NULL) {
            P("<p class=\"meta\">Not read yet.</p>");
            continue;
        }
        if (ns->rows->rc != 0) {
            P("<p class=\"lv bad\">\u2716 ");
            H(ns->rows->error);
            P("</p>");
            continue;
        }
        P("<p data-k=\"w/%s/sum\">", n);
        put_count(b, ns->held);
        P(" held, ");
        put_count(b, ns->resting);
        P(" resting, ");
        put_count(b, ns->free);
        P(" free; <span class=\"lv %s\">%s", ns->low > 0 ? "bad" : "ok",
          ns->low > 0 ? "\u2716 " : "");
        put_count(b, ns->low);
        P(" with a low margin</span>. Read ");
        put_iso(b, ns->rows->read_ms);
        P(".</p>");
        if (ns->has_cells) {
            P("<div class=\"regions\">");
            for (k = 0; k < ns->n_drawn; k++)
                grid(b, ns, &ns->drawn[k]);
            P("</div>");
            if (ns->n_drawn < ns->regions) {
                P("<p class=\"meta\">");
                put_count(b, ns->regions - ns->n_drawn);
                P(" other regions hold no row: all their worker ids are free.</p>");
            }
        } else {
            P("<p class=\"meta\">");
            put_count(b, ns->ids_per_region);
            P(" worker ids per region are too many to draw; the table lists every row.</p>");
        }
        worker_rows(b, ns);
    }
    if (snowflakes == 0)
        P("<p>No snowflake namespace.</p>");
    P("</section>");
}

/* @p live: NULL for a figure that holds still while nothing mints; "1" for one that
 * moves by itself; "store" for one that moves with every store call. */
static void event_row(struct textbuf *b, const char *what, const char *key, const char *live)
{
    P("<tr><th scope=\"row\">%s</th><td data-k=\"ev/%s\"", what, key);
    if (live != NULL)
        P(" data-live=\"%s\"", live);
    P(">");
}

static void section_events(struct textbuf *b, const struct status_view *v)
{
    const struct status_live *l = &v->live;

    P("<section id=\"s-events\" aria-labelledby=\"h-events\"><h2 id=\"h-events\">Events</h2>"
      "<div class=\"scroll\"><table><thead><tr><th scope=\"col\">Event</th>"
      "<th scope=\"col\">Count</th><th scope=\"col\">What it means</th></tr></thead><tbody>");
    event_row(b, "Sequence waits", "waits", NULL);
    put_event(b, v->sequence_waits, STATUS_OK);
    P("</td><td>Mint calls that waited for the next time unit: the sequence bits were used "
      "up.</td></tr>");
    event_row(b, "Range refills", "refills", NULL);
    put_event(b, l->range_refills, STATUS_OK);
    P("</td><td>New ranges this daemon's range handles reserved.</td></tr>");
    event_row(b, "Lease renewals", "renewals", "1");
    put_event(b, l->renewals, STATUS_OK);
    P("</td><td>Extensions of this daemon's worker leases.</td></tr>");
    event_row(b, "Renewal failures", "failures", NULL);
    put_event(b, l->renewal_failures, v->renewal_level);
    P("</td><td>Leases of this daemon lost or run out.</td></tr>");
    event_row(b, "Clock steps back", "backsteps", NULL);
    put_event(b, l->clock_backsteps, v->backstep_level);
    P("</td><td>Wall-clock steps back seen (minting never goes back with it).</td></tr>");
    event_row(b, "Store calls", "store_calls", "store");
    put_count(b, l->store_latency.count);
    P("</td><td>Made by the routes and the store sampler.</td></tr>");
    event_row(b, "Store latency", "store_latency", "store");
    P("mean ");
    put_count(b, v->store_mean_us);
    P(" \u00b5s, p50 ");
    put_bound(b, status_bucket_us(v->store_p50));
    P(", p99 ");
    put_bound(b, status_bucket_us(v->store_p99));
    P("</td><td>From the idmint_store_latency_seconds buckets.</td></tr>");
    event_row(b, "Collisions", "collisions", NULL);
    put_event(b, l->collisions, v->collision_level);
    P("</td><td>Duplicates reported to this daemon through POST /v1/collisions since it "
      "started.</td></tr>");
    event_row(b, "Rate-limited requests", "rate_limited", NULL);
    put_event(b, l->rate_limited_total, v->rate_limited_level);
    P("</td><td>Requests answered 429 by a [limits] rate since start");
    if (l->rate_limited_total > 0) {
        int by, role, shown = 0;

        P(": <span data-k=\"ev/rate_limited_by\">");
        for (by = 0; by < 2; by++)
            for (role = 0; role < 4; role++)
                if (l->rate_limited[by][role] > 0) {
                    P("%s%s bucket, %s caller ", shown++ > 0 ? "; " : "",
                      by == 0 ? "token" : "address", auth_role_name((enum auth_role)role));
                    put_count(b, l->rate_limited[by][role]);
                }
        P("</span>");
    }
    P(".%s</td></tr></tbody></table></div></section>",
      v->has_limits ? ""
                    : " No request rate is set in [limits]: only new keys and collision reports"
                      " are limited.");
}

static void section_audit(struct textbuf *b, const struct status_view *v)
{
    const struct sampler_cache *c = v->cache;
    size_t i;

    P("<section id=\"s-audit\" aria-labelledby=\"h-audit\"><h2 id=\"h-audit\">Last %d audit "
      "records</h2>",
      SAMPLER_AUDIT_TAIL);
    if (!v->shows_audit) {
        P("<p class=\"meta\" data-k=\"audit\">The audit log needs the admin role.</p></section>");
        return;
    }
    if (c == NULL || !c->is_full) {
        P("<p class=\"meta\" data-k=\"audit\">Not read yet.</p></section>");
        return;
    }
    if (c->audit_rc != 0) {
        P("<p class=\"lv bad\" data-k=\"audit\">\u2716 ");
        H(c->audit_error);
        P("</p>");
    }
    P("<div class=\"scroll\"><table><thead><tr><th scope=\"col\">Seq</th>"
      "<th scope=\"col\">Time</th><th scope=\"col\">Actor</th><th scope=\"col\">Action</th>"
      "<th scope=\"col\">Namespace</th><th scope=\"col\">Detail</th></tr></thead><tbody>");
    for (i = 0; i < c->n_audit; i++) {
        const idmint_audit_entry *e = &c->audit[i];

        P("<tr><td data-k=\"audit/%zu\">%" PRId64 "</td><td>", i, e->seq);
        put_iso(b, e->at_ms);
        P("</td><td>");
        H(e->actor);
        P("</td><td>");
        H(e->action);
        P("</td><td>");
        H(e->ns);
        P("</td><td class=\"detail\" data-k=\"audit/%zu/detail\">", i);
        H(v->audit_detail != NULL ? v->audit_detail[i] : e->detail);
        P("</td></tr>");
    }
    if (c->n_audit == 0)
        P("<tr><td colspan=\"6\">No audit records yet.</td></tr>");
    P("</tbody></table></div></section>");
}

/* ==== the page ==== */

static void page_main(struct textbuf *b, const struct daemon *d, const struct status_view *v)
{
    section_ready(b, d, v);
    section_namespaces(b, v);
    section_mint(b, v);
    section_workers(b, d, v);
    section_events(b, v);
    section_audit(b, v);
}

char *status_page(const struct daemon *d, const struct status_view *v, size_t *len)
{
    struct textbuf buf, *b = &buf;

    textbuf_init(b, 65536);
    P("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
      "<title>idmintd status</title><link rel=\"icon\" href=\"data:,\">"
      "<noscript><meta http-equiv=\"refresh\" content=\"10\"></noscript><style>");
    textbuf_add(b, (const char *)asset_status_css, asset_status_css_len);
    P("</style></head><body><header><h1>idmintd status</h1><p class=\"meta\">idmintd %s, "
      "region %u. <span id=\"refresh\">Reload the page for new "
      "figures.</span></p></header><main id=\"main\">",
      DAEMON_VERSION, d->cfg.region);
    page_main(b, d, v);
    P("</main><footer><p>Figures from GET /v1/status: the same snapshot as /metrics. What each "
      "part means and what to do when it turns red: docs/status-page.md.</p></footer><script>");
    textbuf_add(b, (const char *)asset_status_js, asset_status_js_len);
    P("</script></body></html>\n");
    return textbuf_take(b, len);
}

/* ==== Content-Security-Policy ==== */

static pthread_once_t csp_once = PTHREAD_ONCE_INIT;
static char csp[512];

/* 'sha256-<base64>' of @p len bytes at @p data into @p out. */
static void csp_hash(const unsigned char *data, size_t len, char *out, size_t size)
{
    static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    unsigned char raw[32];
    char hex[65], text[48];
    size_t i, o = 0;

    if (auth_sha256_hex(data, len, hex) != 0) {
        snprintf(out, size, "'none'");
        return;
    }
    for (i = 0; i < 32; i++)
        raw[i] =
            (unsigned char)(idmint__hex_value(hex[2 * i]) * 16 + idmint__hex_value(hex[2 * i + 1]));
    for (i = 0; i + 3 <= 32; i += 3) {
        unsigned v = (unsigned)raw[i] << 16 | (unsigned)raw[i + 1] << 8 | raw[i + 2];

        text[o++] = b64[v >> 18];
        text[o++] = b64[(v >> 12) & 63];
        text[o++] = b64[(v >> 6) & 63];
        text[o++] = b64[v & 63];
    }
    {
        unsigned v = (unsigned)raw[30] << 16 | (unsigned)raw[31] << 8; /* 32 = 10 * 3 + 2 */

        text[o++] = b64[v >> 18];
        text[o++] = b64[(v >> 12) & 63];
        text[o++] = b64[(v >> 6) & 63];
        text[o++] = '=';
    }
    text[o] = '\0';
    snprintf(out, size, "'sha256-%s'", text);
}

static void csp_build(void)
{
    char style[64], script[64];

    csp_hash(asset_status_css, asset_status_css_len, style, sizeof(style));
    csp_hash(asset_status_js, asset_status_js_len, script, sizeof(script));
    /* Nothing but this daemon: no other origin for anything, and no inline
     * code but the page's own style and script, named by their hashes. */
    snprintf(csp, sizeof(csp),
             "default-src 'none'; style-src %s; script-src %s; connect-src 'self'; "
             "img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
             style, script);
}

const char *status_page_csp(void)
{
    pthread_once(&csp_once, csp_build);
    return csp;
}
