#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Issue 28 item 6, retention: "a replay gets new IDs when another node
# prunes with a faster clock or a shorter retention". Two idmintd nodes on
# one PostgreSQL authority; node B's wall clock runs two days ahead
# (libfaketime) and it keeps its own batches 1 s ([provenance] batches_s).
# Node A saves a keyed batch; B then saves enough batches of its own that it
# prunes several times (the authority prunes every 16 records; B has one
# store thread, so one authority counts them all). A replay of A's key, on
# B and on A, still returns A's IDs: a batch's end is the store's (the
# server's clock + the retention of the node that saved it), never the
# pruning node's clock or retention. B's own 1 s batches do end, by the
# server's clock: the prune runs, and it is the server's clock that decides.
# Environment: IDMINT_PG_ENV (file with the URL, from tests/support/pg-start.sh).
# Usage: test_batch_retention.py IDMINTD [IDMINT_CLI]

import os
import random
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import daemon_harness as H  # noqa: E402

IDMINTD, IDMINT = H.usage_paths()
S = H.Suite("batch_retention")
FAKETIME_LIB = os.environ.get("IDMINT_FAKETIME_LIB",
                              "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1")
SKEW_DAYS = 2
TOKENS = {
    "ops": ("admin", "adm-0d2f4b6d8f0b2c4e6a8b0d2f4b6d8f1a"),
    "shop": ("mint", "mnt-1e3a5c7e9a1b3d5f7a9c1e3a5c7e9a2b"),
    "bulk": ("mint", "mnt-2f4b6d8f0b2c4e6a8b0d2f4b6d8f0b3c"),
}
ADMIN, SHOP, BULK = (TOKENS[n][1] for n in ("ops", "shop", "bulk"))


def psql(url, sql):
    out = subprocess.run(["psql", "-X", "-q", "-A", "-t", "-d", url, "-c", sql],
                         capture_output=True, text=True, timeout=30)
    if out.returncode != 0:
        raise RuntimeError("psql: %s" % out.stderr.strip())
    return out.stdout.strip()


def ids_of(resp):
    j = resp.json()
    return [int(x) for x in j["ids"]] if isinstance(j, dict) and "ids" in j else None


def keyed(d, ns, key, count, token):
    return d.get("/v1/ids?namespace=%s&count=%d" % (ns, count), token=token,
                 headers={"Idempotency-Key": key})


def skewed_env():
    """Node B's environment: its clocks SKEW_DAYS ahead (monotonic too: a constant offset)."""
    env = H.clean_env()
    env["LD_PRELOAD"] = FAKETIME_LIB
    env["FAKETIME"] = "+%dd" % SKEW_DAYS
    # The sanitizer runtime wants to be first; libfaketime only wraps the clock calls.
    env["ASAN_OPTIONS"] = ":".join(x for x in (env.get("ASAN_OPTIONS", ""),
                                                "verify_asan_link_order=0") if x)
    return env


