/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The configuration file (INI, through inih: the only file that calls it),
 * environment overrides and value checks. Every setting is checked where it
 * is read, so a bad value is reported with the file and line it came from.
 */
#include "config.h"

#include "log.h"
#include "secret_file.h"

#include <ini.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_THREADS    64u
#define MAX_COUNT_MAX  1000000u
#define MAX_BODY_MAX   (64u << 20)
#define MAX_HEADER_MAX (1u << 20)

void config_defaults(struct config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    snprintf(cfg->listen, sizeof(cfg->listen), "127.0.0.1:8080");
    cfg->threads = 1;
    cfg->max_connections = 1024;
    cfg->max_connections_per_client = 64;
    cfg->max_connections_per_prefix = 256;
    cfg->client_prefix_v4 = 24;
    cfg->client_prefix_v6 = 48;
    cfg->max_body_bytes = 65536;
    cfg->max_header_bytes = 8192;
    cfg->request_timeout_ms = 10000;
    cfg->max_count = 10000;
    cfg->authority[0] = '\0'; /* the library's fixed default (idmint_authority_open) */
    cfg->region = 0;
    snprintf(cfg->namespaces, sizeof(cfg->namespaces), "default");
    cfg->lease_ms = 600000;
    cfg->renew_ms = 60000;
    cfg->ready_margin_ms = 0;
    cfg->log_level = LOG_INFO;
    cfg->store_threads = 4;
    cfg->store_lease_threads = 1;
    cfg->store_queue = 256;
    cfg->store_deadline_ms = 2000;
    /* What one caller can make the store keep is bounded unless an operator lifts it. */
    cfg->limits[RATELIMIT_BATCH].rate = RATELIMIT_BATCH_RATE;
    cfg->limits[RATELIMIT_BATCH].burst = RATELIMIT_BATCH_BURST;
    cfg->limits[RATELIMIT_COLLISION].rate = RATELIMIT_COLLISION_RATE;
    cfg->limits[RATELIMIT_COLLISION].burst = RATELIMIT_COLLISION_BURST;
    cfg->limits[RATELIMIT_GRANT].rate = RATELIMIT_GRANT_RATE;
    cfg->limits[RATELIMIT_GRANT].burst = RATELIMIT_GRANT_BURST;
    cfg->limits[RATELIMIT_RENEW].rate = RATELIMIT_RENEW_RATE;
    cfg->limits[RATELIMIT_RENEW].burst = RATELIMIT_RENEW_BURST;
}

/* Digits only, within [min, max]. */
static int parse_u64(const char *text, uint64_t min, uint64_t max, uint64_t *out, char *err,
                     size_t err_size)
{
    uint64_t v = 0;
    size_t i;

    if (text[0] == '\0') {
        snprintf(err, err_size, "a number is required");
        return -1;
    }
    for (i = 0; text[i] != '\0'; i++) {
        if (text[i] < '0' || text[i] > '9') {
            snprintf(err, err_size, "'%s' is not a whole number", text);
            return -1;
        }
        if (v > (UINT64_MAX - 9) / 10) {
            snprintf(err, err_size, "'%s' is too large", text);
            return -1;
        }
        v = v * 10 + (uint64_t)(text[i] - '0');
    }
    if (v < min || v > max) {
        snprintf(err, err_size, "%s is outside %" PRIu64 "..%" PRIu64, text, min, max);
        return -1;
    }
    *out = v;
    return 0;
}

static int set_str(char *dst, size_t size, const char *value, char *err, size_t err_size)
{
    if (strlen(value) >= size) {
        snprintf(err, err_size, "value is longer than %zu characters", size - 1);
        return -1;
    }
    memcpy(dst, value, strlen(value) + 1);
    return 0;
}

static int set_token(struct config *cfg, const char *name, const char *value, char *err,
                     size_t err_size)
{
    struct auth_token t;
    size_t i;

    if (name[0] == '\0' || strlen(name) >= sizeof(t.name)) {
        snprintf(err, err_size, "token name must be 1..%zu characters", sizeof(t.name) - 1);
        return -1;
    }
    for (i = 0; i < cfg->n_tokens; i++) {
        if (strcmp(cfg->tokens[i].name, name) == 0) {
            snprintf(err, err_size, "token '%s' is defined twice", name);
            return -1;
        }
    }
    if (cfg->n_tokens == DAEMON_MAX_TOKENS) {
        snprintf(err, err_size, "more than %d tokens", DAEMON_MAX_TOKENS);
        return -1;
    }
    memset(&t, 0, sizeof(t));
    if (auth_token_parse(value, &t, err, err_size) != 0)
        return -1;
    memcpy(t.name, name, strlen(name) + 1);
    cfg->tokens[cfg->n_tokens++] = t;
    return 0;
}

