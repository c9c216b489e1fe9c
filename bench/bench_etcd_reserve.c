/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Durable range reservations per second on etcd, 1 and 8 caller processes:
 * idmint's authority over its etcd store beside a bare client of etcd's
 * JSON gateway sending the same transaction in the same run (compare the
 * counter key's mod_revision and the request record's absence, put both;
 * on a failed compare take the counter from the failure branch, retry).
 * No thresholds: it prints rates, ratios, what each side asked of etcd and
 * the block size a fleet needs at those rates. Starts its own 3-member
 * cluster with tests/support/etcd-start.sh unless given a URL.
 */
#include "idmint.h"
#include "internal.h"
#include "curl_lib.h"
#include "pg_url.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BLOCK        100 /* values per reservation: one reservation is one transaction */
#define MAX_PROCS    8
#define MAX_MEMBERS  16
#define MAX_ROUNDS   60
#define TARGET_RAW   0.80 /* share of the bare client's rate */
#define FLEET_PROCS  500
#define FLEET_ID_SEC 20000.0 /* IDs per second, per process */
#define BODY_MAX     8192    /* bytes: one txn request */

/* ==== small helpers ==== */

static double seconds_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int64_t unix_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void wait_closed(int fd)
{
    char c;

    while (read(fd, &c, 1) > 0)
        ;
}

/* Run a shell command and return its first output line in @p buf; 0 on success. */
static int sh_line(const char *cmd, char *buf, size_t size)
{
    FILE *p = popen(cmd, "r");
    int rc;

    if (p == NULL)
        return -1;
    buf[0] = '\0';
    if (fgets(buf, (int)size, p) == NULL)
        buf[0] = '\0';
    rc = pclose(p);
    buf[strcspn(buf, "\r\n")] = '\0';
    return rc == 0 ? 0 : -1;
}

/* The source tree: $IDMINT_SOURCE_DIR, else the folder above this file. */
static void source_dir(char *buf, size_t size)
{
    const char *env = getenv("IDMINT_SOURCE_DIR");
    char *slash;

    snprintf(buf, size, "%s", env != NULL && env[0] != '\0' ? env : __FILE__);
    if (env != NULL && env[0] != '\0')
        return;
    for (int i = 0; i < 2 && (slash = strrchr(buf, '/')) != NULL; i++)
        *slash = '\0';
    if (strchr(buf, '/') == NULL && strcmp(buf, "bench") == 0)
        snprintf(buf, size, ".");
}

static const char b64_digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* @p len bytes of @p in as base64 into @p out (room for 4/3 len + 4); its length. */
static size_t b64_encode(const char *in, size_t len, char *out)
{
    const unsigned char *p = (const unsigned char *)in;
    size_t i, k = 0;

    for (i = 0; i + 2 < len; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];

        out[k++] = b64_digits[v >> 18 & 63];
        out[k++] = b64_digits[v >> 12 & 63];
        out[k++] = b64_digits[v >> 6 & 63];
        out[k++] = b64_digits[v & 63];
    }
    if (i < len) {
        uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < len ? (uint32_t)p[i + 1] << 8 : 0u);

        out[k++] = b64_digits[v >> 18 & 63];
        out[k++] = b64_digits[v >> 12 & 63];
        out[k++] = i + 1 < len ? b64_digits[v >> 6 & 63] : '=';
        out[k++] = '=';
    }
    out[k] = '\0';
    return k;
}

/* Base64 from @p in up to its closing '"' into @p out (@p size bytes); -1 if malformed. */
static int b64_decode(const char *in, char *out, size_t size)
{
    uint32_t v = 0;
    size_t k = 0;
    int bits = 0;

    for (; *in != '"' && *in != '\0'; in++) {
        const char *d = *in != '=' ? strchr(b64_digits, *in) : NULL;

        if (*in == '=')
            continue;
        if (d == NULL)
            return -1;
        v = v << 6 | (uint32_t)(d - b64_digits);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            if (k + 1 >= size)
                return -1;
            out[k++] = (char)(v >> bits & 0xff);
        }
    }
    out[k] = '\0';
    return *in == '"' ? 0 : -1;
}

/* Just after "@p name":" in @p from, or NULL. */
static const char *json_field(const char *from, const char *name)
{
    char pat[64];
    const char *at;

    snprintf(pat, sizeof(pat), "\"%s\":\"", name);
    at = from != NULL ? strstr(from, pat) : NULL;
    return at != NULL ? at + strlen(pat) : NULL;
}

static int json_u64(const char *from, const char *name, uint64_t *out)
{
    const char *at = json_field(from, name);
    char *end;

    if (at == NULL)
        return -1;
    errno = 0;
    *out = strtoull(at, &end, 10);
    return errno == 0 && *end == '"' ? 0 : -1;
}

