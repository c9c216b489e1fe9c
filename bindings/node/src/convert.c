/* SPDX-License-Identifier: Apache-2.0 */
/*
 * C results to JS values. Every uint64_t becomes a BigInt, even where today's
 * values would fit a Number: a 64-bit field that is exact only sometimes is
 * a bug waiting for the day it is not. Milliseconds since 1970 stay Numbers
 * (exact for every year idmint accepts). Where JS wants text (JSON, a
 * database column, a URL), an ID is also given as its decimal digits.
 */
#include "env.h"

int convert_u64(napi_env env, uint64_t v, napi_value *out)
{
    NAPI_CALL_INT(env, napi_create_bigint_uint64(env, v, out));
    return 0;
}

int convert_u64_decimal(napi_env env, uint64_t v, napi_value *out)
{
    char digits[20]; /* 2^64 - 1 has 20 digits */
    size_t at = sizeof(digits);

    do {
        digits[--at] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    NAPI_CALL_INT(env, napi_create_string_latin1(env, digits + at, sizeof(digits) - at, out));
    return 0;
}

static int put(napi_env env, napi_value obj, const char *name, napi_value v)
{
    NAPI_CALL_INT(env, napi_set_named_property(env, obj, name, v));
    return 0;
}

static int put_u64(napi_env env, napi_value obj, const char *name, uint64_t v)
{
    napi_value n;

    return convert_u64(env, v, &n) != 0 ? -1 : put(env, obj, name, n);
}

static int put_u32(napi_env env, napi_value obj, const char *name, uint32_t v)
{
    napi_value n;

    NAPI_CALL_INT(env, napi_create_uint32(env, v, &n));
    return put(env, obj, name, n);
}

static int put_ms(napi_env env, napi_value obj, const char *name, int64_t v)
{
    napi_value n;

    NAPI_CALL_INT(env, napi_create_int64(env, v, &n));
    return put(env, obj, name, n);
}

static int put_str(napi_env env, napi_value obj, const char *name, const char *s)
{
    napi_value v;

    NAPI_CALL_INT(env, napi_create_string_utf8(env, s, NAPI_AUTO_LENGTH, &v));
    return put(env, obj, name, v);
}

int convert_layout(napi_env env, const idmint_layout *l, napi_value *out)
{
    napi_value o;

    NAPI_CALL_INT(env, napi_create_object(env, &o));
    if (put_u32(env, o, "timeBits", l->time_bits) != 0 ||
        put_u32(env, o, "regionBits", l->region_bits) != 0 ||
        put_u32(env, o, "workerBits", l->worker_bits) != 0 ||
        put_u32(env, o, "sequenceBits", l->sequence_bits) != 0 ||
        put_u32(env, o, "unitMs", l->unit_ms) != 0 || put_ms(env, o, "epochMs", l->epoch_ms) != 0)
        return -1;
    *out = o;
    return 0;
}

int convert_info(napi_env env, const idmint_handle_info *info, napi_value *out)
{
    napi_value o, layout;

    NAPI_CALL_INT(env, napi_create_object(env, &o));
    if (put_str(env, o, "kind", info->is_range ? "range" : "snowflake") != 0 ||
        put_str(env, o, "incarnation", info->incarnation) != 0)
        return -1;
    if (info->is_range) {
        if (put_u64(env, o, "rangeLeft", info->range_left) != 0)
            return -1;
        *out = o;
        return 0;
    }
    if (put_u32(env, o, "region", info->region) != 0 ||
        put_u32(env, o, "workerId", info->worker_id) != 0 ||
        put_u64(env, o, "generation", info->generation) != 0 ||
        put_u64(env, o, "fenceFound", info->fence_found) != 0 ||
        put_u64(env, o, "leaseUntil", info->lease_until) != 0 ||
        put_u64(env, o, "lastTime", info->last_time) != 0 ||
        put_u64(env, o, "sequenceWaits", info->sequence_waits) != 0 ||
        convert_layout(env, &info->layout, &layout) != 0 || put(env, o, "layout", layout) != 0)
        return -1;
    *out = o;
    return 0;
}

int convert_decoded(napi_env env, uint64_t id, const idmint_decoded *d, napi_value *out)
{
    char iso[32];
    napi_value o, time;

    /* A time outside years 0..9999 has no ISO-8601 form: time is null then,
     * and the other fields are still right. */
    if (idmint_format_iso8601(d->unix_ms, iso, sizeof(iso)) == 0)
        NAPI_CALL_INT(env, napi_create_string_utf8(env, iso, NAPI_AUTO_LENGTH, &time));
    else
        NAPI_CALL_INT(env, napi_get_null(env, &time));
    NAPI_CALL_INT(env, napi_create_object(env, &o));
    if (put_u64(env, o, "id", id) != 0 || put_u64(env, o, "timeUnits", d->time_units) != 0 ||
        put_ms(env, o, "unixMs", d->unix_ms) != 0 || put(env, o, "time", time) != 0 ||
        put_u32(env, o, "region", d->region) != 0 || put_u32(env, o, "worker", d->worker) != 0 ||
        put_u64(env, o, "sequence", d->sequence) != 0)
        return -1;
    *out = o;
    return 0;
}
