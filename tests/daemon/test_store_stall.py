#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Issue 16 part 1, "done when": idmintd on PostgreSQL while the store stalls.
# Every PostgreSQL backend serving the daemon (its store threads, its
# handles' own lease and refill connections, its sampler), and the
# postmaster that would accept a new connection, is SIGSTOPped for STALL_S
# seconds, shorter than the daemon's lease and than what its range handle
# holds. Meanwhile mint clients (one process each, keep-alive) mint from the
# held snowflake lease and range and measure every request; a store caller
# calls store-bound routes. Checked: mints go on during the stall at the
# pace they had before it: p99 during (and after) the stall at most
# FACTOR x the p99 measured before it in this same run + SLACK_MS, and no
# mint waits for the stall (each under half of STALL_S); store-bound calls
# get 503 unavailable at store_deadline_ms, before the stall ends; after
# SIGCONT store-bound calls succeed again; no ID was handed out twice.
# No bound here is a fixed latency a busy machine can miss (issue 27): a
# loaded machine slows the baseline as much as the stall phase, while a mint
# that waited on the stalled store would take the store deadline (1 s) or the
# stall (5 s), hundreds of times SLACK_MS.
# Environment: IDMINT_PG_ENV (file with the URL, from tests/support/pg-start.sh).
# Usage: test_store_stall.py IDMINTD [IDMINT_CLI]

import http.client
import json
import multiprocessing as mp
import os
import random
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon_harness import HOST, SCALE, Daemon, Suite, usage_paths  # noqa: E402

DEADLINE_MS = 1000
STALL_S = 5.0
PHASE_S = 3.0  # before and after the stall
# During and after the stall, mint p99 <= FACTOR x its p99 before + SLACK_MS:
# room for a busy machine's scheduling noise, far below any wait on the store.
FACTOR = 3.0
SLACK_MS = 100.0  # a tenth of DEADLINE_MS: a mint that waited on the store takes all of it


def psql(url, sql):
    out = subprocess.run(["psql", "-X", "-q", "-A", "-t", "-d", url, "-c", sql],
                         capture_output=True, text=True, timeout=30)
    if out.returncode != 0:
        raise RuntimeError("psql: %s" % out.stderr.strip())
    return out.stdout


def local_ports_to(pid, pg_port):
    """Local ports of @pid's TCP connections to 127.0.0.1:@pg_port."""
    inodes = set()
    for fd in os.listdir("/proc/%d/fd" % pid):
        try:
            link = os.readlink("/proc/%d/fd/%s" % (pid, fd))
        except OSError:
            continue
        if link.startswith("socket:["):
            inodes.add(link[8:-1])
    ports = []
    with open("/proc/%d/net/tcp" % pid) as f:
        next(f)
        for line in f:
            p = line.split()
            local, remote, inode = p[1], p[2], p[9]
            if inode in inodes and int(remote.split(":")[1], 16) == pg_port:
                ports.append(int(local.split(":")[1], 16))
    return ports


def backends_of(url, pid, pg_port):
    ports = local_ports_to(pid, pg_port)
    if not ports:
        return []
    rows = psql(url, "select pid from pg_stat_activity where client_port in (%s)"
                % ",".join(str(p) for p in ports))
    return [int(x) for x in rows.split()]


def daemon_backends(postmaster, pid, pg_port):
    """Children of @postmaster serving @pid's connections (its client port is
    in their title), or too new to have a title of their own yet."""
    ports = ["(%d)" % p for p in local_ports_to(pid, pg_port)]
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if parent_of(int(entry)) != postmaster:
                continue
            with open("/proc/%s/cmdline" % entry, "rb") as f:
                title = f.read().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, IndexError, ValueError):
            continue
        if not title.startswith("postgres: ") or any(p in title for p in ports):
            found.append(int(entry))
    return found


def parent_of(pid):
    """The parent pid of @pid (/proc/PID/stat, after the command's closing paren)."""
    with open("/proc/%d/stat" % pid) as f:
        return int(f.read().rsplit(")", 1)[1].split()[1])