/* ==== the cluster ==== */

struct cluster {
    char members[MAX_MEMBERS][280]; /* "host:port" */
    size_t n;
    char prefix[200]; /* idmint's key prefix, no trailing '/' */
};

/* "etcd://h1:p,h2:p/prefix" into @p cl; 0 or -1. */
static int cluster_parse(const char *url, struct cluster *cl)
{
    const char *p, *hosts_end;
    size_t plen;

    memset(cl, 0, sizeof(*cl));
    if (strncmp(url, "etcd://", 7) != 0)
        return -1;
    p = url + 7;
    hosts_end = p + strcspn(p, "/");
    while (p < hosts_end && cl->n < MAX_MEMBERS) {
        size_t len = strcspn(p, ",/");

        if (len == 0 || len >= sizeof(cl->members[0]))
            return -1;
        memcpy(cl->members[cl->n++], p, len);
        p += len + (p[len] == ',');
    }
    plen = strlen(hosts_end);
    while (plen > 0 && hosts_end[plen - 1] == '/')
        plen--;
    if (plen >= sizeof(cl->prefix))
        return -1;
    if (plen == 0)
        snprintf(cl->prefix, sizeof(cl->prefix), "/idmint");
    else
        snprintf(cl->prefix, sizeof(cl->prefix), "%.*s", (int)plen, hosts_end);
    return cl->n > 0 ? 0 : -1;
}

/* ==== the bare client: one curl handle, one member, keep-alive ==== */

struct raw {
    CURL *curl;
    struct curl_slist *headers;
    char base[300]; /* "http://host:port" */
    char *reply;    /* NUL-terminated body of the last reply */
    size_t len, cap;
};

static size_t raw_on_data(char *data, size_t size, size_t nmemb, void *arg)
{
    struct raw *c = arg;
    size_t n = size * nmemb;

    if (c->len + n + 1 > c->cap) {
        size_t cap = c->cap != 0 ? c->cap : 4096;
        char *grown;

        while (cap < c->len + n + 1)
            cap *= 2;
        if ((grown = realloc(c->reply, cap)) == NULL)
            return 0;
        c->reply = grown;
        c->cap = cap;
    }
    memcpy(c->reply + c->len, data, n);
    c->len += n;
    c->reply[c->len] = '\0';
    return n;
}

static int raw_open(struct raw *c, const char *member)
{
    memset(c, 0, sizeof(*c));
    if (idmint__curl_load() != 0 || (c->curl = idmint__curl.easy_init()) == NULL)
        return -1;
    snprintf(c->base, sizeof(c->base), "http://%s", member);
    c->headers = idmint__curl.slist_append(NULL, "Content-Type: application/json");
    /* As the store: no 100-continue round trip before a body. */
    if (c->headers != NULL)
        c->headers = idmint__curl.slist_append(c->headers, "Expect:");
    if (c->headers == NULL)
        return -1;
    idmint__curl.easy_setopt(c->curl, CURLOPT_HTTPHEADER, c->headers);
    idmint__curl.easy_setopt(c->curl, CURLOPT_WRITEFUNCTION, raw_on_data);
    idmint__curl.easy_setopt(c->curl, CURLOPT_WRITEDATA, c);
    idmint__curl.easy_setopt(c->curl, CURLOPT_NOSIGNAL, 1L);
    idmint__curl.easy_setopt(c->curl, CURLOPT_PROXY, "");
    idmint__curl.easy_setopt(c->curl, CURLOPT_TIMEOUT_MS, 5000L);
    return 0;
}

static void raw_close(struct raw *c)
{
    if (c->curl != NULL)
        idmint__curl.easy_cleanup(c->curl);
    if (c->headers != NULL)
        idmint__curl.slist_free_all(c->headers);
    free(c->reply);
    memset(c, 0, sizeof(*c));
}

/* POST @p body (GET when NULL) to @p path; 0 on a 200 answer, in c->reply. */
static int raw_call(struct raw *c, const char *path, const char *body)
{
    char url[400];
    long status = 0;

    snprintf(url, sizeof(url), "%s%s", c->base, path);
    c->len = 0;
    idmint__curl.easy_setopt(c->curl, CURLOPT_URL, url);
    if (body != NULL) {
        idmint__curl.easy_setopt(c->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body));
        idmint__curl.easy_setopt(c->curl, CURLOPT_POSTFIELDS, body);
    } else {
        idmint__curl.easy_setopt(c->curl, CURLOPT_HTTPGET, 1L);
    }
    if (idmint__curl.easy_perform(c->curl) != CURLE_OK || c->reply == NULL)
        return -1;
    idmint__curl.easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &status);
    return status == 200 ? 0 : -1;
}

