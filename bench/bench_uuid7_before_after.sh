#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bench/bench_uuid7_before_after.sh BASE [ROUNDS]: the UUIDv7 rate of this
# tree's idmint_bench against the one built from commit BASE, in one run:
# the two builds alternate ROUNDS times (default 5), each case for 1 s, so
# that whatever else the machine does falls on both alike. Prints every
# round, then the median of each and their ratios, beside libuuid's
# uuid_generate_random from the same runs. Builds both in throwaway folders
# (a git worktree for BASE); asserts nothing (exit 1 only on a setup failure).
set -euo pipefail

if [ $# -lt 1 ]; then
    echo "usage: bench/bench_uuid7_before_after.sh BASE_COMMIT [ROUNDS]" >&2
    exit 2
fi
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
base=$(git -C "$src" rev-parse --verify "$1^{commit}")
rounds=${2:-5}
tmp=$(mktemp -d)
cleanup() {
    git -C "$src" worktree remove --force "$tmp/base" >/dev/null 2>&1 || true
    rm -rf "$tmp"
}
trap cleanup EXIT

build() { # SOURCE BUILD
    cmake -S "$1" -B "$2" -DCMAKE_BUILD_TYPE=Release -DIDMINT_WERROR=ON -DBUILD_TESTING=OFF \
        >/dev/null
    cmake --build "$2" -j"$(nproc)" --target idmint_bench >/dev/null
}
git -C "$src" worktree add --detach "$tmp/base" "$base" >/dev/null 2>&1
build "$tmp/base" "$tmp/build-base"
build "$src" "$tmp/build-this"

# rate NAME OUTPUT: the rate column (M/s) of the row NAME.
rate() {
    awk -v name="$1" 'index($0, name " ") == 1 {
        split(substr($0, length(name) + 1), f); sub(/M$/, "", f[2]); print f[2]; exit }' <<<"$2"
}
declare -a before after batch libuuid
for ((i = 0; i < rounds; i++)); do
    out=$("$tmp/build-base/idmint_bench" --only uuid --rounds 1)
    before+=("$(rate idmint_uuid7 "$out")")
    out=$("$tmp/build-this/idmint_bench" --only uuid --rounds 1)
    after+=("$(rate idmint_uuid7 "$out")")
    batch+=("$(rate 'idmint_uuid7_n(1024)' "$out")")
    libuuid+=("$(rate 'libuuid uuid_generate_random' "$out")")
    printf 'round %d: %s idmint_uuid7 %sM/s | this build idmint_uuid7 %sM/s, idmint_uuid7_n(1024) %sM/s, libuuid %sM/s\n' \
        $((i + 1)) "${base:0:7}" "${before[i]}" "${after[i]}" "${batch[i]:-n/a}" "${libuuid[i]}"
done
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
b=$(median "${before[@]}")
a=$(median "${after[@]}")
n=$(median "${batch[@]}")
u=$(median "${libuuid[@]}")
printf '\nmedians of %d rounds (M UUIDs/s, one thread):\n' "$rounds"
printf '  %-34s %8s\n' "idmint_uuid7 at ${base:0:7}" "$b" "idmint_uuid7, this build" "$a" \
    "idmint_uuid7_n(1024), this build" "$n" "libuuid uuid_generate_random" "$u"
awk -v b="$b" -v a="$a" -v n="$n" -v u="$u" 'BEGIN {
    printf "  single call: %.2fx the base; batch: %.2fx the base single call\n", a / b, n / b
    printf "  against libuuid: base %.0fx, single %.0fx, batch %.0fx\n", b / u, a / u, n / u }'
