#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Issue 28 item 7, third part: keyed batches on a namespace with 1 s time
# units (8 IDs a unit) need several units. On main they were minted on store
# threads that slept for each next unit, so as many of them as there are
# store threads (two here) held every one for seconds and the lease calls
# of remote generators (take, renew) waited behind them or got 503 at
# store_deadline_ms: a library with a short lease lost it. Now no store
# thread waits for a unit (the loop finishes a batch from a timer, and a
# store thread saves it), and the lease routes have a store thread of their
# own. The test measures lease takes and renewals alone (the baseline), then
# again while two keyed batches of more than a unit and two plain ones are in
# flight, and compares; every ID collected is checked for duplicates, and
# each key replays its batch.

import json
import os
import sys
import threading
import time

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import daemon_harness as H  # noqa: E402

IDMINTD, IDMINT = H.usage_paths()
S = H.Suite("slow_units")

SLOW = "slow"  # 1 s units, 2^3 = 8 IDs a unit per worker
GEN = "gen"    # the namespace remote generators lease worker ids of
STORE_THREADS = 2
BATCHES, COUNT = 2, 9  # keyed, more than a unit each: every store thread on main
PLAIN = 3              # two plain batches beside them; 24 IDs in all, three units
OPS = 12               # lease calls measured in each phase
RATIO = 5              # "promptly": within 5x the same calls alone (medians, and worst calls)
SHARE = 10             # ... or, for the worst call, a tenth of what the batches took


class State:
    ids = []
    holders = 0


def holder():
    State.holders += 1
    return "%032x" % (0xfeed0000 + State.holders)


def lease_ops(d, n):
    """@n lease calls, takes and renewals in turn: [(ms, Resp)]."""
    out = []
    held = None
    for i in range(n):
        if i % 2 == 0 or held is None:
            body = {"op": "take", "namespace": GEN, "region": 0, "holder": holder(),
                    "lease_ms": 3000}
        else:
            body = {"op": "renew", "namespace": GEN, "worker_id": held["worker_id"],
                    "holder": held["holder"], "generation": held["generation"]}
        t0 = time.monotonic()
        r = d.post("/internal/workers/lease", body)
        out.append(((time.monotonic() - t0) * 1000.0, r))
        j = r.json() if r.status == 200 else None
        if body["op"] == "take" and isinstance(j, dict):
            held = {"worker_id": j["worker_id"], "holder": body["holder"],
                    "generation": j["generation"]}
    return out


def check_ops(ops, what):
    bad = [r for _, r in ops if r.status != 200]
    S.ok(not bad, "%s: every lease call answered 200" % what,
         "; ".join(r.show() for r in bad[:3]))
    return max(ms for ms, _ in ops)


def keyed(d, key, count=COUNT):
    return d.get("/v1/ids?namespace=%s&count=%d" % (SLOW, count),
                 headers={"Idempotency-Key": key}, timeout=30.0)


def ids_of(r):
    j = r.json() if r.status == 200 else None
    return [int(x) for x in j["ids"]] if isinstance(j, dict) else None


def setup(d):
    for body in ({"name": SLOW, "kind": "snowflake", "layout": "35/0/10/3", "unit_ms": 1000},
                 {"name": GEN, "kind": "snowflake", "layout": "41/0/10/12"}):
        S.json_ok(d.post("/v1/namespaces", body), 201, "create %s" % body["name"])
    # Open the daemon's handle of the slow namespace (through a store thread).
    r = d.get("/v1/ids?namespace=%s&count=1" % SLOW, timeout=30.0)
    got = ids_of(r)
    S.ok(got is not None and len(got) == 1, "a first ID of the 1 s namespace", r.show())
    State.ids += got or []


