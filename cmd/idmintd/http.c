/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The only file that calls h2o (the evloop library, HTTP/1.1, over TLS when
 * configured: the credentials live in http_tls.c). One event loop per
 * thread, each with its own SO_REUSEPORT listener, always accepting. Each
 * new connection is admitted by its client address and prefix first
 * (http_screen.c: at most max_connections_per_client and
 * max_connections_per_prefix each, the last slots kept for prefixes without
 * one; a refused one, also one that finds every slot taken, gets 503 and is
 * closed), then screened (header size and count, declared body size; over
 * TLS after the handshake, which this file starts itself so that screening
 * sees plain bytes) so that oversized requests get a 431/413 instead of the
 * silent close h2o gives past its own limits; then h2o owns the socket, and
 * the raw head of every request it parses, the first and each later one of
 * a kept-alive connection, is screened again (screen_parsed) before a
 * handler sees it. Connections are counted per thread to close idle ones
 * early near the limit, and to drain at stop. A request may be answered
 * later, from another thread (http_later_new: its answer comes back through
 * the loop's h2o message queue) or from a timer (http_after); both hang off
 * the request's memory pool, so a client that leaves first only drops them.
 */
#define H2O_USE_LIBUV 0 /* the evloop flavour of the library */

#include "http.h"
#include "clocks.h"
#include "http_screen.h"
#include "http_tls.h"

#include <h2o.h>
#include <h2o/http1.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define MAX_HEADER_LINES 100  /* h2o drops a request with more (H2O_MAX_HEADERS) */
#define LINGER_MS        2000 /* after an early error reply, read and drop this long */
#define LOOP_WAIT_MS     100  /* how soon a loop notices the stop flag */
#define DRAIN_FORCE_MS   1000 /* after the drain bound, how long closing may take */
#define ACCEPTS_PER_WAKE 32
#define IDLE_SWEEP_MS    250  /* how often a loop near its limit looks for idle connections */
#define IDLE_SHORT_MS    1000 /* near the limit, the keep-alive idle time */
#define REFUSED_MAX      32   /* refusals that linger per thread; more are answered and closed */
#define REFUSED_DRAIN    4    /* reads of what a refused client sent, before closing it */

#ifndef SO_REUSEPORT
#define SO_REUSEPORT 15 /* Linux; hidden from strict POSIX builds */
#endif

struct http_thread;

struct conn {
    struct conn *prev, *next; /* in the thread's list, newest first */
    struct http_thread *th;
    h2o_socket_t *sock;
    h2o_timeout_entry_t timeout; /* screening or lingering */
    struct http_client_key key;  /* the peer as the admission table counts it */
    uint64_t active_ms;          /* monotonic; accept, or the last request or busy sweep */
    int is_admitted;             /* counted in the table (and in n_conns) */
    int is_lingering;            /* an early reply is out; only draining its input */
    int is_handed_over;          /* h2o owns the socket now */
    int is_shut_rd;              /* drain or the idle sweep asked it to stop reading */
    enum http_refusal why;       /* a refused one: which 503 it gets after its handshake */
    SSL_CTX *ssl_ctx;            /* TLS: our reference for the connection's life; else NULL */
};

struct http_thread {
    h2o_context_t ctx;
    h2o_evloop_t *loop;
    h2o_accept_ctx_t accept_ctx;
    h2o_socket_t *listener; /* NULL once closed */
    int listen_fd;
    struct http_server *srv;
    unsigned index;
    void *user;
    pthread_t thread;
    int has_thread;
    unsigned n_conns;       /* admitted connections of this thread */
    unsigned n_refused;     /* refused ones still sending their 503; <= REFUSED_MAX */
    unsigned n_closing;     /* admitted ones shut for reading, waiting for h2o to close them */
    unsigned max_conns;     /* this thread's share of max_connections: the idle sweep's */
    uint64_t next_sweep_ms; /* monotonic */
    struct conn head;       /* list sentinel */
    h2o_timeout_t screen_timeout;
    h2o_timeout_t linger_timeout;
    h2o_timeout_t later_timeout; /* later_timeout_ms: answers nobody else gave */
    h2o_timeout_t tick_timeout;  /* 1 ms: http_after counts its wait in these */
    struct mailbox *mb;          /* answers from other threads */
};

struct server_handler {
    h2o_handler_t super;
    struct http_server *srv;
};

struct http_server {
    h2o_globalconf_t config;
    struct http_server_config cfg;
    struct http_thread *threads;
    unsigned n_threads;
    uint16_t port;
    int claim_fd; /* threads > 1: the abstract socket that claims the port; else -1 */
    _Atomic int is_stopping;
    uint32_t drain_ms;
    uint32_t idle_short_ms;   /* keep-alive idle time near the limit */
    struct http_admit *admit; /* connections by client address, all threads */
    char reply_431[512];      /* whole responses sent before h2o sees a request */
    char reply_413[512];
    char reply_head[HTTP_HEAD_COUNT][640];   /* by enum http_head_verdict */
    char reply_503[HTTP_REFUSED_COUNT][512]; /* by enum http_refusal */
};

#if defined(__SANITIZE_ADDRESS__)
/*
 * h2o 2.2 keeps per-thread recycle pools and each context's message queue
 * until the process exits (h2o_context_dispose does not free them); tell
 * LeakSanitizer so that a clean stop still exits 0 in sanitizer builds.
 */
__attribute__((visibility("default"))) const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
    return "leak:libh2o-evloop.so\n";
}

__attribute__((visibility("default"))) const char *__lsan_default_options(void);
const char *__lsan_default_options(void)
{
    return "print_suppressions=0";
}
#endif

static struct http_thread *thread_of(h2o_context_t *ctx)
{
    return (struct http_thread *)(void *)((char *)ctx - offsetof(struct http_thread, ctx));
}

static struct http_thread *thread_of_req(h2o_req_t *req)
{
    return thread_of(req->conn->ctx);
}

/* ==== answering later: the shared part ==== */

/*
 * A loop's letterbox for answers from other threads. It outlives the loop
 * while laters still point at it (refs): a store thread that finishes after
 * the loop stopped finds it closed and drops its answer instead of sending
 * to a queue that is gone.
 */
struct mailbox {
    pthread_mutex_t mu;
    int is_open;                         /* under mu; 0 once the loop stops */
    _Atomic unsigned refs;               /* the loop's, and one per later */
    h2o_multithread_receiver_t receiver; /* on the loop's h2o queue */
};

struct later_block {
    struct later_block *next;
    max_align_t align[]; /* the bytes handed out */
};

struct later_header {
    struct later_header *next;
    const char *name, *value;
};

