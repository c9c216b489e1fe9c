/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The daemon's own minting handles, one per namespace, shared by every
 * event-loop thread (idmint handles are thread-safe for minting). A lookup
 * is a lock-free scan of an append-only table; the first use of a namespace
 * opens its handle under a mutex so no two threads ever open it twice.
 */
#include "daemon.h"

#include "log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int64_t wall_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void handles_init(struct handles *h, const struct config *cfg)
{
    memset(h, 0, sizeof(*h));
    pthread_mutex_init(&h->mu, NULL);
    h->cfg = cfg;
}

static struct ns_handle *find(struct handles *h, size_t n, const char *ns)
{
    size_t i;

    for (i = 0; i < n; i++)
        if (strcmp(h->slots[i]->name, ns) == 0)
            return h->slots[i];
    return NULL;
}

/* Open @p ns and append it; h->mu held. */
static int open_locked(struct handles *h, const char *ns, struct ns_handle **out)
{
    const struct config *cfg = h->cfg;
    size_t n = atomic_load_explicit(&h->n, memory_order_relaxed);
    idmint_options opts;
    idmint_handle_info info;
    struct ns_handle *nh;
    idmint *m;
    int rc;

    if (n == HANDLES_MAX) {
        log_write(LOG_WARN, "too many namespaces", "limit=%d namespace=%s", HANDLES_MAX, ns);
        return IDMINT_EUNAVAILABLE;
    }
    idmint_options_init(&opts);
    opts.region = cfg->region;
    opts.lease_ms = cfg->lease_ms;
    opts.renew_ms = cfg->renew_ms;
    if ((rc = idmint_open(&m, cfg->authority, ns, &opts)) != 0)
        return rc;
    if ((rc = idmint_info(m, &info)) != 0 || (nh = calloc(1, sizeof(*nh))) == NULL) {
        idmint_close(m);
        return rc != 0 ? rc : IDMINT_ENOMEM;
    }
    snprintf(nh->name, sizeof(nh->name), "%s", ns);
    nh->m = m;
    nh->is_range = info.is_range;
    nh->layout = info.layout;
    nh->slot = n;
    if (!nh->is_range && idmint_layout_end_ms(&info.layout, &nh->end_ms) != 0)
        nh->end_ms = 0;
    nh->seen_lease_until = info.lease_until;
    nh->seen_range_left = info.range_left;
    atomic_init(&nh->workers_free, -1);
    h->slots[n] = nh;
    /* Publish only after the slot is complete: readers scan without the lock. */
    atomic_store_explicit(&h->n, n + 1, memory_order_release);
    if (nh->is_range)
        log_write(LOG_INFO, "namespace opened", "namespace=%s kind=range left=%llu", ns,
                  (unsigned long long)info.range_left);
    else
        log_write(LOG_INFO, "namespace opened",
                  "namespace=%s kind=snowflake region=%u worker=%u generation=%llu", ns,
                  info.region, info.worker_id, (unsigned long long)info.generation);
    *out = nh;
    return 0;
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

void handles_observe(struct handles *h)
{
    size_t i, n = atomic_load_explicit(&h->n, memory_order_acquire);
    int64_t now = wall_ms();

    for (i = 0; i < n; i++) {
        struct ns_handle *nh = h->slots[i];
        idmint_handle_info info;

        if (idmint_info(nh->m, &info) != 0)
            continue;
        if (nh->is_range) {
            if (info.range_left > nh->seen_range_left)
                atomic_fetch_add(&h->range_refills, 1);
            nh->seen_range_left = info.range_left;
            continue;
        }
        if (info.lease_until > nh->seen_lease_until && nh->seen_lease_until != 0) {
            atomic_fetch_add(&h->renewals, 1);
        } else if (nh->seen_lease_until != 0) {
            int64_t end_ms =
                nh->layout.epoch_ms + (int64_t)info.lease_until * (int64_t)nh->layout.unit_ms;

            /* Lost (E set to 0) or run out during an outage: count it once. */
            if (info.lease_until == 0 || end_ms <= now) {
                atomic_fetch_add(&h->renewal_failures, 1);
                log_write(LOG_ERROR, "worker lease lost", "namespace=%s worker=%u", nh->name,
                          info.worker_id);
                info.lease_until = 0;
            }
        }
        nh->seen_lease_until = info.lease_until;
    }
}

int handles_ready(struct handles *h, char *reason, size_t size)
{
    size_t i, n = atomic_load_explicit(&h->n, memory_order_acquire);
    int64_t now = wall_ms();

    for (i = 0; i < n; i++) {
        struct ns_handle *nh = h->slots[i];
        idmint_handle_info info;

        if (idmint_info(nh->m, &info) != 0) {
            snprintf(reason, size, "namespace '%s': handle unusable", nh->name);
            return 0;
        }
        if (nh->is_range) {
            if (info.range_left == 0) {
                snprintf(reason, size, "namespace '%s': no reserved range left", nh->name);
                return 0;
            }
            continue;
        }
        if (info.lease_until == 0) {
            snprintf(reason, size, "namespace '%s': worker lease lost", nh->name);
            return 0;
        }
        {
            int64_t left_ms =
                nh->layout.epoch_ms + (int64_t)info.lease_until * (int64_t)nh->layout.unit_ms - now;

            if (left_ms <= (int64_t)h->cfg->ready_margin_ms) {
                snprintf(reason, size,
                         "namespace '%s': worker lease ends in %lld ms, within the %u ms margin",
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
        idmint_close(h->slots[i]->m);
        log_write(LOG_INFO, "namespace closed", "namespace=%s", h->slots[i]->name);
        free(h->slots[i]);
        h->slots[i] = NULL;
    }
    atomic_store(&h->n, 0);
    pthread_mutex_destroy(&h->mu);
}
