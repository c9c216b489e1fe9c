#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# The role x route table of docs/http-api.md: no token and unknown tokens get
# 401, too small a role 403 (and changes nothing), enough of a role gets past
# authentication; the open routes need no token; path tricks do not slip past
# a role; with no tokens configured only loopback is served. The routes come
# from idmintd --list-routes: a route calls() does not know fails the test.

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import daemon_harness as H  # noqa: E402
import openapi_check as OA  # noqa: E402

IDMINTD, IDMINT = H.usage_paths()
S = H.Suite("roles")

TOKENS = {
    "ops": ("admin", "adm-7f3c9b1e5d2a4c68a0e1b2c3d4e5f601"),
    "fleet": ("generator", "gen-0a1b2c3d4e5f60718293a4b5c6d7e8f9"),
    "shop": ("mint", "mnt-9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b"),
}
ADMIN = TOKENS["ops"][1]
GEN = TOKENS["fleet"][1]
MINT = TOKENS["shop"][1]
ROLE_TOKEN = {"mint": MINT, "generator": GEN, "admin": ADMIN}
RANK = {"none": 0, "mint": 1, "generator": 2, "admin": 3}
ROLES = ["mint", "generator", "admin"]
BAD_TOKENS = [
    ("an unknown token", "Bearer not-a-token-at-all"),
    ("the admin token plus one char", "Bearer " + ADMIN + "x"),
    ("the admin token minus its last char", "Bearer " + ADMIN[:-1]),
    ("the admin token in upper case", "Bearer " + ADMIN.upper()),
    ("the sha256 of the admin token", "Bearer " + H.sha256_hex(ADMIN)),
    ("an empty bearer", "Bearer "),
    ("Basic auth", "Basic b3BzOnNlY3JldA=="),
    ("a bare token without the scheme", ADMIN),
]


def holder(role, n):
    return ("%x" % (RANK[role] * 16 + n)).rjust(32, "0")


class Ctx:
    leases = {}  # (role, purpose) -> take answer
    some_id = None


def take(d, h, what):
    r = d.post("/internal/workers/lease", {"op": "take", "namespace": "orders", "region": 0,
                                           "holder": h, "lease_ms": 600000}, token=ADMIN)
    j = S.json_ok(r, 200, what)
    return j


def setup(d):
    for body in ({"name": "orders", "kind": "snowflake"},
                 {"name": "invoices", "kind": "range", "start": "1", "max": "1000000000",
                  "block": 100, "max_block": 1000},
                 {"name": "scratch", "kind": "snowflake"},
                 {"name": "movable", "kind": "range"}):
        S.json_ok(d.post("/v1/namespaces", body, token=ADMIN), 201,
                  "setup: admin creates %s" % body["name"])
    j = S.json_ok(d.get("/v1/ids?namespace=orders&count=1", token=ADMIN), 200,
                  "setup: admin mints")
    if j and j.get("ids"):
        Ctx.some_id = j["ids"][0]
    for role in ROLES:
        for purpose in ("renew", "release", "force"):
            Ctx.leases[(role, purpose)] = take(d, holder(role, len(Ctx.leases)),
                                               "setup: lease for %s %s" % (role, purpose))


def lease_body(role, purpose, op):
    lease = Ctx.leases.get((role, purpose)) or {}
    body = {"op": op, "namespace": "orders", "region": 0, "worker_id": lease.get("worker_id", 0)}
    if op in ("renew", "release"):
        body.update(holder=lease.get("holder", ""), generation=lease.get("generation", "1"))
    if op == "renew":
        body["lease_ms"] = 600000
    if op == "release":
        body["final_time"] = lease.get("fence_found", "0")
    return body


