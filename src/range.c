/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The client side of ranges (docs/design.md "Ranges"). A handle holds the current range
 * and, double-buffered, the next one, which a background thread reserves
 * before the current one runs out. Threads take chunks of the shared range
 * under a mutex and hand out values from a thread-local cache, so the common
 * call touches no shared cache line: values are increasing within a thread,
 * and unique across all of them.
 */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TLS_SLOTS         IDMINT__RANGE_TLS_SLOTS
#define CHUNK_MAX         8192u
#define RETRY_BACKOFF_MIN 50u
#define RETRY_BACKOFF_MAX 1000u
#define FORGET_EVERY      64u /* reservations between deletions of our older records */
#define RATE_MIN_MS       5u  /* a range current this long has a rate to judge it by */
#define ANSWERS_PER_BLOCK 4u  /* a block lasts at least this many of the last answer's time */

struct range_supply {
    struct idmint_authority *a; /* owned; used by the opener, then only the refill thread */
    char ns[64];
    char incarnation[33];
    /* Never reused, so a stale thread cache can't match; a new one empties
     * every thread's cache at once (after a restore). */
    _Atomic uint64_t cache_id;
    uint64_t block;         /* values asked for by the latest reservation (guarded by mu) */
    uint64_t floor_block;   /* the namespace's block (or the caller's fixed one) */
    uint64_t max_block;     /* the namespace's max_block */
    uint32_t target_ms;     /* a block should last this long at the observed rate; 0: fixed */
    uint32_t refill_pct;    /* refill when this % of the current range is left */
    uint64_t chunk;         /* values a thread takes at a time */
    uint32_t deadline_ms;   /* how long a caller waits for a range */
    pthread_mutex_t mu;     /* guards everything below */
    pthread_cond_t cv_work; /* wakes the refill thread */
    pthread_cond_t cv_done; /* wakes callers waiting for a range */
    uint64_t cur_next;      /* current range [cur_next, cur_end) */
    uint64_t cur_end;
    uint64_t nxt_start; /* prefetched range, valid when has_next */
    uint64_t nxt_end;
    int has_next;
    int is_wanted;        /* a caller is waiting: try even after a refusal */
    int last_err;         /* outcome of the last reservation; IDMINT_ERESTORED is final */
    char last_why[512];   /* its message: set on the refill thread, shown on the caller's */
    uint64_t attempts;    /* reservation attempts completed */
    uint64_t request_seq; /* request id of the next reservation; refill thread only */
    uint64_t cur_size;    /* values of the current range when it was installed */
    uint64_t cur_first;   /* its first value */
    uint64_t cur_at_ms;   /* when it became current (monotonic) */
    uint64_t answer_ms;   /* how long the last reservation took to be answered */
    /* A retry of a request asks for what the request first asked for: the
     * store answers a repeat with another count as a conflict. */
    uint64_t req_count, req_count_seq;
    uint64_t reserved;      /* values of every range installed */
    uint64_t rate;          /* values handed out per second, as last sampled; 0: unknown */
    int64_t rate_at_ms;     /* when the rate was last sampled (0: never) */
    uint64_t rate_consumed; /* values handed out by then */
    uint64_t reservations;  /* ranges installed */
    uint32_t backoff;       /* the wait after the next failed refill */
    uint64_t check_at;      /* monotonic ms of the next history check */
    int is_stopping;
    struct idmint__history history; /* the newest history proven ours; opener, then refill thread */
    uint32_t check_ms;              /* the store's history is checked this often */
    int has_thread;
    pthread_t thread;
};

_Thread_local __attribute__((
    tls_model("initial-exec"))) struct range_tls idmint__range_tls[IDMINT__RANGE_TLS_SLOTS];
static _Atomic uint64_t next_cache_id = 1;

static int is_transient(int rc)
{
    return rc == IDMINT_EUNAVAILABLE || rc == IDMINT_ESTORE || rc == IDMINT_ETIMEDOUT;
}

