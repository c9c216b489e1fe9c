/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One libcurl client for the library (curl_client.h): the etcd store and
 * the http:// authority once each grew a reply buffer and a handle set-up
 * of their own, and drifted. What they differ in (headers, protocols,
 * timeouts, TLS) is an argument here.
 */
#include "curl_client.h"

#include "idmint.h"

#include <stdlib.h>
#include <string.h>

static size_t client_on_data(char *data, size_t size, size_t nmemb, void *arg)
{
    struct idmint__curl_client *c = arg;
    size_t len = size * nmemb, cap;
    char *grown;

    if (c->reply_len + len + 1 > c->max_reply_bytes) {
        c->is_reply_too_big = 1;
        return 0; /* curl aborts the transfer */
    }
    if (c->reply_len + len + 1 > c->reply_cap) {
        cap = c->reply_cap == 0 ? 4096 : c->reply_cap;
        while (cap < c->reply_len + len + 1)
            cap *= 2;
        if ((grown = realloc(c->reply, cap)) == NULL)
            return 0;
        c->reply = grown;
        c->reply_cap = cap;
    }
    memcpy(c->reply + c->reply_len, data, len);
    c->reply_len += len;
    c->reply[c->reply_len] = '\0';
    return len;
}

int idmint__curl_client_open(struct idmint__curl_client *c, const char *const *headers,
                             const char *protocols, size_t max_reply_bytes)
{
    struct curl_slist *list;
    size_t i;

    memset(c, 0, sizeof(*c));
    c->max_reply_bytes = max_reply_bytes;
    if ((c->curl = idmint__curl.easy_init()) == NULL)
        return IDMINT_ENOMEM;
    for (i = 0; headers[i] != NULL; i++) {
        if ((list = idmint__curl.slist_append(c->headers, headers[i])) == NULL)
            return IDMINT_ENOMEM;
        c->headers = list;
    }
    idmint__curl.easy_setopt(c->curl, CURLOPT_HTTPHEADER, c->headers);
    idmint__curl.easy_setopt(c->curl, CURLOPT_WRITEFUNCTION, client_on_data);
    idmint__curl.easy_setopt(c->curl, CURLOPT_WRITEDATA, c);
    idmint__curl.easy_setopt(c->curl, CURLOPT_ERRORBUFFER, c->err);
    /* The renewal thread must never be hit by SIGALRM from name lookups. */
    idmint__curl.easy_setopt(c->curl, CURLOPT_NOSIGNAL, 1L);
    idmint__curl.easy_setopt(c->curl, CURLOPT_PROTOCOLS_STR, protocols);
    idmint__curl.easy_setopt(c->curl, CURLOPT_PROXY, "");
    return 0;
}

void idmint__curl_client_close(struct idmint__curl_client *c)
{
    if (c->curl != NULL)
        idmint__curl.easy_cleanup(c->curl);
    if (c->headers != NULL)
        idmint__curl.slist_free_all(c->headers);
    free(c->reply);
    memset(c, 0, sizeof(*c));
}

void idmint__curl_client_timeouts(struct idmint__curl_client *c, uint64_t total_ms,
                                  uint64_t connect_ms)
{
    idmint__curl.easy_setopt(c->curl, CURLOPT_TIMEOUT_MS, (long)total_ms);
    idmint__curl.easy_setopt(c->curl, CURLOPT_CONNECTTIMEOUT_MS, (long)connect_ms);
}

void idmint__curl_client_verify_tls(struct idmint__curl_client *c, const char *ca_file)
{
    /* Peer and host verification are libcurl's defaults; said here so that
     * no later edit loses them. idmintd serves TLS 1.2+ only. */
    idmint__curl.easy_setopt(c->curl, CURLOPT_SSL_VERIFYPEER, 1L);
    idmint__curl.easy_setopt(c->curl, CURLOPT_SSL_VERIFYHOST, 2L);
    idmint__curl.easy_setopt(c->curl, CURLOPT_SSLVERSION, (long)CURL_SSLVERSION_TLSv1_2);
    if (ca_file[0] != '\0')
        idmint__curl.easy_setopt(c->curl, CURLOPT_CAINFO, ca_file);
}

CURLcode idmint__curl_client_send(struct idmint__curl_client *c, const char *url, const char *body,
                                  size_t len)
{
    c->reply_len = 0;
    c->is_reply_too_big = 0;
    c->err[0] = '\0';
    idmint__curl.easy_setopt(c->curl, CURLOPT_URL, url);
    if (body != NULL) {
        idmint__curl.easy_setopt(c->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
        idmint__curl.easy_setopt(c->curl, CURLOPT_POSTFIELDS, body);
    } else {
        idmint__curl.easy_setopt(c->curl, CURLOPT_HTTPGET, 1L);
    }
    return idmint__curl.easy_perform(c->curl);
}

long idmint__curl_client_status(const struct idmint__curl_client *c)
{
    long status = 0;

    idmint__curl.easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &status);
    return status;
}

const char *idmint__curl_client_error(const struct idmint__curl_client *c, CURLcode cc)
{
    return c->err[0] != '\0' ? c->err : idmint__curl.easy_strerror(cc);
}
