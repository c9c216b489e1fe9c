/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Flag parsing and error reporting shared by every idmint subcommand. Usage
 * errors exit 2 and failed operations exit 1, each with exactly one line on
 * stderr, so scripts can tell a typo from a refusal.
 */
#ifndef IDMINT_CLI_ARGS_H
#define IDMINT_CLI_ARGS_H

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define CLI_PRINTF(fmt, first) __attribute__((format(printf, fmt, first)))
#else
#define CLI_PRINTF(fmt, first)
#endif

enum {
    CLI_EXIT_OK = 0,
    CLI_EXIT_FAILED = 1, /* an operation or a check failed */
    CLI_EXIT_USAGE = 2,  /* the command line itself is wrong */
};

/* Largest -n any command accepts. */
#define CLI_MAX_COUNT 100000000u

struct args_opt {
    const char *long_name; /* without the leading "--" */
    char short_name;       /* 0 when there is none */
    int takes_value;       /* 0: a switch, *value becomes "1" */
    const char **value;    /* where the text goes; NULL until seen */
};

/* What every subcommand accepts besides its own flags. */
struct args_common {
    const char *authority; /* --authority; NULL: $IDMINT_AUTHORITY or the default */
    int wants_help;        /* -h or --help was given */
};

/*
 * Parse argv[0..argc) (the subcommand's arguments, without its name) against
 * @p opts plus --authority and -h/--help. Positional arguments are copied in
 * order into @p pos (room for argc entries) and counted in *npos. Accepts
 * "--flag value", "--flag=value", "-n value" and "-nvalue"; "--" ends the
 * flags. A word such as "-1" is positional, so decode can name it as a bad ID.
 * @return CLI_EXIT_OK, or CLI_EXIT_USAGE after printing one line.
 */
int args_parse(const char *cmd, int argc, char **argv, const struct args_opt *opts, size_t nopts,
               struct args_common *common, char **pos, size_t *npos);

/*
 * Parse a decimal number in [min, max]: digits only, no sign, no spaces.
 * @return CLI_EXIT_OK (*out written) or CLI_EXIT_USAGE after printing one line.
 */
int args_u64(const char *cmd, const char *flag, const char *text, uint64_t min, uint64_t max,
             uint64_t *out);

/* Check a namespace name against [a-z0-9][a-z0-9_.-]{0,62}; usage error otherwise. */
int args_ns_name(const char *cmd, const char *name);

/*
 * The authority URL for the library: --authority, else $IDMINT_AUTHORITY,
 * else NULL, which the library resolves to its one fixed default file
 * (idmint(1), FILES), so the CLI never keeps a second copy of that rule.
 */
const char *args_authority(const struct args_common *common);
/* The same for messages; "the default authority" instead of NULL. */
const char *args_authority_name(const struct args_common *common);

/*
 * The authority @p url stands for (NULL: $IDMINT_AUTHORITY, else the
 * default), written to @p buf for a person: idmint_authority_resolve()'s
 * text with secrets masked; @p url itself or "the default authority" when it
 * cannot be resolved (the open that follows names the problem). Overwrites
 * idmint_errmsg(): call it before a failing call's cli_fail(), never between.
 */
void cli_authority_text(const char *url, char *buf, size_t size);

/*
 * 1 if opening @p url would create a new authority: it stands for an SQLite
 * file that is not there yet (idmint_authority_open_existing() says
 * IDMINT_ENOTFOUND). Other stores are not probed, which would cost a
 * connection per command; they are never created by a CLI open either.
 */
int cli_authority_is_new(const char *url);

/*
 * After a command created the authority at @p url (cli_authority_is_new()
 * said so before it opened): one line on stderr naming the file and how
 * other processes share it, so a mistyped or per-folder path is seen at once.
 */
void cli_note_new_authority(const char *url);

/* Print "idmint: <formatted>" as one line; return CLI_EXIT_USAGE. */
int cli_usage(const char *fmt, ...) CLI_PRINTF(1, 2);

/*
 * Print "idmint: <what>: <idmint_strerror(rc)>[: <idmint_errmsg()>]" as one
 * line; return CLI_EXIT_FAILED. Call it right after the failing call: the
 * detail is thread-local and the next idmint call overwrites it.
 */
int cli_fail(int rc, const char *fmt, ...) CLI_PRINTF(2, 3);

/* Print "idmint: <formatted>" as one line; return CLI_EXIT_FAILED. */
int cli_error(const char *fmt, ...) CLI_PRINTF(1, 2);

/* Unix ms from CLOCK_REALTIME. */
int64_t cli_now_ms(void);

/* Flush stdout; on failure report it and return CLI_EXIT_FAILED. */
int cli_finish_stdout(int status);

#endif /* IDMINT_CLI_ARGS_H */