/*
 * One reservation with a fixed request id: a lost reply is retried with the
 * same id, so the authority hands back the range it already saved instead of
 * a second one. Called without rs->mu.
 */
static int reserve(struct range_supply *rs, uint64_t seq, uint64_t count, struct idmint__range *out)
{
    char request_id[IDMINT__REQUEST_ID_LEN];

    int rc;

    idmint__range_request_id(seq, request_id);
    idmint__store_gate_enter();
    rc = idmint__authority_range_reserve(rs->a, rs->ns, rs->incarnation, request_id, count, out);
    idmint__store_gate_leave();
    return rc;
}

void idmint__range_request_id(uint64_t seq, char out[IDMINT__REQUEST_ID_LEN])
{
    snprintf(out, IDMINT__REQUEST_ID_LEN, "%016llx", (unsigned long long)seq);
}

/*
 * Delete our request records before request @p seq: we repeat only the
 * request in flight, so the older ones only take space (a store keeps one
 * per reservation). Best effort: a failure, or a store without the
 * operation, leaves records, never a repeat. Called without rs->mu.
 */
static void forget_before(struct range_supply *rs, uint64_t seq)
{
    char before[IDMINT__REQUEST_ID_LEN];

    idmint__range_request_id(seq, before);
    idmint__store_gate_enter();
    (void)idmint__authority_range_forget(rs->a, rs->ns, rs->incarnation, before, NULL);
    idmint__store_gate_leave();
}

/*
 * Refill when refill_pct of the current range is left, or sooner when the
 * authority is slow: once what is left, at the rate it has gone out since
 * it became current, lasts less than twice the last reservation took. A
 * start burst (hundreds of processes on one authority) answers in seconds
 * and a first block can last half of one; at 50 % left its refill was
 * asked for too late.
 */
static int needs_refill_locked(const struct range_supply *rs)
{
    uint64_t left = rs->cur_end - rs->cur_next, used = rs->cur_next - rs->cur_first, elapsed_ms;

    if (rs->has_next)
        return 0;
    if (left <= rs->cur_size * rs->refill_pct / 100)
        return 1;
    if (rs->answer_ms == 0 || used == 0)
        return 0;
    elapsed_ms = idmint__deadline_now_ms() - rs->cur_at_ms;
    if (elapsed_ms < RATE_MIN_MS || left > UINT64_MAX / elapsed_ms)
        return 0;
    return left * elapsed_ms / used < 2 * rs->answer_ms;
}

static uint64_t left_locked(const struct range_supply *rs)
{
    return rs->cur_end - rs->cur_next + (rs->has_next ? rs->nxt_end - rs->nxt_start : 0);
}

/*
 * The count of the next reservation (docs/design.md "Ranges"): enough for target_ms
 * (or ANSWERS_PER_BLOCK times the last reservation's answer, when longer)
 * at the rate values went out since the last reservation, between the
 * namespace's block and max_block. That rate is an average over the whole
 * interval, so one quiet moment does not shrink the block, while a burst
 * gets big blocks at its next refill and a caller that slows down gets the
 * namespace's block back at the one after.
 */
static uint64_t next_count_locked(struct range_supply *rs)
{
    uint64_t consumed = rs->reserved - left_locked(rs), want, block_ms;
    int64_t now_ms = idmint__authority_now_ms(rs->a);

    if (rs->target_ms == 0)
        return rs->floor_block;
    if (rs->rate_at_ms != 0 && now_ms > rs->rate_at_ms) {
        uint64_t sample =
            (consumed - rs->rate_consumed) * 1000u / (uint64_t)(now_ms - rs->rate_at_ms);

        rs->rate = sample;
    }
    if (rs->rate_at_ms == 0 || now_ms > rs->rate_at_ms) {
        rs->rate_at_ms = now_ms;
        rs->rate_consumed = consumed;
    }
    /* A slow authority gets longer blocks: one that lasts only as long as
     * its answer takes is asked for again the moment it becomes current
     * (needs_refill_locked), so every refill would wait on the authority
     * with little left, and the load on an authority that is slow because
     * it is loaded would grow. ANSWERS_PER_BLOCK answers long, the next
     * refill is asked for halfway through, and the load falls instead. */
    block_ms = rs->answer_ms > UINT32_MAX / ANSWERS_PER_BLOCK ? UINT32_MAX
                                                              : rs->answer_ms * ANSWERS_PER_BLOCK;
    if (block_ms < rs->target_ms)
        block_ms = rs->target_ms;
    want = rs->rate > UINT64_MAX / block_ms ? UINT64_MAX : rs->rate * block_ms / 1000u;
    if (want < rs->floor_block)
        want = rs->floor_block;
    return want > rs->max_block ? rs->max_block : want;
}

