/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One simulated world (sim.h): its processes, their clocks, the scheduler
 * that picks each event from the seed, and the checker that every ID passes.
 */
#include "sim.h"

#include "fault_store.h"
#include "internal.h"

#include <inttypes.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define PROCS       6
#define NS_COUNT    2  /* 0: snowflake "s", 1: range "r", each with its migrations */
#define GENERATIONS 24 /* namespaces one lineage may migrate through in a run */
#define BATCH_MAX   8
#define HISTORY     48                         /* events kept for a violation's story */
#define START_US    UINT64_C(1780272000000000) /* 2026-06-01T00:00:00Z */
#define LEASE_MS    300u
#define RENEW_MS    100u
#define WORKERS     4u /* the snowflake layout's 2 worker bits */
/* Clocks stay within this of true time, as NTP keeps them; an operator's
 * fence quarantines the longest lease plus this (docs/operations.md). */
#define MAX_SKEW_US INT64_C(1000000)
#define RANGE_SKIP  UINT64_C(10000000) /* a fence's margin: past all a lost history holds */
#define SLEW_PPM    500                /* how fast a slewing clock closes its gap (NTP's limit) */
#define DRIFT_PPM   200                /* the most a clock runs fast or slow */
/* Once faults stop and the operator has fenced, every process mints again
 * within this: the quarantine (a lease plus the skew), a clock wait, a lease. */
#define LIVENESS_US UINT64_C(5000000)

static const char *const ns_bases[NS_COUNT] = {"s", "r"};
static const uint32_t unit_choices[] = {1, 1, 10, 50};

struct rng {
    uint64_t s;
};

