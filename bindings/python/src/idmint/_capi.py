# SPDX-License-Identifier: Apache-2.0
"""The C ABI of include/idmint.h as ctypes sees it: structs, prototypes and the
size-guarded reading of the library's list arrays. Nothing here raises
idmint errors; the modules above turn return codes into exceptions."""

import ctypes
from ctypes import (
    POINTER,
    Structure,
    c_char,
    c_char_p,
    c_int,
    c_int64,
    c_size_t,
    c_uint8,
    c_uint32,
    c_uint64,
    c_void_p,
)

from . import _loader

lib = _loader.load()

# The header's IDMINT_ERRNO_MAP; tests/test_abi.py checks it against the header.
ERRORS = {
    -1: "EINVAL",
    -2: "ENOMEM",
    -3: "ENOTFOUND",
    -4: "EDISABLED",
    -5: "EEXHAUSTED",
    -6: "ENOWORKER",
    -7: "ELEASELOST",
    -8: "ECLOCK",
    -9: "EFORKED",
    -10: "EUNAVAILABLE",
    -11: "ECONFLICT",
    -12: "ESTORE",
    -13: "ETIMEDOUT",
    -14: "EACCESS",
    -15: "ERESTORED",
}
EINVAL = -1
EFORKED = -9

KIND_SNOWFLAKE = 1
KIND_RANGE = 2


class Layout(Structure):
    _fields_ = [
        ("time_bits", c_uint8),
        ("region_bits", c_uint8),
        ("worker_bits", c_uint8),
        ("sequence_bits", c_uint8),
        ("unit_ms", c_uint32),
        ("epoch_ms", c_int64),
    ]


class Decoded(Structure):
    _fields_ = [
        ("time_units", c_uint64),
        ("unix_ms", c_int64),
        ("region", c_uint32),
        ("worker", c_uint32),
        ("sequence", c_uint64),
    ]


class Options(Structure):
    _fields_ = [
        ("size", c_size_t),
        ("region", c_uint32),
        ("lease_ms", c_uint32),
        ("renew_ms", c_uint32),
        ("max_borrow_ms", c_uint32),
        ("clock_wait_ms", c_uint32),
        ("range_block", c_uint32),
        ("refill_percent", c_uint32),
        ("deadline_ms", c_uint32),
        ("wall_clock_ms", c_void_p),
        ("mono_clock_ns", c_void_p),
        ("clock_ctx", c_void_p),
        ("token", c_char_p),
        # appended in 0.2: idmint_options_init (the 0.1 symbol) leaves size at the
        # 0.1 struct, so the library reads none of these and applies its defaults
        ("range_target_ms", c_uint32),
        # appended in 0.2 in the tail padding: 0 is the default (1000 ms)
        ("history_check_ms", c_uint32),
    ]


class HandleInfo(Structure):
    _fields_ = [
        ("size", c_size_t),
        ("is_range", c_int),
        ("region", c_uint32),
        ("worker_id", c_uint32),
        ("generation", c_uint64),
        ("fence_found", c_uint64),
        ("lease_until", c_uint64),
        ("last_time", c_uint64),
        ("layout", Layout),
        ("range_left", c_uint64),
        ("incarnation", c_char * 33),
        ("sequence_waits", c_uint64),
        # appended in 0.2; written only when size covers them
        ("range_block", c_uint64),
        ("range_rate", c_uint64),
        ("outage_budget_ms", c_uint64),
        ("range_reservations", c_uint64),
    ]


class NsInfo(Structure):
    _fields_ = [
        ("size", c_size_t),
        ("name", c_char * 64),
        ("kind", c_int),
        ("is_disabled", c_int),
        ("created_ms", c_int64),
        ("layout", Layout),
        ("next_value", c_uint64),
        ("max_value", c_uint64),
        ("block", c_uint32),
        ("max_block", c_uint32),
        # Appended in 0.2: filled in only by idmint_ns_info_init_v2() and a 0.2 library.
        ("floor", c_uint64),
        ("origin", c_char * 64),
    ]


class WorkerInfo(Structure):
    _fields_ = [
        ("size", c_size_t),
        ("region", c_uint32),
        ("worker_id", c_uint32),
        ("holder", c_char * 33),
        ("generation", c_uint64),
        ("lease_until", c_uint64),
    ]


class AuditEntry(Structure):
    _fields_ = [
        ("size", c_size_t),
        ("seq", c_int64),
        ("at_ms", c_int64),
        ("actor", c_char * 64),
        ("action", c_char * 32),
        ("ns", c_char * 64),
        ("detail", c_char * 256),
    ]


def _proto(name, restype, *argtypes):
    fn = getattr(lib, name)
    fn.restype = restype
    fn.argtypes = list(argtypes)
    return fn


