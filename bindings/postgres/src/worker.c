/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The background worker: the one process of the server that holds idmint
 * handles. It opens a namespace's handle when a session first asks for its
 * IDs, keeps the ring of each namespace filled (supply.h), and answers the
 * sessions' requests with IDs, the namespace's definition or the library's
 * error. One lease (or range supply) per namespace serves every session,
 * for as long as the server runs.
 *
 * libidmint runs threads of its own (lease renewal, range refill). They must
 * never run PostgreSQL's signal handlers, which expect the main thread: every
 * library call is made with all signals blocked, and the threads it starts
 * inherit that mask.
 */
#include "postgres.h"

#include <signal.h>
#include <string.h>

#include "fmgr.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/wait_event.h"

#include "idmint.h"
#include "settings.h"
#include "supply.h"

PGDLLEXPORT void idmint_pg_worker_main(Datum arg);

/* A failed open is not tried again sooner than this: its error answers the requests meanwhile. */
#define RETRY_AFTER_MS    100
/* How often (µs) the worker looks at its leases when nobody wakes it. */
#define IDLE_WAKE_US      10000
/* How long (ms) a namespace counts as busy after a session found its ring empty. */
#define BUSY_AFTER_DRY_MS 50
/*
 * Shorter sleeps are taken to the microsecond: the latch's timeout counts
 * whole ms and often wakes later still, sleeping through a time unit.
 */
#define PRECISE_SLEEP_US  2000
/* How long after a time unit begins the worker wakes to mint it (µs). */
#define UNIT_SLACK_US     20

/*
 * A snowflake namespace whose sessions found its ring empty at this many
 * time units in a row takes IDs faster than its worker ids make them: the
 * server takes one more lease on it (up to idmint.max_leases)...
 */
#define DRY_UNITS_FOR_LEASE 20
/* ...and gives the extra ones back after this long (ms) without a dry ring. */
#define EXTRA_LEASE_IDLE_MS 10000

typedef struct held {
    /* The handles on the namespace, by worker id ascending: a unit's IDs of
     * a lower worker id are below those of a higher one, so a unit minted
     * from each in turn is increasing. [0] answers requests and waits. */
    idmint *handles[MAX_LEASES_LIMIT];
    uint32_t worker_ids[MAX_LEASES_LIMIT];
    int leases;
    int dry_units;        /* busy fills in a row that found the ring empty */
    int64_t dry_seen_ms;  /* the last of those */
    uint32_t epoch;       /* the slot's epoch the handle was opened for */
    uint32_t answered;    /* the slot's requests answered so far */
    int64_t failed_at_ms; /* when the last attempt failed; 0 after a success */
    int failed_code;
    char failed_message[SUPPLY_MSG_MAX];
    bool is_snowflake; /* the definition read says so: its layout follows */
    idmint_layout layout;
    uint64_t last_minted; /* the last ID minted into the ring */
} held;

static held *held_by_slot;
static int slot_count;
static idmint_authority *admin;
static volatile sig_atomic_t quit_requested;

/* ---- library calls, with signals blocked ---- */

static void signals_block(sigset_t *saved)
{
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, saved);
}

static void signals_restore(const sigset_t *saved)
{
    pthread_sigmask(SIG_SETMASK, saved, NULL);
}

static const char *authority_url(void)
{
    return idmint_pg_authority != NULL && idmint_pg_authority[0] != '\0' ? idmint_pg_authority
                                                                         : NULL;
}

static int read_definition(const char *ns, idmint_ns_info *info)
{
    int rc = 0;
    if (admin == NULL) {
        rc = idmint_authority_open(&admin, authority_url(), (uint32_t)idmint_pg_region);
    }
    if (rc == 0) {
        idmint_ns_info_init(info, IDMINT_KIND_SNOWFLAKE);
        rc = idmint_ns_get(admin, ns, info);
        if (rc == IDMINT_EUNAVAILABLE || rc == IDMINT_ESTORE) {
            /* A connection that broke stays broken: open a new one next time. */
            idmint_authority_close(admin);
            admin = NULL;
        }
    }
    return rc;
}

