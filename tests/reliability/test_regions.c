/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Two regions, each with its own SQLite authority (region ids 1 and 2), mint
 * from one R=2 namespace at the same time: no ID repeats across them, and
 * decode (the library's and the CLI's) names the region each came from.
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include <setjmp.h>     /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "idmint.h"
#include "testsupport.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define PROCS_PER_REGION 2

static void create_geo(const char *url, uint32_t region)
{
    idmint_authority *a;
    idmint_ns_info ns;

    assert_int_equal(idmint_authority_open(&a, url, region), 0);
    idmint_ns_info_init(&ns, IDMINT_KIND_SNOWFLAKE);
    snprintf(ns.name, sizeof(ns.name), "geo");
    assert_int_equal(idmint_layout_parse("41/2/8/12", &ns.layout), 0);
    assert_int_equal(idmint_ns_create(a, &ns), 0);
    idmint_authority_close(a);
}

static int mint_child(const char *url, uint32_t region, uint64_t *out, size_t n)
{
    idmint_options o;
    idmint *m;

    idmint_options_init(&o);
    o.region = region;
    if (idmint_open(&m, url, "geo", &o) != 0)
        return 1;
    for (size_t i = 0; i < n; i += 100)
        if (idmint_next_n(m, out + i, n - i < 100 ? n - i : 100) != 0)
            return 1;
    idmint_close(m);
    return 0;
}

/* The CLI's decode line for @p id must name @p region. */
static void cli_decode_names_region(const char *url, uint64_t id, uint32_t region)
{
    char cmd[8192], line[512], want[32];
    FILE *p;

    snprintf(cmd, sizeof(cmd), "%s decode --authority '%s' --ns geo %llu", IDMINT_CLI_PATH, url,
             (unsigned long long)id);
    p = popen(cmd, "r");
    assert_non_null(p);
    assert_non_null(fgets(line, sizeof(line), p));
    assert_int_equal(pclose(p), 0);
    snprintf(want, sizeof(want), " region=%u ", region);
    if (strstr(line, want) == NULL)
        fail_msg("decode line '%s' does not name region %u", line, region);
}

static void test_regions__two_authorities_never_mint_the_same_id(void **state)
{
    char *dir = ts_tempdir();
    char *url[2] = {ts_sqlite_url(dir, "region1.db"), ts_sqlite_url(dir, "region2.db")};
    size_t per = 1000000 / ts_scale(), total = per * PROCS_PER_REGION * 2;
    uint64_t *ids = mmap(NULL, total * sizeof(uint64_t), PROT_READ | PROT_WRITE,
                         MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    idmint_layout l;
    pid_t pids[PROCS_PER_REGION * 2];

    (void)state;
    assert_true(ids != MAP_FAILED);
    create_geo(url[0], 1);
    create_geo(url[1], 2);
    for (int p = 0; p < PROCS_PER_REGION * 2; p++) {
        pids[p] = fork();
        assert_true(pids[p] >= 0);
        if (pids[p] == 0)
            _exit(mint_child(url[p % 2], (uint32_t)(p % 2 + 1), ids + (size_t)p * per, per));
    }
    for (int p = 0; p < PROCS_PER_REGION * 2; p++) {
        int status;

        assert_int_equal(waitpid(pids[p], &status, 0), pids[p]);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    l = (idmint_layout){.time_bits = 41,
                        .region_bits = 2,
                        .worker_bits = 8,
                        .sequence_bits = 12,
                        .unit_ms = 1,
                        .epoch_ms = INT64_C(1767225600000)};
    for (int p = 0; p < PROCS_PER_REGION * 2; p++) {
        for (size_t i = 0; i < per; i++) {
            idmint_decoded d;

            assert_int_equal(idmint_decode(&l, ids[(size_t)p * per + i], &d), 0);
            assert_int_equal(d.region, (uint32_t)(p % 2 + 1));
        }
        cli_decode_names_region(url[p % 2], ids[(size_t)p * per + per / 2], (uint32_t)(p % 2 + 1));
    }
    /* Both regions lease worker ids from 0 up: only the region bits keep them apart. */
    assert_int_equal(ts_count_duplicates(ids, total), 0);
    printf("regions: %zu IDs from 2 regions checked\n", total);
    munmap(ids, total * sizeof(uint64_t));
    free(url[0]);
    free(url[1]);
    ts_rmtree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_regions__two_authorities_never_mint_the_same_id),
    };
    return cmocka_run_group_tests_name("regions", tests, NULL, NULL);
}