def list_routes():
    """The route table from idmintd --list-routes: [{method, path, role, label, params, fields}].
    It runs in an empty folder with an authority there: it must open no store."""
    home = tempfile.mkdtemp(prefix="idmint-routes-")
    env = H.clean_env()
    env.update(HOME=home, XDG_STATE_HOME=os.path.join(home, "state"))
    try:
        p = subprocess.run([IDMINTD, "--authority", "sqlite:" + os.path.join(home, "x.db"),
                            "--list-routes"], cwd=home, env=env, capture_output=True, text=True,
                           timeout=20 * H.SCALE)
    except subprocess.TimeoutExpired:
        S.ok(False, "idmintd --list-routes", "did not exit within 20 s")
        return []
    finally:
        left = os.listdir(home)
        shutil.rmtree(home, ignore_errors=True)
    S.ok(p.returncode == 0 and p.stderr == "", "idmintd --list-routes exits 0, quietly",
         "rc %d, stderr %r" % (p.returncode, H.snip(p.stderr)))
    S.ok(not left, "idmintd --list-routes opens no store (creates no file)", repr(left))
    rows = []
    for line in p.stdout.splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            row = None
        if S.ok(isinstance(row, dict)
                and sorted(row) == ["fields", "label", "method", "params", "path", "role"]
                and all(isinstance(row[k], str) for k in ("label", "method", "path", "role"))
                and all(isinstance(row[k], list) and all(isinstance(n, str) for n in row[k])
                        for k in ("params", "fields")),
                "--list-routes prints one {method, path, role, label, params, fields} per line",
                repr(line)):
            rows.append(row)
    S.ok(len(rows) >= 10, "--list-routes lists the routes", H.snip(p.stdout))
    return rows


BODY_METHODS = ("POST", "PUT", "PATCH")


def calls():
    """How to call each row of the route table, keyed "METHOD pattern": the role
    docs/http-api.md gives it, values for its {segments}, its query, and its cases
    (what, the role the case needs when the handler asks more than the row, and
    body(role) for a method that sends one). The matrix runs in this order:
    disable before enable, a range lease before its forget."""
    return {
        "GET /v1/ids": dict(role="mint", query="namespace=orders&count=2"),
        "GET /v1/ids/{id}/decode": dict(role="mint", seg={"id": Ctx.some_id or "1"},
                                        query="namespace=orders"),
        "GET /v1/ids/{id}/trace": dict(role="mint", seg={"id": Ctx.some_id or "1"},
                                       query="namespace=orders"),
        "POST /v1/collisions": dict(
            role="mint", ok=(201,),
            body=lambda role: {"namespace": "orders", "id": Ctx.some_id or "1",
                               "note": "role test " + role}),
        "GET /v1/collisions": dict(role="admin"),
        "GET /v1/namespaces": dict(role="mint"),
        "GET /v1/namespaces/{ns}": dict(role="mint", seg={"ns": "orders"}),
        "GET /v1/namespaces/{ns}/workers": dict(role="mint", seg={"ns": "orders"}),
        "GET /v1/namespaces/{ns}/bounds": dict(role="mint", seg={"ns": "orders"},
                                               query="from=2026-03-01&to=2026-03-02"),
        "POST /internal/workers/lease": dict(role="generator", cases=[
            ("take", None, lambda role: {"op": "take", "namespace": "orders", "region": 0,
                                         "holder": holder(role, 99), "lease_ms": 600000}),
            ("renew", None, lambda role: lease_body(role, "renew", "renew")),
            ("release", None, lambda role: lease_body(role, "release", "release")),
            # The handler's own check, beyond the row's role.
            ("force_release", "admin", lambda role: lease_body(role, "force", "force_release")),
        ]),
        "POST /internal/ranges/lease": dict(
            role="generator", body=lambda role: {"namespace": "invoices", "incarnation": "inc-" + role,
                                                 "request_id": "req-1", "count": 10}),
        "POST /internal/ranges/forget": dict(
            role="generator", body=lambda role: {"namespace": "invoices", "incarnation": "inc-" + role,
                                                 "before_request_id": "req-0"}),
        "GET /internal/history": dict(role="generator", query="seq=1"),
        "POST /v1/namespaces": dict(
            role="admin", body=lambda role: {"name": "made-by-" + role, "kind": "snowflake"}),
        "POST /v1/namespaces/{ns}/disable": dict(role="admin", seg={"ns": "scratch"},
                                                 body=lambda role: b""),
        "POST /v1/namespaces/{ns}/enable": dict(role="admin", seg={"ns": "scratch"},
                                                body=lambda role: b""),
        "POST /v1/namespaces/{ns}/migrate": dict(
            role="admin", seg={"ns": "movable"},
            body=lambda role: {"name": "moved-by-" + role, "kind": "range"}),
        "GET /v1/audit": dict(role="admin"),
        "GET /v1/status": dict(role="mint"),
        "GET /status": dict(role="mint"),
        "GET /metrics": dict(role="none"),
        "GET /healthz": dict(role="none"),
        "GET /readyz": dict(role="none", ok=(200, 503)),
        "GET /v1/openapi.json": dict(role="none"),
    }


