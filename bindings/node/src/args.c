/* SPDX-License-Identifier: Apache-2.0 */
/*
 * JS arguments to C values. A wrong type throws TypeError, a value out of
 * range RangeError (both with code IDMINT_EINVAL); checks the library makes
 * itself (URLs, layouts, option bounds) are left to it, so its message is the
 * one the caller sees. Every function returns 0, or -1 with an exception
 * pending and nothing written.
 */
#include "env.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* 2^53: Numbers above it are not exact integers. */
#define SAFE_INT_LIMIT 9007199254740992.0

static int type_of(napi_env env, napi_value v, napi_valuetype *t)
{
    NAPI_CALL_INT(env, napi_typeof(env, v, t));
    return 0;
}

int args_string(napi_env env, napi_value v, const char *what, char **out)
{
    napi_valuetype t;
    size_t len, got;
    char *s;

    if (type_of(env, v, &t) != 0)
        return -1;
    if (t != napi_string) {
        errors_type(env, "%s must be a string", what);
        return -1;
    }
    NAPI_CALL_INT(env, napi_get_value_string_utf8(env, v, NULL, 0, &len));
    if ((s = malloc(len + 1)) == NULL) {
        errors_throw(env, IDMINT_ENOMEM, "copying a string argument");
        return -1;
    }
    if (napi_get_value_string_utf8(env, v, s, len + 1, &got) != napi_ok) {
        free(s);
        addon_napi_failed(env);
        return -1;
    }
    /* C sees a string only up to its first NUL: "ns\0x" would silently be "ns". */
    if (strlen(s) != got) {
        free(s);
        errors_range(env, "%s must not contain a NUL character", what);
        return -1;
    }
    *out = s;
    return 0;
}

static int number_in(napi_env env, napi_value v, const char *what, double lo, double hi,
                     double *out)
{
    napi_valuetype t;
    double d;

    if (type_of(env, v, &t) != 0)
        return -1;
    if (t != napi_number) {
        errors_type(env, "%s must be a number", what);
        return -1;
    }
    NAPI_CALL_INT(env, napi_get_value_double(env, v, &d));
    if (!isfinite(d) || floor(d) != d || d < lo || d > hi) {
        errors_range(env, "%s must be an integer from %.0f to %.0f, got %.17g", what, lo, hi, d);
        return -1;
    }
    *out = d;
    return 0;
}

int args_count(napi_env env, napi_value v, const char *what, size_t *out)
{
    double d;

    if (number_in(env, v, what, 1, ADDON_MAX_COUNT, &d) != 0)
        return -1;
    *out = (size_t)d;
    return 0;
}

int args_uint(napi_env env, napi_value v, const char *what, uint32_t lo, uint32_t hi, uint32_t *out)
{
    double d;

    if (number_in(env, v, what, lo, hi, &d) != 0)
        return -1;
    *out = (uint32_t)d;
    return 0;
}

int args_id(napi_env env, napi_value v, uint64_t *out)
{
    napi_valuetype t;
    uint64_t id;
    bool lossless;
    double d;
    char *text;
    int rc;

    if (type_of(env, v, &t) != 0)
        return -1;
    switch (t) {
    case napi_bigint:
        NAPI_CALL_INT(env, napi_get_value_bigint_uint64(env, v, &id, &lossless));
        if (!lossless || id == 0 || id > (uint64_t)INT64_MAX) {
            errors_range(env, "an ID is from 1 to 2^63-1");
            return -1;
        }
        *out = id;
        return 0;
    case napi_string:
        if (args_string(env, v, "id", &text) != 0)
            return -1;
        rc = idmint_id_parse(text, &id);
        free(text);
        if (rc != 0) {
            errors_throw(env, rc, idmint_errmsg());
            return -1;
        }
        *out = id;
        return 0;
    case napi_number:
        if (number_in(env, v, "a Number id (use a BigInt past 2^53)", 1, SAFE_INT_LIMIT - 1, &d) !=
            0)
            return -1;
        *out = (uint64_t)d;
        return 0;
    default:
        errors_type(env, "an id must be a BigInt, a decimal string or a Number");
        return -1;
    }
}

