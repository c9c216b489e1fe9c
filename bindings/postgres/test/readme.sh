#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The README's five lines work as written: its postgresql.conf lines are the
# ones this server runs with (../ci.sh sets them), and its SQL block runs in a
# database of its own: the extension, a table with the default, a row, and the
# time-window query finds that row. Run by ../ci.sh (IDMINT_PG_ENV, SRC).
set -euo pipefail
. "$SRC/tests/support/pg-fixture.sh"
readme=$SRC/bindings/postgres/README.md

block() { # the first ```LANG block of the README
    awk -v lang="$1" '$0 == "```" lang {on = 1; next} on && $0 == "```" {exit} on {print}' "$readme"
}
conf=$(block ini)
for setting in shared_preload_libraries idmint.authority; do
    grep -q "^$setting = " <<<"$conf" || { echo "readme: no $setting line in its postgresql.conf block" >&2; exit 1; }
done
[ "$(as_super -d postgres -tAc "SHOW shared_preload_libraries")" = idmint ] ||
    { echo "readme: this server does not preload idmint as the README says" >&2; exit 1; }

sql=$(block sql)
[ "$(grep -c . <<<"$sql")" -ge 3 ] || { echo "readme: no SQL block" >&2; exit 1; }
as_super -d postgres -c "DROP DATABASE IF EXISTS readme_check" -c "CREATE DATABASE readme_check"
# The block as written, then a row, then the block's own query again, which must find it.
query=$(grep -A2 "^SELECT" <<<"$sql")
out=$(as_super -d readme_check -tA <<SQL
$sql
INSERT INTO orders (item) VALUES ('from the README');
SELECT pg_sleep(0.01); -- now() of the next query lies past the row's time unit
$query
SQL
)
grep -q "|from the README$" <<<"$out" || { echo "readme: the time-window query did not find the new row: $out" >&2; exit 1; }
as_super -d postgres -c "DROP DATABASE readme_check"
echo "readme: the README's SQL block runs as written, and its time-window query finds a new row"
