#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The default authority is one file for every user of a machine
# (/var/lib/idmint/idmint.db), through the real daemon and CLI:
#  1. a root idmintd on the default and `idmint mint` without --authority as a
#     real non-root uid, at the same time: the CLI is refused with the path and
#     the fix (never a private authority of its own), and once an administrator
#     shares the folder with a group, it mints from the daemon's file; every ID
#     of both, checked together, is distinct;
#  2. the file does not depend on the working directory, HOME or
#     XDG_STATE_HOME, and a new one is announced with its path;
#  3. read-only commands on a default that is not there create nothing.
# /var/lib of this machine is never touched: the script runs itself in a
# private mount namespace with a tmpfs over /var/lib. Needs root (unshare,
# setpriv); exits 77 (skipped) without it.
# Usage: test_default_authority.sh /path/to/idmint (idmintd is found beside it)
set -euo pipefail

IDMINT=$(readlink -f "${1:?usage: test_default_authority.sh /path/to/idmint}")
if [ -z "${IDMINT_TEST_IN_MOUNT_NS:-}" ]; then
    if [ "$(id -u)" -ne 0 ] || ! command -v unshare >/dev/null; then
        echo "SKIP: needs root and unshare(1) for a private /var/lib" >&2
        exit 77
    fi
    exec unshare --mount --propagation private env IDMINT_TEST_IN_MOUNT_NS=1 bash "$0" "$@"
fi
mount -t tmpfs -o mode=755 idmint-test /var/lib

# shellcheck source=../support/daemon.sh
. "$(dirname "$0")/../support/daemon.sh"
IDMINTD="$(dirname "$IDMINT")/idmintd"
# Each user's witness is its own (root's under /var/lib/idmint, here the tmpfs).
unset IDMINT_AUTHORITY IDMINT_TOKEN IDMINT_CONFIG XDG_STATE_HOME IDMINT_WITNESS_DIR
DEF=/var/lib/idmint/idmint.db
N=${IDMINT_DEFAULT_TEST_COUNT:-200000}
T=$(mktemp -d)
chmod 755 "$T"
DAEMON_PID=
cleanup() {
    if [ -n "$DAEMON_PID" ]; then
        kill -TERM "$DAEMON_PID" 2>/dev/null || true
        wait "$DAEMON_PID" 2>/dev/null || true
    fi
    rm -rf "$T"
}
trap cleanup EXIT

die() {
    echo "FAIL: $*" >&2
    [ -f "$T/daemon.log" ] && { echo "--- daemon log (tail) ---"; tail -n 20 "$T/daemon.log"; } >&2
    exit 1
}
ok() { echo "ok: $*"; }
# as_nobody [setpriv group flags] -- CMD...: CMD as uid 65534 with a home of its own.
as_nobody() {
    local groups=(--clear-groups)
    if [ "$1" != "--" ]; then
        groups=("$1")
        shift
    fi
    shift
    setpriv --reuid=65534 --regid=65534 "${groups[@]}" env HOME="$T/nobody" "$@"
}
mkdir "$T/nobody" "$T/a" "$T/b"
chown 65534:65534 "$T/nobody" "$T/a" "$T/b"

# ---- 3. read-only commands on a default that is not there create nothing ----
for cmd in "ns list" "ns show orders" "workers orders" "decode 4504699138998278"; do
    # shellcheck disable=SC2086 # the command's words
    "$IDMINT" $cmd >/dev/null 2>"$T/err" && die "$cmd on a missing default succeeded"
    grep -q "no authority at $DEF yet" "$T/err" || die "$cmd on a missing default: $(cat "$T/err")"
done
[ ! -e /var/lib/idmint ] || die "read-only commands created /var/lib/idmint"
ok "read-only commands on a missing default name $DEF and create nothing"

# ---- 1. a root daemon on the default, a non-root CLI at the same time ----
start_listening DAEMON_PID PORT 3 "$T/port" "$T/daemon.log" \
    "$IDMINTD" --listen 127.0.0.1:0 --port-file "$T/port" ||
    die "idmintd did not start on the default authority"
grep -q "created a new, empty authority.*authority=\"sqlite:$DEF\"" "$T/daemon.log" ||
    die "the daemon did not announce the authority it created"
