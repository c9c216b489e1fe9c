#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# apt-no-start.sh PKG...: install Debian packages with apt-get without letting
# their maintainer scripts start a service (etcd-server would otherwise start
# a system etcd on the default port 2379, postgresql a system cluster). A
# /usr/sbin/policy-rc.d that exits 101 is in place during the install and
# removed afterwards (one that was there already is left alone); an etcd
# service that started anyway is stopped and disabled. Needs root.
set -euo pipefail

[ $# -gt 0 ] || { echo "usage: apt-no-start.sh PKG..." >&2; exit 2; }
if [ "$(id -u)" -ne 0 ]; then
    SUDO=sudo
else
    SUDO=""
fi

policy=/usr/sbin/policy-rc.d
ours=0
if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\n# idmint apt-no-start.sh: no service starts during this install\nexit 101\n' |
        $SUDO tee "$policy" >/dev/null
    $SUDO chmod 755 "$policy"
    ours=1
fi
cleanup() {
    if [ "$ours" -eq 1 ]; then
        $SUDO rm -f "$policy"
    fi
}
trap cleanup EXIT

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null

# Belt and braces: whatever the policy said, no system etcd stays running.
for p in "$@"; do
    [ "$p" = etcd-server ] || continue
    if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
        $SUDO systemctl disable --now etcd.service >/dev/null 2>&1 || true
    elif [ -x /etc/init.d/etcd ] && /etc/init.d/etcd status >/dev/null 2>&1; then
        $SUDO /etc/init.d/etcd stop >/dev/null 2>&1 || true
    fi
done