static void make_current_locked(struct range_supply *rs, uint64_t start, uint64_t end)
{
    rs->cur_next = start;
    rs->cur_end = end;
    rs->cur_size = end - start;
    rs->cur_first = start;
    rs->cur_at_ms = idmint__deadline_now_ms();
}

static void install_locked(struct range_supply *rs, const struct idmint__range *r)
{
#ifdef IDMINT_MUTANT_RANGE_REINSTALL /* a planted wrong rule the simulator must catch (tests/sim)  \
                                      */
    struct idmint__range again = *r;

    if (rs->cur_size != 0) { /* the current range once more, from its start */
        again.start = rs->cur_first;
        again.end = rs->cur_first + rs->cur_size;
    }
    r = &again;
#endif
    rs->reserved += r->end - r->start;
    rs->reservations++;
    if (rs->cur_next >= rs->cur_end) {
        make_current_locked(rs, r->start, r->end);
    } else {
        rs->nxt_start = r->start;
        rs->nxt_end = r->end;
        rs->has_next = 1;
    }
}

/*
 * The store went back to before ranges we hold: it may hand them out again,
 * so nothing of them is issued from now on, thread caches included.
 */
static void stop_restored_locked(struct range_supply *rs)
{
    snprintf(rs->last_why, sizeof(rs->last_why), "%s", idmint_errmsg());
    rs->last_err = IDMINT_ERESTORED; /* final: the refill thread ends */
    rs->cur_next = rs->cur_end;
    rs->has_next = 0;
    atomic_store(&rs->cache_id, atomic_fetch_add(&next_cache_id, 1));
    pthread_cond_broadcast(&rs->cv_done);
}

/*
 * One pass of the refill loop, rs->mu held (released around the store):
 * refill before the current range runs out; and every check_ms, whether or
 * not a refill was needed, check that the store still holds the history our
 * ranges belong to (idmint__authority_history_check): a store put back in
 * time stops this supply within check_ms, however long its ranges last.
 * Returns how many ms to wait (on cv_work) before the next pass (0: at
 * once), or -1 when the supply has stopped for good.
 */
