#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# pg-outage.sh DIR SECONDS: stop the private cluster in DIR (fast: open
# sessions are cut), keep it down for SECONDS, then start it again on the same
# port. Like pg-restart.sh, with an outage long enough for clients to notice.
# Prints "stopping <unix ms>" (sessions are cut from then on), "down <unix
# ms>" (the server has stopped) and "up <unix ms>" (it accepts connections
# again) on stdout: a stop under load can take seconds of its own.
set -euo pipefail

dir=${1:?usage: pg-outage.sh DIR SECONDS}
secs=${2:?usage: pg-outage.sh DIR SECONDS}
data=$dir/data
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
if [ -z "$bin" ] || [ ! -f "$data/PG_VERSION" ] || [ ! -f "$dir/port" ]; then
    echo "pg-outage: no cluster in $dir (run pg-start.sh first)" >&2
    exit 1
fi
if [ "$(id -u)" -eq 0 ]; then
    as_owner() { runuser -u postgres -- "$@"; }
else
    as_owner() { "$@"; }
fi
now_ms() { date +%s%3N; }

echo "stopping $(now_ms)"
as_owner "$bin/pg_ctl" -D "$data" -m fast -w -t 30 stop >/dev/null || true
echo "down $(now_ms)"
sleep "$secs"
as_owner "$bin/pg_ctl" -D "$data" -l "$dir/server.log" -w -t 30 start >/dev/null
port=$(cat "$dir/port")
for _ in $(seq 1 60); do
    if "$bin/pg_isready" -q -h 127.0.0.1 -p "$port" -t 1; then
        echo "up $(now_ms)"
        exit 0
    fi
    sleep 0.5
done
echo "pg-outage: the server is not accepting connections on port $port" >&2
exit 1
