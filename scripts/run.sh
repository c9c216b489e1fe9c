#!/usr/bin/env bash
# Build idmintd (release) and serve the idmint HTTP API on the embedded SQLite
# default authority. Usage: scripts/run.sh [idmintd flags...]
# (default: --listen 127.0.0.1:8080; IDMINT_AUTHORITY defaults to idmint.db in this
# checkout, an absolute path, so that idmint run from anywhere can name the same file)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
cmake -S . -B build/run -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF -DIDMINT_BENCH=OFF >/dev/null
cmake --build build/run -j"$(nproc)" --target idmintd idmint_cli >/dev/null
export IDMINT_AUTHORITY="${IDMINT_AUTHORITY:-sqlite:$PWD/idmint.db}"
listen="${IDMINT_LISTEN:-127.0.0.1:8080}"
for ((i = 1; i <= $#; i++)); do
    case "${!i}" in
    --listen=*) a="${!i}"; listen="${a#--listen=}" ;;
    --listen) j=$((i + 1)); listen="${!j:-$listen}" ;;
    esac
done
cat >&2 <<MSG
idmintd: serving http://$listen on $IDMINT_AUTHORITY (Ctrl-C stops it and releases its lease)
try:     curl 'http://$listen/v1/ids?count=5'
         curl -H 'Accept: text/plain' 'http://$listen/v1/ids?count=3'
         curl 'http://$listen/v1/namespaces'
MSG
exec build/run/idmintd --listen "$listen" "$@"
