// SPDX-License-Identifier: Apache-2.0
// Where binding.gyp finds libidmint: IDMINT_INCLUDE_DIR and IDMINT_LIB_DIR
// when set (a build tree: include/ of the sources, the CMake build folder),
// else pkg-config's idmint (an installed library). As a program it prints
// what gyp asks for, one item per line; tools/build.js calls locate() before
// node-gyp runs, so a missing library is said first, in a few lines, rather
// than at the end of gyp's and npm's traces.
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

const FIX =
    'build it (cmake -S . -B build && cmake --build build, in the idmint sources) and set ' +
    'IDMINT_INCLUDE_DIR=<sources>/include IDMINT_LIB_DIR=<sources>/build, or install it ' +
    '(cmake --install build, or the Debian packages: docs/install.md) so that ' +
    '`pkg-config idmint` finds it';

class NotFound extends Error {}

function pkgConfig(flag) {
    try {
        return execFileSync('pkg-config', [flag, 'idmint'], {
            encoding: 'utf8',
            stdio: ['ignore', 'pipe', 'pipe'],
        }).trim();
    } catch (e) {
        const why = e.code === 'ENOENT' ? 'pkg-config is not installed' : '`pkg-config idmint` finds no idmint.pc';
        throw new NotFound(`libidmint not found: IDMINT_INCLUDE_DIR and IDMINT_LIB_DIR are not set and ${why}`);
    }
}

function splitFlags(text, prefix) {
    return text
        .split(/\s+/)
        .filter((f) => f.startsWith(prefix))
        .map((f) => f.slice(prefix.length));
}

/**
 * { includeDirs, libDirs } of libidmint, checked: idmint.h and libidmint.so
 * are where they are said to be (a library in the linker's default folders,
 * with no -L from pkg-config, is taken on trust). Throws NotFound.
 */
function locate() {
    const env = process.env;
    if (!env.IDMINT_INCLUDE_DIR !== !env.IDMINT_LIB_DIR) {
        throw new NotFound(
            `libidmint: set both IDMINT_INCLUDE_DIR and IDMINT_LIB_DIR, or neither (only ` +
                `${env.IDMINT_INCLUDE_DIR ? 'IDMINT_INCLUDE_DIR' : 'IDMINT_LIB_DIR'} is set)`
        );
    }
    const fromEnv = Boolean(env.IDMINT_INCLUDE_DIR);
    const includeDirs = fromEnv ? [env.IDMINT_INCLUDE_DIR] : splitFlags(pkgConfig('--cflags'), '-I');
    const libDirs = fromEnv ? [env.IDMINT_LIB_DIR] : splitFlags(pkgConfig('--libs'), '-L');
    const where = fromEnv ? 'IDMINT_INCLUDE_DIR' : '`pkg-config idmint`';
    if (includeDirs.length > 0 && !includeDirs.some((d) => fs.existsSync(path.join(d, 'idmint.h')))) {
        throw new NotFound(`libidmint's header not found: no idmint.h in ${includeDirs.join(', ')} (${where})`);
    }
    const libWhere = fromEnv ? 'IDMINT_LIB_DIR' : '`pkg-config idmint`';
    if (libDirs.length > 0 && !libDirs.some((d) => fs.existsSync(path.join(d, 'libidmint.so')))) {
        throw new NotFound(`libidmint not found: no libidmint.so in ${libDirs.join(', ')} (${libWhere})`);
    }
    return { includeDirs, libDirs };
}

function main(what) {
    if (!['include', 'libs', 'rpath', 'werror'].includes(what)) {
        process.stderr.write('usage: node tools/flags.js include|libs|rpath|werror\n');
        process.exit(2);
    }
    let lib;
    try {
        lib = what === 'werror' ? null : locate();
    } catch (e) {
        if (!(e instanceof NotFound)) throw e;
        process.stderr.write(`idmint: ${e.message}\nidmint: fix: ${FIX}\n`);
        process.exit(1);
    }
    let out;
    switch (what) {
        case 'include':
            out = lib.includeDirs;
            break;
        case 'libs':
            out = [...lib.libDirs.map((d) => '-L' + d), '-lidmint'];
            break;
        case 'rpath':
            // The addon finds libidmint.so where it was linked, with no
            // LD_LIBRARY_PATH; a system library in the default path needs none.
            out = lib.libDirs.map((d) => '-Wl,-rpath,' + d);
            break;
        default: // 'werror'
            out = process.env.IDMINT_WERROR === '1' ? ['-Werror'] : [];
    }
    for (const item of out) process.stdout.write(item + '\n');
}

if (require.main === module) main(process.argv[2]);

module.exports = { locate, NotFound, FIX };
