// SPDX-License-Identifier: Apache-2.0
// The Minter class over the addon's flat functions. The native side keeps
// the handle under a small integer id; this class holds the id in a private
// field, so no code outside it can swap, forge or reuse it.
'use strict';

// 0 is never issued: every call on a closed Minter gets "the Minter is closed".
const CLOSED = 0;

function defineMinter(native) {
    // A Minter the program drops without close() gives its lease back when
    // collected; whatever is still open when the thread ends is closed by the
    // addon itself.
    const registry = new FinalizationRegistry((id) => native.close(id));
    // Minter.open() hands the constructor its id behind this token, which no
    // code outside this closure can name.
    const ADOPT = Symbol('adopt');

    class Minter {
        #id;
        #kind;

        /**
         * Open namespace `namespace` of `authority` (a store URL; null or
         * undefined for $IDMINT_AUTHORITY or the default). Blocks while the
         * lease is taken or the first range reserved: see Minter.open().
         */
        constructor(authority, namespace, options) {
            const id = authority === ADOPT ? namespace : native.open(authority, namespace, options);
            try {
                this.#kind = native.kind(id);
            } catch (e) {
                native.close(id);
                throw e;
            }
            this.#id = id;
            registry.register(this, id, this);
        }

        /** As the constructor, without blocking the event loop. */
        static async open(authority, namespace, options) {
            const id = await native.openAsync(authority, namespace, options);
            try {
                return new this(ADOPT, id);
            } catch (e) {
                native.close(id);
                throw e;
            }
        }

        /** One ID, as a BigInt. */
        next() {
            return native.next(this.#id);
        }

        /** One ID, as a string of decimal digits ("121464630265511936"). */
        nextString() {
            return native.nextString(this.#id);
        }

        /** `n` IDs in a new BigUint64Array, increasing. All or nothing. */
        nextN(n) {
            return native.nextN(this.#id, n);
        }

        /** `n` IDs as an Array of decimal strings, increasing. All or nothing. */
        nextNStrings(n) {
            return native.nextNStrings(this.#id, n);
        }

        /** Fill `array` (a BigUint64Array or BigInt64Array) with IDs; returns it. */
        nextInto(array) {
            return native.nextInto(this.#id, array);
        }

        /** What the handle holds (lease, layout, range left). */
        info() {
            return native.info(this.#id);
        }

        /** null while renewals succeed, else the code of the last failed one. */
        leaseStatus() {
            return native.leaseStatus(this.#id);
        }

        /** Take a snowflake ID of this namespace apart. */
        decode(id) {
            return native.decodeWith(this.#id, id);
        }

        /** The lowest and highest ID of this snowflake namespace whose time falls in [from, to). */
        bounds(from, to) {
            return native.boundsWith(this.#id, from, to);
        }

        /** Release the lease now. Closing again does nothing. */
        close() {
            if (this.#id === CLOSED) return;
            registry.unregister(this);
            const id = this.#id;
            this.#id = CLOSED;
            native.close(id);
        }

        /** 'snowflake' or 'range'. */
        get kind() {
            return this.#kind;
        }

        get closed() {
            return this.#id === CLOSED;
        }
    }

    // `using m = new Minter(...)` (where the language has it) closes at the
    // end of the block. Node 18.13 has no Symbol.dispose: no such method there.
    if (typeof Symbol.dispose === 'symbol') {
        Object.defineProperty(Minter.prototype, Symbol.dispose, {
            value: function dispose() {
                this.close();
            },
            writable: true,
            configurable: true,
        });
    }

    return Minter;
}

module.exports = { defineMinter };
