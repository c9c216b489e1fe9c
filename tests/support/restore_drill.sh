#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Shared steps of the restore drills (tests/reliability/test_restore_sqlite.sh,
# test_pg_restore.sh), sourced after IDMINT, IDMINT_AUTHORITY and scale are set
# and the namespaces sf (snowflake) and rg (range, small blocks) exist.
# Each step fails the drill with fail() (defined by the caller).

# drill_start DIR: two minters of each kind at 2,000 IDs a second (renewals
# every second, a range refill every 25 ms); their pids in drill_pids.
drill_start() {
    local d=$1 i
    drill_pids=()
    for i in 1 2; do
        "$IDMINT" mint --ns sf -n 1000000 --rate 2000 --lease 2 --renew 1 >"$d/lost.sf.$i" \
            2>"$d/err.sf.$i" &
        drill_pids+=($!)
        "$IDMINT" mint --ns rg -n 1000000 --rate 2000 >"$d/lost.rg.$i" 2>"$d/err.rg.$i" &
        drill_pids+=($!)
    done
}

# drill_stopped DIR WHAT: every minter stops (exit 1) with the explicit error.
drill_stopped() {
    local d=$1 what=$2 i rc f
    for i in "${!drill_pids[@]}"; do
        rc=0
        timeout $((15 * scale)) tail --pid="${drill_pids[$i]}" -f /dev/null ||
            fail "$what: minter $i did not stop"
        wait "${drill_pids[$i]}" || rc=$?
        [ "$rc" = 1 ] || fail "$what: minter $i exited $rc, not 1"
    done
    for f in "$d"/err.*; do
        grep -q "authority restored or rewound" "$f" || fail "$what: $f: $(cat "$f")"
    done
}

# drill_fresh DIR WHAT: after the fence, 3,000 fresh IDs of each namespace lie
# above every ID of the lost history, and no ID of the drill repeats.
drill_fresh() {
    local d=$1 what=$2 ns lost_n dups fresh_min lost_max
    for ns in sf rg; do
        "$IDMINT" mint --ns "$ns" -n 3000 >"$d/fresh.$ns" || fail "$what: fresh $ns minter"
        lost_n=$(cat "$d"/lost.$ns.* | wc -l)
        [ "$lost_n" -gt 1000 ] || fail "$what: only $lost_n $ns IDs before the restore"
        [ "$(wc -l <"$d/fresh.$ns")" = 3000 ] || fail "$what: fresh $ns minter"
        dups=$(cat "$d"/lost.$ns.* "$d/fresh.$ns" | sort | uniq -d | wc -l)
        [ "$dups" = 0 ] || fail "$what: $dups duplicate $ns IDs"
        fresh_min=$(sort -n "$d/fresh.$ns" | sed -n 1p)
        lost_max=$(cat "$d"/lost.$ns.* | sort -n | tail -1)
        [ "$fresh_min" -gt "$lost_max" ] ||
            fail "$what: fresh $ns ID $fresh_min <= $lost_max of the lost history"
        echo "$what: $ns: $lost_n IDs before and across the restore, 3000 after the fence, 0 duplicates"
    done
}
