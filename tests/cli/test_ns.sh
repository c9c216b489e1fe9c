#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# idmint ns: create, list, show, disable and enable round trip; a disabled
# namespace refuses to mint; the capacity plan's end date is checked against
# one computed here with date(1); the short-layout warning.
set -euo pipefail

IDMINT=${1:?usage: test_ns.sh /path/to/idmint}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export IDMINT_AUTHORITY="sqlite:$T/test.db"

die() {
    echo "FAIL: $*" >&2
    exit 1
}

# expect_line FILE REGEX WHAT
expect_line() {
    grep -Eq "$2" "$1" || die "$3: no line matching /$2/ in: $(cat "$1")"
}

# Create one of each kind; the default layout gives no warning.
"$IDMINT" ns create orders --kind snowflake >"$T/out" 2>"$T/err" ||
    die "ns create orders failed: $(cat "$T/err")"
# The first command creates the authority, and says so (test_authority_notice.sh).
if grep -v '^idmint: creating a new, empty authority at ' "$T/err"; then
    die "default layout printed something on stderr (above)"
fi
"$IDMINT" ns create invoices --kind range --start 100 --max 999999 --block 50 --max-block 500 \
    >"$T/out" 2>"$T/err" || die "ns create invoices failed: $(cat "$T/err")"

# list: one line per namespace.
"$IDMINT" ns list >"$T/list" || die "ns list failed"
expect_line "$T/list" '^orders snowflake enabled layout=41/0/10/12 ' "ns list (orders)"
expect_line "$T/list" '^invoices range enabled next=100 max=999999$' "ns list (invoices)"

# show of the default layout: the time bits run out 2^41 ms after 2026-01-01.
"$IDMINT" ns show orders >"$T/show" || die "ns show orders failed"
end=$(date -u -d @$(((1767225600000 + 2199023255552) / 1000)) +%Y-%m-%dT%H:%M:%S)
case "$end" in 2095-09-*) ;; *) die "date(1) computed $end, not in 2095-09" ;; esac
expect_line "$T/show" "^time_runs_out: ${end}\\.[0-9]{3}Z \\(6[89]\\.[0-9] years left\\)$" \
    "ns show end date"
expect_line "$T/show" '^name: orders$' "ns show name"
expect_line "$T/show" '^kind: snowflake$' "ns show kind"
expect_line "$T/show" '^state: enabled$' "ns show state"
expect_line "$T/show" '^layout: 41/0/10/12$' "ns show layout"
expect_line "$T/show" '^epoch: 2026-01-01T00:00:00.000Z$' "ns show epoch"
expect_line "$T/show" '^ids_per_second_per_worker: 4096000$' "ns show IDs per second"
expect_line "$T/show" '^worker_ids: 1024 per region, 1 region, 1024 total$' "ns show worker ids"
expect_line "$T/show" '^workers_held: 0$' "ns show held (nothing minted yet)"
expect_line "$T/show" '^workers_free: 1024$' "ns show free"

# A unit of 10 ms gives 409600 IDs per second per worker.
"$IDMINT" ns create slow --kind snowflake --unit 10 --epoch=2020-01-01T00:00:00.000Z \
    >/dev/null || die "ns create slow failed"
"$IDMINT" ns show slow >"$T/show" || die "ns show slow failed"
expect_line "$T/show" '^ids_per_second_per_worker: 409600$' "ns show slow IDs per second"
expect_line "$T/show" '^epoch: 2020-01-01T00:00:00.000Z$' "ns show slow epoch"

# An epoch in the future: nothing could mint before it, so create refuses it.
future=$(( ($(date +%s) + 86400) * 1000 ))
rc=0
"$IDMINT" ns create later --kind snowflake --epoch "$future" >"$T/out" 2>"$T/err" || rc=$?
[ "$rc" -eq 1 ] || die "ns create with a future epoch: exit $rc, not 1"
grep -q 'is in the future' "$T/err" || die "future epoch message: $(cat "$T/err")"
"$IDMINT" ns list | grep -q '^later ' && die "a namespace with a future epoch was created"

# show of a range namespace.
"$IDMINT" ns show invoices >"$T/show" || die "ns show invoices failed"
expect_line "$T/show" '^kind: range$' "ns show range kind"
expect_line "$T/show" '^next: 100$' "ns show next"
expect_line "$T/show" '^max: 999999$' "ns show max"
expect_line "$T/show" '^values_left: 999900$' "ns show values left"
expect_line "$T/show" '^block: 50$' "ns show block"
expect_line "$T/show" '^max_block: 500$' "ns show max_block"

