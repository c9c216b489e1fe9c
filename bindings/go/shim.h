/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The C side of the cgo boundary. idmint_errmsg() is thread-local and a
 * goroutine may run on another OS thread at its next cgo call, so each
 * helper reads the detail inside the same C call as the failure. Results
 * come back by value, and handles travel as integers: Go 1.19 moves every
 * pointer argument of a cgo call to the heap, which cost Next() an
 * allocation and about 15 ns (bench/floor.go measures the cgo floor).
 * A handle is C memory, so the integer hides nothing from Go's collector.
 */
#ifndef IDMINT_GO_SHIM_H
#define IDMINT_GO_SHIM_H

#include <idmint.h>
#include <stdlib.h>
#include <string.h>

/* A copy of the calling thread's detail, or NULL when there is none (or no memory for it). */
static inline char *idmint_go_detail(int rc)
{
    const char *m;
    size_t n;
    char *copy;

    if (rc == 0)
        return NULL;
    m = idmint_errmsg();
    n = strlen(m) + 1;
    if (n == 1 || (copy = malloc(n)) == NULL)
        return NULL;
    memcpy(copy, m, n);
    return copy;
}

static inline idmint *idmint_go_handle(uintptr_t h)
{
    return (idmint *)h;
}

typedef struct idmint_go_status {
    int rc;
    char *detail;
} idmint_go_status;

typedef struct idmint_go_opened {
    uintptr_t h;
    int rc;
    char *detail;
} idmint_go_opened;

static inline idmint_go_opened idmint_go_open(const char *authority, const char *ns,
                                              const idmint_options *opts)
{
    idmint_go_opened r = {0, 0, NULL};
    idmint *m = NULL;

    r.rc = idmint_open(&m, authority, ns, opts);
    r.h = (uintptr_t)m;
    r.detail = idmint_go_detail(r.rc);
    return r;
}

typedef struct idmint_go_one {
    uint64_t id;
    int rc;
    char *detail;
} idmint_go_one;

static inline idmint_go_one idmint_go_next(uintptr_t h)
{
    idmint_go_one r = {0, 0, NULL};

    r.rc = idmint_next(idmint_go_handle(h), &r.id);
    if (r.rc != 0)
        r.detail = idmint_go_detail(r.rc);
    return r;
}

static inline idmint_go_status idmint_go_next_n(uintptr_t h, uint64_t *ids, size_t n)
{
    idmint_go_status r = {0, NULL};

    r.rc = idmint_next_n(idmint_go_handle(h), ids, n);
    if (r.rc != 0)
        r.detail = idmint_go_detail(r.rc);
    return r;
}

static inline idmint_go_status idmint_go_info(uintptr_t h, idmint_handle_info *out)
{
    idmint_go_status r = {0, NULL};

    idmint_handle_info_init(out);
    r.rc = idmint_info(idmint_go_handle(h), out);
    r.detail = idmint_go_detail(r.rc);
    return r;
}

typedef struct idmint_go_decoded {
    idmint_decoded d;
    int rc;
    char *detail;
} idmint_go_decoded;

static inline int idmint_go_lease_status(uintptr_t h)
{
    return idmint_lease_status(idmint_go_handle(h));
}

static inline void idmint_go_close(uintptr_t h)
{
    idmint_close(idmint_go_handle(h));
}

static inline idmint_go_decoded idmint_go_decode(idmint_layout l, uint64_t id)
{
    idmint_go_decoded r;

    memset(&r, 0, sizeof(r));
    r.rc = idmint_decode(&l, id, &r.d);
    r.detail = idmint_go_detail(r.rc);
    return r;
}

typedef struct idmint_go_bounds {
    uint64_t lo, hi;
    int rc;
    char *detail;
} idmint_go_bounds;

static inline idmint_go_bounds idmint_go_bounds_of(idmint_layout l, int64_t from_ms, int64_t to_ms)
{
    idmint_go_bounds r;

    memset(&r, 0, sizeof(r));
    r.rc = idmint_bounds(&l, from_ms, to_ms, &r.lo, &r.hi);
    if (r.rc != 0)
        r.detail = idmint_go_detail(r.rc);
    return r;
}

typedef struct idmint_go_uuid {
    uint8_t b[16];
    int rc;
    char *detail;
} idmint_go_uuid;

typedef struct idmint_go_uuid_bounds {
    uint8_t lo[16], hi[16];
    int rc;
    char *detail;
} idmint_go_uuid_bounds;

static inline idmint_go_uuid_bounds idmint_go_uuid7_bounds(int64_t from_ms, int64_t to_ms)
{
    idmint_go_uuid_bounds r;

    memset(&r, 0, sizeof(r));
    r.rc = idmint_uuid7_bounds(from_ms, to_ms, r.lo, r.hi);
    if (r.rc != 0)
        r.detail = idmint_go_detail(r.rc);
    return r;
}

static inline idmint_go_uuid idmint_go_uuid7(void)
{
    idmint_go_uuid r;

    memset(&r, 0, sizeof(r));
    r.rc = idmint_uuid7(r.b);
    if (r.rc != 0)
        r.detail = idmint_go_detail(r.rc);
    return r;
}

static inline idmint_go_status idmint_go_uuid7_n(uint8_t *out, size_t n)
{
    idmint_go_status r = {0, NULL};

    r.rc = idmint_uuid7_n((uint8_t(*)[16])out, n);
    if (r.rc != 0)
        r.detail = idmint_go_detail(r.rc);
    return r;
}

static inline idmint_go_uuid idmint_go_uuid_parse(const char *text)
{
    idmint_go_uuid r;

    memset(&r, 0, sizeof(r));
    r.rc = idmint_uuid_parse(text, r.b);
    r.detail = idmint_go_detail(r.rc);
    return r;
}

static inline idmint_layout idmint_go_layout_default(void)
{
    idmint_layout l;

    idmint_layout_default(&l);
    return l;
}

#endif /* IDMINT_GO_SHIM_H */
