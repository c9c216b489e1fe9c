/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The calls that need no handle: uuid7(), uuid7N(n), decode(id, layout),
 * bounds(from, to, layout), uuid7Bounds(from, to), strerror(code).
 */
#include "env.h"

#include <stdlib.h>

napi_value codec_uuid7(napi_env env, napi_callback_info info)
{
    uint8_t bytes[16];
    char text[37];
    napi_value out;
    int rc;

    (void)info;
    if ((rc = idmint_uuid7(bytes)) != 0)
        return errors_throw(env, rc, idmint_errmsg());
    idmint_uuid_format(bytes, text);
    NAPI_CALL(env, napi_create_string_latin1(env, text, 36, &out));
    return out;
}

/* uuid7N(n): n UUIDv7 strings, increasing, from one idmint_uuid7_n call. */
napi_value codec_uuid7_n(napi_env env, napi_callback_info info)
{
    size_t argc = 1, n;
    napi_value argv[1], arr, s;
    uint8_t(*bytes)[16];
    char text[37];
    int rc;

    if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok)
        return addon_napi_failed(env);
    if (argc < 1)
        return errors_type(env, "uuid7N(n) needs n");
    if (args_count(env, argv[0], "n", &n) != 0)
        return NULL;
    if ((bytes = malloc(n * sizeof(*bytes))) == NULL)
        return errors_throw(env, IDMINT_ENOMEM, "no room for the UUIDs");
    if ((rc = idmint_uuid7_n(bytes, n)) != 0) {
        free(bytes);
        return errors_throw(env, rc, idmint_errmsg());
    }
    if (napi_create_array_with_length(env, n, &arr) != napi_ok)
        goto failed;
    for (size_t i = 0; i < n; i++) {
        idmint_uuid_format(bytes[i], text);
        if (napi_create_string_latin1(env, text, 36, &s) != napi_ok ||
            napi_set_element(env, arr, (uint32_t)i, s) != napi_ok)
            goto failed;
    }
    free(bytes);
    return arr;
failed:
    free(bytes);
    return addon_napi_failed(env);
}

napi_value codec_decode_with(napi_env env, napi_value idv, const idmint_layout *l)
{
    idmint_decoded d;
    uint64_t id;
    napi_value out;
    int rc;

    if (args_id(env, idv, &id) != 0)
        return NULL;
    if ((rc = idmint_decode(l, id, &d)) != 0)
        return errors_throw(env, rc, idmint_errmsg());
    return convert_decoded(env, id, &d, &out) == 0 ? out : NULL;
}

napi_value codec_decode(napi_env env, napi_callback_info info)
{
    size_t argc = 2;
    napi_value argv[2];
    idmint_layout l;

    NAPI_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    if (argc < 1)
        return errors_type(env, "decode(id, layout) needs an id");
    if (args_layout(env, argv[1], &l) != 0)
        return NULL;
    return codec_decode_with(env, argv[0], &l);
}

/* { lo, hi } with the two values @p lo and @p hi. */
static napi_value pair(napi_env env, napi_value lo, napi_value hi)
{
    napi_value out;

    NAPI_CALL(env, napi_create_object(env, &out));
    NAPI_CALL(env, napi_set_named_property(env, out, "lo", lo));
    NAPI_CALL(env, napi_set_named_property(env, out, "hi", hi));
    return out;
}

napi_value codec_bounds_with(napi_env env, napi_value from, napi_value to, const idmint_layout *l)
{
    int64_t from_ms, to_ms;
    uint64_t lo, hi;
    napi_value lov, hiv;
    int rc;

    if (args_time(env, from, "from", &from_ms) != 0 || args_time(env, to, "to", &to_ms) != 0)
        return NULL;
    if ((rc = idmint_bounds(l, from_ms, to_ms, &lo, &hi)) != 0)
        return errors_throw(env, rc, idmint_errmsg());
    if (convert_u64(env, lo, &lov) != 0 || convert_u64(env, hi, &hiv) != 0)
        return NULL;
    return pair(env, lov, hiv);
}

napi_value codec_bounds(napi_env env, napi_callback_info info)
{
    size_t argc = 3;
    napi_value argv[3];
    idmint_layout l;

    NAPI_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    if (argc < 2)
        return errors_type(env, "bounds(from, to, layout) needs from and to");
    if (args_layout(env, argv[2], &l) != 0)
        return NULL;
    return codec_bounds_with(env, argv[0], argv[1], &l);
}

napi_value codec_uuid7_bounds(napi_env env, napi_callback_info info)
{
    size_t argc = 2;
    napi_value argv[2], lov, hiv;
    uint8_t lo[16], hi[16];
    char lo_text[37], hi_text[37];
    int64_t from_ms, to_ms;
    int rc;

    NAPI_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    if (argc < 2)
        return errors_type(env, "uuid7Bounds(from, to) needs from and to");
    if (args_time(env, argv[0], "from", &from_ms) != 0 ||
        args_time(env, argv[1], "to", &to_ms) != 0)
        return NULL;
    if ((rc = idmint_uuid7_bounds(from_ms, to_ms, lo, hi)) != 0)
        return errors_throw(env, rc, idmint_errmsg());
    idmint_uuid_format(lo, lo_text);
    idmint_uuid_format(hi, hi_text);
    NAPI_CALL(env, napi_create_string_latin1(env, lo_text, 36, &lov));
    NAPI_CALL(env, napi_create_string_latin1(env, hi_text, 36, &hiv));
    return pair(env, lov, hiv);
}

napi_value codec_strerror(napi_env env, napi_callback_info info)
{
    size_t argc = 1;
    napi_value argv[1], out;
    int32_t code;
    napi_valuetype t;

    NAPI_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    NAPI_CALL(env, napi_typeof(env, argv[0], &t));
    if (t != napi_number)
        return errors_type(env, "strerror(code) needs a number");
    NAPI_CALL(env, napi_get_value_int32(env, argv[0], &code));
    NAPI_CALL(env, napi_create_string_utf8(env, idmint_strerror(code), NAPI_AUTO_LENGTH, &out));
    return out;
}
