/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The "fault" store backend (see fault_store.h): a wrapper that fails, delays
 * or loses the reply of chosen calls, so tests can drive outages and retries
 * through the same seam the library uses (SQLite's test_vfs.c idea).
 */
#include "fault_store.h"

#include "internal.h"
#include "store.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FAULT_LOSE 1 /* fault_enter(): perform the call, then report it lost */

struct fault_store {
    struct store base; /* must be first */
    struct store *inner;
    char *url; /* the inner store's URL, for its location */
};

static _Atomic int fault_down;
static _Atomic unsigned long fault_calls;
static _Atomic unsigned long fault_fail_at; /* call number that fails; 0: none */
static _Atomic unsigned long fault_lose_at; /* call number whose reply is lost; 0: none */
static _Atomic unsigned fault_delay_ms;
static _Atomic int fault_share_worker; /* a planted defect: takes steal worker 0 */
static int (*fault_decide)(void *ctx, const char *what);
static void *fault_decide_ctx;

void ts_fault_reset(void)
{
    atomic_store(&fault_down, 0);
    atomic_store(&fault_fail_at, 0ul);
    atomic_store(&fault_lose_at, 0ul);
    atomic_store(&fault_delay_ms, 0u);
    atomic_store(&fault_share_worker, 0);
    atomic_store(&fault_calls, 0ul);
    fault_decide = NULL;
    fault_decide_ctx = NULL;
}

void ts_fault_set_decider(int (*decide)(void *ctx, const char *what), void *ctx)
{
    fault_decide = decide;
    fault_decide_ctx = ctx;
}

void ts_fault_set_down(int is_down)
{
    atomic_store(&fault_down, is_down != 0);
}

void ts_fault_fail_nth(unsigned n)
{
    atomic_store(&fault_fail_at, n == 0 ? 0ul : atomic_load(&fault_calls) + n);
}

void ts_fault_lose_reply_nth(unsigned n)
{
    atomic_store(&fault_lose_at, n == 0 ? 0ul : atomic_load(&fault_calls) + n);
}

void ts_fault_set_delay_ms(unsigned ms)
{
    atomic_store(&fault_delay_ms, ms);
}

unsigned long ts_fault_calls(void)
{
    return atomic_load(&fault_calls);
}

/* Returns 0 to pass the call on, FAULT_LOSE, or IDMINT_EUNAVAILABLE. */
static int fault_enter(const char *what)
{
    unsigned long call = atomic_fetch_add(&fault_calls, 1ul) + 1;
    unsigned long at;
    unsigned delay_ms = atomic_load(&fault_delay_ms);

    if (delay_ms != 0) {
        struct timespec ts = {.tv_sec = (time_t)(delay_ms / 1000u),
                              .tv_nsec = (long)(delay_ms % 1000u) * 1000000L};

        while (nanosleep(&ts, &ts) != 0)
            ;
    }
    if (atomic_load(&fault_down))
        return idmint__fail(IDMINT_EUNAVAILABLE, "fault store: down (%s)", what);
    at = call;
    if (atomic_compare_exchange_strong(&fault_fail_at, &at, 0ul))
        return idmint__fail(IDMINT_EUNAVAILABLE, "fault store: call %lu (%s) failed", call, what);
    at = call;
    if (atomic_compare_exchange_strong(&fault_lose_at, &at, 0ul))
        return FAULT_LOSE;
    if (fault_decide != NULL) {
        switch (fault_decide(fault_decide_ctx, what)) {
        case TS_FAULT_FAIL:
            return idmint__fail(IDMINT_EUNAVAILABLE, "fault store: %s failed (decided)", what);
        case TS_FAULT_LOSE:
            return FAULT_LOSE;
        default:
            break;
        }
    }
    return 0;
}

static int fault_lost(const char *what, int rc)
{
    return idmint__fail(IDMINT_EUNAVAILABLE, "fault store: reply of %s lost (it returned %d)", what,
                        rc);
}

static struct store *inner(struct store *st)
{
    return ((struct fault_store *)st)->inner;
}

static const struct store_ops fault_ops;

static int fault_open(const char *location, const char *token, unsigned flags, struct store **out)
{
    struct fault_store *f;
    int rc;

    if (atomic_load(&fault_down))
        return idmint__fail(IDMINT_EUNAVAILABLE, "fault store: down (open)");
    f = calloc(1, sizeof(*f));
    if (f == NULL)
        return idmint__fail(IDMINT_ENOMEM, "fault store: out of memory");
    f->url = strdup(location);
    rc = f->url == NULL ? idmint__fail(IDMINT_ENOMEM, "fault store: out of memory")
                        : idmint__store_open_flags(location, token, flags, &f->inner);
    if (rc != 0) {
        free(f->url);
        free(f);
        return rc;
    }
    f->base.ops = &fault_ops;
    *out = &f->base;
    return 0;
}

static void fault_close(struct store *st)
{
    if (st == NULL)
        return;
    idmint__store_close(inner(st));
    free(((struct fault_store *)st)->url);
    free(st);
}

static int fault_ns_create(struct store *st, const idmint_ns_info *ns, const char *actor,
                           int64_t now_ms)
{
    int f = fault_enter("ns_create"), rc;

    if (f < 0)
        return f;
    rc = idmint__store_ns_create(inner(st), ns, actor, now_ms);
    return f == FAULT_LOSE ? fault_lost("ns_create", rc) : rc;
}

static int fault_ns_get(struct store *st, const char *name, idmint_ns_info *out)
{
    idmint_ns_info tmp;
    int f = fault_enter("ns_get"), rc;

    if (f < 0)
        return f;
    rc = idmint__store_ns_get(inner(st), name, &tmp);
    if (f == FAULT_LOSE)
        return fault_lost("ns_get", rc);
    if (rc == 0)
        *out = tmp;
    return rc;
}

static int fault_ns_list(struct store *st, idmint_ns_info **out, size_t *n)
{
    idmint_ns_info *list = NULL;
    size_t len = 0;
    int f = fault_enter("ns_list"), rc;

    if (f < 0)
        return f;
    rc = idmint__store_ns_list(inner(st), &list, &len);
    if (f == FAULT_LOSE) {
        free(list);
        return fault_lost("ns_list", rc);
    }
    if (rc == 0) {
        *out = list;
        *n = len;
    }
    return rc;
}

static int fault_ns_set_disabled(struct store *st, const char *name, int disabled,
                                 const char *actor, int64_t now_ms)
{
    int f = fault_enter("ns_set_disabled"), rc;

    if (f < 0)
        return f;
    rc = idmint__store_ns_set_disabled(inner(st), name, disabled, actor, now_ms);
    return f == FAULT_LOSE ? fault_lost("ns_set_disabled", rc) : rc;
}

static int fault_lease_take(struct store *st, const char *ns, uint64_t worker_count,
                            uint64_t now_unit, uint64_t until_unit, struct idmint__lease *lease,
                            const char *actor, int64_t now_ms)
{
    struct idmint__lease tmp = *lease;
    int f = fault_enter("lease_take"), rc;

    if (f < 0)
        return f;
    /* The defect: worker 0 is forced free with its E wiped, so this take gets
     * it with no fence while its holder goes on minting until its renewal. */
    if (atomic_load(&fault_share_worker))
        (void)idmint__store_lease_force_release(inner(st), ns, lease->region, 0, 0, actor, now_ms);
    rc = idmint__store_lease_take(inner(st), ns, worker_count, now_unit, until_unit, &tmp, actor,
                                  now_ms);
    if (f == FAULT_LOSE)
        return fault_lost("lease_take", rc);
    if (rc == 0)
        *lease = tmp;
    return rc;
}

static int fault_lease_renew(struct store *st, const char *ns, struct idmint__lease *lease,
                             uint64_t until_unit, int64_t now_ms)
{
    struct idmint__lease tmp = *lease;
    int f = fault_enter("lease_renew"), rc;

    if (f < 0)
        return f;
    rc = idmint__store_lease_renew(inner(st), ns, &tmp, until_unit, now_ms);
    if (f == FAULT_LOSE)
        return fault_lost("lease_renew", rc);
    if (rc == 0)
        *lease = tmp;
    return rc;
}

static int fault_lease_release(struct store *st, const char *ns, struct idmint__lease *lease,
                               uint64_t final_unit, const char *actor, int64_t now_ms)
{
    struct idmint__lease tmp = *lease;
    int f = fault_enter("lease_release"), rc;

    if (f < 0)
        return f;
    rc = idmint__store_lease_release(inner(st), ns, &tmp, final_unit, actor, now_ms);
    if (f == FAULT_LOSE)
        return fault_lost("lease_release", rc);
    if (rc == 0)
        *lease = tmp;
    return rc;
}

static int fault_lease_list(struct store *st, const char *ns, idmint_worker_info **out, size_t *n)
{
    idmint_worker_info *list = NULL;
    size_t len = 0;
    int f = fault_enter("lease_list"), rc;

    if (f < 0)
        return f;
    rc = idmint__store_lease_list(inner(st), ns, &list, &len);
    if (f == FAULT_LOSE) {
        free(list);
        return fault_lost("lease_list", rc);
    }
    if (rc == 0) {
        *out = list;
        *n = len;
    }
    return rc;
}

static int fault_lease_force_release(struct store *st, const char *ns, uint32_t region,
                                     uint32_t worker_id, uint64_t max_until_unit, const char *actor,
                                     int64_t now_ms)
{
    int f = fault_enter("lease_force_release"), rc;

    if (f < 0)
        return f;
    rc = idmint__store_lease_force_release(inner(st), ns, region, worker_id, max_until_unit, actor,
                                           now_ms);
    return f == FAULT_LOSE ? fault_lost("lease_force_release", rc) : rc;
}

static int fault_range_reserve(struct store *st, const char *ns, const char *incarnation,
                               const char *request_id, uint64_t count, int64_t now_ms,
                               struct idmint__range *out)
{
    struct idmint__range tmp = *out; /* its origin is an input */
    int f = fault_enter("range_reserve"), rc;

    if (f < 0)
        return f;
    rc = idmint__store_range_reserve(inner(st), ns, incarnation, request_id, count, now_ms, &tmp);
    if (f == FAULT_LOSE)
        return fault_lost("range_reserve", rc);
    if (rc == 0)
        *out = tmp;
    return rc;
}

static int fault_audit_list(struct store *st, int64_t after_seq, size_t limit,
                            idmint_audit_entry **out, size_t *n)
{
    idmint_audit_entry *list = NULL;
    size_t len = 0;
    int f = fault_enter("audit_list"), rc;

    if (f < 0)
        return f;
    rc = idmint__store_audit_list(inner(st), after_seq, limit, &list, &len);
    if (f == FAULT_LOSE) {
        free(list);
        return fault_lost("audit_list", rc);
    }
    if (rc == 0) {
        *out = list;
        *n = len;
    }
    return rc;
}

static int fault_range_forget(struct store *st, const char *ns, const char *incarnation,
                              const char *before_request_id, uint64_t *forgotten)
{
    uint64_t n = 0;
    int f = fault_enter("range_forget"), rc;

    if (f < 0)
        return f;
    rc = idmint__store_range_forget(inner(st), ns, incarnation, before_request_id, &n);
    if (f == FAULT_LOSE)
        return fault_lost("range_forget", rc);
    if (rc == 0 && forgotten != NULL)
        *forgotten = n;
    return rc;
}

/* A call whose outputs are plain values: failed before the store sees it, or its reply lost. */
#define FAULT_FORWARD(what, call)                                                                  \
    do {                                                                                           \
        int f_ = fault_enter(what), rc_;                                                           \
                                                                                                   \
        if (f_ < 0)                                                                                \
            return f_;                                                                             \
        rc_ = (call);                                                                              \
        return f_ == FAULT_LOSE ? fault_lost(what, rc_) : rc_;                                     \
    } while (0)

static int fault_backup(struct store *st, const char *dest, const char *actor, int64_t now_ms)
{
    FAULT_FORWARD("backup", idmint__store_backup(inner(st), dest, actor, now_ms));
}

static int fault_fence(struct store *st, const struct idmint__fence_step *steps, size_t n,
                       const char *history_id, const char *actor, int64_t now_ms)
{
    FAULT_FORWARD("fence", idmint__store_fence(inner(st), steps, n, history_id, actor, now_ms));
}

static int fault_grant_find(struct store *st, const char *ns, const struct idmint__grant_query *q,
                            idmint_grant_info **out, size_t *n)
{
    idmint_grant_info *list = NULL;
    size_t len = 0;
    int f = fault_enter("grant_find"), rc;

    if (f < 0)
        return f;
    rc = idmint__store_grant_find(inner(st), ns, q, &list, &len);
    if (f == FAULT_LOSE) {
        free(list);
        return fault_lost("grant_find", rc);
    }
    if (rc == 0) {
        *out = list;
        *n = len;
    }
    return rc;
}

static int fault_prune(struct store *st, int what, int64_t before_ms, size_t limit,
                       uint64_t *pruned)
{
    FAULT_FORWARD("prune", idmint__store_prune(inner(st), what, before_ms, limit, pruned));
}

static int fault_batch_get(struct store *st, const char *owner, const char *key,
                           struct idmint__batch *out)
{
    FAULT_FORWARD("batch_get", idmint__store_batch_get(inner(st), owner, key, out));
}

static int fault_batch_claim(struct store *st, const struct idmint__batch *b,
                             struct idmint__batch *saved, int *inserted)
{
    FAULT_FORWARD("batch_claim", idmint__store_batch_claim(inner(st), b, saved, inserted));
}

static int fault_collision_add(struct store *st, const idmint_collision *c, const char *actor,
                               int64_t now_ms, int64_t keep_ms, idmint_collision *saved,
                               int *inserted)
{
    FAULT_FORWARD("collision_add", idmint__store_collision_add(inner(st), c, actor, now_ms, keep_ms,
                                                               saved, inserted));
}

static int fault_collision_list(struct store *st, int64_t after_seq, size_t limit,
                                idmint_collision **out, size_t *n)
{
    idmint_collision *list = NULL;
    size_t len = 0;
    int f = fault_enter("collision_list"), rc;

    if (f < 0)
        return f;
    rc = idmint__store_collision_list(inner(st), after_seq, limit, &list, &len);
    if (f == FAULT_LOSE) {
        free(list);
        return fault_lost("collision_list", rc);
    }
    if (rc == 0) {
        *out = list;
        *n = len;
    }
    return rc;
}

static int fault_history_check(struct store *st, uint64_t seq, struct idmint__history_state *out)
{
    FAULT_FORWARD("history_check", idmint__store_history_check(inner(st), seq, out));
}

/* Where the inner store is: the same place, so this host's witness binds it as it would. */
static int fault_location(const struct store *st, char *buf, size_t size)
{
    const struct fault_store *f = (const struct fault_store *)st;

    return idmint__store_location(f->inner, f->url, buf, size);
}

static const struct store_ops fault_ops = {
    .version = STORE_OPS_V7,
    .scheme = "fault",
    .caps = 0,
    .open = fault_open,
    .close = fault_close,
    .ns_create = fault_ns_create,
    .ns_get = fault_ns_get,
    .ns_list = fault_ns_list,
    .ns_set_disabled = fault_ns_set_disabled,
    .lease_take = fault_lease_take,
    .lease_renew = fault_lease_renew,
    .lease_release = fault_lease_release,
    .lease_list = fault_lease_list,
    .lease_force_release = fault_lease_force_release,
    .range_reserve = fault_range_reserve,
    .audit_list = fault_audit_list,
    .range_forget = fault_range_forget,
    .backup = fault_backup,
    .fence = fault_fence,
    .grant_find = fault_grant_find,
    .prune = fault_prune,
    .batch_get = fault_batch_get,
    .batch_claim = fault_batch_claim,
    .collision_add = fault_collision_add,
    .collision_list = fault_collision_list,
    .history_check = fault_history_check,
    .location = fault_location,
};

int ts_fault_register(void)
{
    /* store.c treats registering the same table again as a no-op. */
    return idmint__store_register(&fault_ops);
}

void ts_fault_set_share_worker(int is_on)
{
    atomic_store(&fault_share_worker, is_on != 0);
}
