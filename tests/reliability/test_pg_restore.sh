#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The restore drills on PostgreSQL (docs/operations.md "Restores"), each on
# a database of its own, under a live idmintd (600 s lease, minting for a
# client every 10 ms) and 4 CLI minters (snowflake and range), with every
# process's IDs collected:
#   dump     a pg_dump taken mid-run, restored over the live database with
#            pg_restore --clean --single-transaction (the fixture's server);
#   datadir  a pg_basebackup taken mid-run; then the server of a private
#            cluster is stopped, its data directory replaced by the copy,
#            and started again;
#   pitr     a private cluster archiving its WAL, a base backup taken
#            before the run and a restore point made mid-run; then the
#            server is stopped and recovered from the base backup to that
#            point (recovery_target_name, promote);
#   replica  a streaming replica of a private cluster stops receiving
#            mid-run (it lags); then the primary dies and the replica,
#            moved to the primary's port, is promoted;
# in each, every running process stops (the history chain: the restored log
# lacks the pair each saw), new processes are refused by this host's
# witness, a fence without --above or shorter than the daemon's 600 s lease
# is refused and changes nothing, a forced short fence is audited, fresh
# processes mint above every ID of the lost history, and no ID of the drill
# repeats.
# Usage: test_pg_restore.sh /path/to/idmint /path/to/idmintd
# Environment: IDMINT_PG_ENV (file with the URL of tests/support/pg-start.sh);
# DRILLS, a list of the drills to run (default: all four).
set -euo pipefail
IDMINT=${1:?usage: test_pg_restore.sh /path/to/idmint /path/to/idmintd}
IDMINTD=${2:?usage: test_pg_restore.sh /path/to/idmint /path/to/idmintd}
# shellcheck source=../support/pg-fixture.sh
source "$(dirname "$0")/../support/pg-fixture.sh"
DB=idmint_restore_$$
scale=${IDMINT_TIMEOUT_SCALE:-1}
dir=$(mktemp -d)
chmod 755 "$dir" # the private cluster's server runs as postgres when we are root
unset IDMINT_TOKEN IDMINT_CONFIG
cleanup() {
    touch "$dir"/*/stop.client 2>/dev/null || true
    kill -9 $(jobs -p) 2>/dev/null || true
    as_super -d postgres -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null 2>&1 || true
    bash "$(dirname "$0")/../support/pg-stop.sh" "$dir/cluster" >/dev/null 2>&1 || true
    bash "$(dirname "$0")/../support/pg-stop.sh" "$dir/pitr-cluster" >/dev/null 2>&1 || true
    [ ! -f "$dir/replica/standby/postmaster.pid" ] ||
        as_owner "$BIN/pg_ctl" -D "$dir/replica/standby" -m immediate -w stop >/dev/null 2>&1 || true
    bash "$(dirname "$0")/../support/pg-stop.sh" "$dir/replica-cluster" >/dev/null 2>&1 || true
    [ -n "${KEEP:-}" ] || rm -rf "$dir"
}
trap cleanup EXIT
fail() {
    echo "pg_restore: FAIL: $*" >&2
    exit 1
}
command -v curl >/dev/null || fail "curl is not installed"
# shellcheck source=../support/restore_drill.sh
. "$(dirname "$0")/../support/restore_drill.sh"
# An http:// minter of each kind beside the CLI ones: the daemon's history
# check (GET /internal/history) must stop it within the same wait.
drill_http=1

if [ "$(id -u)" -eq 0 ]; then
    as_owner() { runuser -u postgres -- "$@"; }
else
    as_owner() { "$@"; }
fi

# q URL SQL: one value from the drill's database.
q() {
    local hp=${1#*@}
    hp=${hp%%/*}
    "$BIN/psql" -X -qtA -v ON_ERROR_STOP=1 -h "${hp%:*}" -p "${hp##*:}" -U postgres \
        -d "${1##*/}" -c "$2"
}

