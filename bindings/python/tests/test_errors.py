# SPDX-License-Identifier: Apache-2.0
"""Bad input raises the usual Python type carrying the library's message, and
changes nothing: the handle or authority goes on working afterwards."""

import pathlib

import pytest

import idmint
from conftest import assert_unique


def test_a_negative_count_is_a_value_error_and_the_handle_goes_on(store):
    with idmint.Minter(store.url, "rg") as m:
        before = m.next_n(10)
        with pytest.raises(ValueError) as ei:
            m.next_n(-1)
        assert isinstance(ei.value, idmint.InvalidArgumentError)
        assert ei.value.code == -1 and ei.value.name == "EINVAL"
        assert "-1" in str(ei.value)
        after = m.next_n(10)
    assert_unique(before + after)
    assert before[-1] < after[0]


def test_a_count_over_the_limit_is_refused_before_any_allocation(store):
    with idmint.Minter(store.url, "rg") as m:
        with pytest.raises(idmint.InvalidArgumentError, match=str(idmint.MAX_BATCH)):
            m.next_n(idmint.MAX_BATCH + 1)
        with pytest.raises(idmint.InvalidArgumentError):
            m.next_n(2**64)
        assert_unique(m.next_n(5))


def test_a_zero_count_gets_the_library_own_message(store):
    with idmint.Minter(store.url, "rg") as m:
        with pytest.raises(idmint.InvalidArgumentError) as ei:
            m.next_n(0)
    # idmint_strerror(EINVAL), then idmint_errmsg() of the refused call.
    assert ei.value.text == "invalid argument"
    assert "n >= 1" in ei.value.detail
    assert str(ei.value) == "invalid argument: " + ei.value.detail


@pytest.mark.parametrize("bad", ["5", 2.0, True, None])
def test_a_count_of_the_wrong_type_is_a_type_error(store, bad):
    with idmint.Minter(store.url, "rg") as m:
        with pytest.raises(TypeError) as ei:
            m.next_n(bad)
        assert isinstance(ei.value, idmint.Error)


@pytest.mark.parametrize("bad", [123, pathlib.Path("/tmp/a.db"), ["sqlite:/x"]])
def test_an_authority_of_the_wrong_type_is_a_type_error(bad):
    with pytest.raises(TypeError) as ei:
        idmint.Minter(bad, "sf")
    assert isinstance(ei.value, idmint.ArgumentTypeError)
    assert "authority must be a str" in str(ei.value)


def test_an_authority_url_the_library_refuses_carries_its_reason(tmp_path):
    with pytest.raises(idmint.InvalidArgumentError, match="unknown scheme 'bogus'"):
        idmint.Minter("bogus:x", "sf")
    with pytest.raises(idmint.InvalidArgumentError):
        idmint.Minter("sqlite::memory:", "sf")


def test_an_unknown_namespace_is_a_lookup_error_naming_it(store):
    with pytest.raises(LookupError) as ei:
        idmint.Minter(store.url, "nope")
    assert isinstance(ei.value, idmint.NotFoundError) and ei.value.code == -3
    assert "'nope'" in str(ei.value) and "namespace not found" in str(ei.value)
    assert "nope" not in store.cli("ns", "list").stdout, "a failed open created nothing"


def test_every_call_on_a_closed_minter_raises_closed_error(store):
    m = idmint.Minter(store.url, "sf")
    m.close()
    for call in (m.next, lambda: m.next_n(3), m.info, m.lease_status):
        with pytest.raises(idmint.ClosedError) as ei:
            call()
        assert isinstance(ei.value, ValueError) and ei.value.code == -1
        assert "closed" in str(ei.value)
    from array import array

    with pytest.raises(idmint.ClosedError):
        m.next_into(array("Q", [0]))


def test_bad_options_are_refused_with_the_library_reason(store):
    with pytest.raises(idmint.InvalidArgumentError, match="lease_ms 50 is below the minimum"):
        idmint.Minter(store.url, "sf", lease_ms=50)
    with pytest.raises(idmint.InvalidArgumentError, match="renew_ms"):
        idmint.Minter(store.url, "sf", lease_ms=1000, renew_ms=1000)
    with pytest.raises(idmint.InvalidArgumentError, match="outside 0..4294967295"):
        idmint.Minter(store.url, "sf", deadline_ms=-1)
    with pytest.raises(TypeError, match="region must be an integer"):
        idmint.Minter(store.url, "sf", region="0")
    with pytest.raises(TypeError, match="unexpected keyword argument 'lease'"):
        idmint.Minter(store.url, "sf", lease=1000)
    with idmint.Authority(store.url) as a:
        assert all(w.holder == "" for w in a.workers_list("sf")), "no lease was left taken"


