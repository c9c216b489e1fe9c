/* SPDX-License-Identifier: Apache-2.0 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "daemon_fixture.h"

#include "auth.h"
#include "config.h"
#include "log.h"
#include "routes_defer.h"
#include "routes_ids.h"
#include "sampler.h"
#include "store_pool.h"
#include "testsupport.h"

#include <curl/curl.h>
#include <jansson.h>
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

int td_daemon_open(struct td_daemon *t, uint32_t lease_ms, uint32_t renew_ms)
{
    return td_daemon_open_with(t, lease_ms, renew_ms, NULL);
}

int td_daemon_open_with(struct td_daemon *t, uint32_t lease_ms, uint32_t renew_ms,
                        void (*adjust)(struct config *cfg))
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
    if (adjust != NULL)
        adjust(cfg);
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
                        routes_store_thread_init, routes_store_thread_fini, &t->d) != 0)
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
    if (t->srv != NULL)
        http_server_stop(t->srv, 0);
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

int td_daemon_token(struct td_daemon *t, const char *name, const char *role, const char *secret)
{
    char hex[65], value[128], err[256];

    if (auth_sha256_hex(secret, strlen(secret), hex) != 0)
        return -1;
    snprintf(value, sizeof(value), "%s:sha256:%s", role, hex);
    if (config_set(&t->d.cfg, "tokens", name, value, err, sizeof(err)) != 0) {
        fprintf(stderr, "td_daemon_token: %s\n", err);
        return -1;
    }
    return 0;
}

int td_daemon_serve(struct td_daemon *t)
{
    const struct config *cfg = &t->d.cfg;
    struct http_server_config hc;
    char err[256];
    int is_in_use = 0;

    memset(&hc, 0, sizeof(hc));
    if (http_parse_listen("127.0.0.1:0", &hc.addr, &hc.addr_len, err, sizeof(err)) != 0)
        return -1;
    if (handles_open_eager(&t->d.handles) != 0)
        return -1;
    atomic_store(&t->d.is_ready, 1);
    routes_batch_init();
    hc.threads = cfg->threads;
    hc.max_connections = cfg->max_connections;
    hc.max_connections_per_client = cfg->max_connections_per_client;
    hc.max_connections_per_prefix = cfg->max_connections_per_prefix;
    hc.client_prefix_v4 = cfg->client_prefix_v4;
    hc.client_prefix_v6 = cfg->client_prefix_v6;
    hc.max_body_bytes = cfg->max_body_bytes;
    hc.max_header_bytes = cfg->max_header_bytes;
    hc.request_timeout_ms = cfg->request_timeout_ms;
    hc.later_timeout_ms = cfg->store_deadline_ms;
    hc.on_request = routes_handle;
    hc.thread_init = routes_thread_init;
    hc.thread_fini = routes_thread_fini;
    hc.arg = &t->d;
    if (http_server_open(&t->srv, &hc, &is_in_use, err, sizeof(err)) != 0) {
        fprintf(stderr, "td_daemon_serve: %s\n", err);
        t->srv = NULL;
        return -1;
    }
    t->port = http_server_port(t->srv);
    if (http_server_start(t->srv, err, sizeof(err)) != 0) {
        fprintf(stderr, "td_daemon_serve: %s\n", err);
        http_server_stop(t->srv, 0);
        t->srv = NULL;
        return -1;
    }
    return 0;
}

static size_t take_body(char *data, size_t size, size_t n, void *arg)
{
    struct td_reply *r = arg;
    char *grown = realloc(r->body, r->len + size * n + 1);

    if (grown == NULL)
        return 0;
    memcpy(grown + r->len, data, size * n);
    r->len += size * n;
    grown[r->len] = '\0';
    r->body = grown;
    return size * n;
}

static size_t take_header(char *data, size_t size, size_t n, void *arg)
{
    struct td_reply *r = arg;
    size_t used = strlen(r->headers);

    if (used + size * n < sizeof(r->headers)) {
        memcpy(r->headers + used, data, size * n);
        r->headers[used + size * n] = '\0';
    }
    return size * n;
}

void td_http(struct td_daemon *t, const char *method, const char *path, const char *token,
             const char *body, const char *header, struct td_reply *out)
{
    CURL *c = curl_easy_init();
    struct curl_slist *hs = NULL;
    char url[2048], auth[512];

    memset(out, 0, sizeof(*out));
    if (c == NULL)
        return;
    snprintf(url, sizeof(url), "http://127.0.0.1:%u%s", t->port, path);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 60L * (long)ts_scale());
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, take_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, out);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, take_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, out);
    if (token != NULL) {
        snprintf(auth, sizeof(auth), "Authorization: Bearer %s", token);
        hs = curl_slist_append(hs, auth);
    }
    if (header != NULL)
        hs = curl_slist_append(hs, header);
    if (body != NULL) {
        hs = curl_slist_append(hs, "Content-Type: application/json");
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    }
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hs);
    if (curl_easy_perform(c) == CURLE_OK)
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &out->status);
    if (out->body == NULL && (out->body = calloc(1, 1)) == NULL)
        out->status = 0;
    curl_slist_free_all(hs);
    curl_easy_cleanup(c);
}

void td_reply_free(struct td_reply *r)
{
    free(r->body);
    r->body = NULL;
    r->len = 0;
}

json_t *td_reply_json(const struct td_reply *r)
{
    json_error_t err;

    return r->body != NULL ? json_loadb(r->body, r->len, 0, &err) : NULL;
}

int td_setup_with(void **state, void (*adjust)(struct config *cfg), int with_tokens, int serve)
{
    struct td_daemon *t = calloc(1, sizeof(*t));

    if (t == NULL || td_daemon_open_with(t, 60000, 20000, adjust) != 0) {
        free(t);
        return -1;
    }
    if ((with_tokens && (td_daemon_token(t, "ops", "admin", TD_ADMIN) != 0 ||
                         td_daemon_token(t, "app", "mint", TD_MINT) != 0 ||
                         td_daemon_token(t, "app2", "mint", TD_MINT2) != 0 ||
                         td_daemon_token(t, "gen", "generator", TD_GEN) != 0)) ||
        (serve ? td_daemon_serve(t) : handles_open_eager(&t->d.handles)) != 0) {
        td_daemon_close(t);
        free(t);
        return -1;
    }
    *state = t;
    return 0;
}

int td_setup(void **state)
{
    return td_setup_with(state, NULL, 0, 0);
}

int td_setup_served(void **state)
{
    return td_setup_with(state, NULL, 1, 1);
}

int td_setup_served_open(void **state)
{
    return td_setup_with(state, NULL, 0, 1);
}

int td_teardown(void **state)
{
    td_daemon_close(*state);
    free(*state);
    return 0;
}

json_t *td_call(struct td_daemon *t, const char *method, const char *path, const char *token,
                const char *body, long status)
{
    struct td_reply r;
    json_t *doc;

    td_http(t, method, path, token, body, NULL, &r);
    if (r.status != status)
        fail_msg("%s %s %s: %ld, not %ld: %s", method, path, body != NULL ? body : "", r.status,
                 status, r.body);
    if ((doc = td_reply_json(&r)) == NULL)
        fail_msg("%s %s: not JSON: %s", method, path, r.body);
    td_reply_free(&r);
    return doc;
}

size_t td_list_len(struct td_daemon *t, const char *path, const char *token, const char *key)
{
    json_t *doc = td_call(t, "GET", path, token, NULL, 200);
    size_t n = json_array_size(json_object_get(doc, key));

    json_decref(doc);
    return n;
}

const char *td_str(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);

    if (!json_is_string(v))
        fail_msg("%s is not a string", key);
    return json_string_value(v);
}

/* The IDs of a 200 JSON answer into @p ids (room for @p cap); how many. */
static size_t ids_of(const struct td_reply *r, uint64_t *ids, size_t cap)
{
    json_t *doc = td_reply_json(r), *arr;
    size_t i, n;

    if (doc == NULL)
        fail_msg("not JSON: %s", r->body);
    arr = json_object_get(doc, "ids");
    n = json_array_size(arr);
    assert_true(n <= cap);
    for (i = 0; i < n; i++) {
        json_t *v = json_array_get(arr, i);

        assert_true(json_is_string(v)); /* 64-bit: exact only as a string */
        ids[i] = strtoull(json_string_value(v), NULL, 10);
    }
    json_decref(doc);
    return n;
}

size_t td_mint(struct td_daemon *t, const char *ns, unsigned count, const char *token,
               const char *header, uint64_t *ids, long *status)
{
    char path[128];
    struct td_reply r;
    size_t n = 0;

    snprintf(path, sizeof(path), "/v1/ids?namespace=%s&count=%u", ns, count);
    td_http(t, "GET", path, token, NULL, header, &r);
    *status = r.status;
    if (r.status == 200)
        n = ids_of(&r, ids, count);
    td_reply_free(&r);
    return n;
}

static int has_full_pass(void *arg)
{
    const struct sampler_cache *c = sampler_cache_get();
    int ok = c != NULL && c->is_full;

    (void)arg;
    sampler_cache_put(c);
    return ok;
}

int td_sampler_full_pass(void)
{
    return td_wait_for(has_full_pass, NULL);
}
