/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A large stdout buffer with its own integer formatting: mint and uuid7
 * print millions of lines per second, which printf per line cannot.
 */
#ifndef IDMINT_CLI_OUT_H
#define IDMINT_CLI_OUT_H

#include <stddef.h>
#include <stdint.h>

#define OUT_BUF_BYTES (1u << 20)

struct out_buf {
    char buf[OUT_BUF_BYTES];
    size_t len;    /* bytes waiting in buf */
    int write_err; /* errno of the first failed write; 0 while all is well */
};

/* Start empty. Ignores SIGPIPE so a closed pipe shows up as EPIPE, not death. */
void out_init(struct out_buf *o);

/* Append @p n bytes (n <= 64). Returns 0, or -1 once a write has failed. */
int out_bytes(struct out_buf *o, const char *s, size_t n);

/* Append @p v in decimal and a newline. Returns 0, or -1 once a write has failed. */
int out_u64_line(struct out_buf *o, uint64_t v);

/* Write everything buffered to stdout. Returns 0 or -1 (o->write_err says why). */
int out_flush(struct out_buf *o);

/*
 * The command's exit status after the last flush: CLI_EXIT_FAILED on a write
 * error (silent for EPIPE: the reader went away on purpose), else @p status.
 */
int out_finish(struct out_buf *o, int status);

#endif /* IDMINT_CLI_OUT_H */
