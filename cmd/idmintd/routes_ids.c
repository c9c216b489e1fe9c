/* SPDX-License-Identifier: Apache-2.0 */
/*
 * GET /v1/ids (the hot route; with an Idempotency-Key, routes_batch.c) and
 * GET /v1/ids/{id}/decode. On a loop, GET /v1/ids mints only from a handle
 * already open and never waits: what needs the store (a key, a namespace
 * not open yet, a range reserve run dry) goes to a store thread, and a
 * batch larger than what the current time unit holds is finished from a
 * timer on the loop (routes_mint.c).
 */
#include "daemon.h"

#include "idmint_service.h"
#include "json.h"
#include "reply.h"
#include "routes_authority.h"
#include "routes_ids.h"
#include "routes_mint.h"
#include "route_table.h"
#include "routes_defer.h"

#include <stdio.h>
#include <string.h>

void routes_ids_get(struct http_req *r, struct daemon_thread *w, const struct route_match *m)
{
    const uint32_t max_count = w->d->cfg.max_count;
    char ns[64], count_text[32];
    struct ns_handle *nh;
    uint64_t count = 1, *ids;
    size_t i;
    int q, rc;

    (void)m;
    if (routes_query_ns(r, ns, sizeof(ns)) != 0)
        return;
    q = routes_query(r, "count", count_text, sizeof(count_text));
    if (q != 0) {
        size_t len = q > 0 ? strlen(count_text) : 0;

        count = 0;
        if (len == 0 || len > 10 || strspn(count_text, "0123456789") != len) {
            routes_fail(r, IDMINT_EINVAL, "count must be a whole number from 1 to max_count");
            return;
        }
        for (i = 0; i < len; i++)
            count = count * 10 + (uint64_t)(count_text[i] - '0');
        if (count < 1 || count > max_count) {
            char text[96];

            snprintf(text, sizeof(text), "count %llu is outside 1..%u", (unsigned long long)count,
                     (unsigned)max_count);
            routes_fail(r, IDMINT_EINVAL, text);
            return;
        }
    }
    /* On a loop, only a handle already open: opening one needs the store. */
    nh = w->is_store ? NULL : handles_find(&w->d->handles, ns);
    if (!w->is_store && (r->idempotency_keys > 0 || nh == NULL)) {
        routes_defer_store(r, w, m, routes_ids_get);
        return;
    }
    if (nh == NULL && (rc = handles_get(&w->d->handles, ns, &nh)) != 0) {
        routes_fail(r, rc, NULL);
        return;
    }
    if (r->idempotency_keys > 0) {
        routes_batch_mint(r, w, ns, nh, (uint32_t)count);
        return;
    }
    ids = (uint64_t *)(void *)http_alloc(r, (size_t)count * sizeof(uint64_t));
    if (ids == NULL) {
        routes_fail(r, IDMINT_ENOMEM, "out of memory");
        return;
    }
    if (w->is_store) {
        size_t done = 0;
        uint32_t wait_ms = 0;

        /* Never wait for a time unit here: a store thread held through
         * units is one the lease routes and every other store call lack.
         * What the unit holds is minted now, the rest on the loop. */
        if ((rc = routes_mint_ready(w, nh, ids, (size_t)count, &done, &wait_ms)) != 0) {
            routes_fail(r, rc, NULL);
            return;
        }
        if (done == count)
            routes_reply_ids(r, ns, ids, (size_t)count);
        else if (routes_mint_finish_on_loop(r, w, ns, ids, done, (size_t)count, NULL) != 0)
            routes_fail(r, IDMINT_ENOMEM, "out of memory handing a batch to its event loop");
        return;
    }
    routes_mint_on_loop(r, w, m, nh, ns, ids, (size_t)count, 0, NULL);
}

void routes_ids_decode(struct http_req *r, struct daemon_thread *w, const struct route_match *m)
{
    const char *id_text = m->segment;
    char ns[64], when[32];
    idmint_ns_info info;
    idmint_decoded dec;
    idmint_authority *a;
    struct json *o;
    uint64_t id;

    if (routes_query_ns(r, ns, sizeof(ns)) != 0)
        return;
    if (idmint_id_parse(id_text, &id) != 0) {
        routes_fail(r, IDMINT_EINVAL, NULL);
        return;
    }
    if (routes_snowflake_ns(r, w, ns, &a, &info,
                            "namespace is a range namespace: its IDs carry no fields to decode") !=
        0)
        return;
    if (idmint_decode(&info.layout, id, &dec) != 0) {
        routes_fail(r, IDMINT_EINVAL, NULL);
        return;
    }
    if (idmint_format_iso8601(dec.unix_ms, when, sizeof(when)) != 0)
        when[0] = '\0';
    o = json_new_object();
    json_set_u64_str(o, "id", id);
    json_set_str(o, "namespace", ns);
    json_set_str(o, "time", when);
    json_set_int(o, "unix_ms", dec.unix_ms);
    json_set_int(o, "region", dec.region);
    json_set_int(o, "worker", dec.worker);
    json_set_int(o, "sequence", (int64_t)dec.sequence); /* S <= 62: fits */
    routes_json_tree(r, 200, o);
}
