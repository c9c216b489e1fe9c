// SPDX-License-Identifier: Apache-2.0
// Build the addon with node-gyp against the headers of the running Node
// (--nodedir), so node-gyp never downloads them. IDMINT_NODEDIR overrides
// the folder (it must hold include/node/node_api.h).
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

function nodeDir() {
    if (process.env.IDMINT_NODEDIR) return process.env.IDMINT_NODEDIR;
    // <prefix>/bin/node ships its headers in <prefix>/include/node.
    return path.dirname(path.dirname(fs.realpathSync(process.execPath)));
}

const dir = nodeDir();
if (!fs.existsSync(path.join(dir, 'include', 'node', 'node_api.h'))) {
    process.stderr.write(
        `idmint: no Node headers in ${dir}/include/node: install them (Debian: the nodejs ` +
            'package ships them) or set IDMINT_NODEDIR\n'
    );
    process.exit(1);
}
const root = path.join(__dirname, '..');
// Our devDependency in the source tree; an installed package (no dev
// dependencies) falls back to the node-gyp npm bundles and names in
// npm_config_node_gyp while it runs the install script.
let gyp = process.env.npm_config_node_gyp;
try {
    gyp = require.resolve('node-gyp/bin/node-gyp.js', { paths: [root] });
} catch (e) {
    if (!gyp) {
        process.stderr.write('idmint: node-gyp is missing: run `npm ci --ignore-scripts` first\n');
        process.exit(1);
    }
}
const args = [gyp, 'rebuild', `--nodedir=${dir}`, '--release', ...process.argv.slice(2)];
const r = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit' });
process.exit(r.status === null ? 1 : r.status);
