#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# docs/openapi.json against the daemon itself:
#   - it lists exactly the routes of `idmintd --list-routes`: the same paths and
#     methods, each operation's x-idmint-role the route's role, its query
#     parameters the route's params and its request body's properties the
#     route's fields;
#   - it is an OpenAPI 3.1 document whose every schema is a valid JSON Schema
#     (Draft 2020-12, as 3.1 uses) and every $ref resolves;
#   - an OpenAPI 3.1 validator (tests/support/openapi-validator: npm's
#     @seriousme/openapi-schema-validator, installed with `npm ci` into a
#     temporary folder) finds it valid, and finds broken copies of it invalid;
#   - a live daemon's replies to a request of every route (good ones, and
#     the usual mistakes) match the schema the document gives for the route,
#     method and status.

import copy
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import jsonschema

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import daemon_harness as H  # noqa: E402
from openapi_check import DOC, METHODS, SRC, check_reply, resolve  # noqa: E402

IDMINTD, IDMINT = H.usage_paths()
S = H.Suite("openapi")


def routes():
    out = subprocess.run([IDMINTD, "--list-routes"], check=True, capture_output=True, text=True)
    return [json.loads(line) for line in out.stdout.splitlines() if line.strip()]


def check_routes():
    table = routes()
    listed = {(r["method"].lower(), r["path"]): r for r in table}
    documented = {(m, p): op for p, item in DOC["paths"].items() for m, op in item.items()
                  if m in METHODS}
    S.ok(set(listed) == set(documented), "the document and the route table list the same routes",
         "only in the table: %s; only in the document: %s"
         % (sorted(set(listed) - set(documented)), sorted(set(documented) - set(listed))))
    for key in sorted(set(listed) & set(documented)):
        r, op = listed[key], documented[key]
        what = "%s %s" % (key[0].upper(), key[1])
        S.ok(op.get("x-idmint-role") == r["role"], what + ": role",
             "document %r, table %r" % (op.get("x-idmint-role"), r["role"]))
        if r["role"] == "none":
            S.ok(op.get("security") == [], what + ": an open route asks for no token")
        params = {p["name"] for p in op.get("parameters", []) if p["in"] == "query"}
        S.ok(params == set(r["params"]), what + ": query parameters",
             "document %s, table %s" % (sorted(params), sorted(r["params"])))
        path_params = {p["name"] for p in op.get("parameters", []) if p["in"] == "path"}
        in_path = {seg[1:-1] for seg in key[1].split("/") if seg.startswith("{")}
        S.ok(path_params == in_path, what + ": path parameters",
             "document %s, path %s" % (sorted(path_params), sorted(in_path)))
        body = op.get("requestBody")
        fields = set()
        if body is not None:
            schema = resolve(body["content"]["application/json"]["schema"])
            fields = set(schema.get("properties", {}))
            S.ok(schema.get("additionalProperties") is False, what + ": the body takes no other field")
        S.ok(fields == set(r["fields"]), what + ": body fields",
             "document %s, table %s" % (sorted(fields), sorted(r["fields"])))


def check_document():
    S.ok(DOC.get("openapi") == "3.1.0", "an OpenAPI 3.1.0 document")
    S.ok(isinstance(DOC.get("info", {}).get("title"), str) and "version" in DOC["info"],
         "info has a title and a version")
    for name, schema in DOC["components"]["schemas"].items():
        try:
            jsonschema.Draft202012Validator.check_schema(resolve(schema))
            S.ok(True, "schema %s is valid JSON Schema 2020-12" % name)
        except (jsonschema.SchemaError, ValueError, KeyError) as e:
            S.ok(False, "schema %s is valid JSON Schema 2020-12" % name, str(e)[:400])
    ids = []
    for path, item in DOC["paths"].items():
        for m, op in item.items():
            if m not in METHODS:
                continue
            ids.append(op.get("operationId"))
            what = "%s %s" % (m.upper(), path)
            S.ok(op.get("responses") and "default" in op["responses"], what + ": responses and a default")
            try:
                resolve(op)
            except (ValueError, KeyError) as e:
                S.ok(False, what + ": every $ref resolves", str(e))
    S.ok(len(ids) == len(set(ids)) and None not in ids, "every operation has its own operationId")


VALIDATOR = os.path.join(SRC, "tests", "support", "openapi-validator")
VALIDATOR_FILES = ("package.json", "package-lock.json", "validate.mjs")


