/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The daemon's log. One lock around one fwrite per line keeps lines whole
 * when several threads log at once; the level check happens before it. A
 * log file the daemon creates is at most mode 0640, whatever the umask.
 */
#include "log.h"
#include "clocks.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LOG_FILE_MODE 0640 /* the daemon's group (a log reader) may read, nobody else */

static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;
static FILE *log_file;      /* NULL: stderr */
static char log_path[1024]; /* "" : stderr */
static int log_min = LOG_INFO;

static const char *const level_names[] = {"debug", "info", "warn", "error"};

int log_level_parse(const char *text)
{
    int i;

    for (i = 0; i < 4; i++)
        if (strcmp(text, level_names[i]) == 0)
            return i;
    if (strcmp(text, "warning") == 0)
        return LOG_WARN;
    return -1;
}

/*
 * Open @p path for appending, line-buffered. A file created here gets
 * LOG_FILE_MODE: fopen would create it 0666 less the umask, which under
 * umask 000 lets anyone rewrite the log. An existing file keeps the mode
 * its owner gave it. NULL with errno set on failure.
 */
static FILE *log_fopen(const char *path)
{
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC, LOG_FILE_MODE);
    FILE *f;

    /* A umask can only take bits away: never more than LOG_FILE_MODE. */
    if (fd < 0 && errno == EEXIST)
        fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    if ((f = fdopen(fd, "a")) == NULL) {
        int e = errno;

        close(fd);
        errno = e;
        return NULL;
    }
    setvbuf(f, NULL, _IOLBF, 0);
    return f;
}

int log_open(const char *path, int level)
{
    FILE *f = NULL;

    if (path != NULL && path[0] != '\0') {
        f = log_fopen(path);
        if (f == NULL)
            return -1;
    }
    pthread_mutex_lock(&log_mu);
    if (log_file != NULL)
        fclose(log_file);
    log_file = f;
    snprintf(log_path, sizeof(log_path), "%s", path != NULL ? path : "");
    log_min = level;
    pthread_mutex_unlock(&log_mu);
    return 0;
}

int log_reopen(void)
{
    FILE *f;
    int rc = 0;

    pthread_mutex_lock(&log_mu);
    if (log_path[0] != '\0') {
        f = log_fopen(log_path);
        if (f == NULL) {
            rc = -1;
        } else {
            if (log_file != NULL)
                fclose(log_file);
            log_file = f;
        }
    }
    pthread_mutex_unlock(&log_mu);
    return rc;
}

void log_close(void)
{
    pthread_mutex_lock(&log_mu);
    if (log_file != NULL)
        fclose(log_file);
    log_file = NULL;
    pthread_mutex_unlock(&log_mu);
}

void log_write(int level, const char *msg, const char *kv_fmt, ...)
{
    char line[2048];
    struct timespec ts;
    struct tm tm;
    int64_t now_ns;
    size_t n, i;
    int k;
    va_list ap;

    if (level < log_min)
        return;
    now_ns = clocks_wall_ns();
    ts.tv_sec = (time_t)(now_ns / 1000000000);
    ts.tv_nsec = (long)(now_ns % 1000000000);
    gmtime_r(&ts.tv_sec, &tm);
    k = snprintf(line, sizeof(line), "ts=%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ level=%s msg=\"",
                 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                 ts.tv_nsec / 1000000L, level_names[level < 0 || level > 3 ? 1 : level]);
    n = k > 0 ? (size_t)k : 0;
    for (i = 0; msg[i] != '\0' && n < sizeof(line) - 8; i++) {
        char c = msg[i];

        if (c == '"' || c == '\\')
            line[n++] = '\\';
        line[n++] = (c == '\n' || c == '\r') ? ' ' : c;
    }
    line[n++] = '"';
    if (kv_fmt != NULL && n < sizeof(line) - 2) {
        line[n++] = ' ';
        va_start(ap, kv_fmt);
        k = vsnprintf(line + n, sizeof(line) - n - 1, kv_fmt, ap);
        va_end(ap);
        if (k > 0)
            n += (size_t)k < sizeof(line) - n - 1 ? (size_t)k : sizeof(line) - n - 2;
    }
    line[n++] = '\n';
    pthread_mutex_lock(&log_mu);
    fwrite(line, 1, n, log_file != NULL ? log_file : stderr);
    pthread_mutex_unlock(&log_mu);
}
