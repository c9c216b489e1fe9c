/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Shared internal declarations of libidmint (idmint__*). Never installed;
 * tests link the static library and may call these directly.
 */
#ifndef IDMINT_INTERNAL_H
#define IDMINT_INTERNAL_H

#include "idmint.h"
#include "idmint_service.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#define IDMINT_DEFAULT_EPOCH_MS  INT64_C(1767225600000) /* 2026-01-01T00:00:00Z */
#define IDMINT_DEFAULT_BLOCK     10000u
#define IDMINT_DEFAULT_MAX_BLOCK 10000000u
#define IDMINT_MAX_VALUE         UINT64_C(0x7fffffffffffffff)

/* ==== default_authority.c: the store used when none is named ==== */

#define IDMINT_DEFAULT_AUTHORITY_MAX 4104 /* bytes of a default URL: "sqlite:" + PATH_MAX */

/*
 * The default authority URL (docs/design.md "The authority", docs/man/idmint.1):
 * IDMINT_DEFAULT_AUTHORITY, one fixed file for every user of the machine, never relative to the
 * working directory or to the user. 0, or IDMINT_EINVAL when @p size is too small;
 * @p buf is written only on success.
 */
int idmint__default_authority(char *buf, size_t size);
/*
 * Create the folders above the file of default URL @p url (mode 0750,
 * parents too) when they are missing. 0; IDMINT_EINVAL when this user may not
 * create one (the message names the folder and the fix: an administrator
 * makes it for a group, or --authority); IDMINT_EUNAVAILABLE for any other
 * failure, with the folder and errno's text.
 */
int idmint__default_authority_mkdir(const char *url);

/* ==== ABI guards of the public structs (idmint.h) ==== */

/*
 * The smallest `size` a caller may set in a struct it hands in: the end of
 * the last member of the struct's first guarded version (0.1, the first
 * with `size`). Frozen: members appended later raise sizeof, never these,
 * so a program built against an older header keeps working. Below them no
 * program was ever built: such a size is a struct nobody set up.
 *
 * The exported init calls (idmint_options_init, idmint_ns_info_init,
 * idmint_handle_info_init)
 * set up exactly this first version, never sizeof: a program built against
 * the first header calls them on its own, smaller struct. Appending a
 * member therefore needs a new init symbol for the new header (which the
 * header's name then maps to), not a bigger memset in these.
 */
#define IDMINT__OPTIONS_SIZE_V1 (offsetof(idmint_options, token) + sizeof(const char *))
#define IDMINT__NS_INFO_SIZE_V1 (offsetof(idmint_ns_info, max_block) + sizeof(uint32_t))
#define IDMINT__HANDLE_INFO_SIZE_V1                                                                \
    (offsetof(idmint_handle_info, sequence_waits) + sizeof(uint64_t))

/*
 * 0 when @p size, the first member of a caller's @p type, lies within
 * @p min_size (its first guarded version) .. @p lib_size (this library's
 * sizeof); else IDMINT_EINVAL, "<type> not set up by <init>()".
 */
static inline int idmint__struct_size_check(size_t size, size_t min_size, size_t lib_size,
                                            const char *type, const char *init)
{
    if (size < min_size || size > lib_size)
        return idmint__fail(IDMINT_EINVAL,
                            "%s not set up by %s() (size %zu; this library takes %zu..%zu)", type,
                            init, size, min_size, lib_size);
    return 0;
}

/*
 * Copy the library's whole struct @p lib out to the caller's @p out, whose
 * first member, a size_t already checked by idmint__struct_size_check,
 * says how many bytes it has: they are written up to there and no further,
 * and the size itself is kept.
 */
static inline void idmint__struct_copy_out(void *out, const void *lib)
{
    size_t size;

    memcpy(&size, out, sizeof(size));
    memcpy((char *)out + sizeof(size), (const char *)lib + sizeof(size), size - sizeof(size));
}