/*
 * The bare client's counter: a key whose value is idmint's namespace JSON
 * text with only next_value changed (same size), and its request records
 * under a prefix of their own, named as idmint names them.
 */
struct raw_counter {
    char key64[700];   /* base64 of the counter key */
    char rec[600];     /* the record key up to the request id */
    char head[1500];   /* the value up to next_value's digits */
    char tail[1500];   /* the value after them */
    uint64_t next;     /* next_value as last seen */
    int64_t mod_rev;   /* the counter key's mod_revision as last seen */
    uint64_t attempts; /* txns sent */
};

/* The counter's value and mod_revision from the first kv of c->reply. */
static int raw_take_kv(struct raw *c, struct raw_counter *k)
{
    const char *kvs = strstr(c->reply, "\"kvs\":"), *v;
    char value[3000];
    uint64_t rev;

    if (kvs == NULL || json_u64(kvs, "mod_revision", &rev) != 0 ||
        (v = json_field(kvs, "value")) == NULL || b64_decode(v, value, sizeof(value)) != 0 ||
        json_u64(value, "next_value", &k->next) != 0)
        return -1;
    k->mod_rev = (int64_t)rev;
    return 0;
}

static int raw_read_counter(struct raw *c, struct raw_counter *k)
{
    char body[1024];

    snprintf(body, sizeof(body), "{\"key\":\"%s\"}", k->key64);
    return raw_call(c, "/v3/kv/range", body) == 0 ? raw_take_kv(c, k) : -1;
}

/*
 * One txn, as the store builds it: compare the counter's mod_revision and
 * the record's create_revision == 0; put the counter (next_value + BLOCK)
 * and the record; the failure branch ranges both. 1 when it applied, 0 when
 * a compare failed (the counter taken from the failure branch), -1 on error.
 */
static int raw_reserve(struct raw *c, struct raw_counter *k, uint64_t seq)
{
    char req[IDMINT__REQUEST_ID_LEN], key[700], value[3000], rec[256];
    char key64[1000], value64[4100], rec64[400], body[BODY_MAX];
    uint64_t rev;
    int n;

    idmint__range_request_id(seq, req);
    snprintf(key, sizeof(key), "%s%s", k->rec, req);
    snprintf(value, sizeof(value), "%s%" PRIu64 "%s", k->head, k->next + BLOCK, k->tail);
    snprintf(rec, sizeof(rec),
             "{\"count\":\"%d\",\"start\":\"%" PRIu64 "\",\"end\":\"%" PRIu64
             "\",\"created_ms\":\"%" PRId64 "\"}",
             BLOCK, k->next, k->next + BLOCK, unix_ms());
    b64_encode(key, strlen(key), key64);
    b64_encode(value, strlen(value), value64);
    b64_encode(rec, strlen(rec), rec64);
    n = snprintf(body, sizeof(body),
                 "{\"compare\":[{\"key\":\"%s\",\"target\":\"MOD\",\"result\":\"EQUAL\","
                 "\"mod_revision\":\"%" PRId64 "\"},{\"key\":\"%s\",\"target\":\"CREATE\","
                 "\"result\":\"EQUAL\",\"create_revision\":\"0\"}],"
                 "\"success\":[{\"request_put\":{\"key\":\"%s\",\"value\":\"%s\"}},"
                 "{\"request_put\":{\"key\":\"%s\",\"value\":\"%s\"}}],"
                 "\"failure\":[{\"request_range\":{\"key\":\"%s\"}},"
                 "{\"request_range\":{\"key\":\"%s\"}}]}",
                 k->key64, k->mod_rev, key64, k->key64, value64, key64, rec64, k->key64, key64);
    if (n < 0 || (size_t)n >= sizeof(body))
        return -1;
    k->attempts++;
    if (raw_call(c, "/v3/kv/txn", body) != 0)
        return -1;
    if (strstr(c->reply, "\"succeeded\":true") != NULL) {
        /* The header's revision is the one this txn wrote. */
        if (json_u64(c->reply, "revision", &rev) != 0)
            return -1;
        k->mod_rev = (int64_t)rev;
        k->next += BLOCK;
        return 1;
    }
    /* A record of ours already there (a second "kvs") cannot happen: fresh ids. */
    if (raw_take_kv(c, k) != 0 || strstr(strstr(c->reply, "\"kvs\":") + 1, "\"kvs\":") != NULL)
        return -1;
    return 0;
}

/* ==== one side of a round: N caller processes ==== */

/*
 * raw_wait is raw with idmint's waits after a lost compare: none after the
 * first (its view was only old), then a random 0-2, 0-4, ... ms, at most
 * 16 ms, and a read of the counter before the next txn, as
 * etcd_range_reserve() and lost_backoff() in src/store/store_etcd.c do.
 */
