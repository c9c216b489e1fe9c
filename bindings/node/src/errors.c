/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Library codes to JS errors, one to one: err.code is the C name
 * ("IDMINT_ENOTFOUND"), err.errno its value, the message idmint_strerror()
 * plus the detail idmint_errmsg() had right after the failing call.
 */
#include "env.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *errors_code_name(int rc)
{
    switch (rc) {
#define XX(name, value, text)                                                                      \
    case IDMINT_##name:                                                                            \
        return "IDMINT_" #name;
        IDMINT_ERRNO_MAP(XX)
#undef XX
    default:
        return "IDMINT_EUNKNOWN";
    }
}

static void format_message(char *buf, size_t size, int rc, const char *detail)
{
    if (detail != NULL && detail[0] != '\0')
        snprintf(buf, size, "%s: %s", idmint_strerror(rc), detail);
    else
        snprintf(buf, size, "%s", idmint_strerror(rc));
}

static int set_number(napi_env env, napi_value obj, const char *name, int v)
{
    napi_value n;

    NAPI_CALL_INT(env, napi_create_int32(env, v, &n));
    NAPI_CALL_INT(env, napi_set_named_property(env, obj, name, n));
    return 0;
}

int errors_make(napi_env env, int rc, const char *detail, napi_value *out)
{
    struct addon *ad = addon_get(env);
    char msg[768];
    napi_value code, message, errnum, det, ctor;

    format_message(msg, sizeof(msg), rc, detail);
    NAPI_CALL_INT(env, napi_create_string_utf8(env, errors_code_name(rc), NAPI_AUTO_LENGTH, &code));
    NAPI_CALL_INT(env, napi_create_string_utf8(env, msg, NAPI_AUTO_LENGTH, &message));
    NAPI_CALL_INT(env, napi_create_int32(env, rc, &errnum));
    NAPI_CALL_INT(
        env, napi_create_string_utf8(env, detail != NULL ? detail : "", NAPI_AUTO_LENGTH, &det));
    if (ad != NULL && ad->error_ctor != NULL) {
        napi_value argv[4] = {message, code, errnum, det};

        NAPI_CALL_INT(env, napi_get_reference_value(env, ad->error_ctor, &ctor));
        NAPI_CALL_INT(env, napi_new_instance(env, ctor, 4, argv, out));
        return 0;
    }
    /* The addon loaded without lib/index.js: a plain Error, same fields. */
    NAPI_CALL_INT(env, napi_create_error(env, code, message, out));
    NAPI_CALL_INT(env, napi_set_named_property(env, *out, "detail", det));
    return set_number(env, *out, "errno", rc);
}

napi_value errors_throw(napi_env env, int rc, const char *detail)
{
    napi_value err;

    if (errors_make(env, rc, detail, &err) == 0)
        napi_throw(env, err);
    return NULL;
}

typedef napi_status (*error_ctor_fn)(napi_env, napi_value, napi_value, napi_value *);

static napi_value throw_arg_error(napi_env env, error_ctor_fn make, const char *fmt, va_list ap)
{
    char detail[512], msg[640];
    napi_value code, message, err, det;

    vsnprintf(detail, sizeof(detail), fmt, ap);
    format_message(msg, sizeof(msg), IDMINT_EINVAL, detail);
    NAPI_CALL(env, napi_create_string_utf8(env, "IDMINT_EINVAL", NAPI_AUTO_LENGTH, &code));
    NAPI_CALL(env, napi_create_string_utf8(env, msg, NAPI_AUTO_LENGTH, &message));
    NAPI_CALL(env, napi_create_string_utf8(env, detail, NAPI_AUTO_LENGTH, &det));
    NAPI_CALL(env, make(env, code, message, &err));
    NAPI_CALL(env, napi_set_named_property(env, err, "detail", det));
    if (set_number(env, err, "errno", IDMINT_EINVAL) != 0)
        return NULL;
    napi_throw(env, err);
    return NULL;
}

napi_value errors_type(napi_env env, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    throw_arg_error(env, napi_create_type_error, fmt, ap);
    va_end(ap);
    return NULL;
}

napi_value errors_range(napi_env env, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    throw_arg_error(env, napi_create_range_error, fmt, ap);
    va_end(ap);
    return NULL;
}

napi_value errors_codes(napi_env env)
{
    napi_value codes;

    NAPI_CALL(env, napi_create_object(env, &codes));
#define XX(name, value, text)                                                                      \
    if (set_number(env, codes, "IDMINT_" #name, IDMINT_##name) != 0)                               \
        return NULL;
    IDMINT_ERRNO_MAP(XX)
#undef XX
    NAPI_CALL(env, napi_object_freeze(env, codes));
    return codes;
}
