/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The per-second counts of throughput.h: one ring of THROUGHPUT_SECONDS counts
 * per handle slot, advanced on CLOCK_MONOTONIC deadlines (a wall-clock step
 * neither stretches nor squeezes a second). A tick that comes late, as
 * after a suspend, books what was minted meanwhile in the second it samples
 * and the missed seconds follow as zeros, so the ring's sum still equals
 * the counter's growth.
 */
#include "throughput.h"
#include "clocks.h"

#include "daemon.h"
#include "idmint_service.h"
#include "metrics.h"

#include <pthread.h>
#include <string.h>
#include <time.h>

#define TICK_MS 1000u

static struct {
    pthread_t thread;
    pthread_mutex_t mu; /* guards everything below and the cond wait */
    pthread_cond_t cv;
    int is_running;
    int is_stopping;
    uint64_t seen[HANDLES_MAX];                     /* each slot's counter at the last tick */
    uint32_t ring[HANDLES_MAX][THROUGHPUT_SECONDS]; /* IDs per second; head is the oldest */
    size_t head;                                    /* the next second to write */
    int64_t end_ms;                                 /* wall ms of the last tick; 0: none yet */
} ring = {.mu = PTHREAD_MUTEX_INITIALIZER};

/* One second: every slot's growth since the last tick; ring.mu held. */
static void tick(struct daemon *d)
{
    size_t i, n = atomic_load_explicit(&d->handles.n, memory_order_acquire);

    for (i = 0; i < HANDLES_MAX; i++) {
        uint64_t now = i < n ? metrics_ids_issued(d, i) : 0, delta = now - ring.seen[i];

        ring.ring[i][ring.head] = delta > UINT32_MAX ? UINT32_MAX : (uint32_t)delta;
        ring.seen[i] = now;
    }
    ring.head = (ring.head + 1) % THROUGHPUT_SECONDS;
    ring.end_ms = clocks_wall_ms();
}

static void *throughput_main(void *arg)
{
    struct daemon *d = arg;
    struct timespec until = idmint__monotonic_after_ms(TICK_MS);

    pthread_mutex_lock(&ring.mu);
    while (!ring.is_stopping) {
        int rc = pthread_cond_timedwait(&ring.cv, &ring.mu, &until);

        if (ring.is_stopping)
            break;
        if (rc != 0) { /* the deadline, not a spurious wake-up */
            tick(d);
            until.tv_sec += TICK_MS / 1000;
        }
    }
    pthread_mutex_unlock(&ring.mu);
    return NULL;
}

int throughput_start(struct daemon *d)
{
    idmint__cond_init_monotonic(&ring.cv);
    ring.is_stopping = 0;
    if (pthread_create(&ring.thread, NULL, throughput_main, d) != 0)
        return -1;
    ring.is_running = 1;
    return 0;
}

void throughput_stop(void)
{
    if (!ring.is_running)
        return;
    pthread_mutex_lock(&ring.mu);
    ring.is_stopping = 1;
    pthread_cond_signal(&ring.cv);
    pthread_mutex_unlock(&ring.mu);
    pthread_join(ring.thread, NULL);
    ring.is_running = 0;
}

void throughput_read(size_t slot, uint32_t out[THROUGHPUT_SECONDS], int64_t *end_ms)
{
    size_t k;

    if (slot >= HANDLES_MAX) {
        memset(out, 0, THROUGHPUT_SECONDS * sizeof(out[0]));
        *end_ms = 0;
        return;
    }
    pthread_mutex_lock(&ring.mu);
    for (k = 0; k < THROUGHPUT_SECONDS; k++)
        out[k] = ring.ring[slot][(ring.head + k) % THROUGHPUT_SECONDS];
    *end_ms = ring.end_ms;
    pthread_mutex_unlock(&ring.mu);
}
