/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Token buckets as GCRA (the generic cell rate algorithm): a bucket is the
 * single time at which it would be full again, so taking a request is one
 * compare-and-swap and no timer ever refills anything. With T = 1 s / rate
 * and a bucket of B requests, a request at now is allowed when
 * max(tat, now) + T - now <= B * T, and tat becomes max(tat, now) + T.
 * Not here: which request is limited by what (routes.c), the settings
 * (config.c).
 */
#include "ratelimit.h"
#include "clocks.h"

#include "idmint_service.h"

#include <string.h>
#include <time.h>
#include <unistd.h>

#define NS_PER_S          1000000000u
#define TIME_BITS         44 /* µs in an address bucket: wraps every 203 days */
#define TIME_MASK         ((UINT64_C(1) << TIME_BITS) - 1)
#define FINGERPRINT_MAX   ((UINT64_C(1) << (64 - TIME_BITS)) - 1)
/* How far behind another thread's clock reading a take may be (routes.c reads
 * it before the dispatch): a stored time this much past the limit is a debt. */
#define READER_LAG_MAX_US UINT64_C(1000000)

void ratelimit_init(struct ratelimit *rl)
{
    rl->seed = clocks_seed();
}

/*
 * Rounded up: a rate that does not divide a second grants a little less,
 * never more; above 10^9 a second the interval stays 1 ns (a 0 was no limit).
 */
static uint64_t interval_of(const struct ratelimit_rule *rule)
{
    return ((uint64_t)NS_PER_S + rule->rate - 1u) / rule->rate;
}

static uint64_t burst_of(const struct ratelimit_rule *rule)
{
    return rule->burst > 0 ? rule->burst : rule->rate;
}

/*
 * One GCRA step over @p tat (ns): 0 and the new tat in *next, or the wait
 * in ns. The caller installs *next only when 0 is returned.
 */
static uint64_t gcra(uint64_t tat, uint64_t now, uint64_t t, uint64_t limit, uint64_t *next)
{
    uint64_t start = tat > now ? tat : now;

    if (start + t - now > limit)
        return start + t - now - limit;
    *next = start + t;
    return 0;
}

/* Take one request from the bucket whose tat is @p word; see ratelimit_take_token. */
static uint64_t take_word(_Atomic uint64_t *word, const struct ratelimit_rule *rule,
                          uint64_t now_ns)
{
    uint64_t tat, t, limit;

    t = interval_of(rule);
    limit = burst_of(rule) * t;
    tat = atomic_load_explicit(word, memory_order_relaxed);
    for (;;) {
        uint64_t next, wait = gcra(tat, now_ns, t, limit, &next);

        if (wait > 0)
            return wait;
        /* A failed CAS reloads tat: another thread took a request meanwhile. */
        if (atomic_compare_exchange_weak_explicit(word, &tat, next, memory_order_relaxed,
                                                  memory_order_relaxed))
            return 0;
    }
}

uint64_t ratelimit_take_token(struct ratelimit *rl, size_t index, const struct ratelimit_rule *rule,
                              uint64_t now_ns)
{
    if (rule->rate == 0 || index >= RATELIMIT_TOKENS_MAX)
        return 0;
    return take_word(&rl->token_tat_ns[index], rule, now_ns);
}

