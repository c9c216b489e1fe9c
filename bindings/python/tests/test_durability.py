# SPDX-License-Identifier: Apache-2.0
"""Four minting processes on one SQLite authority, some killed with SIGKILL
mid-run and restarted, over a snowflake namespace with only 8 worker ids and
1 s leases (so restarted processes take over the killed ones' ids) and a range
namespace. Over every ID of every process: no duplicate (idmint verify), and
no two holders of one worker id ever minted in overlapping time."""

import os
import random
import signal
import subprocess
import sys
import time
from array import array

import idmint
from conftest import HERE

SLOTS = 4
KILL_ROUNDS = 6
MIN_IDS = 1_000_000


def _read(path):
    raw = path.read_bytes()
    ids = array("Q")
    ids.frombytes(raw[: len(raw) - len(raw) % 8])  # a kill may tear the last record
    return ids


def _verify(store, ids):
    p = subprocess.run(
        [os.path.join(os.environ["IDMINT_BUILD_DIR"], "idmint"), "verify"],
        input="\n".join(map(str, ids)) + "\n",
        capture_output=True,
        text=True,
        timeout=120,
    )
    fields = dict(kv.split("=") for kv in p.stdout.split())
    return p.returncode, int(fields["count"]), int(fields["duplicates"])


def test_killed_and_restarted_processes_never_mint_a_duplicate(store):
    store.cli("ns", "create", "dsf", "--kind", "snowflake", "--layout", "41/0/3/12")
    store.cli("ns", "create", "drg", "--kind", "range", "--block", "10000")
    out = store.dir / "out"
    out.mkdir()
    worker = [sys.executable, str(HERE / "durability_worker.py"), store.url, str(out)]
    rng = random.Random(os.getpid())
    procs, runs, killed = {}, [0] * SLOTS, 0

    def start(slot):
        name = "%d-%d" % (slot, runs[slot])
        runs[slot] += 1
        procs[slot] = (subprocess.Popen(worker + [name]), name)

    def wait_minting(slot, timeout=30):
        """Until the worker has written IDs of both namespaces."""
        p, name = procs[slot]
        paths = [out / ("%s-%s.bin" % (ns, name)) for ns in ("dsf", "drg")]
        deadline = time.monotonic() + timeout
        while not all(f.exists() and f.stat().st_size >= 8 for f in paths):
            assert p.poll() is None, "worker %d died: %s" % (slot, p.returncode)
            assert time.monotonic() < deadline, "worker %d never minted" % slot
            time.sleep(0.01)

    try:
        for slot in range(SLOTS):
            start(slot)
        for _ in range(KILL_ROUNDS):
            for slot in range(SLOTS):
                wait_minting(slot)
            time.sleep(rng.uniform(0.1, 0.5))
            for slot in rng.sample(range(SLOTS), rng.randint(1, 2)):
                procs[slot][0].send_signal(signal.SIGKILL)
                procs[slot][0].wait()
                killed += 1
                start(slot)
        deadline = time.monotonic() + 60
        while sum(f.stat().st_size for f in out.glob("*.bin")) < 8 * MIN_IDS * 1.2:
            assert time.monotonic() < deadline, "the workers mint too slowly"
            time.sleep(0.05)
        for slot in range(SLOTS):
            wait_minting(slot)
        (out / "stop").touch()
        for slot, (p, _) in procs.items():
            assert p.wait(60) == 0, "worker %d failed" % slot
    finally:
        for p, _ in procs.values():
            if p.poll() is None:
                p.kill()
                p.wait()

    files = sorted(out.glob("*.bin"))
    assert len(files) == 2 * (SLOTS + killed)
    per_file = {f.name: _read(f) for f in files}
    assert all(len(ids) > 0 for ids in per_file.values()), "an empty output file"
    total = 0
    for ns in ("dsf", "drg"):
        ids = [v for name, got in per_file.items() if name.startswith(ns) for v in got]
        rc, count, dups = _verify(store, ids)
        assert count == len(ids) and dups == 0 and rc == 0, (ns, count, dups)
        total += count
    assert total >= MIN_IDS, "only %d IDs" % total

    # The fence: holders of one worker id, one after another, in time order.
    layout = idmint.Layout.parse("41/0/3/12")
    spans = {}
    for name, got in per_file.items():
        if name.startswith("dsf"):
            assert list(got) == sorted(got), "%s: snowflake IDs must increase" % name
            first, last = idmint.decode(got[0], layout), idmint.decode(got[-1], layout)
            assert first.worker == last.worker, "%s: one process, one worker id" % name
            spans.setdefault(first.worker, []).append((first.time_units, last.time_units))
    reused = 0
    for wid, s in spans.items():
        s.sort()
        reused += len(s) - 1
        for (_, end), (start_next, _) in zip(s, s[1:]):
            assert end < start_next, "worker %d: two holders minted in one time span" % wid
    assert reused > 0, "no worker id changed hands: the fence went untested"
    print(
        "durability: %d IDs from %d processes (%d killed with SIGKILL), %d worker-id handovers"
        % (total, SLOTS + killed, killed, reused)
    )
