/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The status page's script: every few seconds it fetches GET /v1/status and
 * redraws <main> with the markup status_page.c writes, section for section,
 * so a reload without the script shows the same figures. Data is escaped
 * before it enters the markup; nothing is fetched but /v1/status.
 */
"use strict";
(function () {
  var REFRESH_MS = 3000;
  var LEVEL = { ok: 0, warn: 1, bad: 2 };
  var LEVEL_CLASS = ["ok", "warn", "bad"];
  var LEVEL_MARK = ["", "\u25b2 ", "\u2716 "];
  var AUDIT_TAIL = 20, WIDE_IDS = 256;
  var refreshes = 0;

  function esc(s) {
    return String(s).replace(/[&<>"']/g, function (c) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;" }[c];
    });
  }
  /* The formats, one for one with status_page.c. */
  function count(v) {
    return String(v).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  }
  function permille(p) {
    return Math.floor(p / 10) + "." + (p % 10) + "%";
  }
  function secs(ms) {
    var a = Math.abs(ms);
    return (ms < 0 ? "-" : "") + Math.floor(a / 1000) + "." + Math.floor((a % 1000) / 100) + " s";
  }
  function bound(us) {
    if (us === null) return "> 1 s";
    if (us < 1000) return "\u2264 " + us + " \u00b5s";
    if (us < 1000000) return "\u2264 " + Math.floor(us / 1000) + " ms";
    return "\u2264 " + Math.floor(us / 1000000) + " s";
  }
  function date(iso) {
    return iso.substring(0, 10);
  }
  function event(v, lv) {
    return "<span class=\"lv " + LEVEL_CLASS[lv] + "\">" + LEVEL_MARK[lv] + count(v) +
      (v === "0" ? " (none yet)" : "") + "</span>";
  }

  function sectionReady(s) {
    var d = s.daemon, st = s.store, h = "<section id=\"s-ready\" aria-labelledby=\"h-ready\">" +
      "<h2 id=\"h-ready\">Readiness</h2>";
    if (d.ready)
      h += "<p class=\"banner ok\" data-k=\"ready\">\u2714 Ready: every lease this daemon mints " +
        "under has more than " + secs(d.ready_margin_ms) + " left.</p>";
    else
      h += "<p class=\"banner bad\" data-k=\"ready\">\u2716 Not ready: " + esc(d.ready_reason) + "</p>";
    if (st.level !== "ok")
      h += "<p class=\"banner " + st.level + "\" data-k=\"store\">" + LEVEL_MARK[LEVEL[st.level]] +
        esc(st.problem) + "</p>";
    h += "<p class=\"meta\">Authority <span data-k=\"authority\">" + esc(d.authority) +
      "</span>.</p><p class=\"meta\">Store read <span data-k=\"store/read\">" +
      (st.sampled ? st.read : "never") + "</span>, every " + st.period_ms / 1000 +
      " s while this page is open. Figures of <span data-k=\"now\" data-live=\"1\">" + d.now +
      "</span>.</p></section>";
    return h;
  }

  /* Levels and thresholds come with the figures: every rule is the daemon's. */
  function nsRow(s, ns) {
    var n = ns.name, t = s.daemon.levels, h = "<tr><th scope=\"row\">" + n + "</th>", lv;
    if (ns.kind === "snowflake") {
      lv = LEVEL[ns.lifetime_level];
      h += "<td data-label=\"Kind\">snowflake</td><td data-label=\"Layout, unit\">" + ns.layout +
        ", " + ns.unit_ms + " ms</td><td data-label=\"Epoch\">" +
        date(ns.epoch) + "</td><td data-label=\"Time bits run out\" data-k=\"ns/" + n + "/runs_out\">" +
        (ns.time_runs_out ? date(ns.time_runs_out) : "\u2014") + "</td><td data-label=\"Lifetime used\">" +
        "<meter min=\"0\" max=\"1000\" low=\"" + t.lifetime_warn_permille + "\" high=\"" +
        t.lifetime_bad_permille +
        "\" optimum=\"0\" value=\"" + ns.lifetime_used_permille + "\" aria-label=\"" + n +
        ": lifetime used\"></meter> <span class=\"lv " + LEVEL_CLASS[lv] + "\" data-k=\"ns/" + n +
        "/used\">" + LEVEL_MARK[lv] + permille(ns.lifetime_used_permille) + "</span></td>";
    } else {
      h += "<td data-label=\"Kind\">range</td><td data-label=\"Layout, unit\">\u2014</td>" +
        "<td data-label=\"Epoch\">\u2014</td><td data-label=\"Time bits run out\">\u2014</td>" +
        "<td data-label=\"Lifetime used\">\u2014</td>";
    }
    h += "<td data-label=\"State\" data-k=\"ns/" + n + "/state\">";
    if (!ns.listed) h += "<span class=\"lv warn\">\u25b2 not read yet</span>";
    else if (ns.disabled) h += "<span class=\"lv warn\">\u25b2 disabled</span>";
    else h += "<span class=\"lv ok\">enabled</span>";
    h += "</td><td data-label=\"Values left\">";
    if (ns.kind === "range" && ns.listed) {
      lv = LEVEL[ns.left_level];
      h += "<meter min=\"0\" max=\"1000\" low=\"" + t.left_bad_permille + "\" high=\"" +
        t.left_warn_permille +
        "\" optimum=\"1000\" value=\"" + ns.left_permille + "\" aria-label=\"" + n +
        ": values left\"></meter> <span class=\"lv " + LEVEL_CLASS[lv] + "\" data-k=\"ns/" + n +
        "/left\">" + LEVEL_MARK[lv] + count(ns.values_left) + " (" + permille(ns.left_permille) +
        ")</span>";
    } else {
      h += "\u2014";
    }
    return h + "</td></tr>";
  }

  function sectionNamespaces(s) {
    var h = "<section id=\"s-ns\" aria-labelledby=\"h-ns\"><h2 id=\"h-ns\">Namespaces</h2>" +
      "<div class=\"scroll\"><table class=\"cards\"><thead><tr><th scope=\"col\">Namespace</th>" +
      "<th scope=\"col\">Kind</th><th scope=\"col\">Layout, unit</th><th scope=\"col\">Epoch</th>" +
      "<th scope=\"col\">Time bits run out</th><th scope=\"col\">Lifetime used</th>" +
      "<th scope=\"col\">State</th><th scope=\"col\">Values left</th></tr></thead><tbody>";
    s.namespaces.forEach(function (ns) { h += nsRow(s, ns); });
    if (s.namespaces.length === 0) h += "<tr><td colspan=\"8\">No namespaces yet.</td></tr>";
    return h + "</tbody></table></div></section>";
  }

  function chart(ns) {
    var n = ns.name, hd = ns.handle, peak = hd.peak_per_s, pts = [], k;
    for (k = 0; k < hd.per_s.length; k++)
      pts.push(k + "," + (peak > 0 ? 100 - Math.floor(hd.per_s[k] * 100 / peak) : 100));
    return "<figure class=\"chart\"><figcaption><strong>" + n + "</strong>: <span data-k=\"rate/" +
      n + "/total\">" + count(hd.window_total) + "</span> in 10 min, peak <span data-k=\"rate/" +
      n + "/peak\">" + count(peak) + "</span>/s, last second <span data-k=\"rate/" + n +
      "/last\">" + count(hd.last_per_s) + "</span>/s</figcaption><svg viewBox=\"0 0 " +
      (hd.per_s.length - 1) + " 100\" preserveAspectRatio=\"none\" role=\"img\" aria-label=\"" + n +
      ": IDs minted per second over the last 10 minutes, peak " + peak + " per second\">" +
      "<polyline points=\"" + pts.join(" ") + "\"/></svg><div class=\"axis\"><span>\u221210 min" +
      "</span><span>now</span></div></figure>";
  }

  function sectionMint(s) {
    var shown = 0, h = "<section id=\"s-mint\" aria-labelledby=\"h-mint\">" +
      "<h2 id=\"h-mint\">Minting here</h2><div class=\"scroll\"><table class=\"cards\"><thead><tr>" +
      "<th scope=\"col\">Namespace</th><th scope=\"col\">Worker</th><th scope=\"col\">Lease left" +
      "</th><th scope=\"col\">IDs issued</th><th scope=\"col\">Sequence waits</th>" +
      "<th scope=\"col\">Values in hand</th></tr></thead><tbody>";
    s.namespaces.forEach(function (ns) {
      var hd = ns.handle, n = ns.name, lv;
      if (!hd) return;
      shown++;
      h += "<tr><th scope=\"row\">" + n + "</th><td data-label=\"Worker\" data-k=\"h/" + n +
        "/worker\">";
      if (!hd.usable) h += "<span class=\"lv bad\">\u2716 handle unusable</span>";
      else if (ns.kind === "range") h += "\u2014";
      else h += "region " + hd.region + ", worker " + hd.worker_id;
      h += "</td><td data-label=\"Lease left\" data-k=\"h/" + n + "/lease\" data-live=\"1\">";
      if (ns.kind === "range" || !hd.usable) {
        h += "\u2014";
      } else if (hd.lease_end_ms === 0) {
        h += "<span class=\"lv bad\">\u2716 lost</span>";
      } else {
        lv = LEVEL[hd.lease_level];
        h += "<span class=\"lv " + LEVEL_CLASS[lv] + "\">" + LEVEL_MARK[lv] + secs(hd.lease_left_ms) +
          "</span>";
      }
      h += "</td><td data-label=\"IDs issued\" data-k=\"h/" + n + "/ids\">" + count(hd.ids_issued) +
        "</td><td data-label=\"Sequence waits\" data-k=\"h/" + n + "/waits\">" + (ns.kind === "snowflake" && hd.usable ? count(hd.sequence_waits) : "\u2014") +
        "</td><td data-label=\"Values in hand\" data-k=\"h/" + n + "/left\">" +
        (ns.kind === "range" && hd.usable ? count(hd.range_left) : "\u2014") + "</td></tr>";
    });
    if (shown === 0)
      h += "<tr><td colspan=\"6\">This daemon mints from no namespace yet (GET /v1/ids opens " +
        "one).</td></tr>";
    h += "</tbody></table></div><h3>IDs minted per second, last 10 minutes</h3>" +
      "<p class=\"meta\">Counted by this daemon (GET /v1/ids), sampled every second; IDs that " +
      "library processes mint in their own memory are not seen here.</p><div class=\"charts\">";
    s.namespaces.forEach(function (ns) { if (ns.handle) h += chart(ns); });
    return h + "</div></section>";
  }

  function grid(ns, g) {
    var w = ns.workers, byId = {}, h, id, r;
    w.rows.forEach(function (row) { if (row.region === g.region) byId[row.worker_id] = row; });
    h = "<div class=\"region" + (w.ids_per_region > WIDE_IDS ? " wide" : "") + "\"><h4>Region " +
      g.region + ": " + g.held + " held, " + g.resting +
      " resting, " + g.free + " free</h4><div class=\"grid\" role=\"img\" aria-label=\"" + ns.name +
      " region " + g.region + ": " + g.held + " held, " + g.resting + " resting, " + g.free +
      " free, " + g.low + " with a low margin\">";
    for (id = 0; id < w.ids_per_region; id++) {
      r = byId[id];
      if (!r || r.state === "free")
        h += "<span class=\"c f\"></span>";
      else if (r.state === "resting")
        h += "<span class=\"c r\" title=\"worker " + id + ": resting, free in " + secs(r.margin_ms) +
          "\">r</span>";
      else
        h += "<span class=\"c h" + (r.low ? " low" : "") + "\" title=\"worker " + id + ": held by " +
          esc(r.holder) + ", " + secs(r.margin_ms) + " left of its " + secs(r.lease_ms) + " lease" +
          (r.low ? ", at most " + secs(r.low_ms) + ": low" : "") + "\">" + (r.low ? "!" : "H") +
          "</span>";
    }
    return h + "</div></div>";
  }

  function workerRows(ns) {
    var n = ns.name, shown = 0, h = "<div class=\"scroll\"><table><thead><tr>" +
      "<th scope=\"col\">Region</th><th scope=\"col\">Worker</th><th scope=\"col\">State</th>" +
      "<th scope=\"col\">Holder</th><th scope=\"col\">Lease ends (E)</th><th scope=\"col\">Margin" +
      "</th></tr></thead><tbody>";
    ns.workers.rows.forEach(function (w) {
      if (w.state === "free") return;
      shown++;
      h += "<tr><td>" + w.region + "</td><td>" + w.worker_id + "</td><td data-k=\"w/" + n + "/" +
        w.region + "/" + w.worker_id + "/state\">" + w.state + "</td><td>" +
        esc(w.holder !== "" ? w.holder : "\u2014") + (w.own ? " (this daemon)" : "") + "</td><td>" +
        w.lease_end + "</td><td data-k=\"w/" + n + "/" + w.region + "/" + w.worker_id + "/margin\">";
      if (w.state === "resting")
        h += "free in " + secs(w.margin_ms);
      else
        h += "<span class=\"lv " + (w.low ? "bad\">\u2716 " : "ok\">") + secs(w.margin_ms) +
          (w.low ? ", at most " + secs(w.low_ms) : "") + " of its " + secs(w.lease_ms) +
          " lease</span>";
      h += "</td></tr>";
    });
    if (shown === 0) h += "<tr><td colspan=\"6\">No worker id is held or resting.</td></tr>";
    return h + "</tbody></table></div>";
  }

  function isIdle(ns) {
    return ns.kind === "snowflake" && ns.workers && ns.workers.error === "" && ns.workers.idle;
  }

  function sectionWorkers(s) {
    var d = s.daemon, idle = s.namespaces.filter(isIdle), snowflakes = 0,
      h = "<section id=\"s-workers\" aria-labelledby=\"h-workers\">" +
      "<h2 id=\"h-workers\">Worker ids</h2><p class=\"legend\"><span class=\"c h\">H</span> held " +
      "<span class=\"c r\">r</span> resting until its E <span class=\"c f\"></span> free " +
      "<span class=\"c h low\">!</span> held with at most " + permille(d.low_share_permille) +
      " of its own lease left: the share at which this daemon is no longer ready (" +
      secs(d.ready_margin_ms) + " of its " + secs(d.lease_ms) + " lease). A holder's lease is " +
      "the longest margin this daemon has seen it hold. Margins are as of the store's reading.</p>";
    if (idle.length > 0)
      h += "<p data-k=\"w/idle\">Idle, every worker id free: " + idle.map(function (ns) {
        return ns.name + (ns.listed && ns.disabled ? " (disabled)" : "");
      }).join(", ") + ".</p>";
    s.namespaces.forEach(function (ns) {
      var w = ns.workers, n = ns.name;
      if (ns.kind !== "snowflake") return;
      snowflakes++;
      if (isIdle(ns)) return; /* on the idle line */
      h += "<h3>" + n + "</h3>";
      if (!w) { h += "<p class=\"meta\">Not read yet.</p>"; return; }
      if (w.error !== "") { h += "<p class=\"lv bad\">\u2716 " + esc(w.error) + "</p>"; return; }
      h += "<p data-k=\"w/" + n + "/sum\">" + count(w.held) + " held, " + count(w.resting) +
        " resting, " + count(w.free) + " free; <span class=\"lv " + (w.low > 0 ? "bad" : "ok") +
        "\">" + (w.low > 0 ? "\u2716 " : "") + count(w.low) + " with a low margin</span>. Read " +
        w.read + ".</p>";
      if (w.cells) {
        h += "<div class=\"regions\">";
        w.drawn.forEach(function (g) { h += grid(ns, g); });
        h += "</div>";
        if (w.drawn.length < w.regions)
          h += "<p class=\"meta\">" + count(w.regions - w.drawn.length) +
            " other regions hold no row: all their worker ids are free.</p>";
      } else {
        h += "<p class=\"meta\">" + count(w.ids_per_region) +
          " worker ids per region are too many to draw; the table lists every row.</p>";
      }
      h += workerRows(ns);
    });
    if (snowflakes === 0) h += "<p>No snowflake namespace.</p>";
    return h + "</section>";
  }

  function eventRow(what, key, live) {
    return "<tr><th scope=\"row\">" + what + "</th><td data-k=\"ev/" + key + "\"" +
      (live ? " data-live=\"" + live + "\"" : "") + ">";
  }

  /* The non-zero 429 counts, as status_page.c lists them. */
  function limitedBy(e) {
    var parts = [];
    if (e.rate_limited === "0") return "";
    ["token", "address"].forEach(function (by) {
      ["none", "mint", "generator", "admin"].forEach(function (role) {
        var c = e.rate_limited_by[by][role];
        if (c !== "0") parts.push(by + " bucket, " + role + " caller " + count(c));
      });
    });
    return ": <span data-k=\"ev/rate_limited_by\">" + parts.join("; ") + "</span>";
  }

  function sectionEvents(s) {
    var e = s.events, l = e.store_latency;
    return "<section id=\"s-events\" aria-labelledby=\"h-events\"><h2 id=\"h-events\">Events</h2>" +
      "<div class=\"scroll\"><table><thead><tr><th scope=\"col\">Event</th>" +
      "<th scope=\"col\">Count</th><th scope=\"col\">What it means</th></tr></thead><tbody>" +
      eventRow("Sequence waits", "waits") + event(e.sequence_waits, LEVEL.ok) +
      "</td><td>Mint calls that waited for the next time unit: the sequence bits were used " +
      "up.</td></tr>" +
      eventRow("Range refills", "refills") + event(e.range_refills, LEVEL.ok) +
      "</td><td>New ranges this daemon's range handles reserved.</td></tr>" +
      eventRow("Lease renewals", "renewals", "1") + event(e.renewals, LEVEL.ok) +
      "</td><td>Extensions of this daemon's worker leases.</td></tr>" +
      eventRow("Renewal failures", "failures") +
      event(e.renewal_failures, LEVEL[e.renewal_failures_level]) +
      "</td><td>Leases of this daemon lost or run out.</td></tr>" +
      eventRow("Clock steps back", "backsteps") +
      event(e.clock_backsteps, LEVEL[e.clock_backsteps_level]) +
      "</td><td>Wall-clock steps back seen (minting never goes back with it).</td></tr>" +
      eventRow("Store calls", "store_calls", "store") + count(l.count) +
      "</td><td>Made by the routes and the store sampler.</td></tr>" +
      eventRow("Store latency", "store_latency", "store") + "mean " + count(l.mean_us) +
      " \u00b5s, p50 " + bound(l.p50_le_us) + ", p99 " + bound(l.p99_le_us) +
      "</td><td>From the idmint_store_latency_seconds buckets.</td></tr>" +
      eventRow("Collisions", "collisions") + event(e.collisions, LEVEL[e.collisions_level]) +
      "</td><td>Duplicates reported to this daemon through POST /v1/collisions since it " +
      "started.</td></tr>" +
      eventRow("Rate-limited requests", "rate_limited") +
      event(e.rate_limited, LEVEL[e.rate_limited_level]) +
      "</td><td>Requests answered 429 by a [limits] rate since start" + limitedBy(e) + "." +
      (e.limits_set ? "" : " No request rate is set in [limits]: only new keys and collision " +
        "reports are limited.") +
      "</td></tr></tbody></table></div></section>";
  }

  function sectionAudit(s) {
    var a = s.audit, h = "<section id=\"s-audit\" aria-labelledby=\"h-audit\"><h2 id=\"h-audit\">" +
      "Last " + AUDIT_TAIL + " audit records</h2>";
    if (!a.shown)
      return h + "<p class=\"meta\" data-k=\"audit\">The audit log needs the admin role.</p></section>";
    if (!a.entries)
      return h + "<p class=\"meta\" data-k=\"audit\">Not read yet.</p></section>";
    if (a.error !== "") h += "<p class=\"lv bad\" data-k=\"audit\">\u2716 " + esc(a.error) + "</p>";
    h += "<div class=\"scroll\"><table><thead><tr><th scope=\"col\">Seq</th>" +
      "<th scope=\"col\">Time</th><th scope=\"col\">Actor</th><th scope=\"col\">Action</th>" +
      "<th scope=\"col\">Namespace</th><th scope=\"col\">Detail</th></tr></thead><tbody>";
    a.entries.forEach(function (e, i) {
      h += "<tr><td data-k=\"audit/" + i + "\">" + e.seq + "</td><td>" + e.time + "</td><td>" +
        esc(e.actor) + "</td><td>" + esc(e.action) + "</td><td>" + esc(e.namespace) +
        "</td><td class=\"detail\" data-k=\"audit/" + i + "/detail\">" + esc(e.detail_iso) +
        "</td></tr>";
    });
    if (a.entries.length === 0) h += "<tr><td colspan=\"6\">No audit records yet.</td></tr>";
    return h + "</tbody></table></div></section>";
  }

  function render(s) {
    document.getElementById("main").innerHTML = sectionReady(s) + sectionNamespaces(s) +
      sectionMint(s) + sectionWorkers(s) + sectionEvents(s) + sectionAudit(s);
  }

  function note(text) {
    document.getElementById("refresh").textContent = text;
  }

  /* One fetch and redraw; resolves with the figures drawn (tests await it). */
  function refresh() {
    return fetch("v1/status", { cache: "no-store", credentials: "same-origin" })
      .then(function (r) {
        if (!r.ok) throw new Error("GET /v1/status answered " + r.status);
        return r.json();
      })
      .then(function (s) {
        render(s);
        refreshes++;
        document.body.setAttribute("data-refreshes", String(refreshes));
        note("Live: refreshed " + s.daemon.now + ", every " + REFRESH_MS / 1000 + " s.");
        return s;
      }, function (err) {
        note("\u2716 Refresh failed (" + err.message + "); the figures below are older.");
        throw err;
      });
  }

  window.idmintStatus = { refresh: refresh, render: render };
  function loop() {
    refresh().catch(function () { /* shown in the note; try again */ })
      .then(function () { setTimeout(loop, REFRESH_MS); });
  }
  loop();
}());
