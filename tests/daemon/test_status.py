#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# GET /status in headless Chromium against a real idmintd: namespaces of
# every kind (snowflake with regions, range, disabled, idle), IDs minted
# through GET /v1/ids and by library processes over http:// (30 s leases,
# shorter than the daemon's readiness margin), a collision reported, then,
# with minting paused, the page's figures (drawn by the server without the
# script, and by the script from /v1/status) must equal /v1/status and
# /metrics read in the same quiet moment. Every figure the daemon has is
# there (collisions, 429s, the resolved authority); each holder is judged
# against its own lease; idle namespaces are one line, not grids; audit
# details show ISO-8601 beside raw time units. The page may fetch nothing
# but the daemon; both routes refuse callers without the right token;
# screenshots at 1280x800 and 390x844 go to the build dir. Chromium missing
# is a failure, never a skip.

import datetime

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
LEASE_MS = 120000
READY_MARGIN_MS = 60000  # half the lease: a holder is low with half its own lease left
CONFIG = ("[mint]\nlease_ms = %d\nrenew_ms = 20000\nready_margin_ms = %d\n"
          % (LEASE_MS, READY_MARGIN_MS))
LIB_LEASE_S, LIB_RENEW_S = 30, 5  # healthy library processes: margins 25..30 s, under 60 s
LOW_HOLDER = "10" * 16     # takes a lease and never renews it: it runs down to low
LOW_LEASE_MS = int(30000 * H.SCALE)
RESTING_HOLDER = "20" * 16  # taken, then forced away: E stays ahead
MARK = {"ok": "", "warn": "\u25b2 ", "bad": "\u2716 "}
TOKENS = {"ops": ("admin", "adm-5b0e7d2c9a4f4e1b8c3d6a7f0e9b2c41"),
          "shop": ("mint", "mnt-3c1d9e8f7a6b5c4d3e2f1a0b9c8d7e6f"),
          "gen": ("generator", "gen-7a1b2c3d4e5f60718293a4b5c6d7e8f9")}


class Ctx:
    procs = []
    low_worker = None  # the LOW_HOLDER's worker id in region 0


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


