// SPDX-License-Identifier: Apache-2.0
// Four processes mint from one SQLite authority (a snowflake and a range
// namespace), four times one of them is killed with SIGKILL mid-run and
// started again; over all their files, no ID may repeat.
'use strict';

const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { spawn, spawnSync } = require('node:child_process');
const { makeAuthority, assertUnique } = require('./helpers.js');

const CHILD = path.join(__dirname, 'fixtures', 'mint-process.js');
const PROCESSES = 4;
const QUOTA = 150000; // per namespace and run: 4 full runs alone give 1,200,000 IDs
const PACE_MS = 10; // between batches, so a run lasts seconds and kills land mid-run
// [process, IDs it must have reported] in order: each is killed at that point.
const KILLS = [
    [0, 30000],
    [1, 30000],
    [2, 60000],
    [0, 20000],
];

let auth;
const children = new Set();

before(() => {
    auth = makeAuthority({
        // 4 worker ids for 4 processes: a restart must wait out the 2 s lease of
        // the id its killed predecessor held and take that very id, so every
        // restart mints right after a holder that died mid-lease.
        sf: ['--kind', 'snowflake', '--layout', '41/0/2/12'],
        rg: ['--kind', 'range', '--block', '10000', '--max-block', '1000000'],
    });
});

after(() => {
    for (const c of children) c.kill('SIGKILL');
    auth.remove();
});

/** Start process `slot`'s run number `run`; resolves when it exits. */
function start(slot, run, onMinted) {
    const prefix = path.join(auth.dir, `p${slot}-r${run}`);
    const c = spawn(process.execPath, [CHILD, auth.url, prefix, String(QUOTA), String(PACE_MS)], {
        stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.add(c);
    let stderr = '';
    let sawDone = false;
    let workerId = null;
    c.stderr.on('data', (d) => (stderr += d));
    c.stdout.setEncoding('utf8');
    let pending = '';
    c.stdout.on('data', (d) => {
        pending += d;
        let nl;
        while ((nl = pending.indexOf('\n')) >= 0) {
            const line = pending.slice(0, nl);
            pending = pending.slice(nl + 1);
            const m = /^minted (\d+)$/.exec(line);
            if (m) onMinted(Number(m[1]), c);
            if (line === 'done') sawDone = true;
            const w = /^worker (\d+)$/.exec(line);
            if (w) workerId = Number(w[1]);
        }
    });
    const exited = new Promise((resolve) =>
        c.once('exit', (code, signal) => {
            children.delete(c);
            resolve({ slot, run, code, signal, stderr, sawDone, workerId });
        })
    );
    return exited;
}

/** Complete lines of a file: a process killed mid-write may leave half a line. */
function readIds(file) {
    if (!fs.existsSync(file)) return [];
    const text = fs.readFileSync(file, 'utf8');
    const end = text.lastIndexOf('\n');
    return end < 0 ? [] : text.slice(0, end).split('\n');
}

test(
    '4 processes, 4 of their runs killed with SIGKILL: no ID repeats',
    { timeout: 90000 },
    async (t) => {
        const kills = KILLS.slice();
        const runs = new Array(PROCESSES).fill(0);
        const exits = [];
        let live = 0;
        let finish;
        const allDone = new Promise((resolve) => (finish = resolve));

        function launch(slot) {
            live++;
            const run = runs[slot]++;
            start(slot, run, (minted, child) => {
                if (kills.length > 0 && kills[0][0] === slot && minted >= kills[0][1]) {
                    kills.shift();
                    child.kill('SIGKILL');
                }
            }).then((r) => {
                exits.push(r);
                live--;
                if (r.signal === 'SIGKILL')
                    launch(slot); // the restart: a new incarnation
                else if (live === 0) finish();
            });
        }
        for (let slot = 0; slot < PROCESSES; slot++) launch(slot);
        await allDone;

        assert.equal(kills.length, 0, 'every planned kill happened');
        const killed = exits.filter((r) => r.signal === 'SIGKILL');
        assert.equal(killed.length, KILLS.length);
        for (const r of exits.filter((x) => x.signal !== 'SIGKILL')) {
            assert.equal(r.code, 0, `p${r.slot} run ${r.run}: ${r.stderr}`);
            assert.ok(r.sawDone, `p${r.slot} run ${r.run} did not finish`);
        }

        // The first kills come while all four run, so those restarts can only have
        // taken the worker id of a killed run, after its lease ran out. (Later ones
        // may take an id a finished run released.)
        const restarts = exits.filter((r) => r.run > 0);
        assert.equal(restarts.length, KILLS.length);
        const reused = restarts.filter((r) =>
            killed.some((k) => k.workerId === r.workerId && (k.slot !== r.slot || k.run < r.run))
        );
        assert.ok(reused.length >= 2, `only ${reused.length} restarts took a killed run's id`);
        t.diagnostic(
            `${reused.length} of ${restarts.length} restarts took a killed run's worker id`
        );

        let total = 0;
        for (const ns of ['sf', 'rg']) {
            const files = fs.readdirSync(auth.dir).filter((f) => f.endsWith(`.${ns}`));
            assert.equal(files.length, PROCESSES + KILLS.length, `one ${ns} file per run`);
            const lists = [];
            for (const f of files) {
                const lines = readIds(path.join(auth.dir, f));
                assert.ok(lines.length > 0, `${f} is empty`);
                lists.push(lines.map(BigInt));
            }
            const count = assertUnique(lists);
            assert.ok(count >= PROCESSES * QUOTA, `${ns}: only ${count} IDs`);
            total += count;
            t.diagnostic(`${ns}: ${count} IDs from ${files.length} runs, no repeat`);

            // The CLI's own check over the same IDs.
            const all = lists.map((l) => l.join('\n')).join('\n') + '\n';
            const v = spawnSync(path.join(process.env.IDMINT_BUILD_DIR, 'idmint'), ['verify'], {
                input: all,
                encoding: 'utf8',
                maxBuffer: 1 << 20,
            });
            assert.equal(v.status, 0, v.stdout + v.stderr);
            assert.match(v.stdout, new RegExp(`count=${count} duplicates=0 `));
        }
        assert.ok(total >= 1000000, `only ${total} IDs in all`);
    }
);
