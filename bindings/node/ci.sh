#!/usr/bin/env bash
# Build the Node addon against BUILD_DIR's libidmint.so and this tree's
# include/idmint.h, then run `npm test`. Usage: bindings/node/ci.sh BUILD_DIR
# Needs node (>= 20.17, with its headers), make, a C compiler, python3 and
# node-gyp in node_modules (`npm ci --ignore-scripts`, run here if missing).
set -euo pipefail

if [ $# -ne 1 ]; then
    echo "usage: $0 BUILD_DIR" >&2
    exit 2
fi
build_dir=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
src_dir=$(cd "$here/../.." && pwd)
for f in libidmint.so idmint; do
    if [ ! -e "$build_dir/$f" ]; then
        echo "ci.sh: $build_dir/$f is missing: build idmint first" >&2
        exit 1
    fi
done

# Every temp file of the tests lands in one folder, removed whatever happens;
# the test run gets its own process group, ended with it.
scratch=$(mktemp -d)
test_pgid=
cleanup() {
    if [ -n "$test_pgid" ]; then
        kill -KILL -- "-$test_pgid" 2>/dev/null || true
    fi
    rm -rf "$scratch"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

cd "$here"
if [ ! -e node_modules/node-gyp/bin/node-gyp.js ]; then
    npm ci --ignore-scripts --no-audit --no-fund
fi

export IDMINT_INCLUDE_DIR="$src_dir/include" IDMINT_LIB_DIR="$build_dir" IDMINT_WERROR=1
node tools/build.js >"$scratch/build.log" 2>&1 || {
    cat "$scratch/build.log" >&2
    exit 1
}

# libidmint.so has initial-exec TLS (STATIC_TLS) larger than glibc's spare
# static TLS, so dlopen() of it fails in any program that did not link it
# at start. Until the library fixes that, give glibc more room (a tunable,
# read at process start) and say so.
if ! node -e "require('./build/Release/idmint.node')" 2>"$scratch/load.log"; then
    if grep -q 'static TLS' "$scratch/load.log"; then
        echo "ci.sh: WARNING: libidmint.so cannot be dlopen()ed (static TLS block too large);" \
            "running with glibc.rtld.optional_static_tls=16384" >&2
        export GLIBC_TUNABLES="${GLIBC_TUNABLES:+$GLIBC_TUNABLES:}glibc.rtld.optional_static_tls=16384"
    else
        cat "$scratch/load.log" >&2
        exit 1
    fi
fi

export IDMINT_BUILD_DIR="$build_dir" TMPDIR="$scratch"
# Job control puts the run in a process group of its own (pgid = its pid).
set -m
npm test &
test_pgid=$!
set +m +e
wait "$test_pgid"
rc=$?
set -e
test_pgid=
exit "$rc"
