/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The HTTP server seam. http.c is the only file that calls the HTTP library
 * (h2o's evloop); the rest of the daemon sees a request as method, path,
 * query, two headers and a body, and answers with status, type and body.
 * TLS, when configured, is invisible above this seam (http_tls.h).
 * Handlers run on the event-loop thread and answer before returning, or
 * keep the request open with http_later_new (answered from another thread)
 * or http_after (answered from a timer) and return at once: a loop never
 * waits.
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
    /* enum http_head_verdict (http_screen.h) of this request's raw head; 0:
     * fine. Any other (and has_bad_framing) closes the connection after the
     * answer. */
    int head_verdict;
    unsigned char client[16]; /* the peer as struct http_client_key; all zero when unknown */
    void *thread;             /* what thread_init returned for the serving thread */
    void *priv;               /* the library's request */
    void *later;              /* http_later_new's copy: its struct, else NULL */
};

struct http_tls; /* http_tls.h */

struct http_server_config {
    struct sockaddr_storage addr;
    socklen_t addr_len;
    unsigned threads;         /* event loops, one listener each (SO_REUSEPORT) */
    unsigned max_connections; /* over all threads; more get 503 and are closed */
    /* From one client address (IPv6: one /64); more get 503 (http_screen.h); 0: no bound. */
    unsigned max_connections_per_client;
    /* From one address prefix (client_prefix_v4/_v6 bits); more get 503; 0: no bound. */
    unsigned max_connections_per_prefix;
    unsigned client_prefix_v4; /* 8..32; 0: 24 */
    unsigned client_prefix_v6; /* 16..64; 0: 48 */
    size_t max_body_bytes;     /* the library may drop far larger bodies itself */
    size_t max_header_bytes;   /* checked before the library parses a connection's first request */
    uint32_t request_timeout_ms; /* a request must arrive within this (and a TLS handshake) */
    uint32_t later_timeout_ms;   /* http_later_new: on_unanswered after this; 0: never */
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

/* Memory that lives as long as the request (or the later copy). NULL when out of memory. */
char *http_alloc(struct http_req *r, size_t size);
/* Add a response header; before http_respond. @p name and @p value are copied. */
void http_add_header(struct http_req *r, const char *name, const char *value);
/*
 * Send the whole response. @p body must live until the request ends: static
 * storage or http_alloc'd. Exactly one call per request.
 */
void http_respond(struct http_req *r, int status, const char *content_type, const char *body,
                  size_t len);

/* ==== answering later ==== */

/* What the caller of http_later_new hears, on the request's loop thread. */
struct http_later_cbs {
    /*
     * The other thread's answer was handled: sent with @p status, or 0 when
     * it was dropped (the client had gone, or on_unanswered answered
     * first). Exactly once per later, after which @p arg is freed.
     */
    void (*on_done)(int status, void *arg);
    /*
     * No answer by later_timeout_ms, or one posted without an answer: answer
     * @p r now, on the loop (http_respond). At most once; an answer that
     * comes after it is dropped.
     */
    void (*on_unanswered)(struct http_req *r, void *arg);
};

/*
 * Keep @p r open to be answered from another thread. *copy gets the same
 * fields in memory of its own, with a zeroed *arg of @p arg_size bytes that
 * lives as long: one other thread at a time may answer *copy with
 * http_alloc, http_add_header and http_respond, which record the answer,
 * then calls http_later_post. The loop sends the answer if @p r still
 * waits for one. A client that leaves meanwhile is fine: nothing of @p r
 * is touched after h2o frees it. On the loop thread, in on_request.
 * 0, or -1 when out of memory (answer @p r as usual).
 */
int http_later_new(struct http_req *r, const struct http_later_cbs *cbs, size_t arg_size,
                   struct http_req **copy, void **arg);
/* Hand @p copy's answer back to its loop; from any thread, once. @p copy is gone after. */
void http_later_post(struct http_req *copy);
/* Undo http_later_new before it was handed on (loop thread); no callback runs. */
void http_later_cancel(struct http_req *copy);

/*
 * Call @p cb(r, arg) on @p r's loop after about @p ms (at least 1), unless
 * the client went away first; @p r stays open until cb answers it or calls
 * http_after again. @p arg must live as long as @p r (http_alloc'd).
 * 0, or -1 when out of memory (answer @p r now).
 */
int http_after(struct http_req *r, uint32_t ms, void (*cb)(struct http_req *r, void *arg),
               void *arg);

/* Parse "ADDR:PORT" ("[::1]:8080" for IPv6). 0 or -1 with @p err set. */
int http_parse_listen(const char *text, struct sockaddr_storage *ss, socklen_t *len, char *err,
                      size_t err_size);
/* 1 when @p ss is in 127.0.0.0/8 or ::1. */
int http_is_loopback(const struct sockaddr_storage *ss);
/* "ADDR:PORT" of @p ss with @p port. */
void http_format_addr(const struct sockaddr_storage *ss, uint16_t port, char *buf, size_t size);

#endif /* IDMINTD_HTTP_H */