def minter(port, ns, count, t_end, q):
    """One process, one keep-alive connection: (start time, latency_ms, status) and the IDs.
    A request counts in the phase it was sent in, so one held up by the stall is in it."""
    c = http.client.HTTPConnection(HOST, port, timeout=30)
    path = "/v1/ids?namespace=%s&count=%d" % (ns, count)
    lat, ids, bad = [], [], 0
    while time.time() < t_end:
        sent = time.time()
        a = time.perf_counter()
        c.request("GET", path, headers={"Accept": "text/plain"})
        r = c.getresponse()
        body = r.read()
        b = time.perf_counter()
        lat.append((sent, (b - a) * 1000.0, r.status))
        if r.status == 200:
            ids.extend(int(x) for x in body.split())
        else:
            bad += 1
        time.sleep(0.001)  # a steady rate, not a saturating one: latency is the point
    c.close()
    q.put((ns, lat, ids, bad))


def store_caller(port, ns, t_end, q):
    """Store-bound calls one after another, each on a fresh connection."""
    calls = []
    k = 0
    while time.time() < t_end:
        k += 1
        c = http.client.HTTPConnection(HOST, port, timeout=30)
        a = time.time()
        if k % 2:
            c.request("GET", "/v1/namespaces/%s" % ns)
        else:
            c.request("POST", "/internal/ranges/lease",
                      body=json.dumps({"namespace": ns, "incarnation": "%032x" % k,
                                       "request_id": "%032x" % (k + 1), "count": 10}),
                      headers={"Content-Type": "application/json"})
        r = c.getresponse()
        body = r.read()
        calls.append((a, (time.time() - a) * 1000.0, r.status, r.getheader("Retry-After"),
                      body[:200].decode("utf-8", "replace")))
        c.close()
        time.sleep(0.05)
    q.put(("store", calls))


def p99(values):
    if not values:
        return float("nan")
    v = sorted(values)
    return v[min(len(v) - 1, int(len(v) * 0.99))]


