#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# HTTP benchmark of idmintd beside Redis INCR (issue 3), and over TLS beside
# plain HTTP (issue 16), in one run: the server pinned to one CPU, the load
# generator to another. Reports numbers and
# whether each target is met; it asserts nothing (exit 1 only on a setup
# failure). Results and method: docs/benchmarks-http.md.
set -euo pipefail

usage() {
    cat <<'EOF'
usage: bench/bench_http.sh [BUILD_DIR]

BUILD_DIR holds idmintd and idmint (default: build-hb next to this script's
parent; build it Release: cmake -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF).
Environment:
  DURATION=10        seconds per measured wrk run
  CONNECTIONS=64     connections (wrk and redis-benchmark)
  SERVER_CPU=0       CPU for idmintd and redis-server
  CLIENT_CPU=1       CPU for wrk and redis-benchmark
  REDIS_N=1000000    INCR requests redis-benchmark sends
  IDEMPOTENT=1       0: skip the idempotent batch case (count=1000 with a fresh
                     Idempotency-Key per request, one DURATION run)
  TLS=1              0: skip the HTTPS cases (a second idmintd with a throwaway
                     certificate: single IDs on keep-alive connections for one
                     DURATION run, then 3 s each of a new connection per
                     request over HTTPS and over plain HTTP)
  PERF=0             1: after the measurements, profile idmintd during one more
                     single-ID run (perf record -g) and print the top symbols
  KEEP=0             1: keep the temporary folder (logs, perf.data)
Installs wrk, redis-server, redis-tools, curl, openssl (and linux-perf with PERF=1)
with apt-get when missing.
EOF
}

case "${1:-}" in
-h | --help)
    usage
    exit 0
    ;;
esac

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$HERE")
BUILD=${1:-$ROOT/build-hb}
DURATION=${DURATION:-10}
CONNS=${CONNECTIONS:-64}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
REDIS_N=${REDIS_N:-1000000}
PERF=${PERF:-0}
KEEP=${KEEP:-0}
IDEMPOTENT=${IDEMPOTENT:-1}
TLS=${TLS:-1}
LUA=$HERE/wrk_idmint.lua
LUA_IDEMPOTENT=$HERE/wrk_idempotent.lua
CLK_TCK=$(getconf CLK_TCK)
SNOWFLAKE_PER_LEASE=4096000 # 2^12 sequence values per 1 ms unit

IDMINTD=$BUILD/idmintd
CLI=$BUILD/idmint
for exe in "$IDMINTD" "$CLI"; do
    if [ ! -x "$exe" ]; then
        echo "bench_http: $exe is missing; build targets idmintd and idmint_cli (Release)" >&2
        exit 1
    fi
done

