/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests for src/csprng.c, the per-thread stream behind UUIDv7's random bits. */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "idmint.h"
#include "internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define DRAW 64u

/* How many bytes two equal-length buffers share at the same offset. */
static size_t same_bytes(const unsigned char *a, const unsigned char *b, size_t len)
{
    size_t same = 0;

    for (size_t i = 0; i < len; i++)
        same += a[i] == b[i];
    return same;
}

static void test_csprng__consecutive_draws_differ(void **state)
{
    unsigned char a[DRAW], b[DRAW];

    (void)state;
    assert_int_equal(idmint__random_fill(a, sizeof(a)), 0);
    assert_int_equal(idmint__random_fill(b, sizeof(b)), 0);
    /* 64 random bytes share about one byte by chance; 16 would be a repeat. */
    assert_true(same_bytes(a, b, DRAW) < 16);
}

static void test_csprng__zero_length_draw_writes_nothing(void **state)
{
    unsigned char byte = 0xA5;

    (void)state;
    assert_int_equal(idmint__random_fill(&byte, 0), 0);
    assert_int_equal(byte, 0xA5);
}

/* Past the pool (4 KiB) and past a reseed (1 MiB): every 4 KiB block its own. */
static void test_csprng__long_draw_never_repeats_a_block(void **state)
{
    const size_t block = 4096, blocks = 600; /* 2.4 MiB: two kernel keys and more */
    unsigned char *buf = malloc(block * blocks);

    (void)state;
    assert_non_null(buf);
    assert_int_equal(idmint__random_fill(buf, block * blocks), 0);
    for (size_t i = 1; i < blocks; i++)
        assert_true(same_bytes(buf, buf + i * block, block) < block / 8);
    free(buf);
}

static void *draw_in_thread(void *out)
{
    return (void *)(intptr_t)idmint__random_fill(out, DRAW);
}

static void test_csprng__each_thread_draws_its_own_stream(void **state)
{
    unsigned char a[DRAW], b[DRAW];
    pthread_t t1, t2;
    void *r1, *r2;

    (void)state;
    assert_int_equal(pthread_create(&t1, NULL, draw_in_thread, a), 0);
    assert_int_equal(pthread_create(&t2, NULL, draw_in_thread, b), 0);
    assert_int_equal(pthread_join(t1, &r1), 0);
    assert_int_equal(pthread_join(t2, &r2), 0);
    assert_int_equal((intptr_t)r1, 0);
    assert_int_equal((intptr_t)r2, 0);
    assert_true(same_bytes(a, b, DRAW) < 16);
}

/* A forked child holds its parent's key and unused pool: it must not give
 * out the bytes the parent gives out next. */
static void test_csprng__fork_child_does_not_repeat_its_parent(void **state)
{
    unsigned char warm[16], parent[DRAW], child[DRAW];
    int fd[2], status;
    pid_t pid;

    (void)state;
    assert_int_equal(idmint__random_fill(warm, sizeof(warm)), 0); /* keyed, pool half used */
    assert_int_equal(pipe(fd), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        unsigned char mine[DRAW];
        int ok = idmint__random_fill(mine, sizeof(mine)) == 0 &&
                 write(fd[1], mine, sizeof(mine)) == (ssize_t)sizeof(mine);

        _exit(ok ? 0 : 1);
    }
    close(fd[1]);
    assert_int_equal(idmint__random_fill(parent, sizeof(parent)), 0);
    assert_int_equal(read(fd[0], child, sizeof(child)), (ssize_t)sizeof(child));
    close(fd[0]);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_true(same_bytes(parent, child, DRAW) < 16);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_csprng__consecutive_draws_differ),
        cmocka_unit_test(test_csprng__zero_length_draw_writes_nothing),
        cmocka_unit_test(test_csprng__long_draw_never_repeats_a_block),
        cmocka_unit_test(test_csprng__each_thread_draws_its_own_stream),
        cmocka_unit_test(test_csprng__fork_child_does_not_repeat_its_parent),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
