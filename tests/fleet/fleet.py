#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The fleet drill (issue 18, docs/fleet.md): N generators started together
on one authority, each minting at a paced rate, a rolling restart of some
(SIGTERM, then a fresh process) and kill -9 of others (restarted too), then
the authority's figures as the generators measured them and the verdict of
tests/fleet/check_fleet.py over their reports.

  fleet.py --idmint IDMINT --minter FLEET_MINTER [options] AUTHORITY

AUTHORITY is a store URL (sqlite:PATH, postgres://..., etcd://...,
http://host:port of an idmintd) or "sqlite" for a fresh file in --dir.
Exit status 0 only when the checker finds nothing, no start failed and no
process ran dry; --allow-failures reports those and exits 0 anyway, and
--expect-overlap inverts the checker's verdict (the planted-defect test).
"""
import argparse
import json
import math
import os
import random
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def wall_ms():
    return int(time.time() * 1000)


def pct(values, p):
    """The p-th percentile by nearest rank; None for no values."""
    if not values:
        return None
    v = sorted(values)
    return v[min(len(v) - 1, max(0, math.ceil(p / 100.0 * len(v)) - 1))]


def fmt_ms(v):
    return "-" if v is None else f"{v:.1f}"


class Drill:
    def __init__(self, args):
        self.a = args
        self.procs = []  # every process started: dict(idx, kind, popen, report, spawn_ms, ...)
        self.rng = random.Random(args.seed)

    # ==== setup ====

    def prepare(self):
        a = self.a
        if os.path.isdir(a.dir):
            shutil.rmtree(a.dir)
        os.makedirs(os.path.join(a.dir, "reports"))
        os.makedirs(os.path.join(a.dir, "logs"))
        if a.authority == "sqlite":
            a.authority = "sqlite:" + os.path.join(os.path.abspath(a.dir), "idmint.db")
        self.admin = a.admin_authority or a.authority
        tag = f"{os.getpid() % 10000}{wall_ms() % 100000}"
        self.ns = {"snowflake": f"fleet{tag}sf", "range": f"fleet{tag}rg"}
        self.cli("ns", "create", self.ns["snowflake"], "--kind", "snowflake", "--layout", a.layout)
        self.cli("ns", "create", self.ns["range"], "--kind", "range", "--block", str(a.block))

    def cli(self, *argv):
        subprocess.run([self.a.idmint, "--authority", self.admin, *argv], check=True,
                       stdout=subprocess.DEVNULL)

    # ==== processes ====

    def spawn(self, kind, start_at_ms, end_ms, planted=False, note="initial"):
        a = self.a
        n = len(self.procs)
        report = os.path.join(a.dir, "reports", f"{n:05d}-{kind}.jsonl")
        argv = [a.minter, "--url", a.authority, "--ns", self.ns[kind], "--report", report,
                "--kind", kind, "--rate", str(a.rate), "--tick-ms", str(a.tick_ms),
                "--seconds", f"{(end_ms - max(start_at_ms, wall_ms())) / 1000.0:.3f}",
                "--start-at-ms", str(start_at_ms), "--sample-every", str(a.sample_every),
                "--region", str(n % a.regions)]
        if kind == "snowflake":
            argv += ["--lease-ms", str(a.lease_ms), "--renew-ms", str(a.renew_ms)]
        if kind == "range" and a.range_target_ms:
            argv += ["--range-target-ms", str(a.range_target_ms)]
        if planted:
            argv.append("--share-worker")
        err = open(os.path.join(a.dir, "logs", f"{n:05d}.err"), "w")
        p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)
        err.close()
        self.procs.append({"n": n, "kind": kind, "popen": p, "report": report,
                           "spawn_ms": wall_ms(), "start_at_ms": start_at_ms, "note": note,
                           "signalled": None})
        return self.procs[-1]

    def run(self):
        a = self.a
        n_sf = int(round(a.procs * a.snowflake_share))
        kinds = ["snowflake"] * n_sf + ["range"] * (a.procs - n_sf)
        # Open together: every process sleeps until one instant, so the burst
        # hits the authority at once however long spawning took.
        # --ramp spreads the opens over that many seconds instead (a fleet
        # that comes up gradually); every process still mints --seconds.
        start_ms = wall_ms() + 1000 + 4 * a.procs
        ramp_ms = int(a.ramp * 1000)
        end_ms = start_ms + ramp_ms + int(a.seconds * 1000)
        self.rng.shuffle(kinds)
        for k, kind in enumerate(kinds):
            self.spawn(kind, start_ms + ramp_ms * k // max(1, len(kinds)), end_ms)
        self.start_ms, self.end_ms = start_ms, end_ms

        n_restart = int(round(a.procs * a.restart))
        n_kill = int(round(a.procs * a.kill))
        events = ["term"] * n_restart + ["kill"] * n_kill
        self.rng.shuffle(events)
        # Spread over the middle of the run, as a deploy would be; each event
        # picks its process then, among those running, so that a process
        # that failed to start does not use up the deploy.
        t0 = start_ms + ramp_ms
        span = (end_ms - t0) * 0.7
        events = [(int(t0 + (end_ms - t0) * 0.15 + span * (k + 0.5) / max(1, len(events))), what,
                   None) for k, what in enumerate(events)]
        self.skipped = 0
        for k in range(a.planted):
            t = int(start_ms + (end_ms - start_ms) * (0.3 + 0.1 * k))
            events.append((t, "planted", None))
        events.sort(key=lambda e: e[0])

        waiting = []  # (deadline, proc) stopped with SIGTERM, to be replaced on exit
        while events or waiting:
            now = wall_ms()
            while events and events[0][0] <= now:
                _, what, i = events.pop(0)
                if what == "planted":
                    self.spawn("snowflake", 0, end_ms, planted=True, note="planted")
                    continue
                running = [p for p in self.procs
                           if p["signalled"] is None and p["note"] != "planted"
                           and p["popen"].poll() is None]
                if not running:
                    self.skipped += 1
                    continue
                p = self.rng.choice(running)
                if what == "kill":
                    p["popen"].kill()
                    p["signalled"] = "kill"
                    self.spawn(p["kind"], 0, end_ms, note="after kill -9")
                else:
                    p["popen"].terminate()
                    p["signalled"] = "term"
                    waiting.append((now + 5000, p))
            for item in list(waiting):
                deadline, p = item
                if p["popen"].poll() is not None or wall_ms() > deadline:
                    if p["popen"].poll() is None:
                        p["popen"].kill()  # a deploy does not wait for ever either
                        p["term_ignored"] = True
                    waiting.remove(item)
                    self.spawn(p["kind"], 0, end_ms, note="rolling restart")
            time.sleep(0.02)

        # Each stops on its own at end_ms; a process still running well after is hung.
        hung = 0
        for p in self.procs:
            try:
                p["popen"].wait(timeout=max(0.1, (end_ms - wall_ms()) / 1000.0 + 15))
            except subprocess.TimeoutExpired:
                hung += 1
                p["hung"] = True
                p["popen"].terminate()
                try:
                    p["popen"].wait(timeout=5)
                except subprocess.TimeoutExpired:
                    p["popen"].kill()
                    p["popen"].wait()
        self.hung = hung

    # ==== figures ====

    def figures(self):
        a = self.a
        dur_s = (self.end_ms - self.start_ms) / 1000.0
        ops = {}
        failed = []
        first_initial, first_restart, open_lat = [], [], []
        minted = 0
        ran_dry = []
        exits = {}
        per_proc_rate = []
        for p in self.procs:
            rc = p["popen"].returncode
            if p["signalled"] != "kill":
                exits[rc] = exits.get(rc, 0) + 1
            ev_first = ev_open = ev_failed = state = None
            errors = []
            try:
                with open(p["report"]) as f:
                    lines = [json.loads(l) for l in f if l.strip().endswith("}")]
            except (OSError, ValueError):
                lines = []
            for ev in lines:
                kind = ev.get("ev")
                if kind == "op":
                    o = ops.setdefault(ev["op"], {"lat": [], "failed": 0, "by_s": {}})
                    o["lat"].append(ev["us"] / 1000.0)
                    o["failed"] += ev["rc"] != 0
                    sec = ev["at_ms"] // 1000
                    o["by_s"][sec] = o["by_s"].get(sec, 0) + 1
                elif kind == "first_id" and ev_first is None:
                    ev_first = ev
                elif kind == "opened":
                    ev_open = ev
                elif kind == "open_failed":
                    ev_failed = ev
                elif kind == "mint_failed":
                    errors.append(ev)
                elif kind in ("tick", "end"):
                    state = ev
            if ev_failed is not None or (ev_open is None and not lines):
                failed.append((p, ev_failed))
                continue
            if ev_open is not None:
                open_lat.append(ev_open["opened_ms"] - ev_open["open_ms"])
            if ev_first is not None:
                t0 = p["start_at_ms"] if p["start_at_ms"] > 0 else p["spawn_ms"]
                (first_initial if p["note"] == "initial" else first_restart).append(
                    ev_first["at_ms"] - t0)
            if state is not None:
                minted += state["minted"]
                if ev_open is not None and state["at_ms"] > ev_open["opened_ms"]:
                    per_proc_rate.append(
                        state["minted"] / ((state["at_ms"] - ev_open["opened_ms"]) / 1000.0))
            if errors:
                ran_dry.append((p, errors))
        fig = {
            "authority": a.authority, "procs": a.procs, "seconds": a.seconds, "rate": a.rate,
            "started": len(self.procs), "restarted": sum(p["note"] == "rolling restart" for p in self.procs),
            "killed": sum(p["signalled"] == "kill" for p in self.procs),
            "failed_starts": len(failed), "hung": self.hung, "events_skipped": self.skipped,
            "ramp_s": a.ramp,
            "minted": minted, "ids_per_s": minted / dur_s,
            "per_process_ids_per_s_p50": pct(per_proc_rate, 50),
            "per_process_ids_per_s_min": min(per_proc_rate) if per_proc_rate else None,
            "ops": {}, "exits": {str(k): v for k, v in exits.items()},
            "first_id_ms_initial": [pct(first_initial, 50), pct(first_initial, 99),
                                    max(first_initial) if first_initial else None],
            "first_id_ms_restart": [pct(first_restart, 50), pct(first_restart, 99),
                                    max(first_restart) if first_restart else None],
            "open_ms": [pct(open_lat, 50), pct(open_lat, 99), max(open_lat) if open_lat else None],
            "processes_with_mint_errors": len(ran_dry),
            "failed_start_reasons": {}, "mint_error_reasons": {},
        }
        for name, o in sorted(ops.items()):
            fig["ops"][name] = {"count": len(o["lat"]), "per_s": len(o["lat"]) / dur_s,
                                "peak_per_s": max(o["by_s"].values()), "failed": o["failed"],
                                "p50_ms": pct(o["lat"], 50), "p99_ms": pct(o["lat"], 99),
                                "max_ms": max(o["lat"])}
        for p, ev in failed:
            why = (f"{ev['error']}: {ev['detail']}" if ev else "no report (exit "
                   f"{p['popen'].returncode})")
            key = "".join(c if not c.isdigit() else "N" for c in why)[:160]
            fig["failed_start_reasons"][key] = fig["failed_start_reasons"].get(key, 0) + 1
        for p, errs in ran_dry:
            for ev in errs:
                key = f"{p['kind']}: {ev['error']}"
                fig["mint_error_reasons"][key] = fig["mint_error_reasons"].get(key, 0) + 1
        self.fig = fig
        return fig

    def check(self):
        out = os.path.join(self.a.dir, "check.json")
        rc = subprocess.run([sys.executable, os.path.join(HERE, "check_fleet.py"), "--idmint",
                             self.a.idmint, "--authority", self.admin, "--json", out,
                             os.path.join(self.a.dir, "reports")]).returncode
        verdict = {"exit": rc}
        if os.path.exists(out):
            with open(out) as f:
                verdict.update(json.load(f))
        self.fig["check"] = verdict
        return rc

    def print_figures(self):
        f = self.fig
        print(f"fleet: {f['procs']} processes x {f['rate']} IDs/s for {f['seconds']} s on "
              f"{f['authority']}" + (f", opens spread over {f['ramp_s']} s" if f["ramp_s"] else
                                     ", all opened at one instant"))
        print(f"  processes started {f['started']} (rolling restarts {f['restarted']}, "
              f"kill -9 {f['killed']}, events with no process to stop {f['events_skipped']}); "
              f"failed starts {f['failed_starts']}; hung {f['hung']}")
        print(f"  minted {f['minted']} IDs, {f['ids_per_s']:.0f} IDs/s in all; per process "
              f"p50 {f['per_process_ids_per_s_p50'] or 0:.0f}/s, min "
              f"{f['per_process_ids_per_s_min'] or 0:.0f}/s")
        print(f"  {'call':8} {'count':>7} {'per s':>8} {'peak/s':>7} {'failed':>6} "
              f"{'p50 ms':>8} {'p99 ms':>8} {'max ms':>8}")
        for name, o in f["ops"].items():
            print(f"  {name:8} {o['count']:7d} {o['per_s']:8.1f} {o['peak_per_s']:7d} "
                  f"{o['failed']:6d} {fmt_ms(o['p50_ms']):>8} {fmt_ms(o['p99_ms']):>8} "
                  f"{fmt_ms(o['max_ms']):>8}")
        print("  lock waits: not seen from outside the store; they are inside the latencies above")
        for what, key in (("open (idmint_open)", "open_ms"),
                          ("first ID, initial starts (from their start instant)", "first_id_ms_initial"),
                          ("first ID, restarts (from spawn)", "first_id_ms_restart")):
            p50, p99, mx = f[key]
            print(f"  {what}: p50 {fmt_ms(p50)} ms, p99 {fmt_ms(p99)} ms, max {fmt_ms(mx)} ms")
        for why, n in sorted(f["failed_start_reasons"].items(), key=lambda kv: -kv[1]):
            print(f"  FAILED START x{n}: {why}")
        if f["processes_with_mint_errors"]:
            print(f"  processes whose minting failed: {f['processes_with_mint_errors']}")
            for why, n in sorted(f["mint_error_reasons"].items(), key=lambda kv: -kv[1]):
                print(f"    x{n}: {why}")
        print(f"  exit statuses (kill -9 excluded): {f['exits']}")
        c = f.get("check", {})
        print(f"  checker: exit {c.get('exit')}, overlaps {c.get('overlaps')}, problems "
              f"{c.get('problems')}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--idmint", required=True, help="the idmint CLI (namespaces, trace)")
    ap.add_argument("--minter", required=True, help="tests/fleet/fleet_minter")
    ap.add_argument("--procs", type=int, default=500)
    ap.add_argument("--seconds", type=float, default=60, help="how long each process mints")
    ap.add_argument("--ramp", type=float, default=0,
                    help="spread the opens over this many seconds (default 0: one instant)")
    ap.add_argument("--rate", type=int, default=20000, help="IDs/s per process")
    ap.add_argument("--tick-ms", type=int, default=10, help="pacing tick of each process")
    ap.add_argument("--restart", type=float, default=0.10, help="fraction given a rolling restart")
    ap.add_argument("--kill", type=float, default=0.05, help="fraction killed with kill -9")
    ap.add_argument("--snowflake-share", type=float, default=0.5, help="fraction minting snowflake")
    ap.add_argument("--layout", default="41/0/10/12")
    ap.add_argument("--regions", type=int, default=1, help="regions the snowflake minters use")
    ap.add_argument("--block", type=int, default=10000, help="range namespace block")
    ap.add_argument("--range-target-ms", type=int, default=0,
                    help="idmint_options.range_target_ms of the range minters (0: the "
                    "library's default, 1 s)")
    ap.add_argument("--lease-ms", type=int, default=30000)
    ap.add_argument("--renew-ms", type=int, default=5000)
    ap.add_argument("--sample-every", type=int, default=997)
    ap.add_argument("--planted", type=int, default=0,
                    help="snowflake processes started mid-run with the planted defect")
    ap.add_argument("--admin-authority", help="where namespaces are made and grants traced "
                    "(default: AUTHORITY; give the idmintd's store for http://)")
    ap.add_argument("--dir", default="fleet-drill")
    ap.add_argument("--seed", type=int, default=18)
    ap.add_argument("--json", help="write the figures as JSON here (default DIR/figures.json)")
    ap.add_argument("--allow-failures", action="store_true",
                    help="report failed starts and failed minting, but do not fail for them")
    ap.add_argument("--expect-overlap", action="store_true",
                    help="succeed only when the checker finds an overlap")
    ap.add_argument("authority", help="the store URL, or @FILE: the URL on FILE's first line "
                    "(the env file of tests/support/pg-start.sh or etcd-start.sh)")
    args = ap.parse_args()
    if args.authority.startswith("@"):
        with open(args.authority[1:]) as f:
            args.authority = f.readline().strip()

    d = Drill(args)
    d.prepare()
    # A stray SIGTERM to the driver must not leave hundreds of minters behind.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(3))
    try:
        d.run()
    finally:
        for p in d.procs:
            if p["popen"].poll() is None:
                p["popen"].kill()
    d.figures()
    rc = d.check()
    d.print_figures()
    with open(args.json or os.path.join(args.dir, "figures.json"), "w") as f:
        json.dump(d.fig, f, indent=1)
    f = d.fig
    status = 0
    if args.expect_overlap:
        if rc != 1 or not f["check"].get("overlaps"):
            print("fleet: FAIL: the planted overlap was not reported")
            status = 1
    elif rc == 2:
        print("fleet: FAIL: the checker could not check everything (see above)")
        status = 1
    elif rc != 0:
        print("fleet: FAIL: the checker found problems")
        status = 1
    if f["hung"]:
        print(f"fleet: FAIL: {f['hung']} processes did not stop at the end")
        status = 1
    if not args.allow_failures and not args.expect_overlap:
        if f["failed_starts"]:
            print(f"fleet: FAIL: {f['failed_starts']} processes failed to start")
            status = 1
        if f["processes_with_mint_errors"]:
            print(f"fleet: FAIL: {f['processes_with_mint_errors']} processes failed to mint")
            status = 1
    print("fleet: PASS" if status == 0 else "fleet: exit 1")
    return status


if __name__ == "__main__":
    sys.exit(main())
