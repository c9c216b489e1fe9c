// SPDX-License-Identifier: Apache-2.0
// The package's entry: loads the addon (build/Release/idmint.node) and gives
// it the IdmintError class, once per thread that requires this module.
'use strict';

const path = require('node:path');
const { defineMinter } = require('./minter.js');

const native = require(path.join(__dirname, '..', 'build', 'Release', 'idmint.node'));

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

module.exports = {
    Minter,
    open,
    uuid7: native.uuid7,
    decode: native.decode,
    strerror: native.strerror,
    codes: native.codes,
    MAX_COUNT: native.MAX_COUNT,
    version: native.version,
    IdmintError,
};
