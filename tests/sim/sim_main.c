/* SPDX-License-Identifier: Apache-2.0 */
/*
 * idmint_sim: run the deterministic simulator (sim.h) over one seed or over
 * fresh seeds for a time budget; exit 1 at the first violation, naming the
 * seed and the command that replays it.
 *
 *   idmint_sim --seed S [--events N] [--faults PERMILLE] [--verbose]
 *   idmint_sim --budget SECONDS [--seed FIRST]     fresh seeds, one after another
 *   idmint_sim --seed S --replay-check             the seed twice: equal hashes
 *   idmint_sim --budget SECONDS --expect-violation a mutant's run: exit 0 once one is found
 *   idmint_sim --seed S --shrink [--budget SECONDS] a failing seed's story, shortened
 *   idmint_sim --seed S --events N --skip A-B,C,...  a shortened run, replayed
 * Runs go to $TMPDIR, else /dev/shm (no disk: the store's fsyncs cost nothing),
 * else /tmp.
 */
#define _GNU_SOURCE /* nftw's FTW_DEPTH and FTW_PHYS */
#include "sim.h"

#include <ftw.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static double seconds_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One seed in a folder of its own, removed afterwards; its messages to @p out. -1: could not run.
 */
static int run_to(struct sim_config *c, struct sim_result *r, FILE *out)
{
    const char *tmp = getenv("TMPDIR");
    char path[512], wdir[600];
    int rc;

    if (tmp == NULL || *tmp == '\0')
        tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(path, sizeof(path), "%s/idmint-sim.XXXXXX", tmp);
    if (mkdtemp(path) == NULL) {
        perror("idmint_sim: mkdtemp");
        return -1;
    }
    /* This host's evidence of the store's history (src/witness.c) is the run's own. */
    snprintf(wdir, sizeof(wdir), "%s/witness", path);
    setenv("IDMINT_WITNESS_DIR", wdir, 1);
    c->dir = path;
    rc = sim_run(c, r, out);
    nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    return rc;
}

static int run_one(struct sim_config *c, struct sim_result *r)
{
    return run_to(c, r, stdout);
}

/* ---- shrinking: drop the events a violation does not need ---- */

static int bit_of(const uint8_t *bits, uint64_t i)
{
    return (int)(((unsigned)bits[i / 8] >> (i % 8)) & 1u);
}

static void bit_set(uint8_t *bits, uint64_t i, int on)
{
    if (on)
        bits[i / 8] |= (uint8_t)(1u << (i % 8));
    else
        bits[i / 8] &= (uint8_t) ~(1u << (i % 8));
}

/* "A-B,C,...": the events to skip, below @p events. 0, or -1 when malformed. */
static int parse_skip(const char *text, uint64_t events, uint8_t *bits)
{
    char *end;

    while (*text != '\0') {
        uint64_t a = strtoull(text, &end, 10), b = a, i;

        if (end == text)
            return -1;
        if (*end == '-') {
            text = end + 1;
            b = strtoull(text, &end, 10);
            if (end == text || b < a)
                return -1;
        }
        if (*end != ',' && *end != '\0')
            return -1;
        for (i = a; i <= b && i < events; i++)
            bit_set(bits, i, 1);
        text = *end == ',' ? end + 1 : end;
    }
    return 0;
}

/* The events @p bits skips, as "A-B,C,..." into a malloc'd string (NULL: out of memory). */
static char *format_skip(const uint8_t *bits, uint64_t events)
{
    size_t size = 64, len = 0;
    char *text = malloc(size), *grown;
    uint64_t i = 0, j;

    if (text == NULL)
        return NULL;
    text[0] = '\0';
    while (i < events) {
        if (!bit_of(bits, i)) {
            i++;
            continue;
        }
        for (j = i; j + 1 < events && bit_of(bits, j + 1); j++)
            ;
        if (size - len < 48) {
            if ((grown = realloc(text, size * 2)) == NULL) {
                free(text);
                return NULL;
            }
            text = grown;
            size *= 2;
        }
        len += (size_t)snprintf(text + len, size - len,
                                j == i ? "%s%" PRIu64 : "%s%" PRIu64 "-%" PRIu64,
                                len == 0 ? "" : ",", i, j);
        i = j + 1;
    }
    return text;
}

