/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Idempotent batches through the authority: idmintd mints a keyed batch
 * once, saves it here before it answers, and answers every repeat of the
 * key by the same caller from what was saved (src/batch.c has the runs
 * format). How long a batch is kept is fixed when it is saved, and counted
 * by the store's clock (store.h, prune).
 */
#include "internal.h"
#include "store.h"

#include <string.h>

static int local_only(idmint_authority *a)
{
    int rc = idmint__authority_check(a);

    if (rc != 0)
        return rc;
    if (a->remote != NULL)
        return idmint__fail(IDMINT_EINVAL,
                            "idempotent batches are kept by the authority's store, not through "
                            "a remote authority");
    return 0;
}

int idmint__authority_batch_get(idmint_authority *a, const char *owner, const char *key,
                                struct idmint__batch *out)
{
    int rc = local_only(a);

    if (rc != 0)
        return rc;
    if (out == NULL)
        return idmint__fail(IDMINT_EINVAL, "batch output is NULL");
    idmint__batch_clear(out);
    return idmint__store_batch_get(a->st, owner, key, out);
}

int idmint__authority_batch_claim(idmint_authority *a, struct idmint__batch *b,
                                  struct idmint__batch *saved)
{
    int inserted = 0;
    int rc = local_only(a);

    if (rc != 0)
        return rc;
    if (b == NULL || saved == NULL)
        return idmint__fail(IDMINT_EINVAL, "batch or its output is NULL");
    idmint__batch_clear(saved);
    b->keep_ms = a->keep_ms[IDMINT__KEEP_BATCHES];
    rc = idmint__store_batch_claim(a->st, b, saved, &inserted);
    if (rc == 0 && inserted)
        idmint__authority_note_record(a, IDMINT__KEEP_BATCHES);
    return rc;
}
