/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One raw HTTP/1.1 request as a client sends it: the daemon's screening of
 * the request head (http_screen.c), h2o's request parser
 * (phr_parse_request, picohttpparser inside libh2o) and then the daemon's
 * dispatcher with that request, once open and once with tokens configured.
 * The authority has no store, so routes stop where a store would be asked.
 */
#include "fuzz.h"

#include "daemon_stub.h"
#include "http_screen.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_HEADERS 100 /* as h2o (H2O_MAX_HEADERS) */

/* picohttpparser's API as libh2o exports it; Debian ships no header for it. */
struct phr_header {
    const char *name;
    size_t name_len;
    const char *value;
    size_t value_len;
};
int phr_parse_request(const char *buf, size_t len, const char **method, size_t *method_len,
                      const char **path, size_t *path_len, int *minor_version,
                      struct phr_header *headers, size_t *num_headers, size_t last_len);

static int name_is(const struct phr_header *h, const char *name)
{
    return h->name != NULL && h->name_len == strlen(name) &&
           strncasecmp(h->name, name, h->name_len) == 0;
}

/* The screening http.c does before h2o sees a connection. 1: h2o would get it. */
static int screen(const char *p, size_t n, size_t max_header_bytes, int *bad_framing)
{
    size_t window = n < max_header_bytes + 4 ? n : max_header_bytes + 4, lines = 0;
    size_t len = http_header_block_len(p, window, &lines);
    enum http_head_verdict v;
    int status;

    if (len > window || (len > 0 && p[len - 1] != '\n') || lines > window)
        abort();
    if (len == 0) {
        v = http_head_too_large(p, window);
        if (v != HTTP_HEAD_URI_TOO_LONG && v != HTTP_HEAD_COUNT)
            abort();
        return 0;
    }
    *bad_framing = http_has_bad_framing(p, len);
    (void)http_declared_length(p, len);
    v = http_screen_head(p, len);
    status = http_head_verdict_status(v);
    if (v >= HTTP_HEAD_COUNT || (v == HTTP_HEAD_OK) != (status == 0) ||
        http_head_verdict_code(v)[0] == '\0')
        abort();
    /* What the screening lets through has no framing conflict left for h2o. */
    if (v == HTTP_HEAD_OK && *bad_framing)
        abort();
    return v == HTTP_HEAD_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *p = (const char *)data;
    struct phr_header headers[MAX_HEADERS];
    size_t num_headers = MAX_HEADERS, i, body_len;
    struct http_req r;
    int minor = 0, bad_framing = 0, head_len;
    const char *method, *path, *q;
    size_t method_len, path_len;

    stub_init();
    if (!screen(p, size, stub_open.cfg.max_header_bytes, &bad_framing))
        return 0;
    head_len = phr_parse_request(p, size, &method, &method_len, &path, &path_len, &minor, headers,
                                 &num_headers, 0);
    if (head_len <= 0)
        return 0;
    if ((size_t)head_len > size || num_headers > MAX_HEADERS)
        abort();

    /* Build the request the way http.c's on_req does from h2o's. */
    memset(&r, 0, sizeof(r));
    r.method = method;
    r.method_len = method_len;
    i = http_origin_path(path, path_len);
    if (i > path_len)
        abort();
    path += i;
    path_len -= i;
    r.path = path;
    r.path_len = path_len;
    if ((q = memchr(path, '?', path_len)) != NULL) {
        r.path_len = (size_t)(q - path);
        r.query = q + 1;
        r.query_len = path_len - r.path_len - 1;
    }
    body_len = size - (size_t)head_len;
    if (body_len > 0) {
        r.body = p + head_len;
        r.body_len = body_len;
    }
    r.header_bytes = method_len + path_len + 16;
    for (i = 0; i < num_headers; i++) {
        if (name_is(&headers[i], "authorization") && r.authorization == NULL) {
            r.authorization = headers[i].value;
            r.authorization_len = headers[i].value_len;
        } else if (name_is(&headers[i], "accept") && r.accept == NULL) {
            r.accept = headers[i].value;
            r.accept_len = headers[i].value_len;
        }
        r.header_bytes += headers[i].name_len + headers[i].value_len + 4;
    }
    r.has_bad_framing = bad_framing;

    fuzz_dispatch(&stub_open, &r);
    fuzz_dispatch(&stub_auth, &r);
    return 0;
}
