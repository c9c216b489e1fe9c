/* SPDX-License-Identifier: Apache-2.0 */
/*
 * idmintd: the HTTP daemon (docs/http-api.md). Reads flags,
 * environment and config file, binds, starts the event-loop threads, opens
 * the eager namespaces, then waits for signals on the main thread: SIGHUP
 * reopens the log and reloads the TLS certificate and key, SIGTERM/SIGINT
 * drain and release every lease. Exit
 * status: 0 clean stop, 1 a runtime failure, 2 bad usage or configuration.
 */
#include "config.h"
#include "clocks.h"
#include "daemon.h"
#include "routes_ids.h"
#include "metrics.h"
#include "errors_http.h"
#include "throughput.h"
#include "http_tls.h"
#include "routes_defer.h"
#include "store_pool.h"
#include "log.h"
#include "route_table.h"
#include "sampler.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define DRAIN_MS        5000u
#define TICK_MS         1000
#define BACKSTEP_MIN_NS 10000000 /* a wall-clock step back smaller than this is noise */
#define TOKEN_MAX_BYTES 4096
#define PORT_FILE_MODE  0640 /* like the log: the daemon's group may read it */

static const char usage_text[] =
    "usage: idmintd [--config FILE] [--listen ADDR:PORT] [--authority URL] [--region N]\n"
    "               [--port-file PATH] [--log-level LEVEL] [--max-connections-per-client N]\n"
    "               [--max-connections-per-prefix N]\n"
    "               [--tls-cert FILE --tls-key FILE]\n"
    "               [--store-threads N] [--store-lease-threads N] [--store-queue N]\n"
    "               [--store-deadline-ms MS]\n"
    "       idmintd --hash-token < token      print the sha256: hash of a token\n"
    "       idmintd --self-check              check the error and route tables, exit 0 or 1\n"
    "       idmintd --list-routes             print the route table as JSON lines, exit 0\n"
    "       idmintd --version | --help\n"
    "\n"
    "Serves the idmint HTTP API (docs/http-api.md). Flags override IDMINT_LISTEN,\n"
    "IDMINT_AUTHORITY, IDMINT_REGION, IDMINT_LOG_LEVEL, IDMINT_MAX_COUNT and\n"
    "IDMINT_MAX_CONNECTIONS_PER_CLIENT, IDMINT_MAX_CONNECTIONS_PER_PREFIX,\n"
    "IDMINT_TLS_CERT, IDMINT_TLS_KEY and\n"
    "IDMINT_STORE_THREADS, IDMINT_STORE_LEASE_THREADS, IDMINT_STORE_QUEUE,\n"
    "IDMINT_STORE_DEADLINE_MS, which\n"
    "override the config file (--config or\n"
    "IDMINT_CONFIG; with [tokens] it must be chmod 600 or 640). Defaults:\n"
    "127.0.0.1:8080, the default authority (sqlite:/var/lib/idmint/idmint.db, one file\n"
    "for every user of the machine), region 0, 64 connections per client address\n"
    "and 256 per address prefix (IPv4 /24, IPv6 /48), no request rate limits\n"
    "(IDMINT_LIMITS_<CLASS>_RATE and _BURST set them), 10 new Idempotency-Keys a\n"
    "second (100 at once) and 1 collision report a second (60 at once) per caller,\n"
    "4 store threads and 1 more for the lease routes, each kind with a queue of 256,\n"
    "and a 2000 ms deadline for store-bound calls.\n"
    "Without [tokens] only loopback addresses are served. With --tls-cert and --tls-key\n"
    "(PEM files) it serves HTTPS only, TLS 1.2 and 1.3; SIGHUP reloads both files.\n"
    "Exit status: 0 stopped cleanly, 1 a runtime failure, 2 bad usage or configuration.\n";

struct flags {
    const char *config, *listen, *authority, *region, *port_file, *log_level;
    const char *max_connections_per_client, *max_connections_per_prefix, *tls_cert, *tls_key;
    const char *store_threads, *store_lease_threads, *store_queue, *store_deadline_ms;
    int is_help, is_version, is_hash_token, is_self_check, is_list_routes;
};

