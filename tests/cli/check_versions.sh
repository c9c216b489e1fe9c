#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# One version everywhere: the CMake project version (project(idmint VERSION))
# must be what idmint.h, the built libidmint.so (file name and
# idmint_version()), `idmint --version`, `idmintd --version`, both man
# pages' .TH lines, the top of CHANGELOG.md and every binding's package
# metadata say. bindings/go has none (a Go module's version is its tag).
# Usage: check_versions.sh VERSION SRC_DIR IDMINT IDMINTD LIBIDMINT_SO|-
set -euo pipefail
usage="usage: check_versions.sh VERSION SRC_DIR IDMINT IDMINTD LIBIDMINT_SO"
V=${1:?$usage} SRC=${2:?$usage} IDMINT=${3:?$usage} IDMINTD=${4:?$usage} LIB=${5:?$usage}
bad=0
check() { # WHAT FOUND
    if [ "$2" = "$V" ]; then
        echo "ok: $1: $2"
    else
        echo "FAIL: $1 says '$2', the CMake project version is $V" >&2
        bad=1
    fi
}

hver() { sed -n "s/^#define IDMINT_VERSION_$1 \\([0-9][0-9]*\\)\$/\\1/p" "$SRC/include/idmint.h"; }
check "include/idmint.h IDMINT_VERSION_*" "$(hver MAJOR).$(hver MINOR).$(hver PATCH)"
if [ "$LIB" = - ]; then
    echo "(idmint_version() not checked: a sanitized library; the header and --version are)"
else
    real=$(basename "$(readlink -f "$LIB")")
    check "the built library's file name ($real)" "${real#libidmint.so.}"
    check "idmint_version() of $real" "$(python3 -c '
import ctypes, sys
v = ctypes.CDLL(sys.argv[1]).idmint_version()
print(f"{v >> 16}.{(v >> 8) & 255}.{v & 255}")' "$LIB")"
fi
out=$("$IDMINT" --version)
check "idmint --version ($out)" "${out#idmint }"
out=$("$IDMINTD" --version)
if [[ $out =~ ^idmintd\ ([^ ]+)\ \(libidmint\ ([^ ]+)\)$ ]]; then
    check "idmintd --version" "${BASH_REMATCH[1]}"
    check "idmintd --version's libidmint" "${BASH_REMATCH[2]}"
else
    check "idmintd --version" "$out"
fi
for page in idmint.1 idmintd.8; do
    th=$(grep -m1 '^\.TH ' "$SRC/docs/man/$page")
    check "docs/man/$page .TH ($th)" "$(sed -n 's/.*"idmint \([^"]*\)".*/\1/p' <<<"$th")"
done
check "CHANGELOG.md's first version heading" "$(sed -n 's/^## \([0-9][^ ]*\).*/\1/p' "$SRC/CHANGELOG.md" | head -n 1)"
check "bindings/python/pyproject.toml" "$(sed -n 's/^version = "\(.*\)"$/\1/p' "$SRC/bindings/python/pyproject.toml")"
if grep -q 'version=' "$SRC/bindings/python/setup.py"; then
    check "bindings/python/setup.py" "$(sed -n 's/.*version="\([^"]*\)".*/\1/p' "$SRC/bindings/python/setup.py")"
fi
check "bindings/node/package.json" "$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["version"])' "$SRC/bindings/node/package.json")"
exit "$bad"
