#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Force the server's worker id away (as an operator would, audited): the
# next renewal is refused, and every session stops minting at once with
# SQLSTATE 55000 and the library's message. The server then takes a new
# lease for the next request. Run by ../ci.sh (IDMINT_PG_ENV, SRC, BUILD).
set -euo pipefail
. "$SRC/tests/support/pg-fixture.sh"

psql_db() { "$BIN/psql" -X -q -h "$HOST" -p "$PORT" -U postgres -d idmint "$@"; }

worker=$(psql_db -tAc "SELECT idmint_next('orders') IS NOT NULL; SELECT worker_id FROM idmint_status() WHERE namespace = 'orders'" | tail -n 1)
[ -n "$worker" ] || { echo "lease_lost: the server holds no lease" >&2; exit 1; }

# Two sessions mint in a loop until their first error, and say when.
for s in 1 2; do
    psql_db -v ON_ERROR_STOP=1 >"$WORK/lost.$s" 2>&1 <<'SQL' &
DO $$
DECLARE n bigint := 0; started timestamptz := clock_timestamp();
BEGIN
    LOOP
        PERFORM idmint_next('orders');
        n := n + 1;
        EXIT WHEN clock_timestamp() - started > interval '60 s';
    END LOOP;
EXCEPTION WHEN OTHERS THEN
    RAISE NOTICE 'stopped after % IDs: % %', n, SQLSTATE, SQLERRM;
END $$;
SQL
done
sleep 1
forced_at=$(date +%s%N)
# What an operator's tool does (idmint_worker_force_release, audited), through the C API.
python3 - "$BUILD/libidmint.so" "$PG_URL" "$worker" <<'PY'
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
lib.idmint_errmsg.restype = ctypes.c_char_p
a = ctypes.c_void_p()
rc = lib.idmint_authority_open(ctypes.byref(a), sys.argv[2].encode(), 0)
if rc == 0:
    rc = lib.idmint_worker_force_release(a, b"orders", 0, int(sys.argv[3]))
if rc != 0:
    sys.exit("force release failed: %d %s" % (rc, lib.idmint_errmsg().decode()))
lib.idmint_authority_close(a)
PY
wait
for s in 1 2; do
    grep -q "stopped after [0-9]* IDs: 55000 idmint: .*lease" "$WORK/lost.$s" || {
        echo "lease_lost: session $s did not stop with 55000:" >&2
        cat "$WORK/lost.$s" >&2
        exit 1
    }
done
took_ms=$((($(date +%s%N) - forced_at) / 1000000))
echo "lease_lost: both sessions stopped with 55000 within ${took_ms} ms of the forced release"
sed -n 's/.*NOTICE: *//p' "$WORK/lost.1"

# A request after the failure was answered takes a new lease.
new=
for _ in $(seq 1 50); do
    new=$(psql_db -tAc "SELECT idmint_next('orders') IS NOT NULL; SELECT worker_id || ' ' || handles FROM idmint_status() WHERE namespace = 'orders'" 2>/dev/null | tail -n 1) && break
    sleep 0.1
done
echo "lease_lost: minting again on worker id ${new% *} (handles ${new#* })"
[ -n "$new" ] && [ "${new#* }" -ge 2 ] || { echo "lease_lost: no new handle" >&2; exit 1; }
