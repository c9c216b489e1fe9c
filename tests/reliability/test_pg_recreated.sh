#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The store deleted and made anew at the same place (docs/operations.md
# "Restores"), on PostgreSQL: under a live idmintd (600 s lease) and 4 CLI
# minters (snowflake and range) on a database of the fixture's server, with
# every process's IDs collected, the database is dropped (WITH (FORCE):
# every connection is ended) and created again under the same name, and the
# namespaces provisioned again: a new, empty store at the same host, port
# and database. Every running process stops (the store they reconnect to
# has another history); new CLI minters and a restarted idmintd are refused
# by this host's witness (its binding of the place names the old store); a
# fence with --above on this host binds the place to the new store; fresh
# processes mint above every ID of the old one, and `idmint verify` over
# every ID of the drill finds no duplicate. About 20 s.
# Usage: test_pg_recreated.sh /path/to/idmint /path/to/idmintd
# Environment: IDMINT_PG_ENV (file with the URL of tests/support/pg-start.sh).
set -euo pipefail
IDMINT=${1:?usage: test_pg_recreated.sh /path/to/idmint /path/to/idmintd}
IDMINTD=${2:?usage: test_pg_recreated.sh /path/to/idmint /path/to/idmintd}
# shellcheck source=../support/pg-fixture.sh
source "$(dirname "$0")/../support/pg-fixture.sh"
DB=idmint_recreated_$$
scale=${IDMINT_TIMEOUT_SCALE:-1}
dir=$(mktemp -d)
unset IDMINT_TOKEN IDMINT_CONFIG
cleanup() {
    touch "$dir"/*/stop.client 2>/dev/null || true
    kill -9 $(jobs -p) 2>/dev/null || true
    as_super -d postgres -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null 2>&1 || true
    [ -n "${KEEP:-}" ] || rm -rf "$dir"
}
trap cleanup EXIT
fail() {
    echo "pg_recreated: FAIL: $*" >&2
    exit 1
}
command -v curl >/dev/null || fail "curl is not installed"
# shellcheck source=../support/restore_drill.sh
. "$(dirname "$0")/../support/restore_drill.sh"

# q SQL: one value from the drill's database.
q() {
    "$BIN/psql" -X -qtA -v ON_ERROR_STOP=1 -h "$HOST" -p "$PORT" -U postgres -d "$DB" -c "$1"
}

d=$dir/recreate
mkdir -p "$d"
as_super -d postgres -c "CREATE DATABASE $DB" >/dev/null
export IDMINT_AUTHORITY="postgresql://postgres@$HOST:$PORT/$DB" IDMINT_WITNESS_DIR="$d/witness"
provision() {
    "$IDMINT" ns create sf --kind snowflake --layout 41/0/4/12 >/dev/null 2>"$d/provision.err" ||
        fail "ns create sf: $(cat "$d/provision.err")"
    "$IDMINT" ns create rg --kind range --block 100 >/dev/null 2>"$d/provision.err" ||
        fail "ns create rg: $(cat "$d/provision.err")"
}
provision
old_id=$(q "SELECT store_id FROM idmint.history")

drill_lease=10 # the drop is an outage first: the snowflake leases outlast it
drill_daemon "$d"
drill_start "$d"
sleep 2
t0=$(date +%s.%N)
as_super -d postgres -c "DROP DATABASE $DB WITH (FORCE)" >/dev/null
as_super -d postgres -c "CREATE DATABASE $DB" >/dev/null
provision
new_id=$(q "SELECT store_id FROM idmint.history")
[ "$old_id" != "$new_id" ] || fail "the new store has the old store id $old_id"
echo "recreate: database $DB (store $old_id) dropped, created again (store $new_id)"
# Each stops on whatever it meets first in the new database: a namespace
# not provisioned yet, its worker id's row gone (a renewal: lease lost), or
# the changed history (its check, or the proof of a refill it just got).
drill_stop_text='authority restored or rewound\|namespace .* does not exist\|worker lease lost' \
    drill_stopped "$d" recreate "$t0"

# What the new store has granted so far (a running process may have
# reserved from it before its proof of the grant stopped it, never using
# it): the new processes below must add nothing.
granted() {
    q "SELECT (SELECT count(*) FROM idmint.worker_leases) || '/' || next_value FROM idmint.namespaces WHERE name = 'rg'"
}
granted_before=$(granted)
echo "recreate: the new store before new processes start: worker ids/rg next value $granted_before"
drill_refused "$d" recreate "deleted and created anew"
for text in "postgres://$HOST:$PORT/$DB" "$old_id" "$new_id" "idmint authority fence --above NS=N"; do
    grep -qF -- "$text" "$d/refused.err" || fail "the refusal does not name '$text': $(cat "$d/refused.err")"
done
rm -f "$d/stop.client" "$d/port"
start_listening daemon_pid daemon_port 10 "$d/port" "$d/daemon2.log" \
    "$IDMINTD" --listen 127.0.0.1:0 --port-file "$d/port" --authority "$IDMINT_AUTHORITY" ||
    fail "idmintd did not start again: $(tail -5 "$d/daemon2.log")"
for ns in sf rg; do
    code=$(curl -s -o "$d/daemon.refused" -w '%{http_code}' \
        "http://127.0.0.1:$daemon_port/v1/ids?namespace=$ns&count=5")
    [ "$code" != 200 ] || fail "the restarted daemon minted $ns from the new store"
    grep -q "deleted and created anew" "$d/daemon.refused" "$d/daemon2.log" ||
        fail "the daemon's refusal ($code): $(cat "$d/daemon.refused")"
done
[ "$(granted)" = "$granted_before" ] ||
    fail "the refused processes were granted something: worker ids/rg next value $granted_before -> $(granted)"
echo "recreate: new minters and a restarted idmintd are refused before anything is granted"

drill_fence "$d" recreate --max-lease 3
grep -q "bound by a fence" "$d"/witness/location-*[0-9a-f] || fail "the fence did not bind the place"
drill_fresh "$d" recreate
for ns in sf rg; do
    ok=0
    for _ in $(seq 1 $((100 * scale))); do
        if curl -s -f -H 'Accept: text/plain' \
            "http://127.0.0.1:$daemon_port/v1/ids?namespace=$ns&count=500" >"$d/fresh.$ns.daemon"; then
            ok=1
            break
        fi
        sleep 0.1
    done
    [ "$ok" = 1 ] && [ "$(wc -l <"$d/fresh.$ns.daemon")" = 500 ] || fail "the daemon does not mint $ns after the fence"
done
for ns in sf rg; do
    total=$(cat "$d"/lost.$ns.* "$d/fresh.$ns" "$d/fresh.$ns.daemon" | wc -l)
    out=$(cat "$d"/lost.$ns.* "$d/fresh.$ns" "$d/fresh.$ns.daemon" | "$IDMINT" verify) ||
        fail "verify $ns: $out"
    [[ "$out" == *"count=$total duplicates=0"* ]] || fail "verify $ns: $out"
    echo "recreate: $ns: idmint verify over all $total IDs of the drill: $out"
done
kill "$daemon_pid"
wait "$daemon_pid" 2>/dev/null || true
echo "pg recreated drill: ok"
