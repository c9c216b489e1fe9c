#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# idmint mint, verify, decode and uuid7 end to end: minted IDs verify clean,
# a planted duplicate is caught, decode shows this worker and this time.
set -euo pipefail

IDMINT=${1:?usage: test_mint_verify.sh /path/to/idmint}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export IDMINT_AUTHORITY="sqlite:$T/test.db"

die() {
    echo "FAIL: $*" >&2
    exit 1
}

# mint from the default namespace, twice, then verify each run and both together.
"$IDMINT" mint -n 100000 >"$T/a" || die "mint from default failed"
[ "$(wc -l <"$T/a")" -eq 100000 ] || die "mint -n 100000 gave $(wc -l <"$T/a") lines"
grep -Evq '^[1-9][0-9]*$' "$T/a" && die "mint printed a line that is not a decimal ID"
out=$("$IDMINT" verify <"$T/a") || die "verify of minted IDs failed: $out"
[ "$out" = "count=100000 duplicates=0 decreases=0" ] || die "verify said: $out"
"$IDMINT" mint -n 100000 >"$T/b" || die "second mint from default failed"
out=$(cat "$T/a" "$T/b" | "$IDMINT" verify) || die "verify of two runs failed: $out"
[ "$out" = "count=200000 duplicates=0 decreases=0" ] || die "verify of two runs said: $out"

# A range namespace.
"$IDMINT" ns create seq --kind range >/dev/null || die "ns create seq failed"
"$IDMINT" mint --ns seq -n 100000 >"$T/r" || die "mint from range failed"
out=$("$IDMINT" verify <"$T/r") || die "verify of range IDs failed: $out"
[ "$out" = "count=100000 duplicates=0 decreases=0" ] || die "verify of range IDs said: $out"

# A duplicate makes verify exit 1; a decrease alone does not.
{ head -n 50 "$T/a"; sed -n 10p "$T/a"; tail -n 5 "$T/a"; } >"$T/dup"
rc=0
out=$("$IDMINT" verify <"$T/dup") || rc=$?
[ "$rc" -eq 1 ] || die "verify of a file with a duplicate: exit $rc, want 1"
[ "$out" = "count=56 duplicates=1 decreases=1" ] || die "verify with a duplicate said: $out"
{ tac "$T/a"; echo; } >"$T/rev"
out=$("$IDMINT" verify <"$T/rev") || die "verify of reversed IDs failed: $out"
[ "$out" = "count=100000 duplicates=0 decreases=99999" ] || die "verify of reversed said: $out"
out=$(printf '5\n3\n\n9\n3\n5\n3' | "$IDMINT" verify) && die "verify missed duplicates"
[ "$out" = "count=6 duplicates=3 decreases=3" ] || die "verify of a small mix said: $out"

# decode of a minted ID: this handle's worker, a time within seconds of now.
before=$(date +%s)
id=$("$IDMINT" mint) || die "mint of one ID failed"
after=$(date +%s)
line=$("$IDMINT" decode "$id") || die "decode $id failed"
[[ "$line" =~ ^$id\ time=([0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z)\ unix_ms=([0-9]+)\ region=0\ worker=([0-9]+)\ sequence=([0-9]+)$ ]] ||
    die "decode printed: $line"
iso=${BASH_REMATCH[1]}
ms=${BASH_REMATCH[2]}
if [ "$((ms / 1000))" -lt "$((before - 2))" ] || [ "$((ms / 1000))" -gt "$((after + 2))" ]; then
    die "decoded time $ms is not within 2 s of [$before, $after]"
fi
[ "$(date -u -d "@$((ms / 1000))" +%Y-%m-%dT%H:%M:%S)" = "${iso%.*}" ] ||
    die "decoded ISO time $iso does not match unix_ms $ms"
json=$("$IDMINT" decode --json "$id") || die "decode --json failed"
[[ "$json" =~ ^\{\"id\":\"$id\",\"time\":\"$iso\",\"unix_ms\":$ms,\"region\":0,\"worker\":[0-9]+,\"sequence\":[0-9]+\}$ ]] ||
    die "decode --json printed: $json"
[ "$("$IDMINT" decode "$id" "$id" | wc -l)" -eq 2 ] || die "decode of two IDs is not two lines"

# mint stops quietly with exit 1 when its reader goes away.
rc=0
("$IDMINT" mint -n 5000000 2>"$T/err"; echo $? >"$T/rc") | head -n 1 >/dev/null || true
rc=$(cat "$T/rc")
[ "$rc" -eq 1 ] || die "mint into a closed pipe: exit $rc, want 1"

# uuid7: 1000 distinct lines in the version-7 text form.
"$IDMINT" uuid7 -n 1000 >"$T/u" || die "uuid7 failed"
[ "$(wc -l <"$T/u")" -eq 1000 ] || die "uuid7 -n 1000 gave $(wc -l <"$T/u") lines"
[ "$(sort -u "$T/u" | wc -l)" -eq 1000 ] || die "uuid7 repeated a value"
bad=$(grep -Evc '^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$' "$T/u" || true)
[ "$bad" -eq 0 ] || die "$bad uuid7 lines do not match the v7 pattern"
sort -c "$T/u" || die "uuid7 output is not increasing"

echo "mint/verify/decode/uuid7 passed"
