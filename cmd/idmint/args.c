/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Flag parsing and one-line error reporting for the idmint CLI. Kept apart
 * from getopt_long because that is not in POSIX and permutes argv.
 */
#include "args.h"

#include "idmint.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Print a string up to its first newline, so every message stays one line. */
static void print_one_line(const char *s)
{
    size_t n = strcspn(s, "\r\n");

    fwrite(s, 1, n, stderr);
}

static void vreport(const char *fmt, va_list ap)
{
    char buf[1024];

    vsnprintf(buf, sizeof(buf), fmt, ap);
    fputs("idmint: ", stderr);
    print_one_line(buf);
}

int cli_usage(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vreport(fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return CLI_EXIT_USAGE;
}

int cli_error(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vreport(fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return CLI_EXIT_FAILED;
}

int cli_fail(int rc, const char *fmt, ...)
{
    const char *detail = idmint_errmsg();
    va_list ap;

    va_start(ap, fmt);
    vreport(fmt, ap);
    va_end(ap);
    fputs(": ", stderr);
    fputs(idmint_strerror(rc), stderr);
    if (detail != NULL && detail[0] != '\0') {
        fputs(": ", stderr);
        print_one_line(detail);
    }
    fputc('\n', stderr);
    return CLI_EXIT_FAILED;
}

int64_t cli_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int cli_finish_stdout(int status)
{
    if (fflush(stdout) != 0 || ferror(stdout)) {
        if (errno == EPIPE)
            return CLI_EXIT_FAILED;
        return cli_error("writing output: %s", strerror(errno));
    }
    return status;
}

const char *args_authority(const struct args_common *common)
{
    const char *env;

    if (common->authority != NULL)
        return common->authority;
    env = getenv("IDMINT_AUTHORITY");
    if (env != NULL && env[0] != '\0')
        return env;
    return NULL;
}

void cli_authority_text(const char *url, char *buf, size_t size)
{
    if (idmint_authority_resolve(url, buf, size) != 0)
        snprintf(buf, size, "%s", url != NULL && url[0] != '\0' ? url : "the default authority");
}

#define SQLITE_SCHEME "sqlite:"

int cli_authority_is_new(const char *url)
{
    char text[IDMINT_AUTHORITY_TEXT_MAX];
    idmint_authority *a = NULL;
    int rc;

    if (idmint_authority_resolve(url, text, sizeof(text)) != 0 ||
        strncmp(text, SQLITE_SCHEME, strlen(SQLITE_SCHEME)) != 0)
        return 0;
    rc = idmint_authority_open_existing(&a, url, 0);
    idmint_authority_close(a);
    return rc == IDMINT_ENOTFOUND;
}

void cli_note_new_authority(const char *url)
{
    char text[IDMINT_AUTHORITY_TEXT_MAX];

    cli_authority_text(url, text, sizeof(text));
    fprintf(stderr,
            "idmint: creating a new, empty authority at %s (every process that mints these "
            "namespaces must use this same authority: --authority %s)\n",
            strncmp(text, SQLITE_SCHEME, strlen(SQLITE_SCHEME)) == 0 ? text + strlen(SQLITE_SCHEME)
                                                                     : text,
            text);
}

const char *args_authority_name(const struct args_common *common)
{
    const char *url = args_authority(common);

    return url != NULL ? url : "the default authority";
}

int args_u64(const char *cmd, const char *flag, const char *text, uint64_t min, uint64_t max,
             uint64_t *out)
{
    uint64_t v = 0;
    const char *p;

    if (text[0] == '\0')
        return cli_usage("%s: %s: empty value, expected a number in %llu..%llu", cmd, flag,
                         (unsigned long long)min, (unsigned long long)max);
    for (p = text; *p != '\0'; p++) {
        unsigned d;

        if (!is_digit(*p))
            return cli_usage("%s: %s: '%s' is not a number in %llu..%llu", cmd, flag, text,
                             (unsigned long long)min, (unsigned long long)max);
        d = (unsigned)(*p - '0');
        if (v > (UINT64_MAX - d) / 10)
            return cli_usage("%s: %s: '%s' is out of range %llu..%llu", cmd, flag, text,
                             (unsigned long long)min, (unsigned long long)max);
        v = v * 10 + d;
    }
    if (v < min || v > max)
        return cli_usage("%s: %s: '%s' is out of range %llu..%llu", cmd, flag, text,
                         (unsigned long long)min, (unsigned long long)max);
    *out = v;
    return CLI_EXIT_OK;
}

int args_ns_name(const char *cmd, const char *name)
{
    size_t i, n = strlen(name);

    if (n == 0 || n > 63)
        return cli_usage("%s: bad namespace name '%s' (want [a-z0-9][a-z0-9_.-]{0,62})", cmd, name);
    for (i = 0; i < n; i++) {
        char c = name[i];
        int ok = (c >= 'a' && c <= 'z') || is_digit(c);

        if (i > 0)
            ok = ok || c == '_' || c == '.' || c == '-';
        if (!ok)
            return cli_usage("%s: bad namespace name '%s' (want [a-z0-9][a-z0-9_.-]{0,62})", cmd,
                             name);
    }
    return CLI_EXIT_OK;
}

static const struct args_opt *find_long(const struct args_opt *opts, size_t nopts, const char *name,
                                        size_t len)
{
    size_t i;

    for (i = 0; i < nopts; i++)
        if (strlen(opts[i].long_name) == len && strncmp(opts[i].long_name, name, len) == 0)
            return &opts[i];
    return NULL;
}

static const struct args_opt *find_short(const struct args_opt *opts, size_t nopts, char c)
{
    size_t i;

    for (i = 0; i < nopts; i++)
        if (opts[i].short_name != 0 && opts[i].short_name == c)
            return &opts[i];
    return NULL;
}

int args_parse(const char *cmd, int argc, char **argv, const struct args_opt *opts, size_t nopts,
               struct args_common *common, char **pos, size_t *npos)
{
    const struct args_opt authority = {"authority", 0, 1, &common->authority};
    int i, only_pos = 0;

    *npos = 0;
    for (i = 0; i < argc; i++) {
        char *a = argv[i];
        const struct args_opt *o = NULL;
        const char *value = NULL;
        char shown[64];

        if (only_pos || a[0] != '-' || a[1] == '\0' || is_digit(a[1])) {
            pos[(*npos)++] = a;
            continue;
        }
        if (strcmp(a, "--") == 0) {
            only_pos = 1;
            continue;
        }
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            common->wants_help = 1;
            continue;
        }
        if (a[1] == '-') {
            const char *name = a + 2;
            const char *eq = strchr(name, '=');
            size_t len = eq != NULL ? (size_t)(eq - name) : strlen(name);

            o = find_long(opts, nopts, name, len);
            if (o == NULL && len == strlen(authority.long_name) &&
                strncmp(name, authority.long_name, len) == 0)
                o = &authority;
            snprintf(shown, sizeof(shown), "--%.*s", (int)(len < 40 ? len : 40), name);
            if (o == NULL)
                return cli_usage("%s: unknown option '%s' (see 'idmint %s --help')", cmd, shown,
                                 cmd);
            if (eq != NULL) {
                if (!o->takes_value)
                    return cli_usage("%s: option '%s' takes no value", cmd, shown);
                value = eq + 1;
            }
        } else {
            o = find_short(opts, nopts, a[1]);
            snprintf(shown, sizeof(shown), "-%c", a[1]);
            if (o == NULL)
                return cli_usage("%s: unknown option '%s' (see 'idmint %s --help')", cmd, shown,
                                 cmd);
            if (a[2] != '\0') {
                if (!o->takes_value)
                    return cli_usage("%s: option '%s' takes no value", cmd, shown);
                value = a + 2;
            }
        }
        if (!o->takes_value) {
            *o->value = "1";
            continue;
        }
        if (value == NULL) {
            if (i + 1 >= argc)
                return cli_usage("%s: option '%s' needs a value", cmd, shown);
            value = argv[++i];
        }
        *o->value = value;
    }
    return CLI_EXIT_OK;
}
