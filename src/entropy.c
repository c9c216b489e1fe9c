/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The only reader of the OS random number generator: getrandom(2), which
 * needs no file descriptor (so it works in chroots and after fd exhaustion)
 * and blocks only until the kernel pool is first seeded. No fallback to a
 * user-space generator: without the kernel's randomness we fail explicitly.
 */
#include "idmint.h"
#include "internal.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/random.h>
#include <sys/types.h>

int idmint__entropy(void *buf, size_t len)
{
    unsigned char *p = buf;

    while (len > 0) {
        ssize_t got = getrandom(p, len, 0);

        if (got < 0) {
            /* EINTR: a signal arrived before any byte; large reads may also
             * return short, so both simply go round again. */
            if (errno == EINTR)
                continue;
            return idmint__fail(IDMINT_EUNAVAILABLE, "getrandom: errno %d", errno);
        }
        p += got;
        len -= (size_t)got;
    }
    return 0;
}

int idmint__incarnation(char out[33])
{
    static const char hex[] = "0123456789abcdef";
    unsigned char raw[16];
    int rc = idmint__entropy(raw, sizeof(raw));

    if (rc != 0)
        return rc;
    for (size_t i = 0; i < sizeof(raw); i++) {
        out[2 * i] = hex[raw[i] >> 4];
        out[2 * i + 1] = hex[raw[i] & 0xf];
    }
    out[32] = '\0';
    return 0;
}
