/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Screening of a new connection (see http_screen.h): the admission table
 * by client address and prefix, and the checks of a raw request head (out
 * of http.c so the fuzz targets can call them without h2o).
 */
#include "http_screen.h"
#include "clocks.h"

#include "idmint_service.h"

#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

/* ==== admission ==== */

/*
 * Who gets a connection slot. With M = max_connections, P =
 * max_connections_per_client, Q = max_connections_per_prefix and R =
 * http_admit_reserve(M), n connections open in all, c of them from the
 * newcomer's address and p from its prefix (an IPv4 /24, an IPv6 /48 by
 * default), the newcomer is admitted when
 *
 *     c < P,  and  p < Q,  and  n < M,  and  (p == 0 or n < M - R).
 *
 * That is, the last R slots go only to prefixes that hold no connection.
 * Why this is fair, and enough:
 *  1. No address ever holds more than P connections, no prefix more than Q.
 *  2. A prefix that holds one gets another only while n < M - R, and its
 *     own p <= n, so it never holds more than max(1, M - R): however large
 *     P and Q are, one prefix cannot take the reserve, let alone every slot.
 *  3. Each reserve slot goes to a prefix that held nothing when it took it,
 *     so filling the last R slots takes R distinct prefixes: an attacker
 *     with many addresses in a few prefixes (a /24, a cloud /48) leaves the
 *     reserve to everyone else. Until all M are taken, a client arriving
 *     from a fresh prefix (a health checker elsewhere) is always let in.
 *  4. The rule reads three counts and nothing else: no timing, no order, no
 *     history to game, O(1) under one lock.
 * What the reserve cannot do is tell a health checker from an attacker
 * that owns many prefixes; the bounds make that attacker need M / Q + R of
 * them. When every slot is taken anyway, a newcomer is answered 503 and
 * closed at once (http.c), never left waiting in the listen backlog.
 */

/* One address or prefix and how many connections it holds; n == 0: free. */
struct admit_slot {
    struct http_client_key key;
    unsigned n;
};

/* Open addressing, linear probing; at most max_conns keys, so at most half full. */
struct admit_table {
    struct admit_slot *slots;
    size_t mask; /* slots - 1; slots is a power of two >= 2 * max_conns */
};

struct http_admit {
    pthread_mutex_t mu;
    struct admit_table addrs;    /* by struct http_client_key */
    struct admit_table prefixes; /* by http_client_prefix_of() */
    uint64_t seed;               /* random: addresses cannot be picked to collide */
    unsigned n;                  /* admitted connections over all threads; <= max_conns */
    unsigned max_conns, max_per_client, max_per_prefix, reserve;
    unsigned prefix_v4_bits, prefix_v6_bits;
};

static _Atomic uint64_t refused[HTTP_REFUSED_COUNT];

static const unsigned char v4_mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

unsigned http_admit_reserve(unsigned max_conns)
{
    return max_conns / 16 > 0 ? max_conns / 16 : 1;
}

static unsigned clamp_bits(unsigned bits, unsigned lo, unsigned hi, unsigned fallback)
{
    if (bits == 0)
        return fallback;
    return bits < lo ? lo : bits > hi ? hi : bits;
}

int http_admit_new(struct http_admit **out, const struct http_admit_limits *lim)
{
    struct http_admit *a;
    unsigned max_conns = lim->max_conns > 0 ? lim->max_conns : 1;
    size_t cap = 16;

    while (cap < 2 * (size_t)max_conns)
        cap *= 2;
    if ((a = calloc(1, sizeof(*a))) == NULL)
        return -1;
    a->addrs.slots = calloc(cap, sizeof(*a->addrs.slots));
    a->prefixes.slots = calloc(cap, sizeof(*a->prefixes.slots));
    if (a->addrs.slots == NULL || a->prefixes.slots == NULL) {
        free(a->addrs.slots);
        free(a->prefixes.slots);
        free(a);
        return -1;
    }
    a->seed = clocks_seed();
    pthread_mutex_init(&a->mu, NULL);
    a->addrs.mask = a->prefixes.mask = cap - 1;
    a->max_conns = max_conns;
    a->max_per_client = lim->max_per_client > 0 ? lim->max_per_client : max_conns;
    a->max_per_prefix = lim->max_per_prefix > 0 ? lim->max_per_prefix : max_conns;
    a->reserve = http_admit_reserve(max_conns);
    a->prefix_v4_bits = clamp_bits(lim->prefix_v4_bits, 8, 32, 24);
    a->prefix_v6_bits = clamp_bits(lim->prefix_v6_bits, 16, 64, 48);
    *out = a;
    return 0;
}

