#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The restore drills on etcd (docs/operations.md "Restores"), each on a
# private 3-member cluster (tests/support/etcd-start.sh), under a live
# idmintd (600 s lease, minting for a client every 10 ms) and 4 CLI minters
# (snowflake and range), with every process's IDs collected:
#   datadir   every member's data directory copied mid-run, the whole
#             cluster stopped for the copy (a consistent cold copy, as a
#             filesystem snapshot of all three is); later every member
#             killed, its directory replaced by the copy, and the cluster
#             started again;
#   snapshot  an `etcdctl snapshot save` taken mid-run; later every member
#             killed and rebuilt with `etcdctl snapshot restore`, and the
#             cluster started again;
# in each, every running process stops (the history chain: the restored
# cluster's P/tip history lacks the pair each saw), new processes are
# refused by this host's witness, a fence without --above or shorter than
# the daemon's 600 s lease is refused and changes nothing, a forced short
# fence is audited, fresh processes mint above every ID of the lost
# history, and no ID of the drill repeats. The restores are outages of a
# second or two first: the snowflake minters take 10 s leases to outlast
# them. (etcd 3.4's etcdctl has no --bump-revision; etcdutl of 3.5+ does.)
# Usage: test_etcd_restore.sh /path/to/idmint /path/to/idmintd
set -euo pipefail
IDMINT=${1:?usage: test_etcd_restore.sh /path/to/idmint /path/to/idmintd}
IDMINTD=${2:?usage: test_etcd_restore.sh /path/to/idmint /path/to/idmintd}
SUP=$(cd "$(dirname "$0")/../support" && pwd)
scale=${IDMINT_TIMEOUT_SCALE:-1}
dir=$(mktemp -d)
unset IDMINT_TOKEN IDMINT_CONFIG
cleanup() {
    local e
    touch "$dir"/*/stop.client 2>/dev/null || true
    kill -9 $(jobs -p) 2>/dev/null || true
    for e in "$dir"/*/etcd; do
        [ -d "$e" ] && bash "$SUP/etcd-stop.sh" "$e" >/dev/null 2>&1 || true
    done
    [ -n "${KEEP:-}" ] || rm -rf "$dir"
}
trap cleanup EXIT
fail() {
    echo "etcd_restore: FAIL: $*" >&2
    exit 1
}
command -v curl >/dev/null || fail "curl is not installed"
command -v etcdctl >/dev/null || bash "$SUP/apt-no-start.sh" etcd-client
command -v etcdctl >/dev/null || fail "no etcdctl after installing etcd-client"
export ETCDCTL_API=3
# shellcheck source=../support/restore_drill.sh
. "$SUP/restore_drill.sh"
# An http:// minter of each kind beside the CLI ones: the daemon's history
# check (GET /internal/history) must stop it within the same wait.
drill_http=1

# Start every member of the cluster in E at once (one alone has no quorum
# and never turns healthy) and wait until all are healthy.
start_all() {
    local e=$1 n cport ok
    for n in 1 2 3; do
        setsid bash "$e/m$n.cmd" </dev/null >>"$e/m$n.log" 2>&1 &
    done
    for _ in $(seq 1 $((120 * scale))); do
        ok=1
        while read -r _ cport _; do
            curl -s -m 1 "http://127.0.0.1:$cport/health" 2>/dev/null | grep -q '"health":"true"' ||
                ok=0
        done <"$e/ports"
        [ "$ok" = 1 ] && return 0
        sleep 0.25
    done
    fail "the restored cluster did not become healthy: $(tail -3 "$e"/m*.log)"
}

# etcd KEY: the value of KEY in the drill's cluster.
etcd_get() {
    etcdctl --endpoints="$(bash "$SUP/etcd-member.sh" "$E" url 1)" get --print-value-only "$1"
}

# audit_count: the drill's audit records, counted.
audit_count() {
    etcdctl --endpoints="$(bash "$SUP/etcd-member.sh" "$E" url 1)" get --prefix --keys-only \
        /idmint/audit/ | grep -c . || true
}

