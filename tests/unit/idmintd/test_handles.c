/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for cmd/idmintd/handles.c: a namespace's handle is opened once
 * however many threads ask at once; [mint] namespaces is read as a list and
 * stops at the first failure; a lease forced away is replaced by a new
 * worker id while other threads mint, with no ID twice and no freed handle
 * used (ASan); a disabled namespace turns unready within its margin; an
 * authority removed under the daemon is never made anew.
 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "daemon_fixture.h"
#include "testsupport.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define LEASE_MS 3000
#define RENEW_MS 200

static void sleep_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};

    nanosleep(&ts, NULL);
}

static int setup(void **state)
{
    struct td_daemon *t = calloc(1, sizeof(*t));

    if (t == NULL || td_daemon_open(t, LEASE_MS, RENEW_MS) != 0) {
        free(t);
        return -1;
    }
    *state = t;
    return 0;
}

static int teardown(void **state)
{
    td_daemon_close(*state);
    free(*state);
    return 0;
}

static uint32_t worker_of(struct ns_handle *nh)
{
    idmint_handle_info info;

    idmint_handle_info_init(&info);
    assert_int_equal(handles_info(nh, &info), 0);
    return info.worker_id;
}

static void test_handles__a_namespace_is_opened_once_and_found_after(void **state)
{
    struct td_daemon *t = *state;
    struct handles *h = &t->d.handles;
    struct ns_handle *snow, *again, *rng;

    assert_null(handles_find(h, "snow"));
    assert_int_equal(handles_get(h, "snow", &snow), 0);
    assert_int_equal(handles_get(h, "snow", &again), 0);
    assert_ptr_equal(snow, again);
    assert_ptr_equal(handles_find(h, "snow"), snow);
    assert_int_equal(snow->slot, 0);
    assert_false(snow->is_range);
    assert_true(snow->end_ms > 0);
    assert_int_equal(handles_get(h, "rng", &rng), 0);
    assert_int_equal(rng->slot, 1);
    assert_true(rng->is_range);
    assert_int_equal(handles_get(h, "nope", &again), IDMINT_ENOTFOUND);
    assert_null(handles_find(h, "nope"));
    assert_int_equal(atomic_load(&h->n), 2);
}

struct racer {
    struct handles *h;
    pthread_barrier_t *start;
    struct ns_handle *got;
    int rc;
};

static void *race_get(void *arg)
{
    struct racer *r = arg;

    pthread_barrier_wait(r->start);
    r->rc = handles_get(r->h, "snow", &r->got);
    return NULL;
}

static void test_handles__threads_asking_at_once_share_one_handle(void **state)
{
    struct td_daemon *t = *state;
    enum { N = 8 };
    struct racer r[N];
    pthread_t th[N];
    pthread_barrier_t start;
    int i;

    pthread_barrier_init(&start, NULL, N);
    for (i = 0; i < N; i++) {
        r[i] = (struct racer){.h = &t->d.handles, .start = &start};
        assert_int_equal(pthread_create(&th[i], NULL, race_get, &r[i]), 0);
    }
    for (i = 0; i < N; i++)
        pthread_join(th[i], NULL);
    pthread_barrier_destroy(&start);
    for (i = 0; i < N; i++) {
        assert_int_equal(r[i].rc, 0);
        assert_ptr_equal(r[i].got, r[0].got);
    }
    assert_int_equal(atomic_load(&t->d.handles.n), 1);
}

static void test_handles__the_eager_list_takes_spaces_tabs_and_commas(void **state)
{
    struct td_daemon *t = *state;

    snprintf(t->d.cfg.namespaces, sizeof(t->d.cfg.namespaces), " snow,\trng , ,");
    assert_int_equal(handles_open_eager(&t->d.handles), 0);
    assert_int_equal(atomic_load(&t->d.handles.n), 2);
    assert_non_null(handles_find(&t->d.handles, "snow"));
    assert_non_null(handles_find(&t->d.handles, "rng"));
}

static void test_handles__the_eager_list_stops_at_the_first_failure(void **state)
{
    struct td_daemon *t = *state;

    snprintf(t->d.cfg.namespaces, sizeof(t->d.cfg.namespaces), "snow,missing,rng");
    assert_int_equal(handles_open_eager(&t->d.handles), IDMINT_ENOTFOUND);
    assert_non_null(handles_find(&t->d.handles, "snow"));
    assert_null(handles_find(&t->d.handles, "rng"));
    /* A name longer than any namespace's is refused before the store is asked. */
    memset(t->d.cfg.namespaces, 'a', 70);
    t->d.cfg.namespaces[70] = '\0';
    assert_int_equal(handles_open_eager(&t->d.handles), IDMINT_EINVAL);
    assert_int_equal(atomic_load(&t->d.handles.n), 1);
}