enum side { SIDE_IDMINT, SIDE_RAW, SIDE_RAW_WAIT, N_SIDES };

static const char *const side_names[N_SIDES] = {"idmint", "raw", "raw+wait"};

struct bench {
    struct cluster cl;
    char ns[64];
    char raw_prefix[220]; /* the bare client's key prefix */
    char head[1500], tail[1500];
};

struct caller_out {
    uint64_t done;     /* reservations */
    uint64_t attempts; /* txns sent (the bare client only) */
};

static void caller(const struct bench *b, enum side side, const char *member, double secs, int go,
                   int out)
{
    struct caller_out res = {0, 0};
    char inc[33], req[IDMINT__REQUEST_ID_LEN], url[600];
    idmint_authority *a = NULL;
    struct raw_counter *k = NULL;
    uint64_t jitter = (uint64_t)getpid() << 20 | 1u, losses = 0;
    struct raw c;
    double end;
    int code = 0;

    memset(&c, 0, sizeof(c));
    /* Fresh per caller and round: a pid can come back in a later round. */
    if (idmint__incarnation(inc) != 0) {
        fprintf(stderr, "bench_etcd_reserve: incarnation: %s\n", idmint_errmsg());
        _exit(2);
    }
    if (side == SIDE_IDMINT) {
        snprintf(url, sizeof(url), "etcd://%s%s", member, b->cl.prefix);
        if (idmint_authority_open(&a, url, 0) != 0) {
            fprintf(stderr, "bench_etcd_reserve: open %s: %s\n", url, idmint_errmsg());
            _exit(2);
        }
    } else {
        char key[600];

        if ((k = calloc(1, sizeof(*k))) == NULL || raw_open(&c, member) != 0) {
            fprintf(stderr, "bench_etcd_reserve: cannot set up a bare client\n");
            _exit(2);
        }
        snprintf(key, sizeof(key), "%s/ns/%s", b->raw_prefix, b->ns);
        b64_encode(key, strlen(key), k->key64);
        snprintf(k->rec, sizeof(k->rec), "%s/inc/%s/%s/", b->raw_prefix, b->ns, inc);
        memcpy(k->head, b->head, sizeof(k->head));
        memcpy(k->tail, b->tail, sizeof(k->tail));
        /* Connects, as the store's open does with its schema read. */
        if (raw_read_counter(&c, k) != 0) {
            fprintf(stderr, "bench_etcd_reserve: reading the counter on %s failed\n", member);
            _exit(2);
        }
    }
    wait_closed(go);
    end = seconds_now() + secs;
    while (seconds_now() < end) {
        if (side == SIDE_IDMINT) {
            struct idmint__range r = {0};

            idmint__range_request_id(res.done, req); /* as the library's own refills name them */
            if (idmint__authority_range_reserve(a, b->ns, inc, req, BLOCK, &r) != 0) {
                fprintf(stderr, "bench_etcd_reserve: reserve: %s\n", idmint_errmsg());
                code = 3;
                break;
            }
            res.done++;
        } else {
            int rc = raw_reserve(&c, k, res.done);

            if (rc < 0) {
                fprintf(stderr, "bench_etcd_reserve: bare txn on %s failed: %.300s\n", member,
                        c.reply != NULL ? c.reply : "(no reply)");
                code = 3;
                break;
            }
            res.done += (uint64_t)rc;
            losses = rc == 0 ? losses + 1 : 0;
            if (side == SIDE_RAW_WAIT && losses > 1) {
                uint64_t span_us = losses > 4 ? 16000u : UINT64_C(2000) << (losses - 2);

                jitter ^= jitter << 13;
                jitter ^= jitter >> 7;
                jitter ^= jitter << 17;
                idmint__sleep_us(jitter % span_us);
                if (raw_read_counter(&c, k) != 0) {
                    fprintf(stderr, "bench_etcd_reserve: reading the counter on %s failed\n",
                            member);
                    code = 3;
                    break;
                }
            }
        }
    }
    if (k != NULL)
        res.attempts = k->attempts;
    idmint_authority_close(a);
    raw_close(&c);
    free(k);
    if (write(out, &res, sizeof(res)) != (ssize_t)sizeof(res))
        code = 4;
    _exit(code);
}

/* What etcd counted, summed over the members: Txn requests, raft entries. */
struct etcd_counts {
    double txns;      /* grpc Txn calls answered OK, all members */
    double proposals; /* raft entries committed (the highest member) */
};

static double metric(const char *text, const char *line_start)
{
    const char *at = strstr(text, line_start);

    return at != NULL ? strtod(at + strlen(line_start), NULL) : 0;
}

