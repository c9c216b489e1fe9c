#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The fleet checker must catch a planted overlap: one generator opens through
# the fault store with ts_fault_set_share_worker(1), which hands worker 0 to it
# while worker 0's holder still mints, so two processes mint the same IDs.
# The same small drill without the defect must come out clean, so the
# checker is shown to tell the two apart rather than to fail everything.
# Usage: test_planted.sh IDMINT FLEET_MINTER
set -euo pipefail
IDMINT=$1 MINTER=$2
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
drill() {
    python3 "$here/fleet.py" --idmint "$IDMINT" --minter "$MINTER" --procs 12 --seconds 8 \
        --rate 5000 --restart 0.17 --kill 0.09 "$@"
}

echo "== the planted defect: one process shares worker 0"
drill --planted 1 --expect-overlap --dir "$dir/planted" sqlite | tee "$dir/planted.txt"
grep -q '^  OVERLAP .*worker 0/0' "$dir/planted.txt" ||
    { echo "test_planted: the overlap named no span of worker 0"; exit 1; }

echo "== the same drill without it"
drill --dir "$dir/clean" sqlite | tee "$dir/clean.txt"
grep -q 'overlaps=0 problems=0' "$dir/clean.txt" ||
    { echo "test_planted: the clean drill reported problems"; exit 1; }
echo "test_planted: PASS"
