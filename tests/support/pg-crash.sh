#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# pg-crash.sh DIR [DOWN_SECONDS]: crash the private cluster in DIR as a power
# cut would (SIGKILL to the postmaster and every backend: no shutdown, no
# checkpoint), keep it down DOWN_SECONDS (default 0), and start it again with
# pg-restart.sh. Exit status 0 when the cluster accepts connections again;
# otherwise 1 with the reason on stderr.
#
# The postmaster is frozen (SIGSTOP) before its children are listed: while it
# runs it forks a backend for every connection a client retries, and one forked
# after the list was taken would outlive the kill, keep the shared memory
# attached, and make the next start refuse ("pre-existing shared memory block
# is still in use").
set -uo pipefail

dir=${1:?usage: pg-crash.sh DIR [DOWN_SECONDS]}
down=${2:-0}
read -r pm <"$dir/data/postmaster.pid" || {
    echo "pg-crash: no postmaster.pid in $dir/data" >&2
    exit 1
}
kill -STOP "$pm" 2>/dev/null || {
    echo "pg-crash: postmaster $pm is not running" >&2
    exit 1
}
# One list, one space between pids: ps -p refuses a stray separator.
pids=$(ps -o pid= --ppid "$pm" | xargs echo "$pm")
# shellcheck disable=SC2086 # one word per pid
kill -9 $pids 2>/dev/null
# Every process of the old server must be gone before a new one starts. A
# zombie counts as gone: it has let go of the shared memory, and whether it is
# reaped soon depends on who adopted it, not on PostgreSQL.
gone=
for _ in $(seq 1 200); do
    if ! ps -o stat= -p "$pids" 2>/dev/null | grep -qv '^Z'; then
        gone=1
        break
    fi
    sleep 0.05
done
[ -n "$gone" ] || {
    echo "pg-crash: processes of postmaster $pm outlived SIGKILL by 10 s" >&2
    exit 1
}
sleep "$down"
out=$(bash "$(dirname "$0")/pg-restart.sh" "$dir" 2>&1) || {
    echo "pg-crash: the cluster did not start again: $out" >&2
    tail -n 5 "$dir/server.log" >&2 2>/dev/null
    exit 1
}
