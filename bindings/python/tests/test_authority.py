# SPDX-License-Identifier: Apache-2.0
"""The admin calls, against what the CLI reads from the same store."""

import ctypes
import os

import pytest

import idmint
from idmint import _capi


def test_ns_create_then_get_and_list_agree_with_the_cli(store):
    with idmint.Authority(store.url) as a:
        sf = a.ns_create("orders", "snowflake", layout="40/2/9/12", unit_ms=2, epoch="2025-06-01")
        rg = a.ns_create(
            "invoices", "range", start=1000, max_value=10**9, block=50, max_block=500
        )
        listed = {n.name: n for n in a.ns_list()}
    assert sf.kind == "snowflake" and str(sf.layout) == "40/2/9/12"
    assert sf.layout.unit_ms == 2 and sf.layout.epoch_ms == 1748736000000
    assert (rg.kind, rg.next_value, rg.max_value, rg.block, rg.max_block) == (
        "range",
        1000,
        10**9,
        50,
        500,
    )
    assert rg.layout is None
    assert set(listed) == {"sf", "rg", "orders", "invoices"}
    assert listed["orders"] == sf and listed["invoices"] == rg
    show = store.cli("ns", "show", "invoices").stdout
    assert "next: 1000" in show and "max_block: 500" in show
    assert "layout=40/2/9/12" in store.cli("ns", "list").stdout


def test_a_migrated_namespace_shows_its_floor_and_origin(store):
    with idmint.Minter(store.url, "rg") as m:
        last = m.next_n(10)[-1]
    store.cli("ns", "migrate", "rg", "rg2")
    with idmint.Authority(store.url) as a:
        new, old = a.ns_get("rg2"), a.ns_get("rg")
        listed = {n.name: n for n in a.ns_list()}
    assert (new.origin, old.origin) == ("rg", "")
    assert old.floor == 0 and new.floor >= last, "every new ID above every old one"
    assert new.next_value > new.floor
    assert old.is_disabled and listed["rg2"] == new
    assert "floor" in store.cli("ns", "show", "rg2").stdout


def test_ns_create_takes_a_layout_object(store):
    lay = idmint.Layout.parse("39/0/12/12", unit_ms=1, epoch=1735689600000)
    with idmint.Authority(store.url) as a:
        got = a.ns_create("lay", "snowflake", layout=lay)
    assert got.layout == lay


def test_refused_creations_change_nothing(store):
    with idmint.Authority(store.url) as a:
        before = a.ns_list()
        audit_before = a.audit_list()
        with pytest.raises(idmint.ConflictError):
            a.ns_create("sf", "snowflake")
        with pytest.raises(idmint.InvalidArgumentError):
            a.ns_create("Bad Name", "range")
        with pytest.raises(idmint.InvalidArgumentError, match="over the limit"):
            a.ns_create("x" * 64, "range")
        with pytest.raises(idmint.InvalidArgumentError, match="'snowflake' or 'range'"):
            a.ns_create("k", "ledger")
        with pytest.raises(TypeError):
            a.ns_create("k", 1)
        with pytest.raises(idmint.InvalidArgumentError, match="only apply to a range"):
            a.ns_create("k", "snowflake", block=10)
        with pytest.raises(idmint.InvalidArgumentError, match="only apply to a snowflake"):
            a.ns_create("k", "range", layout="41/0/10/12")
        with pytest.raises(idmint.InvalidArgumentError):
            a.ns_create("k", "snowflake", layout="41/0/10/30")
        with pytest.raises(idmint.InvalidArgumentError):
            a.ns_create("k", "snowflake", epoch="yesterday")
        assert a.ns_list() == before
        assert a.audit_list() == audit_before


def test_disable_enable_and_the_audit_log(store):
    with idmint.Authority(store.url) as a:
        a.ns_set_disabled("rg", True)
        assert a.ns_get("rg").is_disabled
        a.ns_set_disabled("rg", False)
        assert not a.ns_get("rg").is_disabled
        with pytest.raises(TypeError):
            a.ns_set_disabled("rg", 1)
        with pytest.raises(idmint.NotFoundError):
            a.ns_set_disabled("nope", True)
        log = a.audit_list()
        tail = a.audit_list(after_seq=log[-2].seq)
        assert a.audit_list(limit=1) == log[:1]
    actions = [(e.action, e.ns) for e in log]
    assert actions[:2] == [("ns.create", "sf"), ("ns.create", "rg")]
    assert actions[-2:] == [("ns.disable", "rg"), ("ns.enable", "rg")]
    assert [e.seq for e in log] == sorted({e.seq for e in log})
    assert tail == log[-1:]
    assert all(e.actor and e.at_ms > 0 for e in log)


