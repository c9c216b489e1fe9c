/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Benchmark-only addon: the steps of a next() call one at a time, without
 * libidmint, so bench.js can say where a single call's time goes. Built
 * only by bench/binding.gyp, never shipped.
 */
#include <node_api.h>
#include <stdint.h>
#include <stdlib.h>

static const napi_type_tag probe_tag = {0x1234567890abcdefull, 0xfedcba0987654321ull};

/* Crossing into C and back, nothing else. */
static napi_value probe_noop(napi_env env, napi_callback_info info)
{
    (void)env;
    (void)info;
    return NULL;
}

/* Crossing plus what minter.c does to find its minter: read one Number. */
static napi_value probe_arg(napi_env env, napi_callback_info info)
{
    size_t argc = 1;
    napi_value argv[1];
    uint64_t *counter;
    uint32_t id;

    napi_get_cb_info(env, info, &argc, argv, NULL, (void **)&counter);
    napi_get_value_uint32(env, argv[0], &id);
    return NULL;
}

/* As probe_arg, then a new BigInt: all of next() but the mint itself. */
static napi_value probe_bigint(napi_env env, napi_callback_info info)
{
    size_t argc = 1;
    napi_value argv[1], out;
    uint64_t *counter;
    uint32_t id;

    napi_get_cb_info(env, info, &argc, argv, NULL, (void **)&counter);
    napi_get_value_uint32(env, argv[0], &id);
    napi_create_bigint_uint64(env, ++*counter + id, &out);
    return out;
}

/* The design minter.c does not use: `this`, a type-tag check and
 * napi_unwrap() on a wrapped object, then a new BigInt. */
static napi_value probe_unwrap(napi_env env, napi_callback_info info)
{
    napi_value self, out;
    bool is_ours;
    uint64_t *p;

    napi_get_cb_info(env, info, NULL, NULL, &self, NULL);
    napi_check_object_type_tag(env, self, &probe_tag, &is_ours);
    napi_unwrap(env, self, (void **)&p);
    napi_create_bigint_uint64(env, ++*p, &out);
    return out;
}

static void probe_free(napi_env env, void *data, void *hint)
{
    (void)env;
    (void)hint;
    free(data);
}

static napi_value probe_new(napi_env env, napi_callback_info info)
{
    napi_value self;
    uint64_t *counter = calloc(1, sizeof(*counter));

    napi_get_cb_info(env, info, NULL, NULL, &self, NULL);
    if (counter == NULL || napi_wrap(env, self, counter, probe_free, NULL, NULL) != napi_ok) {
        free(counter);
        napi_throw_error(env, NULL, "probe: wrap failed");
        return NULL;
    }
    napi_type_tag_object(env, self, &probe_tag);
    return self;
}

NAPI_MODULE_EXPORT int32_t NODE_API_MODULE_GET_API_VERSION(void);
NAPI_MODULE_EXPORT napi_value NAPI_MODULE_INITIALIZER(napi_env env, napi_value exports);

NAPI_MODULE_INIT()
{
    napi_property_descriptor wrapped[] = {
        {"unwrap", NULL, probe_unwrap, NULL, NULL, NULL, napi_default_method, NULL},
    };
    uint64_t *counter = calloc(1, sizeof(*counter));
    napi_value ctor, fn;

    /* Per environment, as in the real addon. */
    if (counter == NULL || napi_set_instance_data(env, counter, probe_free, NULL) != napi_ok)
        return NULL;
    if (napi_define_class(env, "Wrapped", NAPI_AUTO_LENGTH, probe_new, NULL, 1, wrapped, &ctor) !=
            napi_ok ||
        napi_set_named_property(env, exports, "Wrapped", ctor) != napi_ok)
        return NULL;
    if (napi_create_function(env, "noop", NAPI_AUTO_LENGTH, probe_noop, NULL, &fn) != napi_ok ||
        napi_set_named_property(env, exports, "noop", fn) != napi_ok ||
        napi_create_function(env, "arg", NAPI_AUTO_LENGTH, probe_arg, counter, &fn) != napi_ok ||
        napi_set_named_property(env, exports, "arg", fn) != napi_ok ||
        napi_create_function(env, "bigint", NAPI_AUTO_LENGTH, probe_bigint, counter, &fn) !=
            napi_ok ||
        napi_set_named_property(env, exports, "bigint", fn) != napi_ok)
        return NULL;
    return exports;
}
