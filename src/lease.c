/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A handle's worker lease over time: acquire it (the authority takes it and
 * waits past the E found), renew in a background thread, stop at once when
 * a renewal is refused, release on close. The rules are the authority's
 * (authority_lease.c). The minting engine only ever sees
 * sf->lease_until, which this file moves forward (or to 0 when the lease is
 * lost); the store is touched only by the opening thread and then by the
 * renewal thread, never concurrently.
 */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* After a failed renewal, try again this often (bounded by renew_ms). */
#define RENEW_RETRY_MS 250u

struct lease_keeper {
    struct idmint_authority *a; /* owned; used by one thread at a time */
    idmint_ns_info ns;
    struct snowflake *sf; /* borrowed from the handle */
    uint32_t lease_ms;
    uint32_t renew_ms;
    uint32_t check_ms;           /* the store's history is checked this often */
    struct idmint__history seen; /* the newest history proven ours; renewal thread only */
    pthread_mutex_t mu;          /* guards lease and is_stopping */
    pthread_cond_t cv;           /* wakes the renewal thread to stop */
    struct idmint__lease lease;  /* its history: the latest the store showed us */
    uint64_t renew_at;           /* monotonic ms of the next renewal */
    uint64_t check_at;           /* monotonic ms of the next history check */
    int is_stopping;
    int is_done; /* driven mode: renewal stopped for good */
    int has_thread;
    _Atomic int renew_err; /* last renewal's failure, 0 after a success */
    pthread_t thread;
};

/* Wait on lk->cv for up to @p ms; lk->mu held. Returns early when stopping. */
static void wait_ms_locked(struct lease_keeper *lk, uint32_t ms)
{
    struct timespec ts = idmint__monotonic_after_ms(ms);

    while (!lk->is_stopping && pthread_cond_timedwait(&lk->cv, &lk->mu, &ts) != ETIMEDOUT)
        ;
}

static void publish_until(struct snowflake *sf, uint64_t until)
{
    uint64_t old = atomic_load(&sf->lease_until);

    /* Only forward: a late reply from an older renewal must not shrink E
     * below what a newer one granted; 0 (lost) is final. */
    while (old != 0 && old < until && !atomic_compare_exchange_weak(&sf->lease_until, &old, until))
        ;
}

/* Stop minting at once for good with @p rc: the lease is another's, or the store forgot it. */
static void stop_locked(struct lease_keeper *lk, int rc)
{
    atomic_store(&lk->renew_err, rc);
    atomic_store(&lk->sf->lease_err, rc);
    atomic_store(&lk->sf->lease_until, 0);
}

/*
 * One pass of the renewal loop, lk->mu held (released around the store):
 * renew when renew_at has come; else, when check_at has, check that the
 * store still holds the history this lease is part of
 * (idmint__authority_history_check), so that a store put back in time stops
 * this process within check_ms, not at its next renewal. Minting never
 * waits on either: only sf->lease_until moves. Returns how many ms to wait
 * before the next pass (0: at once), or -1 when renewal has stopped for good.
 */
static int64_t renew_step_locked(struct lease_keeper *lk)
{
    struct idmint__lease copy;
    uint64_t now = idmint__deadline_now_ms();
    int rc, is_renewal;

    if (now < lk->renew_at && now < lk->check_at)
        return (int64_t)((lk->renew_at < lk->check_at ? lk->renew_at : lk->check_at) - now);
    is_renewal = now >= lk->renew_at;
    copy = lk->lease;
    pthread_mutex_unlock(&lk->mu);

    idmint__store_gate_enter();
    if (is_renewal) {
        rc = idmint__authority_lease_renew(lk->a, &lk->ns, &copy, lk->lease_ms);
        if (rc == 0)
            rc = idmint__authority_history_adopt(lk->a, lk->ns.name, &lk->seen, &copy.history);
        /* A renewal that fails like an outage may be a store put back
         * (a file replaced under us refuses writes): the check tells. */
        else if (rc != IDMINT_ELEASELOST && rc != IDMINT_ERESTORED && rc != IDMINT_EDISABLED &&
                 idmint__authority_history_check(lk->a, lk->ns.name, &lk->seen, 0) ==
                     IDMINT_ERESTORED)
            rc = IDMINT_ERESTORED;
    } else {
        rc = idmint__authority_history_check(lk->a, lk->ns.name, &lk->seen, 1);
    }
    idmint__store_gate_leave();

    pthread_mutex_lock(&lk->mu);
    lk->check_at = idmint__deadline_now_ms() + lk->check_ms;
    if (!is_renewal) {
        if (rc == IDMINT_ERESTORED) {
            stop_locked(lk, rc);
            return -1;
        }
        return 0; /* an outage or a witness folder to fix: the renewal says */
    }
    atomic_store(&lk->renew_err, rc);
    if (rc == 0) {
        lk->lease = copy;
        publish_until(lk->sf, copy.lease_until);
        lk->renew_at = idmint__deadline_now_ms() + lk->renew_ms;
    } else if (rc == IDMINT_ELEASELOST || rc == IDMINT_ERESTORED) {
        /* Someone else holds the id now, or the store went back to before
         * our lease and may give the id out again: stop minting at once. */
        stop_locked(lk, rc);
        return -1;
    } else if (rc == IDMINT_EDISABLED) {
        /* Disabled: the lease is still ours until E, so minting runs
         * on to it and then fails with this code, never a duplicate. */
        atomic_store(&lk->sf->lease_err, IDMINT_EDISABLED);
        return -1;
    } else {
        /* Outage: keep minting until E, keep trying meanwhile. */
        lk->renew_at = idmint__deadline_now_ms() +
                       (lk->renew_ms < RENEW_RETRY_MS ? lk->renew_ms : RENEW_RETRY_MS);
    }
    return 0;
}

