#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Uniqueness across daemon crashes: library processes (idmint mint through
# http://, short leases, restarted whenever they end or fail) and HTTP
# clients (GET /v1/ids) mint from one snowflake and one range namespace
# while idmintd is killed with SIGKILL and restarted on the same port, twice.
# Every ID printed or returned with a 200 is checked for duplicates with
# sort | uniq -d and with idmint verify.
# Usage: test_http_restarts.sh /path/to/idmint [/path/to/idmintd]
set -euo pipefail
# shellcheck source=../support/daemon.sh
. "$(dirname "$0")/../support/daemon.sh"

IDMINT=${1:?usage: test_http_restarts.sh /path/to/idmint [/path/to/idmintd]}
IDMINTD=${2:-$(dirname "$IDMINT")/idmintd}
RUN_S=${IDMINT_HTTP_RESTARTS_RUN_S:-36} # total minting time
LIBS=4                                  # library loops per namespace
CLIENTS=4                               # HTTP client loops per namespace
LIB_RATE=200000                         # bytes/s each library process may print
T=$(mktemp -d)
unset IDMINT_TOKEN IDMINT_AUTHORITY
DAEMON_PID=
LOOP_PIDS=()
cleanup() {
    touch "$T/stop" 2>/dev/null || true
    for pid in "${LOOP_PIDS[@]}"; do
        kill -9 "$pid" 2>/dev/null || true
    done
    if [ -n "$DAEMON_PID" ]; then
        kill -9 "$DAEMON_PID" 2>/dev/null || true
    fi
    rm -rf "$T"
}
trap cleanup EXIT

die() {
    echo "http_restarts: FAIL: $*" >&2
    if [ -f "$T/daemon.log" ]; then
        echo "--- daemon log (tail) ---" >&2
        tail -n 20 "$T/daemon.log" >&2
    fi
    exit 1
}

[ -x "$IDMINTD" ] || die "no idmintd at $IDMINTD"
command -v curl >/dev/null || die "curl is not installed"

# start_daemon LISTEN: start idmintd and wait (bounded) for its port file.
# A restart on the same port may briefly find it busy: retried, bounded.
PORT=
start_daemon() {
    local listen=$1

    start_listening DAEMON_PID PORT 20 "$T/port" "$T/daemon.log" \
        "$IDMINTD" --listen "$listen" --port-file "$T/port" --authority "sqlite:$T/idmint.db" ||
        die "idmintd did not start listening on $listen"
}

# A fixed port for the whole run: the first start picks a free one.
start_daemon 127.0.0.1:0
URL="http://127.0.0.1:$PORT"
"$IDMINT" ns create snow --kind snowflake --authority "$URL" >/dev/null ||
    die "ns create snow failed"
"$IDMINT" ns create rng --kind range --block 2000 --authority "$URL" >/dev/null ||
    die "ns create rng failed"

# The throttle keeps each library process alive for seconds (its stdout
# blocks), so leases are renewed and ranges refilled across the crashes.
cp "$(dirname "$0")/../support/throttle.py" "$T/throttle.py"

# lib_loop NS K: run `idmint mint` until told to stop; one file per run.
lib_loop() {
    local ns=$1 k=$2 run=0 st
    while [ ! -e "$T/stop" ]; do
        run=$((run + 1))
        # PIPESTATUS must be read before anything else runs: `|| true` would
        # reset it and count every run as ok.
        if "$IDMINT" mint -n 100000 --ns "$ns" --authority "$URL" --lease 2 \
            2>>"$T/lib.$ns.$k.err" | python3 "$T/throttle.py" "$LIB_RATE" \
            >"$T/lib.$ns.$k.$run.ids"; then
            st=0
        else
            st=${PIPESTATUS[0]}
        fi
        if [ "$st" -eq 0 ]; then
            echo ok >>"$T/lib.runs"
        else
            echo fail >>"$T/lib.runs"
            sleep 0.1
        fi
    done
}

# http_loop NS K: batches of 1000 from the daemon's own handle; only complete
# 200 replies count (-f fails on >= 400, and a cut transfer is an error).
http_loop() {
    local ns=$1 k=$2
    while [ ! -e "$T/stop" ]; do
        if curl -sf --max-time 5 -H 'Accept: text/plain' \
            "$URL/v1/ids?namespace=$ns&count=1000" >"$T/http.$ns.$k.tmp" 2>/dev/null; then
            cat "$T/http.$ns.$k.tmp" >>"$T/http.$ns.$k.ids"
            echo ok >>"$T/http.runs"
        else
            echo fail >>"$T/http.runs"
        fi
        sleep 0.1
    done
}