/*
 * One request answered from another thread. Two sides each hold a
 * reference: the loop (until h2o frees the request, or cancel) and the
 * other thread (until its answer was handled on the loop, or dropped at a
 * closed mailbox). Fields marked (loop) are touched on the loop only.
 */
struct later {
    struct http_req copy; /* what the other thread answers; copy.later = this */
    struct http_req orig; /* as on_request had it; valid while req is (loop) */
    h2o_req_t *req;       /* NULL once h2o freed it (loop) */
    struct later **ref;   /* in req's pool, pointing back here (loop) */
    struct http_thread *th;
    struct mailbox *mb;
    h2o_multithread_message_t msg;
    h2o_timeout_entry_t timeout; /* (loop) */
    struct http_later_cbs cbs;
    void *arg;
    int is_answered; /* orig has its answer (loop) */
    _Atomic int refs;
    /* The recorded answer, written by the other thread before it posts. */
    int status; /* 0: none recorded */
    const char *content_type;
    const char *body;
    size_t body_len;
    struct later_header *headers, **headers_tail;
    struct later_block *blocks;
};

static void mailbox_unref(struct mailbox *mb)
{
    if (atomic_fetch_sub(&mb->refs, 1) != 1)
        return;
    pthread_mutex_destroy(&mb->mu);
    free(mb);
}

static void later_unref(struct later *l)
{
    struct later_block *b, *next;

    if (atomic_fetch_sub(&l->refs, 1) != 1)
        return;
    for (b = l->blocks; b != NULL; b = next) {
        next = b->next;
        free(b);
    }
    mailbox_unref(l->mb);
    free(l);
}

static void *later_alloc(struct later *l, size_t size)
{
    struct later_block *b = malloc(sizeof(*b) + (size > 0 ? size : 1));

    if (b == NULL)
        return NULL;
    b->next = l->blocks;
    l->blocks = b;
    return b->align;
}

static char *later_dup(struct later *l, const char *p, size_t len)
{
    char *d;

    if (p == NULL)
        return NULL;
    if ((d = later_alloc(l, len + 1)) == NULL)
        return NULL;
    memcpy(d, p, len);
    d[len] = '\0';
    return d;
}

static void later_answered(struct later *l)
{
    l->is_answered = 1;
    if (h2o_timeout_is_linked(&l->timeout))
        h2o_timeout_unlink(&l->timeout);
}

/* h2o frees the request (answered, or its client left): forget it. (loop) */
static void later_on_dispose(void *p)
{
    struct later **ref = p, *l = *ref;

    if (l == NULL)
        return;
    l->req = NULL;
    l->ref = NULL;
    if (h2o_timeout_is_linked(&l->timeout))
        h2o_timeout_unlink(&l->timeout);
    later_unref(l);
}

static void later_on_timeout(h2o_timeout_entry_t *entry)
{
    struct later *l = (struct later *)(void *)((char *)entry - offsetof(struct later, timeout));

    if (l->req == NULL || l->is_answered)
        return;
    later_answered(l);
    l->cbs.on_unanswered(&l->orig, l->arg);
}

/* The other thread's answer is here (loop). @p is_live: the loop still serves. */
static void later_deliver(struct later *l, int is_live)
{
    int sent = 0;

    if (is_live && l->req != NULL && !l->is_answered) {
        later_answered(l);
        if (l->status == 0) {
            l->cbs.on_unanswered(&l->orig, l->arg);
        } else {
            struct later_header *h;
            char *body = l->body_len > 0 ? h2o_mem_alloc_pool(&l->req->pool, l->body_len) : NULL;

            for (h = l->headers; h != NULL; h = h->next)
                http_add_header(&l->orig, h->name, h->value);
            if (body != NULL)
                memcpy(body, l->body, l->body_len);
            http_respond(&l->orig, l->status, l->content_type, body, l->body_len);
            sent = l->status;
        }
    }
    l->cbs.on_done(sent, l->arg);
    later_unref(l);
}

static void mailbox_on_messages(h2o_multithread_receiver_t *receiver, h2o_linklist_t *messages)
{
    (void)receiver;
    while (!h2o_linklist_is_empty(messages)) {
        h2o_multithread_message_t *msg =
            H2O_STRUCT_FROM_MEMBER(h2o_multithread_message_t, link, messages->next);
        struct later *l = (struct later *)(void *)((char *)msg - offsetof(struct later, msg));

        h2o_linklist_unlink(&msg->link);
        later_deliver(l, 1);
    }
}

int http_later_new(struct http_req *r, const struct http_later_cbs *cbs, size_t arg_size,
                   struct http_req **copy, void **arg)
{
    h2o_req_t *req = r->priv;
    struct http_thread *th = thread_of_req(req);
    struct later *l = calloc(1, sizeof(*l)), **ref;
    struct http_req *c;

    if (l == NULL)
        return -1;
    l->headers_tail = &l->headers;
    atomic_init(&l->refs, 2);
    l->th = th;
    l->mb = th->mb;
    l->cbs = *cbs;
    l->orig = *r;
    l->req = req;
    c = &l->copy;
    *c = *r;
    c->method = later_dup(l, r->method, r->method_len);
    c->path = later_dup(l, r->path, r->path_len);
    c->query = later_dup(l, r->query, r->query_len);
    c->body = later_dup(l, r->body, r->body_len);
    c->authorization = later_dup(l, r->authorization, r->authorization_len);
    c->accept = later_dup(l, r->accept, r->accept_len);
    c->idempotency_key = later_dup(l, r->idempotency_key, r->idempotency_key_len);
    c->priv = NULL;
    c->later = l;
    l->arg = later_alloc(l, arg_size);
    ref = h2o_mem_alloc_shared(&req->pool, sizeof(*ref), later_on_dispose);
    if (c->method == NULL || c->path == NULL || (r->query != NULL && c->query == NULL) ||
        (r->body != NULL && c->body == NULL) ||
        (r->authorization != NULL && c->authorization == NULL) ||
        (r->accept != NULL && c->accept == NULL) ||
        (r->idempotency_key != NULL && c->idempotency_key == NULL) || l->arg == NULL) {
        *ref = NULL;
        atomic_init(&l->refs, 1);
        atomic_fetch_add(&l->mb->refs, 1); /* later_unref drops one */
        later_unref(l);
        return -1;
    }
    memset(l->arg, 0, arg_size);
    *ref = l;
    l->ref = ref;
    atomic_fetch_add(&l->mb->refs, 1);
    if (th->srv->cfg.later_timeout_ms > 0) {
        l->timeout.cb = later_on_timeout;
        h2o_timeout_link(th->loop, &th->later_timeout, &l->timeout);
    }
    *copy = c;
    *arg = l->arg;
    return 0;
}