# --- tools -------------------------------------------------------------------
missing=()
command -v wrk >/dev/null || missing+=(wrk)
command -v redis-server >/dev/null || missing+=(redis-server)
command -v redis-benchmark >/dev/null || missing+=(redis-tools)
command -v redis-cli >/dev/null || missing+=(redis-tools)
command -v curl >/dev/null || missing+=(curl)
if [ "$TLS" = 1 ] && ! command -v openssl >/dev/null; then missing+=(openssl); fi
command -v taskset >/dev/null || missing+=(util-linux)
if [ "$PERF" = 1 ] && ! command -v perf >/dev/null; then missing+=(linux-perf); fi
if [ ${#missing[@]} -gt 0 ]; then
    echo "bench_http: installing ${missing[*]}" >&2
    apt-get install -y "${missing[@]}" >/dev/null ||
        { apt-get update >/dev/null && apt-get install -y "${missing[@]}" >/dev/null; }
fi

# --- processes and cleanup ---------------------------------------------------
TMP=$(mktemp -d "${TMPDIR:-/tmp}/bench_http.XXXXXX")
IDMINTD_PID=
TLS_PID=
REDIS_PID=

stop_pid() { # PID: TERM, wait up to 5 s, then KILL; only PIDs this script started
    local pid=$1
    [ -n "$pid" ] || return 0
    kill -TERM "$pid" 2>/dev/null || return 0
    for _ in $(seq 50); do
        kill -0 "$pid" 2>/dev/null || return 0
        sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
}

cleanup() {
    stop_pid "$IDMINTD_PID"
    stop_pid "$TLS_PID"
    stop_pid "$REDIS_PID"
    wait 2>/dev/null || true
    if [ "$KEEP" = 1 ]; then echo "bench_http: kept $TMP" >&2; else rm -rf "$TMP"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() { # a port nothing on 127.0.0.1 answers on
    local p
    while :; do
        p=$((20000 + RANDOM % 40000))
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
            echo "$p"
            return
        fi
    done
}

cpu_ticks() { # utime+stime of every thread of PID, in clock ticks
    sed 's/.*) //' "/proc/$1/stat" | awk '{print $12 + $13}'
}

rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }

# smaps_rollup FIELD of PID in KiB (Pss, Pss_Anon, ...): RSS counts every shared
# library page the process touched; PSS divides them among their users.
smaps_kib() { awk -v f="$2:" '$1 == f {print $2}' "/proc/$1/smaps_rollup" 2>/dev/null || echo 0; }

thread_ticks() { # "TID TICKS RUNQUEUE_WAIT_NS" per thread of PID
    local t
    for t in /proc/"$1"/task/*; do
        echo "${t##*/} $(sed 's/.*) //' "$t/stat" | awk '{print $12 + $13}')" \
            "$(cut -d' ' -f2 "$t/schedstat" 2>/dev/null || echo 0)"
    done
}

loadavg() { cut -d' ' -f1-3 /proc/loadavg; }

# --- idmintd -----------------------------------------------------------------
DB=sqlite:$TMP/idmint.db
"$CLI" --authority "$DB" ns create rng --kind range --block 10000000 --max-block 10000000 >/dev/null
"$CLI" --authority "$DB" ns create sf --kind snowflake >/dev/null
cat >"$TMP/idmintd.conf" <<EOF
[server]
listen = 127.0.0.1:0
max_count = 10000
[authority]
url = $DB
[mint]
namespaces = default,rng,sf
# (4b) sends a fresh Idempotency-Key with every request: it measures the
# store, not the per-caller bound on new keys (batch_rate, 10 a second).
[limits]
batch_rate = 0
[log]
level = warn
file = $TMP/idmintd.log
EOF
taskset -c "$SERVER_CPU" "$IDMINTD" --config "$TMP/idmintd.conf" --port-file "$TMP/port" &
IDMINTD_PID=$!
for _ in $(seq 100); do
    [ -s "$TMP/port" ] && curl -sf "http://127.0.0.1:$(cat "$TMP/port")/readyz" >/dev/null && break
    sleep 0.1
done
if ! [ -s "$TMP/port" ]; then
    echo "bench_http: idmintd did not start; log:" >&2
    cat "$TMP/idmintd.log" >&2 || true
    exit 1
fi
HTTP_PORT=$(cat "$TMP/port")
BASE=http://127.0.0.1:$HTTP_PORT

# The same daemon over TLS, on the same CPU and store: a throwaway CA and a
# certificate for IP:127.0.0.1 (ECDSA P-256, as a modern deployment would).
if [ "$TLS" = 1 ]; then
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
        -keyout "$TMP/ca.key" -out "$TMP/ca.pem" -subj /CN=bench-ca 2>/dev/null
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$TMP/tls.key" \
        -out "$TMP/tls.csr" -subj /CN=127.0.0.1 2>/dev/null
    printf 'subjectAltName=IP:127.0.0.1\n' >"$TMP/san.cnf"
    openssl x509 -req -in "$TMP/tls.csr" -CA "$TMP/ca.pem" -CAkey "$TMP/ca.key" \
        -CAcreateserial -days 2 -extfile "$TMP/san.cnf" -out "$TMP/tls.pem" 2>/dev/null
    # Only the namespace it serves: a lease it held on sf would count in the
    # snowflake ceiling below, which the plain daemon alone mints against.
    sed -e "s|^file = .*|file = $TMP/idmintd-tls.log|" -e "s|^namespaces = .*|namespaces = default|" \
        "$TMP/idmintd.conf" >"$TMP/idmintd-tls.conf"
    taskset -c "$SERVER_CPU" "$IDMINTD" --config "$TMP/idmintd-tls.conf" \
        --port-file "$TMP/tls-port" --tls-cert "$TMP/tls.pem" --tls-key "$TMP/tls.key" &
    TLS_PID=$!
    for _ in $(seq 100); do
        [ -s "$TMP/tls-port" ] && curl -sf --cacert "$TMP/ca.pem" \
            "https://127.0.0.1:$(cat "$TMP/tls-port")/readyz" >/dev/null && break
        sleep 0.1
    done
    if ! curl -sf --cacert "$TMP/ca.pem" "https://127.0.0.1:$(cat "$TMP/tls-port" 2>/dev/null \
        || echo 1)/readyz" >/dev/null; then
        echo "bench_http: idmintd over TLS did not start; log:" >&2
        cat "$TMP/idmintd-tls.log" >&2 || true
        exit 1
    fi
    TLS_BASE=https://127.0.0.1:$(cat "$TMP/tls-port")
fi
sleep 1
RSS_START=$(rss_kib "$IDMINTD_PID")

# --- redis -------------------------------------------------------------------
REDIS_PORT=$(free_port)
taskset -c "$SERVER_CPU" redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' \
    --appendonly no --dir "$TMP" --logfile "$TMP/redis.log" &
REDIS_PID=$!
for _ in $(seq 100); do
    redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1 && break
    sleep 0.1
done

LOAD_START=$(loadavg)
echo "bench_http: idmintd pid $IDMINTD_PID on :$HTTP_PORT, redis pid $REDIS_PID on :$REDIS_PORT," \
    "server CPU $SERVER_CPU, client CPU $CLIENT_CPU, load average $LOAD_START" >&2

result_field() { # KEY LINE: the value of KEY=VALUE in LINE
    tr ' ' '\n' <<<"$2" | awk -F= -v k="$1" '$1 == k {print $2}'
}

# run_wrk SECONDS URL [HEADER]: one pinned wrk run; sets W_* from its result
# line, the server's CPU ticks over the run and wrk's own CPU seconds.
# WRK_SCRIPT overrides the Lua script (default wrk_idmint.lua); W_PID the
# server measured (default the plain idmintd).
run_wrk() {
    local secs=$1 url=$2 header=${3:-} t0 t1 line
    local IDMINTD_PID=${W_PID:-$IDMINTD_PID}
    local args=(-t1 "-c$CONNS" "-d${secs}s" --timeout 5s -s "${WRK_SCRIPT:-$LUA}")
    [ -n "$header" ] && args+=(-H "$header")
    thread_ticks "$IDMINTD_PID" >"$TMP/threads.0"
    t0=$(cpu_ticks "$IDMINTD_PID")
    {
        TIMEFORMAT='%U %S'
        time taskset -c "$CLIENT_CPU" wrk "${args[@]}" "$url" >"$TMP/wrk.out"
    } 2>"$TMP/wrk.time"
    t1=$(cpu_ticks "$IDMINTD_PID")
    thread_ticks "$IDMINTD_PID" >"$TMP/threads.1"
    line=$(grep '^WRK_RESULT' "$TMP/wrk.out") || {
        cat "$TMP/wrk.out" >&2
        exit 1
    }
    W_REQ=$(result_field requests "$line")
    W_DUR_US=$(result_field duration_us "$line")
    W_ERR=$(result_field status_errors "$line")+$(result_field socket_errors "$line")
    W_P50=$(result_field p50_us "$line")
    W_P99=$(result_field p99_us "$line")
    W_P999=$(result_field p999_us "$line")
    W_TICKS=$((t1 - t0))
    W_CLIENT_S=$(awk 'END {print $1 + $2}' "$TMP/wrk.time")
    W_RPS=$(awk -v n="$W_REQ" -v d="$W_DUR_US" 'BEGIN {printf "%.0f", n / (d / 1e6)}')
    W_CPU_US=$(awk -v t="$W_TICKS" -v h="$CLK_TCK" -v n="$W_REQ" \
        'BEGIN {printf "%.2f", n ? t / h * 1e6 / n : 0}')
    W_BUSY=$(awk -v t="$W_TICKS" -v h="$CLK_TCK" -v d="$W_DUR_US" \
        'BEGIN {printf "%.0f", t / h / (d / 1e6) * 100}')
    # The busiest thread is the event loop; the rest are the library's clock
    # ticker and lease/refill threads and the main thread.
    # Run-queue wait: time the server was ready to run but another process
    # had its CPU (the machine is shared); a share of the wall time.
    W_LOOP_CPU=$(awk -v h="$CLK_TCK" -v n="$W_REQ" -v dur="$W_DUR_US" '
        NR == FNR {t0[$1] = $2; w0[$1] = $3; next}
        {d = $2 - t0[$1]; if (d > top) top = d; all += d; wait += $3 - w0[$1]}
        END {printf "%.2f %.2f %.0f", n ? top / h * 1e6 / n : 0, n ? (all - top) / h * 1e6 / n : 0,
             wait / 1e3 / dur * 100}
    ' "$TMP/threads.0" "$TMP/threads.1")
    W_WAIT=${W_LOOP_CPU##* }
    W_LOOP_CPU=${W_LOOP_CPU% *}
    W_CLIENT_BUSY=$(awk -v c="$W_CLIENT_S" -v d="$W_DUR_US" 'BEGIN {printf "%.0f", c / (d / 1e6) * 100}')
}

# --- (1) single IDs ----------------------------------------------------------
URL_ONE="$BASE/v1/ids?count=1"
run_wrk 2 "$URL_ONE" # warm-up
run_wrk "$DURATION" "$URL_ONE"
ONE_RPS=$W_RPS ONE_P50=$W_P50 ONE_P99=$W_P99 ONE_ERR=$W_ERR
ONE_CPU=$W_CPU_US ONE_BUSY=$W_BUSY
ONE_LOOP=${W_LOOP_CPU% *} ONE_OTHER=${W_LOOP_CPU#* } ONE_WAIT=$W_WAIT ONE_CB=$W_CLIENT_BUSY

# --- (1b) single IDs over TLS --------------------------------------------------
# Right after (1), same load, against the TLS daemon; then a new connection
# per request (Connection: close) over both, so that the handshake's cost
# shows beside the keep-alive case, where it is paid once per connection.
TLS_ROWS= TLS_LINE=
if [ "$TLS" = 1 ]; then
    W_PID=$TLS_PID run_wrk 2 "$TLS_BASE/v1/ids?count=1" # warm-up
    W_PID=$TLS_PID run_wrk "$DURATION" "$TLS_BASE/v1/ids?count=1"
    TLS_RPS=$W_RPS TLS_P50=$W_P50 TLS_P99=$W_P99 TLS_ERR=$W_ERR TLS_CPU=$W_CPU_US
    TLS_BUSY=$W_BUSY TLS_WAIT=$W_WAIT TLS_CB=$W_CLIENT_BUSY
    W_PID=$TLS_PID run_wrk 3 "$TLS_BASE/v1/ids?count=1" "Connection: close"
    TLSNEW_RPS=$W_RPS TLSNEW_P50=$W_P50 TLSNEW_P99=$W_P99 TLSNEW_ERR=$W_ERR TLSNEW_CPU=$W_CPU_US
    TLSNEW_BUSY=$W_BUSY TLSNEW_WAIT=$W_WAIT TLSNEW_CB=$W_CLIENT_BUSY
    run_wrk 3 "$URL_ONE" "Connection: close"
    NEW_RPS=$W_RPS NEW_P50=$W_P50 NEW_P99=$W_P99 NEW_ERR=$W_ERR NEW_CPU=$W_CPU_US
    NEW_BUSY=$W_BUSY NEW_WAIT=$W_WAIT NEW_CB=$W_CLIENT_BUSY
    ms() { awk -v u="$1" 'BEGIN {printf "%.3f ms", u / 1000}'; }
    TLS_ROWS="| idmintd HTTPS count=1 (TLS 1.3, keep-alive) | $TLS_RPS req/s | $TLS_CPU µs | $(awk -v c="$TLS_CPU" 'BEGIN {printf "%.0f", (c > 0 ? 1e6 / c : 0)}') req/s | $TLS_BUSY % / $TLS_WAIT % | $TLS_CB % | $(ms "$TLS_P50") | $(ms "$TLS_P99") | $TLS_ERR |
| idmintd HTTPS count=1, new connection each | $TLSNEW_RPS req/s | $TLSNEW_CPU µs | - | $TLSNEW_BUSY % / $TLSNEW_WAIT % | $TLSNEW_CB % | $(ms "$TLSNEW_P50") | $(ms "$TLSNEW_P99") | $TLSNEW_ERR |
| idmintd HTTP count=1, new connection each | $NEW_RPS req/s | $NEW_CPU µs | - | $NEW_BUSY % / $NEW_WAIT % | $NEW_CB % | $(ms "$NEW_P50") | $(ms "$NEW_P99") | $NEW_ERR |"
    TLS_LINE="TLS vs plain HTTP, single IDs, same run: keep-alive $TLS_RPS vs $ONE_RPS req/s, server CPU/request $TLS_CPU vs $ONE_CPU µs; new connection each: $TLSNEW_RPS vs $NEW_RPS req/s, $TLSNEW_CPU vs $NEW_CPU µs"
fi

# --- (2) p99 at half the peak single-ID rate ----------------------------------
# Right after (1), so both see the machine in the same state.
# Each connection thinks for an exponential time with mean CONNS / target
# (wrk_idmint.lua). Two 3 s calibration runs correct the mean for the time a
# request and wrk's timer add; the measured run reports the rate it reached.
HALF=$((ONE_RPS / 2))
INTERVAL=$(awk -v c="$CONNS" -v r="$HALF" 'BEGIN {printf "%.4f", c * 1000 / r}')
for _ in 1 2; do
    WRK_INTERVAL_MS=$INTERVAL run_wrk 3 "$URL_ONE"
    INTERVAL=$(awk -v i="$INTERVAL" -v got="$W_RPS" -v want="$HALF" \
        'BEGIN {f = got / want; if (f < 0.5) f = 0.5; if (f > 2) f = 2; printf "%.4f", i * f}')
done
WRK_INTERVAL_MS=$INTERVAL run_wrk "$DURATION" "$URL_ONE"
HALF_RPS=$W_RPS HALF_P50=$W_P50 HALF_P99=$W_P99 HALF_P999=$W_P999 HALF_ERR=$W_ERR
HALF_CPU=$W_CPU_US HALF_BUSY=$W_BUSY HALF_WAIT=$W_WAIT HALF_CB=$W_CLIENT_BUSY

# --- (3) Redis INCR ----------------------------------------------------------
taskset -c "$CLIENT_CPU" redis-benchmark -h 127.0.0.1 -p "$REDIS_PORT" -t incr -c "$CONNS" \
    -n 100000 -P 1 -q >/dev/null # warm-up
thread_ticks "$REDIS_PID" >"$TMP/rthreads.0"
r0=$(cpu_ticks "$REDIS_PID")
{
    TIMEFORMAT='%U %S'
    time taskset -c "$CLIENT_CPU" redis-benchmark -h 127.0.0.1 -p "$REDIS_PORT" -t incr \
        -c "$CONNS" -n "$REDIS_N" -P 1 --csv >"$TMP/redis.out"
} 2>"$TMP/redis.time"
r1=$(cpu_ticks "$REDIS_PID")
thread_ticks "$REDIS_PID" >"$TMP/rthreads.1"
# "INCR","rps","avg_ms","min_ms","p50_ms","p95_ms","p99_ms","max_ms"
REDIS_LINE=$(grep '^"INCR"' "$TMP/redis.out" | tr -d '"')
REDIS_RPS=$(cut -d, -f2 <<<"$REDIS_LINE" | awk '{printf "%.0f", $1}')
REDIS_P50=$(cut -d, -f5 <<<"$REDIS_LINE" | awk '{printf "%.0f", $1 * 1000}')
REDIS_P99=$(cut -d, -f7 <<<"$REDIS_LINE" | awk '{printf "%.0f", $1 * 1000}')
REDIS_TICKS=$((r1 - r0))
REDIS_CPU=$(awk -v t="$REDIS_TICKS" -v h="$CLK_TCK" -v n="$REDIS_N" \
    'BEGIN {printf "%.2f", t / h * 1e6 / n}')
REDIS_BUSY=$(awk -v t="$REDIS_TICKS" -v h="$CLK_TCK" -v n="$REDIS_N" -v r="$REDIS_RPS" \
    'BEGIN {printf "%.0f", t / h / (n / r) * 100}')
REDIS_WAIT=$(awk -v n="$REDIS_N" -v r="$REDIS_RPS" '
    NR == FNR {w0[$1] = $3; next}
    {wait += $3 - w0[$1]}
    END {printf "%.0f", wait / 1e9 / (n / r) * 100}' "$TMP/rthreads.0" "$TMP/rthreads.1")
REDIS_CLIENT=$(awk 'END {print $1 + $2}' "$TMP/redis.time")
REDIS_CB=$(awk -v c="$REDIS_CLIENT" -v n="$REDIS_N" -v r="$REDIS_RPS" \
    'BEGIN {printf "%.0f", c / (n / r) * 100}')
REDIS_RSS=$(rss_kib "$REDIS_PID")

# --- (4) batches of 1000, text/plain ------------------------------------------
lines=$(curl -sf -H 'Accept: text/plain' "$BASE/v1/ids?namespace=rng&count=1000" | wc -l)
[ "$lines" = 1000 ] || {
    echo "bench_http: a count=1000 request gave $lines lines" >&2
    exit 1
}
run_wrk "$DURATION" "$BASE/v1/ids?namespace=rng&count=1000" "Accept: text/plain"
RNG_RPS=$W_RPS RNG_ERR=$W_ERR RNG_CPU=$W_CPU_US RNG_BUSY=$W_BUSY RNG_P99=$W_P99
RNG_IDS=$((W_RPS * 1000)) RNG_WAIT=$W_WAIT RNG_CB=$W_CLIENT_BUSY
run_wrk "$DURATION" "$BASE/v1/ids?namespace=sf&count=1000" "Accept: text/plain"
SF_RPS=$W_RPS SF_ERR=$W_ERR SF_CPU=$W_CPU_US SF_BUSY=$W_BUSY SF_P99=$W_P99
SF_IDS=$((W_RPS * 1000)) SF_WAIT=$W_WAIT SF_CB=$W_CLIENT_BUSY
# Leases the daemon holds on sf: one per event-loop thread's handle (one here).
SF_LEASES=$(curl -sf "$BASE/v1/namespaces/sf/workers" | grep -o '"holder":"[0-9a-f]' | wc -l)
[ "$SF_LEASES" -ge 1 ] || SF_LEASES=1
SF_CEIL=$((SF_LEASES * SNOWFLAKE_PER_LEASE))
SF_PCT=$(awk -v a="$SF_IDS" -v c="$SF_CEIL" 'BEGIN {printf "%.1f", a / c * 100}')

# --- (4b) idempotent batches of 1000, text/plain ---------------------------------
# The range case of (4) again, each request with an Idempotency-Key of its
# own (wrk_idempotent.lua): every request mints, saves its batch in the
# authority (one durable SQLite write) and answers. Right after (4), so the
# ratio compares like with like. First a check that a repeat answers the same IDs.
IDEM_ROW= IDEM_LINE=
if [ "$IDEMPOTENT" = 1 ]; then
    URL_RNG="$BASE/v1/ids?namespace=rng&count=1000"
    first=$(curl -sf -H 'Accept: text/plain' -H "Idempotency-Key: bench-check.$$" "$URL_RNG")
    again=$(curl -sf -H 'Accept: text/plain' -H "Idempotency-Key: bench-check.$$" "$URL_RNG")
    if [ "$(wc -l <<<"$first")" != 1000 ] || [ "$first" != "$again" ]; then
        echo "bench_http: a repeated Idempotency-Key did not answer the same 1000 IDs" >&2
        exit 1
    fi
    WRK_SCRIPT=$LUA_IDEMPOTENT WRK_IDMINT_LUA=$LUA WRK_KEY_PREFIX="bench.$$.$(date +%s%N)" \
        run_wrk "$DURATION" "$URL_RNG" "Accept: text/plain"
    IDEM_RPS=$W_RPS IDEM_ERR=$W_ERR IDEM_CPU=$W_CPU_US IDEM_BUSY=$W_BUSY IDEM_P50=$W_P50
    IDEM_P99=$W_P99 IDEM_IDS=$((W_RPS * 1000)) IDEM_WAIT=$W_WAIT IDEM_CB=$W_CLIENT_BUSY
    IDEM_MINTED=$(curl -sf "$BASE/metrics" |
        awk '/^idmint_idempotent_batches_total\{result="minted"\}/ {print $2}')
    IDEM_RATIO=$(awk -v a="$IDEM_RPS" -v b="$RNG_RPS" 'BEGIN {printf "%.3f", (b > 0 ? a / b : 0)}')
    IDEM_REDIS=$(awk -v a="$IDEM_RPS" -v b="$REDIS_RPS" 'BEGIN {printf "%.3f", (b > 0 ? a / b : 0)}')
    IDEM_ROW="| idmintd count=1000, range, fresh Idempotency-Key each | $IDEM_IDS IDs/s ($IDEM_RPS req/s) | $IDEM_CPU µs | - | $IDEM_BUSY % / $IDEM_WAIT % | $IDEM_CB % | $(awk -v u="$IDEM_P50" 'BEGIN {printf "%.3f ms", u / 1000}') | $(awk -v u="$IDEM_P99" 'BEGIN {printf "%.3f ms", u / 1000}') | $IDEM_ERR |"
    IDEM_LINE="idempotent batch of 1000 vs plain batch of 1000 (range, same run): $IDEM_RPS vs $RNG_RPS req/s, ratio $IDEM_RATIO; vs Redis INCR req/s: $IDEM_REDIS; batches saved by the daemon: ${IDEM_MINTED:-?}"
fi

# --- (5) idle memory -----------------------------------------------------------
sleep 3
RSS_AFTER=$(rss_kib "$IDMINTD_PID")
PSS_AFTER=$(smaps_kib "$IDMINTD_PID" Pss)
ANON_AFTER=$(smaps_kib "$IDMINTD_PID" Pss_Anon)
LOAD_END=$(loadavg)

# --- report --------------------------------------------------------------------
us_ms() { awk -v u="$1" 'BEGIN {printf "%.3f ms", u / 1000}'; }
cap() { awk -v c="$1" -v m="${2:-1}" 'BEGIN {printf "%.0f", (c > 0 ? 1e6 / c * m : 0)}'; }
mib() { awk -v k="$1" 'BEGIN {printf "%.2f MiB", k / 1024}'; }
met() { if awk "BEGIN {exit !($1)}"; then echo "met"; else echo "NOT MET"; fi; }

cat <<EOF

idmintd HTTP benchmark  $(date -u +%Y-%m-%dT%H:%M:%SZ)  $(nproc) CPUs, $(uname -r)
server on CPU $SERVER_CPU, load generator on CPU $CLIENT_CPU, $CONNS keep-alive connections, ${DURATION} s runs
load average: start $LOAD_START, end $LOAD_END

| case | rate | server CPU/request | one core's worth | server busy / waiting | client busy | p50 | p99 | errors |
|---|---|---|---|---|---|---|---|---|
| idmintd GET /v1/ids?count=1 | $ONE_RPS req/s | $ONE_CPU µs | $(cap "$ONE_CPU") req/s | $ONE_BUSY % / $ONE_WAIT % | $ONE_CB % | $(us_ms "$ONE_P50") | $(us_ms "$ONE_P99") | $ONE_ERR |
${TLS_ROWS:+$TLS_ROWS
}| Redis INCR (redis-benchmark -P 1) | $REDIS_RPS req/s | $REDIS_CPU µs | $(cap "$REDIS_CPU") req/s | $REDIS_BUSY % / $REDIS_WAIT % | $REDIS_CB % | $(us_ms "$REDIS_P50") | $(us_ms "$REDIS_P99") | - |
| idmintd count=1000, range | $RNG_IDS IDs/s ($RNG_RPS req/s) | $RNG_CPU µs | $(cap "$RNG_CPU" 1000) IDs/s | $RNG_BUSY % / $RNG_WAIT % | $RNG_CB % | - | $(us_ms "$RNG_P99") | $RNG_ERR |
| idmintd count=1000, snowflake | $SF_IDS IDs/s ($SF_RPS req/s), $SF_PCT % of $SF_CEIL | $SF_CPU µs | - (waits for the clock) | $SF_BUSY % / $SF_WAIT % | $SF_CB % | - | $(us_ms "$SF_P99") | $SF_ERR |
${IDEM_ROW:+$IDEM_ROW
}| idmintd count=1, paced at $HALF req/s | $HALF_RPS req/s | $HALF_CPU µs | - | $HALF_BUSY % / $HALF_WAIT % | $HALF_CB % | $(us_ms "$HALF_P50") | $(us_ms "$HALF_P99") (p99.9 $(us_ms "$HALF_P999")) | $HALF_ERR |

${IDEM_LINE:+$IDEM_LINE
}${TLS_LINE:+$TLS_LINE
}server CPU/request of the single-ID run by thread: event loop $ONE_LOOP µs, other threads $ONE_OTHER µs
one core's worth = 1 s / server CPU per request: the rate if the server had its core to itself
server busy = server CPU time / wall time; waiting = time its threads were runnable but queued
behind another process (schedstat); client busy = the load generator's CPU time / wall time

idle RSS: idmintd $(mib "$RSS_START") after start, $(mib "$RSS_AFTER") idle after the load (PSS $(mib "$PSS_AFTER"), of it anonymous $(mib "$ANON_AFTER")); redis-server $(mib "$REDIS_RSS") after its run
errors: non-2xx + socket errors as wrk counts them

targets (reported, not asserted)
  single-ID req/s >= Redis INCR req/s:     $ONE_RPS vs $REDIS_RPS: $(met "$ONE_RPS >= $REDIS_RPS")
  server CPU/request <= Redis CPU/INCR:    $ONE_CPU µs vs $REDIS_CPU µs: $(met "$ONE_CPU <= $REDIS_CPU")
  range batches >= 20,000,000 IDs/s:       $RNG_IDS: $(met "$RNG_IDS >= 20000000")
  snowflake batches >= 90 % of ceiling:    $SF_PCT % of $SF_CEIL: $(met "$SF_PCT >= 90")
  p99 < 1 ms at half the peak rate:        $(us_ms "$HALF_P99") at $HALF_RPS req/s: $(met "$HALF_P99 < 1000")
  idle RSS < 10 MiB:                       $(mib "$RSS_AFTER"): $(met "$RSS_AFTER < 10240 && $RSS_START < 10240")
EOF

# --- (6) optional profile --------------------------------------------------------
if [ "$PERF" = 1 ]; then
    # cpu-clock: a software event, so it works in a guest without a PMU.
    perf record -q -e cpu-clock -g -p "$IDMINTD_PID" -o "$TMP/perf.data" -- sleep "$DURATION" \
        2>"$TMP/perf.err" &
    perf_pid=$!
    sleep 0.5
    run_wrk "$((DURATION - 1))" "$URL_ONE"
    wait "$perf_pid" || true
    echo
    echo "profile of idmintd during a single-ID run (perf, cpu-clock, self time, >= 1 %):"
    perf report -i "$TMP/perf.data" --no-children --stdio --percent-limit 1 --sort dso,symbol \
        -g none 2>/dev/null | grep -v '^#' | grep -v '^$' | head -40
fi