static int open_handle(const char *ns, idmint **out)
{
    idmint_options opts;
    idmint_options_init(&opts);
    opts.region = (uint32_t)idmint_pg_region;
    if (idmint_pg_lease_ms > 0) {
        opts.lease_ms = (uint32_t)idmint_pg_lease_ms;
    }
    opts.max_borrow_ms = (uint32_t)idmint_pg_max_borrow_ms;
    if (idmint_pg_renew_ms > 0) {
        opts.renew_ms = (uint32_t)idmint_pg_renew_ms;
    }
    return idmint_open(out, authority_url(), ns, &opts);
}

/* ---- one slot ---- */

static void remember_failure(held *h, int code, const char *message)
{
    h->failed_at_ms = supply_now_ms();
    h->failed_code = code;
    strlcpy(h->failed_message, message != NULL ? message : "", sizeof h->failed_message);
}

/* Close handles [from, leases) of @p h, releasing their leases. */
static void close_handles(held *h, int from)
{
    sigset_t saved;
    signals_block(&saved);
    while (h->leases > from) {
        h->leases--;
        idmint_close(h->handles[h->leases]);
        h->handles[h->leases] = NULL;
    }
    signals_restore(&saved);
}

static void drop_handles(int index, held *h, const supply_demand *d)
{
    close_handles(h, 0);
    (void)supply_publish_handle(index, d->epoch, false, false, 0, 0, 0, false);
}

/* Publish what the worker holds for slot @p index; @p opened counts a new handle. */
static void publish_handles(int index, const held *h, const supply_demand *d, bool opened)
{
    idmint_handle_info hi;
    int rc;
    sigset_t saved;
    idmint_handle_info_init(&hi);
    signals_block(&saved);
    rc = idmint_info(h->handles[0], &hi);
    signals_restore(&saved);
    if (rc == 0) {
        (void)supply_publish_handle(index, d->epoch, true, hi.is_range != 0, hi.worker_id,
                                    hi.generation, (uint32_t)h->leases, opened);
    }
}

/*
 * One more lease on a snowflake namespace whose sessions outrun it. The new
 * handle goes in by worker id; a failure only means no more capacity.
 */
static void add_lease(int index, held *h, const supply_demand *d)
{
    idmint *m = NULL;
    idmint_handle_info hi;
    int rc, at;
    sigset_t saved;

    signals_block(&saved);
    rc = open_handle(d->name, &m);
    idmint_handle_info_init(&hi);
    if (rc == 0) {
        rc = idmint_info(m, &hi);
    }
    if (rc != 0) {
        ereport(LOG, (errmsg("idmint: namespace \"%s\": no further lease: %s", d->name,
                             idmint_errmsg())));
        idmint_close(m);
        signals_restore(&saved);
        return;
    }
    signals_restore(&saved);
    for (at = h->leases; at > 0 && h->worker_ids[at - 1] > hi.worker_id; at--) {
        h->handles[at] = h->handles[at - 1];
        h->worker_ids[at] = h->worker_ids[at - 1];
    }
    h->handles[at] = m;
    h->worker_ids[at] = hi.worker_id;
    h->leases++;
    ereport(LOG, (errmsg("idmint: namespace \"%s\": sessions outrun %d lease(s): took worker id "
                         "%u as well",
                         d->name, h->leases - 1, hi.worker_id)));
    publish_handles(index, h, d, true);
}