void http_admit_free(struct http_admit *a)
{
    if (a == NULL)
        return;
    pthread_mutex_destroy(&a->mu);
    free(a->addrs.slots);
    free(a->prefixes.slots);
    free(a);
}

void http_client_key_of(const struct sockaddr_storage *ss, struct http_client_key *key)
{
    memset(key, 0, sizeof(*key));
    if (ss->ss_family == AF_INET) {
        memcpy(key->b, v4_mapped, sizeof(v4_mapped));
        memcpy(key->b + 12, &((const struct sockaddr_in *)ss)->sin_addr, 4);
    } else if (ss->ss_family == AF_INET6) {
        const unsigned char *b = ((const struct sockaddr_in6 *)ss)->sin6_addr.s6_addr;

        /* A dual-stack listener sees IPv4 clients as ::ffff:a.b.c.d. */
        if (memcmp(b, v4_mapped, sizeof(v4_mapped)) == 0)
            memcpy(key->b, b, 16);
        else
            memcpy(key->b, b, 8);
    }
}

void http_client_prefix_of(const struct http_client_key *key, unsigned v4_bits, unsigned v6_bits,
                           struct http_client_key *prefix)
{
    int is_v4 = memcmp(key->b, v4_mapped, sizeof(v4_mapped)) == 0;
    unsigned bits = is_v4 ? 96 + clamp_bits(v4_bits, 8, 32, 24) : clamp_bits(v6_bits, 16, 64, 48);
    unsigned i;

    *prefix = *key;
    for (i = bits / 8; i < 16; i++)
        prefix->b[i] = 0;
    if (bits % 8 != 0)
        prefix->b[bits / 8] = (unsigned char)(key->b[bits / 8] & (0xffu << (8 - bits % 8)));
}

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdu;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53u;
    x ^= x >> 33;
    return x;
}

static size_t admit_home(const struct admit_table *t, uint64_t seed,
                         const struct http_client_key *key)
{
    uint64_t hi, lo;

    memcpy(&hi, key->b, 8);
    memcpy(&lo, key->b + 8, 8);
    return (size_t)mix64(mix64(hi ^ seed) ^ lo) & t->mask;
}

/* The slot holding @p key, or the free slot where it would go. The table is
 * at most half full (distinct keys <= n <= max_conns), so a free slot exists. */
static size_t admit_find(const struct admit_table *t, uint64_t seed,
                         const struct http_client_key *key)
{
    size_t i = admit_home(t, seed, key);

    while (t->slots[i].n != 0 && memcmp(&t->slots[i].key, key, sizeof(*key)) != 0)
        i = (i + 1) & t->mask;
    return i;
}

/* Empty slot @p i, shifting later members of its probe run back so that
 * every key stays reachable from its home slot (no tombstones). */
static void admit_remove(struct admit_table *t, uint64_t seed, size_t i)
{
    size_t j = i;

    for (;;) {
        size_t home;

        j = (j + 1) & t->mask;
        if (t->slots[j].n == 0)
            break;
        home = admit_home(t, seed, &t->slots[j].key);
        /* Slot j may fill the hole at i unless its home lies cyclically in (i, j]. */
        if (i <= j ? (home <= i || home > j) : (home <= i && home > j)) {
            t->slots[i] = t->slots[j];
            i = j;
        }
    }
    memset(&t->slots[i], 0, sizeof(t->slots[i]));
}

static void admit_count(struct admit_table *t, size_t i, const struct http_client_key *key)
{
    if (t->slots[i].n == 0)
        t->slots[i].key = *key;
    t->slots[i].n++;
}

static void admit_uncount(struct admit_table *t, uint64_t seed, const struct http_client_key *key)
{
    size_t i = admit_find(t, seed, key);

    if (t->slots[i].n > 0 && --t->slots[i].n == 0)
        admit_remove(t, seed, i);
}

