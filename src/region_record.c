/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A region claim as one line of text, the form the stores keep it in
 * (store.h, records): "state=claimed region=1 holder=ID since=MS floor=MS
 * where=TEXT registry=TEXT". Text fields are percent-encoded where they hold
 * a space, '%' or a byte outside printable ASCII, so the line splits on
 * spaces. Pure functions: no I/O, thread-safe.
 */
#include "region_record.h"
#include "internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const state_names[] = {"free", "claimed", "releasing", "released", "claiming"};

const char *idmint__region_state_name(idmint_region_state state)
{
    return (unsigned)state < sizeof(state_names) / sizeof(state_names[0]) ? state_names[state]
                                                                          : "unknown";
}

/* Append @p text percent-encoded to @p out (of @p size, used *len): 0 or -1 when full. */
static int put_text(char *out, size_t size, size_t *len, const char *text)
{
    static const char hex[] = "0123456789ABCDEF";
    const unsigned char *p;

    for (p = (const unsigned char *)text; *p != '\0'; p++) {
        int plain = *p > 0x20 && *p < 0x7f && *p != '%';

        if (*len + (plain ? 1 : 3) >= size)
            return -1;
        if (plain) {
            out[(*len)++] = (char)*p;
        } else {
            out[(*len)++] = '%';
            out[(*len)++] = hex[*p >> 4];
            out[(*len)++] = hex[*p & 15];
        }
    }
    out[*len] = '\0';
    return 0;
}

int idmint__region_record_format(const idmint_region_record *c, char *out, size_t size)
{
    size_t len;
    int n = snprintf(out, size,
                     "state=%s region=%u holder=%s since=%" PRId64 " floor=%" PRId64 " where=",
                     idmint__region_state_name(c->state), (unsigned)c->region,
                     c->holder[0] != '\0' ? c->holder : "-", c->since_ms, c->floor_ms);

    if (n < 0 || (size_t)n >= size)
        return idmint__fail(IDMINT_EINVAL, "a region record does not fit %zu bytes", size);
    len = (size_t)n;
    if (put_text(out, size, &len, c->where[0] != '\0' ? c->where : "-") != 0 ||
        len + strlen(" registry=") >= size)
        return idmint__fail(IDMINT_EINVAL, "a region record does not fit %zu bytes", size);
    memcpy(out + len, " registry=", strlen(" registry=") + 1);
    len += strlen(" registry=");
    if (put_text(out, size, &len, c->registry[0] != '\0' ? c->registry : "-") != 0)
        return idmint__fail(IDMINT_EINVAL, "a region record does not fit %zu bytes", size);
    return 0;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

/* Decode the @p n bytes at @p p into @p out of @p size ("-" is ""): 0 or -1. */
static int get_text(const char *p, size_t n, char *out, size_t size)
{
    size_t i, len = 0;

    if (n == 1 && p[0] == '-')
        n = 0;
    for (i = 0; i < n; i++) {
        int c = (unsigned char)p[i];

        if (c == '%') {
            int hi, lo;

            if (i + 2 >= n || (hi = hexval(p[i + 1])) < 0 || (lo = hexval(p[i + 2])) < 0)
                return -1;
            c = hi * 16 + lo;
            i += 2;
        }
        if (len + 1 >= size)
            return -1;
        out[len++] = (char)c;
    }
    out[len] = '\0';
    return 0;
}

static int get_i64(const char *p, size_t n, int64_t *out)
{
    char buf[24], *end = NULL;
    long long v;

    if (n == 0 || n >= sizeof(buf))
        return -1;
    memcpy(buf, p, n);
    buf[n] = '\0';
    v = strtoll(buf, &end, 10);
    if (*end != '\0' || v < 0)
        return -1;
    *out = (int64_t)v;
    return 0;
}

int idmint__region_record_parse(const char *text, idmint_region_record *out)
{
    idmint_region_record c;
    const char *p = text;
    unsigned seen = 0;
    size_t i;

    memset(&c, 0, sizeof(c));
    while (*p != '\0') {
        const char *eq = strchr(p, '='), *end = strchr(p, ' ');
        size_t klen, vlen;
        int64_t v = 0;
        int bad = 0;

        if (end == NULL)
            end = p + strlen(p);
        if (eq == NULL || eq > end)
            return idmint__fail(IDMINT_ESTORE, "a region record is garbled: '%s'", text);
        klen = (size_t)(eq - p);
        vlen = (size_t)(end - eq - 1);
        if (klen == 5 && memcmp(p, "state", 5) == 0) {
            bad = 1;
            for (i = 0; i < sizeof(state_names) / sizeof(state_names[0]); i++)
                if (strlen(state_names[i]) == vlen && memcmp(eq + 1, state_names[i], vlen) == 0) {
                    c.state = (idmint_region_state)i;
                    bad = 0;
                }
            seen |= 1;
        } else if (klen == 6 && memcmp(p, "region", 6) == 0) {
            bad = get_i64(eq + 1, vlen, &v) != 0 || v > 0xffff;
            c.region = (uint32_t)v;
            seen |= 2;
        } else if (klen == 6 && memcmp(p, "holder", 6) == 0) {
            bad = get_text(eq + 1, vlen, c.holder, sizeof(c.holder));
        } else if (klen == 5 && memcmp(p, "since", 5) == 0) {
            bad = get_i64(eq + 1, vlen, &c.since_ms);
        } else if (klen == 5 && memcmp(p, "floor", 5) == 0) {
            bad = get_i64(eq + 1, vlen, &c.floor_ms);
        } else if (klen == 5 && memcmp(p, "where", 5) == 0) {
            bad = get_text(eq + 1, vlen, c.where, sizeof(c.where));
        } else if (klen == 8 && memcmp(p, "registry", 8) == 0) {
            bad = get_text(eq + 1, vlen, c.registry, sizeof(c.registry));
        } /* a field a later version added: skipped */
        if (bad)
            return idmint__fail(IDMINT_ESTORE, "a region record is garbled at '%.*s': '%s'",
                                (int)(end - p), p, text);
        p = *end == ' ' ? end + 1 : end;
    }
    if (seen != 3)
        return idmint__fail(IDMINT_ESTORE, "a region record lacks its state or region: '%s'", text);
    *out = c;
    return 0;
}
