#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# GET /status in headless Chromium against a real idmintd: namespaces of
# every kind (snowflake with regions, range, disabled), IDs minted through
# GET /v1/ids and by library processes over http://, then, with minting
# paused, the page's figures (drawn by the server without the script, and by
# the script from /v1/status) must equal /v1/status and /metrics read in the
# same quiet moment. The page may fetch nothing but the daemon; both routes
# refuse callers without the right token; screenshots at 1280x800 and
# 390x844 go to the build dir. Chromium missing is a failure, never a skip.

import json
import os
import re
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import chromium_cdp as C  # noqa: E402
import daemon_harness as H  # noqa: E402

IDMINTD, IDMINT = H.usage_paths()
S = H.Suite("status")
SHOTS = os.environ.get("IDMINT_STATUS_SHOTS") or os.path.join(os.path.dirname(IDMINTD),
                                                              "status-page")
READY_MARGIN_MS = 30000
CONFIG = ("[mint]\nlease_ms = 120000\nrenew_ms = 60000\nready_margin_ms = %d\n"
          % READY_MARGIN_MS)
LOW_HOLDER = "10" * 16     # a lease shorter than the readiness threshold
RESTING_HOLDER = "20" * 16  # taken, then forced away: E stays ahead
MARK = {"ok": "", "warn": "\u25b2 ", "bad": "\u2716 "}
TOKENS = {"ops": ("admin", "adm-5b0e7d2c9a4f4e1b8c3d6a7f0e9b2c41"),
          "shop": ("mint", "mnt-3c1d9e8f7a6b5c4d3e2f1a0b9c8d7e6f")}


class Ctx:
    procs = []


# ==== the formats of the page (status_page.c, status.js), as the oracle ====

def count(v):
    return "{:,}".format(int(v))


