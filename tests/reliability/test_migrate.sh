#!/usr/bin/env bash
# The migration drill (DESIGN.md §2, docs/operations.md "Migrating a
# namespace"): 4 processes mint from OLD while `idmint ns migrate OLD NEW`
# runs with another layout and epoch (or another kind); they mint on until
# their lease or range runs out, get the disabled error, and start again on
# NEW. Every NEW ID must be greater than every OLD ID, with no duplicate in
# the union. Snowflake to snowflake, range to range, snowflake to range. A
# layout that cannot pass the floor is refused with exit status 1 and
# changes nothing.
# Usage: test_migrate.sh /path/to/idmint [/path/to/idmintd]
set -euo pipefail
IDMINT=$1
scale=${IDMINT_TIMEOUT_SCALE:-1}
dir=$(mktemp -d)
trap 'kill -9 $(jobs -p) 2>/dev/null || true; [ -n "${KEEP:-}" ] || rm -rf "$dir"' EXIT
export IDMINT_AUTHORITY="sqlite:$dir/a.db"
fail() {
    echo "FAIL: $*" >&2
    exit 1
}

# drill OLD NEW MIGRATE-FLAGS...: OLD exists; 4 minters run on it through the migration.
drill() {
    local old=$1 new=$2 d="$dir/$1-$2" i rc
    shift 2
    mkdir -p "$d"
    local pids=()
    for i in 1 2 3 4; do
        "$IDMINT" mint --ns "$old" -n 1000000 --rate 2000 --lease 2 --renew 1 >"$d/old.$i" \
            2>"$d/err.$i" &
        pids+=($!)
    done
    sleep 1
    "$IDMINT" ns migrate "$old" "$new" "$@" >"$d/migrate.out"
    # Holders of OLD keep what they hold: each stops with the disabled
    # error once its lease or range is used up, then starts on NEW.
    for i in "${!pids[@]}"; do
        rc=0
        timeout $((10 * scale)) tail --pid="${pids[$i]}" -f /dev/null || fail "$old: minter $i ran on"
        wait "${pids[$i]}" || rc=$?
        [ "$rc" = 1 ] && grep -q "namespace disabled" "$d/err.$((i + 1))" ||
            fail "$old: minter $i: exit $rc: $(cat "$d/err.$((i + 1))")"
        "$IDMINT" mint --ns "$new" -n 2000 --rate 4000 >"$d/new.$((i + 1))" &
        pids[$i]=$!
    done
    for pid in "${pids[@]}"; do
        wait "$pid" || fail "$new: a minter failed"
    done
    local old_n old_max new_min dups
    old_n=$(cat "$d"/old.* | wc -l)
    [ "$old_n" -ge 4000 ] || fail "$old: only $old_n IDs"
    [ "$(cat "$d"/new.* | wc -l)" = 8000 ] || fail "$new: not 8000 IDs"
    old_max=$(cat "$d"/old.* | sort -n | tail -1)
    new_min=$(cat "$d"/new.* | sort -n | sed -n 1p)
    [ "$new_min" -gt "$old_max" ] || fail "$new's first ID $new_min is not above $old's last $old_max"
    dups=$(cat "$d"/old.* "$d"/new.* | sort | uniq -d | wc -l)
    [ "$dups" = 0 ] || fail "$dups duplicates across $old and $new"
    "$IDMINT" ns show "$new" | grep -q "^migrated_from: $old$" || fail "ns show $new: no origin"
    "$IDMINT" ns show "$old" | grep -q "^state: disabled$" || fail "$old is not disabled"
    echo "$old -> $new: $old_n IDs of $old below 8000 of $new (first $new_min > last $old_max), 0 duplicates"
}

"$IDMINT" ns create sf --kind snowflake --layout 41/0/4/12 >/dev/null
drill sf sf2 --layout 40/0/6/12 --unit 1 --epoch 2025-06-01
# An OLD ID decoded under NEW's layout would show a wrong date: decode says what it is.
rc=0
"$IDMINT" decode --ns sf2 "$(sed -n 1p "$dir/sf-sf2/old.1")" 2>"$dir/decode.err" || rc=$?
[ "$rc" = 1 ] && grep -q "below the floor" "$dir/decode.err" || fail "decode of an old ID: $rc"

