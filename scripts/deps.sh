#!/usr/bin/env bash
# Install the Debian 12 packages a job needs, if any is missing.
# Usage: scripts/deps.sh run|test
#   run   building idmintd and the idmint CLI and serving (scripts/run.sh)
#   test  that, plus what every test suite needs (scripts/test.sh): compilers
#         and checkers, PostgreSQL and etcd servers, Chromium, Go, Node.js, Java
# No package may start a service while it installs (etcd-server would start a
# system etcd on port 2379): tests/support/apt-no-start.sh holds a
# policy-rc.d in place for the install, and the tests start private servers.
set -euo pipefail
cd "$(dirname "$0")/.."

# Building and serving: a C compiler, CMake, and the libraries idmintd links
# (libpq and libcurl are loaded at run time, their headers are built against).
run_pkgs=(gcc libc6-dev make cmake pkg-config
          libsqlite3-dev libcurl4-openssl-dev libjansson-dev libpq-dev
          libh2o-evloop-dev libssl-dev libinih-dev
          curl ca-certificates)                    # the banner's first request
test_pkgs=(git                                     # the format stage lists tracked files
           clang clang-format libclang-rt-14-dev   # fuzz targets, sanitizers
           cppcheck libcmocka-dev uuid-dev sqlite3 python3 spin faketime
           postgresql etcd-server                  # tests/support/pg-start.sh, etcd-start.sh
           postgresql-server-dev-15                # bindings/postgres: the extension (PGXS)
           etcd-client                             # etcdctl snapshot: test_etcd_restore.sh
           util-linux                              # unshare, setpriv: cli.default_authority
           procps                                  # pkill, pgrep: the drills' kill -9 (not in minbase)
           openssl                                 # throwaway CA and certificates: tests/daemon/test_tls.py
           chromium fonts-dejavu-core              # headless Chromium: tests/daemon/test_status.py
           golang-go                               # bindings/go
           python3-setuptools g++                  # bindings/node: node-gyp's gyp; it links with g++
           python3-pytest python3-venv python3-wheel python3-dev # bindings/python
           python3-jsonschema                      # docs/openapi.json: tests/daemon/test_openapi.py
           default-jdk-headless junit5             # bindings/java: javac, jni.h, JUnit 5's console
           file dpkg-dev lintian)                  # the Debian packages: tests/install/test_install.sh

# bindings/node builds with any Node.js >= 18 and a node-gyp (tools/build.js
# finds Debian's, or the one npm bundles). A machine that already has such a
# Node (NodeSource's, say) keeps it: Debian's node-gyp depends on Debian's
# nodejs and cannot be installed beside another one.
node_pkgs() {
    local major
    major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
    if [ "$major" -ge 18 ] && { command -v node-gyp >/dev/null ||
        [ -f "$(npm root -g 2>/dev/null)/npm/node_modules/node-gyp/bin/node-gyp.js" ]; }; then
        return
    fi
    echo nodejs node-gyp
}
# npm installs the OpenAPI validator (tests/daemon/test_openapi.py); a Node
# that came with its own npm keeps it.
npm_pkgs() {
    command -v npm >/dev/null || echo npm
}

case "${1:-}" in
run) pkgs=("${run_pkgs[@]}") ;;
test)
    # shellcheck disable=SC2207 # two plain package names
    pkgs=("${run_pkgs[@]}" "${test_pkgs[@]}" $(node_pkgs) $(npm_pkgs))
    ;;
*)
    echo "usage: scripts/deps.sh run|test" >&2
    exit 2
    ;;
esac
missing=()
for p in "${pkgs[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "deps: installing ${missing[*]}"
    bash tests/support/apt-no-start.sh "${missing[@]}"
fi
