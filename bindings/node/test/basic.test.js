// SPDX-License-Identifier: Apache-2.0
// The API end to end on a private SQLite authority: open, next, nextN,
// nextInto, info, decode, uuid7, close; every ID minted is checked for repeats.
'use strict';

const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const idmint = require('..');
const { makeAuthority, assertUnique, assertIncreasing, cli } = require('./helpers.js');

let auth;
// Per namespace: uniqueness is promised within one.
const minted = { sf: [], rg: [] };

before(() => {
    auth = makeAuthority({
        sf: ['--kind', 'snowflake', '--layout', '40/2/8/13', '--epoch', '2025-06-01'],
        rg: ['--kind', 'range', '--start', '5000', '--block', '1000', '--max-block', '1000000'],
    });
});

after(() => {
    try {
        for (const ids of Object.values(minted)) assertUnique(ids);
    } finally {
        auth.remove();
    }
});

test('a snowflake Minter mints increasing BigInts that decode to its own lease', () => {
    const m = new idmint.Minter(auth.url, 'sf');
    try {
        assert.equal(m.kind, 'snowflake');
        assert.equal(m.closed, false);
        const before = Date.now();
        const one = m.next();
        assert.equal(typeof one, 'bigint');
        const many = m.nextN(5000);
        assert.ok(many instanceof BigUint64Array);
        assert.equal(many.length, 5000);
        const into = m.nextInto(new BigUint64Array(300));
        assert.equal(into.length, 300);
        const ids = [one, ...many, ...into];
        assertIncreasing(ids, 'snowflake IDs of one handle');
        minted.sf.push(ids);

        const info = m.info();
        assert.equal(info.kind, 'snowflake');
        assert.deepEqual(
            { ...info.layout },
            {
                timeBits: 40,
                regionBits: 2,
                workerBits: 8,
                sequenceBits: 13,
                unitMs: 1,
                epochMs: Date.UTC(2025, 5, 1),
            }
        );
        assert.equal(typeof info.generation, 'bigint');
        assert.match(info.incarnation, /^[0-9a-f]{32}$/);
        assert.ok(info.leaseUntil > info.lastTime, 'the last ID is before the lease end');

        const d = m.decode(one);
        assert.equal(d.id, one);
        assert.equal(d.worker, info.workerId);
        assert.equal(d.region, 0);
        assert.ok(d.unixMs >= before - 5 && d.unixMs <= Date.now() + 5, `time ${d.time}`);
        assert.equal(d.time, new Date(d.unixMs).toISOString());
        // The ID is the fields put back together: t | region | worker | sequence.
        assert.equal(
            (d.timeUnits << 23n) |
                (BigInt(d.region) << 21n) |
                (BigInt(d.worker) << 13n) |
                d.sequence,
            one
        );
        // The same through the module-level decode, the layout as info() gave it.
        assert.deepEqual(idmint.decode(one, info.layout), d);
        assert.deepEqual(idmint.decode(one.toString(), info.layout), d);
        assert.equal(m.leaseStatus(), null);
    } finally {
        m.close();
    }
    assert.equal(m.closed, true);
    m.close(); // a second close is a no-op
});

test('a range Minter hands out the reserved values from --start, increasing', () => {
    const r = new idmint.Minter(auth.url, 'rg');
    try {
        assert.equal(r.kind, 'range');
        const first = r.next();
        assert.equal(first, 5000n);
        const batch = r.nextN(2500); // past the block of 1000: refills on the way
        assertIncreasing([first, ...batch], 'range IDs of one thread');
        assert.equal(batch[batch.length - 1], 5000n + 2500n);
        const into = r.nextInto(new BigInt64Array(10));
        assert.equal(into[0], 5000n + 2501n);
        minted.rg.push([first], batch, into);
        const info = r.info();
        assert.equal(info.kind, 'range');
        assert.equal(typeof info.rangeLeft, 'bigint');
        assert.throws(() => r.decode(first), { code: 'IDMINT_EINVAL', message: /range IDs/ });
    } finally {
        r.close();
    }
});

