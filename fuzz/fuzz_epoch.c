/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Epoch text through idmint_epoch_parse, and the round trip with
 * idmint_format_iso8601: whatever parses formats back to text that parses to
 * the same instant, and whatever formats parses back to the same value.
 */
#include "fuzz.h"

#include "idmint.h"

#include <stdlib.h>
#include <string.h>

static void round_trip(int64_t ms)
{
    char buf[32];
    int64_t again = 0;

    if (idmint_format_iso8601(ms, buf, sizeof(buf)) != 0)
        return;
    if (memchr(buf, '\0', sizeof(buf)) == NULL)
        abort();
    /* Epochs start at 1970; the formatter also covers the years before. */
    if (idmint_epoch_parse(buf, &again) != 0) {
        if (ms >= 0)
            abort();
        return;
    }
    if (again != ms)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_strdup(data, size);
    int64_t ms = INT64_MIN, raw = 0;
    size_t i;

    if (idmint_epoch_parse(text, &ms) == 0)
        round_trip(ms);
    else if (ms != INT64_MIN)
        abort(); /* written only on success */
    free(text);

    /* The same bytes as a binary instant, for the formatter's edges. */
    for (i = 0; i < 8 && i < size; i++)
        raw |= (int64_t)((uint64_t)data[i] << (8 * i));
    round_trip(raw);
    return 0;
}
