#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The http:// store backend against a real idmintd on loopback: namespaces,
# workers, minting from a snowflake and a range namespace through the
# library (the CLI), decode, disable/enable, error codes mapped back; then
# bearer tokens (right, wrong, missing, too small a role). SIGTERM exits 0.
# Usage: test_http_backend.sh /path/to/idmintd /path/to/idmint
set -euo pipefail
# shellcheck source=../support/daemon.sh
. "$(dirname "$0")/../support/daemon.sh"

IDMINTD=${1:?usage: test_http_backend.sh /path/to/idmintd /path/to/idmint}
IDMINT=${2:?usage: test_http_backend.sh /path/to/idmintd /path/to/idmint}
SCALE=${IDMINT_TIMEOUT_SCALE:-1}
unset IDMINT_TOKEN IDMINT_AUTHORITY
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

# expect_line FILE REGEX WHAT
expect_line() {
    grep -Eq "$2" "$1" || die "$3: no line matching /$2/ in: $(cat "$1")"
}

# start_daemon NAME [extra idmintd flags...]: start on an ephemeral loopback
# port and wait (bounded) for the port file; sets DAEMON_PID and URL.
start_daemon() {
    local name=$1 port
    shift
    rm -f "$T/port"
    "$IDMINTD" --listen 127.0.0.1:0 --port-file "$T/port" \
        --authority "sqlite:$T/$name.db" "$@" >>"$T/daemon.log" 2>&1 &
    DAEMON_PID=$!
    port=$(wait_port "$DAEMON_PID" "$T/port" $((200 * SCALE))) ||
        die "idmintd exited or wrote no port to $T/port within $((10 * SCALE)) s"
    URL="http://127.0.0.1:$port"
}

# stop_daemon: SIGTERM drains and must exit 0.
stop_daemon() {
    local rc=0
    kill -TERM "$DAEMON_PID"
    wait "$DAEMON_PID" || rc=$?
    DAEMON_PID=
    [ "$rc" -eq 0 ] || die "idmintd exited $rc after SIGTERM"
}

# fails_with WHAT TEXT CMD...: CMD must exit 1 and print TEXT on stderr.
fails_with() {
    local what=$1 text=$2 rc=0
    shift 2
    "$@" >"$T/out" 2>"$T/err" || rc=$?
    [ "$rc" -eq 1 ] || die "$what: exit $rc, expected 1 (stderr: $(cat "$T/err"))"
    grep -qF "$text" "$T/err" || die "$what: stderr lacks '$text': $(cat "$T/err")"
}

# ==== open daemon: every route allowed on loopback ====

start_daemon open
A=(--authority "$URL")

"$IDMINT" ns create snow --kind snowflake "${A[@]}" >/dev/null 2>"$T/err" ||
    die "ns create snow over http failed: $(cat "$T/err")"
"$IDMINT" ns create rng --kind range --start 100 --max 999999999 --block 1000 \
    --max-block 5000 "${A[@]}" >/dev/null 2>"$T/err" ||
    die "ns create rng over http failed: $(cat "$T/err")"
fails_with "ns create of an existing name" "conflicting request" \
    "$IDMINT" ns create snow --kind snowflake "${A[@]}"

# The audit log over http:// pages by 1000; 1005 more records take two pages.
AUDIT_CHECK=${IDMINT_AUDIT_CHECK:?IDMINT_AUDIT_CHECK names the audit_check binary}
"$AUDIT_CHECK" "$URL" "sqlite:$T/open.db" 1005 >"$T/audit" 2>&1 ||
    die "audit over http: $(cat "$T/audit")"

"$IDMINT" ns list "${A[@]}" >"$T/list" || die "ns list over http failed"
expect_line "$T/list" '^snow snowflake enabled layout=41/0/10/12 ' "ns list (snow)"
expect_line "$T/list" '^rng range enabled next=100 max=999999999$' "ns list (rng)"
"$IDMINT" ns show snow "${A[@]}" >"$T/show" || die "ns show snow over http failed"
expect_line "$T/show" '^name: snow$' "ns show name"
expect_line "$T/show" '^layout: 41/0/10/12$' "ns show layout"
expect_line "$T/show" '^epoch: 2026-01-01T00:00:00.000Z$' "ns show epoch"
fails_with "ns show of a missing namespace" "namespace not found" \
    "$IDMINT" ns show nope "${A[@]}"

# 100000 from each kind, through the library's http:// backend.
"$IDMINT" mint -n 100000 --ns snow "${A[@]}" >"$T/snow.ids" 2>"$T/err" ||
    die "mint from snow over http failed: $(cat "$T/err")"
"$IDMINT" mint -n 100000 --ns rng "${A[@]}" >"$T/rng.ids" 2>"$T/err" ||
    die "mint from rng over http failed: $(cat "$T/err")"
for ns in snow rng; do
    n=$(wc -l <"$T/$ns.ids")
    [ "$n" -eq 100000 ] || die "$ns: $n IDs, expected 100000"
    dups=$(sort "$T/$ns.ids" | uniq -d | wc -l)
    [ "$dups" -eq 0 ] || die "$ns: $dups duplicate IDs"
    "$IDMINT" verify <"$T/$ns.ids" >"$T/verify" || die "$ns: verify failed: $(cat "$T/verify")"
    expect_line "$T/verify" "count=100000 duplicates=0" "$ns verify"
