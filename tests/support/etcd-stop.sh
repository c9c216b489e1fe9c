#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# etcd-stop.sh DIR [--keep]: stop every member that etcd-start.sh started in
# DIR and remove DIR (--keep: leave DIR). Idempotent: a missing or stopped
# cluster is not an error.
set -euo pipefail

dir=${1:?usage: etcd-stop.sh DIR [--keep]}
[ -d "$dir" ] || exit 0
dir=$(cd "$dir" && pwd)

# Only a process that is this cluster's etcd: a pid file may outlive its process.
is_ours() { # pid
    [ -n "$1" ] && [ -r "/proc/$1/cmdline" ] && { tr '\0' ' ' <"/proc/$1/cmdline"; } 2>/dev/null | grep -qF -- "--data-dir $dir/m"
}

for pidfile in "$dir"/m*.pid; do
    [ -f "$pidfile" ] || continue
    pid=$(cat "$pidfile")
    is_ours "$pid" || continue
    kill -CONT "$pid" 2>/dev/null || true
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do
        is_ours "$pid" || break
        sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
done
[ "${2:-}" = --keep ] || rm -rf "$dir"
