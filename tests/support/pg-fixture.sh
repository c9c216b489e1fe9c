# SPDX-License-Identifier: Apache-2.0
# Sourced by the tests that use the PostgreSQL fixture of pg-start.sh as its
# superuser: reads IDMINT_PG_ENV (the file with the fixture's URL) and sets
# PG_URL, BIN (PostgreSQL's bin folder), HOST and PORT, and as_super (psql
# as postgres, stopping at the first error).
PG_ENV=${IDMINT_PG_ENV:?IDMINT_PG_ENV must name the file with the PostgreSQL URL}
PG_URL=$(head -n 1 "$PG_ENV")
BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
HOSTPORT=$(sed -E 's|^[a-z]+://[^@]*@([^/]+)/.*$|\1|' <<<"$PG_URL")
HOST=${HOSTPORT%:*}
PORT=${HOSTPORT##*:}
as_super() { "$BIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$HOST" -p "$PORT" -U postgres "$@"; }
