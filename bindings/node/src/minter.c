/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The native side of the Minter class (lib/minter.js): plain functions that
 * take a minter id first. An unknown id (closed, or never issued) throws
 * IDMINT_EINVAL, never crashes. A JS thread has its own environment and
 * table, so nothing here races another call on the same minter.
 */
#include "env.h"

#include <stdlib.h>

/* The minter named by the first argument, its other arguments in argv[1..],
 * or NULL with an exception pending. */
static struct minter *minter_args(napi_env env, napi_callback_info info, size_t *argc,
                                  napi_value *argv)
{
    struct addon *ad;
    struct minter *m;
    uint32_t id;

    if (napi_get_cb_info(env, info, argc, argv, NULL, (void **)&ad) != napi_ok) {
        addon_napi_failed(env);
        return NULL;
    }
    if (napi_get_value_uint32(env, argv[0], &id) != napi_ok) {
        errors_type(env, "this is not a Minter");
        return NULL;
    }
    if ((m = slots_get(ad, id)) == NULL)
        errors_throw(env, IDMINT_EINVAL, "the Minter is closed");
    return m;
}

static napi_value minter_open(napi_env env, napi_callback_info info)
{
    size_t argc = 3;
    napi_value argv[3], out;
    struct addon *ad;
    idmint *h;

    NAPI_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, (void **)&ad));
    if (open_sync(env, argv, &h) != 0 || slots_register(env, ad, h, &out) != 0)
        return NULL;
    return out;
}

/* One ID from the Minter of @p info for next() and nextString(): 0, or -1
 * with a JavaScript exception pending. */
static int mint_one(napi_env env, napi_callback_info info, uint64_t *id)
{
    size_t argc = 1;
    napi_value argv[1];
    struct minter *m = minter_args(env, info, &argc, argv);
    int rc;

    if (m == NULL)
        return -1;
    if ((rc = idmint_next(m->h, id)) != 0) {
        errors_throw(env, rc, idmint_errmsg());
        return -1;
    }
    return 0;
}

static napi_value minter_next(napi_env env, napi_callback_info info)
{
    napi_value out;
    uint64_t id;

    if (mint_one(env, info, &id) != 0)
        return NULL;
    NAPI_CALL(env, napi_create_bigint_uint64(env, id, &out));
    return out;
}

static napi_value minter_next_n(napi_env env, napi_callback_info info)
{
    size_t argc = 2, n;
    napi_value argv[2], buf, arr;
    struct minter *m = minter_args(env, info, &argc, argv);
    void *data;
    int rc;

    if (m == NULL || args_count(env, argv[1], "n", &n) != 0)
        return NULL;
    NAPI_CALL(env, napi_create_arraybuffer(env, n * sizeof(uint64_t), &data, &buf));
    NAPI_CALL(env, napi_create_typedarray(env, napi_biguint64_array, n, buf, 0, &arr));
    if ((rc = idmint_next_n(m->h, data, n)) != 0)
        return errors_throw(env, rc, idmint_errmsg());
    return arr;
}

static napi_value minter_next_string(napi_env env, napi_callback_info info)
{
    napi_value out;
    uint64_t id;

    if (mint_one(env, info, &id) != 0)
        return NULL;
    return convert_u64_decimal(env, id, &out) == 0 ? out : NULL;
}

/* nextNStrings(id, n): n IDs as an Array of decimal strings, increasing. The
 * IDs are minted first, all or nothing; an Array that then cannot be built
 * leaves a gap, never a repeat. */
static napi_value minter_next_n_strings(napi_env env, napi_callback_info info)
{
    size_t argc = 2, n;
    napi_value argv[2], arr, s;
    struct minter *m = minter_args(env, info, &argc, argv);
    uint64_t *ids;
    int rc;

    if (m == NULL || args_count(env, argv[1], "n", &n) != 0)
        return NULL;
    if ((ids = malloc(n * sizeof(*ids))) == NULL)
        return errors_throw(env, IDMINT_ENOMEM, "no room for the IDs");
    if ((rc = idmint_next_n(m->h, ids, n)) != 0) {
        free(ids);
        return errors_throw(env, rc, idmint_errmsg());
    }
    if (napi_create_array_with_length(env, n, &arr) != napi_ok)
        goto failed;
    for (size_t i = 0; i < n; i++) {
        if (convert_u64_decimal(env, ids[i], &s) != 0 ||
            napi_set_element(env, arr, (uint32_t)i, s) != napi_ok)
            goto failed;
    }
    free(ids);
    return arr;
failed:
    free(ids);
    return addon_napi_failed(env);
}

