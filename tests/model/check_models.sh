#!/usr/bin/env bash
# Exhaustive spin checks of models/*.pml: each real model must verify with no
# error over a complete search; each broken variant and reachability probe
# must fail an assertion (so the model can see what it claims to see); a
# broken twin must fail the model's uniqueness assertion itself, i.e. spin
# finds the duplicate, not some other assertion. A check may pass several
# -D flags in one quoted word.
# Usage: check_models.sh [models-dir]   (needs spin and gcc on PATH)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
models=${1:-$here/../../models}
memlim_mb=1024 # pan stops (and the check fails) rather than pass on a partial search
depth=100000

for tool in spin gcc; do
    command -v "$tool" >/dev/null || { echo "model: $tool not found on PATH" >&2; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

passed=0
failed=0

# check <pass|fail> <model> ["-Dflag ..." [text the violated assertion must contain]]
check() {
    local want=$1 model=$2 flag=${3:-} must=${4:-} name dir out states secs mem errors tag
    name="$model${flag:+ $flag}"
    tag=${flag//-D/}
    dir="$tmp/$model${flag:+.${tag// /.}}"
    mkdir -p "$dir"
    cp "$models/$model.pml" "$dir/"
    if ! (cd "$dir" && spin $flag -a "$model.pml" >spin.log 2>&1 &&
        gcc -O2 -w -DSAFETY -DCOLLAPSE -DMEMLIM=$memlim_mb -o pan pan.c >gcc.log 2>&1); then
        echo "FAIL $name: spin -a or gcc failed:"
        cat "$dir/spin.log" "$dir/gcc.log" 2>/dev/null | head -20
        failed=$((failed + 1))
        return
    fi
    out=$(cd "$dir" && ./pan -m$depth 2>&1)
    errors=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' <<<"$out" | tail -1)
    states=$(awk '/states, stored/ {print $1; exit}' <<<"$out")
    secs=$(awk '/pan: elapsed time/ {print $4; exit}' <<<"$out")
    mem=$(awk '/total actual memory usage/ {print $1; exit}' <<<"$out")
    local info="states=${states:-?} time=${secs:-?}s mem=${mem:-?}MB"
    local why=""
    if [[ -z "$errors" ]]; then
        why="no result from pan"
    elif [[ $want == pass ]]; then
        if [[ $errors != 0 ]]; then
            why="errors: $errors: $(grep -m1 -E 'violated|error' <<<"$out")"
        elif grep -qE 'max search depth too small|MEMLIM bound|out of memory|Search not completed' \
            <<<"$out"; then
            why="search incomplete: $(grep -m1 -E 'depth too small|MEMLIM|memory|not completed' <<<"$out")"
        fi
    elif ! grep -q 'assertion violated' <<<"$out" || [[ $errors == 0 ]]; then
        why="expected an assertion violation, got errors: $errors"
    elif [[ -n $must ]] && ! grep -m1 'assertion violated' <<<"$out" | grep -qF -- "$must"; then
        why="expected the assertion on '$must', got: $(grep -m1 'assertion violated' <<<"$out")"
    fi
    if [[ -z "$why" ]]; then
        if [[ $want == pass ]]; then
            echo "ok   $name: verified, $info"
        else
            echo "ok   $name: fails as expected ($(grep -m1 'assertion violated' <<<"$out" |
                sed 's/^pan:1: //; s/ (at depth.*//')), $info"
        fi
        passed=$((passed + 1))
    else
        echo "FAIL $name: $why, $info"
        failed=$((failed + 1))
    fi
}

dup_lease='(minted&(1<<' # lease.pml's uniqueness assertion in MINT
dup_range='(issued&(1<<' # range.pml's, in its issue step
dup_restore='(issued&(1<<' # restore.pml's, in its issue step
dup_region='(minted_by[t]==0)'  # region.pml's, in its mint step
plain_fixed="-DPLAIN_COPY -DALL_WROTE -DSTORE_CHECK" # restore.pml: a plain copy with the proposed fix

check pass lease
check fail lease -DBROKEN_FENCE "$dup_lease"
check fail lease -DBROKEN_RELEASE "$dup_lease"
check fail lease -DBROKEN_RELEASE_HOLDER "$dup_lease"
check fail lease -DBROKEN_RELEASE_CLAMP "$dup_lease"
check fail lease -DBROKEN_FORCE "$dup_lease"
check fail lease -DREACH_STALE_MINT
check fail lease -DREACH_REPLAY
check fail lease -DREACH_FULL
check fail lease -DREACH_CLAMP_LOW
check fail lease -DREACH_CLAMP_HIGH
check fail lease -DREACH_FORCE_LOWER
check fail lease -DREACH_OWN_REPEAT "$dup_lease"
check pass range
check fail range -DBROKEN_REPLAY "$dup_range"
check fail range -DREACH_RETRY_SAVED
check fail range -DREACH_FULL
check pass restore
check fail restore -DFENCE_NO_ABOVE "$dup_restore"
check fail restore -DFENCE_EARLY "$dup_restore"
check fail restore -DREACH_DISCARD
check fail restore -DREACH_REPLAY
# A plain (unmarked) copy under the code as it is: each mechanism duplicates
# (models/README.md, "restore.pml: what a plain copy costs").
check fail restore -DPLAIN_COPY "$dup_restore"
check fail restore "-DPLAIN_COPY -DALL_WROTE -DMAXLOST=0" "$dup_restore"
check fail restore "-DPLAIN_COPY -DSTORE_CHECK" "$dup_restore"
check pass restore "$plain_fixed"
check fail restore "$plain_fixed -DNO_HISTORY_CHECK" "$dup_restore"
check fail restore "$plain_fixed -DWEAK_CHECK" "$dup_restore"
check fail restore "$plain_fixed -DFRESH_EARLY" "$dup_restore"
# The code: tips in a history log, periodic checks, this host's witness
# (models/README.md, "restore.pml: the history chain"). An unmarked restore
# under live holders, with fresh holders starting at any moment, verifies;
# without the tips, without a witness (a brand-new host), or with the
# witness raised after the grant is used, it duplicates.
check pass restore "-DCHAIN"
check pass restore "-DCHAIN -DPLAIN_COPY"
check fail restore "-DCHAIN -DPLAIN_COPY -DNO_TIP" "$dup_restore"
check fail restore "-DCHAIN -DPLAIN_COPY -DNO_WITNESS" "$dup_restore"
check fail restore "-DCHAIN -DPLAIN_COPY -DLATE_WITNESS" "$dup_restore"

# Region claims (issue 33): claimed in a registry, released with a fence.
check pass region
check pass region "-DNAUTH=3 -DMAXT=7"
check fail region -DNO_FENCE "$dup_region"
check fail region -DNOT_MARKED "$dup_region"
check fail region -DFLOOR_FIRST "$dup_region"
check fail region -DNO_EPOCH "$dup_region"
check fail region -DREACH_BOTH

echo "$passed passed, $failed failed"
[[ $failed == 0 ]]
