/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Helpers shared by the tests: temporary folders, a fake clock that tests
 * step by hand, the volume scale for sanitizer builds, and the CLI's path.
 */
#ifndef IDMINT_TESTSUPPORT_H
#define IDMINT_TESTSUPPORT_H

#include "pg_url.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* A fresh folder under $TMPDIR (or /tmp); the path is malloc'd. NULL on failure. */
char *ts_tempdir(void);
/* Remove @p dir and everything in it, then free the string. NULL is a no-op. */
void ts_rmtree(char *dir);
/* "sqlite:<dir>/<file>" in a static-free malloc'd string. */
char *ts_sqlite_url(const char *dir, const char *file);

/* Volume divisor for slow (sanitizer) builds: $IDMINT_TIMEOUT_SCALE, at least 1. */
unsigned ts_scale(void);

/*
 * A clock a test steps by hand. Pass ts_fake_wall_ms / ts_fake_mono_ns with
 * the struct as ctx in idmint_options. wall_ms may jump either way;
 * mono_ns must only grow (ts_fake_advance moves both).
 */
struct ts_fake_clock {
    _Atomic int64_t wall_ms;
    _Atomic uint64_t mono_ns;
};
void ts_fake_init(struct ts_fake_clock *c, int64_t wall_ms);
void ts_fake_advance(struct ts_fake_clock *c, int64_t ms);
void ts_fake_step_wall(struct ts_fake_clock *c, int64_t ms);
int64_t ts_fake_wall_ms(void *ctx);
uint64_t ts_fake_mono_ns(void *ctx);

/* Sort @p ids and return how many values occur more than once. */
size_t ts_count_duplicates(uint64_t *ids, size_t n);

#endif /* IDMINT_TESTSUPPORT_H */
