/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The store layer's side of records (store.h, version 8): what a key and a
 * value may hold is judged here once, so that no backend has to, and a
 * backend without records answers with one message.
 */
#include "store.h"
#include "internal.h"

#include <string.h>

#define RECORD_KEY_MAX 63u

static int record_key_check(const char *key)
{
    size_t i, n;

    if (key == NULL || (n = strlen(key)) == 0 || n > RECORD_KEY_MAX)
        return idmint__fail(IDMINT_EINVAL, "a record key is 1..%u bytes", RECORD_KEY_MAX);
    for (i = 0; i < n; i++) {
        char c = key[i];

        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '/' || c == '.' ||
              c == '_' || c == '-'))
            return idmint__fail(IDMINT_EINVAL, "record key '%s': byte %zu is not [a-z0-9/._-]", key,
                                i);
    }
    return 0;
}

static int records_kept(const struct store *st)
{
    if (st == NULL || st->ops == NULL)
        return idmint__fail(IDMINT_EINVAL, "store is NULL");
    if (!idmint__store_has_records(st))
        return idmint__fail(IDMINT_EINVAL, "the %s store keeps no records (region claims)",
                            st->ops->scheme);
    return 0;
}

int idmint__store_has_records(const struct store *st)
{
    return st != NULL && st->ops != NULL && st->ops->version >= STORE_OPS_V8 &&
           st->ops->record_get != NULL && st->ops->record_put != NULL;
}

int idmint__store_record_get(struct store *st, const char *key, char *value, size_t size,
                             uint64_t *version)
{
    int rc;

    if ((rc = records_kept(st)) != 0 || (rc = record_key_check(key)) != 0)
        return rc;
    if (value == NULL || size < STORE_RECORD_MAX || version == NULL)
        return idmint__fail(IDMINT_EINVAL, "record '%s': no room for its value", key);
    value[0] = '\0';
    *version = 0;
    return st->ops->record_get(st, key, value, size, version);
}

int idmint__store_record_put(struct store *st, const char *key, const char *value, uint64_t expect,
                             const char *actor, const char *action, int64_t now_ms)
{
    size_t i, n;
    int rc;

    if ((rc = records_kept(st)) != 0 || (rc = record_key_check(key)) != 0)
        return rc;
    if (value == NULL || (n = strlen(value)) == 0 || n >= STORE_RECORD_MAX)
        return idmint__fail(IDMINT_EINVAL, "record '%s': a value is 1..%u bytes", key,
                            STORE_RECORD_MAX - 1);
    for (i = 0; i < n; i++)
        if (value[i] < 0x20 || value[i] > 0x7e)
            return idmint__fail(IDMINT_EINVAL,
                                "record '%s': byte %zu of the value is not printable", key, i);
    if (expect > IDMINT_MAX_VALUE || actor == NULL || action == NULL)
        return idmint__fail(IDMINT_EINVAL, "record '%s': a bad version, actor or action", key);
    return st->ops->record_put(st, key, value, expect, actor, action, now_ms);
}
