# SPDX-License-Identifier: Apache-2.0
"""Minting, info, decode and UUIDv7 through the binding, checked against the CLI."""

import datetime
import json
import uuid
from array import array

import pytest

import idmint
from conftest import assert_unique


def test_snowflake_next_and_next_n_are_unique_and_increasing(store):
    with idmint.Minter(store.url, "sf") as m:
        ids = [m.next() for _ in range(2000)]
        ids += m.next_n(5000)
        ids.append(m.next())
    assert_unique(ids)
    assert ids == sorted(ids), "snowflake IDs of one handle must strictly increase"


def test_range_ids_come_from_the_reserved_block(store):
    with idmint.Minter(store.url, "rg") as m:
        first = m.next()
        batch = m.next_n(1000)
        info = m.info()
        with idmint.Authority(store.url) as a:
            next_value = a.ns_get("rg").next_value
    assert_unique([first] + batch)
    assert [first] + batch == sorted([first] + batch), "range IDs increase within a thread"
    assert info.kind == "range" and info.is_range and info.layout is None
    assert 0 < info.range_left <= 2 * 10000, "at most the block and the one fetched ahead"
    assert batch[-1] < next_value, "the authority reserves past every ID handed out"


def test_next_n_returns_a_list_of_ints(store):
    with idmint.Minter(store.url, "rg") as m:
        got = m.next_n(3)
    assert type(got) is list and all(type(v) is int for v in got)


def test_next_into_fills_an_array_in_place(store):
    buf = array("Q", [0]) * 500
    with idmint.Minter(store.url, "sf") as m:
        assert m.next_into(buf) == 500
        more = m.next_n(10)
    assert_unique(list(buf) + more)
    assert list(buf) == sorted(buf) and buf[-1] < more[0]


def test_info_describes_the_snowflake_lease_the_authority_lists(store):
    with idmint.Minter(store.url, "sf", lease_ms=30000, renew_ms=10000) as m:
        m.next()
        info = m.info()
        with idmint.Authority(store.url) as a:
            rows = {w.worker_id: w for w in a.workers_list("sf")}
    assert info.kind == "snowflake" and not info.is_range
    assert info.layout == idmint.Layout.default() == idmint.Layout.parse("41/0/10/12")
    assert info.worker_id in rows and rows[info.worker_id].holder != ""
    assert rows[info.worker_id].generation == info.generation >= 1
    assert info.fence_found <= info.last_time < info.lease_until
    # lease_ms=30000 with 1 ms units: E is about 30000 units after the last mint.
    assert 25000 <= info.lease_until - info.last_time <= 30000
    assert len(info.incarnation) == 32 and int(info.incarnation, 16) >= 0


def test_close_releases_the_worker_id(store):
    m = idmint.Minter(store.url, "sf")
    wid = m.info().worker_id
    m.close()
    assert m.closed
    with idmint.Authority(store.url) as a:
        rows = {w.worker_id: w for w in a.workers_list("sf")}
    assert rows[wid].holder == "", "close() must release the lease"


def test_decode_matches_the_cli(store):
    with idmint.Minter(store.url, "sf") as m:
        ids = m.next_n(3)
        mine = [m.decode(i) for i in ids]
        wid = m.info().worker_id
    out = store.cli("decode", "--ns", "sf", "--json", *map(str, ids)).stdout.splitlines()
    for d, line in zip(mine, out):
        theirs = json.loads(line)
        assert str(d.id) == theirs["id"]
        assert (d.time, d.unix_ms, d.region, d.worker, d.sequence) == (
            theirs["time"],
            theirs["unix_ms"],
            theirs["region"],
            theirs["worker"],
            theirs["sequence"],
        )
        assert d.worker == wid
        assert d.datetime == datetime.datetime.fromtimestamp(
            d.unix_ms / 1000, datetime.timezone.utc
        )


def test_decode_takes_text_and_other_layouts():
    # 41/0/10/12: time 5, worker 3, sequence 7 -> (5 << 22) | (3 << 12) | 7.
    v = (5 << 22) | (3 << 12) | 7
    d = idmint.decode(str(v))
    assert (d.time_units, d.worker, d.sequence) == (5, 3, 7)
    assert d.unix_ms == idmint.Layout.default().epoch_ms + 5
    # The same bits read as 40/2/8/13: time 5 << 1 ... taken apart differently.
    lay = idmint.Layout.parse("40/2/8/13", unit_ms=10, epoch="2020-01-01")
    d2 = idmint.decode(v, lay)
    assert d2.sequence == v & (2**13 - 1)
    assert d2.worker == (v >> 13) & 0xFF
    assert d2.region == (v >> 21) & 0x3
    assert d2.time_units == v >> 23
    assert d2.unix_ms == 1577836800000 + d2.time_units * 10
    assert d2.time == idmint.format_iso8601(d2.unix_ms)