/*
 * Read the caller's checked struct @p in (its first member says how many
 * bytes it has) into the library's @p lib of @p lib_size bytes: members the
 * caller's header did not have yet are 0, and lib's size is @p lib_size.
 */
static inline void idmint__struct_copy_in(void *lib, size_t lib_size, const void *in)
{
    size_t size;

    memcpy(&size, in, sizeof(size));
    memset(lib, 0, lib_size);
    memcpy(lib, in, size);
    memcpy(lib, &lib_size, sizeof(lib_size));
}

/* ==== errors.c ==== */

/* Clear the thread-local detail. */
void idmint__errmsg_clear(void);

/* ==== entropy.c: the only reader of the OS RNG ==== */

/* 32 lowercase hex digits of fresh randomness plus NUL: an incarnation id. */
int idmint__incarnation(char out[33]);

/* ==== csprng.c: the per-thread user-space CSPRNG, keyed from entropy.c ==== */

/*
 * @p len bytes from this thread's stream (AES-256-CTR keyed from the kernel,
 * fast key erasure, a new kernel key every 1 MiB and in every new copy of
 * the process). 0, IDMINT_ENOMEM, or IDMINT_EUNAVAILABLE (no kernel
 * randomness, or OpenSSL failed); @p out is then partly written.
 * Thread-safety: safe; each thread draws from its own stream.
 */
int idmint__random_fill(void *out, size_t len);

/* ==== fork_gate.c: which copy of the process this is, and the store gate ==== */

/*
 * This process's fork id: never 0, different in every copy of the process
 * the kernel makes (libc fork(), the raw fork or clone system call without
 * CLONE_VM) from every id its parent had; the same in a vfork() child, which
 * shares its parent's memory. Sets the gate up on first use. The slow path
 * (a few loads; a getpid() where the kernel lacks MADV_WIPEONFORK).
 * Thread-safe.
 */
uint64_t idmint__fork_id(void);
/*
 * The word the hot check reads: it holds idmint__fork_id() while the
 * process is the one that claimed it, and 0 in any copy made since (a page
 * marked MADV_WIPEONFORK), or always 0 where the kernel cannot wipe (then
 * every check takes the slow path). Never NULL, never moves. Thread-safe.
 */
const _Atomic uint64_t *idmint__fork_word(void);
/*
 * The hot half of the check: 1 while @p word, idmint__fork_word(), holds
 * @p id, a fork id taken with idmint__fork_id() (this is then the copy that
 * took it); 0 means ask idmint__fork_id(). One load, one compare, no call.
 */
static inline int idmint__fork_word_holds(const _Atomic uint64_t *word, uint64_t id)
{
    return __builtin_expect(atomic_load_explicit(word, memory_order_relaxed) == id, 1) != 0;
}
/* Whether fork id @p id belongs to another copy of the process than this one. Thread-safe. */
static inline int idmint__fork_is_other(const _Atomic uint64_t *word, uint64_t id)
{
    return !idmint__fork_word_holds(word, id) && idmint__fork_id() != id;
}
/*
 * Make sure this copy of the process has its own gate and clock state
 * (installs the atfork handler on first use; in a copy made by a raw system
 * call, sets both up again once). Called by idmint_open and the store gate;
 * never from a mint, which a vfork() child could make. Thread-safe.
 */
void idmint__fork_sync(void);
/*
 * @p size zeroed bytes on pages of their own, which the kernel hands every
 * child empty (MADV_WIPEONFORK) when the gate itself wipes: then *is_wiped
 * is 1 and a child sees only zeros there, whatever the parent wrote. NULL
 * when out of memory. Page-aligned. Free with idmint__wiped_free(p, size),
 * also in a child. Thread-safe.
 */
