#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Issue 27 finding 6, "nothing is silently ignored": GET /v1/ids?ns=orders
# (the CLI's flag name) used to answer 200 with IDs from "default". For every
# row of the route table (idmintd --list-routes, which prints the query
# parameters and body fields each route accepts): a request that is fine but
# for one unknown query parameter, or one unknown body field, gets 400
# invalid_argument naming it, and nothing changes in the authority or the
# mint counters; the same request without it still works, with every
# parameter the row lists. A near miss is named (ns -> namespace). An
# unknown config key or section and an unknown idmintd flag exit 2 naming it.
# Usage: test_unknown_names.py IDMINTD [IDMINT_CLI]

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import daemon_harness as H  # noqa: E402

S = H.Suite("unknown_names")
IDMINTD = None
UNKNOWN = "zzq"  # near no name any route accepts


class Ctx:
    some_id = None


def list_routes():
    """[{method, path, params, fields, ...}] from idmintd --list-routes."""
    home = tempfile.mkdtemp(prefix="idmint-names-")
    try:
        p = subprocess.run([IDMINTD, "--authority", "sqlite:" + os.path.join(home, "x.db"),
                            "--list-routes"], cwd=home, env=H.clean_env(), capture_output=True,
                           text=True, timeout=20 * H.SCALE)
    finally:
        shutil.rmtree(home, ignore_errors=True)
    rows = [json.loads(line) for line in p.stdout.splitlines() if line.strip()]
    S.ok(p.returncode == 0 and len(rows) >= 10, "idmintd --list-routes lists the routes",
         "rc %d, %d rows" % (p.returncode, len(rows)))
    for row in rows:
        S.ok(isinstance(row.get("params"), list) and isinstance(row.get("fields"), list),
             "--list-routes gives %s %s's params and fields" % (row.get("method"), row.get("path")),
             repr(row))
    return rows


def calls():
    """How to call each route so that it succeeds, with every query parameter its row
    lists (query) and a body for the routes that take one (body). ok: statuses meaning
    it worked. Run in this order: disable before enable, a range lease before its forget."""
    holder = "%032x" % 0xfeed
    return {
        "GET /v1/ids": dict(query="namespace=orders&count=2"),
        "GET /v1/ids/{id}/decode": dict(seg={"id": Ctx.some_id}, query="namespace=orders"),
        "GET /v1/ids/{id}/trace": dict(seg={"id": Ctx.some_id}, query="namespace=orders"),
        "GET /v1/collisions": dict(query="after=0&limit=5"),
        "POST /v1/collisions": dict(ok=(201,), body={"namespace": "orders", "id": Ctx.some_id,
                                                     "observed_ms": "0", "note": "names test"}),
        "POST /internal/workers/lease": dict(body={"op": "take", "namespace": "orders",
                                                   "region": 0, "holder": holder,
                                                   "lease_ms": 600000}),
        "POST /internal/ranges/lease": dict(body={"namespace": "invoices", "incarnation": "inc-1",
                                                  "request_id": "req-1", "count": 10}),
        "POST /internal/ranges/forget": dict(body={"namespace": "invoices",
                                                   "incarnation": "inc-1",
                                                   "before_request_id": "req-0"}),
        "GET /internal/history": dict(query="seq=1"),
        "GET /v1/namespaces": dict(),
        "POST /v1/namespaces": dict(ok=(201,), body={"name": "made", "kind": "snowflake"}),
        "GET /v1/namespaces/{ns}": dict(seg={"ns": "orders"}),
        "POST /v1/namespaces/{ns}/disable": dict(seg={"ns": "scratch"}, body=b""),
        "POST /v1/namespaces/{ns}/enable": dict(seg={"ns": "scratch"}, body=b""),
        "POST /v1/namespaces/{ns}/migrate": dict(ok=(201,), seg={"ns": "movable"},
                                                 body={"name": "moved", "kind": "range"}),
        "GET /v1/namespaces/{ns}/workers": dict(seg={"ns": "orders"}),
        "GET /v1/namespaces/{ns}/bounds": dict(seg={"ns": "orders"},
                                              query="from=2026-03-01&to=2026-03-02"),
        "GET /v1/audit": dict(query="after=0&limit=5"),
        "GET /v1/status": dict(),
        "GET /status": dict(),
        "GET /metrics": dict(),
        "GET /healthz": dict(),
        "GET /readyz": dict(ok=(200, 503)),
        "GET /v1/openapi.json": dict(),
    }


def fill(pattern, seg):
    return "/".join(seg.get(p[1:-1], p) if p.startswith("{") and p.endswith("}") else p
                    for p in pattern.split("/"))


def with_query(path, query):
    return path + ("?" + query if query else "")


def issued(d):
    """idmint_ids_issued_total summed over namespaces."""
    total = 0.0
    for ln in d.get("/metrics").text.split("\n"):
        m = re.match(r"^idmint_ids_issued_total\{[^}]*\} ([0-9.eE+]+)$", ln)
        if m:
            total += float(m.group(1))
    return total


