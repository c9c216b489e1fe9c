/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Decimal ID text (idmint_id_parse) and UUID text (idmint_uuid_parse with
 * idmint_uuid_format): a parsed value formats back to text that parses to
 * the same value, and 16 raw bytes survive format then parse.
 */
#include "fuzz.h"

#include "idmint.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_strdup(data, size);
    char buf[37];
    uint8_t u[16], again[16];
    uint64_t id = 0, id2 = 0;

    if (idmint_id_parse(text, &id) == 0) {
        if (id == 0 || id > (uint64_t)INT64_MAX)
            abort();
        snprintf(buf, sizeof(buf), "%" PRIu64, id);
        if (idmint_id_parse(buf, &id2) != 0 || id2 != id)
            abort();
    } else if (id != 0) {
        abort(); /* written only on success */
    }

    memset(u, 0xa5, sizeof(u));
    if (idmint_uuid_parse(text, u) == 0) {
        idmint_uuid_format(u, buf);
        if (strlen(buf) != 36 || strlen(text) != 36 || strcasecmp(buf, text) != 0)
            abort();
        if (idmint_uuid_parse(buf, again) != 0 || memcmp(u, again, 16) != 0)
            abort();
    }
    free(text);

    if (size >= 16) {
        idmint_uuid_format(data, buf);
        if (strlen(buf) != 36 || idmint_uuid_parse(buf, again) != 0 || memcmp(data, again, 16) != 0)
            abort();
    }
    return 0;
}
