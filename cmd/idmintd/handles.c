/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The daemon's own minting handles, one per namespace, shared by every
 * event-loop thread (idmint handles are thread-safe for minting). A lookup
 * is a lock-free scan of an append-only table; the first use of a namespace
 * opens its handle under a mutex so no two threads ever open it twice.
 *
 * A handle whose lease is lost (an admin forced it away) or whose namespace
 * was disabled can never mint again, so the 1 s tick opens a replacement
 * (a new worker id) with backoff and swaps it in. Readers of a slot announce
 * themselves in one of two counters chosen by the slot's epoch parity; the
 * swapper flips the epoch and waits for the old parity's readers to leave
 * before closing the old handle, so no request ever uses a freed handle.
 */
#include "daemon.h"
#include "clocks.h"

#include "idmint_service.h"
#include "log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RECOVER_BACKOFF_MIN_MS 1000
#define RECOVER_BACKOFF_MAX_MS 30000

int handles_init(struct handles *h, const struct config *cfg)
{
    memset(h, 0, sizeof(*h));
    pthread_mutex_init(&h->mu, NULL);
    h->cfg = cfg;
    return idmint_authority_resolve(handles_authority_url(cfg), h->authority_text,
                                    sizeof(h->authority_text));
}

static struct ns_handle *find(struct handles *h, size_t n, const char *ns)
{
    size_t i;

    for (i = 0; i < n; i++)
        if (strcmp(h->slots[i]->name, ns) == 0)
            return h->slots[i];
    return NULL;
}

/* A new handle of @p ns with the daemon's lease options. */
static int open_handle(const struct config *cfg, const char *ns, idmint **out)
{
    idmint_options opts;

    idmint_options_init(&opts);
    opts.region = cfg->region;
    opts.lease_ms = cfg->lease_ms;
    opts.renew_ms = cfg->renew_ms;
    return idmint_open(out, handles_authority_url(cfg), ns, &opts);
}

static void log_opened(const char *what, const char *ns, const idmint_handle_info *info)
{
    if (info->is_range)
        log_write(LOG_INFO, what, "namespace=%s kind=range left=%llu", ns,
                  (unsigned long long)info->range_left);
    else
        log_write(LOG_INFO, what, "namespace=%s kind=snowflake region=%u worker=%u generation=%llu",
                  ns, info->region, info->worker_id, (unsigned long long)info->generation);
}

/* Open @p ns and append it; h->mu held. */
static int open_locked(struct handles *h, const char *ns, struct ns_handle **out)
{
    const struct config *cfg = h->cfg;
    size_t n = atomic_load_explicit(&h->n, memory_order_relaxed);
    idmint_handle_info info;
    struct ns_handle *nh;
    idmint *m;
    int rc;

    if (n == HANDLES_MAX) {
        log_write(LOG_WARN, "too many namespaces", "limit=%d namespace=%s", HANDLES_MAX, ns);
        return IDMINT_EUNAVAILABLE;
    }
    if (atomic_load(&h->store_seen)) {
        idmint_authority *probe;

        /* idmint_open would create a missing store: make sure it exists. */
        if ((rc = handles_authority_open(h, &probe)) != 0)
            return rc;
        idmint_authority_close(probe);
    }
    if ((rc = open_handle(cfg, ns, &m)) != 0)
        return rc;
    atomic_store(&h->store_seen, 1);
    idmint_handle_info_init(&info);
    if ((rc = idmint_info(m, &info)) != 0 || (nh = calloc(1, sizeof(*nh))) == NULL) {
        idmint_close(m);
        return rc != 0 ? rc : IDMINT_ENOMEM;
    }
    snprintf(nh->name, sizeof(nh->name), "%s", ns);
    atomic_init(&nh->m, m);
    nh->is_range = info.is_range;
    nh->layout = info.layout;
    nh->slot = n;
    if (!nh->is_range && idmint_layout_end_ms(&info.layout, &nh->end_ms) != 0)
        nh->end_ms = 0;
    nh->seen_lease_until = info.lease_until;
    nh->seen_range_left = info.range_left;
    h->slots[n] = nh;
    /* Publish only after the slot is complete: readers scan without the lock. */
    atomic_store_explicit(&h->n, n + 1, memory_order_release);
    log_opened("namespace opened", ns, &info);
    *out = nh;
    return 0;
}