static int etcd_counts_read(const struct cluster *cl, struct etcd_counts *out)
{
    memset(out, 0, sizeof(*out));
    for (size_t i = 0; i < cl->n; i++) {
        struct raw c;
        double p;

        if (raw_open(&c, cl->members[i]) != 0 || raw_call(&c, "/metrics", NULL) != 0) {
            raw_close(&c);
            return -1;
        }
        out->txns += metric(c.reply, "\ngrpc_server_handled_total{grpc_code=\"OK\","
                                     "grpc_method=\"Txn\",grpc_service=\"etcdserverpb.KV\","
                                     "grpc_type=\"unary\"} ");
        p = metric(c.reply, "\netcd_server_proposals_committed_total ");
        if (p > out->proposals)
            out->proposals = p;
        raw_close(&c);
    }
    return 0;
}

/* User + system time of the waited-for children so far. */
static double children_cpu_s(void)
{
    struct rusage ru;

    if (getrusage(RUSAGE_CHILDREN, &ru) != 0)
        return 0;
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

struct side_run {
    double rate;      /* reservations per second */
    double done;      /* reservations */
    double attempts;  /* txns the bare client sent; 0 for idmint */
    double cpu_s;     /* the callers' CPU time, user + system */
    double txns;      /* Txn requests etcd answered */
    double proposals; /* raft entries committed */
};

/*
 * @p procs callers of @p side for @p secs; caller i talks to member
 * (i + @p shift) % n. 0, or -1 when a caller failed.
 */
static int run_side(const struct bench *b, enum side side, unsigned procs, unsigned shift,
                    double secs, struct side_run *out)
{
    struct etcd_counts before, after;
    pid_t pids[MAX_PROCS];
    int go[2], res[2], failed = 0;
    struct caller_out r;
    double t0, t1, cpu0;

    memset(out, 0, sizeof(*out));
    if (etcd_counts_read(&b->cl, &before) != 0 || pipe(go) != 0 || pipe(res) != 0)
        return -1;
    cpu0 = children_cpu_s();
    for (unsigned i = 0; i < procs; i++) {
        pids[i] = fork();
        if (pids[i] < 0)
            return -1;
        if (pids[i] == 0) {
            close(go[1]);
            close(res[0]);
            caller(b, side, b->cl.members[(i + shift) % b->cl.n], secs, go[0], res[1]);
        }
    }
    close(go[0]);
    close(res[1]);
    idmint__sleep_ms(300); /* let every caller connect */
    t0 = seconds_now();
    close(go[1]);
    for (unsigned i = 0; i < procs; i++) {
        if (read(res[0], &r, sizeof(r)) == (ssize_t)sizeof(r)) {
            out->done += (double)r.done;
            out->attempts += (double)r.attempts;
        } else {
            failed = 1;
        }
    }
    t1 = seconds_now();
    close(res[0]);
    for (unsigned i = 0; i < procs; i++) {
        int status;

        if (waitpid(pids[i], &status, 0) != pids[i] || !WIFEXITED(status) ||
            WEXITSTATUS(status) != 0)
            failed = 1;
    }
    out->cpu_s = children_cpu_s() - cpu0;
    if (failed || etcd_counts_read(&b->cl, &after) != 0)
        return -1;
    out->rate = out->done / (t1 - t0);
    out->txns = after.txns - before.txns;
    out->proposals = after.proposals - before.proposals;
    return 0;
}

/* ==== setup ==== */

static int make_range_ns(const char *url, const char *ns)
{
    idmint_authority *a = NULL;
    idmint_ns_info info;
    int rc;

    idmint_ns_info_init(&info, IDMINT_KIND_RANGE);
    snprintf(info.name, sizeof(info.name), "%s", ns);
    info.block = BLOCK;
    info.max_block = BLOCK;
    if ((rc = idmint_authority_open(&a, url, 0)) == 0)
        rc = idmint_ns_create(a, &info);
    if (rc != 0)
        fprintf(stderr, "bench_etcd_reserve: create %s on %s: %s\n", ns, url, idmint_errmsg());
    idmint_authority_close(a);
    return rc;
}

/*
 * Read idmint's namespace value for b->ns and cut it around next_value, so
 * the bare client's counter is the same text; then create that counter.
 */
static int make_raw_counter(struct bench *b)
{
    char key[600], key64[1000], value[3000], value64[4100], body[BODY_MAX];
    const char *v, *digits;
    struct raw c;
    int rc = -1;

    if (raw_open(&c, b->cl.members[0]) != 0)
        goto out;
    snprintf(key, sizeof(key), "%s/ns/%s", b->cl.prefix, b->ns);
    b64_encode(key, strlen(key), key64);
    snprintf(body, sizeof(body), "{\"key\":\"%s\"}", key64);
    if (raw_call(&c, "/v3/kv/range", body) != 0 || (v = json_field(c.reply, "value")) == NULL ||
        b64_decode(v, value, sizeof(value)) != 0 ||
        (digits = json_field(value, "next_value")) == NULL)
        goto out;
    snprintf(b->head, sizeof(b->head), "%.*s", (int)(digits - value), value);
    snprintf(b->tail, sizeof(b->tail), "%s", digits + strspn(digits, "0123456789"));
    snprintf(key, sizeof(key), "%s/ns/%s", b->raw_prefix, b->ns);
    b64_encode(key, strlen(key), key64);
    snprintf(value, sizeof(value), "%s1%s", b->head, b->tail);
    b64_encode(value, strlen(value), value64);
    snprintf(body, sizeof(body), "{\"key\":\"%s\",\"value\":\"%s\"}", key64, value64);
    rc = raw_call(&c, "/v3/kv/put", body);
out:
    raw_close(&c);
    if (rc != 0)
        fprintf(stderr, "bench_etcd_reserve: cannot set up the bare client's counter\n");
    return rc;
}

/* Delete the keys under @p prefix + "/" (a bench's records). */
static void delete_prefix(const struct cluster *cl, const char *prefix)
{
    char start[700], end[700], s64[1000], e64[1000], body[2200];
    struct raw c;
    size_t len;

    snprintf(start, sizeof(start), "%s/", prefix);
    len = strlen(start);
    memcpy(end, start, len + 1);
    end[len - 1] = (char)(end[len - 1] + 1);
    b64_encode(start, len, s64);
    b64_encode(end, len, e64);
    snprintf(body, sizeof(body), "{\"key\":\"%s\",\"range_end\":\"%s\"}", s64, e64);
    if (raw_open(&c, cl->members[0]) == 0)
        (void)raw_call(&c, "/v3/kv/deleterange", body);
    raw_close(&c);
}

/* Compact away the history a case left (own cluster only: it drops old revisions). */
static void compact_now(const struct cluster *cl)
{
    char body[128];
    uint64_t rev;
    struct raw c;

    if (raw_open(&c, cl->members[0]) == 0 &&
        raw_call(&c, "/v3/kv/range", "{\"key\":\"AA==\"}") == 0 &&
        json_u64(c.reply, "revision", &rev) == 0) {
        snprintf(body, sizeof(body), "{\"revision\":\"%" PRIu64 "\"}", rev);
        (void)raw_call(&c, "/v3/kv/compaction", body);
    }
    raw_close(&c);
}

/* The index of the member that leads, or -1. */
static int leader_index(const struct cluster *cl)
{
    int found = -1;

    for (size_t i = 0; i < cl->n && found < 0; i++) {
        uint64_t id, leader;
        struct raw c;

        if (raw_open(&c, cl->members[i]) == 0 &&
            raw_call(&c, "/v3/maintenance/status", "{}") == 0 &&
            json_u64(c.reply, "member_id", &id) == 0 && json_u64(c.reply, "leader", &leader) == 0 &&
            id == leader)
            found = (int)i;
        raw_close(&c);
    }
    return found;
}

/* ==== results ==== */

struct bench_case {
    unsigned procs;
    unsigned rounds;
    unsigned n_sides; /* raw_wait only where callers can collide */
    int failed;
    struct side_run sum[N_SIDES];       /* per side, summed over the rounds */
    double ratios[N_SIDES][MAX_ROUNDS]; /* idmint / that side, per round */
};

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

/* The median of the per-round ratios to @p side (sorts them: lowest first afterwards). */
static double median_ratio(struct bench_case *c, enum side side)
{
    double *x = c->ratios[side];

    qsort(x, c->rounds, sizeof(x[0]), cmp_double);
    return c->rounds % 2 ? x[c->rounds / 2] : (x[c->rounds / 2 - 1] + x[c->rounds / 2]) / 2;
}

/* The smallest of 1, 2, 5 x 10^k at or above @p v. */
static double round_up_125(double v)
{
    double p = 1;

    while (p * 10 <= v)
        p *= 10;
    return v <= p ? p : v <= 2 * p ? 2 * p : v <= 5 * p ? 5 * p : 10 * p;
}

static void print_fleet(const char *label, double rate)
{
    double ids = FLEET_PROCS * FLEET_ID_SEC;
    double full = ids / rate, half = ids / (rate / 2);

    printf("  at %-26s %6.0f reservations/s: block >= %8.0f (%.0f); at half of it: block >= "
           "%8.0f (%.0f), a refill per process every %.1f s\n",
           label, rate, full, round_up_125(full), half, round_up_125(half),
           round_up_125(half) / FLEET_ID_SEC);
}

int main(int argc, char **argv)
{
    static const unsigned callers[] = {1, 8};
    static struct bench_case cases[2];
    static struct bench b;
    char tmpl[] = "/tmp/idmint-bench-etcd-XXXXXX", src[1024], cmd[4096], line[1024];
    char *url = NULL, *dir;
    double secs = 8.0;
    int own = 0, failed = 0, leader;
    unsigned rounds;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) {
            char *end;

            secs = strtod(argv[++i], &end);
            if (*end != '\0' || !(secs >= 1 && secs <= MAX_ROUNDS)) {
                fprintf(stderr, "bench_etcd_reserve: --seconds: want 1..%d, got '%s'\n", MAX_ROUNDS,
                        argv[i]);
                return 2;
            }
        } else if (strcmp(argv[i], "--etcd-url") == 0 && i + 1 < argc) {
            url = strdup(argv[++i]);
        } else {
            fprintf(stderr, "usage: bench_etcd_reserve [--seconds S] [--etcd-url URL]\n"
                            "  S: per case and side (default 8), in rounds of 1 s\n"
                            "  URL defaults to $IDMINT_TEST_ETCD_URL, the file $IDMINT_ETCD_ENV,\n"
                            "  or a private cluster started with tests/support/etcd-start.sh\n");
            return 2;
        }
    }
    rounds = (unsigned)secs;
    if ((dir = mkdtemp(tmpl)) == NULL) {
        fprintf(stderr, "bench_etcd_reserve: mkdtemp: %s\n", strerror(errno));
        return 1;
    }
    source_dir(src, sizeof(src));
    if (url == NULL)
        url = ts_etcd_url();
    if (url == NULL) {
        snprintf(cmd, sizeof(cmd),
                 "bash '%s/tests/support/etcd-start.sh' '%s/etcd' && cat '%s/etcd/env'", src, dir,
                 dir);
        if (sh_line(cmd, line, sizeof(line)) != 0 || line[0] == '\0') {
            fprintf(stderr, "bench_etcd_reserve: cannot start etcd with %s\n", cmd);
            return 1;
        }
        url = strdup(line);
        own = 1;
    }
    if (url == NULL || cluster_parse(url, &b.cl) != 0) {
        fprintf(stderr, "bench_etcd_reserve: not an etcd://HOST:PORT[,...][/PREFIX] URL: %s\n",
                url != NULL ? url : "(none)");
        return 1;
    }
    snprintf(b.raw_prefix, sizeof(b.raw_prefix), "%s-raw", b.cl.prefix);
    leader = leader_index(&b.cl);

    printf("durable range reservations per second on etcd (%d values each, %u rounds of 1 s "
           "per case and side, the order rotated each round)\n",
           BLOCK, rounds);
    printf("etcd: %s (leader: member %d)\n", url, leader + 1);
    for (int k = 0; k < 2; k++) {
        struct bench_case *c = &cases[k];
        struct side_run warm;

        c->procs = callers[k];
        c->n_sides = c->procs > 1 ? N_SIDES : SIDE_RAW_WAIT;
        snprintf(b.ns, sizeof(b.ns), "bench-%lx-%x-%u", (unsigned long)time(NULL),
                 (unsigned)getpid(), callers[k]);
        if (make_range_ns(url, b.ns) != 0 || make_raw_counter(&b) != 0) {
            c->failed = 1;
            continue;
        }
        /* One untimed round each: connections, etcd's caches, the page cache. */
        for (unsigned side = 0; side < c->n_sides; side++)
            (void)run_side(&b, (enum side)side, c->procs, 0, 0.5, &warm);
        printf("%u caller%s:\n", c->procs, c->procs == 1 ? "" : "s");
        /*
         * The sides take turns in short rounds (the disk's flush time drifts
         * within a minute; see docs/benchmarks-store.md), on the same
         * members: caller i of any side talks to member (i + round) % n, so
         * one caller meets the leader and the followers in turn.
         */
        for (unsigned r = 0; r < rounds && !c->failed; r++) {
            struct side_run s[N_SIDES];

            for (unsigned turn = 0; turn < c->n_sides && !c->failed; turn++) {
                enum side side = (enum side)((turn + r) % c->n_sides);

                if (run_side(&b, side, c->procs, r, 1.0, &s[side]) != 0 || s[side].rate <= 0)
                    c->failed = 1;
            }
            if (c->failed)
                break;
            printf("  round %2u, caller 1 on member %zu%-9s", r + 1, r % b.cl.n + 1,
                   (int)(r % b.cl.n) == leader ? " (leader)" : "");
            for (unsigned side = 0; side < c->n_sides; side++) {
                c->sum[side].rate += s[side].rate;
                c->sum[side].done += s[side].done;
                c->sum[side].attempts += s[side].attempts;
                c->sum[side].cpu_s += s[side].cpu_s;
                c->sum[side].txns += s[side].txns;
                c->sum[side].proposals += s[side].proposals;
                c->ratios[side][c->rounds] = s[SIDE_IDMINT].rate / s[side].rate;
                printf(" %s %5.0f/s", side_names[side], s[side].rate);
            }
            for (unsigned side = SIDE_RAW; side < c->n_sides; side++)
                printf(", %s/%s %3.0f%%", side_names[SIDE_IDMINT], side_names[side],
                       100.0 * c->ratios[side][c->rounds]);
            printf("\n");
            c->rounds++;
        }
        delete_prefix(&b.cl, b.raw_prefix);
        snprintf(line, sizeof(line), "%s/inc/%s", b.cl.prefix, b.ns);
        delete_prefix(&b.cl, line);
        if (own)
            compact_now(&b.cl);
    }

    printf("\n%-7s %-8s %9s %13s %12s %12s %10s\n", "callers", "side", "per s", "idmint/side",
           "rounds", "txns, raft", "client CPU");
    for (int k = 0; k < 2; k++) {
        struct bench_case *c = &cases[k];

        if (c->failed || c->rounds == 0) {
            printf("%-7u %-8s\n", c->procs, "error");
            failed = 1;
            continue;
        }
        for (unsigned side = 0; side < c->n_sides; side++) {
            const struct side_run *o = &c->sum[side];
            char ratio[32] = "", range[32] = "";

            if (side != SIDE_IDMINT) {
                double median = median_ratio(c, (enum side)side);

                snprintf(ratio, sizeof(ratio), "%.0f%%", 100.0 * median);
                snprintf(range, sizeof(range), "%.0f-%.0f%%", 100.0 * c->ratios[side][0],
                         100.0 * c->ratios[side][c->rounds - 1]);
            }
            printf("%-7u %-8s %9.0f %13s %12s %5.2f, %4.2f %7.0f us\n", c->procs, side_names[side],
                   o->rate / c->rounds, ratio, range, o->txns / o->done, o->proposals / o->done,
                   1e6 * o->cpu_s / o->done);
        }
    }
    printf("per s: mean over the rounds; idmint/side: the median of the rounds' own ratios\n"
           "(run back to back); rounds: their lowest and highest. txns: Txn requests etcd\n"
           "answered (read-only ones included), raft: proposals committed, both per\n"
           "reservation; client CPU: the callers' user + system time per reservation.\n");
    printf("idmint: idmint_authority_open(etcd://MEMBER/prefix) per caller process, then\n"
           "idmint__authority_range_reserve(%d values) in a loop, each call a new request id.\n"
           "raw: libcurl, one keep-alive connection per process, the same txn text by snprintf\n"
           "(same keys and value sizes), the counter taken from the failure branch on a lost\n"
           "compare and the txn sent again at once. raw+wait: raw with idmint's waits after a\n"
           "lost compare (none after the first, then random 0-2, 0-4 ... 16 ms, each followed\n"
           "by a read of the counter).\n",
           BLOCK);
    printf("target (>= %.0f%% of raw):", 100.0 * TARGET_RAW);
    for (int k = 0; k < 2; k++)
        printf(" %u caller%s %s%s", cases[k].procs, cases[k].procs == 1 ? "" : "s",
               cases[k].failed || cases[k].rounds == 0           ? "error"
               : median_ratio(&cases[k], SIDE_RAW) >= TARGET_RAW ? "met"
                                                                 : "NOT MET",
               k == 0 ? "," : "\n");
    printf("\nfleet: %d processes x %.0f IDs/s = %.0f IDs/s on one namespace; block = IDs/s "
           "over reservations/s (rounded up to 1-2-5):\n",
           FLEET_PROCS, FLEET_ID_SEC, FLEET_PROCS * FLEET_ID_SEC);
    for (int k = 0; k < 2; k++) {
        char label[64];

        if (cases[k].failed || cases[k].rounds == 0)
            continue;
        snprintf(label, sizeof(label), "idmint's %u-caller rate", cases[k].procs);
        print_fleet(label, cases[k].sum[SIDE_IDMINT].rate / cases[k].rounds);
    }

    if (own) {
        snprintf(cmd, sizeof(cmd), "bash '%s/tests/support/etcd-stop.sh' '%s/etcd' && echo ok", src,
                 dir);
        (void)sh_line(cmd, line, sizeof(line));
    }
    snprintf(cmd, sizeof(cmd), "rm -rf '%s' && echo ok", dir);
    (void)sh_line(cmd, line, sizeof(line));
    free(url);
    return failed;
}
