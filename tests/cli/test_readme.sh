#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The README's "Quick use" runs as written: its shell block in one shell, from
# a checkout where run.sh left the CLI (build/run/idmint) and nothing else put
# it on PATH; its C example, compiled inside a
# main() against this tree's header and library. Both against a private
# SQLite authority (IDMINT_AUTHORITY, and the C example's path rewritten to
# it): never the machine's default.
# Usage: test_readme.sh /path/to/idmint (libidmint_static.a is found beside it)
set -euo pipefail
IDMINT=$(readlink -f "${1:?usage: test_readme.sh /path/to/idmint}")
BUILD=$(dirname "$IDMINT")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
die() { echo "FAIL: $*" >&2; exit 1; }

# The first ```sh / ```c block after "## Quick use".
block() {
    sed -n '/^## Quick use/,/^## /p' "$ROOT/README.md" | sed -n "/^\`\`\`$1\$/,/^\`\`\`\$/p" |
        sed '1d;$d' | awk 'NR == 1 || !/^```/' | sed '/^```/,$d'
}
block sh >"$T/quick.sh"
block c >"$T/example.c"
[ "$(grep -c '^idmint ' "$T/quick.sh")" -ge 5 ] || die "fewer than 5 idmint lines in Quick use"
grep -q 'idmint_open' "$T/example.c" || die "no C example in Quick use"

# Where run.sh leaves the CLI, in a checkout; nothing else puts idmint on PATH.
mkdir -p "$T/work/build/run"
ln -s "$IDMINT" "$T/work/build/run/idmint"
export IDMINT_AUTHORITY="sqlite:$T/work/idmint.db"
PATH=$(printf '%s' "$PATH" | tr ':' '\n' | while read -r d; do [ -x "$d/idmint" ] || printf '%s:' "$d"; done)
PATH=${PATH%:}
(cd "$T/work" && bash -euo pipefail "$T/quick.sh") >"$T/out" 2>"$T/err" ||
    die "Quick use failed as written, from a checkout after run.sh: $(tail -n 5 "$T/err")"
grep -q '^count=1000000 duplicates=0 ' "$T/out" || die "Quick use's verify: $(tail -n 3 "$T/out")"
# The range example's five numbers start at its --start.
start=$(sed -n 's/.*--kind range --start \([0-9]*\).*/\1/p' "$T/quick.sh")
grep -qx "$start" "$T/out" || die "the range namespace did not start at $start"
echo "ok: Quick use ran as written ($(wc -l <"$T/quick.sh") lines)"

{
    echo '#include <stdio.h>'
    grep '^#include' "$T/example.c"
    echo 'int main(void) {'
    grep -v '^#include' "$T/example.c" | sed "s|sqlite:/var/lib/idmint/idmint.db|$IDMINT_AUTHORITY|"
    echo 'return id == 0; }'
} >"$T/main.c"
grep -q "$T/work/idmint.db" "$T/main.c" || die "the C example names no authority path to rewrite"
# A sanitizer build's library needs the same runtime in the program.
san=()
undefined=$(nm -u "$BUILD/libidmint_static.a" 2>/dev/null || true)
case "$undefined" in *__asan_init*) san=(-fsanitize=address,undefined) ;; esac
case "$undefined" in *__tsan_init*) san=(-fsanitize=thread) ;; esac
# shellcheck disable=SC2046 # pkg-config's words
cc -std=c11 -Wall -Werror "${san[@]}" -I"$ROOT/include" "$T/main.c" "$BUILD/libidmint_static.a" \
    $(pkg-config --libs sqlite3 jansson) -lpthread -ldl -lm -o "$T/example" 2>"$T/cc.err" ||
    die "the C example does not compile: $(head -n 5 "$T/cc.err")"
"$T/example" >"$T/c.out" || die "the C example failed"
grep -Eqx '[0-9]+' "$T/c.out" || die "the C example printed: $(cat "$T/c.out")"
echo "ok: the C example compiled and minted $(cat "$T/c.out")"