const char *handles_authority_url(const struct config *cfg)
{
    return cfg->authority[0] != '\0' ? cfg->authority : NULL;
}

int handles_authority_start(struct handles *h, int *created)
{
    const struct config *cfg = h->cfg;
    idmint_authority *a = NULL;
    int rc = idmint_authority_open_existing(&a, handles_authority_url(cfg), cfg->region);

    *created = 0;
    if (rc == IDMINT_ENOTFOUND) {
        *created = 1;
        rc = idmint_authority_open(&a, handles_authority_url(cfg), cfg->region);
    }
    if (rc != 0)
        return rc;
    atomic_store(&h->store_seen, 1);
    idmint_authority_close(a);
    return 0;
}

int handles_authority_open(struct handles *h, idmint_authority **out)
{
    const struct config *cfg = h->cfg;
    int rc;

    if (!atomic_load(&h->store_seen)) {
        if ((rc = idmint_authority_open(out, handles_authority_url(cfg), cfg->region)) == 0)
            atomic_store(&h->store_seen, 1);
        return rc;
    }
    rc = idmint_authority_open_existing(out, handles_authority_url(cfg), cfg->region);
    if (rc == IDMINT_ENOTFOUND) {
        char why[512];

        snprintf(why, sizeof(why), "%s", idmint_errmsg());
        log_write(LOG_ERROR, "the authority is gone", "authority=\"%s\" detail=\"%s\"",
                  h->authority_text, why);
        rc = IDMINT_ESTORE;
        idmint__fail(rc,
                     "the authority %s was removed or replaced while idmintd ran; "
                     "refusing to start a new, empty one (%s)",
                     h->authority_text, why);
    }
    return rc;
}

/* The slot's current handle, announced as in use; leave with handle_leave(). */
static idmint *handle_enter(struct ns_handle *nh, unsigned *parity)
{
    for (;;) {
        unsigned p = atomic_load(&nh->epoch) & 1u;

        atomic_fetch_add(&nh->users[p], 1);
        /* Still the same parity after announcing: the swapper will wait for us. */
        if ((atomic_load(&nh->epoch) & 1u) == p) {
            *parity = p;
            return atomic_load(&nh->m);
        }
        atomic_fetch_sub(&nh->users[p], 1);
    }
}

static void handle_leave(struct ns_handle *nh, unsigned parity)
{
    atomic_fetch_sub(&nh->users[parity], 1);
}

int handles_try_next_n(struct ns_handle *nh, uint64_t *ids, size_t n, size_t *got,
                       uint32_t *wait_ms)
{
    unsigned parity;
    int rc = idmint_try_next_n(handle_enter(nh, &parity), ids, n, got, wait_ms);

    handle_leave(nh, parity);
    return rc;
}

int handles_next_n(struct ns_handle *nh, uint64_t *ids, size_t n)
{
    unsigned parity;
    int rc = idmint_next_n(handle_enter(nh, &parity), ids, n);

    handle_leave(nh, parity);
    return rc;
}

int handles_info(struct ns_handle *nh, idmint_handle_info *out)
{
    unsigned parity;
    int rc = idmint_info(handle_enter(nh, &parity), out);

    handle_leave(nh, parity);
    return rc;
}

/* Put @p fresh in the slot and close the old handle once no reader uses it. Main thread. */
static void handle_swap(struct ns_handle *nh, idmint *fresh)
{
    idmint *old = atomic_exchange(&nh->m, fresh);
    unsigned parity = atomic_fetch_add(&nh->epoch, 1) & 1u;

    while (atomic_load(&nh->users[parity]) != 0) {
        struct timespec ts = {0, 100000};

        nanosleep(&ts, NULL);
    }
    idmint_close(old);
}

struct ns_handle *handles_find(struct handles *h, const char *ns)
{
    return find(h, atomic_load_explicit(&h->n, memory_order_acquire), ns);
}

int handles_get(struct handles *h, const char *ns, struct ns_handle **out)
{
    struct ns_handle *nh = find(h, atomic_load_explicit(&h->n, memory_order_acquire), ns);
    int rc = 0;

    if (nh != NULL) {
        *out = nh;
        return 0;
    }
    pthread_mutex_lock(&h->mu);
    nh = find(h, atomic_load_explicit(&h->n, memory_order_relaxed), ns);
    if (nh == NULL)
        rc = open_locked(h, ns, &nh);
    pthread_mutex_unlock(&h->mu);
    if (rc == 0)
        *out = nh;
    return rc;
}

