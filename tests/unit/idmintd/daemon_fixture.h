/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A daemon as main.c builds it, without its HTTP server: the configuration,
 * the handle table on a fresh SQLite authority, the threads' state, the rate
 * limits and the store pool. The fixture of the unit tests of the daemon's
 * files that work on a whole struct daemon (handles.c, prometheus.c,
 * status*.c, sampler.c, throughput.c).
 */
#ifndef IDMINTD_DAEMON_FIXTURE_H
#define IDMINTD_DAEMON_FIXTURE_H

#include "daemon.h"

struct td_daemon {
    char *dir;       /* the authority's folder, removed by td_daemon_close */
    char *url;       /* sqlite:DIR/authority.db */
    struct daemon d; /* cfg.authority = url; handles ready; nothing opened yet */
};

/*
 * Make @p t: an authority with a snowflake namespace "snow" and a range
 * namespace "rng" (block 1000), and a daemon on it with @p lease_ms and
 * @p renew_ms, 2 loop threads, 1 store thread and 1 lease thread, and
 * namespaces "snow,rng" to open eagerly (not opened: the test calls
 * handles_open_eager when it wants them). Logs go to stderr at level warn.
 * 0, or -1 with nothing left behind.
 */
int td_daemon_open(struct td_daemon *t, uint32_t lease_ms, uint32_t renew_ms);
/* Close every handle, the pool and the threads' state, and remove the folder. */
void td_daemon_close(struct td_daemon *t);

/* An authority of @p t's store, for the test's admin acts; the caller closes it. */
idmint_authority *td_daemon_admin(struct td_daemon *t);

/*
 * Poll @p done(@p arg) every 10 ms until it returns nonzero, for at most
 * 30 s times ts_scale(): 1 when it did, 0 when it never did. For what the
 * daemon's threads do in their own time; nothing is judged by how long.
 */
int td_wait_for(int (*done)(void *arg), void *arg);

#endif
