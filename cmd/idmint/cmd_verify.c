/* SPDX-License-Identifier: Apache-2.0 */
/*
 * idmint verify: count, duplicates and decreases of decimal IDs on stdin.
 * It is the independent check on the minting path, so it shares none of
 * its code: its own parser, its own in-place radix sort, its own scan.
 */
#include "cmd.h"
#include "trace_out.h"

#include "idmint.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define READ_BYTES     (1u << 20)
#define FIRST_CAPACITY (1u << 20)
#define SMALL_SORT     48    /* below this many keys insertion sort beats a radix pass */
#define TRACE_MAX      10000 /* duplicates traced at most: one store read each */

static const char verify_usage[] =
    "usage: idmint verify [--ns NS [--json] [--authority URL] [AUTHORITY...]] < FILE\n"
    "\n"
    "Read decimal IDs from stdin, one per line (empty lines are ignored), and\n"
    "print count=N duplicates=D decreases=K, where K counts lines whose value is\n"
    "smaller than the line before. Exit status 1 when D > 0.\n"
    "With --ns, each duplicated ID (the first 10000) is then traced through the\n"
    "authority's provenance and printed as a collision record naming both owners:\n"
    "  collision ID duplicate: OWNER | OWNER\n"
    "('minted' when provenance knows one owner only, 'not_minted' when none).\n"
    "IDs gathered from several regions (or any several authorities) name each\n"
    "further authority after the flags: every duplicate is then traced in all\n"
    "of them, and each owner is followed by 'at AUTHORITY' (JSON: \"authority\").\n"
    "An authority without the namespace is skipped.\n";

struct id_list {
    uint64_t *v;
    size_t n, cap;
};