def broken_copies():
    """(what, document, a word its report must hold): copies of DOC that an OpenAPI 3.1
    validator must reject."""
    path = "/v1/ids"
    no_responses = copy.deepcopy(DOC)
    no_responses["paths"][path]["get"]["responses"] = "none"
    no_info = copy.deepcopy(DOC)
    del no_info["info"]
    bad_ref = copy.deepcopy(DOC)
    bad_ref["paths"][path]["get"]["responses"]["200"] = {"$ref": "#/components/responses/Nosuch"}
    return [("an operation whose responses is a string", no_responses, "responses"),
            ("no info", no_info, "info"),
            ("a $ref to a missing component", bad_ref, "Nosuch")]


def check_validator():
    """docs/openapi.json through a real OpenAPI 3.1 validator, installed from the npm
    registry with the committed package-lock.json into a temporary folder (never the
    source tree)."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if not S.ok(node and npm, "node and npm are installed (scripts/deps.sh test)",
                "node: %s, npm: %s" % (node, npm)):
        return
    with tempfile.TemporaryDirectory(prefix="idmint-openapi-validator-") as tmp:
        for name in VALIDATOR_FILES:
            shutil.copy(os.path.join(VALIDATOR, name), tmp)
        what = "npm ci of tests/support/openapi-validator (@seriousme/openapi-schema-validator)"
        limit = 180 * H.SCALE
        start = time.monotonic()
        try:
            # npm gives up on an unreachable registry (2 retries: about 70 s) before this
            # timeout, and says why.
            r = subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--ignore-scripts",
                                "--fetch-timeout=30000", "--fetch-retries=2"],
                               cwd=tmp, capture_output=True, text=True, timeout=limit)
        except subprocess.TimeoutExpired:
            S.ok(False, what, "no end in %.0f s: is the npm registry reachable?" % limit)
            return
        took = time.monotonic() - start
        if not S.ok(r.returncode == 0, what,
                    "exit %d after %.1f s (the npm registry unreachable, or package-lock.json "
                    "out of step with package.json?); its last words:\n%s"
                    % (r.returncode, took, (r.stderr or r.stdout)[-1500:])):
            return
        print("note: %s took %.1f s" % (what, took), flush=True)

        def validate(path):
            v = subprocess.run([node, os.path.join(tmp, "validate.mjs"), path], cwd=tmp,
                               capture_output=True, text=True, timeout=60 * H.SCALE)
            return v.returncode, v.stdout + v.stderr

        doc_path = os.path.join(SRC, "docs", "openapi.json")
        rc, out = validate(doc_path)
        S.ok(rc == 0 and "valid OpenAPI 3.1.0" in out,
             "docs/openapi.json is a valid OpenAPI 3.1.0 document (the validator)",
             "exit %d: %s" % (rc, out[-4000:]))
        for what, doc, word in broken_copies():
            path = os.path.join(tmp, "broken.json")
            with open(path, "w") as f:
                json.dump(doc, f)
            rc, out = validate(path)
            S.ok(rc == 1 and "INVALID" in out and word in out,
                 "the validator rejects a copy with %s" % what,
                 "exit %d, expected 1 and a report naming %r: %s" % (rc, word, out[-2000:]))


def check_replies():
    d = S.daemon(IDMINTD)
    create = [("orders", {"name": "orders", "kind": "snowflake"}),
              ("rng", {"name": "rng", "kind": "range", "block": 100})]
    for _, b in create:
        check_reply(S, d.post("/v1/namespaces", b), "/v1/namespaces", "POST", "create " + b["name"])
    check_reply(S, d.post("/v1/namespaces", create[0][1]), "/v1/namespaces", "POST", "create again (409)")
    check_reply(S, d.post("/v1/namespaces", {"name": "x", "kind": "snowflake", "nope": 1}),
                "/v1/namespaces", "POST", "an unknown field (400)")
    r = d.get("/v1/ids?namespace=orders&count=3")
    check_reply(S, r, "/v1/ids", "GET", "mint")
    some_id = r.json()["ids"][0] if r.status == 200 else "1"
    calls = [
        ("GET", "/v1/ids", "/v1/ids?namespace=rng&count=2", None, "mint a range"),
        ("GET", "/v1/ids", "/v1/ids?namespace=orders&count=0", None, "count 0 (400)"),
        ("GET", "/v1/ids", "/v1/ids?namespace=nosuch", None, "unknown namespace (404)"),
        ("GET", "/v1/ids/{id}/decode", "/v1/ids/%s/decode?namespace=orders" % some_id, None, "decode"),
        ("GET", "/v1/ids/{id}/decode", "/v1/ids/abc/decode?namespace=orders", None, "decode junk"),
        ("GET", "/v1/ids/{id}/trace", "/v1/ids/%s/trace?namespace=orders" % some_id, None, "trace"),
        ("POST", "/v1/collisions", "/v1/collisions",
         {"namespace": "orders", "id": some_id, "observed_ms": H.now_ms(), "note": "t"}, "report"),
        ("GET", "/v1/collisions", "/v1/collisions?limit=5", None, "collisions"),
        ("POST", "/internal/workers/lease", "/internal/workers/lease",
         {"op": "take", "namespace": "orders", "region": 0, "holder": "ab" * 16, "lease_ms": 60000,
          "host": "t", "pid": 1, "program": "t"}, "take"),
        ("POST", "/internal/workers/lease", "/internal/workers/lease",
         {"op": "renew", "namespace": "orders", "region": 0, "holder": "cd" * 16, "worker_id": 0,
          "generation": "1", "lease_ms": 60000}, "a stranger's renew (503)"),
        ("POST", "/internal/ranges/lease", "/internal/ranges/lease",
         {"namespace": "rng", "incarnation": "i1", "request_id": "r1", "count": 10}, "reserve"),
        ("POST", "/internal/ranges/forget", "/internal/ranges/forget",
         {"namespace": "rng", "incarnation": "i1", "before_request_id": "r2"}, "forget"),
        ("GET", "/internal/history", "/internal/history?seq=1", None, "history"),
        ("GET", "/internal/history", "/internal/history?seq=x", None, "history of junk"),
        ("GET", "/v1/namespaces", "/v1/namespaces", None, "namespaces"),
        ("GET", "/v1/namespaces/{ns}", "/v1/namespaces/rng", None, "one namespace"),
        ("GET", "/v1/namespaces/{ns}", "/v1/namespaces/nosuch", None, "no such namespace"),
        ("POST", "/v1/namespaces/{ns}/disable", "/v1/namespaces/rng/disable", None, "disable"),
        ("POST", "/v1/namespaces/{ns}/enable", "/v1/namespaces/rng/enable", None, "enable"),
        ("GET", "/v1/namespaces/{ns}/workers", "/v1/namespaces/orders/workers", None, "workers"),
        ("GET", "/v1/namespaces/{ns}/bounds",
         "/v1/namespaces/orders/bounds?from=2026-06-01T00:00:00Z&to=2026-06-02T00:00:00Z", None,
         "bounds"),
        ("GET", "/v1/namespaces/{ns}/bounds", "/v1/namespaces/orders/bounds?from=x&to=y", None,
         "bounds of junk"),
        ("GET", "/v1/audit", "/v1/audit?limit=3", None, "audit"),
        ("GET", "/v1/status", "/v1/status", None, "status"),
        ("GET", "/status", "/status", None, "status page"),
        ("GET", "/metrics", "/metrics", None, "metrics"),
        ("GET", "/healthz", "/healthz", None, "healthz"),
        ("GET", "/readyz", "/readyz", None, "readyz"),
        ("GET", "/v1/openapi.json", "/v1/openapi.json", None, "the document"),
        ("POST", "/v1/namespaces/{ns}/migrate", "/v1/namespaces/orders/migrate",
         {"name": "orders2", "kind": "snowflake"}, "migrate"),
    ]
    done = set()
    for method, pattern, url, body, what in calls:
        r = d.request(method, url, body=body)
        check_reply(S, r, pattern, method, what)
        done.add((method.lower(), pattern))
    everything = {(m, p) for p, item in DOC["paths"].items() for m in item if m in METHODS}
    S.ok(done | {("post", "/v1/namespaces")} == everything, "a request of every documented route",
         "not sent: %s" % sorted(everything - done - {("post", "/v1/namespaces")}))
    served = d.get("/v1/openapi.json")
    S.ok(served.status == 200 and served.json() == DOC,
         "GET /v1/openapi.json serves docs/openapi.json as built", H.snip(served.body, 200))
    S.stop_daemon(d, "the daemon stops cleanly")


S.run("routes", check_routes)
S.run("document", check_document)
S.run("validator", check_validator)
S.run("replies", check_replies)
S.finish()
