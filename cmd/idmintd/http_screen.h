/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The screening of a new connection (http.c) in two parts that need no
 * socket, so that fuzz/fuzz_http.c and tests can drive them: its admission
 * (how many connections one client address and one address prefix may
 * hold, and who may take the last slots), and the raw head of each of its
 * requests (pure functions over bytes).
 */
#ifndef IDMINTD_HTTP_SCREEN_H
#define IDMINTD_HTTP_SCREEN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* ==== admission ==== */

/* A client as counted: an IPv4 address (also IPv4-mapped IPv6) whole, an
 * IPv6 address by its /64, the block one host can usually choose from. */
struct http_client_key {
    unsigned char b[16];
};

/* Why a connection was refused at accept (the labels of
 * idmint_http_connections_refused_total). */
enum http_refusal {
    HTTP_REFUSED_PER_CLIENT = 0, /* the address holds max_connections_per_client */
    HTTP_REFUSED_RESERVE = 1,    /* only the reserve is left and the prefix holds one */
    HTTP_REFUSED_FULL = 2,       /* every slot is taken */
    HTTP_REFUSED_PER_PREFIX = 3, /* the address's prefix holds max_connections_per_prefix */
    HTTP_REFUSED_COUNT
};

/* The bounds of one admission table (http_admit_new copies them). */
struct http_admit_limits {
    unsigned max_conns;      /* over all threads; 0 is taken as 1 */
    unsigned max_per_client; /* from one address (struct http_client_key); 0: no own bound */
    unsigned max_per_prefix; /* from one prefix (below); 0: no own bound */
    unsigned prefix_v4_bits; /* an IPv4 client's prefix: 8..32; 0: 24 */
    unsigned prefix_v6_bits; /* an IPv6 client's prefix: 16..64; 0: 48 */
};

/* The open connections of one server by client; thread-safe (one lock). */
struct http_admit;

/* The slots kept back for prefixes without a connection: max_conns / 16, at least 1. */
unsigned http_admit_reserve(unsigned max_conns);
/*
 * A table for @p lim (copied; prefix lengths out of range are clamped into
 * it). 0, or -1 when out of memory (*out untouched).
 */
int http_admit_new(struct http_admit **out, const struct http_admit_limits *lim);
/* NULL is a no-op. */
void http_admit_free(struct http_admit *a);
/* The key of peer @p ss (AF_INET or AF_INET6; anything else is all zeros). */
void http_client_key_of(const struct sockaddr_storage *ss, struct http_client_key *key);
/*
 * The prefix @p key belongs to: an IPv4 (or IPv4-mapped) key cut to its
 * first @p v4_bits bits (8..32), an IPv6 key to its first @p v6_bits
 * (16..64); the bits after them are zero. Pure.
 */
void http_client_prefix_of(const struct http_client_key *key, unsigned v4_bits, unsigned v6_bits,
                           struct http_client_key *prefix);
/*
 * Admit one more connection from @p key: 0, counted (by address and by
 * prefix) until http_admit_release(); or -1 with the reason in *why,
 * counted in http_refused_total() and nothing else changed.
 */
int http_admit_take(struct http_admit *a, const struct http_client_key *key,
                    enum http_refusal *why);
/* Uncount a connection that http_admit_take() admitted. */
void http_admit_release(struct http_admit *a, const struct http_client_key *key);
/* Connections refused for @p why since the process started, by every table. */
uint64_t http_refused_total(enum http_refusal why);
/* "per_client", "reserve", "full", "per_prefix". */
const char *http_refusal_name(enum http_refusal why);

/* ==== the request head ==== */

/*
 * Length of the header block of @p p (through the empty line), or 0 when it
 * is not complete within @p n bytes; *lines counts the lines seen.
 */
size_t http_header_block_len(const char *p, size_t n, size_t *lines);

/*
 * 1 when the header block frames its body ambiguously: two Content-Length
 * lines, or one beside Transfer-Encoding (RFC 9112 §6.3; request smuggling).
 * h2o keeps only one of them, so this is checked on the raw bytes.
 */
int http_has_bad_framing(const char *p, size_t n);

/* The Content-Length declared in the header block, or 0 when there is none. */
uint64_t http_declared_length(const char *p, size_t n);

/* ==== the request head against RFC 9112 and RFC 9110 ==== */

/* What http_screen_head() found; each is answered by one status and code. */
enum http_head_verdict {
    HTTP_HEAD_OK = 0,
    HTTP_HEAD_BAD_REQUEST_LINE,    /* 400: RFC 9112 §3, §2.3 */
    HTTP_HEAD_VERSION_UNSUPPORTED, /* 505: HTTP/d.d with a major version other than 1 */
    HTTP_HEAD_URI_TOO_LONG,        /* 414: RFC 9112 §3 */
    HTTP_HEAD_BAD_FIELD,           /* 400: RFC 9112 §2.2, §5.1, §5.2; RFC 9110 §5.1, §5.5 */
    HTTP_HEAD_BAD_HOST,            /* 400: RFC 9112 §3.2 */
    HTTP_HEAD_BAD_FRAMING,         /* 400: RFC 9112 §6.1, §6.3 */
    HTTP_HEAD_UNKNOWN_CODING,      /* 501: a transfer coding besides chunked (RFC 9112 §6.1) */
    HTTP_HEAD_COUNT
};

/*
 * Check the complete request head @p p (request-line through the empty
 * line, @p n bytes, as http_header_block_len() measured it) against the
 * MUST-level request rules of RFC 9112 and RFC 9110 that h2o does not
 * enforce itself. Pure; HTTP_HEAD_OK when h2o may have it.
 */
enum http_head_verdict http_screen_head(const char *p, size_t n);
/* 400, 414, 501 or 505 for a refusal; 0 for HTTP_HEAD_OK. */
int http_head_verdict_status(enum http_head_verdict v);
/* The JSON error code of a refusal ("invalid_argument", "uri_too_long", ...). */
const char *http_head_verdict_code(enum http_head_verdict v);
/* One sentence for the error body. */
const char *http_head_verdict_message(enum http_head_verdict v);
/*
 * A head that did not end within max_header_bytes: HTTP_HEAD_URI_TOO_LONG
 * when @p p holds no complete request-line yet (414), else HTTP_HEAD_COUNT
 * (431, the fields are too large).
 */
enum http_head_verdict http_head_too_large(const char *p, size_t n);
/* 1 when @p v is uri-host [ ":" port ] (RFC 9110 §7.2); empty is valid. */
int http_host_is_valid(const char *v, size_t len);
/*
 * For an absolute-form request-target ("http://host/path", RFC 9112
 * §3.2.2), the offset of its path in @p path; 0 for any other form.
 */
size_t http_origin_path(const char *path, size_t len);

#endif /* IDMINTD_HTTP_SCREEN_H */
