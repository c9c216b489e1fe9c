/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Every route idmintd serves, one row each: method, path pattern, the role
 * it needs, its handler, its metrics label, and the query parameters and
 * JSON body fields it accepts. routes.c dispatches by it (and answers 400
 * naming any other parameter or field before the handler runs), metrics.c
 * counts requests by it and prometheus.c labels them, and `idmintd --list-routes` prints it
 * for tests/daemon/test_roles.py and test_unknown_names.py. The handlers of
 * routes_*.c are declared here, beside the table that names them, and
 * nowhere else.
 */
#ifndef IDMINTD_ROUTE_TABLE_H
#define IDMINTD_ROUTE_TABLE_H

#include "auth.h"
#include "http.h"

#include <stddef.h>
#include <stdio.h>

#define ROUTE_ROWS_MAX     32  /* rows the metrics keep a counter for; raise it when full */
#define ROUTE_SEGMENTS_MAX 6   /* segments of a path; a longer path matches no row */
#define ROUTE_SEGMENT_MAX  127 /* bytes of a {name} segment; a longer one matches no row */

struct daemon_thread;

/* What the dispatcher hands a handler besides the request and its thread. */
struct route_match {
    char segment[ROUTE_SEGMENT_MAX + 1]; /* the {name} segment, NUL-terminated; "" when none */
    /* The caller's role: its token's; AUTH_ADMIN when no [tokens] are
     * configured (every caller is admin then); AUTH_NONE on an open route,
     * where no token is checked. */
    enum auth_role role;
};

/* Where a row's handler runs (route_row.is_store; rows write 0 and 1 as such). */
enum route_runs_on {
    ROUTE_ON_LOOP = 0,  /* the event loop, answering before it returns */
    ROUTE_ON_STORE = 1, /* a store thread of the general lane (routes_defer.h) */
    /* A store thread of the lease lane (store_pool.h): a remote generator's
     * worker lease or range, which must not wait behind other store calls. */
    ROUTE_ON_LEASE = 2,
};

struct route_row {
    const char *method;  /* "GET", "POST": compared byte for byte */
    const char *path;    /* "/v1/ids/{id}/decode": literal segments and at most one {name} */
    enum auth_role role; /* needed; AUTH_NONE: open, no token is asked for */
    void (*handler)(struct http_req *r, struct daemon_thread *w, const struct route_match *m);
    const char *label; /* route="…" of idmint_http_requests_total; rows may share one */
    int is_store;      /* enum route_runs_on: nonzero on a store thread (routes_defer.h) */
    /* The query parameters the handler reads, NULL-terminated; NULL: none.
     * Any other is answered 400 before the handler runs (reply.h). */
    const char *const *params;
    /* The JSON body fields the handler reads, NULL-terminated; NULL: none.
     * A body with any other field is answered 400 before the handler runs. */
    const char *const *fields;
};

extern const struct route_row route_table[];
extern const size_t route_table_len; /* at most ROUTE_ROWS_MAX */

/*
 * Check every row: a known method, a pattern of 1..ROUTE_SEGMENTS_MAX
 * non-empty segments with at most one {name}, a handler, a label that is not
 * "other" and needs no escaping, parameter and field names that are
 * non-empty [a-z0-9_] and listed once, and no two rows of one method that
 * could match the same path. Reports each problem on stderr; returns how many
 * there are (0: the table is sound). Run by `idmintd --self-check` and at
 * every start of a debug build.
 */
int route_table_check(void);
/* The same checks over @p n rows of @p rows: the seam for the unit test. */
int route_table_check_rows(const struct route_row *rows, size_t n);

/*
 * Print the table to @p out, one JSON object per line:
 * {"method":…,"path":…,"role":"none|mint|generator|admin","label":…,
 *  "params":[…],"fields":[…]}.
 * 0, or -1 when out of memory or the write failed.
 */
int route_table_list(FILE *out);

/* ==== the handlers, by file; m->segment is the pattern's {name} ==== */

/* routes_ids.c */
void routes_ids_get(struct http_req *r, struct daemon_thread *w, const struct route_match *m);
void routes_ids_decode(struct http_req *r, struct daemon_thread *w, const struct route_match *m);

/* routes_provenance.c */
void routes_ids_trace(struct http_req *r, struct daemon_thread *w, const struct route_match *m);
void routes_collisions_report(struct http_req *r, struct daemon_thread *w,
                              const struct route_match *m);
void routes_collisions_list(struct http_req *r, struct daemon_thread *w,
                            const struct route_match *m);

/* routes_ns.c */
void routes_ns_list(struct http_req *r, struct daemon_thread *w, const struct route_match *m);
void routes_ns_create(struct http_req *r, struct daemon_thread *w, const struct route_match *m);
void routes_ns_get(struct http_req *r, struct daemon_thread *w, const struct route_match *m);
void routes_ns_disable(struct http_req *r, struct daemon_thread *w, const struct route_match *m);
void routes_ns_enable(struct http_req *r, struct daemon_thread *w, const struct route_match *m);
/* POST /v1/namespaces/{ns}/migrate: idmint_ns_migrate(); the body is POST /v1/namespaces's. */
void routes_ns_migrate(struct http_req *r, struct daemon_thread *w, const struct route_match *m);
void routes_ns_workers(struct http_req *r, struct daemon_thread *w, const struct route_match *m);
void routes_ns_bounds(struct http_req *r, struct daemon_thread *w, const struct route_match *m);
void routes_audit(struct http_req *r, struct daemon_thread *w, const struct route_match *m);

/* routes_internal.c */
/* force_release also needs m->role to be admin. */
void routes_internal_workers(struct http_req *r, struct daemon_thread *w,
                             const struct route_match *m);
void routes_internal_ranges(struct http_req *r, struct daemon_thread *w,
                            const struct route_match *m);
/* POST /internal/ranges/forget: a range supply deletes its older request records. */
void routes_internal_ranges_forget(struct http_req *r, struct daemon_thread *w,
                                   const struct route_match *m);
/* GET /internal/history?seq=N: the store's history at N, for remote holders to judge. */
void routes_internal_history(struct http_req *r, struct daemon_thread *w,
                             const struct route_match *m);

/* routes_status.c */
void routes_status_page(struct http_req *r, struct daemon_thread *w, const struct route_match *m);
void routes_status_json(struct http_req *r, struct daemon_thread *w, const struct route_match *m);

/* routes_ops.c */
void routes_healthz(struct http_req *r, struct daemon_thread *w, const struct route_match *m);
void routes_readyz(struct http_req *r, struct daemon_thread *w, const struct route_match *m);
void routes_metrics(struct http_req *r, struct daemon_thread *w, const struct route_match *m);
void routes_openapi(struct http_req *r, struct daemon_thread *w, const struct route_match *m);

#endif /* IDMINTD_ROUTE_TABLE_H */