void http_later_cancel(struct http_req *copy)
{
    struct later *l = copy->later;

    if (l->ref != NULL)
        *l->ref = NULL;
    if (h2o_timeout_is_linked(&l->timeout))
        h2o_timeout_unlink(&l->timeout);
    atomic_store(&l->refs, 1);
    later_unref(l);
}

void http_later_post(struct http_req *copy)
{
    struct later *l = copy->later;
    struct mailbox *mb = l->mb;
    int is_sent = 0;

    /* The mailbox's lock orders this send before the loop closing it. */
    pthread_mutex_lock(&mb->mu);
    if (mb->is_open) {
        h2o_multithread_send_message(&mb->receiver, &l->msg);
        is_sent = 1;
    }
    pthread_mutex_unlock(&mb->mu);
    if (!is_sent)
        later_unref(l); /* the loop is gone: nobody waits for this answer */
}

static int mailbox_open(struct http_thread *th)
{
    struct mailbox *mb = calloc(1, sizeof(*mb));

    if (mb == NULL)
        return -1;
    pthread_mutex_init(&mb->mu, NULL);
    mb->is_open = 1;
    atomic_init(&mb->refs, 1);
    h2o_multithread_register_receiver(th->ctx.queue, &mb->receiver, mailbox_on_messages);
    th->mb = mb;
    return 0;
}

/*
 * The loop stops: no answer may be sent to it any more. Answers already
 * sent and not yet read are handled here, as dropped (the loop no longer
 * serves); the ones still to come are dropped by their senders.
 */
static void mailbox_close(struct http_thread *th)
{
    struct mailbox *mb = th->mb;

    if (mb == NULL)
        return;
    pthread_mutex_lock(&mb->mu);
    mb->is_open = 0;
    pthread_mutex_unlock(&mb->mu);
    /* No sender can touch the list now: read it without h2o's queue lock. */
    while (!h2o_linklist_is_empty(&mb->receiver._messages)) {
        h2o_multithread_message_t *msg =
            H2O_STRUCT_FROM_MEMBER(h2o_multithread_message_t, link, mb->receiver._messages.next);
        struct later *l = (struct later *)(void *)((char *)msg - offsetof(struct later, msg));

        h2o_linklist_unlink(&msg->link);
        later_deliver(l, 0);
    }
    h2o_multithread_unregister_receiver(th->ctx.queue, &mb->receiver);
    th->mb = NULL;
    mailbox_unref(mb);
}

/* ==== answering from a timer ==== */

struct after {
    h2o_timeout_entry_t timeout;
    struct http_thread *th;
    struct http_req r; /* valid while the request is: the entry goes with it */
    uint64_t due_ms;   /* h2o_now() of the loop */
    void (*cb)(struct http_req *r, void *arg);
    void *arg;
};

static void after_on_dispose(void *p)
{
    struct after *a = p;

    if (h2o_timeout_is_linked(&a->timeout))
        h2o_timeout_unlink(&a->timeout);
}

static void after_on_tick(h2o_timeout_entry_t *entry)
{
    struct after *a = (struct after *)(void *)entry;

    if (h2o_now(a->th->loop) < a->due_ms) {
        h2o_timeout_link(a->th->loop, &a->th->tick_timeout, &a->timeout);
        return;
    }
    a->cb(&a->r, a->arg);
}

int http_after(struct http_req *r, uint32_t ms, void (*cb)(struct http_req *r, void *arg),
               void *arg)
{
    h2o_req_t *req = r->priv;
    struct http_thread *th = thread_of_req(req);
    struct after *a = h2o_mem_alloc_shared(&req->pool, sizeof(*a), after_on_dispose);

    if (a == NULL)
        return -1;
    memset(a, 0, sizeof(*a));
    a->th = th;
    a->r = *r;
    a->due_ms = h2o_now(th->loop) + (ms > 0 ? ms : 1);
    a->cb = cb;
    a->arg = arg;
    a->timeout.cb = after_on_tick;
    h2o_timeout_link(th->loop, &th->tick_timeout, &a->timeout);
    return 0;
}

/* ==== requests ==== */

static const char *reason_of(int status)
{
    switch (status) {
    case 200:
        return "OK";
    case 201:
        return "Created";
    case 400:
        return "Bad Request";
    case 401:
        return "Unauthorized";
    case 403:
        return "Forbidden";
    case 404:
        return "Not Found";
    case 405:
        return "Method Not Allowed";
    case 409:
        return "Conflict";
    case 411:
        return "Length Required";
    case 413:
        return "Payload Too Large";
    case 414:
        return "URI Too Long";
    case 429:
        return "Too Many Requests";
    case 431:
        return "Request Header Fields Too Large";
    case 500:
        return "Internal Server Error";
    case 501:
        return "Not Implemented";
    case 503:
        return "Service Unavailable";
    case 505:
        return "HTTP Version Not Supported";
    default:
        return "Unknown";
    }
}

char *http_alloc(struct http_req *r, size_t size)
{
    h2o_req_t *req = r->priv;

    if (r->later != NULL)
        return later_alloc(r->later, size);
    return h2o_mem_alloc_pool(&req->pool, size);
}

void http_add_header(struct http_req *r, const char *name, const char *value)
{
    h2o_req_t *req = r->priv;

    if (r->later != NULL) {
        struct later *l = r->later;
        struct later_header *h = later_alloc(l, sizeof(*h));

        if (h == NULL)
            return;
        h->name = later_dup(l, name, strlen(name));
        h->value = later_dup(l, value, strlen(value));
        if (h->name == NULL || h->value == NULL)
            return;
        h->next = NULL;
        *l->headers_tail = h;
        l->headers_tail = &h->next;
        return;
    }
    {
        size_t name_len = strlen(name), value_len = strlen(value);
        char *n = h2o_mem_alloc_pool(&req->pool, name_len + 1);
        char *v = h2o_mem_alloc_pool(&req->pool, value_len + 1);

        memcpy(n, name, name_len + 1);
        memcpy(v, value, value_len + 1);
        h2o_add_header_by_str(&req->pool, &req->res.headers, n, name_len, 1, NULL, v, value_len);
    }
}

void http_respond(struct http_req *r, int status, const char *content_type, const char *body,
                  size_t len)
{
    static h2o_generator_t generator = {NULL, NULL};
    h2o_req_t *req = r->priv;
    h2o_iovec_t buf = h2o_iovec_init(body, len);

    if (r->later != NULL) {
        struct later *l = r->later;

        /* Recorded; later_deliver sends it on the loop (body copied then). */
        l->content_type = later_dup(l, content_type, strlen(content_type));
        l->body = body;
        l->body_len = len;
        l->status = l->content_type != NULL ? status : 0;
        return;
    }
    /* RFC 9112 §6.3: after refusing a request's framing, the next request
     * cannot be found safely; a refused head closes the connection too, as
     * it does on a first request. h2o writes Connection: close and closes
     * once this response is out. */
    if (r->has_bad_framing || r->head_verdict != 0)
        req->http1_is_persistent = 0;
    req->res.status = status;
    req->res.reason = reason_of(status);
    req->res.content_length = len;
    h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_CONTENT_TYPE, NULL, content_type,
                   strlen(content_type));
    h2o_start_response(req, &generator);
    h2o_send(req, &buf, 1, H2O_SEND_STATE_FINAL);
}

