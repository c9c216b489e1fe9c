# SPDX-License-Identifier: Apache-2.0
"""One exception class per IDMINT_E* code, all under idmint.Error.

Where Python has a usual type for the condition the class also derives from
it (InvalidArgumentError is a ValueError, TimedOutError a TimeoutError, ...),
so code that already catches those keeps working. Mistakes the binding finds
before the library sees them (a closed handle, a count out of range, a wrong
type) are raised with the code the library gives the same mistake, EINVAL.
"""

from . import _capi


class Error(Exception):
    """Base of every idmint error.

    Attributes: ``code`` (the negative IDMINT_E* value), ``name`` ("EINVAL"),
    ``text`` (idmint_strerror()) and ``detail`` (idmint_errmsg() of the failed
    call, "" when it had none). str() is "text: detail".
    """

    code = 0
    name = ""

    def __init__(self, detail="", text=None):
        self.text = text if text is not None else _strerror(self.code)
        self.detail = detail
        super().__init__("%s: %s" % (self.text, detail) if detail else self.text)


class InvalidArgumentError(Error, ValueError):
    code, name = -1, "EINVAL"


class ArgumentTypeError(InvalidArgumentError, TypeError):
    """An argument of the wrong Python type (the library's EINVAL, and a TypeError)."""


class ClosedError(InvalidArgumentError):
    """A call on a closed Minter or Authority (the library's EINVAL for no handle)."""


class OutOfMemoryError(Error, MemoryError):
    code, name = -2, "ENOMEM"


class NotFoundError(Error, LookupError):
    code, name = -3, "ENOTFOUND"


class DisabledError(Error):
    code, name = -4, "EDISABLED"


class ExhaustedError(Error):
    code, name = -5, "EEXHAUSTED"


class NoWorkerError(Error):
    code, name = -6, "ENOWORKER"


class LeaseLostError(Error):
    code, name = -7, "ELEASELOST"


class ClockError(Error):
    code, name = -8, "ECLOCK"


class ForkedError(Error):
    code, name = -9, "EFORKED"


class UnavailableError(Error, ConnectionError):
    code, name = -10, "EUNAVAILABLE"


class ConflictError(Error):
    code, name = -11, "ECONFLICT"


class StoreError(Error):
    code, name = -12, "ESTORE"


class TimedOutError(Error, TimeoutError):
    code, name = -13, "ETIMEDOUT"


class AccessError(Error, PermissionError):
    code, name = -14, "EACCESS"


class RestoredError(Error):
    """The authority was restored or rolled back behind this handle (0.2)."""

    code, name = -15, "ERESTORED"


BY_CODE = {
    cls.code: cls
    for cls in (
        InvalidArgumentError,
        OutOfMemoryError,
        NotFoundError,
        DisabledError,
        ExhaustedError,
        NoWorkerError,
        LeaseLostError,
        ClockError,
        ForkedError,
        UnavailableError,
        ConflictError,
        StoreError,
        TimedOutError,
        AccessError,
        RestoredError,
    )
}


class UnknownError(Error):
    """A code this package does not know yet (a newer library)."""

    def __init__(self, code, detail=""):
        self.code = code
        self.name = "E?%d" % code
        super().__init__(detail)


def _strerror(code):
    return _capi.strerror(code).decode("utf-8", "replace")


def from_code(rc, detail=None):
    """The exception for return code @rc with @detail, by default this thread's
    idmint_errmsg(): then call it straight after the failed call, on the same
    thread, since the detail is thread-local and the next idmint call may
    overwrite it.
    """
    if detail is None:
        detail = _capi.errmsg().decode("utf-8", "replace")
    cls = BY_CODE.get(rc)
    if cls is None:
        return UnknownError(rc, detail)
    return cls(detail)


def check(rc):
    """Raise the exception for @rc unless it is 0."""
    if rc != 0:
        raise from_code(rc)
