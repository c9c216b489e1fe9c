/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The queue every idmint writer of one SQLite file joins before it begins a
 * write transaction: an OFD lock on a side file (PATH-idmint-queue) that
 * waiters block on in the kernel. SQLite's own lock can only be polled, and
 * a start burst of hundreds of processes polling it every millisecond left
 * the holder no CPU to commit: half of 200 processes gave up after 10 s.
 * Blocked in the kernel they cost nothing, and the lock passes straight on.
 * The queue orders idmint's writers only; SQLite's lock still guards the
 * data, so a writer that does not queue (the sqlite3 shell, an older idmint)
 * is safe, just not ordered. An OFD lock belongs to the open file: a process
 * that dies drops it, and a thread never disturbs SQLite's POSIX locks.
 */
#ifndef IDMINT_SQLITE_QUEUE_H
#define IDMINT_SQLITE_QUEUE_H

#include <stdint.h>

struct sq_queue {
    int fd;      /* the side file; -1: no queue (it could not be opened) */
    int held_fd; /* the open file that holds the lock: fd, or a waiter's own */
    int is_held; /* this store holds the queue */
    char *path;  /* the side file's path, for a waiter's own open */
};

/*
 * Open the queue of database file @p db_file, creating its side file (mode
 * 0640) when missing. Without one (a read-only folder) q->fd is -1 and
 * writers simply poll SQLite's lock as before. Call sq_queue_close after.
 */
void sq_queue_open(struct sq_queue *q, const char *db_file);
void sq_queue_close(struct sq_queue *q); /* leaves the queue first */

/*
 * Wait at most @p timeout_ms for this store's turn to write. 1 when it is
 * held, 0 when there is no queue, -1 when the wait timed out (another writer
 * held it all that time: hung, stopped, or a very long queue).
 */
int sq_queue_enter(struct sq_queue *q, uint64_t timeout_ms);
/* Let the next writer in. NULL-safe, and a no-op when not held. */
void sq_queue_leave(struct sq_queue *q);

#endif /* IDMINT_SQLITE_QUEUE_H */
