#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The store deleted and made anew at the same place (docs/operations.md
# "Restores", "A store deleted and created anew"), on SQLite: under a live
# idmintd (600 s lease, minting for a client every 10 ms) and 4 CLI minters
# (snowflake and range), with every process's IDs collected, the operator
# removes the authority's file (taking it for a cache) and provisions the
# namespaces again, which makes a new, empty store at the same path. Then:
# every running process stops (its file is gone); new CLI minters and a
# restarted idmintd are refused by this host's witness, whose binding of the
# path names the old store (the message names the place, both store ids and
# the fence); a fence with --above on this host binds the path to the new
# store; fresh CLI minters and the daemon mint above every ID of the lost
# store, and `idmint verify` over every ID of the drill finds no duplicate.
# Usage: test_restore_recreated.sh /path/to/idmint /path/to/idmintd
set -euo pipefail
IDMINT=$1
IDMINTD=${2:?usage: test_restore_recreated.sh /path/to/idmint /path/to/idmintd}
scale=${IDMINT_TIMEOUT_SCALE:-1}
dir=$(mktemp -d)
trap 'touch "$dir"/*/stop.client 2>/dev/null || true; kill -9 $(jobs -p) 2>/dev/null || true; [ -n "${KEEP:-}" ] || rm -rf "$dir"' EXIT
fail() {
    echo "FAIL: $*" >&2
    exit 1
}
command -v curl >/dev/null || fail "curl is not installed"
# shellcheck source=../support/restore_drill.sh
. "$(dirname "$0")/../support/restore_drill.sh"

d=$dir/recreate
mkdir -p "$d"
export IDMINT_AUTHORITY="sqlite:$d/a.db" IDMINT_WITNESS_DIR="$d/witness"
provision() {
    "$IDMINT" ns create sf --kind snowflake --layout 41/0/4/12 >/dev/null 2>"$d/provision.err" ||
        fail "ns create sf: $(cat "$d/provision.err")"
    "$IDMINT" ns create rg --kind range --block 100 >/dev/null 2>"$d/provision.err" ||
        fail "ns create rg: $(cat "$d/provision.err")"
}
provision
old_id=$(sqlite3 "$d/a.db" "SELECT store_id FROM history")

drill_daemon "$d"
drill_start "$d"
sleep 2
# The operator removes the file and its -wal and -shm, and the provisioning
# runs again: a new, empty store at the same path, whose range namespace
# starts at 1 again.
t0=$(date +%s.%N)
rm -f "$d/a.db" "$d/a.db-wal" "$d/a.db-shm"
provision
new_id=$(sqlite3 "$d/a.db" "SELECT store_id FROM history")
[ "$old_id" != "$new_id" ] || fail "the new store has the old store id $old_id"
next_rg=$("$IDMINT" ns show rg | awk '$1 == "next:" {print $2}')
[ "$next_rg" = 1 ] || fail "the new rg does not start at 1 but at $next_rg"
echo "recreate: store $old_id deleted, store $new_id made at the same path"
drill_stopped "$d" recreate "$t0"

# New CLI minters: refused, naming the place, both stores and the fence.
# What the new store has granted so far: the new processes below must add nothing.
granted() {
    sqlite3 "$d/a.db" "SELECT (SELECT count(*) FROM worker_leases) || '/' || next_value FROM namespaces WHERE name = 'rg'"
}
granted_before=$(granted)
echo "recreate: the new store before new processes start: worker ids/rg next value $granted_before"
drill_refused "$d" recreate "deleted and created anew"
for text in "$d/a.db" "$old_id" "$new_id" "idmint authority fence --above NS=N"; do
    grep -qF -- "$text" "$d/refused.err" || fail "the refusal does not name '$text': $(cat "$d/refused.err")"
done
# A restarted idmintd: its mints are refused the same way, nothing granted.
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

# The fence: every process of the old store has stopped, so a short
# quarantine is enough (the new store knows no lease of the old one).
drill_fence "$d" recreate --max-lease 3
grep -q "bound by a fence" "$d"/witness/location-*[0-9a-f] || fail "the fence did not bind the path"
sqlite3 "$d/a.db" "SELECT action FROM audit" | grep -q "authority.fence" || fail "the fence is not audited"
drill_fresh "$d" recreate
# The daemon mints again from the fenced store (its next take or refill).
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
echo "restore recreated drill: ok"
