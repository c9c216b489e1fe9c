#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `idmint authority backup` killed at any point (issue 28 item 3): DEST is
# either absent or a complete, marked, self-contained file. The store is made
# big (a filler table idmint never reads) so that a backup takes a while, and
# the backup is killed with SIGKILL at fractions of the time a whole one
# takes (the last one runs to its end). Every DEST that exists must have no -wal beside it, and a copy of
# the .db alone must refuse to grant until fenced.
# Usage: test_restore_backup_kill.sh /path/to/idmint
set -euo pipefail
IDMINT=$1
d=$(mktemp -d)
trap 'kill -9 $(jobs -p) 2>/dev/null || true; rm -rf "$d"' EXIT
fail() {
    echo "FAIL: $*" >&2
    exit 1
}
export IDMINT_AUTHORITY="sqlite:$d/a.db" IDMINT_WITNESS_DIR="$d/witness"
"$IDMINT" ns create rg --kind range >/dev/null 2>&1
"$IDMINT" mint --ns rg -n 10 >/dev/null
sqlite3 "$d/a.db" "CREATE TABLE filler (b BLOB);
    WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 3000)
    INSERT INTO filler SELECT randomblob(16384) FROM c;"

t0=$(date +%s%N)
"$IDMINT" authority backup "$d/whole.db" >/dev/null
whole_ms=$((($(date +%s%N) - t0) / 1000000))
rm -f "$d/whole.db"

absent=0 complete=0
for i in $(seq 0 11); do
    dest="$d/b$i.db"
    "$IDMINT" authority backup "$dest" >/dev/null 2>&1 &
    pid=$!
    # The last one runs to its end: the time measured once above is no
    # promise on a busy machine, and the drill needs a finished copy too.
    if [ "$i" -lt 11 ]; then
        sleep "$(awk -v ms="$whole_ms" -v i="$i" 'BEGIN { printf "%.3f", ms * i / 10 / 1000 }')"
        kill -9 "$pid" 2>/dev/null || true
    fi
    wait "$pid" 2>/dev/null || true
    if [ ! -e "$dest" ]; then
        absent=$((absent + 1))
        continue
    fi
    complete=$((complete + 1))
    [ ! -e "$dest-wal" ] || fail "backup $i: $dest has a -wal beside it"
    cp "$dest" "$d/alone$i.db"
    [ "$(sqlite3 "$d/alone$i.db" "SELECT backup_ms != 0 FROM history")" = 1 ] ||
        fail "backup $i: a copy of the .db alone is not marked"
    [ "$(sqlite3 "$d/alone$i.db" "SELECT count(*) FROM filler")" = 3000 ] ||
        fail "backup $i: the copy is not complete"
    rc=0
    "$IDMINT" mint --authority "sqlite:$d/alone$i.db" --ns rg -n 1 >"$d/out" 2>"$d/err" || rc=$?
    [ "$rc" = 1 ] && [ ! -s "$d/out" ] && grep -q "not fenced" "$d/err" ||
        fail "backup $i: the copy granted ($rc): $(cat "$d/err")"
done
echo "backup killed 11 times over ${whole_ms} ms and run to its end once: $absent left nothing at DEST, $complete left a complete, marked, self-contained copy"
[ "$absent" -ge 1 ] || fail "no backup was killed before it finished: the drill proves nothing"
[ "$complete" -ge 1 ] || fail "no backup finished: the drill proves nothing"
echo "backup kill drill: ok"
