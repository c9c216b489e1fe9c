# SPDX-License-Identifier: Apache-2.0
"""UUIDv7 (RFC 9562) from the library: no handle, no authority."""

import ctypes
import uuid

from . import _capi
from .errors import check

_UUID_BYTES = 16


def uuid7():
    """A new UUIDv7 as uuid.UUID, strictly increasing within this process (fork-safe)."""
    buf = ctypes.create_string_buffer(_UUID_BYTES)
    check(_capi.uuid7(buf))
    return uuid.UUID(bytes=buf.raw)
