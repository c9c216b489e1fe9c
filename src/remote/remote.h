/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A remote authority: another process (idmintd) that applies the
 * authority's rules and keeps the store. Unlike a store (src/store/), a
 * remote is sent what its caller asked — a lease length in ms, a count, the
 * first time unit not minted from — and answers with what its own authority
 * layer decided, so the rules run once, there. authority*.c dispatches to
 * it when the URL names one. Private: never installed.
 */
#ifndef IDMINT_REMOTE_H
#define IDMINT_REMOTE_H

#include "idmint.h"
#include "idmint_service.h"

#include <stddef.h>
#include <stdint.h>

struct remote;

/*
 * Every member has the contract of the authority call of the same name
 * (idmint.h, idmint_service.h); errors come from the remote's reply, plus
 * IDMINT_EUNAVAILABLE when it cannot be reached and IDMINT_ESTORE when the
 * reply cannot be read.
 */
struct remote_ops {
    const char *scheme; /* "http", "https" */
    /* @p location is the URL without "scheme:"; @p token a bearer token or NULL. */
    int (*open)(const char *location, const char *token, struct remote **out);
    void (*close)(struct remote *r); /* NULL-safe */
    int (*ns_create)(struct remote *r, const idmint_ns_info *ns);
    /* As idmint__authority_ns_resolve: the remote creates "default". */
    int (*ns_get)(struct remote *r, const char *name, idmint_ns_info *out);
    int (*ns_list)(struct remote *r, idmint_ns_info **out, size_t *n);
    int (*ns_set_disabled)(struct remote *r, const char *name, int disabled);
    int (*lease_take)(struct remote *r, const char *ns, uint32_t lease_ms,
                      struct idmint__lease *lease);
    int (*lease_renew)(struct remote *r, const char *ns, struct idmint__lease *lease,
                       uint32_t lease_ms);
    int (*lease_release)(struct remote *r, const char *ns, struct idmint__lease *lease,
                         uint64_t next_unit);
    int (*lease_list)(struct remote *r, const char *ns, idmint_worker_info **out, size_t *n);
    int (*force_release)(struct remote *r, const char *ns, uint32_t region, uint32_t worker_id,
                         int64_t max_ahead_ms);
    int (*range_reserve)(struct remote *r, const char *ns, const char *incarnation,
                         const char *request_id, uint64_t count, struct idmint__range *out);
    int (*range_forget)(struct remote *r, const char *ns, const char *incarnation,
                        const char *before_request_id, uint64_t *forgotten);
    int (*audit_list)(struct remote *r, int64_t after_seq, size_t limit, idmint_audit_entry **out,
                      size_t *n);
    int (*trace)(struct remote *r, const char *ns, uint64_t id, idmint_grant_info **out, size_t *n);
    /* @p out: the library's own struct (size = sizeof), filled from the reply. */
    int (*collision_report)(struct remote *r, const char *ns, uint64_t id, int64_t observed_ms,
                            const char *note, idmint_collision *out);
    int (*collisions_list)(struct remote *r, int64_t after_seq, size_t limit,
                           idmint_collision **out, size_t *n);
    /* As idmint__authority_history_state on the daemon's store. */
    int (*history_check)(struct remote *r, uint64_t seq, struct idmint__history_state *out);
};

/* Every remote's private struct starts with this. */
struct remote {
    const struct remote_ops *ops;
};

extern const struct remote_ops idmint__remote_http;
extern const struct remote_ops idmint__remote_https; /* remote_http.c, over TLS */

/* The remote backend of @p url's scheme, or NULL when @p url names a store. */
const struct remote_ops *idmint__remote_find(const char *url);

#endif /* IDMINT_REMOTE_H */