uint64_t ratelimit_take_write(struct ratelimit *rl, enum ratelimit_class c, size_t caller,
                              const struct ratelimit_rule *rule, uint64_t now_ns)
{
    if (rule->rate == 0 || c < RATELIMIT_BATCH || c >= RATELIMIT_CLASSES ||
        caller > RATELIMIT_ANONYMOUS)
        return 0;
    return take_word(&rl->write_tat_ns[c - RATELIMIT_BATCH][caller], rule, now_ns);
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

/*
 * The tat in ns of an address word at @p now_us, undoing the wrap of its
 * 44-bit time: a legitimate tat is never more than @p limit_us ahead of
 * now (it was written so, and now only grows), so a time further ahead is
 * one that wrapped long ago and the bucket counts as full (returns now).
 */
static uint64_t address_tat_ns(uint64_t word, uint64_t now_us, uint64_t limit_us)
{
    uint64_t ahead = ((word & TIME_MASK) - now_us) & TIME_MASK;

    /* A thread that read the clock before another took may see the debt up
     * to its lag past the limit: a debt still, never a wrap (which puts the
     * time some 203 days ahead). */
    if (ahead == 0 || ahead > limit_us + READER_LAG_MAX_US)
        return now_us * 1000u;
    return (now_us + ahead) * 1000u;
}

uint64_t ratelimit_take_address(struct ratelimit *rl, const unsigned char key[16],
                                const struct ratelimit_rule *rule, uint64_t now_ns)
{
    uint64_t hi, lo, h, fp, t, limit, now_us = now_ns / 1000u, limit_us;
    _Atomic uint64_t *set;
    size_t i;

    if (rule->rate == 0)
        return 0;
    memcpy(&hi, key, 8);
    memcpy(&lo, key + 8, 8);
    h = mix64(mix64(hi ^ rl->seed) ^ lo);
    set = rl->address[h % RATELIMIT_SETS];
    fp = (h >> 32) & FINGERPRINT_MAX;
    fp = fp != 0 ? fp : 1; /* 0 marks a free bucket */
    t = interval_of(rule);
    limit = burst_of(rule) * t;
    limit_us = limit / 1000u + 1;

    for (;;) {
        _Atomic uint64_t *slot = NULL, *victim = &set[0];
        uint64_t seen = 0, victim_seen = 0, victim_tat = UINT64_MAX, tat, next, wait;

        for (i = 0; i < RATELIMIT_WAYS; i++) {
            uint64_t w = atomic_load_explicit(&set[i], memory_order_relaxed);
            uint64_t wt = w == 0 ? 0 : address_tat_ns(w, now_us, limit_us);

            if (w != 0 && (w >> TIME_BITS) == fp) {
                slot = &set[i];
                seen = w;
                break;
            }
            /* The victim: a free bucket, else the one closest to full. */
            if (wt < victim_tat) {
                victim = &set[i];
                victim_seen = w;
                victim_tat = wt;
            }
        }
        if (slot == NULL) {
            slot = victim;
            seen = victim_seen;
            tat = now_ns; /* a new address starts with a full bucket */
        } else {
            tat = address_tat_ns(seen, now_us, limit_us);
        }
        if ((wait = gcra(tat, now_ns, t, limit, &next)) > 0)
            return wait;
        /* Store µs rounded up, so that a tat never reads earlier than it was. */
        next = (fp << TIME_BITS) | (((next + 999u) / 1000u) & TIME_MASK);
        if (atomic_compare_exchange_strong_explicit(slot, &seen, next, memory_order_relaxed,
                                                    memory_order_relaxed))
            return 0;
        /* The set changed under us (another thread took or evicted a bucket): look again. */
    }
}

void ratelimit_count(struct ratelimit *rl, int is_address, unsigned role)
{
    if (role < 4)
        atomic_fetch_add_explicit(&rl->refused[is_address != 0][role], 1, memory_order_relaxed);
}

uint64_t ratelimit_refused_total(struct ratelimit *rl, int is_address, unsigned role)
{
    return role < 4
               ? atomic_load_explicit(&rl->refused[is_address != 0][role], memory_order_relaxed)
               : 0;
}

uint64_t ratelimit_retry_after_s(uint64_t wait_ns)
{
    uint64_t s = (wait_ns + NS_PER_S - 1) / NS_PER_S;

    return s > 0 ? s : 1;
}

const char *ratelimit_class_name(enum ratelimit_class c)
{
    switch (c) {
    case RATELIMIT_MINT:
        return "mint";
    case RATELIMIT_GENERATOR:
        return "generator";
    case RATELIMIT_ADMIN:
        return "admin";
    case RATELIMIT_ADDRESS:
        return "address";
    case RATELIMIT_BATCH:
        return "batch";
    case RATELIMIT_COLLISION:
        return "collision";
    case RATELIMIT_GRANT:
        return "grant";
    case RATELIMIT_RENEW:
        return "renew";
    default:
        return "none";
    }
}
