#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# idmint region on SQLite stores (the three-region drill,
# reliability.regions_drill, runs PostgreSQL and etcd): bad usage exits 2
# and touches nothing; a claim against a registry that does not exist is
# refused and creates none; a claim, its show, a second claim refused with
# the holder named, ns create --from-registry and its misuse, a release and
# the registry's record after it; verify's further authorities only with --ns.
set -euo pipefail

IDMINT=${1:?usage: test_region.sh /path/to/idmint}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
unset IDMINT_AUTHORITY IDMINT_TOKEN
export IDMINT_WITNESS_DIR="$T/witness"
REG="sqlite:$T/registry.db"
A="sqlite:$T/a.db"
B="sqlite:$T/b.db"

die() {
    echo "FAIL: $*" >&2
    exit 1
}

# expect CODE PATTERN WHAT CMD...: CMD exits CODE with PATTERN on stderr.
expect() {
    local code=$1 pattern=$2 what=$3 rc=0
    shift 3
    "$@" >"$T/out" 2>"$T/err" || rc=$?
    [ "$rc" = "$code" ] || die "$what: exit $rc, not $code: $(cat "$T/err")"
    grep -q -- "$pattern" "$T/err" || die "$what: no '$pattern' in: $(cat "$T/err")"
}

expect 2 "missing subcommand" "region alone" "$IDMINT" region
expect 2 "unknown subcommand 'grab'" "an unknown subcommand" "$IDMINT" region grab
expect 2 "are both needed" "claim without --region" "$IDMINT" --authority "$A" region claim --registry "$REG"
expect 2 "65535" "a region above 16 bits" "$IDMINT" --authority "$A" region claim --registry "$REG" --region 65536
expect 2 "together, or neither" "show with --registry alone" "$IDMINT" region show --registry "$REG"
expect 2 "takes no --registry" "release with flags" "$IDMINT" --authority "$A" region release --region 1
expect 2 "takes no other flag" "--from-registry with --kind" "$IDMINT" --authority "$A" ns create ev --from-registry --kind snowflake
expect 2 "further authorities go with --ns" "verify with an authority but no --ns" "$IDMINT" verify "$A" </dev/null
[ ! -e "$T/a.db" ] || die "bad usage created the authority"

# No registry there: refused, and none is made.
expect 1 "there is no region registry" "a claim against a missing registry" \
    "$IDMINT" --authority "$A" region claim --registry "$REG" --region 1
[ ! -e "$T/registry.db" ] || die "a claim created the registry"
expect 1 "holds no region claim" "show of an unclaimed authority" "$IDMINT" --authority "$A" region show

# The registry defines ev; A claims region 1 and copies ev.
"$IDMINT" --authority "$REG" ns create ev --kind snowflake --layout 41/2/8/12 >/dev/null 2>&1
"$IDMINT" --authority "$A" region claim --registry "$REG" --region 1 >"$T/claim" ||
    die "claim: $(cat "$T/claim")"
grep -q "^region=1 state=claimed holder=[0-9a-f]\{32\} " "$T/claim" || die "claim printed: $(cat "$T/claim")"
holder=$(sed 's/.* holder=\([0-9a-f]*\) .*/\1/' "$T/claim")
"$IDMINT" --authority "$A" region show | grep -q "state=claimed" || die "show after the claim"
"$IDMINT" region show --registry "$REG" --region 1 | grep -q "state=claimed holder=$holder" ||
    die "the registry's record names another holder"
"$IDMINT" --authority "$A" region claim --registry "$REG" --region 1 >/dev/null ||
    die "the same claim run again"
expect 1 "region 1 is claimed by authority $holder" "a second authority claims region 1" \
    "$IDMINT" --authority "$B" region claim --registry "$REG" --region 1
expect 1 "holds region 1" "A claims another region" \
    "$IDMINT" --authority "$A" region claim --registry "$REG" --region 2
expect 1 "defines no namespace 'nope'" "a namespace the registry lacks" \
    "$IDMINT" --authority "$A" ns create nope --from-registry
"$IDMINT" --authority "$A" ns create ev --from-registry >/dev/null || die "ns create --from-registry"
"$IDMINT" --authority "$A" mint --ns ev --region 1 -n 3 >"$T/ids" || die "mint in region 1"
while read -r id; do
    [ $(((id >> 20) & 3)) = 1 ] || die "ID $id is not of region 1"
done <"$T/ids"
expect 1 "serves region 1 only" "a lease of region 0" "$IDMINT" --authority "$A" mint --ns ev -n 1

# Release: the registry frees region 1 with a floor; A grants nothing more.
"$IDMINT" --authority "$A" region release | grep -q "state=released" || die "release"
"$IDMINT" region show --registry "$REG" --region 1 >"$T/rec"
grep -q "state=free holder=- " "$T/rec" || die "the registry after the release: $(cat "$T/rec")"
floor=$(sed 's/.* floor_ms=\([0-9]*\).*/\1/' "$T/rec")
[ "$floor" -gt 0 ] || die "the release left no floor: $(cat "$T/rec")"
expect 1 "is released" "a mint on the released authority" "$IDMINT" --authority "$A" mint --ns ev --region 1 -n 1
"$IDMINT" --authority "$B" region claim --registry "$REG" --region 1 >/dev/null || die "B claims region 1"
"$IDMINT" --authority "$B" ns create ev --from-registry >/dev/null
"$IDMINT" --authority "$B" mint --ns ev --region 1 -n 3 >"$T/ids.b" || die "mint on B"
first=$(head -n 1 "$T/ids.b")
while read -r id; do
    [ "$id" -lt "$first" ] || die "B's $first is not above A's $id"
done <"$T/ids"
echo "region: ok"
