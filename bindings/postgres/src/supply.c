/* SPDX-License-Identifier: Apache-2.0 */
/* The shared ID supply: see supply.h. */
#include "supply.h"

#include <string.h>

#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/condition_variable.h"
#include "storage/latch.h"
#include "storage/shmem.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/s_lock.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "errors.h"

/* How long (µs) a backend looks at a dry ring before it sleeps. */
#define SPIN_US 200

/* The worker measures the rate sessions take IDs at over this many ms... */
#define RATE_WINDOW_MS  2
/* ...and keeps about this many ms of it in the ring, well within idmint.max_age_ms. */
#define SUPPLY_AHEAD_MS 2

/*
 * LWLocks, not spinlocks: a spinlock's waiter sleeps a whole millisecond at a
 * time once its spins run out, and the worker holding a slot's lock can be
 * descheduled on a busy machine; an LWLock's waiter is woken at its release.
 */
#define TRANCHE "idmint supply"

typedef struct supply_slot {
    LWLock *lock; /* guards everything below */
    /* Backends sleep here for IDs, a definition or an answer to a request. */
    ConditionVariable changed;
    bool in_use;
    /* Grows when the slot is given to another name: the worker's appends for the old one are
     * then refused. */
    uint32_t epoch;
    char name[SUPPLY_NAME_MAX];
    uint32_t asked;  /* requests backends made of the worker */
    uint32_t failed; /* requests up to this one were answered by err_code */
    bool wants_ids;  /* a request wants IDs (not only the definition) */
    bool wake_sent;  /* a backend set the worker's latch since the worker last looked */
    int err_code;    /* the worker's last failure; 0 after a success */
    char err_msg[SUPPLY_MSG_MAX];
    bool has_definition;
    idmint_ns_info definition;
    uint64_t head, tail;     /* ids[head % RING .. tail % RING) are in the ring */
    uint64_t last_id;        /* the highest ID ever appended: the ring never goes below it */
    uint32_t taken_recent;   /* IDs taken since window_start_ms */
    int64_t window_start_ms; /* when the worker last measured the rate */
    int64_t dry_at_ms;       /* when a session last found the ring empty */
    uint32_t fill_target;
    supply_status status;
    uint64_t ids[SUPPLY_RING];
    int64_t minted_ms[SUPPLY_RING];
} supply_slot;

typedef struct supply_shared {
    LWLock *claim_lock;  /* serialises giving slots to names */
    Latch *worker_latch; /* NULL until the worker runs */
    int slot_count;
    supply_slot slots[FLEXIBLE_ARRAY_MEMBER];
} supply_shared;

static supply_shared *shared;

/* A backend remembers where its namespaces are; the name is checked again
 * under the slot's lock, since a slot may be given to another name. */
#define LOCAL_CACHE 8
static struct {
    char name[SUPPLY_NAME_MAX];
    int index;
} local_cache[LOCAL_CACHE];
static int local_next;

static Size supply_shmem_size(int max_namespaces)
{
    return add_size(offsetof(supply_shared, slots),
                    mul_size(sizeof(supply_slot), (Size)max_namespaces));
}

void supply_shmem_request(int max_namespaces)
{
    RequestAddinShmemSpace(supply_shmem_size(max_namespaces));
    RequestNamedLWLockTranche(TRANCHE, max_namespaces + 1);
}

void supply_shmem_init(int max_namespaces)
{
    bool found;
    shared = ShmemInitStruct("idmint supply", supply_shmem_size(max_namespaces), &found);
    if (found) {
        return;
    }
    LWLockPadded *locks = GetNamedLWLockTranche(TRANCHE);
    memset(shared, 0, supply_shmem_size(max_namespaces));
    shared->claim_lock = &locks[max_namespaces].lock;
    shared->slot_count = max_namespaces;
    for (int i = 0; i < max_namespaces; i++) {
        shared->slots[i].lock = &locks[i].lock;
        ConditionVariableInit(&shared->slots[i].changed);
    }
}

bool supply_attached(void)
{
    return shared != NULL;
}

int64_t supply_now_us(void)
{
    /* PostgreSQL counts microseconds from 2000-01-01. */
    return GetCurrentTimestamp() + PG_EPOCH_UNIX_MS * 1000;
}