void *idmint__wiped_alloc(size_t size, int *is_wiped);
/* Give back idmint__wiped_alloc(@p size)'s @p p; NULL is a no-op. */
void idmint__wiped_free(void *p, size_t size);
/* 1 when the kernel wipes the fork id's page in children, 0 on the getpid() fallback. */
int idmint__fork_gate_is_wiping(void);
/* Tests: use the getpid() fallback. 0, or -1 when the gate was already set up. */
int idmint__fork_gate_refuse_wipe(void);
/*
 * Around every call into a store or remote authority made by a handle or
 * its background threads: fork() waits until none is in flight.
 * Never call fork() between enter and leave.
 */
void idmint__store_gate_enter(void);
void idmint__store_gate_leave(void);

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
    _Atomic int64_t last_read_ms;     /* untickered: the millisecond last read in */
    _Atomic int64_t window_start_ms;  /* untickered: the window being counted */
    _Atomic unsigned window_reads;    /* untickered: milliseconds read in, in it */
    _Atomic int64_t offset_ns;        /* wall - mono; only grows */
    _Atomic int64_t cached_ms;        /* last reading; only grows */
    _Atomic uint64_t valid_until_tsc; /* cached_ms is current while rdtsc() < this */
};

/* Initialise @p c; NULL functions select the system clocks. */
void idmint__clock_init(struct clock *c, int64_t (*wall_ms)(void *), uint64_t (*mono_ns)(void *),
                        void *ctx);
/*
 * The process-wide system clock, shared by every handle without an injected
 * clock. While it is read in (nearly) every millisecond a ticker thread
 * refreshes its cache every millisecond, so a reading is one memory load;
 * the ticker starts when 48 milliseconds of a window of 64 saw a reading
 * and parks when fewer than 48 of 64 ticks saw one. Sparser readers take the
 * TSC-checked path, without a thread waking 1,000 times a second.
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
/* Give the CPU to another thread (sched_yield); in driven mode let the driver's time pass. */
void idmint__yield(void);
/* Real CLOCK_MONOTONIC in ms, for deadlines. */
uint64_t idmint__deadline_now_ms(void);
/* The same in µs: a millisecond is too coarse for the reservation queue's rounds. */
uint64_t idmint__deadline_now_us(void);

/*
 * Driven mode: the deterministic simulator's seam (tests/sim), the one place
 * where the library's own time and background threads give way to a driver.
 * Once idmint__driven_start() has run (before any handle opens, from a
 * single-threaded program), for the rest of the process:
 *   - deadlines and waits read the driver's clock (idmint__deadline_now_*),
 *     and a sleep asks the driver to move its clock instead of sleeping;
 *   - a handle starts no renewal or refill thread: its background work runs
 *     only when the driver calls idmint__handle_drive(), and a caller that
 *     would wait for a refill runs one refill in its place;
 *   - nothing else changes: minting, the authority's rules and the stores
 *     are the code every program runs.
 * Costs a program that never drives one predictable branch where a
 * deadline is read, none on the minting path. Never declared in idmint.h.
 */
struct idmint__driver {
    uint64_t (*now_us)(void *ctx);            /* monotonic µs of the running process */
    void (*sleep_us)(void *ctx, uint64_t us); /* move that clock on by @p us */
    void *ctx;
};
/* Enter driven mode; @p d is borrowed until it ends. NULL ends it (no handle may be open). */
void idmint__driven_start(const struct idmint__driver *d);
/* 1 in driven mode, else 0. */
int idmint__is_driven(void);
/*
 * Driven mode: run the background work of @p m that is due by the driver's
 * clock, once (a renewal or refill, else a history check; handle.c).
 * @return the handle's status after it: 0, the last renewal's or
 *         refill's IDMINT_E* code, or IDMINT_EINVAL (NULL, not driven).
 */
int idmint__handle_drive(struct idmint *m);
/*
 * End @p m as SIGKILL would: its store connection closes, nothing is
 * released or forgotten, the memory is freed (the simulator's crash).
 */
void idmint__handle_crash(struct idmint *m);

/* ==== layout.c ==== */

