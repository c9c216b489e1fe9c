/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE /* F_OFD_SETLK, F_OFD_SETLKW */
#include "sqlite_queue.h"

#include "idmint_service.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define QUEUE_SUFFIX "-idmint-queue"
#define QUEUE_MODE   0660 /* as the database file: the group shares both */

/* TSan cannot start a thread in the child of a threaded fork(), and tests
 * fork writers from threaded parents: under TSan a waiter polls SQLite's
 * lock as before, and the queue is only taken when it is free. */
#if defined(__SANITIZE_THREAD__)
#define QUEUE_CAN_WAIT 0
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define QUEUE_CAN_WAIT 0
#endif
#endif
#ifndef QUEUE_CAN_WAIT
#define QUEUE_CAN_WAIT 1
#endif

static struct flock queue_lock(short type)
{
    struct flock fl;

    memset(&fl, 0, sizeof(fl));
    fl.l_type = type;
    fl.l_whence = SEEK_SET;
    fl.l_start = 0;
    fl.l_len = 1;
    return fl; /* l_pid stays 0, as OFD locks require */
}

void sq_queue_open(struct sq_queue *q, const char *db_file)
{
    size_t len = strlen(db_file) + sizeof(QUEUE_SUFFIX);
    struct stat sb;

    q->fd = -1;
    q->held_fd = -1;
    q->is_held = 0;
    q->path = malloc(len);
    if (q->path == NULL)
        return;
    snprintf(q->path, len, "%s%s", db_file, QUEUE_SUFFIX);
    q->fd = open(q->path, O_RDWR | O_CREAT | O_CLOEXEC, QUEUE_MODE);
    /* Whatever the creator's umask: the service group's writers queue on it too
     * (a root CLI that made it first left it 0640 and the daemon's user out). */
    if (q->fd >= 0 && fstat(q->fd, &sb) == 0 && sb.st_uid == geteuid() &&
        (sb.st_mode & 0777) != QUEUE_MODE)
        (void)fchmod(q->fd, QUEUE_MODE);
}

void sq_queue_close(struct sq_queue *q)
{
    sq_queue_leave(q);
    if (q->fd >= 0)
        close(q->fd);
    q->fd = -1;
    free(q->path);
    q->path = NULL;
}

/*
 * A wait for the queue, blocked in the kernel on a thread of its own and on
 * an open file of its own (its own lock owner). A caller that gives up
 * leaves the wait to the thread, which lets the lock go the moment it gets
 * it: nothing is cancelled, so nothing depends on fcntl being a
 * cancellation point (it is not under the sanitizers' interceptors).
 */
struct queue_wait {
    int fd;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int is_done;
    int is_got;
    int is_abandoned; /* the caller gave up: the thread frees all this */
};

static void queue_wait_free(struct queue_wait *w)
{
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
    free(w);
}

static void *queue_wait_main(void *arg)
{
    struct queue_wait *w = arg;
    struct flock fl = queue_lock(F_WRLCK);
    int rc = fcntl(w->fd, F_OFD_SETLKW, &fl), is_abandoned;

    pthread_mutex_lock(&w->mu);
    w->is_got = rc == 0;
    w->is_done = 1;
    is_abandoned = w->is_abandoned;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
    if (is_abandoned) {
        close(w->fd); /* drops the lock, if it was got, with its file */
        queue_wait_free(w);
    }
    return NULL;
}

int sq_queue_enter(struct sq_queue *q, uint64_t timeout_ms)
{
    struct flock fl = queue_lock(F_WRLCK);
    struct queue_wait *w;
    struct timespec deadline;
    pthread_t t;
    int is_done, is_got;

    if (q->fd < 0)
        return 0;
    if (q->is_held)
        return 1;
    if (fcntl(q->fd, F_OFD_SETLK, &fl) == 0) {
        q->held_fd = q->fd;
        q->is_held = 1;
        return 1;
    }
    if (!QUEUE_CAN_WAIT || (errno != EAGAIN && errno != EACCES) ||
        (w = calloc(1, sizeof(*w))) == NULL)
        return 0; /* a file system without OFD locks, or no memory: no queue */
    w->fd = open(q->path, O_RDWR | O_CLOEXEC);
    if (w->fd < 0) {
        free(w);
        return 0;
    }
    pthread_mutex_init(&w->mu, NULL);
    idmint__cond_init_monotonic(&w->cv);
    deadline = idmint__monotonic_after_ms(timeout_ms);
    if (pthread_create(&t, NULL, queue_wait_main, w) != 0) {
        close(w->fd);
        queue_wait_free(w);
        return 0; /* no thread to spare: poll SQLite's lock instead */
    }
    pthread_detach(t);
    pthread_mutex_lock(&w->mu);
    while (!w->is_done && pthread_cond_timedwait(&w->cv, &w->mu, &deadline) != ETIMEDOUT)
        ;
    is_done = w->is_done;
    is_got = w->is_got;
    if (!is_done)
        w->is_abandoned = 1;
    pthread_mutex_unlock(&w->mu);
    if (!is_done)
        return -1; /* the thread lets go of the lock when it gets it, and frees w */
    if (is_got) {
        q->held_fd = w->fd;
        q->is_held = 1;
    } else {
        close(w->fd);
    }
    queue_wait_free(w);
    return is_got ? 1 : 0;
}

void sq_queue_leave(struct sq_queue *q)
{
    struct flock fl = queue_lock(F_UNLCK);

    if (q == NULL || !q->is_held)
        return;
    q->is_held = 0;
    (void)fcntl(q->held_fd, F_OFD_SETLK, &fl);
    if (q->held_fd != q->fd)
        close(q->held_fd);
    q->held_fd = -1;
}