static int64_t refill_step_locked(struct range_supply *rs)
{
    struct idmint__range r;
    uint64_t count, asked_ms, now = idmint__deadline_now_ms();
    int rc;

    if (now >= rs->check_at) {
        pthread_mutex_unlock(&rs->mu);
        idmint__store_gate_enter();
        rc = idmint__authority_history_check(rs->a, rs->ns, &rs->history, 1);
        idmint__store_gate_leave();
        pthread_mutex_lock(&rs->mu);
        rs->check_at = idmint__deadline_now_ms() + rs->check_ms;
        if (rc == IDMINT_ERESTORED) {
            stop_restored_locked(rs);
            return -1;
        }
        return 0; /* an outage: the refills say so, and the next check tries again */
    }
    /* After a refusal (exhausted, disabled) only a waiting caller makes
     * us ask again; after an outage we keep trying with backoff. */
    if (!needs_refill_locked(rs) ||
        (rs->last_err != 0 && !is_transient(rs->last_err) && !rs->is_wanted))
        return (int64_t)(rs->check_at - now);
    rs->is_wanted = 0;
    if (rs->req_count_seq != rs->request_seq || rs->req_count == 0) {
        rs->req_count = next_count_locked(rs);
        rs->req_count_seq = rs->request_seq;
        rs->block = rs->req_count;
    }
    count = rs->req_count;
    pthread_mutex_unlock(&rs->mu);
    asked_ms = idmint__deadline_now_ms();
    rc = reserve(rs, rs->request_seq, count, &r);
    if (rc == 0) {
        idmint__store_gate_enter();
        rc = idmint__authority_history_adopt(rs->a, rs->ns, &rs->history, &r.history);
        idmint__store_gate_leave();
    }
    pthread_mutex_lock(&rs->mu);
    if (rc == 0)
        rs->answer_ms = idmint__deadline_now_ms() - asked_ms;
    if (rc == IDMINT_ERESTORED) {
        stop_restored_locked(rs);
        return -1;
    }
    rs->last_err = rc;
    if (rc != 0)
        snprintf(rs->last_why, sizeof(rs->last_why), "%s", idmint_errmsg());
    rs->attempts++;
    if (rc == 0) {
        rs->request_seq++;
        install_locked(rs, &r);
        rs->backoff = RETRY_BACKOFF_MIN;
    } else if (!is_transient(rc)) {
        rs->request_seq++;
    }
    pthread_cond_broadcast(&rs->cv_done);
    if (rc == 0 && rs->request_seq % FORGET_EVERY == 0) {
        uint64_t latest = rs->request_seq - 1;

        pthread_mutex_unlock(&rs->mu);
        forget_before(rs, latest);
        pthread_mutex_lock(&rs->mu);
    }
    if (rc != 0 && is_transient(rc)) {
        uint32_t wait = rs->backoff;

        rs->backoff = wait * 2 > RETRY_BACKOFF_MAX ? RETRY_BACKOFF_MAX : wait * 2;
        return wait;
    }
    return 0;
}

static void *refill_main(void *arg)
{
    struct range_supply *rs = arg;

    pthread_mutex_lock(&rs->mu);
    while (!rs->is_stopping) {
        int64_t wait = refill_step_locked(rs);

        if (wait < 0)
            break;
        if (wait > 0 && !rs->is_stopping) {
            struct timespec ts = idmint__monotonic_after_ms((uint64_t)wait);

            pthread_cond_timedwait(&rs->cv_work, &rs->mu, &ts);
        }
    }
    pthread_mutex_unlock(&rs->mu);
    return NULL;
}

int idmint__range_drive(struct range_supply *rs)
{
    int rc;

    pthread_mutex_lock(&rs->mu);
    if (!rs->is_stopping && rs->last_err != IDMINT_ERESTORED)
        (void)refill_step_locked(rs);
    rc = rs->last_err;
    pthread_mutex_unlock(&rs->mu);
    return rc;
}

/*
 * Take up to @p want values of what the shared ranges hold now into
 * [*start, *start+*got): 1 when some were taken, 0 when the reserve is dry,
 * or IDMINT_ERESTORED. rs->mu held; never waits.
 */
static int take_ready_locked(struct range_supply *rs, uint64_t want, uint64_t *start, uint64_t *got)
{
    for (;;) {
        if (rs->last_err == IDMINT_ERESTORED)
            return idmint__fail(IDMINT_ERESTORED, "%s", rs->last_why);
        if (rs->cur_next < rs->cur_end) {
            uint64_t left = rs->cur_end - rs->cur_next;
            uint64_t k = want < left ? want : left;

            *start = rs->cur_next;
            *got = k;
            rs->cur_next += k;
            return 1;
        }
        if (!rs->has_next)
            return 0;
        make_current_locked(rs, rs->nxt_start, rs->nxt_end);
        rs->has_next = 0;
    }
}

/*
 * Take up to @p want values from the shared ranges into [*start, *start+*got),
 * waiting for the refill thread within the deadline. rs->mu not held.
 */
