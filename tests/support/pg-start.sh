#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# pg-start.sh DIR: a private PostgreSQL cluster for the tests, in DIR, on a
# free loopback port, run by an unprivileged user. Writes DIR/env with one
# connection URL. Never touches a system cluster. Idempotent: a cluster
# already running in DIR is left as it is. PG_MAX_CONNECTIONS (default 200)
# sizes it for more clients: the fleet drill holds one connection per handle.
# PG_EXTRA_CONF, if set, is appended to the settings (one per line): the
# PostgreSQL extension's tests preload it.
set -euo pipefail

dir=${1:?usage: pg-start.sh DIR}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
data=$dir/data
db=idmint
role=idmint

pg_bindir() {
    local d
    d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
    if [ -n "$d" ] && [ -x "$d/initdb" ]; then
        echo "$d"
    fi
}

bin=$(pg_bindir)
if [ -z "$bin" ]; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "pg-start: PostgreSQL is not installed and we are not root" >&2
        exit 1
    fi
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq postgresql >/dev/null
    bin=$(pg_bindir)
fi
if [ -z "$bin" ]; then
    echo "pg-start: no initdb under /usr/lib/postgresql/*/bin" >&2
    exit 1
fi

# initdb refuses to run as root: use the package's system user.
if [ "$(id -u)" -eq 0 ]; then
    owner=postgres
    as_owner() { runuser -u "$owner" -- "$@"; }
else
    owner=$(id -un)
    as_owner() { "$@"; }
fi

if [ -f "$dir/env" ] && as_owner "$bin/pg_ctl" -D "$data" status >/dev/null 2>&1; then
    exit 0
fi

if [ ! -f "$data/PG_VERSION" ]; then
    rm -rf "$data"
    chown "$owner" "$dir"
    as_owner "$bin/initdb" -D "$data" -U postgres --auth=trust -E UTF8 --no-sync \
        >"$dir/initdb.log" 2>&1 || {
        cat "$dir/initdb.log" >&2
        exit 1
    }
fi

. "$(dirname "$0")/ports.sh"

# A port may be taken between the check and the start: try a few.
started=0
for _ in 1 2 3 4 5 6 7 8; do
    port=$(random_port)
    port_is_free "$port" || continue
    # Later lines win: rewriting on each try keeps one effective setting.
    cat >"$data/postgresql.auto.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$dir'
max_connections = ${PG_MAX_CONNECTIONS:-200}
synchronous_commit = on
fsync = on
${PG_EXTRA_CONF:-}
CONF
    chown "$owner" "$data/postgresql.auto.conf"
    if as_owner "$bin/pg_ctl" -D "$data" -l "$dir/server.log" -w -t 30 start >/dev/null; then
        started=1
        break
    fi
done
if [ "$started" -ne 1 ]; then
    echo "pg-start: the server did not start; log follows" >&2
    tail -n 30 "$dir/server.log" >&2 || true
    exit 1
fi

for _ in $(seq 1 60); do
    if "$bin/pg_isready" -q -h 127.0.0.1 -p "$port" -t 1; then
        break
    fi
    sleep 0.5
done
"$bin/pg_isready" -q -h 127.0.0.1 -p "$port" -t 5

psql_admin() {
    "$bin/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -U postgres "$@"
}
if [ "$(psql_admin -d postgres -tAc "SELECT 1 FROM pg_roles WHERE rolname = '$role'")" != 1 ]; then
    psql_admin -d postgres -c "CREATE ROLE $role LOGIN"
fi
if [ "$(psql_admin -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = '$db'")" != 1 ]; then
    psql_admin -d postgres -c "CREATE DATABASE $db OWNER $role"
fi

echo "$port" >"$dir/port"
echo "postgresql://$role@127.0.0.1:$port/$db" >"$dir/env.tmp"
mv "$dir/env.tmp" "$dir/env"
