# SPDX-License-Identifier: Apache-2.0
"""IDs per second of the Python binding beside uuid.uuid4(), measured in one run.

    bench.py AUTHORITY RANGE_NS SNOWFLAKE_NS [SECONDS]

Each case runs for about SECONDS/ROUNDS per round (default 0.2 s), the cases
take turns for ROUNDS rounds, and the best round of each is kept, so a burst
of load from something else on the machine lands on one round of every case
rather than on one case. Ratios are against uuid.uuid4() from the same run.
"""

import ctypes
import platform
import os
import sys
import time
import uuid
from array import array

import idmint
from idmint import _capi

ROUNDS = 5
BATCH = 1000
SINGLE_TARGET = 3.0  # x uuid.uuid4()
BATCH_TARGET = 10_000_000  # IDs/s


def rate(fn, ids_per_call, seconds):
    """IDs per second of fn() over about @seconds (calls in chunks of a calibrated size)."""
    calls = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        dt = time.perf_counter() - t0
        if dt >= seconds / 8:
            break
        calls *= 4
    n = max(1, int(calls * seconds / dt))
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    return n * ids_per_call / (time.perf_counter() - t0)


def main():
    url, range_ns, sf_ns = sys.argv[1:4]
    seconds = float(sys.argv[4]) if len(sys.argv) > 4 else 1.0
    per_round = seconds / ROUNDS
    rg = idmint.Minter(url, range_ns)
    sf = idmint.Minter(url, sf_ns)

    # The reference for the compiled hot path: the same call through ctypes.
    out = ctypes.c_uint64()
    out_ref = ctypes.byref(out)
    handle = ctypes.c_void_p(rg._core.handle)
    raw_next = _capi.next_

    def ctypes_next():
        raw_next(handle, out_ref)
        return out.value

    spans = []

    def batch():
        ids = rg.next_n(BATCH)
        spans.append((ids[0], ids[-1]))

    buf = array("Q", [0]) * BATCH
    cases = [
        ("uuid.uuid4()", uuid.uuid4, 1),
        ("[uuid.uuid4() for 1000]", lambda: [uuid.uuid4() for _ in range(BATCH)], BATCH),
        ("idmint.uuid7()", idmint.uuid7, 1),
        ("idmint.uuid7_n(1000)", lambda: idmint.uuid7_n(BATCH), BATCH),
        ("Minter.next(), range", rg.next, 1),
        ("Minter.next(), snowflake", sf.next, 1),
        ("ctypes idmint_next(), range", ctypes_next, 1),
        ("Minter.next_n(1000), range", batch, BATCH),
        ("Minter.next_into(1000), range", lambda: rg.next_into(buf), BATCH),
    ]
    best = {name: 0.0 for name, _, _ in cases}
    for _ in range(ROUNDS):
        for name, fn, k in cases:
            best[name] = max(best[name], rate(fn, k, per_round))
    waits = sf.info().sequence_waits
    rg.close()
    sf.close()

    spans.sort()
    assert all(a[1] < b[0] for a, b in zip(spans, spans[1:])), "two batches overlapped"

    peer, peer_batch = best["uuid.uuid4()"], best["[uuid.uuid4() for 1000]"]
    print(
        "idmint Python binding: CPython %s, %d CPUs, best of %d rounds of %.2f s per case"
        % (platform.python_version(), os.cpu_count(), ROUNDS, per_round)
    )
    print("%-32s %14s %10s" % ("call", "IDs/s", "vs uuid4"))
    for name, _, k in cases:
        ref = peer if k == 1 else peer_batch
        print("%-32s %14s %9.1fx" % (name, "{:,.0f}".format(best[name]), best[name] / ref))
    single = best["Minter.next(), range"] / peer
    single_sf = best["Minter.next(), snowflake"] / peer
    batch_rate = best["Minter.next_n(1000), range"]
    print(
        "single next(): %.1fx (range), %.1fx (snowflake) uuid4, target >= %.0fx: %s"
        % (single, single_sf, SINGLE_TARGET, "met" if min(single, single_sf) >= 3 else "NOT MET")
    )
    print(
        "next_n(1000): %.1f M IDs/s, %.0fx uuid4 in lists of 1000, target >= %d M: %s"
        % (
            batch_rate / 1e6,
            batch_rate / peer_batch,
            BATCH_TARGET // 10**6,
            "met" if batch_rate >= BATCH_TARGET else "NOT MET",
        )
    )
    print(
        "UUIDv7: uuid7() %.1fx uuid4(); uuid7_n(1000) %.1fx [uuid4() for 1000], %.1fx uuid7()"
        % (
            best["idmint.uuid7()"] / peer,
            best["idmint.uuid7_n(1000)"] / peer_batch,
            best["idmint.uuid7_n(1000)"] / best["idmint.uuid7()"],
        )
    )
    print("snowflake calls that waited for the next millisecond: %d" % waits)


if __name__ == "__main__":
    main()
