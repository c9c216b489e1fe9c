/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file idmint.h
 * @brief libidmint: unique 64-bit IDs minted in-process under a worker lease
 *        or from reserved ranges, and UUIDv7.
 *
 * This header is the whole public API; anything not declared here is private
 * and may change in any release. Threading rules: docs/threading.md. Every
 * fallible call returns 0 or a negative IDMINT_E* code; detail for the last
 * failure in the calling thread is in idmint_errmsg().
 */
#ifndef IDMINT_H
#define IDMINT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define IDMINT_API       __attribute__((visibility("default")))
#define IDMINT_NODISCARD __attribute__((warn_unused_result))
#else
#define IDMINT_API
#define IDMINT_NODISCARD
#endif

#define IDMINT_VERSION_MAJOR 0
#define IDMINT_VERSION_MINOR 2
#define IDMINT_VERSION_PATCH 0
#define IDMINT_VERSION_NUM                                                                         \
    ((IDMINT_VERSION_MAJOR << 16) | (IDMINT_VERSION_MINOR << 8) | IDMINT_VERSION_PATCH)

/* XX(name, value, text). Values are ABI: never renumber, never reuse. */
#define IDMINT_ERRNO_MAP(XX)                                                                       \
    XX(EINVAL, -1, "invalid argument")                                                             \
    XX(ENOMEM, -2, "out of memory")                                                                \
    XX(ENOTFOUND, -3, "namespace not found")                                                       \
    XX(EDISABLED, -4, "namespace disabled")                                                        \
    XX(EEXHAUSTED, -5, "namespace exhausted")                                                      \
    XX(ENOWORKER, -6, "no free worker id")                                                         \
    XX(ELEASELOST, -7, "worker lease lost or expired")                                             \
    XX(ECLOCK, -8, "clock is behind the lease fence")                                              \
    XX(EFORKED, -9, "handle used after fork()")                                                    \
    XX(EUNAVAILABLE, -10, "authority unavailable")                                                 \
    XX(ECONFLICT, -11, "conflicting request")                                                      \
    XX(ESTORE, -12, "store error")                                                                 \
    XX(ETIMEDOUT, -13, "timed out")                                                                \
    XX(EACCESS, -14, "not authorized")                                                             \
    XX(ERESTORED, -15, "authority restored or rewound: fence it")

typedef enum idmint_status {
    IDMINT_OK = 0,
#define XX(name, value, text) IDMINT_##name = (value),
    IDMINT_ERRNO_MAP(XX)
#undef XX
} idmint_status;

/**
 * Library version as IDMINT_VERSION_NUM; compare with the header's to detect a mismatch.
 * Thread-safety: safe.
 */
IDMINT_API unsigned idmint_version(void);

/** Fixed English text for @p err. Static storage; never NULL. Thread-safety: safe. */
IDMINT_API const char *idmint_strerror(int err);

/**
 * Detail of the last failure in the calling thread (the offending value, the
 * store's own message). Never NULL; "" when there is none.
 * Ownership: thread-local storage, valid until this thread's next idmint call.
 * Thread-safety: safe.
 */
IDMINT_API const char *idmint_errmsg(void);

/* ==== Layout (docs/design.md "Snowflake IDs") ==== */

/** The bit layout of a snowflake namespace. */
typedef struct idmint_layout {
    uint8_t time_bits;     /**< T: time units since the epoch */
    uint8_t region_bits;   /**< R */
    uint8_t worker_bits;   /**< W */
    uint8_t sequence_bits; /**< S */
    uint32_t unit_ms;      /**< U: milliseconds per time unit, >= 1 */
    int64_t epoch_ms;      /**< Unix ms of time unit 0 */
} idmint_layout;

/**
 * Fill @p l with the default layout: 41/0/10/12, 1 ms, epoch 2026-01-01T00:00:00Z.
 * Thread-safety: safe.
 */
IDMINT_API void idmint_layout_default(idmint_layout *l);

/**
 * Check a layout: T >= 1, S >= 1, T+R+W+S <= 63, W <= 30, R <= 16, unit_ms
 * in 1..86400000, epoch between 1970 and the year 9999, and the end of the
 * time bits representable.
 * @return 0 or IDMINT_EINVAL with a message naming the bad value.
 * Thread-safety: safe.
 */
IDMINT_API IDMINT_NODISCARD int idmint_layout_validate(const idmint_layout *l);

/**
 * Parse "T/R/W/S" (e.g. "41/0/10/12") into the bit fields of @p l; other
 * fields are left unchanged. Writes only on success; does not validate sums.
 * @return 0 or IDMINT_EINVAL.
 * Thread-safety: safe.
 */
IDMINT_API IDMINT_NODISCARD int idmint_layout_parse(const char *text, idmint_layout *l);

/**
 * Unix ms at which the time bits of @p l run out (the first instant that
 * cannot be encoded).
 * @return 0 or IDMINT_EINVAL (invalid layout).
 * Thread-safety: safe.
 */
IDMINT_API IDMINT_NODISCARD int idmint_layout_end_ms(const idmint_layout *l, int64_t *end_ms);

/**
 * Parse an epoch: an ISO-8601 date ("2015-01-01"), a UTC date-time
 * ("2015-01-01T00:00:00Z", "2015-01-01T00:00:00.000Z") or Unix milliseconds
 * (all digits). Writes only on success.
 * @return 0 or IDMINT_EINVAL with a message.
 * Thread-safety: safe.
 */
IDMINT_API IDMINT_NODISCARD int idmint_epoch_parse(const char *text, int64_t *epoch_ms);

/**
 * Format Unix ms as "YYYY-MM-DDTHH:MM:SS.mmmZ" (always UTC) into @p buf
 * (at least 32 bytes).
 * @return 0 or IDMINT_EINVAL (out of years 0..9999, or @p buf NULL or too small).
 * Thread-safety: safe.
 */
IDMINT_API IDMINT_NODISCARD int idmint_format_iso8601(int64_t unix_ms, char *buf, size_t size);

/** One snowflake ID taken apart. */
typedef struct idmint_decoded {
    uint64_t time_units; /**< time field as stored */
    int64_t unix_ms;     /**< epoch_ms + time_units * unit_ms */
    uint32_t region;     /**< R is at most 16 bits (idmint_layout_validate) */
    uint32_t worker;     /**< W is at most 30 bits */
    uint64_t sequence;   /**< S may take every bit T+R+W leave, up to 62 */
} idmint_decoded;

/**
 * Split @p id by layout @p l.
 * @return 0, or IDMINT_EINVAL when the layout is invalid, the id is 0 or has
 *         the sign bit or bits above T+R+W+S set.
 * Thread-safety: safe.
 */
IDMINT_API IDMINT_NODISCARD int idmint_decode(const idmint_layout *l, uint64_t id,
                                              idmint_decoded *out);

/**
 * The lowest and highest ID of layout @p l whose time field falls in the
 * window [@p from_ms, @p to_ms) of Unix ms: every ID minted in the window
 * lies in [*lo, *hi], so a query by time is a range scan on the ID. Exact
 * at the edges of time units; an edge inside a unit takes in the whole unit
 * (no ID tells the ms of its unit apart). The time is the ID's own (what
 * idmint_decode() reports): with max_borrow_ms a mint may carry a time up
 * to that far after the moment it was made. All regions and workers.
 * Writes only on success.
 * @return 0, or IDMINT_EINVAL with a message: an invalid layout, NULL
 *         outputs, an empty window (from_ms >= to_ms), from_ms before the
 *         epoch, or to_ms after the end of the time bits
 *         (idmint_layout_end_ms()).
 * Thread-safety: safe.
 */
