/* SPDX-License-Identifier: Apache-2.0 */
/*
 * UUIDv7 (RFC 9562 §5.7): the 48-bit Unix ms, a 12-bit counter in rand_a
 * (§6.2 method 1), and 62 bits of rand_b from the thread's CSPRNG
 * (csprng.c), fresh in every UUID.
 *
 * Order: one 64-bit atomic, ms << 12 | counter of the last UUID handed out,
 * advanced by CAS, orders every UUID of the process across all its threads;
 * a batch takes a run of up to CHUNK counter values in one CAS.
 * Guessing: each ms's counter starts at a random value in 0..2047, so the
 * next UUID across a millisecond cannot be told from the last; the top bit
 * starting at 0 leaves at least 2048 values before the rollover (§6.2).
 * Rollover: when a millisecond's counter is spent, the timestamp runs 1 ms
 * ahead of the clock rather than wrap (§6.2). A process that makes more
 * than 2 to 4 million UUIDs a second therefore carries a timestamp ahead of
 * its clock, by 1 ms for every 2,048 to 4,096 UUIDs beyond that rate, and
 * comes back to the clock as soon as its rate falls below it: 62 random
 * bits leave no more room for a counter (docs/design.md, UUIDv7).
 */
#include "idmint.h"
#include "internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define COUNTER_BITS  12u
#define COUNTER_MAX   ((UINT64_C(1) << COUNTER_BITS) - 1)
#define SEED_MASK     (COUNTER_MAX >> 1) /* RFC 9562 §6.2 rollover guard: top bit starts at 0 */
#define RAND_B_BITS   62u
#define RAND_B_MASK   ((UINT64_C(1) << RAND_B_BITS) - 1)
#define VERSION_7     UINT64_C(0x7000)
#define VARIANT_10    (UINT64_C(2) << 62)
#define CHUNK         256u /* UUIDs of a batch per CAS and per draw of random bytes */
#define UUID_TEXT_LEN 36u

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static struct clock uuid_clock;
static _Atomic uint64_t uuid_state; /* ms << 12 | counter of the last UUID; only grows */

static void uuid_init(void)
{
    idmint__clock_init(&uuid_clock, NULL, NULL, NULL);
}

/*
 * Take the next run of at most @p want (>= 1) UUID states, in one CAS: the
 * first in *first, how many in *count (fewer than @p want where the run
 * reaches the end of a millisecond's counter). 0 or the CSPRNG's error.
 */
static int reserve(size_t want, uint64_t *first, size_t *count)
{
    uint64_t old, start, room, seed = 0, ms;
    int have_seed = 0;
    int64_t now = idmint__clock_now_ms(&uuid_clock);

    if (now < 0)
        now = 0;
    old = atomic_load_explicit(&uuid_state, memory_order_relaxed);
    do {
        ms = old >> COUNTER_BITS;
        if ((uint64_t)now <= ms && (old & COUNTER_MAX) != COUNTER_MAX) {
            /* Same ms, or the clock reading lags another thread's: count on. */
            start = old + 1;
            room = COUNTER_MAX - (old & COUNTER_MAX);
        } else {
            if (!have_seed) {
                int rc = idmint__random_fill(&seed, sizeof(seed));

                if (rc != 0)
                    return rc;
                seed &= SEED_MASK;
                have_seed = 1;
            }
            /* On rollover the timestamp runs 1 ms ahead rather than wrap. */
            start = ((uint64_t)now > ms ? (uint64_t)now : ms + 1) << COUNTER_BITS | seed;
            room = COUNTER_MAX + 1 - seed;
        }
        *count = want < room ? want : (size_t)room;
    } while (!atomic_compare_exchange_weak_explicit(&uuid_state, &old, start + *count - 1,
                                                    memory_order_relaxed, memory_order_relaxed));
    *first = start;
    return 0;
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

/* ms(48) | ver(4) | counter(12) ; var(2) | random(62) */
static void put_uuid(uint8_t out[16], uint64_t state, uint64_t random)
{
    put_be64(out, (state >> COUNTER_BITS) << 16 | VERSION_7 | (state & COUNTER_MAX));
    put_be64(out + 8, VARIANT_10 | (random & RAND_B_MASK));
}

int idmint_uuid7(uint8_t out[16])
{
    uint64_t random, state;
    size_t count;
    int rc;

    pthread_once(&init_once, uuid_init);
    rc = idmint__random_fill(&random, sizeof(random));
    if (rc == 0)
        rc = reserve(1, &state, &count);
    if (rc != 0)
        return rc;
    put_uuid(out, state, random);
    return 0;
}

int idmint_uuid7_n(uint8_t (*out)[16], size_t n)
{
    uint64_t random[CHUNK];
    size_t done = 0, drawn = 0;

    if (out == NULL && n > 0)
        return idmint__fail(IDMINT_EINVAL, "uuid7_n: NULL output for %zu UUIDs", n);
    pthread_once(&init_once, uuid_init);
    while (done < n) {
        size_t want = n - done < CHUNK ? n - done : CHUNK, got;
        uint64_t state;
        int rc;

        /* random[0..drawn) are left over from a run cut short by a ms's end. */
        if (drawn < want) {
            rc = idmint__random_fill(random + drawn, (want - drawn) * sizeof(random[0]));
            if (rc != 0)
                return rc;
            drawn = want;
        }
        rc = reserve(want, &state, &got);
        if (rc != 0)
            return rc;
        for (size_t i = 0; i < got; i++)
            put_uuid(out[done + i], state + i, random[i]);
        memmove(random, random + got, (drawn - got) * sizeof(random[0]));
        drawn -= got;
        done += got;
    }
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