static int take_shared(struct range_supply *rs, uint64_t want, uint64_t *start, uint64_t *got)
{
    struct timespec deadline = idmint__monotonic_after_ms(rs->deadline_ms);
    uint64_t seen_attempts;
    unsigned driven_tries = 0;
    int rc = 0;

    pthread_mutex_lock(&rs->mu);
    seen_attempts = rs->attempts;
    for (;;) {
        if ((rc = take_ready_locked(rs, want, start, got)) != 0) {
            rc = rc == 1 ? 0 : rc;
            break;
        }
        if (rs->attempts != seen_attempts && rs->last_err != 0 && !is_transient(rs->last_err)) {
            rc = idmint__fail(rs->last_err, "%s", rs->last_why);
            break;
        }
        rs->is_wanted = 1;
        if (idmint__is_driven()) {
            /* No refill thread: this caller runs one refill in its place,
             * and one attempt is all its deadline holds. */
            if (driven_tries++ == 0 && refill_step_locked(rs) >= 0)
                continue;
            rc = rs->last_err != 0 ? rs->last_err : IDMINT_ETIMEDOUT;
            idmint__fail(rc, "no range for '%s' (driven): %s", rs->ns,
                         rs->last_err != 0 ? rs->last_why : "the refill brought none");
            break;
        }
        pthread_cond_signal(&rs->cv_work);
        if (pthread_cond_timedwait(&rs->cv_done, &rs->mu, &deadline) == ETIMEDOUT &&
            rs->cur_next >= rs->cur_end && !rs->has_next) {
            rc = rs->last_err != 0 ? rs->last_err : IDMINT_ETIMEDOUT;
            if (rs->last_err != 0)
                idmint__fail(rc, "no range for '%s' within %u ms: %s", rs->ns, rs->deadline_ms,
                             rs->last_why);
            else
                idmint__fail(rc, "no range for '%s' within %u ms", rs->ns, rs->deadline_ms);
            break;
        }
    }
    if (needs_refill_locked(rs))
        pthread_cond_signal(&rs->cv_work);
    pthread_mutex_unlock(&rs->mu);
    return rc;
}

static struct range_tls *tls_slot(struct range_supply *rs)
{
    struct range_tls *hit = NULL;

    for (int i = 0; i < TLS_SLOTS; i++) {
        if (idmint__range_tls[i].owner ==
            atomic_load_explicit(&rs->cache_id, memory_order_relaxed)) {
            hit = &idmint__range_tls[i];
            break;
        }
    }
    if (hit == NULL)
        hit = &idmint__range_tls[TLS_SLOTS - 1]; /* evict the least recently moved */
    if (hit != &idmint__range_tls[0]) {
        struct range_tls tmp = *hit;

        memmove(&idmint__range_tls[1], &idmint__range_tls[0],
                (size_t)(hit - idmint__range_tls) * sizeof(tmp));
        idmint__range_tls[0] = tmp;
    }
    uint64_t key = atomic_load_explicit(&rs->cache_id, memory_order_relaxed);

    if (idmint__range_tls[0].owner != key) {
        /* Values left in an evicted cache are simply never issued: gaps are
         * allowed, repeats are not. */
        idmint__range_tls[0].owner = key;
        idmint__range_tls[0].next = idmint__range_tls[0].end = 0;
    }
    return &idmint__range_tls[0];
}

__attribute__((noinline)) int idmint__range_next(struct range_supply *rs, uint64_t *id)
{
    struct range_tls *t = &idmint__range_tls[0];
    uint64_t start, got;
    int rc;

    if (t->owner == atomic_load_explicit(&rs->cache_id, memory_order_relaxed) && t->next < t->end) {
        *id = t->next++;
        return 0;
    }
    t = tls_slot(rs);
    if (t->next < t->end) {
        *id = t->next++;
        return 0;
    }
    rc = take_shared(rs, rs->chunk, &start, &got);
    if (rc != 0)
        return rc;
    t->next = start + 1;
    t->end = start + got;
    *id = start;
    return 0;
}

static void fill(uint64_t *ids, uint64_t start, uint64_t count)
{
    for (uint64_t i = 0; i < count; i++)
        ids[i] = start + i;
}