static int64_t now_unix_ms(void)
{
    return supply_now_us() / 1000;
}

/* A slot may go to another name when nothing of its own is left in it: no
 * handle, no IDs, and every request answered (by a failure, such as an
 * unknown namespace). Bad names cannot fill the table for good. Caller holds
 * claim_lock. */
static bool slot_reclaimable(supply_slot *s)
{
    bool idle;
    LWLockAcquire(s->lock, LW_EXCLUSIVE);
    idle = !s->status.is_open && s->head == s->tail && s->failed == s->asked && s->err_code != 0;
    LWLockRelease(s->lock);
    return idle;
}

static int slot_claim(const char *ns)
{
    int found = -1, free_at = -1, reclaim_at = -1;

    LWLockAcquire(shared->claim_lock, LW_EXCLUSIVE);
    for (int i = 0; i < shared->slot_count && found < 0; i++) {
        supply_slot *s = &shared->slots[i];
        if (!s->in_use) {
            if (free_at < 0) {
                free_at = i;
            }
        } else if (strcmp(s->name, ns) == 0) {
            found = i;
        }
    }
    if (found < 0 && free_at < 0) {
        for (int i = 0; i < shared->slot_count && reclaim_at < 0; i++) {
            if (slot_reclaimable(&shared->slots[i])) {
                reclaim_at = i;
            }
        }
    }
    if (found < 0 && (free_at >= 0 || reclaim_at >= 0)) {
        supply_slot *s = &shared->slots[free_at >= 0 ? free_at : reclaim_at];
        LWLockAcquire(s->lock, LW_EXCLUSIVE);
        uint32_t epoch = s->epoch + 1;
        /* Everything but the lock and the condition variable starts afresh. */
        memset(s->name, 0, sizeof s->name);
        strlcpy(s->name, ns, sizeof s->name);
        s->epoch = epoch;
        s->in_use = true;
        s->asked = s->failed = 0;
        s->wants_ids = false;
        s->err_code = 0;
        s->err_msg[0] = '\0';
        s->has_definition = false;
        s->head = s->tail = s->last_id = 0;
        s->taken_recent = 0;
        s->wake_sent = false;
        s->window_start_ms = 0;
        s->dry_at_ms = 0;
        s->fill_target = SUPPLY_MIN_FILL;
        memset(&s->status, 0, sizeof s->status);
        strlcpy(s->status.name, ns, sizeof s->status.name);
        LWLockRelease(s->lock);
        found = (int)(s - shared->slots);
    }
    LWLockRelease(shared->claim_lock);
    if (found < 0) {
        idmint_pg_raise_text(IDMINT_ENOWORKER,
                             "every idmint.max_namespaces slot of this server is in use: raise it");
    }
    return found;
}

/* The slot serving @p ns, with its lock held. */
static supply_slot *slot_lock(const char *ns)
{
    if (shared == NULL) {
        idmint_pg_raise_not_loaded();
    }
    for (int i = 0; i < LOCAL_CACHE; i++) {
        if (local_cache[i].name[0] != '\0' && strcmp(local_cache[i].name, ns) == 0) {
            supply_slot *s = &shared->slots[local_cache[i].index];
            LWLockAcquire(s->lock, LW_EXCLUSIVE);
            if (s->in_use && strcmp(s->name, ns) == 0) {
                return s;
            }
            LWLockRelease(s->lock);
            local_cache[i].name[0] = '\0';
        }
    }
    for (;;) {
        int index = slot_claim(ns);
        supply_slot *s = &shared->slots[index];
        LWLockAcquire(s->lock, LW_EXCLUSIVE);
        if (s->in_use && strcmp(s->name, ns) == 0) {
            strlcpy(local_cache[local_next].name, ns, SUPPLY_NAME_MAX);
            local_cache[local_next].index = index;
            local_next = (local_next + 1) % LOCAL_CACHE;
            return s;
        }
        LWLockRelease(s->lock); /* given away between the claim and now: claim again */
    }
}

static void wake_worker(void)
{
    Latch *latch = shared->worker_latch;
    if (latch != NULL) {
        SetLatch(latch);
    }
}

