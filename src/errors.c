/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Status code texts, generated from the one table in idmint.h, and the
 * thread-local detail buffer behind idmint_errmsg(): handles are shared
 * across threads, so one thread's failure must never overwrite another's.
 */
#include "idmint.h"
#include "internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static _Thread_local char errmsg_buf[512];

unsigned idmint_version(void)
{
    return IDMINT_VERSION_NUM;
}

const char *idmint_strerror(int err)
{
    switch (err) {
    case IDMINT_OK:
        return "success";
#define XX(name, value, text)                                                                      \
    case IDMINT_##name:                                                                            \
        return text;
        IDMINT_ERRNO_MAP(XX)
#undef XX
    default:
        return "unknown error";
    }
}

const char *idmint_errmsg(void)
{
    return errmsg_buf;
}

int idmint__fail(int err, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(errmsg_buf, sizeof(errmsg_buf), fmt, ap);
    va_end(ap);
    return err;
}

void idmint__errmsg_clear(void)
{
    errmsg_buf[0] = '\0';
}

void idmint_free(void *p)
{
    free(p);
}
