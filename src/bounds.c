/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Time windows turned into ID bounds: the lowest and highest ID whose time
 * field falls in a window, so that "the rows made last Tuesday" is a range
 * scan on a primary key. The inverse of idmint_decode's time arithmetic,
 * for snowflake layouts and for UUIDv7; both take the window half-open,
 * [from_ms, to_ms), as a day or an hour is written.
 */
#include "internal.h"

#include <stdio.h>
#include <string.h>

/* UUIDv7's time field is 48 bits of Unix ms (RFC 9562 §5.7). */
#define UUID7_END_MS (INT64_C(1) << 48)

/* @p ms for a message: ISO-8601 where it has a date, else its number. */
static void show_ms(int64_t ms, char buf[40])
{
    if (idmint_format_iso8601(ms, buf, 40) != 0)
        snprintf(buf, 40, "unix ms %lld", (long long)ms);
}

/*
 * Refuse a window that is empty or reaches outside [first_ms, end_ms), the
 * times the IDs can hold: 0 or IDMINT_EINVAL naming the edge and the limit.
 */
static int window_check(const char *what, int64_t from_ms, int64_t to_ms, int64_t first_ms,
                        int64_t end_ms)
{
    char edge[40], limit[40];

    if (from_ms >= to_ms)
        return idmint__fail(IDMINT_EINVAL,
                            "%s: the window is empty: from (%lld) must be before to (%lld)", what,
                            (long long)from_ms, (long long)to_ms);
    if (from_ms < first_ms) {
        show_ms(from_ms, edge);
        show_ms(first_ms, limit);
        return idmint__fail(IDMINT_EINVAL, "%s: from %s is before %s, the first time its IDs hold",
                            what, edge, limit);
    }
    if (to_ms > end_ms) {
        show_ms(to_ms, edge);
        show_ms(end_ms, limit);
        return idmint__fail(IDMINT_EINVAL, "%s: to %s is after %s, where its time bits run out",
                            what, edge, limit);
    }
    return 0;
}

int idmint_bounds(const idmint_layout *l, int64_t from_ms, int64_t to_ms, uint64_t *lo,
                  uint64_t *hi)
{
    unsigned below;
    uint64_t first, last;
    int64_t end_ms;
    int rc = idmint_layout_end_ms(l, &end_ms); /* validates the layout */

    if (rc != 0)
        return rc;
    if (lo == NULL || hi == NULL)
        return idmint__fail(IDMINT_EINVAL, "bounds: NULL output");
    rc = window_check("bounds", from_ms, to_ms, l->epoch_ms, end_ms);
    if (rc != 0)
        return rc;
    below = (unsigned)l->region_bits + l->worker_bits + l->sequence_bits;
    /* The units that hold the first and the last ms of the window: an edge
     * inside a unit takes in the whole unit, as no ID tells its ms apart. */
    first = idmint__unit_at(l, from_ms);
    last = idmint__unit_at(l, to_ms - 1);
    *lo = first << below;
    if (*lo == 0)
        *lo = 1; /* 0 is never an ID */
    *hi = last << below | ((UINT64_C(1) << below) - 1);
    return 0;
}

int idmint_ns_bounds(const idmint_ns_info *info, int64_t from_ms, int64_t to_ms, uint64_t *lo,
                     uint64_t *hi)
{
    uint64_t first, last;
    int rc;

    if (info == NULL || lo == NULL || hi == NULL)
        return idmint__fail(IDMINT_EINVAL, "bounds: NULL argument");
    rc = idmint__struct_size_check(info->size, IDMINT__NS_INFO_SIZE_V1, sizeof(*info),
                                   "idmint_ns_info", "idmint_ns_info_init");
    if (rc != 0)
        return rc;
    if (info->kind != IDMINT_KIND_SNOWFLAKE)
        return idmint__fail(IDMINT_EINVAL,
                            "bounds: '%s' is a range namespace: its IDs carry no time", info->name);
    rc = idmint_bounds(&info->layout, from_ms, to_ms, &first, &last);
    if (rc != 0)
        return rc;
    /* The IDs at or below a floor are another namespace's (a migration's
     * source, or a fence): none of them is this one's. A 0.1 caller's
     * struct has no floor. */
    if (info->size >= offsetof(idmint_ns_info, floor) + sizeof(info->floor) && info->floor != 0) {
        if (last <= info->floor)
            return idmint__fail(IDMINT_EINVAL,
                                "bounds: the window ends at or below the floor %llu of '%s', "
                                "so it holds none of its IDs",
                                (unsigned long long)info->floor, info->name);
        if (first <= info->floor)
            first = info->floor + 1;
    }
    *lo = first;
    *hi = last;
    return 0;
}

/* @p ms as the 48-bit big-endian time field of a UUIDv7. */
static void put_ms48(uint8_t out[16], int64_t ms)
{
    for (int i = 0; i < 6; i++)
        out[i] = (uint8_t)((uint64_t)ms >> (40 - 8 * i));
}

int idmint_uuid7_bounds(int64_t from_ms, int64_t to_ms, uint8_t lo[16], uint8_t hi[16])
{
    int rc;

    if (lo == NULL || hi == NULL)
        return idmint__fail(IDMINT_EINVAL, "uuid7 bounds: NULL output");
    rc = window_check("uuid7 bounds", from_ms, to_ms, 0, UUID7_END_MS);
    if (rc != 0)
        return rc;
    /* Version 7 and variant 0b10 are fixed; every other bit spans 0..all ones. */
    memset(lo, 0, 16);
    put_ms48(lo, from_ms);
    lo[6] = 0x70;
    lo[8] = 0x80;
    memset(hi, 0xff, 16);
    put_ms48(hi, to_ms - 1);
    hi[6] = 0x7f;
    hi[8] = 0xbf;
    return 0;
}
