#!/usr/bin/env bash
# A planted defect (the fault store hands worker 0 to a second process while
# the first still mints with it) must be caught: idmint verify --ns finds the
# duplicates and names both owners through provenance; a duplicate reported
# to idmintd (POST /v1/collisions) shows in GET /v1/collisions, the audit log
# and idmint_collisions_total.
# Usage: test_collisions.sh IDMINT IDMINTD SHARE_MINTER
set -euo pipefail
IDMINT=$1 IDMINTD=$2 MINTER=$3
dir=$(mktemp -d)
trap 'kill -9 $(jobs -p) 2>/dev/null || true; rm -rf "$dir"' EXIT
db="sqlite:$dir/idmint.db"
"$IDMINT" --authority "$db" ns create sf --kind snowflake --layout 41/0/3/12 >/dev/null

"$MINTER" "$db" sf 50000000 0 2000 >"$dir/a.txt" &
a=$!
# B must start once A holds worker 0 and mints: a B that opened first would
# take worker 0 itself and leave A worker 1, and nothing would repeat.
for _ in $(seq 1 300); do
    [ -s "$dir/a.txt" ] && break
    kill -0 "$a" 2>/dev/null || break
    sleep 0.1
done
[ -s "$dir/a.txt" ] || { echo "minter A printed nothing"; exit 1; }
"$MINTER" "$db" sf 3000000 1 2000 >"$dir/b.txt"
b_done=$?
for _ in $(seq 1 100); do kill -0 "$a" 2>/dev/null || break; sleep 0.1; done
kill -9 "$a" 2>/dev/null || true
wait "$a" 2>/dev/null || true
echo "minted: $(wc -l <"$dir/a.txt") by A (pid $a), $(wc -l <"$dir/b.txt") by B (rc $b_done)"

set +e
cat "$dir/a.txt" "$dir/b.txt" | "$IDMINT" --authority "$db" verify --ns sf >"$dir/verify.txt"
rc=$?
set -e
head -3 "$dir/verify.txt"
[ "$rc" = 1 ] || { echo "verify exit $rc, want 1"; exit 1; }
grep -q "duplicates=[1-9]" "$dir/verify.txt" || { echo "no duplicates found"; exit 1; }
line=$(grep -m1 '^collision .* duplicate:' "$dir/verify.txt") || { echo "no collision record"; exit 1; }
case "$line" in *"pid=$a "*"|"*) ;; *) echo "first owner is not A (pid $a): $line"; exit 1 ;; esac
case "$line" in *"| host="*"pid="*) ;; *) echo "no second owner: $line"; exit 1 ;; esac
dup=$(echo "$line" | awk '{print $2}')
echo "collision found: $dup"

"$IDMINTD" --listen 127.0.0.1:0 --authority "$db" --port-file "$dir/port" >"$dir/d.log" 2>&1 &
for _ in $(seq 1 100); do [ -s "$dir/port" ] && break; sleep 0.05; done
port=$(cat "$dir/port")
base="http://127.0.0.1:$port"
before=$(curl -sf "$base/v1/collisions" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["collisions"]))')
code=$(curl -s -o "$dir/post.json" -w '%{http_code}' -XPOST \
    -d "{\"namespace\":\"sf\",\"id\":\"$dup\",\"note\":\"unique violation on orders.id\"}" \
    "$base/v1/collisions")
[ "$code" = 201 ] || { echo "POST /v1/collisions: $code $(cat "$dir/post.json")"; exit 1; }
python3 - "$dir/post.json" "$a" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))["collision"]
assert c["verdict"] == "duplicate", c
assert f"pid={sys.argv[2]} " in c["first_owner"] and "pid=" in c["second_owner"], c
PY
curl -sf "$base/v1/collisions" | python3 -c "
import json,sys
l = json.load(sys.stdin)['collisions']
assert len(l) == $before + 1 and l[-1]['id'] == '$dup' and l[-1]['note'].startswith('unique'), l"
# Into files first: grep -q stops reading at its match, and with pipefail the
# writer's SIGPIPE would fail the check.
curl -sf "$base/v1/audit" >"$dir/audit.json"
grep -q '"action":"collision.report"' "$dir/audit.json" || { echo "no audit record"; exit 1; }
curl -sf "$base/metrics" >"$dir/metrics.txt"
grep -q '^idmint_collisions_total 1$' "$dir/metrics.txt" ||
    { echo "metric not 1: $(grep collisions_total "$dir/metrics.txt")"; exit 1; }
grep -q 'duplicate ID reported' "$dir/d.log" || { echo "no error log line"; exit 1; }
echo "test_collisions: PASS"
