/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A daemon as main.c builds it: the configuration, the handle table on a
 * fresh SQLite authority, the threads' state, the rate limits and the store
 * pool, and on demand its HTTP server on 127.0.0.1 with the real routes and
 * a libcurl client for it. The fixture of the unit tests of the daemon's
 * files that work on a whole struct daemon (handles.c, prometheus.c,
 * status*.c, sampler.c, throughput.c, the routes).
 */
#ifndef IDMINTD_DAEMON_FIXTURE_H
#define IDMINTD_DAEMON_FIXTURE_H

#include "daemon.h"

#include <jansson.h>

#include <stddef.h>

struct http_server;

struct td_daemon {
    char *dir;               /* the authority's folder, removed by td_daemon_close */
    char *url;               /* sqlite:DIR/authority.db */
    struct daemon d;         /* cfg.authority = url; handles ready; nothing opened yet */
    struct http_server *srv; /* td_daemon_serve's; NULL before */
    unsigned port;
};

/* One answer of td_http. */
struct td_reply {
    long status;        /* 0 when no answer came */
    char *body;         /* NUL-terminated, malloc'd; td_reply_free */
    size_t len;         /* of body */
    char headers[4096]; /* every header line of the answer, "name: value\r\n" each */
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
/* td_daemon_open, with @p adjust(cfg) run on the settings before they are checked and used. */
int td_daemon_open_with(struct td_daemon *t, uint32_t lease_ms, uint32_t renew_ms,
                        void (*adjust)(struct config *cfg));
/* Close every handle, the pool and the threads' state, and remove the folder. */
void td_daemon_close(struct td_daemon *t);

/*
 * Add a token @p name of @p role ("mint", "generator", "admin") whose
 * secret is @p secret, as [tokens] would. Before td_daemon_serve. 0 or -1.
 */
int td_daemon_token(struct td_daemon *t, const char *name, const char *role, const char *secret);
/*
 * Open the eager namespaces, mark the daemon ready and serve it on
 * 127.0.0.1 on a free port (t->port) with cfg.threads loops. 0 or -1.
 */
int td_daemon_serve(struct td_daemon *t);
/*
 * @p method @p path (with its query) to the server, with "Authorization:
 * Bearer @p token" unless NULL, @p body unless NULL (as
 * application/json), and @p header, a whole "Name: value" line, unless
 * NULL. Fills @p out; its status is 0 when no answer came. Thread-safe.
 */
void td_http(struct td_daemon *t, const char *method, const char *path, const char *token,
             const char *body, const char *header, struct td_reply *out);
/* Free what td_http put in @p r. */
void td_reply_free(struct td_reply *r);
/* @p r's body parsed with jansson (json_decref it), or NULL when it is not JSON. */
json_t *td_reply_json(const struct td_reply *r);

/*
 * The tokens td_setup_with configures when asked: each secret, with its
 * name and role in [tokens].
 */
#define TD_ADMIN "admin-secret-0123456789"     /* "ops", admin */
#define TD_MINT  "mint-secret-0123456789"      /* "app", mint */
#define TD_MINT2 "mint2-secret-0123456789"     /* "app2", mint */
#define TD_GEN   "generator-secret-0123456789" /* "gen", generator */

/*
 * cmocka setups: *state is a new struct td_daemon (60 s leases renewed
 * every 20 s) with "snow" and "rng" open. td_setup_with first runs
 * @p adjust on the settings (unless NULL), adds the four tokens when
 * @p with_tokens, and serves the routes when @p serve. 0 or -1.
 */
int td_setup_with(void **state, void (*adjust)(struct config *cfg), int with_tokens, int serve);
int td_setup(void **state);             /* not served */
int td_setup_served(void **state);      /* served, with the four tokens */
int td_setup_served_open(void **state); /* served, no tokens: every caller is admin */
/* cmocka teardown of the setups above. Always 0. */
int td_teardown(void **state);

/*
 * @p method @p path as td_http does; fails the test unless the status is
 * @p status and the body is JSON. The body parsed; json_decref it.
 */
json_t *td_call(struct td_daemon *t, const char *method, const char *path, const char *token,
                const char *body, long status);
/* The length of the array @p key of GET @p path's 200 answer. */
size_t td_list_len(struct td_daemon *t, const char *path, const char *token, const char *key);
/* The string member @p key of @p o; fails the test when it is not a string. */
const char *td_str(json_t *o, const char *key);

/*
 * GET /v1/ids of @p count from @p ns as td_http does: the status in
 * *status, and on 200 the IDs (sent as decimal strings, as they must be)
 * into @p ids, room for @p count. How many came.
 */
size_t td_mint(struct td_daemon *t, const char *ns, unsigned count, const char *token,
               const char *header, uint64_t *ids, long *status);

/* An authority of @p t's store, for the test's admin acts; the caller closes it. */
idmint_authority *td_daemon_admin(struct td_daemon *t);

/*
 * Poll @p done(@p arg) every 10 ms until it returns nonzero, for at most
 * 30 s times ts_scale(): 1 when it did, 0 when it never did. For what the
 * daemon's threads do in their own time; nothing is judged by how long.
 */
int td_wait_for(int (*done)(void *arg), void *arg);

/* td_wait_for the store sampler's first full pass (sampler_watch asks for one). 1 or 0. */
int td_sampler_full_pass(void);

#endif
