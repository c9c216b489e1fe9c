/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Shared internal declarations of libidmint (idmint__*). Never installed;
 * tests link the static library and may call these directly.
 */
#ifndef IDMINT_INTERNAL_H
#define IDMINT_INTERNAL_H

#include "idmint.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define IDMINT_DEFAULT_NS        "default"
#define IDMINT_DEFAULT_EPOCH_MS  INT64_C(1767225600000) /* 2026-01-01T00:00:00Z */
#define IDMINT_DEFAULT_BLOCK     10000u
#define IDMINT_DEFAULT_MAX_BLOCK 10000000u
#define IDMINT_MAX_VALUE         UINT64_C(0x7fffffffffffffff)

/* ==== default_authority.c: the store used when none is named ==== */

#define IDMINT_DEFAULT_AUTHORITY_MAX 4104 /* bytes of a default URL: "sqlite:" + PATH_MAX */

/*
 * The default authority URL (DESIGN.md §8), never relative to the working
 * directory: "sqlite:/var/lib/idmint/idmint.db" when the effective uid is 0,
 * else "sqlite:$XDG_STATE_HOME/idmint/idmint.db" when XDG_STATE_HOME is an
 * absolute path, else "sqlite:$HOME/.local/state/idmint/idmint.db" (HOME
 * from the environment when absolute, else the password database). 0, or
 * IDMINT_EINVAL (with a message) when there is no home or @p size is too
 * small; @p buf is written only on success. Reads the environment: not
 * thread-safe against setenv().
 */
int idmint__default_authority(char *buf, size_t size);
/* The rule above with its inputs passed in (tests); NULL or "" for an unset variable. */
int idmint__default_authority_for(unsigned long euid, const char *xdg_state_home, const char *home,
                                  char *buf, size_t size);
/*
 * Create the folders above the file of default URL @p url (mode 0700,
 * parents too) when they are missing. 0 or IDMINT_EUNAVAILABLE with the
 * folder and errno's text.
 */
int idmint__default_authority_mkdir(const char *url);

/* ==== errors.c ==== */

