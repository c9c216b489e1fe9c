#!/usr/bin/env bash
# Install the Debian 12 packages idmint builds and tests with, if any is missing.
# No package may start a service while it installs (etcd-server would start a
# system etcd on port 2379): tests/support/apt-no-start.sh holds a
# policy-rc.d in place for the install, and the tests start private servers.
set -euo pipefail
cd "$(dirname "$0")/.."
pkgs=(build-essential cmake pkg-config clang clang-format libclang-rt-14-dev cppcheck
      libsqlite3-dev sqlite3 libcmocka-dev uuid-dev libcurl4-openssl-dev libh2o-evloop-dev
      libssl-dev libjansson-dev libinih-dev libpq-dev python3 curl spin faketime etcd-server
      openssl                    # throwaway CA and certificates: tests/daemon/test_tls.py
      chromium fonts-dejavu-core # headless Chromium: tests/daemon/test_status.py
      golang-go                  # bindings/go
      python3-pytest python3-venv python3-setuptools python3-wheel python3-dev # bindings/python
      file dpkg-dev)             # the Debian package: tests/install/test_install.sh
missing=()
for p in "${pkgs[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "deps: installing ${missing[*]}"
    bash tests/support/apt-no-start.sh "${missing[@]}"
fi
# The Node.js binding's build tool (node-gyp), pinned by its package-lock.json.
if [ ! -x bindings/node/node_modules/.bin/node-gyp ]; then
    echo "deps: npm ci in bindings/node (node-gyp)"
    (cd bindings/node && npm ci --ignore-scripts --no-audit --no-fund >/dev/null)
fi
