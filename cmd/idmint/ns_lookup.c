/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Namespace lookups for the read-only subcommands. idmint_ns_get() creates
 * "default" on first use, which is right for minting and wrong for a
 * command that only reads: decode or show must never change the authority.
 */
#include "ns_lookup.h"

#include <string.h>

int ns_lookup(idmint_authority *a, const char *name, idmint_ns_info *out)
{
    idmint_ns_info *list = NULL;
    size_t n = 0, i;
    int rc = idmint_ns_list(a, &list, &n);

    if (rc != 0)
        return rc;
    for (i = 0; i < n; i++)
        if (strcmp(idmint_ns_info_at(list, i)->name, name) == 0)
            break;
    if (i < n) {
        *out = *idmint_ns_info_at(list, i);
        rc = 0;
    } else if (strcmp(name, "default") == 0) {
        /* Not created yet: it will be created with the default layout. */
        idmint_ns_info_init(out, IDMINT_KIND_SNOWFLAKE);
        memcpy(out->name, "default", sizeof("default"));
        rc = 0;
    } else {
        /* Only "default" is ever created: this read sets the message. */
        idmint_ns_info_init(out, 0);
        rc = idmint_ns_get(a, name, out);
    }
    idmint_free(list);
    return rc;
}
