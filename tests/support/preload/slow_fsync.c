/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fault injection by LD_PRELOAD: every fsync() and fdatasync() of the
 * process first sleeps IDMINT_SLOW_FSYNC_US microseconds (default 3000), as
 * on a loaded or network disk. Tests use it to make each commit hold
 * SQLite's write lock for milliseconds, where lock waits turn unfair.
 */
#define _GNU_SOURCE /* RTLD_NEXT */
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

typedef int sync_fn(int fd);

static void stall(void)
{
    const char *text = getenv("IDMINT_SLOW_FSYNC_US");
    long us = text != NULL ? strtol(text, NULL, 10) : 3000;
    struct timespec ts = {.tv_sec = us / 1000000, .tv_nsec = us % 1000000 * 1000};

    while (us > 0 && nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static int call_next(const char *name, int fd)
{
    sync_fn *next = (sync_fn *)dlsym(RTLD_NEXT, name);

    if (next == NULL) {
        errno = ENOSYS;
        return -1;
    }
    stall();
    return next(fd);
}

/* Exported explicitly: the project builds with hidden visibility. */
__attribute__((visibility("default"))) int fsync(int fd)
{
    return call_next("fsync", fd);
}

__attribute__((visibility("default"))) int fdatasync(int fd)
{
    return call_next("fdatasync", fd);
}