/*
 * Up to @p n values of the thread's own chunk @p t into @p ids: first, so
 * IDs stay increasing within the thread. Returns how many.
 */
static size_t take_cached(struct range_tls *t, uint64_t *ids, size_t n)
{
    uint64_t k = t->end - t->next < n ? t->end - t->next : n;

    if (t->next >= t->end)
        return 0;
    fill(ids, t->next, k);
    t->next += k;
    return (size_t)k;
}

int idmint__range_next_n(struct range_supply *rs, uint64_t *ids, size_t n)
{
    size_t done = take_cached(tls_slot(rs), ids, n);

    while (done < n) {
        uint64_t start, got;
        int rc = take_shared(rs, n - done, &start, &got);

        if (rc != 0)
            return rc;
        fill(ids + done, start, got);
        done += (size_t)got;
    }
    return 0;
}

int idmint__range_try_next_n(struct range_supply *rs, uint64_t *ids, size_t n, size_t *got,
                             uint32_t *wait_ms)
{
    size_t done = take_cached(tls_slot(rs), ids, n);
    uint64_t start, k;
    int rc = 1;

    if (done == n) { /* the thread's chunk held them all: no lock, as in next_n */
        *got = n;
        *wait_ms = 0;
        return 0;
    }
    pthread_mutex_lock(&rs->mu);
    while (done < n && (rc = take_ready_locked(rs, n - done, &start, &k)) == 1) {
        fill(ids + done, start, k);
        done += (size_t)k;
    }
    if (rc < 0 && done == 0) {
        pthread_mutex_unlock(&rs->mu);
        return rc;
    }
    /* Dry: the refill thread is asked now, and the caller told how long a
     * reservation took last time. Errors of the refill are the waiting
     * call's to report (idmint__range_next_n), with its deadline. */
    if (done < n)
        rs->is_wanted = 1;
    if (done < n || needs_refill_locked(rs))
        pthread_cond_signal(&rs->cv_work);
    *wait_ms = done == n                    ? 0
               : rs->answer_ms < 1          ? 1
               : rs->answer_ms > UINT32_MAX ? UINT32_MAX
                                            : (uint32_t)rs->answer_ms;
    pthread_mutex_unlock(&rs->mu);
    *got = done;
    return 0;
}

const _Atomic uint64_t *idmint__range_cache_key(struct range_supply *rs)
{
    return &rs->cache_id;
}

int idmint__range_status(struct range_supply *rs)
{
    int restored;

    pthread_mutex_lock(&rs->mu);
    restored = rs->last_err == IDMINT_ERESTORED;
    pthread_mutex_unlock(&rs->mu);
    return restored ? IDMINT_ERESTORED : 0;
}

void idmint__range_figures(struct range_supply *rs, struct idmint__range_figures *out)
{
    pthread_mutex_lock(&rs->mu);
    out->left = left_locked(rs);
    out->block = rs->block;
    out->rate = rs->rate;
    out->reservations = rs->reservations;
    pthread_mutex_unlock(&rs->mu);
    /* What is held lasts this long at the rate it went out at: the outage budget. */
    out->budget_ms = out->rate == 0
                         ? UINT64_MAX
                         : (out->left > UINT64_MAX / 1000u ? UINT64_MAX / out->rate
                                                           : out->left * 1000u / out->rate);
}

