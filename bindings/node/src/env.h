/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Declarations shared by the files of the Node-API addon (env.c implements
 * the environment's state and the failed-call rule; each other file its own
 * section below). All state lives in
 * struct addon, one per Node environment (the main thread and each worker),
 * never in globals: that is what lets the addon load in worker_threads.
 */
#ifndef IDMINT_NODE_ENV_H
#define IDMINT_NODE_ENV_H

#include <node_api.h>
#include <stddef.h>
#include <stdint.h>

#include "idmint.h"

/* The largest count nextN() and nextInto() take: 800 MB of IDs in one call.
 * libidmint itself takes any size_t; the cap keeps a typo from asking V8
 * for an array it cannot allocate. */
#define ADDON_MAX_COUNT 100000000u

/* One open handle. */
struct minter {
    idmint *h;            /* never NULL while the minter is in the table */
    int is_range;         /* 1 for a range namespace */
    idmint_layout layout; /* snowflake: the namespace's, for decode() */
};

struct slot {
    struct minter *m; /* NULL: free */
    uint32_t gen;     /* bumped on every reuse, so a stale id never finds a newer minter */
};

struct addon {
    napi_ref error_ctor; /* IdmintError from lib/index.js; NULL: plain Error */
    struct slot *slots;  /* the minters of this environment, by id (slots.c) */
    uint32_t n_slots;    /* entries in use or freed; slots has room for cap_slots */
    uint32_t cap_slots;
};

struct addon *addon_get(napi_env env);

/*
 * Throw unless an exception is already pending: the failed Node-API call has
 * usually thrown one itself. Returns NULL so callbacks can `return` it.
 */
napi_value addon_napi_failed(napi_env env);

/* Node-API calls fail only on engine trouble (out of memory, a pending
 * exception, termination); a callback then returns at once. */
#define NAPI_CALL(env, call)                                                                       \
    do {                                                                                           \
        if ((call) != napi_ok)                                                                     \
            return addon_napi_failed(env);                                                         \
    } while (0)

#define NAPI_CALL_INT(env, call)                                                                   \
    do {                                                                                           \
        if ((call) != napi_ok) {                                                                   \
            addon_napi_failed(env);                                                                \
            return -1;                                                                             \
        }                                                                                          \
    } while (0)

/* ==== errors.c ==== */

/* "IDMINT_ENOTFOUND" for IDMINT_ENOTFOUND; "IDMINT_EUNKNOWN" for a code this
 * binding was not built with. */
const char *errors_code_name(int rc);

/* An IdmintError for library code @p rc with @p detail (idmint_errmsg(), read
 * right after the failing call: it is thread-local and the next call on this
 * thread may overwrite it). Returns 0, or -1 with an exception pending. */
int errors_make(napi_env env, int rc, const char *detail, napi_value *out);

/* Throw errors_make()'s error. Returns NULL. */
napi_value errors_throw(napi_env env, int rc, const char *detail);

/* TypeError and RangeError for arguments refused before the library is
 * called: code IDMINT_EINVAL, message "invalid argument: " + the printf text. */
napi_value errors_type(napi_env env, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
napi_value errors_range(napi_env env, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* exports.codes: { IDMINT_EINVAL: -1, ... } from the library's own table. */
napi_value errors_codes(napi_env env);

/* ==== args.c: JS arguments to C, each refusing with TypeError/RangeError ==== */

/* A malloc'd copy of string @p v (no NUL inside); free() it. */
int args_string(napi_env env, napi_value v, const char *what, char **out);

/* An integer Number in 1..ADDON_MAX_COUNT. */
int args_count(napi_env env, napi_value v, const char *what, size_t *out);

/* An integer Number in lo..hi. */
int args_uint(napi_env env, napi_value v, const char *what, uint32_t lo, uint32_t hi,
              uint32_t *out);

/* An ID: a BigInt, a decimal string or a safe-integer Number, 1..2^63-1. */
int args_id(napi_env env, napi_value v, uint64_t *out);

/* A time as Unix ms: a Date, text for idmint_epoch_parse() or a safe-integer Number. */
int args_time(napi_env env, napi_value v, const char *what, int64_t *ms);

/* A layout: undefined (the default), "T/R/W/S", or an object with any of
 * timeBits, regionBits, workerBits, sequenceBits, unitMs and epoch (Unix ms
 * or text for idmint_epoch_parse()); missing members keep the default. */
int args_layout(napi_env env, napi_value v, idmint_layout *out);

/* Minter options; undefined for the defaults. Unknown keys are refused so a
 * typo cannot pass silently. @p token is malloc'd (or NULL); free() it. */
int args_options(napi_env env, napi_value v, idmint_options *opts, char **token);

/* ==== convert.c: C results to JS values ==== */

int convert_u64(napi_env env, uint64_t v, napi_value *out);
/* @p v as a string of decimal digits ("121464630265511936"). */
int convert_u64_decimal(napi_env env, uint64_t v, napi_value *out);
int convert_layout(napi_env env, const idmint_layout *l, napi_value *out);
int convert_info(napi_env env, const idmint_handle_info *info, napi_value *out);
int convert_decoded(napi_env env, uint64_t id, const idmint_decoded *d, napi_value *out);

/* ==== slots.c: minter ids, the small integers JS holds ==== */

/* Store @p m under a new id (never 0). Returns 0, or IDMINT_ENOMEM. */
int slots_add(struct addon *ad, struct minter *m, uint32_t *id);

/* The minter under @p id, or NULL: closed, never issued, or not ours. */
struct minter *slots_get(const struct addon *ad, uint32_t id);

/* Remove and return the minter under @p id, or NULL. */
struct minter *slots_take(struct addon *ad, uint32_t id);

/* Close every handle still open (the environment is ending) and free the table. */
void slots_close_all(struct addon *ad);
/* Take over handle @p h (closed on failure) and give JS its id in @p out. */
int slots_register(napi_env env, struct addon *ad, idmint *h, napi_value *out);

/* ==== minter.c: the native side of lib/minter.js ==== */

/* Define open, next, nextN, ... on @p exports. */
int minter_define(napi_env env, struct addon *ad, napi_value exports);

/* ==== open.c: (authority, namespace, options) to a handle ==== */

/* idmint_open() on this thread. Returns 0, or -1 with an exception pending. */
int open_sync(napi_env env, const napi_value argv[3], idmint **out);

/* openAsync(authority, namespace, options): a Promise of a minter id, with
 * idmint_open() run on the libuv thread pool. */
napi_value open_async(napi_env env, napi_callback_info info);

/* ==== codec.c ==== */

napi_value codec_uuid7(napi_env env, napi_callback_info info);
/* uuid7N(n): n UUIDv7 strings, increasing, made in one library call. */
napi_value codec_uuid7_n(napi_env env, napi_callback_info info);
napi_value codec_decode(napi_env env, napi_callback_info info);
napi_value codec_bounds(napi_env env, napi_callback_info info);
napi_value codec_uuid7_bounds(napi_env env, napi_callback_info info);
napi_value codec_strerror(napi_env env, napi_callback_info info);

/* Decode @p idv by @p l into a JS object (shared with Minter.prototype.decode). */
napi_value codec_decode_with(napi_env env, napi_value idv, const idmint_layout *l);
/* bounds(from, to, layout) for layout @p l: { lo, hi } as BigInts. */
napi_value codec_bounds_with(napi_env env, napi_value from, napi_value to, const idmint_layout *l);

#endif /* IDMINT_NODE_ENV_H */
