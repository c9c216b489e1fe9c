/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One generator of the fleet drill (docs/fleet.md): opens one handle on an
 * authority, mints at a paced rate in small batches, checks its own IDs
 * strictly increase, and writes a report of JSON lines that
 * tests/fleet/check_fleet.py reads. The report is flushed at least once a
 * second, so a kill -9 leaves everything but the last second; it claims
 * only what it has minted, never what it was granted.
 */
#include "fault_store.h"
#include "timed_store.h"

#include "idmint.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BATCH_MAX     512  /* IDs one idmint_next_n call asks for */
#define CATCH_UP_MAX  4096 /* IDs one tick may add when behind: a stall is not repaid at once */
#define FLUSH_MS      1000 /* the report is never more than this stale */
#define TIMINGS_BATCH 256

static const char usage[] =
    "usage: fleet_minter --url URL --ns NS --report PATH [--kind LABEL] [--rate IDS_PER_S]\n"
    "       [--tick-ms MS] [--seconds S] [--start-at-ms UNIX_MS] [--region N]\n"
    "       [--lease-ms MS] [--renew-ms MS] [--sample-every N] [--range-target-ms MS]\n"
    "       [--share-worker] [--no-timing]\n";

struct config {
    const char *url, *ns, *report, *kind;
    long rate;                /* IDs per second */
    long tick_ms;             /* pacing interval */
    double seconds;           /* how long to mint, from the start instant */
    int64_t start_at_ms;      /* Unix ms to open at (0: now), so a burst opens together */
    uint32_t region;          /* snowflake region */
    uint32_t lease_ms;        /* 0: the library's default */
    uint32_t renew_ms;        /* 0: the library's default */
    uint32_t range_target_ms; /* 0: the library's default */
    long sample_every;        /* every Nth ID goes into the report */
    int is_share_worker;      /* the planted defect: fault:URL with ts_fault_set_share_worker(1) */
    int is_timed;             /* wrap the store in timed: (never for http://) */
};

/* What the process has minted: all a report states. */
struct minted {
    uint64_t count, prev, first, last;
    uint64_t run_lo, run_hi; /* range: the maximal run of consecutive IDs still open */
    uint64_t errors;         /* idmint_next_n calls that failed */
    int last_error;
    int is_decreasing; /* an ID was not above the one before it */
};

static volatile sig_atomic_t got_term;

static void on_term(int sig)
{
    (void)sig;
    got_term = 1;
}

static int64_t wall_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static double mono_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};

    /* A signal cuts the sleep short on purpose: SIGTERM must end the run promptly. */
    (void)nanosleep(&ts, NULL);
}

/* Text for JSON: the library's messages are ASCII, but quotes and control bytes are escaped. */
static void put_json_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s != '\0'; s++) {
        unsigned char c = (unsigned char)*s;

        if (c == '"' || c == '\\')
            fprintf(out, "\\%c", c);
        else if (c < 0x20 || c > 0x7e)
            fprintf(out, "\\u%04x", c);
        else
            fputc(c, out);
    }
    fputc('"', out);
}

static int parse_args(int argc, char **argv, struct config *c)
{
    memset(c, 0, sizeof(*c));
    c->kind = "";
    c->rate = 20000;
    c->tick_ms = 10;
    c->seconds = 10;
    c->sample_every = 997;
    c->is_timed = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

        if (strcmp(a, "--share-worker") == 0) {
            c->is_share_worker = 1;
            continue;
        }
        if (strcmp(a, "--no-timing") == 0) {
            c->is_timed = 0;
            continue;
        }
        if (v == NULL)
            return -1;
        i++;
        if (strcmp(a, "--url") == 0)
            c->url = v;
        else if (strcmp(a, "--ns") == 0)
            c->ns = v;
        else if (strcmp(a, "--report") == 0)
            c->report = v;
        else if (strcmp(a, "--kind") == 0)
            c->kind = v;
        else if (strcmp(a, "--rate") == 0)
            c->rate = atol(v);
        else if (strcmp(a, "--tick-ms") == 0)
            c->tick_ms = atol(v);
        else if (strcmp(a, "--seconds") == 0)
            c->seconds = atof(v);
        else if (strcmp(a, "--start-at-ms") == 0)
            c->start_at_ms = atoll(v);
        else if (strcmp(a, "--region") == 0)
            c->region = (uint32_t)atol(v);
        else if (strcmp(a, "--lease-ms") == 0)
            c->lease_ms = (uint32_t)atol(v);
        else if (strcmp(a, "--renew-ms") == 0)
            c->renew_ms = (uint32_t)atol(v);
        else if (strcmp(a, "--sample-every") == 0)
            c->sample_every = atol(v);
        else if (strcmp(a, "--range-target-ms") == 0)
            c->range_target_ms = (uint32_t)atol(v);
        else
            return -1;
    }
    if (c->url == NULL || c->ns == NULL || c->report == NULL || c->rate <= 0 || c->tick_ms <= 0 ||
        c->sample_every <= 0)
        return -1;
    /* http:// reaches the authority through idmintd, not through a store: nothing to wrap. */
    if (strncmp(c->url, "http://", 7) == 0 || strncmp(c->url, "https://", 8) == 0) {
        c->is_timed = 0;
        if (c->is_share_worker)
            return -1;
    }
    return 0;
}