drill() {
    local mode=$1 d="$dir/$1" rc t0 data port
    mkdir -p "$d"
    case $mode in
    dump)
        as_super -d postgres -c "CREATE DATABASE $DB" >/dev/null
        IDMINT_AUTHORITY="postgresql://postgres@$HOST:$PORT/$DB"
        ;;
    datadir)
        bash "$(dirname "$0")/../support/pg-start.sh" "$dir/cluster" >/dev/null
        IDMINT_AUTHORITY=$(head -n 1 "$dir/cluster/env")
        data=$dir/cluster/data
        drill_lease=10 # the restore is an outage of a second or so first
        ;;
    pitr)
        bash "$(dirname "$0")/../support/pg-start.sh" "$dir/pitr-cluster" >/dev/null
        IDMINT_AUTHORITY=$(head -n 1 "$dir/pitr-cluster/env")
        data=$dir/pitr-cluster/data
        mkdir -p "$d/archive"
        [ "$(id -u)" -ne 0 ] || chown postgres "$d" "$d/archive"
        q "$IDMINT_AUTHORITY" "ALTER SYSTEM SET archive_mode = on" >/dev/null
        q "$IDMINT_AUTHORITY" "ALTER SYSTEM SET archive_command = 'cp %p $d/archive/%f'" >/dev/null
        as_owner "$BIN/pg_ctl" -D "$data" -l "$dir/pitr-cluster/server.log" -w -t 30 restart \
            >/dev/null
        "$BIN/pg_basebackup" -h 127.0.0.1 -p "$(cat "$dir/pitr-cluster/port")" -U postgres \
            -D "$d/base" -X stream -c fast
        [ "$(id -u)" -ne 0 ] || chown -R postgres "$d/base"
        chmod 700 "$d/base"
        drill_lease=10
        ;;
    replica)
        bash "$(dirname "$0")/../support/pg-start.sh" "$dir/replica-cluster" >/dev/null
        IDMINT_AUTHORITY=$(head -n 1 "$dir/replica-cluster/env")
        data=$dir/replica-cluster/data
        port=$(cat "$dir/replica-cluster/port")
        "$BIN/pg_basebackup" -h 127.0.0.1 -p "$port" -U postgres -D "$d/standby" -X stream -c fast -R
        [ "$(id -u)" -ne 0 ] || chown -R postgres "$d" "$d/standby"
        chmod 700 "$d/standby"
        # A free port of its own (another test's server may hold the primary's
        # port + 1): try a few, as pg-start.sh does. Later lines of the file win.
        local started=0 sport
        for _ in 1 2 3 4 5 6 7 8; do
            sport=$((20000 + RANDOM % 40000))
            if (exec 3<>"/dev/tcp/127.0.0.1/$sport") 2>/dev/null; then continue; fi
            echo "port = $sport" >>"$d/standby/postgresql.auto.conf"
            [ "$(id -u)" -ne 0 ] || chown postgres "$d/standby/postgresql.auto.conf"
            if as_owner "$BIN/pg_ctl" -D "$d/standby" -l "$d/standby.log" -w -t 30 start >/dev/null; then
                started=1
                break
            fi
        done
        [ "$started" -eq 1 ] || fail "replica: the standby did not start: $(tail -3 "$d/standby.log")"
        drill_lease=10
        ;;
    esac
    export IDMINT_AUTHORITY IDMINT_WITNESS_DIR="$d/witness"
    "$IDMINT" ns create sf --kind snowflake --layout 41/0/4/12 >/dev/null
    "$IDMINT" ns create rg --kind range --block 100 >/dev/null

    drill_daemon "$d"
    drill_start "$d"
    sleep 1.5
    case $mode in
    dump) "$BIN/pg_dump" -h "$HOST" -p "$PORT" -U postgres -Fc -f "$d/dump" "$DB" ;;
    datadir)
        "$BIN/pg_basebackup" -h 127.0.0.1 \
            -p "$(cat "$dir/cluster/port")" -U postgres -D "$d/copy" -X stream -c fast
        [ "$(id -u)" -ne 0 ] || chown -R postgres "$d/copy"
        chmod 700 "$d/copy"
        ;;
    pitr)
        q "$IDMINT_AUTHORITY" "SELECT pg_create_restore_point('drill')" >/dev/null
        q "$IDMINT_AUTHORITY" "SELECT pg_switch_wal()" >/dev/null
        ;;
    replica)
        # From here on the replica lags: it holds WAL up to now only.
        as_owner "$BIN/pg_ctl" -D "$d/standby" -m fast -w stop >/dev/null
        ;;
    esac
    sleep 1.5 # minting goes on past the copy
    case $mode in
    dump)
        "$BIN/pg_restore" -h "$HOST" -p "$PORT" -U postgres --clean --if-exists \
            --single-transaction -d "$DB" "$d/dump"
        t0=$(date +%s.%N) # committed: from here on every reader sees the copy
        ;;
    datadir)
        # The running processes see an outage of a second or so, then the
        # copy: their checks tell it from the server they knew.
        as_owner "$BIN/pg_ctl" -D "$data" -m immediate -w stop >/dev/null
        mv "$data" "$d/data.lost"
        mv "$d/copy" "$data"
        as_owner "$BIN/pg_ctl" -D "$data" -l "$dir/cluster/server.log" -w -t 30 start >/dev/null
        t0=$(date +%s.%N)
        ;;
    pitr)
        # Everything after the restore point is lost: the archive keeps it,
        # but recovery stops at the point and promotes.
        as_owner "$BIN/pg_ctl" -D "$data" -m immediate -w stop >/dev/null
        mv "$data" "$d/data.lost"
        mv "$d/base" "$data"
        cat >>"$data/postgresql.auto.conf" <<CONF