static void conn_on_close(void *data);

/*
 * Screen the raw head of the request h2o has just parsed, as the first
 * request of a connection is screened before h2o sees it: h2o keeps one
 * Content-Length of two, takes Transfer-Encoding over Content-Length, and
 * takes Host out of the headers (filling in a missing one), so what it
 * hands on cannot tell a smuggling attempt or a repeated Host from a good
 * request. h2o 2.2 keeps a request's bytes at the start of sock->input
 * until its response is written (http1.c consumes them only then; a chunked
 * body is decoded in place after the head), so the head is there, as the
 * client sent it, for every request of a kept-alive connection. Raw bytes
 * that are not there fail closed.
 */
static enum http_head_verdict screen_parsed(h2o_socket_t *sock, int *has_bad_framing)
{
    size_t lines = 0, len;

    if (sock == NULL || sock->input == NULL || sock->input->size == 0)
        return HTTP_HEAD_BAD_REQUEST_LINE;
    len = http_header_block_len(sock->input->bytes, sock->input->size, &lines);
    if (len == 0)
        return HTTP_HEAD_BAD_REQUEST_LINE;
    *has_bad_framing = http_has_bad_framing(sock->input->bytes, len);
    return http_screen_head(sock->input->bytes, len);
}

static int on_req(h2o_handler_t *self, h2o_req_t *req)
{
    struct server_handler *h = (struct server_handler *)self;
    struct http_thread *th = thread_of(req->conn->ctx);
    h2o_socket_t *sock = req->conn->callbacks->get_socket(req->conn);
    struct conn *conn = NULL;
    struct http_req r;
    ssize_t i;
    size_t k, origin = http_origin_path(req->path.base, req->path.len);

    memset(&r, 0, sizeof(r));
    /* Every socket h2o serves came through listener_on_accept, which set
     * on_close; h2o keeps it (and takes sock->data for itself). */
    if (sock != NULL && sock->on_close.cb == conn_on_close) {
        conn = sock->on_close.data;
        conn->active_ms = clocks_mono_ms();
        memcpy(r.client, conn->key.b, sizeof(r.client));
    }
    r.method = req->method.base;
    r.method_len = req->method.len;
    r.path = req->path.base + origin;
    r.path_len = req->path.len - origin;
    if (req->query_at != SIZE_MAX && req->query_at < req->path.len && req->query_at >= origin) {
        r.path_len = req->query_at - origin;
        r.query = req->path.base + req->query_at + 1;
        r.query_len = req->path.len - req->query_at - 1;
    }
    if (req->entity.base != NULL && req->entity.len > 0) {
        r.body = req->entity.base;
        r.body_len = req->entity.len;
    }
    if ((i = h2o_find_header(&req->headers, H2O_TOKEN_AUTHORIZATION, -1)) != -1) {
        r.authorization = req->headers.entries[i].value.base;
        r.authorization_len = req->headers.entries[i].value.len;
    }
    if ((i = h2o_find_header(&req->headers, H2O_TOKEN_ACCEPT, -1)) != -1) {
        r.accept = req->headers.entries[i].value.base;
        r.accept_len = req->headers.entries[i].value.len;
    }
    for (i = -1;
         (i = h2o_find_header_by_str(&req->headers, H2O_STRLIT("idempotency-key"), i)) != -1;) {
        if (r.idempotency_keys++ == 0) {
            r.idempotency_key = req->headers.entries[i].value.base;
            r.idempotency_key_len = req->headers.entries[i].value.len;
        }
    }
    /* Every request, not only a connection's first (RFC 9112 §6.3: request
     * smuggling hides the second one). */
    r.head_verdict = (int)screen_parsed(sock, &r.has_bad_framing);
    r.header_bytes = req->method.len + req->path.len + req->authority.len + 16;
    for (k = 0; k < req->headers.size; k++)
        r.header_bytes += req->headers.entries[k].name->len + req->headers.entries[k].value.len + 4;
    r.thread = th->user;
    r.priv = req;
    h->srv->cfg.on_request(&r);
    return 0;
}

/* ==== connections: screening, early replies, counting ==== */

static struct conn *conn_of_timeout(h2o_timeout_entry_t *entry)
{
    return (struct conn *)(void *)((char *)entry - offsetof(struct conn, timeout));
}

static void conn_on_close(void *data)
{
    struct conn *c = data;
    struct http_thread *th = c->th;
    int was_admitted = c->is_admitted;

    if (h2o_timeout_is_linked(&c->timeout))
        h2o_timeout_unlink(&c->timeout);
    c->prev->next = c->next;
    c->next->prev = c->prev;
    if (was_admitted) {
        http_admit_release(th->srv->admit, &c->key);
        th->n_conns--;
        if (c->is_shut_rd)
            th->n_closing--;
    } else {
        th->n_refused--;
    }
    /* After h2o freed the connection's SSL, which held its own reference. */
    http_tls_release(c->ssl_ctx);
    free(c);
}

static void conn_close(struct conn *c)
{
    if (h2o_timeout_is_linked(&c->timeout))
        h2o_timeout_unlink(&c->timeout);
    h2o_socket_close(c->sock); /* calls conn_on_close */
}

static void linger_on_read(h2o_socket_t *sock, const char *err)
{
    struct conn *c = sock->data;

    if (err != NULL) {
        conn_close(c);
        return;
    }
    h2o_buffer_consume(&sock->input, sock->input->size);
}

static void linger_on_timeout(h2o_timeout_entry_t *entry)
{
    conn_close(conn_of_timeout(entry));
}

static void early_reply_written(h2o_socket_t *sock, const char *err)
{
    struct conn *c = sock->data;

    if (err != NULL) {
        conn_close(c);
        return;
    }
    /* Closing while the client still sends would reset the connection and
     * could destroy the reply in flight: half-close, then drain its input. */
    shutdown(h2o_socket_get_fd(sock), SHUT_WR);
    c->is_lingering = 1;
    c->timeout.cb = linger_on_timeout;
    h2o_timeout_link(c->th->loop, &c->th->linger_timeout, &c->timeout);
    h2o_socket_read_start(sock, linger_on_read);
}