/* Threads minting through handles_try_next_n while the handle is swapped. */
struct minter {
    struct ns_handle *nh;
    atomic_int *stop;
    uint64_t *ids;
    size_t n, cap;
    unsigned refused;
};

static void *mint_loop(void *arg)
{
    struct minter *mt = arg;

    while (!atomic_load(mt->stop) && mt->n + 16 <= mt->cap) {
        size_t got = 0;
        uint32_t wait_ms = 0;
        int rc = handles_try_next_n(mt->nh, mt->ids + mt->n, 16, &got, &wait_ms);

        mt->n += got;
        if (rc != 0) {
            mt->refused++;
            sleep_us(1000);
        } else if (got == 0) {
            sleep_us(100);
        }
    }
    return NULL;
}

struct lost_wait {
    struct ns_handle *nh;
};

static int lease_is_gone(void *arg)
{
    struct lost_wait *w = arg;
    idmint_handle_info info;

    idmint_handle_info_init(&info);
    return handles_info(w->nh, &info) == 0 && info.lease_until == 0;
}

struct swap_wait {
    struct handles *h;
    struct ns_handle *nh;
    uint32_t old_worker;
};

static int swapped(void *arg)
{
    struct swap_wait *w = arg;
    idmint_handle_info info;

    handles_observe(w->h);
    idmint_handle_info_init(&info);
    return handles_info(w->nh, &info) == 0 && info.lease_until != 0 &&
           info.worker_id != w->old_worker;
}

static void test_handles__a_lease_forced_away_is_replaced_under_minting_threads(void **state)
{
    struct td_daemon *t = *state;
    struct handles *h = &t->d.handles;
    enum { THREADS = 3, CAP = 400000 };
    struct minter mt[THREADS];
    pthread_t th[THREADS];
    atomic_int stop = 0;
    struct ns_handle *nh;
    idmint_authority *admin;
    uint64_t *all;
    size_t total = 0;
    uint32_t w1;
    char reason[256], lost_reason[256];
    int i, forced, is_gone, was_ready, is_swapped;

    assert_int_equal(handles_get(h, "snow", &nh), 0);
    w1 = worker_of(nh);
    assert_int_equal(handles_ready(h, reason, sizeof(reason)), 1);
    assert_string_equal(reason, "");
    for (i = 0; i < THREADS; i++) {
        mt[i] = (struct minter){.nh = nh, .stop = &stop, .cap = CAP};
        assert_non_null(mt[i].ids = malloc(CAP * sizeof(uint64_t)));
        assert_int_equal(pthread_create(&th[i], NULL, mint_loop, &mt[i]), 0);
    }

    /* Judged after the threads are joined: a failed assertion leaves the test. */
    admin = td_daemon_admin(t);
    forced = admin != NULL ? idmint_worker_force_release(admin, "snow", 0, w1) : -1;
    idmint_authority_close(admin);
    /* The renewal thread learns it; until the tick, the daemon is not ready. */
    is_gone = forced == 0 && td_wait_for(lease_is_gone, &(struct lost_wait){nh});
    was_ready = handles_ready(h, lost_reason, sizeof(lost_reason));
    is_swapped = is_gone && td_wait_for(swapped, &(struct swap_wait){h, nh, w1});
    sleep_us(50 * 1000); /* let the threads mint from the new handle too */
    atomic_store(&stop, 1);
    for (i = 0; i < THREADS; i++) {
        pthread_join(th[i], NULL);
        total += mt[i].n;
    }
    assert_int_equal(forced, 0);
    assert_true(is_gone);
    assert_int_equal(was_ready, 0);
    assert_non_null(strstr(lost_reason, "worker lease lost"));
    assert_true(is_swapped);
    /* Ready again at once, not at the tick after the swap. */
    assert_int_equal(handles_ready(h, reason, sizeof(reason)), 1);
    assert_string_equal(reason, "");
    assert_true(atomic_load(&h->renewal_failures) >= 1);
    assert_ptr_equal(handles_find(h, "snow"), nh); /* the slot stays; its handle changed */

    assert_non_null(all = malloc(total * sizeof(uint64_t) + 1));
    total = 0;
    for (i = 0; i < THREADS; i++) {
        memcpy(all + total, mt[i].ids, mt[i].n * sizeof(uint64_t));
        total += mt[i].n;
        free(mt[i].ids);
    }
    assert_true(total > 0);
    assert_int_equal(ts_count_duplicates(all, total), 0);
    free(all);
}

