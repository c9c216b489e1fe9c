#!/usr/bin/env bash
# Run a command with Debian 12's own Node.js 18 and node-gyp, on a machine
# whose installed Node is another one (NodeSource's 20, say), without
# touching it. Usage (root, Debian 12 apt sources):
#   bindings/node/tools/debian-node18.sh CACHE_DIR COMMAND [ARG...]
#   e.g. bindings/node/tools/debian-node18.sh /tmp/node18 bindings/node/ci.sh build/release
# The first run fetches the packages with `apt-get download` (nodejs,
# libnode108, libnode-dev, node-gyp and the node-* modules it needs) and
# unpacks them with `dpkg -x` into CACHE_DIR/root; nothing is installed.
# COMMAND then runs in a private mount namespace in which CACHE_DIR/root/usr
# is overlaid on /usr: /usr/bin/node is 18, /usr/bin/node-gyp is Debian's,
# /usr/include/node holds 18's headers, as on a Debian 12 with `apt-get
# install nodejs node-gyp`. The rest of the machine sees nothing of it.
set -euo pipefail

if [ $# -lt 2 ]; then
    echo "usage: $0 CACHE_DIR COMMAND [ARG...]" >&2
    exit 2
fi
cache=$(mkdir -p "$1" && cd "$1" && pwd)
shift

if [ ! -x "$cache/root/usr/bin/node-gyp" ]; then
    # Debian 12's nodejs is 18.x; ask for that version by name, whatever
    # else the machine has installed.
    v=$(apt-cache madison nodejs | awk '$3 ~ /^18\./ { print $3; exit }')
    if [ -z "$v" ]; then
        echo "$0: apt knows no nodejs 18.x: is this Debian 12 with its sources?" >&2
        exit 1
    fi
    mapfile -t mods < <(apt-cache depends --recurse --no-recommends --no-suggests \
        --no-conflicts --no-breaks --no-replaces --no-enhances node-gyp |
        grep -E '^(node-|gyp$)' | sort -u)
    rm -rf "$cache/debs" "$cache/root"
    mkdir -p "$cache/debs"
    (cd "$cache/debs" && apt-get download -q "nodejs=$v" "libnode108=$v" "libnode-dev=$v" \
        "${mods[@]}" >/dev/null 2>&1) || {
        echo "$0: apt-get download failed" >&2
        exit 1
    }
    for deb in "$cache"/debs/*.deb; do
        dpkg -x "$deb" "$cache/root"
    done
fi

# shellcheck disable=SC2016 # expanded by the inner bash
exec unshare -m --propagation private -- bash -c \
    'mount -t overlay overlay -o "lowerdir=$1/root/usr:/usr" /usr && shift && exec "$@"' \
    bash "$cache" "$@"
