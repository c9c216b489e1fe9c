#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The three-region drill (issue 33, docs/multi-node.md "Regions"): one
# registry (a PostgreSQL cluster of its own) and three regional
# authorities of three kinds: region 0 on SQLite, region 1 on PostgreSQL,
# region 2 on etcd. Namespace ev (R = 2) is defined once, in the registry,
# and each region takes its copy from there. Then:
#   refusals  a fourth authority claiming region 1 again; an authority whose
#             ev has other bits claiming region 3; an authority whose ev was
#             changed under it after its claim, opened to mint; a client of
#             region 0's authority (on its store, and over HTTP through its
#             idmintd) asking for a region 1 lease. Each exits 1
#             with the reason and changes nothing (the registry's record,
#             the authorities' claims and worker rows are read before and
#             after);
#   minting   4 CLI minters per region (3 x 4; one of region 0's an HTTP
#             client of region 0's idmintd), each a loop of short runs,
#             while a killer sends kill -9 to one at random every 0.3 s; the
#             registry is stopped for part of the run, and the minters go on
#             (new processes start while it is down);
#   release   region 2 is released from etcd under its minters and claimed
#             by a new SQLite authority, whose minters start above the floor.
# All IDs together: 0 duplicates; every ID's region bits name the region
# whose minter printed it.
# Usage: test_regions_drill.sh /path/to/idmint /path/to/idmintd
set -euo pipefail
IDMINT=${1:?usage: test_regions_drill.sh /path/to/idmint /path/to/idmintd}
IDMINTD=${2:?usage: test_regions_drill.sh /path/to/idmint /path/to/idmintd}
SUP=$(cd "$(dirname "$0")/../support" && pwd)
# shellcheck source=../support/daemon.sh
. "$SUP/daemon.sh"
scale=${IDMINT_TIMEOUT_SCALE:-1}
dir=$(mktemp -d)
chmod 755 "$dir" # the PostgreSQL clusters run as their own user
unset IDMINT_TOKEN IDMINT_CONFIG IDMINT_AUTHORITY
export IDMINT_WITNESS_DIR=$dir/witness
mkdir -p "$IDMINT_WITNESS_DIR"
cleanup() {
    touch "$dir/stop"
    kill -9 $(jobs -p) 2>/dev/null || true
    pkill -9 -f -- "--authority .*$dir" 2>/dev/null || true
    bash "$SUP/etcd-stop.sh" "$dir/etcd" >/dev/null 2>&1 || true
    bash "$SUP/pg-stop.sh" "$dir/pg1" >/dev/null 2>&1 || true
    bash "$SUP/pg-stop.sh" "$dir/reg" >/dev/null 2>&1 || true
    [ -n "${KEEP:-}" ] || rm -rf "$dir"
}
trap cleanup EXIT
fail() {
    echo "regions_drill: FAIL: $*" >&2
    exit 1
}
command -v pkill >/dev/null && command -v pgrep >/dev/null ||
    fail "no pkill or pgrep: install procps (scripts/deps.sh test)"
note() { echo "regions_drill: $*"; }

bash "$SUP/pg-start.sh" "$dir/reg" >/dev/null
bash "$SUP/pg-start.sh" "$dir/pg1" >/dev/null
bash "$SUP/etcd-start.sh" "$dir/etcd" >/dev/null
REG=$(cat "$dir/reg/env")
A0=sqlite:$dir/region0.db
A1=$(cat "$dir/pg1/env")
A2=$(cat "$dir/etcd/env")
A2B=sqlite:$dir/region2b.db

# A command that must be refused: exit 1 and a message containing $2.
refused() { # label pattern cmd...
    local label=$1 pattern=$2 out
    shift 2
    if out=$("$@" 2>&1); then fail "$label: accepted: $out"; fi
    grep -q -- "$pattern" <<<"$out" || fail "$label: refused without '$pattern': $out"
    note "$label: refused: $(tail -n 1 <<<"$out")"
}