IDMINT_API IDMINT_NODISCARD int idmint_bounds(const idmint_layout *l, int64_t from_ms,
                                              int64_t to_ms, uint64_t *lo, uint64_t *hi);

/**
 * Parse a decimal ID ("1234"): digits only, no sign, no spaces, 1..2^63-1.
 * @return 0 or IDMINT_EINVAL with a message.
 * Thread-safety: safe.
 */
IDMINT_API IDMINT_NODISCARD int idmint_id_parse(const char *text, uint64_t *id);

/* ==== UUIDv7 (RFC 9562) ==== */

/**
 * Generate a UUIDv7: 48-bit Unix ms, version 7, variant 0b10, a 12-bit
 * counter in rand_a that starts at a random value each ms, and 62 random
 * bits from a per-thread CSPRNG (AES-256-CTR keyed from the kernel, a new
 * kernel key every 1 MiB of output and in every new copy of the process).
 * Strictly increasing as bytes within this process, across all threads.
 * Past 2,048 to 4,096 UUIDs in one ms the timestamp runs ahead of the clock
 * (RFC 9562 §6.2) until the rate falls. Fork-safe: a child (fork(), or the
 * raw fork or clone system call) never repeats its parent's values.
 * @return 0, IDMINT_ENOMEM (this thread's stream), or IDMINT_EUNAVAILABLE
 *         (no randomness from the kernel, or OpenSSL failed).
 * Thread-safety: safe.
 */
IDMINT_API IDMINT_NODISCARD int idmint_uuid7(uint8_t out[16]);

/**
 * Generate @p n UUIDv7 into @p out[0..n), as idmint_uuid7 would one by one,
 * increasing through the array and after every UUID the process made
 * before; about 5 times faster per UUID than single calls, as one atomic
 * step and one draw of random bytes serve up to 256 UUIDs. @p n may be 0.
 * @return 0; IDMINT_EINVAL (@p out NULL with @p n > 0, nothing written);
 *         IDMINT_ENOMEM or IDMINT_EUNAVAILABLE as idmint_uuid7, with a
 *         prefix of @p out written (valid UUIDs, to be dropped).
 * Thread-safety: safe.
 */
IDMINT_API IDMINT_NODISCARD int idmint_uuid7_n(uint8_t (*out)[16], size_t n);

/**
 * The lowest and highest UUIDv7 (as bytes, which sort as the UUIDs do)
 * whose 48-bit time falls in the window [@p from_ms, @p to_ms) of Unix ms:
 * version 7 and the RFC variant, every other bit all zeros in @p lo and all
 * ones in @p hi. Exact to the millisecond. Writes only on success.
 * @return 0, or IDMINT_EINVAL with a message: NULL outputs, an empty
 *         window, from_ms before 1970 or to_ms after 2^48 ms (year 10889).
 * Thread-safety: safe.
 */
IDMINT_API IDMINT_NODISCARD int idmint_uuid7_bounds(int64_t from_ms, int64_t to_ms, uint8_t lo[16],
                                                    uint8_t hi[16]);

/**
 * Format 16 bytes as the 36-character lowercase text form plus NUL into @p out.
 * Thread-safety: safe.
 */
IDMINT_API void idmint_uuid_format(const uint8_t in[16], char out[37]);

/**
 * Parse the 36-character text form (either case).
 * @return 0 or IDMINT_EINVAL.
 * Thread-safety: safe.
 */
IDMINT_API IDMINT_NODISCARD int idmint_uuid_parse(const char *text, uint8_t out[16]);

/* ==== Minting handles ==== */

/** One namespace and the lease or range supply behind it. Opaque. */
typedef struct idmint idmint;

/** Options for idmint_open(). Always start from idmint_options_init(). */
typedef struct idmint_options {
    size_t size;             /**< set by idmint_options_init(); ABI guard */
    uint32_t region;         /**< region this process mints in; default 0 */
    uint32_t lease_ms;       /**< worker lease length; default 600000; 100..86400000 */
    uint32_t renew_ms;       /**< renewal interval; default 60000; < lease_ms */
    uint32_t max_borrow_ms;  /**< future time a full sequence may borrow; default 0 */
    uint32_t clock_wait_ms;  /**< wait at most this for the clock to pass the fence; 5000 */
    uint32_t range_block;    /**< range block to request; 0: the namespace's default */
    uint32_t refill_percent; /**< refill when this % of a block is left; default 50 */
    uint32_t deadline_ms;    /**< how long a call may wait for a range; default 2000 */
    /** Wall clock in Unix ms; NULL: CLOCK_REALTIME. Tests inject a fake. */
    int64_t (*wall_clock_ms)(void *ctx);
    /** Monotonic clock in ns; NULL: CLOCK_MONOTONIC. */
    uint64_t (*mono_clock_ns)(void *ctx);
    void *clock_ctx; /**< borrowed; must outlive the handle */
    /** Bearer token for an http:// authority; NULL: $IDMINT_TOKEN. Copied. */
    const char *token;
    /* ---- appended in 0.2 (idmint_options_init_v2) ---- */
    /**
     * Range: how long one reservation should last at the rate this handle
     * hands values out, so the authority sees about 1000 / range_target_ms
     * reservations a second from a busy handle. Blocks are sized to it
     * between the namespace's block and max_block, growing at the first
     * refill of a burst and shrinking back as the rate falls; what the
     * handle holds then covers an authority outage of about this long
     * (idmint_handle_info.outage_budget_ms). A block also lasts at least
     * four times the last reservation took, so a slow (loaded) authority
     * is asked less often, not more. Default 1000; 0 keeps every block at
     * the namespace's. Ignored when range_block is set.
     */
    uint32_t range_target_ms;
    /**
     * How often (ms) the renewal or refill thread asks the authority whether
     * it still holds the history this handle's lease or ranges belong to
     * (docs/operations.md, "Restores"): a store put back in time under a
     * running process stops it within about this long, with
     * IDMINT_ERESTORED, instead of at its next renewal. One cheap read per
     * interval; minting never waits on it. 0: the default, 1000; at least
     * 10. (Appended in 0.2 in the struct's tail padding: its size is
     * unchanged, and callers that zeroed the struct get the default.)
     */
    uint32_t history_check_ms;
} idmint_options;

/**
 * Fill @p opts with defaults, for the idmint_options of the 0.1 header.
 * Thread-safety: safe.
 */
IDMINT_API void idmint_options_init(idmint_options *opts);
/** Fill @p opts with defaults, this header's whole struct. Thread-safety: safe. */
IDMINT_API void idmint_options_init_v2(idmint_options *opts);
#define idmint_options_init(opts) idmint_options_init_v2(opts)

/**
 * Open a handle on namespace @p ns. A snowflake namespace takes a worker
 * lease and starts the renewal thread; a range namespace reserves its first
 * range and starts the refill thread. "default" is created on first use.
 *
 * @param[out] out        the new handle; written only on success
 * @param[in]  authority  store URL such as "sqlite:/var/lib/idmint/idmint.db";
 *                        NULL for $IDMINT_AUTHORITY or the default (see
 *                        idmint_authority_open()); copied
 * @param[in]  ns         namespace name; copied
 * @param[in]  opts       NULL for defaults; copied
 * @return 0, IDMINT_EINVAL, IDMINT_ENOMEM, IDMINT_ENOTFOUND, IDMINT_EDISABLED,
 *         IDMINT_ENOWORKER, IDMINT_EEXHAUSTED, IDMINT_ECLOCK, IDMINT_EACCESS
 *         (an http:// authority refused the token), IDMINT_EUNAVAILABLE,
 *         IDMINT_ESTORE or IDMINT_ETIMEDOUT.
 *
 * Ownership: the caller owns *out and releases it with idmint_close().
 * Thread-safety: safe; every call makes an independent handle.
 */
