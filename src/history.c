/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A holder's view of the authority's history (idmint_service.h): the one
 * place that decides that a store went backwards under a running process.
 */
#include "internal.h"

#include <stdio.h>
#include <string.h>

int idmint__history_id_valid(const char *id)
{
    size_t i;

    for (i = 0; i < 32; i++)
        if (idmint__hex_value(id[i]) < 0 || (id[i] >= 'A' && id[i] <= 'F'))
            return 0;
    return id[32] == '\0';
}

int idmint__history_follow(struct idmint__history *seen, const struct idmint__history *got,
                           const char *ns)
{
    if (got->seq == 0 || got->id[0] == '\0')
        return 0;
    if (seen->id[0] != '\0' && strcmp(seen->id, got->id) != 0)
        return idmint__fail(IDMINT_ERESTORED,
                            "namespace '%s': the authority's history changed (id %.8s..., was "
                            "%.8s...): it was fenced after a restore; this process's lease or "
                            "range belongs to the lost history and must not mint on; start it "
                            "again",
                            ns, got->id, seen->id);
    if (got->seq <= seen->seq)
        return idmint__fail(IDMINT_ERESTORED,
                            "namespace '%s': the authority went backwards (grant counter %llu, "
                            "this process saw %llu): it was restored from a backup or rolled "
                            "back, and may hand out again what this process holds; minting has "
                            "stopped. Run 'idmint authority fence' on it before any process "
                            "mints again",
                            ns, (unsigned long long)got->seq, (unsigned long long)seen->seq);
    *seen = *got;
    return 0;
}
