/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The worker-id race on etcd: 32 processes take ids of one snowflake
 * namespace with W=3 (8 worker ids) at the same moment, each with its own
 * connections made after fork(), once through the authority layer
 * (idmint_open) and once through the store alone: exactly 8 win, with
 * distinct ids, and the rest get ENOWORKER. Against the cluster of
 * $IDMINT_TEST_ETCD_URL or the file $IDMINT_ETCD_ENV (etcd-start.sh); a
 * missing cluster fails.
 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "idmint.h"
#include "internal.h"
#include "store.h"
#include "testsupport.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PROCS       32
#define WORKER_BITS 3
#define IDS         (1 << WORKER_BITS)

struct open_result {
    int rc;
    uint32_t worker_id;
    char msg[160];
};

/* Block until the other end of @p fd is closed by every writer. */
static void wait_closed(int fd)
{
    char c;

    while (read(fd, &c, 1) > 0)
        ;
}

/* One lease_take through the store alone, as holder number @p idx; never released. */
static void store_child(const char *url, const char *ns, unsigned idx, int go, int out)
{
    struct open_result res;
    struct idmint__lease l = {0};
    struct store *st = NULL;

    memset(&res, 0, sizeof(res));
    memset(&l, 0, sizeof(l));
    snprintf(l.holder, sizeof(l.holder), "%032x", idx + 1);
    res.rc = idmint__store_open(url, NULL, &st);
    wait_closed(go);
    if (res.rc == 0)
        res.rc = idmint__store_lease_take(st, ns, IDS, 1000, 1000000, &l, "test:etcd_race",
                                          INT64_C(1780000000000));
    if (res.rc == 0)
        res.worker_id = l.worker_id;
    else
        snprintf(res.msg, sizeof(res.msg), "%s", idmint_errmsg());
    idmint__store_close(st);
    _exit(write(out, &res, sizeof(res)) == (ssize_t)sizeof(res) ? 0 : 3);
}

/*
 * A child: wait for the start, open (a winner holds its lease), report, and
 * keep the lease until the parent has every answer, so that no id is freed
 * and won twice. With @p is_store, one lease_take on the store instead.
 */
static void child(const char *url, const char *ns, int is_store, unsigned idx, int go, int hold,
                  int out)
{
    struct open_result res;
    idmint_handle_info info;
    idmint *m = NULL;

    memset(&res, 0, sizeof(res));
    if (is_store) {
        store_child(url, ns, idx, go, out);
        return;
    }
    wait_closed(go);
    res.rc = idmint_open(&m, url, ns, NULL);
    idmint_handle_info_init(&info);
    /* A winner that cannot say its id must fail the test, never read as id 0. */
    if (res.rc == 0 && (res.rc = idmint_info(m, &info)) == 0)
        res.worker_id = info.worker_id;
    else
        snprintf(res.msg, sizeof(res.msg), "%s", idmint_errmsg());
    if (write(out, &res, sizeof(res)) != (ssize_t)sizeof(res))
        _exit(3);
    wait_closed(hold);
    idmint_close(m);
    _exit(0);
}

static void race(const char *url, int is_store)
{
    int go[2], hold[2], res[2], won = 0, busy = 0, seen[IDS] = {0};
    idmint_authority *a = NULL;
    idmint_ns_info ns;
    pid_t pids[PROCS];

    idmint_ns_info_init(&ns, IDMINT_KIND_SNOWFLAKE);
    snprintf(ns.name, sizeof(ns.name), "etcdrace-%lx-%x-%d", (unsigned long)time(NULL),
             (unsigned)getpid(), is_store);
    ns.layout.worker_bits = WORKER_BITS;
    if (idmint_authority_open(&a, url, 0) != 0)
        fail_msg("cannot open %s: %s", url, idmint_errmsg());
    assert_int_equal(idmint_ns_create(a, &ns), 0);

    assert_int_equal(pipe(go), 0);
    assert_int_equal(pipe(hold), 0);
    assert_int_equal(pipe(res), 0);
    for (unsigned i = 0; i < PROCS; i++) {
        pids[i] = fork();
        assert_true(pids[i] >= 0);
        if (pids[i] == 0) {
            close(go[1]);
            close(hold[1]);
            close(res[0]);
            child(url, ns.name, is_store, i, go[0], hold[0], res[1]);
        }
    }
    close(go[0]);
    close(hold[0]);
    close(res[1]);
    close(go[1]); /* everyone at once */
    for (unsigned i = 0; i < PROCS; i++) {
        struct open_result r;

        assert_int_equal(read(res[0], &r, sizeof(r)), sizeof(r));
        if (r.rc == 0) {
            assert_true(r.worker_id < IDS);
            assert_int_equal(seen[r.worker_id], 0);
            seen[r.worker_id] = 1;
            won++;
        } else {
            if (r.rc != IDMINT_ENOWORKER)
                fail_msg("open: %s: %s", idmint_strerror(r.rc), r.msg);
            busy++;
        }
    }
    close(res[0]);
    close(hold[1]); /* winners release */
    for (unsigned i = 0; i < PROCS; i++) {
        int status;

        assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    assert_int_equal(won, IDS);
    assert_int_equal(busy, PROCS - IDS);
    idmint_authority_close(a);
}

static char *etcd_url(void)
{
    char *url = ts_etcd_url();

    if (url == NULL)
        fail_msg("no etcd: set IDMINT_TEST_ETCD_URL, or IDMINT_ETCD_ENV to the file "
                 "tests/support/etcd-start.sh writes");
    return url;
}

static void test_etcd_race__32_openers_of_8_worker_ids_give_8_distinct_winners(void **state)
{
    char *url = etcd_url();

    (void)state;
    race(url, 0);
    free(url);
}

static void test_etcd_race__32_store_takes_of_8_worker_ids_give_8_distinct_winners(void **state)
{
    char *url = etcd_url();

    (void)state;
    race(url, 1);
    free(url);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_etcd_race__32_openers_of_8_worker_ids_give_8_distinct_winners),
        cmocka_unit_test(test_etcd_race__32_store_takes_of_8_worker_ids_give_8_distinct_winners),
    };

    return cmocka_run_group_tests_name("etcd_race", tests, NULL, NULL);
}
