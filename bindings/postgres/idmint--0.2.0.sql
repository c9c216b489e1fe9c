-- SPDX-License-Identifier: Apache-2.0
\echo Use "CREATE EXTENSION idmint" to load this file. \quit

-- Not STRICT: a NULL argument is an error, never a NULL ID.
CREATE FUNCTION idmint_next(ns text) RETURNS bigint
    AS 'MODULE_PATHNAME', 'idmint_pg_next' LANGUAGE C VOLATILE PARALLEL SAFE;
COMMENT ON FUNCTION idmint_next(text) IS
    'the next ID of namespace ns: unique across every process of its authority';

CREATE FUNCTION idmint_next_n(ns text, n integer) RETURNS SETOF bigint
    AS 'MODULE_PATHNAME', 'idmint_pg_next_n' LANGUAGE C VOLATILE PARALLEL SAFE ROWS 1000;
COMMENT ON FUNCTION idmint_next_n(text, integer) IS
    'n IDs of namespace ns, increasing (1 <= n <= 1000000)';

CREATE FUNCTION idmint_uuid7() RETURNS uuid
    AS 'MODULE_PATHNAME', 'idmint_pg_uuid7' LANGUAGE C VOLATILE PARALLEL SAFE;
COMMENT ON FUNCTION idmint_uuid7() IS 'a UUIDv7 (RFC 9562), increasing within the session';

CREATE FUNCTION idmint_decode(ns text, id bigint,
        OUT "time" timestamptz, OUT region integer, OUT worker integer, OUT sequence bigint)
    RETURNS record
    AS 'MODULE_PATHNAME', 'idmint_pg_decode' LANGUAGE C STABLE PARALLEL SAFE;
COMMENT ON FUNCTION idmint_decode(text, bigint) IS
    'the time, region, worker id and sequence of a snowflake ID of namespace ns';

CREATE FUNCTION idmint_bounds(ns text, from_time timestamptz, to_time timestamptz,
        OUT lo bigint, OUT hi bigint)
    RETURNS record
    AS 'MODULE_PATHNAME', 'idmint_pg_bounds' LANGUAGE C STABLE PARALLEL SAFE;
COMMENT ON FUNCTION idmint_bounds(text, timestamptz, timestamptz) IS
    'the lowest and highest ID of namespace ns minted in [from_time, to_time)';

CREATE FUNCTION idmint_status(OUT namespace text, OUT kind text, OUT is_open boolean,
        OUT worker_id integer, OUT generation bigint, OUT buffered integer,
        OUT handed_out bigint, OUT discarded bigint, OUT handles bigint, OUT last_error text,
        OUT leases integer)
    RETURNS SETOF record
    AS 'MODULE_PATHNAME', 'idmint_pg_status' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION idmint_status() IS
    'what this server holds of each namespace it mints from';
-- It names every namespace the server mints and the authority's last errors:
-- for operators, not for every session.
REVOKE EXECUTE ON FUNCTION idmint_status() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idmint_status() TO pg_monitor;
