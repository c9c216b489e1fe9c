/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The shapes of the names a caller hands the authority: namespace names and
 * idempotency keys. Pure checks, below everything that takes such a name
 * (the authority's rules, the store interface, idmintd).
 */
#include "internal.h"

#include <stddef.h>
#include <string.h>

#define NS_NAME_MAX 63 /* characters, as in [a-z0-9][a-z0-9_.-]{0,62} */

int idmint__ns_name_check(const char *name)
{
    size_t i;

    if (name == NULL)
        return idmint__fail(IDMINT_EINVAL, "namespace name is missing");
    if (name[0] == '\0')
        return idmint__fail(IDMINT_EINVAL, "namespace name is empty");
    for (i = 0; name[i] != '\0'; i++) {
        unsigned char c = (unsigned char)name[i];
        int is_ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                    (i > 0 && (c == '_' || c == '.' || c == '-'));

        if (i >= NS_NAME_MAX)
            return idmint__fail(IDMINT_EINVAL,
                                "namespace name '%.63s...' is longer than %d characters", name,
                                NS_NAME_MAX);
        if (!is_ok)
            return idmint__fail(IDMINT_EINVAL,
                                "namespace name '%.63s': character %zu (0x%02x) is not allowed; "
                                "names match [a-z0-9][a-z0-9_.-]{0,62}",
                                name, i + 1, (unsigned)c);
    }
    return 0;
}

int idmint__batch_key_check(const char *key)
{
    size_t i, len = key != NULL ? strlen(key) : 0;

    if (len == 0 || len > IDMINT_BATCH_KEY_MAX)
        return idmint__fail(IDMINT_EINVAL, "idempotency key must be 1 to %d characters",
                            IDMINT_BATCH_KEY_MAX);
    for (i = 0; i < len; i++) {
        char c = key[i];

        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == ':' || c == '-'))
            return idmint__fail(IDMINT_EINVAL,
                                "idempotency key may hold only A-Z a-z 0-9 . _ : - (byte %zu is "
                                "0x%02x)",
                                i + 1, (unsigned)(unsigned char)c);
    }
    return 0;
}
