#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Build every fuzz/fuzz_<name>.c with clang 14 and libFuzzer (ASan+UBSan)
# and run each for SECONDS (default 60). Works from a clean checkout; needs
# only the packages the CMake build needs plus clang-14 and libclang-rt-14-dev.
# The seeds in fuzz/corpus/ are read, never written: new inputs go to
# $IDMINT_FUZZ_DIR/corpus/<name>. Exits 1 on any crash, leak or timeout and
# prints the crashing input's path (replay it: ./fuzz_<name> PATH).
#
# usage: fuzz/run.sh [SECONDS] [TARGET...]      (env: IDMINT_FUZZ_DIR, CC)
set -eu

seconds=${1:-60}
[ $# -gt 0 ] && shift
root=$(cd "$(dirname "$0")/.." && pwd)
out=${IDMINT_FUZZ_DIR:-$root/build/fuzz}
cc=${CC:-clang-14}
case $seconds in '' | *[!0-9]*) echo "run.sh: SECONDS must be a whole number" >&2; exit 2 ;; esac
command -v "$cc" >/dev/null || cc=clang

pkgs="sqlite3 libcurl jansson libpq libh2o-evloop inih libcrypto"
san="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
cflags="-std=c11 -D_POSIX_C_SOURCE=200809L -g -O1 $san -Wall -Wextra -Werror \
  -I$root/include -I$root/src -I$root/src/store -I$root/src/remote -I$root/src/service -I$root/cmd/idmintd -I$root/fuzz \
  $(pkg-config --cflags $pkgs)"
libs="$(pkg-config --libs $pkgs) -lpthread"

mkdir -p "$out/obj"
rm -f "$out"/obj/*.o

# The library and the daemon (without main.c) as two archives, as CMake's
# idmint_static and idmintd_core: archive members are linked only when
# needed, so a target may stand in for part of the daemon (daemon_stub.h).
compile() { # archive sources...
    archive=$1
    shift
    for src in "$@"; do
        obj="$out/obj/$(echo "${src#"$root"/}" | tr / _).o"
        echo "$cc $cflags -fsanitize=fuzzer-no-link -c $src -o $obj"
    done | tr '\n' '\0' | xargs -0 -P 2 -I{} sh -c '{}'
    rm -f "$archive"
    ar rcs "$archive" "$out"/obj/*.o
    rm -f "$out"/obj/*.o
}
echo "run.sh: building with $($cc --version | head -n 1)"
compile "$out/libidmint.a" "$root"/src/*.c "$root"/src/store/*.c "$root"/src/store/etcd/*.c \
    "$root"/src/remote/*.c
# What idmintd compiles in, as CMake does (cmd/idmintd/embedded.list, cmake/embed.cmake).
mkdir -p "$out/generated"
grep -v '^#' "$root/cmd/idmintd/embedded.list" | while read -r asset; do
    [ -n "$asset" ] || continue
    sym=asset_$(basename "$asset" | tr . _)
    cmake -DIN="$root/$asset" -DOUT="$out/generated/$sym.c" -DNAME="$sym" \
        -P "$root/cmake/embed.cmake"
done
compile "$out/libidmintd.a" $(ls "$root"/cmd/idmintd/*.c | grep -v '/main\.c$') "$out"/generated/*.c

targets=${*:-$(cd "$root/fuzz" && ls fuzz_*.c | sed 's/^fuzz_//; s/\.c$//')}
for t in $targets; do
    $cc $cflags -fsanitize=fuzzer "$root/fuzz/fuzz_$t.c" -o "$out/fuzz_$t" \
        "$out/libidmintd.a" "$out/libidmint.a" $libs
done

failed=0
for t in $targets; do
    rm -rf "$out/artifacts/$t"
    mkdir -p "$out/corpus/$t" "$out/artifacts/$t" "$out/logs"
    log="$out/logs/$t.log"
    echo "run.sh: fuzz_$t for ${seconds}s"
    # The first folder receives new inputs; the repo's seeds are only read.
    if ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1} \
        UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1} \
        "$out/fuzz_$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
        -max_len=4096 -print_final_stats=1 -artifact_prefix="$out/artifacts/$t/" \
        "$out/corpus/$t" "$root/fuzz/corpus/$t" >"$log" 2>&1; then
        grep -E '^stat::number_of_executed_units|^Done' "$log" | sed "s/^/  /" || true
    else
        failed=1
        echo "run.sh: fuzz_$t FAILED; log: $log" >&2
        grep -E 'ERROR: |SUMMARY: |runtime error|Test unit written to' "$log" | sed 's/^/  /' >&2 || true
        for a in "$out/artifacts/$t"/*; do
            [ -f "$a" ] && echo "  crashing input: $a" >&2
        done
    fi
done
exit $failed