/*
 * Shorten a failing run: skip halves, then quarters, ... of the events
 * still kept, keeping each skip after which the run still ends in the same
 * kind of violation, until single events or @p budget seconds. Then replay
 * what is left with every event printed, and the command that does so.
 */
static int shrink(struct sim_config *c, double budget)
{
    struct sim_result r, failed;
    FILE *null = fopen("/dev/null", "w");
    uint64_t *kept, n_kept, chunk, start, i, runs = 0, events;
    uint8_t *bits, *again;
    char *text;
    int is_same;
    double t0 = seconds_now();

    if (null == NULL || run_to(c, &failed, null) != 0) {
        if (null != NULL)
            fclose(null);
        return 2;
    }
    if (!failed.violation) {
        fclose(null);
        printf("seed %" PRIu64 " ends in no violation: nothing to shrink\n", c->seed);
        return 1;
    }
    /* A violation among the events needs none after it; one found after
     * them (liveness, the final sort) needs them all to be there. */
    events = failed.violation_event < c->events ? failed.violation_event + 1 : c->events;
    c->events = events;
    bits = calloc(events / 8 + 1, 1);
    kept = malloc(events * sizeof(*kept));
    if (bits == NULL || kept == NULL) {
        fclose(null);
        free(bits);
        free(kept);
        return 2;
    }
    for (n_kept = 0; n_kept < events; n_kept++)
        kept[n_kept] = n_kept;
    c->skip = bits;
    c->skip_events = events;
    for (chunk = n_kept / 2; chunk >= 1 && seconds_now() - t0 < budget; chunk /= 2) {
        for (start = 0; start < n_kept && seconds_now() - t0 < budget; start += chunk) {
            uint64_t end = start + chunk < n_kept ? start + chunk : n_kept;

            for (i = start; i < end; i++)
                bit_set(bits, kept[i], 1);
            runs++;
            if (run_to(c, &r, null) != 0 || !r.violation ||
                r.violation_what != failed.violation_what)
                for (i = start; i < end; i++)
                    bit_set(bits, kept[i], 0);
        }
        for (i = 0, start = n_kept, n_kept = 0; i < start; i++)
            if (!bit_of(bits, kept[i]))
                kept[n_kept++] = kept[i];
    }
    fclose(null);
    printf("shrunk in %" PRIu64 " runs (%.0f s): %" PRIu64 " of %" PRIu64
           " events kept; the story of the shortened run:\n",
           runs, seconds_now() - t0, n_kept, events);
    c->verbose = 1;
    if (run_one(c, &r) != 0)
        return 2;
    /* The command must replay what ran: its --skip read back is these bits. */
    text = format_skip(bits, events);
    again = calloc(events / 8 + 1, 1);
    is_same = text != NULL && again != NULL && parse_skip(text, events, again) == 0 &&
              memcmp(again, bits, events / 8 + 1) == 0;
    printf("replay: idmint_sim --seed %" PRIu64 " --events %" PRIu64 " --skip %s --verbose\n",
           c->seed, events, text != NULL ? text : "(out of memory)");
    if (!is_same)
        printf("SHRINK: the printed --skip does not read back as the events skipped\n");
    else if (r.violation_what == failed.violation_what)
        printf("the shortened run ends in the same kind of violation\n");
    free(text);
    free(again);
    free(bits);
    free(kept);
    return r.violation_what == failed.violation_what && is_same ? 0 : 1;
}

