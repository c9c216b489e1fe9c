#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Shared steps of the restore drills (tests/reliability/test_restore_*.sh,
# test_pg_restore.sh, test_etcd_restore.sh), sourced after IDMINT,
# IDMINT_AUTHORITY and scale are set and the namespaces sf (snowflake) and rg
# (range, small blocks) exist. IDMINTD, when set, is an idmintd that serves
# both namespaces from the same authority (drill_daemon). Each step fails
# the drill with fail() (defined by the caller).

# drill_start DIR: two minters of each kind at 2,000 IDs a second (renewals
# every second, a range refill every 25 ms); their pids in drill_pids. The
# snowflake lease is $drill_lease s (default 2): a drill whose restore is an
# outage first gives it room to outlast it.
drill_start() {
    local d=$1 i
    drill_pids=()
    for i in 1 2; do
        "$IDMINT" mint --ns sf -n 1000000 --rate 2000 --lease "${drill_lease:-2}" --renew 1 \
            >"$d/lost.sf.$i" \
            2>"$d/err.sf.$i" &
        drill_pids+=($!)
        # A block may wait 10 s (not the 2 s default): a store being copied or
        # restarted under the drill is slow, and the drill waits for the restore's
        # own error, not a timeout.
        "$IDMINT" mint --ns rg -n 1000000 --rate 2000 --deadline-ms 10000 >"$d/lost.rg.$i" \
            2>"$d/err.rg.$i" &
        drill_pids+=($!)
    done
    # With $drill_http and drill_daemon's idmintd: one minter of each kind
    # over http://, its lease 60 s and renewed every 30 s, so that only its
    # history check (every second, through the daemon) can stop it in time.
    if [ -n "${drill_http:-}" ] && [ -n "${daemon_port:-}" ]; then
        "$IDMINT" --authority "http://127.0.0.1:$daemon_port" mint --ns sf -n 1000000 \
            --rate 2000 --lease 60 --renew 30 >"$d/lost.sf.http" 2>"$d/err.sf.http" &
        drill_pids+=($!)
        "$IDMINT" --authority "http://127.0.0.1:$daemon_port" mint --ns rg -n 1000000 \
            --rate 2000 --deadline-ms 10000 >"$d/lost.rg.http" 2>"$d/err.rg.http" &
        drill_pids+=($!)
    fi
}

# drill_daemon DIR: an idmintd on the authority with its default 600 s lease,
# and a client that mints 50 IDs of each namespace from it every 10 ms into
# DIR/lost.{sf,rg}.daemon until DIR/stop.client exists. Sets daemon_pid,
# daemon_port and client_pid.
drill_daemon() {
    local d=$1
    # shellcheck source=daemon.sh
    . "$(dirname "${BASH_SOURCE[0]}")/daemon.sh"
    start_listening daemon_pid daemon_port 10 "$d/port" "$d/daemon.log" \
        "$IDMINTD" --listen 127.0.0.1:0 --port-file "$d/port" --authority "$IDMINT_AUTHORITY" ||
        fail "idmintd did not start: $(tail -5 "$d/daemon.log")"
    (
        while [ ! -e "$d/stop.client" ]; do
            for ns in sf rg; do
                curl -s -f -H 'Accept: text/plain' \
                    "http://127.0.0.1:$daemon_port/v1/ids?namespace=$ns&count=50" \
                    >>"$d/lost.$ns.daemon" 2>/dev/null || true
            done
            sleep 0.01
        done
    ) &
    client_pid=$!
}

# drill_since T0: seconds (one decimal) since T0 (from date +%s.%N).
drill_since() {
    awk -v t0="$1" -v t1="$(date +%s.%N)" 'BEGIN { printf "%.1f", t1 - t0 }'
}