static int usage_error(const char *what, const char *arg)
{
    fprintf(stderr, "idmintd: %s '%s'\n%s", what, arg, usage_text);
    return 2;
}

static int parse_flags(int argc, char **argv, struct flags *f)
{
    static const struct {
        const char *name;
        size_t offset;
    } valued[] = {
        {"--config", offsetof(struct flags, config)},
        {"--listen", offsetof(struct flags, listen)},
        {"--authority", offsetof(struct flags, authority)},
        {"--region", offsetof(struct flags, region)},
        {"--port-file", offsetof(struct flags, port_file)},
        {"--log-level", offsetof(struct flags, log_level)},
        {"--max-connections-per-client", offsetof(struct flags, max_connections_per_client)},
        {"--max-connections-per-prefix", offsetof(struct flags, max_connections_per_prefix)},
        {"--tls-cert", offsetof(struct flags, tls_cert)},
        {"--tls-key", offsetof(struct flags, tls_key)},
        {"--store-threads", offsetof(struct flags, store_threads)},
        {"--store-lease-threads", offsetof(struct flags, store_lease_threads)},
        {"--store-queue", offsetof(struct flags, store_queue)},
        {"--store-deadline-ms", offsetof(struct flags, store_deadline_ms)},
    };
    int i;

    memset(f, 0, sizeof(*f));
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        size_t k, len;

        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            f->is_help = 1;
            continue;
        }
        if (strcmp(a, "--version") == 0) {
            f->is_version = 1;
            continue;
        }
        if (strcmp(a, "--hash-token") == 0) {
            f->is_hash_token = 1;
            continue;
        }
        if (strcmp(a, "--self-check") == 0) {
            f->is_self_check = 1;
            continue;
        }
        if (strcmp(a, "--list-routes") == 0) {
            f->is_list_routes = 1;
            continue;
        }
        for (k = 0; k < sizeof(valued) / sizeof(valued[0]); k++) {
            const char **slot = (const char **)(void *)((char *)f + valued[k].offset);

            len = strlen(valued[k].name);
            if (strncmp(a, valued[k].name, len) != 0)
                continue;
            if (a[len] == '=') {
                *slot = a + len + 1;
                break;
            }
            if (a[len] == '\0') {
                if (i + 1 >= argc)
                    return usage_error("option needs a value:", a);
                *slot = argv[++i];
                break;
            }
        }
        if (k == sizeof(valued) / sizeof(valued[0]))
            return usage_error("unknown argument", a);
    }
    return 0;
}

static int hash_token(void)
{
    char token[TOKEN_MAX_BYTES + 2], hex[65];
    size_t len = fread(token, 1, sizeof(token), stdin);

    if (len > TOKEN_MAX_BYTES) {
        fprintf(stderr, "idmintd: the token on stdin is longer than %d bytes\n", TOKEN_MAX_BYTES);
        return 2;
    }
    while (len > 0 && (token[len - 1] == '\n' || token[len - 1] == '\r'))
        len--;
    if (len == 0) {
        fprintf(stderr,
                "idmintd: no token on stdin (e.g. echo \"$TOKEN\" | idmintd --hash-token)\n");
        return 2;
    }
    {
        size_t i;

        /* Whitespace around a header value is dropped and inside a token
         * refused (auth_check); a control character cannot be sent at all.
         * Such a token would hash fine and then never match. */
        for (i = 0; i < len; i++) {
            unsigned char ch = (unsigned char)token[i];

            if (ch <= ' ' || ch == 0x7f) {
                fprintf(stderr,
                        "idmintd: the token has a space, tab or control character at byte %zu; "
                        "such a token can never be presented in an Authorization header\n",
                        i + 1);
                return 2;
            }
        }
    }
    if (auth_sha256_hex(token, len, hex) != 0) {
        fprintf(stderr, "idmintd: SHA-256 is unavailable\n");
        return 1;
    }
    printf("sha256:%s\n", hex);
    return 0;
}