/* splitmix64: one 64-bit state, a good stream from every seed. */
static uint64_t rng_next(struct rng *r)
{
    uint64_t z = (r->s += UINT64_C(0x9e3779b97f4a7c15));

    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static uint64_t rng_below(struct rng *r, uint64_t n)
{
    return n == 0 ? 0 : rng_next(r) % n;
}

/* The generator of event @p event of the run of @p seed, stream @p stream. */
static void rng_for_event(struct rng *r, uint64_t seed, uint64_t event, uint64_t stream)
{
    struct rng mix = {seed ^ stream};

    mix.s ^= rng_next(&mix) + event * UINT64_C(0xd1b54a32d192ed03);
    r->s = rng_next(&mix);
}

/* An ID and who minted it: the checker's record. */
struct minted {
    uint64_t id;
    uint32_t proc;
    uint32_t life; /* the process's incarnation: how many times it had started */
    uint32_t gen;  /* which namespace of the lineage */
    uint64_t event;
};

struct world;

struct proc {
    struct world *w;
    uint32_t index;
    int is_up;
    uint32_t life;
    /* wall = world time + offset. A step sets the offset at once; a slew
     * moves it from slew_from_us toward slew_to_us at SLEW_PPM since
     * slew_since_us, as NTP does; drift_ppm adds on since then. */
    int64_t slew_from_us, slew_to_us;
    uint64_t slew_since_us;
    int32_t drift_ppm;
    uint64_t mono_base_us; /* monotonic at world time 0: each process boots at its own */
    idmint *h[NS_COUNT];
    uint32_t gen[NS_COUNT];       /* the namespace of the lineage the handle opened */
    char holder[NS_COUNT][33];    /* the handle's incarnation: its grants name it */
    uint64_t opened_at[NS_COUNT]; /* event + 1 of its open */
    uint64_t last[NS_COUNT];      /* the handle's last ID: each handle's IDs increase */
};

/* One namespace of a lineage: the first, or one migrated to (above floor). */
struct generation {
    char name[16];
    uint64_t floor; /* as idmint_ns_migrate() set it: every ID of it lies above */
};

struct world {
    const struct sim_config *cfg;
    struct sim_result *res;
    FILE *out;
    struct rng rng;       /* events */
    struct rng fault_rng; /* store faults, a stream of its own */
    int fault_permille;
    uint64_t now_us; /* world time, µs after START_US */
    uint64_t event;
    struct proc procs[PROCS];
    struct proc *current; /* whose library call runs now; NULL: the operator's */
    idmint_authority *admin;
    struct clock admin_clock;
    struct idmint__driver driver;
    char url[600];
    /* Each lineage's namespaces; cur is the one programs open. All of a
     * lineage's IDs are checked together: a migration promises new above old. */
    struct generation gens[NS_COUNT][GENERATIONS];
    uint32_t n_gens[NS_COUNT], cur[NS_COUNT];
    uint32_t copy_cur[NS_COUNT], replica_cur[NS_COUNT]; /* cur when the copy was taken */
    struct minted *ids[NS_COUNT];
    size_t n_ids[NS_COUNT], cap_ids[NS_COUNT];
    /* Open addressing over ids[ns]: slot holds index + 1, 0 when empty; a repeat is seen at once.
     */
    uint32_t *seen[NS_COUNT];
    size_t seen_cap[NS_COUNT];
    char history[HISTORY][200];
    /* The operator's copy of the store, and whether a restore awaits its fence. */
    char live_path[560], copy_path[600];
    int has_copy, is_copy_marked, needs_fence;
    uint64_t range_high; /* the highest ID of "r" minted so far */
    /* Where the operator's last fence put "r": a history that a later restore
     * loses may have reserved from there, above every ID minted so far. */
    uint64_t range_fenced_to;
    uint32_t clock_wait_ms; /* the seed's: a long one waits out a previous holder's E */
    uint64_t copies;
    /* A replica that follows the store some events behind: a failover promotes it. */
    char replica_path[600];
    uint64_t replica_lag_events, replica_synced_at;
    int has_replica;
    uint64_t outage_until_us; /* the store has lost its quorum until then */
    int is_quiet;             /* faults have stopped: the liveness check runs */
    /* event + 1 of the last restore or failover: a grant made before it may
     * be gone from the store, so only later handles' IDs are traced */
    uint64_t rewound_at;
};

/* ---- the trace: a hash of everything, and the last events as text ---- */

static void hash_u64(struct world *w, uint64_t v)
{
    int i;

    for (i = 0; i < 8; i++) {
        w->res->hash ^= (v >> (8 * i)) & 0xffu;
        w->res->hash *= UINT64_C(0x100000001b3);
    }
}

static void note(struct world *w, const char *fmt, ...)
{
    char *line = w->history[w->event % HISTORY];
    int len = snprintf(line, sizeof(w->history[0]), "#%" PRIu64 " t=%" PRIu64 ".%03" PRIu64 "s ",
                       w->event, w->now_us / 1000000u, w->now_us / 1000u % 1000u);
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(line + len, sizeof(w->history[0]) - (size_t)len, fmt, ap);
    va_end(ap);
    if (w->cfg->verbose)
        fprintf(w->out, "%s\n", line);
}

static void print_history(struct world *w)
{
    uint64_t first = w->event >= HISTORY ? w->event - HISTORY + 1 : 0, e;

    fprintf(w->out, "the events before it (of the last %" PRIu64 "):\n", w->event - first + 1);
    for (e = first; e <= w->event; e++)
        if (w->history[e % HISTORY][0] != '\0')
            fprintf(w->out, "  %s\n", w->history[e % HISTORY]);
}

static void violation(struct world *w, const char *fmt, ...)
{
    va_list ap;

    if (w->res->violation)
        return;
    w->res->violation = 1;
    w->res->violation_what = fmt;
    w->res->violation_event = w->event;
    fprintf(w->out, "VIOLATION (seed %" PRIu64 ", event %" PRIu64 "): ", w->cfg->seed, w->event);
    va_start(ap, fmt);
    vfprintf(w->out, fmt, ap);
    va_end(ap);
    fputc('\n', w->out);
}

/* ---- clocks: the processes' and the driver's ---- */

static uint64_t proc_mono_us(const struct proc *p)
{
    return p->mono_base_us + p->w->now_us;
}

/* The process's wall clock's offset from true time now, within ±MAX_SKEW_US. */
static int64_t proc_offset_us(const struct proc *p)
{
    int64_t since = (int64_t)(p->w->now_us - p->slew_since_us);
    int64_t gap = p->slew_to_us - p->slew_from_us, can = since / (1000000 / SLEW_PPM);
    int64_t off = p->slew_from_us + (gap > can ? can : gap < -can ? -can : gap);

    off += since / 1000000 * p->drift_ppm + since % 1000000 * p->drift_ppm / 1000000;
    return off > MAX_SKEW_US ? MAX_SKEW_US : off < -MAX_SKEW_US ? -MAX_SKEW_US : off;
}

/* The clock steps (@p is_step) or starts slewing by @p delta_us from where it is now. */
static void proc_clock_move(struct proc *p, int64_t delta_us, int is_step)
{
    int64_t now = proc_offset_us(p), to = now + delta_us;

    to = to > MAX_SKEW_US ? MAX_SKEW_US : to < -MAX_SKEW_US ? -MAX_SKEW_US : to;
    p->slew_from_us = is_step ? to : now;
    p->slew_to_us = to;
    p->slew_since_us = p->w->now_us;
}

static int64_t proc_wall_ms(void *ctx)
{
    const struct proc *p = ctx;

    return ((int64_t)(START_US + p->w->now_us) + proc_offset_us(p)) / 1000;
}

static uint64_t proc_mono_ns(void *ctx)
{
    return proc_mono_us(ctx) * 1000u;
}

static int64_t operator_wall_ms(void *ctx)
{
    const struct world *w = ctx;

    return (int64_t)((START_US + w->now_us) / 1000u);
}

static uint64_t operator_mono_ns(void *ctx)
{
    const struct world *w = ctx;

    return w->now_us * 1000u;
}

/* The library's deadlines run on the monotonic clock of the process whose call runs. */
static uint64_t driver_now_us(void *ctx)
{
    struct world *w = ctx;

    return w->current != NULL ? proc_mono_us(w->current) : w->now_us;
}

/* A sleep in the library lets the world's time pass: nothing else runs meanwhile. */
static void driver_sleep_us(void *ctx, uint64_t us)
{
    struct world *w = ctx;

    w->now_us += us;
}

/*
 * The store faults of a process's calls; the operator's calls pass. A late
 * answer lets up to two leases' time pass while the call is under way, so
 * that what the library decided before it is old when the reply comes.
 */
static int decide_fault(void *ctx, const char *what)
{
    struct world *w = ctx;
    uint64_t roll, fp = (uint64_t)w->fault_permille;

    (void)what;
    if (w->current == NULL || w->is_quiet)
        return TS_FAULT_PASS;
    if (w->now_us < w->outage_until_us) {
        w->res->faults_outage++;
        return TS_FAULT_FAIL;
    }
    if (fp == 0)
        return TS_FAULT_PASS;
    roll = rng_below(&w->fault_rng, 2000);
    if (roll < fp) {
        w->res->faults_failed++;
        return TS_FAULT_FAIL;
    }
    if (roll < 2u * fp) {
        w->res->faults_lost++;
        return TS_FAULT_LOSE;
    }
    if (roll < 2u * fp + fp / 2u) {
        w->now_us += 1000u * (1u + rng_below(&w->fault_rng, 2u * LEASE_MS));
        w->res->faults_late++;
    }
    return TS_FAULT_PASS;
}

/* ---- the checker ---- */

static size_t slot_of(uint64_t id, size_t cap)
{
    return (size_t)((id * UINT64_C(0x9e3779b97f4a7c15)) >> 17) & (cap - 1);
}

/* Index id's record into seen[ns], growing it at half full; the earlier record of a repeat, or
 * NULL. */
static const struct minted *seen_add(struct world *w, int ns, size_t index)
{
    uint64_t id = w->ids[ns][index].id;
    size_t i;

    if (2 * (w->n_ids[ns] + 1) > w->seen_cap[ns]) {
        size_t cap = w->seen_cap[ns] ? 2 * w->seen_cap[ns] : 8192, k;
        uint32_t *grown = calloc(cap, sizeof(*grown));

        if (grown == NULL) {
            violation(w, "out of memory for the checker");
            return NULL;
        }
        for (k = 0; k < w->seen_cap[ns]; k++) {
            uint32_t v = w->seen[ns][k];

            if (v != 0) {
                for (i = slot_of(w->ids[ns][v - 1].id, cap); grown[i] != 0; i = (i + 1) & (cap - 1))
                    ;
                grown[i] = v;
            }
        }
        free(w->seen[ns]);
        w->seen[ns] = grown;
        w->seen_cap[ns] = cap;
    }
    for (i = slot_of(id, w->seen_cap[ns]); w->seen[ns][i] != 0; i = (i + 1) & (w->seen_cap[ns] - 1))
        if (w->ids[ns][w->seen[ns][i] - 1].id == id)
            return &w->ids[ns][w->seen[ns][i] - 1];
    w->seen[ns][i] = (uint32_t)index + 1;
    return NULL;
}

static int record(struct world *w, int ns, const struct proc *p, uint64_t id)
{
    const struct minted *before;

    if (w->n_ids[ns] == w->cap_ids[ns]) {
        size_t cap = w->cap_ids[ns] ? w->cap_ids[ns] * 2 : 4096;
        struct minted *grown = realloc(w->ids[ns], cap * sizeof(*grown));

        if (grown == NULL)
            return -1;
        w->ids[ns] = grown;
        w->cap_ids[ns] = cap;
    }
    w->ids[ns][w->n_ids[ns]] = (struct minted){id, p->index, p->life, p->gen[ns], w->event};
    before = seen_add(w, ns, w->n_ids[ns]);
    w->n_ids[ns]++;
    w->res->ids++;
    hash_u64(w, id);
    if (before != NULL)
        violation(w,
                  "%" PRIu64 " issued twice: in '%s' by process %u (life %u) at event %" PRIu64
                  ", in '%s' by process %u (life %u) at event %" PRIu64,
                  id, w->gens[ns][before->gen].name, before->proc, before->life, before->event,
                  w->gens[ns][p->gen[ns]].name, p->index, p->life, w->event);
    return 0;
}

/* What a handle minted: increasing after its last, then recorded. */
static void check_batch(struct world *w, struct proc *p, int ns, const uint64_t *ids, size_t n)
{
    size_t i;

    const struct generation *g = &w->gens[ns][p->gen[ns]];

    for (i = 0; i < n; i++) {
        if (ids[i] == 0 || ids[i] <= p->last[ns])
            violation(w,
                      "process %u (life %u) minted %" PRIu64 " in '%s' after %" PRIu64
                      ": a handle's IDs must increase",
                      p->index, p->life, ids[i], g->name, p->last[ns]);
        if (ids[i] <= g->floor)
            violation(w,
                      "process %u (life %u) minted %" PRIu64
                      " in '%s', at or below its floor %" PRIu64,
                      p->index, p->life, ids[i], g->name, g->floor);
        p->last[ns] = ids[i];
        if (ns == 1 && ids[i] > w->range_high)
            w->range_high = ids[i];
        if (record(w, ns, p, ids[i]) != 0)
            violation(w, "out of memory for the IDs");
    }
}

static int by_id(const void *a, const void *b)
{
    const struct minted *x = a, *y = b;

    return x->id < y->id ? -1 : x->id > y->id;
}

/* No value twice in a namespace, whoever minted it: record()'s check again, by sorting. */
static void check_unique(struct world *w)
{
    int ns;
    size_t i;

    for (ns = 0; ns < NS_COUNT; ns++) {
        qsort(w->ids[ns], w->n_ids[ns], sizeof(struct minted), by_id);
        for (i = 1; i < w->n_ids[ns]; i++) {
            const struct minted *a = &w->ids[ns][i - 1], *b = &w->ids[ns][i];

            if (a->id == b->id) {
                violation(w,
                          "%" PRIu64
                          " issued twice: in '%s' by process %u (life %u) at event %" PRIu64
                          ", in '%s' by process %u (life %u) at event %" PRIu64,
                          a->id, w->gens[ns][a->gen].name, a->proc, a->life, a->event,
                          w->gens[ns][b->gen].name, b->proc, b->life, b->event);
                return;
            }
        }
    }
}

/* ---- processes ---- */

static void proc_open(struct world *w, struct proc *p, int ns)
{
    idmint_options o;
    int rc;

    idmint_options_init(&o);
    o.lease_ms = LEASE_MS;
    o.renew_ms = RENEW_MS;
    o.clock_wait_ms = w->clock_wait_ms;
    o.history_check_ms = 100;
    o.wall_clock_ms = proc_wall_ms;
    o.mono_clock_ns = proc_mono_ns;
    o.clock_ctx = p;
    p->last[ns] = 0; /* a new handle: its IDs increase from its first */
    p->gen[ns] = w->cur[ns];
    w->current = p;
    rc = idmint_open(&p->h[ns], w->url, w->gens[ns][p->gen[ns]].name, &o);
    w->current = NULL;
    hash_u64(w, (uint64_t)(int64_t)rc);
    note(w, "p%u open %s: %s%s%s", p->index, w->gens[ns][p->gen[ns]].name,
         rc == 0 ? "ok" : idmint_strerror(rc), rc == 0 ? "" : ": ", rc == 0 ? "" : idmint_errmsg());
    if (rc == 0) {
        idmint_handle_info info;

        idmint_handle_info_init(&info);
        if (idmint_info(p->h[ns], &info) != 0)
            violation(w, "handle info: %s", idmint_errmsg());
        memcpy(p->holder[ns], info.incarnation, sizeof(p->holder[ns]));
        p->opened_at[ns] = w->event + 1;
    }
    if (rc != 0) {
        p->h[ns] = NULL;
        if (rc == IDMINT_EINVAL || rc == IDMINT_ENOMEM)
            violation(w, "open failed with %s: %s", idmint_strerror(rc), idmint_errmsg());
    }
}

static void proc_start(struct world *w, struct proc *p)
{
    int ns;

    if (!p->is_up) {
        p->is_up = 1;
        p->life++;
        p->mono_base_us = rng_below(&w->rng, UINT64_C(1) << 40);
        w->res->starts++;
        note(w, "p%u starts (life %u), wall offset %+" PRId64 " ms", p->index, p->life,
             proc_offset_us(p) / 1000);
    }
    for (ns = 0; ns < NS_COUNT; ns++)
        if (p->h[ns] == NULL)
            proc_open(w, p, ns);
}

static void proc_end(struct world *w, struct proc *p, int is_crash)
{
    int ns;

    w->current = p;
    for (ns = 0; ns < NS_COUNT; ns++) {
        if (p->h[ns] == NULL)
            continue;
        if (is_crash)
            idmint__handle_crash(p->h[ns]);
        else
            idmint_close(p->h[ns]);
        p->h[ns] = NULL;
    }
    w->current = NULL;
    p->is_up = 0;
    if (is_crash)
        w->res->crashes++;
    else
        w->res->closes++;
    note(w, "p%u %s", p->index, is_crash ? "crashes (kill -9)" : "closes");
}

static const char *handle_name(const struct proc *p, int ns)
{
    return p->w->gens[ns][p->gen[ns]].name;
}

static void proc_close_handle(struct world *w, struct proc *p, int ns)
{
    w->current = p;
    idmint_close(p->h[ns]);
    w->current = NULL;
    p->h[ns] = NULL;
}

static int is_final(int rc)
{
    return rc == IDMINT_ELEASELOST || rc == IDMINT_ERESTORED || rc == IDMINT_EDISABLED ||
           rc == IDMINT_EEXHAUSTED || rc == IDMINT_ECLOCK;
}

/*
 * Provenance: the authority's records name a grant of this handle's holder
 * that covers @p id. Only for handles opened since the last restore or
 * failover: what the store lost it cannot name.
 */
static void check_provenance(struct world *w, struct proc *p, int ns, uint64_t id)
{
    idmint_grant_info *grants = NULL;
    char fp[IDMINT_HOLDER_FP_LEN + 1];
    size_t n = 0, i;
    int rc, found = 0;

    if (p->opened_at[ns] <= w->rewound_at)
        return;
    rc = idmint_trace(w->admin, handle_name(p, ns), id, &grants, &n);
    if (rc != 0) {
        violation(w, "tracing %" PRIu64 " in '%s' failed: %s", id, handle_name(p, ns),
                  idmint_errmsg());
        return;
    }
    idmint__holder_fingerprint(p->holder[ns], fp);
    for (i = 0; i < n; i++) {
        const idmint_grant_info *g = idmint_grant_info_at(grants, i);

        found |= strcmp(g->holder, p->holder[ns]) == 0 || strcmp(g->holder, fp) == 0;
    }
    idmint_free(grants);
    w->res->traced++;
    if (!found)
        violation(w,
                  "p%u (life %u) minted %" PRIu64 " in '%s', but none of the %zu grants that "
                  "could have minted it is its holder's",
                  p->index, p->life, id, handle_name(p, ns), n);
}

static void proc_mint(struct world *w, struct proc *p, int ns)
{
    uint64_t ids[BATCH_MAX];
    size_t n = 1 + rng_below(&w->rng, BATCH_MAX);
    int rc;

    w->current = p;
    rc = n == 1 ? idmint_next(p->h[ns], ids) : idmint_next_n(p->h[ns], ids, n);
    w->current = NULL;
    hash_u64(w, (uint64_t)(int64_t)rc);
    if (rc == 0) {
        note(w, "p%u mints %zu in %s: %" PRIu64 "..%" PRIu64, p->index, n, handle_name(p, ns),
             ids[0], ids[n - 1]);
        check_batch(w, p, ns, ids, n);
        check_provenance(w, p, ns, ids[n - 1]);
        return;
    }
    note(w, "p%u mint %s: %s: %s", p->index, handle_name(p, ns), idmint_strerror(rc),
         idmint_errmsg());
    if (rc == IDMINT_EINVAL || rc == IDMINT_ENOMEM || rc == IDMINT_EFORKED) {
        violation(w, "mint failed with %s: %s", idmint_strerror(rc), idmint_errmsg());
    } else if (is_final(rc)) {
        /* The handle is done: the program closes it and opens another later. */
        proc_close_handle(w, p, ns);
    }
}

static void proc_drive(struct world *w, struct proc *p, int ns)
{
    int rc;

    w->current = p;
    rc = idmint__handle_drive(p->h[ns]);
    w->current = NULL;
    hash_u64(w, (uint64_t)(int64_t)rc);
    note(w, "p%u background %s: %s", p->index, handle_name(p, ns),
         rc == 0 ? "ok" : idmint_strerror(rc));
}

/* ---- the operator ---- */

static void force_release(struct world *w)
{
    uint32_t worker = (uint32_t)rng_below(&w->rng, WORKERS);
    int rc = idmint_worker_force_release(w->admin, w->gens[0][w->cur[0]].name, 0, worker);

    hash_u64(w, (uint64_t)(int64_t)rc);
    w->res->force_releases += rc == 0;
    note(w, "operator force-releases worker %u: %s", worker, rc == 0 ? "ok" : idmint_errmsg());
}

/*
 * A careless client (another implementation, an old version) takes a worker
 * id and gives it back at once, reporting that it minted nothing: final
 * time 1. The authority must not let that figure reopen what the previous
 * holder minted.
 */
static void careless_release(struct world *w)
{
    struct idmint__lease lease;
    idmint_ns_info s;
    int rc;

    idmint_ns_info_init(&s, IDMINT_KIND_SNOWFLAKE);
    rc = idmint_ns_get(w->admin, w->gens[0][w->cur[0]].name, &s);

    memset(&lease, 0, sizeof(lease));
    if (rc == 0)
        rc = idmint__incarnation(lease.holder);
    if (rc == 0)
        rc = idmint__authority_lease_take(w->admin, &s, LEASE_MS, &lease);
    if (rc == 0)
        rc = idmint__authority_lease_release(w->admin, &s, &lease, 1);
    hash_u64(w, (uint64_t)(int64_t)rc);
    w->res->careless_releases++;
    note(w, "a careless client takes worker %u and releases it saying it minted nothing: %s",
         lease.worker_id, rc == 0 ? "ok" : idmint_errmsg());
}

/*
 * The process forks; the child asks its parent's handle for an ID (and
 * _exits), as a pre-fork server's worker would. The contract: IDMINT_EFORKED.
 * An ID it got anyway is recorded as the child's, so that the checker sees
 * it collide with the parent's next.
 */
static void proc_fork(struct world *w, struct proc *p, int ns)
{
    struct {
        int rc;
        uint64_t id;
    } got = {-1, 0};
    struct proc child = {.w = w, .index = PROCS + p->index, .life = p->life};
    int fds[2], status = 0;
    pid_t pid;

    if (pipe(fds) != 0) {
        violation(w, "pipe: cannot fork the process");
        return;
    }
    fflush(w->out);
    pid = fork();
    if (pid == 0) {
        close(fds[0]);
        w->current = p;
        got.rc = idmint_next(p->h[ns], &got.id);
        _exit(write(fds[1], &got, sizeof(got)) == (ssize_t)sizeof(got) ? 0 : 1);
    }
    close(fds[1]);
    if (pid < 0 || read(fds[0], &got, sizeof(got)) != (ssize_t)sizeof(got) ||
        waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        close(fds[0]);
        violation(w, "the forked child of p%u did not report (status %d)", p->index, status);
        return;
    }
    close(fds[0]);
    w->res->forks++;
    hash_u64(w, (uint64_t)(int64_t)got.rc);
    note(w, "p%u forks; its child asks the parent's %s handle: %s", p->index, handle_name(p, ns),
         got.rc == 0 ? "an ID" : idmint_strerror(got.rc));
    if (got.rc == 0) {
        child.last[ns] = 0;
        child.gen[ns] = p->gen[ns];
        check_batch(w, &child, ns, &got.id, 1);
    } else if (got.rc != IDMINT_EFORKED) {
        violation(w, "a forked child's mint failed with %s, not %s", idmint_strerror(got.rc),
                  idmint_strerror(IDMINT_EFORKED));
    }
}

/* Copy one SQLite database file onto another through SQLite's backup API. */
static int copy_database(const char *from, const char *to)
{
    sqlite3 *src = NULL, *dst = NULL;
    sqlite3_backup *b;
    int rc = sqlite3_open_v2(from, &src, SQLITE_OPEN_READONLY, NULL);

    if (rc == SQLITE_OK)
        rc = sqlite3_open(to, &dst);
    if (rc == SQLITE_OK)
        sqlite3_busy_timeout(dst, 5000);
    if (rc == SQLITE_OK && (b = sqlite3_backup_init(dst, "main", src, "main")) != NULL) {
        rc = sqlite3_backup_step(b, -1);
        rc = sqlite3_backup_finish(b) == SQLITE_OK && rc == SQLITE_DONE ? SQLITE_OK : rc;
    } else if (rc == SQLITE_OK) {
        rc = sqlite3_errcode(dst);
    }
    sqlite3_close(src);
    sqlite3_close(dst);
    return rc == SQLITE_OK ? 0 : -1;
}

/*
 * The operator copies the store while it serves: with idmint's own backup
 * (marked: refused until fenced) or with a plain copy that idmint knows
 * nothing of.
 */
static void take_copy(struct world *w)
{
    int is_marked = (int)rng_below(&w->rng, 2), rc;

    if (w->has_copy)
        unlink(w->copy_path);
    snprintf(w->copy_path, sizeof(w->copy_path), "%s/copy.%" PRIu64 ".db", w->cfg->dir,
             ++w->copies);
    rc = is_marked ? idmint_authority_backup(w->admin, w->copy_path)
                   : copy_database(w->live_path, w->copy_path);
    w->has_copy = rc == 0;
    w->is_copy_marked = is_marked;
    memcpy(w->copy_cur, w->cur, sizeof(w->cur));
    hash_u64(w, (uint64_t)(int64_t)rc);
    note(w, "operator copies the store (%s): %s", is_marked ? "idmint authority backup" : "plain",
         rc == 0 ? "ok" : idmint_errmsg());
}

/*
 * The store at @p from becomes the live one under the running processes,
 * whose namespaces, as it knew them (@p cur), are what programs open from
 * now; it awaits the operator's fence. -1 (a violation) when it could not.
 */
static int put_back(struct world *w, const char *from, const uint32_t *cur)
{
    if (copy_database(from, w->live_path) != 0) {
        violation(w, "could not put %s in place of the store", from);
        return -1;
    }
    w->needs_fence = 1;
    w->rewound_at = w->event + 1;
    memcpy(w->cur, cur, sizeof(w->cur));
    return 0;
}

/* The copy is put back under the live processes, as a careless restore does. */
static void restore_copy(struct world *w)
{
    if (put_back(w, w->copy_path, w->copy_cur) != 0)
        return;
    w->res->restores++;
    note(w, "operator puts the %s copy back under the running processes",
         w->is_copy_marked ? "marked" : "plain");
}

/*
 * The fence after a restore: snowflake namespaces quarantined for the longest
 * lease plus the clocks' skew; the range moved above the highest ID in use
 * downstream (the checker knows it, as an operator reads it from the data)
 * or above the operator's own last fence if higher (a paused process of a
 * history lost since may hold a block from there, unminted), plus a margin,
 * or skipped ahead when the store already stands higher.
 */
static void fence(struct world *w)
{
    const uint32_t quarantine_ms = LEASE_MS + (uint32_t)(MAX_SKEW_US / 1000) + 1;
    uint64_t above = w->range_high > w->range_fenced_to ? w->range_high : w->range_fenced_to;
    idmint_fence_range ranges[GENERATIONS];
    idmint_ns_info *list = NULL, info;
    size_t n = 0, k, i;
    int rc = idmint_ns_list(w->admin, &list, &n);

    /* Every range namespace of the store, the lineage's old ones too. */
    for (i = 0, k = 0; rc == 0 && i < n && k < GENERATIONS; i++) {
        const idmint_ns_info *ns = idmint_ns_info_at(list, i);

        if (ns->kind != IDMINT_KIND_RANGE)
            continue;
        ranges[k].ns = ns->name;
        ranges[k].is_skip = ns->next_value > above;
        ranges[k].value = ranges[k].is_skip ? RANGE_SKIP : above + RANGE_SKIP;
        k++;
    }
    if (rc == 0)
        rc = idmint_authority_fence(w->admin, ranges, k, quarantine_ms);
    hash_u64(w, (uint64_t)(int64_t)rc);
    w->needs_fence = rc != 0;
    w->res->fences += rc == 0;
    note(w, "operator fences the store: %s", rc == 0 ? "ok" : idmint_errmsg());
    for (i = 0; rc == 0 && i < k; i++) {
        idmint_ns_info_init(&info, IDMINT_KIND_RANGE);
        if (idmint_ns_get(w->admin, ranges[i].ns, &info) == 0 &&
            info.next_value > w->range_fenced_to)
            w->range_fenced_to = info.next_value;
    }
    idmint_free(list);
}

/* The replica catches up with the store: it lags by up to replica_lag_events. */
static void replica_follow(struct world *w)
{
    if (w->event - w->replica_synced_at < w->replica_lag_events)
        return;
    w->replica_synced_at = w->event;
    w->has_replica = copy_database(w->live_path, w->replica_path) == 0;
    memcpy(w->replica_cur, w->cur, sizeof(w->cur));
    if (!w->has_replica)
        violation(w, "could not copy the store to its replica");
}

/*
 * The store fails over to its replica, which lags: what it had not received
 * is gone, as after an unmarked restore. The operator fences later, as
 * docs/multi-node.md says to after promoting a replica that may lag.
 */
static void failover(struct world *w)
{
    if (!w->has_replica || put_back(w, w->replica_path, w->replica_cur) != 0)
        return;
    w->res->failovers++;
    note(w, "the store fails over to a replica %" PRIu64 " events behind",
         w->event - w->replica_synced_at);
}

/* The store loses its quorum: every process's call fails for a while. */
static void outage(struct world *w)
{
    uint64_t us = 100000u + rng_below(&w->rng, 1900000u);

    w->outage_until_us = w->now_us + us;
    w->res->outages++;
    note(w, "the store loses its quorum for %" PRIu64 " ms", us / 1000u);
}

/*
 * The operator disables the current namespace of a lineage, or enables it
 * again: holders mint on until their lease or range runs out, and then get
 * IDMINT_EDISABLED.
 */
static void toggle_disabled(struct world *w, int ns)
{
    const char *name = w->gens[ns][w->cur[ns]].name;
    idmint_ns_info info;
    int rc, off;

    idmint_ns_info_init(&info, IDMINT_KIND_RANGE);
    rc = idmint_ns_get(w->admin, name, &info);
    off = rc == 0 && info.is_disabled;
    if (rc == 0)
        rc = idmint_ns_set_disabled(w->admin, name, !off);
    hash_u64(w, (uint64_t)(int64_t)rc);
    w->res->disables += rc == 0;
    note(w, "operator %s '%s': %s", off ? "enables" : "disables", name,
         rc == 0 ? "ok" : idmint_errmsg());
}

/*
 * The operator migrates a lineage to a new namespace of the same layout:
 * its floor lies above every ID the old one issued or can still issue.
 * Programs move to it as they reopen; holders of the old mint on meanwhile.
 */
static void migrate(struct world *w, int ns)
{
    struct generation *g;
    idmint_ns_info old, next, made;
    uint32_t n = w->n_gens[ns];
    int rc;

    if (n == GENERATIONS)
        return;
    g = &w->gens[ns][n];
    snprintf(g->name, sizeof(g->name), "%s.%u", ns_bases[ns], n);
    idmint_ns_info_init(&old, IDMINT_KIND_RANGE);
    rc = idmint_ns_get(w->admin, w->gens[ns][w->cur[ns]].name, &old);
    if (rc == 0) {
        idmint_ns_info_init(&next, old.kind);
        snprintf(next.name, sizeof(next.name), "%s", g->name);
        next.layout = old.layout;
        next.block = old.block;
        next.max_block = old.max_block;
        idmint_ns_info_init(&made, old.kind);
        rc = idmint_ns_migrate(w->admin, old.name, &next, &made);
    }
    hash_u64(w, (uint64_t)(int64_t)rc);
    note(w, "operator migrates '%s' to '%s': %s", w->gens[ns][w->cur[ns]].name, g->name,
         rc == 0 ? "ok" : idmint_errmsg());
    if (rc != 0)
        return;
    g->floor = made.floor;
    w->cur[ns] = n;
    w->n_gens[ns]++;
    w->res->migrations++;
}

/* ---- the world ---- */

static int setup(struct world *w)
{
    char admin_url[600];
    idmint_ns_info s, r;
    int rc, ns;

    if (ts_fault_register() != 0)
        return -1;
    ts_fault_reset();
    ts_fault_set_decider(decide_fault, w);
    snprintf(w->live_path, sizeof(w->live_path), "%s/sim.db", w->cfg->dir);
    snprintf(w->url, sizeof(w->url), "fault:sqlite:%s", w->live_path);
    snprintf(w->replica_path, sizeof(w->replica_path), "%s/replica.db", w->cfg->dir);
    w->replica_lag_events = 10 + rng_below(&w->rng, 400);
    idmint__clock_init(&w->admin_clock, operator_wall_ms, operator_mono_ns, w);
    /* The operator's calls pass no fault, and its tools (backup, fence) take the store itself. */
    snprintf(admin_url, sizeof(admin_url), "sqlite:%s", w->live_path);
    rc = idmint__authority_open_clock(&w->admin, admin_url, 0, &w->admin_clock, NULL);
    if (rc != 0) {
        fprintf(w->out, "sim: open %s: %s\n", admin_url, idmint_errmsg());
        return -1;
    }
    idmint_ns_info_init(&s, IDMINT_KIND_SNOWFLAKE);
    snprintf(s.name, sizeof(s.name), "s");
    s.layout.time_bits = 41;
    s.layout.region_bits = 0;
    s.layout.worker_bits = 2;
    s.layout.sequence_bits = 4;
    /* Each seed its own unit: a coarse one makes the edge units around a
     * lease's E wide enough that two holders meet in them. */
    w->clock_wait_ms = rng_below(&w->rng, 2) != 0 ? 50 : LEASE_MS + 100;
    s.layout.unit_ms =
        unit_choices[rng_below(&w->rng, sizeof(unit_choices) / sizeof(unit_choices[0]))];
    idmint_ns_info_init(&r, IDMINT_KIND_RANGE);
    snprintf(r.name, sizeof(r.name), "r");
    r.block = 16;
    r.max_block = 64;
    for (ns = 0; ns < NS_COUNT; ns++) {
        snprintf(w->gens[ns][0].name, sizeof(w->gens[ns][0].name), "%s", ns_bases[ns]);
        w->n_gens[ns] = 1;
    }
    if (idmint_ns_create(w->admin, &s) != 0 || idmint_ns_create(w->admin, &r) != 0) {
        fprintf(w->out, "sim: creating the namespaces: %s\n", idmint_errmsg());
        return -1;
    }
    return 0;
}

static struct proc *pick(struct world *w, int want_up)
{
    uint32_t start = (uint32_t)rng_below(&w->rng, PROCS), i;

    for (i = 0; i < PROCS; i++) {
        struct proc *p = &w->procs[(start + i) % PROCS];

        if (p->is_up == want_up)
            return p;
    }
    return NULL;
}

/* One event, picked by weight from the seed's stream. */
static int is_skipped(const struct sim_config *c, uint64_t event)
{
    return c->skip != NULL && event < c->skip_events &&
           (((unsigned)c->skip[event / 8] >> (event % 8)) & 1u) != 0;
}

static void step(struct world *w)
{
    uint64_t roll;
    struct proc *p;
    int ns;

    w->history[w->event % HISTORY][0] = '\0'; /* an event that says nothing leaves no line */
    if (is_skipped(w->cfg, w->event))
        return;
    rng_for_event(&w->rng, w->cfg->seed, w->event, 0);
    rng_for_event(&w->fault_rng, w->cfg->seed, w->event, UINT64_C(0x5bd1e9955bd1e995));
    roll = rng_below(&w->rng, 1000);
    ns = (int)rng_below(&w->rng, NS_COUNT);
    hash_u64(w, roll);
    replica_follow(w);
    if (roll < 345) { /* mint */
        p = pick(w, 1);
        if (p != NULL && p->h[ns] != NULL && p->gen[ns] != w->cur[ns] && rng_below(&w->rng, 4) == 0)
            proc_close_handle(w, p, ns); /* the program moves to the namespace it is told of */
        else if (p != NULL && p->h[ns] != NULL)
            proc_mint(w, p, ns);
        else if (p != NULL)
            proc_start(w, p); /* its handle ended: the program opens another */
    } else if (roll < 545) {  /* a handle's background work comes round */
        p = pick(w, 1);
        if (p != NULL && p->h[ns] != NULL)
            proc_drive(w, p, ns);
    } else if (roll < 785) { /* a little time passes */
        w->now_us += rng_below(&w->rng, 5000);
    } else if (roll < 797) { /* NTP starts slewing one process's clock, back or forward */
        p = &w->procs[rng_below(&w->rng, PROCS)];
        proc_clock_move(p, (int64_t)rng_below(&w->rng, 1600001) - 800000, 0);
        w->res->clock_slews++;
        note(w, "p%u's wall clock starts slewing toward offset %+" PRId64 " ms", p->index,
             p->slew_to_us / 1000);
    } else if (roll == 797) {
        failover(w);
    } else if (roll == 798) {
        outage(w);
    } else if (roll < 830) { /* a long pause: leases run out unless renewed */
        w->now_us += 50000 + rng_below(&w->rng, 600000);
        w->res->pauses++;
        note(w, "time jumps to %" PRIu64 " ms", w->now_us / 1000u);
    } else if (roll < 880) {
        if ((p = pick(w, 1)) != NULL)
            proc_end(w, p, 1);
    } else if (roll < 950) {
        if ((p = pick(w, 0)) != NULL)
            proc_start(w, p);
    } else if (roll < 965) {
        if ((p = pick(w, 1)) != NULL)
            proc_end(w, p, 0);
    } else if (roll < 977) { /* a clock step, back or forward, on one process */
        p = &w->procs[rng_below(&w->rng, PROCS)];
        proc_clock_move(p, (int64_t)rng_below(&w->rng, 1600001) - 800000, 1);
        w->res->clock_steps++;
        note(w, "p%u's wall clock steps to offset %+" PRId64 " ms", p->index, p->slew_to_us / 1000);
    } else if (roll < 983) {
        force_release(w);
    } else if (roll < 985) {
        if (rng_below(&w->rng, 3) == 0)
            migrate(w, ns);
        else
            toggle_disabled(w, ns);
    } else if (roll < 993) {
        careless_release(w);
    } else if (roll < 997) {
        p = pick(w, 1);
        if (p != NULL && p->h[ns] != NULL)
            proc_fork(w, p, ns);
    } else if (!w->has_copy || rng_below(&w->rng, 4) != 0) {
        take_copy(w);
    } else {
        restore_copy(w);
    }
    /* A restore is fenced some while after it, as an operator who notices. */
    if (w->needs_fence && rng_below(&w->rng, 100) < 2)
        fence(w);
}

/*
 * Liveness: the faults stop, the operator fences what still awaits a fence,
 * and every process must mint in every namespace within LIVENESS_US.
 */
static void recover(struct world *w)
{
    uint64_t start = w->now_us, id;
    uint32_t i;
    int ns, rc;

    w->is_quiet = 1;
    if (w->needs_fence)
        fence(w);
    if (w->needs_fence) {
        violation(w, "the operator's fence failed once faults stopped");
        return;
    }
    for (ns = 0; ns < NS_COUNT; ns++)
        if (idmint_ns_set_disabled(w->admin, w->gens[ns][w->cur[ns]].name, 0) != 0) {
            violation(w, "enabling '%s' failed: %s", w->gens[ns][w->cur[ns]].name, idmint_errmsg());
            return;
        }
    for (i = 0; i < PROCS && !w->res->violation; i++) {
        struct proc *p = &w->procs[i];

        for (ns = 0; ns < NS_COUNT; ns++)
            if (p->h[ns] != NULL && p->gen[ns] != w->cur[ns])
                proc_close_handle(w, p, ns);
        proc_start(w, p);
        for (ns = 0; ns < NS_COUNT && !w->res->violation; ns++) {
            for (rc = -1; rc != 0;) {
                w->event++; /* each try is an event of its own in the story */
                w->history[w->event % HISTORY][0] = '\0';
                rng_for_event(&w->rng, w->cfg->seed, w->event, 0);
                if (w->now_us - start > LIVENESS_US) {
                    violation(w,
                              "p%u could not mint in '%s' within %" PRIu64
                              " ms after the faults stopped",
                              p->index, w->gens[ns][w->cur[ns]].name, LIVENESS_US / 1000u);
                    return;
                }
                if (p->h[ns] == NULL)
                    proc_open(w, p, ns);
                if (p->h[ns] == NULL) {
                    w->now_us += 10000;
                    continue;
                }
                w->current = p;
                rc = idmint_next(p->h[ns], &id);
                w->current = NULL;
                hash_u64(w, (uint64_t)(int64_t)rc);
                if (rc == 0) {
                    check_batch(w, p, ns, &id, 1);
                } else if (is_final(rc)) {
                    note(w, "p%u mint %s: %s: closes the handle", p->index, handle_name(p, ns),
                         idmint_strerror(rc));
                    proc_close_handle(w, p, ns);
                } else {
                    proc_drive(w, p, ns);
                    w->now_us += 10000;
                }
            }
        }
        if (w->now_us - start > w->res->recovery_ms * 1000u)
            w->res->recovery_ms = (w->now_us - start) / 1000u;
    }
}

void sim_config_default(struct sim_config *c)
{
    memset(c, 0, sizeof(*c));
    c->seed = 1;
    c->events = 20000;
    c->fault_permille = -1;
}

int sim_run(const struct sim_config *c, struct sim_result *r, FILE *out)
{
    struct world *w = calloc(1, sizeof(*w));
    uint32_t i;
    int ns, rc = 0;

    memset(r, 0, sizeof(*r));
    if (w == NULL)
        return -1;
    r->hash = UINT64_C(0xcbf29ce484222325);
    w->cfg = c;
    w->res = r;
    w->out = out;
    w->rng.s = c->seed;
    w->fault_rng.s = c->seed ^ UINT64_C(0x5bd1e9955bd1e995);
    w->fault_permille = c->fault_permille >= 0 ? c->fault_permille : (int)rng_below(&w->rng, 60);
    w->driver.now_us = driver_now_us;
    w->driver.sleep_us = driver_sleep_us;
    w->driver.ctx = w;
    idmint__driven_start(&w->driver);
    for (i = 0; i < PROCS; i++) {
        w->procs[i].w = w;
        w->procs[i].index = i;
        w->procs[i].drift_ppm = (int32_t)rng_below(&w->rng, 2 * DRIFT_PPM + 1) - DRIFT_PPM;
    }
    if (setup(w) != 0) {
        rc = -1;
        goto out;
    }
    for (w->event = 0; w->event < c->events && !r->violation; w->event++)
        step(w);
    if (!r->violation)
        recover(w);
    /* Wind down: every process closes, as at the end of a day. */
    for (i = 0; i < PROCS; i++)
        if (w->procs[i].is_up)
            proc_end(w, &w->procs[i], 0);
    check_unique(w);
    if (r->violation && !c->verbose) /* verbose: every event was printed already */
        print_history(w);
    r->events = w->event;
    r->sim_ms = w->now_us / 1000u;
out:
    ts_fault_set_decider(NULL, NULL);
    idmint_authority_close(w->admin);
    idmint__driven_start(NULL);
    for (ns = 0; ns < NS_COUNT; ns++) {
        free(w->ids[ns]);
        free(w->seen[ns]);
    }
    free(w);
    return rc;
}