int http_admit_take(struct http_admit *a, const struct http_client_key *key, enum http_refusal *why)
{
    enum http_refusal reason = HTTP_REFUSED_COUNT;
    struct http_client_key prefix;
    size_t i, k;

    http_client_prefix_of(key, a->prefix_v4_bits, a->prefix_v6_bits, &prefix);
    pthread_mutex_lock(&a->mu);
    i = admit_find(&a->addrs, a->seed, key);
    k = admit_find(&a->prefixes, a->seed, &prefix);
    if (a->addrs.slots[i].n >= a->max_per_client)
        reason = HTTP_REFUSED_PER_CLIENT;
    else if (a->prefixes.slots[k].n >= a->max_per_prefix)
        reason = HTTP_REFUSED_PER_PREFIX;
    else if (a->n >= a->max_conns)
        reason = HTTP_REFUSED_FULL;
    else if (a->prefixes.slots[k].n > 0 && a->n >= a->max_conns - a->reserve)
        reason = HTTP_REFUSED_RESERVE;
    if (reason == HTTP_REFUSED_COUNT) {
        admit_count(&a->addrs, i, key);
        admit_count(&a->prefixes, k, &prefix);
        a->n++;
    }
    pthread_mutex_unlock(&a->mu);
    if (reason == HTTP_REFUSED_COUNT)
        return 0;
    atomic_fetch_add_explicit(&refused[reason], 1, memory_order_relaxed);
    *why = reason;
    return -1;
}

void http_admit_release(struct http_admit *a, const struct http_client_key *key)
{
    struct http_client_key prefix;
    size_t i;

    http_client_prefix_of(key, a->prefix_v4_bits, a->prefix_v6_bits, &prefix);
    pthread_mutex_lock(&a->mu);
    i = admit_find(&a->addrs, a->seed, key);
    if (a->addrs.slots[i].n > 0) {
        a->n--;
        if (--a->addrs.slots[i].n == 0)
            admit_remove(&a->addrs, a->seed, i);
        admit_uncount(&a->prefixes, a->seed, &prefix);
    }
    pthread_mutex_unlock(&a->mu);
}

uint64_t http_refused_total(enum http_refusal why)
{
    return why < HTTP_REFUSED_COUNT ? atomic_load_explicit(&refused[why], memory_order_relaxed) : 0;
}

const char *http_refusal_name(enum http_refusal why)
{
    switch (why) {
    case HTTP_REFUSED_PER_CLIENT:
        return "per_client";
    case HTTP_REFUSED_RESERVE:
        return "reserve";
    case HTTP_REFUSED_FULL:
        return "full";
    case HTTP_REFUSED_PER_PREFIX:
        return "per_prefix";
    default:
        return "other";
    }
}

/* ==== the request head ==== */

/*
 * Length of the header block of @p p (through the empty line), or 0 when it
 * is not complete within @p n bytes; *lines counts the lines seen.
 */
size_t http_header_block_len(const char *p, size_t n, size_t *lines)
{
    size_t i, count = 0;

    for (i = 0; i < n; i++) {
        if (p[i] != '\n')
            continue;
        count++;
        if (i + 1 < n && p[i + 1] == '\n') {
            *lines = count;
            return i + 2;
        }
        if (i + 2 < n && p[i + 1] == '\r' && p[i + 2] == '\n') {
            *lines = count;
            return i + 3;
        }
    }
    *lines = count;
    return 0;
}

/*
 * 1 when the header block frames its body ambiguously: two Content-Length
 * lines, or one beside Transfer-Encoding (RFC 9112 §6.3; request smuggling).
 * h2o keeps only one of them, so this is checked on the raw bytes.
 */
int http_has_bad_framing(const char *p, size_t n)
{
    static const char cl[] = "content-length:", te[] = "transfer-encoding:";
    size_t i = 0;
    int lengths = 0, encodings = 0;

    while (i < n) {
        const char *line = p + i;
        const char *nl = memchr(line, '\n', n - i);
        size_t len = nl != NULL ? (size_t)(nl - line) : n - i;

        if (len >= sizeof(cl) - 1 && strncasecmp(line, cl, sizeof(cl) - 1) == 0)
            lengths++;
        else if (len >= sizeof(te) - 1 && strncasecmp(line, te, sizeof(te) - 1) == 0)
            encodings++;
        i += len + 1;
    }
    return lengths > 1 || (lengths == 1 && encodings > 0);
}

