/* SPDX-License-Identifier: Apache-2.0 */
/*
 * 32 processes open a handle on one snowflake namespace with W=3 (8 worker
 * ids) at the same moment, each with its own store connection made after
 * fork(): exactly 8 win, with distinct ids, and the rest get ENOWORKER.
 * Against PostgreSQL ($IDMINT_TEST_PG_URL or the file $IDMINT_PG_ENV; a
 * missing server fails) and, cheaply, SQLite.
 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "idmint.h"
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

/*
 * A child: wait for the start, open (a winner holds its lease), report, and
 * keep the lease until the parent has every answer, so that no id is freed
 * and won twice.
 */
static void child(const char *url, const char *ns, int go, int hold, int out)
{
    struct open_result res;
    idmint_handle_info info;
    idmint *m = NULL;

    memset(&res, 0, sizeof(res));
    wait_closed(go);
    res.rc = idmint_open(&m, url, ns, NULL);
    idmint_handle_info_init(&info);
    if (res.rc == 0 && idmint_info(m, &info) == 0)
        res.worker_id = info.worker_id;
    else if (res.rc != 0)
        snprintf(res.msg, sizeof(res.msg), "%s", idmint_errmsg());
    if (write(out, &res, sizeof(res)) != (ssize_t)sizeof(res))
        _exit(3);
    wait_closed(hold);
    idmint_close(m);
    _exit(0);
}

static void race(const char *url)
{
    int go[2], hold[2], res[2], won = 0, busy = 0, seen[IDS] = {0};
    idmint_authority *a = NULL;
    idmint_ns_info ns;
    pid_t pids[PROCS];

    idmint_ns_info_init(&ns, IDMINT_KIND_SNOWFLAKE);
    snprintf(ns.name, sizeof(ns.name), "pgrace-%lx-%x", (unsigned long)time(NULL),
             (unsigned)getpid());
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
            child(url, ns.name, go[0], hold[0], res[1]);
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

static void
test_pg_race__32_openers_of_8_worker_ids_on_postgres_give_8_distinct_winners(void **state)
{
    char *url = ts_pg_url();

    (void)state;
    if (url == NULL)
        fail_msg("no PostgreSQL: set IDMINT_TEST_PG_URL, or IDMINT_PG_ENV to the file "
                 "tests/support/pg-start.sh writes");
    race(url);
    free(url);
}

static void test_pg_race__32_openers_of_8_worker_ids_on_sqlite_give_8_distinct_winners(void **state)
{
    char *dir = ts_tempdir();
    char *url;

    (void)state;
    assert_non_null(dir);
    url = ts_sqlite_url(dir, "race.db");
    assert_non_null(url);
    race(url);
    free(url);
    ts_rmtree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(
            test_pg_race__32_openers_of_8_worker_ids_on_postgres_give_8_distinct_winners),
        cmocka_unit_test(
            test_pg_race__32_openers_of_8_worker_ids_on_sqlite_give_8_distinct_winners),
    };

    return cmocka_run_group_tests_name("pg_race", tests, NULL, NULL);
}
