/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The per-second history of history.h: one ring of HISTORY_SECONDS counts
 * per handle slot, advanced on CLOCK_MONOTONIC deadlines (a wall-clock step
 * neither stretches nor squeezes a second). A tick that comes late, as
 * after a suspend, books what was minted meanwhile in the second it samples
 * and the missed seconds follow as zeros, so the ring's sum still equals
 * the counter's growth.
 */
#include "history.h"

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
    uint64_t seen[HANDLES_MAX];                  /* each slot's counter at the last tick */
    uint32_t ring[HANDLES_MAX][HISTORY_SECONDS]; /* IDs per second; head is the oldest */
    size_t head;                                 /* the next second to write */
    int64_t end_ms;                              /* wall ms of the last tick; 0: none yet */
} history = {.mu = PTHREAD_MUTEX_INITIALIZER};

static int64_t wall_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* One second: every slot's growth since the last tick; history.mu held. */
static void tick(struct daemon *d)
{
    size_t i, n = atomic_load_explicit(&d->handles.n, memory_order_acquire);

    for (i = 0; i < HANDLES_MAX; i++) {
        uint64_t now = i < n ? metrics_ids_issued(d, i) : 0, delta = now - history.seen[i];

        history.ring[i][history.head] = delta > UINT32_MAX ? UINT32_MAX : (uint32_t)delta;
        history.seen[i] = now;
    }
    history.head = (history.head + 1) % HISTORY_SECONDS;
    history.end_ms = wall_ms();
}

static void *history_main(void *arg)
{
    struct daemon *d = arg;
    struct timespec until = idmint__monotonic_after_ms(TICK_MS);

    pthread_mutex_lock(&history.mu);
    while (!history.is_stopping) {
        int rc = pthread_cond_timedwait(&history.cv, &history.mu, &until);

        if (history.is_stopping)
            break;
        if (rc != 0) { /* the deadline, not a spurious wake-up */
            tick(d);
            until.tv_sec += TICK_MS / 1000;
        }
    }
    pthread_mutex_unlock(&history.mu);
    return NULL;
}

int history_start(struct daemon *d)
{
    idmint__cond_init_monotonic(&history.cv);
    history.is_stopping = 0;
    if (pthread_create(&history.thread, NULL, history_main, d) != 0)
        return -1;
    history.is_running = 1;
    return 0;
}

void history_stop(void)
{
    if (!history.is_running)
        return;
    pthread_mutex_lock(&history.mu);
    history.is_stopping = 1;
    pthread_cond_signal(&history.cv);
    pthread_mutex_unlock(&history.mu);
    pthread_join(history.thread, NULL);
    history.is_running = 0;
}

void history_read(size_t slot, uint32_t out[HISTORY_SECONDS], int64_t *end_ms)
{
    size_t k;

    if (slot >= HANDLES_MAX) {
        memset(out, 0, HISTORY_SECONDS * sizeof(out[0]));
        *end_ms = 0;
        return;
    }
    pthread_mutex_lock(&history.mu);
    for (k = 0; k < HISTORY_SECONDS; k++)
        out[k] = history.ring[slot][(history.head + k) % HISTORY_SECONDS];
    *end_ms = history.end_ms;
    pthread_mutex_unlock(&history.mu);
}
