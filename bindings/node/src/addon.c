/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Module entry. NAPI_MODULE_INIT makes the addon context-aware: this runs once
 * per environment (the main thread, each worker), and its struct addon is the
 * instance data that Node frees when that environment ends.
 */
#include "env.h"

#include <stdio.h>
#include <stdlib.h>

static void addon_free(napi_env env, void *data, void *hint)
{
    struct addon *ad = data;

    (void)hint;
    /* The environment is ending (a worker exits, the process ends): give
     * back the leases of Minters the program never closed. */
    slots_close_all(ad);
    if (ad->error_ctor != NULL)
        napi_delete_reference(env, ad->error_ctor);
    free(ad);
}

/* lib/index.js hands over its IdmintError class once per environment. */
static napi_value set_error_class(napi_env env, napi_callback_info info)
{
    struct addon *ad = addon_get(env);
    size_t argc = 1;
    napi_value argv[1];
    napi_valuetype t;

    NAPI_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    NAPI_CALL(env, napi_typeof(env, argv[0], &t));
    if (argc < 1 || t != napi_function)
        return errors_type(env, "_setErrorClass needs a class");
    if (ad->error_ctor != NULL) {
        NAPI_CALL(env, napi_delete_reference(env, ad->error_ctor));
        ad->error_ctor = NULL;
    }
    NAPI_CALL(env, napi_create_reference(env, argv[0], 1, &ad->error_ctor));
    return NULL;
}

static int set_fn(napi_env env, napi_value exports, const char *name, napi_callback cb)
{
    napi_value fn;

    NAPI_CALL_INT(env, napi_create_function(env, name, NAPI_AUTO_LENGTH, cb, NULL, &fn));
    NAPI_CALL_INT(env, napi_set_named_property(env, exports, name, fn));
    return 0;
}

static int set_constants(napi_env env, napi_value exports)
{
    unsigned v = idmint_version();
    char text[32];
    napi_value max, version, codes;

    snprintf(text, sizeof(text), "%u.%u.%u", (v >> 16) & 0xffu, (v >> 8) & 0xffu, v & 0xffu);
    NAPI_CALL_INT(env, napi_create_uint32(env, ADDON_MAX_COUNT, &max));
    NAPI_CALL_INT(env, napi_set_named_property(env, exports, "MAX_COUNT", max));
    NAPI_CALL_INT(env, napi_create_string_utf8(env, text, NAPI_AUTO_LENGTH, &version));
    NAPI_CALL_INT(env, napi_set_named_property(env, exports, "version", version));
    if ((codes = errors_codes(env)) == NULL)
        return -1;
    NAPI_CALL_INT(env, napi_set_named_property(env, exports, "codes", codes));
    return 0;
}

/* node_api.h's macro defines these without a prior declaration. */
NAPI_MODULE_EXPORT int32_t NODE_API_MODULE_GET_API_VERSION(void);
NAPI_MODULE_EXPORT napi_value NAPI_MODULE_INITIALIZER(napi_env env, napi_value exports);

NAPI_MODULE_INIT()
{
    struct addon *ad;

    /* Same major: same ABI (STYLE §11). A library of another major may lay
     * out idmint_options differently, so refuse to load rather than guess. */
    if ((idmint_version() >> 16) != IDMINT_VERSION_MAJOR) {
        napi_throw_error(env, "IDMINT_EINVAL",
                         "libidmint's major version differs from the header this addon was "
                         "built with; rebuild the addon");
        return NULL;
    }
    ad = calloc(1, sizeof(*ad));
    if (ad == NULL) {
        napi_throw_error(env, "IDMINT_ENOMEM", "out of memory");
        return NULL;
    }
    if (napi_set_instance_data(env, ad, addon_free, NULL) != napi_ok) {
        free(ad);
        return addon_napi_failed(env);
    }
    if (minter_define(env, ad, exports) != 0 || set_constants(env, exports) != 0 ||
        set_fn(env, exports, "uuid7", codec_uuid7) != 0 ||
        set_fn(env, exports, "uuid7N", codec_uuid7_n) != 0 ||
        set_fn(env, exports, "decode", codec_decode) != 0 ||
        set_fn(env, exports, "bounds", codec_bounds) != 0 ||
        set_fn(env, exports, "uuid7Bounds", codec_uuid7_bounds) != 0 ||
        set_fn(env, exports, "strerror", codec_strerror) != 0 ||
        set_fn(env, exports, "_setErrorClass", set_error_class) != 0)
        return NULL;
    return exports;
}
