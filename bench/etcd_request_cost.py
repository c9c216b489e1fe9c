#!/usr/bin/env python3
"""What one request costs an etcd cluster, in its members' CPU time.

    bench/etcd_request_cost.py ENV_FILE_OR_URL [N]

ENV_FILE_OR_URL is an etcd:// URL or a file whose first line is one (the env
file of tests/support/etcd-start.sh). For each request shape the store sends
through etcd's JSON gateway, N (default 1000) requests one after another on
one keep-alive connection to the first member, and the members'
process_cpu_seconds_total summed before and after (from /metrics): CPU per
request is what the cluster spends, across all members, to answer one. A
reservation in a start burst sends several of these (docs/fleet.md), so this
is the price list for the etcd store's request count. Not a test: no
thresholds. Its keys live under /idmint-cost-PID/ and are deleted at the end.
"""
import base64
import http.client
import json
import os
import re
import sys
import time


def members(arg):
    url = open(arg).readline().strip() if os.path.exists(arg) else arg
    if not url.startswith("etcd://"):
        sys.exit(f"etcd_request_cost: not an etcd:// URL: {url!r}")
    return url[len("etcd://"):].split("/")[0].split(",")


def b64(text):
    return base64.b64encode(text.encode()).decode()


def cluster_cpu(hosts):
    total = 0.0
    for host in hosts:
        name, port = host.split(":")
        conn = http.client.HTTPConnection(name, int(port), timeout=10)
        conn.request("GET", "/metrics")
        text = conn.getresponse().read().decode()
        conn.close()
        found = re.search(r"^process_cpu_seconds_total (\S+)", text, re.M)
        if found is None:
            sys.exit(f"etcd_request_cost: {host}/metrics has no process_cpu_seconds_total")
        total += float(found.group(1))
    return total


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    hosts = members(sys.argv[1])
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    name, port = hosts[0].split(":")
    conn = http.client.HTTPConnection(name, int(port), timeout=10)

    def post(path, body):
        conn.request("POST", path, json.dumps(body))
        reply = conn.getresponse()
        data = reply.read()
        if reply.status != 200:
            sys.exit(f"etcd_request_cost: {path}: HTTP {reply.status}: {data[:200]!r}")

    prefix = f"/idmint-cost-{os.getpid()}/"
    key = b64(prefix + "ns")
    absent = b64(prefix + "absent")
    queue, queue_end = b64(prefix + "q/"), b64(prefix + "q0")
    value = b64("x" * 200)  # about a namespace key's size
    post("/v3/kv/put", {"key": key, "value": value})
    for i in range(26):
        post("/v3/kv/put", {"key": b64(f"{prefix}q/{i:020d}"), "value": value})

    def rng(k, **extra):
        return {"request_range": dict({"key": k}, **extra)}

    view = [rng(key), rng(absent), rng(queue, range_end=queue_end, limit=26),
            rng(queue, range_end=queue_end, count_only=True), rng(key)]
    view_applied = [{"request_range": dict(op["request_range"], serializable=True)}
                    for op in view]
    put_if_absent = {"compare": [{"key": absent, "target": "CREATE", "create_revision": 0}],
                     "success": [{"request_put": {"key": key, "value": value}}]}
    shapes = [
        ("range, serializable", "/v3/kv/range", {"key": key, "serializable": True}),
        ("range, linearizable", "/v3/kv/range", {"key": key}),
        ("txn of 5 reads (a reservation's view)", "/v3/kv/txn", {"success": view}),
        ("the same, every range serializable", "/v3/kv/txn", {"success": view_applied}),
        ("txn: compare, one put", "/v3/kv/txn", put_if_absent),
        ("txn: compare, one put, 5 reads", "/v3/kv/txn",
         dict(put_if_absent, success=put_if_absent["success"] + view)),
    ]
    print(f"etcd_request_cost: {len(hosts)} members, {n} requests per shape to {hosts[0]}")
    print(f"  {'request':40s} {'per s':>7s} {'cluster CPU per request':>24s}")
    for label, path, body in shapes:
        cpu0, t0 = cluster_cpu(hosts), time.monotonic()
        for _ in range(n):
            post(path, body)
        t1, cpu1 = time.monotonic(), cluster_cpu(hosts)
        print(f"  {label:40s} {n / (t1 - t0):7.0f} {1e6 * (cpu1 - cpu0) / n:21.0f} us")
    post("/v3/kv/deleterange", {"key": b64(prefix), "range_end": b64(prefix[:-1] + "0")})
    conn.close()


if __name__ == "__main__":
    main()