done
[ "$(head -n1 "$T/rng.ids")" = 100 ] || die "rng: first ID $(head -n1 "$T/rng.ids"), expected 100"
# About 100 reservations; the handle deleted their request records in the
# daemon's store through /internal/ranges/forget, the last ones as it closed.
left=$(sqlite3 "$T/open.db" "SELECT count(*) FROM range_leases WHERE namespace = 'rng'") ||
    die "cannot count request records in $T/open.db"
[ "$left" -eq 0 ] || die "rng: $left request records left after the handle closed"

# The mint above released its lease: the row is there with no holder.
"$IDMINT" workers snow "${A[@]}" >"$T/workers" || die "workers over http failed"
expect_line "$T/workers" '^region=0 worker=0 holder=- generation=1 lease_until=' "workers row"

first=$(head -n1 "$T/snow.ids")
"$IDMINT" decode --ns snow "${A[@]}" "$first" >"$T/decode" || die "decode over http failed"
expect_line "$T/decode" "^$first time=20[0-9-]+T[0-9:.]+Z unix_ms=[0-9]+ region=0 worker=0 sequence=0$" \
    "decode"

# Disabled: the library's take fails with the mapped code; enabled again: mints.
"$IDMINT" ns disable snow "${A[@]}" >/dev/null || die "ns disable over http failed"
"$IDMINT" ns show snow "${A[@]}" >"$T/show" || die "ns show after disable failed"
expect_line "$T/show" '^state: disabled$' "ns show after disable"
fails_with "mint from a disabled namespace" "namespace disabled" \
    "$IDMINT" mint -n 10 --ns snow "${A[@]}"
"$IDMINT" ns disable rng "${A[@]}" >/dev/null || die "ns disable rng over http failed"
fails_with "mint from a disabled range namespace" "namespace disabled" \
    "$IDMINT" mint -n 10 --ns rng "${A[@]}"
"$IDMINT" ns enable snow "${A[@]}" >/dev/null || die "ns enable snow over http failed"
"$IDMINT" ns enable rng "${A[@]}" >/dev/null || die "ns enable rng over http failed"
"$IDMINT" mint -n 1000 --ns snow "${A[@]}" >"$T/snow2.ids" 2>"$T/err" ||
    die "mint after enable failed: $(cat "$T/err")"
"$IDMINT" mint -n 1000 --ns rng "${A[@]}" >"$T/rng2.ids" 2>"$T/err" ||
    die "mint from rng after enable failed: $(cat "$T/err")"
for ns in snow rng; do
    dups=$(cat "$T/$ns.ids" "$T/${ns}2.ids" | sort | uniq -d | wc -l)
    [ "$dups" -eq 0 ] || die "$ns: $dups duplicates across two runs"
done

# The kind read over http decides what workers may show.
fails_with "workers of a range namespace" "range namespace" "$IDMINT" workers rng "${A[@]}"

stop_daemon
fails_with "a stopped daemon" "authority unavailable" "$IDMINT" ns list "${A[@]}"

# ==== tokens: every request needs a known bearer token of a large enough role ====

admin_hash=$(printf '%s' 'admin-secret-1' | "$IDMINTD" --hash-token)
mint_hash=$(printf '%s' 'mint-secret-2' | "$IDMINTD" --hash-token)
case "$admin_hash" in sha256:*) ;; *) die "--hash-token printed '$admin_hash'" ;; esac
cat >"$T/idmintd.conf" <<EOF
[tokens]
ops = admin:$admin_hash
reader = mint:$mint_hash
EOF
chmod 600 "$T/idmintd.conf" # tokens: idmintd refuses a file others can read
start_daemon tokens --config "$T/idmintd.conf"
A=(--authority "$URL")

IDMINT_TOKEN=admin-secret-1 "$IDMINT" ns create tsnow --kind snowflake "${A[@]}" >/dev/null \
    2>"$T/err" || die "ns create with the admin token failed: $(cat "$T/err")"
IDMINT_TOKEN=admin-secret-1 "$IDMINT" mint -n 1000 --ns tsnow "${A[@]}" >"$T/t.ids" 2>"$T/err" ||
    die "mint with the admin token failed: $(cat "$T/err")"
[ "$(wc -l <"$T/t.ids")" -eq 1000 ] || die "mint with a token printed $(wc -l <"$T/t.ids") IDs"
IDMINT_TOKEN=mint-secret-2 "$IDMINT" ns list "${A[@]}" >"$T/list" 2>"$T/err" ||
    die "ns list with a mint token failed: $(cat "$T/err")"
expect_line "$T/list" '^tsnow snowflake enabled ' "ns list with a mint token"

fails_with "a wrong token" "not authorized" env IDMINT_TOKEN=wrong-secret \
    "$IDMINT" ns list "${A[@]}"
fails_with "no token" "not authorized" env -u IDMINT_TOKEN "$IDMINT" ns list "${A[@]}"
fails_with "a mint token leasing a worker id" "not authorized" env IDMINT_TOKEN=mint-secret-2 \
    "$IDMINT" mint -n 1 --ns tsnow "${A[@]}"
fails_with "a mint token creating a namespace" "not authorized" env IDMINT_TOKEN=mint-secret-2 \
    "$IDMINT" ns create other --kind range "${A[@]}"
stop_daemon

echo "http_backend: ok"
