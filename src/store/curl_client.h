/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The library's one libcurl client: an easy handle set up our way and the
 * reply buffer it fills, capped. The etcd store's wire layer and the
 * http:// remote authority each own one; neither touches the handle's
 * callbacks or the buffer. libcurl itself is bound by curl_lib.h. Internal
 * to libidmint.
 */
#ifndef IDMINT_STORE_CURL_CLIENT_H
#define IDMINT_STORE_CURL_CLIENT_H

#include "curl_lib.h"

#include <stddef.h>
#include <stdint.h>

struct idmint__curl_client {
    CURL *curl; /* one easy handle: its connections are kept alive */
    struct curl_slist *headers;
    char *reply;            /* body of the last reply; NUL-terminated, NULL before any */
    size_t reply_len;       /* bytes */
    size_t reply_cap;       /* bytes */
    size_t max_reply_bytes; /* a longer reply aborts its transfer */
    int is_reply_too_big;   /* the last transfer was aborted for that */
    char err[CURL_ERROR_SIZE];
};

/*
 * Set up @p c: an easy handle that sends the headers of @p headers (a
 * NULL-terminated list; copied), speaks only @p protocols ("http",
 * "https"), never raises a signal, goes through no proxy (a proxy from the
 * environment would add its own delays to lease renewals, and could read
 * a bearer token), and keeps replies of at most @p max_reply_bytes.
 * idmint__curl_load() must have returned 0. 0, or IDMINT_ENOMEM with no
 * message set (the caller names what it was opening).
 *
 * Ownership: the caller owns @p c and releases it with
 * idmint__curl_client_close(), also after a failed open.
 * Thread-safety: one client per thread at a time (a libcurl easy handle).
 */
int idmint__curl_client_open(struct idmint__curl_client *c, const char *const *headers,
                             const char *protocols, size_t max_reply_bytes);

/* Release what @p c holds; a zeroed or half-opened client is fine. */
void idmint__curl_client_close(struct idmint__curl_client *c);

/* The longest a transfer may take, and its connect, in ms (0: libcurl's default, none). */
void idmint__curl_client_timeouts(struct idmint__curl_client *c, uint64_t total_ms,
                                  uint64_t connect_ms);

/*
 * Verify the peer's certificate and host name, TLS 1.2 at least, trusting
 * @p ca_file ("": the system store).
 */
void idmint__curl_client_verify_tls(struct idmint__curl_client *c, const char *ca_file);

/*
 * One request to @p url: a POST of @p body (@p len bytes; borrowed) or,
 * when @p body is NULL, a GET. The reply replaces c->reply; c->err is
 * cleared first. curl's code; CURLE_OK says a reply came, of any status.
 */
CURLcode idmint__curl_client_send(struct idmint__curl_client *c, const char *url, const char *body,
                                  size_t len);

/* The HTTP status of the last reply (0 when none came). */
long idmint__curl_client_status(const struct idmint__curl_client *c);

/* What went wrong with a send that returned @p cc: curl's own words. Never NULL. */
const char *idmint__curl_client_error(const struct idmint__curl_client *c, CURLcode cc);

#endif /* IDMINT_STORE_CURL_CLIENT_H */
