#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A session that takes IDs faster than one worker id makes them: the server
# takes more leases on the namespace (up to idmint.max_leases, 4), and its IDs
# still increase across all of them, with no repeat; quiet again, it gives
# the extra worker ids back. The namespace "tiny" (6 sequence bits: 64 IDs a
# ms per worker id) is outrun by any session on any machine.
# Run by ../ci.sh (IDMINT_PG_ENV, IDMINT, SRC).
set -euo pipefail
. "$SRC/tests/support/pg-fixture.sh"

"$IDMINT" ns create tiny --kind snowflake --layout 41/0/16/6 >/dev/null
held() { "$IDMINT" workers tiny | grep -vc "holder=-" || true; }

as_super -d idmint -c "CREATE TABLE tiny_ids AS SELECT g, idmint_next('tiny') AS id FROM generate_series(1, 200000) g"
read -r n distinct increasing workers leases <<<"$(as_super -d idmint -tA -F ' ' -c "
    SELECT count(*), count(DISTINCT id),
           bool_and(prev IS NULL OR id > prev),
           (SELECT count(DISTINCT worker) FROM tiny_ids, idmint_decode('tiny', id)),
           (SELECT leases FROM idmint_status() WHERE namespace = 'tiny')
      FROM (SELECT id, lag(id) OVER (ORDER BY g) AS prev FROM tiny_ids) s")"
echo "leases: 200000 IDs, $distinct distinct, increasing $increasing, from $workers worker ids; the server holds $leases leases, the authority shows $(held) held"
[ "$n" = 200000 ] && [ "$distinct" = 200000 ] || { echo "leases: repeated IDs" >&2; exit 1; }
[ "$increasing" = t ] || { echo "leases: the IDs went backwards across leases" >&2; exit 1; }
[ "$workers" -ge 2 ] && [ "$leases" -ge 2 ] && [ "$leases" -le 4 ] || {
    echo "leases: expected 2 to 4 leases at work" >&2
    exit 1
}

# Quiet for 10 s, the extra leases go back to the authority.
for _ in $(seq 1 40); do
    [ "$(as_super -d idmint -tAc "SELECT leases FROM idmint_status() WHERE namespace = 'tiny'")" = 1 ] && break
    sleep 0.5
done
after=$(as_super -d idmint -tAc "SELECT leases FROM idmint_status() WHERE namespace = 'tiny'")
echo "leases: quiet again, the server holds $after, the authority shows $(held) held"
[ "$after" = 1 ] && [ "$(held)" = 1 ] || { echo "leases: the extra leases were not given back" >&2; exit 1; }
as_super -d idmint -c "DROP TABLE tiny_ids"
