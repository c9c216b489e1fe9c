/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE /* program_invocation_short_name */
/*
 * What a grant records of whoever asked for it (struct idmint__origin): this
 * process's own name, and the check of what a remote generator says of
 * itself. Recorded for people to read, never used to decide anything, so the
 * check only keeps it printable and bounded.
 */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Copy @p in into @p out (@p size bytes) keeping only what idmint__origin_check accepts. */
static void copy_printable(char *out, size_t size, const char *in)
{
    size_t k = 0;

    for (; in != NULL && *in != '\0' && k + 1 < size; in++)
        out[k++] = (*in > ' ' && *in < 0x7f && *in != '"' && *in != '\\') ? *in : '_';
    out[k] = '\0';
}

void idmint__origin_self(struct idmint__origin *o)
{
    char host[256] = "";

    memset(o, 0, sizeof(*o));
    if (gethostname(host, sizeof(host) - 1) != 0)
        host[0] = '\0';
    copy_printable(o->host, sizeof(o->host), host);
    o->pid = (uint32_t)getpid();
    copy_printable(o->program, sizeof(o->program), program_invocation_short_name);
}

static int field_ok(const char *text, size_t size)
{
    const char *end = memchr(text, '\0', size);

    if (end == NULL)
        return 0;
    for (; text < end; text++)
        if (*text <= ' ' || *text >= 0x7f || *text == '"' || *text == '\\')
            return 0;
    return 1;
}

int idmint__origin_check(const struct idmint__origin *o)
{
    if (o == NULL)
        return idmint__fail(IDMINT_EINVAL, "origin is NULL");
    if (!field_ok(o->host, sizeof(o->host)))
        return idmint__fail(IDMINT_EINVAL,
                            "host must be at most %zu bytes of printable ASCII "
                            "without spaces, quotes or backslashes",
                            sizeof(o->host) - 1);
    if (!field_ok(o->program, sizeof(o->program)))
        return idmint__fail(IDMINT_EINVAL,
                            "program must be at most %zu bytes of printable ASCII "
                            "without spaces, quotes or backslashes",
                            sizeof(o->program) - 1);
    if (!field_ok(o->token, sizeof(o->token)))
        return idmint__fail(IDMINT_EINVAL,
                            "token name must be at most %zu bytes of printable "
                            "ASCII without spaces, quotes or backslashes",
                            sizeof(o->token) - 1);
    return 0;
}

void idmint__retention_defaults(int64_t keep_ms[IDMINT__KEEP__COUNT])
{
    keep_ms[IDMINT__KEEP_WORKER_GRANTS] = IDMINT__KEEP_WORKER_GRANTS_MS;
    keep_ms[IDMINT__KEEP_RANGE_GRANTS] = IDMINT__KEEP_RANGE_GRANTS_MS;
    keep_ms[IDMINT__KEEP_BATCHES] = IDMINT__KEEP_BATCHES_MS;
    keep_ms[IDMINT__KEEP_COLLISIONS] = IDMINT__KEEP_COLLISIONS_MS;
}
