/* SPDX-License-Identifier: Apache-2.0 */
/* /metrics: the daemon's counters and handles in the Prometheus text format. */
#ifndef IDMINTD_PROMETHEUS_H
#define IDMINTD_PROMETHEUS_H

#include <stddef.h>

struct daemon;
/*
 * The Prometheus text for @p d, malloc'd (the caller frees it), its length
 * in @p len; NULL when out of memory. What it reads of the store is the
 * store sampler's latest pass (sampler.h): a scrape never calls the store.
 * Thread-safe.
 */
char *prometheus_render(struct daemon *d, size_t *len);

#endif /* IDMINTD_PROMETHEUS_H */
