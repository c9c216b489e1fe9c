# SPDX-License-Identifier: Apache-2.0
"""Threads: one Minter shared by many threads, one Minter each, and close()
racing calls in flight. No duplicate, no crash, every call either an ID or
ClosedError."""

import threading

import pytest

import idmint
from conftest import assert_unique

THREADS = 8


def _run(n, target):
    out = [None] * n
    errors = []
    start = threading.Barrier(n)

    def body(i):
        try:
            start.wait()
            out[i] = target(i)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    ts = [threading.Thread(target=body, args=(i,)) for i in range(n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(60)
    assert not any(t.is_alive() for t in ts), "a thread hung"
    assert not errors, errors
    return out


@pytest.mark.parametrize("ns", ["sf", "rg"])
def test_threads_sharing_one_minter_never_see_a_duplicate(store, ns):
    with idmint.Minter(store.url, ns) as m:

        def work(i):
            got = []
            for k in range(300):
                got.append(m.next())
                got.extend(m.next_n(1 + k % 50))
            return got

        per_thread = _run(THREADS, work)
    for got in per_thread:
        # Both kinds increase within each thread (snowflake within the handle).
        assert got == sorted(got)
    assert_unique(v for got in per_thread for v in got)


@pytest.mark.parametrize("ns", ["sf", "rg"])
def test_threads_with_their_own_minters_never_see_a_duplicate(store, ns):
    def work(i):
        with idmint.Minter(store.url, ns) as m:
            return [m.next() for _ in range(500)] + m.next_n(2000)

    per_thread = _run(THREADS, work)
    assert_unique(v for got in per_thread for v in got)


def test_snowflake_threads_of_one_minter_share_its_worker_id(store):
    with idmint.Minter(store.url, "sf") as m:
        wid = m.info().worker_id
        per_thread = _run(4, lambda i: m.next_n(1000))
    assert {m.decode(v).worker for got in per_thread for v in got} == {wid}


@pytest.mark.parametrize("ns", ["sf", "rg"])
def test_close_racing_next_is_an_id_or_closed_error_never_a_crash(store, ns):
    workers = 3
    for _ in range(5):
        m = idmint.Minter(store.url, ns)
        minting = threading.Semaphore(0)

        def work(i):
            if i == workers:  # the closer: once every worker is under way
                for _ in range(workers):
                    minting.acquire()
                m.close()
                return []
            got = []
            for k in range(10**6):
                try:
                    got.extend(m.next_n(3) if k % 2 else [m.next()])
                except idmint.ClosedError:
                    return got
                if k == 100:
                    minting.release()
            raise AssertionError("close() never reached this thread")

        per_thread = _run(workers + 1, work)
        assert m.closed
        with pytest.raises(idmint.ClosedError):
            m.next()
        assert_unique(v for got in per_thread for v in got)
        assert all(len(got) > 100 for got in per_thread[:workers])