# ---- set-up: one definition, three claims ----
"$IDMINT" --authority "$REG" ns create ev --kind snowflake --layout 41/2/8/12 >/dev/null
for r in 0 1 2; do
    a=$(eval echo "\$A$r")
    "$IDMINT" --authority "$a" region claim --registry "$REG" --region "$r" >/dev/null 2>&1 ||
        "$IDMINT" --authority "$a" region claim --registry "$REG" --region "$r"
    "$IDMINT" --authority "$a" ns create ev --from-registry >/dev/null
done

# ---- refusals, each changing nothing ----
before=$("$IDMINT" region show --registry "$REG" --region 1)
refused "a fourth authority claims region 1" "region 1 is claimed by authority" \
    "$IDMINT" --authority "sqlite:$dir/fourth.db" region claim --registry "$REG" --region 1
[ "$("$IDMINT" region show --registry "$REG" --region 1)" = "$before" ] ||
    fail "the registry's record of region 1 changed"
if "$IDMINT" --authority "sqlite:$dir/fourth.db" region show >/dev/null 2>&1; then
    fail "the refused authority keeps a claim"
fi

"$IDMINT" --authority "sqlite:$dir/other.db" ns create ev --kind snowflake --layout 41/2/9/11 >/dev/null 2>&1
refused "an authority with another layout claims region 3" "worker bits 9 here, 8 in the registry" \
    "$IDMINT" --authority "sqlite:$dir/other.db" region claim --registry "$REG" --region 3
if "$IDMINT" region show --registry "$REG" --region 3 >/dev/null 2>&1; then
    fail "region 3 was claimed by the refused authority"
fi

# An authority bound to region 3 whose copy of ev is changed under it
# afterwards (an edit, a copy of another store put back): refused at open.
"$IDMINT" --authority "sqlite:$dir/edited.db" region claim --registry "$REG" --region 3 >/dev/null 2>&1
"$IDMINT" --authority "sqlite:$dir/edited.db" ns create ev --from-registry >/dev/null
python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute("UPDATE namespaces SET sequence_bits = 11, worker_bits = 9 WHERE name = '"'ev'"'"); c.commit()' "$dir/edited.db"
refused "an authority whose ev differs opens it" "differs from the registry's definition" \
    "$IDMINT" --authority "sqlite:$dir/edited.db" mint --ns ev --region 3 -n 1
[ -z "$("$IDMINT" --authority "sqlite:$dir/edited.db" workers ev)" ] || fail "the refused open took a worker id"

# Region 0's idmintd: its HTTP clients mint through it (one of region 0's
# minters below), and a client asking it for another region is refused.
DAEMON_PID=
start_listening DAEMON_PID PORT 20 "$dir/port" "$dir/daemon.log" \
    "$IDMINTD" --listen 127.0.0.1:0 --port-file "$dir/port" --authority "$A0" --region 0 ||
    fail "idmintd did not start: $(tail -n 5 "$dir/daemon.log")"
H0=http://127.0.0.1:$PORT
rows_before=$("$IDMINT" --authority "$A0" workers ev)
refused "a client of region 0's authority asks for a region 1 lease" "serves region 0 only" \
    "$IDMINT" --authority "$A0" mint --ns ev --region 1 -n 1
refused "an HTTP client of region 0's idmintd asks for a region 1 lease" "serves region 0 only" \
    "$IDMINT" --authority "$H0" mint --ns ev --region 1 -n 1
[ "$("$IDMINT" --authority "$A0" workers ev)" = "$rows_before" ] || fail "the refusals changed region 0's rows"

