/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The thread's authority for the handlers: opened on first use, naming the
 * caller of the request in audited changes, with its calls timed for
 * /metrics; and the bound on what each caller can make it keep.
 */
#include "routes_authority.h"
#include "clocks.h"

#include "daemon.h"
#include "errors_http.h"
#include "idmint_service.h"
#include "reply.h"

#include <inttypes.h>
#include <stdio.h>

void routes_store_done(struct daemon_thread *w, uint64_t t0)
{
    metrics_store_time(&w->metrics, clocks_mono_ns() - t0);
}

int routes_authority(struct daemon_thread *w, idmint_authority **out)
{
    int rc;

    if (w->auth == NULL) {
        rc = handles_authority_open(&w->d->handles, &w->auth);
        if (rc != 0) {
            w->auth = NULL;
            return rc;
        }
        for (int k = 0; k < IDMINT__KEEP__COUNT; k++)
            if (w->d->cfg.keep_s[k] != 0)
                (void)idmint__authority_set_retention(w->auth, (enum idmint__retained)k,
                                                      (int64_t)w->d->cfg.keep_s[k] * 1000);
    }
    /* Audited changes name the caller of this request, not the daemon's uid;
     * grants are this process's until a route says whom they are for. */
    idmint__authority_act_as(w->auth, w->actor);
    idmint__authority_on_behalf(w->auth, NULL);
    *out = w->auth;
    return 0;
}

idmint_authority *routes_authority_or_fail(struct http_req *r, struct daemon_thread *w)
{
    idmint_authority *a;
    int rc = routes_authority(w, &a);

    if (rc != 0) {
        routes_fail(r, rc, NULL);
        return NULL;
    }
    return a;
}

int routes_snowflake_ns(struct http_req *r, struct daemon_thread *w, const char *ns,
                        idmint_authority **a, idmint_ns_info *info, const char *not_snowflake)
{
    uint64_t t0;
    int rc;

    if ((*a = routes_authority_or_fail(r, w)) == NULL)
        return -1;
    idmint_ns_info_init(info, 0);
    t0 = clocks_mono_ns();
    rc = idmint__authority_ns_resolve(*a, ns, info);
    routes_store_done(w, t0);
    if (rc != 0) {
        routes_fail(r, rc, NULL);
        return -1;
    }
    if (info->kind != IDMINT_KIND_SNOWFLAKE) {
        routes_fail(r, IDMINT_EINVAL, not_snowflake);
        return -1;
    }
    return 0;
}

int routes_write_allowed(struct http_req *r, struct daemon_thread *w, enum ratelimit_class c)
{
    const struct config *cfg = &w->d->cfg;
    size_t caller = RATELIMIT_ANONYMOUS, i;
    unsigned role = cfg->n_tokens > 0 ? AUTH_NONE : AUTH_ADMIN;
    uint64_t wait;
    char value[24], text[200];

    /* w->actor is the name of one of cfg's tokens, or a literal for the anonymous caller. */
    for (i = 0; i < cfg->n_tokens; i++)
        if (w->actor == cfg->tokens[i].name) {
            caller = i;
            role = cfg->tokens[i].role;
        }
    wait = ratelimit_take_write(&w->d->limits, c, caller, &cfg->limits[c], clocks_mono_ns());
    if (wait == 0)
        return 0;
    ratelimit_count(&w->d->limits, 0, role);
    snprintf(value, sizeof(value), "%" PRIu64, ratelimit_retry_after_s(wait));
    http_add_header(r, "retry-after", value);
    snprintf(text, sizeof(text), "%s '%s' is over %s_rate (%s); retry in %s s",
             caller == RATELIMIT_ANONYMOUS ? "caller" : "token", w->actor, ratelimit_class_name(c),
             c == RATELIMIT_BATCH       ? "new Idempotency-Keys a second"
             : c == RATELIMIT_COLLISION ? "collision reports a second"
             : c == RATELIMIT_RENEW     ? "lease renewals a second"
                                        : "worker takes and range reservations a second",
             value);
    routes_fail_wire(r, ERRORS_HTTP_RATE_LIMITED_CODE, text);
    return -1;
}
