// SPDX-License-Identifier: Apache-2.0
// Shared by the tests: a private SQLite authority in a temp dir with
// namespaces made by the idmint CLI, and the duplicate check every test
// that mints runs over all it minted.
'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

const SOURCE_DIR = path.resolve(__dirname, '..', '..', '..');
const BUILD_DIR = process.env.IDMINT_BUILD_DIR;

function cliPath() {
    assert.ok(BUILD_DIR, 'IDMINT_BUILD_DIR must name the build tree (ci.sh sets it)');
    return path.join(BUILD_DIR, 'idmint');
}

/** Run the idmint CLI on `url`; returns its stdout. Throws on a non-zero exit. */
function cli(url, ...args) {
    return execFileSync(cliPath(), ['--authority', url, ...args], {
        encoding: 'utf8',
        stdio: ['pipe', 'pipe', 'pipe'],
    });
}

/**
 * A fresh authority `sqlite:<tmp>/a.db` with the namespaces asked for:
 * `{ sf: ['--kind', 'snowflake'], rg: ['--kind', 'range', '--block', '1000'] }`.
 * `remove()` deletes the folder; call it in an after() hook.
 */
function makeAuthority(namespaces) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'idmint-node-'));
    const url = `sqlite:${dir}/a.db`;
    for (const [name, args] of Object.entries(namespaces)) cli(url, 'ns', 'create', name, ...args);
    return { dir, url, remove: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

/** All IDs of `arrays` (BigUint64Arrays or arrays of BigInts) in one sorted array. */
function sortedIds(arrays) {
    const total = arrays.reduce((n, a) => n + a.length, 0);
    const all = new BigUint64Array(total);
    let at = 0;
    for (const a of arrays) {
        if (a instanceof BigUint64Array) all.set(a, at);
        else for (let i = 0; i < a.length; i++) all[at + i] = a[i];
        at += a.length;
    }
    return all.sort();
}

/** Assert no ID repeats and none is 0 across `arrays`; returns the count. */
function assertUnique(arrays) {
    const all = sortedIds(arrays);
    assert.ok(all.length > 0, 'nothing was minted');
    assert.notEqual(all[0], 0n, 'an ID is 0');
    for (let i = 1; i < all.length; i++) {
        if (all[i] === all[i - 1]) assert.fail(`duplicate ID ${all[i]} among ${all.length}`);
    }
    return all.length;
}

/** Assert `a` strictly increases. */
function assertIncreasing(a, what) {
    for (let i = 1; i < a.length; i++) {
        if (!(a[i] > a[i - 1])) assert.fail(`${what}: ${a[i]} follows ${a[i - 1]} at ${i}`);
    }
}

/** The X-macro table of include/idmint.h: [{ name: 'IDMINT_EINVAL', value: -1, text }]. */
function headerCodes() {
    const header = fs.readFileSync(path.join(SOURCE_DIR, 'include', 'idmint.h'), 'utf8');
    const rows = [...header.matchAll(/XX\((E[A-Z]+),\s*(-\d+),\s*"([^"]*)"\)/g)];
    return rows.map((m) => ({ name: `IDMINT_${m[1]}`, value: Number(m[2]), text: m[3] }));
}

module.exports = {
    SOURCE_DIR,
    cli,
    makeAuthority,
    sortedIds,
    assertUnique,
    assertIncreasing,
    headerCodes,
};