IDMINT_API IDMINT_NODISCARD int idmint_open(idmint **out, const char *authority, const char *ns,
                                            const idmint_options *opts);

/**
 * Mint one ID. *id is written only when 0 is returned. Snowflake IDs are
 * strictly increasing within the handle; range IDs within each thread.
 *
 * @return 0, IDMINT_EINVAL, IDMINT_ELEASELOST (renewal refused, or the lease
 *         ran out during an outage), IDMINT_ECLOCK, IDMINT_EFORKED,
 *         IDMINT_EEXHAUSTED, IDMINT_EDISABLED, IDMINT_EACCESS (range: an
 *         http:// authority refused the refill), IDMINT_EUNAVAILABLE or
 *         IDMINT_ESTORE (range: why the refills of the last deadline_ms
 *         failed) or IDMINT_ETIMEDOUT (no range arrived within deadline_ms).
 * Thread-safety: safe; any number of threads may share @p m.
 */
IDMINT_API IDMINT_NODISCARD int idmint_next(idmint *m, uint64_t *id);

/**
 * Mint @p n IDs into @p ids (increasing). All or nothing: on failure
 * nothing is written.
 * @return as idmint_next(), and IDMINT_EINVAL for n == 0.
 * Thread-safety: safe.
 */
IDMINT_API IDMINT_NODISCARD int idmint_next_n(idmint *m, uint64_t *ids, size_t n);

/**
 * Mint up to @p n IDs into @p ids without waiting, neither for the next
 * time unit nor for the store: for an event loop, which must not sleep
 * (idmint_next_n sleeps through a used-up unit, up to a whole unit_ms, and
 * waits for a dry range's refill up to deadline_ms). A snowflake handle writes what its
 * current time unit (and what it may borrow ahead) still holds, *got of
 * them (0..n, increasing; ids[*got..n) is left as it was), and sets
 * *wait_ms: 0 when *got == n, else how long to wait before calling again
 * (1..50 ms; at most until the next unit, and short enough that a stepped
 * clock is read again soon). Calling again early is harmless: it mints
 * nothing and says how long again. A range handle writes what its reserve
 * holds now; when that runs dry it asks for a refill and sets *wait_ms to
 * how long the last reservation took (at least 1 ms). A refill's errors
 * come from the calls that wait (idmint_next_n), so a caller that cannot
 * wait hands the rest to a thread that can.
 *
 * @return 0 (also when *got < n); IDMINT_EINVAL (NULL handle, array or
 *         output pointer, or n == 0); otherwise as idmint_next():
 *         IDMINT_ELEASELOST, IDMINT_ECLOCK, IDMINT_EFORKED,
 *         IDMINT_EEXHAUSTED, IDMINT_EDISABLED, IDMINT_ERESTORED (for a
 *         range handle only IDMINT_EFORKED and IDMINT_ERESTORED). When some IDs were minted before
 * such an error, 0 is returned with those; the error comes on the next call. On failure nothing is
 * written to @p ids, *got or *wait_ms. Ownership: the caller owns @p ids (n elements), @p got and
 * @p wait_ms. Thread-safety: safe; any number of threads may share @p m, mixing this with
 * idmint_next and idmint_next_n.
 */
IDMINT_API IDMINT_NODISCARD int idmint_try_next_n(idmint *m, uint64_t *ids, size_t n, size_t *got,
                                                  uint32_t *wait_ms);

/**
 * What a handle holds, for tools and tests. Always start from
 * idmint_handle_info_init(). Members are only ever appended.
 */
typedef struct idmint_handle_info {
    size_t size;             /**< set by idmint_handle_info_init(); ABI guard */
    int is_range;            /**< 1 for a range namespace */
    uint32_t region;         /**< snowflake: region of the lease */
    uint32_t worker_id;      /**< snowflake: leased worker id */
    uint64_t generation;     /**< snowflake: lease generation */
    uint64_t fence_found;    /**< snowflake: E found at take (time units) */
    uint64_t lease_until;    /**< snowflake: own E now (time units) */
    uint64_t last_time;      /**< snowflake: time units of the last ID minted */
    idmint_layout layout;    /**< snowflake: the namespace's layout */
    uint64_t range_left;     /**< range: values reserved and not yet handed out */
    char incarnation[33];    /**< this handle's holder/incarnation id */
    uint64_t sequence_waits; /**< snowflake: calls that waited for the next time unit */
    /* ---- appended in 0.2 (idmint_handle_info_init_v2) ---- */
    uint64_t range_block; /**< range: values the latest reservation asked for */
    uint64_t range_rate;  /**< range: values handed out per second, as last sampled; 0: unknown */
    /**
     * How long the handle can go on minting without its authority: range,
     * range_left at range_rate (UINT64_MAX while the rate is unknown);
     * snowflake, the time left until its lease ends.
     */
    uint64_t outage_budget_ms;
    uint64_t range_reservations; /**< range: reservations since the handle opened */
} idmint_handle_info;

/**
 * Zero @p info and set info->size to this header's sizeof(idmint_handle_info),
 * ready for idmint_info(). NULL is a no-op.
 * Thread-safety: safe.
 */
IDMINT_API void idmint_handle_info_init(idmint_handle_info *info);
/** As idmint_handle_info_init, for this header's whole struct. Thread-safety: safe. */
IDMINT_API void idmint_handle_info_init_v2(idmint_handle_info *info);
#define idmint_handle_info_init(info) idmint_handle_info_init_v2(info)

/**
 * Fill @p out from @p m. @p out must have been set up by
 * idmint_handle_info_init(): the library writes out->size bytes and no more,
 * so a program built against an older header (a smaller struct, before
 * members were appended) keeps working with a newer library. out->size
 * itself is left as it was.
 *
 * @param[in,out] out  set up by idmint_handle_info_init(); written only on success
 * @return 0, IDMINT_EINVAL (@p m or @p out NULL; out->size below the first
 *         guarded idmint_handle_info or above this library's: "idmint_handle_info
 *         not set up by idmint_handle_info_init()"; nothing written) or
 *         IDMINT_EFORKED.
 * Thread-safety: safe.
 */
IDMINT_API IDMINT_NODISCARD int idmint_info(idmint *m, idmint_handle_info *out);

/**
 * How the lease of @p m stands: 0 while its renewals succeed, else the code
 * of the last failed renewal. A range handle reports 0, or IDMINT_ERESTORED
 * once it stopped because the authority went backwards.
 * IDMINT_ELEASELOST (another holder has the id: minting has stopped) and
 * IDMINT_EDISABLED (the namespace was disabled: minting runs on until the
 * lease's end, then fails with this code) and IDMINT_ERESTORED (the
 * authority was restored or rolled back to before this lease or range, so it
 * may hand it out again: minting stopped at once) are final: renewal has stopped and
 * only a new handle can mint again. Any other code (IDMINT_EUNAVAILABLE,
 * IDMINT_ESTORE, ...) is an outage: renewal goes on trying and minting goes
 * on until the lease's end.
 * @return 0, an IDMINT_E* code as above, IDMINT_EINVAL (NULL) or IDMINT_EFORKED.
 * Thread-safety: safe.
 */
IDMINT_API IDMINT_NODISCARD int idmint_lease_status(idmint *m);

/**
 * Stop renewal, release the lease (E = max(E found, last minted + 1)) and
 * free @p m. NULL is a no-op. In a child (fork(), or the raw fork or clone
 * system call) the lease is left alone, since the parent holds it, and only
 * memory is freed.
 * Thread-safety: no other call on @p m may be running or start afterwards.
 */
