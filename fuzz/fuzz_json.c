/* SPDX-License-Identifier: Apache-2.0 */
/*
 * JSON request bodies: the body of POST /v1/namespaces through the pure
 * parser routes_parse_ns_body(), then the same bytes as the body of every
 * POST route (namespace create, worker lease, range lease) through the
 * dispatcher, which refuses a field the route table does not list, and
 * whose handlers validate the rest before they would ask the store. The
 * same bytes as a name a client sent: a near miss is one of the known.
 */
#include "fuzz.h"

#include "daemon_stub.h"
#include "idmint_service.h"
#include "reply.h"

#include <stdlib.h>
#include <string.h>

static void post(const char *path, const uint8_t *data, size_t size)
{
    struct http_req r;

    memset(&r, 0, sizeof(r));
    r.method = "POST";
    r.method_len = 4;
    r.path = path;
    r.path_len = strlen(path);
    r.body = size > 0 ? (const char *)data : NULL;
    r.body_len = size;
    r.header_bytes = 64;
    fuzz_dispatch(&stub_open, &r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    idmint_ns_info info, untouched;
    char err[256];

    stub_init();
    memset(&info, 0x5a, sizeof(info));
    untouched = info;
    err[0] = '\0';
    if (routes_parse_ns_body((const char *)data, size, &info, err, sizeof(err)) == 0) {
        /* What the parser accepts is a namespace the library could be asked for. */
        if (idmint__ns_name_check(info.name) != 0 ||
            (info.kind != IDMINT_KIND_SNOWFLAKE && info.kind != IDMINT_KIND_RANGE))
            abort();
        if (info.kind == IDMINT_KIND_SNOWFLAKE && idmint_layout_validate(&info.layout) == 0) {
            int64_t end_ms;

            if (idmint_layout_end_ms(&info.layout, &end_ms) != 0)
                abort();
        }
    } else if (err[0] == '\0' || memcmp(&info, &untouched, sizeof(info)) != 0) {
        abort(); /* a refusal says why and writes nothing */
    }

    {
        static const char *const known[] = {"namespace", "count", "max_block", "id", NULL};
        const char *near = routes_near_miss((const char *)data, size, known);
        size_t k;

        for (k = 0; near != NULL && known[k] != near; k++)
            if (known[k] == NULL)
                abort(); /* a suggestion that is not a known name */
    }

    post("/v1/namespaces", data, size);
    post("/internal/workers/lease", data, size);
    post("/internal/ranges/lease", data, size);
    return 0;
}