# ---- minting: 3 x 4 minters, kill -9, the registry down for a while ----
minter() { # authority region out
    local i=0
    while [ ! -e "$dir/stop" ] && [ ! -e "$3.stop" ]; do
        "$IDMINT" --authority "$1" mint --ns ev --region "$2" -n 3000 --lease 10 >>"$3" 2>>"$3.err" || true
        i=$((i + 1))
    done
}
# Only a child of a minter loop (a child of this script): under ASan, a
# minter's leak check at exit is a clone with the same command line, and
# killing that instead leaves the minter waiting for it forever.
killer() {
    local loops
    while [ ! -e "$dir/stop" ]; do
        loops=$(pgrep -d, -P $$)
        if [ -n "$loops" ] && pkill -9 -n -P "$loops" -f -- "mint --ns ev" 2>/dev/null; then
            echo kill >>"$dir/kills"
        fi
        sleep 0.3
    done
}
for r in 0 1 2; do
    a=$(eval echo "\$A$r")
    for k in 1 2 3 4; do
        [ "$r$k" = 04 ] && a=$H0 # through region 0's idmintd
        minter "$a" "$r" "$dir/ids.r$r.$k" 2>/dev/null &
    done
done
killer &
sleep $((4 * scale))
bash "$SUP/pg-outage.sh" "$dir/reg" $((6 * scale)) >"$dir/outage.log" 2>&1 &
outage=$!
for _ in $(seq 1 $((200 * scale))); do
    grep -q '^down ' "$dir/outage.log" && break
    sleep 0.1
done
grep -q '^down ' "$dir/outage.log" || fail "the registry did not stop: $(cat "$dir/outage.log")"
if "$IDMINT" region show --registry "$REG" --region 0 >/dev/null 2>&1; then
    fail "the registry still answers while stopped"
fi
down_lines=$(cat "$dir"/ids.r* | wc -l)
sleep $((3 * scale))
during=$(($(cat "$dir"/ids.r* | wc -l) - down_lines))
wait "$outage" || fail "the registry did not come back: $(cat "$dir/outage.log")"
[ "$during" -gt 0 ] || fail "nothing was minted while the registry was down"
note "minted $during IDs while the registry was down"
"$IDMINT" region show --registry "$REG" --region 0 >/dev/null || fail "the registry is not back"
sleep $((2 * scale))

# ---- release region 2 under its minters; a new authority claims it ----
"$IDMINT" --authority "$A2" region release >"$dir/release.out" || fail "release: $(cat "$dir/release.out")"
grep -q "state=released" "$dir/release.out" || fail "release: $(cat "$dir/release.out")"
refused "the released authority grants" "is released" "$IDMINT" --authority "$A2" mint --ns ev --region 2 -n 1
"$IDMINT" --authority "$A2B" region claim --registry "$REG" --region 2 >/dev/null 2>&1 ||
    fail "region 2 could not be claimed again after its release"
"$IDMINT" --authority "$A2B" ns create ev --from-registry >/dev/null
for k in 1 2; do
    minter "$A2B" 2 "$dir/ids.r2b.$k" 2>/dev/null &
done
# The floor is the highest E region 2 granted: a holder killed with a 10 s
# lease left E up to 10 s ahead, and the new claimant's takes wait past it.
# Each of the two waits on its own take, so wait for both.
for _ in $(seq 1 $((300 * scale))); do
    [ -s "$dir/ids.r2b.1" ] && [ -s "$dir/ids.r2b.2" ] && break
    sleep 0.1
done
sleep $((2 * scale))
touch "$dir/stop"
kill "$DAEMON_PID" 2>/dev/null || true
wait $(jobs -p) 2>/dev/null || true
kills=$(cat "$dir/kills" 2>/dev/null | wc -l)
[ "$kills" -ge 10 ] || fail "only $kills minters were killed with kill -9"
note "$kills minters killed with kill -9"

