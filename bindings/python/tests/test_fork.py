# SPDX-License-Identifier: Apache-2.0
"""fork(): a child never mints from its parent's lease or range. By default
the inherited Minter reopens on first use in the child; with
reopen_after_fork=False the child gets ForkedError."""

import multiprocessing
import os
import signal
import threading


import idmint
from conftest import assert_unique

FORK = multiprocessing.get_context("fork")
CHILDREN = 4


def _child_mint(m, q):
    ids = [m.next() for _ in range(200)] + m.next_n(3000)
    info = m.info()
    q.put((os.getpid(), info.worker_id, info.incarnation, ids))


def _mint_in_children(m):
    q = FORK.Queue()
    procs = [FORK.Process(target=_child_mint, args=(m, q)) for _ in range(CHILDREN)]
    for p in procs:
        p.start()
    results = [q.get(timeout=60) for _ in procs]
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    return results


def test_snowflake_children_reopen_and_never_use_the_parent_worker_id(store):
    with idmint.Minter(store.url, "sf") as m:
        parent_ids = m.next_n(5000)
        parent = m.info()
        results = _mint_in_children(m)
        parent_ids += m.next_n(5000)  # the parent's handle is untouched by its children
        assert m.info().worker_id == parent.worker_id
    for _, wid, incarnation, ids in results:
        assert wid != parent.worker_id
        assert incarnation != parent.incarnation
        assert {m.decode(v).worker for v in ids} == {wid}, "a child minted under another id"
    assert parent.worker_id not in {m.decode(v).worker for _, _, _, ids in results for v in ids}
    assert_unique(parent_ids + [v for r in results for v in r[3]])


def test_range_children_reopen_and_take_their_own_ranges(store):
    # A block far above what is minted here: no refill is under way at fork()
    # (see the note on the library above the last test).
    store.cli("ns", "create", "big", "--kind", "range", "--block", "1000000")
    with idmint.Minter(store.url, "big") as m:
        parent_ids = m.next_n(5000)
        parent = m.info()
        results = _mint_in_children(m)
        parent_ids += m.next_n(5000)
    assert all(inc != parent.incarnation for _, _, inc, _ in results)
    assert_unique(parent_ids + [v for r in results for v in r[3]])


def test_a_child_lease_is_released_when_the_child_ends(store):
    with idmint.Minter(store.url, "sf") as m:
        m.next()
        parent_wid = m.info().worker_id
        results = _mint_in_children(m)
        with idmint.Authority(store.url) as a:
            held = {w.worker_id for w in a.workers_list("sf") if w.holder}
    assert {wid for _, wid, _, _ in results} - {parent_wid}, "the children took leases"
    assert held == {parent_wid}, "a child's lease outlived the child"


def _child_expect_forked(m, q):
    try:
        m.next()
        q.put("minted")
    except idmint.ForkedError as e:
        q.put(("forked", e.code, str(e)))


def test_without_reopen_the_child_gets_forked_error(store):
    with idmint.Minter(store.url, "sf", reopen_after_fork=False) as m:
        m.next()
        q = FORK.Queue()
        p = FORK.Process(target=_child_expect_forked, args=(m, q))
        p.start()
        got = q.get(timeout=60)
        p.join(60)
        assert_unique(m.next_n(100))
    assert got[0] == "forked" and got[1] == -9
    assert "handle used after fork()" in got[2] and "opened by the parent process" in got[2]


# Snowflake only, with the default renewal every 60 s: the library's own
# thread must not be inside an SQLite transaction at fork(). If it is (a range
# refill, a renewal), SQLite's state in the child stays locked and the child's
# new handle fails with "database is locked" or hangs: a library bug, reported;
# the README says what to do meanwhile. What is tested here is the binding:
# the handle lock another thread held at fork() is not inherited held.
def test_fork_while_another_thread_mints_leaves_the_child_able_to_mint(store, tmp_path):
    with idmint.Minter(store.url, "sf") as m:
        stop = threading.Event()

        def spin():
            while not stop.is_set():
                m.next_n(10)

        t = threading.Thread(target=spin)
        t.start()
        try:
            codes, files = [], []
            for i in range(10):
                path = tmp_path / ("child%d" % i)
                files.append(path)
                pid = os.fork()
                if pid == 0:
                    signal.alarm(20)  # a lock inherited held would hang us: die instead
                    try:
                        path.write_text("\n".join(map(str, m.next_n(50))))
                        os._exit(0)
                    except BaseException:  # noqa: BLE001 - the exit code says it
                        os._exit(1)
                codes.append(os.waitpid(pid, 0)[1])
        finally:
            stop.set()
            t.join()
        parent_ids = m.next_n(100)
    assert [os.waitstatus_to_exitcode(c) for c in codes] == [0] * 10
    child_ids = [int(v) for f in files for v in f.read_text().split()]
    assert len(child_ids) == 500
    assert_unique(child_ids + parent_ids)