/* The value of @p obj[name], or NULL in *out when it is absent or undefined. */
static int member(napi_env env, napi_value obj, const char *name, napi_value *out)
{
    bool has;
    napi_valuetype t;

    *out = NULL;
    NAPI_CALL_INT(env, napi_has_named_property(env, obj, name, &has));
    if (!has)
        return 0;
    NAPI_CALL_INT(env, napi_get_named_property(env, obj, name, out));
    if (type_of(env, *out, &t) != 0)
        return -1;
    if (t == napi_undefined)
        *out = NULL;
    return 0;
}

/* Refuse own keys outside @p known (NULL-terminated): a typo such as
 * "leaseMS" must not be ignored while the default silently applies. */
static int known_keys(napi_env env, napi_value obj, const char *what, const char *const *known)
{
    napi_value keys, key;
    uint32_t n;
    char name[64];
    size_t len;

    NAPI_CALL_INT(env, napi_get_property_names(env, obj, &keys));
    NAPI_CALL_INT(env, napi_get_array_length(env, keys, &n));
    for (uint32_t i = 0; i < n; i++) {
        const char *const *k;
        napi_valuetype t;

        NAPI_CALL_INT(env, napi_get_element(env, keys, i, &key));
        if (type_of(env, key, &t) != 0)
            return -1;
        if (t != napi_string)
            continue;
        NAPI_CALL_INT(env, napi_get_value_string_utf8(env, key, name, sizeof(name), &len));
        for (k = known; *k != NULL; k++)
            if (strcmp(*k, name) == 0 && strlen(name) == len)
                break;
        if (*k == NULL) {
            errors_type(env, "unknown %s member '%s'", what, name);
            return -1;
        }
    }
    return 0;
}

static int object_or_absent(napi_env env, napi_value v, const char *what, bool *is_absent)
{
    napi_valuetype t;

    if (type_of(env, v, &t) != 0)
        return -1;
    *is_absent = t == napi_undefined || t == napi_null;
    if (!*is_absent && t != napi_object) {
        errors_type(env, "%s must be an object", what);
        return -1;
    }
    return 0;
}

static int layout_bits(napi_env env, napi_value obj, const char *name, uint8_t *bits)
{
    napi_value v;
    uint32_t u;

    if (member(env, obj, name, &v) != 0)
        return -1;
    if (v == NULL)
        return 0;
    if (args_uint(env, v, name, 0, 63, &u) != 0)
        return -1;
    *bits = (uint8_t)u;
    return 0;
}

int args_time(napi_env env, napi_value v, const char *what, int64_t *ms)
{
    napi_valuetype t;
    bool is_date = false;
    double d;

    if (type_of(env, v, &t) != 0)
        return -1;
    if (t == napi_string) {
        char *text;
        int rc;

        if (args_string(env, v, what, &text) != 0)
            return -1;
        rc = idmint_epoch_parse(text, ms);
        free(text);
        if (rc != 0)
            errors_throw(env, rc, idmint_errmsg());
        return rc == 0 ? 0 : -1;
    }
    if (t == napi_object && napi_is_date(env, v, &is_date) == napi_ok && is_date) {
        if (napi_get_date_value(env, v, &d) != napi_ok || isnan(d)) {
            errors_type(env, "%s is an invalid Date", what);
            return -1;
        }
        *ms = (int64_t)d;
        return 0;
    }
    if (number_in(env, v, what, -SAFE_INT_LIMIT + 1, SAFE_INT_LIMIT - 1, &d) != 0)
        return -1;
    *ms = (int64_t)d;
    return 0;
}

static int layout_epoch(napi_env env, napi_value v, int64_t *epoch_ms)
{
    return args_time(env, v, "epoch", epoch_ms);
}