test('a closed range Minter abandons its range; a new one starts above it', () => {
    const a = new idmint.Minter(auth.url, 'rg');
    const x = a.next();
    a.close();
    const b = new idmint.Minter(auth.url, 'rg');
    const y = b.next();
    b.close();
    assert.ok(y > x, `${y} after ${x}`);
    minted.rg.push([x, y]);
});

test('Minter.open() opens without blocking and gives the same kind of Minter', async () => {
    const p = idmint.open(auth.url, 'sf', { leaseMs: 5000, renewMs: 1000 });
    assert.ok(p instanceof Promise);
    const m = await p;
    assert.ok(m instanceof idmint.Minter);
    const ids = m.nextN(100);
    minted.sf.push(ids);
    assert.equal(m.decode(ids[0]).worker, m.info().workerId);
    m.close();
    await assert.rejects(idmint.Minter.open(auth.url, 'missing'), { code: 'IDMINT_ENOTFOUND' });
});

test('close() releases the worker lease at once', () => {
    const m = new idmint.Minter(auth.url, 'sf');
    const worker = m.info().workerId;
    minted.sf.push([m.next()]);
    const held = cli(auth.url, 'workers', 'sf');
    assert.match(held, new RegExp(`worker=${worker} holder=[0-9a-f]{8}`));
    m.close();
    const released = cli(auth.url, 'workers', 'sf');
    assert.match(released, new RegExp(`worker=${worker} holder=- `));
});

test('uuid7() gives canonical, version-7, increasing UUIDs', () => {
    const all = [];
    for (let i = 0; i < 2000; i++) all.push(idmint.uuid7());
    for (const u of all)
        assert.match(u, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    for (let i = 1; i < all.length; i++)
        assert.ok(all[i] > all[i - 1], `${all[i]} after ${all[i - 1]}`);
    // The first 48 bits are Unix ms.
    const ms = parseInt(all[0].replace(/-/g, '').slice(0, 12), 16);
    assert.ok(Math.abs(ms - Date.now()) < 5000, `uuid7 time ${ms}`);
});

test('uuid7N(n) continues the order of uuid7() and refuses bad counts', () => {
    const before = idmint.uuid7();
    const got = idmint.uuid7N(10000);
    const after = idmint.uuid7();
    assert.equal(got.length, 10000);
    for (const u of got)
        assert.match(u, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const seq = [before, ...got, after];
    for (let i = 1; i < seq.length; i++) assert.ok(seq[i] > seq[i - 1], `${seq[i]} after ${seq[i - 1]}`);
    for (const bad of [0, -1, 1.5, NaN, '10', undefined])
        assert.throws(() => idmint.uuid7N(bad), (e) => e instanceof TypeError || e.code !== undefined, String(bad));
    assert.ok(idmint.uuid7() > after, 'a refused batch took no UUID out of order');
});

test('decode() takes a layout as "T/R/W/S" or an object, default epoch and unit', () => {
    // 41/0/10/12 from 2026-01-01: time 1000 units, worker 3, sequence 7.
    const id = (1000n << 22n) | (3n << 12n) | 7n;
    const byText = idmint.decode(id, '41/0/10/12');
    const byDefault = idmint.decode(id);
    const byObject = idmint.decode(id, { workerBits: 10, epoch: '2026-01-01' });
    for (const d of [byText, byDefault, byObject]) {
        assert.equal(d.timeUnits, 1000n);
        assert.equal(d.unixMs, Date.UTC(2026, 0, 1) + 1000);
        assert.equal(d.worker, 3);
        assert.equal(d.sequence, 7n);
    }
    assert.equal(idmint.decode(Number(id)).worker, 3); // a safe-integer Number is exact
});

test('the module exposes the library version, codes and limit', () => {
    assert.match(idmint.version, /^\d+\.\d+\.\d+$/);
    assert.equal(idmint.MAX_COUNT, 100000000);
    assert.equal(Object.isFrozen(idmint.codes), true);
});
