/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Range reservations through the authority (docs/design.md "Ranges"). Whether a
 * namespace grants a count, and how a reservation is cut at max_value, is
 * decided on the row the store reads in its transaction, by the one helper
 * every backend calls (idmint__store_range_grant); a remote authority is
 * sent the count as asked.
 */
#include "internal.h"
#include "remote.h"
#include "store.h"

int idmint__authority_range_reserve(idmint_authority *a, const char *ns, const char *incarnation,
                                    const char *request_id, uint64_t count,
                                    struct idmint__range *out)
{
    int rc = idmint__authority_check(a);

    if (rc != 0 || (rc = idmint__ns_name_check(ns)) != 0)
        return rc;
    if (out == NULL)
        return idmint__fail(IDMINT_EINVAL, "range output is NULL");
    out->origin = a->origin;
    if (a->remote != NULL)
        return a->remote->ops->range_reserve(a->remote, ns, incarnation, request_id, count, out);
    rc = idmint__store_range_reserve(a->st, ns, incarnation, request_id, count,
                                     idmint__authority_now_ms(a), out);
    /* A replay (a lost reply retried) made no grant but is counted too: it
     * only brings a prune pass a little earlier. */
    if (rc == 0)
        idmint__authority_note_record(a, IDMINT__KEEP_RANGE_GRANTS);
    return rc;
}

int idmint__authority_range_forget(idmint_authority *a, const char *ns, const char *incarnation,
                                   const char *before_request_id, uint64_t *forgotten)
{
    int rc = idmint__authority_check(a);

    if (rc != 0 || (rc = idmint__ns_name_check(ns)) != 0)
        return rc;
    if (a->remote != NULL)
        return a->remote->ops->range_forget(a->remote, ns, incarnation, before_request_id,
                                            forgotten);
    return idmint__store_range_forget(a->st, ns, incarnation, before_request_id, forgotten);
}