int args_layout(napi_env env, napi_value v, idmint_layout *out)
{
    static const char *const known[] = {"timeBits", "regionBits", "workerBits", "sequenceBits",
                                        "unitMs",   "epochMs",    "epoch",      NULL};
    idmint_layout l;
    napi_valuetype t;
    napi_value m;

    idmint_layout_default(&l);
    if (type_of(env, v, &t) != 0)
        return -1;
    if (t == napi_string) {
        char *text;
        int rc;

        if (args_string(env, v, "layout", &text) != 0)
            return -1;
        rc = idmint_layout_parse(text, &l);
        free(text);
        if (rc != 0) {
            errors_throw(env, rc, idmint_errmsg());
            return -1;
        }
        *out = l;
        return 0;
    }
    if (t == napi_undefined || t == napi_null) {
        *out = l;
        return 0;
    }
    if (t != napi_object) {
        errors_type(env, "layout must be \"T/R/W/S\" or an object");
        return -1;
    }
    if (known_keys(env, v, "layout", known) != 0 ||
        layout_bits(env, v, "timeBits", &l.time_bits) != 0 ||
        layout_bits(env, v, "regionBits", &l.region_bits) != 0 ||
        layout_bits(env, v, "workerBits", &l.worker_bits) != 0 ||
        layout_bits(env, v, "sequenceBits", &l.sequence_bits) != 0)
        return -1;
    if (member(env, v, "unitMs", &m) != 0 ||
        (m != NULL && args_uint(env, m, "unitMs", 0, UINT32_MAX, &l.unit_ms) != 0))
        return -1;
    if (member(env, v, "epochMs", &m) != 0 || (m != NULL && layout_epoch(env, m, &l.epoch_ms) != 0))
        return -1;
    if (member(env, v, "epoch", &m) != 0 || (m != NULL && layout_epoch(env, m, &l.epoch_ms) != 0))
        return -1;
    *out = l;
    return 0;
}

struct option_field {
    const char *name;
    size_t offset; /* of the uint32_t member in idmint_options */
};

int args_options(napi_env env, napi_value v, idmint_options *opts, char **token)
{
    static const struct option_field fields[] = {
        {"region", offsetof(idmint_options, region)},
        {"leaseMs", offsetof(idmint_options, lease_ms)},
        {"renewMs", offsetof(idmint_options, renew_ms)},
        {"maxBorrowMs", offsetof(idmint_options, max_borrow_ms)},
        {"clockWaitMs", offsetof(idmint_options, clock_wait_ms)},
        {"rangeBlock", offsetof(idmint_options, range_block)},
        {"refillPercent", offsetof(idmint_options, refill_percent)},
        {"deadlineMs", offsetof(idmint_options, deadline_ms)},
    };
    static const char *const known[] = {"region",      "leaseMs",    "renewMs",       "maxBorrowMs",
                                        "clockWaitMs", "rangeBlock", "refillPercent", "deadlineMs",
                                        "token",       NULL};
    idmint_options o;
    napi_value m;
    bool is_absent;
    char *tok = NULL;

    idmint_options_init(&o);
    if (object_or_absent(env, v, "options", &is_absent) != 0)
        return -1;
    if (!is_absent) {
        if (known_keys(env, v, "options", known) != 0)
            return -1;
        for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
            uint32_t u;

            if (member(env, v, fields[i].name, &m) != 0)
                return -1;
            if (m == NULL)
                continue;
            if (args_uint(env, m, fields[i].name, 0, UINT32_MAX, &u) != 0)
                return -1;
            memcpy((char *)&o + fields[i].offset, &u, sizeof(u));
        }
        if (member(env, v, "token", &m) != 0 ||
            (m != NULL && args_string(env, m, "options.token", &tok) != 0))
            return -1;
    }
    o.token = tok;
    *opts = o;
    *token = tok;
    return 0;
}