/* Apply the flags over file and environment. 0 or 2 (reported). */
static int apply_flags(struct config *cfg, const struct flags *f)
{
    static const struct {
        const char *flag, *section, *key;
        size_t offset;
    } map[] = {
        {"--listen", "server", "listen", offsetof(struct flags, listen)},
        {"--authority", "authority", "url", offsetof(struct flags, authority)},
        {"--region", "authority", "region", offsetof(struct flags, region)},
        {"--log-level", "log", "level", offsetof(struct flags, log_level)},
        {"--max-connections-per-client", "server", "max_connections_per_client",
         offsetof(struct flags, max_connections_per_client)},
        {"--max-connections-per-prefix", "server", "max_connections_per_prefix",
         offsetof(struct flags, max_connections_per_prefix)},
        {"--tls-cert", "server", "tls_cert", offsetof(struct flags, tls_cert)},
        {"--tls-key", "server", "tls_key", offsetof(struct flags, tls_key)},
        {"--store-threads", "store", "threads", offsetof(struct flags, store_threads)},
        {"--store-lease-threads", "store", "lease_threads",
         offsetof(struct flags, store_lease_threads)},
        {"--store-queue", "store", "queue", offsetof(struct flags, store_queue)},
        {"--store-deadline-ms", "store", "deadline_ms", offsetof(struct flags, store_deadline_ms)},
    };
    char err[512];
    size_t i;

    for (i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
        const char *value = *(const char *const *)(const void *)((const char *)f + map[i].offset);

        if (value == NULL)
            continue;
        if (config_set(cfg, map[i].section, map[i].key, value, err, sizeof(err)) != 0) {
            fprintf(stderr, "idmintd: %s: %s\n", map[i].flag, err);
            return 2;
        }
    }
    if (f->port_file != NULL)
        snprintf(cfg->port_file, sizeof(cfg->port_file), "%s", f->port_file);
    return 0;
}

/*
 * Write the port where tests and scripts look for it, whole or not at all,
 * with at most mode PORT_FILE_MODE whatever the umask (fopen would give
 * 0666 less the umask). A stale temporary file from a crash is replaced, not reused
 * with the mode it had.
 */
static int write_port_file(const char *path, uint16_t port)
{
    char tmp[1100];
    FILE *f;
    int fd;

    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    if (unlink(tmp) != 0 && errno != ENOENT)
        return -1;
    fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, PORT_FILE_MODE);
    if (fd < 0)
        return -1;
    if ((f = fdopen(fd, "w")) == NULL) {
        close(fd);
        unlink(tmp);
        return -1;
    }
    fprintf(f, "%u\n", (unsigned)port);
    if (fclose(f) != 0 || rename(tmp, path) != 0) {
        unlink(tmp);
        return -1;
    }
    return 0;
}

static int64_t wall_minus_mono_ns(void)
{
    return clocks_wall_ns() - (int64_t)clocks_mono_ns();
}

/*
 * SIGHUP: read the certificate and key again. A replacement that does not
 * load keeps the old pair in service, so a botched renewal never takes the
 * listener down; the log says which.
 */
static void reload_tls(struct http_tls *tls)
{
    char err[1200], desc[600];

    if (tls == NULL)
        return;
    if (http_tls_reload(tls, err, sizeof(err)) != 0) {
        http_tls_describe(tls, desc, sizeof(desc));
        log_write(LOG_ERROR, "TLS reload failed; still serving the previous certificate",
                  "error=\"%s\" %s", err, desc);
        return;
    }
    http_tls_describe(tls, desc, sizeof(desc));
    log_write(LOG_INFO, "TLS certificate reloaded", "%s", desc);
}

