#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# ci.sh BUILD_DIR: check the binding's C module, install the binding into a
# throwaway venv (Debian's /usr/bin/python3, offline, no build isolation) and
# run its tests against BUILD_DIR's libidmint and idmint CLI and the source
# tree's include/idmint.h. Everything it makes lives in one temp dir, removed
# on exit with every process the tests started.
set -euo pipefail

if [ $# -ne 1 ] || [ ! -f "$1/libidmint.so.0" ] || [ ! -x "$1/idmint" ]; then
    echo "usage: ci.sh BUILD_DIR (a build tree with libidmint.so.0 and idmint)" >&2
    exit 2
fi
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
include=$(cd "$here/../../include" && pwd)
py=/usr/bin/python3 # not a pyenv shim on PATH: the system Python and its packages
start=$SECONDS

tmp=""
tests_pid=""
cleanup() {
    trap '' PIPE # a closed stdout must not stop the cleanup half-way
    # The test run has its own process group: this ends it and anything it
    # left behind (a minting worker of the durability test), and nothing else.
    if [ -n "$tests_pid" ]; then
        kill -KILL -- "-$tests_pid" 2>/dev/null || true
    fi
    if [ -n "$tmp" ]; then
        rm -rf "$tmp"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP PIPE # exit, so that the EXIT trap runs
tmp=$(mktemp -d)

echo "== static checks of src/idmint/_fast.c"
clang-format --dry-run -Werror "$here/src/idmint/_fast.c"
cppcheck -q --error-exitcode=1 --enable=warning,portability,style --std=c11 --library=python \
    -D__GNUC__ "$here/src/idmint/_fast.c"

# libidmint 0.1.0 asks for static TLS that glibc cannot find for a library
# loaded after start-up (dlopen, as ctypes does): see README, "Loading".
probe=$("$py" -c 'import ctypes, sys; ctypes.CDLL(sys.argv[1])' "$build/libidmint.so.0" 2>&1) || {
    case "$probe" in
    *"static TLS"*)
        echo "note: $build/libidmint.so.0 needs more static TLS than dlopen() gets;" \
            "running with GLIBC_TUNABLES=glibc.rtld.optional_static_tls=16384" >&2
        export GLIBC_TUNABLES=glibc.rtld.optional_static_tls=16384
        ;;
    *)
        echo "$build/libidmint.so.0 cannot be loaded: $probe" >&2
        exit 1
        ;;
    esac
}

echo "== install into a venv"
"$py" -m venv --system-site-packages "$tmp/venv"
mkdir "$tmp/src"
# A copy, so the install writes no build/ or egg-info into the source tree.
(cd "$here" && tar --exclude=build --exclude='*.egg-info' --exclude=__pycache__ \
    --exclude='*.so' -cf - .) | tar -xf - -C "$tmp/src"
IDMINT_WERROR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1 \
    "$tmp/venv/bin/pip" install -q --no-build-isolation --no-index "$tmp/src"

echo "== pytest"
cd "$tmp"
IDMINT_BUILD_DIR="$build" IDMINT_LIBRARY="$build/libidmint.so.0" IDMINT_INCLUDE="$include" \
    PYTHONDONTWRITEBYTECODE=1 setsid -w "$tmp/venv/bin/python" -m pytest -q -p no:cacheprovider \
    --basetemp="$tmp/pytest" "$tmp/src/tests" &
tests_pid=$!
status=0
wait "$tests_pid" || status=$?
echo "== ci.sh: pytest exit $status after $((SECONDS - start)) s"
exit "$status"