def main():
    env_file = os.environ.get("IDMINT_PG_ENV")
    if not env_file or not os.path.exists(env_file):
        print("IDMINT_PG_ENV must name the file with the PostgreSQL URL (pg-start.sh)")
        sys.exit(1)
    if not os.path.exists(FAKETIME_LIB):
        print("no libfaketime at %s (Debian package faketime)" % FAKETIME_LIB)
        sys.exit(1)
    url = open(env_file).read().split()[0]
    ns = "ret-%06x" % random.randrange(1 << 24)
    mint = "[mint]\nnamespaces = %s\nlease_ms = 4000\nrenew_ms = 500\n" % ns
    a = H.Daemon(IDMINTD, config=H.tokens_config(TOKENS) + mint)
    # B in a region of its own: leases end by the taker's clock, so a node two
    # days ahead sees A's live lease as long over and may take A's worker id
    # (no ID repeats: B mints past A's E; but A's next mint is lease_lost,
    # which failed this test in one loaded run of three).
    b = H.Daemon(IDMINTD, env=skewed_env(), config=H.tokens_config(TOKENS) + mint + (
        "[provenance]\nbatches_s = 1\n[store]\nthreads = 1\n[limits]\nbatch_rate = 0\n"
        "[authority]\nregion = 1\n"))
    a.authority = b.authority = url
    S.daemons += [a, b]
    try:
        a.start()
        S.json_ok(a.post("/v1/namespaces", {"name": ns, "kind": "snowflake", "layout": "41/1/9/12"},
                         token=ADMIN), 201,
                  "setup: create " + ns)
        b.start()
    except H.HarnessError as e:
        S.ok(False, "start two idmintd nodes on one PostgreSQL authority", str(e))
        S.finish()
    for d, name in ((a, "A"), (b, "B (clock %d days ahead)" % SKEW_DAYS)):
        S.ok(H.wait_for(lambda d=d: d.get("/readyz").status == 200, 20), "node %s ready" % name,
             d.log()[-600:])

    # B's clock really is ahead: the time in an ID it mints says so.
    one = ids_of(b.get("/v1/ids?namespace=%s&count=1" % ns, token=BULK)) or [0]
    j = b.get("/v1/ids/%d/decode?namespace=%s" % (one[0], ns), token=BULK).json() or {}
    ahead_ms = int(j.get("unix_ms", "0")) - H.now_ms()
    S.ok(ahead_ms > (SKEW_DAYS - 1) * 86400000, "node B mints with a clock %d days ahead"
         % SKEW_DAYS, "an ID of B is %d ms ahead: %r" % (ahead_ms, j))
    S.ok(j.get("region") == 1, "node B mints in region 1, apart from A's leases", repr(j))

    r = keyed(a, ns, "replay-me", 20, SHOP)
    S.json_ok(r, 200, "node A saves key K")
    mine = ids_of(r)
    row = psql(url, "SELECT expires_ms - created_ms, abs(created_ms - (extract(epoch FROM now())"
               " * 1000)::bigint) < 600000 FROM idmint.batches WHERE key = 'replay-me'")
    S.ok(row == "86400000|t", "K is kept A's 24 h, stamped by the server's clock", repr(row))

    # B saves 40 batches of its own (one store thread: two prunes by B's authority).
    first_b = None
    for i in range(40):
        got = ids_of(keyed(b, ns, "b-%03d" % i, 1, BULK))
        S.ok(got is not None, "node B saves its key %d" % i)
        first_b = first_b or got
    for d, name in ((b, "B"), (a, "A")):
        S.ok(ids_of(keyed(d, ns, "replay-me", 20, SHOP)) == mine,
             "after B's prunes, a replay of K on node %s returns A's IDs" % name)

    # B's own batches are kept 1 s by the server's clock: once that has passed, B's next
    # prune (16 more records) takes them, and its key 0 mints anew.
    time.sleep(1.5)
    for i in range(40, 60):
        keyed(b, ns, "b-%03d" % i, 1, BULK)
    gone = psql(url, "SELECT count(*) FROM idmint.batches WHERE owner = 'bulk' AND key < 'b-040'")
    S.ok(gone == "0", "node B's 1 s batches were pruned by the server's clock", gone)
    again = ids_of(keyed(b, ns, "b-000", 1, BULK))
    S.ok(again is not None and first_b is not None and again != first_b,
         "B's key 0, pruned, mints anew", "%r vs %r" % (again, first_b))
    S.ok(ids_of(keyed(b, ns, "replay-me", 20, SHOP)) == mine, "and K still replays A's IDs")
    S.stop_daemon(a, "node A: SIGTERM exits 0")
    # Not a SIGTERM check: under libfaketime 0.9.10 any idmintd aborts in glibc's
    # futex code as it exits ("The futex facility returned an unexpected error code").
    b.kill()
    S.finish()


if __name__ == "__main__":
    main()
