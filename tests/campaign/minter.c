/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The fault campaign's library minter: several threads share one handle and
 * mint with idmint_next and small idmint_next_n batches, printing every ID,
 * so the campaign exercises the thread-safe path the CLI (one thread, large
 * batches) does not. With --fork-every it also forks children that try the
 * parent's handle, which must refuse them (IDMINT_EFORKED).
 * Exit: 0 done, 1 an explicit error (named on stderr), 2 bad usage,
 * 3 a forked child minted from its parent's handle.
 */
#include "idmint.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 16
#define BATCH_MAX   64
/* Below PIPE_BUF, so one write() of whole lines is never interleaved. */
#define OUT_BYTES   4000

struct minter {
    idmint *m;
    uint64_t per_thread;
    unsigned fork_every;
    int failed; /* first failure's code; guarded by mu */
    pthread_mutex_t mu;
};

static int write_all(const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = write(STDOUT_FILENO, buf, len);

        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

static void note_failure(struct minter *mt, int rc)
{
    pthread_mutex_lock(&mt->mu);
    if (mt->failed == 0) {
        mt->failed = rc;
        fprintf(stderr, "minter: %s: %s\n", idmint_strerror(rc), idmint_errmsg());
    }
    pthread_mutex_unlock(&mt->mu);
}

/* A child must never mint from the parent's lease: any ID it gets is a bug. */
static int fork_probe(idmint *m)
{
    pid_t pid = fork();
    int status = 0, i;

    if (pid < 0)
        return 0;
    if (pid == 0) {
        uint64_t id;
        int rc = idmint_next(m, &id);

        if (rc == 0) {
            printf("%" PRIu64 "\n", id);
            fflush(stdout);
            _exit(3);
        }
        _exit(rc == IDMINT_EFORKED ? 0 : 4);
    }
    /* Bounded: a child stuck on a lock some other thread held at fork() is a hang. */
    for (i = 0; i < 500; i++) {
        struct timespec ten_ms = {0, 10000000};
        pid_t r = waitpid(pid, &status, WNOHANG);

        if (r == pid)
            break;
        if (r < 0 && errno != EINTR)
            return 0;
        nanosleep(&ten_ms, NULL);
    }
    if (i == 500) {
        kill(pid, SIGKILL);
        (void)waitpid(pid, &status, 0);
        fprintf(stderr, "minter: a forked child hung on its parent's handle\n");
        return 3;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 3) {
        fprintf(stderr, "minter: a forked child minted from its parent's handle\n");
        return 3;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 4) {
        fprintf(stderr, "minter: a forked child got an error other than EFORKED\n");
        return 3;
    }
    return 0;
}

static void *mint_thread(void *arg)
{
    struct minter *mt = arg;
    char out[OUT_BYTES + 32];
    size_t used = 0;
    uint64_t done = 0, calls = 0, ids[BATCH_MAX];
    unsigned seed = (unsigned)(uintptr_t)&used ^ (unsigned)getpid();

    while (done < mt->per_thread) {
        size_t n = (size_t)(rand_r(&seed) % BATCH_MAX) + 1, i;
        int rc;

        if (n > mt->per_thread - done)
            n = (size_t)(mt->per_thread - done);
        rc = n == 1 ? idmint_next(mt->m, ids) : idmint_next_n(mt->m, ids, n);
        if (rc != 0) {
            note_failure(mt, rc);
            break;
        }
        for (i = 0; i < n; i++) {
            used += (size_t)snprintf(out + used, sizeof(out) - used, "%" PRIu64 "\n", ids[i]);
            if (used >= OUT_BYTES) {
                if (write_all(out, used) != 0)
                    return NULL;
                used = 0;
            }
        }
        done += n;
        if (mt->fork_every > 0 && ++calls % mt->fork_every == 0) {
            int frc = fork_probe(mt->m);

            if (frc != 0) {
                pthread_mutex_lock(&mt->mu);
                mt->failed = 3;
                pthread_mutex_unlock(&mt->mu);
                break;
            }
        }
    }
    if (used > 0)
        (void)write_all(out, used);
    return NULL;
}

static int usage(void)
{
    fputs("usage: minter AUTHORITY NS COUNT [--threads N] [--lease S] [--fork-every N]\n", stderr);
    return 2;
}

int main(int argc, char **argv)
{
    struct minter mt;
    pthread_t th[MAX_THREADS];
    idmint_options opts;
    unsigned threads = 4, t;
    unsigned long long count;
    int i, rc;

    if (argc < 4)
        return usage();
    count = strtoull(argv[3], NULL, 10);
    memset(&mt, 0, sizeof(mt));
    idmint_options_init(&opts);
    for (i = 4; i + 1 < argc; i += 2) {
        unsigned long v = strtoul(argv[i + 1], NULL, 10);

        if (strcmp(argv[i], "--threads") == 0 && v >= 1 && v <= MAX_THREADS)
            threads = (unsigned)v;
        else if (strcmp(argv[i], "--lease") == 0 && v >= 1 && v <= 86400) {
            opts.lease_ms = (uint32_t)(v * 1000u);
            opts.renew_ms = opts.lease_ms / 10u;
        } else if (strcmp(argv[i], "--fork-every") == 0)
            mt.fork_every = (unsigned)v;
        else
            return usage();
    }
    if (i != argc || count == 0)
        return usage();
    rc = idmint_open(&mt.m, argv[1], argv[2], &opts);
    if (rc != 0) {
        fprintf(stderr, "minter: %s: %s\n", idmint_strerror(rc), idmint_errmsg());
        return 1;
    }
    pthread_mutex_init(&mt.mu, NULL);
    mt.per_thread = (count + threads - 1) / threads;
    for (t = 0; t < threads; t++)
        if (pthread_create(&th[t], NULL, mint_thread, &mt) != 0)
            break;
    while (t-- > 0)
        pthread_join(th[t], NULL);
    idmint_close(mt.m);
    pthread_mutex_destroy(&mt.mu);
    if (mt.failed == 3)
        return 3;
    return mt.failed != 0 ? 1 : 0;
}