int handles_open_eager(struct handles *h)
{
    const char *p = h->cfg->namespaces;

    while (*p != '\0') {
        char name[64];
        size_t len;
        struct ns_handle *nh;
        int rc;

        p += strspn(p, " \t,");
        len = strcspn(p, " \t,");
        if (len == 0)
            break;
        if (len >= sizeof(name)) {
            log_write(LOG_ERROR, "namespace name in [mint] namespaces is too long", "name=%.*s",
                      (int)len, p);
            return IDMINT_EINVAL;
        }
        memcpy(name, p, len);
        name[len] = '\0';
        p += len;
        if ((rc = handles_get(h, name, &nh)) != 0) {
            log_write(LOG_ERROR, "cannot open namespace",
                      "namespace=%s code=%d error=\"%s\" detail=\"%s\"", name, rc,
                      idmint_strerror(rc), idmint_errmsg());
            return rc;
        }
    }
    return 0;
}

/*
 * The lease of @p nh can never be renewed again (lost, or the namespace
 * disabled): try a new handle, with backoff. Main thread.
 */
static void recover(struct handles *h, struct ns_handle *nh, int status, int64_t now)
{
    idmint_handle_info info;
    idmint *fresh;
    int rc;

    if (nh->stop_status != status) {
        nh->stop_status = status;
        nh->backoff_ms = RECOVER_BACKOFF_MIN_MS;
        /* A lost lease stops minting now: replace it at once. A disabled
         * namespace is refused anyway until it is enabled again. */
        nh->retry_at_ms = status == IDMINT_ELEASELOST ? now : now + nh->backoff_ms;
        if (status == IDMINT_ELEASELOST)
            log_write(LOG_ERROR, "worker lease lost: taking a new worker id", "namespace=%s",
                      nh->name);
        else
            log_write(LOG_WARN, "namespace disabled: its lease is not renewed",
                      "namespace=%s detail=\"minting stops when the lease ends; minting resumes "
                      "with a new lease once the namespace is enabled\"",
                      nh->name);
    }
    if (now < nh->retry_at_ms)
        return;
    rc = open_handle(h->cfg, nh->name, &fresh);
    if (rc != 0) {
        if (rc != IDMINT_EDISABLED || nh->backoff_ms == RECOVER_BACKOFF_MIN_MS)
            log_write(LOG_WARN, "cannot take a new worker id yet",
                      "namespace=%s code=%d error=\"%s\" detail=\"%s\" retry_in_ms=%u", nh->name,
                      rc, idmint_strerror(rc), idmint_errmsg(), nh->backoff_ms);
        nh->retry_at_ms = now + nh->backoff_ms;
        nh->backoff_ms = nh->backoff_ms * 2 > RECOVER_BACKOFF_MAX_MS ? RECOVER_BACKOFF_MAX_MS
                                                                     : nh->backoff_ms * 2;
        return;
    }
    handle_swap(nh, fresh);
    nh->stop_status = 0;
    /* /readyz judges the new handle now, not a tick later. */
    atomic_store(&nh->store_status, idmint_lease_status(fresh));
    idmint_handle_info_init(&info);
    if (idmint_info(fresh, &info) == 0) {
        nh->seen_lease_until = info.lease_until;
        log_opened("worker lease recovered", nh->name, &info);
    }
}

/* 1 (logged once) when @p status says the authority went backwards under @p nh. */
static int note_restored(struct ns_handle *nh, int status)
{
    if (status != IDMINT_ERESTORED)
        return 0;
    if (nh->stop_status != status) {
        nh->stop_status = status;
        log_write(LOG_ERROR, "the authority went backwards: minting stopped",
                  "namespace=%s detail=\"the store was restored from a backup, rolled back, or "
                  "its file removed or replaced, and may hand out again what this daemon held; "
                  "run 'idmint authority fence' on it, then restart idmintd\"",
                  nh->name);
    }
    return 1;
}

