#!/usr/bin/env bash
# kill -9 minting processes (snowflake and range, several at once) at random
# moments, at least 50 times, restarting them each round; then check every ID
# they printed for duplicates, with `idmint verify` and, independently of any
# idmint code, with sort | uniq -d.
# Usage: test_kill9.sh /path/to/idmint [/path/to/idmintd]; KILL9_ROUNDS=N for more rounds
set -euo pipefail
IDMINT=$1
rounds=${KILL9_ROUNDS:-25}
dir=$(mktemp -d)
trap 'kill -9 $(jobs -p) 2>/dev/null || true; rm -rf "$dir"' EXIT
export IDMINT_AUTHORITY="sqlite:$dir/idmint.db"

"$IDMINT" ns create snow --kind snowflake --layout 41/0/5/12 >/dev/null
"$IDMINT" ns create rng --kind range --block 2000 >/dev/null

kills=0
for r in $(seq 1 "$rounds"); do
    pids=()
    for ns in snow snow rng rng; do
        # Short leases, so ids of killed holders expire and are taken again
        # behind the fence during the run.
        "$IDMINT" mint -n 1000000 --ns "$ns" --lease 1 >"$dir/out.$r.${#pids[@]}" 2>>"$dir/errors" &
        pids+=($!)
    done
    for pid in "${pids[@]}"; do
        sleep "0.0$((RANDOM % 6 + 1))"
        if kill -9 "$pid" 2>/dev/null; then
            kills=$((kills + 1))
        fi
    done
    wait 2>/dev/null || true
done

# A kill can land mid-line: drop an unterminated last line.
for f in "$dir"/out.*; do
    if [ -s "$f" ] && [ -n "$(tail -c1 "$f")" ]; then
        sed -i '$d' "$f"
    fi
done
total=$(cat "$dir"/out.* | wc -l)
dups=$(cat "$dir"/out.* | sort | uniq -d | wc -l)
echo "kill9: rounds=$rounds kills=$kills ids=$total duplicates=$dups"
if grep -v -e '^$' "$dir/errors" | grep -qv 'Killed'; then
    echo "kill9: minting errors other than kills:" >&2
    sort "$dir/errors" | uniq -c | head >&2
fi
[ "$kills" -ge 50 ] || { echo "kill9: only $kills kills landed, need 50" >&2; exit 1; }
[ "$total" -gt 0 ] || { echo "kill9: no IDs were printed" >&2; exit 1; }
[ "$dups" -eq 0 ] || { echo "kill9: $dups duplicate IDs" >&2; exit 1; }
cat "$dir"/out.* | "$IDMINT" verify >"$dir/verify" || { cat "$dir/verify" >&2; exit 1; }
grep -q "count=$total duplicates=0" "$dir/verify" || { cat "$dir/verify" >&2; exit 1; }
echo "kill9: ok"
