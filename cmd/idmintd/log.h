/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One-line structured logs: ts=… level=… msg="…" key=value …, to stderr or
 * a file that SIGHUP reopens (for logrotate). Thread-safe.
 */
#ifndef IDMINTD_LOG_H
#define IDMINTD_LOG_H

enum log_level { LOG_DEBUG = 0, LOG_INFO = 1, LOG_WARN = 2, LOG_ERROR = 3 };

/* -1 when @p text is not debug, info, warn or error. */
int log_level_parse(const char *text);
/* Log to @p path ("" : stderr) from @p level up. 0 or -1 (errno set). */
int log_open(const char *path, int level);
/* Reopen the file after a rotation. 0 or -1; stderr is kept on failure. */
int log_reopen(void);
void log_close(void);
/* @p kv_fmt formats the key=value tail (NULL: none); values the caller quotes. */
void log_write(int level, const char *msg, const char *kv_fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif /* IDMINTD_LOG_H */
