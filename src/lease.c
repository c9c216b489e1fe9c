/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Worker-lease policy (DESIGN.md §4): take with the fence, wait for the clock
 * to pass the E found, renew in a background thread, stop at once when a
 * renewal is refused, release on close. The minting engine only ever sees
 * sf->lease_until, which this file moves forward (or to 0 when the lease is
 * lost); the store is touched only by the opening thread and then by the
 * renewal thread, never concurrently.
 */
#include "internal.h"
#include "store.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* After a failed renewal, try again this often (bounded by renew_ms). */
#define RENEW_RETRY_MS 250u

struct lease_keeper {
    struct idmint_authority *a; /* owned; used by one thread at a time */
    char ns[64];
    idmint_layout layout;
    struct clock *clk;    /* borrowed from the handle */
    struct snowflake *sf; /* borrowed from the handle */
    uint32_t lease_ms;
    uint32_t renew_ms;
    pthread_mutex_t mu; /* guards lease and is_stopping */
    pthread_cond_t cv;  /* wakes the renewal thread to stop */
    struct store_lease lease;
    int is_stopping;
    int has_thread;
    _Atomic int renew_err; /* last renewal's failure, 0 after a success */
    pthread_t thread;
};

static uint64_t until_unit(struct lease_keeper *lk)
{
    return idmint__unit_at(&lk->layout, idmint__clock_read_ms(lk->clk) + (int64_t)lk->lease_ms);
}

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

static void *renew_main(void *arg)
{
    struct lease_keeper *lk = arg;
    uint32_t wait = lk->renew_ms;

    pthread_mutex_lock(&lk->mu);
    for (;;) {
        struct store_lease copy;
        int rc;

        wait_ms_locked(lk, wait);
        if (lk->is_stopping)
            break;
        copy = lk->lease;
        pthread_mutex_unlock(&lk->mu);

        rc = idmint__store_lease_renew(lk->a->st, lk->ns, &copy, until_unit(lk));

        pthread_mutex_lock(&lk->mu);
        atomic_store(&lk->renew_err, rc);
        if (rc == 0) {
            lk->lease = copy;
            publish_until(lk->sf, copy.lease_until);
            wait = lk->renew_ms;
        } else if (rc == IDMINT_ELEASELOST) {
            /* Someone else holds the id now: stop minting at once. */
            atomic_store(&lk->sf->lease_err, IDMINT_ELEASELOST);
            atomic_store(&lk->sf->lease_until, 0);
            break;
        } else if (rc == IDMINT_EDISABLED) {
            /* Disabled: the lease is still ours until E, so minting runs
             * on to it and then fails with this code, never a duplicate. */
            atomic_store(&lk->sf->lease_err, IDMINT_EDISABLED);
            break;
        } else {
            /* Outage: keep minting until E, keep trying meanwhile. */
            wait = lk->renew_ms < RENEW_RETRY_MS ? lk->renew_ms : RENEW_RETRY_MS;
        }
    }
    pthread_mutex_unlock(&lk->mu);
    return NULL;
}

/* Wait (bounded) until the clock is past @p fence; ECLOCK if it never gets there. */
static int wait_past_fence(struct lease_keeper *lk, uint64_t fence, uint32_t max_wait_ms)
{
    uint64_t deadline = idmint__deadline_now_ms() + max_wait_ms;

    for (;;) {
        uint64_t now = idmint__unit_at(&lk->layout, idmint__clock_read_ms(lk->clk));

        if (now > fence)
            return 0;
        if (idmint__deadline_now_ms() >= deadline)
            return idmint__fail(IDMINT_ECLOCK,
                                "namespace '%s' worker %u: clock is at time unit %llu, %llu ms "
                                "behind the fence %llu left by the previous holder (generation "
                                "%llu); its clock ran ahead or this one is behind; waited %u ms",
                                lk->ns, (unsigned)lk->lease.worker_id, (unsigned long long)now,
                                (unsigned long long)((fence - now + 1) * lk->layout.unit_ms),
                                (unsigned long long)fence,
                                (unsigned long long)(lk->lease.generation - 1), max_wait_ms);
        idmint__sleep_ms(1);
    }
}

