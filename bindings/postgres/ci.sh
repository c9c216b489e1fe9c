#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The PostgreSQL extension's tests, against BUILD_DIR's build of it: a
# private PostgreSQL (tests/support/pg-start.sh) that preloads the module
# from a private folder and uses itself as the idmint authority
# (postgres://), then:
#   test/functions.sql      every function and every error
#   test/readme.sh          the README's lines run as written
#   test/setting.sh         idmint.namespaces refuses an unlisted name
#   test/sessions.sh        1,000 short sessions share one lease
#   test/leases.sh          a session that outruns one worker id gets more, in order
#   test/lease_lost.sh      a lease forced away stops every session at once
#   test/drill.sh           8 sessions insert 1M rows while 4 idmint processes
#                           mint the same namespace; an immediate restart and
#                           a backend killed mid-run; no duplicate anywhere
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
[ -x "$build/idmint" ] || { echo "ci.sh: $build/idmint is missing (build the Release tree)" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/idmint-pg-ci.XXXXXX")
# shellcheck source=test/server.sh
. "$here/test/server.sh"
cleanup() {
    local rc=$?
    jobs -p | xargs -r kill -9 2>/dev/null || true
    if [ "$rc" -ne 0 ] && [ -f "$tmp/pg/server.log" ]; then
        echo "--- server log (last 40 lines)" >&2
        tail -n 40 "$tmp/pg/server.log" >&2
    fi
    pg_ext_down "$tmp"
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

export IDMINT_WITNESS_DIR=${IDMINT_WITNESS_DIR:-$tmp/witness}
# Short leases with quick renewals: a lease the server could not release (its
# authority is itself, and a stopping server takes no writes) is free again
# within 20 s, and a forced release is seen within a second.
pg_ext_up "$tmp" "$build" "idmint.lease_ms = 20000
idmint.renew_ms = 500"

idmint=$build/idmint
"$idmint" ns create orders --kind snowflake >/dev/null
"$idmint" ns create rng --kind range --start 1000 >/dev/null
"$idmint" ns create wide --kind snowflake --layout 41/3/7/12 --unit 10 --epoch 2020-01-01 >/dev/null
"$idmint" ns create off --kind snowflake >/dev/null
"$idmint" ns disable off >/dev/null
"$idmint" ns create small --kind range --start 1 --max 100 --block 10 >/dev/null

export SRC=$src BUILD=$build IDMINT=$idmint WORK=$tmp
for t in functions.sql readme.sh setting.sh sessions.sh leases.sh lease_lost.sh drill.sh; do
    echo "== $t"
    case $t in
    *.sql) as_super -d idmint -f "$here/test/$t" ;;
    *) bash "$here/test/$t" ;;
    esac
done
echo "postgres extension: ok"