strerror = _proto("idmint_strerror", c_char_p, c_int)
errmsg = _proto("idmint_errmsg", c_char_p)
layout_default = _proto("idmint_layout_default", None, POINTER(Layout))
layout_validate = _proto("idmint_layout_validate", c_int, POINTER(Layout))
layout_parse = _proto("idmint_layout_parse", c_int, c_char_p, POINTER(Layout))
layout_end_ms = _proto("idmint_layout_end_ms", c_int, POINTER(Layout), POINTER(c_int64))
epoch_parse = _proto("idmint_epoch_parse", c_int, c_char_p, POINTER(c_int64))
format_iso8601 = _proto("idmint_format_iso8601", c_int, c_int64, c_char_p, c_size_t)
decode = _proto("idmint_decode", c_int, POINTER(Layout), c_uint64, POINTER(Decoded))
id_parse = _proto("idmint_id_parse", c_int, c_char_p, POINTER(c_uint64))
uuid7 = _proto("idmint_uuid7", c_int, c_void_p)
uuid7_n = _proto("idmint_uuid7_n", c_int, c_void_p, c_size_t)
bounds = _proto(
    "idmint_bounds", c_int, POINTER(Layout), c_int64, c_int64, POINTER(c_uint64), POINTER(c_uint64)
)
uuid7_bounds = _proto("idmint_uuid7_bounds", c_int, c_int64, c_int64, c_void_p, c_void_p)
options_init = _proto("idmint_options_init", None, POINTER(Options))
open_ = _proto("idmint_open", c_int, POINTER(c_void_p), c_char_p, c_char_p, POINTER(Options))
# The hot path calls these two through idmint._fast, not ctypes.
next_ = _proto("idmint_next", c_int, c_void_p, c_void_p)
next_n = _proto("idmint_next_n", c_int, c_void_p, c_void_p, c_size_t)
handle_info_init = _proto("idmint_handle_info_init", None, POINTER(HandleInfo))
info = _proto("idmint_info", c_int, c_void_p, POINTER(HandleInfo))
lease_status = _proto("idmint_lease_status", c_int, c_void_p)
close = _proto("idmint_close", None, c_void_p)
authority_open = _proto("idmint_authority_open", c_int, POINTER(c_void_p), c_char_p, c_uint32)
authority_open_existing = _proto(
    "idmint_authority_open_existing", c_int, POINTER(c_void_p), c_char_p, c_uint32
)
authority_close = _proto("idmint_authority_close", None, c_void_p)
# The header maps idmint_ns_info_init to _v2 (the whole struct) since 0.2; a 0.1
# library has only the old symbol, which sets up the first version's size.
ns_info_init = _proto(
    "idmint_ns_info_init_v2" if hasattr(lib, "idmint_ns_info_init_v2") else "idmint_ns_info_init",
    None,
    POINTER(NsInfo),
    c_int,
)
ns_create = _proto("idmint_ns_create", c_int, c_void_p, POINTER(NsInfo))
ns_get = _proto("idmint_ns_get", c_int, c_void_p, c_char_p, POINTER(NsInfo))
ns_list = _proto("idmint_ns_list", c_int, c_void_p, POINTER(c_void_p), POINTER(c_size_t))
ns_set_disabled = _proto("idmint_ns_set_disabled", c_int, c_void_p, c_char_p, c_int)
workers_list = _proto(
    "idmint_workers_list", c_int, c_void_p, c_char_p, POINTER(c_void_p), POINTER(c_size_t)
)
worker_force_release = _proto(
    "idmint_worker_force_release", c_int, c_void_p, c_char_p, c_uint32, c_uint32
)
audit_list = _proto(
    "idmint_audit_list",
    c_int,
    c_void_p,
    c_int64,
    c_size_t,
    POINTER(c_void_p),
    POINTER(c_size_t),
)
free = _proto("idmint_free", None, c_void_p)

# For idmint._fast, which calls these without ctypes.
NEXT_ADDR = ctypes.cast(next_, c_void_p).value
NEXT_N_ADDR = ctypes.cast(next_n, c_void_p).value
ERRMSG_ADDR = ctypes.cast(errmsg, c_void_p).value

SIZE_T_BYTES = ctypes.sizeof(c_size_t)


def field_end(cls, name):
    """Offset just past member @name of @cls: the element size it needs."""
    f = getattr(cls, name)
    return f.offset + f.size


def missing_members(cls, size):
    """Members of @cls that end past @size bytes: absent from such an element."""
    return frozenset(name for name, _ in cls._fields_ if field_end(cls, name) > size)


def read_guarded(addr, cls):
    """Copy one size-guarded element at @addr into a new @cls.

    The element's own first member says how many bytes the library wrote.
    Only those are copied (the rest stays zero), and the names of members
    that end beyond them come back in the second value: a library older than
    this mirror never set them. A newer library's extra bytes are not read.
    """
    size = c_size_t.from_address(addr).value
    out = cls()
    n = min(size, ctypes.sizeof(cls))
    ctypes.memmove(ctypes.addressof(out), addr, n)
    return out, missing_members(cls, size)


def read_list(addr, count, cls, first_member):
    """Walk a list array by its elements' own size, as idmint_ns_info_at() does.

    @first_member names the member every version of @cls has had; an element
    smaller than its end is not one of ours and raises ValueError.
    """
    if count == 0:
        return []
    stride = c_size_t.from_address(addr).value
    if stride < field_end(cls, first_member):
        raise ValueError(
            "the library's %s elements are %d bytes, below the %d of the first version"
            % (cls.__name__, stride, field_end(cls, first_member))
        )
    return [read_guarded(addr + i * stride, cls) for i in range(count)]


def text(raw):
    """A NUL-terminated char array member as str."""
    return raw.decode("utf-8", "replace")