grep -q "listening on .*authority=\"sqlite:$DEF\"" "$T/daemon.log" ||
    die "the daemon's start-up line does not name $DEF"
[ -s "$DEF" ] || die "the daemon did not create $DEF"
[ "$(stat -c %a /var/lib/idmint)" = 750 ] || die "/var/lib/idmint is $(stat -c %a /var/lib/idmint)"
# Whatever root's umask: the group it is shared with must be able to write it
# (a root CLI that made it first left 0640, and the service user out).
for f in "$DEF" "$DEF-wal" "$DEF-shm"; do
    [ "$(stat -c %a "$f")" = 660 ] || die "$f is $(stat -c %a "$f"), not 660"
done
ok "a root idmintd created, announced and named $DEF (folder 750, file, -wal and -shm 660)"

mint_http() { # mint_http OUT: N IDs from the daemon in batches
    local left=$N c
    : >"$1"
    while [ "$left" -gt 0 ]; do
        c=$((left < 10000 ? left : 10000))
        curl -fsS -H 'Accept: text/plain' "http://127.0.0.1:$PORT/v1/ids?count=$c" >>"$1" ||
            return 1
        left=$((left - c))
    done
}
mint_http "$T/daemon1.ids" &
http_pid=$!
rc=0
(cd "$T/a" && as_nobody -- "$IDMINT" mint -n "$N") >"$T/cli1.ids" 2>"$T/err" || rc=$?
wait "$http_pid" || die "minting over HTTP failed"
[ "$rc" -eq 1 ] || die "non-root mint on the root-only default: exit $rc, not 1"
[ ! -s "$T/cli1.ids" ] || die "the refused CLI printed IDs"
for want in "$DEF" "Permission denied" "chmod 2770 /var/lib/idmint" "adduser" "--authority"; do
    grep -qF -- "$want" "$T/err" || die "the refusal does not say '$want': $(cat "$T/err")"
done
[ -z "$(find "$T/nobody" "$T/a" -mindepth 1)" ] ||
    die "the refused CLI left files: $(find "$T/nobody" "$T/a" -mindepth 1)"
ok "non-root idmint mint on the root-only default: refused with the path and the fix, nothing made"

# The administrator shares the default with a group; the CLI now mints from it.
# Only the folder: the files are group-writable already.
chgrp -R users /var/lib/idmint
chmod 2770 /var/lib/idmint
mint_http "$T/daemon2.ids" &
http_pid=$!
(cd "$T/b" && as_nobody --groups=users -- "$IDMINT" mint -n "$N") >"$T/cli2.ids" 2>"$T/err" ||
    die "non-root mint in the sharing group failed: $(cat "$T/err")"
wait "$http_pid" || die "minting over HTTP failed"
[ "$(wc -l <"$T/cli2.ids")" -eq "$N" ] || die "the CLI printed $(wc -l <"$T/cli2.ids") IDs, not $N"
takes=$(sqlite3 "$DEF" "SELECT count(*) FROM audit WHERE action = 'worker.take' AND actor LIKE '%65534%'")
[ "$takes" -ge 1 ] || die "the group member's lease is not in $DEF: it minted elsewhere"
cat "$T/daemon1.ids" "$T/daemon2.ids" "$T/cli2.ids" | "$IDMINT" verify >"$T/verify" ||
    die "verify: $(cat "$T/verify")"
total=$((3 * N))
grep -q "^count=$total duplicates=0 " "$T/verify" || die "verify: $(cat "$T/verify")"
ok "a group member's CLI and the root daemon minted $total IDs from $DEF at once: 0 duplicates"

# ---- 2. one file whatever the working directory, HOME or XDG_STATE_HOME ----
(cd "$T/a" && as_nobody --groups=users -- XDG_STATE_HOME="$T/nobody/xdg" "$IDMINT" mint -n 1) \
    >/dev/null 2>"$T/err" || die "mint with XDG_STATE_HOME set: $(cat "$T/err")"
(cd / && HOME=/root "$IDMINT" mint -n 1) >/dev/null || die "root mint from / failed"
[ -z "$(find "$T/nobody" "$T/a" "$T/b" -name '*.db')" ] || die "a private authority appeared"
[ "$(ls /var/lib)" = idmint ] || die "/var/lib holds $(ls /var/lib)"
ok "no HOME, XDG_STATE_HOME or working directory moves the default"
