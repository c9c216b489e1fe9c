# SPDX-License-Identifier: Apache-2.0
"""idmint: unique 64-bit IDs minted in-process (libidmint through ctypes), and UUIDv7.

    with idmint.Minter("sqlite:/var/lib/idmint/idmint.db", "orders") as m:
        one = m.next()
        many = m.next_n(1000)

Importing loads libidmint: $IDMINT_LIBRARY (a path) if set, else libidmint.so.0
through the dynamic loader; ImportError says what was searched.
"""

from ._capi import lib as _lib  # noqa: F401 - loads the library first
from ._uuid7 import uuid7, uuid7_bounds, uuid7_n
from .authority import AuditEntry, Authority, NamespaceInfo, WorkerInfo
from .errors import (
    AccessError,
    ArgumentTypeError,
    ClockError,
    ClosedError,
    ConflictError,
    DisabledError,
    Error,
    ExhaustedError,
    ForkedError,
    InvalidArgumentError,
    LeaseLostError,
    NoWorkerError,
    NotFoundError,
    OutOfMemoryError,
    RestoredError,
    StoreError,
    TimedOutError,
    UnavailableError,
    UnknownError,
)
from .layout import Decoded, Layout, bounds, decode, format_iso8601
from .minter import MAX_BATCH, HandleInfo, Minter

__version__ = "0.1.0"


def library_version():
    """The loaded libidmint's version as (major, minor, patch)."""
    v = _lib.idmint_version()
    return (v >> 16, (v >> 8) & 0xFF, v & 0xFF)


__all__ = [
    "AccessError",
    "ArgumentTypeError",
    "AuditEntry",
    "Authority",
    "ClockError",
    "ClosedError",
    "ConflictError",
    "Decoded",
    "DisabledError",
    "Error",
    "ExhaustedError",
    "ForkedError",
    "HandleInfo",
    "InvalidArgumentError",
    "Layout",
    "LeaseLostError",
    "MAX_BATCH",
    "Minter",
    "NamespaceInfo",
    "NoWorkerError",
    "NotFoundError",
    "OutOfMemoryError",
    "RestoredError",
    "StoreError",
    "TimedOutError",
    "UnavailableError",
    "UnknownError",
    "WorkerInfo",
    "bounds",
    "decode",
    "format_iso8601",
    "library_version",
    "uuid7",
    "uuid7_bounds",
    "uuid7_n",
]