static napi_value minter_next_into(napi_env env, napi_callback_info info)
{
    size_t argc = 2, n = 0;
    napi_value argv[2];
    struct minter *m = minter_args(env, info, &argc, argv);
    napi_typedarray_type type = napi_int8_array;
    bool is_typed;
    void *data = NULL;
    int rc;

    if (m == NULL)
        return NULL;
    NAPI_CALL(env, napi_is_typedarray(env, argv[1], &is_typed));
    if (is_typed)
        NAPI_CALL(env, napi_get_typedarray_info(env, argv[1], &type, &n, &data, NULL, NULL));
    /* IDs are below 2^63, so a BigInt64Array holds them as well. */
    if (!is_typed || (type != napi_biguint64_array && type != napi_bigint64_array))
        return errors_type(env, "nextInto() needs a BigUint64Array or a BigInt64Array");
    if (n == 0 || n > ADDON_MAX_COUNT)
        return errors_range(env, "the array's length must be from 1 to %u, got %zu",
                            ADDON_MAX_COUNT, n);
    if ((rc = idmint_next_n(m->h, data, n)) != 0)
        return errors_throw(env, rc, idmint_errmsg());
    return argv[1];
}

static napi_value minter_info(napi_env env, napi_callback_info info)
{
    size_t argc = 1;
    napi_value argv[1], out;
    struct minter *m = minter_args(env, info, &argc, argv);
    idmint_handle_info hi;
    int rc;

    if (m == NULL)
        return NULL;
    idmint_handle_info_init(&hi);
    if ((rc = idmint_info(m->h, &hi)) != 0)
        return errors_throw(env, rc, idmint_errmsg());
    return convert_info(env, &hi, &out) == 0 ? out : NULL;
}

static napi_value minter_kind(napi_env env, napi_callback_info info)
{
    size_t argc = 1;
    napi_value argv[1], out;
    struct minter *m = minter_args(env, info, &argc, argv);

    if (m == NULL)
        return NULL;
    NAPI_CALL(env, napi_create_string_utf8(env, m->is_range ? "range" : "snowflake",
                                           NAPI_AUTO_LENGTH, &out));
    return out;
}

static napi_value minter_lease_status(napi_env env, napi_callback_info info)
{
    size_t argc = 1;
    napi_value argv[1], out;
    struct minter *m = minter_args(env, info, &argc, argv);
    int rc;

    if (m == NULL)
        return NULL;
    if ((rc = idmint_lease_status(m->h)) == 0)
        NAPI_CALL(env, napi_get_null(env, &out));
    else
        NAPI_CALL(env, napi_create_string_utf8(env, errors_code_name(rc), NAPI_AUTO_LENGTH, &out));
    return out;
}

static napi_value minter_decode(napi_env env, napi_callback_info info)
{
    size_t argc = 2;
    napi_value argv[2];
    struct minter *m = minter_args(env, info, &argc, argv);

    if (m == NULL)
        return NULL;
    if (m->is_range)
        return errors_throw(env, IDMINT_EINVAL, "range IDs carry no time: nothing to decode");
    return codec_decode_with(env, argv[1], &m->layout);
}

static napi_value minter_bounds(napi_env env, napi_callback_info info)
{
    size_t argc = 3;
    napi_value argv[3];
    struct minter *m = minter_args(env, info, &argc, argv);

    if (m == NULL)
        return NULL;
    if (m->is_range)
        return errors_throw(env, IDMINT_EINVAL, "range IDs carry no time: a window has no bounds");
    if (argc < 3)
        return errors_type(env, "bounds(from, to) needs from and to");
    return codec_bounds_with(env, argv[1], argv[2], &m->layout);
}

/* close(id): release the lease now. An unknown id is a no-op, as
 * idmint_close(NULL) is: closing twice is harmless. */
static napi_value minter_close(napi_env env, napi_callback_info info)
{
    size_t argc = 1;
    napi_value argv[1];
    struct addon *ad;
    struct minter *m;
    uint32_t id;

    NAPI_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, (void **)&ad));
    if (napi_get_value_uint32(env, argv[0], &id) != napi_ok)
        return errors_type(env, "this is not a Minter");
    if ((m = slots_take(ad, id)) != NULL) {
        idmint_close(m->h);
        free(m);
    }
    return NULL;
}

int minter_define(napi_env env, struct addon *ad, napi_value exports)
{
    static const struct {
        const char *name;
        napi_callback cb;
    } fns[] = {
        {"open", minter_open},
        {"openAsync", open_async},
        {"next", minter_next},
        {"nextN", minter_next_n},
        {"nextString", minter_next_string},
        {"nextNStrings", minter_next_n_strings},
        {"nextInto", minter_next_into},
        {"info", minter_info},
        {"kind", minter_kind},
        {"leaseStatus", minter_lease_status},
        {"decodeWith", minter_decode},
        {"boundsWith", minter_bounds},
        {"close", minter_close},
    };
    napi_value fn;

    for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
        /* The addon rides along as the function's data: no instance-data
         * lookup on the hot path. */
        NAPI_CALL_INT(env,
                      napi_create_function(env, fns[i].name, NAPI_AUTO_LENGTH, fns[i].cb, ad, &fn));
        NAPI_CALL_INT(env, napi_set_named_property(env, exports, fns[i].name, fn));
    }
    return 0;
}
