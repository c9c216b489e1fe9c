#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# pg-restart.sh DIR: stop the private cluster in DIR (fast: open sessions
# are cut) and start it again on the same port, keeping its data and DIR/env.
# For reliability tests of reconnects. PG_STOP_MODE=immediate stops it as a
# crash would (no checkpoint; every process of the server ends at once).
set -euo pipefail

dir=${1:?usage: pg-restart.sh DIR}
data=$dir/data
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
if [ -z "$bin" ] || [ ! -f "$data/PG_VERSION" ] || [ ! -f "$dir/port" ]; then
    echo "pg-restart: no cluster in $dir (run pg-start.sh first)" >&2
    exit 1
fi
if [ "$(id -u)" -eq 0 ]; then
    as_owner() { runuser -u postgres -- "$@"; }
else
    as_owner() { "$@"; }
fi
as_owner "$bin/pg_ctl" -D "$data" -m "${PG_STOP_MODE:-fast}" -w -t 30 stop >/dev/null || true
as_owner "$bin/pg_ctl" -D "$data" -l "$dir/server.log" -w -t 30 start >/dev/null
port=$(cat "$dir/port")
for _ in $(seq 1 60); do
    if "$bin/pg_isready" -q -h 127.0.0.1 -p "$port" -t 1; then
        exit 0
    fi
    sleep 0.5
done
echo "pg-restart: the server is not accepting connections on port $port" >&2
exit 1