def fill(pattern, seg):
    """@pattern with each {name} segment replaced by seg[name]; None when one has no value."""
    parts = []
    for part in pattern.split("/"):
        if part.startswith("{") and part.endswith("}"):
            if part[1:-1] not in seg:
                return None
            part = seg[part[1:-1]]
        parts.append(part)
    return "/".join(parts)


def plan(table):
    """[(label, role needed, method, path, body(role) or None, ok statuses)] for every
    row of @table. A row calls() does not know, or cannot fill in, is a failure: no
    route escapes this test."""
    spec = calls()
    rows = {"%s %s" % (row["method"], row["path"]): row for row in table}
    for key in rows:
        S.ok(key in spec, "route %s is in the role test" % key,
             "idmintd --list-routes has %s; tell calls() in test_roles.py how to call it" % key)
    for key in spec:
        S.ok(key in rows, "calls() entry %s is a route" % key,
             "idmintd --list-routes has no %s" % key)
    steps = []
    for key, c in spec.items():
        row = rows.get(key)
        if row is None:
            continue
        S.ok(row["role"] == c["role"], "%s needs the %s role" % (key, c["role"]),
             "the route table gives it %s" % row["role"])
        path = fill(row["path"], c.get("seg", {}))
        if not S.ok(path is not None, "%s: calls() has a value for each {segment}" % key,
                    "seg %r" % c.get("seg")):
            continue
        if c.get("query"):
            path += "?" + c["query"]
        for what, need, body in c.get("cases") or [("", None, c.get("body"))]:
            label = key + (" " + what if what else "")
            if row["method"] in BODY_METHODS and not S.ok(
                    body is not None, "%s: calls() gives it a body" % label, "none given"):
                continue
            steps.append((label, need or c["role"], row["method"], row["path"], path, body,
                          c.get("ok", (200,))))
    return steps


def audit_count(d):
    j = d.get("/v1/audit?limit=1000", token=ADMIN).json() or {}
    return len(j.get("entries") or [])


def check_open(d, label, method, pattern, path, body, ok):
    """An open route answers every caller: no token, each role, an unknown token."""
    cases = [("no token", {})] + [
        (role, {"Authorization": "Bearer " + ROLE_TOKEN[role]}) for role in ROLES]
    cases.append(("an unknown token", {"Authorization": "Bearer not-a-token-at-all"}))
    for what, hdrs in cases:
        r = d.request(method, path, body=body("admin") if body else None, headers=hdrs)
        S.status(r, ok, "%s with %s is open" % (label, what))
        OA.check_reply(S, r, pattern, method, "%s with %s" % (label, what))


