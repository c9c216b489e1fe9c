#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# etcd-member.sh DIR ACTION [N]: act on member N (1..3) of the cluster that
# etcd-start.sh made in DIR, for reliability tests and benchmarks.
#   stop N     SIGTERM, and wait until it has exited
#   kill N     SIGKILL (a crash; its data stays)
#   start N    start it again with its data, on its ports; wait until healthy
#   pause N    SIGSTOP: a member that is there but never answers (a partition
#              as the clients and its peers see it)
#   resume N   SIGCONT
#   url N      print its client URL (http://127.0.0.1:PORT)
#   leader     print the N of the current leader (exit 1 if none answers)
#   urls       print the etcd:// URL of the whole cluster (DIR/env)
set -euo pipefail

dir=${1:?usage: etcd-member.sh DIR stop|kill|start|pause|resume|url N | leader | urls}
action=${2:?usage: etcd-member.sh DIR ACTION [N]}
n=${3:-}
dir=$(cd "$dir" && pwd)
[ -f "$dir/ports" ] || { echo "etcd-member: no cluster in $dir (run etcd-start.sh)" >&2; exit 1; }

cport_of() { awk -v m="m$1" '$1 == m { print $2 }' "$dir/ports"; }
is_ours() { # pid
    [ -n "$1" ] && [ -r "/proc/$1/cmdline" ] && { tr '\0' ' ' <"/proc/$1/cmdline"; } 2>/dev/null | grep -qF -- "--data-dir $dir/m"
}
pid_of() { cat "$dir/m$1.pid" 2>/dev/null || true; }
need_n() {
    case $n in [1-9]) [ -f "$dir/m$n.cmd" ] && return 0 ;; esac
    echo "etcd-member: no member '$n' in $dir" >&2
    exit 2
}
healthy() { curl -s -m 2 "http://127.0.0.1:$1/health" 2>/dev/null | grep -q '"health":"true"'; }

case $action in
stop | kill)
    need_n
    pid=$(pid_of "$n")
    if is_ours "$pid"; then
        kill -CONT "$pid" 2>/dev/null || true
        if [ "$action" = kill ]; then kill -KILL "$pid"; else kill -TERM "$pid"; fi
        for _ in $(seq 1 100); do
            is_ours "$pid" || exit 0
            sleep 0.1
        done
        echo "etcd-member: member $n (pid $pid) did not exit" >&2
        exit 1
    fi
    ;;
start)
    need_n
    if is_ours "$(pid_of "$n")"; then
        echo "etcd-member: member $n is already running" >&2
    else
        setsid bash "$dir/m$n.cmd" </dev/null >>"$dir/m$n.log" 2>&1 &
    fi
    port=$(cport_of "$n")
    for _ in $(seq 1 120); do
        healthy "$port" && exit 0
        sleep 0.25
    done
    echo "etcd-member: member $n is not healthy on port $port" >&2
    exit 1
    ;;
pause | resume)
    need_n
    pid=$(pid_of "$n")
    is_ours "$pid" || { echo "etcd-member: member $n is not running" >&2; exit 1; }
    if [ "$action" = pause ]; then kill -STOP "$pid"; else kill -CONT "$pid"; fi
    ;;
url)
    need_n
    echo "http://127.0.0.1:$(cport_of "$n")"
    ;;
urls)
    cat "$dir/env"
    ;;
leader)
    # Each member's status names the leader's id and its own.
    while read -r name cport _; do
        st=$(curl -s -m 2 -X POST -d '{}' "http://127.0.0.1:$cport/v3/maintenance/status" 2>/dev/null) || continue
        me=$(printf '%s' "$st" | sed -n 's/.*"member_id":"\([0-9]*\)".*/\1/p')
        lead=$(printf '%s' "$st" | sed -n 's/.*"leader":"\([0-9]*\)".*/\1/p')
        if [ -n "$me" ] && [ "$me" = "$lead" ]; then
            echo "${name#m}"
            exit 0
        fi
    done <"$dir/ports"
    echo "etcd-member: no member says it is the leader" >&2
    exit 1
    ;;
*)
    echo "etcd-member: unknown action '$action'" >&2
    exit 2
    ;;
esac
