// SPDX-License-Identifier: Apache-2.0
// IDs per second of the Node binding beside crypto.randomUUID(), measured in
// the same run and reported as ratios (never as pass/fail). Rounds interleave
// every case, and each figure is the median over rounds, so a neighbour's
// load moves subject and peer alike.
//   node bench/bench.js IDMINT_CLI       (bench/bench_node.sh builds and runs it)
// BENCH_ROUNDS (default 7) and BENCH_MS (per case and round, default 150).
'use strict';

const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const idmint = require('..');
const native = require('../build/Release/idmint.node');

const cli = process.argv[2];
const ROUNDS = Number(process.env.BENCH_ROUNDS || 7);
const MS = Number(process.env.BENCH_MS || 150);
const BATCH = 1000;

let probe = null;
try {
    probe = require('./build/Release/probe.node');
} catch (e) {
    // Without the probe addon the breakdown is left out; the figures stand.
}

/** Calls of f per second over about MS ms (f runs `inner` calls per step). */
function rate(f, inner) {
    let steps = 0;
    const t0 = process.hrtime.bigint();
    const end = t0 + BigInt(MS) * 1000000n;
    let now;
    do {
        for (let i = 0; i < 64; i++) f();
        steps += 64;
        now = process.hrtime.bigint();
    } while (now < end);
    return (steps * inner) / (Number(now - t0) / 1e9);
}

function median(xs) {
    const s = [...xs].sort((a, b) => a - b);
    const n = s.length;
    return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

function main() {
    const loadAtStart = os.loadavg()[0];
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'idmint-bench-'));
    const url = `sqlite:${dir}/a.db`;
    const handles = [];
    try {
        const ns = (name, ...args) =>
            execFileSync(cli, ['--authority', url, 'ns', 'create', name, ...args]);
        ns('rg', '--kind', 'range', '--block', '1000000', '--max-block', '1000000');
        ns('sf', '--kind', 'snowflake');
        const rg = new idmint.Minter(url, 'rg');
        const sf = new idmint.Minter(url, 'sf');
        const rawId = native.open(url, 'rg');
        handles.push(
            () => rg.close(),
            () => sf.close(),
            () => native.close(rawId)
        );
        const buf = new BigUint64Array(BATCH);
        let sink;

        const cases = {
            'crypto.randomUUID()': [() => (sink = crypto.randomUUID()), 1],
            'next() range': [() => (sink = rg.next()), 1],
            'next() snowflake': [() => (sink = sf.next()), 1],
            'nextN(1000) range': [() => (sink = rg.nextN(BATCH)), BATCH],
            'nextInto(1000) range': [() => (sink = rg.nextInto(buf)), BATCH],
            'uuid7()': [() => (sink = idmint.uuid7()), 1],
            'uuid7N(1000)': [() => (sink = idmint.uuid7N(BATCH)), BATCH],
            'native next(id), no JS class': [() => (sink = native.next(rawId)), 1],
        };
        if (probe) {
            const w = new probe.Wrapped();
            Object.assign(cases, {
                'probe: empty call': [() => probe.noop(), 1],
                'probe: call + read the id': [() => probe.arg(1), 1],
                'probe: call + id + new BigInt': [() => (sink = probe.bigint(1)), 1],
                'probe: unwrap design': [() => (sink = w.unwrap()), 1],
            });
        }
        // Warm up every case so the JIT has settled before the first round.
        for (const [f, inner] of Object.values(cases)) rate(f, inner);
        const rates = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
        const ratios = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
        for (let r = 0; r < ROUNDS; r++) {
            const peer = rate(...cases['crypto.randomUUID()']);
            rates['crypto.randomUUID()'].push(peer);
            for (const [name, [f, inner]] of Object.entries(cases)) {
                if (name === 'crypto.randomUUID()') continue;
                const x = rate(f, inner);
                rates[name].push(x);
                ratios[name].push(x / peer);
            }
        }
        void sink;

        // Not timed: what the timed loops minted was unique (one thread's range
        // and one handle's snowflake IDs increase), checked on a fresh sample.
        checkIncreasing(rg, sf);

        report(rates, ratios, loadAtStart);
    } finally {
        for (const close of handles) close();
        fs.rmSync(dir, { recursive: true, force: true });
    }
}

