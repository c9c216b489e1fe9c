/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Buffered stdout for bulk output. Writes go straight to fd 1 so stdio's
 * own buffer never interleaves with ours; nothing else may print to stdout
 * while an out_buf is in use.
 */
#include "out.h"

#include "args.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

/* "00" "01" ... "99": two digits per division halves the divisions. */
static const char digit_pairs[201] = "00010203040506070809"
                                     "10111213141516171819"
                                     "20212223242526272829"
                                     "30313233343536373839"
                                     "40414243444546474849"
                                     "50515253545556575859"
                                     "60616263646566676869"
                                     "70717273747576777879"
                                     "80818283848586878889"
                                     "90919293949596979899";

void out_init(struct out_buf *o)
{
    struct sigaction sa;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = SIG_IGN;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGPIPE, &sa, NULL);
    o->len = 0;
    o->write_err = 0;
}

int out_flush(struct out_buf *o)
{
    size_t done = 0;

    if (o->write_err != 0)
        return -1;
    while (done < o->len) {
        ssize_t w = write(STDOUT_FILENO, o->buf + done, o->len - done);

        if (w < 0) {
            if (errno == EINTR)
                continue;
            o->write_err = errno;
            return -1;
        }
        done += (size_t)w;
    }
    o->len = 0;
    return 0;
}

int out_bytes(struct out_buf *o, const char *s, size_t n)
{
    if (o->len + n > sizeof(o->buf) && out_flush(o) != 0)
        return -1;
    memcpy(o->buf + o->len, s, n);
    o->len += n;
    return 0;
}

int out_u64_line(struct out_buf *o, uint64_t v)
{
    char tmp[24];
    char *p = tmp + sizeof(tmp);

    *--p = '\n';
    while (v >= 100) {
        unsigned pair = (unsigned)(v % 100) * 2;

        v /= 100;
        *--p = digit_pairs[pair + 1];
        *--p = digit_pairs[pair];
    }
    if (v >= 10) {
        unsigned pair = (unsigned)v * 2;

        *--p = digit_pairs[pair + 1];
        *--p = digit_pairs[pair];
    } else {
        *--p = (char)('0' + v);
    }
    return out_bytes(o, p, (size_t)(tmp + sizeof(tmp) - p));
}

int out_finish(struct out_buf *o, int status)
{
    if (out_flush(o) == 0)
        return status;
    if (o->write_err == EPIPE)
        return CLI_EXIT_FAILED;
    return cli_error("writing output: %s", strerror(o->write_err));
}
