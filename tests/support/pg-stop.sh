#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# pg-stop.sh DIR: stop the private cluster that pg-start.sh made in DIR and
# remove DIR. Idempotent: a missing or stopped cluster is not an error.
set -euo pipefail

dir=${1:?usage: pg-stop.sh DIR}
[ -d "$dir" ] || exit 0
data=$dir/data
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)

if [ -n "$bin" ] && [ -f "$data/postmaster.pid" ]; then
    if [ "$(id -u)" -eq 0 ]; then
        runuser -u postgres -- "$bin/pg_ctl" -D "$data" -m fast -w -t 30 stop >/dev/null || true
    else
        "$bin/pg_ctl" -D "$data" -m fast -w -t 30 stop >/dev/null || true
    fi
fi
rm -rf "$dir"