restore_command = 'cp $d/archive/%f %p'
recovery_target_name = 'drill'
recovery_target_action = 'promote'
archive_mode = off
CONF
        as_owner touch "$data/recovery.signal"
        as_owner "$BIN/pg_ctl" -D "$data" -l "$dir/pitr-cluster/server.log" -w -t 60 start \
            >/dev/null
        for _ in $(seq 1 $((100 * scale))); do
            [ "$(q "$IDMINT_AUTHORITY" "SELECT pg_is_in_recovery()")" = f ] && break
            sleep 0.1
        done
        t0=$(date +%s.%N)
        ;;
    replica)
        # The primary dies; the lagging replica takes its address and is promoted.
        as_owner "$BIN/pg_ctl" -D "$data" -m immediate -w stop >/dev/null
        echo "port = $port" >>"$d/standby/postgresql.auto.conf"
        as_owner "$BIN/pg_ctl" -D "$d/standby" -l "$d/standby.log" -w -t 30 start >/dev/null
        as_owner "$BIN/pg_ctl" -D "$d/standby" -w -t 30 promote >/dev/null
        t0=$(date +%s.%N)
        ;;
    esac
    drill_stopped "$d" "$mode" "$t0"
    drill_refused "$d" "$mode" "this host saw"

    # Bad fences change nothing: no --above for rg; one shorter than the
    # daemon's 600 s lease, which the restored store knows (taken before
    # the copy).
    local audit_before next_before
    audit_before=$(q "$IDMINT_AUTHORITY" "SELECT count(*) FROM idmint.audit")
    next_before=$(q "$IDMINT_AUTHORITY" "SELECT next_value || '/' || floor FROM idmint.namespaces WHERE name = 'rg'")
    rc=0
    "$IDMINT" authority fence 2>"$d/fence.err" || rc=$?
    [ "$rc" = 1 ] && grep -q "needs --above rg=N" "$d/fence.err" || fail "$mode: fence without --above: $rc"
    rc=0
    "$IDMINT" authority fence --above rg=999999999 --max-lease 5 2>"$d/fence.err" || rc=$?
    [ "$rc" = 1 ] && grep -q "shorter than the longest lease .* granted in namespace '[a-z]*' (600 s)" \
        "$d/fence.err" || fail "$mode: short fence: $rc $(cat "$d/fence.err")"
    echo "$mode: a fence with --max-lease 5 under the daemon's 600 s lease is refused"
    [ "$(q "$IDMINT_AUTHORITY" "SELECT count(*) FROM idmint.audit")" = "$audit_before" ] ||
        fail "$mode: a refused fence was audited"
    [ "$(q "$IDMINT_AUTHORITY" "SELECT next_value || '/' || floor FROM idmint.namespaces WHERE name = 'rg'")" = "$next_before" ] ||
        fail "$mode: a refused fence moved rg"

    # Every process of the lost history has stopped (drill_stopped): the
    # operator may fence short, and the audit log says so.
    drill_fence "$d" "$mode" --max-lease 3 --force-short-lease
    # Into a file first: grep -q leaving early would fail the pipe (pipefail).
    q "$IDMINT_AUTHORITY" "SELECT detail FROM idmint.audit WHERE action = 'authority.fence'" \
        >"$d/audit"
    grep -q "short_lease=forced" "$d/audit" || fail "$mode: the forced short fence is not audited"
    drill_fresh "$d" "$mode"
}

# DRILLS (default: all) runs some of them, e.g. DRILLS=replica.
for mode in ${DRILLS:-dump datadir pitr replica}; do
    drill "$mode"
done
echo "pg restore drill: ok"
