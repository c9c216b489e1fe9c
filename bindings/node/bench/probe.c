/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Benchmark-only addon: the steps of Minter.prototype.next() one by one,
 * without libidmint, so bench.js can say where a single call's time goes.
 * Never shipped: only bench/binding.gyp builds it.
 */
#include <node_api.h>
#include <stdint.h>
#include <stdlib.h>

static const napi_type_tag probe_tag = {0x1234567890abcdefull, 0xfedcba0987654321ull};

/* A call that does nothing: the cost of crossing into C and back. */
static napi_value probe_noop(napi_env env, napi_callback_info info)
{
    (void)env;
    (void)info;
    return NULL;
}

/* Crossing plus reading `this`. */
static napi_value probe_this(napi_env env, napi_callback_info info)
{
    napi_value self;

    napi_get_cb_info(env, info, NULL, NULL, &self, NULL);
    return NULL;
}

/* Crossing, `this` and napi_unwrap. */
static napi_value probe_unwrap(napi_env env, napi_callback_info info)
{
    napi_value self;
    void *p;

    napi_get_cb_info(env, info, NULL, NULL, &self, NULL);
    napi_unwrap(env, self, &p);
    return NULL;
}

/* Crossing, `this`, the type-tag check and napi_unwrap. */
static napi_value probe_tagged(napi_env env, napi_callback_info info)
{
    napi_value self;
    bool ok;
    void *p;

    napi_get_cb_info(env, info, NULL, NULL, &self, NULL);
    napi_check_object_type_tag(env, self, &probe_tag, &ok);
    napi_unwrap(env, self, &p);
    return NULL;
}

/* Everything next() does but mint: tag, unwrap and a new BigInt. */
static napi_value probe_bigint(napi_env env, napi_callback_info info)
{
    napi_value self, out;
    bool ok;
    uint64_t *p;

    napi_get_cb_info(env, info, NULL, NULL, &self, NULL);
    napi_check_object_type_tag(env, self, &probe_tag, &ok);
    napi_unwrap(env, self, (void **)&p);
    napi_create_bigint_uint64(env, ++*p, &out);
    return out;
}

/* The slot design: a Number argument picks the state, no unwrap. */
static uint64_t slot_counter[4];

static napi_value probe_slot(napi_env env, napi_callback_info info)
{
    size_t argc = 1;
    napi_value argv[1], out;
    uint32_t slot;

    napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
    napi_get_value_uint32(env, argv[0], &slot);
    napi_create_bigint_uint64(env, ++slot_counter[slot & 3u], &out);
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
#define METHOD(name, fn)                                                                           \
    {                                                                                              \
        name, NULL, fn, NULL, NULL, NULL, napi_default_method, NULL                                \
    }
    static const napi_property_descriptor props[] = {
        METHOD("noop", probe_noop),     METHOD("self", probe_this),
        METHOD("unwrap", probe_unwrap), METHOD("tagged", probe_tagged),
        METHOD("bigint", probe_bigint),
    };
#undef METHOD
    napi_value ctor, fn;

    if (napi_define_class(env, "Probe", NAPI_AUTO_LENGTH, probe_new, NULL,
                          sizeof(props) / sizeof(props[0]), props, &ctor) != napi_ok ||
        napi_set_named_property(env, exports, "Probe", ctor) != napi_ok ||
        napi_create_function(env, "slot", NAPI_AUTO_LENGTH, probe_slot, NULL, &fn) != napi_ok ||
        napi_set_named_property(env, exports, "slot", fn) != napi_ok)
        return NULL;
    return exports;
}