/* The Content-Length declared in the header block, or 0 when there is none. */
uint64_t http_declared_length(const char *p, size_t n)
{
    static const char name[] = "content-length:";
    size_t i = 0;

    while (i < n) {
        const char *line = p + i;
        const char *nl = memchr(line, '\n', n - i);
        size_t len = nl != NULL ? (size_t)(nl - line) : n - i;

        if (len > sizeof(name) - 1 && strncasecmp(line, name, sizeof(name) - 1) == 0) {
            size_t k = sizeof(name) - 1;
            uint64_t v = 0;

            while (k < len && (line[k] == ' ' || line[k] == '\t'))
                k++;
            for (; k < len && line[k] >= '0' && line[k] <= '9'; k++) {
                if (v > UINT64_MAX / 16)
                    return UINT64_MAX;
                v = v * 10 + (uint64_t)(line[k] - '0');
            }
            return v;
        }
        i += len + 1;
    }
    return 0;
}

/* ==== the request head against RFC 9112 and RFC 9110 ==== */

/* RFC 9110 §5.6.2: tchar. */
static int is_tchar(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

/* RFC 9110 §5.5: field-vchar, SP and HTAB; obs-text is let through. */
static int is_field_char(unsigned char c)
{
    return c == ' ' || c == '\t' || (c >= 0x21 && c != 0x7f);
}

static int is_hex(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

int http_host_is_valid(const char *v, size_t len)
{
    size_t i = 0, end = len;
    const char *colon;

    /* uri-host [ ":" port ] (RFC 9110 §7.2, RFC 3986 §3.2.2); the port is digits. */
    if (len > 0 && v[0] == '[') {
        const char *close_br = memchr(v, ']', len);

        if (close_br == NULL)
            return 0;
        for (i = 1; v + i < close_br; i++)
            if (!is_hex((unsigned char)v[i]) && v[i] != ':' && v[i] != '.' && v[i] != 'v' &&
                v[i] != 'V')
                return 0;
        i = (size_t)(close_br - v) + 1;
        if (i < len && v[i] != ':')
            return 0;
        end = i;
    } else if ((colon = memchr(v, ':', len)) != NULL) {
        end = (size_t)(colon - v);
    }
    for (; i < end; i++) {
        unsigned char c = (unsigned char)v[i];

        if (c == '%') {
            if (i + 2 >= end || !is_hex((unsigned char)v[i + 1]) ||
                !is_hex((unsigned char)v[i + 2]))
                return 0;
            i += 2;
        } else if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                     strchr("-._~!$&'()*+,;=", c) != NULL) ||
                   c == '\0') {
            return 0;
        }
    }
    for (i = end < len ? end + 1 : len; i < len; i++)
        if (v[i] < '0' || v[i] > '9')
            return 0;
    return 1;
}

/* Trim OWS (SP, HTAB) from both ends of [*v, *v + *len). */
static void trim_ows(const char **v, size_t *len)
{
    while (*len > 0 && ((*v)[0] == ' ' || (*v)[0] == '\t')) {
        (*v)++;
        (*len)--;
    }
    while (*len > 0 && ((*v)[*len - 1] == ' ' || (*v)[*len - 1] == '\t'))
        (*len)--;
}

/*
 * A Content-Length value (RFC 9110 §8.6): 1*DIGIT, or a list of one value
 * repeated ("42, 42"), which RFC 9112 §6.3 lets a recipient take as that
 * value. 1 when valid.
 */
static int content_length_is_valid(const char *v, size_t len)
{
    const char *first = NULL;
    size_t first_len = 0, i = 0;

    while (i <= len) {
        const char *comma = memchr(v + i, ',', len - i);
        size_t end = comma != NULL ? (size_t)(comma - v) : len, k;
        const char *e = v + i;
        size_t e_len = end - i;

        trim_ows(&e, &e_len);
        if (e_len == 0)
            return 0;
        for (k = 0; k < e_len; k++)
            if (e[k] < '0' || e[k] > '9')
                return 0;
        if (first == NULL) {
            first = e;
            first_len = e_len;
        } else if (e_len != first_len || memcmp(e, first, e_len) != 0) {
            return 0;
        }
        i = end + 1;
    }
    return 1;
}

/*
 * Add the transfer codings of one Transfer-Encoding line to *n_codings and
 * note where chunked was seen; -1 on a value that is no list of codings.
 */
