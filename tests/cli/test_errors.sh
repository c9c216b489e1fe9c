#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Bad input to the idmint CLI: each case must exit 1 (failed operation) or 2
# (bad usage), say why in exactly one "idmint: " line on stderr, and leave
# the store exactly as it was (namespace list and full SQLite dump).
set -euo pipefail

IDMINT=${1:?usage: test_errors.sh /path/to/idmint}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
DB="$T/test.db"
export IDMINT_AUTHORITY="sqlite:$DB"
failures=0
cases=0

fail() {
    echo "FAIL: $*" >&2
    failures=$((failures + 1))
}

snapshot() {
    "$IDMINT" ns list >"$T/list.$1" 2>&1 || echo "ns list failed: $?" >>"$T/list.$1"
    sqlite3 "$DB" .dump >"$T/dump.$1"
}

# expect_fail CODE DESCRIPTION ARGS... ; stdin comes from $T/stdin.
expect_fail() {
    local want=$1 what=$2 rc=0 lines
    shift 2
    cases=$((cases + 1))
    snapshot before
    "$IDMINT" "$@" <"$T/stdin" >"$T/out" 2>"$T/err" || rc=$?
    snapshot after
    if [ "$rc" -ne "$want" ]; then
        fail "$what: exit $rc, want $want (idmint $*); stderr: $(cat "$T/err")"
    fi
    lines=$(wc -l <"$T/err")
    if [ "$lines" -ne 1 ]; then
        fail "$what: $lines lines on stderr, want 1: $(cat "$T/err")"
    elif ! grep -q '^idmint: ' "$T/err"; then
        fail "$what: stderr does not start with 'idmint: ': $(cat "$T/err")"
    fi
    if ! cmp -s "$T/list.before" "$T/list.after"; then
        fail "$what: namespace list changed: $(diff "$T/list.before" "$T/list.after" || true)"
    fi
    if ! cmp -s "$T/dump.before" "$T/dump.after"; then
        fail "$what: store dump changed: $(diff "$T/dump.before" "$T/dump.after" || true)"
    fi
}

: >"$T/stdin"
# A store with one namespace of each kind and one leased-then-released worker.
"$IDMINT" ns create sf --kind snowflake >/dev/null
"$IDMINT" ns create rg --kind range --start 1 --max 1000000 >/dev/null
"$IDMINT" ns create small --kind snowflake --layout 38/0/10/12 >/dev/null 2>&1
"$IDMINT" mint --ns sf -n 10 >/dev/null
"$IDMINT" mint -n 10 >/dev/null

expect_fail 1 "unknown namespace (mint)" mint --ns nope
expect_fail 1 "unknown namespace (ns show)" ns show nope
expect_fail 1 "unknown namespace (decode)" decode --ns nope 123
expect_fail 1 "unknown namespace (workers)" workers nope
expect_fail 1 "unknown namespace (ns disable)" ns disable nope
expect_fail 2 "layout with three fields" ns create x --kind snowflake --layout 41/0/10
expect_fail 2 "layout of 64 bits" ns create x --kind snowflake --layout 41/0/10/13
expect_fail 2 "layout not numeric" ns create x --kind snowflake --layout a/b/c/d
expect_fail 2 "unit 0" ns create x --kind snowflake --unit 0
expect_fail 2 "unit not numeric" ns create x --kind snowflake --unit=fast
expect_fail 2 "bad epoch" ns create x --kind snowflake --epoch yesterday
expect_fail 2 "impossible epoch date" ns create x --kind snowflake --epoch 2015-13-45
expect_fail 1 "layout already past its end" \
    ns create x --kind snowflake --layout 20/0/10/12 --epoch 2015-01-01
expect_fail 2 "count 0" mint -n 0
expect_fail 2 "count too large" mint -n 100000001
expect_fail 2 "negative count" mint -n -5
expect_fail 2 "count not numeric" mint -n abc
expect_fail 2 "count with junk" mint -n 12x
expect_fail 2 "count missing" mint -n
expect_fail 2 "uuid7 count 0" uuid7 -n 0
expect_fail 2 "uuid7 count too large" uuid7 --count=100000001
expect_fail 2 "region too large" mint --region 65536
expect_fail 2 "renew not shorter than lease" mint --lease 10 --renew 10
expect_fail 2 "lease 0" mint --lease 0
expect_fail 2 "unknown mint flag" mint --bogus
expect_fail 2 "malformed ID abc" decode abc
expect_fail 2 "malformed ID -1" decode -1
expect_fail 2 "ID past 2^64" decode 18446744073709551616
expect_fail 2 "ID 0" decode 0
expect_fail 2 "ID past the layout's bits" decode --ns small 4611686018427387904
expect_fail 2 "missing ID" decode
expect_fail 1 "decode in a range namespace" decode --ns rg 5
expect_fail 1 "workers of a range namespace" workers rg
expect_fail 1 "unreachable store (mint)" --authority sqlite:/nonexistent-dir/x.db mint
expect_fail 1 "unreachable store (ns list)" ns list --authority=sqlite:/nonexistent-dir/x.db
expect_fail 1 "duplicate ns create" ns create sf --kind snowflake
expect_fail 1 "duplicate ns create (range)" ns create rg --kind range
expect_fail 2 "unknown subcommand" frobnicate
expect_fail 2 "unknown ns subcommand" ns frobnicate
expect_fail 2 "missing command" --authority "sqlite:$DB"
expect_fail 2 "missing NAME (ns show)" ns show
expect_fail 2 "missing NAME (ns create)" ns create --kind range
expect_fail 2 "extra argument" ns show sf rg
expect_fail 2 "kind bogus" ns create y --kind bogus
expect_fail 2 "kind missing" ns create y
expect_fail 2 "bad namespace name" ns create Bad.Name --kind range
expect_fail 2 "layout flag on a range namespace" ns create y --kind range --layout 41/0/10/12
expect_fail 2 "range flag on a snowflake namespace" ns create y --kind snowflake --start 5
expect_fail 2 "start past max" ns create y --kind range --start 10 --max 5
expect_fail 2 "verify of a stray argument" verify ids.txt
printf '1\n2\nx3\n' >"$T/stdin"
expect_fail 2 "verify of a malformed line" verify
if ! grep -q 'line 3' "$T/err"; then
    fail "verify of a malformed line: message does not name line 3: $(cat "$T/err")"
fi
printf '1\n99999999999999999999\n' >"$T/stdin"
expect_fail 2 "verify of a number past 64 bits" verify
: >"$T/stdin"

if [ "$cases" -lt 20 ]; then
    fail "only $cases cases ran"
fi
if [ "$failures" -ne 0 ]; then
    echo "$failures of $cases error cases failed" >&2
    exit 1
fi
echo "all $cases error cases passed"
