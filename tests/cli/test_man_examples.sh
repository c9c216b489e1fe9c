#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs every example in docs/man/idmint.1 (the "$ " lines of EXAMPLES) in a
# fresh directory; where the page shows output, the output must match it.
set -euo pipefail

IDMINT=${1:?usage: test_man_examples.sh /path/to/idmint}
PAGE="$(cd "$(dirname "$0")/../.." && pwd)/docs/man/idmint.1"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir "$T/bin" "$T/work"
ln -s "$(cd "$(dirname "$IDMINT")" && pwd)/$(basename "$IDMINT")" "$T/bin/idmint"
# The examples' authority is ./idmint.db of the fresh directory (the page's
# last example names it so): never the default file, which for root (CI) is
# /var/lib/idmint/idmint.db, and for others is under the real home.
export IDMINT_AUTHORITY="sqlite:$T/work/idmint.db" HOME="$T/home" XDG_STATE_HOME="$T/home/state"

# The EXAMPLES section between .nf and .fi, with roff's \- turned back into -.
sed -n '/^\.SH EXAMPLES/,/^\.SH /p' "$PAGE" | sed -n '/^\.nf/,/^\.fi/p' |
    grep -v '^\.' | sed 's/\\-/-/g' >"$T/examples"
[ "$(grep -c '^\$ ' "$T/examples")" -ge 5 ] || {
    echo "FAIL: fewer than 5 examples found in $PAGE" >&2
    exit 1
}

run=0
cmd=""
: >"$T/want"
check_previous() {
    [ -n "$cmd" ] || return 0
    run=$((run + 1))
    if ! (cd "$T/work" && PATH="$T/bin:$PATH" bash -o pipefail -c "$cmd") >"$T/got" 2>"$T/err"; then
        echo "FAIL: example failed: $cmd: $(cat "$T/err")" >&2
        exit 1
    fi
    if [ -s "$T/want" ] && ! cmp -s "$T/want" "$T/got"; then
        echo "FAIL: example '$cmd' printed: $(cat "$T/got"), the page says: $(cat "$T/want")" >&2
        exit 1
    fi
}
while IFS= read -r line; do
    if [[ "$line" == '$ '* ]]; then
        check_previous
        cmd=${line#\$ }
        : >"$T/want"
    else
        printf '%s\n' "$line" >>"$T/want"
    fi
done <"$T/examples"
check_previous
echo "all $run man page examples ran"
