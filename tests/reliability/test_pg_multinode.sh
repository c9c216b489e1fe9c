#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Uniqueness on one PostgreSQL across crashes and a database outage: three
# idmintd nodes (HTTP clients mint from each) and four library processes
# (idmint mint, restarted whenever they end) mint from one snowflake and one
# range namespace while nodes and processes are killed with SIGKILL and
# PostgreSQL is stopped for a few seconds. Checks that minting goes on from
# held leases and ranges through the outage, that every failure is explicit,
# and that no ID repeats (sort | uniq -d and idmint verify).
# Usage: test_pg_multinode.sh /path/to/idmint [/path/to/idmintd]
# The test starts a PostgreSQL cluster of its own (tests/support/pg-start.sh)
# and stops it: its outage would cut every other test's sessions on a shared
# one, and their load would stretch its outage.
# Environment: IDMINT_TIMEOUT_SCALE (> 1 divides the ID target),
# IDMINT_SOURCE_DIR.
set -euo pipefail
# shellcheck source=../support/daemon.sh
. "$(dirname "$0")/../support/daemon.sh"

IDMINT=${1:?usage: test_pg_multinode.sh /path/to/idmint [/path/to/idmintd]}
IDMINTD=${2:-$(dirname "$IDMINT")/idmintd}
SRC=${IDMINT_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
SCALE=${IDMINT_TIMEOUT_SCALE:-1}
TARGET=$(awk -v s="$SCALE" 'BEGIN { t = 10000000; if (s > 1) t = int(t / s); print t }')
DEADLINE_S=$(awk -v s="$SCALE" 'BEGIN { d = 75; if (s > 1) d = int(d * s); print d }')
OUTAGE_S=4       # PostgreSQL down this long: longer than one reconnect (3 s)
NODE_LEASE_MS=10000 # nodes ride through the outage on their leases
NODE_RENEW_MS=1000
# A holder renewed at most two renewals before the stop began: it mints on
# for at least this long into the outage, however long the outage is.
LEASE_HOLDS_MS=$((NODE_LEASE_MS - 2 * NODE_RENEW_MS))
LIB_RATE=1200000 # bytes/s each library process may print (~60k IDs/s)
SNOW=mn_snow_$$
RNG=mn_rng_$$
T=$(mktemp -d)
chmod 755 "$T" # the cluster's server runs as postgres when we are root
PG_DIR=$T/pg
unset IDMINT_TOKEN IDMINT_AUTHORITY IDMINT_CONFIG IDMINT_LISTEN IDMINT_REGION
export LC_ALL=C

NODE_PID=("" "" "" "")
NODE_PORT=("" "" "" "")
LOOP_PIDS=()
OUTAGE_PID=
cleanup() {
    touch "$T/stop" 2>/dev/null || true
    local pid f
    for pid in "${LOOP_PIDS[@]}" $OUTAGE_PID; do
        # Its children first (curl, the throttle): only ours, by parent pid.
        pkill -9 -P "$pid" 2>/dev/null || true
        kill -9 "$pid" 2>/dev/null || true
    done
    # The library processes themselves (their loops are gone).
    for f in "$T"/lib.*.pid; do
        [ -e "$f" ] || continue
        pid=$(cat "$f" 2>/dev/null || true)
        if [ -n "$pid" ] && is_our_lib "$pid"; then
            kill -9 "$pid" 2>/dev/null || true
        fi
    done
    for pid in "${NODE_PID[@]}"; do
        if [ -n "$pid" ]; then
            kill -9 "$pid" 2>/dev/null || true
        fi
    done
    bash "$SRC/tests/support/pg-stop.sh" "$PG_DIR" >/dev/null 2>&1 || true
    rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 143' TERM INT

die() {
    local i
    echo "pg_multinode: FAIL: $*" >&2
    for i in 1 2 3; do
        if [ -f "$T/node$i.log" ]; then
            echo "--- node $i log (tail) ---" >&2
            tail -n 8 "$T/node$i.log" >&2
        fi
    done
    exit 1
}

now_ms() { date +%s%3N; }
log() { echo "pg_multinode: $(($(now_ms) - T0_MS)) ms: $*"; }
T0_MS=$(now_ms)

# is_our_lib PID: PID is still an idmint process minting our namespaces (a
# stale pid file must never make us kill someone else's process).
is_our_lib() {
    local cmd
    cmd=$(tr '\0' ' ' 2>/dev/null <"/proc/$1/cmdline") || return 1
    case "$cmd" in
    "$IDMINT mint "*"--ns $SNOW "* | "$IDMINT mint "*"--ns $RNG "*) return 0 ;;
    esac
    return 1
}

[ -x "$IDMINTD" ] || die "no idmintd at $IDMINTD"
bash "$SRC/tests/support/pg-start.sh" "$PG_DIR" >"$T/pg-start.log" 2>&1 ||
    die "cannot start PostgreSQL: $(tail -n 5 "$T/pg-start.log")"
PG_URL=$(head -n 1 "$PG_DIR/env")
command -v curl >/dev/null || die "curl is not installed"
PY=$(command -v python3) || die "python3 is not installed"

"$IDMINT" ns create "$SNOW" --kind snowflake --authority "$PG_URL" >/dev/null ||
    die "ns create $SNOW failed"
# Large blocks: a range client holds seconds of supply, enough to mint on
# through the outage (the client adapts its block within max-block).
"$IDMINT" ns create "$RNG" --kind range --block 200000 --max-block 2000000 \
    --authority "$PG_URL" >/dev/null || die "ns create $RNG failed"

cat >"$T/node.ini" <<EOF
[server]
threads = 2
[mint]
namespaces = $SNOW,$RNG
lease_ms = $NODE_LEASE_MS
renew_ms = $NODE_RENEW_MS
EOF

# start_node I LISTEN: start node I and wait (bounded) for its port file. A
# restart on the same port may briefly find it busy: retried, bounded.
start_node() {
    local i=$1 listen=$2

    start_listening "NODE_PID[$i]" "NODE_PORT[$i]" 20 "$T/node$i.port" "$T/node$i.log" \
        "$IDMINTD" --config "$T/node.ini" --listen "$listen" --port-file "$T/node$i.port" \
        --authority "$PG_URL" || die "node $i did not start listening on $listen"
    echo "up $i $(now_ms)" >>"$T/events"
}

NODE_KILLS=0
kill_node() {
    local i=$1
    echo "kill $i $(now_ms)" >>"$T/events"
    kill -9 "${NODE_PID[i]}"
    wait "${NODE_PID[i]}" 2>/dev/null || true
    NODE_PID[i]=
    NODE_KILLS=$((NODE_KILLS + 1))
}
restart_node() {
    local i=$1 want=${NODE_PORT[$1]}
    start_node "$i" "127.0.0.1:$want"
    [ "${NODE_PORT[i]}" = "$want" ] || die "node $i came back on port ${NODE_PORT[i]}, not $want"
}

# wait_ready I SECONDS: /readyz of node I answers 200 (its leases are held).
wait_ready() {
    local i=$1 k
    for ((k = 0; k < $2 * 10; k++)); do
        if curl -sf --max-time 2 "http://127.0.0.1:${NODE_PORT[i]}/readyz" >/dev/null 2>&1; then
            return 0
        fi
        sleep 0.1
    done
    die "node $i is not ready after $2 s: $(curl -s --max-time 2 \
        "http://127.0.0.1:${NODE_PORT[i]}/readyz" 2>&1 || true)"
}

: >"$T/events"
for i in 1 2 3; do
    start_node "$i" 127.0.0.1:0
done
for i in 1 2 3; do
    wait_ready "$i" 20
done

# The throttle keeps each library process alive for seconds (its stdout
# blocks), so leases are renewed and ranges refilled across the crashes and
# the outage, and the output stays within what one disk and sort can take.
cp "$(dirname "$0")/../support/throttle.py" "$T/throttle.py"

# Four library loops: K NS LEASE. Loop 1 has a lease longer than the outage
# and never ends by itself: it must mint on through the outage. Loop 2's
# lease is shorter than the outage: it mints on until E, then fails with a
# lease error. Loops 3 and 4 mint from the range namespace.
LIB_SPECS=("1 $SNOW 10" "2 $SNOW 3" "3 $RNG 3" "4 $RNG 3")
lib_loop() {
    local k=$1 ns=$2 lease=$3 run=0 st n
    while [ ! -e "$T/stop" ]; do
        run=$((run + 1))
        if [ "$k" -eq 1 ]; then
            n=100000000
        else
            n=$((200000 + (RANDOM * 32768 + RANDOM) % 2800000))
        fi
        echo "$T/lib.$ns.$k.$run.ids" >"$T/lib.$k.cur"
        # sh records the pid of the idmint it becomes, for the killer.
        if sh -c 'echo $$ >"$0"; exec "$@"' "$T/lib.$k.pid" \
            "$IDMINT" mint -n "$n" --ns "$ns" --authority "$PG_URL" --lease "$lease" \
            2>"$T/lib.$k.$run.err" | "$PY" "$T/throttle.py" "$LIB_RATE" \
            >"$T/lib.$ns.$k.$run.ids"; then
            st=0
        else
            st=${PIPESTATUS[0]}
        fi
        rm -f "$T/lib.$k.pid"
        echo "$(now_ms) $k $run $st" >>"$T/lib.runs"
        [ "$st" -eq 0 ] || sleep 0.2
    done
}

# HTTP loop: batches of 1000..10000 from node I; a complete 200 reply counts.
# Every other outcome is logged with its times, status, curl exit and code.
http_loop() {
    local i=$1 ns=$2 n s e code rc port
    while [ ! -e "$T/stop" ]; do
        n=$((1000 + RANDOM % 9001))
        port=$(cat "$T/port.$i")
        rm -f "$T/http.$i.$ns.tmp"
        s=$(now_ms)
        rc=0
        code=$(curl -s -o "$T/http.$i.$ns.tmp" -w '%{http_code}' --max-time 20 \
            -H 'Accept: text/plain' "http://127.0.0.1:$port/v1/ids?namespace=$ns&count=$n" \
            2>/dev/null) || rc=$?
        e=$(now_ms)
        if [ "$rc" -eq 0 ] && [ "$code" = 200 ]; then
            cat "$T/http.$i.$ns.tmp" >>"$T/http.$i.$ns.ids"
            echo "$s $e $i $ns 200 0 -" >>"$T/http.log"
        else
            echo "$s $e $i $ns ${code:-000} $rc $(sed -n 's/.*"code":"\([a-z_]*\)".*/\1/p' \
                "$T/http.$i.$ns.tmp" 2>/dev/null | head -n 1 | grep . || echo -)" >>"$T/http.log"
            sleep 0.05
        fi
    done
}

LIB_KILLS=0
# kill_lib K: SIGKILL library loop K's current idmint, if it runs.
kill_lib() {
    local pid
    pid=$(cat "$T/lib.$1.pid" 2>/dev/null || true)
    if [ -n "$pid" ] && is_our_lib "$pid" && kill -9 "$pid" 2>/dev/null; then
        echo "libkill $1 $(now_ms)" >>"$T/events"
        LIB_KILLS=$((LIB_KILLS + 1))
    fi
}

: >"$T/lib.runs"
: >"$T/http.log"
for i in 1 2 3; do
    echo "${NODE_PORT[i]}" >"$T/port.$i"
done
for spec in "${LIB_SPECS[@]}"; do
    # shellcheck disable=SC2086
    lib_loop $spec 2>>"$T/loops.err" &
    LOOP_PIDS+=($!)
done
for i in 1 2 3; do
    for ns in "$SNOW" "$RNG"; do
        http_loop "$i" "$ns" &
        LOOP_PIDS+=($!)
    done
done
START_MS=$(now_ms)
log "minting: 3 nodes (ports ${NODE_PORT[1]} ${NODE_PORT[2]} ${NODE_PORT[3]}), 4 library loops, 6 HTTP loops"

# sleep_until S: sleep until S seconds after the start, killing a random
# library process every 1.5..3 s on the way.
NEXT_LIB_KILL=$((START_MS + 2000))
sleep_until() {
    local until_ms=$((START_MS + $1 * 1000)) now
    while :; do
        now=$(now_ms)
        [ "$now" -lt "$until_ms" ] || return 0
        if [ "$now" -ge "$NEXT_LIB_KILL" ]; then
            kill_lib $((1 + RANDOM % 4))
            NEXT_LIB_KILL=$((now + 1500 + RANDOM % 1500))
        fi
        sleep 0.1
    done
}
crash_node() {
    kill_node "$1"
    sleep 0.3
    restart_node "$1"
    log "node $1 killed and restarted"
}

sleep_until 5
crash_node 1
sleep_until 9
crash_node 2
sleep_until 13
crash_node 3
sleep_until 17
for i in 1 2 3; do
    wait_ready "$i" 20
done

# The outage. No random kills from 3 s before it; loop 1 must be alive.
NEXT_LIB_KILL=$(($(now_ms) + 3600 * 1000))
sleep 3
pid1=$(cat "$T/lib.1.pid" 2>/dev/null || true)
if [ -z "$pid1" ] || ! is_our_lib "$pid1"; then
    die "library loop 1 has no running process"
fi
f1=$(cat "$T/lib.1.cur")
bash "$SRC/tests/support/pg-outage.sh" "$PG_DIR" "$OUTAGE_S" >"$T/outage" 2>&1 &
OUTAGE_PID=$!
for ((k = 0; k < 100; k++)); do
    grep -q '^down ' "$T/outage" && break
    sleep 0.05
done
DOWN_MS=$(awk '$1 == "down" { print $2 }' "$T/outage")
[ -n "$DOWN_MS" ] || die "PostgreSQL did not stop: $(cat "$T/outage")"
STOPPING_MS=$(awk '$1 == "stopping" { print $2 }' "$T/outage")
size1_down=$(stat -c %s "$f1")
log "PostgreSQL stopped for $OUTAGE_S s"

# Requests that need the database while it is down: range reservations on
# every node and fresh library processes (they must take a lease first).
probe_loop() {
    local i=0 s e code rc
    while [ ! -e "$T/outage.done" ] && [ ! -e "$T/stop" ]; do
        i=$((i % 3 + 1))
        rm -f "$T/probe.body"
        s=$(now_ms)
        rc=0
        code=$(curl -s -o "$T/probe.body" -w '%{http_code}' --max-time 20 -X POST \
            -d "{\"namespace\":\"$RNG\",\"incarnation\":\"probe$$x$s\",\"request_id\":\"r1\",\"count\":10}" \
            "http://127.0.0.1:$(cat "$T/port.$i")/internal/ranges/lease" 2>/dev/null) || rc=$?
        e=$(now_ms)
        echo "$s $e http $i ${code:-000} $rc $(sed -n 's/.*"code":"\([a-z_]*\)".*/\1/p' \
            "$T/probe.body" 2>/dev/null | head -n 1 | grep . || echo -)" >>"$T/probes"
        s=$(now_ms)
        rc=0
        timeout 30 "$IDMINT" mint -n 1 --ns "$SNOW" --authority "$PG_URL" --lease 3 \
            >/dev/null 2>"$T/probe.err" || rc=$?
        e=$(now_ms)
        echo "$s $e cli - - $rc $(head -n 1 "$T/probe.err" | tr ' ' '_')" >>"$T/probes"
        sleep 0.2
    done
}
: >"$T/probes"
probe_loop &
PROBE_PID=$!
LOOP_PIDS+=("$PROBE_PID")

# Within the outage: a library process dies (its successor cannot take a
# lease: explicit errors), and node 3 dies and restarts with no database.
sleep 0.5
kill_lib 4
sleep 0.5
kill_node 3
restart_node 3
log "node 3 killed and restarted during the outage"

wait "$OUTAGE_PID" || die "PostgreSQL did not come back: $(cat "$T/outage")"
OUTAGE_PID=
: >"$T/outage.done"
UP_MS=$(awk '$1 == "up" { print $2 }' "$T/outage")
size1_up=$(stat -c %s "$f1")
pid1_up=$(cat "$T/lib.1.pid" 2>/dev/null || true)
wait "$PROBE_PID" 2>/dev/null || true
log "PostgreSQL is back after $((UP_MS - DOWN_MS)) ms"
# A stop slowed by the machine can stretch the outage past what a 10 s
# lease covers; then losing the lease is right, and not judged here.
if [ $((UP_MS - STOPPING_MS)) -le "$LEASE_HOLDS_MS" ]; then
    [ "$pid1_up" = "$pid1" ] ||
        die "library process 1 (lease 10 s) did not survive the outage: $(cat "$T"/lib.1.*.err)"
    grown=$((size1_up - size1_down))
    # More than a pipe buffer and a stdio buffer: it really minted meanwhile.
    [ "$grown" -gt 262144 ] ||
        die "library process 1 printed only $grown bytes during the outage"
else
    log "the outage lasted $((UP_MS - STOPPING_MS)) ms from the stop, more than the" \
        "$LEASE_HOLDS_MS ms a 10 s lease surely covers: library process 1 not judged"
fi
for i in 1 2 3; do
    wait_ready "$i" 30
done
NEXT_LIB_KILL=$(($(now_ms) + 1000))

# Two nodes at once, then mint on until the target (bounded).
sleep_until $((($(now_ms) - START_MS) / 1000 + 3))
kill_node 1
kill_node 2
sleep 0.3
restart_node 1
restart_node 2
log "nodes 1 and 2 killed together and restarted"

count_ids() {
    cat "$T"/lib.*.ids "$T"/http.*.ids 2>/dev/null | wc -l
}
while :; do
    sleep_until $((($(now_ms) - START_MS) / 1000 + 2))
    total=$(count_ids)
    [ "$total" -lt "$TARGET" ] || break
    [ $(($(now_ms) - START_MS)) -lt $((DEADLINE_S * 1000)) ] ||
        die "only $total of $TARGET IDs after $DEADLINE_S s"
done
log "stopping at about $total IDs"

# Stop: the loops end after their current request; running library
# processes are killed (and counted); nodes drain on SIGTERM and exit 0.
touch "$T/stop"
RUN_KILLS=$LIB_KILLS
for k in 1 2 3 4; do
    kill_lib "$k"
done
for pid in "${LOOP_PIDS[@]}"; do
    wait "$pid" || true
done
LOOP_PIDS=()
for i in 1 2 3; do
    rc=0
    kill -TERM "${NODE_PID[i]}"
    wait "${NODE_PID[i]}" || rc=$?
    NODE_PID[i]=
    [ "$rc" -eq 0 ] || die "node $i exited $rc after SIGTERM"
done
RUN_MS=$(($(now_ms) - START_MS))

# A killed process leaves an unterminated last line: drop it.
for f in "$T"/lib.*.ids "$T"/http.*.ids; do
    [ -e "$f" ] || continue
    if [ -s "$f" ] && [ -n "$(tail -c1 "$f")" ]; then
        sed -i '$d' "$f"
    fi
done

# was_down(node, start, end): a request overlapped a kill of that node and
# its restart (+0.5 s); events are "kill I MS" and "up I MS" lines.
AWK_WAS_DOWN='
    function was_down(node, s, e,    j, kt, ut) {
        for (j = 1; j <= kn[node]; j++) {
            kt = ks[node, j]
            ut = (j + 1 <= un[node]) ? us[node, j + 1] : 9e15
            if (e >= kt - 50 && s <= ut + 500) return 1
        }
        return 0
    }'

# Outcomes of the HTTP loops. A connection-level failure (no status) is
# allowed only while that node was down; a timeout is a hang; any status
# other than 200 must be a 503 with an outage code.
held_until=$((STOPPING_MS + LEASE_HOLDS_MS))
[ "$held_until" -lt "$UP_MS" ] || held_until=$UP_MS
awk -v down="$DOWN_MS" -v up="$UP_MS" -v held="$held_until" -v snow="$SNOW" \
    -v gone=$((DOWN_MS + OUTAGE_S * 1000)) "$AWK_WAS_DOWN"'
    FNR == NR {
        if ($1 == "kill") { kn[$2]++; ks[$2, kn[$2]] = $3 }
        if ($1 == "up") { un[$2]++; us[$2, un[$2]] = $3 }
        next
    }
    {
        s = $1; e = $2; node = $3; ns = $4; code = $5; rc = $6; err = $7
        during = (e >= down && s <= up)
        if (code == 200 && rc == 0) {
            ok++
            if (s >= down && e <= gone) ok_outage++
            next
        }
        # Nodes 1 and 2 hold their worker leases (10 s) through the outage,
        # or as far into a long one as a lease renewed before it reaches.
        if (e >= down && s <= held && ns == snow && node != 3) {
            bad++; print "snowflake refused by a node holding its lease: " $0 > "/dev/stderr"; next
        }
        if (rc == 28) { bad++; print "hang: " $0 > "/dev/stderr"; next }
        if (rc != 0 || code == "000") {
            if (was_down(node, s, e)) { conn++; next }
            bad++; print "connection failure while the node was up: " $0 > "/dev/stderr"; next
        }
        if (code == 503 && (err == "unavailable" || err == "lease_lost" || err == "no_worker")) {
            explicit++
            if (during) explicit_outage++
            next
        }
        bad++; print "not an explicit error: " $0 > "/dev/stderr"
    }
    END {
        printf "ok=%d ok_outage=%d explicit=%d explicit_outage=%d conn=%d bad=%d\n",
            ok, ok_outage, explicit, explicit_outage, conn, bad
    }' "$T/events" "$T/http.log" >"$T/http.summary" 2>"$T/http.bad"
read -r _ h_ok_out h_explicit h_explicit_out _ h_bad < <(tr -c '0-9\n' ' ' <"$T/http.summary")
log "HTTP batches: $(cat "$T/http.summary")"
[ "$h_bad" -eq 0 ] || die "HTTP: $(head -n 5 "$T/http.bad")"
[ "$h_ok_out" -gt 0 ] || die "no HTTP batch succeeded while PostgreSQL was down"

# Probes that ended while the database was down must have failed
# explicitly; those overlapping its return may have succeeded.
awk -v gone=$((DOWN_MS + OUTAGE_S * 1000)) "$AWK_WAS_DOWN"'
    FNR == NR {
        if ($1 == "kill") { kn[$2]++; ks[$2, kn[$2]] = $3 }
        if ($1 == "up") { un[$2]++; us[$2, un[$2]] = $3 }
        next
    }
    $3 == "http" {
        if ($5 == 200 && $6 == 0) { ok++; if ($2 < gone) { bad++; print "http probe succeeded with no database: " $0 } }
        else if ($5 == 503 && $7 == "unavailable") { h_err++ }
        else if ($6 != 0 && $6 != 28 && was_down($4, $1, $2)) { conn++ }
        else { bad++; print "http probe: " $0 }
    }
    $3 == "cli" {
        if ($6 == 0) { ok++; if ($2 < gone) { bad++; print "cli probe succeeded with no database: " $0 } }
        else if ($6 == 1 && $7 ~ /authority_unavailable|timed_out/) { c_err++ }
        else { bad++; print "cli probe: " $0 }
    }
    END { printf "http_errors=%d cli_errors=%d ok=%d conn=%d bad=%d\n", h_err, c_err, ok, conn, bad }
' "$T/events" "$T/probes" >"$T/probes.summary"
log "outage probes: $(tail -n 1 "$T/probes.summary")"
read -r p_http p_cli _ _ p_bad < <(tail -n 1 "$T/probes.summary" | tr -c '0-9\n' ' ')
[ "$p_bad" -eq 0 ] || die "outage probes: $(head -n 5 "$T/probes.summary")"
[ "$p_http" -gt 0 ] || die "no range reservation was refused during the outage"
[ "$p_cli" -gt 0 ] || die "no library process failed to open during the outage"

# Library runs: 0 done, 137 killed by us, 1 with an explicit message.
lib_ok=$(awk '$4 == 0' "$T/lib.runs" | wc -l)
lib_killed=$(awk '$4 == 137' "$T/lib.runs" | wc -l)
lib_failed=$(awk '$4 == 1' "$T/lib.runs" | wc -l)
lib_other=$(awk '$4 != 0 && $4 != 1 && $4 != 137' "$T/lib.runs" | wc -l)
[ "$lib_other" -eq 0 ] || die "library runs ended oddly: $(awk '$4 != 0 && $4 != 1 && $4 != 137' "$T/lib.runs" | head -3)"
cat "$T"/lib.*.err 2>/dev/null | grep -v '^$' >"$T/lib.errs" || true
if grep -vE 'authority unavailable|worker lease lost or expired|timed out' "$T/lib.errs" >"$T/odd"; then
    die "library processes failed for other reasons: $(sort "$T/odd" | uniq -c | head -5)"
fi
cli_errors=$(wc -l <"$T/lib.errs")
[ "$(wc -l <"$T/lib.errs")" -ge "$lib_failed" ] || die "a library run exited 1 without a message"
log "library runs: ok=$lib_ok killed=$lib_killed failed_explicitly=$lib_failed" \
    "(messages: $(sed -E 's/.*(authority unavailable|worker lease lost or expired|timed out).*/\1/' \
        "$T/lib.errs" | sort | uniq -c | awk '{ $1 = $1 "x"; print }' | paste -sd, -))"

grand=0
grand_dups=0
for ns in "$SNOW" "$RNG"; do
    cat "$T"/lib."$ns".*.ids 2>/dev/null >"$T/all.lib" || true
    cat "$T"/http.*."$ns".ids 2>/dev/null >"$T/all.http" || true
    n_lib=$(wc -l <"$T/all.lib")
    n_http=$(wc -l <"$T/all.http")
    cat "$T/all.lib" "$T/all.http" >"$T/all"
    rm -f "$T/all.lib" "$T/all.http" "$T"/lib."$ns".*.ids "$T"/http.*."$ns".ids
    total=$(wc -l <"$T/all")
    bad=$(grep -cvE '^[1-9][0-9]{0,18}$' "$T/all" || true)
    dups=$(sort -S 30% --parallel=2 "$T/all" | uniq -d | tee "$T/dups" | wc -l)
    log "$ns: ids=$total (library $n_lib, http $n_http) duplicates=$dups"
    [ "$bad" -eq 0 ] || die "$ns: $bad lines are not IDs"
    [ "$n_lib" -gt 0 ] || die "$ns: the library processes printed no IDs"
    [ "$n_http" -gt 0 ] || die "$ns: no HTTP batch succeeded"
    [ "$dups" -eq 0 ] || die "$ns: $dups duplicate IDs, e.g. $(head -n 3 "$T/dups" | paste -sd' ' -)"
    "$IDMINT" verify <"$T/all" >"$T/verify" || die "$ns: verify failed: $(cat "$T/verify")"
    grep -q "count=$total duplicates=0" "$T/verify" || die "$ns: verify says: $(cat "$T/verify")"
    grand=$((grand + total))
    grand_dups=$((grand_dups + dups))
    rm -f "$T/all"
done
[ "$grand" -ge "$TARGET" ] || die "only $grand IDs, want $TARGET"

echo "pg_multinode: totals: ids=$grand duplicates=$grand_dups node_kills=$NODE_KILLS" \
    "process_kills=$RUN_KILLS (+$((LIB_KILLS - RUN_KILLS)) at the end) pg_restarts=1 outage_ms=$((UP_MS - DOWN_MS))" \
    "explicit_errors=$((h_explicit + p_http + p_cli + cli_errors))" \
    "(http $h_explicit of which $h_explicit_out in the outage, probes http $p_http cli $p_cli," \
    "library $cli_errors) minting_ms=$RUN_MS"
echo "pg_multinode: ok"
