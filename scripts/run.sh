#!/usr/bin/env bash
# Build idmint (release) and mint IDs on the embedded SQLite default authority.
# Usage: scripts/run.sh [idmint mint flags...]   (default: -n 10)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF >/dev/null
cmake --build build/release -j"$(nproc)" --target idmint_cli >/dev/null
export IDMINT_AUTHORITY="${IDMINT_AUTHORITY:-sqlite:./idmint.db}"
echo "idmint: minting from namespace 'default' on $IDMINT_AUTHORITY" >&2
if [ $# -eq 0 ]; then set -- -n 10; fi
exec build/release/idmint mint "$@"
