#!/usr/bin/env bash
# Install the Debian 12 packages idmint builds and tests with, if any is missing.
set -euo pipefail
pkgs=(build-essential cmake pkg-config clang clang-format libclang-rt-14-dev cppcheck
      libsqlite3-dev sqlite3 libcmocka-dev uuid-dev libcurl4-openssl-dev libh2o-evloop-dev
      libssl-dev libjansson-dev libinih-dev libpq-dev python3 curl spin faketime
      chromium fonts-dejavu-core) # headless Chromium: tests/daemon/test_status.py
missing=()
for p in "${pkgs[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "deps: installing ${missing[*]}"
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO=sudo
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
