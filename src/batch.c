/* SPDX-License-Identifier: Apache-2.0 */
/*
 * An idempotent batch as the store keeps it: its IDs as runs of consecutive
 * values ("START+LEN,START+LEN"), so that a batch of a thousand snowflake
 * IDs minted within one time unit is one short run, not a thousand numbers.
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void idmint__batch_clear(struct idmint__batch *b)
{
    if (b == NULL)
        return;
    free(b->runs);
    memset(b, 0, sizeof(*b));
}

int idmint__batch_runs_encode(struct idmint__batch *b, const uint64_t *ids, size_t n)
{
    /* One run is at most two 19-digit numbers, '+' and ','. */
    size_t cap = 1, used = 0, i = 0;
    char *text;

    for (size_t k = 1; k <= n; k++)
        if (k == n || ids[k] != ids[k - 1] + 1)
            cap += 41;
    if ((text = malloc(cap)) == NULL)
        return idmint__fail(IDMINT_ENOMEM, "out of memory for a batch of %zu IDs", n);
    while (i < n) {
        size_t len = 1;

        while (i + len < n && ids[i + len] == ids[i + len - 1] + 1)
            len++;
        used += (size_t)snprintf(text + used, cap - used, "%s%llu+%zu", used > 0 ? "," : "",
                                 (unsigned long long)ids[i], len);
        i += len;
    }
    free(b->runs);
    b->runs = text;
    b->count = (uint32_t)n;
    return 0;
}

static int runs_malformed(const struct idmint__batch *b)
{
    return idmint__fail(IDMINT_ESTORE, "saved batch '%s' of namespace '%s' has malformed runs",
                        b->key, b->ns);
}

int idmint__batch_runs_decode(const struct idmint__batch *b, uint64_t *ids)
{
    const char *p = b->runs;
    size_t k = 0;

    if (p == NULL || *p == '\0')
        return runs_malformed(b);
    for (;;) {
        char *end;
        unsigned long long start, len;

        if (*p < '0' || *p > '9')
            return runs_malformed(b);
        start = strtoull(p, &end, 10);
        if (*end != '+' || end[1] < '1' || end[1] > '9')
            return runs_malformed(b);
        len = strtoull(end + 1, &end, 10);
        if (len > b->count - k || start > IDMINT_MAX_VALUE || len - 1 > IDMINT_MAX_VALUE - start)
            return runs_malformed(b);
        for (unsigned long long j = 0; j < len; j++)
            ids[k++] = start + j;
        if (*end == '\0')
            break;
        if (*end != ',')
            return runs_malformed(b);
        p = end + 1;
    }
    return k == b->count ? 0 : runs_malformed(b);
}
