/* SPDX-License-Identifier: Apache-2.0 */
/*
 * GET /v1/ids with an Idempotency-Key (docs/http-api.md). A client whose
 * reply was lost cannot know whether the IDs it asked for are in use
 * somewhere; asking again with the same key returns exactly those IDs. The
 * first request mints, saves the batch in the authority (durable, keyed by
 * the caller and the key, so that no caller's key can block another's) and
 * only then answers; a repeat, on this node or another, answers from what
 * was saved. Two racing first requests both mint, one save wins, and both
 * answer with the winner's IDs: the loser's become a gap, never a second
 * answer. A caller saves at most batch_rate new keys a second ([limits]).
 * A store thread looks the key up and mints what the current time unit
 * holds; a batch that needs more units goes back to its loop, which mints
 * the rest from a timer, and comes to a store thread again to be saved: a
 * store thread never sleeps for a unit.
 */
#include "daemon.h"
#include "clocks.h"

#include "idmint_service.h"
#include "log.h"
#include "reply.h"
#include "routes_authority.h"
#include "routes_defer.h"
#include "routes_ids.h"
#include "routes_mint.h"

#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static _Atomic int fault_after_save;

void routes_batch_init(void)
{
    const char *fault = getenv("IDMINTD_TEST_FAULT");

    if (fault == NULL || fault[0] == '\0')
        return;
    if (strcmp(fault, "exit-after-batch-save") == 0) {
        atomic_store(&fault_after_save, 1);
        log_write(LOG_WARN, "test fault point armed: this daemon will kill itself",
                  "fault=%s reason=\"IDMINTD_TEST_FAULT is for tests only\"", fault);
    } else {
        log_write(LOG_WARN, "unknown test fault point ignored", "fault=\"%.64s\"", fault);
    }
}

/*
 * The key of the request into @p key, without the optional whitespace (SP,
 * HTAB) around it: RFC 9110 §5.5 makes that no part of a field value, so
 * "k" and " k\t" name one key. 0, or -1 after replying 400.
 */
static int request_key(struct http_req *r, char *key, size_t size)
{
    const char *v = r->idempotency_key;
    size_t len = r->idempotency_key_len;

    if (r->idempotency_keys > 1) {
        routes_fail(r, IDMINT_EINVAL, "send at most one Idempotency-Key header");
        return -1;
    }
    while (len > 0 && (v[0] == ' ' || v[0] == '\t')) {
        v++;
        len--;
    }
    while (len > 0 && (v[len - 1] == ' ' || v[len - 1] == '\t'))
        len--;
    if (len == 0 || len >= size) {
        char text[96];

        snprintf(text, sizeof(text), "Idempotency-Key must be 1 to %d characters",
                 IDMINT_BATCH_KEY_MAX);
        routes_fail(r, IDMINT_EINVAL, text);
        return -1;
    }
    memcpy(key, v, len);
    key[len] = '\0';
    if (idmint__batch_key_check(key) != 0) {
        routes_fail(r, IDMINT_EINVAL, NULL);
        return -1;
    }
    return 0;
}

/*
 * Answer from @p saved (this caller's: the store keys batches by caller)
 * when it is this request's (namespace, count), else 409: a key names one
 * request of its caller.
 */
static void reply_saved(struct http_req *r, const struct idmint__batch *saved, const char *ns,
                        uint32_t count, enum metrics_batch_kind kind)
{
    uint64_t *ids;
    char text[256];

    if (strcmp(saved->ns, ns) != 0 || saved->count != count) {
        snprintf(text, sizeof(text),
                 "Idempotency-Key '%s' was first used for count=%u in namespace '%s'; a key "
                 "names one request",
                 saved->key, (unsigned)saved->count, saved->ns);
        routes_fail(r, IDMINT_ECONFLICT, text);
        metrics_batch(METRICS_BATCH_CONFLICT);
        return;
    }
    ids = (uint64_t *)(void *)http_alloc(r, (size_t)count * sizeof(uint64_t));
    if (ids == NULL) {
        routes_fail(r, IDMINT_ENOMEM, "out of memory");
        return;
    }
    if (idmint__batch_runs_decode(saved, ids) != 0) {
        routes_fail(r, IDMINT_ESTORE, NULL);
        return;
    }
    metrics_batch(kind);
    routes_reply_ids(r, ns, ids, count);
}

/*
 * Save @p ids (@p count of @p ns, all minted) under @p key and answer with
 * the batch saved (ours, or a racing first request's). On a store thread.
 */