void handles_observe(struct handles *h)
{
    size_t i, n = atomic_load_explicit(&h->n, memory_order_acquire);
    int64_t now = clocks_wall_ms();

    for (i = 0; i < n; i++) {
        struct ns_handle *nh = h->slots[i];
        idmint *m = atomic_load(&nh->m); /* only this thread swaps it */
        idmint_handle_info info;
        int status;

        idmint_handle_info_init(&info);
        if (idmint_info(m, &info) != 0)
            continue;
        if (nh->is_range) {
            if (info.range_left > nh->seen_range_left)
                atomic_fetch_add(&h->range_refills, 1);
            nh->seen_range_left = info.range_left;
            note_restored(nh, idmint_lease_status(m));
            continue;
        }
        if (info.lease_until > nh->seen_lease_until && nh->seen_lease_until != 0) {
            atomic_fetch_add(&h->renewals, 1);
        } else if (nh->seen_lease_until != 0) {
            int64_t end_ms = idmint__unit_start_ms(&nh->layout, info.lease_until);

            /* Lost (E set to 0) or run out during an outage: count it once. */
            if (info.lease_until == 0 || end_ms <= now) {
                atomic_fetch_add(&h->renewal_failures, 1);
                log_write(LOG_ERROR, "worker lease lost", "namespace=%s worker=%u", nh->name,
                          info.worker_id);
                info.lease_until = 0;
            }
        }
        nh->seen_lease_until = info.lease_until;
        status = idmint_lease_status(m);
        if (status == IDMINT_ESTORE && nh->store_status != status)
            log_write(LOG_ERROR, "the store refuses lease renewals",
                      "namespace=%s code=%d error=\"%s\" detail=\"see the store's error above; "
                      "minting goes on until the lease ends\"",
                      nh->name, status, idmint_strerror(status));
        nh->store_status = status;
        /* A rewound authority may hand out again what this handle held: no
         * new handle until an operator has fenced it and restarted us. */
        if (note_restored(nh, status))
            continue;
        if (status == IDMINT_ELEASELOST || status == IDMINT_EDISABLED)
            recover(h, nh, status, now);
    }
}

int handles_ready(struct handles *h, char *reason, size_t size)
{
    size_t i, n = atomic_load_explicit(&h->n, memory_order_acquire);
    int64_t now = clocks_wall_ms();

    for (i = 0; i < n; i++) {
        struct ns_handle *nh = h->slots[i];
        idmint_handle_info info;
        int status;

        idmint_handle_info_init(&info);
        if (handles_info(nh, &info) != 0) {
            snprintf(reason, size, "namespace '%s': handle unusable", nh->name);
            return 0;
        }
        if (nh->stop_status == IDMINT_ERESTORED) {
            snprintf(reason, size,
                     "namespace '%s': the authority went backwards (restored, rolled back, or its "
                     "file removed or replaced); "
                     "run 'idmint authority fence' on it, then restart idmintd",
                     nh->name);
            return 0;
        }
        if (nh->is_range) {
            if (info.range_left == 0) {
                snprintf(reason, size, "namespace '%s': no reserved range left", nh->name);
                return 0;
            }
            continue;
        }
        status = nh->store_status;
        if (status == IDMINT_ELEASELOST || info.lease_until == 0) {
            snprintf(reason, size, "namespace '%s': worker lease lost; taking a new worker id",
                     nh->name);
            return 0;
        }
        if (status == IDMINT_ESTORE) {
            /* Not an outage that passes: the store answers and refuses
             * (e.g. its file was removed or replaced). */
            snprintf(reason, size,
                     "namespace '%s': the store refuses lease renewals (%s); see the log", nh->name,
                     idmint_strerror(status));
            return 0;
        }
        {
            int64_t left_ms = idmint__unit_start_ms(&nh->layout, info.lease_until) - now;

            if (left_ms <= (int64_t)h->cfg->ready_margin_ms) {
                snprintf(reason, size,
                         status == IDMINT_EDISABLED
                             ? "namespace '%s' is disabled: its worker lease ends in %lld ms"
                             : "namespace '%s': worker lease ends in %lld ms, within the %u ms "
                               "margin",
                         nh->name, (long long)left_ms, h->cfg->ready_margin_ms);
                return 0;
            }
        }
    }
    reason[0] = '\0';
    return 1;
}

void handles_close_all(struct handles *h)
{
    size_t i, n = atomic_load_explicit(&h->n, memory_order_acquire);

    for (i = 0; i < n; i++) {
        idmint_close(atomic_load(&h->slots[i]->m));
        log_write(LOG_INFO, "namespace closed", "namespace=%s", h->slots[i]->name);
        free(h->slots[i]);
        h->slots[i] = NULL;
    }
    atomic_store(&h->n, 0);
    pthread_mutex_destroy(&h->mu);
}
