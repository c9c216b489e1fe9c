/* SPDX-License-Identifier: Apache-2.0 */
/* The growing text buffer of textbuf.h. */
#include "textbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void textbuf_init(struct textbuf *b, size_t cap)
{
    b->len = 0;
    b->is_oom = 0;
    b->cap = cap;
    b->p = cap > 0 ? malloc(cap) : NULL;
    if (cap > 0 && b->p == NULL)
        b->is_oom = 1;
}

/* Room for @p more bytes and a NUL. 0, or -1 (and is_oom) when out of memory. */
static int reserve(struct textbuf *b, size_t more)
{
    size_t cap;
    char *p;

    if (b->is_oom)
        return -1;
    if (b->len + more < b->cap)
        return 0;
    cap = (b->cap + more + 1) * 2;
    if ((p = realloc(b->p, cap)) == NULL) {
        b->is_oom = 1;
        return -1;
    }
    b->p = p;
    b->cap = cap;
    return 0;
}

void textbuf_printf(struct textbuf *b, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (reserve(b, 0) != 0)
        return;
    va_start(ap, fmt);
    n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->is_oom = 1;
        return;
    }
    if ((size_t)n >= b->cap - b->len) {
        if (reserve(b, (size_t)n) != 0)
            return;
        va_start(ap, fmt);
        n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->is_oom = 1;
            return;
        }
    }
    b->len += (size_t)n;
}

void textbuf_add(struct textbuf *b, const char *s, size_t len)
{
    if (reserve(b, len) != 0)
        return;
    memcpy(b->p + b->len, s, len);
    b->len += len;
    b->p[b->len] = '\0';
}

void textbuf_html(struct textbuf *b, const char *s)
{
    const char *run = s;

    for (; *s != '\0'; s++) {
        const char *esc;

        switch (*s) {
        case '&':
            esc = "&amp;";
            break;
        case '<':
            esc = "&lt;";
            break;
        case '>':
            esc = "&gt;";
            break;
        case '"':
            esc = "&quot;";
            break;
        case '\'':
            esc = "&#39;";
            break;
        default:
            continue;
        }
        textbuf_add(b, run, (size_t)(s - run));
        textbuf_add(b, esc, strlen(esc));
        run = s + 1;
    }
    textbuf_add(b, run, (size_t)(s - run));
}

char *textbuf_take(struct textbuf *b, size_t *len)
{
    char *p;

    if (b->is_oom || reserve(b, 0) != 0) {
        free(b->p);
        b->p = NULL;
        return NULL;
    }
    p = b->p;
    p[b->len] = '\0';
    *len = b->len;
    b->p = NULL;
    b->cap = b->len = 0;
    return p;
}
