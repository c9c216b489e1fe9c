/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Opening a handle: idmint_open() takes a lease or reserves a range, which is
 * store I/O. new Minter() does it on the calling thread; Minter.open() runs it
 * on the libuv pool so the event loop keeps going.
 */
#include "env.h"

#include <stdio.h>
#include <stdlib.h>

struct open_args {
    char *authority; /* NULL: $IDMINT_AUTHORITY or the default */
    char *ns;
    char *token;
    idmint_options opts;
};

struct open_work {
    napi_async_work work;
    napi_deferred deferred;
    struct open_args args;
    idmint *h; /* the result, until settle() registers it */
    int rc;
    char detail[512]; /* idmint_errmsg() copied on the pool thread that failed */
};

static void args_free(struct open_args *a)
{
    free(a->authority);
    free(a->ns);
    free(a->token);
}

static int args_parse(napi_env env, const napi_value argv[3], struct open_args *a)
{
    napi_valuetype t;

    a->authority = a->ns = a->token = NULL;
    NAPI_CALL_INT(env, napi_typeof(env, argv[0], &t));
    if (t != napi_undefined && t != napi_null &&
        args_string(env, argv[0], "authority", &a->authority) != 0)
        return -1;
    if (args_string(env, argv[1], "namespace", &a->ns) != 0 ||
        args_options(env, argv[2], &a->opts, &a->token) != 0) {
        args_free(a);
        return -1;
    }
    return 0;
}

int open_sync(napi_env env, const napi_value argv[3], idmint **out)
{
    struct open_args a;
    int rc;

    if (args_parse(env, argv, &a) != 0)
        return -1;
    rc = idmint_open(out, a.authority, a.ns, &a.opts);
    args_free(&a);
    if (rc != 0) {
        errors_throw(env, rc, idmint_errmsg());
        return -1;
    }
    return 0;
}

static void open_execute(napi_env env, void *data)
{
    struct open_work *w = data;

    (void)env;
    w->rc = idmint_open(&w->h, w->args.authority, w->args.ns, &w->args.opts);
    if (w->rc != 0)
        snprintf(w->detail, sizeof(w->detail), "%s", idmint_errmsg());
}

/* Settle with the exception a failed Node-API call left pending. */
static void reject_pending(napi_env env, napi_deferred d)
{
    napi_value err;

    if (napi_get_and_clear_last_exception(env, &err) == napi_ok)
        napi_reject_deferred(env, d, err);
}

static void settle(napi_env env, struct open_work *w)
{
    struct addon *ad = addon_get(env);
    napi_value v;
    idmint *h = w->h;

    w->h = NULL;
    if (w->rc != 0) {
        if (errors_make(env, w->rc, w->detail, &v) == 0)
            napi_reject_deferred(env, w->deferred, v);
        else
            reject_pending(env, w->deferred);
    } else if (ad != NULL && slots_register(env, ad, h, &v) == 0) {
        napi_resolve_deferred(env, w->deferred, v);
    } else {
        reject_pending(env, w->deferred);
    }
}

static void open_complete(napi_env env, napi_status status, void *data)
{
    struct open_work *w = data;

    /* napi_cancelled: the environment is going away; there is no promise
     * left to settle, but the lease must still be given back. */
    if (status == napi_ok)
        settle(env, w);
    idmint_close(w->h);
    napi_delete_async_work(env, w->work);
    args_free(&w->args);
    free(w);
}

napi_value open_async(napi_env env, napi_callback_info info)
{
    size_t argc = 3;
    napi_value argv[3], promise, name;
    struct open_work *w;

    NAPI_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    if ((w = calloc(1, sizeof(*w))) == NULL)
        return errors_throw(env, IDMINT_ENOMEM, "allocating an open request");
    if (args_parse(env, argv, &w->args) != 0) {
        free(w);
        return NULL;
    }
    if (napi_create_string_utf8(env, "idmint.open", NAPI_AUTO_LENGTH, &name) != napi_ok ||
        napi_create_async_work(env, NULL, name, open_execute, open_complete, w, &w->work) !=
            napi_ok) {
        args_free(&w->args);
        free(w);
        return addon_napi_failed(env);
    }
    if (napi_create_promise(env, &w->deferred, &promise) != napi_ok ||
        napi_queue_async_work(env, w->work) != napi_ok) {
        napi_delete_async_work(env, w->work);
        args_free(&w->args);
        free(w);
        return addon_napi_failed(env);
    }
    return promise;
}