/* Answer the slot's new requests: read its definition, open its handle. */
static void answer_requests(int index, held *h, const supply_demand *d)
{
    idmint_ns_info info;
    int rc;
    sigset_t saved;
    char message[SUPPLY_MSG_MAX];

    if (h->failed_at_ms != 0 && supply_now_ms() - h->failed_at_ms < RETRY_AFTER_MS) {
        (void)supply_fail(index, d->epoch, d->asked, h->failed_code, h->failed_message, false);
        h->answered = d->asked;
        return;
    }
    h->answered = d->asked;
    signals_block(&saved);
    rc = read_definition(d->name, &info);
    if (rc == 0 && d->wants_ids && h->leases == 0) {
        rc = open_handle(d->name, &h->handles[0]);
        h->leases = rc == 0 ? 1 : 0;
    }
    strlcpy(message, rc != 0 ? idmint_errmsg() : "", sizeof message);
    signals_restore(&saved);
    if (rc != 0) {
        remember_failure(h, rc, message);
        (void)supply_fail(index, d->epoch, d->asked, rc, message, false);
        return;
    }
    h->failed_at_ms = 0;
    h->is_snowflake = info.kind == IDMINT_KIND_SNOWFLAKE;
    h->layout = info.layout;
    (void)supply_publish_definition(index, d->epoch, &info);
    if (h->leases == 1 && d->wants_ids) {
        idmint_handle_info hi;
        idmint_handle_info_init(&hi);
        signals_block(&saved);
        rc = idmint_info(h->handles[0], &hi);
        signals_restore(&saved);
        h->worker_ids[0] = rc == 0 ? hi.worker_id : 0;
        publish_handles(index, h, d, true);
    }
}

/* A lease or range that is gone for good: only a new handle mints again. */
static bool is_final(int code)
{
    return code == IDMINT_ELEASELOST || code == IDMINT_ERESTORED || code == IDMINT_EFORKED ||
           code == IDMINT_EDISABLED || code == IDMINT_EEXHAUSTED;
}

/* Stop at once when a handle's lease is gone: every handle and the ring's IDs go too. */
static bool check_lease(int index, held *h, const supply_demand *d)
{
    sigset_t saved;
    int status = 0;
    char message[SUPPLY_MSG_MAX];

    signals_block(&saved);
    for (int i = 0; i < h->leases; i++) {
        int s = idmint_lease_status(h->handles[i]);
        /* A disabled namespace mints on until the lease's end, as every holder does. */
        if (s != 0 && is_final(s) && s != IDMINT_EDISABLED) {
            status = s;
            break;
        }
    }
    signals_restore(&saved);
    if (status == 0) {
        return true;
    }
    snprintf(message, sizeof message, "%s: the server stopped minting namespace \"%s\"",
             idmint_strerror(status), d->name);
    ereport(LOG, (errmsg("idmint: %s", message)));
    drop_handles(index, h, d);
    remember_failure(h, status, message);
    (void)supply_fail(index, d->epoch, d->asked, status, message, true);
    return false;
}

/* Append what a library call minted; false when the slot went to another name. */
static bool append_batch(int index, const supply_demand *d, const uint64_t *ids, size_t got)
{
    return got == 0 || supply_append(index, d->epoch, ids, (uint32_t)got, supply_now_ms());
}

/*
 * How long (µs) until the time unit after the one of @p h's last minted ID
 * begins, and a little more: when a busy namespace's unit is used up, the
 * worker wakes just as the next one begins, where the latch's millisecond
 * timeout could sleep through a whole unit, capacity lost for good.
 */
static long until_next_unit_us(const held *h, long fallback_us)
{
    idmint_decoded dec;
    int64_t next_start_us, now_us;
    if (!h->is_snowflake || h->last_minted == 0 ||
        idmint_decode(&h->layout, h->last_minted, &dec) != 0) {
        return fallback_us;
    }
    next_start_us = (dec.unix_ms + (int64_t)h->layout.unit_ms) * 1000 + UNIT_SLACK_US;
    now_us = supply_now_us();
    if (next_start_us <= now_us) {
        return UNIT_SLACK_US;
    }
    return next_start_us - now_us < fallback_us ? (long)(next_start_us - now_us) : fallback_us;
}