int idmint__range_open(struct range_supply **out, struct idmint_authority *a,
                       const idmint_ns_info *ns, const idmint_options *opts,
                       const char *incarnation)
{
    struct range_supply *rs = calloc(1, sizeof(*rs));
    struct idmint__range first;
    int rc;

    if (rs == NULL) {
        idmint__store_gate_enter();
        idmint_authority_close(a);
        idmint__store_gate_leave();
        return IDMINT_ENOMEM;
    }
    rs->a = a;
    snprintf(rs->ns, sizeof(rs->ns), "%s", ns->name);
    memcpy(rs->incarnation, incarnation, sizeof(rs->incarnation));
    rs->cache_id = atomic_fetch_add(&next_cache_id, 1);
    rs->block = opts->range_block != 0 ? opts->range_block : ns->block;
    if (rs->block > ns->max_block)
        rs->block = ns->max_block;
    rs->floor_block = rs->block;
    rs->max_block = ns->max_block;
    /* A block the caller fixed stays fixed. */
    rs->target_ms = opts->range_block != 0 ? 0 : opts->range_target_ms;
    rs->refill_pct = opts->refill_percent > 100 ? 100 : opts->refill_percent;
    rs->chunk = rs->block / 16 > CHUNK_MAX ? CHUNK_MAX : rs->block / 16;
    if (rs->chunk == 0)
        rs->chunk = 1;
    rs->deadline_ms = opts->deadline_ms;
    pthread_mutex_init(&rs->mu, NULL);
    idmint__cond_init_monotonic(&rs->cv_work);
    idmint__cond_init_monotonic(&rs->cv_done);

    rs->check_ms = idmint__history_check_ms(opts);
    /* Before anything is reserved: a store behind what this host saw, or a
     * marked backup, grants nothing to this process. */
    idmint__store_gate_enter();
    rc = idmint__authority_history_check(a, rs->ns, &rs->history, 0);
    idmint__store_gate_leave();
    if (rc != 0)
        goto fail;
    rs->answer_ms = idmint__deadline_now_ms();
    rc = reserve(rs, rs->request_seq, rs->block, &first);
    if (rc == 0) {
        idmint__store_gate_enter();
        rc = idmint__authority_history_adopt(a, rs->ns, &rs->history, &first.history);
        idmint__store_gate_leave();
    }
    if (rc != 0)
        goto fail;
    rs->answer_ms = idmint__deadline_now_ms() - rs->answer_ms;
    rs->rate_at_ms = idmint__authority_now_ms(a);
    rs->request_seq++;
    install_locked(rs, &first);
    rs->backoff = RETRY_BACKOFF_MIN;
    rs->check_at = idmint__deadline_now_ms() + rs->check_ms;
    if (idmint__is_driven()) { /* the driver runs refill_step_locked (idmint__range_drive) */
        *out = rs;
        return 0;
    }
    if (pthread_create(&rs->thread, NULL, refill_main, rs) != 0) {
        rc = idmint__fail(IDMINT_ENOMEM, "cannot start the refill thread");
        goto fail;
    }
    rs->has_thread = 1;
    *out = rs;
    return 0;
fail:
    idmint__store_gate_enter();
    idmint_authority_close(a);
    idmint__store_gate_leave();
    pthread_cond_destroy(&rs->cv_done);
    pthread_cond_destroy(&rs->cv_work);
    pthread_mutex_destroy(&rs->mu);
    free(rs);
    return rc;
}

void idmint__range_close(struct range_supply *rs, int how)
{
    if (rs == NULL)
        return;
    if (how == IDMINT__END_FORKED) {
        /* As for leases: no thread here, a mutex maybe held at fork(), a
         * store connection that is the parent's. Free only our memory. */
        free(rs);
        return;
    }
    pthread_mutex_lock(&rs->mu);
    rs->is_stopping = 1;
    pthread_cond_broadcast(&rs->cv_work);
    pthread_cond_broadcast(&rs->cv_done);
    pthread_mutex_unlock(&rs->mu);
    if (rs->has_thread)
        pthread_join(rs->thread, NULL);
    /* Nothing of ours will be repeated now. Not after an outage: close
     * would wait out the store's retries for a few records. */
    if (how == IDMINT__END_RELEASE && !is_transient(rs->last_err))
        forget_before(rs, rs->request_seq);
    idmint__store_gate_enter();
    idmint_authority_close(rs->a);
    idmint__store_gate_leave();
    pthread_cond_destroy(&rs->cv_done);
    pthread_cond_destroy(&rs->cv_work);
    pthread_mutex_destroy(&rs->mu);
    free(rs);
}