def test_a_disabled_namespace_refuses_a_new_handle(store):
    with idmint.Authority(store.url) as a:
        a.ns_set_disabled("sf", True)
        with pytest.raises(idmint.DisabledError, match="namespace disabled"):
            idmint.Minter(store.url, "sf")
        a.ns_set_disabled("sf", False)
    with idmint.Minter(store.url, "sf") as m:
        assert_unique(m.next_n(10))


def test_an_exhausted_range_fails_explicitly_and_never_repeats(store):
    store.cli("ns", "create", "tiny", "--kind", "range", "--max", "100", "--block", "10")
    got = []
    with idmint.Minter(store.url, "tiny", deadline_ms=500) as m:
        with pytest.raises(idmint.ExhaustedError) as ei:
            while True:
                got.append(m.next())
        assert ei.value.code == -5
        with pytest.raises(idmint.ExhaustedError):
            m.next_n(5)
    assert_unique(got)
    assert max(got) <= 100 and len(got) == 100
    with pytest.raises(idmint.ExhaustedError, match="all values up to 100 are issued"):
        idmint.Minter(store.url, "tiny")


def test_decode_refuses_what_is_not_an_id():
    with pytest.raises(idmint.InvalidArgumentError, match="0 is never an ID"):
        idmint.decode(0)
    with pytest.raises(idmint.InvalidArgumentError, match="sign bit"):
        idmint.decode(2**63)
    with pytest.raises(idmint.InvalidArgumentError, match="outside 0..18446744073709551615"):
        idmint.decode(-1)
    with pytest.raises(idmint.InvalidArgumentError, match="digits only"):
        idmint.decode("12a")
    with pytest.raises(TypeError):
        idmint.decode(1.5)
    with pytest.raises(idmint.InvalidArgumentError, match="unit"):
        idmint.decode(1, idmint.Layout(41, 0, 10, 12, 0, 0))
    with pytest.raises(TypeError):
        idmint.decode(1, 41)


def test_decode_of_a_range_minter_is_refused(store):
    with idmint.Minter(store.url, "rg") as m:
        with pytest.raises(idmint.InvalidArgumentError, match="range IDs"):
            m.decode(m.next())


def test_next_into_refuses_buffers_that_are_not_uint64(store):
    from array import array

    with idmint.Minter(store.url, "rg") as m:
        with pytest.raises(idmint.InvalidArgumentError):
            m.next_into(array("I", [0, 0]))
        with pytest.raises(idmint.InvalidArgumentError):
            m.next_into(bytes(16))
        with pytest.raises(idmint.InvalidArgumentError):
            m.next_into(array("Q"))
        with pytest.raises(TypeError):
            m.next_into(12)


def test_a_minter_cannot_be_pickled(store):
    import pickle

    with idmint.Minter(store.url, "rg") as m:
        with pytest.raises(TypeError, match="each process"):
            pickle.dumps(m)


def test_each_library_code_has_its_own_class():
    codes = {}
    for cls in idmint.errors.BY_CODE.values():
        assert issubclass(cls, idmint.Error)
        assert cls.code not in codes, "two classes for one code"
        codes[cls.code] = cls
        e = idmint.errors.from_code(cls.code, "detail")
        assert type(e) is cls and e.detail == "detail"
        assert str(e) == e.text + ": detail"
    assert sorted(codes) == sorted(idmint._capi.ERRORS)  # the header's: tests/test_abi.py
    assert issubclass(idmint.TimedOutError, TimeoutError)
    assert issubclass(idmint.AccessError, PermissionError)
    assert issubclass(idmint.UnavailableError, ConnectionError)
    assert issubclass(idmint.OutOfMemoryError, MemoryError)
    unknown = idmint.errors.from_code(-99, "")
    assert isinstance(unknown, idmint.UnknownError) and unknown.code == -99