IDMINT_API void idmint_close(idmint *m);

/* ==== The authority: namespaces, workers, audit (docs/design.md "The authority") ==== */

/** A direct connection to a store, for administration. Opaque. */
typedef struct idmint_authority idmint_authority;

typedef enum idmint_kind { IDMINT_KIND_SNOWFLAKE = 1, IDMINT_KIND_RANGE = 2 } idmint_kind;

/**
 * A namespace as the authority keeps it. Always start from
 * idmint_ns_info_init(); in idmint_ns_list()'s array, step with
 * idmint_ns_info_at(). Members are only ever appended.
 */
typedef struct idmint_ns_info {
    size_t size;          /**< set by idmint_ns_info_init() or the library; ABI guard */
    char name[64];        /**< [a-z0-9][a-z0-9_.-]{0,62} */
    idmint_kind kind;     /**< snowflake or range */
    int is_disabled;      /**< 1 when disabled */
    int64_t created_ms;   /**< Unix ms */
    idmint_layout layout; /**< snowflake only */
    uint64_t next_value;  /**< range: the next value to reserve; create: start (default 1) */
    uint64_t max_value;   /**< range: the last value that may be issued (inclusive) */
    uint32_t block;       /**< range: default block (default 10000) */
    uint32_t max_block;   /**< range: largest block one reservation may take */
    /* ---- appended in 0.2 (idmint_ns_info_init_v2) ---- */
    /**
     * No ID at or below this is ever issued in the namespace: set by
     * idmint_ns_migrate() (above every ID of the old namespace) and raised by
     * idmint_authority_fence(); never lowered. 0: none.
     */
    uint64_t floor;
    char origin[64]; /**< the namespace this one was migrated from; "" if none */
} idmint_ns_info;

/**
 * Zero @p info, set info->size to this header's sizeof(idmint_ns_info) (the
 * ABI guard) and fill in the creation defaults for @p kind, name left empty:
 * the start of every idmint_ns_create(). A struct that is only read into
 * (idmint_ns_get()) needs just the size: any kind will do, 0 included
 * ((idmint_kind)0 in C++), since the call overwrites every member but size.
 * NULL is a no-op.
 * Thread-safety: safe.
 */
IDMINT_API void idmint_ns_info_init(idmint_ns_info *info, idmint_kind kind);
/**
 * idmint_ns_info_init() for this header's idmint_ns_info, floor and origin
 * included; the header maps the old name to it, so a program built against
 * the 0.1 header (which calls the old symbol) keeps its smaller struct.
 * Thread-safety: safe.
 */
IDMINT_API void idmint_ns_info_init_v2(idmint_ns_info *info, idmint_kind kind);
#define idmint_ns_info_init(info, kind) idmint_ns_info_init_v2(info, kind)

/**
 * Element @p i (below the count) of an array from idmint_ns_list(). It steps
 * by the elements' own size, which the library sets, so a program built
 * against an older header walks a newer library's array right, where
 * list[i] would not. A member appended after the program's header was
 * written is there only when it ends within element->size.
 * Thread-safety: safe.
 */
static inline const idmint_ns_info *idmint_ns_info_at(const idmint_ns_info *list, size_t i)
{
    return (const idmint_ns_info *)(const void *)((const char *)list + i * list->size);
}

/**
 * idmint_bounds() for namespace @p info, above its floor (the IDs at or
 * below it are not the namespace's own: idmint_ns_migrate(),
 * idmint_authority_fence()). Writes only on success.
 * @return 0, or IDMINT_EINVAL with a message: what idmint_bounds() refuses,
 *         a range namespace (its IDs carry no time), a window that ends at
 *         or below the floor, or a struct not from idmint_ns_info_init().
 * Thread-safety: safe.
 */
IDMINT_API IDMINT_NODISCARD int idmint_ns_bounds(const idmint_ns_info *info, int64_t from_ms,
                                                 int64_t to_ms, uint64_t *lo, uint64_t *hi);

/**
 * One worker-id lease row, an element of idmint_workers_list()'s array:
 * step with idmint_worker_info_at(). Members are only ever appended.
 */
typedef struct idmint_worker_info {
    size_t size; /**< this element's size in bytes, set by the library; ABI guard */
    uint32_t region;
    uint32_t worker_id;
    char holder[33];      /**< fingerprint of the holder (its first 8 hex digits); "" when
                               released. The holder id itself is the lease's secret */
    uint64_t generation;  /**< grows on every take */
    uint64_t lease_until; /**< E, in the namespace's time units */
} idmint_worker_info;

/**
 * Element @p i (below the count) of an array from idmint_workers_list(),
 * stepping by the elements' own size as idmint_ns_info_at() does.
 * Thread-safety: safe.
 */
static inline const idmint_worker_info *idmint_worker_info_at(const idmint_worker_info *list,
                                                              size_t i)
{
    return (const idmint_worker_info *)(const void *)((const char *)list + i * list->size);
}

/**
 * One audit record, an element of idmint_audit_list()'s array: step with
 * idmint_audit_entry_at(). Members are only ever appended.
 */
typedef struct idmint_audit_entry {
    size_t size;      /**< this element's size in bytes, set by the library; ABI guard */
    int64_t seq;      /**< grows with every record (by one on SQLite and PostgreSQL;
                           on etcd it is the record's revision) */
    int64_t at_ms;    /**< Unix ms */
    char actor[64];   /**< who did it */
    char action[32];  /**< "ns.create", "ns.disable", "ns.enable", "worker.take",
                           "worker.release", "worker.force_release" */
    char ns[64];      /**< namespace */
    char detail[256]; /**< human-readable */
} idmint_audit_entry;

/**
 * Element @p i (below the count) of an array from idmint_audit_list(),
 * stepping by the elements' own size as idmint_ns_info_at() does.
 * Thread-safety: safe.
 */
static inline const idmint_audit_entry *idmint_audit_entry_at(const idmint_audit_entry *list,
                                                              size_t i)
{
    return (const idmint_audit_entry *)(const void *)((const char *)list + i * list->size);
}

/** The authority used when none is named: one file for every user of a machine. */
#define IDMINT_DEFAULT_AUTHORITY  "sqlite:/var/lib/idmint/idmint.db"
/** Bytes that always hold what idmint_authority_resolve() writes. */
#define IDMINT_AUTHORITY_TEXT_MAX 4200

/**
 * Which authority @p url names, written to @p buf for a person to read: the
 * URL itself, or when @p url is NULL (or "") $IDMINT_AUTHORITY, else
 * IDMINT_DEFAULT_AUTHORITY. A password or token in it (postgres
 * "user:PASSWORD@", a "password=" or "token=" parameter) is written as
 * "***". Opens nothing and creates nothing; judges only the URL's form: a
 * scheme this library serves and a non-empty location.
 *
 * @param[in]  url   the URL a caller would pass to idmint_authority_open(),
 *                   or NULL; not kept
 * @param[out] buf   the resolved URL, NUL-terminated; written only on success
 * @param[in]  size  bytes at @p buf; IDMINT_AUTHORITY_TEXT_MAX always suffices
 * @return 0, or IDMINT_EINVAL (no scheme, an unknown scheme, an empty
 *         location, @p buf NULL or too small; the message says which).
 * Thread-safety: safe; reads IDMINT_AUTHORITY from the environment, so not
 *                concurrent with setenv().
 */
IDMINT_API IDMINT_NODISCARD int idmint_authority_resolve(const char *url, char *buf, size_t size);