static int scan_codings(const char *v, size_t len, unsigned *n_codings, unsigned *n_chunked,
                        unsigned *last_chunked)
{
    size_t i = 0;

    while (i <= len) {
        const char *comma = memchr(v + i, ',', len - i);
        size_t end = comma != NULL ? (size_t)(comma - v) : len, k;
        const char *e = v + i;
        size_t e_len = end - i;
        const char *semi = memchr(e, ';', e_len);

        if (semi != NULL)
            e_len = (size_t)(semi - e); /* parameters: the coding is the token before them */
        trim_ows(&e, &e_len);
        i = end + 1;
        if (e_len == 0 && semi == NULL)
            continue; /* RFC 9110 §5.6.1: empty list elements are ignored */
        for (k = 0; k < e_len; k++)
            if (!is_tchar((unsigned char)e[k]))
                return -1;
        if (e_len == 0)
            return -1;
        (*n_codings)++;
        if (e_len == 7 && strncasecmp(e, "chunked", 7) == 0) {
            (*n_chunked)++;
            *last_chunked = *n_codings;
        }
    }
    return 0;
}

/* Length of the line at @p p (through its LF) within @p n, without CR LF in *text_len. */
static size_t line_at(const char *p, size_t n, size_t *text_len)
{
    const char *nl = memchr(p, '\n', n);
    size_t len = nl != NULL ? (size_t)(nl - p) : n;

    *text_len = len > 0 && p[len - 1] == '\r' ? len - 1 : len;
    return nl != NULL ? len + 1 : n;
}

/* request-line = method SP request-target SP HTTP-version (RFC 9112 §3). */
static enum http_head_verdict screen_request_line(const char *p, size_t len, int *minor)
{
    size_t i = 0, start;

    for (start = i; i < len && is_tchar((unsigned char)p[i]); i++)
        ;
    if (i == start || i == len || p[i] != ' ')
        return HTTP_HEAD_BAD_REQUEST_LINE;
    for (start = ++i; i < len && (unsigned char)p[i] > 0x20 && (unsigned char)p[i] < 0x7f; i++)
        ;
    if (i == start || i == len || p[i] != ' ')
        return HTTP_HEAD_BAD_REQUEST_LINE;
    i++;
    /* HTTP-version = "HTTP" "/" DIGIT "." DIGIT, case-sensitive (RFC 9112 §2.3). */
    if (len - i != 8 || memcmp(p + i, "HTTP/", 5) != 0 || p[i + 5] < '0' || p[i + 5] > '9' ||
        p[i + 6] != '.' || p[i + 7] < '0' || p[i + 7] > '9')
        return HTTP_HEAD_BAD_REQUEST_LINE;
    if (p[i + 5] != '1')
        return HTTP_HEAD_VERSION_UNSUPPORTED;
    *minor = p[i + 7] - '0';
    return HTTP_HEAD_OK;
}

enum http_head_verdict http_screen_head(const char *p, size_t n)
{
    static const char cl[] = "content-length", te[] = "transfer-encoding", host[] = "host";
    enum http_head_verdict v;
    unsigned n_host = 0, n_length = 0, n_te = 0, n_codings = 0, n_chunked = 0, last_chunked = 0;
    int minor = 0, is_host_bad = 0, is_length_bad = 0, is_te_bad = 0;
    size_t i, text;

