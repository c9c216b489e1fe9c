/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The daemon's INI configuration file (config.c through inih): the input is
 * written to a temporary file and loaded over the defaults, then the
 * cross-field checks run. Bad input must give an error, never an exit.
 */
#include "fuzz.h"

#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char path[64];

static void remove_file(void)
{
    unlink(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct config cfg;
    char err[1024];
    FILE *f;

    if (path[0] == '\0') {
        int fd;

        snprintf(path, sizeof(path), "/tmp/idmint-fuzz-config-XXXXXX");
        if ((fd = mkstemp(path)) < 0)
            abort();
        close(fd);
        atexit(remove_file);
    }
    if ((f = fopen(path, "wb")) == NULL)
        abort();
    if (size > 0 && fwrite(data, 1, size, f) != size)
        abort();
    fclose(f);

    config_defaults(&cfg);
    err[0] = '\0';
    if (config_load_file(&cfg, path, err, sizeof(err)) != 0) {
        if (err[0] == '\0')
            abort(); /* a refusal always says where and why */
        return 0;
    }
    if (cfg.threads < 1 || cfg.n_tokens > DAEMON_MAX_TOKENS ||
        memchr(cfg.listen, '\0', sizeof(cfg.listen)) == NULL ||
        memchr(cfg.authority, '\0', sizeof(cfg.authority)) == NULL)
        abort();
    err[0] = '\0';
    if (config_finish(&cfg, err, sizeof(err)) != 0 && err[0] == '\0')
        abort();
    return 0;
}
