#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# An open that finds PostgreSQL busy waits for a connection instead of failing
# (issue 18): a start burst of 500 processes outran the server's backend
# starts and 297 of them failed on their first connect timeout. Here a role
# whose connection limit is taken by two sessions for 3 s opens the store:
# it must succeed once they end, having waited for them, and mint. A failure
# that waiting cannot mend (a database that does not exist) still fails at
# once, with the server's reason.
# Usage: test_pg_busy_open.sh /path/to/idmint [/path/to/idmintd]
# Environment: IDMINT_PG_ENV (file with the URL of tests/support/pg-start.sh).
set -euo pipefail

IDMINT=${1:?usage: test_pg_busy_open.sh /path/to/idmint}
PG_ENV=${IDMINT_PG_ENV:?IDMINT_PG_ENV must name the file with the PostgreSQL URL}
PG_URL=$(head -n 1 "$PG_ENV")
BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
HOSTPORT=$(sed -E 's|^[a-z]+://[^@]*@([^/]+)/.*$|\1|' <<<"$PG_URL")
HOST=${HOSTPORT%:*}
PORT=${HOSTPORT##*:}
ROLE=idmint_busy_$$
DB=idmint_busy_$$
T=$(mktemp -d)
unset IDMINT_TOKEN IDMINT_AUTHORITY IDMINT_CONFIG

as_super() { "$BIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$HOST" -p "$PORT" -U postgres "$@"; }
cleanup() {
    kill $(jobs -p) 2>/dev/null || true
    wait 2>/dev/null || true
    as_super -d postgres -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" \
        -c "DROP ROLE IF EXISTS $ROLE" >/dev/null 2>&1 || true
    rm -rf "$T"
}
trap cleanup EXIT
fail() {
    echo "pg_busy_open: FAIL: $*" >&2
    exit 1
}
now_ms() { date +%s%3N; }

as_super -d postgres -c "CREATE ROLE $ROLE LOGIN CONNECTION LIMIT 2" \
    -c "CREATE DATABASE $DB OWNER $ROLE"
URL="postgresql://$ROLE@$HOST:$PORT/$DB"
"$IDMINT" --authority "$URL" ns create orders --kind range >/dev/null || fail "ns create failed"

# Both of the role's connections busy for 3 s.
for _ in 1 2; do
    "$BIN/psql" -X -q -h "$HOST" -p "$PORT" -U "$ROLE" -d "$DB" -c "SELECT pg_sleep(3)" \
        >/dev/null 2>&1 &
done
for _ in $(seq 1 50); do
    n=$(as_super -d postgres -tAc "SELECT count(*) FROM pg_stat_activity WHERE usename = '$ROLE'")
    [ "$n" -ge 2 ] && break
    sleep 0.1
done
[ "$n" -ge 2 ] || fail "the two blocking sessions did not connect"
start=$(now_ms)
"$IDMINT" --authority "$URL" mint --ns orders -n 5 >"$T/ids" 2>"$T/err" ||
    fail "the open gave up on a busy server: $(cat "$T/err")"
waited=$(($(now_ms) - start))
[ "$waited" -ge 1500 ] || fail "minted after ${waited} ms: the connection limit never held it up"
[ "$(sort -u "$T/ids" | wc -l)" -eq 5 ] || fail "want 5 distinct IDs: $(tr '\n' ' ' <"$T/ids")"
wait

# A database that does not exist is not busy: no waiting, the server's reason.
start=$(now_ms)
set +e
"$IDMINT" --authority "postgresql://$ROLE@$HOST:$PORT/${DB}_missing" mint -n 1 >/dev/null \
    2>"$T/err"
rc=$?
set -e
took=$(($(now_ms) - start))
[ "$rc" -ne 0 ] || fail "an open of a missing database succeeded"
grep -q 'does not exist' "$T/err" || fail "the reason is missing: $(cat "$T/err")"
[ "$took" -lt 1500 ] || fail "a missing database took ${took} ms to refuse: it was retried"
echo "pg_busy_open: ok (waited ${waited} ms for a free connection; a missing database refused in ${took} ms)"
