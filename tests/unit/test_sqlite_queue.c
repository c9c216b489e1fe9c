/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The SQLite writers' queue (src/store/sqlite_queue.c): one holder at a
 * time across processes, a wait that gives up at its deadline, and a holder
 * killed with -9 lets the next one in.
 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sqlite_queue.h"
#include "testsupport.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* A child that holds the queue of @p file until killed; returns its pid once it holds it. */
static pid_t holder_child(const char *file)
{
    int ready[2];
    pid_t pid;
    char c;

    assert_int_equal(pipe(ready), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct sq_queue q;

        close(ready[0]);
        sq_queue_open(&q, file);
        if (sq_queue_enter(&q, 1000) != 1)
            _exit(1);
        if (write(ready[1], "x", 1) != 1)
            _exit(2);
        for (;;)
            pause();
    }
    close(ready[1]);
    assert_int_equal(read(ready[0], &c, 1), 1);
    close(ready[0]);
    return pid;
}

static void
test_sqlite_queue__a_wait_gives_up_at_its_deadline_and_a_killed_holder_lets_go(void **state)
{
    char *dir = ts_tempdir(), file[512];
    struct sq_queue q;
    uint64_t t0;
    pid_t pid;
    int status;

    (void)state;
#ifdef __SANITIZE_THREAD__
    /* Under TSan a wait never blocks (sqlite_queue.c): nothing to time here. */
    ts_rmtree(dir);
    skip();
    return;
#endif
    assert_non_null(dir);
    snprintf(file, sizeof(file), "%s/db", dir);
    pid = holder_child(file);
    sq_queue_open(&q, file);
    assert_true(q.fd >= 0);
    t0 = now_ms();
    assert_int_equal(sq_queue_enter(&q, 300), -1);
    assert_true(now_ms() - t0 >= 290);
    assert_true(now_ms() - t0 < 3000);
    assert_int_equal(q.is_held, 0);

    /* Waiting when the holder dies: the kernel drops its lock, we get it. */
    if (fork() == 0) {
        nanosleep(&(struct timespec){0, 200 * 1000 * 1000}, NULL);
        kill(pid, SIGKILL);
        _exit(0);
    }
    t0 = now_ms();
    assert_int_equal(sq_queue_enter(&q, 10000), 1);
    assert_true(now_ms() - t0 < 5000);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status));
    while (wait(NULL) > 0)
        ;
    /* Held twice is held once; leaving lets a new holder in at once. */
    assert_int_equal(sq_queue_enter(&q, 10), 1);
    sq_queue_leave(&q);
    assert_int_equal(q.is_held, 0);
    pid = holder_child(file);
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    sq_queue_close(&q);
    ts_rmtree(dir); /* frees it too */
}

/* Many processes count in a file under the queue: no increment is lost. */
static void test_sqlite_queue__holders_never_overlap(void **state)
{
    enum { PROCS = 8, EACH = 200 };
    char *dir = ts_tempdir(), file[512], counter[512];
    pid_t pids[PROCS];
    FILE *fp;
    long total = -1;

    (void)state;
    assert_non_null(dir);
    snprintf(file, sizeof(file), "%s/db", dir);
    snprintf(counter, sizeof(counter), "%s/counter", dir);
    fp = fopen(counter, "w");
    assert_non_null(fp);
    fputs("0\n", fp);
    fclose(fp);
    for (int i = 0; i < PROCS; i++) {
        pids[i] = fork();
        assert_true(pids[i] >= 0);
        if (pids[i] == 0) {
            struct sq_queue q;

            sq_queue_open(&q, file);
            for (int k = 0; k < EACH; k++) {
                long v = 0;
                FILE *c;

                int rc;

                /* 0: no blocking wait (TSan builds): try again shortly. */
                while ((rc = sq_queue_enter(&q, 10000)) == 0)
                    nanosleep(&(struct timespec){0, 1000 * 1000}, NULL);
                if (rc != 1)
                    _exit(1);
                c = fopen(counter, "r+");
                if (c == NULL || fscanf(c, "%ld", &v) != 1)
                    _exit(2);
                rewind(c);
                fprintf(c, "%ld\n", v + 1);
                fclose(c);
                sq_queue_leave(&q);
            }
            sq_queue_close(&q);
            _exit(0);
        }
    }
    for (int i = 0; i < PROCS; i++) {
        int status;

        assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    fp = fopen(counter, "r");
    assert_non_null(fp);
    assert_int_equal(fscanf(fp, "%ld", &total), 1);
    fclose(fp);
    assert_int_equal(total, PROCS * EACH);
    ts_rmtree(dir); /* frees it too */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(
            test_sqlite_queue__a_wait_gives_up_at_its_deadline_and_a_killed_holder_lets_go),
        cmocka_unit_test(test_sqlite_queue__holders_never_overlap),
    };
    return cmocka_run_group_tests_name("sqlite_queue", tests, NULL, NULL);
}
