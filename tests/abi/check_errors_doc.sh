#!/usr/bin/env bash
# docs/errors.md must list every code of include/idmint.h with its value and
# text, and the HTTP status and JSON code that cmd/idmintd/errors_http.c gives it.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
doc="$top/docs/errors.md"
fail=0
while read -r name value text; do
    row=$(grep -F "| \`IDMINT_$name\` | $value | $text |" "$doc" || true)
    if [ -z "$row" ]; then
        echo "errors.md: no row 'IDMINT_$name | $value | $text'" >&2
        fail=1
        continue
    fi
    mapping=$(grep -oE "\{IDMINT_$name, [0-9]+, \"[a-z_]+\"\}" "$top/cmd/idmintd/errors_http.c" || true)
    status=$(sed -E 's/.*, ([0-9]+), .*/\1/' <<<"$mapping")
    code=$(sed -E 's/.*"([a-z_]+)".*/\1/' <<<"$mapping")
    if [ -z "$mapping" ] || ! grep -qF "| $status | \`$code\` |" <<<"$row"; then
        echo "errors.md: IDMINT_$name should map to $status $code (errors_http.c)" >&2
        fail=1
    fi
done < <(grep -oE 'XX\(E[A-Z]+, -[0-9]+, "[^"]+"\)' "$top/include/idmint.h" |
         sed -E 's/XX\((E[A-Z]+), (-[0-9]+), "([^"]+)"\)/\1 \2 \3/')
[ "$fail" -eq 0 ] && echo "errors.md matches idmint.h and errors_http.c"
exit "$fail"
