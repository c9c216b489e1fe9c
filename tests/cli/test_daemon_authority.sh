#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A misconfigured authority is the server's error, found at start: idmintd
# exits 2 naming the reason when its authority URL is malformed (flag,
# environment or config file) or its SQLite path can never be opened (a
# folder that is not there, a file this user may not use), and creates
# nothing. A store that is only unreachable leaves it up with /readyz red,
# and mints answer 503 "unavailable", never 4xx.
# Usage: test_daemon_authority.sh /path/to/idmint (idmintd is found beside it)
set -euo pipefail
# shellcheck source=../support/daemon.sh
. "$(dirname "$0")/../support/daemon.sh"
IDMINT=$(readlink -f "${1:?usage: test_daemon_authority.sh /path/to/idmint}")
IDMINTD="$(dirname "$IDMINT")/idmintd"
unset IDMINT_AUTHORITY IDMINT_TOKEN IDMINT_CONFIG
T=$(mktemp -d)
DAEMON_PID=
cleanup() {
    if [ -n "$DAEMON_PID" ]; then
        kill -TERM "$DAEMON_PID" 2>/dev/null || true
        wait "$DAEMON_PID" 2>/dev/null || true
    fi
    rm -rf "$T"
}
trap cleanup EXIT
die() { echo "FAIL: $*" >&2; exit 1; }

# refused WHAT REGEX CMD...: CMD (an idmintd) exits 2 at once, stderr matching REGEX.
refused() {
    local what=$1 re=$2 rc=0
    shift 2
    timeout 20 "$@" --listen 127.0.0.1:0 --port-file "$T/port" >"$T/out" 2>"$T/err" || rc=$?
    [ "$rc" -eq 2 ] || die "$what: exit status $rc, not 2 (stderr: $(cat "$T/err"))"
    grep -Eq "$re" "$T/err" || die "$what: stderr does not match /$re/: $(cat "$T/err")"
    [ ! -e "$T/port" ] || die "$what: the daemon listened before refusing"
    echo "ok: $what: exit 2, $(head -n 1 "$T/err" | cut -c1-110)"
}

refused "a path without a scheme" "has no scheme" "$IDMINTD" --authority "$T/ids.db"
refused "an unknown scheme" "unknown scheme 'mysql'" "$IDMINTD" --authority mysql://db/ids
refused "IDMINT_AUTHORITY without a scheme" "has no scheme" env IDMINT_AUTHORITY=ids.db "$IDMINTD"
printf '[authority]\nurl = sqlite:\n' >"$T/bad.conf"
refused "an empty location in the config file" "empty location" "$IDMINTD" --config "$T/bad.conf"
refused "a folder that does not exist" "the folder of $T/missing/ids.db does not exist" \
    "$IDMINTD" --authority "sqlite:$T/missing/ids.db"
[ ! -e "$T/missing" ] && [ ! -e "$T/ids.db" ] || die "a refused start created files"
if [ "$(id -u)" -eq 0 ]; then
    mkdir -m 700 "$T/private"
    "$IDMINT" --authority "sqlite:$T/private/ids.db" ns list >/dev/null 2>&1 || true
    chmod 755 "$T"
    refused "a folder this user may not enter" "Permission denied.*chmod 2770" \
        setpriv --reuid=65534 --regid=65534 --clear-groups "$IDMINTD" --authority "sqlite:$T/private/ids.db"
fi

# Unreachable, not misconfigured: up, unready, 503 for every store-bound call.
start_listening DAEMON_PID PORT 3 "$T/port" "$T/daemon.log" \
    "$IDMINTD" --authority "postgres://idmint:s3cret@127.0.0.1:1/ids" --listen 127.0.0.1:0 \
    --port-file "$T/port" || die "idmintd did not stay up on an unreachable store: $(cat "$T/daemon.log")"
grep -q 'authority="postgres://idmint:\*\*\*@127.0.0.1:1/ids"' "$T/daemon.log" ||
    die "the start-up log does not name the authority with its password masked"
! grep -q s3cret "$T/daemon.log" || die "the log shows the password"
code=$(curl -s -o "$T/body" -w '%{http_code}' "http://127.0.0.1:$PORT/readyz")
[ "$code" = 503 ] || die "/readyz answered $code on an unreachable store"
for url in "/v1/ids?count=2" "/v1/ids?namespace=other"; do
    code=$(curl -s -o "$T/body" -w '%{http_code}' "http://127.0.0.1:$PORT$url")
    [ "$code" = 503 ] && grep -q '"code":"unavailable"' "$T/body" ||
        die "GET $url on an unreachable store: $code $(cat "$T/body")"
done
echo "ok: an unreachable store: idmintd up, /readyz 503, mints 503 unavailable, password masked"