def test_workers_and_force_release_end_a_holder(store):
    m = idmint.Minter(store.url, "sf", lease_ms=60000, renew_ms=100)
    wid = m.info().worker_id
    with idmint.Authority(store.url) as a:
        held = {w.worker_id: w for w in a.workers_list("sf")}[wid]
        assert held.holder != "" and len(held.holder) == 8
        a.worker_force_release("sf", 0, wid)
        after = {w.worker_id: w for w in a.workers_list("sf")}[wid]
        with pytest.raises(idmint.NotFoundError):
            a.workers_list("nope")
        with pytest.raises(idmint.InvalidArgumentError):
            a.worker_force_release("rg", 0, 0)
    assert after.holder == "" and after.generation == held.generation + 1
    assert after.lease_until == held.lease_until, "E stays: the old holder may have minted up to it"
    # Renewal every 100 ms is now refused: minting stops with a lease error.
    import time

    deadline = time.monotonic() + 10
    while m.lease_status() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert isinstance(m.lease_status(), idmint.LeaseLostError)
    with pytest.raises(idmint.LeaseLostError):
        m.next()
    m.close()


def test_open_existing_creates_nothing(tmp_path):
    path = tmp_path / "none.db"
    with pytest.raises(idmint.NotFoundError, match="no authority at"):
        idmint.Authority("sqlite:%s" % path, create=False)
    assert not path.exists()
    with idmint.Authority("sqlite:%s" % path) as a:
        assert [n.name for n in a.ns_list()] == []
    assert path.exists()


def test_a_closed_authority_raises_closed_error(store):
    a = idmint.Authority(store.url)
    a.close()
    a.close()
    with pytest.raises(idmint.ClosedError):
        a.ns_list()


def _element_array(cls, sizes):
    """A fake list array: elements of @sizes bytes each (the stride is the first's)."""
    stride = sizes[0]
    buf = (ctypes.c_char * (stride * len(sizes)))()
    for i, size in enumerate(sizes):
        one = cls()
        one.size = size
        if cls is _capi.NsInfo:
            one.name = b"ns%d" % i
            one.max_block = 1000 + i
        raw = bytes(one)[: min(size, ctypes.sizeof(cls))]
        ctypes.memmove(ctypes.addressof(buf) + i * stride, raw, len(raw))
    return buf


def test_list_elements_are_walked_by_their_own_size():
    # A newer library's bigger elements: the stride is theirs, not sizeof here.
    big = ctypes.sizeof(_capi.NsInfo) + 24
    buf = _element_array(_capi.NsInfo, [big, big, big])
    rows = _capi.read_list(ctypes.addressof(buf), 3, _capi.NsInfo, "max_block")
    assert [c.name for c, _ in rows] == [b"ns0", b"ns1", b"ns2"]
    assert [c.max_block for c, _ in rows] == [1000, 1001, 1002]
    assert all(missing == frozenset() for _, missing in rows)


def test_members_past_an_element_size_are_reported_missing():
    short = _capi.field_end(_capi.NsInfo, "max_value")
    buf = _element_array(_capi.NsInfo, [short, short])
    one, missing = _capi.read_guarded(ctypes.addressof(buf) + short, _capi.NsInfo)
    assert one.name == b"ns1" and one.max_block == 0
    assert missing == {"block", "max_block", "floor", "origin"}
    with pytest.raises(ValueError, match="below"):
        _capi.read_list(ctypes.addressof(buf), 2, _capi.NsInfo, "max_block")


def test_a_first_version_element_has_no_floor_or_origin():
    # What a 0.1 library writes: idmint_ns_info up to max_block.
    v1 = _capi.field_end(_capi.NsInfo, "max_block")
    buf = _element_array(_capi.NsInfo, [v1, v1])
    rows = _capi.read_list(ctypes.addressof(buf), 2, _capi.NsInfo, "max_block")
    got = [idmint.authority._ns_from_c(c, missing) for c, missing in rows]
    assert [n.name for n in got] == ["ns0", "ns1"] and [n.max_block for n in got] == [1000, 1001]
    assert all(n.floor is None and n.origin is None for n in got)


def test_an_authority_is_refused_in_a_fork_child(store):
    a = idmint.Authority(store.url)
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            a.ns_list()
        except idmint.ForkedError:
            code = 0
        finally:
            a.close()  # drops the parent's connection untouched
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, "the child was not refused"
    assert {n.name for n in a.ns_list()} == {"sf", "rg"}, "the parent's connection still works"
    a.close()