static int list_push(struct id_list *l, uint64_t x)
{
    if (l->n == l->cap) {
        size_t cap = l->cap == 0 ? FIRST_CAPACITY : l->cap * 2;
        uint64_t *v = realloc(l->v, cap * sizeof(*v));

        if (v == NULL)
            return -1;
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = x;
    return 0;
}

static void insertion_sort(uint64_t *a, size_t n)
{
    size_t i, j;

    for (i = 1; i < n; i++) {
        uint64_t x = a[i];

        for (j = i; j > 0 && a[j - 1] > x; j--)
            a[j] = a[j - 1];
        a[j] = x;
    }
}

/* In-place MSD radix sort by the byte at @p shift, then the bytes below it. */
static void radix_sort(uint64_t *a, size_t n, unsigned shift)
{
    size_t count[256], start[256], next[256], i, sum = 0;
    unsigned b;

    if (n < SMALL_SORT) {
        insertion_sort(a, n);
        return;
    }
    memset(count, 0, sizeof(count));
    for (i = 0; i < n; i++)
        count[(a[i] >> shift) & 0xffu]++;
    for (b = 0; b < 256; b++) {
        start[b] = sum;
        next[b] = sum;
        sum += count[b];
    }
    for (b = 0; b < 256; b++) {
        size_t end = start[b] + count[b];

        /* Buckets below b are full, so every key met here belongs to b or above. */
        while (next[b] < end) {
            uint64_t x = a[next[b]];
            unsigned d = (unsigned)((x >> shift) & 0xffu);

            if (d == b) {
                next[b]++;
                continue;
            }
            a[next[b]] = a[next[d]];
            a[next[d]++] = x;
        }
    }
    if (shift == 0)
        return;
    for (b = 0; b < 256; b++)
        if (count[b] > 1)
            radix_sort(a + start[b], count[b], shift - 8);
}

struct verify_state {
    struct id_list ids;
    uint64_t line;      /* 1-based number of the line being read */
    uint64_t value;     /* digits of the current line so far */
    int has_digits;     /* the current line has at least one digit */
    int has_cr;         /* a '\r' ended the digits; only '\n' may follow */
    uint64_t decreases; /* lines smaller than the line before */
    int has_prev;
    uint64_t prev;
};

static int end_line(struct verify_state *s)
{
    if (s->has_digits) {
        if (s->has_prev && s->value < s->prev)
            s->decreases++;
        s->prev = s->value;
        s->has_prev = 1;
        if (list_push(&s->ids, s->value) != 0)
            return cli_error("verify: out of memory after %zu IDs", s->ids.n);
    }
    s->line++;
    s->value = 0;
    s->has_digits = 0;
    s->has_cr = 0;
    return CLI_EXIT_OK;
}

static int feed(struct verify_state *s, const char *buf, size_t n)
{
    size_t i;
    int rc;

    for (i = 0; i < n; i++) {
        char c = buf[i];

        if (c == '\n') {
            if ((rc = end_line(s)) != CLI_EXIT_OK)
                return rc;
        } else if (c >= '0' && c <= '9' && !s->has_cr) {
            unsigned d = (unsigned)(c - '0');

            if (s->value > (UINT64_MAX - d) / 10)
                return cli_usage("verify: line %" PRIu64 ": number does not fit in 64 bits",
                                 s->line);
            s->value = s->value * 10 + d;
            s->has_digits = 1;
        } else if (c == '\r' && !s->has_cr) {
            s->has_cr = 1;
        } else {
            return cli_usage("verify: line %" PRIu64 ": malformed ID (unexpected byte 0x%02x)",
                             s->line, (unsigned)(unsigned char)c);
        }
    }
    return CLI_EXIT_OK;
}

static uint64_t count_duplicates(const uint64_t *a, size_t n)
{
    uint64_t dups = 0;
    size_t i;

    for (i = 1; i < n; i++)
        if (a[i] == a[i - 1])
            dups++;
    return dups;
}

/*
 * Trace @p id in each of the @p n authorities @p auths (named @p names) into
 * @p src, each array also in @p owned for the caller to free: 0, or a CLI
 * exit status after the message. An authority without
 * the namespace found nothing; with one authority, its absence is an error.
 */
static int trace_all(idmint_authority **auths, char (*names)[256], size_t n, const char *ns,
                     uint64_t id, struct trace_out_source *src, idmint_grant_info **owned)
{
    for (size_t k = 0; k < n; k++) {
        idmint_grant_info *grants = NULL;
        size_t found = 0;
        int rc = idmint_trace(auths[k], ns, id, &grants, &found);

        owned[k] = grants;
        if (rc == IDMINT_ENOTFOUND && n > 1)
            rc = 0, found = 0;
        if (rc != 0)
            return cli_fail(rc, "verify: trace of %" PRIu64 " in '%s' at %s", id, ns, names[k]);
        src[k].authority = names[k];
        src[k].grants = grants;
        src[k].n = found;
    }
    return CLI_EXIT_OK;
}

/*
 * Trace each value that occurs more than once in sorted @p a through @p ns's
 * provenance in @p authority and the @p nextra further authorities.
 */
static int print_collisions(const char *authority, char **extra, size_t nextra, const char *ns,
                            const uint64_t *a, size_t n, int as_json)
{
    size_t nauth = 1 + nextra, traced = 0, more = 0, k;
    idmint_authority **auths = calloc(nauth, sizeof(*auths));
    char(*names)[256] = calloc(nauth, sizeof(*names));
    struct trace_out_source *src = calloc(nauth, sizeof(*src));
    idmint_grant_info **owned = calloc(nauth, sizeof(*owned));
    int rc = auths == NULL || names == NULL || src == NULL || owned == NULL
                 ? cli_error("verify: out of memory")
                 : CLI_EXIT_OK;

    for (k = 0; rc == CLI_EXIT_OK && k < nauth; k++) {
        const char *url = k == 0 ? authority : extra[k - 1];

        cli_authority_text(url, names[k], sizeof(names[k]));
        if ((rc = idmint_authority_open_existing(&auths[k], url, 0)) != 0)
            rc = cli_fail(rc, "verify: cannot open %s", names[k]);
    }
    for (size_t i = 1; rc == CLI_EXIT_OK && i < n; i++) {
        if (a[i] != a[i - 1] || (i >= 2 && a[i - 1] == a[i - 2]))
            continue;
        if (traced == TRACE_MAX) {
            more++;
            continue;
        }
        memset(src, 0, nauth * sizeof(*src));
        memset(owned, 0, nauth * sizeof(*owned));
        if ((rc = trace_all(auths, names, nauth, ns, a[i], src, owned)) == CLI_EXIT_OK) {
            if (!as_json)
                fputs("collision ", stdout);
            if (nauth == 1)
                trace_out_print(stdout, a[i], src[0].grants, src[0].n, NULL, as_json);
            else
                trace_out_print_sources(stdout, a[i], src, nauth, as_json);
            traced++;
        }
        for (k = 0; k < nauth; k++)
            idmint_free(owned[k]);
    }
    if (rc == CLI_EXIT_OK && more > 0)
        printf("collisions not traced: %zu (only the first %d are)\n", more, TRACE_MAX);
    for (k = 0; auths != NULL && k < nauth; k++)
        idmint_authority_close(auths[k]);
    free(auths);
    free(names);
    free(src);
    free(owned);
    return rc;
}

static int verify_stdin(const char *authority, char **extra, size_t nextra, const char *ns,
                        int as_json)
{
    struct verify_state s;
    char *buf = malloc(READ_BYTES);
    uint64_t dups;
    int rc = CLI_EXIT_OK;

    memset(&s, 0, sizeof(s));
    s.line = 1;
    if (buf == NULL)
        return cli_error("verify: out of memory");
    for (;;) {
        ssize_t r = read(STDIN_FILENO, buf, READ_BYTES);

        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            rc = cli_error("verify: reading stdin: %s", strerror(errno));
            goto out;
        }
        if (r == 0)
            break;
        if ((rc = feed(&s, buf, (size_t)r)) != CLI_EXIT_OK)
            goto out;
    }
    if (s.has_digits && (rc = end_line(&s)) != CLI_EXIT_OK)
        goto out;
    /* No decreases means the input is already sorted: equal values are adjacent. */
    if (s.decreases > 0)
        radix_sort(s.ids.v, s.ids.n, 56);
    dups = count_duplicates(s.ids.v, s.ids.n);
    printf("count=%zu duplicates=%" PRIu64 " decreases=%" PRIu64 "\n", s.ids.n, dups, s.decreases);
    if (dups > 0 && ns != NULL &&
        (rc = print_collisions(authority, extra, nextra, ns, s.ids.v, s.ids.n, as_json)) !=
            CLI_EXIT_OK)
        goto out;
    rc = cli_finish_stdout(dups > 0 ? CLI_EXIT_FAILED : CLI_EXIT_OK);
out:
    free(s.ids.v);
    free(buf);
    return rc;
}

