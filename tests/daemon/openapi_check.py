# SPDX-License-Identifier: Apache-2.0
"""docs/openapi.json for the daemon tests: the document, its $refs resolved, and
a check of a reply against the schema it gives for a route, method and status
(tests/daemon/test_openapi.py, test_roles.py)."""

import json
import os

import jsonschema

import daemon_harness as H

SRC = os.environ.get("IDMINT_SOURCE_DIR") or os.path.join(os.path.dirname(__file__), "..", "..")
with open(os.path.join(SRC, "docs", "openapi.json")) as f:
    DOC = json.load(f)
METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")


def resolve(node, seen=()):
    """@node with every local $ref replaced by what it names (schemas here do not recurse)."""
    if isinstance(node, dict):
        if "$ref" in node:
            target = node["$ref"]
            if not target.startswith("#/") or target in seen:
                raise ValueError("unresolvable or recursive $ref %s" % target)
            obj = DOC
            for part in target[2:].split("/"):
                obj = obj[part]
            return resolve(obj, seen + (target,))
        return {k: resolve(v, seen) for k, v in node.items()}
    if isinstance(node, list):
        return [resolve(v, seen) for v in node]
    return node


def schema_for(path, method, status, ctype="application/json"):
    responses = DOC["paths"][path][method.lower()]["responses"]
    r = responses.get(str(status)) or responses.get("default")
    if r is None:
        return None
    content = r.get("content", {})
    return resolve(content[ctype]["schema"]) if ctype in content else None


def check_reply(S, resp, path, method, what):
    if resp.status is None:
        S.ok(False, what + ": an answer", str(resp.error))
        return
    ctype = (resp.header("Content-Type") or "").split(";")[0].strip()
    schema = schema_for(path, method, resp.status, ctype)
    S.ok(schema is not None, "%s: status %s, %s is in the document" % (what, resp.status, ctype))
    if schema is None or ctype != "application/json":
        return
    try:
        jsonschema.validate(resp.json(), schema, cls=jsonschema.Draft202012Validator)
        S.ok(True, "%s: the %s reply matches its schema" % (what, resp.status))
    except jsonschema.ValidationError as e:
        S.ok(False, "%s: the %s reply matches its schema" % (what, resp.status),
             "%s at %s; body %s" % (e.message, list(e.absolute_path), H.snip(resp.body, 400)))
