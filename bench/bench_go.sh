#!/usr/bin/env bash
# Run the Go binding's benchmark (bindings/go/bench) against BUILD_DIR's
# libidmint.so: IDs per second for single Next() calls and batches of 1000
# beside crypto/rand UUID strings measured in the same run. Extra arguments
# go to the benchmark (-seconds S per round, -rounds N). Prints, never fails
# on a number; exits non-zero only when something could not run.
set -euo pipefail

if [ $# -lt 1 ]; then
    echo "usage: $0 BUILD_DIR [-seconds S] [-rounds N]" >&2
    exit 2
fi
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "$1" && pwd)
shift
for f in "$build/libidmint.so" "$build/idmint"; do
    [ -e "$f" ] || { echo "bench_go.sh: $f is missing (build the Release tree first)" >&2; exit 2; }
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/idmint-go-bench.XXXXXX")
trap 'chmod -R u+w "$tmp" 2>/dev/null || true; rm -rf "$tmp"' EXIT

export GOPATH="$tmp/gopath" GOCACHE="$tmp/gocache" GOENV=off TMPDIR="$tmp"
export GOPROXY=off GOFLAGS=-mod=mod GO111MODULE=on CGO_ENABLED=1
export CGO_CFLAGS="-I$src/include -O2"
export CGO_LDFLAGS="-L$build -Wl,-rpath,$build"

url="sqlite:$tmp/bench.db"
"$build/idmint" --authority "$url" ns create bench-range --kind range \
    --block 1000000 --max-block 1000000 >/dev/null
"$build/idmint" --authority "$url" ns create bench-snowflake --kind snowflake >/dev/null
(cd "$src/bindings/go" && go build -o "$tmp/bench" ./bench)
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
"$tmp/bench" -authority "$url" -range bench-range -snowflake bench-snowflake "$@"
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