: >"$T/lib.runs"
: >"$T/http.runs"
for ns in snow rng; do
    for ((k = 1; k <= LIBS; k++)); do
        lib_loop "$ns" "$k" &
        LOOP_PIDS+=($!)
    done
    for ((k = 1; k <= CLIENTS; k++)); do
        http_loop "$ns" "$k" &
        LOOP_PIDS+=($!)
    done
done

# Two crashes, a third and two thirds into the run, each followed by a
# restart on the same port after a short outage.
third=$((RUN_S / 3))
for crash in 1 2; do
    sleep "$third"
    kill -9 "$DAEMON_PID"
    wait "$DAEMON_PID" 2>/dev/null || true
    sleep 0.5
    start_daemon "127.0.0.1:$PORT"
    [ "$PORT" = "${URL##*:}" ] || die "restart $crash listened on port $PORT, not ${URL##*:}"
    echo "http_restarts: daemon killed and restarted ($crash)"
done
sleep "$third"

# Stop: running library processes finish their current run (bounded by
# their size and rate), then the daemon drains on SIGTERM.
touch "$T/stop"
for pid in "${LOOP_PIDS[@]}"; do
    wait "$pid" || true
done
LOOP_PIDS=()
rc=0
kill -TERM "$DAEMON_PID"
wait "$DAEMON_PID" || rc=$?
DAEMON_PID=
[ "$rc" -eq 0 ] || die "idmintd exited $rc after SIGTERM"

# A process that died mid-line leaves an unterminated last line: drop it.
for f in "$T"/lib.*.ids "$T"/http.*.ids; do
    [ -e "$f" ] || continue
    if [ -s "$f" ] && [ -n "$(tail -c1 "$f")" ]; then
        sed -i '$d' "$f"
    fi
done

lib_ok=$(grep -c '^ok' "$T/lib.runs" || true)
lib_fail=$(grep -c '^fail' "$T/lib.runs" || true)
http_ok=$(grep -c '^ok' "$T/http.runs" || true)
http_fail=$(grep -c '^fail' "$T/http.runs" || true)
echo "http_restarts: library runs ok=$lib_ok failed=$lib_fail;" \
    "http batches ok=$http_ok failed=$http_fail"
for ns in snow rng; do
    cat "$T"/lib."$ns".*.ids 2>/dev/null >"$T/all.$ns.lib" || true
    cat "$T"/http."$ns".*.ids 2>/dev/null >"$T/all.$ns.http" || true
    n_lib=$(wc -l <"$T/all.$ns.lib")
    n_http=$(wc -l <"$T/all.$ns.http")
    cat "$T/all.$ns.lib" "$T/all.$ns.http" >"$T/all.$ns"
    total=$(wc -l <"$T/all.$ns")
    bad=$(grep -cvE '^[1-9][0-9]*$' "$T/all.$ns" || true)
    dups=$(sort "$T/all.$ns" | uniq -d | wc -l)
    echo "http_restarts: $ns: ids=$total (library $n_lib, http $n_http) duplicates=$dups"
    [ "$bad" -eq 0 ] || die "$ns: $bad lines are not IDs"
    [ "$n_lib" -gt 0 ] || die "$ns: the library processes printed no IDs"
    [ "$n_http" -gt 0 ] || die "$ns: no HTTP batch succeeded"
    [ "$dups" -eq 0 ] || die "$ns: $dups duplicate IDs: $(sort "$T/all.$ns" | uniq -d | head -3)"
    "$IDMINT" verify <"$T/all.$ns" >"$T/verify" || die "$ns: verify failed: $(cat "$T/verify")"
    grep -q "count=$total duplicates=0" "$T/verify" ||
        die "$ns: verify says: $(cat "$T/verify")"
done
# Failures are expected around the crashes; anything but the outage codes is a bug.
if cat "$T"/lib.*.err 2>/dev/null | grep -v -e '^$' |
    grep -vE 'authority unavailable|worker lease lost|timed out' >"$T/odd"; then
    die "library processes failed for other reasons: $(sort "$T/odd" | uniq -c | head -5)"
fi
[ "$lib_ok" -gt 0 ] || die "no library run completed"
echo "http_restarts: ok"