/* Send @p text (a whole response in the server's storage) and close. */
static void early_reply(struct conn *c, const char *text)
{
    if (h2o_timeout_is_linked(&c->timeout))
        h2o_timeout_unlink(&c->timeout);
    h2o_socket_read_stop(c->sock);
    /* The server outlives every connection, so the text outlives the write. */
    h2o_iovec_t buf = h2o_iovec_init(text, strlen(text));
    h2o_socket_write(c->sock, &buf, 1, early_reply_written);
}

static void screen_on_timeout(h2o_timeout_entry_t *entry)
{
    /* A client that sends no complete request head in time (slowloris). */
    conn_close(conn_of_timeout(entry));
}

static void screen_on_read(h2o_socket_t *sock, const char *err)
{
    struct conn *c = sock->data;
    const struct http_server_config *cfg = &c->th->srv->cfg;
    size_t window, len, lines = 0, n = sock->input->size;
    enum http_head_verdict verdict;

    if (err != NULL) {
        conn_close(c);
        return;
    }
    window = n < cfg->max_header_bytes + 4 ? n : cfg->max_header_bytes + 4;
    len = http_header_block_len(sock->input->bytes, window, &lines);
    if (len == 0) {
        if (n >= cfg->max_header_bytes + 4 &&
            http_head_too_large(sock->input->bytes, window) == HTTP_HEAD_URI_TOO_LONG)
            early_reply(c, c->th->srv->reply_head[HTTP_HEAD_URI_TOO_LONG]);
        else if (n >= cfg->max_header_bytes + 4 || lines > MAX_HEADER_LINES + 1)
            early_reply(c, c->th->srv->reply_431);
        return;
    }
    if (lines > MAX_HEADER_LINES + 2) {
        early_reply(c, c->th->srv->reply_431);
        return;
    }
    if ((verdict = http_screen_head(sock->input->bytes, len)) != HTTP_HEAD_OK) {
        early_reply(c, c->th->srv->reply_head[verdict]);
        return;
    }
    if (http_declared_length(sock->input->bytes, len) > cfg->max_body_bytes) {
        early_reply(c, c->th->srv->reply_413);
        return;
    }
    h2o_timeout_unlink(&c->timeout);
    c->is_handed_over = 1;
    /* h2o parses what is already buffered at once and takes over reading. */
    h2o_accept(&c->th->accept_ctx, sock);
}

/*
 * The TLS handshake of @p sock ended. A refused connection now gets its 503
 * (encrypted, so that the client can read it); an admitted one is screened
 * like a plain one, on the decrypted bytes. h2o may already have decrypted
 * the start of the request, which no further read event would announce.
 */
static void tls_on_handshake(h2o_socket_t *sock, const char *err)
{
    struct conn *c = sock->data;

    if (err != NULL) {
        /* Plain HTTP on this port, TLS 1.1 or older, no shared cipher: a
         * client that cannot speak TLS 1.2+ is not answered at all. */
        conn_close(c);
        return;
    }
    if (!c->is_admitted) {
        early_reply(c, c->th->srv->reply_503[c->why]);
        return;
    }
    h2o_socket_read_start(sock, screen_on_read);
    if (sock->input->size > 0)
        screen_on_read(sock, NULL);
}

/*
 * A refusal past REFUSED_MAX, answered without lingering (lingering is what
 * would cost memory in a flood): the 503 is written straight to the socket,
 * which a fresh connection has room for, and the socket is closed. What
 * the client had sent already is read first, so that the close is a FIN and
 * not a reset that could destroy the answer in flight. Over TLS no answer
 * can be read without a handshake: the client gets the close alone, at once.
 */
static void refuse_at_once(struct http_thread *th, h2o_socket_t *sock, enum http_refusal why)
{
    if (th->srv->cfg.tls == NULL) {
        const char *text = th->srv->reply_503[why];
        int fd = h2o_socket_get_fd(sock), i;
        char drain[4096];
        ssize_t sent;

        for (i = 0; i < REFUSED_DRAIN && recv(fd, drain, sizeof(drain), MSG_DONTWAIT) > 0; i++)
            ;
        sent = send(fd, text, strlen(text), MSG_DONTWAIT | MSG_NOSIGNAL);
        (void)sent; /* best effort: the close below is the answer either way */
        shutdown(fd, SHUT_WR);
    }
    h2o_socket_close(sock);
}

/*
 * Take connection @p c into the thread's list. A refused one (over a bound,
 * or every slot taken) is answered at once with 503 and Retry-After, and
 * lingers like any early reply; it holds no slot, and at most REFUSED_MAX
 * of them per thread hold a socket, so a flood of refusals costs bounded
 * memory: beyond that each is answered and closed at once (refuse_at_once).
 * Over TLS both first complete a handshake within request_timeout_ms; the
 * context is taken now, so a reload during the handshake does not matter.
 */
static void conn_start(struct http_thread *th, struct conn *c, int is_refused,
                       enum http_refusal why)
{
    h2o_socket_t *sock = c->sock;

    if (is_refused && th->n_refused >= REFUSED_MAX) {
        refuse_at_once(th, sock, why);
        free(c);
        return;
    }
    c->th = th;
    c->active_ms = clocks_mono_ms();
    c->is_admitted = !is_refused;
    c->next = th->head.next;
    c->prev = &th->head;
    th->head.next->prev = c;
    th->head.next = c;
    if (is_refused)
        th->n_refused++;
    else
        th->n_conns++;
    sock->data = c;
    sock->on_close.cb = conn_on_close;
    sock->on_close.data = c;
    c->why = why;
    if (th->srv->cfg.tls != NULL) {
        c->ssl_ctx = http_tls_acquire(th->srv->cfg.tls);
        c->timeout.cb = screen_on_timeout;
        h2o_timeout_link(th->loop, &th->screen_timeout, &c->timeout);
        h2o_socket_ssl_handshake(sock, c->ssl_ctx, NULL, tls_on_handshake);
        return;
    }
    if (is_refused) {
        early_reply(c, th->srv->reply_503[why]);
        return;
    }
    c->timeout.cb = screen_on_timeout;
    h2o_timeout_link(th->loop, &th->screen_timeout, &c->timeout);
    h2o_socket_read_start(sock, screen_on_read);
}

static void listener_on_accept(h2o_socket_t *listener, const char *err)
{
    struct http_thread *th = listener->data;
    int i;

    if (err != NULL)
        return;
    for (i = 0; i < ACCEPTS_PER_WAKE; i++) {
        struct sockaddr_storage peer;
        enum http_refusal why = HTTP_REFUSED_FULL;
        h2o_socket_t *sock;
        struct conn *c;
        int is_refused;

        /* Always accept: a full server answers 503 (HTTP_REFUSED_FULL) and
         * closes, rather than leaving a client in the listen backlog with
         * no answer at all until a slot frees. */
        if ((sock = h2o_evloop_socket_accept(listener)) == NULL)
            return;
        memset(&peer, 0, sizeof(peer));
        if ((c = calloc(1, sizeof(*c))) == NULL ||
            h2o_socket_getpeername(sock, (struct sockaddr *)&peer) == 0) {
            h2o_socket_close(sock); /* out of memory, or the peer is gone already */
            free(c);
            continue;
        }
        c->sock = sock;
        http_client_key_of(&peer, &c->key);
        is_refused = http_admit_take(th->srv->admit, &c->key, &why) != 0;
        conn_start(th, c, is_refused, why);
    }
}

