#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# idmint bounds: a window's bounds, computed here with shell arithmetic from
# the layout, for a 1 ms and a 10 ms layout with region bits; the IDs
# `idmint mint` makes now lie within the bounds of now and outside the
# windows before and after; UUIDv7 bounds hold `idmint uuid7`'s output;
# every bad window, flag and namespace is refused, with nothing printed on
# stdout.
set -euo pipefail

IDMINT=${1:?usage: test_bounds.sh /path/to/idmint}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export IDMINT_AUTHORITY="sqlite:$T/test.db"

die() {
    echo "FAIL: $*" >&2
    exit 1
}

# field NAME LINE: the value of NAME=... in a line of key=value words.
field() {
    tr ' ' '\n' <<<"$2" | sed -n "s/^$1=//p"
}

# refused STATUS MESSAGE ARGS...: exit STATUS, MESSAGE on stderr, nothing on stdout.
refused() {
    local want=$1 says=$2 rc=0
    shift 2
    "$IDMINT" bounds "$@" >"$T/out" 2>"$T/err" || rc=$?
    [ "$rc" = "$want" ] || die "bounds $*: exit $rc, want $want ($(cat "$T/err"))"
    grep -qF -- "$says" "$T/err" || die "bounds $*: no '$says' in: $(cat "$T/err")"
    [ ! -s "$T/out" ] || die "bounds $*: printed on stdout: $(cat "$T/out")"
}

"$IDMINT" ns create orders --kind snowflake 2>/dev/null >/dev/null
"$IDMINT" ns create tens --kind snowflake --layout 39/4/8/12 --unit 10 >/dev/null
"$IDMINT" ns create seq --kind range >/dev/null
epoch=1767225600000 # the default epoch, 2026-01-01

# The vector: 2026-03-01T00:00:00.005Z up to 2026-03-02 in both layouts.
from=1772323200005
to=1772409600000
line=$("$IDMINT" bounds --ns orders --from $from --to 2026-03-02)
[ "$(field from "$line")" = 2026-03-01T00:00:00.005Z ] || die "from shown as: $line"
[ "$(field to "$line")" = 2026-03-02T00:00:00.000Z ] || die "to shown as: $line"
[ "$(field lo "$line")" = $(((from - epoch) << 22)) ] || die "orders lo: $line"
[ "$(field hi "$line")" = $((((to - 1 - epoch) << 22) | ((1 << 22) - 1))) ] || die "orders hi: $line"
line=$("$IDMINT" bounds --ns tens --from $from --to $to)
# 10 ms units: 5 ms into a unit takes in the whole unit.
[ "$(field lo "$line")" = $((((from - epoch) / 10) << 24)) ] || die "tens lo: $line"
[ "$(field hi "$line")" = $(((((to - 1 - epoch) / 10) << 24) | ((1 << 24) - 1))) ] ||
    die "tens hi: $line"
json=$("$IDMINT" bounds --ns tens --from $from --to $to --json)
python3 - "$json" "$line" <<'EOF'
import json, sys
doc = json.loads(sys.argv[1])
words = dict(w.split("=", 1) for w in sys.argv[2].split())
assert isinstance(doc["lo"], str) and isinstance(doc["hi"], str), doc
assert doc["lo"] == words["lo"] and doc["hi"] == words["hi"], (doc, words)
assert doc["from"] == words["from"] and doc["to"] == words["to"], (doc, words)
EOF

# IDs minted now: within the bounds of now, outside the windows around it.
for ns in orders tens; do
    region=0
    [ $ns = tens ] && region=5
    before=$(($(date +%s%3N) - 1))
    "$IDMINT" mint -n 5000 --ns $ns --region $region >"$T/ids"
    after=$(($(date +%s%3N) + 1))
    line=$("$IDMINT" bounds --ns $ns --from $before --to $after)
    lo=$(field lo "$line")
    hi=$(field hi "$line")
    sort -n "$T/ids" >"$T/sorted"
    first=$(head -1 "$T/sorted")
    last=$(tail -1 "$T/sorted")
    [ "$first" -ge "$lo" ] && [ "$last" -le "$hi" ] ||
        die "$ns: IDs $first..$last minted in [$before, $after) outside [$lo, $hi]"
    # A unit holds 10 ms in tens: step past the edge units.
    later=$("$IDMINT" bounds --ns $ns --from $((after + 10)) --to $((after + 60000)))
    [ "$last" -lt "$(field lo "$later")" ] || die "$ns: ID $last inside the later window: $later"
    earlier=$("$IDMINT" bounds --ns $ns --from $((before - 60000)) --to $((before - 10)))
    [ "$first" -gt "$(field hi "$earlier")" ] ||
        die "$ns: ID $first inside the earlier window: $earlier"
done

# UUIDv7: exact bytes of a vector, and the bounds hold what uuid7 makes now.
line=$("$IDMINT" bounds --uuid7 --from 1250999896491 --to 1250999896493)
[ "$line" = "from=2009-08-23T03:58:16.491Z to=2009-08-23T03:58:16.493Z lo=01234567-89ab-7000-8000-000000000000 hi=01234567-89ac-7fff-bfff-ffffffffffff" ] ||
    die "uuid7 vector: $line"
before=$(($(date +%s%3N) - 1))
"$IDMINT" uuid7 -n 1000 >"$T/uuids"
after=$(($(date +%s%3N) + 1))
line=$("$IDMINT" bounds --uuid7 --from $before --to $after)
lo=$(field lo "$line")
hi=$(field hi "$line")
outside=$(awk -v lo="$lo" -v hi="$hi" '$0 < lo || $0 > hi' "$T/uuids" | wc -l)
[ "$outside" = 0 ] || die "$outside UUIDs made in [$before, $after) outside [$lo, $hi]"

# Refusals: usage errors exit 2, refused windows and namespaces exit 1.
refused 1 "the window is empty" --ns orders --from 2026-03-02 --to 2026-03-01
refused 1 "is before 2026-01-01T00:00:00.000Z" --ns orders --from 2025-12-31 --to 2026-03-01
refused 1 "where its time bits run out" --ns tens --from 2026-03-01 --to 9999-01-01
refused 1 "range namespace" --ns seq --from 2026-03-01 --to 2026-03-02
refused 1 "'missing'" --ns missing --from 2026-03-01 --to 2026-03-02
refused 2 "--from and --to are both needed" --ns orders --from 2026-03-01
refused 2 "--from 'yesterday'" --ns orders --from yesterday --to 2026-03-02
refused 2 "give --ns or --uuid7, not both" --ns orders --uuid7 --from 1 --to 2
refused 2 "unexpected argument 'extra'" --from 1 --to 2 extra
refused 2 "namespace" --ns 'Bad!' --from 2026-03-01 --to 2026-03-02
echo "ok: bounds vectors, minted IDs inside, refusals"
