// SPDX-License-Identifier: Apache-2.0
// Run test/*.test.js one file after another, each with `node --test` under
// this very node: the same on Node 18 (whose --test has no
// --test-concurrency) as on 20 and later. Files named on the command line
// run instead of all. Exits 1 if any file failed.
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const dir = path.join(__dirname, '..', 'test');
const files =
    process.argv.length > 2
        ? process.argv.slice(2)
        : fs
              .readdirSync(dir)
              .filter((f) => f.endsWith('.test.js'))
              .sort()
              .map((f) => path.join(dir, f));
const failed = [];
for (const f of files) {
    const r = spawnSync(process.execPath, ['--test', f], { stdio: 'inherit' });
    if (r.status !== 0) failed.push(`${path.basename(f)} (${r.status === null ? r.signal : `exit ${r.status}`})`);
}
process.stdout.write(`idmint: ${files.length - failed.length} of ${files.length} test files passed on Node ${process.version}\n`);
if (failed.length > 0) {
    process.stderr.write(`idmint: failed: ${failed.join(', ')}\n`);
    process.exit(1);
}