"$IDMINT" ns create rg --kind range --block 100 >/dev/null
drill rg rg2
"$IDMINT" ns create sf3 --kind snowflake --layout 41/0/4/12 >/dev/null
drill sf3 rg3 --kind range --block 100

# Refused: 30 time bits of 1 ms from yesterday end long before they pass the floor.
"$IDMINT" ns create sf4 --kind snowflake >/dev/null
"$IDMINT" mint --ns sf4 -n 10 >/dev/null
audit_before=$(sqlite3 "$dir/a.db" "SELECT count(*) FROM audit")
rc=0
"$IDMINT" ns migrate sf4 bad --layout 30/0/10/12 --epoch "$(date -u -d yesterday +%F)" \
    2>"$dir/refused.err" || rc=$?
[ "$rc" = 1 ] || fail "a layout that cannot pass the floor: exit $rc"
grep -q "cannot pass the floor" "$dir/refused.err" || fail "refusal: $(cat "$dir/refused.err")"
rc=0
"$IDMINT" ns show bad >/dev/null 2>&1 || rc=$?
[ "$rc" = 1 ] || fail "the refused namespace exists"
"$IDMINT" ns show sf4 | grep -q "^state: enabled$" || fail "sf4 was left disabled"
[ "$(sqlite3 "$dir/a.db" "SELECT count(*) FROM audit")" = "$audit_before" ] || fail "a refused migration was audited"
# Both steps of each migration are audited with their figures.
[ "$(sqlite3 "$dir/a.db" "SELECT count(*) FROM audit WHERE action='ns.create' AND detail LIKE '%migrated_from=%floor=%'")" = 3 ] ||
    fail "migrations not audited with their floors"
echo "refused layout: exit 1, nothing created, nothing disabled, nothing audited"

# Provenance across a migration (issue 28, item 5): NEW's first holder takes
# worker 0 while OLD's holder of worker 0 still mints (same layout), so NEW's
# grant spans the time of OLD's last IDs. They are OLD's, and trace says so.
d="$dir/trace"
mkdir -p "$d"
"$IDMINT" ns create pa --kind snowflake --layout 41/0/4/12 >/dev/null
"$IDMINT" mint --ns pa -n 1000000 --rate 2000 --lease 3 --renew 1 >"$d/old" 2>"$d/old.err" &
old_pid=$!
sleep 0.5
"$IDMINT" ns migrate pa pb --layout 41/0/4/12 >/dev/null
"$IDMINT" mint --ns pb -n 100 >"$d/new" # takes worker 0 now, mints once past pa's last E
rc=0
wait "$old_pid" || rc=$?
[ "$rc" = 1 ] || fail "pa's minter: exit $rc"
tail -200 "$d/old" >"$d/old.last"
rc=0
"$IDMINT" trace --ns pb - <"$d/old.last" >"$d/trace.pb" || rc=$?
[ "$rc" = 1 ] && [ "$(grep -c " not_minted: not an ID of 'pb': " "$d/trace.pb")" = 200 ] ||
    fail "pa's last IDs traced in pb: exit $rc: $(head -3 "$d/trace.pb")"
grep -q "it lies in a grant of 'pa', which 'pb' was migrated from" "$d/trace.pb" ||
    fail "pa's IDs minted while pb's holder held worker 0 are not put down to pa: $(tail -1 "$d/trace.pb")"
"$IDMINT" trace --ns pa - <"$d/old.last" | grep -c " minted host=" | grep -qx 200 ||
    fail "pa's last IDs are not traced to pa"
"$IDMINT" trace --ns pb - <"$d/new" | grep -c " minted host=" | grep -qx 100 ||
    fail "pb's IDs are not traced to pb"
echo "trace across a migration: pa's last IDs are pa's, not pb's"
echo "migration drill: ok"
