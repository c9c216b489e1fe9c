#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A standing fault campaign (issue 5): minting processes on snowflake and range
# namespaces, straight on SQLite and through idmintd (http:// and GET /v1/ids),
# under kill -9, SIGSTOP/SIGCONT, authority outages shorter and longer than the
# lease, wall-clock steps (libfaketime) and writers killed inside a SQLite
# transaction. Every ID printed or returned is checked with sort | uniq -d
# (no idmint code) and with idmint verify. Exit 1 on a duplicate or on a
# failure that is not an explicit error (a crash, a hang past a bound).
# Usage: campaign.sh [--budget S] [--target-ids N] [--rate BYTES] [--minter PATH]
#                    IDMINT [IDMINTD]
# --minter: the C driver tests/campaign/minter.c (threads on one handle, fork
# probes); without it every library process is `idmint mint`. With
# $IDMINT_PG_ENV (the env file of tests/support/pg-start.sh) PostgreSQL namespaces
# are minted too and that cluster is killed -9 and restarted: give it a private one.
set -uo pipefail
# shellcheck source=../support/daemon.sh
. "$(dirname "$0")/../support/daemon.sh"

usage() {
    echo "usage: campaign.sh [--budget SECONDS] [--target-ids N] [--rate BYTES_PER_S]" \
        "[--minter PATH] /path/to/idmint [/path/to/idmintd]" >&2
    exit 2
}
BUDGET=60
TARGET=0
RATE=150000 # bytes/s each library minter may print (about 19 bytes an ID)
MINTER=${IDMINT_CAMPAIGN_MINTER:-}
while [ $# -gt 0 ]; do
    case $1 in
    --budget) BUDGET=${2:?}; shift 2 ;;
    --target-ids) TARGET=${2:?}; shift 2 ;;
    --rate) RATE=${2:?}; shift 2 ;;
    --minter) MINTER=$(realpath "${2:?}"); shift 2 ;;
    -h | --help) usage ;;
    --*) usage ;;
    *) break ;;
    esac
done
IDMINT=${1:-}
[ -n "$IDMINT" ] || usage
IDMINT=$(realpath "$IDMINT")
IDMINTD=$(realpath "${2:-$(dirname "$IDMINT")/idmintd}")
[[ $BUDGET =~ ^[0-9]+$ && $TARGET =~ ^[0-9]+$ && $RATE =~ ^[0-9]+$ ]] || usage

SUPPORT=${IDMINT_SOURCE_DIR:-$(dirname "$0")/../..}/tests/support
FT_LIB=${IDMINT_FAKETIME_LIB:-/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1}
# A sanitizer build refuses a preloaded library ahead of its runtime.
FT_ASAN=ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0
LEASE_S=3           # worker lease of every minter and of the daemon's handles
SHORT_OUT_MS=1200   # an outage shorter than the lease ...
LONG_OUT_MS=6000    # ... and one longer (the lease expires inside it)
NMAX=$((RATE * 15 / 19)) # a library run prints for at most ~15 s
HANG_S=$((60 + 2 * 15 + 2 * LONG_OUT_MS / 1000)) # a minter alive longer has hung
LIBS_PER_NS=3       # straight on SQLite, per namespace
HTTP_PER_NS=1       # idmint mint --authority http://, per namespace
T=$(mktemp -d "${TMPDIR:-/tmp}/idmint-campaign.XXXXXX")
unset IDMINT_TOKEN IDMINT_AUTHORITY FAKETIME LD_PRELOAD
DB=$T/idmint.db
AUTH=sqlite:$DB
mkdir -p "$T/run" "$T/ids" "$T/pid"
# Our messages go to fd 3; the shell's own job notices ("Killed") to a file.
exec 3>&2 2>>"$T/shell.err"
DAEMON_PID=
BG_PIDS=()

# Let a PostgreSQL restart in flight finish (up to 60 s): the cluster outlives
# the campaign. Returns 1 when it is still running after that.
wait_pg_restart() {
    local pid _
    [ -f "$T/pid/pgcrash" ] || return 0
    pid=$(cat "$T/pid/pgcrash")
    rm -f "$T/pid/pgcrash"
    for _ in $(seq 1 600); do
        kill -0 "$pid" 2>/dev/null || return 0
        sleep 0.1
    done
    return 1
}