def iso(ms):
    t = datetime.datetime.fromtimestamp(ms // 1000, datetime.timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%S") + ".%03dZ" % (ms % 1000)


def spelled(detail, ns):
    """@detail with each time as ISO-8601 and the raw figure beside it (status.c's rule):
    e_before, e_after and a snowflake fence's floor in @ns's time units; observed_ms and
    epoch_ms in Unix ms."""
    snowflake = ns is not None and ns["kind"] == "snowflake"
    out = []
    for tok in detail.split(" "):
        key, eq, val = tok.partition("=")
        is_ms = key in ("observed_ms", "epoch_ms")
        if eq and (is_ms or (snowflake and key in ("e_before", "e_after", "floor"))):
            def one(m, key=key):
                v = int(m.group(0))
                ms = v if key in ("observed_ms", "epoch_ms") else ns["epoch_ms"] + v * ns["unit_ms"]
                return "%s (%s)" % (iso(ms), m.group(0))
            tok = key + "=" + re.sub(r"\d+", one, val)
        out.append(tok)
    return " ".join(out)


def is_idle(ns):
    w = ns.get("workers")
    return ns["kind"] == "snowflake" and bool(w) and w["error"] == "" and w.get("idle") is True


def limited_by(e):
    parts = ["%s bucket, %s caller %s" % (by, role, count(e["rate_limited_by"][by][role]))
             for by in ("token", "address") for role in ("none", "mint", "generator", "admin")
             if e["rate_limited_by"][by][role] != "0"]
    return "; ".join(parts)


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
    out["authority"] = d.get("authority")
    idle = [ns["name"] + (" (disabled)" if ns["listed"] and ns["disabled"] else "")
            for ns in s["namespaces"] if is_idle(ns)]
    if idle:
        out["w/idle"] = "Idle, every worker id free: %s." % ", ".join(idle)
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
        if ns["kind"] == "snowflake" and w and w["error"] == "" and not is_idle(ns):
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
                    out[key + "margin"] = "\u2716 %s, at most %s of its %s lease" % (
                        secs(r["margin_ms"]), secs(r.get("low_ms", 0)), secs(r.get("lease_ms", 0)))
                else:
                    out[key + "margin"] = "%s of its %s lease" % (secs(r["margin_ms"]),
                                                                   secs(r.get("lease_ms", 0)))
    out["ev/waits"] = event(e["sequence_waits"])
    out["ev/refills"] = event(e["range_refills"])
    out["ev/failures"] = event(e["renewal_failures"], e["renewal_failures_level"])
    out["ev/backsteps"] = event(e["clock_backsteps"], e["clock_backsteps_level"])
    lat = e["store_latency"]
    out["ev/store_calls"] = count(lat["count"])
    out["ev/store_latency"] = "mean %s \u00b5s, p50 %s, p99 %s" % (
        count(lat["mean_us"]), bound(lat["p50_le_us"]), bound(lat["p99_le_us"]))
    for key in ("collisions", "rate_limited"):
        out["ev/" + key] = (event(e[key], e[key + "_level"]) if e.get(key) is not None
                            else "(no figure in /v1/status)")
    if e.get("rate_limited") not in (None, "0"):
        out["ev/rate_limited_by"] = limited_by(e)
    a = s["audit"]
    if not a["shown"]:
        out["audit"] = "The audit log needs the admin role."
    elif "entries" not in a:
        out["audit"] = "Not read yet."
    else:
        if a["error"]:
            out["audit"] = "\u2716 " + a["error"]
        by = {ns["name"]: ns for ns in s["namespaces"]}
        for i, entry in enumerate(a["entries"]):
            out["audit/%d" % i] = str(entry["seq"])
            out["audit/%d/detail" % i] = spelled(entry["detail"], by.get(entry["namespace"]))
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
                 {"name": "legacy", "kind": "snowflake"},
                 {"name": "spare", "kind": "snowflake"}):
        S.json_ok(d.post("/v1/namespaces", body), 201, "create %s" % body["name"])
    S.json_ok(d.post("/v1/namespaces/legacy/disable"), 200, "disable legacy")
    minted = []
    for _ in range(3):
        j = S.json_ok(d.get("/v1/ids?namespace=orders&count=1000"), 200, "mint 1000 from orders")
        minted += (j or {}).get("ids", [])
    if minted:
        S.json_ok(d.post("/v1/collisions", {"namespace": "orders", "id": str(minted[0]),
                                            "note": "status test"}),
                  201, "report a collision of an orders ID")
    for _ in range(5):
        S.json_ok(d.get("/v1/ids?namespace=invoices&count=50"), 200, "mint 50 from invoices")
    url = "http://127.0.0.1:%d" % d.port
    # Library processes that keep their lease: stdout is a pipe nobody reads,
    # so each blocks once it is full, holding its worker id and minting
    # nothing more (a paused minter) while its renewal thread goes on. Their
    # 30 s leases are healthy, and shorter than the daemon's readiness margin.
    for region in (1, 2):
        Ctx.procs.append(subprocess.Popen(
            [IDMINT, "mint", "-n", "100000000", "--ns", "orders", "--authority", url,
             "--region", str(region), "--lease", str(LIB_LEASE_S), "--renew", str(LIB_RENEW_S)],
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
    lease = take(d, 0, LOW_HOLDER, LOW_LEASE_MS)
    Ctx.low_worker = lease and lease["worker_id"]


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
        has = {(x["region"], x["state"]) for x in w.get("rows") or []}
        want = {(1, "held"), (2, "held"), (3, "resting"), (0, "held")}
        if not want <= has or not any(x["holder"] == LOW_HOLDER[:8] for x in w["rows"]):
            why[0] = "orders rows %s, want %s and the low holder" % (sorted(has), sorted(want))
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
    S.ok(e["collisions"] == "%d" % metric(m, "idmint_collisions_total") == "1"
         and e["collisions_level"] == "bad",
         "the collision reported is counted, as idmint_collisions_total counts it",
         "%r vs %s" % (e["collisions"], metric(m, "idmint_collisions_total")))
    limited = {(dict(k[1])["by"], dict(k[1])["role"]): v for k, v in m.items()
               if k[0] == "idmint_http_rate_limited_total"}
    per = e.get("rate_limited_by") or {}
    S.ok(len(limited) == 8 and e["rate_limited"] == "%d" % sum(limited.values())
         and all(per.get(by, {}).get(role) == "%d" % v for (by, role), v in limited.items())
         and e.get("limits_set") is False,
         "429s are counted as idmint_http_rate_limited_total counts them (no [limits] here)",
         "%r vs %r" % ((e["rate_limited"], per, e.get("limits_set")), limited))
    logged = re.search(r'authority="([^"]*)"', d.log())
    S.ok(logged is not None and s1["daemon"].get("authority") == logged.group(1)
         and logged.group(1).startswith("sqlite:/"),
         "/v1/status names the resolved authority, as the daemon's log does",
         "%r vs %r" % (s1["daemon"].get("authority"), logged and logged.group(1)))
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
    held = [r for r in rows.values() if r["state"] == "held"]
    S.ok(held and all("low_ms" in r and r["low"] == (r["margin_ms"] <= r["low_ms"])
                      and r["low_ms"] == r["lease_ms"] * READY_MARGIN_MS // LEASE_MS
                      for r in held),
         "every holder is low exactly when at most half its own lease is left", repr(held))
    own = [r for r in held if r["own"]]
    S.ok(len(own) == 1 and own[0].get("lease_ms") == LEASE_MS
         and own[0].get("low_ms") == READY_MARGIN_MS,
         "the daemon's own row is judged as /readyz judges it", repr(own))
    lib = [r for r in held if r["region"] in (1, 2)]
    S.ok(len(lib) == 2 and all(not r["low"] and r["margin_ms"] <= READY_MARGIN_MS
                               and r.get("lease_ms", 0) <= LIB_LEASE_S * 1000 for r in lib),
         "healthy library processes with %d s leases are not low, though their margins are "
         "under the daemon's readiness margin" % LIB_LEASE_S, repr(lib))
    S.ok(is_idle(by["legacy"]) and is_idle(by["spare"]) and not is_idle(by["orders"])
         and not is_idle(by["default"]),
         "legacy (disabled) and spare (never used) are idle; orders and default are not",
         repr({n: (by[n].get("workers") or {}).get("idle") for n in by}))
    entries = s1["audit"]["entries"]
    S.ok(all(x.get("detail_iso") == spelled(x["detail"], by.get(x["namespace"])) for x in entries),
         "every audit detail is shown with its times as ISO-8601, the raw figures beside them",
         "; ".join("%r -> %r" % (x["detail"], x.get("detail_iso")) for x in entries[:3]))
    for key in ("e_after", "observed_ms", "epoch_ms"):
        S.ok(any(re.search(r"\b%s=\d{4}-\d\d-\d\dT[\d:.]+Z \(\d+\)" % key,
                           x.get("detail_iso", ""))
                 for x in entries),
             "an audit record shows %s as ISO-8601 with the raw figure beside it" % key,
             repr([x.get("detail_iso") for x in entries][:5]))
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
    cells: document.querySelectorAll('.grid .c').length,
    grids: Array.prototype.map.call(document.querySelectorAll('.grid'), function (g) {
      return g.getAttribute('aria-label').split(' ')[0]; }),
    text: document.getElementById('main').innerText,
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
    low = sum(1 for ns in s1["namespaces"] if ns["kind"] == "snowflake" and ns["workers"]
              for r in ns["workers"]["rows"] if r["low"])
    S.ok(a["low"] == low and a["resting"] == 1 and a["held"] >= 4,
         "the grid shows each low-margin lease with '!', the resting id with 'r'",
         "%d low in /v1/status; %r" % (low, {k: a[k] for k in ("low", "resting", "held")}))
    # Idle by the rows themselves, not by the daemon's own "idle" flag.
    drawn = [ns for ns in s1["namespaces"] if ns["kind"] == "snowflake" and ns["workers"]
             and any(r["state"] != "free" for r in ns["workers"]["rows"])]
    cells = sum(len(ns["workers"]["drawn"]) * ns["workers"]["ids_per_region"] for ns in drawn)
    S.ok(sorted(set(a["grids"])) == sorted(ns["name"] for ns in drawn) and a["cells"] == cells,
         "only namespaces with a worker id held or resting draw a grid (%d cells); legacy "
         "and spare are on the idle line" % cells,
         "grids of %s, %d cells" % (sorted(set(a["grids"])), a["cells"]))
    raw = re.findall(r"\b(?:e_before|e_after|observed_ms|epoch_ms)=\d+(?![\d-])", a["text"])
    S.ok(not raw and "e_after=" in a["text"],
         "no audit time is shown in raw units alone", repr(raw[:3]))
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


def low_row(s):
    """The LOW_HOLDER's row of orders in /v1/status answer @s, or None."""
    for ns in s.get("namespaces", []):
        if ns["name"] == "orders" and ns.get("workers"):
            for r in ns["workers"].get("rows") or []:
                if r["holder"] == LOW_HOLDER[:8] and r["state"] == "held":
                    return r
    return None


def test_low_margin(d, b):
    """The holder that never renews turns low once half of its own lease is gone: judged
    against its lease, not the daemon's readiness margin."""
    def low():
        s = d.get("/v1/status").json() or {}
        r = low_row(s)
        return r if r and r["low"] else None
    r = H.wait_for(low, LOW_LEASE_MS / 1000.0 + 10, interval=0.5)
    if not S.ok(r is not None, "the holder that stopped renewing turns low before its E",
                repr(low_row(d.get("/v1/status").json() or {}))):
        return
    S.ok("low_ms" in r
         and r["margin_ms"] <= r["low_ms"] == r["lease_ms"] * READY_MARGIN_MS // LEASE_MS
         and r["margin_ms"] < r["lease_ms"] <= LOW_LEASE_MS,
         "its threshold is half its own lease (%d ms), as far as seen" % LOW_LEASE_MS, repr(r))
    base = "http://127.0.0.1:%d" % d.port
    for _ in range(8):
        s1 = status(d)
        b.scripts(False)
        b.navigate(base + "/status")
        plain = b.evaluate(FIGURES_JS)
        cells = b.evaluate("document.querySelectorAll('.grid .c.low').length")
        s2 = status(d)
        if s1 and s2 and same_moment(s1, s2) and low_row(s1) and low_row(s1)["low"]:
            break
    else:
        S.ok(False, "a quiet moment with the holder low", "none in 8 tries")
        return
    key = "w/orders/0/%d/margin" % low_row(s1)["worker_id"]
    want = expected_figures(s1)[key]
    S.ok(plain.get(key) == want and want.startswith("\u2716 ") and "of its" in want,
         "the page marks it low against its own lease", "page %r, expected %r" % (
             plain.get(key), want))
    S.ok(cells >= 1, "its cell shows '!'", str(cells))
    # The wide screenshots again, now with a low holder in the grid (docs/status-page.md).
    b.scripts(True)
    b.viewport(1280, 800)
    b.navigate(base + "/status")
    b.evaluate("window.idmintStatus.refresh()", True)
    for name, full in (("status-1280x800.png", False), ("status-1280-full.png", True)):
        b.screenshot(os.path.join(SHOTS, name), full_page=full)


def test_tokens():
    d = S.daemon(IDMINTD, config=H.tokens_config(TOKENS)
                 + "[limits]\ngenerator_rate = 1\ngenerator_burst = 1\n")
    admin, mint, gen = TOKENS["ops"][1], TOKENS["shop"][1], TOKENS["gen"][1]
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
    # A generator token over its [limits] rate: every 429 counted, by bucket and role.
    codes = [d.get("/v1/status", token=gen).status for _ in range(6)]
    refused = codes.count(429)
    S.ok(refused >= 1 and set(codes) <= {200, 429},
         "a generator token over generator_rate sees 429", repr(codes))
    j = S.json_ok(d.get("/v1/status", token=admin), 200, "GET /v1/status as admin")
    e = (j or {}).get("events", {})
    m = metrics(d)
    S.ok(e.get("rate_limited") == str(refused) == "%d" % metric(
        m, "idmint_http_rate_limited_total", by="token", role="generator")
         and (e.get("rate_limited_by") or {}).get("token", {}).get("generator") == str(refused)
         and e.get("rate_limited_level") == "warn" and e.get("limits_set") is True,
         "/v1/status counts the 429s as /metrics does", repr(e))
    page = d.get("/status", token=admin).text
    cells = dict((k, re.sub(r"<[^>]+>", "", v)) for k, v in
                 re.findall(r'data-k="(ev/rate_limited(?:_by)?)"[^>]*>(.*?)</(?:td|span)>', page))
    S.ok(j is not None and cells.get("ev/rate_limited") == expected_figures(j)["ev/rate_limited"]
         and cells.get("ev/rate_limited_by") == "token bucket, generator caller %d" % refused,
         "the page shows the 429s and whose they were", repr(cells))
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
        S.run("low margin", test_low_margin, d, b)
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
