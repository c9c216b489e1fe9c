/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The "timed" store backend (see timed_store.h): a wrapper in the manner of
 * tests/support/fault_store.c that times lease takes, renewals, releases and
 * range reservations into a small ring the generator drains once a second.
 * Every other member is passed on untimed. It never fails a call itself.
 */
#include "timed_store.h"

#include "internal.h"
#include "store.h"

#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#define TIMED_RING 4096 /* calls kept between drains; a second holds a few dozen */

struct timed_store {
    struct store base; /* must be first */
    struct store *inner;
};

static pthread_mutex_t ring_mu = PTHREAD_MUTEX_INITIALIZER;
static struct timed_call ring[TIMED_RING];
static size_t ring_head;      /* index of the oldest record */
static size_t ring_len;       /* records held */
static uint64_t ring_dropped; /* records lost to a full ring */

const char *timed_op_name(enum timed_op op)
{
    static const char *const names[TIMED_OP__COUNT] = {"take", "renew", "release", "reserve"};

    return (unsigned)op < TIMED_OP__COUNT ? names[op] : "unknown";
}

static int64_t wall_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static uint64_t mono_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static void record(enum timed_op op, int rc, int64_t start_ms, uint64_t start_us)
{
    uint64_t us = mono_us() - start_us;
    struct timed_call c = {.op = op,
                           .rc = rc,
                           .start_ms = start_ms,
                           .latency_us = us > UINT32_MAX ? UINT32_MAX : (uint32_t)us};

    pthread_mutex_lock(&ring_mu);
    if (ring_len == TIMED_RING) {
        ring_dropped++;
    } else {
        ring[(ring_head + ring_len) % TIMED_RING] = c;
        ring_len++;
    }
    pthread_mutex_unlock(&ring_mu);
}

size_t timed_store_drain(struct timed_call *out, size_t max)
{
    size_t n = 0;

    pthread_mutex_lock(&ring_mu);
    while (n < max && ring_len > 0) {
        out[n++] = ring[ring_head];
        ring_head = (ring_head + 1) % TIMED_RING;
        ring_len--;
    }
    pthread_mutex_unlock(&ring_mu);
    return n;
}

uint64_t timed_store_dropped(void)
{
    uint64_t n;

    pthread_mutex_lock(&ring_mu);
    n = ring_dropped;
    pthread_mutex_unlock(&ring_mu);
    return n;
}

static struct store *inner(struct store *st)
{
    return ((struct timed_store *)st)->inner;
}

static const struct store_ops timed_ops;

static int timed_open(const char *location, const char *token, unsigned flags, struct store **out)
{
    struct timed_store *t = calloc(1, sizeof(*t));
    int rc;

    if (t == NULL)
        return idmint__fail(IDMINT_ENOMEM, "timed store: out of memory");
    rc = idmint__store_open_flags(location, token, flags, &t->inner);
    if (rc != 0) {
        free(t);
        return rc;
    }
    t->base.ops = &timed_ops;
    *out = &t->base;
    return 0;
}

static void timed_close(struct store *st)
{
    if (st == NULL)
        return;
    idmint__store_close(inner(st));
    free(st);
}

/* ==== timed members ==== */

static int timed_lease_take(struct store *st, const char *ns, uint64_t worker_count,
                            uint64_t now_unit, uint64_t until_unit, struct idmint__lease *lease,
                            const char *actor, int64_t now_ms)
{
    int64_t start_ms = wall_ms();
    uint64_t start_us = mono_us();
    int rc = idmint__store_lease_take(inner(st), ns, worker_count, now_unit, until_unit, lease,
                                      actor, now_ms);

    record(TIMED_OP_TAKE, rc, start_ms, start_us);
    return rc;
}

static int timed_lease_renew(struct store *st, const char *ns, struct idmint__lease *lease,
                             uint64_t until_unit, int64_t now_ms)
{
    int64_t start_ms = wall_ms();
    uint64_t start_us = mono_us();
    int rc = idmint__store_lease_renew(inner(st), ns, lease, until_unit, now_ms);

    record(TIMED_OP_RENEW, rc, start_ms, start_us);
    return rc;
}

static int timed_lease_release(struct store *st, const char *ns, struct idmint__lease *lease,
                               uint64_t final_unit, const char *actor, int64_t now_ms)
{
    int64_t start_ms = wall_ms();
    uint64_t start_us = mono_us();
    int rc = idmint__store_lease_release(inner(st), ns, lease, final_unit, actor, now_ms);

    record(TIMED_OP_RELEASE, rc, start_ms, start_us);
    return rc;
}

static int timed_range_reserve(struct store *st, const char *ns, const char *incarnation,
                               const char *request_id, uint64_t count, int64_t now_ms,
                               struct idmint__range *out)
{
    int64_t start_ms = wall_ms();
    uint64_t start_us = mono_us();
    int rc =
        idmint__store_range_reserve(inner(st), ns, incarnation, request_id, count, now_ms, out);