/*
 * Mint into the ring up to its target; returns how soon to come back (µs).
 * First what the handle has now, without waiting. While the ring is below
 * half its target, sessions take IDs as fast as the namespace makes them:
 * then the library waits for the next time unit, to the microsecond (the
 * latch would wake a whole ms late, and a unit the worker sleeps through is
 * capacity lost for good); and a dry range says why it is dry only to a
 * call that waits.
 */
static long fill_ring(int index, held *h, const supply_demand *d)
{
    static uint64_t batch[SUPPLY_RING];
    uint32_t want, wait_ms = 0;
    size_t got = 0;
    int rc = 0;
    bool starved;
    sigset_t saved;
    char message[SUPPLY_MSG_MAX] = "";
    int64_t now_ms = supply_now_ms();

    /*
     * A busy namespace, one whose sessions found its ring empty lately (they
     * take IDs faster than the namespace makes them), is given all the ring
     * has room for in every time unit, whatever it holds: a snowflake unit
     * not minted while it lasts is capacity lost for good. A quiet one is
     * filled to its target when below it, so that little ages out unused.
     */
    bool busy = d->dry_ms_ago >= 0 && d->dry_ms_ago < BUSY_AFTER_DRY_MS;
    if (h->leases > 1 && now_ms - h->dry_seen_ms > EXTRA_LEASE_IDLE_MS) {
        close_handles(h, 1); /* quiet again: the extra worker ids are free at once */
        publish_handles(index, h, d, false);
    }
    if (busy ? d->buffered >= SUPPLY_RING : d->buffered >= d->fill_target) {
        return busy ? until_next_unit_us(h, 1000) : IDLE_WAKE_US;
    }
    want = (busy ? SUPPLY_RING : d->fill_target) - d->buffered;
    /*
     * Each lease in turn, lowest worker id first: one unit's IDs, increasing.
     * The first gives all its unit holds; the others only what the ring's
     * target still lacks, so that little ages out unused.
     */
    uint32_t needed = d->fill_target > d->buffered ? d->fill_target - d->buffered : 0;
    signals_block(&saved);
    for (int i = 0; i < h->leases && got < want && rc == 0 && (i == 0 || got < needed); i++) {
        size_t more = 0;
        uint32_t wait_i = 0;
        rc = idmint_try_next_n(h->handles[i], batch + got, want - got, &more, &wait_i);
        got += more;
        wait_ms = i == 0 || wait_i < wait_ms ? wait_i : wait_ms;
    }
    signals_restore(&saved);
    if (got > 0) {
        h->last_minted = batch[got - 1];
    }
    if (got > 0 && !append_batch(index, d, batch, got)) {
        return 0;
    }
    if (h->is_snowflake && busy && got < want) {
        /* The units are used up and the ring is still short: count the units it ran dry. */
        h->dry_units = d->buffered == 0 ? h->dry_units + 1 : 0;
        if (d->buffered == 0) {
            h->dry_seen_ms = now_ms;
        }
        if (h->dry_units >= DRY_UNITS_FOR_LEASE && h->leases < idmint_pg_max_leases) {
            h->dry_units = 0;
            add_lease(index, h, d);
        }
    }
    starved = d->buffered + got < d->fill_target / 2 ||
              (d->buffered + got == 0 && d->asked != h->answered);
    if (rc == 0 && got < want && starved) {
        uint32_t few = want - (uint32_t)got; /* at least 1: got < want */
        if (few > SUPPLY_MIN_FILL) {
            few = SUPPLY_MIN_FILL;
        }
        signals_block(&saved);
        rc = idmint_next_n(h->handles[0], batch, few);
        signals_restore(&saved);
        if (rc == 0 && few > 0) {
            h->last_minted = batch[few - 1];
        }
        if (rc == 0 && !append_batch(index, d, batch, few)) {
            return 0;
        }
        got += rc == 0 ? few : 0;
        wait_ms = 0; /* come back at once for the rest of the new unit */
    }
    if (rc != 0) {
        signals_block(&saved);
        strlcpy(message, idmint_errmsg(), sizeof message);
        signals_restore(&saved);
        if (is_final(rc)) {
            ereport(LOG, (errmsg("idmint: namespace \"%s\": %s", d->name, message)));
            drop_handles(index, h, d);
        }
        remember_failure(h, rc, message);
        (void)supply_fail(index, d->epoch, d->asked, rc, message, is_final(rc));
        h->answered = d->asked;
        return IDLE_WAKE_US;
    }
    if (got > 0) {
        h->answered = d->asked;
    }
    if (got >= want) {
        return IDLE_WAKE_US;
    }
    return until_next_unit_us(h, wait_ms > 0 ? (long)wait_ms * 1000 : UNIT_SLACK_US);
}