def test_matrix(d, table):
    # Every reply, allowed or refused, also matches docs/openapi.json (openapi_check.py).
    for label, need, method, pattern, path, body, ok in plan(table):
        if need == "none":
            check_open(d, label, method, pattern, path, body, ok)
            continue
        sample = body("admin") if body else None
        r = d.request(method, path, body=sample)
        S.error(r, 401, "unauthenticated", "%s with no token" % label)
        OA.check_reply(S, r, pattern, method, "%s with no token" % label)
        for what, header in BAD_TOKENS[:2]:
            r = d.request(method, path, body=sample, headers={"Authorization": header})
            S.error(r, 401, "unauthenticated", "%s with %s" % (label, what))
            OA.check_reply(S, r, pattern, method, "%s with %s" % (label, what))
        for role in ROLES:
            b = body(role) if body else None
            before = audit_count(d)
            r = d.request(method, path, body=b, token=ROLE_TOKEN[role])
            OA.check_reply(S, r, pattern, method, "%s as %s" % (label, role))
            if RANK[role] >= RANK[need]:
                S.ok(r.status is not None and 200 <= r.status < 500
                     and r.status not in (401, 403),
                     "%s as %s is allowed" % (label, role),
                     "%s: expected 2xx or a non-auth 4xx, got %s" % (r.request, r.show()))
            else:
                S.error(r, 403, "permission_denied", "%s as %s is refused" % (label, role))
                S.ok(audit_count(d) == before, "%s as %s leaves the audit log alone"
                     % (label, role), "audit grew")
    # Refused writes changed nothing.
    for role in ("mint", "generator"):
        S.error(d.get("/v1/namespaces/made-by-" + role, token=ADMIN), 404, "not_found",
                "namespace refused to %s was not created" % role)
    S.json_ok(d.get("/v1/namespaces/made-by-admin", token=ADMIN), 200,
              "namespace created by admin exists")
    for role in ("mint", "generator"):
        S.error(d.get("/v1/namespaces/moved-by-" + role, token=ADMIN), 404, "not_found",
                "migration refused to %s created nothing" % role)
    j = S.json_ok(d.get("/v1/namespaces/moved-by-admin", token=ADMIN), 200,
                  "namespace migrated by admin exists") or {}
    # movable never issued a value: its floor is 0, shown as no floor at all.
    S.ok(j.get("migrated_from") == "movable" and "floor" not in j,
         "moved-by-admin came from movable", repr(j))
    j = d.get("/v1/namespaces/movable", token=ADMIN).json() or {}
    S.ok(j.get("disabled") is True, "movable was disabled by its migration", repr(j))
    j = d.get("/v1/namespaces/scratch", token=ADMIN).json() or {}
    S.ok(j.get("disabled") is False, "scratch ends enabled (admin disabled, then enabled)",
         repr(j))
    for role in ("mint", "generator"):
        lease = Ctx.leases.get((role, "force")) or {}
        r = d.post("/internal/workers/lease",
                   {"op": "renew", "namespace": "orders", "region": 0,
                    "worker_id": lease.get("worker_id"), "holder": lease.get("holder"),
                    "generation": lease.get("generation"), "lease_ms": 600000}, token=ADMIN)
        S.json_ok(r, 200, "lease survives a force_release refused to %s" % role)
    lease = Ctx.leases.get(("mint", "release")) or {}
    r = d.post("/internal/workers/lease", lease_body("mint", "release", "renew"), token=GEN)
    S.json_ok(r, 200, "lease survives a release refused to mint")
    j = d.post("/internal/ranges/lease", {"namespace": "invoices", "incarnation": "inc-mint",
                                          "request_id": "req-1", "count": 20},
               token=GEN)
    S.json_ok(j, 200, "range refused to mint was never recorded (another count is no conflict)")


