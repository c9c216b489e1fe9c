// SPDX-License-Identifier: Apache-2.0
// What a user sees when libidmint or the addon is missing: the first line
// says what is missing and how to fix it, before any node-gyp output (the
// build stops before node-gyp runs), and require() says the same.
'use strict';

const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const ROOT = path.join(__dirname, '..');

/** Run tools/build.js with `env` over a clean environment: no libidmint anywhere. */
function build(env) {
    const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'idmint-nopc-'));
    try {
        const clean = { ...process.env };
        delete clean.IDMINT_INCLUDE_DIR;
        delete clean.IDMINT_LIB_DIR;
        return spawnSync(process.execPath, [path.join(ROOT, 'tools', 'build.js')], {
            cwd: ROOT,
            encoding: 'utf8',
            // PKG_CONFIG_LIBDIR replaces pkg-config's default folders: an
            // installed idmint.pc is not found.
            env: { ...clean, PKG_CONFIG_LIBDIR: empty, PKG_CONFIG_PATH: '', ...env },
        });
    } finally {
        fs.rmSync(empty, { recursive: true, force: true });
    }
}

function firstLines(r) {
    assert.equal(r.status, 1, `build.js exit status; stderr: ${r.stderr}`);
    assert.equal(r.stdout, '', 'nothing but the reason is printed');
    assert.doesNotMatch(r.stderr, /gyp/, 'node-gyp did not run');
    return r.stderr.split('\n');
}

test('with no libidmint the build says so first, with the fix, and runs no node-gyp', () => {
    const lines = firstLines(build({}));
    assert.match(lines[0], /^idmint: libidmint not found: IDMINT_INCLUDE_DIR and IDMINT_LIB_DIR are not set/);
    assert.match(lines[1], /^idmint: fix: .*IDMINT_LIB_DIR=.*pkg-config idmint/);
});

test('a folder without the header or the library is named', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'idmint-nolib-'));
    try {
        let lines = firstLines(build({ IDMINT_INCLUDE_DIR: dir, IDMINT_LIB_DIR: dir }));
        assert.equal(lines[0], `idmint: libidmint's header not found: no idmint.h in ${dir} (IDMINT_INCLUDE_DIR)`);
        const include = path.join(ROOT, '..', '..', 'include');
        lines = firstLines(build({ IDMINT_INCLUDE_DIR: include, IDMINT_LIB_DIR: dir }));
        assert.equal(lines[0], `idmint: libidmint not found: no libidmint.so in ${dir} (IDMINT_LIB_DIR)`);
        lines = firstLines(build({ IDMINT_INCLUDE_DIR: include }));
        assert.match(lines[0], /set both IDMINT_INCLUDE_DIR and IDMINT_LIB_DIR, or neither/);
    } finally {
        fs.rmSync(dir, { recursive: true, force: true });
    }
});

test('require() of a package whose addon is not built says how to build it', () => {
    // A copy of the package without build/.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'idmint-unbuilt-'));
    try {
        fs.cpSync(path.join(ROOT, 'lib'), path.join(dir, 'lib'), { recursive: true });
        fs.copyFileSync(path.join(ROOT, 'package.json'), path.join(dir, 'package.json'));
        const r = spawnSync(process.execPath, ['-e', `require(${JSON.stringify(dir)})`], {
            encoding: 'utf8',
        });
        assert.notEqual(r.status, 0);
        const line = r.stderr.split('\n').find((l) => l.startsWith('Error: '));
        assert.ok(line, r.stderr);
        assert.match(line, /^Error: idmint: the addon is not built \(.*build\/Release\/idmint\.node is missing\): build it with `npm run build`/);
    } finally {
        fs.rmSync(dir, { recursive: true, force: true });
    }
});
