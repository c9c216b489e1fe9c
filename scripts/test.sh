#!/usr/bin/env bash
# Build and run every test: format and static checks, the whole suite under
# ASan+UBSan (the slow whole-system runs excepted), the threaded tests under
# TSan, a release build where every test runs, the full-volume ones at speed,
# and each fuzz target for a bounded time under libFuzzer.
# The three builds are CMakePresets.json's dev, tsan and release presets.
# IDMINT_FUZZ_SECONDS sets the fuzzing budget per target (default 60).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh test
jobs=$(nproc)
start=$SECONDS
stage() { printf '\n==== %s (%ds) ====\n' "$1" $((SECONDS - start)); }

stage "format"
git ls-files '*.c' '*.h' | xargs clang-format --dry-run -Werror

stage "cppcheck"
cppcheck -q --error-exitcode=1 --enable=warning,portability --std=c11 --inline-suppr \
    -D__GNUC__ -D_POSIX_C_SOURCE=200809L -Iinclude -Isrc -Isrc/store -Isrc/remote -Isrc/service \
    -Icmd/idmintd src cmd
# The PostgreSQL extension, against the server's headers.
cppcheck -q --error-exitcode=1 --enable=warning,portability --std=c11 --inline-suppr \
    -D__GNUC__ -Iinclude -Ibindings/postgres/src -I"$(pg_config --includedir-server)" \
    bindings/postgres/src
# The Java binding's JNI library, against the JDK's jni.h.
jdk_include=$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")")/include
cppcheck -q --error-exitcode=1 --enable=warning,portability --std=c11 --inline-suppr \
    -D__GNUC__ -Iinclude -Ibindings/java/src/main/c -I"$jdk_include" -I"$jdk_include/linux" \
    bindings/java/src/main/c

stage "dev: ASan+UBSan, -Werror"
cmake --preset dev >/dev/null
cmake --build --preset dev -j"$jobs"
ctest --preset dev -j"$jobs"

stage "tsan: threaded tests"
cmake --preset tsan >/dev/null
cmake --build --preset tsan -j"$jobs"
ctest --preset tsan -j"$jobs"

stage "release: full-volume tests"
cmake --preset release >/dev/null
cmake --build --preset release -j"$jobs"
ctest --preset release -j"$jobs"

stage "fuzz: every target under libFuzzer + ASan+UBSan"
fuzz/run.sh "${IDMINT_FUZZ_SECONDS:-60}"

stage "done"
