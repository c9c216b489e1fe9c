#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The fleet drill's checker: proves from the generators' reports and the
authority's own records that no two processes can have minted one ID,
without ever seeing every ID (docs/fleet.md).

  check_fleet.py --idmint PATH --authority URL [--json OUT] REPORT_DIR

A report (tests/fleet/fleet_minter.c) is the process's word; the authority's
grants, read with `idmint trace --json`, are the evidence. Checked:
  - every process's IDs strictly increased (its own check);
  - snowflake: for each (namespace, region, worker id), the time-unit spans
    of different leases are disjoint, and each span lies inside
    [E found, own E) of the grant the authority recorded for that
    generation, held by that pid (the span's first and last IDs are traced);
  - range: every maximal run of consecutive IDs is covered by grants of the
    reporting pid only, and runs are pairwise disjoint across processes;
  - samples (every Nth ID): each decodes into the reporter's span or run and
    is covered by exactly one grant, whose pid is the reporter's; so a
    process that lied about its spans is caught too.
Exit status 0 when nothing overlaps and every claim is backed, 1 otherwise,
2 when the check itself could not run.
"""
import argparse
import glob
import json
import os
import subprocess
import sys

STATE_EVENTS = ("tick", "end")


def load_report(path):
    """One process's claims: only what precedes its last state line counts,
    since that line is its word on what it had minted (a kill -9 can leave
    the tail of an unflushed second behind it)."""
    lines = []
    with open(path, "rb") as f:
        for raw in f:
            try:
                lines.append(json.loads(raw))
            except ValueError:
                break  # a line cut by kill -9: nothing after it is whole
    last_state = max((i for i, ev in enumerate(lines) if ev.get("ev") in STATE_EVENTS), default=-1)
    start = next((ev for ev in lines if ev.get("ev") == "start"), None)
    rep = {
        "path": path,
        "pid": start["pid"] if start else None,
        "ns": start["ns"] if start else None,
        "kind": start.get("kind", "") if start else "",
        "is_range": None,
        "open_failed": None,
        "state": lines[last_state] if last_state >= 0 else None,
        "runs": [],
        "samples": [],
        "not_increasing": [],
        "ignored_tail": 0,
    }
    for i, ev in enumerate(lines):
        kind = ev.get("ev")
        if kind == "opened":
            rep["is_range"] = bool(ev["is_range"])
        elif kind == "open_failed":
            rep["open_failed"] = ev
        elif kind == "not_increasing":
            rep["not_increasing"].append(ev)
        elif i > last_state:
            if kind in ("run", "sample"):
                rep["ignored_tail"] += 1
        elif kind == "run":
            rep["runs"].append((int(ev["lo"]), int(ev["hi"])))
        elif kind == "sample":
            rep["samples"].append(int(ev["id"]))
    st = rep["state"]
    if rep["is_range"] and st is not None and "open_run" in st:
        lo, hi = int(st["open_run"][0]), int(st["open_run"][1])
        # The run still open at the last flush, unless it was closed (with a
        # greater or equal end) before that flush.
        if not any(r_lo == lo for r_lo, _ in rep["runs"]):
            rep["runs"].append((lo, hi))
    return rep


class Tracer:
    """idmint trace --json over batches of IDs, one namespace at a time."""

    def __init__(self, idmint, authority):
        self.idmint, self.authority = idmint, authority
        self.cache = {}
        self.unavailable = None  # why the authority cannot trace, once it said so

    def trace(self, ns, ids):
        if self.unavailable:
            return {i: None for i in ids}
        want = sorted({i for i in ids if (ns, i) not in self.cache})
        for k in range(0, len(want), 50000):
            chunk = want[k:k + 50000]
            p = subprocess.run(
                [self.idmint, "--authority", self.authority, "trace", "--ns", ns, "--json", "-"],
                input="".join(f"{i}\n" for i in chunk), capture_output=True, text=True)
            got = {}
            for line in p.stdout.splitlines():
                obj = json.loads(line)
                got[int(obj["id"])] = obj["grants"]
            if p.returncode == 2 and "keeps no provenance" in p.stderr:
                # A store before interface version 4: the claims can still be
                # checked against each other, not against the authority.
                self.unavailable = p.stderr.strip()
                return {i: None for i in ids}
            if p.returncode not in (0, 1) or len(got) != len(chunk):
                raise RuntimeError(f"idmint trace --ns {ns} exited {p.returncode} after "
                                   f"{len(got)} of {len(chunk)} IDs: {p.stderr.strip()[:400]}")
            for i, g in got.items():
                self.cache[(ns, i)] = g
        return {i: self.cache[(ns, i)] for i in ids}


def ns_layout(idmint, authority, ns):
    out = subprocess.run([idmint, "--authority", authority, "ns", "show", ns],
                         capture_output=True, text=True, check=True).stdout
    fields = dict(line.split(": ", 1) for line in out.splitlines() if ": " in line)
    if fields.get("kind") != "snowflake":
        return None
    t, r, w, s = (int(x) for x in fields["layout"].split("/"))
    return (r, w, s)


def decode(layout, id_):
    r, w, s = layout
    return (id_ >> (r + w + s), (id_ >> (w + s)) & ((1 << r) - 1), (id_ >> s) & ((1 << w) - 1))


def check(args):
    reports = [load_report(p) for p in sorted(glob.glob(os.path.join(args.dir, "*.jsonl")))]
    tracer = Tracer(args.idmint, args.authority)
    problems = []
    overlaps = 0
    stats = {"reports": len(reports), "spans": 0, "runs": 0, "samples": 0, "traced": 0,
             "ignored_tail": sum(r["ignored_tail"] for r in reports)}

    def problem(text, is_overlap=False):
        nonlocal overlaps
        overlaps += 1 if is_overlap else 0
        problems.append(("OVERLAP " if is_overlap else "") + text)

    for r in reports:
        for ev in r["not_increasing"]:
            problem(f"pid {r['pid']} ({r['ns']}): ID {ev['id']} after {ev['prev']}: not increasing")

    by_ns = {}
    for r in reports:
        if r["pid"] is None:
            problem(f"{r['path']}: no start line")
        elif r["state"] is not None and r["state"]["minted"] > 0:
            by_ns.setdefault(r["ns"], []).append(r)

    for ns, reps in sorted(by_ns.items()):
        layout = ns_layout(args.idmint, args.authority, ns)
        if layout is None:
            check_range_ns(ns, reps, tracer, problem, stats)
        else:
            check_snowflake_ns(ns, layout, reps, tracer, problem, stats)
    stats["traced"] = len(tracer.cache)
    stats["no_provenance"] = tracer.unavailable
    return problems, overlaps, stats


def one_grant(grants, pid, what, problem, is_dup_overlap=True):
    """The one grant covering an ID, or None after reporting why not (or
    when the authority keeps no grants: nothing to compare with)."""
    if grants is None:
        return None
    if len(grants) == 1 and grants[0]["pid"] == pid:
        return grants[0]
    if len(grants) == 0:
        problem(f"{what}: no grant of the authority covers it")
    elif len(grants) > 1:
        owners = ", ".join(f"pid {g['pid']} gen {g['generation']}" for g in grants)
        problem(f"{what}: covered by {len(grants)} grants ({owners})", is_dup_overlap)
    else:
        problem(f"{what}: its grant is held by pid {grants[0]['pid']}", True)
    return None


def check_snowflake_ns(ns, layout, reps, tracer, problem, stats):
    spans = []
    for r in reps:
        st = r["state"]
        if "first_id" not in st:
            problem(f"pid {r['pid']} ({ns}): minted {st['minted']} IDs but reports no span")
            continue
        spans.append({"pid": r["pid"], "region": st["region"], "worker": st["worker_id"],
                      "gen": int(st["generation"]), "lo": int(st["first_unit"]),
                      "hi": int(st["last_unit"]), "first_id": int(st["first_id"]),
                      "last_id": int(st["last_id"]), "samples": r["samples"]})
    stats["spans"] += len(spans)
    # 1. Spans of different leases of one worker id never share a time unit.
    by_worker = {}
    for sp in spans:
        by_worker.setdefault((sp["region"], sp["worker"]), []).append(sp)
    for (region, worker), lst in sorted(by_worker.items()):
        lst.sort(key=lambda sp: (sp["lo"], sp["gen"]))
        reach = None
        for sp in lst:
            if reach is not None and sp["lo"] <= reach["hi"]:
                problem(f"{ns} worker {region}/{worker}: generation {sp['gen']} (pid {sp['pid']}) "
                        f"units [{sp['lo']},{sp['hi']}] meet generation {reach['gen']} "
                        f"(pid {reach['pid']}) units [{reach['lo']},{reach['hi']}]", True)
            if reach is None or sp["hi"] > reach["hi"]:
                reach = sp
    # 2. Each span inside [E found, own E) of its own grant; 3. samples inside spans.
    ids = [i for sp in spans for i in (sp["first_id"], sp["last_id"], *sp["samples"])]
    traced = tracer.trace(ns, ids)
    for sp in spans:
        who = f"{ns} pid {sp['pid']} worker {sp['region']}/{sp['worker']} gen {sp['gen']}"
        for end, unit in (("first", sp["lo"]), ("last", sp["hi"])):
            id_ = sp[end + "_id"]
            if decode(layout, id_) != (unit, sp["region"], sp["worker"]):
                problem(f"{who}: its {end} ID {id_} decodes to {decode(layout, id_)}, "
                        f"not the reported unit {unit}")
            g = one_grant(traced[id_], sp["pid"], f"{who}: {end} ID {id_}", problem)
            if g is None:
                continue
            if int(g["generation"]) != sp["gen"] or (g["region"], g["worker_id"]) != (
                    sp["region"], sp["worker"]):
                problem(f"{who}: {end} ID {id_} traces to generation {g['generation']} of "
                        f"{g['region']}/{g['worker_id']}", True)
            if not int(g["first"]) <= unit < int(g["last"]):
                problem(f"{who}: {end} unit {unit} outside the grant's [E found, E) = "
                        f"[{g['first']},{g['last']})", True)
        for id_ in sp["samples"]:
            stats["samples"] += 1
            unit, region, worker = decode(layout, id_)
            if (region, worker) != (sp["region"], sp["worker"]) or not sp["lo"] <= unit <= sp["hi"]:
                problem(f"{who}: sample {id_} (unit {unit}, worker {region}/{worker}) lies outside "
                        f"its reported span [{sp['lo']},{sp['hi']}]")
            g = one_grant(traced[id_], sp["pid"], f"{who}: sample {id_}", problem)
            if g is not None and int(g["generation"]) != sp["gen"]:
                problem(f"{who}: sample {id_} traces to generation {g['generation']}", True)


def check_range_ns(ns, reps, tracer, problem, stats):
    runs = [(lo, hi, r["pid"]) for r in reps for lo, hi in r["runs"]]
    stats["runs"] += len(runs)
    # 1. Runs of all processes are pairwise disjoint.
    runs.sort()
    reach = None
    for lo, hi, pid in runs:
        if reach is not None and lo <= reach[1]:
            problem(f"{ns}: run [{lo},{hi}] of pid {pid} meets run [{reach[0]},{reach[1]}] "
                    f"of pid {reach[2]}", True)
        if reach is None or hi > reach[1]:
            reach = (lo, hi, pid)
    # 2. Each run is covered by reserved ranges of its own process: trace its
    # start, then the end of each grant until the run's end is passed.
    pending = [(lo, hi, pid, lo) for lo, hi, pid in runs]
    while pending:
        traced = tracer.trace(ns, [at for _, _, _, at in pending])
        nxt = []
        for lo, hi, pid, at in pending:
            g = one_grant(traced[at], pid, f"{ns} pid {pid} run [{lo},{hi}] at {at}", problem)
            if g is not None and int(g["last"]) <= hi:
                nxt.append((lo, hi, pid, int(g["last"])))
        pending = nxt
    # 3. Samples: inside one of the reporter's runs, one grant, the reporter's.
    for r in reps:
        mine = sorted(r["runs"])
        traced = tracer.trace(ns, r["samples"])
        for id_ in r["samples"]:
            stats["samples"] += 1
            if not any(lo <= id_ <= hi for lo, hi in mine):
                problem(f"{ns} pid {r['pid']}: sample {id_} lies outside every run it reported")
            one_grant(traced[id_], r["pid"], f"{ns} pid {r['pid']}: sample {id_}", problem)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--idmint", required=True)
    ap.add_argument("--authority", required=True, help="the store the grants are read from")
    ap.add_argument("--json", help="write the verdict as JSON here")
    ap.add_argument("--show", type=int, default=20, help="problems to print (default 20)")
    ap.add_argument("dir")
    args = ap.parse_args()
    try:
        problems, overlaps, stats = check(args)
    except (RuntimeError, subprocess.CalledProcessError, OSError) as e:
        print(f"check_fleet: cannot check: {e}", file=sys.stderr)
        return 2
    verdict = {"overlaps": overlaps, "problems": len(problems), **stats,
               "first_problems": problems[:args.show]}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(verdict, f, indent=1)
    print(f"check_fleet: {stats['reports']} reports, {stats['spans']} snowflake spans, "
          f"{stats['runs']} range runs, {stats['samples']} samples, {stats['traced']} IDs traced; "
          f"overlaps={overlaps} problems={len(problems)}")
    for p in problems[:args.show]:
        print(f"  {p}")
    if problems:
        return 1
    if stats["no_provenance"]:
        print(f"check_fleet: INCOMPLETE: {stats['no_provenance']}: spans, runs and samples were "
              "checked against each other only, not against the authority's grants")
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
