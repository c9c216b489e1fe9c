/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The namespace rules: names, layouts and range bounds checked before a
 * namespace is made, "default" created on first use, the ABI guard of
 * idmint_ns_info, and a namespace with region bits made only as the region
 * registry defines it (authority_region.c). Over a remote authority every
 * call goes there as asked.
 */
#include "internal.h"
#include "remote.h"
#include "store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