int config_set(struct config *cfg, const char *section, const char *key, const char *value,
               char *err, size_t err_size)
{
    uint64_t v;

#define NUM(min, max, field, type)                                                                 \
    do {                                                                                           \
        if (parse_u64(value, (min), (max), &v, err, err_size) != 0)                                \
            return -1;                                                                             \
        cfg->field = (type)v;                                                                      \
        return 0;                                                                                  \
    } while (0)

    if (strcmp(section, "server") == 0) {
        if (strcmp(key, "listen") == 0)
            return set_str(cfg->listen, sizeof(cfg->listen), value, err, err_size);
        if (strcmp(key, "threads") == 0)
            NUM(1, MAX_THREADS, threads, unsigned);
        if (strcmp(key, "max_connections") == 0)
            NUM(1, 1000000, max_connections, unsigned);
        if (strcmp(key, "max_connections_per_client") == 0)
            NUM(1, 1000000, max_connections_per_client, unsigned);
        if (strcmp(key, "max_connections_per_prefix") == 0)
            NUM(1, 1000000, max_connections_per_prefix, unsigned);
        if (strcmp(key, "client_prefix_v4") == 0)
            NUM(8, 32, client_prefix_v4, unsigned);
        if (strcmp(key, "client_prefix_v6") == 0)
            NUM(16, 64, client_prefix_v6, unsigned);
        if (strcmp(key, "max_body_bytes") == 0)
            NUM(16, MAX_BODY_MAX, max_body_bytes, size_t);
        if (strcmp(key, "max_header_bytes") == 0)
            NUM(256, MAX_HEADER_MAX, max_header_bytes, size_t);
        if (strcmp(key, "request_timeout_ms") == 0)
            NUM(100, 3600000, request_timeout_ms, uint32_t);
        if (strcmp(key, "max_count") == 0)
            NUM(1, MAX_COUNT_MAX, max_count, uint32_t);
        if (strcmp(key, "tls_cert") == 0)
            return set_str(cfg->tls_cert, sizeof(cfg->tls_cert), value, err, err_size);
        if (strcmp(key, "tls_key") == 0)
            return set_str(cfg->tls_key, sizeof(cfg->tls_key), value, err, err_size);
    } else if (strcmp(section, "authority") == 0) {
        if (strcmp(key, "url") == 0)
            return set_str(cfg->authority, sizeof(cfg->authority), value, err, err_size);
        if (strcmp(key, "region") == 0)
            NUM(0, 65535, region, uint32_t);
    } else if (strcmp(section, "mint") == 0) {
        if (strcmp(key, "namespaces") == 0)
            return set_str(cfg->namespaces, sizeof(cfg->namespaces), value, err, err_size);
        if (strcmp(key, "lease_ms") == 0)
            NUM(1000, 86400000, lease_ms, uint32_t);
        if (strcmp(key, "renew_ms") == 0)
            NUM(100, 86400000, renew_ms, uint32_t);
        if (strcmp(key, "ready_margin_ms") == 0)
            NUM(1, 86400000, ready_margin_ms, uint32_t);
    } else if (strcmp(section, "provenance") == 0) {
        /* 1 s .. 10 years, as idmint__authority_set_retention takes them. */
        if (strcmp(key, "worker_grants_s") == 0)
            NUM(1, 315576000, keep_s[0], uint32_t);
        if (strcmp(key, "range_grants_s") == 0)
            NUM(1, 315576000, keep_s[1], uint32_t);
        if (strcmp(key, "batches_s") == 0)
            NUM(1, 315576000, keep_s[2], uint32_t);
        if (strcmp(key, "collisions_s") == 0)
            NUM(1, 315576000, keep_s[3], uint32_t);
    } else if (strcmp(section, "limits") == 0) {
        static const char *const names[RATELIMIT_CLASSES] = {
            "mint", "generator", "admin", "address", "batch", "collision", "grant", "renew"};
        size_t c, n;

        for (c = 0; c < RATELIMIT_CLASSES; c++) {
            n = strlen(names[c]);
            if (strncmp(key, names[c], n) != 0)
                continue;
            if (strcmp(key + n, "_rate") == 0)
                NUM(0, RATELIMIT_RATE_MAX, limits[c].rate, uint32_t);
            if (strcmp(key + n, "_burst") == 0)
                NUM(1, RATELIMIT_BURST_MAX, limits[c].burst, uint32_t);
        }
    } else if (strcmp(section, "store") == 0) {
        if (strcmp(key, "threads") == 0)
            NUM(1, MAX_THREADS, store_threads, unsigned);
        if (strcmp(key, "lease_threads") == 0)
            NUM(1, MAX_THREADS, store_lease_threads, unsigned);
        if (strcmp(key, "queue") == 0)
            NUM(1, 100000, store_queue, unsigned);
        if (strcmp(key, "deadline_ms") == 0)
            NUM(10, 600000, store_deadline_ms, uint32_t);
    } else if (strcmp(section, "log") == 0) {
        if (strcmp(key, "level") == 0) {
            int level = log_level_parse(value);

            if (level < 0) {
                snprintf(err, err_size, "log level '%s' is not debug, info, warn or error", value);
                return -1;
            }
            cfg->log_level = level;
            return 0;
        }
        if (strcmp(key, "file") == 0)
            return set_str(cfg->log_file, sizeof(cfg->log_file), value, err, err_size);
    } else if (strcmp(section, "tokens") == 0) {
        return set_token(cfg, key, value, err, err_size);
    } else {
        snprintf(err, err_size, "unknown section [%s]", section);
        return -1;
    }
#undef NUM
    snprintf(err, err_size, "unknown key '%s' in [%s]", key, section);
    return -1;
}