/**
 * Connect to the store at @p url, serving region @p region, creating the
 * store if there is none yet. A new SQLite file appears at its path
 * complete (built aside, then linked into place), so processes opening one
 * new path at once all succeed and share one file.
 *
 * @p url NULL means $IDMINT_AUTHORITY, else the default,
 * IDMINT_DEFAULT_AUTHORITY: one fixed file for every user of the machine,
 * never relative to the working directory or to the user. Its folder is
 * created (mode 0750) when a store is created there. A user who may not
 * open or create it gets IDMINT_EINVAL naming the path and the fix (a group
 * that shares it, or another authority), never a private authority.
 *
 * Refused: an SQLite database private to one process (":memory:", an empty
 * path, "file::memory:", "?mode=memory", "?vfs=memdb"): every process would
 * get its own empty authority and mint the same IDs (IDMINT_EINVAL); an
 * existing file that is empty, not an SQLite database, or an SQLite
 * database without idmint's tables (IDMINT_ESTORE; nothing is written to
 * it). A write after the file was removed or replaced under the open
 * authority fails with IDMINT_ESTORE and writes nothing.
 *
 * @param[out] out     the authority; written only on success
 * @param[in]  url     "sqlite:PATH", "sqlite:file:URI", "postgres://...",
 *                     "etcd://h1:p,h2:p/prefix", "http://host:port",
 *                     "https://host:port[?ca=FILE]" (certificate verified
 *                     against the system CA store or FILE), or NULL as
 *                     above; copied
 * @param[in]  region  the region this process mints in, 0..65535
 * @return 0, IDMINT_EINVAL (bad URL or region, a private database, an
 *         SQLite path whose folder does not exist or that this user may
 *         not read and write), IDMINT_ENOMEM, IDMINT_EUNAVAILABLE (cannot open
 *         or create) or IDMINT_ESTORE (not an idmint store, unknown schema).
 * Ownership: close with idmint_authority_close().
 * Thread-safety: not thread-safe; use one authority per thread. Reads the
 *                environment (IDMINT_AUTHORITY, IDMINT_TOKEN, HOME,
 *                XDG_STATE_HOME): not concurrent with setenv().
 */
IDMINT_API IDMINT_NODISCARD int idmint_authority_open(idmint_authority **out, const char *url,
                                                      uint32_t region);

/**
 * As idmint_authority_open(), but never create anything: no store, no file,
 * no folder. For tools that only read (list, show, decode): pointed at a
 * path where nothing is yet, they report it instead of leaving an empty
 * authority behind that a later typo-free run would not see. Writes through
 * the authority it opens are allowed (and an old SQLite file's schema is
 * brought up to date); only creation is ruled out. Backends other than
 * SQLite behave as with idmint_authority_open().
 *
 * @param[out] out     the authority; written only on success
 * @param[in]  url     as for idmint_authority_open(); copied
 * @param[in]  region  as for idmint_authority_open()
 * @return 0, IDMINT_ENOTFOUND (no SQLite file at the path yet: "no authority
 *         at PATH yet: nothing has been created there"), or what
 *         idmint_authority_open() returns.
 * Ownership: close with idmint_authority_close().
 * Thread-safety: as idmint_authority_open().
 */
IDMINT_API IDMINT_NODISCARD int idmint_authority_open_existing(idmint_authority **out,
                                                               const char *url, uint32_t region);

/**
 * Close @p a. NULL is a no-op.
 * Thread-safety: no other call on @p a may be running or start afterwards.
 */
IDMINT_API void idmint_authority_close(idmint_authority *a);

/*
 * Every call below on an idmint_authority: the authority is used by one
 * thread at a time (safe on different authorities). Over http:// the remote
 * idmintd answers, and its refusal of the bearer token is IDMINT_EACCESS.
 */

/**
 * Create a namespace (audited). Validates the name, the layout (a layout
 * whose time bits already ran out is refused) or the range bounds.
 *
 * @param[in] info  set up by idmint_ns_info_init(), then filled in; only
 *                  info->size bytes of it are read; copied
 * @return 0, IDMINT_EINVAL (a bad name, kind, layout or bounds; @p a or
 *         @p info NULL; info->size not set by idmint_ns_info_init()),
 *         IDMINT_ECONFLICT (exists), IDMINT_ENOMEM, IDMINT_EACCESS (http://),
 *         IDMINT_EUNAVAILABLE or IDMINT_ESTORE.
 * Thread-safety: safe on different authorities; one thread at a time on @p a.
 */
IDMINT_API IDMINT_NODISCARD int idmint_ns_create(idmint_authority *a, const idmint_ns_info *info);

/**
 * Read one namespace ("default" is created on first use, audited).
 *
 * @param[in,out] out  set up by idmint_ns_info_init() (any kind: every
 *                     member but size is overwritten); out->size bytes are
 *                     written and no more, only on success
 * @return 0, IDMINT_EINVAL (@p a or @p out NULL, a bad name, out->size not
 *         set by idmint_ns_info_init(); nothing written), IDMINT_ENOTFOUND,
 *         IDMINT_ENOMEM, IDMINT_EACCESS (http://), IDMINT_EUNAVAILABLE (the
 *         store cannot be reached, or "default" is missing from a read-only
 *         one) or IDMINT_ESTORE.
 * Thread-safety: safe on different authorities; one thread at a time on @p a.
 */
IDMINT_API IDMINT_NODISCARD int idmint_ns_get(idmint_authority *a, const char *name,
                                              idmint_ns_info *out);

/**
 * List every namespace, by name. Step with idmint_ns_info_at(); list[i] is
 * right only when the program and the library were built from the same
 * header.
 *
 * @param[out] out  the array; written only on success (may be NULL when *n == 0)
 * @param[out] n    its count; written only on success
 * @return 0, IDMINT_EINVAL (NULL), IDMINT_ENOMEM, IDMINT_EACCESS (http://),
 *         IDMINT_EUNAVAILABLE or IDMINT_ESTORE.
 * Ownership: *out is malloc'd; free it with idmint_free().
 * Thread-safety: safe on different authorities; one thread at a time on @p a.
 */
IDMINT_API IDMINT_NODISCARD int idmint_ns_list(idmint_authority *a, idmint_ns_info **out,
                                               size_t *n);

/**
 * Disable (1) or enable (0) a namespace (audited). A disabled namespace
 * refuses new leases, renewals and reservations.
 * @return 0, IDMINT_EINVAL (@p a NULL, a bad name), IDMINT_ENOTFOUND,
 *         IDMINT_ENOMEM, IDMINT_EACCESS (http://), IDMINT_EUNAVAILABLE or
 *         IDMINT_ESTORE.
 * Thread-safety: safe on different authorities; one thread at a time on @p a.
 */
IDMINT_API IDMINT_NODISCARD int idmint_ns_set_disabled(idmint_authority *a, const char *name,
                                                       int disabled);

