#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Durability of range reservations (issue 5): clients POST
# /internal/ranges/lease in tight loops while the store's process is killed
# with SIGKILL at random moments and restarted; no later reservation may
# overlap a range that was acknowledged with a 200. Checked with sort and awk
# only (no idmint code). sqlite: the store is idmintd itself. postgres (when
# $IDMINT_PG_ENV names the env file of tests/support/pg-start.sh): the
# postmaster and its backends are killed and the cluster started again.
# Usage: durability.sh [--store sqlite|postgres|all] [--kills N] IDMINT [IDMINTD]
# (DURABILITY_PG_KILLS overrides --kills for PostgreSQL: a restart takes seconds.)
set -uo pipefail
# shellcheck source=../support/daemon.sh
. "$(dirname "$0")/../support/daemon.sh"

usage() {
    echo "usage: durability.sh [--store sqlite|postgres|all] [--kills N]" \
        "/path/to/idmint [/path/to/idmintd]" >&2
    exit 2
}
STORE=all
KILLS=${DURABILITY_KILLS:-20}
while [ $# -gt 0 ]; do
    case $1 in
    --store) STORE=${2:?}; shift 2 ;;
    --kills) KILLS=${2:?}; shift 2 ;;
    -h | --help | --*) usage ;;
    *) break ;;
    esac
done
IDMINT=${1:-}
[ -n "$IDMINT" ] || usage
IDMINT=$(realpath "$IDMINT")
IDMINTD=$(realpath "${2:-$(dirname "$IDMINT")/idmintd}")
CLIENTS=3
COUNT=100
T=$(mktemp -d "${TMPDIR:-/tmp}/idmint-durability.XXXXXX")
unset IDMINT_TOKEN IDMINT_AUTHORITY
DAEMON_PID=
CLIENT_PIDS=()
SUPPORT=$(cd "$(dirname "$0")/../support" && pwd)