struct file_ctx {
    struct config *cfg;
    FILE *f;
    int line;          /* the line being parsed */
    int is_line_start; /* the next read starts a new line */
    int err_line;      /* first handler failure; 0: none */
    char err[512];
};

/* fgets for inih that counts lines, so a handler knows where it is. */
static char *file_reader(char *str, int num, void *stream)
{
    struct file_ctx *fc = stream;
    char *s = fgets(str, num, fc->f);

    if (s == NULL)
        return NULL;
    if (fc->is_line_start)
        fc->line++;
    fc->is_line_start = strchr(s, '\n') != NULL;
    return s;
}

static int file_handler(void *user, const char *section, const char *name, const char *value)
{
    struct file_ctx *fc = user;
    char err[400];

    if (config_set(fc->cfg, section, name, value, err, sizeof(err)) == 0)
        return 1;
    if (fc->err_line == 0) {
        fc->err_line = fc->line;
        snprintf(fc->err, sizeof(fc->err), "%s", err);
    }
    return 0;
}

/*
 * Read @p path into @p next (a copy of the settings): 0 when every line
 * took and the file may hold what it holds, or -1 with @p err.
 */
static int load_into(struct config *next, const char *path, char *err, size_t err_size)
{
    struct file_ctx fc;
    struct stat st;
    size_t tokens_before = next->n_tokens;
    int rc, has_stat, stat_errno;

    memset(&fc, 0, sizeof(fc));
    fc.cfg = next;
    fc.is_line_start = 1;
    fc.f = fopen(path, "r");
    if (fc.f == NULL) {
        snprintf(err, err_size, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    rc = ini_parse_stream(file_reader, &fc, file_handler, &fc);
    /* The mode of the file that was read, not of whatever the path names now. */
    has_stat = fstat(fileno(fc.f), &st) == 0;
    stat_errno = errno;
    fclose(fc.f);
    if (rc == 0 && fc.err_line == 0) {
        if (next->n_tokens == tokens_before)
            return 0;
        if (!has_stat) {
            snprintf(err, err_size, "%s: cannot check its mode: %s", path, strerror(stat_errno));
            return -1;
        }
        return secret_file_check("the config file with [tokens]", path, &st, err, err_size);
    }
    if (fc.err_line != 0 && (rc <= 0 || fc.err_line <= rc))
        snprintf(err, err_size, "%s:%d: %s", path, fc.err_line, fc.err);
    else if (rc > 0)
        snprintf(err, err_size, "%s:%d: syntax error (expected [section] or key = value)", path,
                 rc);
    else
        snprintf(err, err_size, "%s: cannot read", path);
    return -1;
}

int config_load_file(struct config *cfg, const char *path, char *err, size_t err_size)
{
    /* On the heap: the settings with their tokens and paths are about 14 KiB. */
    struct config *next = malloc(sizeof(*next));
    int rc;

    if (next == NULL) {
        snprintf(err, err_size, "%s: out of memory", path);
        return -1;
    }
    *next = *cfg;
    rc = load_into(next, path, err, err_size);
    if (rc == 0)
        *cfg = *next; /* a file is taken whole or not at all */
    free(next);
    return rc;
}

int config_apply_env(struct config *cfg, char *err, size_t err_size)
{
    static const struct {
        const char *var, *section, *key;
    } vars[] = {
        {"IDMINT_LISTEN", "server", "listen"},
        {"IDMINT_AUTHORITY", "authority", "url"},
        {"IDMINT_REGION", "authority", "region"},
        {"IDMINT_LOG_LEVEL", "log", "level"},
        {"IDMINT_MAX_COUNT", "server", "max_count"},
        {"IDMINT_MAX_CONNECTIONS_PER_CLIENT", "server", "max_connections_per_client"},
        {"IDMINT_MAX_CONNECTIONS_PER_PREFIX", "server", "max_connections_per_prefix"},
        {"IDMINT_LIMITS_MINT_RATE", "limits", "mint_rate"},
        {"IDMINT_LIMITS_MINT_BURST", "limits", "mint_burst"},
        {"IDMINT_LIMITS_GENERATOR_RATE", "limits", "generator_rate"},
        {"IDMINT_LIMITS_GENERATOR_BURST", "limits", "generator_burst"},
        {"IDMINT_LIMITS_ADMIN_RATE", "limits", "admin_rate"},
        {"IDMINT_LIMITS_ADMIN_BURST", "limits", "admin_burst"},
        {"IDMINT_LIMITS_ADDRESS_RATE", "limits", "address_rate"},
        {"IDMINT_LIMITS_ADDRESS_BURST", "limits", "address_burst"},
        {"IDMINT_LIMITS_BATCH_RATE", "limits", "batch_rate"},
        {"IDMINT_LIMITS_BATCH_BURST", "limits", "batch_burst"},
        {"IDMINT_LIMITS_COLLISION_RATE", "limits", "collision_rate"},
        {"IDMINT_LIMITS_COLLISION_BURST", "limits", "collision_burst"},
        {"IDMINT_LIMITS_GRANT_RATE", "limits", "grant_rate"},
        {"IDMINT_LIMITS_GRANT_BURST", "limits", "grant_burst"},
        {"IDMINT_LIMITS_RENEW_RATE", "limits", "renew_rate"},
        {"IDMINT_LIMITS_RENEW_BURST", "limits", "renew_burst"},
        {"IDMINT_TLS_CERT", "server", "tls_cert"},
        {"IDMINT_TLS_KEY", "server", "tls_key"},
        {"IDMINT_STORE_THREADS", "store", "threads"},
        {"IDMINT_STORE_LEASE_THREADS", "store", "lease_threads"},
        {"IDMINT_STORE_QUEUE", "store", "queue"},
        {"IDMINT_STORE_DEADLINE_MS", "store", "deadline_ms"},
    };
    char problem[400];
    size_t i;

    for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
        const char *value = getenv(vars[i].var);

        if (value == NULL || value[0] == '\0')
            continue;
        if (config_set(cfg, vars[i].section, vars[i].key, value, problem, sizeof(problem)) != 0) {
            snprintf(err, err_size, "%s: %s", vars[i].var, problem);
            return -1;
        }
    }
    return 0;
}

int config_finish(struct config *cfg, char *err, size_t err_size)
{
    if ((cfg->tls_cert[0] == '\0') != (cfg->tls_key[0] == '\0')) {
        snprintf(err, err_size,
                 "TLS needs both tls_cert and tls_key (--tls-cert, --tls-key); "
                 "only %s is set",
                 cfg->tls_cert[0] != '\0' ? "tls_cert" : "tls_key");
        return -1;
    }
    if (cfg->renew_ms >= cfg->lease_ms) {
        snprintf(err, err_size, "renew_ms (%u) must be below lease_ms (%u)", cfg->renew_ms,
                 cfg->lease_ms);
        return -1;
    }
    if (cfg->ready_margin_ms == 0)
        cfg->ready_margin_ms = cfg->lease_ms / 10;
    if (cfg->ready_margin_ms >= cfg->lease_ms) {
        snprintf(err, err_size, "ready_margin_ms (%u) must be below lease_ms (%u)",
                 cfg->ready_margin_ms, cfg->lease_ms);
        return -1;
    }
    return 0;
}