/**
 * Migrate namespace @p old_name to a new namespace (audited, both steps): @p old_name
 * is disabled for new leases, renewals and reservations (holders mint on
 * until their lease or range runs out), then the new one is created with a
 * floor above every ID the old one issued or can still issue, so that every
 * ID of the new namespace is greater than every ID of the old. Snowflake
 * or range on either side:
 * - the floor is the old namespace's largest possible ID: for a snowflake
 *   one, the highest E of its worker ids with every lower bit set; for a
 *   range one, next_value - 1;
 * - a new snowflake namespace mints only from the first time unit whose IDs
 *   lie above the floor; a layout (epoch, unit, bits) whose IDs cannot pass
 *   it before its time bits run out is refused (IDMINT_EINVAL, with the
 *   latest epoch that would work), and nothing changes;
 * - a new range namespace starts at floor + 1 when info->next_value is 0 or
 *   1 (the default), else at info->next_value, which must lie above the floor.
 * A namespace that was already disabled stays so; one this call disabled is
 * enabled again if the new one cannot be created.
 *
 * @param[in]  info     the new namespace, set up by idmint_ns_info_init() and
 *                      filled in as for idmint_ns_create() (floor and origin
 *                      are set by this call); copied
 * @param[out] created  if not NULL (set up by idmint_ns_info_init()): the new
 *                      namespace as stored, floor included; only on success
 * @return 0, IDMINT_EINVAL (as idmint_ns_create(); the same name; a layout
 *         or start that cannot pass the floor), IDMINT_ENOTFOUND (no old
 *         namespace), IDMINT_ECONFLICT (the new name exists), IDMINT_ENOMEM,
 *         IDMINT_EACCESS (http://), IDMINT_ERESTORED, IDMINT_EUNAVAILABLE or
 *         IDMINT_ESTORE.
 * Thread-safety: safe on different authorities; one thread at a time on @p a.
 */
IDMINT_API IDMINT_NODISCARD int idmint_ns_migrate(idmint_authority *a, const char *old_name,
                                                  const idmint_ns_info *info,
                                                  idmint_ns_info *created);

/**
 * idmint_ns_migrate() to a new range namespace that starts at exactly
 * @p start: honoured, or refused when it lies at or below the floor (the
 * largest ID the old namespace may have issued), with IDMINT_EINVAL naming
 * the floor and the least start that works, before anything changes (or,
 * when the floor grew while the old namespace was being disabled, with the
 * old namespace enabled again). info->next_value is not read: in
 * idmint_ns_migrate() a next_value of 1, idmint_ns_info_init()'s default,
 * means "just above the floor", so a start of 1 needs this call.
 *
 * @param[in]  info     as for idmint_ns_migrate(); its kind must be range; copied
 * @param[in]  start    the first value the new namespace hands out, 1..2^63-1
 * @param[out] created  as for idmint_ns_migrate()
 * @return as idmint_ns_migrate(), and IDMINT_EINVAL for a start of 0, a start
 *         at or below the floor, or a snowflake namespace.
 * Thread-safety: safe on different authorities; one thread at a time on @p a.
 */
IDMINT_API IDMINT_NODISCARD int idmint_ns_migrate_start(idmint_authority *a, const char *old_name,
                                                        const idmint_ns_info *info, uint64_t start,
                                                        idmint_ns_info *created);

/**
 * Copy the authority's store to @p dest_path, consistently, while it serves
 * (SQLite's online backup; audited in the source). The copy is marked as a
 * backup: a store opened on it refuses every take, renewal, release and
 * reservation with IDMINT_ERESTORED until idmint_authority_fence() has run
 * on it, because processes of the history after the copy may still be
 * minting from what it would hand out again.
 * @return 0, IDMINT_EINVAL (NULL; not an SQLite authority: for PostgreSQL
 *         use pg_dump, see docs/operations), IDMINT_ECONFLICT (@p dest_path
 *         exists), IDMINT_ENOMEM, IDMINT_EUNAVAILABLE or IDMINT_ESTORE.
 * Thread-safety: safe on different authorities; one thread at a time on @p a.
 */
IDMINT_API IDMINT_NODISCARD int idmint_authority_backup(idmint_authority *a, const char *dest_path);

/** A range namespace's fence: its next value moves above @p value, or by @p value. */
typedef struct idmint_fence_range {
    const char *ns; /**< range namespace name */
    int is_skip;    /**< 0: next value = value + 1 ("above"); 1: next value += value */
    uint64_t value; /**< the highest ID in use downstream, or how many to skip (>= 1) */
} idmint_fence_range;

/**
 * Make a restored store safe (audited), in one transaction: every snowflake
 * namespace gets a floor so that no worker id mints before now +
 * @p max_lease_ms (every process of the lost history has stopped by then);
 * every range namespace moves forward as @p ranges says (each must be
 * named exactly once); the store gets a new history id, so that any process
 * of the lost history stops at its next contact (IDMINT_ERESTORED), and the
 * backup mark is cleared. Nothing moves backwards: a next value below the
 * current one is refused. Then this host's witness binds the store's place
 * (its file, database or etcd prefix) to this store, so that a store deleted
 * and made anew there, which handles of this host refuse with
 * IDMINT_ERESTORED, is accepted from now on; and the history this host saw
 * becomes the fenced one, so that a copy older than an earlier fence, put
 * back and fenced here, is accepted too (docs/operations.md, "Restores").
 *
 * @param[in] ranges        @p n entries, copied; NULL when @p n is 0
 * @param[in] max_lease_ms  the longest lease any holder could have been
 *                          given; 0 for the authority's maximum (one day)
 * @return 0, IDMINT_EINVAL (NULL; a range namespace not named or named
 *         twice; an unknown or snowflake name in @p ranges; a skip of 0; a
 *         fence below the current next value, or past the maximum;
 *         nothing changes), IDMINT_ENOMEM, IDMINT_EACCESS (http://),
 *         IDMINT_EUNAVAILABLE or IDMINT_ESTORE; after the store was fenced,
 *         the witness folder's IDMINT_EINVAL when the binding could not be
 *         written (the message says so: run the fence again).
 * Thread-safety: safe on different authorities; one thread at a time on @p a.
 */
IDMINT_API IDMINT_NODISCARD int idmint_authority_fence(idmint_authority *a,
                                                       const idmint_fence_range *ranges, size_t n,
                                                       uint32_t max_lease_ms);

/** idmint_authority_fence_v2() flag: allow a quarantine shorter than the longest lease granted. */
#define IDMINT_FENCE_FORCE_SHORT_LEASE 1u

/**
 * idmint_authority_fence(), with @p flags. The store keeps, per snowflake
 * namespace, the longest lease it ever granted (taken or renewed); a
 * @p max_lease_ms below it is refused with IDMINT_EINVAL naming it, and
 * nothing changes, because a holder of the lost history may mint until its
 * lease ends. IDMINT_FENCE_FORCE_SHORT_LEASE fences anyway, for an operator
 * who knows every such holder has stopped; the audit record of each
 * namespace so fenced says so, with both figures. A restored store knows only
 * the leases granted before its copy was taken; a lease granted after that,
 * longer than every earlier one, is not known to it (docs/operations.md).
 *
 * @param[in] flags  0 or IDMINT_FENCE_FORCE_SHORT_LEASE
 * @return as idmint_authority_fence(); IDMINT_EINVAL also for unknown flags
 *         and for a @p max_lease_ms below the longest lease granted.
 * Thread-safety: safe on different authorities; one thread at a time on @p a.
 */
IDMINT_API IDMINT_NODISCARD int idmint_authority_fence_v2(idmint_authority *a,
                                                          const idmint_fence_range *ranges,
                                                          size_t n, uint32_t max_lease_ms,
                                                          unsigned flags);

/**
 * List the worker-id rows of @p ns, all regions; holders appear as
 * fingerprints. Step with idmint_worker_info_at(); list[i] is right only
 * when the program and the library were built from the same header.
 *
 * @param[out] out  the array; written only on success (may be NULL when *n == 0)
 * @param[out] n    its count; written only on success
 * @return 0, IDMINT_EINVAL (NULL, a bad name), IDMINT_ENOTFOUND (no such
 *         namespace), IDMINT_ENOMEM, IDMINT_EACCESS (http://),
 *         IDMINT_EUNAVAILABLE or IDMINT_ESTORE.
 * Ownership: *out is malloc'd; free it with idmint_free().
 * Thread-safety: safe on different authorities; one thread at a time on @p a.
 */