/* ==== threads ==== */

/* Nothing of a next request has arrived and nothing is being written. h2o
 * 2.2 keeps a request's bytes in sock->input until its response is out, and
 * handlers answer before they return, so between requests this is exact. */
static int conn_is_idle(const struct conn *c)
{
    return c->sock->input->size == 0 && !h2o_socket_is_writing(c->sock);
}

/*
 * Above 3/4 of its connections, a thread closes connections idle for
 * idle_short_ms, oldest first, until it is back at 3/4: a kept-alive
 * connection nobody uses must not hold a slot a new client needs. Below
 * that, idle connections keep h2o's normal keep-alive (request_timeout_ms).
 * A connection h2o owns is shut for reading, so h2o reads EOF and closes
 * it itself; one still being screened is closed here.
 */
static void sweep_idle(struct http_thread *th, uint64_t now_ms)
{
    unsigned keep = th->max_conns - th->max_conns / 4, excess;
    struct conn *c, *prev;

    if (th->n_conns - th->n_closing <= keep)
        return;
    excess = th->n_conns - th->n_closing - keep;
    for (c = th->head.prev; c != &th->head && excess > 0; c = prev) {
        prev = c->prev;
        if (!c->is_admitted || c->is_lingering || c->is_shut_rd)
            continue;
        if (!conn_is_idle(c)) {
            c->active_ms = now_ms;
            continue;
        }
        if (now_ms - c->active_ms < th->srv->idle_short_ms)
            continue;
        excess--;
        if (!c->is_handed_over) {
            conn_close(c);
            continue;
        }
        shutdown(h2o_socket_get_fd(c->sock), SHUT_RD);
        c->is_shut_rd = 1;
        th->n_closing++;
    }
}

/* Ask idle connections to close: they read EOF and h2o closes them. */
static void drain_idle(struct http_thread *th, int is_forced)
{
    struct conn *c, *next;

    for (c = th->head.next; c != &th->head; c = next) {
        next = c->next;
        if (is_forced) {
            shutdown(h2o_socket_get_fd(c->sock), SHUT_RDWR);
            if (!c->is_handed_over)
                conn_close(c);
            continue;
        }
        if (!c->is_shut_rd && conn_is_idle(c)) {
            shutdown(h2o_socket_get_fd(c->sock), SHUT_RD);
            c->is_shut_rd = 1;
            if (c->is_admitted)
                th->n_closing++;
        }
    }
}

static void thread_main(struct http_thread *th)
{
    struct http_server *srv = th->srv;
    uint64_t deadline;

    while (!atomic_load(&srv->is_stopping)) {
        uint64_t now;

        h2o_evloop_run(th->loop, LOOP_WAIT_MS);
        if ((now = clocks_mono_ms()) >= th->next_sweep_ms) {
            sweep_idle(th, now);
            th->next_sweep_ms = now + IDLE_SWEEP_MS;
        }
    }

    h2o_socket_read_stop(th->listener);
    h2o_socket_close(th->listener);
    th->listener = NULL;
    /* Responses from now on close their connection. Only the flag: the full
     * h2o_context_request_shutdown() also arms an HTTP/2 GOAWAY timer that
     * would still be pending when the context is disposed. */
    th->ctx.shutdown_requested = 1;
    deadline = clocks_mono_ms() + srv->drain_ms;
    while (th->n_conns + th->n_refused > 0 && clocks_mono_ms() < deadline) {
        drain_idle(th, 0);
        h2o_evloop_run(th->loop, 10);
    }
    deadline = clocks_mono_ms() + DRAIN_FORCE_MS;
    while (th->n_conns + th->n_refused > 0 && clocks_mono_ms() < deadline) {
        drain_idle(th, 1);
        h2o_evloop_run(th->loop, 10);
    }
}

/* Set up the loop and context of @p th on the calling thread. */
static int thread_setup(struct http_thread *th)
{
    struct http_server *srv = th->srv;

    th->head.next = th->head.prev = &th->head;
    th->loop = h2o_evloop_create();
    h2o_context_init(&th->ctx, th->loop, &srv->config);
    th->accept_ctx.ctx = &th->ctx;
    th->accept_ctx.hosts = srv->config.hosts;
    h2o_timeout_init(th->loop, &th->screen_timeout, srv->cfg.request_timeout_ms);
    h2o_timeout_init(th->loop, &th->linger_timeout, LINGER_MS);
    h2o_timeout_init(th->loop, &th->later_timeout, srv->cfg.later_timeout_ms);
    h2o_timeout_init(th->loop, &th->tick_timeout, 1);
    if (mailbox_open(th) != 0)
        return -1;
    th->listener = h2o_evloop_socket_create(th->loop, th->listen_fd, H2O_SOCKET_FLAG_DONT_READ);
    if (th->listener == NULL)
        return -1;
    th->listen_fd = -1; /* the socket owns it now */
    th->listener->data = th;
    h2o_socket_read_start(th->listener, listener_on_accept);
    return 0;
}

static void thread_teardown(struct http_thread *th)
{
    if (th->loop == NULL)
        return;
    mailbox_close(th);
    if (th->listener != NULL) {
        h2o_socket_close(th->listener);
        th->listener = NULL;
    }
    /* With connections still open, freeing the context would leave h2o
     * pointing at freed memory; exiting is then the safer leak. */
    if (th->n_conns + th->n_refused > 0)
        return;
    h2o_timeout_dispose(th->loop, &th->screen_timeout);
    h2o_timeout_dispose(th->loop, &th->linger_timeout);
    h2o_timeout_dispose(th->loop, &th->later_timeout);
    h2o_timeout_dispose(th->loop, &th->tick_timeout);
    h2o_context_dispose(&th->ctx);
    h2o_evloop_run(th->loop, 0); /* runs the deferred frees of closed sockets */
    h2o_evloop_destroy(th->loop);
    th->loop = NULL;
}

/* Everything h2o allocates for a loop happens on the loop's own thread:
 * its socket buffers come from thread-local prototypes. */
