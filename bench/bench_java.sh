#!/usr/bin/env bash
# The Java binding's benchmark: IDs per second of next() and of batches of
# 1,000 (fill, nextN) beside UUID.randomUUID() in the same run, as ratios,
# the cases alternating BENCH_ROUNDS times (default 5) for BENCH_MS each.
# Usage: bench/bench_java.sh BUILD_DIR   (a Release build with java/idmint.jar)
set -euo pipefail

if [ $# -ne 1 ] || [ ! -f "$1/java/idmint.jar" ]; then
    echo "usage: $0 BUILD_DIR (a Release build tree with java/idmint.jar)" >&2
    exit 2
fi
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")/../bindings/java" && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export IDMINT_WITNESS_DIR=${IDMINT_WITNESS_DIR:-$scratch/witness}
mkdir -p "$IDMINT_WITNESS_DIR"
javac -encoding UTF-8 -Xlint:all -Werror --release 17 -d "$scratch" -cp "$build/java/idmint.jar" "$here/bench/Bench.java"
java -Didmint.jni="$build/java/libidmint_jni.so" -Djava.io.tmpdir="$scratch" \
    -cp "$build/java/idmint.jar:$scratch" Bench
