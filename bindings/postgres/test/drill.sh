#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The drill: 8 sessions insert 1,000,000 rows with DEFAULT idmint_next('orders')
# while 4 idmint processes mint the same namespace through the library. Mid-run
# the server is stopped as a crash would stop it (-m immediate) and started
# again, and later a backend minting from the same namespace is killed with
# kill -9 (the server then ends and restarts every backend). The table's primary key must never
# fire, and `idmint verify` over the table's IDs and the processes' IDs must
# find no duplicate. Run by ../ci.sh (IDMINT_PG_ENV, IDMINT, SRC, WORK).
set -euo pipefail
. "$SRC/tests/support/pg-fixture.sh"

sessions=8
batches=125 # per session
rows=1000   # per batch: 8 x 125 x 1000 = 1,000,000
d=$WORK/drill
mkdir -p "$d"
trap 'jobs -p | xargs -r kill -9 2>/dev/null || true' EXIT

as_super -d idmint -c "CREATE TABLE drill (id bigint PRIMARY KEY DEFAULT idmint_next('orders'), session int, batch int)" \
    -c "CREATE TABLE drill_batches (session int, batch int, PRIMARY KEY (session, batch))"
committed() { as_super -d idmint -tAc "SELECT count(*) FROM drill_batches" 2>/dev/null || echo 0; }

# The processes: each mints until told to stop, at a bounded rate.
minters=()
for m in 1 2 3 4; do
    "$IDMINT" mint -n 100000000 --ns orders --lease 60 --renew 2 --rate 20000 >"$d/minter.$m" 2>"$d/minter.$m.err" &
    minters+=($!)
done

# A batch is a transaction that records itself: run again after a lost
# connection, it inserts nothing twice.
insert_session() {
    local s=$1 b tries
    for b in $(seq 1 "$batches"); do
        tries=0
        until PGAPPNAME=drill "$BIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$HOST" -p "$PORT" -U postgres -d idmint \
            -c "WITH mark AS (INSERT INTO drill_batches VALUES ($s, $b) ON CONFLICT DO NOTHING RETURNING 1)
                INSERT INTO drill (session, batch) SELECT $s, $b FROM mark, generate_series(1, $rows)" \
            2>>"$d/session.$s.err"; do
            tries=$((tries + 1))
            if grep -q "duplicate key" "$d/session.$s.err"; then
                echo "drill: session $s: the primary key fired" >&2
                return 1
            fi
            [ "$tries" -lt 600 ] || { echo "drill: session $s: batch $b failed 600 times" >&2; return 1; }
            sleep 0.2
        done
    done
}
pids=()
for s in $(seq 1 "$sessions"); do
    insert_session "$s" &
    pids+=($!)
done

total=$((sessions * batches))
wait_for() { while [ "$(committed)" -lt "$1" ]; do sleep 0.2; done; }
wait_for $((total * 3 / 10))
echo "drill: $(committed) of $total batches: stopping the server -m immediate and starting it again"
PG_STOP_MODE=immediate IDMINT_WITNESS_DIR=$SERVER_WITNESS bash "$SRC/tests/support/pg-restart.sh" "$(dirname "$IDMINT_PG_ENV")" >/dev/null
wait_for $((total * 6 / 10))
at=$(committed)
log=$(dirname "$IDMINT_PG_ENV")/server.log
# The victim is a backend minting in one long statement, so the kill surely
# lands inside idmint_next: an inserting session spends most of its time
# starting psql between batches, and on a loaded machine a look at
# pg_stat_activity could miss every one of them. The server then ends and
# restarts every backend, the inserting sessions' among them.
PGAPPNAME=drill-victim "$BIN/psql" -X -q -h "$HOST" -p "$PORT" -U postgres -d idmint \
    -c "SELECT count(idmint_next('orders')) FROM generate_series(1, 2000000000)" >/dev/null 2>"$d/victim.err" &
victim_psql=$!
victim=
for _ in $(seq 1 300); do
    pid=$(as_super -d postgres -tAc "SELECT pid FROM pg_stat_activity WHERE application_name = 'drill-victim' AND state = 'active' LIMIT 1" || true)
    if [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null; then
        for _ in $(seq 1 100); do
            grep -q "(PID $pid) was terminated by signal 9" "$log" && victim=$pid && break
            sleep 0.1
        done
        break
    fi
    sleep 0.1
done
wait "$victim_psql" 2>/dev/null || true
[ -n "$victim" ] || { echo "drill: the minting backend could not be killed, or the server did not report it" >&2; exit 1; }
echo "drill: $at of $total batches: killed backend $victim with kill -9"

failed=0
for p in "${pids[@]}"; do wait "$p" || failed=1; done
kill -TERM "${minters[@]}" 2>/dev/null || true
wait "${minters[@]}" 2>/dev/null || true
[ "$failed" -eq 0 ] || exit 1

# A process stopped mid-line leaves its last line unfinished: drop it.
for f in "$d"/minter.?; do
    if [ -s "$f" ] && [ -n "$(tail -c1 "$f")" ]; then sed -i '$d' "$f"; fi
done
as_super -d idmint -c "\\copy (SELECT id FROM drill) TO '$d/table'"
n_table=$(wc -l <"$d/table")
n_minted=$(cat "$d"/minter.? | wc -l)
immediate=$(grep -c "received immediate shutdown request" "$log" || true)
killed=$(grep -c "(PID $victim) was terminated by signal 9" "$log" || true)
echo "drill: table rows $n_table, process IDs $n_minted; in the server log: $immediate immediate stop, $killed backend killed"
[ "$n_table" -eq $((total * rows)) ] || { echo "drill: expected $((total * rows)) rows" >&2; exit 1; }
[ "$n_minted" -gt 0 ] || { echo "drill: the processes minted nothing" >&2; cat "$d"/minter.*.err >&2; exit 1; }
[ "$immediate" -ge 1 ] && [ "$killed" -ge 1 ] || { echo "drill: the restart and the kill did not both happen" >&2; exit 1; }
dups=$(cat "$d/table" "$d"/minter.? | sort | uniq -d | wc -l)
cat "$d/table" "$d"/minter.? | "$IDMINT" verify >"$d/verify" || { cat "$d/verify" >&2; exit 1; }
cat "$d/verify"
grep -q "count=$((n_table + n_minted)) duplicates=0" "$d/verify" || { echo "drill: idmint verify found duplicates" >&2; exit 1; }
[ "$dups" -eq 0 ] || { echo "drill: sort | uniq -d found $dups" >&2; exit 1; }
echo "drill: ok"