/* What a run did, by kind: one seed's, or a budget's sum. */
static void print_counts(const struct sim_result *r)
{
    printf("store faults: %" PRIu64 " failed, %" PRIu64 " lost replies, %" PRIu64
           " late answers, %" PRIu64 " failed in %" PRIu64 " quorum losses; %" PRIu64
           " failovers to a lagging replica, %" PRIu64 " restores, %" PRIu64 " fences; %" PRIu64
           " starts, %" PRIu64 " crashes (kill -9), %" PRIu64 " closes, %" PRIu64 " forks, %" PRIu64
           " clock steps, %" PRIu64 " clock slews, %" PRIu64 " pauses, %" PRIu64
           " forced releases, %" PRIu64 " careless releases, %" PRIu64
           " disables or enables, %" PRIu64 " migrations\n",
           r->faults_failed, r->faults_lost, r->faults_late, r->faults_outage, r->outages,
           r->failovers, r->restores, r->fences, r->starts, r->crashes, r->closes, r->forks,
           r->clock_steps, r->clock_slews, r->pauses, r->force_releases, r->careless_releases,
           r->disables, r->migrations);
}

static void print_result(const struct sim_config *c, const struct sim_result *r)
{
    printf("seed %" PRIu64 ": %" PRIu64 " events, %.1f simulated s, %" PRIu64
           " IDs checked (%" PRIu64 " traced to their minter's grant), minting again %" PRIu64
           " ms after the faults stopped; hash %016" PRIx64 "%s\n",
           c->seed, r->events, (double)r->sim_ms / 1000.0, r->ids, r->traced, r->recovery_ms,
           r->hash, r->violation ? " VIOLATION" : "");
    printf("  ");
    print_counts(r);
}

/* Add one seed's counts to a budget's. */
static void add_result(struct sim_result *sum, const struct sim_result *r)
{
    sum->events += r->events;
    sum->sim_ms += r->sim_ms;
    sum->ids += r->ids;
    sum->traced += r->traced;
    sum->faults_failed += r->faults_failed;
    sum->faults_lost += r->faults_lost;
    sum->faults_late += r->faults_late;
    sum->faults_outage += r->faults_outage;
    sum->outages += r->outages;
    sum->failovers += r->failovers;
    sum->crashes += r->crashes;
    sum->starts += r->starts;
    sum->closes += r->closes;
    sum->clock_steps += r->clock_steps;
    sum->clock_slews += r->clock_slews;
    sum->force_releases += r->force_releases;
    sum->pauses += r->pauses;
    sum->restores += r->restores;
    sum->fences += r->fences;
    sum->forks += r->forks;
    sum->careless_releases += r->careless_releases;
    sum->disables += r->disables;
    sum->migrations += r->migrations;
    if (r->recovery_ms > sum->recovery_ms)
        sum->recovery_ms = r->recovery_ms;
}

/* The seed twice: 0 when both runs gave the same trace and IDs and no violation. */
static int replay_check(struct sim_config *c)
{
    struct sim_result r, again;

    if (run_one(c, &r) != 0 || run_one(c, &again) != 0)
        return 2;
    print_result(c, &r);
    print_result(c, &again);
    if (r.hash != again.hash || r.ids != again.ids || r.events != again.events) {
        printf("REPLAY DIFFERS: seed %" PRIu64 " gave hashes %016" PRIx64 " and %016" PRIx64 "\n",
               c->seed, r.hash, again.hash);
        return 1;
    }
    printf("replay: seed %" PRIu64 " ran twice to the same trace and IDs\n", c->seed);
    return r.violation ? 1 : 0;
}

/* One run of the seed: 0 when it found no violation. */
static int run_once(struct sim_config *c)
{
    struct sim_result r;

    if (run_one(c, &r) != 0)
        return 2;
    print_result(c, &r);
    return r.violation ? 1 : 0;
}

static void usage(void)
{
    fprintf(stderr, "usage: idmint_sim [--seed S] [--events N] [--faults PERMILLE] [--verbose]\n"
                    "                  [--budget SECONDS] [--replay-check] [--expect-violation]\n"
                    "                  [--shrink] [--skip A-B,C,...]\n");
}