def test_metrics_labels(d, table):
    """After the matrix every row has been answered: /metrics counts each under its
    label, a label is the row's path pattern (dashboards read these names), and
    404s count under "other"."""
    S.error(d.get("/v1/no-such-route", token=MINT), 404, "not_found", "an unknown route is 404")
    text = d.get("/metrics").text or ""
    seen = set(re.findall(r'^idmint_http_requests_total\{route="([^"]*)",code="[^"]*"\} ',
                          text, re.M))
    labels = {row["label"] for row in table}
    for row in table:
        S.ok(row["label"] == row["path"], "%s %s is labelled by its path" % (row["method"],
                                                                            row["path"]),
             "label %r" % row["label"])
        S.ok(row["label"] in seen, "/metrics counts %s %s under route=\"%s\""
             % (row["method"], row["path"], row["label"]), H.snip(text, 2000))
    S.ok("other" in seen, "/metrics counts the 404 under route=\"other\"", H.snip(text, 2000))
    S.ok(seen <= labels | {"other"}, "/metrics has no route label outside the table",
         repr(sorted(seen - labels - {"other"})))
    series = re.findall(r'^idmint_http_requests_total\{route="([^"]*)",code="([^"]*)"\} ',
                        text, re.M)
    S.ok(len(series) == len(set(series)), "rows that share a label are one series",
         repr(sorted(series)))


def test_bad_tokens(d):
    for what, header in BAD_TOKENS:
        S.error(d.get("/v1/namespaces", headers={"Authorization": header}), 401,
                "unauthenticated", "GET /v1/namespaces with %s" % what)
    # Two Authorization headers, the weaker first: no admin route through the second.
    r = d.raw(("GET /v1/audit HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"
               "Authorization: Bearer %s\r\nConnection: close\r\n\r\n" % (MINT, ADMIN)).encode())
    S.ok(r.status in (400, 401, 403), "mint + admin Authorization headers do not reach /v1/audit",
         "%s: expected 400, 401 or 403, got %s" % (r.request, r.show()))


def test_path_tricks(d):
    """Spellings of admin routes must not reach them with a mint token."""
    tricks = ["/v1/ids/../audit", "/v1/../v1/audit", "/v1//audit", "/v1/audit/",
              "/V1/AUDIT", "/v1/%61udit", "/v1/audit%2F", "/./v1/audit",
              "/v1/namespaces/../audit"]
    for p in tricks:
        r = d.raw(("GET %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"
                   "Connection: close\r\n\r\n" % (p, MINT)).encode())
        leaked = r.status == 200 and b"entries" in r.body
        S.ok(r.status is not None and 400 <= r.status < 500 and not leaked,
             "GET %s with a mint token does not reach the audit log" % p,
             "expected 400/403/404, got %s" % r.show())
    for p in ("/v1/../internal/ranges/lease", "/internal/ranges/lease/",
              "/v1/ids/../../internal/ranges/lease", "/INTERNAL/ranges/lease"):
        body = b'{"namespace":"invoices","incarnation":"trick","request_id":"t","count":5}'
        r = d.raw(("POST %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"
                   "Content-Type: application/json\r\nContent-Length: %d\r\n"
                   "Connection: close\r\n\r\n" % (p, MINT, len(body))).encode() + body)
        S.ok(r.status is not None and 400 <= r.status < 500,
             "POST %s with a mint token reserves nothing" % p,
             "expected 400/403/404/405, got %s" % r.show())
    r = d.post("/internal/ranges/lease", {"namespace": "invoices", "incarnation": "trick",
                                          "request_id": "t", "count": 7}, token=GEN)
    S.json_ok(r, 200, "no trick recorded a reservation (count 7 is not a conflict)")
    for p in ("/v1/audit/", "/healthz/", "/v1/namespaces/orders/"):
        S.error(d.get(p, token=ADMIN), 404, "not_found",
                "GET %s (a trailing /) matches no route, even as admin" % p)


