#!/usr/bin/env bash
# Build the Node addon against BUILD_DIR's libidmint.so and this tree's
# include/idmint.h, then run every test file (tools/test.js, what `npm test`
# runs). Usage: bindings/node/ci.sh BUILD_DIR
# Needs node (>= 18, with its headers), node-gyp, make, a C compiler and
# python3: on Debian 12 `apt-get install nodejs node-gyp` (Node 18); with
# another Node, the node-gyp its npm bundles is found (tools/build.js). No npm
# registry, no npm at all.
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
node tools/test.js &
test_pgid=$!
set +m +e
wait "$test_pgid"
rc=$?
set -e
test_pgid=
exit "$rc"