def state(d):
    """What any route could have written: namespaces (range positions, disabled flags),
    the audit log, collisions, the orders leases, and the IDs minted over HTTP."""
    ns = d.get("/v1/namespaces").json()
    audit = d.get("/v1/audit?limit=1000").json()
    coll = d.get("/v1/collisions?limit=1000").json()
    workers = d.get("/v1/namespaces/orders/workers").json() or {}
    leases = sorted((w.get("region"), w.get("worker_id"), w.get("holder"), w.get("generation"))
                    for w in workers.get("workers", []))
    return {"namespaces": ns, "audit": audit, "collisions": coll, "orders leases": leases,
            "ids issued": issued(d)}


def send(d, method, path, body):
    if method == "GET" and body is None:
        return d.get(path)
    return d.request(method, path, body=body if body is not None else b"")


def message(r):
    j = r.json()
    try:
        return j["error"]["message"]
    except (TypeError, KeyError):
        return ""


def refused_naming(r, name, what):
    """400 invalid_argument whose message quotes @name."""
    if S.error(r, 400, "invalid_argument", what):
        S.ok("'%s'" % name in message(r), what + " (names '%s')" % name, r.show())


def test_unknown_on_every_route(d, rows, spec):
    before = state(d)
    for row in rows:
        key = "%s %s" % (row["method"], row["path"])
        c = spec.get(key)
        if c is None:
            continue
        path = fill(row["path"], c.get("seg", {}))
        query = c.get("query", "")
        body = c.get("body")
        # One unknown query parameter beside the known ones, then alone.
        for q in ((query + "&" if query else "") + UNKNOWN + "=1", UNKNOWN):
            r = send(d, row["method"], with_query(path, q), body)
            refused_naming(r, UNKNOWN, "%s with ?%s: 400" % (key, q))
            S.ok("did you mean" not in message(r), "%s: no suggestion for a far name" % key,
                 message(r))
            for name in row["params"]:
                S.ok(name in message(r), "%s: the refusal lists '%s'" % (key, name), message(r))
        # One unknown body field beside the known ones.
        fields = dict(body) if isinstance(body, dict) else {}
        fields[UNKNOWN] = 1
        r = send(d, row["method"], with_query(path, query), fields)
        refused_naming(r, UNKNOWN, "%s with body field %s: 400" % (key, UNKNOWN))
        for name in row["fields"]:
            S.ok(name in message(r), "%s: the refusal lists field '%s'" % (key, name), message(r))
    after = state(d)
    for part in before:
        S.ok(before[part] == after[part], "refused requests changed nothing: " + part,
             "before %s, after %s" % (H.snip(json.dumps(before[part])),
                                      H.snip(json.dumps(after[part]))))


def test_known_still_work(d, rows, spec):
    by_key = {"%s %s" % (row["method"], row["path"]): row for row in rows}
    for key, c in spec.items():
        row = by_key.get(key)
        if row is None:
            continue
        used = [p.split("=")[0] for p in c.get("query", "").split("&") if p]
        S.ok(sorted(used) == sorted(row["params"]),
             "%s is called with every parameter it accepts" % key,
             "calls() uses %s, the row lists %s" % (used, row["params"]))
        if isinstance(c.get("body"), dict):
            S.ok(set(c["body"]) <= set(row["fields"]), "%s's body uses listed fields" % key,
                 "%s vs %s" % (sorted(c["body"]), row["fields"]))
        path = with_query(fill(row["path"], c.get("seg", {})), c.get("query", ""))
        r = send(d, row["method"], path, c.get("body"))
        S.status(r, c.get("ok", (200,)), "%s with only known names works" % key)


def test_near_misses(d):
    n0 = issued(d)
    r = d.get("/v1/ids?ns=orders")
    refused_naming(r, "ns", "GET /v1/ids?ns=orders (the CLI's flag name): 400")
    S.ok("did you mean 'namespace'?" in message(r), "ns: did you mean 'namespace'?", r.show())
    S.ok(issued(d) == n0, "GET /v1/ids?ns=orders minted nothing",
         "ids issued %s -> %s" % (n0, issued(d)))
    for path, given, near in (("/v1/ids?namespace=orders&cuont=3", "cuont", "count"),
                              ("/v1/ids?Count=3", "Count", "count"),
                              ("/v1/ids?namespaces=orders", "namespaces", "namespace"),
                              ("/v1/ids/1/decode?ns=orders", "ns", "namespace"),
                              ("/v1/audit?lmit=5", "lmit", "limit"),
                              ("/v1/collisions?aftr=0", "aftr", "after")):
        r = d.get(path)
        refused_naming(r, given, "GET %s: 400" % path)
        S.ok("did you mean '%s'?" % near in message(r), "%s: did you mean '%s'?" % (given, near),
             r.show())
    for path, body, given, near in (
            ("/v1/namespaces", {"name": "typo", "kind": "range", "blok": 5}, "blok", "block"),
            ("/internal/ranges/lease", {"ns": "invoices", "incarnation": "i", "request_id": "r",
                                        "count": 1}, "ns", "namespace"),
            ("/v1/collisions", {"namespace": "orders", "id": "1", "nte": "x"}, "nte", "note")):
        r = d.post(path, body)
        refused_naming(r, given, "POST %s with field %s: 400" % (path, given))
        S.ok("did you mean '%s'?" % near in message(r), "%s: did you mean '%s'?" % (given, near),
             r.show())
    S.status(d.get("/v1/namespaces/typo"), 404, "the refused create made no namespace")


