/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What every file of the addon stands on (env.h): this environment's struct
 * addon, and the one rule for a Node-API call that failed. Below the module
 * entry (addon.c) and everything it registers.
 */
#include "env.h"

#include <stdbool.h>

struct addon *addon_get(napi_env env)
{
    void *data = NULL;

    if (napi_get_instance_data(env, &data) != napi_ok)
        return NULL;
    return data;
}

napi_value addon_napi_failed(napi_env env)
{
    const napi_extended_error_info *ei = NULL;
    bool is_pending = false;

    if (napi_is_exception_pending(env, &is_pending) == napi_ok && is_pending)
        return NULL;
    napi_get_last_error_info(env, &ei);
    napi_throw_error(env, "IDMINT_ENOMEM",
                     ei != NULL && ei->error_message != NULL ? ei->error_message
                                                             : "a Node-API call failed");
    return NULL;
}
