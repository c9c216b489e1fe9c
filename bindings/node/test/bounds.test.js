// SPDX-License-Identifier: Apache-2.0
// bounds() and uuid7Bounds(): the CLI's answer for one vector (a 10 ms unit,
// 5 ms into it, region bits), the IDs minted now inside their window and
// below a later one, times as Dates, text or Unix ms, and the refusals.
'use strict';

const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const idmint = require('..');
const { makeAuthority, cli } = require('./helpers.js');

let auth;

before(() => {
    auth = makeAuthority({
        tens: ['--kind', 'snowflake', '--layout', '39/4/8/12', '--unit', '10'],
        seq: ['--kind', 'range'],
    });
});

after(() => auth.remove());

test('bounds() agree with the CLI and hold the IDs minted in their window', () => {
    const m = new idmint.Minter(auth.url, 'tens', { region: 5 });
    try {
        const mine = m.bounds(1772323200005, '2026-03-02');
        const theirs = JSON.parse(
            cli(auth.url, 'bounds', '--ns', 'tens', '--from', '1772323200005', '--to', '2026-03-02', '--json')
        );
        assert.equal(mine.lo.toString(), theirs.lo);
        assert.equal(mine.hi.toString(), theirs.hi);
        const epoch = Date.UTC(2026, 0, 1);
        assert.equal(mine.lo, BigInt(Math.floor((1772323200005 - epoch) / 10)) << 24n);
        // The module-level call with the layout gives the same; a Date is a time too.
        const same = idmint.bounds(new Date(1772323200005), new Date('2026-03-02T00:00:00Z'), m.info().layout);
        assert.deepEqual(same, mine);

        // A second of slack: the library's clock may lag a loaded machine's.
        const start = Date.now() - 1000;
        const ids = m.nextN(1000);
        const end = Date.now() + 1000;
        const now = m.bounds(start, end);
        const later = m.bounds(end, end + 60000);
        for (const id of ids) {
            assert.ok(id >= now.lo && id <= now.hi, `${id} outside [${now.lo}, ${now.hi}]`);
            assert.ok(id < later.lo, `${id} inside the later window from ${later.lo}`);
        }
    } finally {
        m.close();
    }
});

test('bounds() refuse bad windows and range namespaces', () => {
    assert.throws(() => idmint.bounds('2026-03-02', '2026-03-01'), /the window is empty/);
    assert.throws(() => idmint.bounds('2025-12-31', '2026-03-01'), /is before 2026-01-01/);
    assert.throws(() => idmint.bounds(new Date('not a date'), 5), /invalid Date/);
    assert.throws(() => idmint.bounds(1), TypeError);
    const r = new idmint.Minter(auth.url, 'seq');
    try {
        assert.throws(() => r.bounds(0, 1), /range IDs carry no time/);
    } finally {
        r.close();
    }
});

test('uuid7Bounds() hold the UUIDs made in their window', () => {
    const fixed = idmint.uuid7Bounds(0x0123456789ab, 0x0123456789ad);
    assert.deepEqual(fixed, {
        lo: '01234567-89ab-7000-8000-000000000000',
        hi: '01234567-89ac-7fff-bfff-ffffffffffff',
    });
    const start = Date.now() - 1000;
    const got = Array.from({ length: 1000 }, () => idmint.uuid7());
    const w = idmint.uuid7Bounds(start, Date.now() + 1000);
    for (const u of got) assert.ok(u >= w.lo && u <= w.hi, `${u} outside [${w.lo}, ${w.hi}]`);
    assert.throws(() => idmint.uuid7Bounds(5, 5), /the window is empty/);
});
