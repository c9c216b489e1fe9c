/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Layout text ("T/R/W/S") through parse, validate and end_ms, then an ID
 * built from the input decoded and re-encoded. Input: the layout text, and
 * after a NUL optionally unit_ms (4 bytes), epoch_ms (8) and an ID (8).
 */
#include "fuzz.h"

#include "idmint.h"

#include <stdlib.h>
#include <string.h>

static uint64_t take(const uint8_t **p, size_t *n, size_t width)
{
    uint64_t v = 0;
    size_t i;

    for (i = 0; i<width && * n> 0; i++, (*p)++, (*n)--)
        v |= (uint64_t) * *p << (8 * i);
    return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_strdup(data, size);
    size_t text_len = strlen(text);
    const uint8_t *tail = data + text_len;
    size_t tail_n = size - text_len;
    idmint_layout l, before;
    idmint_decoded dec;
    int64_t end_ms;
    uint64_t id, rebuilt;

    idmint_layout_default(&l);
    before = l;
    if (idmint_layout_parse(text, &l) != 0) {
        /* Writes only on success. */
        if (memcmp(&l, &before, sizeof(l)) != 0)
            abort();
        free(text);
        return 0;
    }
    free(text);
    if (l.unit_ms != before.unit_ms || l.epoch_ms != before.epoch_ms)
        abort();
    if (tail_n > 0) {
        tail++, tail_n--; /* the NUL */
        l.unit_ms = (uint32_t)take(&tail, &tail_n, 4);
        l.epoch_ms = (int64_t)take(&tail, &tail_n, 8);
    }
    id = take(&tail, &tail_n, 8);
    if (idmint_layout_validate(&l) != 0) {
        if (idmint_layout_end_ms(&l, &end_ms) == 0 || idmint_decode(&l, id, &dec) == 0)
            abort(); /* an invalid layout must be refused everywhere */
        return 0;
    }
    if (idmint_layout_end_ms(&l, &end_ms) != 0 || end_ms <= l.epoch_ms)
        abort();
    if (idmint_decode(&l, id, &dec) != 0)
        return 0;
    if (dec.time_units >> l.time_bits != 0 || (uint64_t)dec.region >> l.region_bits != 0 ||
        (uint64_t)dec.worker >> l.worker_bits != 0 ||
        (uint64_t)dec.sequence >> l.sequence_bits != 0)
        abort();
    if (dec.unix_ms != l.epoch_ms + (int64_t)dec.time_units * (int64_t)l.unit_ms ||
        dec.unix_ms >= end_ms)
        abort();
    rebuilt = dec.time_units;
    rebuilt = (rebuilt << l.region_bits) | dec.region;
    rebuilt = (rebuilt << l.worker_bits) | dec.worker;
    rebuilt = (rebuilt << l.sequence_bits) | dec.sequence;
    if (rebuilt != id)
        abort();
    return 0;
}
