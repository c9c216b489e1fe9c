# SPDX-License-Identifier: Apache-2.0
"""Authority: the administration calls of idmint.h on one store connection.

The C authority is for one thread at a time; a lock makes one Authority safe
to share (calls are serialised). After fork() the connection is the parent's:
every call in the child raises ForkedError and close() there only forgets it.
"""

import ctypes
import os
import threading
from dataclasses import dataclass

from . import _args, _capi
from .errors import (
    ArgumentTypeError,
    ClosedError,
    ForkedError,
    InvalidArgumentError,
    StoreError,
    check,
)
from .layout import Layout, epoch_ms

_KINDS = {"snowflake": _capi.KIND_SNOWFLAKE, "range": _capi.KIND_RANGE}
_KIND_NAMES = {v: k for k, v in _KINDS.items()}
AUDIT_LIMIT = 1000  # audit_list()'s default page


@dataclass(frozen=True)
class NamespaceInfo:
    """A namespace as the authority keeps it (idmint_ns_info)."""

    name: str
    kind: str  # "snowflake" or "range"
    is_disabled: bool
    created_ms: int
    layout: "Layout | None"  # snowflake only
    next_value: int  # range: next value to reserve
    max_value: int  # range: last value that may be issued, inclusive
    block: int  # range: default block
    max_block: int  # range: largest block one reservation may take
    floor: "int | None"  # no ID at or below it is issued (0: none); None from a 0.1 library
    origin: "str | None"  # the namespace this one was migrated from ("" if none); as floor


@dataclass(frozen=True)
class WorkerInfo:
    """One worker-id lease row (idmint_worker_info)."""

    region: int
    worker_id: int
    holder: str  # the holder's fingerprint; "" when released
    generation: int
    lease_until: int  # E, in the namespace's time units


@dataclass(frozen=True)
class AuditEntry:
    """One audit record (idmint_audit_entry)."""

    seq: int
    at_ms: int
    actor: str
    action: str
    ns: str
    detail: str


# Elements are read up to their own size (_capi.read_list), which must reach
# the end of the first guarded version; a member appended later (floor and
# origin, 0.2) is None when it is in @missing, past what the library wrote.


def _ns_from_c(c, missing):
    is_range = c.kind == _capi.KIND_RANGE
    return NamespaceInfo(
        _capi.text(c.name),
        _KIND_NAMES.get(c.kind, "unknown(%d)" % c.kind),
        bool(c.is_disabled),
        c.created_ms,
        None if is_range else Layout.from_c(c.layout),
        c.next_value,
        c.max_value,
        c.block,
        c.max_block,
        None if "floor" in missing else c.floor,
        None if "origin" in missing else _capi.text(c.origin),
    )


def _worker_from_c(c, missing):
    return WorkerInfo(c.region, c.worker_id, _capi.text(c.holder), c.generation, c.lease_until)


def _audit_from_c(c, missing):
    return AuditEntry(
        c.seq,
        c.at_ms,
        _capi.text(c.actor),
        _capi.text(c.action),
        _capi.text(c.ns),
        _capi.text(c.detail),
    )


