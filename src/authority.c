/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The authority: open and close, its clock, the actor the audit log names,
 * the worker and audit lists. The namespace rules are authority_ns.c, the
 * lease and range rules authority_lease.c and authority_range.c. Over a store (src/store/) the
 * rules apply here and the store only keeps rows; over a remote authority (src/remote/, http://)
 * every call goes there as asked and the remote's authority applies them.
 * Used in-process by handles and tools, and by idmintd.
 */
#include "internal.h"
#include "remote.h"
#include "store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pwd.h>
#include <unistd.h>

#define REGION_MAX 0xffffu /* a layout has at most 16 region bits */

/* ==== helpers ==== */

int64_t idmint__authority_now_ms(struct idmint_authority *a)
{
    return idmint__clock_read_ms(a->clk);
}

void idmint__authority_actor(const struct idmint_authority *a, char *buf, size_t size)
{
    struct passwd pw, *found = NULL;
    char pwbuf[1024];
    uid_t uid = getuid();

    if (a != NULL && a->actor[0] != '\0') {
        snprintf(buf, size, "%s", a->actor);
        return;
    }
    if (getpwuid_r(uid, &pw, pwbuf, sizeof(pwbuf), &found) == 0 && found != NULL)
        snprintf(buf, size, "user:%s(%lu)", found->pw_name, (unsigned long)uid);
    else
        snprintf(buf, size, "user:(%lu)", (unsigned long)uid);
}

int idmint__authority_check(const struct idmint_authority *a)
{
    if (a == NULL || (a->st == NULL && a->remote == NULL))
        return idmint__fail(IDMINT_EINVAL, "authority is NULL");
    return 0;
}

/* ==== open / close ==== */

/*
 * The URL @p url stands for: itself, else $IDMINT_AUTHORITY, else the fixed
 * default written to @p fallback (*is_default set). The one place that rule
 * is read, for opening and for showing.
 */
static int authority_url(const char *url, char fallback[IDMINT_DEFAULT_AUTHORITY_MAX],
                         const char **out, int *is_default)
{
    int rc;

    *is_default = 0;
    if (url == NULL || url[0] == '\0')
        url = getenv("IDMINT_AUTHORITY");
    if (url == NULL || url[0] == '\0') {
        if ((rc = idmint__default_authority(fallback, IDMINT_DEFAULT_AUTHORITY_MAX)) != 0)
            return rc;
        url = fallback;
        *is_default = 1;
    }
    *out = url;
    return 0;
}

/*
 * Copy @p url to @p buf with every secret as "***": the password of a
 * "scheme://user:PASSWORD@host" and the value of a "password=" or "token="
 * parameter. 0 or EINVAL when @p size is too small.
 */
static int masked_copy(const char *url, char *buf, size_t size)
{
    static const char *const keys[] = {"password=", "token="};
    const char *p = url, *at = NULL, *colon = NULL, *auth = strstr(url, "://");
    size_t n = 0, k;

    if (auth != NULL) {
        auth += 3;
        at = auth + strcspn(auth, "@/?");
        if (*at == '@') {
            colon = memchr(auth, ':', (size_t)(at - auth));
        } else {
            at = NULL;
        }
    }
    while (*p != '\0') {
        size_t skip = 0;

        if (colon != NULL && p == colon + 1) {
            skip = (size_t)(at - p);
        } else {
            for (k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
                size_t len = strlen(keys[k]);

                if ((p == url || strchr("?&; ", p[-1]) != NULL) && strncmp(p, keys[k], len) == 0) {
                    if (n + len >= size)
                        goto too_small;
                    memcpy(buf + n, p, len);
                    n += len;
                    p += len;
                    skip = strcspn(p, "&; "); /* the value, to its end */
                    break;
                }
            }
        }
        if (skip > 0) {
            if (n + 3 >= size)
                goto too_small;
            memcpy(buf + n, "***", 3);
            n += 3;
            p += skip;
            continue;
        }
        if (*p == '\0')
            break;
        if (n + 1 >= size)
            goto too_small;
        buf[n++] = *p++;
    }
    buf[n] = '\0';
    return 0;
too_small:
    return idmint__fail(IDMINT_EINVAL, "the authority URL is longer than its buffer (%zu bytes)",
                        size);
}

int idmint_authority_resolve(const char *url, char *buf, size_t size)
{
    char fallback[IDMINT_DEFAULT_AUTHORITY_MAX], text[IDMINT_AUTHORITY_TEXT_MAX];
    int rc, is_default;

    if (buf == NULL || size == 0)
        return idmint__fail(IDMINT_EINVAL, "authority resolve: no output buffer");
    if ((rc = authority_url(url, fallback, &url, &is_default)) != 0)
        return rc;
    if (idmint__remote_find(url) == NULL && (rc = idmint__store_url_check(url)) != 0)
        return rc;
    if ((rc = masked_copy(url, text, sizeof(text) < size ? sizeof(text) : size)) != 0)
        return rc;
    memcpy(buf, text, strlen(text) + 1);
    return 0;
}

/*
 * Open the store at @p url (NULL: $IDMINT_AUTHORITY, else the fixed default
 * of idmint__default_authority). @p flags are STORE_OPEN_*: with
 * STORE_OPEN_EXISTING nothing is created, not even the default's folder.
 * *out is written only on success.
 */
static int authority_open(struct idmint_authority **out, const char *url, uint32_t region,
                          struct clock *clk, const char *token, unsigned flags)
{
    const struct remote_ops *remote;
    char fallback[IDMINT_DEFAULT_AUTHORITY_MAX];
    struct idmint_authority *a;
    int rc, is_default = 0;

    if (out == NULL)
        return idmint__fail(IDMINT_EINVAL, "authority output is NULL");
    if (region > REGION_MAX)
        return idmint__fail(IDMINT_EINVAL, "region %u is above %u", (unsigned)region,
                            (unsigned)REGION_MAX);
    if ((rc = authority_url(url, fallback, &url, &is_default)) != 0)
        return rc;
    /* The default's folder is ours to make; a path the caller names is not. */
    if (is_default && (flags & STORE_OPEN_EXISTING) == 0 &&
        (rc = idmint__default_authority_mkdir(url)) != 0)
        return rc;
    a = calloc(1, sizeof(*a));
    if (a == NULL)
        return idmint__fail(IDMINT_ENOMEM, "out of memory opening the authority");
    if (token == NULL) {
        token = getenv("IDMINT_TOKEN");
        if (token != NULL && token[0] == '\0')
            token = NULL;
    }
    /* A remote authority is never created from here: nothing to skip for
     * STORE_OPEN_EXISTING. */
    remote = idmint__remote_find(url);
    if (remote != NULL)
        rc = remote->open(url + strlen(remote->scheme) + 1, token, &a->remote);
    else
        rc = idmint__store_open_flags(url, token, flags, &a->st);
    /* Where the store is, for this host's witness (authority_restore.c):
     * read once here, while the URL is at hand. */
    if (rc == 0 && a->st != NULL &&
        (rc = idmint__store_location(a->st, url, a->location, sizeof(a->location))) != 0) {
        a->location[0] = '\0';
        if (rc == 1)
            rc = 0; /* a backend that cannot say: nothing is bound */
        else
            idmint__store_close(a->st);
    }
    if (rc != 0) {
        free(a);
        return rc;
    }
    a->region = region;
    idmint__origin_self(&a->self);
    a->origin = a->self;
    idmint__retention_defaults(a->keep_ms);
    idmint__clock_init(&a->own_clock, NULL, NULL, NULL);
    a->clk = clk != NULL ? clk : &a->own_clock;
    *out = a;
    return 0;
}

int idmint__authority_open_clock(struct idmint_authority **out, const char *url, uint32_t region,
                                 struct clock *clk, const char *token)
{
    return authority_open(out, url, region, clk, token, 0);
}

int idmint_authority_open(idmint_authority **out, const char *url, uint32_t region)
{
    return authority_open(out, url, region, NULL, NULL, 0);
}

int idmint_authority_open_existing(idmint_authority **out, const char *url, uint32_t region)
{
    return authority_open(out, url, region, NULL, NULL, STORE_OPEN_EXISTING);
}

void idmint_authority_close(idmint_authority *a)
{
    if (a == NULL)
        return;
    if (a->remote != NULL)
        a->remote->ops->close(a->remote);
    idmint__store_close(a->st);
    free(a);
}

void idmint__authority_act_as(struct idmint_authority *a, const char *actor)
{
    snprintf(a->actor, sizeof(a->actor), "%s", actor != NULL ? actor : "");
}

/* ==== workers and audit ==== */

int idmint_workers_list(idmint_authority *a, const char *ns, idmint_worker_info **out, size_t *n)
{
    idmint_ns_info info;
    size_t i;
    int rc = idmint__authority_check(a);

    if (rc != 0 || (rc = idmint__ns_name_check(ns)) != 0)
        return rc;
    if (out == NULL || n == NULL)
        return idmint__fail(IDMINT_EINVAL, "output is NULL");
    if (a->remote != NULL) {
        rc = a->remote->ops->lease_list(a->remote, ns, out, n);
    } else {
        /* An unknown namespace is an error, not an empty list. */
        if ((rc = idmint__store_ns_get(a->st, ns, &info)) != 0)
            return rc;
        rc = idmint__store_lease_list(a->st, ns, out, n);
    }
    if (rc != 0)
        return rc;
    /* The holder id is the lease's secret: whoever knows it may renew or
     * release. Listings show a fingerprint only. And the ABI guard
     * idmint_worker_info_at() steps by, whatever the rows held. */
    for (i = 0; i < *n; i++) {
        char fp[IDMINT_HOLDER_FP_LEN + 1];

        (*out)[i].size = sizeof((*out)[i]);
        idmint__holder_fingerprint((*out)[i].holder, fp);
        memcpy((*out)[i].holder, fp, sizeof(fp));
    }
    return 0;
}

int idmint_audit_list(idmint_authority *a, int64_t after_seq, size_t limit,
                      idmint_audit_entry **out, size_t *n)
{
    size_t i;
    int rc = idmint__authority_check(a);

    if (rc != 0)
        return rc;
    if (out == NULL || n == NULL)
        return idmint__fail(IDMINT_EINVAL, "output is NULL");
    if (a->remote != NULL)
        rc = a->remote->ops->audit_list(a->remote, after_seq, limit, out, n);
    else
        rc = idmint__store_audit_list(a->st, after_seq, limit, out, n);
    if (rc != 0)
        return rc;
    /* The ABI guard idmint_audit_entry_at() steps by, whatever the rows held. */
    for (i = 0; i < *n; i++)
        (*out)[i].size = sizeof((*out)[i]);
    return 0;
}