/*
 * @p s as a decimal number: digits only, no sign, at most 2^64-1 (how the
 * JSON of idmintd and etcd carries 64-bit values). 0 and *out, or -1.
 */
int idmint__parse_u64(const char *s, uint64_t *out);
/* The same with an optional '-': -2^63 to 2^63-1. 0 and *out, or -1. */
int idmint__parse_i64(const char *s, int64_t *out);
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

/* ==== authority.c: the rule layer over a store, or a remote authority ==== */

struct store;
struct remote;

#define IDMINT__LOCATION_MAX 4352 /* a store location key: "sqlite:" and a PATH_MAX path */

/*
 * Exactly one of st and remote is set. With st, the rules of authority*.c
 * apply here and the store only keeps rows; with remote, another authority
 * (idmintd, over http://) applies them and calls go there as asked.
 */
struct idmint_authority {
    struct store *st;
    struct remote *remote;
    uint32_t region;
    struct clock *clk; /* &own_clock, or borrowed from the handle */
    char actor[64];    /* who the audit log names; "" for the OS user */
    struct clock own_clock;
    struct idmint__origin origin;              /* who the grants are recorded as asked by */
    struct idmint__origin self;                /* this process, as idmint__origin_self said */
    int64_t keep_ms[IDMINT__KEEP__COUNT];      /* retention of each kind of record */
    unsigned since_prune[IDMINT__KEEP__COUNT]; /* records made since the last prune */
    int witness_state;      /* 0: not looked up yet; 1: in witness_dir; -1: off */
    char witness_dir[4096]; /* this host's witness folder (witness.c) */
    /* Where the store is (idmint__store_location): the witness binds it to
     * the store id this host last used there. "" when unknown (a remote, or
     * a backend that cannot say): nothing is bound. */
    char location[IDMINT__LOCATION_MAX];
    /* The id of the store this authority's last history read found (""
     * before the first): a grant's check proves it is still that store. */
    char store_id_seen[33];
};

/* ==== options (options.c) ==== */
/* The history check interval of @p o: its history_check_ms, or the default. Pure. */
uint32_t idmint__history_check_ms(const idmint_options *o);
/*
 * Copy the caller's @p opts (NULL: the defaults; a struct of an older
 * header: the defaults of what it lacks) into @p out and check them. 0 or
 * IDMINT_EINVAL (a size no header had, or a value out of range, with the
 * message). Pure; @p out is the caller's.
 */
int idmint__options_copy_in(const idmint_options *opts, idmint_options *out);

/* ==== the host's witness (witness.c) ==== */

/*
 * This user's witness folder into @p buf, made if missing: $IDMINT_WITNESS_DIR,
 * else /var/lib/idmint/witness for root, else $XDG_STATE_HOME/idmint/witness
 * or ~/.local/state/idmint/witness. 0; 1 when IDMINT_WITNESS_DIR is "off";
 * IDMINT_EINVAL (with the folder and the fix) when there is none or it
 * cannot be written.
 */
int idmint__witness_dir(char *buf, size_t size);
/*
 * Lock store @p store_id's witness in @p dir against the other processes of
 * this host (flock on a side file; waits). An fd for idmint__witness_unlock,
 * or IDMINT_EINVAL / IDMINT_ESTORE (a bad store id).
 */
int idmint__witness_lock(const char *dir, const char *store_id);
/* Drop a lock of idmint__witness_lock; -1 is ignored. */
void idmint__witness_unlock(int fd);
/*
 * The pair store @p store_id's witness in @p dir holds, into @p out; its
 * path into @p path (for messages). 0; 1 when there is none yet;
 * IDMINT_EINVAL (unreadable) or IDMINT_ESTORE (damaged: never read as none).
 */
int idmint__witness_read(const char *dir, const char *store_id, struct idmint__history *out,
                         char *path, size_t path_size);
/*
 * Replace the witness of @p store_id in @p dir by @p h: rewritten in place
 * (a line of fixed length), or made aside and renamed into place the first
 * time. The caller holds idmint__witness_lock(). 0 or IDMINT_EINVAL.
 */
