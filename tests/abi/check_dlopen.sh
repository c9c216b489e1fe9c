#!/usr/bin/env bash
# libidmint.so must load with dlopen() into a running program (Python's
# ctypes, a Node.js addon, a plugin). Its initial-exec TLS (the range fast
# path) has to fit into the small static TLS surplus glibc keeps for late
# loads, so the library's whole TLS segment is kept small (thread_state.c).
# Usage: check_dlopen.sh /path/to/libidmint.so
set -euo pipefail
lib=$1
limit=256 # bytes; glibc 2.36 keeps 512 of optional static TLS for every late load together
memsz=$(readelf -lW "$lib" | awk '$1 == "TLS" {print $6}')
if [ -n "$memsz" ] && [ $((memsz)) -gt $limit ]; then
    echo "abi: $lib has $((memsz)) bytes of TLS (limit $limit): dlopen() would fail with" \
        "'cannot allocate memory in static TLS block'; move big per-thread state to" \
        "idmint__thread_slot()" >&2
    exit 1
fi
# A real late load, with no tunables to help it.
env -u GLIBC_TUNABLES /usr/bin/python3 - "$lib" <<'PY'
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
lib.idmint_strerror.restype = ctypes.c_char_p
lib.idmint_errmsg.restype = ctypes.c_char_p
assert lib.idmint_strerror(-1) == b"invalid argument", lib.idmint_strerror(-1)
buf = (ctypes.c_uint8 * 16)()
assert lib.idmint_uuid7(buf) == 0 and bytes(buf)[6] >> 4 == 7, bytes(buf).hex()
assert lib.idmint_layout_parse(b"99/0/0/0", ctypes.create_string_buffer(64)) == -1
assert lib.idmint_errmsg() != b"", "no message after a failed call"
PY
echo "abi: $lib loads with dlopen() ($((${memsz:-0})) bytes of TLS)"
