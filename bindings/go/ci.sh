#!/usr/bin/env bash
# Build the Go binding against BUILD_DIR's libidmint.so and the source
# tree's include/idmint.h, vet it, and run its tests: once as they are, once
# more the goroutine tests under -race, once the pkg-config build tag.
# Offline (GOPROXY=off), and nothing lands outside one temp dir.
set -euo pipefail

if [ $# -ne 1 ]; then
    echo "usage: $0 BUILD_DIR" >&2
    exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
build=$(cd "$1" && pwd)
for f in "$build/libidmint.so" "$build/idmint" "$src/include/idmint.h"; do
    [ -e "$f" ] || { echo "ci.sh: $f is missing (build the Release tree first)" >&2; exit 2; }
done
command -v go >/dev/null || { echo "ci.sh: no go (apt-get install golang-go)" >&2; exit 2; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/idmint-go-ci.XXXXXX")
child=
cleanup() {
    # Each go command runs in its own process group (setsid below), so
    # test binaries and the processes they started go with it.
    if [ -n "$child" ]; then kill -KILL -- "-$child" 2>/dev/null || true; fi
    chmod -R u+w "$tmp" 2>/dev/null || true # the module cache is read-only
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# run CMD...: in a new process group, waited for, its status returned.
run() {
    echo "+ $*"
    setsid "$@" &
    child=$!
    local rc=0
    wait "$child" || rc=$?
    child=
    return "$rc"
}

export GOPATH="$tmp/gopath" GOCACHE="$tmp/gocache" GOENV=off TMPDIR="$tmp"
export GOPROXY=off GOFLAGS=-mod=mod GO111MODULE=on CGO_ENABLED=1
export CGO_CFLAGS="-I$src/include -O2"
export CGO_LDFLAGS="-L$build -Wl,-rpath,$build"
export IDMINT_CLI="$build/idmint"
unset IDMINT_AUTHORITY IDMINT_TOKEN
cd "$here"

unformatted=$(gofmt -l .)
if [ -n "$unformatted" ]; then
    echo "ci.sh: not gofmt'd: $unformatted" >&2
    exit 1
fi
# The C side held to the project's C rules; cgo's generated code is not.
run "${CC:-cc}" -std=c11 -Wall -Wextra -Werror -fsyntax-only -I"$src/include" -x c shim.h
run go vet ./...
run go test -count=1 -timeout 90s ./...
run go test -count=1 -timeout 90s -race -run 'Goroutines|Close' .

# The pkg-config build tag, through an idmint.pc written for this tree
# alone, with the CGO_* variables out of the way.
mkdir "$tmp/pc"
cat >"$tmp/pc/idmint.pc" <<PC
Name: idmint
Description: libidmint of $build (ci.sh)
Version: 0.1.0
Cflags: -I$src/include
Libs: -L$build -Wl,-rpath,$build -lidmint
PC
run env -u CGO_CFLAGS -u CGO_LDFLAGS PKG_CONFIG_PATH="$tmp/pc" \
    go test -count=1 -tags idmint_pkgconfig -run 'EveryCode|Decode' .
echo "ci.sh: Go binding OK"