function checkIncreasing(rg, sf) {
    // 1M IDs each: the snowflake handle may hand out 4096 per ms at most.
    for (const m of [rg, sf]) {
        let last = m.next();
        for (let i = 0; i < 2000; i++) {
            const id = i % 2 ? m.next() : m.nextN(BATCH)[BATCH - 1];
            if (id <= last) throw new Error(`${m.kind}: ${id} after ${last}: not increasing`);
            last = id;
        }
    }
}

function fmt(x) {
    return x >= 1e9 ? `${(x / 1e9).toFixed(2)} G` : `${(x / 1e6).toFixed(1)} M`;
}

function report(rates, ratios, loadAtStart) {
    const cpus = os.cpus();
    const load = `load average ${loadAtStart.toFixed(2)} at the start, ${os.loadavg()[0].toFixed(2)} at the end`;
    console.log(
        `idmint Node binding: node ${process.version}, ${cpus.length} CPUs (${cpus[0].model.trim()}), ` +
            `${ROUNDS} rounds of ${MS} ms per case, medians; ${load}`
    );
    const peer = median(rates['crypto.randomUUID()']);
    console.log(
        `  ${'crypto.randomUUID()'.padEnd(32)} ${fmt(peer).padStart(9)} calls/s   (the peer)`
    );
    const targets = {
        'next() range': 'target >= 3x',
        'nextN(1000) range': 'target >= 100 M IDs/s',
        'nextInto(1000) range': 'target >= 100 M IDs/s',
    };
    for (const name of Object.keys(rates)) {
        if (name === 'crypto.randomUUID()' || name.startsWith('probe:')) continue;
        const unit = name.includes('1000') ? 'IDs/s  ' : 'calls/s';
        const t = targets[name] ? `   ${targets[name]}` : '';
        console.log(
            `  ${name.padEnd(32)} ${fmt(median(rates[name])).padStart(9)} ${unit} ` +
                `${median(ratios[name]).toFixed(2).padStart(7)}x randomUUID${t}`
        );
    }
    // The breakdown subtracts small numbers: each from its round with least
    // interference (the fastest), where medians of a loaded machine could
    // even come out negative.
    const ns = (name) => 1e9 / Math.max(...rates[name]);
    console.log('  where one next() (range) goes, ns per call (fastest round of each):');
    if (rates['probe: empty call']) {
        const call = ns('probe: empty call');
        const arg = ns('probe: call + read the id') - call;
        const big = ns('probe: call + id + new BigInt') - ns('probe: call + read the id');
        const mint = ns('native next(id), no JS class') - ns('probe: call + id + new BigInt');
        const cls = ns('next() range') - ns('native next(id), no JS class');
        console.log(
            `    crossing into C ${call.toFixed(1)}, reading the id ${arg.toFixed(1)}, ` +
                `new BigInt ${big.toFixed(1)}, idmint_next ${mint.toFixed(1)}, JS class ${cls.toFixed(1)}; ` +
                `total ${ns('next() range').toFixed(1)} (randomUUID ${ns('crypto.randomUUID()').toFixed(1)})`
        );
        console.log(
            `    the napi_wrap design (this + type tag + unwrap + BigInt) costs ` +
                `${ns('probe: unwrap design').toFixed(1)} before minting`
        );
    } else {
        console.log('    (probe addon not built: bench/bench_node.sh builds it)');
    }
    const perId = ns('nextInto(1000) range');
    console.log(`    in a batch of 1000 an ID costs ${perId.toFixed(2)} ns`);
}

main();