int main(int argc, char **argv)
{
    struct sim_config c;
    struct sim_result r, sum;
    double budget = 0, start;
    int has_seed = 0, replay = 0, expect = 0, is_shrink = 0, i, rc;
    const char *skip = NULL;
    uint8_t *skip_bits = NULL;
    uint64_t seeds = 0;

    sim_config_default(&c);
    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

        if (strcmp(a, "--verbose") == 0) {
            c.verbose = 1;
        } else if (strcmp(a, "--replay-check") == 0) {
            replay = 1;
        } else if (strcmp(a, "--expect-violation") == 0) {
            expect = 1;
        } else if (strcmp(a, "--shrink") == 0) {
            is_shrink = 1;
        } else if (v != NULL && strcmp(a, "--skip") == 0) {
            skip = v;
            i++;
        } else if (v != NULL && strcmp(a, "--seed") == 0) {
            c.seed = strtoull(v, NULL, 10);
            has_seed = 1;
            i++;
        } else if (v != NULL && strcmp(a, "--events") == 0) {
            c.events = strtoull(v, NULL, 10);
            i++;
        } else if (v != NULL && strcmp(a, "--faults") == 0) {
            c.fault_permille = atoi(v);
            i++;
        } else if (v != NULL && strcmp(a, "--budget") == 0) {
            budget = atof(v);
            i++;
        } else {
            usage();
            return 2;
        }
    }
    if (skip != NULL && (is_shrink || budget > 0)) {
        fprintf(stderr, "idmint_sim: --skip replays one shortened run: not with --shrink or "
                        "--budget\n");
        return 2;
    }
    if (skip != NULL) {
        skip_bits = calloc(c.events / 8 + 1, 1);
        if (skip_bits == NULL || parse_skip(skip, c.events, skip_bits) != 0) {
            fprintf(stderr, "idmint_sim: --skip wants event numbers and ranges: 3,10-12\n");
            free(skip_bits);
            return 2;
        }
        c.skip = skip_bits;
        c.skip_events = c.events;
    }
    if (is_shrink)
        return shrink(&c, budget > 0 ? budget : 120);
    if (replay || budget <= 0) {
        rc = replay ? replay_check(&c) : run_once(&c);
        free(skip_bits);
        return rc;
    }
    if (!has_seed)
        c.seed = (uint64_t)time(NULL) * 1000u + (uint64_t)getpid() % 1000u;
    memset(&sum, 0, sizeof(sum));
    start = seconds_now();
    printf("fresh seeds from %" PRIu64 " for %.0f s\n", c.seed, budget);
    while (seconds_now() - start < budget) {
        if (run_one(&c, &r) != 0)
            return 2;
        seeds++;
        add_result(&sum, &r);
        if (r.violation) {
            print_result(&c, &r);
            printf("replay: idmint_sim --seed %" PRIu64 " --events %" PRIu64 " --verbose\n", c.seed,
                   c.events);
            printf("shorten its story: idmint_sim --seed %" PRIu64 " --events %" PRIu64
                   " --shrink\n",
                   c.seed, c.events);
            if (expect)
                printf("found after %" PRIu64 " seeds, %.0f simulated s, %.1f s\n", seeds,
                       (double)sum.sim_ms / 1000.0, seconds_now() - start);
            return expect ? 0 : 1;
        }
        c.seed++;
    }
    printf("%" PRIu64 " seeds, %" PRIu64 " events, %.0f simulated s, %" PRIu64
           " IDs checked (%" PRIu64 " traced to their minter's grant) in %.1f s: no violation; "
           "every seed minted again within %" PRIu64 " ms of its faults stopping\n",
           seeds, sum.events, (double)sum.sim_ms / 1000.0, sum.ids, sum.traced,
           seconds_now() - start, sum.recovery_ms);
    print_counts(&sum);
    if (expect)
        printf("NOT FOUND: the planted defect went unseen for %.0f s\n", budget);
    return expect ? 1 : 0;
}