int idmint__lease_open(struct lease_keeper **out, struct idmint_authority *a,
                       const idmint_ns_info *ns, const idmint_options *opts,
                       const char *incarnation, struct clock *clk, struct snowflake *sf)
{
    const idmint_layout *l = &ns->layout;
    struct lease_keeper *lk;
    uint64_t now, borrow;
    char actor[64];
    int rc;

    if (l->region_bits < 32 && opts->region >> l->region_bits != 0) {
        idmint_authority_close(a);
        return idmint__fail(IDMINT_EINVAL, "region %u does not fit the %u region bits of '%s'",
                            opts->region, l->region_bits, ns->name);
    }
    lk = calloc(1, sizeof(*lk));
    if (lk == NULL) {
        idmint_authority_close(a);
        return IDMINT_ENOMEM;
    }
    lk->a = a;
    snprintf(lk->ns, sizeof(lk->ns), "%s", ns->name);
    lk->layout = *l;
    lk->clk = clk;
    lk->sf = sf;
    lk->lease_ms = opts->lease_ms;
    lk->renew_ms = opts->renew_ms;
    pthread_mutex_init(&lk->mu, NULL);
    idmint__cond_init_monotonic(&lk->cv);
    lk->lease.region = opts->region;
    memcpy(lk->lease.holder, incarnation, sizeof(lk->lease.holder));

    now = idmint__unit_at(l, idmint__clock_read_ms(clk));
    if (now > ((UINT64_C(1) << l->time_bits) - 1)) {
        rc = idmint__fail(IDMINT_EEXHAUSTED, "the time bits of '%s' ran out", ns->name);
        goto fail;
    }
    idmint__authority_actor(a, actor, sizeof(actor));
    rc = idmint__store_lease_take(a->st, lk->ns, UINT64_C(1) << l->worker_bits, now, until_unit(lk),
                                  &lk->lease, actor, idmint__clock_read_ms(clk));
    if (rc != 0)
        goto fail;
    if (now <= lk->lease.fence_found) {
        /* Never mint at or before the E we found: the previous holder may
         * have used every time value up to it. */
        rc = wait_past_fence(lk, lk->lease.fence_found, opts->clock_wait_ms);
        if (rc == 0)
            rc = idmint__store_lease_renew(a->st, lk->ns, &lk->lease, until_unit(lk));
        if (rc != 0) {
            char why[512];

            /* The release may fail and set its own message: keep ours. */
            snprintf(why, sizeof(why), "%s", idmint_errmsg());
            (void)idmint__store_lease_release(a->st, lk->ns, &lk->lease, lk->lease.fence_found,
                                              actor, idmint__clock_read_ms(clk));
            rc = idmint__fail(rc, "%s", why);
            goto fail;
        }
    }
    borrow = (opts->max_borrow_ms + l->unit_ms - 1) / l->unit_ms;
    idmint__snowflake_init(sf, l, lk->lease.region, lk->lease.worker_id, lk->lease.fence_found,
                           lk->lease.lease_until, borrow);
    if (pthread_create(&lk->thread, NULL, renew_main, lk) != 0) {
        (void)idmint__store_lease_release(a->st, lk->ns, &lk->lease, lk->lease.fence_found, actor,
                                          idmint__clock_read_ms(clk));
        rc = idmint__fail(IDMINT_ENOMEM, "cannot start the renewal thread");
        goto fail;
    }
    lk->has_thread = 1;
    *out = lk;
    return 0;
fail:
    idmint_authority_close(a);
    pthread_cond_destroy(&lk->cv);
    pthread_mutex_destroy(&lk->mu);
    free(lk);
    return rc;
}

int idmint__lease_status(struct lease_keeper *lk)
{
    return atomic_load(&lk->renew_err);
}

void idmint__lease_get(struct lease_keeper *lk, struct store_lease *out)
{
    pthread_mutex_lock(&lk->mu);
    *out = lk->lease;
    pthread_mutex_unlock(&lk->mu);
}

void idmint__lease_close(struct lease_keeper *lk, uint64_t last_time, int is_forked_child)
{
    char actor[64];
    uint64_t final;

    if (lk == NULL)
        return;
    if (is_forked_child) {
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

    /* Release so the id can be reused at once; the next taker mints only
     * after the last time value we used (the store clamps it between the E
     * we found and our own E). A lost lease is not ours to release. */
    final = last_time + 1 > lk->lease.fence_found ? last_time + 1 : lk->lease.fence_found;
    if (atomic_load(&lk->sf->lease_until) != 0) {
        idmint__authority_actor(lk->a, actor, sizeof(actor));
        (void)idmint__store_lease_release(lk->a->st, lk->ns, &lk->lease, final, actor,
                                          idmint__clock_read_ms(lk->clk));
    }
    idmint_authority_close(lk->a);
    pthread_cond_destroy(&lk->cv);
    pthread_mutex_destroy(&lk->mu);
    free(lk);
}