int cmd_verify_run(int argc, char **argv, struct args_common *common)
{
    char **pos = malloc(((size_t)argc + 1) * sizeof(*pos));
    const char *ns = NULL, *json = NULL;
    struct args_opt opts[] = {{"ns", 0, 1, &ns}, {"json", 0, 0, &json}};
    size_t npos;
    int rc;

    if (pos == NULL)
        return cli_error("verify: out of memory");
    rc = args_parse("verify", argc, argv, opts, 2, common, pos, &npos);
    if (rc == CLI_EXIT_OK && ns != NULL)
        rc = args_ns_name("verify", ns);
    if (rc == CLI_EXIT_OK && json != NULL && ns == NULL)
        rc = cli_usage("verify: --json is for the collision records of --ns");
    if (rc == CLI_EXIT_OK && !common->wants_help && npos > 0 && ns == NULL)
        rc = cli_usage("verify: unexpected argument '%s' (IDs are read from stdin; further "
                       "authorities go with --ns)",
                       pos[0]);
    if (rc == CLI_EXIT_OK && common->wants_help) {
        fputs(verify_usage, stdout);
        rc = cli_finish_stdout(CLI_EXIT_OK);
    } else if (rc == CLI_EXIT_OK) {
        rc = verify_stdin(args_authority(common), pos, npos, ns, json != NULL);
    }
    free(pos);
    return rc;
}
