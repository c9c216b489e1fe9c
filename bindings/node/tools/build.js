// SPDX-License-Identifier: Apache-2.0
// Build the addon with node-gyp against the headers of the running Node
// (--nodedir), so node-gyp never downloads them. IDMINT_NODEDIR overrides
// the folder (it must hold include/node/node_api.h). Which node-gyp, the
// first found of:
//   IDMINT_NODE_GYP            a node-gyp.js (or a link to one) to run
//   npm_config_node_gyp        the one npm names while it runs `npm install`
//   node-gyp on PATH           Debian's `node-gyp` package (/usr/bin/node-gyp)
//   <prefix>/lib/node_modules/npm/node_modules/node-gyp
//                              the one bundled with the running Node's npm
//                              (nodejs.org and NodeSource builds)
//   node_modules/node-gyp      one installed next to this package
// None of them needs the npm registry.
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const flags = require('./flags.js');

const root = path.join(__dirname, '..');
// <prefix>/bin/node ships its headers in <prefix>/include/node.
const prefix = path.dirname(path.dirname(fs.realpathSync(process.execPath)));

function fail(lines) {
    process.stderr.write(lines.map((l) => `idmint: ${l}\n`).join(''));
    process.exit(1);
}

function onPath(name) {
    for (const dir of (process.env.PATH || '').split(path.delimiter)) {
        if (!dir) continue;
        const f = path.join(dir, name);
        try {
            fs.accessSync(f, fs.constants.X_OK);
            return f;
        } catch (e) {
            // not here
        }
    }
    return null;
}

function nodeGyp() {
    const tried = [];
    const candidates = [
        ['IDMINT_NODE_GYP', process.env.IDMINT_NODE_GYP],
        ['npm_config_node_gyp', process.env.npm_config_node_gyp],
        ['PATH', onPath('node-gyp')],
        ['npm', path.join(prefix, 'lib', 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js')],
        ['node_modules', path.join(root, 'node_modules', 'node-gyp', 'bin', 'node-gyp.js')],
    ];
    for (const [what, file] of candidates) {
        if (!file) continue;
        if (fs.existsSync(file)) return fs.realpathSync(file);
        tried.push(`${what}: ${file}`);
    }
    fail([
        'node-gyp not found: install it (Debian: `apt-get install node-gyp`) or set IDMINT_NODE_GYP ' +
            'to a node-gyp.js',
        ...tried.map((t) => `  tried ${t}`),
    ]);
    return null;
}

// libidmint first: without it nothing else matters, and node-gyp would
// bury the reason under its own trace.
try {
    flags.locate();
} catch (e) {
    if (!(e instanceof flags.NotFound)) throw e;
    fail([e.message, `fix: ${flags.FIX}`]);
}
const dir = process.env.IDMINT_NODEDIR || prefix;
if (!fs.existsSync(path.join(dir, 'include', 'node', 'node_api.h'))) {
    fail([
        `no Node headers in ${dir}/include/node: install them (Debian: \`apt-get install ` +
            'libnode-dev`, which node-gyp pulls in) or set IDMINT_NODEDIR',
    ]);
}
const gyp = nodeGyp();
// Run node-gyp under this very node, whatever its #! line names.
const args = [gyp, 'rebuild', `--nodedir=${dir}`, '--release'];
// Debian's node-gyp runs Debian's gyp, a module of the system's python3
// (package gyp): a python3 found first on PATH (pyenv, a venv) lacks it.
const pythonSet = process.env.PYTHON || process.env.npm_config_python;
if (gyp.startsWith('/usr/share/nodejs/') && !pythonSet && fs.existsSync('/usr/bin/python3')) {
    args.push('--python=/usr/bin/python3');
}
args.push(...process.argv.slice(2));
const r = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit' });
process.exit(r.status === null ? 1 : r.status);
