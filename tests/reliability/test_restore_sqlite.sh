#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The restore drills on SQLite (docs/operations.md "Restores"), each on a
# store of its own, under a live idmintd (600 s lease, minting for a client
# every 10 ms), 4 CLI minters (snowflake and range) and 2 more minting through
# the daemon (http://, a 60 s lease), with every process's IDs collected:
#   backup   an `idmint authority backup` put back with SQLite's online
#            restore: every process stops; the copy refuses until fenced; a
#            fence shorter than the daemon's lease is refused (issue 28 item
#            2) unless forced, and the force is audited;
#   online   a plain copy (the quiesced file and its -wal) put back with the
#            online restore: every process stops within history_check_ms;
#            new processes are refused by this host's witness;
#   mv       a plain copy (file and -wal) moved into place, -shm removed:
#            the live processes stop (their file was replaced), new ones are
#            refused by the witness;
#   stopped  every process stopped cleanly, then the .db alone copied over
#            the file (no -wal): nothing runs to notice; new processes are
#            refused by the witness;
# then bad fences change nothing, a fence, fresh processes above every ID
# of the lost history, and no ID of the drill repeats.
# Usage: test_restore_sqlite.sh /path/to/idmint /path/to/idmintd
set -euo pipefail
IDMINT=$1
IDMINTD=${2:?usage: test_restore_sqlite.sh /path/to/idmint /path/to/idmintd}
scale=${IDMINT_TIMEOUT_SCALE:-1}
dir=$(mktemp -d)
trap 'touch "$dir"/*/stop.client 2>/dev/null; kill -9 $(jobs -p) 2>/dev/null || true; [ -n "${KEEP:-}" ] || rm -rf "$dir"' EXIT
fail() {
    echo "FAIL: $*" >&2
    exit 1
}
command -v curl >/dev/null || fail "curl is not installed"
# shellcheck source=../support/restore_drill.sh
. "$(dirname "$0")/../support/restore_drill.sh"
# An http:// minter of each kind beside the CLI ones: the daemon's history
# check (GET /internal/history) must stop it within the same wait.
drill_http=1

# copy_quiesced D: the file and its -wal, as one, while holding the write lock.
copy_quiesced() {
    local d=$1
    sqlite3 "$d/a.db" ".timeout 5000" "BEGIN IMMEDIATE;" \
        ".system cp $d/a.db $d/b.db; [ ! -e $d/a.db-wal ] || cp $d/a.db-wal $d/b.db-wal" \
        "COMMIT;"
}

drill() {
    local mode=$1 d="$dir/$1" rc t0
    mkdir -p "$d"
    export IDMINT_AUTHORITY="sqlite:$d/a.db" IDMINT_WITNESS_DIR="$d/witness"
    "$IDMINT" ns create sf --kind snowflake --layout 41/0/4/12 >/dev/null 2>&1
    "$IDMINT" ns create rg --kind range --block 100 >/dev/null

    drill_daemon "$d"
    drill_start "$d"
    sleep 1.5
    case $mode in
    backup) "$IDMINT" authority backup "$d/b.db" >/dev/null ;;
    *) copy_quiesced "$d" ;;
    esac
    sleep 1.5 # minting goes on past the copy
    if [ "$mode" = stopped ]; then
        touch "$d/stop.client"
        wait "$client_pid" || true
        kill "$daemon_pid" "${drill_pids[@]}"
        wait "$daemon_pid" "${drill_pids[@]}" 2>/dev/null || true
        rm -f "$d/a.db-wal" "$d/a.db-shm"
        cp "$d/b.db" "$d/a.db"
        echo "stopped: every process stopped, the .db alone copied back"
    else
        t0=$(date +%s.%N)
        case $mode in
        backup | online) sqlite3 "$d/a.db" ".timeout 5000" ".restore $d/b.db" ;;
        mv)
            [ ! -e "$d/b.db-wal" ] || mv "$d/b.db-wal" "$d/a.db-wal"
            mv "$d/b.db" "$d/a.db"
            rm -f "$d/a.db-shm"
            ;;
        esac
        drill_stopped "$d" "$mode" "$t0"
    fi

    if [ "$mode" = backup ]; then
        drill_refused "$d" "$mode" "not fenced"
    else
        # "... this host saw write N" when the copy is still behind, "... is not
        # the one this host saw" once a process that had not stopped yet wrote
        # to it: both are the witness's refusal.
        drill_refused "$d" "$mode" "this host saw"
    fi

    # Bad fences change nothing: no --above for rg; one below its next value;
    # (backup) one shorter than the daemon's 600 s lease, which the copy knows.
    local audit_before next_before
    audit_before=$(sqlite3 "$d/a.db" "SELECT count(*) FROM audit")
    next_before=$(sqlite3 "$d/a.db" "SELECT next_value || '/' || floor FROM namespaces WHERE name='rg'")
    rc=0
    "$IDMINT" authority fence 2>"$d/fence.err" || rc=$?
    [ "$rc" = 1 ] && grep -q "needs --above rg=N" "$d/fence.err" || fail "fence without --above: $rc"
    # (The .db alone may hold no reservation yet: then nothing lies below.)
    if [ "${next_before%%/*}" -gt 2 ]; then
        rc=0
        "$IDMINT" authority fence --above rg=1 2>"$d/fence.err" || rc=$?
        [ "$rc" = 1 ] && grep -q "never moves a boundary backwards" "$d/fence.err" ||
            fail "backwards fence: $rc $(cat "$d/fence.err")"
    fi
    if [ "$mode" = backup ]; then
        rc=0
        "$IDMINT" authority fence --above rg=999999999 --max-lease 5 2>"$d/fence.err" || rc=$?
        [ "$rc" = 1 ] && grep -q "shorter than the longest lease .* granted in namespace '[a-z]*' (600 s)" \
            "$d/fence.err" || fail "short fence: $rc $(cat "$d/fence.err")"
        echo "backup: a fence with --max-lease 5 under the daemon's 600 s lease is refused"
    fi
    [ "$(sqlite3 "$d/a.db" "SELECT count(*) FROM audit")" = "$audit_before" ] || fail "a refused fence was audited"
    [ "$(sqlite3 "$d/a.db" "SELECT next_value || '/' || floor FROM namespaces WHERE name='rg'")" = "$next_before" ] ||
        fail "a refused fence moved rg"

    # Every process of the lost history has stopped (drill_stopped): the
    # operator may fence short, and the audit log says so.
    # (The .db alone, copied without its -wal, predates the daemon's lease:
    # it knows of no longer one, so nothing is forced there.)
    drill_fence "$d" "$mode" --max-lease 3 --force-short-lease
    [ "$mode" = stopped ] ||
        sqlite3 "$d/a.db" "SELECT detail FROM audit WHERE action = 'authority.fence'" |
        grep -q "short_lease=forced" || fail "$mode: the forced short fence is not audited"
    [ "$mode" != backup ] || sqlite3 "$d/a.db" "SELECT action FROM audit" | grep -q "authority.backup" ||
        fail "backup not audited"
    drill_fresh "$d" "$mode"
}

drill backup
drill online
drill mv
drill stopped
echo "restore drill: ok"
