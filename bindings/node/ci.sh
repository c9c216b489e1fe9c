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

# Every temp file of the tests lands in one folder, removed whatever happens;
# the test run gets its own process group, ended with it.
scratch=$(mktemp -d)
test_pgid=
# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
    if [ -n "$test_pgid" ]; then
        kill -KILL -- "-$test_pgid" 2>/dev/null || true
    fi
    rm -rf "$scratch"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# shellcheck source=tools/prepare.sh
. "$here/tools/prepare.sh"

cd "$here"
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
