#!/usr/bin/env bash
# The restore drill on SQLite (docs/operations.md "Backups and restores"):
# 4 processes mint (snowflake and range, short renew and refill intervals),
# a copy is taken, minting goes on, and the copy is put back under the
# running processes with SQLite's online restore. Every live process must
# stop at its next contact with the explicit error; the restored store
# refuses (when the copy came from `idmint authority backup`) until
# `idmint authority fence` runs; a bad fence is refused and changes
# nothing; after the fence, fresh processes mint; and no ID of the whole
# drill is issued twice. Run twice: with the backup command, and with a
# plain `cp` of the quiesced file (an unmarked copy, caught by the history
# counter alone).
# Usage: test_restore_sqlite.sh /path/to/idmint [/path/to/idmintd]
set -euo pipefail
IDMINT=$1
scale=${IDMINT_TIMEOUT_SCALE:-1}
dir=$(mktemp -d)
trap 'kill -9 $(jobs -p) 2>/dev/null || true; [ -n "${KEEP:-}" ] || rm -rf "$dir"' EXIT
fail() {
    echo "FAIL: $*" >&2
    exit 1
}
# shellcheck source=../support/restore_drill.sh
. "$(dirname "$0")/../support/restore_drill.sh"

drill() {
    local mode=$1 d="$dir/$1" rc
    mkdir -p "$d"
    export IDMINT_AUTHORITY="sqlite:$d/a.db"
    "$IDMINT" ns create sf --kind snowflake --layout 41/0/4/12 >/dev/null
    "$IDMINT" ns create rg --kind range --block 100 >/dev/null

    drill_start "$d"
    sleep 1.5
    if [ "$mode" = backup ]; then
        "$IDMINT" authority backup "$d/b.db" >/dev/null
    else
        # Quiesced: holding the write lock, copy the file and its WAL as one.
        sqlite3 "$d/a.db" ".timeout 5000" "BEGIN IMMEDIATE;" \
            ".system cp $d/a.db $d/b.db; [ ! -e $d/a.db-wal ] || cp $d/a.db-wal $d/b.db-wal" \
            "COMMIT;"
    fi
    sleep 1.5 # minting goes on past the copy
    sqlite3 "$d/a.db" ".timeout 5000" ".restore $d/b.db"
    local restored=$SECONDS

    drill_stopped "$d" "$mode"
    [ $((SECONDS - restored)) -le $((5 * scale)) ] || fail "$mode: minters took $((SECONDS - restored)) s to stop"
    echo "$mode: all 4 live processes stopped at their next contact"

    if [ "$mode" = backup ]; then
        for ns in sf rg; do
            rc=0
            "$IDMINT" mint --ns "$ns" -n 5 >"$d/refused" 2>"$d/refused.err" || rc=$?
            [ "$rc" = 1 ] && [ ! -s "$d/refused" ] || fail "restored backup minted from $ns"
            grep -q "not fenced" "$d/refused.err" || fail "refusal: $(cat "$d/refused.err")"
        done
        echo "backup: the restored store refuses takes and reservations until fenced"
    fi

    # Bad fences change nothing: no --above for rg; one below its next value.
    local audit_before next_before max_rg
    audit_before=$(sqlite3 "$d/a.db" "SELECT count(*) FROM audit")
    next_before=$(sqlite3 "$d/a.db" "SELECT next_value || '/' || floor FROM namespaces WHERE name='rg'")
    rc=0
    "$IDMINT" authority fence 2>"$d/fence.err" || rc=$?
    [ "$rc" = 1 ] && grep -q "needs --above rg=N" "$d/fence.err" || fail "fence without --above: $rc"
    rc=0
    "$IDMINT" authority fence --above rg=1 2>"$d/fence.err" || rc=$?
    [ "$rc" = 1 ] && grep -q "never moves a boundary backwards" "$d/fence.err" ||
        fail "backwards fence: $rc $(cat "$d/fence.err")"
    [ "$(sqlite3 "$d/a.db" "SELECT count(*) FROM audit")" = "$audit_before" ] || fail "a refused fence was audited"
    [ "$(sqlite3 "$d/a.db" "SELECT next_value || '/' || floor FROM namespaces WHERE name='rg'")" = "$next_before" ] ||
        fail "a refused fence moved rg"

    # The operator fences above the highest ID in use downstream.
    max_rg=$(cat "$d"/lost.rg.* | sort -n | tail -1)
    # Handles size their blocks to their rate, so the restored store may already
    # stand above the highest ID printed: never fence below it (it would refuse).
    next_rg=$("$IDMINT" ns show rg | awk '$1 == "next:" {print $2}')
    [ "$((next_rg - 1))" -le "$max_rg" ] || max_rg=$((next_rg - 1))
    "$IDMINT" authority fence --above "rg=$max_rg" --max-lease 3 >/dev/null
    sqlite3 "$d/a.db" "SELECT action FROM audit" | grep -q "authority.fence" || fail "fence not audited"
    [ "$mode" != backup ] || sqlite3 "$d/a.db" "SELECT action FROM audit" | grep -q "authority.backup" ||
        fail "backup not audited"

    drill_fresh "$d" "$mode"
}

drill backup
drill cp
echo "restore drill: ok"
