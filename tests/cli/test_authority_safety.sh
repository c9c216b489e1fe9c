#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Authorities that would mint duplicates are refused, through the real CLI
# and daemon: a memory database; the default file, which must not depend on
# the working directory (test_default_authority.sh); read-only commands, which create nothing; a file
# that is empty or another application's database; and a database file
# removed under a running idmintd, whose next write must fail out loud.
# Usage: test_authority_safety.sh /path/to/idmint (idmintd is found beside it)
set -euo pipefail
# shellcheck source=../support/daemon.sh
. "$(dirname "$0")/../support/daemon.sh"

IDMINT=${1:?usage: test_authority_safety.sh /path/to/idmint}
IDMINTD="$(dirname "$IDMINT")/idmintd"
unset IDMINT_AUTHORITY IDMINT_TOKEN IDMINT_CONFIG XDG_STATE_HOME
T=$(mktemp -d)
DAEMON_PID=
cleanup() {
    if [ -n "$DAEMON_PID" ]; then
        kill -9 "$DAEMON_PID" 2>/dev/null || true
    fi
    rm -rf "$T"
}
trap cleanup EXIT

die() {
    echo "FAIL: $*" >&2
    if [ -f "$T/daemon.log" ]; then
        echo "--- daemon log (tail) ---" >&2
        tail -n 20 "$T/daemon.log" >&2
    fi
    exit 1
}

# expect_fail WHAT REGEX CMD...: CMD exits 1 and its stderr matches REGEX.
expect_fail() {
    local what=$1 re=$2 rc=0
    shift 2
    "$@" >"$T/out" 2>"$T/err" || rc=$?
    [ "$rc" -eq 1 ] || die "$what: exit status $rc, not 1 (stderr: $(cat "$T/err"))"
    grep -Eq "$re" "$T/err" || die "$what: stderr does not match /$re/: $(cat "$T/err")"
}

[ -x "$IDMINTD" ] || die "no idmintd beside $IDMINT"

# ---- 1. a database private to one process ----
for url in sqlite::memory: sqlite:file::memory: 'sqlite:file:ids.db?mode=memory'; do
    (cd "$T" && expect_fail "mint on $url" 'every process would get its own empty authority' \
        "$IDMINT" --authority "$url" mint -n 1)
    [ ! -s "$T/out" ] || die "mint on $url printed IDs: $(cat "$T/out")"
done
(cd "$T" && IDMINT_AUTHORITY=sqlite::memory: expect_fail "IDMINT_AUTHORITY=sqlite::memory:" \
    'use a file path' "$IDMINT" ns create x --kind range)
[ ! -e "$T/ids.db" ] || die "mode=memory left a file ids.db"

# ---- 2. the default authority: tests/cli/test_default_authority.sh ----

# ---- 3. read-only commands create nothing ----
mkdir "$T/ro"
for cmd in "decode 4504699138998278" "ns list" "ns show orders" "workers orders"; do
    # shellcheck disable=SC2086 # the command's words
    expect_fail "$cmd on a missing file" \
        "no authority at $T/ro/missing.db yet: nothing has been created there" \
        "$IDMINT" --authority "sqlite:$T/ro/missing.db" $cmd
done
[ -z "$(ls -A "$T/ro")" ] || die "read-only commands created: $(ls -A "$T/ro")"
# On an existing authority, decode and ns show read "default" without creating it.
"$IDMINT" --authority "sqlite:$T/ro2.db" ns create other --kind range >/dev/null
"$IDMINT" --authority "sqlite:$T/ro2.db" decode 4504699138998278 >/dev/null ||
    die "decode with the default layout failed on an authority without 'default'"
expect_fail "ns show of a default not created yet" "does not exist yet" \
    "$IDMINT" --authority "sqlite:$T/ro2.db" ns show default
"$IDMINT" --authority "sqlite:$T/ro2.db" ns list | grep -q '^default' &&
    die "decode or ns show created the namespace 'default'"

