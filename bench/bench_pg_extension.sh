#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bench/bench_pg_extension.sh [BUILD_DIR] [ROUNDS]: the PostgreSQL extension
# beside PostgreSQL's own ways of making a key, in one private server
# (bindings/postgres/test/server.sh), each measured ROUNDS times (default 3),
# the cases alternating so that whatever else the machine does falls on all:
#   insert 1,000,000 rows in one statement into a table whose primary key is
#     DEFAULT idmint_next('bench') (snowflake, default layout 41/0/10/12),
#     DEFAULT idmint_next('bench_wide') (snowflake, 41/0/8/14),
#     DEFAULT idmint_next('bench_range') (range), bigserial, and
#     DEFAULT gen_random_uuid();
#   call each function 1,000,000 times in one SELECT: idmint_next (each
#     namespace), nextval, gen_random_uuid, idmint_uuid7.
# Prints every round, then each case's median, per second, and its ratio to
# nextval (bigserial for inserts). Asserts nothing (exit 1 only on a setup
# failure). Needs root (the extension's files go into the server's folder).
set -euo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(cd "${1:-$src/build/release}" && pwd)
rounds=${2:-3}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/idmint-pg-bench.XXXXXX")
# shellcheck source=../bindings/postgres/test/server.sh
. "$src/bindings/postgres/test/server.sh"
trap 'pg_ext_down "$tmp"; rm -rf "$tmp"' EXIT
export IDMINT_WITNESS_DIR=${IDMINT_WITNESS_DIR:-$tmp/witness}
pg_ext_up "$tmp" "$build" "${PG_BENCH_SETTINGS:-}"
"$build/idmint" ns create bench --kind snowflake >/dev/null
"$build/idmint" ns create bench_range --kind range >/dev/null
# One worker id of the default layout (12 sequence bits) makes 4,096 IDs a
# ms; a namespace for a busy database can give the sequence more bits.
"$build/idmint" ns create bench_wide --kind snowflake --layout 41/0/8/14 >/dev/null

as_super -d idmint -q <<'SQL'
CREATE TABLE by_idmint (id bigint PRIMARY KEY DEFAULT idmint_next('bench'), v int);
CREATE TABLE by_idmint_wide (id bigint PRIMARY KEY DEFAULT idmint_next('bench_wide'), v int);
CREATE TABLE by_idmint_range (id bigint PRIMARY KEY DEFAULT idmint_next('bench_range'), v int);
CREATE TABLE by_bigserial (id bigserial PRIMARY KEY, v int);
CREATE TABLE by_uuid (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), v int);
CREATE SEQUENCE calls;
-- ms that one statement takes, run by the server itself (no client in the time).
CREATE FUNCTION time_ms(stmt text) RETURNS double precision LANGUAGE plpgsql AS $$
DECLARE t0 timestamptz := clock_timestamp();
BEGIN
    EXECUTE stmt;
    RETURN extract(epoch FROM clock_timestamp() - t0) * 1000;
END $$;
SQL

insert_cases="by_idmint by_idmint_wide by_idmint_range by_bigserial by_uuid"
call_cases="idmint_next('bench') idmint_next('bench_wide') idmint_next('bench_range') nextval('calls') gen_random_uuid() idmint_uuid7()"
: >"$tmp/results"
for r in $(seq 1 "$rounds"); do
    for t in $insert_cases; do
        as_super -d idmint -q -c "TRUNCATE $t" -c "CHECKPOINT"
        ms=$(as_super -d idmint -tAc "SELECT time_ms('INSERT INTO $t (v) SELECT g FROM generate_series(1, 1000000) g')")
        echo "round $r insert $t $ms" | tee -a "$tmp/results"
    done
    for f in $call_cases; do
        ms=$(as_super -d idmint -tAc "SELECT time_ms(\$q\$SELECT count($f) FROM generate_series(1, 1000000)\$q\$)")
        echo "round $r select $f $ms" | tee -a "$tmp/results"
    done
done

echo
echo "median of $rounds rounds, 1,000,000 each:"
median() { grep " $1 $2 " "$tmp/results" | awk '{print $5}' | sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
base=$(median insert by_bigserial)
for t in $insert_cases; do
    m=$(median insert "$t")
    awk -v t="$t" -v m="$m" -v b="$base" 'BEGIN {printf "  insert %-28s %9.1f ms %6.2fM rows/s  %.2fx bigserial\n", t, m, 1000 / m, b / m}'
done
base=$(median select "nextval('calls')")
for f in $call_cases; do
    m=$(median select "$f")
    awk -v t="$f" -v m="$m" -v b="$base" 'BEGIN {printf "  select %-28s %9.1f ms %6.2fM calls/s %.2fx nextval\n", t, m, 1000 / m, b / m}'
done
as_super -d idmint -c "SELECT namespace, kind, worker_id, handed_out, discarded, handles FROM idmint_status()"
