#!/usr/bin/env bash
# Build idmintd (release) and serve the idmint HTTP API on the embedded SQLite
# default authority. Usage: scripts/run.sh [idmintd flags...]
# (default: --listen 127.0.0.1:8080, and the one fixed default authority that idmint
# uses too: /var/lib/idmint/idmint.db for root, else ~/.local/state/idmint/idmint.db)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
cmake -S . -B build/run -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF -DIDMINT_BENCH=OFF >/dev/null
cmake --build build/run -j"$(nproc)" --target idmintd idmint_cli >/dev/null
authority="${IDMINT_AUTHORITY:-the default authority (idmint(1), FILES)}"
listen="${IDMINT_LISTEN:-127.0.0.1:8080}"
for ((i = 1; i <= $#; i++)); do
    case "${!i}" in
    --listen=*) a="${!i}"; listen="${a#--listen=}" ;;
    --listen) j=$((i + 1)); listen="${!j:-$listen}" ;;
    esac
done
cat >&2 <<MSG
idmintd: serving http://$listen on $authority (Ctrl-C stops it and releases its lease)
try:     curl 'http://$listen/v1/ids?count=5'
         curl -H 'Accept: text/plain' 'http://$listen/v1/ids?count=3'
         curl 'http://$listen/v1/namespaces'
MSG
exec build/run/idmintd --listen "$listen" "$@"
