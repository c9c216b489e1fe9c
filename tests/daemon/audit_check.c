/* SPDX-License-Identifier: Apache-2.0 */
/*
 * audit_check HTTP_URL SQLITE_URL N: create N namespaces through the http://
 * backend, then read the whole audit log twice, through http:// (which pages
 * by the daemon's limit of 1000 a request) and straight from the daemon's
 * SQLite file, and require the two to be the same records in the same order.
 * Exit 0, or 1 with a message. Run by test_http_backend.sh.
 */
#include "idmint.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char *what, int rc)
{
    fprintf(stderr, "audit_check: %s: %s (%s)\n", what, idmint_strerror(rc), idmint_errmsg());
    return 1;
}

static int same_entry(const idmint_audit_entry *a, const idmint_audit_entry *b)
{
    return a->seq == b->seq && a->at_ms == b->at_ms && strcmp(a->actor, b->actor) == 0 &&
           strcmp(a->action, b->action) == 0 && strcmp(a->ns, b->ns) == 0 &&
           strcmp(a->detail, b->detail) == 0;
}

int main(int argc, char **argv)
{
    idmint_authority *http = NULL, *file = NULL;
    idmint_audit_entry *via_http = NULL, *via_file = NULL;
    size_t n_http = 0, n_file = 0, i;
    unsigned long want;
    int rc, status = 1;

    if (argc != 4 || (want = strtoul(argv[3], NULL, 10)) == 0) {
        fprintf(stderr, "usage: audit_check HTTP_URL SQLITE_URL N\n");
        return 2;
    }
    if ((rc = idmint_authority_open(&http, argv[1], 0)) != 0)
        return fail("open http", rc);
    for (i = 0; i < want; i++) {
        idmint_ns_info ns;

        idmint_ns_info_init(&ns, IDMINT_KIND_RANGE);
        snprintf(ns.name, sizeof(ns.name), "audit-%05zu", i);
        if ((rc = idmint_ns_create(http, &ns)) != 0) {
            status = fail("create over http", rc);
            goto out;
        }
    }
    if ((rc = idmint_authority_open(&file, argv[2], 0)) != 0) {
        status = fail("open sqlite", rc);
        goto out;
    }
    if ((rc = idmint_audit_list(http, 0, SIZE_MAX, &via_http, &n_http)) != 0) {
        status = fail("audit over http", rc);
        goto out;
    }
    if ((rc = idmint_audit_list(file, 0, SIZE_MAX, &via_file, &n_file)) != 0) {
        status = fail("audit from the file", rc);
        goto out;
    }
    if (n_file < want || n_http != n_file) {
        fprintf(stderr, "audit_check: %zu records over http, %zu in the file, want >= %lu\n",
                n_http, n_file, want);
        goto out;
    }
    for (i = 0; i < n_file; i++) {
        const idmint_audit_entry *f = idmint_audit_entry_at(via_file, i);

        if (!same_entry(idmint_audit_entry_at(via_http, i), f) ||
            (i > 0 && f->seq <= idmint_audit_entry_at(via_file, i - 1)->seq)) {
            fprintf(stderr, "audit_check: record %zu differs or is out of order (seq %lld)\n", i,
                    (long long)f->seq);
            goto out;
        }
    }
    printf("audit_check: %zu records, the same through http:// and the file\n", n_file);
    status = 0;
out:
    idmint_free(via_http);
    idmint_free(via_file);
    idmint_authority_close(http);
    idmint_authority_close(file);
    return status;
}
