/* SPDX-License-Identifier: Apache-2.0 */
/* libcurl bound on first use (curl_lib.h): one table, one global init. */
#include "curl_lib.h"
#include "dynlib.h"
#include "internal.h"

#include <string.h>

enum curl_function {
#define X(ret, name, args) CUF_##name,
    IDMINT__CURL_FUNCTIONS(X)
#undef X
};

static const char *const curl_names[] = {
#define X(ret, name, args) "curl_" #name,
    IDMINT__CURL_FUNCTIONS(X)
#undef X
};

struct idmint__curl_api idmint__curl;

static void *curl_syms[sizeof(curl_names) / sizeof(curl_names[0])];
static CURLcode curl_global_rc = CURLE_FAILED_INIT;

/* Runs once, under the loader's lock, before any thread can use libcurl. */
static void curl_on_load(void)
{
    /* dlsym gives object pointers; POSIX guarantees they convert to functions. */
#define X(ret, name, args)                                                                         \
    memcpy(&idmint__curl.name, &curl_syms[CUF_##name], sizeof(idmint__curl.name));
    IDMINT__CURL_FUNCTIONS(X)
#undef X
    curl_global_rc = idmint__curl.global_init(CURL_GLOBAL_DEFAULT);
}

static struct idmint__dynlib curl_lib =
    IDMINT__DYNLIB("libcurl.so.4", "libcurl4", curl_names, curl_syms, curl_on_load);

int idmint__curl_load(void)
{
    int rc = idmint__dynlib_load(&curl_lib);

    if (rc != 0)
        return rc;
    /* Written once under the loader's lock before the load was published. */
    if (curl_global_rc != CURLE_OK)
        return idmint__fail(IDMINT_EUNAVAILABLE, "libcurl cannot start: %s",
                            idmint__curl.easy_strerror(curl_global_rc));
    return 0;
}
