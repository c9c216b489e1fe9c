/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The HTTP server seam. http.c is the only file that calls the HTTP library
 * (h2o's evloop); the rest of the daemon sees a request as method, path,
 * query, two headers and a body, and answers with status, type and body.
 * TLS, when configured, is invisible above this seam (http_tls.h).
 * Handlers run on the event-loop thread and must answer before returning.
 */
#ifndef IDMINTD_HTTP_H
#define IDMINTD_HTTP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

struct http_req {
    const char *method; /* not NUL-terminated */
    size_t method_len;
    const char *path; /* raw path without the query; not NUL-terminated */
    size_t path_len;
    const char *query; /* after '?', NULL when there is none */
    size_t query_len;
    const char *body; /* NULL when empty */
    size_t body_len;
    const char *authorization; /* NULL when absent */
    size_t authorization_len;
    const char *accept; /* NULL when absent */
    size_t accept_len;
    const char *idempotency_key; /* the first Idempotency-Key header; NULL when absent */
    size_t idempotency_key_len;
    unsigned idempotency_keys; /* how many Idempotency-Key headers came */
    size_t header_bytes;       /* request line and headers as received, roughly */
    int has_bad_framing;       /* several Content-Lengths, or one beside Transfer-Encoding */
    int head_verdict; /* enum http_head_verdict (http_screen.h) of a later request; 0: fine */
    unsigned char client[16]; /* the peer as struct http_client_key; all zero when unknown */
    void *thread;             /* what thread_init returned for the serving thread */
    void *priv;               /* the library's request */
};

struct http_tls; /* http_tls.h */

struct http_server_config {
    struct sockaddr_storage addr;
    socklen_t addr_len;
    unsigned threads;         /* event loops, one listener each (SO_REUSEPORT) */
    unsigned max_connections; /* over all threads; above it accepting pauses */
    /* From one client address (IPv6: one /64); more get 503 (http_screen.h); 0: no bound. */
    unsigned max_connections_per_client;
    size_t max_body_bytes;   /* the library may drop far larger bodies itself */
    size_t max_header_bytes; /* checked before the library parses a connection's first request */
    uint32_t request_timeout_ms; /* a request must arrive within this (and a TLS handshake) */
    struct http_tls *tls;        /* NULL: plain HTTP; borrowed, must outlive the server */
    void (*on_request)(struct http_req *r);
    void *(*thread_init)(unsigned index, void *arg); /* runs on the new thread */
    void (*thread_fini)(void *thread);
    void *arg;
};

struct http_server;

/*
 * Bind every listener (nothing is served until http_server_start). Returns 0,
 * or -1 with @p err set; *is_in_use is 1 when the address was taken.
 */
int http_server_open(struct http_server **out, const struct http_server_config *cfg, int *is_in_use,
                     char *err, size_t err_size);
/* The port actually bound (useful with port 0). */
uint16_t http_server_port(const struct http_server *s);
/* Start the event-loop threads. 0 or -1 with @p err set. */
int http_server_start(struct http_server *s, char *err, size_t err_size);
/*
 * Stop accepting, let requests in flight finish for at most @p drain_ms, join
 * the threads and free everything. NULL is a no-op.
 */
void http_server_stop(struct http_server *s, uint32_t drain_ms);

/* Memory that lives as long as the request. NULL when out of memory. */
char *http_alloc(struct http_req *r, size_t size);
/* Add a response header; before http_respond. @p name and @p value are copied. */
void http_add_header(struct http_req *r, const char *name, const char *value);
/*
 * Send the whole response. @p body must live until the request ends: static
 * storage or http_alloc'd. Exactly one call per request.
 */
void http_respond(struct http_req *r, int status, const char *content_type, const char *body,
                  size_t len);

/* Parse "ADDR:PORT" ("[::1]:8080" for IPv6). 0 or -1 with @p err set. */
int http_parse_listen(const char *text, struct sockaddr_storage *ss, socklen_t *len, char *err,
                      size_t err_size);
/* 1 when @p ss is in 127.0.0.0/8 or ::1. */
int http_is_loopback(const struct sockaddr_storage *ss);
/* "ADDR:PORT" of @p ss with @p port. */
void http_format_addr(const struct sockaddr_storage *ss, uint16_t port, char *buf, size_t size);

#endif /* IDMINTD_HTTP_H */
