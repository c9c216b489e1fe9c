#!/usr/bin/env bash
# The exported symbols of libidmint.so must be exactly tests/abi/exports.txt:
# a new export is an ABI decision, a missing one breaks users.
# Usage: check_exports.sh /path/to/libidmint.so
set -euo pipefail
here=$(dirname "$0")
actual=$(nm -D --defined-only "$1" | awk '$2 ~ /^[TDBRVW]$/ {print $3}' | sort -u)
if ! diff -u "$here/exports.txt" <(echo "$actual"); then
    echo "abi: exported symbols differ from tests/abi/exports.txt (- expected, + actual)" >&2
    exit 1
fi
grep -v '^idmint_' <<<"$actual" && { echo "abi: export without the idmint_ prefix" >&2; exit 1; }
echo "abi: $(wc -l <<<"$actual") exports match"
