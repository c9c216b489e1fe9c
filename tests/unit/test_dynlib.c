/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests for src/store/dynlib.c: client libraries bound on first use. */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "dynlib.h"
#include "idmint.h"
#include "internal.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int loads;
static pid_t (*bound_getpid)(void);
static void *getpid_syms[1];
static const char *const getpid_names[] = {"getpid"};

static void getpid_on_load(void)
{
    loads++;
    memcpy(&bound_getpid, &getpid_syms[0], sizeof(bound_getpid));
}

static void on_load_never(void)
{
    fail_msg("on_load ran for a library that did not load");
}

static void test_dynlib__binds_every_function_once(void **state)
{
    static struct idmint__dynlib lib =
        IDMINT__DYNLIB("libc.so.6", "libc6", getpid_names, getpid_syms, getpid_on_load);

    (void)state;
    assert_int_equal(idmint__dynlib_load(&lib), 0);
    assert_int_equal(idmint__dynlib_load(&lib), 0);
    assert_int_equal(loads, 1);
    assert_non_null(bound_getpid);
    assert_int_equal(bound_getpid(), getpid());
}

static void test_dynlib__a_missing_library_names_itself_and_its_package(void **state)
{
    static void *syms[1];
    static struct idmint__dynlib lib = IDMINT__DYNLIB("libidmint-absent.so.9", "libidmint-absent9",
                                                      getpid_names, syms, on_load_never);

    (void)state;
    for (int i = 0; i < 2; i++) { /* the second call repeats the first outcome */
        assert_int_equal(idmint__dynlib_load(&lib), IDMINT_EUNAVAILABLE);
        assert_non_null(strstr(idmint_errmsg(), "cannot load libidmint-absent.so.9"));
        assert_non_null(strstr(idmint_errmsg(), "Debian package libidmint-absent9"));
    }
}

static void test_dynlib__a_missing_function_is_named(void **state)
{
    static const char *const names[] = {"getpid", "idmint_absent_function"};
    static void *syms[2];
    static struct idmint__dynlib lib =
        IDMINT__DYNLIB("libc.so.6", "libc6", names, syms, on_load_never);

    (void)state;
    assert_int_equal(idmint__dynlib_load(&lib), IDMINT_EUNAVAILABLE);
    assert_non_null(strstr(idmint_errmsg(), "libc.so.6 has no function idmint_absent_function"));
}

/*
 * Read by ThreadSanitizer builds only. The child of the fork test exits while
 * the parent's loader thread may not have been joined yet; TSan counts that
 * thread as the child's and reports it leaked. It is the parent's, joined
 * there.
 */
const char *__tsan_default_options(void);
/* Exported: the project builds with hidden visibility, and TSan looks it up. */
__attribute__((visibility("default"))) const char *__tsan_default_options(void)
{
    return "report_thread_leaks=0";
}

static void nap_ms(long ms)
{
    struct timespec ts = {ms / 1000, ms % 1000 * 1000000L};

    while (nanosleep(&ts, &ts) != 0)
        ;
}

static _Atomic int slow_is_loading;
static void *slow_syms[1];

static void slow_on_load(void)
{
    atomic_store(&slow_is_loading, 1);
    nap_ms(400); /* a load that takes a while, under the lock */
}

static struct idmint__dynlib slow_lib =
    IDMINT__DYNLIB("libc.so.6", "libc6", getpid_names, slow_syms, slow_on_load);

static void *load_slow(void *arg)
{
    (void)arg;
    return (void *)(intptr_t)idmint__dynlib_load(&slow_lib);
}

/*
 * fork() while another thread is inside a first load: the child must be
 * able to load too. Had it inherited the loader's lock held by a thread it
 * does not have, its load would never return.
 */
static void test_dynlib__a_child_forked_during_a_load_can_load(void **state)
{
    pthread_t th;
    void *thread_rc;
    pid_t pid;
    int status = 0, waited_ms = 0;

    (void)state;
    assert_int_equal(pthread_create(&th, NULL, load_slow, NULL), 0);
    while (!atomic_load(&slow_is_loading) && waited_ms < 5000) {
        nap_ms(1);
        waited_ms++;
    }
    assert_true(atomic_load(&slow_is_loading));
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(idmint__dynlib_load(&slow_lib) == 0 ? 0 : 3);
    for (waited_ms = 0; waited_ms < 10000; waited_ms += 10) {
        if (waitpid(pid, &status, WNOHANG) == pid)
            break;
        nap_ms(10);
    }
    if (waited_ms >= 10000) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        fail_msg("the forked child's load hung for 10 s");
    }
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_int_equal(pthread_join(th, &thread_rc), 0);
    assert_int_equal((intptr_t)thread_rc, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dynlib__binds_every_function_once),
        cmocka_unit_test(test_dynlib__a_missing_library_names_itself_and_its_package),
        cmocka_unit_test(test_dynlib__a_missing_function_is_named),
        cmocka_unit_test(test_dynlib__a_child_forked_during_a_load_can_load),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