cleanup() {
    touch "$T/stop" 2>/dev/null
    local f pid
    wait_pg_restart || true
    # Minters and helpers first (they may be stopped: SIGKILL still works).
    for f in "$T"/pid/*; do
        [ -e "$f" ] || continue
        read -r pid _ <"$f" 2>/dev/null || continue
        [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
    done
    for pid in "${BG_PIDS[@]}"; do
        kill -9 "$pid" 2>/dev/null
    done
    [ -n "$DAEMON_PID" ] && kill -9 "$DAEMON_PID" 2>/dev/null
    wait 2>/dev/null
    if [ -n "${CAMPAIGN_KEEP:-}" ]; then
        echo "campaign: kept $T" >&3
    else
        rm -rf "$T"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

die() {
    echo "campaign: FAIL: $*" >&3
    exit 1
}
count() { # count NAME: bump a counter file (one writer per name: the scheduler)
    local n=0
    [ -f "$T/c.$1" ] && n=$(cat "$T/c.$1")
    echo $((n + 1)) >"$T/c.$1"
}
getc() { if [ -f "$T/c.$1" ]; then cat "$T/c.$1"; else echo 0; fi; }
now_ms() { date +%s%3N; }
rnd() { echo $((($1) + RANDOM % (($2) - ($1) + 1))); } # rnd LO HI
sleep_ms() { sleep "$(printf '%d.%03d' $(($1 / 1000)) $(($1 % 1000)))"; }

[ -x "$IDMINT" ] || die "no idmint at $IDMINT"
[ -x "$IDMINTD" ] || die "no idmintd at $IDMINTD"
[ -z "$MINTER" ] || [ -x "$MINTER" ] || die "no minter at $MINTER"
[ -r "$FT_LIB" ] || die "libfaketime not found at $FT_LIB (Debian package faketime)"
for tool in curl sqlite3 python3; do
    command -v "$tool" >/dev/null || die "$tool is not installed"
done

# ---- the daemon: authority for http:// minters, minter for GET /v1/ids ----
cat >"$T/idmintd.ini" <<EOF
[mint]
lease_ms = $((LEASE_S * 1000))
renew_ms = 500
EOF
PORT=
# start_daemon LISTEN [FAKETIME]: start idmintd, wait (bounded) for its port file.
start_daemon() {
    local listen=$1 ft=${2:-}
    local -a cmd=("$IDMINTD" --config "$T/idmintd.ini" --listen "$listen" --port-file "$T/port"
        --authority "$AUTH")

    if [ -n "$ft" ]; then
        cmd=(env "$FT_ASAN" LD_PRELOAD="$FT_LIB" FAKETIME="$ft" "${cmd[@]}")
    fi
    start_listening DAEMON_PID PORT 20 "$T/port" "$T/daemon.log" "${cmd[@]}" ||
        die "idmintd did not start listening on $listen"
    echo "$DAEMON_PID" >"$T/daemon.pid"
}
start_daemon 127.0.0.1:0
URL="http://127.0.0.1:$PORT"

"$IDMINT" --authority "$AUTH" ns create snow --kind snowflake >/dev/null || die "ns create snow"
"$IDMINT" --authority "$AUTH" ns create rng --kind range --block 5000 >/dev/null ||
    die "ns create rng"
# Big forward steps (+1h) pin a released worker id's fence an hour ahead; they
# get their own namespace, shared with correct clocks, so the main namespaces
# keep minting.
"$IDMINT" --authority "$AUTH" ns create fwd --kind snowflake --layout 41/0/4/12 >/dev/null ||
    die "ns create fwd"

# The throttle keeps a library process alive for seconds (its stdout blocks),
# so leases are renewed and ranges refilled across the faults.
cp "$(dirname "$0")/../support/throttle.py" "$T/throttle.py"
echo "+0s" >"$T/ftfile" # the running clock of "dynamic" processes, stepped by the scheduler

# drop_partial FILE: a kill can land mid-line; drop an unterminated last line.
drop_partial() {
    if [ -s "$1" ] && [ -n "$(tail -c1 "$1")" ]; then
        sed -i '$d' "$1"
    fi
}

# lib_loop SLOT NS AUTHORITY [TAG]: run idmint mint again and again until told to
# stop; a clock mode is drawn per run. Each run's exit is classified:
# ok, killed by us, explicit error (exit 1 with a known message), or odd.
lib_loop() {
    local slot=$1 ns=$2 auth=$3 tag=${4:-$2} run=0 n mode st fifo=$T/run/$1.fifo out err tpid mpid
    local -a cmd
    mkfifo "$fifo"
    while [ ! -e "$T/stop" ]; do
        run=$((run + 1))
        n=$(rnd $((NMAX / 20)) "$NMAX")
        out=$T/run/$slot.out
        err=$T/run/$slot.err
        : >"$err"
        python3 "$T/throttle.py" "$RATE" <"$fifo" >"$out" &
        tpid=$!
        mode=$(pick_clock "$ns")
        if [ "${slot:0:1}" = C ]; then
            cmd=("$MINTER" "$auth" "$ns" "$n" --threads 3 --lease "$LEASE_S" --fork-every 500)
        else
            cmd=("$IDMINT" --authority "$auth" mint -n "$n" --ns "$ns" --lease "$LEASE_S")
        fi
        case $mode in
        none)
            "${cmd[@]}" >"$fifo" 2>"$err" &
            ;;
        dyn | dynmono)
            # The offset in $T/ftfile is re-read every second: steps while it runs.
            local only=FAKETIME_DONT_FAKE_MONOTONIC=0
            [ "$mode" = dynmono ] && only=FAKETIME_DONT_FAKE_MONOTONIC=1
            env "$FT_ASAN" LD_PRELOAD="$FT_LIB" FAKETIME_TIMESTAMP_FILE="$T/ftfile" \
                FAKETIME_CACHE_DURATION=1 "$only" "${cmd[@]}" >"$fifo" 2>"$err" &
            ;;
        *)
            # A fixed step at start: "OFFSET" fakes both clocks, "OFFSET:wall" only
            # the wall clock.
            local off=${mode%%:*} only=FAKETIME_DONT_FAKE_MONOTONIC=0
            [ "$mode" != "$off" ] && only=FAKETIME_DONT_FAKE_MONOTONIC=1
            env "$FT_ASAN" LD_PRELOAD="$FT_LIB" FAKETIME="$off" "$only" "${cmd[@]}" >"$fifo" 2>"$err" &
            ;;
        esac
        mpid=$!
        echo "$mpid $(date +%s) $slot $mode" >"$T/pid/$slot"
        wait "$mpid"
        st=$?
        rm -f "$T/pid/$slot"
        wait "$tpid"
        drop_partial "$out"
        cat "$out" >>"$T/ids/$tag.$slot"
        if [ "$st" -eq 0 ]; then
            echo "ok $mode" >>"$T/run/$slot.log"
        elif [ -e "$T/run/killed.$mpid" ]; then
            rm -f "$T/run/killed.$mpid"
            echo "killed $mode" >>"$T/run/$slot.log"
        elif [ "$st" -eq 1 ] && [ -s "$err" ]; then
            echo "explicit $mode $(head -c 300 "$err" | tr '\n' ' ')" >>"$T/run/$slot.log"
        else
            echo "odd $mode exit=$st n=$n $(head -c 300 "$err" | tr '\n' ' ')" >>"$T/run/$slot.log"
        fi
        [ "$st" -eq 0 ] || sleep "0.$(rnd 1 3)"
    done
}

# pick_clock NS: the clock of the next run. Mostly the true clock; otherwise
# a step back (-1s, -2s: behind fences others left), far back (-30s: must
# wait or fail ECLOCK, never mint), a small step forward, or a clock that is
# stepped while the process runs. Only the fwd namespace gets +1h.
pick_clock() {
    local r=$((RANDOM % 100))
    if [ "${1%%[0-9]*}" = fwd ]; then
        case $((r % 4)) in
        0) echo "+1h" ;;
        1) echo "+1h:wall" ;;
        *) echo none ;;
        esac
        return
    fi
    if [ "$r" -lt 70 ]; then echo none
    elif [ "$r" -lt 75 ]; then echo "-2s"
    elif [ "$r" -lt 78 ]; then echo "-1s:wall"
    elif [ "$r" -lt 81 ]; then echo "-30s"
    elif [ "$r" -lt 84 ]; then echo "+3s"
    elif [ "$r" -lt 87 ]; then echo "+2s:wall"
    elif [ "$r" -lt 94 ]; then echo dyn
    else echo dynmono
    fi
}

# http_loop NS K: batches of 1000 from the daemon's own handle; only a
# complete 200 reply counts (-f fails on >= 400; a cut transfer is an error).
http_loop() {
    local ns=$1 k=$2 tmp=$T/run/http.$1.$2
    while [ ! -e "$T/stop" ]; do
        if curl -sf --max-time 5 -H 'Accept: text/plain' \
            "$URL/v1/ids?namespace=$ns&count=1000" >"$tmp" 2>/dev/null; then
            drop_partial "$tmp"
            cat "$tmp" >>"$T/ids/$ns.http$k"
            echo ok >>"$T/run/http.log"
        else
            echo fail >>"$T/run/http.log"
            sleep 0.2
        fi
        sleep 0.05
    done
}

slot_n=0
for ns in snow rng; do
    for ((k = 1; k <= LIBS_PER_NS; k++)); do
        slot_n=$((slot_n + 1))
        lib_loop "L$slot_n" "$ns" "$AUTH" 2>>"$T/loops.err" 3>&- &
        BG_PIDS+=($!)
    done
    for ((k = 1; k <= HTTP_PER_NS; k++)); do
        slot_n=$((slot_n + 1))
        lib_loop "H$slot_n" "$ns" "$URL" 2>>"$T/loops.err" 3>&- &
        BG_PIDS+=($!)
    done
    if [ -n "$MINTER" ]; then
        slot_n=$((slot_n + 1))
        lib_loop "C$slot_n" "$ns" "$AUTH" 2>>"$T/loops.err" 3>&- &
        BG_PIDS+=($!)
    fi
    http_loop "$ns" 1 3>&- &
    BG_PIDS+=($!)
done
for k in 1 2; do
    slot_n=$((slot_n + 1))
    lib_loop "F$slot_n" fwd "$AUTH" 2>>"$T/loops.err" 3>&- &
    BG_PIDS+=($!)
done
# PostgreSQL as a second authority, when a test cluster is there: its own
# namespaces (named per run: the cluster outlives us), restarted by the scheduler.
PGDIR=
NSETS="snow rng fwd"
if [ -n "${IDMINT_PG_ENV:-}" ] && [ -s "$IDMINT_PG_ENV" ]; then
    PGDIR=$(cd "$(dirname "$IDMINT_PG_ENV")" && pwd)
    read -r PGURL <"$IDMINT_PG_ENV"
    pgs=c$(date +%s)$$
    "$IDMINT" --authority "$PGURL" ns create "${pgs}s" --kind snowflake >/dev/null ||
        die "ns create on PostgreSQL"
    "$IDMINT" --authority "$PGURL" ns create "${pgs}r" --kind range --block 5000 >/dev/null ||
        die "ns create on PostgreSQL"
    for k in 1 2; do
        slot_n=$((slot_n + 1))
        lib_loop "P$slot_n" "${pgs}s" "$PGURL" pgsnow 2>>"$T/loops.err" 3>&- &
        BG_PIDS+=($!)
        slot_n=$((slot_n + 1))
        lib_loop "P$slot_n" "${pgs}r" "$PGURL" pgrng 2>>"$T/loops.err" 3>&- &
        BG_PIDS+=($!)
    done
    NSETS="$NSETS pgsnow pgrng"
fi

# ---- the scheduler: one fault at a time per target kind, all bounded ----
# live_minter: a random running minter as "PID START SLOT MODE", or nothing.
live_minter() {
    local files=("$T"/pid/[LHFCP]*)
    [ -e "${files[0]}" ] || return 1
    cat "${files[RANDOM % ${#files[@]}]}" 2>/dev/null
}
# ours PID: the process still runs one of our binaries on our files (a PID
# can be reused by another test's process between our read and our kill).
ours() {
    tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null |
        grep -q -e "$T" -e "127.0.0.1:$PORT" -e " ${pgs:-$T}[sr] "
}
# outage KIND MS: hold the authority away for MS milliseconds, in the background.
# sqlite: a writer that takes the write lock, advances rng inside its
# transaction and then either commits or is killed -9 (a store process
# dying mid-transaction). daemon: SIGSTOP of idmintd.
outage_until=0
outage() {
    local kind=$1 ms=$2
    if [ "$kind" = sqlite ]; then
        (
            printf 'PRAGMA busy_timeout=2000;\nBEGIN IMMEDIATE;\n'
            printf "UPDATE namespaces SET next_value = next_value + 1000 WHERE name = 'rng';\n"
            printf '.shell sleep %s\nCOMMIT;\n' "$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))"
        ) | sqlite3 "$DB" >/dev/null 2>>"$T/lock.err" 3>&- &
        local lpid=$!
        echo "$lpid" >"$T/pid/lock"
        if [ $((RANDOM % 2)) -eq 0 ]; then
            (sleep_ms $((ms / 2)); kill -9 "$lpid" 2>/dev/null) 3>&- &
            count store_kills
        fi
    else
        local dpid=$DAEMON_PID
        kill -STOP "$dpid" 2>/dev/null
        (sleep_ms "$ms"; kill -CONT "$dpid" 2>/dev/null) 3>&- &
        echo "$! " >"$T/pid/cont.daemon"
    fi
    outage_until=$(($(now_ms) + ms + 500))
    count outages
    [ "$ms" -gt $((LEASE_S * 1000)) ] && count long_outages
}

start_s=$(date +%s)
end_s=$((start_s + BUDGET))
next_check=$((start_s + 5))
while [ "$(date +%s)" -lt "$end_s" ]; do
    sleep "0.$(rnd 10 50)"
    r=$((RANDOM % 100))
    now=$(now_ms)
    if [ "$r" -lt 50 ]; then # kill -9 a minter
        if m=$(live_minter) && [ -n "$m" ]; then
            set -- $m
            if ours "$1"; then
                touch "$T/run/killed.$1"
                if kill -9 "$1" 2>/dev/null; then count kills; else rm -f "$T/run/killed.$1"; fi
            fi
        fi
    elif [ "$r" -lt 62 ]; then # SIGSTOP a minter, SIGCONT later
        if m=$(live_minter) && [ -n "$m" ]; then
            set -- $m
            if ours "$1" && kill -STOP "$1" 2>/dev/null; then
                count stops
                ms=$(rnd 100 $((LONG_OUT_MS)))
                (sleep_ms "$ms"; kill -CONT "$1" 2>/dev/null) 3>&- &
            fi
        fi
    elif [ "$r" -lt 66 ]; then # kill -9 idmintd, restart it (sometimes on a stepped clock)
        if [ "$now" -gt "$outage_until" ]; then
            kill -CONT "$DAEMON_PID" 2>/dev/null
            kill -9 "$DAEMON_PID" 2>/dev/null && count kills && count daemon_kills
            wait "$DAEMON_PID" 2>/dev/null
            ft=
            case $((RANDOM % 6)) in
            0) ft="-2s" ;;
            1) ft="+2s" ;;
            esac
            [ -n "$ft" ] && count clock_steps
            sleep "0.$(rnd 1 9)"
            start_daemon "127.0.0.1:$PORT" "$ft"
            [ "$PORT" = "${URL##*:}" ] || die "idmintd restarted on port $PORT, not ${URL##*:}"
        fi
    elif [ "$r" -lt 74 ]; then # an authority outage, shorter or longer than the lease
        if [ "$now" -gt "$outage_until" ]; then
            if [ $((RANDOM % 2)) -eq 0 ]; then ms=$SHORT_OUT_MS; else ms=$LONG_OUT_MS; fi
            if [ $((RANDOM % 2)) -eq 0 ]; then outage sqlite "$ms"; else outage daemon "$ms"; fi
        fi
    elif [ "$r" -lt 82 ] && [ -n "$PGDIR" ]; then # crash PostgreSQL, start it again
        if ! { [ -f "$T/pid/pgcrash" ] && kill -0 "$(cat "$T/pid/pgcrash")" 2>/dev/null; }; then
            (
                bash "$SUPPORT/pg-crash.sh" "$PGDIR" 2>>"$T/pg.log" ||
                    echo "PostgreSQL did not restart" >>"$T/hangs"
            ) 3>&- &
            echo "$!" >"$T/pid/pgcrash"
            count kills
            count store_kills
        fi
    elif [ "$r" -lt 88 ]; then # step the clock of the running "dynamic" processes
        case $((RANDOM % 5)) in
        0) step="-3s" ;; 1) step="-1s" ;; 2) step="+2s" ;; 3) step="+0s" ;; 4) step="-10s" ;;
        esac
        echo "$step" >"$T/ftfile"
        count clock_steps
    fi
    # Hangs: a minter alive past its bound; a daemon that died on its own.
    nows=$(date +%s)
    for f in "$T"/pid/[LHFCP]*; do
        [ -e "$f" ] || continue
        read -r p st0 slot mode <"$f" 2>/dev/null || continue
        if [ -n "${st0:-}" ] && [ $((nows - st0)) -gt "$HANG_S" ] && ours "$p"; then
            echo "hang: slot $slot mode $mode pid $p ran $((nows - st0)) s" >>"$T/hangs"
            touch "$T/run/killed.$p"
            kill -CONT "$p" 2>/dev/null
            kill -9 "$p" 2>/dev/null
        fi
    done
    if [ -n "$DAEMON_PID" ] && { ! kill -0 "$DAEMON_PID" 2>/dev/null ||
        grep -q '^[0-9]* ([^)]*) Z' "/proc/$DAEMON_PID/stat" 2>/dev/null; }; then
        echo "idmintd died on its own" >>"$T/hangs"
        wait "$DAEMON_PID" 2>/dev/null
        start_daemon "127.0.0.1:$PORT"
    fi
    if [ "$TARGET" -gt 0 ] && [ "$nows" -ge "$next_check" ]; then
        next_check=$((nows + 10))
        bytes=$(du -sb "$T/ids" | cut -f1)
        if [ $((bytes / 19)) -ge "$TARGET" ]; then
            break
        fi
    fi
done

# ---- stop: minters end, the daemon drains ----
touch "$T/stop"
wait_pg_restart || echo "hang: PostgreSQL restart did not end" >>"$T/hangs"
kill -CONT "$DAEMON_PID" 2>/dev/null
# The last fault: every minter still running is killed -9, so the loops end
# now rather than at the end of their throttled runs.
for f in "$T"/pid/[LHFCP]*; do
    [ -e "$f" ] || continue
    read -r p _ <"$f" 2>/dev/null || continue
    if [ -n "$p" ] && ours "$p"; then
        touch "$T/run/killed.$p"
        if kill -9 "$p" 2>/dev/null; then count kills; else rm -f "$T/run/killed.$p"; fi
    fi
done
deadline=$(($(date +%s) + HANG_S))
for pid in "${BG_PIDS[@]}"; do
    while kill -0 "$pid" 2>/dev/null && [ "$(date +%s)" -lt "$deadline" ]; do
        sleep 0.2
    done
    if kill -0 "$pid" 2>/dev/null; then
        echo "hang: a minting loop did not end at the stop" >>"$T/hangs"
        for f in "$T"/pid/[LHFCP]*; do
            [ -e "$f" ] && read -r p _ <"$f" && touch "$T/run/killed.$p" && kill -9 "$p"
        done
    fi
    wait "$pid" 2>/dev/null
done
BG_PIDS=()
kill -CONT "$DAEMON_PID" 2>/dev/null
sleep 0.5
kill -TERM "$DAEMON_PID" 2>/dev/null
rc=0
wait "$DAEMON_PID" || rc=$?
DAEMON_PID=
[ "$rc" -eq 0 ] || echo "idmintd exited $rc after SIGTERM" >>"$T/hangs"
seconds=$(($(date +%s) - start_s))

# ---- the checks: no idmint code (sort | uniq -d), then idmint verify ----
ids=0
dups=0
bad=0
for ns in $NSETS; do
    files=("$T"/ids/"$ns".*)
    [ -e "${files[0]}" ] || die "namespace $ns: no IDs at all"
    n=$(cat "${files[@]}" | wc -l)
    b=$(cat "${files[@]}" | grep -cvE '^[1-9][0-9]{0,18}$')
    d=$(cat "${files[@]}" | LC_ALL=C sort -S 25% -T "$T" | uniq -d | tee "$T/dups.$ns" | wc -l)
    v=$(cat "${files[@]}" | "$IDMINT" verify) || true
    case $v in
    *"count=$n duplicates=0"*) ;;
    *) echo "namespace $ns: idmint verify says: $v" >>"$T/hangs"
       [ "$d" -eq 0 ] && d=1 ;;
    esac
    echo "campaign: $ns: ids=$n duplicates=$d not_ids=$b"
    if [ "$d" -gt 0 ]; then
        echo "campaign: $ns: duplicates (first 5): $(head -5 "$T/dups.$ns" | tr '\n' ' ')" >&3
        for id in $(head -3 "$T/dups.$ns"); do
            grep -l -x "$id" "${files[@]}" | sed 's/^/  in /' >&3
        done
    fi
    ids=$((ids + n)); dups=$((dups + d)); bad=$((bad + b))
done
# Start modes count as clock steps too: a process started with a stepped clock.
steps=$(($(getc clock_steps) + $(cat "$T"/run/*.log | grep -cE '^[a-z]+ (-|\+|dyn)')))
explicit=$(cat "$T"/run/*.log | grep -c '^explicit')
explicit=$((explicit + $(grep -c fail "$T/run/http.log" 2>/dev/null || echo 0)))
odd=$(cat "$T"/run/*.log | grep -c '^odd')
# An explicit error must name a known outcome.
unknown=$(cat "$T"/run/*.log | grep '^explicit' |
    grep -cvE 'authority unavailable|worker lease lost|clock is behind|timed out|store error|no free worker id|namespace exhausted')
echo "campaign: ids=$ids duplicates=$dups kills=$(getc kills) stops=$(getc stops)" \
    "clock_steps=$steps outages=$(getc outages) long_outages=$(getc long_outages)" \
    "explicit_errors=$explicit seconds=$seconds"
echo "campaign: detail: daemon_kills=$(getc daemon_kills) store_kills=$(getc store_kills)" \
    "runs_ok=$(cat "$T"/run/*.log | grep -c '^ok') killed_runs=$(cat "$T"/run/*.log | grep -c '^killed')" \
    "http_ok=$(grep -c ok "$T/run/http.log" 2>/dev/null || echo 0) odd=$odd unknown_errors=$unknown"
cat "$T"/run/*.log | grep '^explicit' | sed -E 's/^explicit [^ ]+ //; s/[0-9]+/N/g' |
    sort | uniq -c | sort -rn | head -8 | sed 's/^/campaign:   /'
status=0
if [ "$dups" -gt 0 ]; then
    echo "campaign: FAIL: $dups duplicate IDs" >&3
    status=1
fi
if [ "$bad" -gt 0 ]; then
    echo "campaign: FAIL: $bad lines are not IDs" >&3
    status=1
fi
if [ "$odd" -gt 0 ] || [ "$unknown" -gt 0 ]; then
    echo "campaign: FAIL: runs that ended without an explicit error:" >&3
    cat "$T"/run/*.log | grep -E '^(odd|explicit)' |
        grep -vE '^explicit.*(authority unavailable|worker lease lost|clock is behind|timed out|store error|no free worker id|namespace exhausted)' |
        head -10 >&3
    status=1
fi
if [ -s "$T/hangs" ]; then
    echo "campaign: FAIL: hangs or crashes:" >&3
    head -10 "$T/hangs" >&3
    tail -n 20 "$T/daemon.log" >&3
    status=1
fi
if [ "$TARGET" -gt 0 ] && [ "$ids" -lt "$TARGET" ]; then
    echo "campaign: FAIL: target of $TARGET IDs not reached in $BUDGET s" >&3
    status=1
fi
[ "$status" -ne 0 ] && CAMPAIGN_KEEP=${CAMPAIGN_KEEP:-1}
exit "$status"
