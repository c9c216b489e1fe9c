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
#include <unistd.h>

#define QUEUE_SUFFIX "-idmint-queue"

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
    char *path = malloc(len);

    q->fd = -1;
    q->is_held = 0;
    if (path == NULL)
        return;
    snprintf(path, len, "%s%s", db_file, QUEUE_SUFFIX);
    q->fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0640);
    free(path);
}

void sq_queue_close(struct sq_queue *q)
{
    sq_queue_leave(q);
    if (q->fd >= 0)
        close(q->fd);
    q->fd = -1;
}

/* A wait for the queue, blocked in the kernel on its own thread so it can be given up. */
struct queue_wait {
    int fd;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int is_done;
    int is_got;
};

static void *queue_wait_main(void *arg)
{
    struct queue_wait *w = arg;
    struct flock fl = queue_lock(F_WRLCK);
    int rc, old;

    /* fcntl(F_OFD_SETLKW) is a cancellation point: the waiter gives up here
     * (glibc acts on a cancel only if the call did not complete). */
    rc = fcntl(w->fd, F_OFD_SETLKW, &fl);
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
    pthread_mutex_lock(&w->mu);
    w->is_got = rc == 0;
    w->is_done = 1;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

int sq_queue_enter(struct sq_queue *q, uint64_t timeout_ms)
{
    struct flock fl = queue_lock(F_WRLCK);
    struct queue_wait w;
    struct timespec deadline;
    pthread_t t;
    int is_done;

    if (q->fd < 0)
        return 0;
    if (q->is_held)
        return 1;
    if (fcntl(q->fd, F_OFD_SETLK, &fl) == 0) {
        q->is_held = 1;
        return 1;
    }
    if (errno != EAGAIN && errno != EACCES)
        return 0; /* a file system without OFD locks: no queue */
    memset(&w, 0, sizeof(w));
    w.fd = q->fd;
    pthread_mutex_init(&w.mu, NULL);
    idmint__cond_init_monotonic(&w.cv);
    deadline = idmint__monotonic_after_ms(timeout_ms);
    if (pthread_create(&t, NULL, queue_wait_main, &w) != 0) {
        pthread_cond_destroy(&w.cv);
        pthread_mutex_destroy(&w.mu);
        return 0; /* no thread to spare: poll SQLite's lock instead */
    }
    pthread_mutex_lock(&w.mu);
    while (!w.is_done && pthread_cond_timedwait(&w.cv, &w.mu, &deadline) != ETIMEDOUT)
        ;
    is_done = w.is_done;
    pthread_mutex_unlock(&w.mu);
    if (!is_done)
        pthread_cancel(t);
    pthread_join(t, NULL);
    pthread_cond_destroy(&w.cv);
    pthread_mutex_destroy(&w.mu);
    if (w.is_got) {
        q->is_held = 1;
        return 1;
    }
    return is_done ? 0 : -1;
}

void sq_queue_leave(struct sq_queue *q)
{
    struct flock fl = queue_lock(F_UNLCK);

    if (q == NULL || !q->is_held)
        return;
    q->is_held = 0;
    (void)fcntl(q->fd, F_OFD_SETLK, &fl);
}