/* Take what the ring holds, up to @p n, dropping snowflake IDs older than
 * @p max_age_ms. Caller holds the lock. */
static uint32_t ring_take(supply_slot *s, uint64_t *out, uint32_t n, int max_age_ms)
{
    uint32_t got = 0;
    /* Only a snowflake ID ages, and only a ring that holds one needs the clock read. */
    if (!s->status.is_range && s->head < s->tail) {
        int64_t oldest_ms = now_unix_ms() - max_age_ms;
        while (s->head < s->tail && s->minted_ms[s->head % SUPPLY_RING] < oldest_ms) {
            s->head++;
            s->status.discarded++;
        }
    }
    while (got < n && s->head < s->tail) {
        out[got++] = s->ids[s->head % SUPPLY_RING];
        s->head++;
    }
    s->status.handed_out += got;
    s->taken_recent += got;
    return got;
}

/* What a waiting backend does with the slot's answer to its request. */
typedef enum { KEEP_WAITING, RAISE_FAILURE } wait_outcome;

static wait_outcome answered_by_failure(supply_slot *s, uint32_t my_request, int *code,
                                        char *message)
{
    if (s->err_code != 0 && (int32_t)(s->failed - my_request) >= 0) {
        *code = s->err_code;
        strlcpy(message, s->err_msg, SUPPLY_MSG_MAX);
        return RAISE_FAILURE;
    }
    return KEEP_WAITING;
}

/*
 * One turn of a backend's wait for the worker, after a look under the lock
 * found nothing to return yet: raise what ends the wait (the slot given to
 * another name, the worker's answer of failure, the deadline), else wake the
 * worker and sleep until it appends or answers (or 10 ms). Called between
 * ConditionVariablePrepareToSleep() and ConditionVariableCancelSleep().
 */
static void wait_turn(supply_slot *s, const char *ns, bool renamed, wait_outcome outcome, int code,
                      const char *message, TimestampTz deadline, int wait_ms)
{
    if (renamed || outcome == RAISE_FAILURE || GetCurrentTimestamp() >= deadline) {
        ConditionVariableCancelSleep();
        if (renamed) {
            idmint_pg_raise_text(IDMINT_ECONFLICT,
                                 "the namespace's slot was given away while waiting: retry");
        }
        if (outcome == RAISE_FAILURE) {
            idmint_pg_raise_text(code, message);
        }
        idmint_pg_raise_timeout(ns, wait_ms);
    }
    wake_worker();
    (void)ConditionVariableTimedSleep(&s->changed, 10, PG_WAIT_EXTENSION);
}

void supply_take(const char *ns, uint64_t *out, uint32_t n, int wait_ms, int max_age_ms)
{
    uint32_t got = 0, my_request = 0;
    bool asked = false, low;
    TimestampTz spin_until;
    TimestampTz deadline;
    int code = 0;
    char message[SUPPLY_MSG_MAX];

    supply_slot *s = slot_lock(ns);
    got = ring_take(s, out, n, max_age_ms);
    /* Wake the worker once for a low ring, not at every call until it looks. */
    low = s->tail - s->head < s->fill_target / 2 && !s->wake_sent;
    if (got < n || low) {
        s->wants_ids = true;
        s->wake_sent = true;
        if (got < n) {
            my_request = ++s->asked;
            asked = true;
            s->dry_at_ms = now_unix_ms();
        }
    }
    LWLockRelease(s->lock);
    if (low || asked) {
        wake_worker();
    }
    if (got == n) {
        return;
    }

    /*
     * The ring is dry. Under a steady stream the worker appends within a
     * fraction of a ms (a new time unit begins): look again for a short while
     * before sleeping, since a sleep and a wake-up cost more than the wait.
     */
    spin_until = GetCurrentTimestamp() + SPIN_US;
    for (unsigned i = 1; got < n; i++) {
        SPIN_DELAY();
        pg_read_barrier();        /* read the ring's ends afresh each time */
        if (s->tail == s->head) { /* an unlocked peek; the lock below decides */
            if (i % 64 == 0 && GetCurrentTimestamp() >= spin_until) {
                break;
            }
            continue;
        }
        LWLockAcquire(s->lock, LW_EXCLUSIVE);
        if (s->in_use && strcmp(s->name, ns) == 0) {
            got += ring_take(s, out + got, n - got, max_age_ms);
        }
        LWLockRelease(s->lock);
    }
    if (got == n) {
        return;
    }

    /* Sleep until the worker appends or answers. */
    deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), wait_ms);
    ConditionVariablePrepareToSleep(&s->changed);
    for (;;) {
        wait_outcome outcome = KEEP_WAITING;
        bool renamed;

        CHECK_FOR_INTERRUPTS();
        LWLockAcquire(s->lock, LW_EXCLUSIVE);
        renamed = !s->in_use || strcmp(s->name, ns) != 0;
        if (!renamed) {
            got += ring_take(s, out + got, n - got, max_age_ms);
            if (got < n) {
                outcome = answered_by_failure(s, my_request, &code, message);
                s->wants_ids = true;
            }
        }
        LWLockRelease(s->lock);
        if (got == n) {
            break;
        }
        wait_turn(s, ns, renamed, outcome, code, message, deadline, wait_ms);
    }
    ConditionVariableCancelSleep();
}

