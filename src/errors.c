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

#define ERRMSG_SIZE 512

/* This thread's message buffer (thread_state.c); NULL when memory ran out. */
static char *errmsg_buf(void)
{
    int is_new;

    return idmint__thread_slot(IDMINT__SLOT_ERRMSG, ERRMSG_SIZE, &is_new);
}

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
    const char *buf = errmsg_buf();

    return buf != NULL ? buf : "out of memory (no room for the error message)";
}

int idmint__fail(int err, const char *fmt, ...)
{
    char *buf = errmsg_buf();
    va_list ap;

    va_start(ap, fmt);
    if (buf != NULL)
        vsnprintf(buf, ERRMSG_SIZE, fmt, ap);
    va_end(ap);
    return err;
}

void idmint__errmsg_clear(void)
{
    char *buf = errmsg_buf();

    if (buf != NULL)
        buf[0] = '\0';
}

void idmint_free(void *p)
{
    free(p);
}