def test_hash_token():
    try:
        p = subprocess.run([IDMINTD, "--hash-token"], input="s3cret-token\n", text=True,
                           capture_output=True, timeout=20 * H.SCALE, env=H.clean_env())
    except subprocess.TimeoutExpired:
        S.ok(False, "idmintd --hash-token", "did not exit within 20 s")
        return
    S.ok(p.returncode == 0 and H.sha256_hex("s3cret-token") in p.stdout,
         "idmintd --hash-token prints the sha256 of the token (newline stripped)",
         "rc %d, stdout %r, stderr %r" % (p.returncode, p.stdout, H.snip(p.stderr)))


def test_loopback_only():
    d = H.Daemon(IDMINTD, listen="0.0.0.0:0")
    S.daemons.append(d)
    proc = subprocess.Popen(d.argv(), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, cwd=d.dir, env=H.clean_env())
    try:
        out, _ = proc.communicate(timeout=10 * H.SCALE)
        S.ok(proc.returncode not in (0, None) and proc.returncode > 0,
             "no tokens + --listen 0.0.0.0:0 is refused with a non-zero exit",
             "exit status %s, output %r" % (proc.returncode, H.snip(out)))
        S.ok(out.strip() != b"", "the refusal says why", "no output")
        S.ok(not os.path.exists(d.port_file) or open(d.port_file).read().strip() == "",
             "the refused daemon wrote no port", "")
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        S.ok(False, "no tokens + --listen 0.0.0.0:0 is refused",
             "the daemon kept running for 10 s (killed)")
    try:
        ok = S.daemon(IDMINTD)
    except H.HarnessError as e:
        S.ok(False, "no tokens + --listen 127.0.0.1:0 starts", str(e))
        return
    S.json_ok(ok.get("/v1/audit"), 200, "no tokens: every caller is admin (GET /v1/audit)")
    S.json_ok(ok.post("/v1/namespaces", {"name": "open", "kind": "snowflake"}), 201,
              "no tokens: every caller is admin (POST /v1/namespaces)")
    S.stop_daemon(ok, "no-token daemon: SIGTERM exits 0")


def test_port_in_use():
    """With threads > 1 the listeners share their port (SO_REUSEPORT); a second
    daemon of the same user must still be refused the port, not split its traffic."""
    cfg = "[server]\nthreads = 2\n"
    try:
        first = S.daemon(IDMINTD, config=cfg)
    except H.HarnessError as e:
        S.ok(False, "a daemon with threads = 2 starts", str(e))
        return
    for threads in (2, 1):
        second = H.Daemon(IDMINTD, config="[server]\nthreads = %d\n" % threads,
                          listen="127.0.0.1:%d" % first.port)
        S.daemons.append(second)
        proc = subprocess.Popen(second.argv(), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, cwd=second.dir, env=H.clean_env())
        try:
            out, _ = proc.communicate(timeout=10 * H.SCALE)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, _ = proc.communicate()
        S.ok(proc.returncode not in (0, None) and b"another process has this port" in out,
             "threads = %d on the port of a running threads = 2 daemon is refused" % threads,
             "exit status %s, output %r" % (proc.returncode, H.snip(out)))
    S.json_ok(first.get("/healthz"), 200, "the first daemon still serves")
    S.stop_daemon(first, "threads = 2 daemon: SIGTERM exits 0")


def main():
    try:
        d = S.daemon(IDMINTD, config=H.tokens_config(TOKENS))
    except H.HarnessError as e:
        S.ok(False, "start idmintd with tokens", str(e))
        S.finish()
    table = list_routes()
    S.run("setup", setup, d)
    S.run("matrix", test_matrix, d, table)
    S.run("metrics labels", test_metrics_labels, d, table)
    S.run("bad tokens", test_bad_tokens, d)
    S.run("path tricks", test_path_tricks, d)
    S.stop_daemon(d, "token daemon: SIGTERM exits 0")
    S.run("hash token", test_hash_token)
    S.run("loopback only", test_loopback_only)
    S.run("port in use", test_port_in_use)
    S.finish()


if __name__ == "__main__":
    main()
