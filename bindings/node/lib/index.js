// SPDX-License-Identifier: Apache-2.0
// The package's entry: loads the addon (build/Release/idmint.node) and gives
// it the IdmintError class, once per thread that requires this module.
'use strict';

const path = require('node:path');
const { defineMinter } = require('./minter.js');

const ADDON = path.join(__dirname, '..', 'build', 'Release', 'idmint.node');

// The two ways loading fails for a user, each said first and with its fix;
// the original error rides along as `cause`.
function loadAddon() {
    try {
        return require(ADDON);
    } catch (e) {
        let what;
        if (e.code === 'MODULE_NOT_FOUND' && String(e.message).includes(ADDON)) {
            what =
                `idmint: the addon is not built (${ADDON} is missing): build it with ` +
                '`npm run build` (node tools/build.js) in ' +
                path.join(__dirname, '..') +
                ', against libidmint (IDMINT_INCLUDE_DIR and IDMINT_LIB_DIR, or an installed ' +
                'libidmint that `pkg-config idmint` finds)';
        } else if (/libidmint\.so/.test(String(e.message))) {
            const first = String(e.message).split('\n')[0];
            what = /static TLS/.test(first)
                ? `idmint: libidmint cannot be loaded (${first}): it is a 0.1 library; install ` +
                  'libidmint 0.2 or later, or start node with ' +
                  'GLIBC_TUNABLES=glibc.rtld.optional_static_tls=16384'
                : `idmint: libidmint cannot be loaded (${first}): build or install libidmint, ` +
                  'or point LD_LIBRARY_PATH at the folder of libidmint.so.0';
        } else {
            throw e;
        }
        const err = new Error(what, { cause: e });
        err.code = e.code;
        throw err;
    }
}

const native = loadAddon();

/**
 * A libidmint failure. `code` is the C name of the status ('IDMINT_ENOTFOUND'),
 * `errno` its (negative) value, `detail` what idmint_errmsg() said.
 */
class IdmintError extends Error {
    constructor(message, code, errno, detail) {
        super(message);
        this.name = 'IdmintError';
        this.code = code;
        this.errno = errno;
        this.detail = detail;
    }
}

native._setErrorClass(IdmintError);

const Minter = defineMinter(native);

/** Open a Minter without blocking the event loop: a Promise of a Minter. */
function open(authority, namespace, options) {
    return Minter.open(authority, namespace, options);
}

/**
 * A replacer for JSON.stringify(): BigInts (IDs, and the 64-bit fields of
 * info() and decode()) become decimal strings, BigUint64Array and
 * BigInt64Array Arrays of them. JSON.stringify({ id }, jsonReplacer).
 */
function jsonReplacer(key, value) {
    if (typeof value === 'bigint') return value.toString();
    if (value instanceof BigUint64Array || value instanceof BigInt64Array) {
        return Array.from(value, (v) => v.toString());
    }
    return value;
}

module.exports = {
    Minter,
    open,
    uuid7: native.uuid7,
    uuid7N: native.uuid7N,
    decode: native.decode,
    bounds: native.bounds,
    uuid7Bounds: native.uuid7Bounds,
    strerror: native.strerror,
    codes: native.codes,
    MAX_COUNT: native.MAX_COUNT,
    version: native.version,
    jsonReplacer,
    IdmintError,
};