IDMINT_API IDMINT_NODISCARD int idmint_workers_list(idmint_authority *a, const char *ns,
                                                    idmint_worker_info **out, size_t *n);

/**
 * Force a worker id away from its holder (audited): the holder is cleared
 * and the generation grows, so the old holder's next renewal is refused and
 * whoever takes the id next still mints only after E. E stays: the holder
 * may have minted up to it, even with a clock far ahead. (idmintd's
 * force_release route can also lower E when an admin vouches for it.)
 * @return 0, IDMINT_EINVAL (NULL, a bad name, a range namespace, a region
 *         outside the layout), IDMINT_ENOTFOUND (no such namespace or row),
 *         IDMINT_ENOMEM, IDMINT_EACCESS (http://), IDMINT_EUNAVAILABLE /
 *         IDMINT_ESTORE (the store could not be reached or failed).
 * Thread-safety: safe on different authorities; one thread at a time on @p a.
 */
IDMINT_API IDMINT_NODISCARD int idmint_worker_force_release(idmint_authority *a, const char *ns,
                                                            uint32_t region, uint32_t worker_id);

/* ==== regions (docs/multi-node.md, "Regions") ==== */

/** Where a region claim stands. */
typedef enum idmint_region_state {
    IDMINT_REGION_FREE = 0,      /**< registry: nobody holds the region */
    IDMINT_REGION_CLAIMED = 1,   /**< held by the authority named */
    IDMINT_REGION_RELEASING = 2, /**< authority: a release began and has not ended */
    IDMINT_REGION_RELEASED = 3,  /**< authority: its claim was released; it grants no lease */
    IDMINT_REGION_CLAIMING = 4   /**< authority: a claim began and has not ended; no lease yet */
} idmint_region_state;

/**
 * A region claim, as the registry keeps it (one per region id) or as an
 * authority keeps its own (one per authority). Filled whole by the library.
 */
typedef struct idmint_region_record {
    uint32_t region;
    idmint_region_state state;
    char holder[33];    /**< the claiming authority's store id; "" when free */
    char where[256];    /**< where that authority's store is (a location key) */
    char registry[512]; /**< an authority's own claim: the registry's URL; else "" */
    int64_t since_ms;   /**< when it was claimed, released or freed */
    int64_t floor_ms;   /**< every ID of the region minted under the claim lies after it */
} idmint_region_record;

/**
 * Claim @p region for the authority @p a in the registry at @p registry_url
 * (an idmint store every regional authority can reach: PostgreSQL or etcd),
 * then bind @p a to it: from then on @p a grants leases of that region only,
 * each starting after the registry's floor for it (where an earlier claim
 * of the region, now released, left off), and opens a namespace with region
 * bits only when the registry defines it the same way. Audited in both
 * stores. Made before the authority serves: no worker id of @p a may be
 * held. Running it again after a failure finishes the claim.
 * @return 0; IDMINT_ECONFLICT (another authority holds the region, named in
 *         the message; or @p a is bound to another region or releasing);
 *         IDMINT_EINVAL (NULL, a region above 65535 or outside a namespace's
 *         region bits, a registry URL with a password, the registry is @p a
 *         itself, a namespace of @p a the registry defines otherwise or not
 *         at all, a held worker id, an http:// authority, a store without
 *         records); IDMINT_EUNAVAILABLE / IDMINT_ESTORE (a store could not
 *         be reached: claims wait for the registry); IDMINT_ENOMEM.
 * Thread-safety: one thread at a time on @p a.
 */
IDMINT_API IDMINT_NODISCARD int idmint_region_claim(idmint_authority *a, const char *registry_url,
                                                    uint32_t region);

/**
 * Release the region claim of @p a (audited): @p a stops granting and
 * renewing leases for good (every namespace with region bits is disabled and
 * every worker id's generation moves on), reads the highest E it granted,
 * and hands the region back to the registry with that E as its floor, so
 * that the next claimant's IDs start after everything @p a's holders may
 * still mint. Running it again after a failure finishes the release.
 * @return 0; IDMINT_ENOTFOUND (@p a holds no claim); IDMINT_EINVAL (NULL,
 *         http://); IDMINT_EUNAVAILABLE / IDMINT_ESTORE; IDMINT_ENOMEM.
 * Thread-safety: one thread at a time on @p a.
 */
IDMINT_API IDMINT_NODISCARD int idmint_region_release(idmint_authority *a);

/**
 * The claim @p a keeps of its own into @p out.
 * @return 0; IDMINT_ENOTFOUND (never claimed: @p a serves any region a client
 *         asks for); IDMINT_EINVAL (NULL, http://); IDMINT_EUNAVAILABLE /
 *         IDMINT_ESTORE.
 * Thread-safety: safe on different authorities; one thread at a time on @p a.
 */
IDMINT_API IDMINT_NODISCARD int idmint_region_get(idmint_authority *a, idmint_region_record *out);

/**
 * The registry's record of @p region into @p out, read from the store at
 * @p registry_url (opened and closed here).
 * @return 0; IDMINT_ENOTFOUND (never claimed); IDMINT_EINVAL (NULL, a bad
 *         URL or region); IDMINT_EUNAVAILABLE / IDMINT_ESTORE.
 * Thread-safety: safe.
 */
IDMINT_API IDMINT_NODISCARD int idmint_registry_get(const char *registry_url, uint32_t region,
                                                    idmint_region_record *out);

/**
 * The registry's definition of namespace @p name, from the registry of the
 * claim @p a holds, into @p out (set out->size first, as for idmint_ns_get):
 * pass it to idmint_ns_create() to give @p a its copy.
 * @return 0; IDMINT_ENOTFOUND (the registry defines no such namespace, or
 *         @p a holds no claim); IDMINT_EINVAL; IDMINT_EUNAVAILABLE /
 *         IDMINT_ESTORE (the registry could not be reached).
 * Thread-safety: one thread at a time on @p a.
 */
IDMINT_API IDMINT_NODISCARD int idmint_region_ns_definition(idmint_authority *a, const char *name,
                                                            idmint_ns_info *out);

/**
 * Audit records with seq > @p after_seq, oldest first, at most @p limit.
 * Step with idmint_audit_entry_at(); list[i] is right only when the program
 * and the library were built from the same header.
 *
 * @param[out] out  the array; written only on success (may be NULL when *n == 0)
 * @param[out] n    its count; written only on success
 * @return 0, IDMINT_EINVAL (NULL), IDMINT_ENOMEM, IDMINT_EACCESS (http://),
 *         IDMINT_EUNAVAILABLE or IDMINT_ESTORE.
 * Ownership: *out is malloc'd; free it with idmint_free().
 * Thread-safety: safe on different authorities; one thread at a time on @p a.
 */
IDMINT_API IDMINT_NODISCARD int idmint_audit_list(idmint_authority *a, int64_t after_seq,
                                                  size_t limit, idmint_audit_entry **out,
                                                  size_t *n);

/* ==== Provenance: who minted an ID, and duplicates seen downstream ==== */

/**
 * One recorded grant, an element of idmint_trace()'s array: step with
 * idmint_grant_info_at(). A grant is a worker-id lease (from its take to its
 * last renewal or release) or a reserved range. Members are only ever
 * appended. What a holder said of itself (host, pid, program) is recorded,
 * never trusted: token is the name of the token it came with over HTTP.
 */