static void *thread_start(void *arg)
{
    struct http_thread *th = arg;

    if (thread_setup(th) != 0) {
        atomic_store(&th->srv->is_stopping, 1);
        return NULL;
    }
    th->user = th->srv->cfg.thread_init(th->index, th->srv->cfg.arg);
    thread_main(th);
    if (th->srv->cfg.thread_fini != NULL)
        th->srv->cfg.thread_fini(th->user);
    thread_teardown(th);
    return NULL;
}

/* ==== server ==== */

static int bind_listener(const struct http_server_config *cfg, const struct sockaddr_storage *ss,
                         socklen_t len, int *is_in_use, char *err, size_t err_size)
{
    int fd = socket(ss->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int on = 1;

    if (fd < 0) {
        snprintf(err, err_size, "socket: %s", strerror(errno));
        return -1;
    }
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
    if (cfg->threads > 1)
        setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &on, sizeof(on));
    if (bind(fd, (const struct sockaddr *)ss, len) != 0 || listen(fd, SOMAXCONN) != 0) {
        *is_in_use = errno == EADDRINUSE;
        snprintf(err, err_size, "%s", strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

/*
 * SO_REUSEPORT lets every socket of the same user share a port, so a second
 * daemon with threads > 1 would quietly split the first one's traffic. A
 * socket without it cannot bind a port anyone listens on: try one first.
 */
static int port_is_free(const struct sockaddr_storage *ss, socklen_t len, int *is_in_use, char *err,
                        size_t err_size)
{
    int fd = socket(ss->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int on = 1, rc = 1;

    if (fd < 0) {
        snprintf(err, err_size, "socket: %s", strerror(errno));
        return 0;
    }
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
    if (bind(fd, (const struct sockaddr *)ss, len) != 0) {
        *is_in_use = errno == EADDRINUSE;
        snprintf(err, err_size, "%s", strerror(errno));
        rc = 0;
    }
    close(fd);
    return rc;
}

static uint16_t port_of(const struct sockaddr_storage *ss)
{
    if (ss->ss_family == AF_INET)
        return ntohs(((const struct sockaddr_in *)ss)->sin_port);
    return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
}

/*
 * Two daemons started at the same moment could both pass port_is_free. Each
 * also binds an abstract Unix socket named after the address, held for its
 * whole life (the kernel drops it at exit, even after kill -9): the second
 * bind of the name fails. Returns the socket, or -1 with *is_in_use set.
 */
static int port_claim(const struct sockaddr_storage *ss, int *is_in_use, char *err, size_t err_size)
{
    struct sockaddr_un un;
    char addr[INET6_ADDRSTRLEN + 16];
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), len;

    if (fd < 0) {
        snprintf(err, err_size, "socket: %s", strerror(errno));
        return -1;
    }
    memset(&un, 0, sizeof(un));
    un.sun_family = AF_UNIX;
    http_format_addr(ss, port_of(ss), addr, sizeof(addr));
    /* sun_path[0] = '\0': the abstract namespace, no file to clean up. */
    len = snprintf(un.sun_path + 1, sizeof(un.sun_path) - 1, "idmintd-listen:%s", addr);
    if (bind(fd, (const struct sockaddr *)&un,
             (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)len)) != 0) {
        *is_in_use = errno == EADDRINUSE;
        snprintf(err, err_size, "%s", strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

int http_server_open(struct http_server **out, const struct http_server_config *cfg, int *is_in_use,
                     char *err, size_t err_size)
{
    struct http_server *srv;
    struct sockaddr_storage ss = cfg->addr;
    struct server_handler *handler;
    h2o_hostconf_t *host;
    h2o_pathconf_t *path;
    unsigned i, threads = cfg->threads < 1 ? 1 : cfg->threads;
    int claim_fd = -1;
    static const char body_431[] = "{\"error\":{\"code\":\"headers_too_large\",\"message\":"
                                   "\"request headers are larger than max_header_bytes\"}}";
    static const char body_413[] = "{\"error\":{\"code\":\"payload_too_large\",\"message\":"
                                   "\"request body is larger than max_body_bytes\"}}";
    static const char *const body_503[HTTP_REFUSED_COUNT] = {
        "{\"error\":{\"code\":\"unavailable\",\"message\":\"this address holds "
        "max_connections_per_client connections already\"}}",
        "{\"error\":{\"code\":\"unavailable\",\"message\":\"the server is near "
        "max_connections; its last slots are kept for address prefixes without a "
        "connection\"}}",
        "{\"error\":{\"code\":\"unavailable\",\"message\":\"the server holds "
        "max_connections connections\"}}",
        "{\"error\":{\"code\":\"unavailable\",\"message\":\"this address prefix holds "
        "max_connections_per_prefix connections already\"}}",
    };
    const struct http_admit_limits limits = {
        .max_conns = cfg->max_connections,
        .max_per_client = cfg->max_connections_per_client,
        .max_per_prefix = cfg->max_connections_per_prefix,
        .prefix_v4_bits = cfg->client_prefix_v4,
        .prefix_v6_bits = cfg->client_prefix_v6,
    };
    static const char head[] = "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\n"
                               "Connection: close\r\nContent-Length: %zu\r\n\r\n%s";
    static const char head_503[] = "HTTP/1.1 503 %s\r\nContent-Type: application/json\r\n"
                                   "Retry-After: 1\r\nConnection: close\r\n"
                                   "Content-Length: %zu\r\n\r\n%s";

    *is_in_use = 0;
    if (threads > 1 && port_of(&ss) != 0 &&
        (claim_fd = port_claim(&ss, is_in_use, err, err_size)) < 0)
        return -1;
    if (claim_fd >= 0 && !port_is_free(&ss, cfg->addr_len, is_in_use, err, err_size)) {
        close(claim_fd);
        return -1;
    }
    srv = calloc(1, sizeof(*srv));
    if (srv == NULL || (srv->threads = calloc(threads, sizeof(*srv->threads))) == NULL ||
        http_admit_new(&srv->admit, &limits) != 0) {
        if (srv != NULL)
            free(srv->threads);
        free(srv);
        if (claim_fd >= 0)
            close(claim_fd);
        snprintf(err, err_size, "out of memory");
        return -1;
    }
    srv->claim_fd = claim_fd;
    srv->cfg = *cfg;
    srv->cfg.threads = threads;
    srv->n_threads = threads;
    for (i = 1; i < HTTP_HEAD_COUNT; i++) {
        char body[400];
        int status = http_head_verdict_status((enum http_head_verdict)i);

        snprintf(body, sizeof(body), "{\"error\":{\"code\":\"%s\",\"message\":\"%s\"}}",
                 http_head_verdict_code((enum http_head_verdict)i),
                 http_head_verdict_message((enum http_head_verdict)i));
        snprintf(srv->reply_head[i], sizeof(srv->reply_head[i]), head, status, reason_of(status),
                 strlen(body), body);
    }
    snprintf(srv->reply_431, sizeof(srv->reply_431), head, 431, reason_of(431),
             sizeof(body_431) - 1, body_431);
    snprintf(srv->reply_413, sizeof(srv->reply_413), head, 413, reason_of(413),
             sizeof(body_413) - 1, body_413);
    for (i = 0; i < HTTP_REFUSED_COUNT; i++)
        snprintf(srv->reply_503[i], sizeof(srv->reply_503[i]), head_503, reason_of(503),
                 strlen(body_503[i]), body_503[i]);
    srv->idle_short_ms =
        cfg->request_timeout_ms < IDLE_SHORT_MS ? cfg->request_timeout_ms : IDLE_SHORT_MS;

    for (i = 0; i < threads; i++) {
        struct http_thread *th = &srv->threads[i];
        struct sockaddr_storage bound;
        socklen_t bound_len = sizeof(bound);

        th->srv = srv;
        th->index = i;
        th->max_conns = (cfg->max_connections + threads - 1) / threads;
        if (th->max_conns < 1)
            th->max_conns = 1;
        th->listen_fd = bind_listener(&srv->cfg, &ss, cfg->addr_len, is_in_use, err, err_size);
        if (th->listen_fd < 0) {
            while (i-- > 0)
                close(srv->threads[i].listen_fd);
            if (claim_fd >= 0)
                close(claim_fd);
            http_admit_free(srv->admit);
            free(srv->threads);
            free(srv);
            return -1;
        }
        /* Port 0: every further listener shares the port the kernel chose. */
        getsockname(th->listen_fd, (struct sockaddr *)&bound, &bound_len);
        if (bound.ss_family == AF_INET) {
            srv->port = ntohs(((struct sockaddr_in *)&bound)->sin_port);
            ((struct sockaddr_in *)&ss)->sin_port = htons(srv->port);
        } else {
            srv->port = ntohs(((struct sockaddr_in6 *)&bound)->sin6_port);
            ((struct sockaddr_in6 *)&ss)->sin6_port = htons(srv->port);
        }
    }

    h2o_config_init(&srv->config);
    srv->config.server_name = h2o_iovec_init("idmintd", 7);
    /* h2o refuses bodies past this with its own 413 and closes; below it
     * the routes answer 413 payload_too_large themselves. */
    srv->config.max_request_entity_size = cfg->max_body_bytes * 2 + 65536;
    srv->config.http1.req_timeout = cfg->request_timeout_ms;
    srv->config.http1.upgrade_to_http2 = 0;
    host = h2o_config_register_host(&srv->config, h2o_iovec_init("default", 7), 65535);
    path = h2o_config_register_path(host, "/", 0);
    handler = (struct server_handler *)h2o_create_handler(path, sizeof(*handler));
    handler->super.on_req = on_req;
    handler->srv = srv;
    *out = srv;
    return 0;
}

uint16_t http_server_port(const struct http_server *s)
{
    return s->port;
}

int http_server_start(struct http_server *s, char *err, size_t err_size)
{
    unsigned i;

    for (i = 0; i < s->n_threads; i++) {
        struct http_thread *th = &s->threads[i];

        if (pthread_create(&th->thread, NULL, thread_start, th) != 0) {
            snprintf(err, err_size, "cannot start event-loop thread %u", i);
            return -1;
        }
        th->has_thread = 1;
    }
    return 0;
}

void http_server_stop(struct http_server *s, uint32_t drain_ms)
{
    unsigned i;

    if (s == NULL)
        return;
    s->drain_ms = drain_ms;
    atomic_store(&s->is_stopping, 1);
    for (i = 0; i < s->n_threads; i++) {
        struct http_thread *th = &s->threads[i];

        if (th->has_thread)
            pthread_join(th->thread, NULL);
        if (th->listen_fd >= 0)
            close(th->listen_fd);
    }
    h2o_config_dispose(&s->config);
    if (s->claim_fd >= 0)
        close(s->claim_fd);
    http_admit_free(s->admit);
    free(s->threads);
    free(s);
}

/* ==== addresses ==== */

int http_parse_listen(const char *text, struct sockaddr_storage *ss, socklen_t *len, char *err,
                      size_t err_size)
{
    char host[256];
    const char *colon, *port_text;
    struct addrinfo hints, *res = NULL;
    size_t host_len;
    int rc;

    if (text[0] == '[') {
        const char *close_br = strchr(text, ']');

        if (close_br == NULL || close_br[1] != ':') {
            snprintf(err, err_size, "'%s' is not [IPV6]:PORT", text);
            return -1;
        }
        host_len = (size_t)(close_br - text - 1);
        memcpy(host, text + 1, host_len < sizeof(host) ? host_len : 0);
        port_text = close_br + 2;
    } else {
        colon = strrchr(text, ':');
        if (colon == NULL) {
            snprintf(err, err_size, "'%s' is not ADDR:PORT", text);
            return -1;
        }
        host_len = (size_t)(colon - text);
        if (host_len < sizeof(host))
            memcpy(host, text, host_len);
        port_text = colon + 1;
    }
    if (host_len == 0 || host_len >= sizeof(host)) {
        snprintf(err, err_size, "'%s': the address is empty or too long", text);
        return -1;
    }
    host[host_len] = '\0';
    if (port_text[0] == '\0' || strspn(port_text, "0123456789") != strlen(port_text) ||
        strlen(port_text) > 5 || atoi(port_text) > 65535) {
        snprintf(err, err_size, "'%s': port must be 0..65535", text);
        return -1;
    }
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    if ((rc = getaddrinfo(host, port_text, &hints, &res)) != 0) {
        snprintf(err, err_size, "'%s': %s", text, gai_strerror(rc));
        return -1;
    }
    memset(ss, 0, sizeof(*ss));
    memcpy(ss, res->ai_addr, res->ai_addrlen);
    *len = res->ai_addrlen;
    freeaddrinfo(res);
    return 0;
}

int http_is_loopback(const struct sockaddr_storage *ss)
{
    if (ss->ss_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)ss;

        return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
    }
    if (ss->ss_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ss;
        static const unsigned char loop6[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};

        return memcmp(&in6->sin6_addr, loop6, 16) == 0;
    }
    return 0;
}

void http_format_addr(const struct sockaddr_storage *ss, uint16_t port, char *buf, size_t size)
{
    char host[INET6_ADDRSTRLEN];

    if (ss->ss_family == AF_INET6) {
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)ss)->sin6_addr, host, sizeof(host));
        snprintf(buf, size, "[%s]:%u", host, (unsigned)port);
    } else {
        inet_ntop(AF_INET, &((const struct sockaddr_in *)ss)->sin_addr, host, sizeof(host));
        snprintf(buf, size, "%s:%u", host, (unsigned)port);
    }
}