    i = line_at(p, n, &text);
    if ((v = screen_request_line(p, text, &minor)) != HTTP_HEAD_OK)
        return v;
    while (i < n) {
        const char *line = p + i, *colon, *value;
        size_t k, name_len, value_len;

        i += line_at(line, n - i, &text);
        if (text == 0)
            break; /* the empty line that ends the head */
        /* RFC 9112 §2.2 (after the start-line) and §5.2 (obs-fold): a line
         * that starts with whitespace is refused, never unfolded. */
        if (line[0] == ' ' || line[0] == '\t')
            return HTTP_HEAD_BAD_FIELD;
        colon = memchr(line, ':', text);
        if (colon == NULL)
            return HTTP_HEAD_BAD_FIELD;
        name_len = (size_t)(colon - line);
        /* RFC 9112 §5.1: no whitespace between the name and the colon; the name is a token. */
        for (k = 0; k < name_len; k++)
            if (!is_tchar((unsigned char)line[k]))
                return HTTP_HEAD_BAD_FIELD;
        if (name_len == 0)
            return HTTP_HEAD_BAD_FIELD;
        value = colon + 1;
        value_len = text - name_len - 1;
        /* RFC 9110 §5.5 (NUL, CR, LF, other controls) and RFC 9112 §2.2 (bare CR). */
        for (k = 0; k < value_len; k++)
            if (!is_field_char((unsigned char)value[k]))
                return HTTP_HEAD_BAD_FIELD;
        trim_ows(&value, &value_len);
        if (name_len == sizeof(host) - 1 && strncasecmp(line, host, name_len) == 0) {
            n_host++;
            is_host_bad |= !http_host_is_valid(value, value_len);
        } else if (name_len == sizeof(cl) - 1 && strncasecmp(line, cl, name_len) == 0) {
            n_length++;
            is_length_bad |= !content_length_is_valid(value, value_len);
        } else if (name_len == sizeof(te) - 1 && strncasecmp(line, te, name_len) == 0) {
            n_te++;
            is_te_bad |= scan_codings(value, value_len, &n_codings, &n_chunked, &last_chunked) != 0;
        }
    }
    /* RFC 9112 §3.2: HTTP/1.1 needs exactly one Host, and a valid one. */
    if ((minor >= 1 && n_host == 0) || n_host > 1 || is_host_bad)
        return HTTP_HEAD_BAD_HOST;
    /* RFC 9112 §6.3 (3, 5): lengths stated twice, or invalid, frame nothing safely. */
    if (n_length > 1 || is_length_bad || (n_length > 0 && n_te > 0))
        return HTTP_HEAD_BAD_FRAMING;
    if (n_te > 0) {
        /* RFC 9112 §6.1: Transfer-Encoding in HTTP/1.0 is faulty framing;
         * §6.3 (4): chunked must be the final coding, and §7 once only. */
        if (minor == 0 || is_te_bad || n_codings == 0 || n_chunked != 1 ||
            last_chunked != n_codings)
            return HTTP_HEAD_BAD_FRAMING;
        /* RFC 9112 §6.1: a coding the server does not understand (we decode chunked only). */
        if (n_codings > 1)
            return HTTP_HEAD_UNKNOWN_CODING;
    }
    return HTTP_HEAD_OK;
}

int http_head_verdict_status(enum http_head_verdict v)
{
    switch (v) {
    case HTTP_HEAD_OK:
        return 0;
    case HTTP_HEAD_VERSION_UNSUPPORTED:
        return 505;
    case HTTP_HEAD_UNKNOWN_CODING:
        return 501;
    case HTTP_HEAD_URI_TOO_LONG:
        return 414;
    default:
        return 400;
    }
}

const char *http_head_verdict_code(enum http_head_verdict v)
{
    switch (v) {
    case HTTP_HEAD_VERSION_UNSUPPORTED:
        return "http_version_not_supported";
    case HTTP_HEAD_UNKNOWN_CODING:
        return "not_implemented";
    case HTTP_HEAD_URI_TOO_LONG:
        return "uri_too_long";
    default:
        return "invalid_argument";
    }
}

const char *http_head_verdict_message(enum http_head_verdict v)
{
    switch (v) {
    case HTTP_HEAD_OK:
        return "";
    case HTTP_HEAD_BAD_REQUEST_LINE:
        return "the request-line is not method SP request-target SP HTTP/DIGIT.DIGIT";
    case HTTP_HEAD_VERSION_UNSUPPORTED:
        return "only HTTP/1.x is served on this port";
    case HTTP_HEAD_URI_TOO_LONG:
        return "the request-target is longer than max_header_bytes";
    case HTTP_HEAD_BAD_FIELD:
        return "a header field line is malformed (whitespace before the colon or at the "
               "start of a line, obsolete line folding, or a control character)";
    case HTTP_HEAD_BAD_HOST:
        return "an HTTP/1.1 request needs exactly one Host header with a valid value";
    case HTTP_HEAD_BAD_FRAMING:
        return "conflicting Content-Length or Transfer-Encoding headers";
    case HTTP_HEAD_UNKNOWN_CODING:
        return "only the chunked transfer coding is supported";
    default:
        return "bad request";
    }
}

enum http_head_verdict http_head_too_large(const char *p, size_t n)
{
    /* RFC 9112 §3: a request-target longer than we parse is 414, not 431. */
    return memchr(p, '\n', n) == NULL ? HTTP_HEAD_URI_TOO_LONG : HTTP_HEAD_COUNT;
}

size_t http_origin_path(const char *path, size_t len)
{
    size_t i;

    /* RFC 9112 §3.2.2: absolute-form "http://authority/path": serve the path. */
    if (len < 7 || (strncasecmp(path, "http://", 7) != 0 &&
                    (len < 8 || strncasecmp(path, "https://", 8) != 0)))
        return 0;
    for (i = path[4] == ':' ? 7 : 8; i < len && path[i] != '/' && path[i] != '?'; i++)
        ;
    return i;
}