typedef struct idmint_grant_info {
    size_t size;         /**< this element's size in bytes, set by the library; ABI guard */
    idmint_kind kind;    /**< IDMINT_KIND_SNOWFLAKE: a worker lease; IDMINT_KIND_RANGE: a range */
    uint32_t region;     /**< snowflake: region of the worker id */
    uint32_t worker_id;  /**< snowflake: the worker id */
    uint64_t generation; /**< snowflake: the worker id's generation under this grant */
    uint64_t first;      /**< snowflake: E found at take (time units); range: start */
    uint64_t last;       /**< exclusive: snowflake: the last E stored for it; range: end */
    char holder[33];     /**< fingerprint of the holder (worker) or incarnation (range) */
    char host[64];       /**< host name the holder gave */
    uint32_t pid;        /**< process id the holder gave */
    char program[32];    /**< program name the holder gave */
    char token[64];      /**< token name it came with over HTTP; "" when local */
    int64_t granted_ms;  /**< Unix ms of the take or reservation */
    int64_t updated_ms;  /**< Unix ms of the last renewal or release (= granted_ms for a range) */
} idmint_grant_info;

/**
 * Element @p i (below the count) of an array from idmint_trace(), stepping
 * by the elements' own size as idmint_ns_info_at() does.
 * Thread-safety: safe.
 */
static inline const idmint_grant_info *idmint_grant_info_at(const idmint_grant_info *list, size_t i)
{
    return (const idmint_grant_info *)(const void *)((const char *)list + i * list->size);
}

/**
 * Which recorded grants of namespace @p ns could have minted @p id: for a
 * snowflake namespace, the grants of the ID's region and worker id whose
 * holder could have minted its time unit, from the later of the take (its
 * granted_ms) and the unit after the E it found (first) up to the last E
 * stored for it (last, exclusive); for a range namespace, the grants whose
 * [start, end) holds it. None for an ID that lies in a grant of a namespace
 * @p ns was migrated from (ns->origin, and so on back): every ID of @p ns
 * lies above those. An ID carries no namespace: an ID of another namespace
 * of the same layout whose holder had the same worker id at that time (for
 * a range, the same value) is named as @p ns's, whose holder could have
 * minted that very value. *n == 0: no grant this authority knows could
 * have minted it (forged, of another namespace or authority, minted before
 * @p ns existed, or older than the provenance retention); *n >= 2: two
 * holders could have minted it, a duplicate by provenance. At most 16
 * grants, oldest first.
 *
 * @param[out] out  the array; written only on success (NULL when *n == 0)
 * @param[out] n    its count; written only on success
 * @return 0, IDMINT_EINVAL (NULL, a bad name, 0 or an ID past 2^63-1, an ID
 *         whose region or time lies outside the layout), IDMINT_ENOTFOUND
 *         (no such namespace), IDMINT_ENOMEM, IDMINT_EUNAVAILABLE or
 *         IDMINT_ESTORE.
 * Ownership: *out is malloc'd; free it with idmint_free().
 * Thread-safety: safe on different authorities; one thread at a time on @p a.
 */
IDMINT_API IDMINT_NODISCARD int idmint_trace(idmint_authority *a, const char *ns, uint64_t id,
                                             idmint_grant_info **out, size_t *n);

/**
 * @p g as one line of text into @p buf (@p size bytes, cut to fit and always
 * terminated): "host=H pid=P program=X incarnation=FP generation=G
 * worker=R/W token=T granted=ISO-8601" for a worker grant, with
 * "range=[S,E)" in place of generation and worker for a range grant. The
 * owners of a collision record are written this way.
 * Thread-safety: safe.
 */
IDMINT_API void idmint_grant_format(const idmint_grant_info *g, char *buf, size_t size);

/**
 * One collision record, an element of idmint_collisions_list()'s array:
 * step with idmint_collision_at(). Members are only ever appended.
 */
typedef struct idmint_collision {
    size_t size;            /**< this element's size in bytes, set by the library; ABI guard */
    int64_t seq;            /**< grows with every record (by one on SQLite and PostgreSQL;
                                 on etcd it is the record's revision) */
    char ns[64];            /**< namespace */
    uint64_t id;            /**< the ID seen twice */
    char first_owner[256];  /**< the oldest grant covering it, as text; "" when none */
    char second_owner[256]; /**< the next grant covering it; "" when provenance knows one or none */
    char verdict[16];       /**< "duplicate": two grants cover the ID; "reported": fewer */
    char reporter[64];      /**< who reported it (the actor of the audit log) */
    int64_t observed_ms;    /**< Unix ms the reporter saw it (its word; at most now) */
    int64_t reported_ms;    /**< Unix ms it was recorded */
    char note[128];         /**< the reporter's words, printable ASCII */
} idmint_collision;

/**
 * Element @p i (below the count) of an array from idmint_collisions_list(),
 * stepping by the elements' own size as idmint_ns_info_at() does.
 * Thread-safety: safe.
 */
static inline const idmint_collision *idmint_collision_at(const idmint_collision *list, size_t i)
{
    return (const idmint_collision *)(const void *)((const char *)list + i * list->size);
}

/**
 * Record that @p id of @p ns was seen twice downstream (for example a
 * unique-constraint violation on insert), at @p observed_ms (0: now; a time
 * ahead of the authority's clock is cut to now), with @p note (NULL: none).
 * The authority resolves the owners through provenance (idmint_trace) and
 * stores the record with its verdict, audited ("collision.report"), in one
 * transaction. Nothing else changes: a report never stops or moves a lease.
 * One reporter's reports of one ID make one record: a repeat writes
 * nothing (no record, no audit entry) and gets the first record back.
 * Records are kept for the authority's collision retention (30 days by
 * default), counted by the store's clock from the first report.
 *
 * @param[out] out  the stored record, or the first one for a repeat (may be
 *                  NULL); out->size must be set up (sizeof(idmint_collision)
 *                  or an older one); written only on success
 * @return 0, IDMINT_EINVAL (NULL, a bad name, 0 or an ID past 2^63-1, an ID
 *         outside the layout, a note over 127 bytes or not printable ASCII,
 *         a negative @p observed_ms), IDMINT_ENOTFOUND (no such namespace),
 *         IDMINT_ENOMEM, IDMINT_EACCESS (http:// without the mint role),
 *         IDMINT_EUNAVAILABLE or IDMINT_ESTORE.
 * Thread-safety: safe on different authorities; one thread at a time on @p a.
 */
IDMINT_API IDMINT_NODISCARD int idmint_collision_report(idmint_authority *a, const char *ns,
                                                        uint64_t id, int64_t observed_ms,
                                                        const char *note, idmint_collision *out);

/**
 * Collision records with seq > @p after_seq, oldest first, at most @p limit.
 * Step with idmint_collision_at().
 *
 * @param[out] out  the array; written only on success (may be NULL when *n == 0)
 * @param[out] n    its count; written only on success
 * @return 0, IDMINT_EINVAL (NULL), IDMINT_ENOMEM, IDMINT_EACCESS (http://
 *         without the admin role), IDMINT_EUNAVAILABLE or IDMINT_ESTORE.
 * Ownership: *out is malloc'd; free it with idmint_free().
 * Thread-safety: safe on different authorities; one thread at a time on @p a.
 */
IDMINT_API IDMINT_NODISCARD int idmint_collisions_list(idmint_authority *a, int64_t after_seq,
                                                       size_t limit, idmint_collision **out,
                                                       size_t *n);

/**
 * Free memory returned by a listing call. NULL is a no-op.
 * Thread-safety: safe; no other thread may still use @p p.
 */
IDMINT_API void idmint_free(void *p);

#ifdef __cplusplus
}
#endif

#endif /* IDMINT_H */