# drill_stopped DIR WHAT [T0]: every CLI minter stops (exit 1) with the
# explicit error (a grep pattern in $drill_stop_text, by default the
# restore's), within a bounded wait; with IDMINTD, the daemon answers
# mints with 503 and turns /readyz red, then it is stopped. With T0 (the
# restore's date +%s.%N), prints how long each took (a figure for the
# report, not an assertion: the bound is the wait's).
drill_stopped() {
    local d=$1 what=$2 t0=${3:-} i rc f code took
    for i in "${!drill_pids[@]}"; do
        rc=0
        timeout $((15 * scale)) tail --pid="${drill_pids[$i]}" -f /dev/null ||
            fail "$what: minter $i did not stop"
        wait "${drill_pids[$i]}" || rc=$?
        [ "$rc" = 1 ] || fail "$what: minter $i exited $rc, not 1"
    done
    [ -z "$t0" ] || took="CLI minters stopped after $(drill_since "$t0") s"
    for f in "$d"/err.*; do
        grep -q "${drill_stop_text:-authority restored or rewound}" "$f" || fail "$what: $f: $(cat "$f")"
    done
    if [ -n "${IDMINTD:-}" ]; then
        for i in $(seq 1 $((100 * scale))); do
            code=$(curl -s -o /dev/null -w '%{http_code}' \
                "http://127.0.0.1:$daemon_port/v1/ids?namespace=sf&count=1")
            [ "$code" = 503 ] && break
            sleep 0.1
        done
        [ "$code" = 503 ] || fail "$what: the daemon still mints ($code)"
        [ -z "$t0" ] || took="$took, the daemon after $(drill_since "$t0") s"
        code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$daemon_port/readyz")
        [ "$code" = 503 ] || fail "$what: /readyz answers $code"
        touch "$d/stop.client"
        wait "$client_pid" || true
        kill "$daemon_pid" 2>/dev/null || true
        wait "$daemon_pid" 2>/dev/null || true
    fi
    [ -z "$t0" ] || echo "$what: $took"
}

# drill_refused DIR WHAT TEXT: a new minter of each namespace is refused
# (exit 1, nothing printed) with TEXT in its message, before any fence.
drill_refused() {
    local d=$1 what=$2 text=$3 ns rc
    for ns in sf rg; do
        rc=0
        "$IDMINT" mint --ns "$ns" -n 5 >"$d/refused" 2>"$d/refused.err" || rc=$?
        [ "$rc" = 1 ] && [ ! -s "$d/refused" ] ||
            fail "$what: a new $ns minter was not refused ($rc): $(cat "$d/refused.err")"
        grep -q "$text" "$d/refused.err" || fail "$what: refusal: $(cat "$d/refused.err")"
    done
    echo "$what: new minters are refused before the fence ($text)"
}

# drill_fence DIR WHAT [ARGS...]: fence above the highest range ID of the
# drill (or the store's next value, if higher), with ARGS.
drill_fence() {
    local d=$1 what=$2 max_rg next_rg
    shift 2
    max_rg=$(cat "$d"/lost.rg.* | sort -n | tail -1)
    # Handles size their blocks to their rate, so the restored store may already
    # stand above the highest ID printed: never fence below it (it would refuse).
    next_rg=$("$IDMINT" ns show rg | awk '$1 == "next:" {print $2}')
    [ "$((next_rg - 1))" -le "$max_rg" ] || max_rg=$((next_rg - 1))
    "$IDMINT" authority fence --above "rg=$max_rg" "$@" >/dev/null 2>"$d/fence.err" ||
        fail "$what: fence: $(cat "$d/fence.err")"
}

# drill_fresh DIR WHAT: after the fence, 3,000 fresh IDs of each namespace lie
# above every ID of the lost history, and no ID of the drill repeats.
drill_fresh() {
    local d=$1 what=$2 ns lost_n dups fresh_min lost_max
    for ns in sf rg; do
        "$IDMINT" mint --ns "$ns" -n 3000 >"$d/fresh.$ns" || fail "$what: fresh $ns minter"
        lost_n=$(cat "$d"/lost.$ns.* | wc -l)
        [ "$lost_n" -gt 1000 ] || fail "$what: only $lost_n $ns IDs before the restore"
        [ "$(wc -l <"$d/fresh.$ns")" = 3000 ] || fail "$what: fresh $ns minter"
        dups=$(cat "$d"/lost.$ns.* "$d/fresh.$ns" | sort | uniq -d | wc -l)
        [ "$dups" = 0 ] || fail "$what: $dups duplicate $ns IDs"
        fresh_min=$(sort -n "$d/fresh.$ns" | sed -n 1p)
        lost_max=$(cat "$d"/lost.$ns.* | sort -n | tail -1)
        [ "$fresh_min" -gt "$lost_max" ] ||
            fail "$what: fresh $ns ID $fresh_min <= $lost_max of the lost history"
        echo "$what: $ns: $lost_n IDs before and across the restore (every process), 3000 after the fence, 0 duplicates"
    done
}
