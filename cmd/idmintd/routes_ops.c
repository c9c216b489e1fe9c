/* SPDX-License-Identifier: Apache-2.0 */
/* GET /healthz, /readyz, /metrics and /v1/openapi.json: open to every caller, never a store write.
 */
#include "daemon.h"

#include "json.h"
#include "prometheus.h"
#include "reply.h"
#include "route_table.h"
#include "status.h"
#include "status_assets.h"

#include <stdio.h>

void routes_healthz(struct http_req *r, struct daemon_thread *w, const struct route_match *m)
{
    static const char body[] = "{\"status\":\"ok\"}";

    (void)w;
    (void)m;
    routes_reply(r, 200, "application/json", body, sizeof(body) - 1);
}

void routes_readyz(struct http_req *r, struct daemon_thread *w, const struct route_match *m)
{
    static const char ready[] = "{\"status\":\"ready\"}";
    char reason[256];
    struct json *o;

    (void)m;
    if (status_ready(w->d, reason, sizeof(reason))) {
        routes_reply(r, 200, "application/json", ready, sizeof(ready) - 1);
        return;
    }
    o = json_new_object();
    json_set_str(o, "status", "not_ready");
    json_set_str(o, "reason", reason);
    routes_json_tree(r, 503, o);
}

void routes_metrics(struct http_req *r, struct daemon_thread *w, const struct route_match *m)
{
    size_t len = 0;
    char *text = prometheus_render(w->d, &len);

    (void)m;
    routes_reply_malloced(r, 200, "text/plain; version=0.0.4; charset=utf-8", text, len);
}

void routes_openapi(struct http_req *r, struct daemon_thread *w, const struct route_match *m)
{
    (void)w;
    (void)m;
    /* The document a client is generated from: the one the tests check against this table. */
    routes_reply(r, 200, "application/json", (const char *)asset_openapi_json,
                 asset_openapi_json_len);
}
