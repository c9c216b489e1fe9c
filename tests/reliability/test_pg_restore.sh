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
# shellcheck source=../support/pg-fixture.sh
source "$(dirname "$0")/../support/pg-fixture.sh"
DB=idmint_restore_$$
scale=${IDMINT_TIMEOUT_SCALE:-1}
d=$(mktemp -d)
unset IDMINT_TOKEN IDMINT_CONFIG
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
# shellcheck source=../support/restore_drill.sh
. "$(dirname "$0")/../support/restore_drill.sh"

as_super -d postgres -c "CREATE DATABASE $DB"
export IDMINT_AUTHORITY="postgresql://postgres@$HOST:$PORT/$DB"
"$IDMINT" ns create sf --kind snowflake --layout 41/0/4/12 >/dev/null
"$IDMINT" ns create rg --kind range --block 100 >/dev/null

drill_start "$d"
sleep 1.5
"$BIN/pg_dump" -h "$HOST" -p "$PORT" -U postgres -Fc -f "$d/dump" "$DB"
sleep 1.5 # minting goes on past the dump
"$BIN/pg_restore" -h "$HOST" -p "$PORT" -U postgres --clean --if-exists --single-transaction \
    -d "$DB" "$d/dump"
restored=$SECONDS

drill_stopped "$d" pg
echo "all 4 live processes stopped at their next contact, $((SECONDS - restored)) s after the restore"

rc=0
"$IDMINT" authority fence 2>"$d/fence.err" || rc=$?
[ "$rc" = 1 ] && grep -q "needs --above rg=N" "$d/fence.err" || fail "fence without --above: $rc"
max_rg=$(cat "$d"/lost.rg.* | sort -n | tail -1)
# Handles size their blocks to their rate, so the restored store may already
# stand above the highest ID printed: never fence below it (it would refuse).
next_rg=$("$IDMINT" ns show rg | awk '$1 == "next:" {print $2}')
[ "$((next_rg - 1))" -le "$max_rg" ] || max_rg=$((next_rg - 1))
"$IDMINT" authority fence --above "rg=$max_rg" --max-lease 3 >/dev/null
drill_fresh "$d" pg
echo "pg restore drill: ok"