static void claim_and_reply(struct http_req *r, struct daemon_thread *w, idmint_authority *a,
                            const char *ns, const char *key, const uint64_t *ids, uint32_t count)
{
    struct idmint__batch b, saved;
    uint64_t t0;
    int rc;

    memset(&b, 0, sizeof(b));
    memset(&saved, 0, sizeof(saved));
    snprintf(b.ns, sizeof(b.ns), "%s", ns);
    snprintf(b.key, sizeof(b.key), "%s", key);
    snprintf(b.owner, sizeof(b.owner), "%s", w->actor);
    if ((rc = idmint__batch_runs_encode(&b, ids, count)) == 0) {
        t0 = clocks_mono_ns();
        rc = idmint__authority_batch_claim(a, &b, &saved);
        routes_store_done(w, t0);
    }
    idmint__batch_clear(&b);
    if (rc != 0) {
        /* Nothing was saved, so nothing is answered: the IDs become a gap. */
        routes_fail(r, rc, NULL);
        return;
    }
    if (atomic_load(&fault_after_save))
        raise(SIGKILL);
    reply_saved(r, &saved, ns, count, METRICS_BATCH_MINTED);
    idmint__batch_clear(&saved);
}

void routes_batch_mint(struct http_req *r, struct daemon_thread *w, const char *ns,
                       struct ns_handle *nh, uint32_t count)
{
    struct idmint__batch saved;
    char key[IDMINT_BATCH_KEY_MAX + 1];
    idmint_authority *a;
    uint64_t *ids, t0;
    size_t got = 0;
    uint32_t wait_ms = 0;
    int rc;

    memset(&saved, 0, sizeof(saved));
    if (request_key(r, key, sizeof(key)) != 0 || (a = routes_authority_or_fail(r, w)) == NULL)
        return;
    t0 = clocks_mono_ns();
    rc = idmint__authority_batch_get(a, w->actor, key, &saved);
    routes_store_done(w, t0);
    if (rc == 0) {
        reply_saved(r, &saved, ns, count, METRICS_BATCH_REPLAYED);
        idmint__batch_clear(&saved);
        return;
    }
    if (rc != IDMINT_ENOTFOUND) {
        routes_fail(r, rc, NULL);
        return;
    }
    /* A new key is a row the store keeps for the retention: bounded per caller. */
    if (routes_write_allowed(r, w, RATELIMIT_BATCH) != 0)
        return;
    ids = (uint64_t *)(void *)http_alloc(r, (size_t)count * sizeof(uint64_t));
    if (ids == NULL) {
        routes_fail(r, IDMINT_ENOMEM, "out of memory");
        return;
    }
    /* What the current time unit holds, never waiting for the next: a
     * batch of 1 s units would hold this store thread for seconds, and
     * with it the lease calls of remote generators. */
    if ((rc = routes_mint_ready(w, nh, ids, count, &got, &wait_ms)) != 0) {
        routes_fail(r, rc, NULL);
        return;
    }
    if (got == count)
        claim_and_reply(r, w, a, ns, key, ids, count);
    else if (routes_mint_finish_on_loop(r, w, ns, ids, got, count, routes_batch_save) != 0)
        routes_fail(r, IDMINT_ENOMEM, "out of memory handing a batch to its event loop");
}

/* On a store thread: the batch routes_batch_save handed over (w->handoff). */
static void batch_claim(struct http_req *r, struct daemon_thread *w, const struct route_match *m)
{
    char key[IDMINT_BATCH_KEY_MAX + 1], ns[64];
    size_t count = w->handoff_size / sizeof(uint64_t);
    idmint_authority *a;

    (void)m;
    if (w->handoff == NULL || count == 0 || count > UINT32_MAX) {
        routes_fail(r, IDMINT_ENOMEM, "out of memory handing a batch to a store thread");
        return;
    }
    /* The request was checked before it minted; these only read it again. */
    if (routes_query_ns(r, ns, sizeof(ns)) != 0 || request_key(r, key, sizeof(key)) != 0 ||
        (a = routes_authority_or_fail(r, w)) == NULL)
        return;
    claim_and_reply(r, w, a, ns, key, (const uint64_t *)w->handoff, (uint32_t)count);
}

void routes_batch_save(struct http_req *r, struct daemon_thread *w, const struct route_match *m,
                       const uint64_t *ids, size_t count)
{
    routes_defer_store_with(r, w, m, batch_claim, ids, count * sizeof(uint64_t));
}
