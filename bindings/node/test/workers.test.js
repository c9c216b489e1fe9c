// SPDX-License-Identifier: Apache-2.0
// worker_threads: the addon loads in every thread (context-aware, state per
// environment), threads mint at once without a repeat, and a thread that
// ends without close() still gives its lease back.
'use strict';

const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { Worker } = require('node:worker_threads');
const idmint = require('..');
const { makeAuthority, assertUnique, assertIncreasing, cli } = require('./helpers.js');

const PKG = path.join(__dirname, '..');
const WORKER = path.join(__dirname, 'fixtures', 'mint-worker.js');

let auth;

before(() => {
    auth = makeAuthority({
        sf: ['--kind', 'snowflake'],
        rg: ['--kind', 'range', '--block', '5000', '--max-block', '1000000'],
    });
});

after(() => auth.remove());

function run(workerData) {
    const w = new Worker(WORKER, { workerData: { pkg: PKG, ...workerData } });
    const state = { worker: w, hasExited: false };
    const exited = new Promise((resolve) =>
        w.once('exit', (code) => {
            state.hasExited = true;
            resolve(code);
        })
    );
    const result = new Promise((resolve, reject) => {
        w.once('message', resolve);
        w.once('error', reject);
    });
    state.done = result.then(async (r) => ({ ...r, exitCode: await exited }));
    return state;
}

/** Holders of `ns`'s worker ids that are not released. */
function heldWorkers(ns) {
    return cli(auth.url, 'workers', ns)
        .split('\n')
        .filter((l) => l.includes('holder=') && !l.includes('holder=- '));
}

for (const ns of ['sf', 'rg']) {
    test(
        `6 worker threads and the main thread mint from ${ns} at once without a repeat`,
        { timeout: 60000 },
        async () => {
            const parties = 6;
            const gate = new SharedArrayBuffer(4);
            const count = 60000;
            // Half close their Minter, half leave it to the thread's end.
            const runs = Array.from({ length: parties }, (_, i) =>
                run({ url: auth.url, ns, count, singles: 20000, close: i % 2 === 0, gate, parties })
            );
            // The main thread mints alongside them, on its own handle.
            const own = new idmint.Minter(auth.url, ns);
            const mine = [];
            // Until all have opened; a thread that died first ends the wait (its
            // error then fails the test below).
            while (
                Atomics.load(new Int32Array(gate), 0) < parties &&
                !runs.some((r) => r.hasExited)
            )
                await new Promise((r) => setTimeout(r, 1));
            for (let i = 0; i < 200; i++) mine.push(own.nextN(100));
            const results = await Promise.all(runs.map((r) => r.done));
            own.close();

            for (const r of results) {
                assert.equal(r.exitCode, 0);
                assert.equal(r.ids.length, count);
                assertIncreasing(r.ids, `IDs of one ${ns} thread`);
            }
            if (ns === 'sf') {
                const workerIds = new Set(results.map((r) => r.workerId));
                assert.equal(workerIds.size, parties, 'each thread leased its own worker id');
            }
            const total = assertUnique([...results.map((r) => r.ids), ...mine]);
            assert.equal(total, parties * count + 200 * 100);
            if (ns === 'sf') assert.deepEqual(heldWorkers('sf'), [], 'every lease was released');
        }
    );
}

test('a terminated worker gives its lease back', { timeout: 60000 }, async () => {
    const w = new Worker(
        `const { parentPort, workerData } = require('node:worker_threads');
     const idmint = require(workerData.pkg);
     const m = new idmint.Minter(workerData.url, 'sf');
     parentPort.postMessage(m.info().workerId);
     for (;;) m.nextN(1000);`,
        { eval: true, workerData: { pkg: PKG, url: auth.url } }
    );
    const exited = new Promise((resolve) => w.once('exit', resolve));
    const workerId = await new Promise((resolve, reject) => {
        w.once('message', resolve);
        w.once('error', reject);
    });
    assert.equal(heldWorkers('sf').length, 1);
    await new Promise((r) => setTimeout(r, 50));
    await w.terminate();
    await exited;
    assert.deepEqual(heldWorkers('sf'), [], `worker id ${workerId} is still held`);
});

test(
    'a Minter dropped without close() gives its lease back when collected',
    { timeout: 60000 },
    async () => {
        const { spawnSync } = require('node:child_process');
        const script = `
    const idmint = require(${JSON.stringify(PKG)});
    (function () { new idmint.Minter(process.argv[1], 'sf').next(); })();
    const keep = new idmint.Minter(process.argv[1], 'sf'); // stays open: the control
    const { execFileSync } = require('node:child_process');
    const held = () => execFileSync(process.argv[2], ['--authority', process.argv[1], 'workers', 'sf'],
      { encoding: 'utf8' }).split('\\n').filter((l) => /holder=[0-9a-f]/.test(l)).length;
    console.log('before=' + held());
    (async () => {
      for (let i = 0; i < 100 && held() > 1; i++) { global.gc(); await new Promise((r) => setTimeout(r, 20)); }
      console.log('after=' + held());
      keep.next();
      process.exit(0);
    })();
  `;
        const r = spawnSync(
            process.execPath,
            [
                '--expose-gc',
                '-e',
                script,
                auth.url,
                path.join(process.env.IDMINT_BUILD_DIR, 'idmint'),
            ],
            {
                encoding: 'utf8',
            }
        );
        assert.equal(r.status, 0, r.stderr);
        assert.match(r.stdout, /before=2\nafter=1\n/);
    }
);