# ---- every ID of every region: no repeat, region bits right ----
python3 - "$dir" <<'PY'
import glob, re, sys, collections
d = sys.argv[1]
seen = {}
per = collections.Counter()
empty = []
dups = bad_region = 0
for path in sorted(glob.glob(d + "/ids.r*")):
    if path.endswith((".err", ".stop")):
        continue
    m = re.search(r"ids\.r(\d)(b?)\.\d+$", path)
    region = int(m.group(1))
    before = len(seen)
    for line in open(path, errors="replace"):
        line = line.strip()
        if not re.fullmatch(r"[0-9]{1,19}", line):
            continue  # a line cut by kill -9
        v = int(line)
        if (v >> 20) & 3 != region:
            bad_region += 1
        if v in seen:
            dups += 1
            if dups <= 5:
                print("duplicate", v, seen[v], path, file=sys.stderr)
        else:
            seen[v] = path
        per[region + (10 if m.group(2) else 0)] += 1
    if len(seen) == before:
        empty.append(path)
print("regions_drill: ids per region:", dict(sorted(per.items())),
      "total", len(seen), "duplicates", dups, "wrong region bits", bad_region)
if empty:
    print("regions_drill: FAIL: minters that minted nothing:", empty, file=sys.stderr)
    sys.exit(1)
for key in (0, 1, 2, 12):
    if per[key] == 0:
        print("regions_drill: FAIL: no IDs from", key, file=sys.stderr)
        sys.exit(1)
sys.exit(1 if dups or bad_region else 0)
PY

# ---- the mistake claims prevent, and the evidence that names it ----
# Two authorities that claimed nothing both serve region 3 of ev: their IDs
# repeat, and verify, given IDs of every region and each authority, names
# both owners of each repeat with their region, holder and authority.
for x in x y; do
    "$IDMINT" --authority "sqlite:$dir/unclaimed_$x.db" ns create ev --kind snowflake \
        --layout 41/2/8/12 >/dev/null 2>&1
done
# Both must mint in the same milliseconds (each starts a millisecond at
# sequence 0): x mints a paced batch of 500 every 10 ms for 5 s, and y,
# started once x has written its first batch, mints flat out meanwhile
# (98 ms at least: 4,096 a millisecond). Two minters merely started together
# can miss each other on a loaded machine (CI saw it).
"$IDMINT" --authority "sqlite:$dir/unclaimed_x.db" mint --ns ev --region 3 -n 250000 \
    --rate 50000 >"$dir/u.x" &
ux=$!
for _ in $(seq 300); do
    [ -s "$dir/u.x" ] && break
    kill -0 "$ux" 2>/dev/null || break
    sleep 0.1
done
[ -s "$dir/u.x" ] || fail "the paced unclaimed minter wrote nothing"
"$IDMINT" --authority "sqlite:$dir/unclaimed_y.db" mint --ns ev --region 3 -n 400000 >"$dir/u.y"
# x flushes every batch: fewer lines than it mints means it was still minting.
[ "$(wc -l <"$dir/u.x")" -lt 250000 ] ||
    fail "the paced minter ended before the other finished: they did not overlap"
wait "$ux" || fail "the paced unclaimed minter failed"
if cat "$dir"/ids.r0.1 "$dir/u.x" "$dir/u.y" | grep -E '^[0-9]+$' |
    "$IDMINT" verify --ns ev --authority "$A0" "sqlite:$dir/unclaimed_x.db" \
        "sqlite:$dir/unclaimed_y.db" >"$dir/verify.out" 2>&1; then
    fail "verify found no repeat between two unclaimed authorities of region 3: $(head -n 2 "$dir/verify.out")"
fi
line=$(grep -m 1 '^collision ' "$dir/verify.out") || fail "verify named no collision: $(head -n 3 "$dir/verify.out")"
for want in "duplicate:" "worker=3/" "at sqlite:$dir/unclaimed_x.db" "at sqlite:$dir/unclaimed_y.db"; do
    grep -qF -- "$want" <<<"$line" || fail "verify's collision lacks '$want': $line"
done
note "verify across regions: $(head -n 1 "$dir/verify.out")"
note "PASS"