cleanup() {
    touch "$T/stop" 2>/dev/null
    local pid
    for pid in "${CLIENT_PIDS[@]}"; do
        kill -9 "$pid" 2>/dev/null
    done
    [ -n "$DAEMON_PID" ] && kill -9 "$DAEMON_PID" 2>/dev/null
    wait 2>/dev/null
    if [ -n "${DURABILITY_KEEP:-}" ]; then echo "durability: kept $T" >&2; else rm -rf "$T"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
die() {
    echo "durability: FAIL: $*" >&2
    [ -f "$T/daemon.log" ] && tail -n 15 "$T/daemon.log" >&2
    DURABILITY_KEEP=${DURABILITY_KEEP:-1}
    exit 1
}
rnd() { echo $((($1) + RANDOM % (($2) - ($1) + 1))); }

[ -x "$IDMINTD" ] || die "no idmintd at $IDMINTD"
command -v curl >/dev/null || die "curl is not installed"

PORT=
# start_daemon LISTEN AUTHORITY: start idmintd, wait (bounded) for its port file.
start_daemon() {
    local listen=$1 auth=$2

    start_listening DAEMON_PID PORT 40 "$T/port" "$T/daemon.log" \
        "$IDMINTD" --listen "$listen" --port-file "$T/port" --authority "$auth" ||
        die "idmintd did not start listening on $listen ($auth)"
}

# client K NS URL: reserve COUNT in a tight loop; a failed request is retried
# with the same request id (a lost reply), up to 3 times, then abandoned.
# Each 200 is logged as "start end".
client() {
    local k=$1 ns=$2 url=$3 inc req=0 code body s e
    inc="dur-$k-$$-$RANDOM$RANDOM"
    while [ ! -e "$T/stop" ]; do
        req=$((req + 1))
        for _ in 1 2 3; do
            code=$(curl -s --max-time 5 -o "$T/body.$k" -w '%{http_code}' \
                -H 'Content-Type: application/json' \
                -d "{\"namespace\":\"$ns\",\"incarnation\":\"$inc\",\"request_id\":\"r$req\",\"count\":$COUNT}" \
                "$url/internal/ranges/lease" 2>/dev/null)
            if [ "$code" = 200 ]; then
                body=$(cat "$T/body.$k")
                s=$(printf '%s' "$body" | grep -o '"start":"[0-9]*"' | tr -dc 0-9)
                e=$(printf '%s' "$body" | grep -o '"end":"[0-9]*"' | tr -dc 0-9)
                if [ -z "$s" ] || [ -z "$e" ]; then
                    echo "bad 200 body: $body" >>"$T/bad"
                else
                    echo "$s $e $k $inc r$req" >>"$T/acked.$ns.$k"
                fi
                break
            fi
            echo "$code" >>"$T/failed.$k"
            [ -e "$T/stop" ] && break
            sleep 0.05
        done
    done
}

# check NS: every acknowledged range is [s, s+COUNT) and starts at or after
# the end of the one before it (sorted by start); plain sort and awk.
check() {
    local ns=$1
    cat "$T"/acked."$ns".* 2>/dev/null | sort -n -k1,1 >"$T/sorted.$ns"
    local n
    n=$(wc -l <"$T/sorted.$ns")
    [ "$n" -gt 0 ] || die "$ns: no reservation was acknowledged"
    awk -v c="$COUNT" '
        $2 - $1 != c { printf "range %s %s has %d values, not %d\n", $1, $2, $2 - $1, c; bad++ }
        NR > 1 && $1 < pe { printf "overlap: [%s,%s) (%s %s) after [%s,%s) (%s)\n", $1, $2, $4, $5, ps, pe, pw; bad++ }
        { if ($2 > pe || NR == 1) { ps = $1; pe = $2; pw = $4 " " $5 } }
        END { exit bad > 0 }' "$T/sorted.$ns" >"$T/overlaps.$ns" ||
        die "$ns: acknowledged ranges overlap: $(head -5 "$T/overlaps.$ns")"
    echo "$n"
}

# run_phase NAME NS AUTHORITY KILLER: clients against idmintd while KILLER
# (a function) crashes the store KILLS times at random moments.
run_phase() {
    local name=$1 ns=$2 auth=$3 killer=$4 k i fails
    rm -f "$T/stop"
    start_daemon 127.0.0.1:0 "$auth"
    local url="http://127.0.0.1:$PORT"
    curl -sf -o /dev/null -H 'Content-Type: application/json' \
        -d "{\"name\":\"$ns\",\"kind\":\"range\",\"block\":$COUNT,\"max_block\":1000}" \
        "$url/v1/namespaces" || die "$name: cannot create namespace $ns"
    CLIENT_PIDS=()
    for ((k = 1; k <= CLIENTS; k++)); do
        client "$k" "$ns" "$url" &
        CLIENT_PIDS+=($!)
    done
    for ((i = 1; i <= KILLS; i++)); do
        sleep "0.$(rnd 15 70)"
        "$killer" "$url" || die "$name: crash and restart $i failed"
    done
    sleep 0.5
    touch "$T/stop"
    for k in "${CLIENT_PIDS[@]}"; do
        wait "$k" 2>/dev/null
    done
    CLIENT_PIDS=()
    kill -TERM "$DAEMON_PID" 2>/dev/null
    wait "$DAEMON_PID" 2>/dev/null
    DAEMON_PID=
    [ -s "$T/bad" ] && die "$name: $(head -3 "$T/bad")"
    local n
    n=$(check "$ns") || exit 1
    fails=$(cat "$T"/failed.* 2>/dev/null | wc -l)
    rm -f "$T"/failed.*
    echo "durability: $name: kills=$KILLS acknowledged=$n failed_requests=$fails overlaps=0"
}

# SQLite: the store lives in idmintd; kill -9 it and start it on the same port.
kill_daemon() {
    kill -9 "$DAEMON_PID" 2>/dev/null || return 1
    wait "$DAEMON_PID" 2>/dev/null
    sleep "0.$(rnd 0 3)"
    start_daemon "127.0.0.1:$PORT" "sqlite:$T/idmint.db"
}

# PostgreSQL: kill -9 the postmaster and every backend, then start the cluster.
PGDIR=
kill_postgres() {
    bash "$SUPPORT/pg-crash.sh" "$PGDIR" "0.$(rnd 0 3)" 2>>"$T/pg.log" || {
        echo "durability: $(tail -n 6 "$T/pg.log")" >&2
        return 1
    }
}

ran=0
if [ "$STORE" = sqlite ] || [ "$STORE" = all ]; then
    run_phase sqlite dur "sqlite:$T/idmint.db" kill_daemon
    # The store's own counter is past every acknowledged end (sqlite3, not idmint).
    nv=$(sqlite3 "$T/idmint.db" "SELECT next_value FROM namespaces WHERE name = 'dur'")
    maxend=$(awk '$2 > m { m = $2 } END { print m }' "$T/sorted.dur")
    [ "$nv" -ge "$maxend" ] || die "sqlite: next_value $nv is behind acknowledged end $maxend"
    ran=1
fi
if [ "$STORE" = postgres ] || [ "$STORE" = all ]; then
    if [ -n "${IDMINT_PG_ENV:-}" ] && [ -s "$IDMINT_PG_ENV" ]; then
        PGDIR=$(cd "$(dirname "$IDMINT_PG_ENV")" && pwd)
        read -r pgurl <"$IDMINT_PG_ENV"
        ns=dur$(date +%s)$$ # the cluster is shared with other tests
        KILLS=${DURABILITY_PG_KILLS:-$KILLS}
        run_phase postgres "$ns" "$pgurl" kill_postgres
        # The store's own counter is past every acknowledged end (psql, not idmint).
        pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
        nv=$("$pgbin/psql" -X -qtA "$pgurl" -c "SELECT next_value FROM namespaces WHERE name = '$ns'")
        maxend=$(awk '$2 > m { m = $2 } END { print m }' "$T/sorted.$ns")
        [ -n "$nv" ] && [ "$nv" -ge "$maxend" ] ||
            die "postgres: next_value '$nv' is behind acknowledged end $maxend"
        ran=1
    elif [ "$STORE" = postgres ]; then
        die "postgres: set IDMINT_PG_ENV to the env file of tests/support/pg-start.sh"
    else
        echo "durability: postgres: skipped (IDMINT_PG_ENV is not set)"
    fi
fi
[ "$ran" -eq 1 ] || die "nothing ran"
echo "durability: ok"
