#!/usr/bin/env bash
# A start burst on one SQLite file (issue 18): 200 `idmint mint` processes
# started at once, half snowflake and half range, each minting 20,000 IDs
# (two range blocks, so each range process also refills once under the
# burst). Every process must succeed, and no ID may repeat. Then 40 at once
# on a namespace of 16 worker ids: the only failure allowed is the explicit
# no-worker error.
# Usage: test_start_burst.sh /path/to/idmint [/path/to/idmintd]; BURST_N=N for another size
set -euo pipefail
IDMINT=$1
n=${BURST_N:-200}
dir=$(mktemp -d)
trap 'kill -9 $(jobs -p) 2>/dev/null || true; rm -rf "$dir"' EXIT
export IDMINT_AUTHORITY="sqlite:$dir/idmint.db"
"$IDMINT" ns create inv --kind range >/dev/null
"$IDMINT" ns create few --kind snowflake --layout 41/0/4/12 >/dev/null
"$IDMINT" mint -n 1 >/dev/null # "default" exists before the burst, as in a deploy

start=$(date +%s%N)
for i in $(seq 1 "$n"); do
    if [ $((i % 2)) = 0 ]; then ns=default; else ns=inv; fi
    # A range process waits up to 30 s for a block: 200 processes starting at
    # once on one SQLite file queue for its write lock longer than the 2 s default.
    "$IDMINT" mint -n 20000 --ns "$ns" --deadline-ms 30000 >"$dir/ids.$i" 2>"$dir/err.$i" &
done
fails=0
for pid in $(jobs -p); do wait "$pid" || fails=$((fails + 1)); done
ms=$((($(date +%s%N) - start) / 1000000))
cat "$dir"/err.* >"$dir/errors"
echo "burst of $n: $fails failed, $(wc -l <"$dir/errors") error lines, ${ms} ms"
if [ "$fails" != 0 ] || [ -s "$dir/errors" ]; then
    sed 's/[0-9]\+ ms/N ms/g' "$dir/errors" | sort | uniq -c | sort -rn | head -5
    exit 1
fi
total=$(cat "$dir"/ids.* | wc -l)
[ "$total" = $((n * 20000)) ] || { echo "$total IDs, want $((n * 20000))"; exit 1; }
dups=$(cat "$dir"/ids.* | sort | uniq -d | wc -l)
[ "$dups" = 0 ] || { echo "$dups duplicate IDs"; exit 1; }

rm -f "$dir"/ids.* "$dir"/err.*
for i in $(seq 1 40); do
    # Long enough to keep their ids held while the others start.
    "$IDMINT" mint -n 200000 --rate 400000 --ns few >"$dir/ids.$i" 2>"$dir/err.$i" &
done
wait || true
cat "$dir"/err.* >"$dir/errors"
other=$(grep -vc "all 16 worker ids are held" "$dir/errors" || true)
held=$(grep -c "all 16 worker ids are held" "$dir/errors" || true)
echo "40 on 16 worker ids: $held refused with no worker, $other other errors"
[ "$other" = 0 ] || { grep -v "all 16 worker ids are held" "$dir/errors" | head -3; exit 1; }
[ "$held" -ge 1 ] || { echo "no process was refused: the namespace was never full"; exit 1; }
dups=$(cat "$dir"/ids.* | sort | uniq -d | wc -l)
[ "$dups" = 0 ] || { echo "$dups duplicate IDs"; exit 1; }
echo "test_start_burst: PASS"
