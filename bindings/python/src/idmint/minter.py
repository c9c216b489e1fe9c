# SPDX-License-Identifier: Apache-2.0
"""Minter: one idmint handle (one namespace, one lease or range supply).

Every library call on the handle holds the lock of its idmint._fast.Core. The
library's handle is thread-safe for minting, but idmint_close() must not run
while a call is in it: the lock is what makes close() racing next() safe. It
is held only for the C call itself, without the GIL, so it costs little.
next() and next_n() go through the Core (C); the rarer calls through ctypes.
"""

import atexit
import ctypes
import os
import sys
import weakref
from array import array
from dataclasses import dataclass

from . import _args, _capi, _fast
from .errors import ArgumentTypeError, ClosedError, InvalidArgumentError, check, from_code
from .layout import Layout, as_layout, bounds, decode

# The largest count one next_n() takes: the CLI's `idmint mint -n` limit. The C
# call itself has none but memory (a list of 10^8 ints is about 3.6 GB).
MAX_BATCH = 100_000_000

# Buffer formats next_into() fills: native or little-endian unsigned 64-bit.
_U64 = {(f, 8) for f in ("Q", "=Q", "<Q", "L", "=L", "<L")}
_live = weakref.WeakSet()  # open Minters, for the fork and exit hooks below
_ZERO = array("Q", [0])
if _ZERO.itemsize != 8:  # pragma: no cover - every Linux ABI CPython runs on
    raise ImportError("array('Q') is not 64-bit on this platform")


@dataclass(frozen=True)
class HandleInfo:
    """What a handle holds (idmint_handle_info). Snowflake fields are 0 for a range handle."""

    kind: str  # "snowflake" or "range"
    region: int
    worker_id: int
    generation: int
    fence_found: int  # E found at take, in time units
    lease_until: int  # own E now, in time units
    last_time: int  # time units of the last ID minted
    layout: "Layout | None"  # None for a range handle
    range_left: int  # range: values reserved and not yet handed out
    incarnation: str
    sequence_waits: int

    @property
    def is_range(self):
        return self.kind == "range"