    record(TIMED_OP_RESERVE, rc, start_ms, start_us);
    return rc;
}

/* ==== passed on untimed ==== */

static int timed_ns_create(struct store *st, const idmint_ns_info *ns, const char *actor,
                           int64_t now_ms)
{
    return idmint__store_ns_create(inner(st), ns, actor, now_ms);
}

static int timed_ns_get(struct store *st, const char *name, idmint_ns_info *out)
{
    return idmint__store_ns_get(inner(st), name, out);
}

static int timed_ns_list(struct store *st, idmint_ns_info **out, size_t *n)
{
    return idmint__store_ns_list(inner(st), out, n);
}

static int timed_ns_set_disabled(struct store *st, const char *name, int disabled,
                                 const char *actor, int64_t now_ms)
{
    return idmint__store_ns_set_disabled(inner(st), name, disabled, actor, now_ms);
}

static int timed_lease_list(struct store *st, const char *ns, idmint_worker_info **out, size_t *n)
{
    return idmint__store_lease_list(inner(st), ns, out, n);
}

static int timed_lease_force_release(struct store *st, const char *ns, uint32_t region,
                                     uint32_t worker_id, uint64_t max_until_unit, const char *actor,
                                     int64_t now_ms)
{
    return idmint__store_lease_force_release(inner(st), ns, region, worker_id, max_until_unit,
                                             actor, now_ms);
}

static int timed_audit_list(struct store *st, int64_t after_seq, size_t limit,
                            idmint_audit_entry **out, size_t *n)
{
    return idmint__store_audit_list(inner(st), after_seq, limit, out, n);
}

static int timed_range_forget(struct store *st, const char *ns, const char *incarnation,
                              const char *before_request_id, uint64_t *forgotten)
{
    return idmint__store_range_forget(inner(st), ns, incarnation, before_request_id, forgotten);
}

static int timed_backup(struct store *st, const char *dest, const char *actor, int64_t now_ms)
{
    return idmint__store_backup(inner(st), dest, actor, now_ms);
}

static int timed_fence(struct store *st, const struct idmint__fence_step *steps, size_t n,
                       const char *history_id, const char *actor, int64_t now_ms)
{
    return idmint__store_fence(inner(st), steps, n, history_id, actor, now_ms);
}

static int timed_grant_find(struct store *st, const char *ns, const struct idmint__grant_query *q,
                            idmint_grant_info **out, size_t *n)
{
    return idmint__store_grant_find(inner(st), ns, q, out, n);
}

static int timed_prune(struct store *st, int what, int64_t before_ms, size_t limit,
                       uint64_t *pruned)
{
    return idmint__store_prune(inner(st), what, before_ms, limit, pruned);
}

static int timed_batch_get(struct store *st, const char *owner, const char *key,
                           struct idmint__batch *out)
{
    return idmint__store_batch_get(inner(st), owner, key, out);
}

static int timed_batch_claim(struct store *st, const struct idmint__batch *b,
                             struct idmint__batch *saved, int *inserted)
{
    return idmint__store_batch_claim(inner(st), b, saved, inserted);
}

static int timed_collision_add(struct store *st, const idmint_collision *c, const char *actor,
                               int64_t now_ms, int64_t keep_ms, idmint_collision *saved,
                               int *inserted)
{
    return idmint__store_collision_add(inner(st), c, actor, now_ms, keep_ms, saved, inserted);
}

static int timed_collision_list(struct store *st, int64_t after_seq, size_t limit,
                                idmint_collision **out, size_t *n)
{
    return idmint__store_collision_list(inner(st), after_seq, limit, out, n);
}

/* Version 5, every member set: what the inner store lacks, its wrapper refuses as it would. */
static const struct store_ops timed_ops = {
    .version = STORE_OPS_V5,
    .scheme = "timed",
    .caps = 0,
    .open = timed_open,
    .close = timed_close,
    .ns_create = timed_ns_create,
    .ns_get = timed_ns_get,
    .ns_list = timed_ns_list,
    .ns_set_disabled = timed_ns_set_disabled,
    .lease_take = timed_lease_take,
    .lease_renew = timed_lease_renew,
    .lease_release = timed_lease_release,
    .lease_list = timed_lease_list,
    .lease_force_release = timed_lease_force_release,
    .range_reserve = timed_range_reserve,
    .audit_list = timed_audit_list,
    .range_forget = timed_range_forget,
    .backup = timed_backup,
    .fence = timed_fence,
    .grant_find = timed_grant_find,
    .prune = timed_prune,
    .batch_get = timed_batch_get,
    .batch_claim = timed_batch_claim,
    .collision_add = timed_collision_add,
    .collision_list = timed_collision_list,
};

int timed_store_register(void)
{
    /* store.c treats registering the same table again as a no-op. */
    return idmint__store_register(&timed_ops);
}