static void report_timings(FILE *out)
{
    struct timed_call calls[TIMINGS_BATCH];
    size_t n;

    while ((n = timed_store_drain(calls, TIMINGS_BATCH)) > 0)
        for (size_t i = 0; i < n; i++)
            fprintf(out,
                    "{\"ev\":\"op\",\"op\":\"%s\",\"rc\":%d,\"at_ms\":%" PRId64 ",\"us\":%u}\n",
                    timed_op_name(calls[i].op), calls[i].rc, calls[i].start_ms,
                    (unsigned)calls[i].latency_us);
}

static uint64_t unit_of(const idmint_layout *l, uint64_t id)
{
    idmint_decoded d;

    return idmint_decode(l, id, &d) == 0 ? d.time_units : 0;
}

/*
 * The state line: for a snowflake handle its lease as idmint_info reports
 * it and the first and last time unit minted under it; for a range handle
 * the run still open. Written every second and at the end: the last one in
 * the file is the process's word.
 */
static void report_state(FILE *out, idmint *m, const struct minted *s, const char *ev)
{
    idmint_handle_info info;

    idmint_handle_info_init(&info);
    fprintf(out, "{\"ev\":\"%s\",\"at_ms\":%" PRId64 ",\"minted\":%" PRIu64 ",\"errors\":%" PRIu64,
            ev, wall_ms(), s->count, s->errors);
    if (s->errors > 0) {
        fprintf(out, ",\"last_error\":%d,\"last_error_text\":", s->last_error);
        put_json_string(out, idmint_strerror(s->last_error));
    }
    if (m != NULL && idmint_info(m, &info) == 0) {
        if (info.is_range) {
            if (s->count > 0)
                fprintf(out, ",\"open_run\":[\"%" PRIu64 "\",\"%" PRIu64 "\"]", s->run_lo,
                        s->run_hi);
        } else {
            fprintf(out,
                    ",\"region\":%u,\"worker_id\":%u,\"generation\":\"%" PRIu64
                    "\",\"fence_found\":\"%" PRIu64 "\",\"lease_until\":\"%" PRIu64 "\"",
                    (unsigned)info.region, (unsigned)info.worker_id, info.generation,
                    info.fence_found, info.lease_until);
            if (s->count > 0)
                fprintf(out,
                        ",\"first_unit\":\"%" PRIu64 "\",\"last_unit\":\"%" PRIu64
                        "\",\"first_id\":\"%" PRIu64 "\",\"last_id\":\"%" PRIu64 "\"",
                        unit_of(&info.layout, s->first), unit_of(&info.layout, s->last), s->first,
                        s->last);
        }
    }
    fprintf(out, ",\"timings_dropped\":%" PRIu64 "}\n", timed_store_dropped());
}

/* Account for one batch: order, runs, samples. */
static void account(FILE *out, const struct config *c, struct minted *s, int is_range,
                    const uint64_t *ids, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t id = ids[i];

        if (s->count > 0 && id <= s->prev) {
            if (!s->is_decreasing)
                fprintf(out,
                        "{\"ev\":\"not_increasing\",\"prev\":\"%" PRIu64 "\",\"id\":\"%" PRIu64
                        "\"}\n",
                        s->prev, id);
            s->is_decreasing = 1;
        }
        if (is_range) {
            if (s->count == 0) {
                s->run_lo = s->run_hi = id;
            } else if (id == s->run_hi + 1) {
                s->run_hi = id;
            } else {
                fprintf(out, "{\"ev\":\"run\",\"lo\":\"%" PRIu64 "\",\"hi\":\"%" PRIu64 "\"}\n",
                        s->run_lo, s->run_hi);
                s->run_lo = s->run_hi = id;
            }
        }
        if (s->count == 0)
            s->first = id;
        s->last = s->prev = id;
        s->count++;
        if (s->count % (uint64_t)c->sample_every == 0)
            fprintf(out, "{\"ev\":\"sample\",\"id\":\"%" PRIu64 "\"}\n", id);
    }
}

static FILE *open_report(const char *path)
{
    FILE *out = fopen(path, "w");

    /* Fully buffered: the drill writes many lines a second and flushes once. */
    if (out != NULL)
        setvbuf(out, NULL, _IOFBF, 1 << 16);
    return out;
}

