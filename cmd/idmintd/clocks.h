/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The daemon's one door to the system clocks: wall time for what people
 * and other processes read (logs, the status page, lease ends), monotonic
 * time for every duration and deadline. Minting never reads these: the
 * library has its own clock (src/clock.c). All functions are thread-safe.
 */
#ifndef IDMINTD_CLOCKS_H
#define IDMINTD_CLOCKS_H

#include <stdint.h>

/* Wall-clock time in Unix ns (CLOCK_REALTIME); may step. */
int64_t clocks_wall_ns(void);
/* Wall-clock time in Unix ms. */
int64_t clocks_wall_ms(void);
/* Monotonic ns (CLOCK_MONOTONIC): for durations and deadlines, never steps. */
uint64_t clocks_mono_ns(void);
/* Monotonic ms. */
uint64_t clocks_mono_ms(void);
/*
 * A 64-bit seed for hash tables a client must not be able to predict: the
 * kernel's randomness, else (no getrandom) the clocks and the pid, which an
 * outsider cannot read either.
 */
uint64_t clocks_seed(void);

#endif /* IDMINTD_CLOCKS_H */