# ---- a file that is there but is no idmint authority ----
: >"$T/empty.db"
expect_fail "mint on a 0-byte file" "sqlite $T/empty.db: exists but is empty \\(0 bytes\\)" \
    "$IDMINT" --authority "sqlite:$T/empty.db" mint -n 1
expect_fail "ns list on a 0-byte file" 'remove it to start a new, empty authority' \
    "$IDMINT" --authority "sqlite:$T/empty.db" ns list
[ ! -s "$T/empty.db" ] || die "the 0-byte file was written to"
sqlite3 "$T/other.db" "CREATE TABLE customers (id INTEGER); INSERT INTO customers VALUES (7);"
sum=$(cksum <"$T/other.db")
expect_fail "mint on another database" "sqlite $T/other.db: .*not an idmint authority" \
    "$IDMINT" --authority "sqlite:$T/other.db" mint -n 1
[ "$(cksum <"$T/other.db")" = "$sum" ] || die "the other application's database was changed"
[ ! -e "$T/other.db-wal" ] || die "the other application's database was switched to WAL"

# ---- 5. the database file removed under a running idmintd ----
mkdir "$T/d"
start_listening DAEMON_PID PORT 3 "$T/port" "$T/daemon.log" \
    "$IDMINTD" --authority "sqlite:$T/d/idmint.db" --listen 127.0.0.1:0 --port-file "$T/port" ||
    die "idmintd did not start"
URL="http://127.0.0.1:$PORT"
code=$(curl -s -o "$T/body" -w '%{http_code}' -H 'Content-Type: application/json' \
    -d '{"name":"before","kind":"range"}' "$URL/v1/namespaces")
[ "$code" = 201 ] || die "creating a namespace: HTTP $code: $(cat "$T/body")"
rm "$T/d/idmint.db"
code=$(curl -s -o "$T/body" -w '%{http_code}' -H 'Content-Type: application/json' \
    -d '{"name":"after","kind":"range"}' "$URL/v1/namespaces")
case "$code" in 5??) ;; *) die "a write to a removed file got HTTP $code: $(cat "$T/body")" ;; esac
# Whichever store thread takes it: one whose connection was open sees the file
# go ("removed or replaced while in use; refusing to write"), a fresh one is
# refused a new, empty authority ("removed or replaced while idmintd ran").
grep -Eq 'removed or replaced while (in use; refusing to write|idmintd ran; refusing to start a new, empty one)' "$T/body" ||
    die "the error does not say why: $(cat "$T/body")"
# Nothing was written: a store thread that has the removed file open still
# lists 'before' and not 'after'; one that has not is refused, as above.
code=$(curl -s -o "$T/list" -w '%{http_code}' "$URL/v1/namespaces")
case "$code" in
200) grep -q '"before"' "$T/list" || die "the listing lost 'before': $(cat "$T/list")" ;;
503) grep -q 'removed or replaced while' "$T/list" || die "a 503 listing without why: $(cat "$T/list")" ;;
*) die "listing namespaces: HTTP $code: $(cat "$T/list")" ;;
esac
! grep -q '"after"' "$T/list" || die "'after' was written to the removed file: $(cat "$T/list")"
[ ! -e "$T/d/idmint.db" ] || die "a database came back at the removed path"
kill -TERM "$DAEMON_PID" 2>/dev/null || true
wait "$DAEMON_PID" 2>/dev/null || true
DAEMON_PID=

# ---- a new authority is never readable by others, whatever the umask; its
# group (the service group it is shared with) may write it, so that a root
# that creates it first does not lock the daemon's user out ----
(umask 000 && "$IDMINT" --authority "sqlite:$T/modes.db" mint -n 1 >/dev/null) ||
    die "mint on a new file under umask 000 failed"
for f in "$T/modes.db" "$T/modes.db-wal" "$T/modes.db-shm"; do
    [ -e "$f" ] || continue
    mode=$(stat -c %a "$f")
    [ "$mode" = 660 ] || die "$f was created with mode $mode under umask 000, not 660"
done

echo "authority safety: all checks passed"