def permille(p):
    return "%d.%d%%" % (p // 10, p % 10)


def secs(ms):
    a = abs(ms)
    return "%s%d.%d s" % ("-" if ms < 0 else "", a // 1000, a % 1000 // 100)


def bound(us):
    if us is None:
        return "> 1 s"
    if us < 1000:
        return "\u2264 %d \u00b5s" % us
    if us < 1000000:
        return "\u2264 %d ms" % (us // 1000)
    return "\u2264 %d s" % (us // 1000000)


def event(v, level="ok"):
    return MARK[level] + count(v) + (" (none yet)" if v == "0" else "")


def expected_figures(s):
    """data-k -> text the page must show for /v1/status answer @s (live figures left out)."""
    d, st, e = s["daemon"], s["store"], s["events"]
    out = {}
    if d["ready"]:
        out["ready"] = ("\u2714 Ready: every lease this daemon mints under has more than %s left."
                        % secs(d["ready_margin_ms"]))
    else:
        out["ready"] = "\u2716 Not ready: " + d["ready_reason"]
    if st["level"] != "ok":
        out["store"] = MARK[st["level"]] + st["problem"]
    out["store/read"] = st["read"] if st["sampled"] else "never"
    for ns in s["namespaces"]:
        n = ns["name"]
        if ns["kind"] == "snowflake":
            out["ns/%s/runs_out" % n] = ns["time_runs_out"][:10] if "time_runs_out" in ns else "\u2014"
            out["ns/%s/used" % n] = MARK[ns["lifetime_level"]] + permille(ns["lifetime_used_permille"])
        out["ns/%s/state" % n] = ("\u25b2 not read yet" if not ns["listed"] else
                                  "\u25b2 disabled" if ns["disabled"] else "enabled")
        if ns["kind"] == "range" and ns["listed"]:
            out["ns/%s/left" % n] = "%s%s (%s)" % (MARK[ns["left_level"]], count(ns["values_left"]),
                                                   permille(ns["left_permille"]))
        h = ns["handle"]
        if h is not None:
            if not h["usable"]:
                out["h/%s/worker" % n] = "\u2716 handle unusable"
            elif ns["kind"] == "range":
                out["h/%s/worker" % n] = "\u2014"
            else:
                out["h/%s/worker" % n] = "region %d, worker %d" % (h["region"], h["worker_id"])
            out["h/%s/ids" % n] = count(h["ids_issued"])
            out["h/%s/waits" % n] = (count(h["sequence_waits"]) if ns["kind"] == "snowflake"
                                     and h["usable"] else "\u2014")
            out["h/%s/left" % n] = (count(h["range_left"]) if ns["kind"] == "range"
                                    and h["usable"] else "\u2014")
            out["rate/%s/total" % n] = count(h["window_total"])
            out["rate/%s/peak" % n] = count(h["peak_per_s"])
            out["rate/%s/last" % n] = count(h["last_per_s"])
        w = ns.get("workers")
        if ns["kind"] == "snowflake" and w and w["error"] == "":
            out["w/%s/sum" % n] = "%s held, %s resting, %s free; %s%s with a low margin. Read %s." % (
                count(w["held"]), count(w["resting"]), count(w["free"]),
                "\u2716 " if w["low"] > 0 else "", count(w["low"]), w["read"])
            for r in w["rows"]:
                if r["state"] == "free":
                    continue
                key = "w/%s/%d/%d/" % (n, r["region"], r["worker_id"])
                out[key + "state"] = r["state"]
                if r["state"] == "resting":
                    out[key + "margin"] = "free in " + secs(r["margin_ms"])
                elif r["low"]:
                    out[key + "margin"] = "\u2716 %s, at most %s" % (secs(r["margin_ms"]),
                                                                  secs(d["ready_margin_ms"]))
                else:
                    out[key + "margin"] = secs(r["margin_ms"])
    out["ev/waits"] = event(e["sequence_waits"])
    out["ev/refills"] = event(e["range_refills"])
    out["ev/failures"] = event(e["renewal_failures"], e["renewal_failures_level"])
    out["ev/backsteps"] = event(e["clock_backsteps"], e["clock_backsteps_level"])
    lat = e["store_latency"]
    out["ev/store_calls"] = count(lat["count"])
    out["ev/store_latency"] = "mean %s \u00b5s, p50 %s, p99 %s" % (
        count(lat["mean_us"]), bound(lat["p50_le_us"]), bound(lat["p99_le_us"]))
    out["ev/collisions"] = "not counted yet"
    out["ev/rate_limited"] = "not counted yet"
    a = s["audit"]
    if not a["shown"]:
        out["audit"] = "The audit log needs the admin role."
    elif "entries" not in a:
        out["audit"] = "Not read yet."
    else:
        if a["error"]:
            out["audit"] = "\u2716 " + a["error"]
        for i, entry in enumerate(a["entries"]):
            out["audit/%d" % i] = str(entry["seq"])
    return out


# ==== /metrics ====

def metrics(d):
    """{(name, ((label, value), ...)): float} of one scrape."""
    out = {}
    for line in d.get("/metrics").text.splitlines():
        m = re.match(r'^([a-z_]+)(?:\{(.*)\})? (\S+)$', line)
        if m:
            labels = tuple(sorted(re.findall(r'([a-z_]+)="([^"]*)"', m.group(2) or "")))
            out[(m.group(1), labels)] = float(m.group(3))
    return out


def metric(m, name, **labels):
    return m.get((name, tuple(sorted(labels.items()))))


def quantile_le_us(m, name, pct):
    """The bound (µs; None: +Inf) of the bucket holding quantile @pct %, as status.c picks it."""
    buckets = sorted((float(dict(k[1])["le"]), v) for k, v in m.items()
                     if k[0] == name + "_bucket" and dict(k[1])["le"] != "+Inf")
    total = metric(m, name + "_count")
    want = (int(total) * pct + 99) // 100
    if total == 0:
        return int(round(buckets[0][0] * 1e6))
    for le, cum in buckets:
        if cum >= want:
            return int(round(le * 1e6))
    return None


# ==== setup ====

def status(d, **kw):
    r = d.get("/v1/status", **kw)
    return S.json_ok(r, 200, "GET /v1/status")


def take(d, region, holder, lease_ms):
    r = d.post("/internal/workers/lease", {"op": "take", "namespace": "orders", "region": region,
                                           "holder": holder, "lease_ms": lease_ms})
    return S.json_ok(r, 200, "take a worker id of orders region %d" % region)


def setup(d):
    for body in ({"name": "orders", "kind": "snowflake", "layout": "41/2/6/14"},
                 {"name": "invoices", "kind": "range", "start": "1", "max": "1000000",
                  "block": 100, "max_block": 1000},
                 {"name": "legacy", "kind": "snowflake"}):
        S.json_ok(d.post("/v1/namespaces", body), 201, "create %s" % body["name"])
    S.json_ok(d.post("/v1/namespaces/legacy/disable"), 200, "disable legacy")
    for _ in range(3):
        S.json_ok(d.get("/v1/ids?namespace=orders&count=1000"), 200, "mint 1000 from orders")
    for _ in range(5):
        S.json_ok(d.get("/v1/ids?namespace=invoices&count=50"), 200, "mint 50 from invoices")
    url = "http://127.0.0.1:%d" % d.port
    # Library processes that keep their lease: stdout is a pipe nobody reads,
    # so each blocks once it is full, holding its worker id and minting
    # nothing more (a paused minter). Long leases: no renewal in the test.
    for region in (1, 2):
        Ctx.procs.append(subprocess.Popen(
            [IDMINT, "mint", "-n", "100000000", "--ns", "orders", "--authority", url,
             "--region", str(region), "--lease", "600"],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            env=H.clean_env()))
    p = subprocess.run([IDMINT, "mint", "-n", "20", "--ns", "invoices", "--authority", url],
                       capture_output=True, text=True, timeout=30 * H.SCALE, env=H.clean_env())
    S.ok(p.returncode == 0 and len(p.stdout.split()) == 20,
         "idmint mint over http:// reserves a range and mints 20", "rc %d, %r" % (
             p.returncode, H.snip(p.stderr)))

    def held_by_processes():
        j = d.get("/v1/namespaces/orders/workers").json() or {}
        regions = {w["region"] for w in j.get("workers", []) if w["holder"]}
        return {1, 2} <= regions
    S.ok(H.wait_for(held_by_processes, 20), "both library processes hold a worker id of orders")
    lease = take(d, 3, RESTING_HOLDER, 300000)
    if lease:
        S.json_ok(d.post("/internal/workers/lease", {"op": "force_release", "namespace": "orders",
                                                     "region": 3,
                                                     "worker_id": lease["worker_id"]}),
                  200, "force the region 3 lease away (it rests until its E)")
    take(d, 0, LOW_HOLDER, READY_MARGIN_MS - 2000)


def settled(d):
    """/v1/status once the sampler has read everything set up and the history caught up."""
    why = ["no answer yet"]

    def ready():
        if not d.alive():
            why[0] = "idmintd exited with %s" % d.proc.returncode
            return "dead"
        r = d.get("/v1/status")
        s = r.json() or {}
        if not s.get("store", {}).get("full"):
            why[0] = "no full pass yet: %s" % r.show()
            return None
        by = {ns["name"]: ns for ns in s.get("namespaces", [])}
        w = (by.get("orders") or {}).get("workers") or {}
        has = {(x["region"], x["state"], x["low"]) for x in w.get("rows") or []}
        want = {(1, "held", False), (2, "held", False), (3, "resting", False), (0, "held", True)}
        if not want <= has:
            why[0] = "orders rows %s, want %s" % (sorted(has), sorted(want))
            return None
        for ns in by.values():
            h = ns.get("handle")
            # A second has passed since the last mint: the history holds still.
            if h and (int(h["window_total"]) != int(h["ids_issued"]) or h["last_per_s"] != 0):
                why[0] = "%s: history %s of %s, last second %s" % (
                    ns["name"], h["window_total"], h["ids_issued"], h["last_per_s"])
                return None
        if s["events"]["range_refills"] == "0":
            why[0] = "the 1 s tick has not seen the range refill yet"
            return None
        return s
    s = H.wait_for(ready, 20, interval=0.3)
    if s == "dead":
        s = None
    S.ok(s is not None, "the sampler read every row set up and the history caught up",
         "%s; daemon log: %s" % (why[0], H.snip(d.log()[-1500:], 1500)))
    return s


# ==== checks ====

def same_moment(a, b):
    """Nothing moved between two /v1/status answers but the clock."""
    return (a["store"]["read_ms"] == b["store"]["read_ms"]
            and a["events"]["store_latency"] == b["events"]["store_latency"]
            and a["events"]["renewals"] == b["events"]["renewals"]
            and [n.get("handle", {}) and n["handle"]["ids_issued"] for n in a["namespaces"]]
            == [n.get("handle", {}) and n["handle"]["ids_issued"] for n in b["namespaces"]])


def test_json_matches_metrics(d):
    for _ in range(10):
        s1, m, s2 = status(d), metrics(d), status(d)
        if s1 and s2 and same_moment(s1, s2):
            break
    else:
        S.ok(False, "a quiet moment to compare /v1/status and /metrics", "none in 10 tries")
        return
    by = {ns["name"]: ns for ns in s1["namespaces"]}
    for ns in s1["namespaces"]:
        h, n = ns["handle"], ns["name"]
        if h is None:
            continue
        S.ok(float(h["ids_issued"]) == metric(m, "idmint_ids_issued_total", namespace=n),
             "%s: ids_issued equals idmint_ids_issued_total" % n,
             "%s vs %s" % (h["ids_issued"], metric(m, "idmint_ids_issued_total", namespace=n)))
        S.ok(sum(h["per_s"]) == int(h["window_total"]) == int(h["ids_issued"]),
             "%s: the per-second history adds up to every ID minted" % n,
             "sum %d, window %s, issued %s" % (sum(h["per_s"]), h["window_total"], h["ids_issued"]))
        S.ok(len(h["per_s"]) == 600, "%s: 600 seconds of history" % n, str(len(h["per_s"])))
        if ns["kind"] == "snowflake":
            S.ok(float(h["sequence_waits"]) == metric(m, "idmint_sequence_waits_total", namespace=n),
                 "%s: sequence waits equal /metrics" % n, "")
            g = [r for r in ns["workers"]["drawn"] if r["region"] == s1["daemon"]["region"]][0]
            S.ok(h["workers_free"] == metric(m, "idmint_workers_free", namespace=n)
                 == g["free"] + g["resting"],
                 "%s: workers_free equals /metrics and the grid's free + resting" % n,
                 "%s, %s, %s" % (h["workers_free"], metric(m, "idmint_workers_free", namespace=n),
                                 g))
        else:
            S.ok(float(h["range_left"]) == metric(m, "idmint_range_ids_left", namespace=n),
                 "%s: range_left equals idmint_range_ids_left" % n, "")
    e = s1["events"]
    for key, name in (("range_refills", "idmint_range_refills_total"),
                      ("renewals", "idmint_lease_renewals_total"),
                      ("renewal_failures", "idmint_lease_renewal_failures_total"),
                      ("clock_backsteps", "idmint_clock_backsteps_total")):
        S.ok(float(e[key]) == metric(m, name), "%s equals %s" % (key, name),
             "%s vs %s" % (e[key], metric(m, name)))
    S.ok(int(e["range_refills"]) > 0, "the range handle refilled (250 minted, blocks of 100)",
         e["range_refills"])
    S.ok(float(e["sequence_waits"]) == sum(v for k, v in m.items()
                                           if k[0] == "idmint_sequence_waits_total"),
         "sequence waits add up over the namespaces", "")
    lat, name = e["store_latency"], "idmint_store_latency_seconds"
    S.ok(float(lat["count"]) == metric(m, name + "_count"), "store calls equal the histogram count",
         "%s vs %s" % (lat["count"], metric(m, name + "_count")))
    S.ok(abs(int(lat["sum_ns"]) / 1e9 - metric(m, name + "_sum")) < 1e-9 * 2,
         "store latency sum equals the histogram sum", "")
    for pct, key in ((50, "p50_le_us"), (99, "p99_le_us")):
        S.ok(lat[key] == quantile_le_us(m, name, pct), "%s agrees with the buckets" % key,
             "%s vs %s" % (lat[key], quantile_le_us(m, name, pct)))
    S.ok(e["collisions"] is None and e["rate_limited"] is None,
         "collisions and rate limits are null (not counted), never 0", repr(e))
    # Outside the quiet moment: the direct reads go through the store.
    listed = d.get("/v1/namespaces").json()["namespaces"]
    S.ok(sorted(by) == sorted(x["name"] for x in listed), "every namespace is on the status",
         "%s vs %s" % (sorted(by), [x["name"] for x in listed]))
    for x in listed:
        ns = by.get(x["name"], {})
        S.ok(ns.get("disabled") == x["disabled"], "%s: disabled as the store says" % x["name"], "")
        if x["kind"] == "range":
            left = int(x["max_value"]) - int(x["next_value"]) + 1
            S.ok(ns.get("values_left") == str(left) and ns.get("next_value") == x["next_value"],
                 "%s: values left = max - next + 1" % x["name"], repr(ns))
        else:
            span = ns["time_runs_out_ms"] - ns["epoch_ms"]
            want = 1000 * (s1["daemon"]["now_ms"] - ns["epoch_ms"]) // span
            S.ok(ns["lifetime_used_permille"] == want and ns["time_runs_out"] == x["time_runs_out"],
                 "%s: lifetime used and its end" % x["name"], repr(ns)[:300])
    S.ok(by["legacy"]["disabled"] is True, "legacy shows disabled", "")
    rows = {(w["region"], w["worker_id"]): w for w in by["orders"]["workers"]["rows"]}
    direct = d.get("/v1/namespaces/orders/workers").json()["workers"]
    S.ok(sorted(rows) == sorted((w["region"], w["worker_id"]) for w in direct)
         and all(rows[(w["region"], w["worker_id"])]["holder"] == w["holder"]
                 and rows[(w["region"], w["worker_id"])]["generation"] == w["generation"]
                 for w in direct),
         "orders: the grid's rows are the store's", "%s vs %s" % (rows, direct))
    low = [r for r in rows.values() if r["low"]]
    S.ok(len(low) == 1 and low[0]["region"] == 0 and low[0]["holder"] == LOW_HOLDER[:8]
         and low[0]["margin_ms"] <= READY_MARGIN_MS,
         "the one lease under the readiness threshold is flagged low", repr(low))
    S.ok(by["orders"]["workers"]["regions"] == 4 and len(by["orders"]["workers"]["drawn"]) == 4,
         "orders: all 4 regions drawn", "")
    audit = d.get("/v1/audit?limit=1000").json()["entries"]
    want = [a["seq"] for a in audit][::-1][:20]
    S.ok([a["seq"] for a in s1["audit"]["entries"]] == want,
         "the status shows the last 20 audit records, newest first",
         "%s vs %s" % ([a["seq"] for a in s1["audit"]["entries"]], want))


FIGURES_JS = """(function () {
  var m = {};
  document.querySelectorAll('[data-k]').forEach(function (e) {
    if (e.getAttribute('data-live') !== '1') m[e.getAttribute('data-k')] = e.textContent;
  });
  return m;
})()"""

A11Y_JS = r"""(function () {
  var bad = [];
  function rgb(c) { var v = c.match(/[\d.]+/g).map(Number); return {r: v[0], g: v[1], b: v[2],
    a: v.length > 3 ? v[3] : 1}; }
  function lum(c) { return [c.r, c.g, c.b].map(function (x) { x /= 255;
    return x <= 0.03928 ? x / 12.92 : Math.pow((x + 0.055) / 1.055, 2.4); })
    .reduce(function (s, x, i) { return s + x * [0.2126, 0.7152, 0.0722][i]; }, 0); }
  function bg(e) { for (; e; e = e.parentElement) { var c = rgb(getComputedStyle(e).backgroundColor);
    if (c.a > 0) return c; } return {r: 255, g: 255, b: 255, a: 1}; }
  document.querySelectorAll('body *').forEach(function (e) {
    var own = Array.prototype.some.call(e.childNodes, function (n) {
      return n.nodeType === 3 && n.textContent.trim() !== ''; });
    if (!own || e.closest('script,style,noscript')) return;
    var f = lum(rgb(getComputedStyle(e).color)), b = lum(bg(e));
    var ratio = (Math.max(f, b) + 0.05) / (Math.min(f, b) + 0.05);
    if (ratio < 4.5) bad.push('contrast ' + ratio.toFixed(2) + ': ' + e.tagName + '.' +
      e.className + ' "' + e.textContent.trim().slice(0, 40) + '"');
  });
  if (document.documentElement.lang !== 'en') bad.push('no lang');
  if (document.querySelectorAll('h1').length !== 1) bad.push('not one h1');
  document.querySelectorAll('section').forEach(function (s) {
    var id = s.getAttribute('aria-labelledby');
    if (!id || !document.getElementById(id) || !/^H2$/.test(document.getElementById(id).tagName))
      bad.push('section without its h2: ' + s.id);
  });
  document.querySelectorAll('table').forEach(function (t) {
    if (!t.querySelector('thead th[scope=col]')) bad.push('table without column headers');
  });
  document.querySelectorAll('[role=img], meter').forEach(function (e) {
    if (!e.getAttribute('aria-label')) bad.push(e.tagName + ' without aria-label');
  });
  document.querySelectorAll('.lv.bad, .lv.warn, .banner.bad, .banner.warn').forEach(function (e) {
    if (!/^[\u2716\u25b2]/.test(e.textContent.trim()))
      bad.push('a warning only in colour: "' + e.textContent.trim().slice(0, 60) + '"');
  });
  var marks = {'c h': 'H', 'c h low': '!', 'c r': 'r', 'c f': ''};
  document.querySelectorAll('.grid .c').forEach(function (e) {
    if (marks[e.className] !== e.textContent) bad.push('cell ' + e.className + ' shows "' +
      e.textContent + '"');
  });
  return {problems: bad, low: document.querySelectorAll('.grid .c.low').length,
    held: document.querySelectorAll('.grid .c.h').length,
    resting: document.querySelectorAll('.grid .c.r').length,
    width: document.documentElement.scrollWidth};
})()"""


def compare(what, got, want):
    missing = sorted(set(want) - set(got))
    extra = sorted(set(got) - set(want))
    wrong = ["%s: page %r, expected %r" % (k, got[k], want[k]) for k in sorted(want)
             if k in got and got[k] != want[k]]
    S.ok(not missing and not extra and not wrong, what,
         "missing %s; unexpected %s; %s" % (missing, extra, "; ".join(wrong[:12])))


def test_page(d, b):
    base = "http://127.0.0.1:%d" % d.port
    b.viewport(1280, 800)
    for attempt in range(8):
        s1 = status(d)
        b.scripts(False)
        b.navigate(base + "/status")
        plain = b.evaluate(FIGURES_JS)
        ran = b.evaluate("document.body.getAttribute('data-refreshes')")
        b.scripts(True)
        b.navigate(base + "/status")
        n = b.evaluate("window.idmintStatus.refresh().then(function () {"
                       " return document.body.getAttribute('data-refreshes'); })", True)
        live = b.evaluate(FIGURES_JS)
        s2 = status(d)
        if s1 and s2 and same_moment(s1, s2):
            break
    else:
        S.ok(False, "a quiet moment to compare the page with /v1/status", "none in 8 tries")
        return
    S.ok(ran is None, "without the script nothing redraws the page", repr(ran))
    S.ok(n is not None and int(n) >= 1, "the script redrew the page from /v1/status", repr(n))
    want = expected_figures(s1)
    compare("without the script, the page shows the figures of /v1/status", plain, want)
    compare("after the script's refresh, the page shows the figures of /v1/status", live, want)
    S.ok(plain == live, "the server's page and the script's redraw show the same figures", "")
    m = metrics(d)
    for ns in s1["namespaces"]:
        if ns["handle"]:
            n = ns["name"]
            S.ok(live.get("h/%s/ids" % n) == count(metric(m, "idmint_ids_issued_total",
                                                          namespace=n)),
                 "%s: the page's IDs issued equal /metrics" % n, repr(live.get("h/%s/ids" % n)))
    S.ok(live.get("ev/store_calls") == count(metric(m, "idmint_store_latency_seconds_count")),
         "the page's store calls equal /metrics", repr(live.get("ev/store_calls")))
    a = b.evaluate(A11Y_JS)
    S.ok(not a["problems"], "basic accessibility: contrast, headings, headers, labels, "
         "not by colour alone", "; ".join(a["problems"][:10]))
    S.ok(a["low"] == 1 and a["resting"] == 1 and a["held"] >= 3,
         "the grid shows the low-margin lease with '!', the resting id with 'r'", repr(a))
    os.makedirs(SHOTS, exist_ok=True)
    b.screenshot(os.path.join(SHOTS, "status-1280x800.png"))
    b.screenshot(os.path.join(SHOTS, "status-1280-full.png"), full_page=True)
    S.ok(a["width"] <= 1280, "no sideways scrolling at 1280 px", str(a["width"]))
    b.viewport(390, 844, mobile=True)
    b.navigate(base + "/status")
    b.evaluate("window.idmintStatus.refresh()", True)
    a = b.evaluate(A11Y_JS)
    S.ok(a["width"] <= 390, "no sideways scrolling at 390 px (tables become cards)",
         str(a["width"]))
    S.ok(not a["problems"], "basic accessibility at 390 px", "; ".join(a["problems"][:10]))
    b.screenshot(os.path.join(SHOTS, "status-390x844.png"))
    b.screenshot(os.path.join(SHOTS, "status-390-full.png"), full_page=True)
    for name in ("status-1280x800.png", "status-390x844.png"):
        path = os.path.join(SHOTS, name)
        S.ok(os.path.getsize(path) > 10000, "screenshot %s saved" % path, "")
    own = re.compile(r"^http://127\.0\.0\.1:%d/" % d.port)
    urls = b.requested_urls()
    stray = [u for u in urls if not own.match(u) and not u.startswith(("data:", "about:"))]
    S.ok(urls and not stray, "every request of the page goes to the daemon (%d seen)" % len(urls),
         "others: %s" % stray)
    S.ok(any(u.endswith("/v1/status") for u in urls), "the script fetched /v1/status", repr(urls))
    S.ok(not b.problems(), "no script error, no refused content (CSP) in the browser",
         "; ".join(b.problems()[:5]))


def test_tokens():
    d = S.daemon(IDMINTD, config=H.tokens_config(TOKENS))
    admin, mint = TOKENS["ops"][1], TOKENS["shop"][1]
    for path in ("/status", "/v1/status"):
        S.error(d.get(path), 401, "unauthenticated", "%s without a token" % path)
        S.error(d.get(path, token="not-a-token"), 401, "unauthenticated",
                "%s with an unknown token" % path)
        S.status(d.get(path, token=mint), 200, "%s with a mint token" % path)
    j = S.json_ok(d.get("/v1/status", token=mint), 200, "GET /v1/status as mint")
    S.ok(j and j["audit"]["shown"] is False and "entries" not in j["audit"],
         "a mint token sees no audit record (GET /v1/audit is admin)", repr(j and j["audit"]))
    page = d.get("/status", token=mint).text
    S.ok("The audit log needs the admin role." in page, "the page says the audit log needs admin",
         "")
    j = S.json_ok(d.get("/v1/status", token=admin), 200, "GET /v1/status as admin")
    S.ok(j and j["audit"]["shown"] is True, "an admin token sees the audit tail", "")
    r = d.get("/status", token=mint)
    csp = r.header("content-security-policy") or ""
    S.ok("default-src 'none'" in csp and "connect-src 'self'" in csp and "unsafe" not in csp,
         "the page forbids every other origin and inline code but its own", csp)
    S.ok((r.header("content-type") or "").startswith("text/html"), "the page is text/html", "")
    S.stop_daemon(d, "token daemon: SIGTERM exits 0")


def main():
    t0 = time.monotonic()
    binary = C.find_chromium()
    if not S.ok(binary is not None, "Chromium is installed (scripts/deps.sh installs Debian's "
                "chromium)", "none of %s; set IDMINT_CHROMIUM" % (C.CHROMIUM_CANDIDATES,)):
        S.finish()
    d = S.daemon(IDMINTD, config=CONFIG)
    b = None
    try:
        S.run("setup", setup, d)
        if settled(d) is None:
            S.finish()
        S.run("JSON and /metrics", test_json_matches_metrics, d)
        t1 = time.monotonic()
        b = C.Browser(binary, timeout_s=30 * H.SCALE)
        S.run("page", test_page, d, b)
        print("note: browser part %.1f s" % (time.monotonic() - t1), flush=True)
    finally:
        if b is not None:
            b.close()
        for p in Ctx.procs:
            p.kill()
            p.wait()
    S.stop_daemon(d, "SIGTERM exits 0")
    S.run("tokens", test_tokens)
    print("note: screenshots in %s; whole test %.1f s" % (SHOTS, time.monotonic() - t0),
          flush=True)
    S.finish()


if __name__ == "__main__":
    main()
