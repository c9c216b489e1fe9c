#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The restore drill on PostgreSQL: 4 processes mint (snowflake and range,
# short renew and refill intervals) from a database of their own; a pg_dump
# is taken mid-run; minting goes on; the dump is restored over the live
# database (pg_restore --clean) under the running processes. Every live
# process must stop at its next contact with the explicit error (the
# restored sequence is behind what each saw); after `idmint authority
# fence`, fresh processes mint; no ID of the whole drill is issued twice.
# Usage: test_pg_restore.sh /path/to/idmint [/path/to/idmintd]
# Environment: IDMINT_PG_ENV (file with the URL of tests/support/pg-start.sh).
set -euo pipefail
IDMINT=${1:?usage: test_pg_restore.sh /path/to/idmint}
PG_ENV=${IDMINT_PG_ENV:?IDMINT_PG_ENV must name the file with the PostgreSQL URL}
PG_URL=$(head -n 1 "$PG_ENV")
BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
HOSTPORT=$(sed -E 's|^[a-z]+://[^@]*@([^/]+)/.*$|\1|' <<<"$PG_URL")
HOST=${HOSTPORT%:*}
PORT=${HOSTPORT##*:}
DB=idmint_restore_$$
scale=${IDMINT_TIMEOUT_SCALE:-1}
d=$(mktemp -d)
unset IDMINT_TOKEN IDMINT_CONFIG
as_super() { "$BIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$HOST" -p "$PORT" -U postgres "$@"; }
cleanup() {
    kill -9 $(jobs -p) 2>/dev/null || true
    as_super -d postgres -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null 2>&1 || true
    rm -rf "$d"
}
trap cleanup EXIT
fail() {
    echo "pg_restore: FAIL: $*" >&2
    exit 1
}

as_super -d postgres -c "CREATE DATABASE $DB"
export IDMINT_AUTHORITY="postgresql://postgres@$HOST:$PORT/$DB"
"$IDMINT" ns create sf --kind snowflake --layout 41/0/4/12 >/dev/null
"$IDMINT" ns create rg --kind range --block 100 >/dev/null

pids=()
for i in 1 2; do
    "$IDMINT" mint --ns sf -n 1000000 --rate 2000 --lease 2 --renew 1 >"$d/lost.sf.$i" \
        2>"$d/err.sf.$i" &
    pids+=($!)
    "$IDMINT" mint --ns rg -n 1000000 --rate 2000 >"$d/lost.rg.$i" 2>"$d/err.rg.$i" &
    pids+=($!)
done
sleep 1.5
"$BIN/pg_dump" -h "$HOST" -p "$PORT" -U postgres -Fc -f "$d/dump" "$DB"
sleep 1.5 # minting goes on past the dump
"$BIN/pg_restore" -h "$HOST" -p "$PORT" -U postgres --clean --if-exists --single-transaction \
    -d "$DB" "$d/dump"
restored=$SECONDS

for i in "${!pids[@]}"; do
    rc=0
    timeout $((15 * scale)) tail --pid="${pids[$i]}" -f /dev/null || fail "minter $i did not stop"
    wait "${pids[$i]}" || rc=$?
    [ "$rc" = 1 ] || fail "minter $i exited $rc, not 1"
done
for f in "$d"/err.*; do
    grep -q "authority restored or rewound" "$f" || fail "$f: $(cat "$f")"
done
echo "all 4 live processes stopped at their next contact, $((SECONDS - restored)) s after the restore"

rc=0
"$IDMINT" authority fence 2>"$d/fence.err" || rc=$?
[ "$rc" = 1 ] && grep -q "needs --above rg=N" "$d/fence.err" || fail "fence without --above: $rc"
max_rg=$(cat "$d"/lost.rg.* | sort -n | tail -1)
"$IDMINT" authority fence --above "rg=$max_rg" --max-lease 3 >/dev/null
"$IDMINT" mint --ns sf -n 3000 >"$d/fresh.sf"
"$IDMINT" mint --ns rg -n 3000 >"$d/fresh.rg"
for ns in sf rg; do
    lost_n=$(cat "$d"/lost.$ns.* | wc -l)
    [ "$lost_n" -gt 1000 ] || fail "only $lost_n $ns IDs before the restore"
    dups=$(cat "$d"/lost.$ns.* "$d/fresh.$ns" | sort | uniq -d | wc -l)
    [ "$dups" = 0 ] || fail "$dups duplicate $ns IDs"
    fresh_min=$(sort -n "$d/fresh.$ns" | sed -n 1p)
    lost_max=$(cat "$d"/lost.$ns.* | sort -n | tail -1)
    [ "$fresh_min" -gt "$lost_max" ] || fail "fresh $ns ID $fresh_min <= $lost_max of the lost history"
    echo "$ns: $lost_n IDs before and across the restore, 3000 after the fence, 0 duplicates"
done
echo "pg restore drill: ok"
