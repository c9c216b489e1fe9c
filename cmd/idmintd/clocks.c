/* SPDX-License-Identifier: Apache-2.0 */
/* The daemon's one door to the system clocks (clocks.h). */
#include "clocks.h"

#include "idmint_service.h"

#include <time.h>
#include <unistd.h>

static int64_t read_ns(clockid_t id)
{
    struct timespec ts;

    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t clocks_wall_ns(void)
{
    return read_ns(CLOCK_REALTIME);
}

int64_t clocks_wall_ms(void)
{
    return read_ns(CLOCK_REALTIME) / 1000000;
}

uint64_t clocks_mono_ns(void)
{
    return (uint64_t)read_ns(CLOCK_MONOTONIC);
}

uint64_t clocks_mono_ms(void)
{
    return clocks_mono_ns() / 1000000u;
}

uint64_t clocks_seed(void)
{
    uint64_t seed;

    if (idmint__entropy(&seed, sizeof(seed)) == 0)
        return seed;
    return clocks_mono_ns() ^ ((uint64_t)clocks_wall_ns() << 17) ^ (uint64_t)getpid();
}
