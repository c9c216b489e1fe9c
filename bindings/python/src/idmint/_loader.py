# SPDX-License-Identifier: Apache-2.0
"""Find and load libidmint: $IDMINT_LIBRARY (a path) first, then the installed
soname through the dynamic loader. Nothing else is searched, so the library a
process uses is always one the user chose or installed."""

import ctypes
import os

SONAME = "libidmint.so.0"
# The oldest library whose structs and calls this package's mirror matches.
MIN_VERSION = (0, 1)
MAJOR = 0

# glibc's words when a library that wants static TLS does not fit in what is
# left of it after start-up (libidmint 0.1.0 asks for about 4.7 KiB).
_STATIC_TLS_ERROR = "cannot allocate memory in static TLS block"
_TLS_HINT = (
    "libidmint asks for more static thread-local storage than glibc keeps for "
    "libraries loaded after start-up; start Python with "
    "GLIBC_TUNABLES=glibc.rtld.optional_static_tls=16384 in its environment, or "
    "with LD_PRELOAD naming the library"
)


def _describe_search():
    ld_path = os.environ.get("LD_LIBRARY_PATH", "")
    return (
        "$IDMINT_LIBRARY is not set and the dynamic loader found no %s "
        "(searched LD_LIBRARY_PATH=%s, the ld.so cache, /lib and /usr/lib)"
        % (SONAME, ld_path if ld_path else "(not set)")
    )


def _open(path):
    try:
        return ctypes.CDLL(path)
    except OSError as e:
        if _STATIC_TLS_ERROR in str(e):
            raise ImportError("cannot load %s: %s; %s" % (path, e, _TLS_HINT)) from e
        raise


def load():
    """Return the loaded library, or raise ImportError saying what was tried."""
    path = os.environ.get("IDMINT_LIBRARY")
    if path:
        if not os.path.exists(path):
            raise ImportError("IDMINT_LIBRARY=%s: no such file" % path)
        try:
            lib = _open(path)
        except OSError as e:
            raise ImportError("IDMINT_LIBRARY=%s cannot be loaded: %s" % (path, e)) from e
    else:
        try:
            lib = _open(SONAME)
        except OSError as e:
            raise ImportError(
                "libidmint not found: %s; install libidmint or set IDMINT_LIBRARY to "
                "the path of %s (dlopen: %s)" % (_describe_search(), SONAME, e)
            ) from e
    _check_version(lib, path or SONAME)
    return lib


def _check_version(lib, where):
    lib.idmint_version.restype = ctypes.c_uint
    lib.idmint_version.argtypes = []
    v = lib.idmint_version()
    major, minor, patch = v >> 16, (v >> 8) & 0xFF, v & 0xFF
    if major != MAJOR or (major, minor) < MIN_VERSION:
        raise ImportError(
            "%s is libidmint %d.%d.%d; this package needs %d.x from %d.%d on"
            % (where, major, minor, patch, MAJOR, MIN_VERSION[0], MIN_VERSION[1])
        )
