/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The screening of a new connection's raw request head before h2o parses it
 * (http.c). Pure functions over bytes, apart so that fuzz/fuzz_http.c can
 * drive them without a socket.
 */
#ifndef IDMINTD_HTTP_SCREEN_H
#define IDMINTD_HTTP_SCREEN_H

#include <stddef.h>
#include <stdint.h>

/*
 * Length of the header block of @p p (through the empty line), or 0 when it
 * is not complete within @p n bytes; *lines counts the lines seen.
 */
size_t http_header_block_len(const char *p, size_t n, size_t *lines);

/*
 * 1 when the header block frames its body ambiguously: two Content-Length
 * lines, or one beside Transfer-Encoding (RFC 9112 §6.3; request smuggling).
 * h2o keeps only one of them, so this is checked on the raw bytes.
 */
int http_has_bad_framing(const char *p, size_t n);

/* The Content-Length declared in the header block, or 0 when there is none. */
uint64_t http_declared_length(const char *p, size_t n);

#endif /* IDMINTD_HTTP_SCREEN_H */