/* Wait for signals; every second observe handles, the clock, and retry eager opens. */
static void serve(struct daemon *d, struct http_tls *tls, const sigset_t *set)
{
    int64_t offset = wall_minus_mono_ns();
    unsigned retry_in = 0;
    struct timespec tick = {TICK_MS / 1000, 0};

    for (;;) {
        int sig = sigtimedwait(set, NULL, &tick);

        if (sig == SIGTERM || sig == SIGINT) {
            log_write(LOG_INFO, "stopping", "signal=%s draining_ms=%u",
                      sig == SIGTERM ? "TERM" : "INT", DRAIN_MS);
            return;
        }
        if (sig == SIGHUP) {
            if (log_reopen() != 0)
                log_write(LOG_ERROR, "cannot reopen the log file", "file=\"%s\" error=\"%s\"",
                          d->cfg.log_file, strerror(errno));
            else
                log_write(LOG_INFO, "log reopened", NULL);
            reload_tls(tls);
            continue;
        }
        if (!atomic_load(&d->is_ready)) {
            if (retry_in > 0) {
                retry_in--;
            } else if (handles_open_eager(&d->handles) == 0) {
                atomic_store(&d->is_ready, 1);
                log_write(LOG_INFO, "ready", NULL);
            } else {
                retry_in = 4;
            }
        }
        handles_observe(&d->handles);
        {
            int64_t now = wall_minus_mono_ns();

            /* The library never mints from the past; this only tells operators. */
            if (now < offset - BACKSTEP_MIN_NS) {
                atomic_fetch_add(&d->clock_backsteps, 1);
                log_write(LOG_WARN, "wall clock stepped back", "by_ms=%lld",
                          (long long)((offset - now) / 1000000));
            }
            offset = now;
        }
    }
}

/*
 * Open the authority before serving: one that can never work (a folder that
 * is not there, a file this user may not use, not an idmint store) is the
 * operator's to fix, so the daemon exits 2 saying why instead of answering
 * every mint with an error; one that may come back (a database still
 * starting) leaves the daemon up and /readyz red. A new authority is never
 * made without a line that names it.
 */
static int start_authority(struct daemon *d)
{
    int created = 0, rc = handles_authority_start(&d->handles, &created);

    if (rc == 0 && created)
        log_write(LOG_WARN, "created a new, empty authority",
                  "authority=\"%s\" share=\"every process that mints these namespaces must use "
                  "this same authority (--authority or IDMINT_AUTHORITY)\"",
                  d->handles.authority_text);
    if (rc == 0 || rc == IDMINT_EUNAVAILABLE || rc == IDMINT_ETIMEDOUT) {
        if (rc != 0)
            log_write(LOG_WARN, "the authority cannot be reached yet; not ready until it can",
                      "authority=\"%s\" detail=\"%s\"", d->handles.authority_text, idmint_errmsg());
        return 0;
    }
    fprintf(stderr, "idmintd: cannot use the authority %s: %s\n", d->handles.authority_text,
            idmint_errmsg());
    log_write(LOG_ERROR, "cannot use the authority", "authority=\"%s\" detail=\"%s\"",
              d->handles.authority_text, idmint_errmsg());
    return 2;
}

