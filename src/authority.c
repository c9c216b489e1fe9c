/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The authority: open and close, its clock, the actor the audit log names,
 * and the namespace rules (names, layouts, range bounds, "default" created
 * on first use). The lease and range rules are authority_lease.c and
 * authority_range.c. Over a store (src/store/) the rules apply here and the
 * store only keeps rows; over a remote authority (src/remote/, http://)
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

/* ==== namespaces ==== */

static void ns_info_init_size(idmint_ns_info *info, idmint_kind kind, size_t size)
{
    if (info == NULL)
        return;
    memset(info, 0, size);
    info->size = size;
    info->kind = kind;
    if (kind == IDMINT_KIND_SNOWFLAKE) {
        idmint_layout_default(&info->layout);
    } else if (kind == IDMINT_KIND_RANGE) {
        info->next_value = 1;
        info->max_value = IDMINT_MAX_VALUE;
        info->block = IDMINT_DEFAULT_BLOCK;
        info->max_block = IDMINT_DEFAULT_MAX_BLOCK;
    }
}

/* The old symbol: the first guarded version, for programs built against the 0.1 header. */
void(idmint_ns_info_init)(idmint_ns_info *info, idmint_kind kind)
{
    ns_info_init_size(info, kind, IDMINT__NS_INFO_SIZE_V1);
}

void idmint_ns_info_init_v2(idmint_ns_info *info, idmint_kind kind)
{
    ns_info_init_size(info, kind, sizeof(*info));
}

static int check_snowflake(const idmint_ns_info *info, int64_t now_ms)
{
    char when[32];
    int64_t end_ms;
    int rc = idmint_layout_validate(&info->layout);

    if (rc != 0)
        return rc;
    if (info->layout.epoch_ms > now_ms) {
        /* Every time value would be negative until then: nothing could mint. */
        if (idmint_format_iso8601(info->layout.epoch_ms, when, sizeof(when)) != 0)
            snprintf(when, sizeof(when), "unix ms %lld", (long long)info->layout.epoch_ms);
        return idmint__fail(IDMINT_EINVAL,
                            "namespace '%s': the epoch %s is in the future; nothing could be "
                            "minted before it. Use a date in the past (the default is "
                            "2026-01-01)",
                            info->name, when);
    }
    if ((rc = idmint_layout_end_ms(&info->layout, &end_ms)) != 0)
        return rc;
    if (end_ms <= now_ms) {
        /* IDs from such a layout could only wrap or repeat: refuse it up front. */
        if (idmint_format_iso8601(end_ms, when, sizeof(when)) != 0)
            snprintf(when, sizeof(when), "unix ms %lld", (long long)end_ms);
        return idmint__fail(IDMINT_EINVAL, "namespace '%s': the layout's time bits ran out on %s",
                            info->name, when);
    }
    return 0;
}

static int check_range(const idmint_ns_info *info)
{
    if (info->next_value < 1)
        return idmint__fail(IDMINT_EINVAL,
                            "namespace '%s': start 0 is not allowed (values are "
                            "positive)",
                            info->name);
    if (info->max_value > IDMINT_MAX_VALUE)
        return idmint__fail(IDMINT_EINVAL, "namespace '%s': max %llu is above 2^63-1", info->name,
                            (unsigned long long)info->max_value);
    if (info->next_value > info->max_value)
        return idmint__fail(IDMINT_EINVAL, "namespace '%s': start %llu is above max %llu",
                            info->name, (unsigned long long)info->next_value,
                            (unsigned long long)info->max_value);
    if (info->block < 1)
        return idmint__fail(IDMINT_EINVAL, "namespace '%s': block 0 is not allowed", info->name);
    if (info->block > info->max_block)
        return idmint__fail(IDMINT_EINVAL, "namespace '%s': block %u is above max block %u",
                            info->name, (unsigned)info->block, (unsigned)info->max_block);
    if (info->max_block > IDMINT_DEFAULT_MAX_BLOCK)
        return idmint__fail(IDMINT_EINVAL, "namespace '%s': max block %u is above %u", info->name,
                            (unsigned)info->max_block, (unsigned)IDMINT_DEFAULT_MAX_BLOCK);
    return 0;
}

void idmint__authority_act_as(struct idmint_authority *a, const char *actor)
{
    snprintf(a->actor, sizeof(a->actor), "%s", actor != NULL ? actor : "");
}

/* The ABI guard of an idmint_ns_info the caller hands in or out. */
static int ns_info_size_check(const idmint_ns_info *info)
{
    return idmint__struct_size_check(info->size, IDMINT__NS_INFO_SIZE_V1, sizeof(*info),
                                     "idmint_ns_info", "idmint_ns_info_init");
}

/*
 * Check and store namespace @p info (the library's own copy) with the floor
 * and origin given: idmint_ns_create passes none, idmint_ns_migrate its own.
 */
int idmint__authority_ns_create_floor(struct idmint_authority *a, const idmint_ns_info *info,
                                      uint64_t floor, const char *origin)
{
    idmint_ns_info ns;
    char actor[64];
    int64_t now_ms;
    int rc;

    if (memchr(info->name, '\0', sizeof(info->name)) == NULL)
        return idmint__fail(IDMINT_EINVAL, "namespace name is not terminated");
    if ((rc = idmint__ns_name_check(info->name)) != 0)
        return rc;
    now_ms = idmint__authority_now_ms(a);

    /* Store only the fields of the namespace's kind. */
    memset(&ns, 0, sizeof(ns));
    memcpy(ns.name, info->name, sizeof(ns.name));
    ns.kind = info->kind;
    ns.is_disabled = info->is_disabled != 0;
    ns.floor = floor;
    snprintf(ns.origin, sizeof(ns.origin), "%s", origin);
    switch (info->kind) {
    case IDMINT_KIND_SNOWFLAKE:
        if ((rc = check_snowflake(info, now_ms)) != 0)
            return rc;
        ns.layout = info->layout;
        break;
    case IDMINT_KIND_RANGE:
        if ((rc = check_range(info)) != 0)
            return rc;
        ns.next_value = info->next_value;
        ns.max_value = info->max_value;
        ns.block = info->block;
        ns.max_block = info->max_block;
        break;
    default:
        return idmint__fail(IDMINT_EINVAL, "namespace '%s': kind %d is neither snowflake nor range",
                            info->name, (int)info->kind);
    }
    if ((rc = idmint__authority_region_ns_create(a, &ns)) != 0)
        return rc;
    idmint__authority_actor(a, actor, sizeof(actor));
    return idmint__store_ns_create(a->st, &ns, actor, now_ms);
}

int idmint__authority_ns_copy_in(const idmint_ns_info *info, idmint_ns_info *in)
{
    int rc;

    if (info == NULL)
        return idmint__fail(IDMINT_EINVAL, "namespace info is NULL");
    if ((rc = ns_info_size_check(info)) != 0)
        return rc;
    /* From here on the library's own copy: members newer than the caller's
     * header read as 0. */
    idmint__struct_copy_in(in, sizeof(*in), info);
    return 0;
}

int idmint_ns_create(idmint_authority *a, const idmint_ns_info *info)
{
    idmint_ns_info in;
    int rc = idmint__authority_check(a);

    if (rc != 0 || (rc = idmint__authority_ns_copy_in(info, &in)) != 0)
        return rc;
    if (a->remote != NULL)
        return a->remote->ops->ns_create(a->remote, &in);
    /* A floor and an origin are a migration's to set (idmint_ns_migrate). */
    return idmint__authority_ns_create_floor(a, &in, 0, "");
}

/* Read @p name from the store into @p info, creating "default" on first use. */
static int store_ns_resolve(struct idmint_authority *a, const char *name, idmint_ns_info *info)
{
    idmint_ns_info def;
    int rc = idmint__store_ns_get(a->st, name, info);

    if (rc == IDMINT_ENOTFOUND && strcmp(name, IDMINT_DEFAULT_NS) == 0) {
        idmint_ns_info_init_v2(&def, IDMINT_KIND_SNOWFLAKE);
        snprintf(def.name, sizeof(def.name), "%s", IDMINT_DEFAULT_NS);
        rc = idmint_ns_create(a, &def);
        /* Another process may have created it first: that one is as good. */
        if (rc != 0 && rc != IDMINT_ECONFLICT)
            return rc;
        rc = idmint__store_ns_get(a->st, name, info);
    }
    return rc;
}

int idmint__authority_ns_resolve(struct idmint_authority *a, const char *name, idmint_ns_info *out)
{
    idmint_ns_info info;
    int rc = idmint__authority_check(a);

    if (rc != 0)
        return rc;
    if (out == NULL)
        return idmint__fail(IDMINT_EINVAL, "namespace output is NULL");
    if ((rc = ns_info_size_check(out)) != 0 || (rc = idmint__ns_name_check(name)) != 0)
        return rc;
    if (a->remote != NULL)
        rc = a->remote->ops->ns_get(a->remote, name, &info);
    else
        rc = store_ns_resolve(a, name, &info);
    /* Only out->size bytes: the caller's header may predate members we have. */
    if (rc == 0)
        idmint__struct_copy_out(out, &info);
    return rc;
}

int idmint_ns_get(idmint_authority *a, const char *name, idmint_ns_info *out)
{
    return idmint__authority_ns_resolve(a, name, out);
}

int idmint_ns_list(idmint_authority *a, idmint_ns_info **out, size_t *n)
{
    size_t i;
    int rc = idmint__authority_check(a);

    if (rc != 0)
        return rc;
    if (out == NULL || n == NULL)
        return idmint__fail(IDMINT_EINVAL, "output is NULL");
    if (a->remote != NULL)
        rc = a->remote->ops->ns_list(a->remote, out, n);
    else
        rc = idmint__store_ns_list(a->st, out, n);
    if (rc != 0)
        return rc;
    /* The ABI guard idmint_ns_info_at() steps by, whatever the rows held. */
    for (i = 0; i < *n; i++)
        (*out)[i].size = sizeof((*out)[i]);
    return 0;
}

int idmint_ns_set_disabled(idmint_authority *a, const char *name, int disabled)
{
    char actor[64];
    int rc = idmint__authority_check(a);

    if (rc != 0 || (rc = idmint__ns_name_check(name)) != 0)
        return rc;
    if (a->remote != NULL)
        return a->remote->ops->ns_set_disabled(a->remote, name, disabled != 0);
    idmint__authority_actor(a, actor, sizeof(actor));
    return idmint__store_ns_set_disabled(a->st, name, disabled, actor, idmint__authority_now_ms(a));
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
