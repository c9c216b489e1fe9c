#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# idmint.namespaces (reloaded, superuser only): once the server has read a
# list, a name not on it is refused with 42501 in every new session and a
# listed one mints; back to "*", every name mints again.
# Run by ../ci.sh (IDMINT_PG_ENV, SRC).
set -euo pipefail
. "$SRC/tests/support/pg-fixture.sh"

# A reload reaches new sessions once the postmaster has read the file: look until one sees it.
set_and_wait() {
    as_super -d postgres -c "$1" -c "SELECT pg_reload_conf()" >/dev/null
    for _ in $(seq 1 100); do
        [ "$(as_super -d idmint -tAc "SHOW idmint.namespaces")" = "$2" ] && return 0
        sleep 0.2
    done
    echo "setting: the server did not take idmint.namespaces = '$2'" >&2
    exit 1
}

set_and_wait "ALTER SYSTEM SET idmint.namespaces = 'rng, wide'" "rng, wide"
out=$(as_super -d idmint -v VERBOSITY=verbose -c "SELECT idmint_next('orders')" 2>&1 || true)
echo "$out" | grep -q "42501: idmint: namespace \"orders\" is not in idmint.namespaces" || {
    echo "setting: an unlisted namespace was not refused with 42501: $out" >&2
    exit 1
}
[ "$(as_super -d idmint -tAc "SELECT idmint_next('rng') > 0")" = t ] || { echo "setting: a listed namespace was refused" >&2; exit 1; }
set_and_wait "ALTER SYSTEM RESET idmint.namespaces" "*"
[ "$(as_super -d idmint -tAc "SELECT idmint_next('orders') > 0")" = t ] || { echo "setting: orders refused after the reset" >&2; exit 1; }
echo "setting: an unlisted namespace is refused (42501), a listed one mints, '*' mints all again"
