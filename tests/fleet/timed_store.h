/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A "timed" store backend for the fleet drill: "timed:<inner url>" passes
 * every call to the inner store unchanged and records how long the lease and
 * range calls took, so each generator can report the authority's latency as
 * its own renewal and refill threads saw it. It changes no result.
 */
#ifndef IDMINT_FLEET_TIMED_STORE_H
#define IDMINT_FLEET_TIMED_STORE_H

#include <stddef.h>
#include <stdint.h>

enum timed_op {
    TIMED_OP_TAKE,
    TIMED_OP_RENEW,
    TIMED_OP_RELEASE,
    TIMED_OP_RESERVE,
    TIMED_OP__COUNT
};

/* One timed store call. */
struct timed_call {
    enum timed_op op;
    int rc;              /* what the inner store returned */
    int64_t start_ms;    /* Unix ms when the call began */
    uint32_t latency_us; /* wall time inside the inner store */
};

/* Register the "timed" scheme (once; later calls do nothing). 0 or an IDMINT code. */
int timed_store_register(void);

/* The name of @p op as the drill's report spells it: "take", "renew", ... */
const char *timed_op_name(enum timed_op op);

/*
 * Move up to @p max recorded calls, oldest first, into @p out and forget
 * them; returns how many. Safe from any thread.
 */
size_t timed_store_drain(struct timed_call *out, size_t max);

/* Calls that found the record buffer full and were counted nowhere else. */
uint64_t timed_store_dropped(void);

#endif /* IDMINT_FLEET_TIMED_STORE_H */