int main(int argc, char **argv)
{
    static struct daemon d; /* large (per-thread counters); lives for the whole run */
    struct http_server_config hc;
    struct http_server *srv = NULL;
    struct http_tls *tls = NULL;
    struct flags f;
    sigset_t set;
    char err[1200], addr[300];
    const char *config_path;
    int rc, is_in_use = 0;

    signal(SIGPIPE, SIG_IGN);
    if ((rc = parse_flags(argc, argv, &f)) != 0)
        return rc;
    if (f.is_help) {
        fputs(usage_text, stdout);
        return 0;
    }
    if (f.is_version) {
        unsigned v = idmint_version();

        printf("idmintd %s (libidmint %u.%u.%u)\n", DAEMON_VERSION, v >> 16, (v >> 8) & 0xffu,
               v & 0xffu);
        return 0;
    }
    if (f.is_hash_token)
        return hash_token();
    if (f.is_self_check) {
        int problems = errors_http_check_all(); /* both run: each names its own problems */

        problems += route_table_check();
        return problems == 0 ? 0 : 1;
    }
    if (f.is_list_routes) {
        /* Before any configuration is read: this opens no file and no store. */
        if (route_table_list(stdout) != 0) {
            fprintf(stderr, "idmintd: cannot print the route table: %s\n", strerror(errno));
            return 1;
        }
        return 0;
    }
#ifndef NDEBUG
    /* A debug build refuses to run with a library code the HTTP table lacks,
     * or with a route table that does not check out. */
    if (errors_http_check_all() != 0 || route_table_check() != 0)
        return 1;
#endif

    config_defaults(&d.cfg);
    config_path = f.config != NULL ? f.config : getenv("IDMINT_CONFIG");
    if (config_path != NULL && config_path[0] != '\0' &&
        config_load_file(&d.cfg, config_path, err, sizeof(err)) != 0) {
        fprintf(stderr, "idmintd: %s\n", err);
        return 2;
    }
    if (config_apply_env(&d.cfg, err, sizeof(err)) != 0) {
        fprintf(stderr, "idmintd: %s\n", err);
        return 2;
    }
    if ((rc = apply_flags(&d.cfg, &f)) != 0)
        return rc;
    if (config_finish(&d.cfg, err, sizeof(err)) != 0) {
        fprintf(stderr, "idmintd: %s\n", err);
        return 2;
    }
    if (handles_init(&d.handles, &d.cfg) != 0) {
        fprintf(stderr, "idmintd: authority: %s\n", idmint_errmsg());
        return 2;
    }
    memset(&hc, 0, sizeof(hc));
    if (http_parse_listen(d.cfg.listen, &hc.addr, &hc.addr_len, err, sizeof(err)) != 0) {
        fprintf(stderr, "idmintd: listen: %s\n", err);
        return 2;
    }
    if (d.cfg.n_tokens == 0 && !http_is_loopback(&hc.addr)) {
        fprintf(stderr,
                "idmintd: refusing to listen on %s: no [tokens] are configured, so every "
                "caller would be admin; listen on 127.0.0.1 or ::1, or add tokens "
                "(idmintd --hash-token)\n",
                d.cfg.listen);
        return 2;
    }
    if (d.cfg.tls_cert[0] != '\0' &&
        http_tls_open(&tls, d.cfg.tls_cert, d.cfg.tls_key, err, sizeof(err)) != 0) {
        fprintf(stderr, "idmintd: %s\n", err);
        return 2;
    }
    if (log_open(d.cfg.log_file, d.cfg.log_level) != 0) {
        fprintf(stderr, "idmintd: cannot open log file '%s': %s\n", d.cfg.log_file,
                strerror(errno));
        http_tls_close(tls);
        return 2;
    }
    if (d.cfg.n_tokens > 0 && tls == NULL && !http_is_loopback(&hc.addr))
        log_write(LOG_WARN,
                  "TOKENS TRAVEL IN CLEAR TEXT: bearer tokens are configured on a non-loopback "
                  "listener without TLS; anyone on the path can read and replay them. Set "
                  "tls_cert and tls_key (--tls-cert, --tls-key) or put a TLS proxy in front",
                  "listen=%s tokens=%zu", d.cfg.listen, d.cfg.n_tokens);
    if ((rc = start_authority(&d)) != 0) {
        http_tls_close(tls);
        return rc;
    }
    d.n_threads = d.cfg.threads + d.cfg.store_threads + d.cfg.store_lease_threads;
    d.threads = calloc(d.n_threads, sizeof(*d.threads));
    if (d.threads == NULL) {
        fprintf(stderr, "idmintd: out of memory\n");
        return 1;
    }
    ratelimit_init(&d.limits);
    routes_batch_init();

    /* Every thread started from here on inherits the mask: signals reach
     * only the sigtimedwait below. */
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &set, NULL);

    /* Before the loops: the first request may need a store thread. */
    if (store_pool_open(&d.pool, d.cfg.store_threads, d.cfg.store_lease_threads, d.cfg.store_queue,
                        routes_store_thread_init, routes_store_thread_fini, &d) != 0) {
        fprintf(stderr, "idmintd: cannot start %u store threads\n",
                d.cfg.store_threads + d.cfg.store_lease_threads);
        http_tls_close(tls);
        free(d.threads);
        return 1;
    }

    hc.threads = d.cfg.threads;
    hc.max_connections = d.cfg.max_connections;
    hc.max_connections_per_client = d.cfg.max_connections_per_client;
    hc.max_connections_per_prefix = d.cfg.max_connections_per_prefix;
    hc.client_prefix_v4 = d.cfg.client_prefix_v4;
    hc.client_prefix_v6 = d.cfg.client_prefix_v6;
    hc.max_body_bytes = d.cfg.max_body_bytes;
    hc.max_header_bytes = d.cfg.max_header_bytes;
    hc.request_timeout_ms = d.cfg.request_timeout_ms;
    hc.later_timeout_ms = d.cfg.store_deadline_ms;
    hc.tls = tls;
    hc.on_request = routes_handle;
    hc.thread_init = routes_thread_init;
    hc.thread_fini = routes_thread_fini;
    hc.arg = &d;
    if (http_server_open(&srv, &hc, &is_in_use, err, sizeof(err)) != 0) {
        fprintf(stderr, "idmintd: cannot listen on %s: %s%s\n", d.cfg.listen, err,
                is_in_use ? " (another process has this port; choose another with --listen)" : "");
        log_write(LOG_ERROR, "cannot listen", "listen=%s error=\"%s\"", d.cfg.listen, err);
        store_pool_close(d.pool);
        http_tls_close(tls);
        free(d.threads);
        return 1;
    }
    http_format_addr(&hc.addr, http_server_port(srv), addr, sizeof(addr));
    if (http_server_start(srv, err, sizeof(err)) != 0) {
        fprintf(stderr, "idmintd: %s\n", err);
        http_server_stop(srv, 0);
        store_pool_close(d.pool);
        http_tls_close(tls);
        free(d.threads);
        return 1;
    }
    {
        char msg[340];

        snprintf(msg, sizeof(msg), "listening on %s", addr);
        log_write(LOG_INFO, msg,
                  "authority=\"%s\" region=%u threads=%u store_threads=%u store_lease_threads=%u "
                  "store_queue=%u "
                  "store_deadline_ms=%u tokens=%zu tls=%s version=%s",
                  d.handles.authority_text, d.cfg.region, d.cfg.threads, d.cfg.store_threads,
                  d.cfg.store_lease_threads, d.cfg.store_queue, d.cfg.store_deadline_ms,
                  d.cfg.n_tokens, tls != NULL ? "on" : "off", DAEMON_VERSION);
        if (tls != NULL) {
            char desc[600];

            http_tls_describe(tls, desc, sizeof(desc));
            log_write(LOG_INFO, "TLS certificate loaded", "%s", desc);
        }
    }
    if (d.cfg.port_file[0] != '\0' && write_port_file(d.cfg.port_file, http_server_port(srv)) != 0)
        log_write(LOG_ERROR, "cannot write the port file", "file=\"%s\" error=\"%s\"",
                  d.cfg.port_file, strerror(errno));
    if (handles_open_eager(&d.handles) == 0) {
        atomic_store(&d.is_ready, 1);
        log_write(LOG_INFO, "ready", "namespaces=\"%s\"", d.cfg.namespaces);
    } else {
        log_write(LOG_WARN, "not ready; retrying the namespaces every 5 s", NULL);
    }

    if (sampler_start(&d) != 0)
        log_write(LOG_ERROR,
                  "cannot start the store sampler; idmint_workers_free and the store's "
                  "figures of /status are left out",
                  NULL);
    if (throughput_start(&d) != 0)
        log_write(LOG_ERROR, "cannot start the per-second history; the /status chart stays empty",
                  NULL);

    serve(&d, tls, &set);

    http_server_stop(srv, DRAIN_MS);
    /* After the loops: what they still waited for was answered or dropped. */
    store_pool_close(d.pool);
    http_tls_close(tls); /* after the last connection let go of its context */
    throughput_stop();   /* both read the handles */
    sampler_stop();
    handles_close_all(&d.handles);
    if (d.cfg.port_file[0] != '\0')
        unlink(d.cfg.port_file);
    log_write(LOG_INFO, "stopped", NULL);
    log_close();
    free(d.threads);
    return 0;
}
