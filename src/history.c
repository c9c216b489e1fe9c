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

int idmint__history_is_point(const struct idmint__history *h)
{
    return h->seq != 0 && h->id[0] != '\0';
}

int idmint__history_follow(struct idmint__history *seen, const struct idmint__history *got,
                           const char *ns)
{
    if (!idmint__history_is_point(got))
        return 0;
#ifdef IDMINT_MUTANT_HISTORY_UNCHECKED
    /* The mutant, planted for tests/sim: the counter followed, never checked. */
    *seen = *got;
    return 0;
#endif
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

/* 1 when @p id is one of the ids @p state's history was fenced over. */
static int fenced_over(const struct idmint__history_state *state, const char *id)
{
    for (size_t i = 0; i < state->lineage_n && i < IDMINT__LINEAGE_MAX; i++)
        if (strcmp(state->lineage[i], id) == 0)
            return 1;
    return 0;
}

int idmint__history_verify(const struct idmint__history *seen,
                           const struct idmint__history_state *state, enum idmint__evidence kind,
                           const char *where)
{
    int is_holder = kind == IDMINT__EVIDENCE_HOLDER;
    const char *who = is_holder ? "this process" : "this host";

#ifdef IDMINT_MUTANT_HISTORY_UNCHECKED
    return 0;
#endif
    if (state->backup_ms != 0)
        return idmint__fail(IDMINT_ERESTORED,
                            "%s: the authority is a backup that was put back and not fenced: "
                            "processes of the history after it may still mint from what it "
                            "would hand out again, so nothing mints from it. Run 'idmint "
                            "authority fence' on it (docs/operations.md)",
                            where);
    if (!idmint__history_is_point(seen))
        return 0;
    if (strcmp(seen->id, state->head.id) != 0) {
        if (fenced_over(state, seen->id)) {
            if (!is_holder)
                return 0; /* the fence quarantined all that history held */
            return idmint__fail(IDMINT_ERESTORED,
                                "%s: the authority was fenced after a restore (history %.8s... "
                                "replaced %.8s...): this process's lease or range belongs to "
                                "the lost history and must not mint on; start it again",
                                where, state->head.id, seen->id);
        }
        return idmint__fail(IDMINT_ERESTORED,
                            "%s: the authority went back in time: its history %.8s... is not "
                            "the %.8s... %s saw nor was it fenced over it (a copy from before "
                            "a fence, or another store put in its place); minting has stopped. "
                            "Run 'idmint authority fence' on it before any process mints again",
                            where, state->head.id, seen->id, who);
    }
    if (seen->seq > state->head.seq)
        return idmint__fail(IDMINT_ERESTORED,
                            "%s: the authority went back in time (its history is at write %llu, "
                            "%s saw write %llu): it was restored from a copy or rolled back, "
                            "and may hand out again what was granted since; minting has "
                            "stopped. Run 'idmint authority fence' on it before any process "
                            "mints again",
                            where, (unsigned long long)state->head.seq, who,
                            (unsigned long long)seen->seq);
    if (seen->tip == 0)
        return 0; /* an older store or remote said no tip: the seq is all there is */
    if (state->oldest_seq == 0 || seen->seq < state->oldest_seq) {
        /* A witness older than the log: nothing of that history can still
         * be running (the log keeps a day, the longest lease), so it proves
         * nothing either way; a holder's is evidence that cannot be
         * established (it checks every second; the log keeps thousands). */
        if (!is_holder)
            return 0;
        return idmint__fail(IDMINT_ERESTORED,
                            "%s: cannot establish that the authority still holds the history "
                            "this process saw (write %llu; its log now starts at write %llu): "
                            "refusing to mint on what it may have forgotten; start the process "
                            "again",
                            where, (unsigned long long)seen->seq,
                            (unsigned long long)state->oldest_seq);
    }
    if (state->tip_at_seq != seen->tip)
        return idmint__fail(IDMINT_ERESTORED,
                            "%s: the authority went back in time and was written to since: its "
                            "write %llu is not the one %s saw (it was restored from a copy or "
                            "rolled back, then granted again), so it may hand out again what "
                            "was granted before; minting has stopped. Run 'idmint authority "
                            "fence' on it before any process mints again",
                            where, (unsigned long long)seen->seq, who);
    return 0;
}
