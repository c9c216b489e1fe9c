#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Authorities that would mint duplicates are refused, through the real CLI
# and daemon: a memory database; the default file, which must not depend on
# the working directory; read-only commands, which create nothing; a file
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

# ---- 2. the default authority: one file per user, whatever the working directory ----
# As root the default is /var/lib/idmint, which a test must not touch: the
# per-user default is exercised as an unprivileged user (nobody).
as_user() {
    if [ "$(id -u)" -eq 0 ]; then
        setpriv --reuid=65534 --regid=65534 --clear-groups env "$@"
    else
        env "$@"
    fi
}
chmod 755 "$T"
mkdir -p "$T/home" "$T/a" "$T/b" "$T/xdg" "$T/home2"
[ "$(id -u)" -ne 0 ] || chown 65534:65534 "$T/home" "$T/a" "$T/b" "$T/xdg" "$T/home2"
(cd "$T/a" && as_user HOME="$T/home" "$IDMINT" mint -n 500) >"$T/ids_a" ||
    die "mint with the default authority from $T/a failed"
(cd "$T/b" && as_user HOME="$T/home" "$IDMINT" mint -n 500) >"$T/ids_b" ||
    die "mint with the default authority from $T/b failed"
DEF="$T/home/.local/state/idmint/idmint.db"
[ -s "$DEF" ] || die "no default authority at $DEF: $(find "$T/home")"
[ "$(stat -c %a "$T/home/.local/state/idmint")" = 700 ] ||
    die "the default's folder is mode $(stat -c %a "$T/home/.local/state/idmint"), not 700"
[ -z "$(ls -A "$T/a")" ] && [ -z "$(ls -A "$T/b")" ] ||
    die "a working directory got a file: $(ls -A "$T/a" "$T/b")"
[ "$(wc -l <"$T/ids_a")" -eq 500 ] && [ "$(wc -l <"$T/ids_b")" -eq 500 ] ||
    die "expected 500 IDs from each run"
cat "$T/ids_a" "$T/ids_b" | "$IDMINT" verify >"$T/verify" || die "verify: $(cat "$T/verify")"
grep -q '^count=1000 duplicates=0 ' "$T/verify" || die "verify: $(cat "$T/verify")"
# Both runs took worker ids from one file: two leases were recorded there.
[ "$(sqlite3 "$DEF" "SELECT count(*) FROM audit WHERE action = 'worker.take'")" -eq 2 ] ||
    die "the two runs did not share $DEF"
# XDG_STATE_HOME (absolute) comes first.
(cd "$T/a" && as_user HOME="$T/home" XDG_STATE_HOME="$T/xdg" "$IDMINT" mint -n 1) >/dev/null ||
    die "mint with XDG_STATE_HOME failed"
[ -s "$T/xdg/idmint/idmint.db" ] || die "XDG_STATE_HOME was not used: $(find "$T/xdg")"

# ---- 3. read-only commands create nothing ----
mkdir "$T/ro"
for cmd in "decode 4504699138998278" "ns list" "ns show orders" "workers orders"; do
    # shellcheck disable=SC2086 # the command's words
    expect_fail "$cmd on a missing file" \
        "no authority at $T/ro/missing.db yet: nothing has been created there" \
        "$IDMINT" --authority "sqlite:$T/ro/missing.db" $cmd
    # shellcheck disable=SC2086
    (cd "$T/home2" && as_user HOME="$T/home2" "$IDMINT" $cmd) 2>"$T/err" >/dev/null && die \
        "$cmd on a missing default succeeded"
    grep -q "no authority at $T/home2/.local/state/idmint/idmint.db yet" "$T/err" ||
        die "$cmd on a missing default: $(cat "$T/err")"
done
[ -z "$(ls -A "$T/ro")" ] || die "read-only commands created: $(ls -A "$T/ro")"
[ -z "$(ls -A "$T/home2")" ] || die "read-only commands created: $(find "$T/home2")"
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

# ---- a new authority is never readable by others, whatever the umask ----
(umask 000 && "$IDMINT" --authority "sqlite:$T/modes.db" mint -n 1 >/dev/null) ||
    die "mint on a new file under umask 000 failed"
for f in "$T/modes.db" "$T/modes.db-wal" "$T/modes.db-shm"; do
    [ -e "$f" ] || continue
    mode=$(stat -c %a "$f")
    [ "$mode" = 640 ] || die "$f was created with mode $mode under umask 000, not 640"
done

echo "authority safety: all checks passed"