int idmint__witness_write(const char *dir, const char *store_id, const struct idmint__history *h);
/*
 * Lock the binding of store location @p location (idmint__store_location's
 * key) in @p dir against the other processes of this host (flock on a side
 * file "location-HASH.lock"; waits). Taken before a store's own witness lock
 * when both are held, never after. An fd for idmint__witness_unlock, or
 * IDMINT_EINVAL (no location, a folder that cannot be written).
 */
int idmint__witness_location_lock(const char *dir, const char *location);
/*
 * The store id that the binding of @p location in @p dir names (the store
 * this host last used there) into @p store_id; the binding's path into
 * @p path (for messages). 0; 1 when there is none (a place this host never
 * used, or a folder an older idmint kept: nothing to hold the store to);
 * IDMINT_ESTORE when the file is damaged or names another location (never
 * read as none); IDMINT_EINVAL (unreadable), IDMINT_ENOMEM. Thread-safe
 * (no state); the caller holds the lock to act on what it read.
 */
int idmint__witness_location_read(const char *dir, const char *location, char store_id[33],
                                  char *path, size_t path_size);
/*
 * Bind @p location to @p store_id in @p dir (aside, then rename: a reader
 * sees the old binding or the new), with @p note, one line without a
 * newline for people reading the folder (NULL: none). 0; IDMINT_EINVAL
 * (cannot write), IDMINT_ESTORE (a bad store id), IDMINT_ENOMEM.
 */
int idmint__witness_location_write(const char *dir, const char *location, const char *store_id,
                                   const char *note);

/* ==== history checks of a holder (authority_restore.c) ==== */

/*
 * The check a holder runs before it takes, and then every history_check_ms
 * on its renewal or refill thread: ask the store about *seen and judge it
 * (idmint__history_verify), then this host's witness of the store the same
 * way, under its lock; then raise the witness to the store's head and, if
 * @p adopt_head, set *seen to it (so the next check asks about a seq at
 * most one interval old). 0; IDMINT_ERESTORED (stop minting); the witness
 * folder's IDMINT_EINVAL; the store's errors (an outage: try again). A
 * remote (http://) authority: its idmintd reads its store's history for us
 * (GET /internal/history) and we judge it here; no witness (this host has
 * no binding of the daemon's store). A store without a history log: 0,
 * nothing checked.
 */
int idmint__authority_history_check(struct idmint_authority *a, const char *ns,
                                    struct idmint__history *seen, int adopt_head);
/*
 * Adopt @p reply, the history of a write this holder just made, after
 * *seen: filter with idmint__history_follow, then prove *seen is still in
 * the store's history (a restored store grows seq too), and, under the
 * witness's lock, @p reply too, and raise the witness to it: a grant is in
 * this host's evidence before its holder uses it. Then *seen = *reply. As
 * idmint__authority_history_check.
 */
int idmint__authority_history_adopt(struct idmint_authority *a, const char *ns,
                                    struct idmint__history *seen,
                                    const struct idmint__history *reply);

/* provenance.c: the retention of each kind of record an authority starts with. Pure. */
void idmint__retention_defaults(int64_t keep_ms[IDMINT__KEEP__COUNT]);
/*
 * A record of @p what was just made through @p a: every so often prune a
 * bounded batch of old ones, more than were made meanwhile, so that the
 * table cannot outgrow its retention. Errors are dropped: housekeeping
 * never fails a grant.
 */
void idmint__authority_note_record(struct idmint_authority *a, enum idmint__retained what);

/* 0, or IDMINT_EINVAL when @p a is NULL or closed. */
int idmint__authority_check(const struct idmint_authority *a);
/*
 * Copy the caller's @p info into the library's @p in (members newer than the
 * caller's header read as 0): 0 or IDMINT_EINVAL (NULL, a size not set up by
 * idmint_ns_info_init()).
 */
