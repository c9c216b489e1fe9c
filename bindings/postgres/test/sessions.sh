#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# 1,000 short sessions (connect, one insert, disconnect), 4 at a time: the
# server's one lease serves them all. No worker id is taken for a session,
# and every row has its own ID. Run by ../ci.sh (IDMINT_PG_ENV, IDMINT, SRC).
set -euo pipefail
. "$SRC/tests/support/pg-fixture.sh"

# Every take of a worker id grows its row's generation: their sum counts takes.
takes() { "$IDMINT" workers orders | sed -nE 's/.* generation=([0-9]+).*/\1/p' | awk '{s += $1} END {print s + 0}'; }

as_super -d idmint -c "CREATE TABLE short_sessions (id bigint PRIMARY KEY DEFAULT idmint_next('orders'), n int)"
as_super -d idmint -tAc "SELECT idmint_next('orders')" >/dev/null # the lease exists before the count
before=$(takes)
handles_before=$(as_super -d idmint -tAc "SELECT handles FROM idmint_status() WHERE namespace = 'orders'")

for lane in 0 1 2 3; do
    (
        for i in $(seq "$lane" 4 999); do
            as_super -d idmint -c "INSERT INTO short_sessions (n) VALUES ($i)"
        done
    ) &
done
wait

after=$(takes)
handles_after=$(as_super -d idmint -tAc "SELECT handles FROM idmint_status() WHERE namespace = 'orders'")
rows=$(as_super -d idmint -tAc "SELECT count(DISTINCT id) || ' ' || count(*) FROM short_sessions")
echo "sessions: 1000 sessions, rows (distinct, all) = $rows, worker-id takes $before -> $after, server handles $handles_before -> $handles_after"
[ "$rows" = "1000 1000" ] || { echo "sessions: expected 1000 distinct rows" >&2; exit 1; }
[ $((after - before)) -le 1 ] || { echo "sessions: the sessions took $((after - before)) worker ids" >&2; exit 1; }
[ "$handles_after" = "$handles_before" ] || { echo "sessions: the server opened new handles" >&2; exit 1; }