/* Set the thread-local detail read by idmint_errmsg(); returns @p err. */
int idmint__fail(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Clear the thread-local detail. */
void idmint__errmsg_clear(void);

/* The value of hex digit @p c (either case), or -1. */
static inline int idmint__hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* ==== entropy.c: the only reader of the OS RNG ==== */

/* Fill @p buf from the kernel CSPRNG. 0 or IDMINT_EUNAVAILABLE. Thread-safe. */
int idmint__entropy(void *buf, size_t len);
/* 32 lowercase hex digits of fresh randomness plus NUL: an incarnation id. */
int idmint__incarnation(char out[33]);

/* ==== fork detection (handle.c) ==== */

/* Grows by one in every child after fork(); read without a system call. */
extern _Atomic uint64_t idmint__fork_generation;
/* Install the atfork handler once. Thread-safe. */
void idmint__fork_watch(void);

/* ==== clock.c: the only reader of the system clocks ==== */

/*
 * Time for one handle: the wall clock read at start, advanced by the
 * monotonic clock, re-anchored only forward (the wall-minus-monotonic offset
 * only grows), so readings never go back. With the system clocks on x86-64
 * with an invariant TSC, a reading within the same millisecond is served from
 * a cache checked against the TSC, without a system call.
 */
struct clock {
    int64_t (*wall_ms)(void *ctx);  /* NULL: CLOCK_REALTIME */
    uint64_t (*mono_ns)(void *ctx); /* NULL: CLOCK_MONOTONIC */
    void *ctx;
    int use_tsc;                      /* fast path allowed */
    int use_ticker;                   /* the process clock: served from a ticking cache */
    _Atomic int is_ticking;           /* the ticker thread is keeping cached_ms current */
    _Atomic int has_demand;           /* minted since the ticker last looked */
    _Atomic int64_t offset_ns;        /* wall - mono; only grows */
    _Atomic int64_t cached_ms;        /* last reading; only grows */
    _Atomic uint64_t valid_until_tsc; /* cached_ms is current while rdtsc() < this */
};

/* Initialise @p c; NULL functions select the system clocks. */
void idmint__clock_init(struct clock *c, int64_t (*wall_ms)(void *), uint64_t (*mono_ns)(void *),
                        void *ctx);
/*
 * The process-wide system clock, shared by every handle without an injected
 * clock. While it is in use a ticker thread refreshes its cache every
 * millisecond, so a reading is one memory load; the ticker stops after a
 * second without readings and starts again on the next one.
 */
struct clock *idmint__clock_system(void);
/* Forget the ticker thread in a child after fork() (it does not exist there). */
void idmint__clock_after_fork(void);
/*
 * Unix ms now, never less than any earlier reading of @p c. Thread-safe.
 * From the process clock a reading may lag the true time when the ticker
 * thread is starved: every 16th reading in a thread checks the TSC, so the
 * lag lasts at most 15 readings of a thread (after it was itself stalled).
 */
int64_t idmint__clock_now_ms(struct clock *c);
/* As idmint__clock_now_ms but always reads the clocks (no cache). */
int64_t idmint__clock_read_ms(struct clock *c);
/* Sleep @p ms on the monotonic clock (real time even with an injected clock). */
void idmint__sleep_ms(uint32_t ms);
/* Sleep @p us on the monotonic clock, resuming after signals. */
void idmint__sleep_us(uint64_t us);
/* Real CLOCK_MONOTONIC in ms, for deadlines. */
uint64_t idmint__deadline_now_ms(void);
/* A condition variable whose timed waits run on CLOCK_MONOTONIC (immune to clock steps). */
void idmint__cond_init_monotonic(pthread_cond_t *cv);
/* The CLOCK_MONOTONIC instant @p ms from now, for pthread_cond_timedwait. */
struct timespec idmint__monotonic_after_ms(uint64_t ms);

/* ==== layout.c ==== */

/* Days-from-civil for the proleptic Gregorian calendar (UTC). */
int64_t idmint__days_from_civil(int64_t y, unsigned m, unsigned d);

/* ==== snowflake.c: the engine; time is passed in ==== */

#define IDMINT__SNOWFLAKE_WAIT 1 /* the sequence of now_unit is used up: retry later */

struct snowflake {
    _Atomic uint64_t state;       /* (t << S) | seq of the last value issued; only grows */
    _Atomic uint64_t lease_until; /* own E in time units; IDs need t < this; 0 once lost */
    _Atomic int lease_err;        /* what to return at t >= lease_until */
    uint64_t prefix;              /* region << (W+S) | worker << S */
    unsigned seq_bits;            /* S */
    unsigned time_shift;          /* R + W + S */
    uint64_t seq_mask;            /* 2^S - 1 */
    uint64_t max_time;            /* 2^T - 1: the last time unit */
    uint64_t borrow_units;        /* how far ahead of now a full sequence may run */
};

/*
 * Set up @p sf for worker @p worker in @p region; the first ID will have a
 * time value > @p fence_found. lease_until starts at @p lease_until.
 */
void idmint__snowflake_init(struct snowflake *sf, const idmint_layout *l, uint32_t region,
                            uint32_t worker, uint64_t fence_found, uint64_t lease_until,
                            uint64_t borrow_units);
/*
 * Reserve up to @p n consecutive IDs at time @p now_unit (at least one, all
 * in as few units as allowed) and write them to @p ids; *got says how many.
 * Returns 0; IDMINT__SNOWFLAKE_WAIT when no ID can be minted at now_unit
 * (retry with a later time); the lease error when the next time value is at
 * or after E; IDMINT_EEXHAUSTED when the time bits ran out. Thread-safe.
 */
int idmint__snowflake_next(struct snowflake *sf, uint64_t now_unit, uint64_t *ids, size_t n,
                           size_t *got);
/* Time units of the last value issued (the fence for release). */
uint64_t idmint__snowflake_last_time(struct snowflake *sf);

/* ==== authority.c: rules over a store ==== */

struct store;

struct idmint_authority {
    struct store *st;
    uint32_t region;
    int64_t (*wall_ms)(void *ctx); /* NULL: real clock; for created_ms and audit times */
    void *clock_ctx;
    char actor[64]; /* who the audit log names; "" for the OS user */
};

/* Validated name: [a-z0-9][a-z0-9_.-]{0,62}. 0 or IDMINT_EINVAL with a message. */
int idmint__ns_name_check(const char *name);
/* Now in Unix ms by the authority's clock. */
int64_t idmint__authority_now_ms(const struct idmint_authority *a);
/*
 * Name @p actor (idmintd: the caller's token) in the audit records of what
 * @p a does from now on; NULL or "" goes back to the OS user.
 * Not thread-safe: @p a is used by one thread at a time anyway.
 */
void idmint__authority_act_as(struct idmint_authority *a, const char *actor);
/*
 * Who the audit log names for what @p a does: the actor set with
 * idmint__authority_act_as, else the OS user ("user:NAME(uid)"). Never an
 * environment variable: any process could name anyone with one.
 */
void idmint__authority_actor(const struct idmint_authority *a, char *buf, size_t size);
/* The time unit of @p l that Unix ms @p unix_ms falls in; 0 before the epoch. */
uint64_t idmint__unit_at(const idmint_layout *l, int64_t unix_ms);
/*
 * idmint_worker_force_release, and if @p max_ahead_ms >= 0 also E lowered to
 * at most now + @p max_ahead_ms: for an admin who knows no holder minted
 * past that (a forged E; a runaway clock's IDs thrown away). -1 keeps E.
 */
int idmint__worker_force_release(idmint_authority *a, const char *ns, uint32_t region,
                                 uint32_t worker_id, int64_t max_ahead_ms);
/* The longest worker lease anyone is granted: 1 day. */
#define IDMINT__LEASE_MAX_MS 86400000u
/* Read @p name, creating "default" (audited) on first use. */
int idmint__authority_ns_resolve(struct idmint_authority *a, const char *name, idmint_ns_info *out);
/*
 * Open with an injected wall clock (for handles whose clock is injected) and
 * a bearer token for http:// (NULL: $IDMINT_TOKEN).
 */
int idmint__authority_open_clock(struct idmint_authority **out, const char *url, uint32_t region,
                                 int64_t (*wall_ms)(void *), void *ctx, const char *token);

/* ==== range.c: the client side of ranges ==== */

struct range_supply;
#define IDMINT__REQUEST_ID_LEN 17 /* 16 hex digits and the NUL */

/* A thread's chunk of one supply's range; slot 0 is the most recently used. */
struct range_tls {
    uint64_t owner; /* cache_id of the supply, 0 for none */
    uint64_t next;
    uint64_t end;
};
#define IDMINT__RANGE_TLS_SLOTS 4
extern _Thread_local __attribute__((
    tls_model("initial-exec"))) struct range_tls idmint__range_tls[IDMINT__RANGE_TLS_SLOTS];
/* The key under which @p rs caches chunks in idmint__range_tls; never reused. */
uint64_t idmint__range_cache_id(struct range_supply *rs);

/*
 * Reserve the first block of @p ns through @p a (owned by the supply from
 * now on) and start the refill thread. Returns 0 or the store's error.
 */
int idmint__range_open(struct range_supply **out, struct idmint_authority *a,
                       const idmint_ns_info *ns, const idmint_options *opts,
                       const char *incarnation);
/* Mint one value: the thread's chunk, else a new chunk (may wait, deadline_ms). */
int idmint__range_next(struct range_supply *rs, uint64_t *id);
int idmint__range_next_n(struct range_supply *rs, uint64_t *ids, size_t n);
uint64_t idmint__range_left(struct range_supply *rs);
/*
 * The request id of a supply's @p seq-th reservation into @p out: 16 hex
 * digits, so that text order is issue order and the store's record index
 * grows at one edge per incarnation. Decimal ids ("9" after "10") landed
 * mid-page and split leaves: 868 bytes of PostgreSQL WAL per reservation
 * against 465. Pure; thread-safe.
 */
void idmint__range_request_id(uint64_t seq, char out[IDMINT__REQUEST_ID_LEN]);
/* Stop the refill thread, close the authority, free. NULL is a no-op. */
void idmint__range_close(struct range_supply *rs, int is_forked_child);

/* ==== lease.c: take, renew, release ==== */

struct lease_keeper;
struct store_lease;

/*
 * Take a worker lease of snowflake namespace @p ns through @p a (owned by the
 * keeper from now on), wait (bounded) for the clock to pass the fence, set up
 * @p sf, and start the renewal thread, which keeps sf->lease_until current.
 */
int idmint__lease_open(struct lease_keeper **out, struct idmint_authority *a,
                       const idmint_ns_info *ns, const idmint_options *opts,
                       const char *incarnation, struct clock *clk, struct snowflake *sf);
/* The lease as last taken or renewed. */
void idmint__lease_get(struct lease_keeper *lk, struct store_lease *out);
/* 0 after a successful renewal (or none yet), else the last renewal's IDMINT_E* code. */
int idmint__lease_status(struct lease_keeper *lk);
/*
 * Stop renewal and release with E = max(E found, @p last_time + 1); in a
 * forked child only free memory. NULL is a no-op.
 */
void idmint__lease_close(struct lease_keeper *lk, uint64_t last_time, int is_forked_child);

#endif /* IDMINT_INTERNAL_H */
