#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bench/bench_python.sh BUILD_DIR [SECONDS]: the Python binding's IDs per
# second (single next() and batches of 1,000 from a range namespace with a
# block of 1,000,000) beside uuid.uuid4() in the same run, as ratios. Installs
# the binding into a throwaway venv and mints from a temporary SQLite
# authority; asserts nothing (exit 1 only on a setup failure). About
# 8 x SECONDS (default 1) plus a few seconds to install.
set -euo pipefail

if [ $# -lt 1 ] || [ ! -f "$1/libidmint.so.0" ] || [ ! -x "$1/idmint" ]; then
    echo "usage: bench/bench_python.sh BUILD_DIR [SECONDS]   (a Release build tree)" >&2
    exit 2
fi
build=$(cd "$1" && pwd)
seconds=${2:-1}
binding=$(cd "$(dirname "${BASH_SOURCE[0]}")/../bindings/python" && pwd)
py=/usr/bin/python3

tmp=""
cleanup() {
    trap '' PIPE
    if [ -n "$tmp" ]; then
        rm -rf "$tmp"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP PIPE
tmp=$(mktemp -d)

# libidmint 0.1.0 cannot be dlopen()ed without more static TLS (bindings/python/README.md).
if ! "$py" -c 'import ctypes, sys; ctypes.CDLL(sys.argv[1])' "$build/libidmint.so.0" 2>/dev/null; then
    export GLIBC_TUNABLES=glibc.rtld.optional_static_tls=16384
fi

"$py" -m venv --system-site-packages "$tmp/venv"
mkdir "$tmp/src"
(cd "$binding" && tar --exclude=build --exclude='*.egg-info' --exclude=__pycache__ \
    --exclude='*.so' -cf - .) | tar -xf - -C "$tmp/src"
PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1 "$tmp/venv/bin/pip" install -q --no-build-isolation --no-index \
    "$tmp/src"

url="sqlite:$tmp/bench.db"
"$build/idmint" --authority "$url" ns create bench-range --kind range --block 1000000 \
    --max-block 1000000 >/dev/null
"$build/idmint" --authority "$url" ns create bench-sf --kind snowflake >/dev/null
cd "$tmp"
IDMINT_LIBRARY="$build/libidmint.so.0" "$tmp/venv/bin/python" "$binding/bench/bench.py" \
    "$url" bench-range bench-sf "$seconds"
