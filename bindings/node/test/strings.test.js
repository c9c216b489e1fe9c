// SPDX-License-Identifier: Apache-2.0
// IDs as decimal strings and in JSON: nextString(), nextNStrings(),
// jsonReplacer. Each string must be the exact BigInt (IDs pass 2^53, where a
// Number would round), increasing with the BigInt forms from the same handle.
'use strict';

const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const idmint = require('..');
const { makeAuthority, assertUnique, assertIncreasing } = require('./helpers.js');

let auth;
const minted = { sf: [], rg: [] };
const DECIMAL = /^[1-9][0-9]*$/;

before(() => {
    auth = makeAuthority({
        sf: ['--kind', 'snowflake'],
        // Start above 2^53: a Number on the way would round these.
        rg: ['--kind', 'range', '--start', '9007199254740993', '--block', '1000'],
    });
});

after(() => {
    try {
        for (const ids of Object.values(minted)) assertUnique(ids);
    } finally {
        auth.remove();
    }
});

test('nextString() and nextNStrings() give exact decimal IDs in order with next()', () => {
    const r = new idmint.Minter(auth.url, 'rg');
    try {
        assert.equal(r.nextString(), '9007199254740993');
        assert.equal(r.next(), 9007199254740994n);
        const strs = r.nextNStrings(2500); // past the block of 1000
        assert.ok(Array.isArray(strs));
        assert.equal(strs.length, 2500);
        assert.equal(strs[0], '9007199254740995');
        assert.equal(strs[2499], '9007199254743494');
        for (const s of strs) assert.match(s, DECIMAL);
        const ids = strs.map(BigInt);
        assertIncreasing(ids, 'nextNStrings()');
        assert.equal(r.nextString(), '9007199254743495');
        minted.rg.push([9007199254740993n, 9007199254740994n, 9007199254743495n], ids);
    } finally {
        r.close();
    }
});

test('snowflake strings are the BigInts decode() takes apart', () => {
    const m = new idmint.Minter(auth.url, 'sf');
    try {
        const a = m.next();
        const s = m.nextString();
        const more = m.nextNStrings(3000);
        const b = m.next();
        assert.match(s, DECIMAL);
        const ids = [a, BigInt(s), ...more.map(BigInt), b];
        assertIncreasing(ids, 'snowflake strings between BigInts');
        // decode() takes the string as it is.
        assert.equal(m.decode(s).worker, m.info().workerId);
        assert.equal(m.decode(s).id, BigInt(s));
        minted.sf.push(ids);
    } finally {
        m.close();
    }
});

test('bad counts and a closed Minter are refused as for nextN()', () => {
    const r = new idmint.Minter(auth.url, 'rg');
    const before = r.next();
    assert.throws(() => r.nextNStrings(0), { name: 'RangeError', code: 'IDMINT_EINVAL' });
    assert.throws(() => r.nextNStrings(idmint.MAX_COUNT + 1), { name: 'RangeError' });
    assert.throws(() => r.nextNStrings('2'), { name: 'TypeError', code: 'IDMINT_EINVAL' });
    const after = r.next();
    assert.equal(after, before + 1n, 'a refused count takes nothing');
    minted.rg.push([before, after]);
    r.close();
    assert.throws(() => r.nextString(), { code: 'IDMINT_EINVAL', message: /closed/ });
    assert.throws(() => r.nextNStrings(2), { code: 'IDMINT_EINVAL', message: /closed/ });
});

test('JSON.stringify() throws on a BigInt; with jsonReplacer IDs are exact strings', () => {
    const r = new idmint.Minter(auth.url, 'rg');
    const m = new idmint.Minter(auth.url, 'sf');
    try {
        const id = r.next();
        assert.throws(() => JSON.stringify({ id }), TypeError);
        const batch = r.nextN(3);
        const text = JSON.stringify({ id, batch, name: 'x', n: 1 }, idmint.jsonReplacer);
        assert.deepEqual(JSON.parse(text), {
            id: id.toString(),
            batch: [...batch].map(String),
            name: 'x',
            n: 1,
        });
        assert.match(text, new RegExp(`"id":"${id}"`));
        // decode() and info() carry BigInts too.
        const sf = m.next();
        const d = JSON.parse(JSON.stringify(m.decode(sf), idmint.jsonReplacer));
        assert.equal(d.id, sf.toString());
        assert.equal(typeof d.sequence, 'string');
        JSON.parse(JSON.stringify(m.info(), idmint.jsonReplacer));
        // Strings round-trip through JSON to the same BigInt.
        const s = r.nextString();
        assert.equal(BigInt(JSON.parse(JSON.stringify({ id: s })).id), id + 4n);
        minted.rg.push([id, ...batch, BigInt(s)]);
        minted.sf.push([sf]);
    } finally {
        r.close();
        m.close();
    }
});