int main(int argc, char **argv)
{
    struct config c;
    struct minted s;
    struct sigaction sa;
    idmint_options o;
    idmint_handle_info info;
    idmint *m = NULL;
    char url[1024];
    uint64_t ids[BATCH_MAX];
    int64_t main_ms = wall_ms(), open_ms, opened_ms;
    double t_start, t_flush;
    int rc, is_range, status = 0;
    FILE *out;

    if (parse_args(argc, argv, &c) != 0) {
        fputs(usage, stderr);
        return 2;
    }
    if ((out = open_report(c.report)) == NULL) {
        fprintf(stderr, "fleet_minter: %s: %s\n", c.report, strerror(errno));
        return 1;
    }
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_term;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    memset(&s, 0, sizeof(s));

    if (ts_fault_register() != 0 || timed_store_register() != 0) {
        fprintf(stderr, "fleet_minter: %s\n", idmint_errmsg());
        return 1;
    }
    /* timed: outermost, so the latency seen includes the planted defect's extra write. */
    snprintf(url, sizeof(url), "%s%s%s", c.is_timed ? "timed:" : "",
             c.is_share_worker ? "fault:" : "", c.url);
    ts_fault_set_share_worker(c.is_share_worker);

    fprintf(out, "{\"ev\":\"start\",\"pid\":%ld,\"ns\":", (long)getpid());
    put_json_string(out, c.ns);
    fprintf(out, ",\"kind\":");
    put_json_string(out, c.kind);
    fprintf(out, ",\"url\":");
    put_json_string(out, url);
    fprintf(out, ",\"main_ms\":%" PRId64 ",\"start_at_ms\":%" PRId64 ",\"share_worker\":%d}\n",
            main_ms, c.start_at_ms, c.is_share_worker);
    fflush(out);

    if (c.start_at_ms > 0) {
        int64_t wait = c.start_at_ms - wall_ms();

        while (wait > 0 && !got_term) {
            sleep_ms(wait > 100 ? 100 : (long)wait);
            wait = c.start_at_ms - wall_ms();
        }
    }
    idmint_options_init(&o);
    o.region = c.region;
    if (c.lease_ms != 0)
        o.lease_ms = c.lease_ms;
    if (c.renew_ms != 0)
        o.renew_ms = c.renew_ms;
    if (c.range_target_ms != 0)
        o.range_target_ms = c.range_target_ms;
    open_ms = wall_ms();
    rc = idmint_open(&m, url, c.ns, &o);
    opened_ms = wall_ms();
    if (rc != 0) {
        fprintf(out, "{\"ev\":\"open_failed\",\"rc\":%d,\"error\":", rc);
        put_json_string(out, idmint_strerror(rc));
        fprintf(out, ",\"detail\":");
        put_json_string(out, idmint_errmsg());
        fprintf(out, ",\"open_ms\":%" PRId64 ",\"failed_ms\":%" PRId64 "}\n", open_ms, opened_ms);
        report_timings(out);
        fclose(out);
        return 1;
    }
    idmint_handle_info_init(&info);
    is_range = idmint_info(m, &info) == 0 && info.is_range;
    fprintf(out,
            "{\"ev\":\"opened\",\"is_range\":%d,\"open_ms\":%" PRId64 ",\"opened_ms\":%" PRId64
            "}\n",
            is_range, open_ms, opened_ms);

    t_start = t_flush = mono_s();
    while (!got_term) {
        double now = mono_s(), elapsed = now - t_start;
        uint64_t due = (uint64_t)((double)c.rate * elapsed);

        if (elapsed >= c.seconds)
            break;
        if (due > s.count + CATCH_UP_MAX)
            due = s.count + CATCH_UP_MAX;
        while (s.count < due) {
            size_t n = (size_t)(due - s.count < BATCH_MAX ? due - s.count : BATCH_MAX);
            uint64_t before = s.count;

            rc = idmint_next_n(m, ids, n);
            if (rc != 0) {
                s.errors++;
                if (s.errors == 1 || rc != s.last_error) {
                    fprintf(out,
                            "{\"ev\":\"mint_failed\",\"at_ms\":%" PRId64 ",\"rc\":%d,\"error\":",
                            wall_ms(), rc);
                    put_json_string(out, idmint_strerror(rc));
                    fprintf(out, ",\"detail\":");
                    put_json_string(out, idmint_errmsg());
                    fprintf(out, "}\n");
                }
                s.last_error = rc;
                break;
            }
            if (before == 0)
                fprintf(out, "{\"ev\":\"first_id\",\"at_ms\":%" PRId64 "}\n", wall_ms());
            account(out, &c, &s, is_range, ids, n);
        }
        /* A lost lease or a restored authority is final: the handle will never mint again. */
        if (s.errors > 0 && (s.last_error == IDMINT_ELEASELOST || s.last_error == IDMINT_ERESTORED))
            break;
        if (mono_s() - t_flush >= FLUSH_MS / 1000.0) {
            report_timings(out);
            report_state(out, m, &s, "tick");
            fflush(out);
            t_flush = mono_s();
        }
        sleep_ms(c.tick_ms);
    }
    if (is_range && s.count > 0)
        fprintf(out, "{\"ev\":\"run\",\"lo\":\"%" PRIu64 "\",\"hi\":\"%" PRIu64 "\"}\n", s.run_lo,
                s.run_hi);
    report_state(out, m, &s, "end");
    fflush(out);
    idmint_close(m);
    report_timings(out); /* the release */
    fprintf(out, "{\"ev\":\"closed\",\"at_ms\":%" PRId64 ",\"by_signal\":%d}\n", wall_ms(),
            (int)got_term);
    if (s.is_decreasing)
        status = 3;
    if (fclose(out) != 0)
        status = 1;
    return status;
}
