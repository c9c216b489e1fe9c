// SPDX-License-Identifier: Apache-2.0
// Where binding.gyp finds libidmint: IDMINT_INCLUDE_DIR and IDMINT_LIB_DIR
// when set (a build tree: include/ of the sources, the CMake build folder),
// else pkg-config's idmint (an installed library). Prints what gyp asks for,
// one item per line; fails loudly rather than letting the link guess.
'use strict';

const { execFileSync } = require('node:child_process');

function pkgConfig(flag) {
    try {
        return execFileSync('pkg-config', [flag, 'idmint'], { encoding: 'utf8' }).trim();
    } catch (e) {
        process.stderr.write(
            'idmint: libidmint not found: set IDMINT_INCLUDE_DIR and IDMINT_LIB_DIR, or install ' +
                'libidmint with its idmint.pc (pkg-config idmint)\n'
        );
        process.exit(1);
    }
}

function splitFlags(text, prefix) {
    return text
        .split(/\s+/)
        .filter((f) => f.startsWith(prefix))
        .map((f) => f.slice(prefix.length));
}

function includeDirs() {
    if (process.env.IDMINT_INCLUDE_DIR) return [process.env.IDMINT_INCLUDE_DIR];
    return splitFlags(pkgConfig('--cflags'), '-I');
}

function libDirs() {
    if (process.env.IDMINT_LIB_DIR) return [process.env.IDMINT_LIB_DIR];
    return splitFlags(pkgConfig('--libs'), '-L');
}

const what = process.argv[2];
let out;
switch (what) {
    case 'include':
        out = includeDirs();
        break;
    case 'libs':
        out = [...libDirs().map((d) => '-L' + d), '-lidmint'];
        break;
    case 'rpath':
        // The addon finds libidmint.so where it was linked, with no
        // LD_LIBRARY_PATH; a system library in the default path needs none.
        out = libDirs().map((d) => '-Wl,-rpath,' + d);
        break;
    case 'werror':
        out = process.env.IDMINT_WERROR === '1' ? ['-Werror'] : [];
        break;
    default:
        process.stderr.write('usage: node tools/flags.js include|libs|rpath|werror\n');
        process.exit(2);
}
for (const item of out) process.stdout.write(item + '\n');