static long serve_slot(int index)
{
    supply_demand d;
    held *h = &held_by_slot[index];

    if (!supply_demand_of(index, &d)) {
        return IDLE_WAKE_US;
    }
    if (h->epoch != d.epoch) {
        /* The slot serves another name now: what was held for the old one goes. */
        drop_handles(index, h, &d);
        memset(h, 0, sizeof *h);
        h->epoch = d.epoch;
    }
    if (d.asked != h->answered && (h->leases == 0 || !d.wants_ids)) {
        answer_requests(index, h, &d);
    }
    if (h->leases == 0 || !check_lease(index, h, &d)) {
        return IDLE_WAKE_US;
    }
    return fill_ring(index, h, &d);
}

static void close_all(void)
{
    sigset_t saved;
    signals_block(&saved);
    for (int i = 0; i < slot_count; i++) {
        /* Releases each lease: E moves to its last minted unit + 1, and the id is free at once. */
        for (int j = 0; j < held_by_slot[i].leases; j++) {
            idmint_close(held_by_slot[i].handles[j]);
        }
        held_by_slot[i].leases = 0;
    }
    idmint_authority_close(admin);
    admin = NULL;
    signals_restore(&saved);
}

/*
 * The postmaster sends SIGQUIT when a backend crashed or at an immediate
 * shutdown. The default is to exit at once; this worker first releases its
 * leases (which touches only its own memory and the authority, never shared
 * memory), so that a crash of some backend does not leave a worker id
 * resting for a whole lease. The main loop sees the flag within
 * IDLE_WAKE_US, or after the library call in progress.
 */
static void handle_sigquit(SIGNAL_ARGS)
{
    (void)postgres_signal_arg;
    quit_requested = 1;
}

void idmint_pg_worker_main(Datum arg)
{
    (void)arg;
    pqsignal(SIGHUP, SignalHandlerForConfigReload);
    pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
    pqsignal(SIGQUIT, handle_sigquit);
    BackgroundWorkerUnblockSignals();

    slot_count = supply_slot_count();
    held_by_slot = MemoryContextAllocZero(TopMemoryContext, sizeof(held) * (Size)slot_count);
    supply_worker_attach();
    ereport(LOG, (errmsg("idmint: supply worker started, authority %s",
                         authority_url() != NULL ? "from idmint.authority"
                                                 : "by the library's default")));

    while (!ShutdownRequestPending && !quit_requested) {
        long sleep_us = IDLE_WAKE_US;
        for (int i = 0; i < slot_count && !quit_requested; i++) {
            long next = serve_slot(i);
            if (next < sleep_us) {
                sleep_us = next;
            }
        }
        if (quit_requested) {
            break;
        }
        if (sleep_us >= PRECISE_SLEEP_US) {
            (void)WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
                            sleep_us / 1000, PG_WAIT_EXTENSION);
            ResetLatch(MyLatch);
        } else if (sleep_us > 0) {
            /* A latch set meanwhile stays set for the next wait. */
            pg_usleep(sleep_us);
        }
        if (ConfigReloadPending) {
            ConfigReloadPending = false;
            ProcessConfigFile(PGC_SIGHUP);
        }
    }
    close_all();
    if (quit_requested) {
        _exit(2);
    }
    proc_exit(0);
}