int idmint__authority_ns_copy_in(const idmint_ns_info *info, idmint_ns_info *in);
/* idmint_ns_create() of the library's copy @p info with a floor and origin (migrations). */
int idmint__authority_ns_create_floor(struct idmint_authority *a, const idmint_ns_info *info,
                                      uint64_t floor, const char *origin);
/*
 * layout.c: the last time unit of layout @p l whose IDs can lie at or below
 * @p floor; a take's fence is at least this, so that a holder's
 * first ID lies above the floor.
 */
uint64_t idmint__floor_fence_unit(const idmint_layout *l, uint64_t floor);
/*
 * authority_region.c, for an authority bound to a region (a local store
 * whose own claim record exists; else each is 0 and does nothing):
 * - _take: before a take of @p region in @p ns: 0 with *floor_ms, the time
 *   every ID of the take must lie after (0: none); IDMINT_EACCESS when the
 *   claim is not held or is of another region.
 * - _ns_create: a snowflake namespace with region bits must match the
 *   registry's definition, which is read now, and takes its floor when
 *   that is higher: IDMINT_EINVAL naming the
 *   difference, IDMINT_ENOTFOUND when the registry has none, or the
 *   registry's error when it cannot be reached (new namespaces wait for it).
 * - _ns_open: the same check when the registry answers; 0 when it does not
 *   (minting never waits on the registry: the copy checked at its making is
 *   trusted).
 * Store errors otherwise. One thread at a time on @p a, as its callers.
 */
int idmint__authority_region_take(idmint_authority *a, const idmint_ns_info *ns, uint32_t region,
                                  int64_t *floor_ms);
int idmint__authority_region_ns_create(idmint_authority *a, idmint_ns_info *ns);
int idmint__authority_region_ns_open(idmint_authority *a, const idmint_ns_info *ns);
/* Now in Unix ms by the authority's clock (forward only: one clock per authority). */
int64_t idmint__authority_now_ms(struct idmint_authority *a);
/*
 * Open with a borrowed clock (the handle's, which must outlive the
 * authority; NULL: the authority's own system clock) and a bearer token for
 * http:// (NULL: $IDMINT_TOKEN).
 */
int idmint__authority_open_clock(struct idmint_authority **out, const char *url, uint32_t region,
                                 struct clock *clk, const char *token);
/*
 * Take a lease as idmint__authority_lease_take, then wait (at most
 * @p clock_wait_ms) until the authority's clock is past the E found and
 * renew, so that every time value this holder mints lies after the previous
 * holder's; on failure the id is released again. As take, and IDMINT_ECLOCK.
 */
int idmint__authority_lease_acquire(struct idmint_authority *a, const idmint_ns_info *ns,
                                    uint32_t lease_ms, uint32_t clock_wait_ms,
                                    struct idmint__lease *lease);

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
/* ==== thread_state.c: per-thread heap blocks ==== */

enum idmint__slot { IDMINT__SLOT_ERRMSG, IDMINT__SLOT_CSPRNG, IDMINT__SLOT_COUNT };

/*
 * This thread's block of @p size bytes for @p slot (zeroed when new: then
 * *is_new is 1), freed when the thread exits; NULL when memory ran out. A
 * slot's size never changes. Keeps big per-thread state out of TLS, so that
 * the library can be loaded with dlopen() (thread_state.c).
 */
void *idmint__thread_slot(enum idmint__slot slot, size_t size, int *is_new);

/*
 * Where the key under which @p rs caches chunks in idmint__range_tls lives
 * (never reused; replaced when the supply stops after a restore, which
 * empties every thread's cache). Read it relaxed on the fast path.
 */
