/* SPDX-License-Identifier: Apache-2.0 */
/*
 * IDs minted per second by each of the daemon's handles over the last
 * THROUGHPUT_SECONDS, for the status page's chart. A thread of its own reads
 * the per-thread counters of /metrics once a second and keeps the
 * differences in memory: it never touches the store, so a slow store cannot
 * leave gaps in the chart, and nothing is written anywhere.
 */
#ifndef IDMINTD_THROUGHPUT_H
#define IDMINTD_THROUGHPUT_H

#include <stddef.h>
#include <stdint.h>

#define THROUGHPUT_SECONDS 600

struct daemon;

/* Start the sampling thread. 0, or -1 when it cannot start. */
int throughput_start(struct daemon *d);
/* Stop and join it; a no-op when it never started. */
void throughput_stop(void);
/*
 * Copy the last THROUGHPUT_SECONDS counts of handle slot @p slot into @p out,
 * oldest first (0 before the daemon started or the slot was opened), and
 * the wall ms of the newest second's end into *end_ms (0 before the first
 * sample). Thread-safe.
 */
void throughput_read(size_t slot, uint32_t out[THROUGHPUT_SECONDS], int64_t *end_ms);

#endif /* IDMINTD_THROUGHPUT_H */