def test_bounds_agree_with_the_cli_and_hold_what_was_minted(store):
    store.cli("ns", "create", "tens", "--kind", "snowflake", "--layout", "39/4/8/12", "--unit", "10")
    start, end = "1772323200005", "2026-03-02"  # 5 ms into a 10 ms unit
    with idmint.Minter(store.url, "tens", region=5) as m:
        mine = m.bounds(start, end)
        # A second of slack: the library's clock may lag a loaded machine's.
        before = int(datetime.datetime.now(datetime.timezone.utc).timestamp() * 1000) - 1000
        ids = m.next_n(1000)
        after = int(datetime.datetime.now(datetime.timezone.utc).timestamp() * 1000) + 1000
        lo, hi = m.bounds(before, after)
        later_lo, _ = m.bounds(after, after + 60000)
    theirs = json.loads(store.cli("bounds", "--ns", "tens", "--from", start, "--to", end,
                                  "--json").stdout)
    assert mine == (int(theirs["lo"]), int(theirs["hi"]))
    epoch = idmint.Layout.default().epoch_ms
    assert mine == (((1772323200005 - epoch) // 10) << 24,
                    ((((1772409600000 - 1 - epoch) // 10) + 1) << 24) - 1)
    assert all(lo <= i <= hi for i in ids)
    assert max(ids) < later_lo
    aware = datetime.datetime(2026, 3, 2, tzinfo=datetime.timezone.utc)
    assert idmint.bounds(1772323200005, aware) == idmint.bounds(
        "2026-03-01T00:00:00.005Z", "2026-03-02"
    )


def test_bounds_refuse_bad_windows():
    with pytest.raises(idmint.InvalidArgumentError, match="the window is empty"):
        idmint.bounds("2026-03-02", "2026-03-01")
    with pytest.raises(idmint.InvalidArgumentError, match="is before 2026-01-01"):
        idmint.bounds("2025-12-31", "2026-03-01")
    with pytest.raises(idmint.ArgumentTypeError, match="timezone-aware"):
        idmint.bounds(datetime.datetime(2026, 3, 1), "2026-03-02")
    with pytest.raises(idmint.InvalidArgumentError):
        idmint.uuid7_bounds(5, 5)


def test_uuid7_bounds_hold_the_uuids_made_in_their_window():
    lo, hi = idmint.uuid7_bounds(0x0123456789AB, 0x0123456789AD)
    assert str(lo) == "01234567-89ab-7000-8000-000000000000"
    assert str(hi) == "01234567-89ac-7fff-bfff-ffffffffffff"
    before = int(datetime.datetime.now(datetime.timezone.utc).timestamp() * 1000) - 1000
    got = [idmint.uuid7() for _ in range(1000)]
    after = int(datetime.datetime.now(datetime.timezone.utc).timestamp() * 1000) + 1000
    lo, hi = idmint.uuid7_bounds(before, after)
    assert all(lo.bytes <= u.bytes <= hi.bytes for u in got)
    assert lo.version == 7 and hi.version == 7 and hi.variant == uuid.RFC_4122


def test_uuid7_is_a_version_7_uuid_that_increases():
    got = [idmint.uuid7() for _ in range(2000)]
    assert all(isinstance(u, uuid.UUID) for u in got)
    assert all(u.version == 7 and u.variant == uuid.RFC_4122 for u in got)
    assert len({u.int for u in got}) == len(got), "a UUIDv7 repeated"
    assert [u.bytes for u in got] == sorted(u.bytes for u in got)
    now_ms = datetime.datetime.now(datetime.timezone.utc).timestamp() * 1000
    assert abs((got[-1].int >> 80) - now_ms) < 60000, "the first 48 bits are Unix ms"


def test_uuid7_n_continues_the_order_and_refuses_bad_counts():
    before = idmint.uuid7()
    got = idmint.uuid7_n(10000)
    after = idmint.uuid7()
    assert len(got) == 10000 and all(isinstance(u, uuid.UUID) for u in got)
    assert all(u.version == 7 and u.variant == uuid.RFC_4122 for u in got)
    seq = [before.bytes] + [u.bytes for u in got] + [after.bytes]
    assert all(a < b for a, b in zip(seq, seq[1:])), "a batch UUIDv7 did not increase"
    for bad in (0, -1, idmint.MAX_BATCH + 1):
        with pytest.raises(idmint.InvalidArgumentError):
            idmint.uuid7_n(bad)
    with pytest.raises(TypeError):
        idmint.uuid7_n("10")
    assert idmint.uuid7().bytes > after.bytes, "a refused batch took no UUID out of order"


def test_close_is_idempotent_and_the_context_manager_closes(store):
    with idmint.Minter(store.url, "rg") as m:
        m.next()
    assert m.closed
    m.close()
    assert "closed" in repr(m)


def test_default_namespace_is_created_on_first_use(store):
    with idmint.Minter(store.url) as m:
        ids = m.next_n(100)
        assert m.namespace == "default" and m.kind == "snowflake"
    assert_unique(ids)
    assert "default" in store.cli("ns", "list").stdout
