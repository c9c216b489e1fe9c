-- SPDX-License-Identifier: Apache-2.0
-- Every function and every error of the extension (run by test/run.sh with
-- ON_ERROR_STOP: a failed ASSERT or an unexpected error fails the test).
-- The authority holds: "orders" (snowflake, default layout), "rng" (range,
-- start 1000), "wide" (snowflake, 41/3/7/12, unit 10 ms, epoch 2020-01-01),
-- "off" (snowflake, disabled), "small" (range, 1..100, blocks of 10).
\set ON_ERROR_STOP 1
SET client_min_messages = warning;
\o /dev/null

-- expect_error(sql, sqlstate, message pattern): sql must fail with exactly that.
CREATE FUNCTION pg_temp.expect_error(stmt text, state text, pattern text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE stmt;
    RAISE EXCEPTION 'expected % (%) from: %', state, pattern, stmt;
EXCEPTION WHEN OTHERS THEN
    IF SQLERRM LIKE 'expected %' THEN
        RAISE;
    END IF;
    IF SQLSTATE <> state OR SQLERRM NOT LIKE pattern THEN
        RAISE EXCEPTION 'from: %: got % "%", expected % "%"', stmt, SQLSTATE, SQLERRM, state, pattern;
    END IF;
END $$;

CREATE FUNCTION pg_temp.check(ok boolean, what text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF ok IS NOT TRUE THEN
        RAISE EXCEPTION 'check failed: %', what;
    END IF;
END $$;

-- idmint_next: positive, increasing within and across statements, as a column default.
DO $$
DECLARE a bigint; b bigint;
BEGIN
    a := idmint_next('orders');
    b := idmint_next('orders');
    ASSERT a > 0 AND b > a, format('snowflake IDs %s then %s', a, b);
    a := idmint_next('rng');
    b := idmint_next('rng');
    ASSERT a >= 1000 AND b > a, format('range IDs %s then %s', a, b);
END $$;

CREATE TABLE t (id bigint PRIMARY KEY DEFAULT idmint_next('orders'), v int);
INSERT INTO t (v) SELECT g FROM generate_series(1, 20000) g;
DO $$
BEGIN
    ASSERT (SELECT count(DISTINCT id) FROM t) = 20000, 'a default gave a repeated ID';
    -- One session's IDs increase in the order they were taken.
    ASSERT (SELECT bool_and(id > prev) FROM (SELECT id, lag(id) OVER (ORDER BY v) AS prev FROM t) s
            WHERE prev IS NOT NULL), 'IDs went backwards within a statement';
END $$;

-- A rolled-back insert leaves a gap, never a repeat.
BEGIN;
INSERT INTO t (v) VALUES (-1) RETURNING id AS rolled_back \gset
ROLLBACK;
SELECT pg_temp.check(idmint_next('orders') > :rolled_back, 'an ID of a rolled-back insert came again');

-- idmint_next_n: n increasing, distinct IDs; the bounds of n.
DO $$
BEGIN
    ASSERT (SELECT count(*) FROM idmint_next_n('orders', 50000)) = 50000;
    ASSERT (SELECT count(DISTINCT x) FROM idmint_next_n('rng', 30000) x) = 30000;
    ASSERT (SELECT bool_and(x > p) FROM (SELECT x, lag(x) OVER () p FROM idmint_next_n('orders', 1000) x) s
            WHERE p IS NOT NULL), 'idmint_next_n is not increasing';
    ASSERT (SELECT count(*) FROM idmint_next_n('orders', 1)) = 1;
END $$;
SELECT pg_temp.expect_error($$SELECT idmint_next_n('orders', 0)$$, '22023', '%count 0 is out of range: 1 to 1000000%');
SELECT pg_temp.expect_error($$SELECT idmint_next_n('orders', -5)$$, '22023', '%count -5 is out of range%');
SELECT pg_temp.expect_error($$SELECT idmint_next_n('orders', 1000001)$$, '22023', '%count 1000001 is out of range%');
SELECT pg_temp.expect_error($$SELECT idmint_next_n('orders', NULL)$$, '22004', '%count must not be NULL%');
SELECT pg_temp.expect_error($$SELECT idmint_next_n(NULL, 3)$$, '22004', '%namespace must not be NULL%');

-- Bad namespaces: NULL, empty, too long, malformed, unknown, disabled.
SELECT pg_temp.expect_error($$SELECT idmint_next(NULL)$$, '22004', 'idmint: the namespace must not be NULL');
SELECT pg_temp.expect_error($$SELECT idmint_next('')$$, '22023', 'idmint: a namespace name is 1 to 63 characters%');
SELECT pg_temp.expect_error(format('SELECT idmint_next(%L)', repeat('x', 64)), '22023', 'idmint: a namespace name is 1 to 63%');
SELECT pg_temp.expect_error($$SELECT idmint_next('Bad Name!')$$, '22023', 'idmint: %');
SELECT pg_temp.expect_error($$SELECT idmint_next('nosuch')$$, '42704', 'idmint: namespace ''nosuch'' does not exist%');
SELECT pg_temp.expect_error($$SELECT idmint_next('off')$$, '55000', 'idmint: %disabled%');
-- A range namespace that runs out: 2200H, as nextval past its end. "small" holds 1..100.
SELECT pg_temp.check((SELECT count(*) FROM idmint_next_n('small', 60)) = 60, 'small: the first 60');
SELECT pg_temp.expect_error($$SELECT idmint_next_n('small', 60)$$, '2200H', 'idmint: %');
SELECT pg_temp.expect_error($$SELECT idmint_next('small')$$, '2200H', 'idmint: %');
-- A failure changes nothing: the good namespaces mint on.
DO $$ BEGIN ASSERT idmint_next('orders') > 0; END $$;

-- idmint_uuid7: version 7, the RFC variant, increasing within the session.
DO $$
DECLARE u uuid; v uuid;
BEGIN
    u := idmint_uuid7();
    v := idmint_uuid7();
    ASSERT substr(u::text, 15, 1) = '7', format('not version 7: %s', u);
    ASSERT substr(u::text, 20, 1) IN ('8', '9', 'a', 'b'), format('not the RFC variant: %s', u);
    ASSERT v > u, format('%s then %s', u, v);
    ASSERT (SELECT count(DISTINCT x) FROM (SELECT idmint_uuid7() x FROM generate_series(1, 10000)) s) = 10000;
    -- Its time is now, to the second.
    ASSERT abs(extract(epoch FROM now()) * 1000 -
               ('x' || lpad(replace(substr(v::text, 1, 13), '-', ''), 16, '0'))::bit(64)::bigint) < 5000,
           format('UUIDv7 time far from now: %s', v);
END $$;

-- idmint_decode: what the layout says, for the default layout and another.
DO $$
DECLARE id bigint; d record;
BEGIN
    id := idmint_next('orders');
    SELECT * INTO d FROM idmint_decode('orders', id);
    ASSERT abs(extract(epoch FROM d.time - clock_timestamp())) < 5, format('decoded time %s', d.time);
    ASSERT d.region = 0 AND d.worker >= 0 AND d.worker < 1024 AND d.sequence >= 0 AND d.sequence < 4096,
           format('decoded %s', d);
    ASSERT d.worker = (SELECT worker_id FROM idmint_status() WHERE namespace = 'orders'),
           'the decoded worker is not the server''s lease';
    -- The layout's own arithmetic: 41/3/7/12, unit 10 ms, epoch 2020-01-01.
    -- time 100 units, region 5, worker 9, sequence 7.
    SELECT * INTO d FROM idmint_decode('wide', (100::bigint << 22) | (5 << 19) | (9 << 12) | 7);
    ASSERT d.time = '2020-01-01 00:00:01+00' AND d.region = 5 AND d.worker = 9 AND d.sequence = 7,
           format('decoded %s', d);
END $$;
SELECT pg_temp.expect_error($$SELECT idmint_decode('rng', 5)$$, '42809', '%range namespace: its IDs carry no time%');
SELECT pg_temp.expect_error($$SELECT idmint_decode('orders', 0)$$, '22023', '%ID 0 is not positive%');
SELECT pg_temp.expect_error($$SELECT idmint_decode('orders', -1)$$, '22023', '%is not positive%');
SELECT pg_temp.expect_error($$SELECT idmint_decode('orders', NULL)$$, '22004', '%ID must not be NULL%');
SELECT pg_temp.expect_error($$SELECT idmint_decode('nosuch', 1)$$, '42704', '%does not exist%');

-- idmint_bounds: every ID minted in the window lies within, and the edges are exact.
DO $$
DECLARE t0 timestamptz := clock_timestamp(); id bigint; b record; c record;
BEGIN
    PERFORM pg_sleep(0.01);
    id := idmint_next('orders');
    PERFORM pg_sleep(0.01);
    SELECT * INTO b FROM idmint_bounds('orders', t0, clock_timestamp());
    ASSERT id BETWEEN b.lo AND b.hi, format('%s outside [%s, %s]', id, b.lo, b.hi);
    SELECT * INTO c FROM idmint_bounds('orders', '2026-06-01', '2026-06-02');
    ASSERT (SELECT time FROM idmint_decode('orders', c.lo)) = '2026-06-01 00:00:00+00';
    ASSERT (SELECT time FROM idmint_decode('orders', c.hi)) = '2026-06-01 23:59:59.999+00';
    ASSERT NOT (id BETWEEN c.lo AND c.hi);
    -- A window of the other layout starts at its unit (10 ms): 1 s after its epoch is unit 100.
    SELECT * INTO c FROM idmint_bounds('wide', '2020-01-01 00:00:01+00', '2020-01-01 00:00:01.005+00');
    ASSERT c.lo = 100::bigint << 22 AND c.hi = (101::bigint << 22) - 1, format('wide bounds %s', c);
    -- Used as a range scan: the rows of the last minute.
    ASSERT (SELECT count(*) FROM t, idmint_bounds('orders', now() - interval '1 hour', clock_timestamp()) w
            WHERE t.id BETWEEN w.lo AND w.hi) = (SELECT count(*) FROM t);
END $$;
SELECT pg_temp.expect_error($$SELECT idmint_bounds('orders', now(), now() - interval '1 s')$$, '22023', 'idmint: %');
SELECT pg_temp.expect_error($$SELECT idmint_bounds('orders', '1990-01-01', '1990-01-02')$$, '22023', 'idmint: %is before %the first time its IDs hold%');
SELECT pg_temp.expect_error($$SELECT idmint_bounds('orders', '-infinity', now())$$, '22023', '%must be a finite time%');
SELECT pg_temp.expect_error($$SELECT idmint_bounds('orders', NULL, now())$$, '22004', '%must not be NULL%');
SELECT pg_temp.expect_error($$SELECT idmint_bounds('rng', now(), now() + interval '1 s')$$, '42809', '%range namespace%');

-- idmint_status: one lease per namespace, whatever the sessions did.
DO $$
DECLARE s record;
BEGIN
    SELECT * INTO s FROM idmint_status() WHERE namespace = 'orders';
    ASSERT s.kind = 'snowflake' AND s.is_open AND s.handles = 1 AND s.last_error IS NULL, format('%s', s);
    SELECT * INTO s FROM idmint_status() WHERE namespace = 'nosuch';
    ASSERT NOT s.is_open AND s.last_error LIKE '%does not exist%', format('%s', s);
    SELECT * INTO s FROM idmint_status() WHERE namespace = 'rng';
    ASSERT s.kind = 'range' AND s.worker_id IS NULL, format('%s', s);
END $$;

-- Unknown names give their slots back: 40 of them (more than idmint.max_namespaces, 16)
-- leave the table usable.
DO $$
BEGIN
    FOR i IN 1..40 LOOP
        BEGIN
            PERFORM idmint_next('ghost' || i);
            RAISE EXCEPTION 'ghost% minted', i;
        EXCEPTION WHEN undefined_object THEN
            NULL;
        END;
    END LOOP;
    ASSERT idmint_next('orders') > 0 AND idmint_next('rng') > 0;
    ASSERT (SELECT count(*) FROM idmint_status()) <= 16;
END $$;

-- The settings: idmint.authority is for superusers only.
CREATE ROLE idmint_plain LOGIN;
SET ROLE idmint_plain;
SELECT pg_temp.expect_error($$SELECT current_setting('idmint.authority')$$, '42501', '%idmint.authority%');
SELECT pg_temp.expect_error($$SET idmint.max_age_ms = 100$$, '42501', '%idmint.max_age_ms%');
-- A plain user mints, as any session does, but sees idmint_status() only through pg_monitor.
DO $$ BEGIN ASSERT idmint_next('orders') > 0; END $$;
SELECT pg_temp.expect_error($$SELECT * FROM idmint_status()$$, '42501', '%permission denied for function idmint_status%');
RESET ROLE;
GRANT pg_monitor TO idmint_plain;
SET ROLE idmint_plain;
SELECT pg_temp.check((SELECT count(*) FROM idmint_status()) > 0, 'pg_monitor cannot read idmint_status()');
RESET ROLE;
DROP ROLE idmint_plain;
DROP TABLE t;
\echo functions.sql: every assertion held
