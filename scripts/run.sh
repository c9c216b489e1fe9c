#!/usr/bin/env bash
# Build idmintd and the idmint CLI (release) and serve the idmint HTTP API on
# the embedded SQLite authority. Installs only what building and serving need
# (scripts/deps.sh run). Usage: scripts/run.sh [idmintd flags...]
# (default: --listen 127.0.0.1:8080 and the default authority,
# sqlite:/var/lib/idmint/idmint.db, one file for every user of the machine)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh run
echo "run: building idmintd and idmint in build/run (a minute or two the first time)" >&2
cmake -S . -B build/run -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF -DIDMINT_BENCH=OFF >/dev/null
cmake --build build/run -j"$(nproc)" --target idmintd idmint_cli >/dev/null
listen="${IDMINT_LISTEN:-127.0.0.1:8080}"
for ((i = 1; i <= $#; i++)); do
    case "${!i}" in
    --listen=*) a="${!i}"; listen="${a#--listen=}" ;;
    --listen) j=$((i + 1)); listen="${!j:-$listen}" ;;
    esac
done
bin="$PWD/build/run"
cat >&2 <<MSG
idmintd: serving http://$listen (Ctrl-C stops it and releases its lease); the
         authority it uses is named in its log below (authority="...")
try:     curl 'http://$listen/v1/ids?count=5'
         curl -H 'Accept: text/plain' 'http://$listen/v1/ids?count=3'
         curl 'http://$listen/v1/namespaces'
the CLI: $bin/idmint --help
         (or: export PATH="$bin:\$PATH", then idmint ...; it uses the same
         default authority as this daemon unless told otherwise)
MSG
exec "$bin/idmintd" --listen "$listen" "$@"
