#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A PostgreSQL role that may not run the durability barrier behind range
# reservations (pg_logical_emit_message, EXECUTE for PUBLIC by default) is
# refused when it opens the store, with a message that names the grant, so
# that no reservation ever advances a namespace and then fails. Once the
# grant is given, the same role works. Uses a database and a role of its own
# on the test cluster: a function's grants belong to one database.
# Usage: test_pg_barrier_grant.sh /path/to/idmint [/path/to/idmintd]
# Environment: IDMINT_PG_ENV (file with the URL of tests/support/pg-start.sh).
set -euo pipefail

IDMINT=${1:?usage: test_pg_barrier_grant.sh /path/to/idmint}
# shellcheck source=../support/pg-fixture.sh
source "$(dirname "$0")/../support/pg-fixture.sh"
ROLE=idmint_nogrant_$$
DB=idmint_nogrant_$$
FN='pg_logical_emit_message(boolean, text, text)'
T=$(mktemp -d)
unset IDMINT_TOKEN IDMINT_AUTHORITY IDMINT_CONFIG

cleanup() {
    as_super -d postgres -c "DROP DATABASE IF EXISTS $DB" -c "DROP ROLE IF EXISTS $ROLE" \
        >/dev/null 2>&1 || true
    rm -rf "$T"
}
trap cleanup EXIT
fail() {
    echo "pg_barrier_grant: FAIL: $*" >&2
    exit 1
}

as_super -d postgres -c "CREATE ROLE $ROLE LOGIN" -c "CREATE DATABASE $DB OWNER $ROLE"
as_super -d "$DB" -c "REVOKE EXECUTE ON FUNCTION $FN FROM PUBLIC"
URL="postgresql://$ROLE@$HOST:$PORT/$DB"

# Without the grant: refused at open, exit 1, and the message says what to grant.
set +e
"$IDMINT" --authority "$URL" ns create orders --kind range >"$T/out" 2>"$T/err"
rc=$?
set -e
[ "$rc" -eq 1 ] || fail "ns create without the grant exited $rc (want 1): $(cat "$T/err")"
grep -q 'needs EXECUTE on pg_logical_emit_message' "$T/err" ||
    fail "the refusal does not name the grant: $(cat "$T/err")"
grep -q 'permission denied' "$T/err" || fail "the server's reason is missing: $(cat "$T/err")"

# With it: the same role creates a range namespace and mints from it.
as_super -d "$DB" -c "GRANT EXECUTE ON FUNCTION $FN TO $ROLE"
"$IDMINT" --authority "$URL" ns create orders --kind range >/dev/null ||
    fail "ns create with the grant failed"
"$IDMINT" --authority "$URL" mint --ns orders -n 5 >"$T/ids" || fail "mint with the grant failed"
[ "$(wc -l <"$T/ids")" -eq 5 ] || fail "minted $(wc -l <"$T/ids") IDs, want 5"
[ "$(sort -u "$T/ids" | wc -l)" -eq 5 ] || fail "duplicate IDs: $(tr '\n' ' ' <"$T/ids")"
echo "pg_barrier_grant: ok (refused without the grant, works with it)"
