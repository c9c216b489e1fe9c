/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The daemon without h2o, for fuzz_http.c and fuzz_json.c: this file defines
 * the response half of the server seam (http.h) so that routes_handle() runs
 * in-process, and a daemon whose authority URL has an unknown scheme, so a
 * route reaches the point where it would open a store and gets a clean
 * error instead. Include it from exactly one file of a target (each target
 * is one .c file; definitions, not declarations, live here).
 *
 * Every request must be answered exactly once, with a JSON object when the
 * type says JSON: the checks in fuzz_dispatch() abort otherwise.
 */
#ifndef IDMINT_FUZZ_DAEMON_STUB_H
#define IDMINT_FUZZ_DAEMON_STUB_H

#include "config.h"
#include "daemon.h"
#include "json.h"
#include "log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STUB_ALLOCS_MAX 64

static struct {
    void *allocs[STUB_ALLOCS_MAX]; /* request memory, freed after each request */
    size_t n_allocs;
    int responses;
    int status;
} stub;

char *http_alloc(struct http_req *r, size_t size)
{
    void *p;

    (void)r;
    if (stub.n_allocs == STUB_ALLOCS_MAX || (p = malloc(size > 0 ? size : 1)) == NULL)
        return NULL;
    stub.allocs[stub.n_allocs++] = p;
    return p;
}

void http_add_header(struct http_req *r, const char *name, const char *value)
{
    (void)r;
    if (name[0] == '\0' || strchr(value, '\n') != NULL || strchr(value, '\r') != NULL)
        abort(); /* a header the route built must never split the response */
}

void http_respond(struct http_req *r, int status, const char *content_type, const char *body,
                  size_t len)
{
    (void)r;
    stub.responses++;
    stub.status = status;
    if (status < 200 || status > 599 || (len > 0 && body == NULL))
        abort();
    if (strcmp(content_type, "application/json") == 0) {
        char err[256];
        struct json *v = json_parse_object(body, len, err, sizeof(err));

        if (v == NULL)
            abort();
        json_free(v);
    }
}

/* The daemon here has no store threads (d->pool is NULL): store-bound
 * handlers run inline, and nothing is answered later. */
int http_later_new(struct http_req *r, const struct http_later_cbs *cbs, size_t arg_size,
                   struct http_req **copy, void **arg)
{
    (void)r, (void)cbs, (void)arg_size, (void)copy, (void)arg;
    abort();
}

void http_later_post(struct http_req *copy)
{
    (void)copy;
    abort();
}

void http_later_cancel(struct http_req *copy)
{
    (void)copy;
    abort();
}

int http_after(struct http_req *r, uint32_t ms, void (*cb)(struct http_req *r, void *arg),
               void *arg)
{
    (void)r, (void)ms, (void)cb, (void)arg;
    return -1; /* the route answers at once instead */
}

/* Two daemons: one open to all (no tokens), one with a mint and an admin token. */
static struct daemon stub_open, stub_auth;

static void stub_daemon_init(struct daemon *d, int with_tokens)
{
    char err[256], line[128], hex[65];

    memset(d, 0, sizeof(*d));
    config_defaults(&d->cfg);
    /* No store: every route that needs the authority gets EINVAL from here. */
    if (config_set(&d->cfg, "authority", "url", "fuzz:no-store", err, sizeof(err)) != 0 ||
        config_set(&d->cfg, "server", "max_count", "100", err, sizeof(err)) != 0)
        abort();
    if (with_tokens) {
        static const char *const roles[][2] = {
            {"minter", "mint"}, {"gen", "generator"}, {"root", "admin"}};
        size_t i;

        for (i = 0; i < 3; i++) {
            /* The token is the role name: "Authorization: Bearer admin". */
            if (auth_sha256_hex(roles[i][1], strlen(roles[i][1]), hex) != 0)
                abort();
            snprintf(line, sizeof(line), "%s:sha256:%s", roles[i][1], hex);
            if (config_set(&d->cfg, "tokens", roles[i][0], line, err, sizeof(err)) != 0)
                abort();
        }
    }
    if (config_finish(&d->cfg, err, sizeof(err)) != 0)
        abort();
    handles_init(&d->handles, &d->cfg);
    if ((d->threads = calloc(d->cfg.threads, sizeof(*d->threads))) == NULL)
        abort();
    routes_thread_init(0, d);
}

static void stub_init(void)
{
    static int done;

    if (done)
        return;
    done = 1;
    /* Quiet: the routes log store failures, which here are every one. */
    if (log_open(NULL, LOG_ERROR + 1) != 0)
        abort();
    stub_daemon_init(&stub_open, 0);
    stub_daemon_init(&stub_auth, 1);
}

/* Run @p r through the dispatcher of @p d; abort unless answered exactly once. */
static int fuzz_dispatch(struct daemon *d, struct http_req *r)
{
    size_t i;

    stub.responses = 0;
    stub.status = 0;
    r->thread = &d->threads[0];
    r->priv = NULL;
    routes_handle(r);
    if (stub.responses != 1)
        abort();
    for (i = 0; i < stub.n_allocs; i++)
        free(stub.allocs[i]);
    stub.n_allocs = 0;
    return stub.status;
}

#endif /* IDMINT_FUZZ_DAEMON_STUB_H */
