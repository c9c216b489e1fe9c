/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers shared by the tests; see testsupport.h. */
#define _XOPEN_SOURCE 700 /* nftw */
#include "testsupport.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char *ts_tempdir(void)
{
    const char *base = getenv("TMPDIR");
    char *path;
    size_t len;

    if (base == NULL || base[0] == '\0')
        base = "/tmp";
    len = strlen(base) + sizeof("/idmint-test-XXXXXX");
    path = malloc(len);
    if (path == NULL)
        return NULL;
    snprintf(path, len, "%s/idmint-test-XXXXXX", base);
    if (mkdtemp(path) == NULL) {
        free(path);
        return NULL;
    }
    return path;
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

void ts_rmtree(char *dir)
{
    if (dir == NULL)
        return;
    nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(dir);
}

char *ts_sqlite_url(const char *dir, const char *file)
{
    size_t len = strlen(dir) + strlen(file) + sizeof("sqlite:/");
    char *url = malloc(len);

    if (url != NULL)
        snprintf(url, len, "sqlite:%s/%s", dir, file);
    return url;
}

unsigned ts_scale(void)
{
    const char *s = getenv("IDMINT_TIMEOUT_SCALE");
    long v = s != NULL ? strtol(s, NULL, 10) : 1;

    return v >= 1 ? (unsigned)v : 1u;
}

void ts_fake_init(struct ts_fake_clock *c, int64_t wall_ms)
{
    atomic_store(&c->wall_ms, wall_ms);
    atomic_store(&c->mono_ns, (uint64_t)1000000000);
}

void ts_fake_advance(struct ts_fake_clock *c, int64_t ms)
{
    atomic_fetch_add(&c->wall_ms, ms);
    atomic_fetch_add(&c->mono_ns, (uint64_t)ms * 1000000u);
}

void ts_fake_step_wall(struct ts_fake_clock *c, int64_t ms)
{
    atomic_fetch_add(&c->wall_ms, ms);
}

int64_t ts_fake_wall_ms(void *ctx)
{
    return atomic_load(&((struct ts_fake_clock *)ctx)->wall_ms);
}

uint64_t ts_fake_mono_ns(void *ctx)
{
    return atomic_load(&((struct ts_fake_clock *)ctx)->mono_ns);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    return (x > y) - (x < y);
}

size_t ts_count_duplicates(uint64_t *ids, size_t n)
{
    size_t dups = 0;

    qsort(ids, n, sizeof(*ids), cmp_u64);
    for (size_t i = 1; i < n; i++)
        if (ids[i] == ids[i - 1])
            dups++;
    return dups;
}
