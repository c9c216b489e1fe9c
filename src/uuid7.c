/* SPDX-License-Identifier: Apache-2.0 */
/*
 * UUIDv7 (RFC 9562 §5.7) with a 16-bit counter (§6.2 method 1): the 12 bits
 * of rand_a and the top 4 bits of rand_b. One 64-bit atomic (ms << 16 |
 * counter), advanced by CAS, orders every UUID of the process; the other 58
 * bits come from the kernel through a per-thread pool that any copy of the
 * process (fork(), a raw clone) invalidates.
 */
#include "idmint.h"
#include "internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define COUNTER_BITS  16u
#define COUNTER_MAX   ((UINT64_C(1) << COUNTER_BITS) - 1)
#define SEED_MASK     (COUNTER_MAX >> 1) /* RFC 9562 §6.2 rollover guard: top bit starts at 0 */
#define RAND_B_BITS   58u                /* rand_b bits left after the counter's 4 */
#define RAND_B_MASK   ((UINT64_C(1) << RAND_B_BITS) - 1)
#define VERSION_7     UINT64_C(0x7000)
#define VARIANT_10    (UINT64_C(2) << 62)
#define POOL_SIZE     4096u
#define DRAW_MAX      10u /* bytes one UUID may take: 8 for rand_b, 2 for a seed */
#define UUID_TEXT_LEN 36u

/* One per thread: getrandom(2) per UUID would cost more than the rest. */
struct pool {
    uint64_t fork_id; /* idmint__fork_id() when filled */
    size_t pos;       /* next unused byte; POOL_SIZE when empty */
    unsigned char buf[POOL_SIZE];
};

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static struct clock uuid_clock;
static const _Atomic uint64_t *uuid_fork_word; /* idmint__fork_word() */
static _Atomic uint64_t uuid_state;            /* ms << 16 | counter of the last UUID; only grows */

static void uuid_init(void)
{
    idmint__clock_init(&uuid_clock, NULL, NULL, NULL);
    uuid_fork_word = idmint__fork_word();
}

/*
 * Make sure @p p holds DRAW_MAX unused bytes from this process's own draw.
 * 0 or IDMINT_EUNAVAILABLE, with the pool left empty.
 */
static int pool_ready(struct pool *p)
{
    uint64_t id;
    int rc;

    /* A child holds a copy of the parent's unused bytes; using them would
     * repeat the parent's UUIDs bit for bit. */
    if (idmint__fork_is_other(uuid_fork_word, p->fork_id))
        p->pos = POOL_SIZE;
    if (p->pos + DRAW_MAX <= POOL_SIZE)
        return 0;
    id = idmint__fork_id(); /* before the draw: the bytes are this copy's */
    rc = idmint__entropy(p->buf, sizeof(p->buf));
    if (rc != 0)
        return rc;
    p->fork_id = id;
    p->pos = 0;
    return 0;
}

/* Byte order does not matter for random bits, so a plain copy will do. */
static uint64_t pool_take(struct pool *p, size_t n)
{
    uint64_t v = 0;

    memcpy(&v, p->buf + p->pos, n);
    p->pos += n;
    return v;
}

static void put_be64(uint8_t *out, uint64_t v)
{
#if defined(__GNUC__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    /* gcc 12 assembles the shifted bytes on the stack and reloads them,
     * which stalls store forwarding: a quarter of the time of a UUID. */
    v = __builtin_bswap64(v);
    memcpy(out, &v, sizeof(v));
#else
    for (unsigned i = 0; i < 8; i++)
        out[i] = (uint8_t)(v >> (56 - 8 * i));
#endif
}

int idmint_uuid7(uint8_t out[16])
{
    uint64_t old, next, rand_b, seed = 0, ms;
    int have_seed = 0, rc, is_new;
    struct pool *p = idmint__thread_slot(IDMINT__SLOT_UUID_POOL, sizeof(*p), &is_new);
    int64_t now;

    if (p == NULL)
        return idmint__fail(IDMINT_ENOMEM, "out of memory for this thread's UUIDv7 pool");
    if (is_new)
        p->pos = POOL_SIZE;
    pthread_once(&init_once, uuid_init);
    rc = pool_ready(p);
    if (rc != 0)
        return rc;
    rand_b = pool_take(p, 8) & RAND_B_MASK;
    now = idmint__clock_now_ms(&uuid_clock);
    if (now < 0)
        now = 0;

    old = atomic_load_explicit(&uuid_state, memory_order_relaxed);
    do {
        ms = old >> COUNTER_BITS;
        if ((uint64_t)now <= ms && (old & COUNTER_MAX) != COUNTER_MAX) {
            /* Same ms, or the clock reading lags another thread's: count on. */
            next = old + 1;
            continue;
        }
        if (!have_seed) {
            /* pool_ready left room for this: the CAS loop cannot fail. */
            seed = pool_take(p, 2) & SEED_MASK;
            have_seed = 1;
        }
        /* RFC 9562 §6.2: on counter rollover, run the timestamp 1 ms ahead
         * rather than wrap, which would break the order. */
        if ((uint64_t)now <= ms)
            next = (ms + 1) << COUNTER_BITS | seed;
        else
            next = (uint64_t)now << COUNTER_BITS | seed;
    } while (!atomic_compare_exchange_weak_explicit(&uuid_state, &old, next, memory_order_relaxed,
                                                    memory_order_relaxed));

    /* ms(48) | ver(4) | counter high 12 ; var(2) | counter low 4 | random 58 */
    put_be64(out, (next >> COUNTER_BITS) << 16 | VERSION_7 | (next & COUNTER_MAX) >> 4);
    put_be64(out + 8, VARIANT_10 | (next & 0xf) << RAND_B_BITS | rand_b);
    return 0;
}

void idmint_uuid_format(const uint8_t in[16], char out[37])
{
    static const char hex[] = "0123456789abcdef";
    char *p = out;

    for (unsigned i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            *p++ = '-';
        *p++ = hex[in[i] >> 4];
        *p++ = hex[in[i] & 0xf];
    }
    *p = '\0';
}

int idmint_uuid_parse(const char *text, uint8_t out[16])
{
    uint8_t bytes[16];
    unsigned n = 0;

    if (text == NULL || out == NULL)
        return idmint__fail(IDMINT_EINVAL, "uuid: NULL");
    for (unsigned i = 0; i < UUID_TEXT_LEN; i++) {
        int hi, lo;

        if (i == 8 || i == 13 || i == 18 || i == 23) {
            if (text[i] != '-')
                goto bad;
            continue;
        }
        hi = idmint__hex_value(text[i]);
        /* text[i] is a hex digit, not NUL, so text[i + 1] is in bounds. */
        lo = hi < 0 ? -1 : idmint__hex_value(text[i + 1]);
        if (lo < 0)
            goto bad;
        bytes[n++] = (uint8_t)(hi << 4 | lo);
        i++;
    }
    if (text[UUID_TEXT_LEN] != '\0')
        goto bad;
    for (unsigned i = 0; i < 16; i++)
        out[i] = bytes[i];
    return 0;
bad:
    return idmint__fail(IDMINT_EINVAL, "uuid \"%.40s\": want 8-4-4-4-12 hex digits", text);
}
