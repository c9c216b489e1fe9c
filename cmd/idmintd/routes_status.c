/* SPDX-License-Identifier: Apache-2.0 */
/*
 * GET /status (the page) and GET /v1/status (its figures as JSON), both
 * from one status_view_take() snapshot. Neither touches the store: what
 * they show of it is the store sampler's latest pass (sampler.h), which
 * each request keeps full and fresh while someone looks.
 */
#include "daemon.h"

#include "json.h"
#include "reply.h"
#include "route_table.h"
#include "sampler.h"
#include "status.h"

#include <stdlib.h>

/* The caller's view: 0, or -1 after replying 503. */
static int take(struct http_req *r, struct daemon_thread *w, const struct route_match *m,
                struct status_view *v)
{
    sampler_watch();
    if (status_view_take(w->d, m->role >= AUTH_ADMIN, v) != 0) {
        routes_fail(r, IDMINT_ENOMEM, "out of memory building the status");
        return -1;
    }
    return 0;
}

void routes_status_page(struct http_req *r, struct daemon_thread *w, const struct route_match *m)
{
    struct status_view v;
    size_t len = 0;
    char *html;

    if (take(r, w, m, &v) != 0)
        return;
    html = status_page(w->d, &v, &len);
    status_view_free(&v);
    http_add_header(r, "content-security-policy", status_page_csp());
    http_add_header(r, "cache-control", "no-store");
    http_add_header(r, "x-content-type-options", "nosniff");
    http_add_header(r, "referrer-policy", "no-referrer");
    routes_reply_malloced(r, 200, "text/html; charset=utf-8", html, len);
}

void routes_status_json(struct http_req *r, struct daemon_thread *w, const struct route_match *m)
{
    struct status_view v;
    struct json *o;

    if (take(r, w, m, &v) != 0)
        return;
    o = status_json(w->d, &v);
    status_view_free(&v);
    http_add_header(r, "cache-control", "no-store");
    routes_json_tree(r, 200, o);
}