void supply_definition(const char *ns, idmint_ns_info *out, int wait_ms)
{
    uint32_t my_request;
    TimestampTz deadline;
    int code = 0;
    char message[SUPPLY_MSG_MAX];

    supply_slot *s = slot_lock(ns);
    if (s->has_definition) {
        memcpy(out, &s->definition, sizeof *out);
        LWLockRelease(s->lock);
        return;
    }
    my_request = ++s->asked;
    LWLockRelease(s->lock);
    wake_worker();

    deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), wait_ms);
    ConditionVariablePrepareToSleep(&s->changed);
    for (;;) {
        bool have, renamed;
        wait_outcome outcome = KEEP_WAITING;

        CHECK_FOR_INTERRUPTS();
        LWLockAcquire(s->lock, LW_EXCLUSIVE);
        renamed = !s->in_use || strcmp(s->name, ns) != 0;
        have = !renamed && s->has_definition;
        if (have) {
            memcpy(out, &s->definition, sizeof *out);
        } else if (!renamed) {
            outcome = answered_by_failure(s, my_request, &code, message);
        }
        LWLockRelease(s->lock);
        if (have) {
            break;
        }
        wait_turn(s, ns, renamed, outcome, code, message, deadline, wait_ms);
    }
    ConditionVariableCancelSleep();
}

bool supply_status_at(int index, supply_status *out)
{
    bool used;
    if (shared == NULL) {
        idmint_pg_raise_not_loaded();
    }
    if (index < 0 || index >= shared->slot_count) {
        return false;
    }
    supply_slot *s = &shared->slots[index];
    LWLockAcquire(s->lock, LW_EXCLUSIVE);
    used = s->in_use;
    if (used) {
        *out = s->status;
        out->buffered = (uint32_t)(s->tail - s->head);
        out->last_error = s->err_code;
        strlcpy(out->last_message, s->err_msg, sizeof out->last_message);
    }
    LWLockRelease(s->lock);
    return used;
}

/* ---- the worker's side ---- */

void supply_worker_attach(void)
{
    shared->worker_latch = MyLatch;
}

int supply_slot_count(void)
{
    return shared->slot_count;
}

bool supply_demand_of(int index, supply_demand *out)
{
    supply_slot *s = &shared->slots[index];
    bool used;
    LWLockAcquire(s->lock, LW_EXCLUSIVE);
    used = s->in_use;
    if (used) {
        int64_t now_ms = now_unix_ms(), elapsed_ms = now_ms - s->window_start_ms;
        /* The rate over a few ms, not since the last look: the worker looks often. */
        if (elapsed_ms >= RATE_WINDOW_MS || elapsed_ms < 0) {
            uint64_t per_ms = elapsed_ms > 0 ? s->taken_recent / (uint64_t)elapsed_ms : 0;
            uint64_t target = per_ms * SUPPLY_AHEAD_MS;
            target = target < SUPPLY_MIN_FILL ? SUPPLY_MIN_FILL
                                              : (target > SUPPLY_RING ? SUPPLY_RING : target);
            /* Grow at once with a burst, shrink slowly as it ends. */
            s->fill_target = target >= s->fill_target ? (uint32_t)target
                                                      : (uint32_t)((s->fill_target + target) / 2);
            s->taken_recent = 0;
            s->window_start_ms = now_ms;
        }
        s->wake_sent = false;
        strlcpy(out->name, s->name, sizeof out->name);
        out->asked = s->asked;
        out->wants_ids = s->wants_ids;
        out->buffered = (uint32_t)(s->tail - s->head);
        out->fill_target = s->fill_target;
        out->epoch = s->epoch;
        out->dry_ms_ago = now_ms - s->dry_at_ms;
    }
    LWLockRelease(s->lock);
    return used;
}

