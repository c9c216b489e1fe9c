/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for cmd/idmintd/routes_defer.c over a real server on loopback,
 * with one general store thread, a queue of one and a 500 ms deadline, and
 * the SQLite file's write lock held by the test: store-bound writes beyond
 * the queue are answered 503 with Retry-After at once, the one queued and
 * the one running at their deadline; the loop answers /healthz meanwhile;
 * a call still queued at its deadline is never made, so at most the one
 * that was running completes once the lock is let go; then writes work.
 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "daemon_fixture.h"
#include "store_pool.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { WRITERS = 5 };

static void one_thread_short_queue(struct config *cfg)
{
    cfg->store_threads = 1;
    cfg->store_lease_threads = 1;
    cfg->store_queue = 1;
    cfg->store_deadline_ms = 500;
}

static int setup(void **state)
{
    return td_setup_with(state, one_thread_short_queue, 0, 1);
}

struct writer {
    struct td_daemon *t;
    int k;
    struct td_reply r;
};

static void *write_ns(void *arg)
{
    struct writer *w = arg;
    char body[96];

    snprintf(body, sizeof(body), "{\"name\":\"q%d\",\"kind\":\"range\"}", w->k);
    td_http(w->t, "POST", "/v1/namespaces", NULL, body, NULL, &w->r);
    return NULL;
}

static int pool_idle(void *arg)
{
    struct td_daemon *t = arg;
    struct store_pool_stats st;

    store_pool_stats_get(t->d.pool, &st);
    return st.running == 0 && st.depth == 0;
}

static void test_routes_defer__a_busy_store_is_refused_at_once_or_at_the_deadline(void **state)
{
    struct td_daemon *t = *state;
    struct writer w[WRITERS];
    pthread_t th[WRITERS];
    struct store_pool_stats st;
    struct td_reply r;
    sqlite3 *lock = NULL;
    char path[4096];
    int k, created = 0;

    snprintf(path, sizeof(path), "%s/authority.db", t->dir);
    assert_int_equal(sqlite3_open(path, &lock), SQLITE_OK);
    assert_int_equal(sqlite3_exec(lock, "BEGIN IMMEDIATE", NULL, NULL, NULL), SQLITE_OK);
    for (k = 0; k < WRITERS; k++) {
        w[k] = (struct writer){.t = t, .k = k};
        assert_int_equal(pthread_create(&th[k], NULL, write_ns, &w[k]), 0);
    }
    /* The loops are not held by the store. */
    td_http(t, "GET", "/healthz", NULL, NULL, NULL, &r);
    assert_int_equal(r.status, 200);
    td_reply_free(&r);
    for (k = 0; k < WRITERS; k++)
        pthread_join(th[k], NULL);
    for (k = 0; k < WRITERS; k++) {
        if (w[k].r.status != 503)
            fail_msg("writer %d: %ld, not 503: %s", k, w[k].r.status, w[k].r.body);
        assert_non_null(strstr(w[k].r.body, "\"code\":\"unavailable\""));
        assert_non_null(strstr(w[k].r.headers, "retry-after: 1"));
        td_reply_free(&w[k].r);
    }
    store_pool_stats_get(t->d.pool, &st);
    assert_true(st.rejected_full >= WRITERS - 2);
    assert_true(st.timed_out >= 1);
    assert_int_equal(st.rejected_full + st.timed_out, WRITERS);

    assert_int_equal(sqlite3_exec(lock, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(lock);
    assert_true(td_wait_for(pool_idle, t));
    /* Refused at once, or handed back undone when a thread got to it: all
     * but the one a thread was running when its client heard 503. */
    store_pool_stats_get(t->d.pool, &st);
    assert_true(st.rejected_full + st.late >= WRITERS - 1);
    for (k = 0; k < WRITERS; k++) {
        char get[64];

        snprintf(get, sizeof(get), "/v1/namespaces/q%d", k);
        td_http(t, "GET", get, NULL, NULL, NULL, &r);
        assert_true(r.status == 200 || r.status == 404);
        created += r.status == 200;
        td_reply_free(&r);
    }
    assert_true(created <= 1); /* only the call a thread was running may complete */
    td_http(t, "POST", "/v1/namespaces", NULL, "{\"name\":\"after\",\"kind\":\"range\"}", NULL, &r);
    assert_int_equal(r.status, 201);
    td_reply_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_routes_defer__a_busy_store_is_refused_at_once_or_at_the_deadline, setup,
            td_teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
