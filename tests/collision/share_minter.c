/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A minter behind the planted defect of the fault store (ts_fault_set_share_worker):
 * share_minter URL NS COUNT SHARE LEASE_MS prints COUNT IDs of NS minted
 * through "fault:URL", with SHARE 1 taking worker 0 away from whoever holds
 * it. Only for tests/collision/test_collisions.sh.
 */
#include "fault_store.h"

#include "idmint.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    char url[1024];
    idmint_options o;
    idmint *m = NULL;
    long count;

    if (argc != 6) {
        fprintf(stderr, "usage: share_minter URL NS COUNT SHARE LEASE_MS\n");
        return 2;
    }
    count = atol(argv[3]);
    snprintf(url, sizeof(url), "fault:%s", argv[1]);
    if (ts_fault_register() != 0)
        return 1;
    ts_fault_set_share_worker(atoi(argv[4]));
    idmint_options_init(&o);
    o.lease_ms = (uint32_t)atol(argv[5]);
    o.renew_ms = o.lease_ms / 4;
    if (idmint_open(&m, url, argv[2], &o) != 0) {
        fprintf(stderr, "share_minter: %s\n", idmint_errmsg());
        return 1;
    }
    for (long i = 0; i < count; i++) {
        uint64_t id;

        if (idmint_next(m, &id) != 0)
            break; /* the lease was lost: the defect has been seen */
        printf("%llu\n", (unsigned long long)id);
    }
    idmint_close(m);
    return 0;
}
