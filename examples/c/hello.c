/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Mints 5 IDs from the namespace "default" of the authority named on the
 * command line and prints them, one per line: the smallest whole program
 * against an installed libidmint (docs/install.md builds it two ways).
 * Usage: hello AUTHORITY    e.g. hello sqlite:/tmp/hello.db
 */
#include <idmint.h>

#include <inttypes.h>
#include <stdio.h>

#define COUNT 5

static int fail(const char *what, int err)
{
    fprintf(stderr, "hello: %s: %s: %s\n", what, idmint_strerror(err), idmint_errmsg());
    return 1;
}

int main(int argc, char **argv)
{
    idmint *m = NULL;
    uint64_t id;
    int err, i;

    if (argc != 2) {
        fprintf(stderr, "usage: hello AUTHORITY   (e.g. sqlite:/tmp/hello.db)\n");
        return 2;
    }
    /* Built with one header, run with another library: before 1.0 each minor
     * version may change the ABI, so major.minor must agree. */
    if (idmint_version() >> 8 != IDMINT_VERSION_NUM >> 8) {
        fprintf(stderr, "hello: built for libidmint %06x, running with %06x\n",
                (unsigned)IDMINT_VERSION_NUM, idmint_version());
        return 1;
    }
    err = idmint_open(&m, argv[1], "default", NULL);
    if (err != 0)
        return fail(argv[1], err);
    for (i = 0; i < COUNT; i++) {
        err = idmint_next(m, &id);
        if (err != 0) {
            idmint_close(m);
            return fail("next", err);
        }
        printf("%" PRIu64 "\n", id);
    }
    /* Releases the worker lease, so the next run need not wait for it. */
    idmint_close(m);
    return fflush(stdout) == 0 ? 0 : 1;
}
