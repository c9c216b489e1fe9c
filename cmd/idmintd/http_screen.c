/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Screening of a new connection (see http_screen.h): the per-client
 * admission table, and the checks of a raw request head (moved out of
 * http.c unchanged so the fuzz targets can call them without h2o).
 */
#include "http_screen.h"

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
 * max_connections_per_client and R = http_admit_reserve(M), n connections
 * open in all and c of them from the newcomer's address, the newcomer is
 * admitted when
 *
 *     c < P,  and  n < M,  and  (c == 0 or n < M - R).
 *
 * That is, the last R slots go only to addresses that hold no connection.
 * Why this is fair, and enough:
 *  1. No address ever holds more than P connections.
 *  2. An address that holds one gets another only while n < M - R, and its
 *     own c <= n, so it never holds more than max(1, M - R): however large
 *     P is, one address cannot take the reserve, let alone every slot.
 *  3. Each reserve slot goes to an address that held nothing when it took
 *     it, so filling the last R slots takes R distinct addresses; until all
 *     M are taken, a client arriving afresh (a health checker, or a client
 *     whose idle connections were closed) is always let in.
 *  4. The rule reads two counts and nothing else: no timing, no order, no
 *     history to game, O(1) under one lock.
 * What the reserve cannot do is tell a health checker from an attacker
 * that owns many addresses; the per-client bound makes that attacker need
 * M / P + R of them.
 */

/* One address and how many connections it holds; n == 0: the slot is free. */
struct admit_slot {
    struct http_client_key key;
    unsigned n;
};

struct http_admit {
    pthread_mutex_t mu;
    struct admit_slot *slots; /* open addressing, linear probing */
    size_t mask;              /* slots - 1; slots is a power of two >= 2 * max_conns */
    uint64_t seed;            /* random: addresses cannot be picked to collide */
    unsigned n;               /* admitted connections over all threads; <= max_conns */
    unsigned max_conns, max_per_client, reserve;
};

static _Atomic uint64_t refused[HTTP_REFUSED_COUNT];

unsigned http_admit_reserve(unsigned max_conns)
{
    return max_conns / 16 > 0 ? max_conns / 16 : 1;
}

int http_admit_new(struct http_admit **out, unsigned max_conns, unsigned max_per_client)
{
    struct http_admit *a;
    size_t cap = 16;

    while (cap < 2 * (size_t)max_conns)
        cap *= 2;
    if ((a = calloc(1, sizeof(*a))) == NULL)
        return -1;
    if ((a->slots = calloc(cap, sizeof(*a->slots))) == NULL) {
        free(a);
        return -1;
    }
    if (idmint__entropy(&a->seed, sizeof(a->seed)) != 0) {
        struct timespec ts;

        /* No kernel randomness: a seed nobody outside can read is enough to
         * keep probes short; the load factor bounds them anyway. */
        clock_gettime(CLOCK_MONOTONIC, &ts);
        a->seed = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 32) ^ (uint64_t)getpid();
    }
    pthread_mutex_init(&a->mu, NULL);
    a->mask = cap - 1;
    a->max_conns = max_conns > 0 ? max_conns : 1;
    a->max_per_client = max_per_client > 0 ? max_per_client : a->max_conns;
    a->reserve = http_admit_reserve(a->max_conns);
    *out = a;
    return 0;
}

void http_admit_free(struct http_admit *a)
{
    if (a == NULL)
        return;
    pthread_mutex_destroy(&a->mu);
    free(a->slots);
    free(a);
}

void http_client_key_of(const struct sockaddr_storage *ss, struct http_client_key *key)
{
    static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

    memset(key, 0, sizeof(*key));
    if (ss->ss_family == AF_INET) {
        memcpy(key->b, mapped, sizeof(mapped));
        memcpy(key->b + 12, &((const struct sockaddr_in *)ss)->sin_addr, 4);
    } else if (ss->ss_family == AF_INET6) {
        const unsigned char *b = ((const struct sockaddr_in6 *)ss)->sin6_addr.s6_addr;

        /* A dual-stack listener sees IPv4 clients as ::ffff:a.b.c.d. */
        if (memcmp(b, mapped, sizeof(mapped)) == 0)
            memcpy(key->b, b, 16);
        else
            memcpy(key->b, b, 8);
    }
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

static size_t admit_home(const struct http_admit *a, const struct http_client_key *key)
{
    uint64_t hi, lo;

    memcpy(&hi, key->b, 8);
    memcpy(&lo, key->b + 8, 8);
    return (size_t)mix64(mix64(hi ^ a->seed) ^ lo) & a->mask;
}

/* The slot holding @p key, or the free slot where it would go. The table is
 * at most half full (distinct keys <= n <= max_conns), so a free slot exists. */
static size_t admit_find(const struct http_admit *a, const struct http_client_key *key)
{
    size_t i = admit_home(a, key);

    while (a->slots[i].n != 0 && memcmp(&a->slots[i].key, key, sizeof(*key)) != 0)
        i = (i + 1) & a->mask;
    return i;
}

/* Empty slot @p i, shifting later members of its probe run back so that
 * every key stays reachable from its home slot (no tombstones). */
static void admit_remove(struct http_admit *a, size_t i)
{
    size_t j = i;

    for (;;) {
        size_t home;

        j = (j + 1) & a->mask;
        if (a->slots[j].n == 0)
            break;
        home = admit_home(a, &a->slots[j].key);
        /* Slot j may fill the hole at i unless its home lies cyclically in (i, j]. */
        if (i <= j ? (home <= i || home > j) : (home <= i && home > j)) {
            a->slots[i] = a->slots[j];
            i = j;
        }
    }
    memset(&a->slots[i], 0, sizeof(a->slots[i]));
}

int http_admit_take(struct http_admit *a, const struct http_client_key *key, enum http_refusal *why)
{
    enum http_refusal reason = HTTP_REFUSED_COUNT;
    size_t i;

    pthread_mutex_lock(&a->mu);
    i = admit_find(a, key);
    if (a->slots[i].n >= a->max_per_client)
        reason = HTTP_REFUSED_PER_CLIENT;
    else if (a->n >= a->max_conns)
        reason = HTTP_REFUSED_FULL;
    else if (a->slots[i].n > 0 && a->n >= a->max_conns - a->reserve)
        reason = HTTP_REFUSED_RESERVE;
    if (reason == HTTP_REFUSED_COUNT) {
        if (a->slots[i].n == 0)
            a->slots[i].key = *key;
        a->slots[i].n++;
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
    size_t i;

    pthread_mutex_lock(&a->mu);
    i = admit_find(a, key);
    if (a->slots[i].n > 0) {
        a->n--;
        if (--a->slots[i].n == 0)
            admit_remove(a, i);
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
