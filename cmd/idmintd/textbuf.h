/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A growing text buffer for the bodies the daemon writes by hand (/metrics,
 * the status page). Out of memory is sticky: every later append is a no-op
 * and textbuf_take() returns NULL, so a chain of appends needs one check.
 */
#ifndef IDMINTD_TEXTBUF_H
#define IDMINTD_TEXTBUF_H

#include <stddef.h>

struct textbuf {
    char *p;    /* malloc'd, NUL-terminated while len > 0 */
    size_t len; /* bytes written, without the NUL */
    size_t cap; /* bytes allocated */
    int is_oom; /* an append failed: the text is incomplete */
};

/* An empty buffer with room for @p cap bytes (0 is fine). */
void textbuf_init(struct textbuf *b, size_t cap);
void textbuf_printf(struct textbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Append @p len bytes of @p s as they are. */
void textbuf_add(struct textbuf *b, const char *s, size_t len);
/* Append NUL-terminated @p s with & < > " ' escaped for HTML text and attribute values. */
void textbuf_html(struct textbuf *b, const char *s);
/* The text (free() it) and its length; NULL after out of memory (the buffer is freed). */
char *textbuf_take(struct textbuf *b, size_t *len);

#endif /* IDMINTD_TEXTBUF_H */