static void *renew_main(void *arg)
{
    struct lease_keeper *lk = arg;

    pthread_mutex_lock(&lk->mu);
    while (!lk->is_stopping) {
        int64_t wait = renew_step_locked(lk);

        if (wait < 0)
            break;
        if (wait > 0)
            wait_ms_locked(lk, (uint32_t)wait);
    }
    pthread_mutex_unlock(&lk->mu);
    return NULL;
}

int idmint__lease_drive(struct lease_keeper *lk)
{
    pthread_mutex_lock(&lk->mu);
    if (!lk->is_stopping && !lk->is_done && renew_step_locked(lk) < 0)
        lk->is_done = 1;
    pthread_mutex_unlock(&lk->mu);
    return atomic_load(&lk->renew_err);
}

int idmint__lease_open(struct lease_keeper **out, struct idmint_authority *a,
                       const idmint_ns_info *ns, const idmint_options *opts,
                       const char *incarnation, struct snowflake *sf)
{
    const idmint_layout *l = &ns->layout;
    struct lease_keeper *lk;
    uint64_t borrow;
    int rc;

    lk = calloc(1, sizeof(*lk));
    if (lk == NULL) {
        idmint__store_gate_enter();
        idmint_authority_close(a);
        idmint__store_gate_leave();
        return IDMINT_ENOMEM;
    }
    lk->a = a;
    lk->ns = *ns;
    lk->sf = sf;
    lk->lease_ms = opts->lease_ms;
    lk->renew_ms = opts->renew_ms;
    lk->check_ms = idmint__history_check_ms(opts);
    pthread_mutex_init(&lk->mu, NULL);
    idmint__cond_init_monotonic(&lk->cv);
    lk->lease.region = opts->region;
    memcpy(lk->lease.holder, incarnation, sizeof(lk->lease.holder));

    /* Before anything is taken: a store behind what this host saw, or a
     * marked backup, grants nothing to this process. */
    idmint__store_gate_enter();
    rc = idmint__authority_history_check(a, ns->name, &lk->seen, 0);
    if (rc == 0)
        rc = idmint__authority_lease_acquire(a, ns, lk->lease_ms, opts->clock_wait_ms, &lk->lease);
    if (rc == 0 &&
        (rc = idmint__authority_history_adopt(a, ns->name, &lk->seen, &lk->lease.history)) != 0) {
        char why[512];

        snprintf(why, sizeof(why), "%s", idmint_errmsg());
        (void)idmint__authority_lease_release(a, ns, &lk->lease, lk->lease.fence_found);
        idmint__fail(rc, "%s", why);
    }
    idmint__store_gate_leave();
    if (rc != 0)
        goto fail;
    borrow = (opts->max_borrow_ms + l->unit_ms - 1) / l->unit_ms;
    idmint__snowflake_init(sf, l, lk->lease.region, lk->lease.worker_id, lk->lease.fence_found,
                           lk->lease.lease_until, borrow);
    lk->renew_at = idmint__deadline_now_ms() + lk->renew_ms;
    lk->check_at = idmint__deadline_now_ms() + lk->check_ms;
    if (idmint__is_driven()) { /* the driver runs renew_step_locked (idmint__lease_drive) */
        *out = lk;
        return 0;
    }
    if (pthread_create(&lk->thread, NULL, renew_main, lk) != 0) {
        idmint__store_gate_enter();
        (void)idmint__authority_lease_release(a, ns, &lk->lease, lk->lease.fence_found);
        idmint__store_gate_leave();
        rc = idmint__fail(IDMINT_ENOMEM, "cannot start the renewal thread");
        goto fail;
    }
    lk->has_thread = 1;
    *out = lk;
    return 0;
fail:
    idmint__store_gate_enter();
    idmint_authority_close(a);
    idmint__store_gate_leave();
    pthread_cond_destroy(&lk->cv);
    pthread_mutex_destroy(&lk->mu);
    free(lk);
    return rc;
}

int idmint__lease_status(struct lease_keeper *lk)
{
    return atomic_load(&lk->renew_err);
}

void idmint__lease_get(struct lease_keeper *lk, struct idmint__lease *out)
{
    pthread_mutex_lock(&lk->mu);
    *out = lk->lease;
    pthread_mutex_unlock(&lk->mu);
}

void idmint__lease_close(struct lease_keeper *lk, uint64_t last_time, int how)
{
    if (lk == NULL)
        return;
    if (how == IDMINT__END_FORKED) {
        /* The renewal thread does not exist here and its mutex may have been
         * held at fork(); the store connection belongs to the parent. Leave
         * both alone and only give back this copy's memory. */
        free(lk);
        return;
    }
    pthread_mutex_lock(&lk->mu);
    lk->is_stopping = 1;
    pthread_cond_broadcast(&lk->cv);
    pthread_mutex_unlock(&lk->mu);
    if (lk->has_thread)
        pthread_join(lk->thread, NULL);
    idmint__store_gate_enter();

    /* Release so the id can be reused at once; the next taker mints only
     * after the last time value we used. A lost lease is not ours to
     * release. */
    if (how == IDMINT__END_RELEASE && atomic_load(&lk->sf->lease_until) != 0)
        (void)idmint__authority_lease_release(lk->a, &lk->ns, &lk->lease, last_time + 1);
    idmint_authority_close(lk->a);
    idmint__store_gate_leave();
    pthread_cond_destroy(&lk->cv);
    pthread_mutex_destroy(&lk->mu);
    free(lk);
}
