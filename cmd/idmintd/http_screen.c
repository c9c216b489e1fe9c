/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Screening of a raw request head (see http_screen.h). Moved out of http.c
 * unchanged so the fuzz targets can call it without h2o.
 */
#include "http_screen.h"

#include <string.h>
#include <strings.h>

/*
 * Length of the header block of @p p (through the empty line), or 0 when it
 * is not complete within @p n bytes; *lines counts the lines seen.
 */
size_t http_header_block_len(const char *p, size_t n, size_t *lines)
{
    size_t i, count = 0;

    for (i = 0; i < n; i++) {
        if (p[i] != '\n')
            continue;
        count++;
        if (i + 1 < n && p[i + 1] == '\n') {
            *lines = count;
            return i + 2;
        }
        if (i + 2 < n && p[i + 1] == '\r' && p[i + 2] == '\n') {
            *lines = count;
            return i + 3;
        }
    }
    *lines = count;
    return 0;
}

/*
 * 1 when the header block frames its body ambiguously: two Content-Length
 * lines, or one beside Transfer-Encoding (RFC 9112 §6.3; request smuggling).
 * h2o keeps only one of them, so this is checked on the raw bytes.
 */
int http_has_bad_framing(const char *p, size_t n)
{
    static const char cl[] = "content-length:", te[] = "transfer-encoding:";
    size_t i = 0;
    int lengths = 0, encodings = 0;

    while (i < n) {
        const char *line = p + i;
        const char *nl = memchr(line, '\n', n - i);
        size_t len = nl != NULL ? (size_t)(nl - line) : n - i;

        if (len >= sizeof(cl) - 1 && strncasecmp(line, cl, sizeof(cl) - 1) == 0)
            lengths++;
        else if (len >= sizeof(te) - 1 && strncasecmp(line, te, sizeof(te) - 1) == 0)
            encodings++;
        i += len + 1;
    }
    return lengths > 1 || (lengths == 1 && encodings > 0);
}

/* The Content-Length declared in the header block, or 0 when there is none. */
uint64_t http_declared_length(const char *p, size_t n)
{
    static const char name[] = "content-length:";
    size_t i = 0;

    while (i < n) {
        const char *line = p + i;
        const char *nl = memchr(line, '\n', n - i);
        size_t len = nl != NULL ? (size_t)(nl - line) : n - i;

        if (len > sizeof(name) - 1 && strncasecmp(line, name, sizeof(name) - 1) == 0) {
            size_t k = sizeof(name) - 1;
            uint64_t v = 0;

            while (k < len && (line[k] == ' ' || line[k] == '\t'))
                k++;
            for (; k < len && line[k] >= '0' && line[k] <= '9'; k++) {
                if (v > UINT64_MAX / 16)
                    return UINT64_MAX;
                v = v * 10 + (uint64_t)(line[k] - '0');
            }
            return v;
        }
        i += len + 1;
    }
    return 0;
}
