/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The calls that need no handle: uuid7(), decode(id, layout), strerror(code).
 */
#include "env.h"

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