def test_other_shapes(d):
    n0 = issued(d)
    r = d.get("/v1/ids?namespace=orders&count=1&count=5")
    refused_naming(r, "count", "a query parameter given twice: 400")
    S.ok(issued(d) == n0, "a repeated parameter minted nothing", "")
    j = S.json_ok(d.get("/v1/ids?namespace=orders&count=1&"), 200,
                  "a trailing '&' is no parameter: 200")
    S.ok(j is not None and len(j.get("ids", [])) == 1, "a trailing '&' mints as asked", repr(j))
    r = d.request("POST", "/v1/namespaces/scratch/disable", body=b"disable please")
    S.error(r, 400, "invalid_argument", "a body on a route that takes none: 400")
    S.ok("takes no request body" in message(r), "the refusal says the route takes no body",
         r.show())
    j = S.json_ok(d.get("/v1/namespaces/scratch"), 200, "scratch after the refused disable")
    S.ok(j is not None and j.get("disabled") is False, "the refused disable changed nothing",
         repr(j))
    S.json_ok(d.request("POST", "/v1/namespaces/scratch/disable", body=b"{}"), 200,
              "an empty JSON object on a route that takes no fields is fine")
    S.json_ok(d.post("/v1/namespaces/scratch/enable"), 200, "enable scratch again")


def run_refused(args, cwd):
    p = subprocess.run([IDMINTD] + args, capture_output=True, text=True, cwd=cwd,
                       timeout=20 * H.SCALE, env=H.clean_env(), stdin=subprocess.DEVNULL)
    return p.returncode, p.stderr


def test_config_and_flags():
    tmp = tempfile.mkdtemp(prefix="idmint-names-cfg-")
    try:
        base = ["--listen", "127.0.0.1:0", "--authority", "sqlite:" + os.path.join(tmp, "n.db")]
        for text, name, what in (("[server]\nthreds = 2\n", "threds", "an unknown key"),
                                 ("[mint]\nnamespace = orders\n", "namespace",
                                  "a key of another section"),
                                 ("[sever]\nthreads = 2\n", "sever", "an unknown section")):
            path = os.path.join(tmp, "idmintd.ini")
            with open(path, "w") as f:
                f.write(text)
            code, err = run_refused(base + ["--config", path], tmp)
            S.ok(code == 2, "config with %s: exit 2" % what,
                 "status %s, stderr %s" % (code, H.snip(err)))
            S.ok(name in err and path in err, "config with %s: names it and the file" % what,
                 H.snip(err))
        for flag in ("--bogus", "--ns"):
            code, err = run_refused(base + [flag, "x"], tmp)
            S.ok(code == 2 and "'%s'" % flag in err, "idmintd %s: exit 2 naming it" % flag,
                 "status %s, stderr %s" % (code, H.snip(err)))
        S.ok(not os.path.exists(os.path.join(tmp, "n.db")), "refused starts made no authority",
             repr(os.listdir(tmp)))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    global IDMINTD
    IDMINTD, _ = H.usage_paths()
    rows = list_routes()
    try:
        d = S.daemon(IDMINTD)
    except H.HarnessError as e:
        S.ok(False, "start idmintd", str(e))
        S.finish()
    for body in ({"name": "orders", "kind": "snowflake"},
                 {"name": "invoices", "kind": "range", "start": "1000", "block": 100},
                 {"name": "scratch", "kind": "snowflake"},
                 {"name": "movable", "kind": "range"}):
        S.status(d.post("/v1/namespaces", body), 201, "create " + body["name"])
    j = S.json_ok(d.get("/v1/ids?namespace=orders&count=1"), 200, "a first ID from orders")
    Ctx.some_id = (j or {}).get("ids", ["1"])[0]
    spec = calls()
    keys = {"%s %s" % (row["method"], row["path"]) for row in rows}
    for key in keys:
        S.ok(key in spec, "route %s is in this test" % key,
             "idmintd --list-routes has %s; tell calls() how to call it" % key)
    S.run("an unknown name on every route", test_unknown_on_every_route, d, rows, spec)
    S.run("near misses", test_near_misses, d)
    S.run("other shapes", test_other_shapes, d)
    S.run("known names still work", test_known_still_work, d, rows, spec)
    S.stop_daemon(d, "the daemon stops cleanly")
    S.run("config keys and flags", test_config_and_flags)
    S.finish()


if __name__ == "__main__":
    main()
