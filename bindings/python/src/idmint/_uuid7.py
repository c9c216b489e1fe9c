# SPDX-License-Identifier: Apache-2.0
"""UUIDv7 (RFC 9562) from the library: no handle, no authority."""

import ctypes
import uuid

from . import _args, _capi
from .errors import InvalidArgumentError, check
from .layout import time_ms
from .minter import MAX_BATCH

_UUID_BYTES = 16


def uuid7():
    """A new UUIDv7 as uuid.UUID, strictly increasing within this process (fork-safe)."""
    buf = ctypes.create_string_buffer(_UUID_BYTES)
    check(_capi.uuid7(buf))
    return uuid.UUID(bytes=buf.raw)


def uuid7_n(n):
    """A list of @n new UUIDv7 (uuid.UUID, increasing), 1 <= n <= MAX_BATCH, made in one
    call (idmint_uuid7_n()): several times faster per UUID than uuid7()."""
    if type(n) is not int:
        n = _args.as_int("n", n)
    if n < 1 or n > MAX_BATCH:
        raise InvalidArgumentError("n %d is outside 1..%d" % (n, MAX_BATCH))
    buf = ctypes.create_string_buffer(_UUID_BYTES * n)
    check(_capi.uuid7_n(buf, n))
    raw = buf.raw
    make = uuid.UUID
    return [make(bytes=raw[i : i + _UUID_BYTES]) for i in range(0, _UUID_BYTES * n, _UUID_BYTES)]


def uuid7_bounds(start, end):
    """The lowest and highest UUIDv7 (uuid.UUID) whose time falls in [@start, @end).

    UUIDs compare as their bytes, so `WHERE id BETWEEN lo AND hi` finds those
    made in the window (idmint_uuid7_bounds()). Times as for idmint.bounds().
    """
    lo = ctypes.create_string_buffer(_UUID_BYTES)
    hi = ctypes.create_string_buffer(_UUID_BYTES)
    check(_capi.uuid7_bounds(time_ms("start", start), time_ms("end", end), lo, hi))
    return uuid.UUID(bytes=lo.raw), uuid.UUID(bytes=hi.raw)
