/* SPDX-License-Identifier: Apache-2.0 */
#include "daemon_fixture.h"

#include "config.h"
#include "log.h"
#include "store_pool.h"
#include "testsupport.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int create_namespaces(const char *url)
{
    idmint_authority *a;
    idmint_ns_info snow, rng;
    int rc;

    if (idmint_authority_open(&a, url, 0) != 0)
        return -1;
    idmint_ns_info_init(&snow, IDMINT_KIND_SNOWFLAKE);
    snprintf(snow.name, sizeof(snow.name), "snow");
    idmint_ns_info_init(&rng, IDMINT_KIND_RANGE);
    snprintf(rng.name, sizeof(rng.name), "rng");
    rng.block = 1000;
    rc = idmint_ns_create(a, &snow) == 0 && idmint_ns_create(a, &rng) == 0 ? 0 : -1;
    idmint_authority_close(a);
    return rc;
}

static void *no_thread_state(unsigned k, void *arg)
{
    (void)k;
    return arg;
}

static void no_thread_fini(void *thread)
{
    (void)thread;
}

int td_daemon_open(struct td_daemon *t, uint32_t lease_ms, uint32_t renew_ms)
{
    struct config *cfg = &t->d.cfg;
    char err[256];
    unsigned i;

    memset(t, 0, sizeof(*t));
    if (log_open("", LOG_WARN) != 0 || (t->dir = ts_tempdir()) == NULL ||
        (t->url = ts_sqlite_url(t->dir, "authority.db")) == NULL || create_namespaces(t->url) != 0)
        goto fail;
    config_defaults(cfg);
    snprintf(cfg->authority, sizeof(cfg->authority), "%s", t->url);
    snprintf(cfg->namespaces, sizeof(cfg->namespaces), "snow,rng");
    cfg->lease_ms = lease_ms;
    cfg->renew_ms = renew_ms;
    cfg->threads = 2;
    cfg->store_threads = 1;
    cfg->store_lease_threads = 1;
    if (config_finish(cfg, err, sizeof(err)) != 0) {
        fprintf(stderr, "td_daemon_open: %s\n", err);
        goto fail;
    }
    if (handles_init(&t->d.handles, cfg) != 0)
        goto fail;
    t->d.n_threads = cfg->threads + cfg->store_threads + cfg->store_lease_threads;
    if ((t->d.threads = calloc(t->d.n_threads, sizeof(*t->d.threads))) == NULL)
        goto fail_handles;
    for (i = 0; i < t->d.n_threads; i++) {
        t->d.threads[i].index = i;
        t->d.threads[i].d = &t->d;
        t->d.threads[i].is_store = i >= cfg->threads;
    }
    ratelimit_init(&t->d.limits);
    if (store_pool_open(&t->d.pool, cfg->store_threads, cfg->store_lease_threads, cfg->store_queue,
                        no_thread_state, no_thread_fini, &t->d) != 0)
        goto fail_handles;
    return 0;
fail_handles:
    handles_close_all(&t->d.handles);
fail:
    free(t->d.threads);
    free(t->url);
    ts_rmtree(t->dir);
    memset(t, 0, sizeof(*t));
    return -1;
}

void td_daemon_close(struct td_daemon *t)
{
    if (t->dir == NULL)
        return;
    store_pool_close(t->d.pool);
    handles_close_all(&t->d.handles);
    free(t->d.threads);
    free(t->url);
    ts_rmtree(t->dir);
    memset(t, 0, sizeof(*t));
}

idmint_authority *td_daemon_admin(struct td_daemon *t)
{
    idmint_authority *a = NULL;

    return idmint_authority_open_existing(&a, t->url, 0) == 0 ? a : NULL;
}

int td_wait_for(int (*done)(void *arg), void *arg)
{
    long i, tries = 3000L * (long)ts_scale();

    for (i = 0; i < tries; i++) {
        struct timespec ts = {0, 10 * 1000 * 1000};

        if (done(arg))
            return 1;
        nanosleep(&ts, NULL);
    }
    return done(arg);
}