drill() {
    local mode=$1 d="$dir/$1" rc t0 n name cport pport cluster token
    mkdir -p "$d"
    E=$d/etcd
    bash "$SUP/etcd-start.sh" "$E" >/dev/null
    export IDMINT_AUTHORITY IDMINT_WITNESS_DIR="$d/witness"
    IDMINT_AUTHORITY=$(head -n 1 "$E/env")
    drill_lease=10
    "$IDMINT" ns create sf --kind snowflake --layout 41/0/4/12 >/dev/null
    "$IDMINT" ns create rg --kind range --block 100 >/dev/null

    drill_daemon "$d"
    drill_start "$d"
    sleep 1.5
    case $mode in
    datadir)
        # All three at one moment. Copies taken one member at a time while the
        # others serve are a torn backup: put back, the member with the newest
        # copy can outvote the others' raft state, and etcd then drops writes
        # it acknowledged after the restart (seen here: a fence that succeeded
        # and then was gone, its audit record with it). idmint refuses to mint
        # on that (the host's witness is ahead of the store again), but the
        # drill is of a restore, not of a cluster that loses writes.
        for n in 1 2 3; do
            bash "$SUP/etcd-member.sh" "$E" stop "$n"
        done
        for n in 1 2 3; do
            cp -a "$E/m$n" "$d/copy.m$n"
        done
        start_all "$E"
        ;;
    snapshot)
        etcdctl --endpoints="$(bash "$SUP/etcd-member.sh" "$E" url 1)" snapshot save \
            "$d/snap.db" >/dev/null 2>&1 || fail "snapshot save"
        cluster=$(grep -o -- '--initial-cluster [^ ]*' "$E/m1.cmd" | cut -d' ' -f2)
        token=$(grep -o -- '--initial-cluster-token [^ ]*' "$E/m1.cmd" | cut -d' ' -f2)
        while read -r name cport pport; do
            etcdctl snapshot restore "$d/snap.db" --name "$name" --data-dir "$d/copy.$name" \
                --initial-cluster "$cluster" --initial-cluster-token "$token" \
                --initial-advertise-peer-urls "http://127.0.0.1:$pport" >/dev/null 2>&1 ||
                fail "snapshot restore of $name"
        done <"$E/ports"
        ;;
    esac
    sleep 1.5 # minting goes on past the copy
    for n in 1 2 3; do
        bash "$SUP/etcd-member.sh" "$E" kill "$n"
    done
    for n in 1 2 3; do
        rm -rf "${E:?}/m$n"
        mv "$d/copy.m$n" "$E/m$n"
    done
    t0=$(date +%s.%N) # the members start on the copies
    start_all "$E"
    echo "$mode: every member put back; the cluster serves again after $(drill_since "$t0") s"
    drill_stopped "$d" "$mode" "$t0"
    drill_refused "$d" "$mode" "this host saw"

    local audit_before next_before
    audit_before=$(audit_count)
    next_before=$(etcd_get /idmint/ns/rg)
    rc=0
    "$IDMINT" authority fence 2>"$d/fence.err" || rc=$?
    [ "$rc" = 1 ] && grep -q "needs --above rg=N" "$d/fence.err" || fail "$mode: fence without --above: $rc"
    rc=0
    "$IDMINT" authority fence --above rg=999999999 --max-lease 5 2>"$d/fence.err" || rc=$?
    [ "$rc" = 1 ] && grep -q "shorter than the longest lease .* granted in namespace '[a-z]*' (600 s)" \
        "$d/fence.err" || fail "$mode: short fence: $rc $(cat "$d/fence.err")"
    echo "$mode: a fence with --max-lease 5 under the daemon's 600 s lease is refused"
    [ "$(audit_count)" = "$audit_before" ] || fail "$mode: a refused fence was audited"
    [ "$(etcd_get /idmint/ns/rg)" = "$next_before" ] || fail "$mode: a refused fence moved rg"

    drill_fence "$d" "$mode" --max-lease 3 --force-short-lease
    # Into a file first: grep -q leaving early would fail the pipe (pipefail).
    # Read again for a few seconds before judging (a lagging member).
    for _ in 1 2 3 4 5 6 7 8 9 10; do
        etcdctl --endpoints="$(bash "$SUP/etcd-member.sh" "$E" url 1)" get --prefix \
            --print-value-only /idmint/audit/ >"$d/audit"
        ! grep -q "short_lease=forced" "$d/audit" || break
        sleep 0.5
    done
    grep -q "short_lease=forced" "$d/audit" ||
        fail "$mode: the forced short fence is not audited: $(grep -c . "$d/audit") audit values, \
fences: $(grep authority.fence "$d/audit"); last: $(tail -n 2 "$d/audit"); fence said: \
$(cat "$d/fence.err")"
    drill_fresh "$d" "$mode"
    bash "$SUP/etcd-stop.sh" "$E" >/dev/null 2>&1 || true
}

drill datadir
drill snapshot
echo "etcd restore drill: ok"
