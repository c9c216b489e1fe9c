#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The PostgreSQL extension's tests, against BUILD_DIR's build of it: a
# private PostgreSQL (tests/support/pg-start.sh) that preloads the module
# from a private folder and uses itself as the idmint authority
# (postgres://), then:
#   test/functions.sql      every function and every error
#   test/drill.sh           8 sessions insert 1M rows while 4 idmint processes
#                           mint the same namespace; an immediate restart and
#                           a backend killed mid-run; no duplicate anywhere
#   test/sessions.sh        1,000 short sessions share one lease
#   test/lease_lost.sh      a lease forced away stops every session at once
# The extension's control and SQL files go into the server's extension
# folder (PostgreSQL 15 reads them from nowhere else); files of another
# install there are put back afterwards.
set -euo pipefail

if [ $# -ne 1 ]; then
    echo "usage: $0 BUILD_DIR" >&2
    exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
build=$(cd "$1" && pwd)
for f in "$build/postgres/idmint.so" "$build/libidmint.so.0" "$build/idmint"; do
    [ -e "$f" ] || {
        echo "ci.sh: $f is missing (a release build with postgresql-server-dev-15 installed)" >&2
        exit 1
    }
done
pg_config=$(command -v pg_config) || { echo "ci.sh: no pg_config" >&2; exit 1; }
extdir=$($pg_config --sharedir)/extension
[ -w "$extdir" ] || { echo "ci.sh: cannot write $extdir (run as root)" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/idmint-pg-ci.XXXXXX")
chmod 755 "$tmp"
backup=$tmp/backup
mkdir -p "$backup"
cleanup() {
    local rc=$?
    jobs -p | xargs -r kill -9 2>/dev/null || true
    bash "$src/tests/support/pg-stop.sh" "$tmp/pg" >/dev/null 2>&1 || true
    for f in idmint.control idmint--0.2.0.sql; do
        if [ -e "$backup/$f" ]; then cp "$backup/$f" "$extdir/$f"; else rm -f "$extdir/$f"; fi
    done
    if [ "$rc" -ne 0 ] && [ -f "$tmp/pg/server.log" ]; then
        echo "--- server log (last 40 lines)" >&2
        tail -n 40 "$tmp/pg/server.log" >&2
    fi
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

for f in idmint.control idmint--0.2.0.sql; do
    [ -e "$extdir/$f" ] && cp "$extdir/$f" "$backup/$f"
    install -m 644 "$here/$f" "$extdir/$f"
done
# The module and the library it links, where the server's user can read them.
mkdir -p "$tmp/lib"
install -m 755 "$build/postgres/idmint.so" "$tmp/lib/idmint.so"
install -m 755 "$(readlink -f "$build/libidmint.so.0")" "$tmp/lib/libidmint.so.0"

# Short leases with quick renewals: a lease the server could not release (its
# authority is itself, and a stopping server takes no writes) is free again
# within 20 s, and a forced release is seen within a second.
export PG_EXTRA_CONF="shared_preload_libraries = 'idmint'
dynamic_library_path = '$tmp/lib:\$libdir'
idmint.lease_ms = 20000
idmint.renew_ms = 500
max_connections = 100"
# The server keeps its own witness of the authority (docs/operations.md,
# "Restores"), in a folder its user owns; this script's processes keep theirs.
export SERVER_WITNESS=$tmp/server-witness
mkdir -p "$SERVER_WITNESS"
[ "$(id -u)" -ne 0 ] || chown postgres "$SERVER_WITNESS"
export IDMINT_WITNESS_DIR=${IDMINT_WITNESS_DIR:-$tmp/witness}
IDMINT_WITNESS_DIR=$SERVER_WITNESS bash "$src/tests/support/pg-start.sh" "$tmp/pg" >/dev/null
export IDMINT_PG_ENV=$tmp/pg/env
# shellcheck source=../../tests/support/pg-fixture.sh
. "$src/tests/support/pg-fixture.sh"
as_super -d postgres -c "ALTER SYSTEM SET idmint.authority = '$PG_URL'"
IDMINT_WITNESS_DIR=$SERVER_WITNESS bash "$src/tests/support/pg-restart.sh" "$tmp/pg" >/dev/null

export IDMINT_AUTHORITY=$PG_URL
idmint=$build/idmint
"$idmint" ns create orders --kind snowflake >/dev/null
"$idmint" ns create rng --kind range --start 1000 >/dev/null
"$idmint" ns create wide --kind snowflake --layout 41/3/7/12 --unit 10 --epoch 2020-01-01 >/dev/null
"$idmint" ns create off --kind snowflake >/dev/null
"$idmint" ns disable off >/dev/null
as_super -d idmint -c "CREATE EXTENSION idmint"

export SRC=$src BUILD=$build IDMINT=$idmint WORK=$tmp
for t in functions.sql sessions.sh lease_lost.sh drill.sh; do
    echo "== $t"
    case $t in
    *.sql) as_super -d idmint -f "$here/test/$t" ;;
    *) bash "$here/test/$t" ;;
    esac
done
echo "postgres extension: ok"
