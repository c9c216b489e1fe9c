/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The deterministic simulator (tests/sim/README.md): many simulated
 * processes run the library's own handles, one OS thread, in driven mode
 * (src/internal.h, "Driven mode"), against a real SQLite authority behind
 * the fault store (tests/support/fault_store.h). A seeded generator picks
 * every event and every store fault, so one seed replays one run exactly.
 */
#ifndef IDMINT_SIM_H
#define IDMINT_SIM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* What one run does; sim_config_default() fills in the defaults. */
struct sim_config {
    uint64_t seed;
    uint64_t events;    /* events to run before the world winds down */
    int fault_permille; /* store calls that fail or lose their reply; -1: from the seed */
    int verbose;        /* print every event */
    const char *dir;    /* where the run's authority and witness go (made, then removed) */
    /* Events that do nothing (a bit per event, below skip_events): a shrunk
     * run. Every event draws its randomness from (seed, its number), so
     * dropping one leaves the others' choices as they were. */
    const uint8_t *skip;
    uint64_t skip_events;
};

/* What a run found and did. */
struct sim_result {
    uint64_t hash; /* of the event trace and every ID: equal runs, equal hashes */
    uint64_t events;
    uint64_t sim_ms;        /* simulated time covered */
    uint64_t ids;           /* IDs checked */
    uint64_t traced;        /* of them, traced to a grant of their minter's (provenance) */
    uint64_t faults_failed; /* store calls failed before the store saw them */
    uint64_t faults_lost;   /* store calls performed whose reply was lost */
    uint64_t faults_late;   /* store calls answered after a delay that let time pass */
    uint64_t faults_outage; /* store calls failed because the store had lost its quorum */
    uint64_t outages;       /* times the store lost its quorum for a while */
    uint64_t failovers;     /* times the store failed over to a replica that lagged */
    uint64_t crashes, starts, closes, clock_steps, clock_slews, force_releases, pauses, restores;
    uint64_t fences, forks, careless_releases, disables, migrations;
    /* Liveness: once faults stop and the operator has fenced, the longest
     * simulated time any process took to mint again in every namespace. */
    uint64_t recovery_ms;
    int violation;              /* 0: none; else what the checker found (message printed) */
    const char *violation_what; /* its kind (the checker's message format): equal kinds, equal */
    uint64_t violation_event;
};

void sim_config_default(struct sim_config *c);

/*
 * Run one seed. Prints a violation, with the events that led to it, to
 * @p out. Returns 0 when the run completed (violation or not), else -1 when
 * it could not be set up (the message says why).
 */
int sim_run(const struct sim_config *c, struct sim_result *r, FILE *out);

#endif
