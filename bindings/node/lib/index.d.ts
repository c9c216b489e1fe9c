// SPDX-License-Identifier: Apache-2.0
// Types of the idmint Node binding (lib/index.js). README.md has the prose.

/** Options of new Minter() / Minter.open(); each maps to a member of idmint_options. */
export interface MinterOptions {
    /** Region this process mints in (default 0). */
    region?: number;
    /** Worker lease length in ms (default 600000; 100..86400000). */
    leaseMs?: number;
    /** Renewal interval in ms (default 60000; below leaseMs). */
    renewMs?: number;
    /** Future time a used-up sequence may borrow, in ms (default 0). */
    maxBorrowMs?: number;
    /** How long to wait for the clock to pass the lease fence (default 5000). */
    clockWaitMs?: number;
    /** Range block to request (0: the namespace's default). */
    rangeBlock?: number;
    /** Refill when this % of a block is left (default 50). */
    refillPercent?: number;
    /** How long a call may wait for a range, in ms (default 2000). */
    deadlineMs?: number;
    /** Bearer token for an http:// authority (default $IDMINT_TOKEN). */
    token?: string;
}

export interface Layout {
    timeBits: number;
    regionBits: number;
    workerBits: number;
    sequenceBits: number;
    unitMs: number;
    /** Unix ms of time unit 0. */
    epochMs: number;
}

/** A layout to decode by: any member left out keeps the default (41/0/10/12, 1 ms, 2026-01-01). */
export type LayoutInput =
    | string
    | (Partial<Layout> & {
          /** Unix ms or text for idmint_epoch_parse ("2015-01-01", "2015-01-01T00:00:00Z"). */
          epoch?: number | string;
      });

export interface SnowflakeInfo {
    kind: 'snowflake';
    incarnation: string;
    region: number;
    workerId: number;
    generation: bigint;
    fenceFound: bigint;
    leaseUntil: bigint;
    lastTime: bigint;
    sequenceWaits: bigint;
    layout: Layout;
}

export interface RangeInfo {
    kind: 'range';
    incarnation: string;
    rangeLeft: bigint;
}

export interface Decoded {
    id: bigint;
    timeUnits: bigint;
    unixMs: number;
    /** ISO-8601 UTC, or null outside years 0..9999. */
    time: string | null;
    region: number;
    worker: number;
    sequence: bigint;
}

export type IdInput = bigint | string | number;

export type ErrorCode =
    | 'IDMINT_EINVAL'
    | 'IDMINT_ENOMEM'
    | 'IDMINT_ENOTFOUND'
    | 'IDMINT_EDISABLED'
    | 'IDMINT_EEXHAUSTED'
    | 'IDMINT_ENOWORKER'
    | 'IDMINT_ELEASELOST'
    | 'IDMINT_ECLOCK'
    | 'IDMINT_EFORKED'
    | 'IDMINT_EUNAVAILABLE'
    | 'IDMINT_ECONFLICT'
    | 'IDMINT_ESTORE'
    | 'IDMINT_ETIMEDOUT'
    | 'IDMINT_EACCESS'
    | 'IDMINT_ERESTORED';

export class Minter {
    constructor(authority: string | null | undefined, namespace: string, options?: MinterOptions);
    static open(
        authority: string | null | undefined,
        namespace: string,
        options?: MinterOptions
    ): Promise<Minter>;
    /** One ID. */
    next(): bigint;
    /** One ID as its decimal digits ("121464630265511936"): JSON-safe, exact. */
    nextString(): string;
    /** `n` IDs (1 ... MAX_COUNT), increasing. All or nothing. */
    nextN(n: number): BigUint64Array;
    /** `n` IDs as decimal strings, increasing. All or nothing. */
    nextNStrings(n: number): string[];
    nextInto<T extends BigUint64Array | BigInt64Array>(array: T): T;
    info(): SnowflakeInfo | RangeInfo;
    leaseStatus(): ErrorCode | null;
    decode(id: IdInput): Decoded;
    /** The lowest and highest ID of this snowflake namespace whose time falls in [from, to). */
    bounds(from: TimeInput, to: TimeInput): Bounds;
    close(): void;
    readonly kind: 'snowflake' | 'range';
    readonly closed: boolean;
    /** close(), for `using` where the language has it (not on Node 18.13). */
    [Symbol.dispose](): void;
}

export function open(
    authority: string | null | undefined,
    namespace: string,
    options?: MinterOptions
): Promise<Minter>;
export function uuid7(): string;
/** n (1..MAX_COUNT) new UUIDv7 strings, increasing, made in one library call. */
export function uuid7N(n: number): string[];
export function decode(id: IdInput, layout?: LayoutInput): Decoded;
/** A time: a Date, Unix ms, or UTC text ("2026-03-01", "2026-03-01T12:00:00Z"). */
export type TimeInput = Date | number | string;
/** Every ID minted in the window lies in [lo, hi]: WHERE id BETWEEN lo AND hi. */
export interface Bounds {
    lo: bigint;
    hi: bigint;
}
/** The lowest and highest ID of `layout` whose time falls in [from, to); an edge inside a unit takes in the unit. */
export function bounds(from: TimeInput, to: TimeInput, layout?: LayoutInput): Bounds;
/** The lowest and highest UUIDv7 (canonical text, which sorts as the bytes do) whose time falls in [from, to). */
export function uuid7Bounds(from: TimeInput, to: TimeInput): { lo: string; hi: string };
export function strerror(code: number): string;
export const codes: Readonly<Record<ErrorCode, number>>;
export const MAX_COUNT: number;
export const version: string;
/**
 * A replacer for JSON.stringify(): every BigInt becomes its decimal string, a
 * BigUint64Array or BigInt64Array an array of them; anything else is kept.
 * `JSON.stringify({ id: m.next() }, jsonReplacer)` gives `{"id":"121464630265511936"}`.
 */
export function jsonReplacer(key: string, value: unknown): unknown;

export class IdmintError extends Error {
    code: ErrorCode;
    errno: number;
    detail: string;
}
