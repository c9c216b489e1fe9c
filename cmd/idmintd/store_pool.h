/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The store threads: a few threads that run jobs from bounded queues, so
 * that the event loops never wait on the store (docs/threading.md). Each
 * thread keeps what thread_init gave it (the daemon: its own worker and
 * authority). Two lanes: the lease lane (worker-lease and range calls of
 * remote generators, which lose their lease if they wait too long) has a
 * queue of its own and threads of its own, and the general threads take
 * its jobs first, so however busy the general lane is, a lease call finds
 * a thread. The pool knows nothing of HTTP or of the store: a job is a
 * function, an argument and a deadline.
 */
#ifndef IDMINTD_STORE_POOL_H
#define IDMINTD_STORE_POOL_H

#include <stddef.h>
#include <stdint.h>

struct store_pool;

/* Which queue a job waits in (store_pool_submit). */
enum store_pool_lane {
    STORE_POOL_GENERAL = 0, /* run by the general threads */
    STORE_POOL_LEASE = 1,   /* run by the lease threads, and first by the general ones */
};

/*
 * @p run(thread, job, is_late): @p thread is what thread_init returned for
 * the store thread; @p is_late is 1 when the job's deadline passed before a
 * thread got to it (or the pool is closing): then it must only hand back,
 * not do its work.
 */
typedef void (*store_pool_run)(void *thread, void *job, int is_late);

struct store_pool_stats {
    unsigned threads;       /* general and lease threads */
    unsigned lease_threads; /* of threads: the ones that run only the lease lane */
    unsigned queue_max;     /* of each lane */
    uint64_t depth;         /* queued in either lane, not yet taken by a thread */
    uint64_t lease_depth;   /* of depth: in the lease lane */
    uint64_t running;       /* taken, not yet done */
    uint64_t jobs;          /* accepted into the queue, ever */
    uint64_t late;          /* taken after their deadline, or after their caller gave up on
                               them (store_pool_count_late): handed back undone */
    uint64_t rejected_full; /* refused: the queue held queue_max */
    uint64_t timed_out;     /* answered 503 at their deadline (store_pool_count_timeout) */
};

/*
 * Start @p threads general threads (1..) and @p lease_threads lease threads
 * (0..; 0 leaves the lease lane to the general threads alone), with a queue
 * of @p queue_max (1..) jobs in each lane. Store thread k (0..threads +
 * lease_threads - 1; the lease threads last) runs thread_init(k, arg) first
 * and thread_fini(its result) last. 0, or -1 when a thread cannot start
 * (nothing is left running).
 */
int store_pool_open(struct store_pool **out, unsigned threads, unsigned lease_threads,
                    unsigned queue_max, void *(*thread_init)(unsigned k, void *arg),
                    void (*thread_fini)(void *thread), void *arg);
/*
 * Queue @p job for @p run in @p lane; @p deadline_ns on clocks_mono_ns()'s
 * clock. 0, or -1 when that lane's queue is full (counted; nothing was
 * queued). Thread-safe.
 */
int store_pool_submit(struct store_pool *p, enum store_pool_lane lane, store_pool_run run,
                      void *job, uint64_t deadline_ns);
/* Count one job answered 503 because it missed its deadline. Thread-safe. */
void store_pool_count_timeout(struct store_pool *p);
/*
 * Count one job that a thread took before the pool's deadline but its run
 * handed back undone, because the caller had answered it 503 already (the
 * caller's timer and the pool's deadline are read at different moments).
 * Thread-safe.
 */
void store_pool_count_late(struct store_pool *p);
/* The figures of /metrics. Thread-safe. */
void store_pool_stats_get(struct store_pool *p, struct store_pool_stats *out);
/*
 * Let the threads finish the job in hand, hand back the queued ones as late,
 * join the threads and free everything. A store call that never returns
 * keeps this waiting. NULL is a no-op.
 */
void store_pool_close(struct store_pool *p);

#endif /* IDMINTD_STORE_POOL_H */