# disable: mint refuses with exit 1; enable: mint works again.
"$IDMINT" ns disable orders >"$T/out" || die "ns disable failed"
expect_line "$T/out" "^namespace 'orders' disabled$" "ns disable confirmation"
"$IDMINT" ns list >"$T/list" || die "ns list failed"
expect_line "$T/list" '^orders snowflake disabled ' "ns list after disable"
"$IDMINT" ns show orders >"$T/show" || die "ns show failed"
expect_line "$T/show" '^state: disabled$' "ns show after disable"
rc=0
"$IDMINT" mint --ns orders -n 5 >"$T/out" 2>"$T/err" || rc=$?
[ "$rc" -eq 1 ] || die "mint from a disabled namespace: exit $rc, want 1"
[ ! -s "$T/out" ] || die "mint from a disabled namespace printed IDs: $(head -3 "$T/out")"
expect_line "$T/err" '^idmint: .*disabled' "mint from a disabled namespace message"
rc=0
"$IDMINT" mint --ns invoices -n 5 >/dev/null 2>&1 || rc=$?
[ "$rc" -eq 0 ] || die "disabling orders also stopped invoices (exit $rc)"
"$IDMINT" ns enable orders >"$T/out" || die "ns enable failed"
expect_line "$T/out" "^namespace 'orders' enabled$" "ns enable confirmation"
"$IDMINT" mint --ns orders -n 5 >"$T/out" || die "mint after enable failed"
[ "$(wc -l <"$T/out")" -eq 5 ] || die "mint after enable gave $(wc -l <"$T/out") lines, want 5"

# workers: the row used by that mint, released (holder "-") after close.
"$IDMINT" workers orders >"$T/workers" || die "workers failed"
expect_line "$T/workers" '^region=0 worker=[0-9]+ holder=- generation=[1-9][0-9]* lease_until=[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z$' \
    "workers row"

# A short layout (2^38 ms is about 8.7 years) warns but is created.
"$IDMINT" ns create shortlived --kind snowflake --layout 38/0/10/12 >"$T/out" 2>"$T/err" ||
    die "ns create with a short layout failed: $(cat "$T/err")"
expect_line "$T/err" '^idmint: warning: layout runs out on 20[0-9]{2}-[0-9]{2}-[0-9]{2}T.*, within 10 years$' \
    "short layout warning"
[ "$(wc -l <"$T/err")" -eq 1 ] || die "short layout: more than one line on stderr: $(cat "$T/err")"
"$IDMINT" ns list >"$T/list" || die "ns list failed"
expect_line "$T/list" '^shortlived snowflake enabled layout=38/0/10/12 ' "short layout was created"

# ns migrate --start N is honoured or refused, 1 included: a start of 1 read
# as "no start" and NEW began above the floor without a word.
"$IDMINT" ns create tickets --kind range --block 10 >/dev/null || die "ns create tickets failed"
"$IDMINT" mint --ns tickets -n 5 >/dev/null || die "mint from tickets failed"
rc=0
"$IDMINT" ns migrate tickets tickets2 --start 1 >"$T/out" 2>"$T/err" || rc=$?
[ "$rc" -eq 1 ] || die "ns migrate --start 1 above a floor: exit $rc, want 1: $(cat "$T/out")"
expect_line "$T/err" "start 1 is at or below the floor [1-9][0-9]* .*use [0-9]+ or more" \
    "ns migrate --start 1 refusal"
"$IDMINT" ns show tickets2 >/dev/null 2>&1 && die "a refused migration created tickets2"
"$IDMINT" ns show tickets | grep -q '^state: enabled$' || die "a refused migration left tickets disabled"
# Honoured where it can be: a namespace that issued nothing has no floor.
"$IDMINT" ns create unused --kind range >/dev/null || die "ns create unused failed"
"$IDMINT" ns migrate unused unused2 --start 1 >"$T/out" 2>"$T/err" ||
    die "ns migrate --start 1 of an unused namespace failed: $(cat "$T/err")"
expect_line "$T/out" '^first value: 1$' "ns migrate --start 1 honoured"
"$IDMINT" mint --ns unused2 -n 1 | grep -qx 1 || die "unused2 does not start at 1"
# Any start above the floor is honoured as given.
"$IDMINT" ns migrate tickets tickets3 --start 5000 >"$T/out" 2>"$T/err" ||
    die "ns migrate --start 5000 failed: $(cat "$T/err")"
expect_line "$T/out" '^first value: 5000$' "ns migrate --start 5000 honoured"
"$IDMINT" mint --ns tickets3 -n 1 | grep -qx 5000 || die "tickets3 does not start at 5000"

echo "ns round trip passed"
