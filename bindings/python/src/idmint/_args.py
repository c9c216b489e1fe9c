# SPDX-License-Identifier: Apache-2.0
"""Argument checks done before the library is called: only what ctypes
cannot carry (a wrong type, a value that does not fit the C type). Ranges the
library judges (lease_ms >= 100, a layout's sums) are left to it, so its
message is the one the user sees."""

import operator

from .errors import ArgumentTypeError, InvalidArgumentError

U32_MAX = 2**32 - 1
U64_MAX = 2**64 - 1
I64_MIN, I64_MAX = -(2**63), 2**63 - 1


def as_int(name, value):
    """@value as an int; bool is refused, it is never meant as a count."""
    if isinstance(value, bool):
        raise ArgumentTypeError("%s must be an integer, not bool" % name)
    try:
        return operator.index(value)
    except TypeError:
        raise ArgumentTypeError(
            "%s must be an integer, not %s" % (name, type(value).__name__)
        ) from None


def integer(name, value, lo, hi):
    """@value as an int in lo..hi."""
    v = as_int(name, value)
    if v < lo or v > hi:
        raise InvalidArgumentError("%s %d is outside %d..%d" % (name, v, lo, hi))
    return v


def u32(name, value):
    return integer(name, value, 0, U32_MAX)


def text(name, value, allow_none=False):
    """@value as NUL-free UTF-8 bytes for a const char * (None stays None if allowed)."""
    if value is None and allow_none:
        return None
    if isinstance(value, bytes):
        raw = value
    elif isinstance(value, str):
        raw = value.encode("utf-8")
    else:
        raise ArgumentTypeError(
            "%s must be a str%s, not %s"
            % (name, " or None" if allow_none else "", type(value).__name__)
        )
    if b"\0" in raw:
        raise InvalidArgumentError("%s contains a NUL character" % name)
    return raw