class Authority:
    """A direct connection to a store, for administration.

    ``Authority(url=None, region=0, create=True)``: @url as for Minter; with
    create=False nothing is created (idmint_authority_open_existing()), and a
    missing SQLite file raises NotFoundError. A context manager.
    """

    def __init__(self, url=None, region=0, *, create=True):
        self._ptr = None
        self._lock = threading.Lock()
        self._pid = os.getpid()
        raw = _args.text("url", url, allow_none=True)
        reg = _args.integer("region", region, 0, _args.U32_MAX)
        ptr = ctypes.c_void_p()
        opener = _capi.authority_open if create else _capi.authority_open_existing
        check(opener(ctypes.byref(ptr), raw, reg))
        self._ptr = ptr.value

    def _call(self, fn, *args):
        """fn(authority, *args) under the lock; raise for its code."""
        with self._lock:
            if self._ptr is None:
                raise ClosedError("this Authority is closed")
            if os.getpid() != self._pid:
                raise ForkedError(
                    "this Authority was opened by the parent process; open a new one in the child"
                )
            check(fn(self._ptr, *args))

    def ns_create(
        self,
        name,
        kind,
        *,
        layout=None,
        unit_ms=None,
        epoch=None,
        start=None,
        max_value=None,
        block=None,
        max_block=None,
    ):
        """Create a namespace (audited) and return it as the authority now has it.

        @kind: "snowflake" (takes layout: a Layout or "T/R/W/S"; unit_ms;
        epoch: Unix ms, an ISO-8601 date or UTC date-time, or an aware
        datetime) or "range" (takes start, max_value, block, max_block).
        Unset values keep the library's creation defaults.
        """
        raw_name = _args.text("name", name)
        if not isinstance(kind, str):
            raise ArgumentTypeError(
                "kind must be 'snowflake' or 'range', not %s" % type(kind).__name__
            )
        k = _KINDS.get(kind)
        if k is None:
            raise InvalidArgumentError("kind %r is not 'snowflake' or 'range'" % kind)
        c = _capi.NsInfo()
        _capi.ns_info_init(ctypes.byref(c), k)
        if len(raw_name) >= _capi.NsInfo.name.size:
            raise InvalidArgumentError(
                "namespace name of %d bytes is over the limit of 63" % len(raw_name)
            )
        c.name = raw_name
        if k == _capi.KIND_SNOWFLAKE:
            self._refuse(
                {"start": start, "max_value": max_value, "block": block, "max_block": max_block},
                "range",
            )
            if isinstance(layout, Layout):
                c.layout = layout.to_c()
            elif isinstance(layout, (str, bytes)):
                check(_capi.layout_parse(_args.text("layout", layout), ctypes.byref(c.layout)))
            elif layout is not None:
                raise ArgumentTypeError(
                    "layout must be a Layout or a 'T/R/W/S' str, not %s" % type(layout).__name__
                )
            if unit_ms is not None:
                c.layout.unit_ms = _args.u32("unit_ms", unit_ms)
            if epoch is not None:
                c.layout.epoch_ms = epoch_ms(epoch)
        else:
            self._refuse({"layout": layout, "unit_ms": unit_ms, "epoch": epoch}, "snowflake")
            if start is not None:
                c.next_value = _args.integer("start", start, 0, _args.U64_MAX)
            if max_value is not None:
                c.max_value = _args.integer("max_value", max_value, 0, _args.U64_MAX)
            if block is not None:
                c.block = _args.u32("block", block)
            if max_block is not None:
                c.max_block = _args.u32("max_block", max_block)
        self._call(_capi.ns_create, ctypes.byref(c))
        return self.ns_get(raw_name)

    @staticmethod
    def _refuse(values, kind):
        given = sorted(k for k, v in values.items() if v is not None)
        if given:
            raise InvalidArgumentError("%s only apply to a %s namespace" % (", ".join(given), kind))

    def ns_get(self, name):
        """One namespace as a NamespaceInfo; NotFoundError if there is none."""
        c = _capi.NsInfo()
        _capi.ns_info_init(ctypes.byref(c), 0)
        self._call(_capi.ns_get, _args.text("name", name), ctypes.byref(c))
        return _ns_from_c(c, _capi.missing_members(_capi.NsInfo, c.size))

    def _list(self, call, args, cls, first_member, convert):
        """A listing call's array, read by its elements' own size and freed."""
        out = ctypes.c_void_p()
        n = ctypes.c_size_t()
        self._call(call, *args, ctypes.byref(out), ctypes.byref(n))
        try:
            rows = _capi.read_list(out.value, n.value, cls, first_member)
        except ValueError as e:
            raise StoreError(str(e)) from None
        finally:
            _capi.free(out.value)
        return [convert(c, missing) for c, missing in rows]

    def ns_list(self):
        """Every namespace, by name."""
        return self._list(_capi.ns_list, (), _capi.NsInfo, "max_block", _ns_from_c)

    def ns_set_disabled(self, name, disabled=True):
        """Disable (True) or enable (False) a namespace (audited)."""
        if not isinstance(disabled, bool):
            raise ArgumentTypeError("disabled must be a bool, not %s" % type(disabled).__name__)
        self._call(_capi.ns_set_disabled, _args.text("name", name), int(disabled))

    def workers_list(self, namespace):
        """The worker-id lease rows of @namespace, all regions."""
        return self._list(
            _capi.workers_list,
            (_args.text("namespace", namespace),),
            _capi.WorkerInfo,
            "lease_until",
            _worker_from_c,
        )

    def worker_force_release(self, namespace, region, worker_id):
        """Force a worker id away from its holder (audited); E stays."""
        self._call(
            _capi.worker_force_release,
            _args.text("namespace", namespace),
            _args.u32("region", region),
            _args.u32("worker_id", worker_id),
        )

    def audit_list(self, after_seq=0, limit=AUDIT_LIMIT):
        """Audit records with seq > @after_seq, oldest first, at most @limit."""
        return self._list(
            _capi.audit_list,
            (
                _args.integer("after_seq", after_seq, _args.I64_MIN, _args.I64_MAX),
                _args.integer("limit", limit, 0, 2**63 - 1),
            ),
            _capi.AuditEntry,
            "detail",
            _audit_from_c,
        )

    @property
    def closed(self):
        return self._ptr is None

    def close(self):
        """Close the connection. Idempotent. In a forked child the parent's
        connection is dropped untouched."""
        with self._lock:
            ptr, self._ptr = self._ptr, None
            if ptr is not None and os.getpid() == self._pid:
                _capi.authority_close(ptr)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        if getattr(self, "_ptr", None) is not None:
            try:
                self.close()
            except Exception:  # noqa: BLE001 - interpreter teardown
                pass

    def __reduce__(self):
        raise TypeError("an Authority is a connection of this process; open one in each process")
