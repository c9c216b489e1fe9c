#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Uniqueness on a 3-member etcd cluster across member crashes and a loss of
# quorum: three idmintd nodes (HTTP clients mint from each) and four library
# processes (idmint mint, restarted whenever they end) mint from one snowflake
# and one range namespace while the etcd leader is killed with SIGKILL twice,
# then two of the three members are stopped for seconds. Checks that minting
# goes on from held leases and ranges without quorum, that calls which need
# the authority fail with "unavailable" within the store's deadline instead of
# hanging, that everything resumes when quorum returns, that every failure is
# explicit, and that no ID repeats (sort | uniq -d and idmint verify).
# The cluster is private (tests/support/etcd-start.sh in a temp dir), so its
# members can be killed without disturbing the shared etcd fixture.
# Usage: test_etcd_multinode.sh /path/to/idmint [/path/to/idmintd]
# Environment: IDMINT_TIMEOUT_SCALE (> 1 divides the ID target),
# IDMINT_SOURCE_DIR.
set -euo pipefail
# shellcheck source=../support/daemon.sh
. "$(dirname "$0")/../support/daemon.sh"

IDMINT=${1:?usage: test_etcd_multinode.sh /path/to/idmint [/path/to/idmintd]}
IDMINTD=${2:-$(dirname "$IDMINT")/idmintd}
SRC=${IDMINT_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
SUP=$SRC/tests/support
SCALE=${IDMINT_TIMEOUT_SCALE:-1}
TARGET=$(awk -v s="$SCALE" 'BEGIN { t = 10000000; if (s > 1) t = int(t / s); print t }')
DEADLINE_S=$(awk -v s="$SCALE" 'BEGIN { d = 75; if (s > 1) d = int(d * s); print d }')
NOQ_S=8              # two members down this long: longer than a renewal
                     # (1 s) and than one store call (5 s), so whole
                     # failing calls fit inside the window
STORE_CALL_MS=5000   # the etcd store's budget for one call (docs/multi-node.md)
FAIL_LIMIT_MS=$((STORE_CALL_MS + 3000)) # a call that fails for want of quorum
                                       # ends before this (slack: a process start)
CALL_LIMIT_MS=18000  # any CLI call (at most three store calls) ends before this
NODE_LEASE_MS=20000  # nodes ride through the window on their leases: E stays
                     # > 11 s away, far outside the 2 s ready margin
LIB_RATE=1200000     # bytes/s each library process may print (~60k IDs/s)
SNOW=emn_snow_$$
RNG=emn_rng_$$
T=$(mktemp -d)
ETCD=$T/etcd
unset IDMINT_TOKEN IDMINT_AUTHORITY IDMINT_CONFIG IDMINT_LISTEN IDMINT_REGION
export LC_ALL=C

NODE_PID=("" "" "" "")
NODE_PORT=("" "" "" "")
LOOP_PIDS=()
cleanup() {
    touch "$T/stop" 2>/dev/null || true
    local pid f
    for pid in "${LOOP_PIDS[@]}"; do
        # Its children first (curl, the throttle, probes): only ours, by parent pid.
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
    # The members run in their own sessions: stopped by their pid files.
    bash "$SUP/etcd-stop.sh" "$ETCD" >/dev/null 2>&1 || true
    rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 143' TERM INT

die() {
    local i
    echo "etcd_multinode: FAIL: $*" >&2
    for i in 1 2 3; do
        if [ -f "$T/node$i.log" ]; then
            echo "--- node $i log (tail) ---" >&2
            tail -n 8 "$T/node$i.log" >&2
        fi
    done
    if [ -f "$T/events" ]; then
        echo "--- events ---" >&2
        cat "$T/events" >&2
    fi
    exit 1
}

now_ms() { date +%s%3N; }
log() { echo "etcd_multinode: $(($(now_ms) - T0_MS)) ms: $*"; }
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
command -v curl >/dev/null || die "curl is not installed"
PY=$(command -v python3) || die "python3 is not installed"

bash "$SUP/etcd-start.sh" "$ETCD" >"$T/etcd-start.log" 2>&1 ||
    die "the private etcd cluster did not start: $(tail -n 5 "$T/etcd-start.log")"
URL=$(head -n 1 "$ETCD/env")
[ -n "$URL" ] || die "etcd-start.sh wrote no URL"
log "private etcd cluster up"
member() { bash "$SUP/etcd-member.sh" "$ETCD" "$@"; }
# leader: print the member that leads, waiting up to 10 s for an election.
leader() {
    local k n
    for ((k = 0; k < 100; k++)); do
        if n=$(member leader 2>/dev/null); then
            echo "$n"
            return 0
        fi
        sleep 0.1
    done
    return 1
}

"$IDMINT" ns create "$SNOW" --kind snowflake --authority "$URL" >/dev/null ||
    die "ns create $SNOW failed"
# Blocks of a million: a range holder has seconds of supply at hand, enough
# to mint on into the window without quorum.
"$IDMINT" ns create "$RNG" --kind range --block 1000000 --max-block 2000000 \
    --authority "$URL" >/dev/null || die "ns create $RNG failed"
# Snowflake IDs carry their time: ID >> SHIFT is ms since the epoch, which
# tells exactly which IDs were minted while quorum was gone.
"$IDMINT" ns show "$SNOW" --authority "$URL" >"$T/snow.show" || die "ns show $SNOW failed"
LAYOUT=$(sed -n 's/^layout: //p' "$T/snow.show")
UNIT_MS=$(sed -n 's/^unit_ms: //p' "$T/snow.show")
EPOCH_MS=$(date -d "$(sed -n 's/^epoch: //p' "$T/snow.show")" +%s%3N)
SHIFT=$(echo "$LAYOUT" | awk -F/ '{ print $2 + $3 + $4 }')
if [ "$UNIT_MS" != 1 ] || [ -z "$SHIFT" ]; then
    die "unexpected layout '$LAYOUT' unit '$UNIT_MS'"
fi

cat >"$T/node.ini" <<EOF
[server]
threads = 2
[mint]
namespaces = $SNOW,$RNG
lease_ms = $NODE_LEASE_MS
renew_ms = 1000
EOF

# start_node I LISTEN: start node I and wait (bounded) for its port file. A
# restart on the same port may briefly find it busy: retried, bounded.
start_node() {
    local i=$1 listen=$2

    start_listening "NODE_PID[$i]" "NODE_PORT[$i]" 20 "$T/node$i.port" "$T/node$i.log" \
        "$IDMINTD" --config "$T/node.ini" --listen "$listen" --port-file "$T/node$i.port" \
        --authority "$URL" || die "node $i did not start listening on $listen"
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
# blocks), so leases are renewed and ranges refilled across the faults.
cp "$SUP/throttle.py" "$T/throttle.py"

# Four library loops: K NS LEASE. Loop 1 has a lease far longer than the
# window without quorum and never ends by itself: it must mint on through
# it. Loop 2's lease is shorter than the window: it mints on until E, then
# fails with a lease error. Loops 3 and 4 mint from the range namespace.
LIB_SPECS=("1 $SNOW 20" "2 $SNOW 3" "3 $RNG 3" "4 $RNG 3")
lib_loop() {
    local k=$1 ns=$2 lease=$3 run=0 st n s
    while [ ! -e "$T/stop" ]; do
        run=$((run + 1))
        if [ "$k" -eq 1 ]; then
            n=100000000
        else
            n=$((200000 + (RANDOM * 32768 + RANDOM) % 2800000))
        fi
        echo "$T/lib.$ns.$k.$run.ids" >"$T/lib.$k.cur"
        s=$(now_ms)
        # sh records the pid of the idmint it becomes, for the killer.
        if sh -c 'echo $$ >"$0"; exec "$@"' "$T/lib.$k.pid" \
            "$IDMINT" mint -n "$n" --ns "$ns" --authority "$URL" --lease "$lease" \
            2>"$T/lib.$k.$run.err" | "$PY" "$T/throttle.py" "$LIB_RATE" \
            >"$T/lib.$ns.$k.$run.ids"; then
            st=0
        else
            st=${PIPESTATUS[0]}
        fi
        rm -f "$T/lib.$k.pid"
        # end k run status start file
        echo "$(now_ms) $k $run $st $s $T/lib.$ns.$k.$run.ids" >>"$T/lib.runs"
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
            echo "$s $e $i $ns 200 0 - $(wc -l <"$T/http.$i.$ns.tmp")" >>"$T/http.log"
        else
            echo "$s $e $i $ns ${code:-000} $rc $(sed -n 's/.*"code":"\([a-z_]*\)".*/\1/p' \
                "$T/http.$i.$ns.tmp" 2>/dev/null | head -n 1 | grep . || echo -) 0" >>"$T/http.log"
            sleep 0.05
        fi
    done
}

# probe KIND NODE FILE: one call that needs the authority, appended to FILE
# as "start end kind node status-or-exit curl-exit first-error-word". KIND is
# show (idmint ns show), list (idmint ns list), open_snow and open_rng (a new
# library handle: idmint mint -n 1), or http (a range reservation through
# node NODE; "-" for the others).
probe() {
    local kind=$1 i=$2 out=$3 tmp=$T/probe.$1.$BASHPID s e code rc=0
    s=$(now_ms)
    case $kind in
    http)
        rm -f "$tmp"
        code=$(curl -s -o "$tmp" -w '%{http_code}' --max-time 30 -X POST \
            -d "{\"namespace\":\"$RNG\",\"incarnation\":\"probe$BASHPID.$s\",\"request_id\":\"r1\",\"count\":10}" \
            "http://127.0.0.1:$(cat "$T/port.$i")/internal/ranges/lease" 2>/dev/null) || rc=$?
        e=$(now_ms)
        echo "$s $e http $i ${code:-000} $rc $(sed -n 's/.*"code":"\([a-z_]*\)".*/\1/p' \
            "$tmp" 2>/dev/null | head -n 1 | grep . || echo -)" >>"$out"
        ;;
    *)
        case $kind in
        show) set -- ns show "$SNOW" ;;
        list) set -- ns list ;;
        open_snow) set -- mint -n 1 --ns "$SNOW" --lease 3 ;;
        open_rng) set -- mint -n 1 --ns "$RNG" ;;
        esac
        timeout 30 "$IDMINT" "$@" --authority "$URL" >/dev/null 2>"$tmp" || rc=$?
        e=$(now_ms)
        echo "$s $e $kind - $rc 0 $(head -n 1 "$tmp" | tr ' ' '_' | grep . || echo -)" >>"$out"
        ;;
    esac
    rm -f "$tmp"
}

