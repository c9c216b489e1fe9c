/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libcurl, bound once with dlopen() (dynlib.h) for every client of it in the
 * library: the http:// remote authority and the etcd:// store. A process
 * that uses neither never maps libcurl. Internal to libidmint.
 */
#ifndef IDMINT_STORE_CURL_LIB_H
#define IDMINT_STORE_CURL_LIB_H

#include <curl/curl.h>

/* X(return type, name without "curl_", argument list): every libcurl call we make. */
#define IDMINT__CURL_FUNCTIONS(X)                                                                  \
    X(CURLcode, global_init, (long))                                                               \
    X(CURL *, easy_init, (void))                                                                   \
    X(CURLcode, easy_setopt, (CURL *, CURLoption, ...))                                            \
    X(CURLcode, easy_perform, (CURL *))                                                            \
    X(CURLcode, easy_getinfo, (CURL *, CURLINFO, ...))                                             \
    X(void, easy_cleanup, (CURL *))                                                                \
    X(const char *, easy_strerror, (CURLcode))                                                     \
    X(struct curl_slist *, slist_append, (struct curl_slist *, const char *))                      \
    X(void, slist_free_all, (struct curl_slist *))

/* The bound functions; valid only after idmint__curl_load() returned 0. */
struct idmint__curl_api {
#define X(ret, name, args) ret(*name) args;
    IDMINT__CURL_FUNCTIONS(X)
#undef X
};
extern struct idmint__curl_api idmint__curl;

/*
 * Bind libcurl and run its one global init, the first time; later calls
 * return the first outcome. 0, or IDMINT_EUNAVAILABLE with a message naming
 * the library and its Debian package (or why curl_global_init failed).
 * Thread-safe.
 */
int idmint__curl_load(void);

#endif