static int unready(void *arg)
{
    struct handles *h = arg;
    char reason[256];

    handles_observe(h);
    return !handles_ready(h, reason, sizeof(reason)) && strstr(reason, "disabled") != NULL;
}

static void test_handles__a_disabled_namespace_turns_unready_within_its_margin(void **state)
{
    struct td_daemon *t = *state;
    struct handles *h = &t->d.handles;
    struct ns_handle *nh;
    idmint_authority *admin;
    char reason[256];

    assert_int_equal(handles_get(h, "snow", &nh), 0);
    assert_int_equal(handles_ready(h, reason, sizeof(reason)), 1);
    assert_non_null(admin = td_daemon_admin(t));
    assert_int_equal(idmint_ns_set_disabled(admin, "snow", 1), 0);
    idmint_authority_close(admin);
    /* Its lease is not renewed: it runs on to its end, ready until the margin. */
    assert_true(td_wait_for(unready, h));
    assert_int_equal(handles_ready(h, reason, sizeof(reason)), 0);
    assert_non_null(strstr(reason, "namespace 'snow' is disabled"));
}

static void test_handles__a_range_handle_is_ready_while_it_holds_values(void **state)
{
    struct td_daemon *t = *state;
    struct ns_handle *nh;
    uint64_t ids[10];
    size_t got = 0;
    uint32_t wait_ms = 0;
    char reason[256];

    assert_int_equal(handles_get(&t->d.handles, "rng", &nh), 0);
    assert_int_equal(handles_try_next_n(nh, ids, 10, &got, &wait_ms), 0);
    assert_int_equal(got, 10);
    assert_true(ids[9] > ids[0]);
    assert_int_equal(handles_next_n(nh, ids, 10), 0);
    assert_int_equal(handles_ready(&t->d.handles, reason, sizeof(reason)), 1);
}

static void remove_store(const struct td_daemon *t)
{
    const char *suffix[] = {"", "-wal", "-shm", "-journal"};
    char path[4096];
    size_t i;

    for (i = 0; i < sizeof(suffix) / sizeof(suffix[0]); i++) {
        snprintf(path, sizeof(path), "%s/authority.db%s", t->dir, suffix[i]);
        unlink(path);
    }
}

static void test_handles__an_authority_removed_under_it_is_never_made_anew(void **state)
{
    struct td_daemon *t = *state;
    struct ns_handle *nh;
    idmint_authority *a = NULL;
    char path[4096];
    struct stat st;

    assert_int_equal(handles_get(&t->d.handles, "rng", &nh), 0);
    remove_store(t);
    assert_int_equal(handles_authority_open(&t->d.handles, &a), IDMINT_ESTORE);
    assert_null(a);
    assert_non_null(strstr(idmint_errmsg(), "removed or replaced while idmintd ran"));
    /* Nor does opening another namespace make one. */
    assert_int_not_equal(handles_get(&t->d.handles, "snow", &nh), 0);
    snprintf(path, sizeof(path), "%s/authority.db", t->dir);
    assert_int_equal(stat(path, &st), -1);
}

static void test_handles__at_start_a_missing_authority_is_created_once(void **state)
{
    struct td_daemon *t = *state;
    int created = -1;

    /* The fixture made the store: found, not created. */
    assert_int_equal(handles_authority_start(&t->d.handles, &created), 0);
    assert_int_equal(created, 0);
    remove_store(t);
    /* Gone after it was seen: handles_authority_open refuses (above); at
     * start, before anything was seen, it is made. */
    atomic_store(&t->d.handles.store_seen, 0);
    assert_int_equal(handles_authority_start(&t->d.handles, &created), 0);
    assert_int_equal(created, 1);
    assert_int_equal(atomic_load(&t->d.handles.store_seen), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_handles__a_namespace_is_opened_once_and_found_after,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_handles__threads_asking_at_once_share_one_handle,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_handles__the_eager_list_takes_spaces_tabs_and_commas,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_handles__the_eager_list_stops_at_the_first_failure,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_handles__a_lease_forced_away_is_replaced_under_minting_threads, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_handles__a_disabled_namespace_turns_unready_within_its_margin, setup, teardown),
        cmocka_unit_test_setup_teardown(test_handles__a_range_handle_is_ready_while_it_holds_values,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_handles__an_authority_removed_under_it_is_never_made_anew, setup, teardown),
        cmocka_unit_test_setup_teardown(test_handles__at_start_a_missing_authority_is_created_once,
                                        setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
