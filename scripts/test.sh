#!/usr/bin/env bash
# Build and run every test: format and static checks, the whole suite under
# ASan+UBSan (the slow whole-system runs excepted), the threaded tests under
# TSan, a release build where every test runs, the full-volume ones at speed,
# and each fuzz target for a bounded time under libFuzzer.
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

stage "dev: ASan+UBSan, -Werror"
cmake -S . -B build/dev -DBUILD_TESTING=ON -DCMAKE_BUILD_TYPE=Debug -DIDMINT_WERROR=ON \
    -DIDMINT_SANITIZE=address,undefined -DIDMINT_TIMEOUT_SCALE=4 -DIDMINT_BENCH=OFF >/dev/null
cmake --build build/dev -j"$jobs"
(cd build/dev && ctest -j"$jobs" --output-on-failure -LE slow)

stage "tsan: threaded tests"
cmake -S . -B build/tsan -DBUILD_TESTING=ON -DCMAKE_BUILD_TYPE=Debug -DIDMINT_WERROR=ON \
    -DIDMINT_SANITIZE=thread -DIDMINT_TIMEOUT_SCALE=8 -DIDMINT_BENCH=OFF >/dev/null
cmake --build build/tsan -j"$jobs"
(cd build/tsan && TSAN_OPTIONS=halt_on_error=1 ctest -j"$jobs" -L 'unit|store' --output-on-failure)

stage "release: full-volume tests"
cmake -S . -B build/release -DBUILD_TESTING=ON -DCMAKE_BUILD_TYPE=Release -DIDMINT_WERROR=ON >/dev/null
cmake --build build/release -j"$jobs"
(cd build/release && ctest -j"$jobs" --output-on-failure)

stage "fuzz: every target under libFuzzer + ASan+UBSan"
fuzz/run.sh "${IDMINT_FUZZ_SECONDS:-60}"

stage "done"