def median(ops):
    return sorted(ms for ms, _ in ops)[len(ops) // 2]


def test_leases_stay_prompt(d):
    lease_ops(d, 2)  # warm: the first calls open the store thread's authority
    alone = lease_ops(d, OPS)
    base = check_ops(alone, "alone")
    results = {}

    def batch(i):
        t0 = time.monotonic()
        if i < BATCHES:
            r = keyed(d, "slow-batch-%d" % i)
        else:
            r = d.get("/v1/ids?namespace=%s&count=%d" % (SLOW, PLAIN), timeout=30.0)
        results[i] = (r, time.monotonic() - t0)

    workers = [threading.Thread(target=batch, args=(i,)) for i in range(BATCHES + 2)]
    started = time.monotonic()
    for t in workers:
        t.start()
    time.sleep(0.2)  # the batches are on the store threads and loop timers by now
    during = lease_ops(d, OPS)
    ops_done = time.monotonic() - started
    in_flight = sum(t.is_alive() for t in workers)
    for t in workers:
        t.join(60 * H.SCALE)
    elapsed = time.monotonic() - started
    worst = check_ops(during, "while the batches were in flight")
    print("lease calls alone: worst %.1f ms, median %.1f ms; with %d keyed batches of %d IDs "
          "and 2 plain ones of %d (1 s units of 8 IDs) in flight: worst %.1f ms, median %.1f ms; "
          "the batches took %.2f s, %d of %d still in flight when the lease calls were done "
          "(%.2f s)"
          % (base, median(alone), BATCHES, COUNT, PLAIN, worst, median(during), elapsed,
             in_flight, BATCHES + 2, ops_done), flush=True)
    S.ok(in_flight > 0, "the lease calls overlapped the batches",
         "every batch was done after %.2f s" % ops_done)
    # The batches' own work loads a small machine too, so "prompt" is either
    # close to the calls alone or far below a wait for a unit (1 s here).
    S.ok(median(during) <= max(RATIO * median(alone), elapsed * 1000.0 / SHARE),
         "lease takes and renewals stay prompt while slow-unit batches are in flight "
         "(median within %dx the median alone, or a tenth of the batches' time)" % RATIO,
         "median %.1f ms in flight vs %.1f ms alone; batches %.0f ms"
         % (median(during), median(alone), elapsed * 1000.0))
    S.ok(worst <= max(RATIO * base, elapsed * 1000.0 / SHARE),
         "no lease call waits for the batches (worst within %dx the worst alone, or a "
         "tenth of the batches' time)" % RATIO,
         "worst %.1f ms in flight vs %.1f ms alone; batches %.0f ms"
         % (worst, base, elapsed * 1000.0))
    for i in range(BATCHES + 2):
        r, took = results.get(i, (H.Resp("batch %d" % i, error="no result"), 0))
        got = ids_of(r)
        want = COUNT if i < BATCHES else PLAIN
        S.ok(got is not None and len(got) == want,
             "batch %d (%s) gets %d IDs" % (i, "keyed" if i < BATCHES else "plain", want),
             r.show())
        State.ids += got or []
        if i < BATCHES and got:
            again = ids_of(keyed(d, "slow-batch-%d" % i))
            S.ok(again == got, "key slow-batch-%d replays its batch" % i,
                 "%r vs %r" % (again, got))


def test_no_duplicates():
    dup = len(State.ids) - len(set(State.ids))
    print("checked %d IDs: %d duplicates" % (len(State.ids), dup), flush=True)
    S.ok(State.ids and dup == 0, "no ID was handed out twice",
         "%d duplicates in %d" % (dup, len(State.ids)))


def test_metrics(d):
    text = d.get("/metrics").text
    S.ok("idmint_store_pool_lease_threads 1" in text,
         "/metrics shows the lease routes' own store thread",
         json.dumps([line for line in text.splitlines() if "store_pool" in line][:12]))


def main():
    d = S.daemon(IDMINTD, extra_args=["--store-threads", str(STORE_THREADS)])
    S.run("setup", setup, d)
    S.run("leases stay prompt", test_leases_stay_prompt, d)
    S.run("metrics", test_metrics, d)
    S.run("duplicates", test_no_duplicates)
    S.stop_daemon(d, "idmintd stops cleanly")
    S.finish()


if __name__ == "__main__":
    main()
