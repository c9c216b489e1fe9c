#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# ci.sh BUILD_DIR: compile the Java binding's JUnit 5 tests against BUILD_DIR's
# jar (java/idmint.jar) and JNI library (java/libidmint_jni.so), which load
# BUILD_DIR's libidmint, and run them with Debian's JUnit console launcher
# (package junit5). Offline: nothing comes from a Maven repository. Every
# file the tests make lives in one temp dir, removed on exit with every
# JVM the tests started.
set -euo pipefail

if [ $# -ne 1 ] || [ ! -f "$1/java/idmint.jar" ] || [ ! -f "$1/java/libidmint_jni.so" ]; then
    echo "usage: ci.sh BUILD_DIR (a build tree with java/idmint.jar and java/libidmint_jni.so;" \
        "CMake builds them where it finds a JDK: apt-get install default-jdk-headless)" >&2
    exit 2
fi
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
junit=/usr/share/java
for jar in junit-jupiter-api junit-platform-console-standalone; do
    [ -f "$junit/$jar.jar" ] || { echo "ci.sh: $junit/$jar.jar is missing (apt-get install junit5)" >&2; exit 2; }
done
start=$SECONDS

tmp=$(mktemp -d "${TMPDIR:-/tmp}/idmint-java-ci.XXXXXX")
tests_pid=""
cleanup() {
    trap '' PIPE
    # The JUnit run has its own process group, with every JVM it started.
    if [ -n "$tests_pid" ]; then
        kill -KILL -- "-$tests_pid" 2>/dev/null || true
    fi
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP PIPE

# Run by hand as root, the library would keep its witness in /var/lib/idmint:
# keep it in the temp dir unless ctest named one.
if [ -z "${IDMINT_WITNESS_DIR:-}" ]; then
    export IDMINT_WITNESS_DIR="$tmp/witness"
    mkdir -m 700 "$IDMINT_WITNESS_DIR"
fi

version=$(sed -n 's/^project(idmint VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
[ -n "$version" ] || { echo "ci.sh: no project version in $src/CMakeLists.txt" >&2; exit 2; }

echo "== javac (tests)"
mkdir "$tmp/classes"
javac -encoding UTF-8 -Xlint:all -Werror --release 17 -d "$tmp/classes" \
    -cp "$build/java/idmint.jar:$junit/junit-jupiter-api.jar:$junit/opentest4j.jar:$junit/junit-platform-commons.jar" \
    "$here"/src/test/java/org/idmint/*.java

echo "== JUnit"
# The tests live in the binding's package, to reach its package-private parts.
setsid -w java -Didmint.jni="$build/java/libidmint_jni.so" -Didmint.expectedVersion="$version" \
    -Djava.io.tmpdir="$tmp" \
    -Didmint.test.classpath="$build/java/idmint.jar:$tmp/classes" -jar "$junit/junit-platform-console-standalone.jar" \
    --disable-banner --disable-ansi-colors --details=tree --fail-if-no-tests \
    -cp "$build/java/idmint.jar:$tmp/classes" --select-package org.idmint &
tests_pid=$!
status=0
wait "$tests_pid" || status=$?
echo "== ci.sh: JUnit exit $status after $((SECONDS - start)) s"
exit "$status"
