#!/usr/bin/env bash
# docs/errors.md must list every code of include/idmint.h with its value and
# text, and the HTTP status and JSON code that src/wire_errors.c gives it;
# docs/http-api.md's error table every status and code of that table.
# And every public call in idmint.h documents its errors and threads: a doc
# block with "Thread-safety:", an @return on each call returning a status,
# and no @return that trails off in "...".
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
    mapping=$(grep -oE "\{IDMINT_$name, [0-9]+, \"[a-z_]+\", 0\}" "$top/src/wire_errors.c" || true)
    status=$(sed -E 's/.*, ([0-9]+), .*/\1/' <<<"$mapping")
    code=$(sed -E 's/.*"([a-z_]+)".*/\1/' <<<"$mapping")
    if [ -z "$mapping" ] || ! grep -qF "| $status | \`$code\` |" <<<"$row"; then
        echo "errors.md: IDMINT_$name should map to $status $code (src/wire_errors.c)" >&2
        fail=1
    fi
done < <(grep -oE 'XX\(E[A-Z]+, -[0-9]+, "[^"]+"\)' "$top/include/idmint.h" |
         sed -E 's/XX\((E[A-Z]+), (-[0-9]+), "([^"]+)"\)/\1 \2 \3/')
while read -r status code; do
    if ! grep -qE "^\| \`$code\` \| $status \|" "$top/docs/http-api.md"; then
        echo "http-api.md: the error table lacks '$code' ($status) of src/wire_errors.c" >&2
        fail=1
    fi
done < <(grep -oE '\{IDMINT_E[A-Z]+, [0-9]+, "[a-z_]+", [01]\}' "$top/src/wire_errors.c" |
         sed -E 's/.*, ([0-9]+), "([a-z_]+)".*/\1 \2/' | sort -u)
# The doc block right above each IDMINT_API declaration or static inline
# function; its @return runs to the next tag, blank line or end of block.
if ! awk '
    function report(what) { print "idmint.h:" FNR ": " name ": " what > "/dev/stderr"; bad = 1 }
    /^\/\*\*/ { doc = ""; in_doc = 1 }
    in_doc { doc = doc "\n" $0; if ($0 ~ /\*\//) { in_doc = 0; doc_end = FNR } ; next }
    /^(IDMINT_API|static inline) / {
        name = $0; sub(/\(.*/, "", name); sub(/.*[ *]/, "", name)
        if (doc_end != FNR - 1) { report("no doc block right above it"); next }
        if (doc !~ /Thread-safety:/) report("no Thread-safety: line")
        if ($0 ~ /IDMINT_NODISCARD int / && doc !~ /@return/) report("no @return")
        n = split(doc, lines, "\n"); in_ret = 0; ret = ""
        for (k = 1; k <= n; k++) {
            l = lines[k]
            if (l ~ /@return/) in_ret = 1
            else if (in_ret && l ~ /(@param|Ownership:|Thread-safety:|^ \*$|^ \*\/$)/) in_ret = 0
            if (in_ret) ret = ret " " l
            if (l ~ /\*\//) in_ret = 0
        }
        if (ret ~ /\.\.\./) report("@return ends in \"...\": list every code")
    }
    END { exit bad }' "$top/include/idmint.h"; then
    echo "idmint.h: complete the doc blocks above" >&2
    fail=1
fi
[ "$fail" -eq 0 ] && echo "errors.md and http-api.md match idmint.h and src/wire_errors.c; every call documents its errors and threads"
exit "$fail"