class Minter:
    """Mint IDs from one namespace of an authority.

    ``Minter(authority, namespace, **options)``: @authority is a URL
    ("sqlite:/path/a.db", "postgres://...", "etcd://...", "http://host:port")
    or None for $IDMINT_AUTHORITY or the default file; @namespace a name
    ("default" is created on first use). The keyword options are the
    idmint_options fields of the same names: region, lease_ms, renew_ms,
    max_borrow_ms, clock_wait_ms, range_block, refill_percent, deadline_ms
    (ints; None keeps the library's default) and token (str, for an http://
    authority; None: $IDMINT_TOKEN). The injected clocks are not offered.

    @reopen_after_fork: in a child process after fork() the first call opens a
    new handle of the same namespace and options (a new lease or range of its
    own) and goes on; with False every call there raises ForkedError.

    Thread-safe, including close() racing other calls. A context manager.
    """

    def __init__(
        self,
        authority=None,
        namespace="default",
        *,
        region=None,
        lease_ms=None,
        renew_ms=None,
        max_borrow_ms=None,
        clock_wait_ms=None,
        range_block=None,
        refill_percent=None,
        deadline_ms=None,
        token=None,
        reopen_after_fork=True,
    ):
        # The handle and its lock (a NULL handle once closed: the library
        # refuses NULL with EINVAL, so the hot path needs no check of its own).
        self._core = _fast.Core(_capi.NEXT_ADDR, _capi.NEXT_N_ADDR, _capi.ERRMSG_ADDR)
        self._authority = _args.text("authority", authority, allow_none=True)
        self._namespace = _args.text("namespace", namespace)
        self._token = _args.text("token", token, allow_none=True)
        self._reopen_after_fork = bool(reopen_after_fork)
        self._needs_reopen = False
        self._opts = _capi.Options()
        _capi.options_init(ctypes.byref(self._opts))
        options = {
            "region": region,
            "lease_ms": lease_ms,
            "renew_ms": renew_ms,
            "max_borrow_ms": max_borrow_ms,
            "clock_wait_ms": clock_wait_ms,
            "range_block": range_block,
            "refill_percent": refill_percent,
            "deadline_ms": deadline_ms,
        }
        for name, value in options.items():
            if value is not None:  # None: the library's default
                setattr(self._opts, name, _args.u32(name, value))
        self._opts.token = self._token
        self._open_locked()  # nobody else can see this Minter yet
        info = self.info()
        self._kind = info.kind
        self._layout = info.layout
        _live.add(self)

    def _open_locked(self):
        ptr = ctypes.c_void_p()
        rc = _capi.open_(ctypes.byref(ptr), self._authority, self._namespace, self._opts)
        check(rc)
        self._core.handle = ptr.value
        self._needs_reopen = False

    def _recover(self, rc, detail, used):
        """After a call on handle @used failed with @rc and @detail: return to
        have it retried, or raise. The retry comes after a reopen in a fork
        child, or when another thread reopened the handle in the meantime."""
        with self._core:
            cur = self._core.handle or 0
            if cur != used and cur != 0:
                return
            if self._needs_reopen:
                self._open_locked()
                return
            if cur == 0:
                raise ClosedError("this Minter is closed")
            if rc == _capi.EFORKED and self._reopen_after_fork:
                # The parent's handle: idmint_close() in a child frees only
                # memory, never touching the parent's lease or connection.
                _capi.close(cur)
                self._core.handle = None
                self._needs_reopen = True  # kept if the open fails: the next call retries
                self._open_locked()
                _release_at_child_exit()
                return
            raise from_code(rc, detail)

    def _call(self, fn, *args):
        """fn(handle, *args) through ctypes under the lock, recovering as next() does."""
        while True:
            with self._core:
                used = self._core.handle or 0
                rc = fn(used, *args)
                if rc == 0:
                    return
                detail = _capi.errmsg()
            self._recover(rc, detail.decode("utf-8", "replace"), used)

    def next(self):
        """One ID (int). Snowflake IDs increase within the handle, range IDs within each thread."""
        return self._core.next(self._recover)

    def next_n(self, n):
        """A list of @n IDs (ints, increasing), 1 <= n <= MAX_BATCH. All or nothing."""
        if type(n) is not int:
            n = _args.as_int("n", n)
        if n < 0 or n > MAX_BATCH:  # 0 is left to the library, which says why
            raise InvalidArgumentError("n %d is outside 1..%d" % (n, MAX_BATCH))
        buf = _ZERO * n
        self._core.fill(buf.buffer_info()[0], n, self._recover)
        return buf.tolist()

    def next_into(self, buffer):
        """Fill a writable buffer of unsigned 64-bit items (array('Q'), a 'Q'
        memoryview, a numpy uint64 array) with IDs; return how many (its length)."""
        try:
            mv = memoryview(buffer)
        except TypeError:
            raise ArgumentTypeError(
                "next_into() needs a writable buffer, not %s" % type(buffer).__name__
            ) from None
        with mv:
            if mv.readonly or not mv.c_contiguous or (mv.format, mv.itemsize) not in _U64:
                raise InvalidArgumentError(
                    "next_into() needs a writable, contiguous buffer of uint64 "
                    "(format %r, itemsize %d, readonly %s)" % (mv.format, mv.itemsize, mv.readonly)
                )
            n = mv.nbytes // 8
            if n > MAX_BATCH:
                raise InvalidArgumentError("buffer of %d items is over %d" % (n, MAX_BATCH))
            if n == 0:
                raise InvalidArgumentError("next_into() needs a buffer of at least 1 item")
            holder = (ctypes.c_char * mv.nbytes).from_buffer(mv.cast("B"))
            try:
                self._core.fill(ctypes.addressof(holder), n, self._recover)
            finally:
                del holder
        return n

    def info(self):
        """What the handle holds, as a HandleInfo."""
        c = _capi.HandleInfo()
        _capi.handle_info_init(ctypes.byref(c))
        self._call(_capi.info, ctypes.byref(c))
        is_range = bool(c.is_range)
        return HandleInfo(
            "range" if is_range else "snowflake",
            c.region,
            c.worker_id,
            c.generation,
            c.fence_found,
            c.lease_until,
            c.last_time,
            None if is_range else Layout.from_c(c.layout),
            c.range_left,
            _capi.text(c.incarnation),
            c.sequence_waits,
        )

    def lease_status(self):
        """None while the lease renews fine (always for a range handle), else the
        Error of the last failed renewal, not raised: LeaseLostError and
        DisabledError are final; others are an outage that renewal rides out."""
        while True:
            with self._core:
                used = self._core.handle or 0
                rc = _capi.lease_status(used)
                if used != 0 and rc != _capi.EFORKED:
                    return None if rc == 0 else from_code(rc)
                detail = _capi.errmsg()
            self._recover(rc, detail.decode("utf-8", "replace"), used)

    def bounds(self, start, end):
        """The lowest and highest ID of this snowflake namespace in [@start, @end) (idmint.bounds())."""
        if self._kind == "range":
            raise InvalidArgumentError("range IDs carry no time: a window has no bounds")
        return bounds(start, end, as_layout(self._layout))

    def decode(self, id):
        """Take one of this namespace's snowflake IDs apart (see idmint.decode())."""
        if self._kind == "range":
            raise InvalidArgumentError("range IDs carry no time, region or worker to decode")
        return decode(id, as_layout(self._layout))

    @property
    def kind(self):
        """ "snowflake" or "range"."""
        return self._kind

    @property
    def namespace(self):
        return self._namespace.decode("utf-8")

    @property
    def closed(self):
        return self._core.handle is None and not self._needs_reopen

    def close(self):
        """Release the lease (or the rest of the range) and free the handle.
        Idempotent; waits for calls running in other threads to return."""
        with self._core:
            ptr, self._core.handle = self._core.handle, None
            self._needs_reopen = False
            if ptr is not None:
                _capi.close(ptr)
        _live.discard(self)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        core = getattr(self, "_core", None)
        if core is not None and core.handle is not None:
            try:
                self.close()
            except Exception:  # noqa: BLE001 - interpreter teardown; nothing to report to
                pass

    def __reduce__(self):
        raise TypeError("a Minter holds a lease of this process; open one in each process")

    def __repr__(self):
        state = "closed" if self.closed else self._kind
        return "<idmint.Minter %r %s>" % (self.namespace, state)


def _after_fork_in_child():
    # A lock another thread held at fork() stays held in the child forever.
    for m in list(_live):
        m._core.after_fork()


_exit_hook_pid = None


def _release_at_child_exit():
    """A multiprocessing child leaves through os._exit(), past atexit: have
    multiprocessing's own exit hook close our Minters, so the child's new
    lease is released rather than left to run out (lease_ms)."""
    global _exit_hook_pid
    mp_util = sys.modules.get("multiprocessing.util")
    if mp_util is not None and _exit_hook_pid != os.getpid():
        mp_util.Finalize(None, _close_all_at_exit, exitpriority=0)
        _exit_hook_pid = os.getpid()


def _close_all_at_exit():
    # Release the leases of Minters still open at exit, so their worker ids
    # are free at once rather than after the lease runs out.
    for m in list(_live):
        m.close()


os.register_at_fork(after_in_child=_after_fork_in_child)
atexit.register(_close_all_at_exit)
