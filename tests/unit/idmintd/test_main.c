/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for cmd/idmintd/main.c, the program, run as a user would run
 * it: --version, --help and --list-routes answer without a store or a
 * port; --hash-token hashes stdin and refuses a token that could never be
 * sent; an unknown flag, a flag without its value, a bad setting and a
 * public address without tokens are refused with exit status 2 and a
 * message that names them, before anything is created; a served daemon
 * writes its port file, answers, and stops cleanly on SIGTERM (status 0).
 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "auth.h"
#include "daemon_fixture.h"
#include "route_table.h"
#include "testsupport.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

struct run {
    char *dir;                   /* the test's folder */
    char out[65536], err[65536]; /* what the program printed */
};

static int setup(void **state)
{
    struct run *r = calloc(1, sizeof(*r));

    if (r == NULL || (r->dir = ts_tempdir()) == NULL) {
        free(r);
        return -1;
    }
    *state = r;
    return 0;
}

static int teardown(void **state)
{
    struct run *r = *state;

    ts_rmtree(r->dir);
    free(r);
    return 0;
}

static void slurp(const char *path, char *buf, size_t size)
{
    FILE *f = fopen(path, "r");
    size_t n = 0;

    if (f != NULL) {
        n = fread(buf, 1, size - 1, f);
        fclose(f);
    }
    buf[n] = '\0';
}