/* Slot @p index locked, if it still serves the name of @p epoch. */
static supply_slot *slot_of_epoch(int index, uint32_t epoch)
{
    supply_slot *s = &shared->slots[index];
    LWLockAcquire(s->lock, LW_EXCLUSIVE);
    if (s->in_use && s->epoch == epoch) {
        return s;
    }
    LWLockRelease(s->lock);
    return NULL;
}

bool supply_append(int index, uint32_t epoch, const uint64_t *ids, uint32_t n, int64_t minted_ms)
{
    supply_slot *s = slot_of_epoch(index, epoch);
    uint64_t tail, room, last_id, written = 0, dropped = 0;
    if (s == NULL) {
        return false;
    }
    tail = s->tail;
    room = SUPPLY_RING - (s->tail - s->head);
    last_id = s->last_id;
    LWLockRelease(s->lock);

    /*
     * Only the worker writes past the tail, and backends read only below it:
     * the entries are written outside the lock, which a backend taking one ID
     * must never wait behind (a spinlock's waiter sleeps 1 ms at a time).
     */
    for (uint32_t i = 0; i < n && written < room; i++) {
        if (ids[i] <= last_id) {
            dropped++;
            continue;
        }
        s->ids[(tail + written) % SUPPLY_RING] = ids[i];
        s->minted_ms[(tail + written) % SUPPLY_RING] = minted_ms;
        written++;
        last_id = ids[i];
    }

    s = slot_of_epoch(index, epoch);
    if (s == NULL) {
        return false;
    }
    s->tail = tail + written;
    s->last_id = last_id;
    s->status.discarded += dropped;
    s->err_code = 0;
    s->err_msg[0] = '\0';
    LWLockRelease(s->lock);
    ConditionVariableBroadcast(&s->changed);
    return true;
}

bool supply_fail(int index, uint32_t epoch, uint32_t asked, int code, const char *message,
                 bool drop_ring)
{
    supply_slot *s = slot_of_epoch(index, epoch);
    if (s == NULL) {
        return false;
    }
    s->err_code = code;
    strlcpy(s->err_msg, message, sizeof s->err_msg);
    if ((int32_t)(asked - s->failed) > 0) {
        s->failed = asked;
    }
    if (drop_ring) {
        s->status.discarded += s->tail - s->head;
        s->head = s->tail;
    }
    s->wants_ids = false;
    LWLockRelease(s->lock);
    ConditionVariableBroadcast(&s->changed);
    return true;
}

bool supply_publish_definition(int index, uint32_t epoch, const idmint_ns_info *info)
{
    supply_slot *s = slot_of_epoch(index, epoch);
    if (s == NULL) {
        return false;
    }
    memcpy(&s->definition, info, sizeof s->definition);
    s->has_definition = true;
    s->status.is_range = info->kind == IDMINT_KIND_RANGE;
    LWLockRelease(s->lock);
    ConditionVariableBroadcast(&s->changed);
    return true;
}

bool supply_publish_handle(int index, uint32_t epoch, bool is_open, bool is_range,
                           uint32_t worker_id, uint64_t generation, uint32_t leases, bool is_new)
{
    supply_slot *s = slot_of_epoch(index, epoch);
    if (s == NULL) {
        return false;
    }
    s->status.is_open = is_open;
    s->status.is_range = is_range;
    s->status.worker_id = worker_id;
    s->status.generation = generation;
    s->status.leases = leases;
    if (is_new) {
        s->status.handles++;
    }
    LWLockRelease(s->lock);
    return true;
}

int64_t supply_now_ms(void)
{
    return now_unix_ms();
}