# Authority probes the whole run long, one kind per loop (http through node
# 1, 2, 3 in turn), a second apart.
probe_loop() {
    local kind=$1 i=0
    while [ ! -e "$T/stop" ]; do
        i=$((i % 3 + 1))
        probe "$kind" "$([ "$kind" = http ] && echo "$i" || echo -)" "$T/probes"
        sleep 1
    done
}

# Readiness, every 0.5 s on every node: start end node status curl-exit reason.
ready_loop() {
    local i=$1 s e code rc
    while [ ! -e "$T/stop" ]; do
        rm -f "$T/ready.$i.body"
        s=$(now_ms)
        rc=0
        code=$(curl -s -o "$T/ready.$i.body" -w '%{http_code}' --max-time 30 \
            "http://127.0.0.1:$(cat "$T/port.$i")/readyz" 2>/dev/null) || rc=$?
        e=$(now_ms)
        echo "$s $e $i ${code:-000} $rc $(sed -n 's/.*"reason":"\([^"]*\)".*/\1/p' \
            "$T/ready.$i.body" 2>/dev/null | tr ' ' '_' | grep . || echo -)" >>"$T/ready.log"
        sleep 0.5
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
: >"$T/probes"
: >"$T/ready.log"
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
    ready_loop "$i" &
    LOOP_PIDS+=($!)
done
for kind in show list open_snow open_rng http; do
    probe_loop "$kind" 2>>"$T/loops.err" &
    LOOP_PIDS+=($!)
done
START_MS=$(now_ms)
log "minting: etcd $URL, 3 nodes (ports ${NODE_PORT[1]} ${NODE_PORT[2]} ${NODE_PORT[3]}), 4 library loops, 6 HTTP loops"

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

# kill_leader: SIGKILL the member that leads (a crash: its data stays),
# restart it a second later and wait until it is healthy and some member
# leads again.
LEADER_KILLS=0
kill_leader() {
    local n now_leader
    n=$(leader) || die "no etcd member leads before leader kill $((LEADER_KILLS + 1))"
    echo "ekill $n $(now_ms)" >>"$T/events"
    member kill "$n" >>"$T/etcd-member.log" 2>&1 || die "etcd member $n did not die"
    LEADER_KILLS=$((LEADER_KILLS + 1))
    sleep 1
    member start "$n" >>"$T/etcd-member.log" 2>&1 ||
        die "etcd member $n did not come back: $(tail -n 3 "$T/etcd-member.log")"
    echo "eup $n $(now_ms)" >>"$T/events"
    now_leader=$(leader) || die "no etcd member leads after member $n came back"
    log "etcd leader (member $n) killed and restarted; member $now_leader leads"
}

sleep_until 3
kill_leader
sleep_until 7
crash_node 1
sleep_until 10
kill_leader
sleep_until 14
for i in 1 2 3; do
    wait_ready "$i" 20
done

# No quorum. No random kills from 3 s before it; loop 1 must be alive.
NEXT_LIB_KILL=$(($(now_ms) + 3600 * 1000))
sleep_until 17
pid1=$(cat "$T/lib.1.pid" 2>/dev/null || true)
if [ -z "$pid1" ] || ! is_our_lib "$pid1"; then
    die "library loop 1 has no running process"
fi
STOP_A=$(leader) || die "no etcd member leads before the quorum loss"
STOP_B=$((STOP_A % 3 + 1))
member stop "$STOP_A" >>"$T/etcd-member.log" 2>&1 || die "etcd member $STOP_A did not stop"
member stop "$STOP_B" >>"$T/etcd-member.log" 2>&1 || die "etcd member $STOP_B did not stop"
DOWN_MS=$(now_ms)
echo "quorum_lost - $DOWN_MS" >>"$T/events"
# What each library loop is printing to now: its growth is minted meanwhile.
for k in 1 2 3 4; do
    f=$(cat "$T/lib.$k.cur")
    echo "$k $f $(stat -c %s "$f" 2>/dev/null || echo 0)" >>"$T/lib.down"
done
log "etcd members $STOP_A and $STOP_B stopped: no quorum for $NOQ_S s"
# One call of each kind begun now must fail with "unavailable" well within
# the window: its first store call's deadline ends before quorum returns.
: >"$T/wprobes"
WPROBE_PIDS=()
for spec in "show -" "list -" "open_snow -" "open_rng -" "http 1" "http 2"; do
    # shellcheck disable=SC2086
    probe $spec "$T/wprobes" 2>>"$T/loops.err" &
    WPROBE_PIDS+=($!)
    LOOP_PIDS+=($!)
done

# Within the window: a library process dies (its successor cannot open:
# explicit errors), and node 3 dies and restarts with no quorum.
sleep 0.5
kill_lib 4
sleep 0.5
kill_node 3
restart_node 3
log "node 3 killed and restarted without quorum"

while [ $(($(now_ms) - DOWN_MS)) -lt $((NOQ_S * 1000)) ]; do
    sleep 0.1
done
UP_MS=$(now_ms)
pid1_up=$(cat "$T/lib.1.pid" 2>/dev/null || true)
while read -r k f size; do
    echo "$k $f $size $(stat -c %s "$f" 2>/dev/null || echo 0)" >>"$T/lib.up"
done <"$T/lib.down"
echo "quorum_back - $UP_MS" >>"$T/events"
member start "$STOP_A" >>"$T/etcd-member.log" 2>&1 ||
    die "etcd member $STOP_A did not come back: $(tail -n 3 "$T/etcd-member.log")"
QUORUM_MS=$(now_ms)
member start "$STOP_B" >>"$T/etcd-member.log" 2>&1 ||
    die "etcd member $STOP_B did not come back: $(tail -n 3 "$T/etcd-member.log")"
HEALED_MS=$(now_ms)
echo "healed - $HEALED_MS" >>"$T/events"
# lib_bytes NS FILE: bytes the library processes printed of NS, as FILE
# ("path size" lines from snap_lib) saw it.
snap_lib() {
    local f
    for f in "$T"/lib.*.ids; do
        if [ -e "$f" ]; then
            echo "$f $(stat -c %s "$f")"
        fi
    done >"$1"
}
lib_bytes() {
    awk -v ns=".$1." 'index($1, ns) { n += $2 } END { printf "%.0f\n", n }' "$2"
}
snap_lib "$T/lib.bytes.healed"
log "quorum back $((QUORUM_MS - UP_MS)) ms after the members started; all 3 healthy after $((HEALED_MS - UP_MS)) ms"
for pid in "${WPROBE_PIDS[@]}"; do
    wait "$pid" || true
done
[ "$pid1_up" = "$pid1" ] ||
    die "library process 1 (lease 20 s) did not survive the window: $(cat "$T"/lib.1.*.err)"
for i in 1 2 3; do
    wait_ready "$i" 30
done
READY_MS=$(now_ms)
log "all nodes ready $((READY_MS - UP_MS)) ms after quorum returned"

# New handles open again, through the library and through the nodes.
for ns in "$SNOW" "$RNG"; do
    s=$(now_ms)
    "$IDMINT" mint -n 10 --ns "$ns" --authority "$URL" >"$T/after.$ns.ids" 2>"$T/after.err" ||
        die "a new handle on $ns does not open after quorum returned: $(cat "$T/after.err")"
    log "a new $ns handle opened and minted in $(($(now_ms) - s)) ms"
done
NEXT_LIB_KILL=$(($(now_ms) + 1000))
sleep_until $((($(now_ms) - START_MS) / 1000 + 2))
kill_node 1
kill_node 2
sleep 0.3
restart_node 1
restart_node 2
log "nodes 1 and 2 killed together and restarted"
for i in 1 2; do
    wait_ready "$i" 30
done

# IDs keep flowing: mint on for at least 5 s after quorum returned, and then
# until the target (bounded).
count_ids() {
    cat "$T"/lib.*.ids "$T"/http.*.ids 2>/dev/null | wc -l
}
sleep_until $(((HEALED_MS + 5000 - START_MS) / 1000 + 1))
while :; do
    total=$(count_ids)
    [ "$total" -lt "$TARGET" ] || break
    [ $(($(now_ms) - START_MS)) -lt $((DEADLINE_S * 1000)) ] ||
        die "only $total of $TARGET IDs after $DEADLINE_S s"
    sleep_until $((($(now_ms) - START_MS) / 1000 + 2))
done
log "stopping at about $total IDs"

# Stop: the loops end after their current request; running library
# processes are killed (and counted); nodes drain on SIGTERM and exit 0.
snap_lib "$T/lib.bytes.stop"
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
    }
    FNR == NR {
        if ($1 == "kill") { kn[$2]++; ks[$2, kn[$2]] = $3 }
        if ($1 == "up") { un[$2]++; us[$2, un[$2]] = $3 }
        next
    }'

# Outcomes of the HTTP loops. A connection-level failure (no status) is
# allowed only while that node was down; a timeout is a hang; any status
# other than 200 must be a 503 with an outage code. Nodes 1 and 2 hold their
# worker leases through the window: their snowflake batches must succeed.
awk -v down="$DOWN_MS" -v up="$UP_MS" -v snow="$SNOW" "$AWK_WAS_DOWN"'
    {
        s = $1; e = $2; node = $3; ns = $4; code = $5; rc = $6; err = $7; n = $8
        during = (e >= down && s <= up)
        if (code == 200 && rc == 0) {
            ok++
            if (s >= down && e <= up) { if (ns == snow) w_snow += n; else w_rng += n }
            next
        }
        if (during && ns == snow && node != 3) {
            bad++; print "snowflake refused by a node holding its lease: " $0 > "/dev/stderr"; next
        }
        if (rc == 28) { bad++; print "hang: " $0 > "/dev/stderr"; next }
        if (rc != 0 || code == "000") {
            if (was_down(node, s, e)) { conn++; next }
            bad++; print "connection failure while the node was up: " $0 > "/dev/stderr"; next
        }
        if (code == 503 && (err == "unavailable" || err == "lease_lost" || err == "no_worker")) {
            explicit++
            if (during) explicit_w++
            next
        }
        bad++; print "not an explicit error: " $0 > "/dev/stderr"
    }
    END {
        printf "ok=%d window_snow_ids=%d window_range_ids=%d explicit=%d explicit_window=%d conn=%d bad=%d\n",
            ok, w_snow, w_rng, explicit, explicit_w, conn, bad
    }' "$T/events" "$T/http.log" >"$T/http.summary" 2>"$T/http.bad"
read -r _ h_w_snow h_w_rng h_explicit h_explicit_w _ h_bad < <(tr -c '0-9\n' ' ' <"$T/http.summary")
log "HTTP batches: $(cat "$T/http.summary")"
[ "$h_bad" -eq 0 ] || die "HTTP: $(head -n 5 "$T/http.bad")"
# After quorum returned both kinds flow again through the nodes.
for ns in "$SNOW" "$RNG"; do
    n=$(awk -v ns="$ns" -v t="$HEALED_MS" '$4 == ns && $5 == 200 && $1 >= t' "$T/http.log" | wc -l)
    [ "$n" -gt 0 ] || die "no HTTP batch of $ns succeeded after quorum returned"
done

# Authority probes. Whole ones inside the window must fail with
# "unavailable"; a library call (idmint) that fails for want of quorum must
# end within the store's deadline plus slack; after quorum (and 3 s to
# settle) they must succeed; outside the window a failure must still be
# explicit (a leader election). A call through a node is bounded only by
# curl's 30 s: idmintd runs store calls on its event-loop threads, so one
# may wait behind another's (reported, not asserted: no doc bounds it).
awk -v down="$DOWN_MS" -v up="$UP_MS" -v healed="$HEALED_MS" -v flim="$FAIL_LIMIT_MS" \
    -v clim="$CALL_LIMIT_MS" "$AWK_WAS_DOWN"'
    {
        s = $1; e = $2; kind = $3; node = $4; st = $5; rc = $6; msg = $7; d = e - s
        inside = (s >= down && e <= up)
        is_http = (kind == "http")
        is_ok = is_http ? (st == 200 && rc == 0) : (st == 0)
        if (is_http)
            is_unavail = (st == 503 && msg == "unavailable")
        else
            is_unavail = (st == 1 && msg ~ /authority_unavailable/)
        is_conn = (is_http && rc != 0 && rc != 28 && was_down(node, s, e))
        if ((is_http && rc == 28) || (!is_http && (st == 124 || d > clim))) {
            bad++; print "probe hung: " $0; next
        }
        if (!is_ok && !is_conn && !is_http && s >= down && s <= up && d > flim) {
            bad++; print "probe failed after " d " ms, past the deadline: " $0; next
        }
        if (!is_ok && !is_conn) {
            if (is_http && d > longest_http) longest_http = d
            if (!is_http && d > longest_cli) { longest_cli = d; longest_kind = kind }
        }
        if (inside) {
            if (is_unavail) { w_fail[kind]++; next }
            if (is_conn) { conn++; next }
            bad++; print "probe inside the window without quorum: " $0; next
        }
        if (s >= healed + 3000) {
            if (is_ok) { after++; next }
            if (is_conn) { conn++; next }
            if (is_http && st == 503 && was_down(node, s - 5000, e)) { conn++; next }
            bad++; print "probe after quorum returned: " $0; next
        }
        if (is_ok) {
            if (s >= up && (first_ok == 0 || e < first_ok)) first_ok = e
            next
        }
        if (is_unavail || is_conn) { other++; next }
        if (!is_http && st == 1 && msg ~ /timed_out|worker_lease_lost/) { other++; next }
        bad++; print "probe failed oddly: " $0
    }
    END {
        printf "window_failures: show=%d list=%d open_snow=%d open_rng=%d http=%d\n",
            w_fail["show"], w_fail["list"], w_fail["open_snow"], w_fail["open_rng"], w_fail["http"]
        printf "longest_failure_ms=%d kind=%s http=%d\n", longest_cli,
            (longest_kind == "" ? "-" : longest_kind), longest_http
        printf "first_ok_after_up_ms=%d\n", (first_ok > 0 ? first_ok - up : -1)
        printf "after_ok=%d other_explicit=%d conn=%d bad=%d\n", after, other, conn, bad
    }' "$T/events" <(cat "$T/probes" "$T/wprobes") >"$T/probes.summary"
log "authority probes: $(grep -v '^probe' "$T/probes.summary" | paste -sd' ' -)"
if grep -q '^probe' "$T/probes.summary"; then
    die "authority probes: $(grep '^probe' "$T/probes.summary" | head -n 5)"
fi
# The calls begun as quorum went: every library one failed as unavailable
# within the deadline. A reservation through a node failed as unavailable,
# or, when it queued on the node's event loop behind store calls that each
# waited out their deadline (store calls run on the loop: issue 16), ran
# only after quorum returned and succeeded; never anything else.
[ "$(wc -l <"$T/wprobes")" -eq 6 ] || die "window probes: $(cat "$T/wprobes")"
awk -v lim="$FAIL_LIMIT_MS" -v up="$UP_MS" '{
        d = $2 - $1
        if ($3 == "http") {
            if (!($5 == 503 && $7 == "unavailable") && !($5 == 200 && $2 >= up))
                print "window probe: " $0
        } else if ($5 != 1 || $7 !~ /authority_unavailable/ || d > lim) print "window probe: " $0
    }' "$T/wprobes" >"$T/wprobes.bad"
[ ! -s "$T/wprobes.bad" ] || die "$(head -n 6 "$T/wprobes.bad")"
log "calls begun without quorum: $(awk '{ printf "%s%s=%dms", (NR > 1 ? " " : ""), $3 ($4 == "-" ? "" : $4), $2 - $1 }' \
    "$T/wprobes") ($(head -n 1 "$T/wprobes" | cut -d' ' -f7 | cut -c1-160))"
LONGEST_MS=$(sed -n 's/^longest_failure_ms=\([0-9]*\).*/\1/p' "$T/probes.summary")
LONGEST_KIND=$(sed -n 's/^longest_failure_ms=[0-9]* kind=\([a-z_-]*\).*/\1/p' "$T/probes.summary")
LONGEST_HTTP_MS=$(sed -n 's/^longest_failure_ms=.* http=//p' "$T/probes.summary")
FIRST_OK_MS=$(sed -n 's/^first_ok_after_up_ms=//p' "$T/probes.summary")
read -r p_after _ _ _ < <(grep '^after_ok' "$T/probes.summary" | tr -c '0-9\n' ' ')
[ "$p_after" -gt 0 ] || die "no authority probe ran after quorum returned"

# Readiness. Nodes 1 and 2 hold leases whose E is far away through the
# window: docs/http-api.md has /readyz 200 then, unless a range ran out
# ("no reserved range left"); without quorum the store fails with
# "unavailable" (docs/multi-node.md), never a refusal. Node 3, restarted
# without quorum, cannot open its namespaces: 503 until quorum returns.
# How long /readyz took is reported: no doc bounds it.
awk -v down="$DOWN_MS" -v up="$UP_MS" "$AWK_WAS_DOWN"'
    {
        s = $1; e = $2; node = $3; code = $4; rc = $5; reason = $6
        if (rc == 28) { bad++; print "readiness hung: " $0; next }
        if (rc != 0 || code == "000") {
            if (was_down(node, s, e)) next
            bad++; print "readiness unreachable while the node was up: " $0; next
        }
        if (code != 200 && code != 503) { bad++; print "readiness status: " $0; next }
        if (code == 503 && reason == "-") { bad++; print "not ready without a reason: " $0; next }
        if (!(e >= down && s <= up)) next
        if (e - s > slowest) slowest = e - s
        if (!(s >= down && e <= up)) next
        if (node == 3 && s >= us[3, un[3]]) {
            if (code == 200) { bad++; print "node 3 ready without quorum: " $0 } else n3++
            next
        }
        if (was_down(node, s, e)) next
        if (code == 200) { green++; next }
        if (reason ~ /no_reserved_range_left/) { norange++; next }
        bad++; print "not ready without quorum, for a reason the docs do not give: " $0
    }
    END {
        printf "window: ready=%d range_out=%d restarted_not_ready=%d slowest_ms=%d bad=%d\n",
            green, norange, n3, slowest, bad
    }' "$T/events" "$T/ready.log" >"$T/ready.summary"
log "readiness: $(tail -n 1 "$T/ready.summary")"
if grep -qv '^window' "$T/ready.summary"; then
    die "readiness: $(grep -v '^window' "$T/ready.summary" | head -n 5)"
fi
# (Node 3's answers often come only after quorum returned: its threads wait
# on the store opening its namespaces. So its count may be 0.)
read -r r_green _ _ READY_SLOWEST_MS _ < <(tail -n 1 "$T/ready.summary" | tr -c '0-9\n' ' ')
[ "$r_green" -gt 0 ] || die "nodes 1 and 2 were never ready without quorum"
# The slowest snowflake batch that nodes 1 and 2 minted from their held
# leases in the window (reported: it shows requests queued behind store calls).
SNOW_SLOWEST_MS=$(awk -v down="$DOWN_MS" -v up="$UP_MS" -v snow="$SNOW" '
    $4 == snow && $3 != 3 && $5 == 200 && $2 >= down && $1 <= up && $2 - $1 > m { m = $2 - $1 }
    END { print m + 0 }' "$T/http.log")

# Library runs: 0 done, 137 killed by us, 1 with an explicit message; a run
# that could not open failed within the deadline when it began without quorum.
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
[ "$cli_errors" -ge "$lib_failed" ] || die "a library run exited 1 without a message"
lib_open_fail=0
while read -r end k run st s _; do
    [ "$st" -eq 1 ] || continue
    grep -q 'cannot open' "$T/lib.$k.$run.err" || continue
    lib_open_fail=$((lib_open_fail + 1))
    if [ "$s" -ge "$DOWN_MS" ] && [ "$s" -le "$UP_MS" ]; then
        [ $((end - s)) -le "$FAIL_LIMIT_MS" ] ||
            die "library run $k.$run failed to open after $((end - s)) ms: $(cat "$T/lib.$k.$run.err")"
        [ $((end - s)) -le "$LONGEST_MS" ] || { LONGEST_MS=$((end - s)); LONGEST_KIND=lib_open; }
    fi
done <"$T/lib.runs"
log "library runs: ok=$lib_ok killed=$lib_killed failed_explicitly=$lib_failed (could not open: $lib_open_fail)" \
    "(messages: $(sed -E 's/.*(authority unavailable|worker lease lost or expired|timed out).*/\1/' \
        "$T/lib.errs" | sort | uniq -c | awk '{ $1 = $1 "x"; print }' | paste -sd, -))"
# The library processes minted on after quorum returned: their output grew
# by more than one process may hold unprinted (see lib_window below).
for ns in "$SNOW" "$RNG"; do
    grown=$(($(lib_bytes "$ns" "$T/lib.bytes.stop") - $(lib_bytes "$ns" "$T/lib.bytes.healed")))
    [ "$grown" -gt $((65536 * 20 + 1048576 + 131072)) ] ||
        die "the library processes printed only $grown bytes of $ns after quorum returned"
done

# Minted by the library processes while quorum was gone: what a loop printed
# meanwhile, less what it may have held minted but unprinted at the start (a
# 64 Ki-ID chunk, the CLI's 1 MiB buffer, the pipe and the throttle's read).
lib_window() { # NS: lines printed during the window beyond the slack, summed
    local ns=$1 sum=0 k f a b len slack
    while read -r k f a b; do
        case $f in *".$ns."*) ;; *) continue ;; esac
        len=$(tail -n 1 "$f" | wc -c) # the longest line: range values only grow
        [ "$len" -gt 0 ] || continue
        slack=$((65536 * len + 1048576 + 65536 + 65536))
        [ $((b - a)) -le "$slack" ] || sum=$((sum + (b - a - slack) / len))
    done <"$T/lib.up"
    echo "$sum"
}
l_w_snow=$(lib_window "$SNOW")
l_w_rng=$(lib_window "$RNG")

