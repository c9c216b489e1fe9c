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
#define RETRY_AFTER_MS 100
/* How often the worker looks at its leases when nobody wakes it. */
#define IDLE_WAKE_MS   10

typedef struct held {
    idmint *handle;
    uint32_t epoch;       /* the slot's epoch the handle was opened for */
    uint32_t answered;    /* the slot's requests answered so far */
    int64_t failed_at_ms; /* when the last attempt failed; 0 after a success */
    int failed_code;
    char failed_message[SUPPLY_MSG_MAX];
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

static void drop_handle(int index, held *h, const supply_demand *d)
{
    sigset_t saved;
    signals_block(&saved);
    idmint_close(h->handle);
    signals_restore(&saved);
    h->handle = NULL;
    (void)supply_publish_handle(index, d->epoch, false, false, 0, 0, false);
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
    if (rc == 0 && d->wants_ids && h->handle == NULL) {
        rc = open_handle(d->name, &h->handle);
    }
    strlcpy(message, rc != 0 ? idmint_errmsg() : "", sizeof message);
    signals_restore(&saved);
    if (rc != 0) {
        remember_failure(h, rc, message);
        (void)supply_fail(index, d->epoch, d->asked, rc, message, false);
        return;
    }
    h->failed_at_ms = 0;
    (void)supply_publish_definition(index, d->epoch, &info);
    if (h->handle != NULL && d->wants_ids) {
        idmint_handle_info hi;
        idmint_handle_info_init(&hi);
        signals_block(&saved);
        rc = idmint_info(h->handle, &hi);
        signals_restore(&saved);
        if (rc == 0) {
            (void)supply_publish_handle(index, d->epoch, true, hi.is_range != 0, hi.worker_id,
                                        hi.generation, true);
        }
    }
}

/* A lease or range that is gone for good: only a new handle mints again. */
static bool is_final(int code)
{
    return code == IDMINT_ELEASELOST || code == IDMINT_ERESTORED || code == IDMINT_EFORKED ||
           code == IDMINT_EDISABLED || code == IDMINT_EEXHAUSTED;
}

/* Stop at once when the handle's lease is gone: the ring's IDs go too. */
static bool check_lease(int index, held *h, const supply_demand *d)
{
    sigset_t saved;
    int status;
    char message[SUPPLY_MSG_MAX];

    signals_block(&saved);
    status = idmint_lease_status(h->handle);
    signals_restore(&saved);
    /* A disabled namespace mints on until the lease's end, as every holder does. */
    if (status == 0 || !is_final(status) || status == IDMINT_EDISABLED) {
        return true;
    }
    snprintf(message, sizeof message, "%s: the server stopped minting namespace \"%s\"",
             idmint_strerror(status), d->name);
    ereport(LOG, (errmsg("idmint: %s", message)));
    drop_handle(index, h, d);
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
 * Mint into the ring up to its target; returns how soon to come back (ms).
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
    int rc;
    bool starved;
    sigset_t saved;
    char message[SUPPLY_MSG_MAX] = "";

    if (d->buffered >= d->fill_target / 2 && d->buffered > 0) {
        return IDLE_WAKE_MS;
    }
    want = d->fill_target - (d->buffered < d->fill_target ? d->buffered : d->fill_target);
    if (want == 0) {
        return IDLE_WAKE_MS;
    }
    signals_block(&saved);
    rc = idmint_try_next_n(h->handle, batch, want, &got, &wait_ms);
    signals_restore(&saved);
    if (rc == 0 && !append_batch(index, d, batch, got)) {
        return 0;
    }
    starved = d->buffered + got < d->fill_target / 2 ||
              (d->buffered + got == 0 && d->asked != h->answered);
    if (rc == 0 && got < want && starved) {
        uint32_t few =
            want - (uint32_t)got < SUPPLY_MIN_FILL ? want - (uint32_t)got : SUPPLY_MIN_FILL;
        signals_block(&saved);
        rc = idmint_next_n(h->handle, batch, few);
        signals_restore(&saved);
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
            drop_handle(index, h, d);
        }
        remember_failure(h, rc, message);
        (void)supply_fail(index, d->epoch, d->asked, rc, message, is_final(rc));
        h->answered = d->asked;
        return IDLE_WAKE_MS;
    }
    if (got > 0) {
        h->answered = d->asked;
    }
    return got >= want ? IDLE_WAKE_MS : (long)wait_ms;
}

static long serve_slot(int index)
{
    supply_demand d;
    held *h = &held_by_slot[index];

    if (!supply_demand_of(index, &d)) {
        return IDLE_WAKE_MS;
    }
    if (h->epoch != d.epoch) {
        /* The slot serves another name now: what was held for the old one goes. */
        if (h->handle != NULL) {
            drop_handle(index, h, &d);
        }
        memset(h, 0, sizeof *h);
        h->epoch = d.epoch;
    }
    if (d.asked != h->answered && (h->handle == NULL || !d.wants_ids)) {
        answer_requests(index, h, &d);
    }
    if (h->handle == NULL || !check_lease(index, h, &d)) {
        return IDLE_WAKE_MS;
    }
    return fill_ring(index, h, &d);
}

static void close_all(void)
{
    sigset_t saved;
    signals_block(&saved);
    for (int i = 0; i < slot_count; i++) {
        /* Releases each lease: E moves to its last minted unit + 1, and the id is free at once. */
        idmint_close(held_by_slot[i].handle);
        held_by_slot[i].handle = NULL;
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
 * IDLE_WAKE_MS, or after the library call in progress.
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
        long sleep_ms = IDLE_WAKE_MS;
        for (int i = 0; i < slot_count && !quit_requested; i++) {
            long next = serve_slot(i);
            if (next < sleep_ms) {
                sleep_ms = next;
            }
        }
        if (quit_requested) {
            break;
        }
        if (sleep_ms > 0) {
            (void)WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, sleep_ms,
                            PG_WAIT_EXTENSION);
            ResetLatch(MyLatch);
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