const _Atomic uint64_t *idmint__range_cache_key(struct range_supply *rs);

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
/*
 * Mint up to @p n values of what the supply holds now (the thread's chunk,
 * then the shared ranges) into @p ids, never waiting: *got of them. When it
 * is dry, the refill thread is asked and *wait_ms is how long the last
 * reservation took (at least 1). 0; IDMINT_ERESTORED when nothing was
 * minted and the store was found restored. A refill's other errors are
 * reported by the waiting calls (idmint__range_next_n, with its deadline).
 * Thread-safe.
 */
int idmint__range_try_next_n(struct range_supply *rs, uint64_t *ids, size_t n, size_t *got,
                             uint32_t *wait_ms);
/* What a range supply holds and how fast it goes (idmint_info). */
struct idmint__range_figures {
    uint64_t left;         /* values reserved and not yet handed out */
    uint64_t block;        /* values the latest reservation asked for */
    uint64_t rate;         /* values handed out per second, as last sampled; 0: unknown */
    uint64_t budget_ms;    /* left at that rate: how long it lasts without the authority */
    uint64_t reservations; /* ranges reserved since the handle opened */
};
/* Fill @p out. Thread-safe. */
void idmint__range_figures(struct range_supply *rs, struct idmint__range_figures *out);
/* 0, or IDMINT_ERESTORED once the supply stopped because the store went backwards. */
int idmint__range_status(struct range_supply *rs);
/*
 * The request id of a supply's @p seq-th reservation into @p out: 16 hex
 * digits, so that text order is issue order and the store's record index
 * grows at one edge per incarnation. Decimal ids ("9" after "10") landed
 * mid-page and split leaves: 868 bytes of PostgreSQL WAL per reservation
 * against 465. Pure; thread-safe.
 */
void idmint__range_request_id(uint64_t seq, char out[IDMINT__REQUEST_ID_LEN]);
/*
 * How a handle's lease or ranges end (idmint__lease_close, idmint__range_close):
 * RELEASE gives them back (idmint_close); FORKED leaves the store and the
 * mutexes alone (a copy of the process: they are the parent's) and frees
 * memory only; CRASH closes the store connection and gives nothing back, as
 * a process killed with SIGKILL would (the simulator's crash).
 */
enum idmint__end { IDMINT__END_RELEASE = 0, IDMINT__END_FORKED = 1, IDMINT__END_CRASH = 2 };
/* Stop the refill thread, forget our finished records, close the authority, free. NULL: no-op. */
void idmint__range_close(struct range_supply *rs, int how);
/*
 * Driven mode: one pass of the refill work (a due history check, else a
 * due refill), as the refill thread would make. Returns the last
 * reservation's outcome (0 or an IDMINT_E* code; IDMINT_ERESTORED is final).
 */
int idmint__range_drive(struct range_supply *rs);

/* ==== lease.c: take, renew, release ==== */

struct lease_keeper;

/*
 * Acquire a worker lease of snowflake namespace @p ns through @p a (owned by
 * the keeper from now on; its clock is the handle's), set up @p sf, and
 * start the renewal thread, which keeps sf->lease_until current.
 */
int idmint__lease_open(struct lease_keeper **out, struct idmint_authority *a,
                       const idmint_ns_info *ns, const idmint_options *opts,
                       const char *incarnation, struct snowflake *sf);
/* The lease as last taken or renewed. */
void idmint__lease_get(struct lease_keeper *lk, struct idmint__lease *out);
/* 0 after a successful renewal (or none yet), else the last renewal's IDMINT_E* code. */
int idmint__lease_status(struct lease_keeper *lk);
/*
 * Stop renewal and end the lease as @p how says (enum idmint__end): a
 * release lets the next holder mint after @p last_time, the last time value
 * used (never before the E found). NULL is a no-op.
 */
void idmint__lease_close(struct lease_keeper *lk, uint64_t last_time, int how);
/*
 * Driven mode: one pass of the renewal work (a due renewal, else a due
 * history check), as the renewal thread would make. Returns the lease's
 * status (idmint__lease_status).
 */
int idmint__lease_drive(struct lease_keeper *lk);

#endif /* IDMINT_INTERNAL_H */
