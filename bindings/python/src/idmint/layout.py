# SPDX-License-Identifier: Apache-2.0
"""Snowflake layouts and decode(): DESIGN.md section 3, done by the library."""

import ctypes
import datetime
from dataclasses import dataclass

from . import _args, _capi
from .errors import ArgumentTypeError, InvalidArgumentError, check

_ISO_BUF = 32


@dataclass(frozen=True)
class Layout:
    """The bit layout of a snowflake namespace (idmint_layout)."""

    time_bits: int
    region_bits: int
    worker_bits: int
    sequence_bits: int
    unit_ms: int  # milliseconds per time unit
    epoch_ms: int  # Unix ms of time unit 0

    @classmethod
    def default(cls):
        """The library's default layout (idmint_layout_default())."""
        c = _capi.Layout()
        _capi.layout_default(ctypes.byref(c))
        return cls.from_c(c)

    @classmethod
    def parse(cls, bits, unit_ms=None, epoch=None):
        """A layout from "T/R/W/S", on top of the default unit and epoch.

        @epoch: Unix ms (int), an ISO-8601 date or UTC date-time (str), or an
        aware datetime. The result is validated (idmint_layout_validate()).
        """
        c = Layout.default().to_c()
        check(_capi.layout_parse(_args.text("layout", bits), ctypes.byref(c)))
        if unit_ms is not None:
            c.unit_ms = _args.u32("unit_ms", unit_ms)
        if epoch is not None:
            c.epoch_ms = epoch_ms(epoch)
        out = cls.from_c(c)
        out.validate()
        return out

    @classmethod
    def from_c(cls, c):
        return cls(
            c.time_bits, c.region_bits, c.worker_bits, c.sequence_bits, c.unit_ms, c.epoch_ms
        )

    def to_c(self):
        """As an idmint_layout; a field that does not fit its C type is refused."""
        return _capi.Layout(
            _args.integer("time_bits", self.time_bits, 0, 255),
            _args.integer("region_bits", self.region_bits, 0, 255),
            _args.integer("worker_bits", self.worker_bits, 0, 255),
            _args.integer("sequence_bits", self.sequence_bits, 0, 255),
            _args.u32("unit_ms", self.unit_ms),
            _args.integer("epoch_ms", self.epoch_ms, _args.I64_MIN, _args.I64_MAX),
        )

    def validate(self):
        """Raise InvalidArgumentError with the library's reason if this layout is unusable."""
        c = self.to_c()
        check(_capi.layout_validate(ctypes.byref(c)))

    @property
    def end_ms(self):
        """Unix ms at which the time bits run out (idmint_layout_end_ms())."""
        c = self.to_c()
        out = ctypes.c_int64()
        check(_capi.layout_end_ms(ctypes.byref(c), ctypes.byref(out)))
        return out.value

    def __str__(self):
        return "%d/%d/%d/%d" % (
            self.time_bits,
            self.region_bits,
            self.worker_bits,
            self.sequence_bits,
        )


@dataclass(frozen=True)
class Decoded:
    """One snowflake ID taken apart (idmint_decoded)."""

    id: int
    time_units: int
    unix_ms: int
    time: "str | None"  # ISO-8601 UTC ("2026-03-01T12:00:00.000Z"); None past year 9999
    region: int
    worker: int
    sequence: int

    @property
    def datetime(self):
        """The time as an aware UTC datetime."""
        return datetime.datetime.fromtimestamp(self.unix_ms / 1000, datetime.timezone.utc)


def format_iso8601(unix_ms):
    """Unix ms as "YYYY-MM-DDTHH:MM:SS.mmmZ" (idmint_format_iso8601())."""
    ms = _args.integer("unix_ms", unix_ms, _args.I64_MIN, _args.I64_MAX)
    buf = ctypes.create_string_buffer(_ISO_BUF)
    check(_capi.format_iso8601(ms, buf, _ISO_BUF))
    return buf.value.decode("ascii")


def time_ms(name, value):
    """A time as Unix ms: an int, a str for idmint_epoch_parse(), or an aware datetime."""
    if isinstance(value, datetime.datetime):
        if value.tzinfo is None:
            raise ArgumentTypeError("%s datetime must be timezone-aware" % name)
        return _args.integer(name, round(value.timestamp() * 1000), _args.I64_MIN, _args.I64_MAX)
    if isinstance(value, (str, bytes)):
        out = ctypes.c_int64()
        check(_capi.epoch_parse(_args.text(name, value), ctypes.byref(out)))
        return out.value
    return _args.integer(name, value, _args.I64_MIN, _args.I64_MAX)


def epoch_ms(value):
    """An epoch as Unix ms: an int, a str for idmint_epoch_parse(), or an aware datetime."""
    return time_ms("epoch", value)


def parse_id(value):
    """An ID as int: an int in 0..2^64-1, or decimal text checked by idmint_id_parse()."""
    if isinstance(value, (str, bytes)):
        out = ctypes.c_uint64()
        check(_capi.id_parse(_args.text("id", value), ctypes.byref(out)))
        return out.value
    return _args.integer("id", value, 0, _args.U64_MAX)


def as_layout(layout):
    """None (the default), a Layout, or "T/R/W/S" text, as a Layout."""
    if layout is None:
        return Layout.default()
    if isinstance(layout, Layout):
        return layout
    if isinstance(layout, (str, bytes)):
        return Layout.parse(layout)
    raise ArgumentTypeError(
        "layout must be a Layout, a 'T/R/W/S' str or None, not %s" % type(layout).__name__
    )


def decode(id, layout=None):
    """Take snowflake ID @id apart by @layout (default: the library's default layout).

    @id: an int, or its decimal text. @layout: a Layout (Minter.info().layout,
    Authority.ns_get(name).layout), "T/R/W/S" text, or None.
    Raises InvalidArgumentError for 0, a value with the sign bit or bits
    beyond the layout set, or an invalid layout.
    """
    v = parse_id(id)
    c = as_layout(layout).to_c()
    d = _capi.Decoded()
    check(_capi.decode(ctypes.byref(c), v, ctypes.byref(d)))
    try:
        iso = format_iso8601(d.unix_ms)
    except InvalidArgumentError:
        iso = None  # a layout may reach past what ISO-8601's four digits of year hold
    return Decoded(
        v,
        d.time_units,
        d.unix_ms,
        iso,
        d.region,
        d.worker,
        d.sequence,
    )


def bounds(start, end, layout=None):
    """The lowest and highest ID of @layout whose time falls in [@start, @end).

    Every ID minted in the window lies in (lo, hi) inclusive, so a query by
    time is `WHERE id BETWEEN lo AND hi` (idmint_bounds()). @start, @end:
    Unix ms (int), ISO-8601 text, or aware datetimes. An edge inside a time
    unit takes in the whole unit. Raises InvalidArgumentError for an empty
    window or one outside the layout's lifetime.
    """
    c = as_layout(layout).to_c()
    lo = ctypes.c_uint64()
    hi = ctypes.c_uint64()
    check(
        _capi.bounds(
            ctypes.byref(c),
            time_ms("start", start),
            time_ms("end", end),
            ctypes.byref(lo),
            ctypes.byref(hi),
        )
    )
    return lo.value, hi.value
