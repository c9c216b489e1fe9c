#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The README's two commands on a bare Debian 12, as a new user meets them:
# debootstrap a minimal bookworm tree (--variant=minbase, then apt-get update:
# no compiler, no Node.js, no Python), copy a clean clone of this repository's
# HEAD into it, and in a chroot:
#   run   ./scripts/run.sh, then curl IDs from it (always);
#   test  ./scripts/test.sh, which must pass (with --test: a long release check).
# Prints how long each command took. Needs root and the network to Debian's
# mirror (the host's own apt sources are used). Leaves nothing behind but
# the logs of a failed test run.
# Usage: tests/release/fresh_debian.sh [--test]
#   IDMINT_FRESH_TARBALL=FILE  reuse (or make) a debootstrap tarball of the base
#                              system, to save the download on a second run
#   IDMINT_FRESH_LOGS=DIR      where a failed second command's logs are kept
#                              (default: a new /var/tmp/idmint-fresh-logs.*)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
with_test=0
[ "${1:-}" = --test ] && with_test=1

[ "$(id -u)" -eq 0 ] || { echo "fresh_debian: needs root (debootstrap, chroot)" >&2; exit 2; }
command -v debootstrap >/dev/null || bash "$repo/tests/support/apt-no-start.sh" debootstrap
mirror=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n 1)
mirror=${mirror:-http://deb.debian.org/debian}

T=$(mktemp -d /var/tmp/idmint-fresh.XXXXXX)
root="$T/root"
mounted=()
# Signal every process whose root is the chroot (a daemon run.sh started
# lives on after the chroot command that started it is gone).
signal_chroot() {
    local pid
    for pid in $(ls /proc | grep -E '^[0-9]+$'); do
        [ "$(readlink "/proc/$pid/root" 2>/dev/null)" = "$root" ] && kill "$1" "$pid" 2>/dev/null
    done
    return 0
}
cleanup() {
    local i
    # Whatever the chroot left running (a daemon, a test server) ends first.
    signal_chroot -9
    sleep 0.5
    for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
        umount -l "${mounted[$i]}" 2>/dev/null || true
    done
    rm -rf --one-file-system "$T"
}
trap cleanup EXIT
mount_in() { # mount_in TARGET MOUNT-ARGS...
    local target=$1
    shift
    mkdir -p "$target"
    mount "$@" "$target"
    mounted+=("$target")
}

t0=$SECONDS
if [ -n "${IDMINT_FRESH_TARBALL:-}" ] && [ ! -s "$IDMINT_FRESH_TARBALL" ]; then
    debootstrap --variant=minbase --make-tarball="$IDMINT_FRESH_TARBALL" bookworm "$T/tb" "$mirror" >/dev/null
fi
if [ -n "${IDMINT_FRESH_TARBALL:-}" ]; then
    debootstrap --variant=minbase --unpack-tarball="$IDMINT_FRESH_TARBALL" bookworm "$root" "$mirror" >/dev/null
else
    debootstrap --variant=minbase bookworm "$root" "$mirror" >/dev/null
fi
# The host's apt sources (its mirror, security updates) and name service.
rm -f "$root/etc/apt/sources.list"
cp /etc/apt/sources.list.d/debian.sources "$root/etc/apt/sources.list.d/" 2>/dev/null ||
    echo "deb $mirror bookworm main" >"$root/etc/apt/sources.list"
cp /etc/resolv.conf "$root/etc/resolv.conf"
# The tree's root a mount point of its own, as a container's or a machine's
# is: tests that make a private mount namespace (unshare --propagation
# private) change the propagation of "/", which a bare chroot directory has not.
mount_in "$root" --bind "$root"
mount_in "$root/proc" -t proc proc
mount_in "$root/sys" -t sysfs sys
mount_in "$root/dev" --bind /dev
mount_in "$root/dev/pts" -t devpts devpts
mount_in "$root/dev/shm" -t tmpfs shm
mount_in "$root/run" -t tmpfs run
mount_in "$root/tmp" -t tmpfs -o mode=1777 tmp
in_root() { chroot "$root" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$@"; }
in_root apt-get update -qq
for tool in gcc cc cmake node npm python3 go; do
    if in_root sh -c "command -v $tool" >/dev/null; then
        echo "FAIL: the bare tree already has $tool" >&2
        exit 1
    fi
done
echo "fresh_debian: bare bookworm (minbase) ready in $((SECONDS - t0)) s"

# A clean clone of what is committed, as a user would get it.
git clone -q --no-hardlinks "$repo" "$root/src/idmint"

# The chroot shares this host's loopback: a daemon already on the port
# (this script's own, when the README's test command runs it again inside
# a chroot) would answer for one that never started.
if curl -fsS -m 2 -o /dev/null 'http://127.0.0.1:18089/healthz' 2>/dev/null; then
    echo "FAIL: something already serves 127.0.0.1:18089; stop it first" >&2
    exit 1
fi
t0=$SECONDS
in_root bash -c 'cd /src/idmint && exec ./scripts/run.sh --listen 127.0.0.1:18089' \
    >"$T/run.log" 2>&1 &
run_pid=$!
ids=
while kill -0 "$run_pid" 2>/dev/null; do
    if ids=$(curl -fsS 'http://127.0.0.1:18089/v1/ids?count=5' 2>/dev/null); then
        break
    fi
    sleep 1
done
if [ -z "$ids" ]; then
    echo "FAIL: the README's first command served no IDs; its output:" >&2
    tail -n 40 "$T/run.log" >&2
    exit 1
fi
echo "fresh_debian: README's first command served IDs after $((SECONDS - t0)) s: $ids"
grep -q 'authority="sqlite:/var/lib/idmint/idmint.db"' "$T/run.log" ||
    { echo "FAIL: the daemon did not name its authority" >&2; cat "$T/run.log" >&2; exit 1; }
grep -q '/src/idmint/build/run/idmint --help' "$T/run.log" ||
    { echo "FAIL: run.sh did not say how to run the CLI" >&2; exit 1; }
in_root /src/idmint/build/run/idmint mint -n 3 >"$T/cli.ids" ||
    { echo "FAIL: the CLI run.sh points at does not mint" >&2; exit 1; }
echo "fresh_debian: the CLI it names minted $(wc -l <"$T/cli.ids") IDs from the same authority"
# The daemon, not only the command that started it: the second command's
# tests (release.fresh_debian_run among them) need the port.
kill -TERM "$run_pid" 2>/dev/null || true
signal_chroot -TERM
wait "$run_pid" 2>/dev/null || true
for _ in $(seq 1 50); do
    curl -fsS -m 1 -o /dev/null 'http://127.0.0.1:18089/healthz' 2>/dev/null || break
    sleep 0.2
done
signal_chroot -9

[ "$with_test" -eq 1 ] || exit 0
t0=$SECONDS
if ! in_root bash -c 'cd /src/idmint && exec ./scripts/test.sh' >"$T/test.log" 2>&1; then
    echo "FAIL: the README's second command failed after $((SECONDS - t0)) s; its output:" >&2
    tail -n 80 "$T/test.log" >&2
    # The tree goes with the cleanup: keep what tells why a test failed.
    logs=${IDMINT_FRESH_LOGS:-$(mktemp -d /var/tmp/idmint-fresh-logs.XXXXXX)}
    mkdir -p "$logs"
    cp "$T/test.log" "$logs/"
    for b in "$root"/src/idmint/build/*/; do
        [ -f "$b/Testing/Temporary/LastTest.log" ] &&
            cp "$b/Testing/Temporary/LastTest.log" "$logs/LastTest.$(basename "$b").log"
    done
    echo "fresh_debian: the output of every test is kept in $logs" >&2
    exit 1
fi
echo "fresh_debian: README's second command passed in $((SECONDS - t0)) s"
