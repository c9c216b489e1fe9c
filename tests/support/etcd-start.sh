#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# etcd-start.sh DIR: a private 3-member etcd cluster for the tests, on free
# loopback ports, with its data, logs and pid files in DIR. Installs
# Debian's etcd-server first if /usr/bin/etcd is missing (without starting a
# system etcd: apt-no-start.sh). Writes DIR/env with one etcd:// URL naming
# the three members, like pg-start.sh. Idempotent: a healthy cluster already
# running in DIR is left as it is. Members are restarted, stopped or killed
# one at a time with etcd-member.sh.
set -euo pipefail

dir=${1:?usage: etcd-start.sh DIR}
here=$(cd "$(dirname "$0")" && pwd)
members=3

if [ ! -x /usr/bin/etcd ]; then
    bash "$here/apt-no-start.sh" etcd-server
fi
[ -x /usr/bin/etcd ] || { echo "etcd-start: no /usr/bin/etcd after installing etcd-server" >&2; exit 1; }
command -v curl >/dev/null || bash "$here/apt-no-start.sh" curl

mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

healthy() { # client port
    curl -s -m 2 "http://127.0.0.1:$1/health" 2>/dev/null | grep -q '"health":"true"'
}

if [ -f "$dir/env" ] && [ -f "$dir/ports" ]; then
    ok=1
    while read -r _ cport _; do
        healthy "$cport" || ok=0
    done <"$dir/ports"
    [ "$ok" -eq 1 ] && exit 0
    bash "$here/etcd-stop.sh" "$dir"
    mkdir -p "$dir"
fi

. "$here/ports.sh"

# Two ports per member (client, peer), all distinct and free a moment ago.
pick_ports() {
    local taken=" " p n=0
    while [ "$n" -lt $((members * 2)) ]; do
        p=$(random_port)
        case $taken in *" $p "*) continue ;; esac
        port_is_free "$p" || continue
        taken="$taken$p "
        echo "$p"
        n=$((n + 1))
    done
}

start_member() { # n
    # setsid: the member outlives this script and CTest's process group.
    # The .cmd script writes its own pid, then execs etcd under it.
    setsid bash "$dir/m$1.cmd" </dev/null >>"$dir/m$1.log" 2>&1 &
}

for attempt in 1 2 3 4; do
    mapfile -t ports < <(pick_ports)
    token="idmint-test-$$-$RANDOM"
    cluster=""
    : >"$dir/ports"
    for n in $(seq 1 $members); do
        cport=${ports[$(((n - 1) * 2))]}
        pport=${ports[$(((n - 1) * 2 + 1))]}
        echo "m$n $cport $pport" >>"$dir/ports"
        cluster="${cluster:+$cluster,}m$n=http://127.0.0.1:$pport"
    done
    while read -r name cport pport; do
        rm -rf "${dir:?}/$name" "$dir/$name.pid" # a stale pid would read as exited
        # exec: the pid file names etcd itself, so etcd-member.sh signals it.
        # Compaction and quota as docs/multi-node.md recommends, sized for tests.
        cat >"$dir/$name.cmd" <<CMD
echo \$\$ >$dir/$name.pid
exec /usr/bin/etcd --name $name --data-dir $dir/$name \\
  --listen-client-urls http://127.0.0.1:$cport --advertise-client-urls http://127.0.0.1:$cport \\
  --listen-peer-urls http://127.0.0.1:$pport --initial-advertise-peer-urls http://127.0.0.1:$pport \\
  --initial-cluster $cluster --initial-cluster-token $token --initial-cluster-state new \\
  --auto-compaction-mode revision --auto-compaction-retention 10000 \\
  --quota-backend-bytes 268435456 --logger zap --log-level warn
CMD
        start_member "${name#m}"
    done <"$dir/ports"

    up=0
    for _ in $(seq 1 120); do
        up=1
        while read -r name cport _; do
            healthy "$cport" || up=0
        done <"$dir/ports"
        [ "$up" -eq 1 ] && break
        # A member that exited (a port taken after all) will not come up:
        # try again at once instead of waiting out the 30 s.
        gone=0
        while read -r name _ _; do
            pid=$(cat "$dir/$name.pid" 2>/dev/null || true)
            if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then
                gone=1
            fi
        done <"$dir/ports"
        [ "$gone" -eq 1 ] && break
        sleep 0.25
    done
    if [ "$up" -eq 1 ]; then
        break
    fi
    # A port taken between the check and the start, most likely: again.
    echo "etcd-start: attempt $attempt did not become healthy; logs:" >&2
    tail -n 5 "$dir"/m*.log >&2 || true
    bash "$here/etcd-stop.sh" "$dir" --keep
    sleep 0.5
done
if [ "$up" -ne 1 ]; then
    echo "etcd-start: the cluster did not become healthy" >&2
    exit 1
fi

urls=""
while read -r _ cport _; do
    urls="${urls:+$urls,}127.0.0.1:$cport"
done <"$dir/ports"
echo "etcd://$urls/idmint" >"$dir/env.tmp"
mv "$dir/env.tmp" "$dir/env"
