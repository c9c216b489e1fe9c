#!/usr/bin/env bash
# The Node binding's benchmark: IDs per second of next(), nextN(1000) and
# nextInto(1000) beside crypto.randomUUID() in the same run, as ratios.
# Usage: bench/bench_node.sh BUILD_DIR   (BENCH_ROUNDS, BENCH_MS: bindings/node/bench/bench.js)
set -euo pipefail

if [ $# -ne 1 ]; then
    echo "usage: $0 BUILD_DIR" >&2
    exit 2
fi
build_dir=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")/../bindings/node" && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# shellcheck source=../bindings/node/tools/prepare.sh
. "$here/tools/prepare.sh"
# The probe addon: Node-API's own costs, for the breakdown of a next() call.
# tools/build.js finds node-gyp (Debian's, or the one npm bundles) and the headers.
(cd "$here" && node tools/build.js -C bench) >"$scratch/probe.log" 2>&1 || {
    cat "$scratch/probe.log" >&2
    exit 1
}
cd "$here" && node bench/bench.js "$build_dir/idmint"