/* Start idmintd with @p argv (NULL-terminated, without the program), stdin from @p input. */
static pid_t start(struct run *r, const char *const *args, const char *input)
{
    char in[4200], out[4200], err[4200];
    char *argv[32];
    posix_spawn_file_actions_t fa;
    pid_t pid;
    size_t i;
    FILE *f;

    snprintf(in, sizeof(in), "%s/stdin", r->dir);
    snprintf(out, sizeof(out), "%s/stdout", r->dir);
    snprintf(err, sizeof(err), "%s/stderr", r->dir);
    assert_non_null(f = fopen(in, "w"));
    fputs(input != NULL ? input : "", f);
    fclose(f);
    argv[0] = (char *)(uintptr_t)IDMINTD_PATH;
    for (i = 0; args[i] != NULL && i < 30; i++)
        argv[i + 1] = (char *)(uintptr_t)args[i]; /* posix_spawn does not write them */
    argv[i + 1] = NULL;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, in, O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_addopen(&fa, 2, err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_int_equal(posix_spawn(&pid, IDMINTD_PATH, &fa, NULL, argv, environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    return pid;
}

/* Wait for @p pid; its exit status, what it printed in r->out and r->err. */
static int finish(struct run *r, pid_t pid)
{
    char path[4200];
    int st = 0;

    assert_int_equal(waitpid(pid, &st, 0), pid);
    snprintf(path, sizeof(path), "%s/stdout", r->dir);
    slurp(path, r->out, sizeof(r->out));
    snprintf(path, sizeof(path), "%s/stderr", r->dir);
    slurp(path, r->err, sizeof(r->err));
    assert_true(WIFEXITED(st));
    return WEXITSTATUS(st);
}

static int run(struct run *r, const char *const *args, const char *input)
{
    return finish(r, start(r, args, input));
}

static void test_main__information_flags_need_no_store(void **state)
{
    struct run *r = *state;
    size_t lines = 0;
    const char *p;

    assert_int_equal(run(r, (const char *[]){"--version", NULL}, NULL), 0);
    assert_non_null(strstr(r->out, "idmintd " DAEMON_VERSION " (libidmint "));
    assert_int_equal(run(r, (const char *[]){"--help", NULL}, NULL), 0);
    assert_non_null(strstr(r->out, "Exit status: 0 stopped cleanly"));
    assert_int_equal(run(r, (const char *[]){"--list-routes", NULL}, NULL), 0);
    for (p = r->out; (p = strchr(p, '\n')) != NULL; p++)
        lines++;
    assert_int_equal(lines, route_table_len);
    assert_int_equal(run(r, (const char *[]){"--self-check", NULL}, NULL), 0);
}

static void test_main__hash_token_hashes_stdin_or_refuses(void **state)
{
    struct run *r = *state;
    char hex[65], want[80];

    assert_int_equal(auth_sha256_hex("s3cret-token", 12, hex), 0);
    snprintf(want, sizeof(want), "sha256:%s\n", hex);
    assert_int_equal(run(r, (const char *[]){"--hash-token", NULL}, "s3cret-token\n"), 0);
    assert_string_equal(r->out, want);
    assert_int_equal(run(r, (const char *[]){"--hash-token", NULL}, "two words\n"), 2);
    assert_non_null(strstr(r->err, "space, tab or control character at byte 4"));
    assert_int_equal(run(r, (const char *[]){"--hash-token", NULL}, ""), 2);
    assert_non_null(strstr(r->err, "no token on stdin"));
}

static void test_main__bad_usage_is_status_2_and_creates_nothing(void **state)
{
    struct run *r = *state;
    char url[4300], conf[4200], db[4200];
    struct stat st;
    FILE *f;

    snprintf(db, sizeof(db), "%s/made.db", r->dir);
    snprintf(url, sizeof(url), "sqlite:%s", db);
    assert_int_equal(run(r, (const char *[]){"--colour", NULL}, NULL), 2);
    assert_non_null(strstr(r->err, "unknown argument '--colour'"));
    assert_int_equal(run(r, (const char *[]){"--listen", NULL}, NULL), 2);
    assert_non_null(strstr(r->err, "option needs a value: '--listen'"));
    assert_int_equal(
        run(r, (const char *[]){"--authority", url, "--store-threads", "0", NULL}, NULL), 2);
    assert_non_null(strstr(r->err, "threads"));
    assert_int_equal(
        run(r, (const char *[]){"--authority", url, "--listen", "0.0.0.0:0", NULL}, NULL), 2);
    assert_non_null(strstr(r->err, "no [tokens] are configured"));
    snprintf(conf, sizeof(conf), "%s/idmintd.ini", r->dir);
    assert_non_null(f = fopen(conf, "w"));
    fputs("[server]\nthreads = 2\nmax_count = lots\n", f);
    fclose(f);
    assert_int_equal(run(r, (const char *[]){"--authority", url, "--config", conf, NULL}, NULL), 2);
    assert_non_null(strstr(r->err, "idmintd.ini:3:"));
    assert_int_equal(stat(db, &st), -1); /* refused before the store is touched */
}

static unsigned port_in(const char *path)
{
    char buf[32];

    slurp(path, buf, sizeof(buf));
    return (unsigned)strtoul(buf, NULL, 10);
}

static int healthz_ok(unsigned port)
{
    struct sockaddr_in sa;
    char buf[512];
    ssize_t n;
    int fd = socket(AF_INET, SOCK_STREAM, 0), ok;

    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        if (fd >= 0)
            close(fd);
        return 0;
    }
    (void)send(fd, "GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n", 61,
               MSG_NOSIGNAL);
    n = recv(fd, buf, sizeof(buf) - 1, MSG_WAITALL);
    close(fd);
    buf[n > 0 ? n : 0] = '\0';
    ok = strncmp(buf, "HTTP/1.1 200", 12) == 0;
    return ok;
}

static void test_main__a_served_daemon_stops_cleanly_on_sigterm(void **state)
{
    struct run *r = *state;
    char url[4300], port_file[4200];
    unsigned port = 0;
    pid_t pid;
    int i, was_ok, status;

    snprintf(url, sizeof(url), "sqlite:%s/served.db", r->dir);
    snprintf(port_file, sizeof(port_file), "%s/port", r->dir);
    pid = start(r,
                (const char *[]){"--authority", url, "--listen", "127.0.0.1:0", "--port-file",
                                 port_file, NULL},
                NULL);
    for (i = 0; i < 3000 * (int)ts_scale() && port == 0; i++) {
        struct timespec ts = {0, 10 * 1000 * 1000};

        nanosleep(&ts, NULL);
        port = port_in(port_file);
    }
    /* Judged after the daemon is gone: a failed assertion must not leave it running. */
    was_ok = port > 0 && healthz_ok(port);
    kill(pid, port > 0 ? SIGTERM : SIGKILL);
    status = finish(r, pid);
    assert_true(port > 0);
    assert_true(was_ok);
    assert_int_equal(status, 0);
    assert_non_null(strstr(r->err, "msg=\"stopped\""));
    assert_false(healthz_ok(port));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_main__information_flags_need_no_store, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_main__hash_token_hashes_stdin_or_refuses, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_main__bad_usage_is_status_2_and_creates_nothing, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_main__a_served_daemon_stops_cleanly_on_sigterm, setup,
                                        teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
