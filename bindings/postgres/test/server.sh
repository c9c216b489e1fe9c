# SPDX-License-Identifier: Apache-2.0
# Sourced by ../ci.sh and bench/bench_pg_extension.sh: a private PostgreSQL
# that preloads BUILD's extension and uses itself as the idmint authority.
#   pg_ext_up WORK BUILD [SETTINGS]   start it in WORK/pg, the extension's
#                                     files in place, CREATE EXTENSION done;
#                                     SETTINGS are more postgresql.conf lines
#   pg_ext_down WORK                  stop it and put the extension folder back
# pg_ext_up sets PG_URL, BIN, HOST, PORT, as_super (tests/support/pg-fixture.sh),
# IDMINT_PG_ENV, IDMINT_AUTHORITY and SERVER_WITNESS. PostgreSQL 15 reads an
# extension's control and SQL files from its own folder only: they go there,
# and files of another install are kept aside and put back.
pg_ext_src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)

pg_ext_up() {
    local work=$1 build=$2 settings=${3:-} extdir f
    for f in "$build/postgres/idmint.so" "$build/libidmint.so.0"; do
        [ -e "$f" ] || {
            echo "$f is missing (a release build with postgresql-server-dev-15 installed)" >&2
            return 1
        }
    done
    extdir=$(pg_config --sharedir)/extension
    [ -w "$extdir" ] || { echo "cannot write $extdir (run as root)" >&2; return 1; }
    mkdir -p "$work/extension-backup" "$work/lib"
    chmod 755 "$work"
    for f in idmint.control idmint--0.2.0.sql; do
        if [ -e "$extdir/$f" ] && [ ! -e "$work/extension-backup/$f" ]; then
            cp "$extdir/$f" "$work/extension-backup/$f"
        fi
        install -m 644 "$pg_ext_src/bindings/postgres/$f" "$extdir/$f"
    done
    # The module and the library it links, where the server's user can read them.
    install -m 755 "$build/postgres/idmint.so" "$work/lib/idmint.so"
    install -m 755 "$(readlink -f "$build/libidmint.so.0")" "$work/lib/libidmint.so.0"
    # The server keeps its own witness of the authority (docs/operations.md,
    # "Restores"), in a folder its user owns.
    export SERVER_WITNESS=$work/server-witness
    mkdir -p "$SERVER_WITNESS"
    if [ "$(id -u)" -eq 0 ]; then chown postgres "$SERVER_WITNESS"; fi
    PG_EXTRA_CONF="shared_preload_libraries = 'idmint'
dynamic_library_path = '$work/lib:\$libdir'
$settings" IDMINT_WITNESS_DIR=$SERVER_WITNESS bash "$pg_ext_src/tests/support/pg-start.sh" "$work/pg" >/dev/null
    export IDMINT_PG_ENV=$work/pg/env
    # shellcheck source=../../../tests/support/pg-fixture.sh
    . "$pg_ext_src/tests/support/pg-fixture.sh"
    as_super -d postgres -c "ALTER SYSTEM SET idmint.authority = '$PG_URL'"
    IDMINT_WITNESS_DIR=$SERVER_WITNESS bash "$pg_ext_src/tests/support/pg-restart.sh" "$work/pg" >/dev/null
    as_super -d idmint -c "CREATE EXTENSION idmint"
    export IDMINT_AUTHORITY=$PG_URL
}

pg_ext_down() {
    local work=$1 extdir f
    bash "$pg_ext_src/tests/support/pg-stop.sh" "$work/pg" >/dev/null 2>&1 || true
    extdir=$(pg_config --sharedir)/extension
    for f in idmint.control idmint--0.2.0.sql; do
        if [ -e "$work/extension-backup/$f" ]; then
            cp "$work/extension-backup/$f" "$extdir/$f"
        else
            rm -f "$extdir/$f"
        fi
    done
}