def main():
    idmintd, _ = usage_paths()
    s = Suite("store_stall")
    env_file = os.environ.get("IDMINT_PG_ENV")
    if not env_file or not os.path.exists(env_file):
        print("IDMINT_PG_ENV must name the file with the PostgreSQL URL (pg-start.sh)")
        sys.exit(1)
    url = open(env_file).read().split()[0]
    pg_port = int(url.rsplit(":", 1)[1].split("/")[0])
    tag = "%06x" % random.randrange(1 << 24)
    sf, rg = "stall-sf-" + tag, "stall-rg-" + tag
    d = Daemon(idmintd, extra_args=["--store-threads", "2", "--store-deadline-ms",
                                    str(DEADLINE_MS)])
    d.authority = url
    s.daemons.append(d)
    d.start()
    r = d.post("/v1/namespaces", body={"name": sf, "kind": "snowflake"})
    s.status(r, 201, "snowflake namespace created")
    # Blocks of a million: what the handle holds outlasts the stall many times.
    r = d.post("/v1/namespaces", body={"name": rg, "kind": "range", "block": 1000000,
                                       "max_block": 10000000})
    s.status(r, 201, "range namespace created")
    for ns in (sf, rg):
        s.status(d.get("/v1/ids?namespace=%s&count=10" % ns), 200, "a first mint opens " + ns)
    for _ in range(4):  # both store threads have their connection open
        d.get("/v1/namespaces")

    t0 = time.time()
    t_stop = t0 + PHASE_S
    t_cont = t_stop + STALL_S
    t_end = t_cont + PHASE_S
    q = mp.Queue()
    procs = [mp.Process(target=minter, args=(d.port, sf, 5, t_end, q)),
             mp.Process(target=minter, args=(d.port, rg, 5, t_end, q)),
             mp.Process(target=store_caller, args=(d.port, rg, t_end, q))]
    for p in procs:
        p.start()

    time.sleep(max(0.0, t_stop - time.time()))
    # The postmaster first: once it is stopped no backend can start, so a
    # connection the daemon opens during the stall (a store thread that had
    # none yet) stalls too. Then every backend of the daemon, found among the
    # postmaster's children by the client port in its title; a child forked
    # just before the stop may not have its title yet and is stopped as well.
    # (Looking through psql first and stopping after left a window in which a
    # new backend stayed live: loaded runs saw a store-bound 200 mid-stall.)
    first = backends_of(url, d.proc.pid, pg_port)
    stopped = []
    if first:
        postmaster = parent_of(first[0])
        os.kill(postmaster, signal.SIGSTOP)
        stopped.append(postmaster)
        for _ in range(5):
            found = [c for c in daemon_backends(postmaster, d.proc.pid, pg_port)
                     if c not in stopped]
            if not found:
                break
            for pid in found:
                os.kill(pid, signal.SIGSTOP)
            stopped.extend(found)
    s.ok(len(stopped) >= 4, "the daemon's PostgreSQL backends are found",
         "%d processes (postmaster and backends)" % len(stopped))
    stopped_at = time.time()
    try:
        time.sleep(max(0.0, t_cont - time.time()))
    finally:
        for pid in stopped:
            try:
                os.kill(pid, signal.SIGCONT)
            except ProcessLookupError:
                pass
    cont_at = time.time()

    results = [q.get(timeout=60 * SCALE) for _ in procs]
    for p in procs:
        p.join(30 * SCALE)
    all_ids, store_calls = [], []
    for res in results:
        if res[0] == "store":
            store_calls = res[1]
            continue
        ns, lat, ids, bad = res
        all_ids.extend((ns, i) for i in ids)
        s.ok(bad == 0, "every mint of %s answered 200" % ns, "%d did not" % bad)
        base = None
        for phase, a, b in (("before", t0, stopped_at), ("during", stopped_at, cont_at),
                            ("after", cont_at, t_end)):
            ms = [x[1] for x in lat if a <= x[0] < b]
            v = p99(ms)
            print("%s %s the stall: %d mints, p50 %.2f ms, p99 %.2f ms, max %.2f ms"
                  % (ns, phase, len(ms), sorted(ms)[len(ms) // 2] if ms else 0, v,
                     max(ms) if ms else 0), flush=True)
            s.ok(len(ms) >= 100, "mints of %s went on %s the stall" % (ns, phase), str(len(ms)))
            if phase == "before":
                base = v
                continue
            bound = FACTOR * base + SLACK_MS
            s.ok(v <= bound, "mints of %s %s the stall keep p99 <= %.0f x p99 before + %.0f ms"
                 % (ns, phase, FACTOR, SLACK_MS),
                 "p99 %.2f ms, before %.2f ms, bound %.2f ms" % (v, base, bound))
            if phase == "during":
                s.ok(ms and max(ms) < STALL_S * 1000.0 / 2,
                     "no mint of %s waited for the stalled store" % ns,
                     "slowest %.0f ms of a %.0f ms stall" % (max(ms) if ms else 0, STALL_S * 1000))

    # Calls sent during the stall and answered before it ended: one that
    # waited for the store would end after SIGCONT and not be here. The
    # store caller calls one after another, so two or more answered within
    # the stall means each was answered well before the store came back; the
    # message says the answer came from the deadline, not from the store.
    during = [c for c in store_calls if stopped_at + 0.2 <= c[0] and c[0] + c[1] / 1000.0 < cont_at]
    s.ok(len(during) >= 2, "store-bound calls were answered during the stall",
         "%d of %d" % (len(during), len([c for c in store_calls
                                        if stopped_at + 0.2 <= c[0] < cont_at])))
    wrong = [c for c in during if c[2] != 503 or c[3] is None or '"unavailable"' not in c[4]
             or "store_deadline_ms" not in c[4]]
    worst = max((c[1] for c in during), default=0)
    print("store-bound calls during the stall: %d, all 503: %s, slowest %.0f ms (deadline %d ms)"
          % (len(during), not wrong, worst, DEADLINE_MS), flush=True)
    s.ok(not wrong, "store-bound calls get 503 unavailable + Retry-After at the store deadline",
         str(wrong[:3]))
    ok_after = [c for c in store_calls if c[0] >= cont_at and c[2] in (200, 201)]
    s.ok(bool(ok_after), "store-bound calls succeed again after SIGCONT")
    if ok_after:
        print("first store-bound success %.0f ms after SIGCONT" % ((ok_after[0][0] - cont_at) * 1000
              + ok_after[0][1]), flush=True)
    uniq = len(set(all_ids))
    print("IDs checked: %d, duplicates: %d" % (len(all_ids), len(all_ids) - uniq), flush=True)
    s.ok(len(all_ids) > 1000 and uniq == len(all_ids), "no ID was handed out twice",
         "%d IDs, %d distinct" % (len(all_ids), uniq))
    s.ok(d.get("/readyz").status == 200, "ready again after the stall")
    s.stop_daemon(d, "the daemon stops cleanly after the stall")
    s.finish()


if __name__ == "__main__":
    main()