grand=0
grand_dups=0
for ns in "$SNOW" "$RNG"; do
    cat "$T"/lib."$ns".*.ids "$T/after.$ns.ids" 2>/dev/null >"$T/all.lib" || true
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
    if [ "$ns" = "$SNOW" ]; then
        # Exactly: the snowflake IDs whose time lies in the window, compared
        # as decimal strings (awk's numbers are doubles: too short for IDs).
        lo=$(((DOWN_MS - EPOCH_MS) << SHIFT))
        hi=$(((UP_MS - EPOCH_MS) << SHIFT))
        W_SNOW=$(awk -v lo="$lo" -v hi="$hi" '
            function lt(a, b) { return length(a) != length(b) ? length(a) < length(b) : (a "") < (b "") }
            !lt($0, lo) && lt($0, hi)' "$T/all" | wc -l)
        N_SNOW=$total
    else
        N_RNG=$total
    fi
    grand=$((grand + total))
    grand_dups=$((grand_dups + dups))
    rm -f "$T/all"
done
[ "$grand" -ge "$TARGET" ] || die "only $grand IDs, want $TARGET"
W_RNG=$((h_w_rng + l_w_rng))
log "minted without quorum: snowflake $W_SNOW (by their time; http $h_w_snow, library >= $l_w_snow)," \
    "range >= $W_RNG (http $h_w_rng, library >= $l_w_rng)"
[ "$W_SNOW" -gt 0 ] || die "no snowflake ID was minted while quorum was gone"
[ "$l_w_snow" -gt 0 ] || die "the library processes minted no snowflake ID while quorum was gone"
[ "$W_RNG" -gt 0 ] || die "no range ID was minted while quorum was gone"

echo "etcd_multinode: totals: ids=$grand (snowflake $N_SNOW, range $N_RNG) duplicates=$grand_dups" \
    "etcd_leader_kills=$LEADER_KILLS no_quorum_ms=$((UP_MS - DOWN_MS)) (members $STOP_A $STOP_B stopped)" \
    "minted_without_quorum: snowflake=$W_SNOW range>=$W_RNG" \
    "longest_failing_authority_call_ms=$LONGEST_MS ($LONGEST_KIND; through a node $LONGEST_HTTP_MS)" \
    "slowest_in_window: readyz=${READY_SLOWEST_MS}ms held_lease_batch=${SNOW_SLOWEST_MS}ms" \
    "first_authority_call_ok_after_ms=$FIRST_OK_MS nodes_ready_after_ms=$((READY_MS - UP_MS))" \
    "node_kills=$NODE_KILLS process_kills=$RUN_KILLS (+$((LIB_KILLS - RUN_KILLS)) at the end)" \
    "explicit_errors=$((h_explicit + cli_errors)) (http $h_explicit of which $h_explicit_w in the window," \
    "library $cli_errors) minting_ms=$RUN_MS"
echo "etcd_multinode: ok"
