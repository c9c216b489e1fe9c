/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for the etcd store (src/store/etcd/) beyond the store contract suite:
 * URLs, members that do not answer, the schema key, writes whose reply
 * is lost, and what the key layout of schema 3 promises (grants, their age
 * index, batches in parts). A lost reply is made by a proxy in this process that forwards a
 * request to a real member, reads the member's answer, and closes the
 * connection instead of passing it on: the write was applied and the
 * client cannot know. Needs the etcd fixture ($IDMINT_ETCD_ENV).
 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "idmint.h"
#include "internal.h"
#include "store.h"
#include "testsupport.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NOW_MS   INT64_C(1780000000000)
#define ACTOR    "test-actor"
#define HOLDER_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define HOLDER_B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"

/* ==== the cluster of the fixture ==== */

static char *cluster_url(void)
{
    char *url = ts_etcd_url();

    if (url == NULL)
        fail_msg("no etcd: set IDMINT_TEST_ETCD_URL, or IDMINT_ETCD_ENV to the file "
                 "tests/support/etcd-start.sh writes");
    return url;
}

/* The port of the first member of "etcd://127.0.0.1:PORT,...". */
static unsigned first_port(const char *url)
{
    const char *p = strstr(url, "127.0.0.1:");
    unsigned port = 0;

    assert_non_null(p);
    assert_int_equal(sscanf(p + 10, "%u", &port), 1);
    return port;
}

/* "etcd://MEMBERS/PREFIX" with a fresh prefix: every test gets its own store. */
static void fresh_url(const char *url, const char *members, char *out, size_t size)
{
    static unsigned seq;
    const char *at = url + strlen("etcd://"), *slash = strchr(at, '/');

    if (members == NULL) {
        snprintf(out, size, "etcd://%.*s/idmint-unit/t%lx-%x-%u",
                 slash != NULL ? (int)(slash - at) : (int)strlen(at), at, (unsigned long)time(NULL),
                 (unsigned)getpid(), seq++);
        return;
    }
    snprintf(out, size, "etcd://%s/idmint-unit/t%lx-%x-%u", members, (unsigned long)time(NULL),
             (unsigned)getpid(), seq++);
}

/* ==== a little HTTP over loopback ==== */

static int connect_port(unsigned port)
{
    struct sockaddr_in sa;
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    if (fd < 0)
        return -1;
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static int write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);

        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/*
 * Read one HTTP message (head and a Content-Length body) from @p fd into
 * @p buf (NUL-terminated). Its length, or -1 at EOF or on error.
 */
static ssize_t read_message(int fd, char *buf, size_t size)
{
    size_t len = 0, want = 0;
    char *head_end = NULL;

    for (;;) {
        ssize_t r;

        if (head_end != NULL && len >= want)
            return (ssize_t)len;
        if (len + 1 >= size)
            return -1;
        r = read(fd, buf + len, size - 1 - len);
        if (r <= 0)
            return -1;
        len += (size_t)r;
        buf[len] = '\0';
        if (head_end == NULL && (head_end = strstr(buf, "\r\n\r\n")) != NULL) {
            const char *cl = buf;
            unsigned long body = 0;

            for (; (cl = strchr(cl, '\n')) != NULL; cl++)
                if (strncasecmp(cl + 1, "Content-Length:", 15) == 0) {
                    body = strtoul(cl + 16, NULL, 10);
                    break;
                }
            want = (size_t)(head_end + 4 - buf) + body;
        }
    }
}

/*
 * POST @p body to @p path on 127.0.0.1:@p port; the reply status, or -1.
 * The whole reply into @p out (@p size bytes) when it is not NULL.
 */
static int http_post_reply(unsigned port, const char *path, const char *body, char *out,
                           size_t size)
{
    char req[2048], reply[8192];
    int fd = connect_port(port), status = -1;

    if (fd < 0)
        return -1;
    snprintf(req, sizeof(req),
             "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
             "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
             path, strlen(body), body);
    if (write_all(fd, req, strlen(req)) == 0 && read_message(fd, reply, sizeof(reply)) > 0) {
        sscanf(reply, "HTTP/1.1 %d", &status);
        if (out != NULL)
            snprintf(out, size, "%s", reply);
    }
    close(fd);
    return status;
}

static int http_post(unsigned port, const char *path, const char *body)
{
    return http_post_reply(port, path, body, NULL, 0);
}

static void b64(const char *in, char *out)
{
    static const char d[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t n = strlen(in), i, k = 0;

    for (i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)(unsigned char)in[i] << 16;

        if (i + 1 < n)
            v |= (uint32_t)(unsigned char)in[i + 1] << 8;
        if (i + 2 < n)
            v |= (unsigned char)in[i + 2];
        out[k++] = d[v >> 18 & 63];
        out[k++] = d[v >> 12 & 63];
        out[k++] = i + 1 < n ? d[v >> 6 & 63] : '=';
        out[k++] = i + 2 < n ? d[v & 63] : '=';
    }
    out[k] = '\0';
}

/* ==== a proxy that can lose replies ==== */

struct proxy {
    int listen_fd;
    unsigned port;          /* where the store connects */
    unsigned upstream;      /* a real member */
    atomic_int drop_writes; /* lose the replies of this many more write txns */
    atomic_int dropped;     /* replies lost so far */
    atomic_int forwarded;   /* requests passed to the member */
    pthread_t thread;
};

/* One client connection, request by request (curl keeps it alive). */
static void proxy_serve(struct proxy *p, int client)
{
    static char req[1 << 16], reply[1 << 20];

    for (;;) {
        ssize_t n = read_message(client, req, sizeof(req)), m;
        int up = n > 0 ? connect_port(p->upstream) : -1;
        int is_write =
            n > 0 && strstr(req, "/v3/kv/txn") != NULL && strstr(req, "request_put") != NULL;

        if (up < 0)
            break;
        atomic_fetch_add(&p->forwarded, 1);
        m = write_all(up, req, (size_t)n) == 0 ? read_message(up, reply, sizeof(reply)) : -1;
        close(up);
        if (m < 0)
            break;
        if (is_write && atomic_load(&p->drop_writes) > 0) {
            /* Applied upstream; the client hears nothing. */
            atomic_fetch_sub(&p->drop_writes, 1);
            atomic_fetch_add(&p->dropped, 1);
            break;
        }
        if (write_all(client, reply, (size_t)m) != 0)
            break;
    }
    close(client);
}

static void *proxy_main(void *arg)
{
    struct proxy *p = arg;
    int client;

    /* One connection at a time: the store under test is the only client. */
    while ((client = accept(p->listen_fd, NULL, NULL)) >= 0)
        proxy_serve(p, client);
    return NULL;
}

static void proxy_start(struct proxy *p, unsigned upstream)
{
    struct sockaddr_in sa;
    socklen_t len = sizeof(sa);

    memset(p, 0, sizeof(*p));
    p->upstream = upstream;
    p->listen_fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(p->listen_fd >= 0);
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(p->listen_fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(listen(p->listen_fd, 8), 0);
    assert_int_equal(getsockname(p->listen_fd, (struct sockaddr *)&sa, &len), 0);
    p->port = ntohs(sa.sin_port);
    assert_int_equal(pthread_create(&p->thread, NULL, proxy_main, p), 0);
}

/* Call after closing the store: its connection ends, and shutdown() ends accept(). */
static void proxy_stop(struct proxy *p)
{
    shutdown(p->listen_fd, SHUT_RDWR);
    pthread_join(p->thread, NULL);
    close(p->listen_fd);
}

/* A store on a fresh prefix reached only through @p p. */
static struct store *open_via(struct proxy *p, const char *cluster)
{
    char members[64], url[512];
    struct store *st = NULL;

    snprintf(members, sizeof(members), "127.0.0.1:%u", p->port);
    fresh_url(cluster, members, url, sizeof(url));
    if (idmint__store_open(url, NULL, &st) != 0)
        fail_msg("open %s: %s", url, idmint_errmsg());
    return st;
}

static void make_ns(struct store *st, const char *name, idmint_kind kind)
{
    idmint_ns_info i;

    idmint_ns_info_init(&i, kind);
    snprintf(i.name, sizeof(i.name), "%s", name);
    i.layout.worker_bits = 3;
    i.layout.sequence_bits = 12;
    assert_int_equal(idmint__store_ns_create(st, &i, ACTOR, NOW_MS), 0);
}

/* How many audit records of @p ns have @p action. */
static size_t audit_count(struct store *st, const char *ns, const char *action)
{
    idmint_audit_entry *all = NULL;
    size_t n = 0, i, k = 0;

    assert_int_equal(idmint__store_audit_list(st, 0, SIZE_MAX, &all, &n), 0);
    for (i = 0; i < n; i++)
        k += strcmp(all[i].ns, ns) == 0 && strcmp(all[i].action, action) == 0;
    free(all);
    return k;
}

static void lease_init(struct idmint__lease *l, const char *holder)
{
    memset(l, 0, sizeof(*l));
    snprintf(l->holder, sizeof(l->holder), "%s", holder);
}

/*
 * How many keys start with @p prefix on the member at @p port (a
 * count_only range, read linearizably); -1 when the member does not answer.
 */
static long key_count(unsigned port, const char *prefix)
{
    char end[512], key64[700], end64[700], body[1600], req[2048], reply[8192];
    const char *count;
    size_t len = strlen(prefix);
    int fd = connect_port(port);
    long n = -1;

    assert_true(len > 0 && len < sizeof(end));
    memcpy(end, prefix, len + 1);
    end[len - 1]++; /* the first key after every key with this prefix */
    b64(prefix, key64);
    b64(end, end64);
    snprintf(body, sizeof(body), "{\"key\":\"%s\",\"range_end\":\"%s\",\"count_only\":true}", key64,
             end64);
    snprintf(req, sizeof(req),
             "POST /v3/kv/range HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
             "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
             strlen(body), body);
    if (fd >= 0 && write_all(fd, req, strlen(req)) == 0 &&
        read_message(fd, reply, sizeof(reply)) > 0 && strstr(reply, " 200 ") != NULL)
        n = (count = strstr(reply, "\"count\":\"")) != NULL ? strtol(count + 9, NULL, 10) : 0;
    if (fd >= 0)
        close(fd);
    return n;
}

/* Delete every key that starts with @p prefix on the member at @p port. */
static void raw_delete_prefix(unsigned port, const char *prefix)
{
    char end[512], key64[700], end64[700], body[1600];
    size_t len = strlen(prefix);

    assert_true(len > 0 && len < sizeof(end));
    memcpy(end, prefix, len + 1);
    end[len - 1]++;
    b64(prefix, key64);
    b64(end, end64);
    snprintf(body, sizeof(body), "{\"key\":\"%s\",\"range_end\":\"%s\"}", key64, end64);
    assert_int_equal(http_post(port, "/v3/kv/deleterange", body), 200);
}

/* Put @p value at @p key on the member at @p port. */
static void raw_put(unsigned port, const char *key, const char *value)
{
    char key64[700], value64[700], body[1600];

    b64(key, key64);
    b64(value, value64);
    snprintf(body, sizeof(body), "{\"key\":\"%s\",\"value\":\"%s\"}", key64, value64);
    assert_int_equal(http_post(port, "/v3/kv/put", body), 200);
}

/* The prefix part of "etcd://MEMBERS/PREFIX". */
static const char *url_prefix(const char *url)
{
    const char *p = strchr(url + strlen("etcd://"), '/');

    assert_non_null(p);
    return p;
}

/* How many keys of the store at @p url start with its prefix and @p sub. */
static long store_keys(unsigned port, const char *url, const char *sub)
{
    char key[512];

    snprintf(key, sizeof(key), "%s%s", url_prefix(url), sub);
    return key_count(port, key);
}

/* ==== URLs and members ==== */

static void test_store_etcd__bad_urls_are_invalid_with_a_message(void **state)
{
    static const struct {
        const char *url, *says;
    } bad[] = {
        {"etcd:127.0.0.1:2379", "'//'"},
        {"etcd://", "no member"},
        {"etcd:///prefix", "no member"},
        {"etcd://127.0.0.1:0", "port"},
        {"etcd://127.0.0.1:65536", "port"},
        {"etcd://127.0.0.1:x", "port"},
        {"etcd://127.0.0.1:2379,,127.0.0.1:2380", "empty member"},
        {"etcd://127.0.0.1:2379,", "empty member"},
        {"etcd://user:pw@127.0.0.1:2379", "host"},
        {"etcd://127.0.0.1:2379?x=1", "query"},
        {"etcd://127.0.0.1:2379/pre fix", "prefix"},
        {"etcd://127.0.0.1:2379/a//b", "'//'"},
        {"etcd://[::1:2379", "']'"},
    };
    struct store *st = (struct store *)state;
    size_t i;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int rc = idmint__store_open(bad[i].url, NULL, &st);

        if (rc != IDMINT_EINVAL || strstr(idmint_errmsg(), bad[i].says) == NULL)
            fail_msg("%s: %d %s", bad[i].url, rc, idmint_errmsg());
        assert_ptr_equal(st, (struct store *)state); /* untouched */
    }
}

/* Ports 1 and 2 on loopback: nothing listens, so every connect is refused. */
static void test_store_etcd__no_member_answering_is_unavailable_within_the_deadline(void **state)
{
    struct store *st = NULL;
    uint64_t start_ms = idmint__deadline_now_ms(), took_ms;

    (void)state;
    assert_int_equal(idmint__store_open("etcd://127.0.0.1:1,127.0.0.1:2/x", NULL, &st),
                     IDMINT_EUNAVAILABLE);
    took_ms = idmint__deadline_now_ms() - start_ms;
    assert_null(st);
    assert_non_null(strstr(idmint_errmsg(), "127.0.0.1:"));
    /* The 5 s call budget, and not much more. */
    assert_true(took_ms >= 4000 && took_ms < 8000 * (uint64_t)ts_scale());
}

static void test_store_etcd__dead_members_in_the_list_are_passed_over(void **state)
{
    char *cluster = cluster_url(), members[128], url[512];
    idmint_ns_info got;
    struct store *st = NULL;
    int i;

    (void)state;
    snprintf(members, sizeof(members), "127.0.0.1:1,127.0.0.1:2,127.0.0.1:%u", first_port(cluster));
    fresh_url(cluster, members, url, sizeof(url));
    assert_int_equal(idmint__store_open(url, NULL, &st), 0);
    make_ns(st, "alive", IDMINT_KIND_SNOWFLAKE);
    for (i = 0; i < 5; i++)
        assert_int_equal(idmint__store_ns_get(st, "alive", &got), 0);
    idmint__store_close(st);
    free(cluster);
}

/* ==== the schema key ==== */

static void
test_store_etcd__open_existing_of_an_empty_prefix_is_not_found_and_creates_nothing(void **state)
{
    char *cluster = cluster_url(), url[512];
    struct store *st = NULL;

    (void)state;
    fresh_url(cluster, NULL, url, sizeof(url));
    assert_int_equal(idmint__store_open_flags(url, NULL, STORE_OPEN_EXISTING, &st),
                     IDMINT_ENOTFOUND);
    assert_non_null(strstr(idmint_errmsg(), "nothing has been created"));
    /* Still nothing there: a second look finds the same. */
    assert_int_equal(idmint__store_open_flags(url, NULL, STORE_OPEN_EXISTING, &st),
                     IDMINT_ENOTFOUND);
    assert_int_equal(idmint__store_open(url, NULL, &st), 0);
    idmint__store_close(st);
    assert_int_equal(idmint__store_open_flags(url, NULL, STORE_OPEN_EXISTING, &st), 0);
    idmint__store_close(st);
    free(cluster);
}

/*
 * Under churn (takes and releases by ever new holders, reservations with
 * their records forgotten) idmint's own keys stay bounded: one row per
 * worker id ever used, the namespace keys, and only the request records not
 * yet forgotten. Only the audit log grows, as on every backend.
 */
static void test_store_etcd__keys_stay_bounded_under_churn(void **state)
{
    char *cluster = cluster_url(), url[512], prefix[256], sub[300];
    const char *path;
    struct store *st = NULL;
    unsigned port = first_port(cluster);
    int k;

    (void)state;
    fresh_url(cluster, NULL, url, sizeof(url));
    path = strchr(url + strlen("etcd://"), '/');
    assert_non_null(path);
    snprintf(prefix, sizeof(prefix), "%s", path);
    assert_int_equal(idmint__store_open(url, NULL, &st), 0);
    make_ns(st, "churn", IDMINT_KIND_SNOWFLAKE); /* 8 worker ids */
    make_ns(st, "churnr", IDMINT_KIND_RANGE);
    for (k = 0; k < 120; k++) {
        struct idmint__lease l = {0};
        struct idmint__range r = {0}; /* origin is an input */
        char holder[33], req[17];

        snprintf(holder, sizeof(holder), "%032x", k + 1);
        lease_init(&l, holder);
        assert_int_equal(idmint__store_lease_take(st, "churn", 8, 1000 + (uint64_t)k,
                                                  2000 + (uint64_t)k, &l, ACTOR, NOW_MS),
                         0);
        assert_int_equal(
            idmint__store_lease_release(st, "churn", &l, 1001 + (uint64_t)k, ACTOR, NOW_MS), 0);
        snprintf(req, sizeof(req), "%016x", k);
        assert_int_equal(
            idmint__store_range_reserve(st, "churnr", "inc-churn", req, 10, NOW_MS, &r), 0);
        if (k % 16 == 15)
            assert_int_equal(idmint__store_range_forget(st, "churnr", "inc-churn", req, NULL), 0);
    }
    snprintf(sub, sizeof(sub), "%s/lease/", prefix);
    assert_true(key_count(port, sub) >= 1 && key_count(port, sub) <= 8);
    snprintf(sub, sizeof(sub), "%s/ns/", prefix);
    assert_int_equal(key_count(port, sub), 2);
    /* Forgotten before request 119: 119's record and the 8 after the last forget at most. */
    snprintf(sub, sizeof(sub), "%s/inc/", prefix);
    assert_true(key_count(port, sub) >= 1 && key_count(port, sub) <= 9);
    snprintf(sub, sizeof(sub), "%s/audit/", prefix);
    assert_true(key_count(port, sub) >= 240); /* the log is kept: 120 takes, 120 releases */
    /* Provenance grows with the grants, one record and one age key each, until pruned. */
    assert_int_equal(store_keys(port, url, "/wgrant/"), 120);
    assert_int_equal(store_keys(port, url, "/rgrant/"), 120);
    assert_int_equal(store_keys(port, url, "/age/w/"), 120);
    assert_int_equal(store_keys(port, url, "/age/r/"), 120);
    {
        uint64_t pruned = 0;

        /* More than one txn holds: 40 records each. */
        assert_int_equal(
            idmint__store_prune(st, IDMINT__KEEP_WORKER_GRANTS, NOW_MS + 1, 1000, &pruned), 0);
        assert_int_equal(pruned, 120);
        assert_int_equal(
            idmint__store_prune(st, IDMINT__KEEP_RANGE_GRANTS, NOW_MS + 1, 50, &pruned), 0);
        assert_int_equal(pruned, 50);
        assert_int_equal(
            idmint__store_prune(st, IDMINT__KEEP_RANGE_GRANTS, NOW_MS + 1, 1000, &pruned), 0);
        assert_int_equal(pruned, 70);
    }
    assert_int_equal(store_keys(port, url, "/wgrant/"), 0);
    assert_int_equal(store_keys(port, url, "/rgrant/"), 0);
    assert_int_equal(store_keys(port, url, "/age/"), 0);
    idmint__store_close(st);
    free(cluster);
}

static void test_store_etcd__prefixes_are_separate_stores(void **state)
{
    char *cluster = cluster_url(), a_url[512], b_url[512];
    struct store *a = NULL, *b = NULL;
    idmint_ns_info got;

    (void)state;
    fresh_url(cluster, NULL, a_url, sizeof(a_url));
    fresh_url(cluster, NULL, b_url, sizeof(b_url));
    assert_int_equal(idmint__store_open(a_url, NULL, &a), 0);
    assert_int_equal(idmint__store_open(b_url, NULL, &b), 0);
    make_ns(a, "mine", IDMINT_KIND_RANGE);
    assert_int_equal(idmint__store_ns_get(b, "mine", &got), IDMINT_ENOTFOUND);
    make_ns(b, "mine", IDMINT_KIND_SNOWFLAKE);
    assert_int_equal(idmint__store_ns_get(a, "mine", &got), 0);
    assert_int_equal(got.kind, IDMINT_KIND_RANGE);
    idmint__store_close(a);
    idmint__store_close(b);
    free(cluster);
}

static void test_store_etcd__a_newer_schema_is_refused(void **state)
{
    char *cluster = cluster_url(), url[512], key[600], key64[800], body[1200];
    const char *prefix;
    struct store *st = NULL;

    (void)state;
    fresh_url(cluster, NULL, url, sizeof(url));
    prefix = strchr(url + strlen("etcd://"), '/');
    snprintf(key, sizeof(key), "%s/schema", prefix);
    b64(key, key64);
    snprintf(body, sizeof(body), "{\"key\":\"%s\",\"value\":\"OQ==\"}", key64); /* "9" */
    assert_int_equal(http_post(first_port(cluster), "/v3/kv/put", body), 200);
    assert_int_equal(idmint__store_open(url, NULL, &st), IDMINT_ESTORE);
    assert_non_null(strstr(idmint_errmsg(), "newer"));
    assert_null(st);
    free(cluster);
}

/* ==== writes whose reply is lost ==== */

static void test_store_etcd__a_take_whose_reply_was_lost_is_found_not_taken_again(void **state)
{
    char *cluster = cluster_url();
    struct idmint__lease a = {0}, b = {0};
    idmint_worker_info *w = NULL;
    struct proxy p;
    struct store *st;
    size_t n = 0;

    (void)state;
    proxy_start(&p, first_port(cluster));
    st = open_via(&p, cluster);
    make_ns(st, "lost", IDMINT_KIND_SNOWFLAKE);
    lease_init(&a, HOLDER_A);
    atomic_store(&p.drop_writes, 1);
    assert_int_equal(idmint__store_lease_take(st, "lost", 8, 1000, 1600, &a, ACTOR, NOW_MS), 0);
    assert_int_equal(atomic_load(&p.dropped), 1);
    /* The applied attempt's lease, not a second id. */
    assert_int_equal(a.worker_id, 0);
    assert_int_equal(a.generation, 1);
    assert_int_equal(a.lease_until, 1600);
    assert_int_equal(idmint__store_lease_list(st, "lost", &w, &n), 0);
    assert_int_equal(n, 1);
    assert_string_equal(w[0].holder, HOLDER_A);
    free(w);
    assert_int_equal(audit_count(st, "lost", "worker.take"), 1);
    /* It is ours: we renew it; the next taker gets the next id. */
    assert_int_equal(idmint__store_lease_renew(st, "lost", &a, 1700, INT64_C(1780000000000)), 0);
    lease_init(&b, HOLDER_B);
    assert_int_equal(idmint__store_lease_take(st, "lost", 8, 1000, 1600, &b, ACTOR, NOW_MS), 0);
    assert_int_equal(b.worker_id, 1);

    /* A release whose reply is lost: released once, audited once, E as clamped. */
    atomic_store(&p.drop_writes, 1);
    assert_int_equal(idmint__store_lease_release(st, "lost", &a, 1200, ACTOR, NOW_MS), 0);
    assert_int_equal(atomic_load(&p.dropped), 2);
    assert_int_equal(a.lease_until, 1200);
    assert_int_equal(audit_count(st, "lost", "worker.release"), 1);
    idmint__store_close(st);
    proxy_stop(&p);
    free(cluster);
}

static void
test_store_etcd__a_reservation_whose_reply_was_lost_is_found_not_reserved_again(void **state)
{
    char *cluster = cluster_url();
    struct idmint__range r1 = {0}, r2 = {0};
    idmint_ns_info got;
    struct proxy p;
    struct store *st;

    (void)state;
    proxy_start(&p, first_port(cluster));
    st = open_via(&p, cluster);
    make_ns(st, "lostrange", IDMINT_KIND_RANGE);
    atomic_store(&p.drop_writes, 1);
    assert_int_equal(idmint__store_range_reserve(st, "lostrange", "inc", "req-1", 100, NOW_MS, &r1),
                     0);
    assert_int_equal(atomic_load(&p.dropped), 1);
    assert_int_equal(r1.start, 1);
    assert_int_equal(r1.end, 101);
    assert_int_equal(idmint__store_ns_get(st, "lostrange", &got), 0);
    assert_int_equal(got.next_value, 101); /* advanced once */
    assert_int_equal(idmint__store_range_reserve(st, "lostrange", "inc", "req-2", 100, NOW_MS, &r2),
                     0);
    assert_int_equal(r2.start, 101);
    idmint__store_close(st);
    proxy_stop(&p);
    free(cluster);
}

/* ==== a reservation that sends its txn without reading first ==== */

static void test_store_etcd__a_second_reservation_on_a_namespace_is_one_request(void **state)
{
    char *cluster = cluster_url();
    struct idmint__range r = {0};
    struct proxy p;
    struct store *st;
    int before;

    (void)state;
    proxy_start(&p, first_port(cluster));
    st = open_via(&p, cluster);
    make_ns(st, "onetrip", IDMINT_KIND_RANGE);
    before = atomic_load(&p.forwarded);
    assert_int_equal(idmint__store_range_reserve(st, "onetrip", "inc", "req-1", 100, NOW_MS, &r),
                     0);
    assert_int_equal(atomic_load(&p.forwarded) - before, 2); /* read, txn */
    before = atomic_load(&p.forwarded);
    assert_int_equal(idmint__store_range_reserve(st, "onetrip", "inc", "req-2", 100, NOW_MS, &r),
                     0);
    assert_int_equal(atomic_load(&p.forwarded) - before, 1); /* txn */
    assert_int_equal(r.start, 101);
    assert_int_equal(r.end, 201);
    idmint__store_close(st);
    proxy_stop(&p);
    free(cluster);
}

static void
test_store_etcd__a_namespace_changed_since_the_last_reservation_is_read_again(void **state)
{
    char *cluster = cluster_url();
    struct idmint__range r = {0};
    struct store *a = NULL, *b = NULL;
    idmint_ns_info got;
    char url[512];

    (void)state;
    fresh_url(cluster, NULL, url, sizeof(url));
    assert_int_equal(idmint__store_open(url, NULL, &a), 0);
    assert_int_equal(idmint__store_open(url, NULL, &b), 0);
    make_ns(a, "moved", IDMINT_KIND_RANGE);
    assert_int_equal(idmint__store_range_reserve(a, "moved", "inc-a", "req-1", 100, NOW_MS, &r), 0);
    assert_int_equal(r.start, 1);
    /* Another store moves the counter: a's next txn loses its compare, then
     * reserves after b's range, never over it. */
    assert_int_equal(idmint__store_range_reserve(b, "moved", "inc-b", "req-1", 100, NOW_MS, &r), 0);
    assert_int_equal(r.start, 101);
    assert_int_equal(idmint__store_range_reserve(a, "moved", "inc-a", "req-2", 100, NOW_MS, &r), 0);
    assert_int_equal(r.start, 201);
    assert_int_equal(r.end, 301);
    assert_int_equal(idmint__store_ns_get(a, "moved", &got), 0);
    assert_int_equal(got.next_value, 301);
    /* Disabled by another store since: refused, nothing written. */
    assert_int_equal(idmint__store_ns_set_disabled(b, "moved", 1, ACTOR, NOW_MS), 0);
    assert_int_equal(idmint__store_range_reserve(a, "moved", "inc-a", "req-3", 100, NOW_MS, &r),
                     IDMINT_EDISABLED);
    assert_int_equal(idmint__store_ns_get(b, "moved", &got), 0);
    assert_int_equal(got.next_value, 301);
    idmint__store_close(a);
    idmint__store_close(b);
    free(cluster);
}

static void
test_store_etcd__a_repeated_request_without_a_read_is_answered_from_its_record(void **state)
{
    char *cluster = cluster_url();
    struct idmint__range r1 = {0}, r2 = {0};
    struct store *st = NULL;
    idmint_ns_info got;
    char url[512];

    (void)state;
    fresh_url(cluster, NULL, url, sizeof(url));
    assert_int_equal(idmint__store_open(url, NULL, &st), 0);
    make_ns(st, "again", IDMINT_KIND_RANGE);
    assert_int_equal(idmint__store_range_reserve(st, "again", "inc", "req-1", 100, NOW_MS, &r1), 0);
    assert_int_equal(idmint__store_range_reserve(st, "again", "inc", "req-1", 100, NOW_MS, &r2), 0);
    assert_int_equal(r2.start, r1.start);
    assert_int_equal(r2.end, r1.end);
    assert_int_equal(idmint__store_range_reserve(st, "again", "inc", "req-1", 50, NOW_MS, &r2),
                     IDMINT_ECONFLICT);
    assert_int_equal(idmint__store_ns_get(st, "again", &got), 0);
    assert_int_equal(got.next_value, 101); /* reserved once */
    idmint__store_close(st);
    free(cluster);
}

static void
test_store_etcd__a_reservation_without_a_read_whose_reply_was_lost_is_found_not_reserved_again(
    void **state)
{
    char *cluster = cluster_url();
    struct idmint__range r = {0};
    idmint_ns_info got;
    struct proxy p;
    struct store *st;

    (void)state;
    proxy_start(&p, first_port(cluster));
    st = open_via(&p, cluster);
    make_ns(st, "lostfast", IDMINT_KIND_RANGE);
    assert_int_equal(idmint__store_range_reserve(st, "lostfast", "inc", "req-1", 100, NOW_MS, &r),
                     0);
    atomic_store(&p.drop_writes, 1);
    assert_int_equal(idmint__store_range_reserve(st, "lostfast", "inc", "req-2", 100, NOW_MS, &r),
                     0);
    assert_int_equal(atomic_load(&p.dropped), 1);
    assert_int_equal(r.start, 101);
    assert_int_equal(r.end, 201);
    assert_int_equal(idmint__store_ns_get(st, "lostfast", &got), 0);
    assert_int_equal(got.next_value, 201); /* advanced once */
    assert_int_equal(idmint__store_range_reserve(st, "lostfast", "inc", "req-3", 100, NOW_MS, &r),
                     0);
    assert_int_equal(r.start, 201);
    idmint__store_close(st);
    proxy_stop(&p);
    free(cluster);
}

static void test_store_etcd__a_namespace_create_whose_reply_was_lost_succeeds_once(void **state)
{
    char *cluster = cluster_url();
    idmint_ns_info i;
    struct proxy p;
    struct store *st;

    (void)state;
    proxy_start(&p, first_port(cluster));
    st = open_via(&p, cluster);
    idmint_ns_info_init(&i, IDMINT_KIND_SNOWFLAKE);
    snprintf(i.name, sizeof(i.name), "lostns");
    atomic_store(&p.drop_writes, 1);
    /* Ours, not a conflict with ourselves. */
    assert_int_equal(idmint__store_ns_create(st, &i, ACTOR, NOW_MS), 0);
    assert_int_equal(atomic_load(&p.dropped), 1);
    assert_int_equal(audit_count(st, "lostns", "ns.create"), 1);
    assert_int_equal(idmint__store_ns_create(st, &i, ACTOR, NOW_MS), IDMINT_ECONFLICT);
    idmint__store_close(st);
    proxy_stop(&p);
    free(cluster);
}

/* ==== version 4: grants, batches, collisions ==== */

/* The grants of worker (0, @p worker) of @p ns covering @p unit. */
static size_t grants_at(struct store *st, const char *ns, uint32_t worker, uint64_t unit)
{
    struct idmint__grant_query q = {
        .kind = IDMINT_KIND_SNOWFLAKE, .worker_id = worker, .unit = unit};
    idmint_grant_info *g = NULL;
    size_t n = 99;

    assert_int_equal(idmint__store_grant_find(st, ns, &q, &g, &n), 0);
    free(g);
    return n;
}

/* A renewal stamps its grant anew: a prune below the new stamp leaves it. */
static void test_store_etcd__a_renewal_moves_its_grant_out_of_a_prune(void **state)
{
    char *cluster = cluster_url(), url[512];
    unsigned port = first_port(cluster);
    struct idmint__lease l = {0};
    struct store *st = NULL;
    uint64_t pruned = 99;

    (void)state;
    fresh_url(cluster, NULL, url, sizeof(url));
    assert_int_equal(idmint__store_open(url, NULL, &st), 0);
    make_ns(st, "stamp", IDMINT_KIND_SNOWFLAKE);
    lease_init(&l, HOLDER_A);
    assert_int_equal(idmint__store_lease_take(st, "stamp", 8, 1000, 1600, &l, ACTOR, NOW_MS), 0);
    assert_int_equal(idmint__store_lease_renew(st, "stamp", &l, 1700, NOW_MS + 5), 0);
    assert_int_equal(store_keys(port, url, "/age/w/"), 1); /* moved, not added */
    assert_int_equal(idmint__store_prune(st, IDMINT__KEEP_WORKER_GRANTS, NOW_MS + 5, 10, &pruned),
                     0);
    assert_int_equal(pruned, 0);
    assert_int_equal(grants_at(st, "stamp", 0, 1650), 1);
    assert_int_equal(idmint__store_prune(st, IDMINT__KEEP_WORKER_GRANTS, NOW_MS + 6, 10, &pruned),
                     0);
    assert_int_equal(pruned, 1);
    assert_int_equal(grants_at(st, "stamp", 0, 1650), 0);
    /* Its lease goes on without it: renewed and released, nothing made up. */
    assert_int_equal(idmint__store_lease_renew(st, "stamp", &l, 1800, NOW_MS + 7), 0);
    assert_int_equal(idmint__store_lease_release(st, "stamp", &l, 1750, ACTOR, NOW_MS + 8), 0);
    assert_int_equal(store_keys(port, url, "/wgrant/"), 0);
    assert_int_equal(store_keys(port, url, "/age/"), 0);
    idmint__store_close(st);
    free(cluster);
}

/* Open @p url, reserve once in "oldr" and write the history id to @p out: exit 0 on success. */
static void open_child(const char *url, int gate, int out, unsigned idx)
{
    struct idmint__range r = {0};
    struct store *st = NULL;
    char req[32], id[33] = "";
    char c;

    while (read(gate, &c, 1) > 0)
        ;
    snprintf(req, sizeof(req), "child-%u", idx);
    memset(&r, 0, sizeof(r));
    if (idmint__store_open(url, NULL, &st) == 0 &&
        idmint__store_range_reserve(st, "oldr", "inc-c", req, 1, NOW_MS, &r) == 0)
        memcpy(id, r.history.id, sizeof(id));
    else
        fprintf(stderr, "child %u: %s\n", idx, idmint_errmsg());
    idmint__store_close(st);
    _exit(write(out, id, sizeof(id)) == (ssize_t)sizeof(id) && id[0] != '\0' ? 0 : 1);
}

/*
 * Schema 2 (before provenance) is schema 3 without the grant, batch,
 * collision and age keys: openers racing bring it to 3 once and keep its
 * history; a lease taken before has no grant, and renews and releases all
 * the same.
 */
static void test_store_etcd__a_version_2_prefix_is_upgraded_once_by_many_openers(void **state)
{
    enum { PROCS = 6 };
    char *cluster = cluster_url(), url[512], key[600], key64[800], body[1200], reply[8192];
    unsigned port = first_port(cluster);
    struct idmint__lease l = {0}, m = {0};
    struct store *st = NULL;
    char first[33];
    int gate[2], res[2];
    pid_t pids[PROCS];

    (void)state;
    fresh_url(cluster, NULL, url, sizeof(url));
    assert_int_equal(idmint__store_open(url, NULL, &st), 0);
    make_ns(st, "old", IDMINT_KIND_SNOWFLAKE);
    make_ns(st, "oldr", IDMINT_KIND_RANGE);
    lease_init(&l, HOLDER_A);
    assert_int_equal(idmint__store_lease_take(st, "old", 8, 1000, 1600, &l, ACTOR, NOW_MS), 0);
    memcpy(first, l.history.id, sizeof(first));
    idmint__store_close(st);
    st = NULL;
    /* What an idmint of schema 2 left: no provenance, and the schema key saying 2. */
    snprintf(key, sizeof(key), "%s/wgrant/", url_prefix(url));
    raw_delete_prefix(port, key);
    snprintf(key, sizeof(key), "%s/age/", url_prefix(url));
    raw_delete_prefix(port, key);
    snprintf(key, sizeof(key), "%s/schema", url_prefix(url));
    raw_put(port, key, "2");

    assert_int_equal(pipe(gate), 0);
    assert_int_equal(pipe(res), 0);
    for (unsigned i = 0; i < PROCS; i++) {
        pids[i] = fork();
        assert_true(pids[i] >= 0);
        if (pids[i] == 0) {
            close(gate[1]);
            close(res[0]);
            open_child(url, gate[0], res[1], i);
        }
    }
    close(gate[0]);
    close(res[1]);
    close(gate[1]); /* go */
    for (unsigned i = 0; i < PROCS; i++) {
        char id[33];

        assert_int_equal(read(res[0], id, sizeof(id)), sizeof(id));
        assert_string_equal(id, first); /* the history it had */
    }
    close(res[0]);
    for (unsigned i = 0; i < PROCS; i++) {
        int status;

        assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    b64(key, key64);
    snprintf(body, sizeof(body), "{\"key\":\"%s\"}", key64);
    assert_int_equal(http_post_reply(port, "/v3/kv/range", body, reply, sizeof(reply)), 200);
    assert_non_null(strstr(reply, "\"value\":\"NQ==\"")); /* "5" */

    assert_int_equal(idmint__store_open(url, NULL, &st), 0);
    assert_int_equal(grants_at(st, "old", l.worker_id, 1500), 0);
    assert_int_equal(idmint__store_lease_renew(st, "old", &l, 1700, NOW_MS + 1), 0);
    assert_int_equal(l.lease_until, 1700);
    assert_int_equal(idmint__store_lease_release(st, "old", &l, 1650, ACTOR, NOW_MS + 2), 0);
    assert_int_equal(grants_at(st, "old", l.worker_id, 1600), 0);
    assert_int_equal(store_keys(port, url, "/wgrant/"), 0);
    /* A take from now on is recorded. */
    lease_init(&m, HOLDER_B);
    assert_int_equal(idmint__store_lease_take(st, "old", 8, 2000, 2600, &m, ACTOR, NOW_MS + 3), 0);
    assert_int_equal(grants_at(st, "old", m.worker_id, 2500), 1);
    idmint__store_close(st);
    free(cluster);
}

static void batch_set(struct idmint__batch *b, const char *ns, const char *key, uint32_t count,
                      char *runs)
{
    memset(b, 0, sizeof(*b));
    snprintf(b->ns, sizeof(b->ns), "%s", ns);
    snprintf(b->key, sizeof(b->key), "%s", key);
    snprintf(b->owner, sizeof(b->owner), "tok-1");
    b->count = count;
    b->runs = runs;
    b->keep_ms = 60000;
}

static void test_store_etcd__a_batch_claim_whose_reply_was_lost_is_ours(void **state)
{
    char *cluster = cluster_url(), runs1[] = "100+5", runs2[] = "900+5";
    struct idmint__batch b, saved;
    struct proxy p;
    struct store *st;
    int inserted = 0;

    (void)state;
    proxy_start(&p, first_port(cluster));
    st = open_via(&p, cluster);
    batch_set(&b, "lostb", "key-1", 5, runs1);
    memset(&saved, 0, sizeof(saved));
    atomic_store(&p.drop_writes, 1);
    assert_int_equal(idmint__store_batch_claim(st, &b, &saved, &inserted), 0);
    assert_int_equal(atomic_load(&p.dropped), 1);
    assert_int_equal(inserted, 1); /* the applied attempt was this call's */
    assert_string_equal(saved.runs, "100+5");
    idmint__batch_clear(&saved);
    batch_set(&b, "lostb", "key-1", 5, runs2);
    assert_int_equal(idmint__store_batch_claim(st, &b, &saved, &inserted), 0);
    assert_int_equal(inserted, 0);
    assert_string_equal(saved.runs, "100+5");
    idmint__batch_clear(&saved);
    idmint__store_close(st);
    proxy_stop(&p);
    free(cluster);
}

static void test_store_etcd__a_collision_whose_reply_was_lost_is_recorded_once(void **state)
{
    char *cluster = cluster_url();
    idmint_collision c, saved, *list = NULL;
    struct proxy p;
    struct store *st;
    size_t n = 0;
    int inserted = 0;

    (void)state;
    proxy_start(&p, first_port(cluster));
    st = open_via(&p, cluster);
    memset(&c, 0, sizeof(c));
    c.size = sizeof(c);
    snprintf(c.ns, sizeof(c.ns), "lostc");
    c.id = 77;
    snprintf(c.verdict, sizeof(c.verdict), "reported");
    snprintf(c.reporter, sizeof(c.reporter), "token:db");
    atomic_store(&p.drop_writes, 1);
    assert_int_equal(
        idmint__store_collision_add(st, &c, "token:db", NOW_MS, 60000, &saved, &inserted), 0);
    assert_int_equal(atomic_load(&p.dropped), 1);
    assert_int_equal(inserted, 1); /* the applied attempt was this call's: not a repeat */
    assert_true(saved.seq > 0);
    assert_int_equal(idmint__store_collision_list(st, 0, 100, &list, &n), 0);
    assert_int_equal(n, 1);
    assert_int_equal(list[0].seq, saved.seq);
    assert_int_equal(list[0].id, 77);
    assert_int_equal(list[0].reported_ms, NOW_MS);
    free(list);
    assert_int_equal(audit_count(st, "lostc", "collision.report"), 1);
    idmint__store_close(st);
    proxy_stop(&p);
    free(cluster);
}

/* @p n IDs, none consecutive, from @p base as runs (malloc'd; one run per ID). */
static char *long_runs(unsigned n, unsigned long long base, size_t *len)
{
    char *runs = malloc((size_t)n * 24 + 1);
    size_t k = 0;

    assert_non_null(runs);
    for (unsigned i = 0; i < n; i++)
        k += (size_t)sprintf(runs + k, "%s%llu+1", i > 0 ? "," : "", base + 2ull * i);
    *len = k;
    return runs;
}

/* Wait until no key of the store at @p url starts with @p sub; 0, or -1 when they outlive @p s. */
static int keys_gone_within(unsigned port, const char *url, const char *sub, unsigned s)
{
    for (unsigned i = 0; i < s * 10 * ts_scale(); i++) {
        struct timespec tenth = {0, 100000000};

        if (store_keys(port, url, sub) == 0)
            return 0;
        nanosleep(&tenth, NULL);
    }
    return -1;
}

/*
 * Runs longer than one etcd request holds (its --max-request-bytes is 1.5
 * MiB) are saved in parts, read back whole, and end with the batch: the
 * key and its parts ride on one etcd lease, which no prune moves.
 */
static void test_store_etcd__a_long_batch_is_saved_in_parts_and_ends_with_them(void **state)
{
    enum { IDS = 100000 };
    char *cluster = cluster_url(), url[512], *runs, other[] = "5+1";
    unsigned port = first_port(cluster);
    struct idmint__batch b, saved, got;
    struct store *st = NULL;
    uint64_t pruned = 0;
    size_t len = 0;
    int inserted = 0;
    long parts;

    (void)state;
    runs = long_runs(IDS, 1000000000000ull, &len);
    assert_true(len > 1500000);
    fresh_url(cluster, NULL, url, sizeof(url));
    assert_int_equal(idmint__store_open(url, NULL, &st), 0);
    batch_set(&b, "longb", "big", IDS, runs);
    /* Long enough for the reads below on a loaded sanitizer build (8 s ran
     * out before the last of them once, beside a second test run), short
     * enough to watch it end: 5 s per unit of IDMINT_TIMEOUT_SCALE. */
    b.keep_ms = 5000 * ts_scale();
    memset(&saved, 0, sizeof(saved));
    assert_int_equal(idmint__store_batch_claim(st, &b, &saved, &inserted), 0);
    assert_int_equal(inserted, 1);
    assert_string_equal(saved.runs, runs);
    idmint__batch_clear(&saved);
    parts = store_keys(port, url, "/obatch/tok-1/big/");
    assert_true(parts >= 3);
    memset(&got, 0, sizeof(got));
    assert_int_equal(idmint__store_batch_get(st, "tok-1", "big", &got), 0);
    assert_int_equal(got.count, IDS);
    assert_int_equal(strlen(got.runs), len);
    assert_string_equal(got.runs, runs);
    assert_string_equal(got.owner, "tok-1");
    idmint__batch_clear(&got);
    /* A repeat gets the saved one and leaves no parts of its own. */
    batch_set(&b, "longb", "big", 1, other);
    assert_int_equal(idmint__store_batch_claim(st, &b, &saved, &inserted), 0);
    assert_int_equal(inserted, 0);
    assert_string_equal(saved.runs, runs);
    idmint__batch_clear(&saved);
    assert_int_equal(store_keys(port, url, "/obatch/tok-1/big/"), parts);
    assert_int_equal(store_keys(port, url, "/age/"), 0); /* no age index: the lease ends it */
    /* A prune, however far ahead its clock, deletes nothing: etcd's lease decides. */
    assert_int_equal(
        idmint__store_prune(st, IDMINT__KEEP_BATCHES, NOW_MS + 1000 * 86400000LL, 10, &pruned), 0);
    assert_int_equal(pruned, 0);
    assert_int_equal(idmint__store_batch_get(st, "tok-1", "big", &got), 0);
    idmint__batch_clear(&got);
    assert_int_equal(keys_gone_within(port, url, "/obatch/", 30 + 5 * ts_scale()), 0);
    assert_int_equal(idmint__store_batch_get(st, "tok-1", "big", &got), IDMINT_ENOTFOUND);
    idmint__store_close(st);
    free(runs);
    free(cluster);
}

/* Claims of one key racing, each with runs in parts: one wins, the rest read it and leave nothing.
 */
static void
test_store_etcd__long_batch_claims_racing_agree_and_the_losers_leave_no_parts(void **state)
{
    enum { PROCS = 4, IDS = 60000 };
    char *cluster = cluster_url(), url[512];
    unsigned port = first_port(cluster);
    struct idmint__batch got;
    struct store *st = NULL;
    char first[64] = "";
    int gate[2], res[2], winners = 0;
    pid_t pids[PROCS];
    size_t len = 0;
    char *runs;

    (void)state;
    fresh_url(cluster, NULL, url, sizeof(url));
    assert_int_equal(pipe(gate), 0);
    assert_int_equal(pipe(res), 0);
    for (unsigned i = 0; i < PROCS; i++) {
        pids[i] = fork();
        assert_true(pids[i] >= 0);
        if (pids[i] == 0) {
            struct idmint__batch b, saved;
            char line[64], c;
            int inserted = 0, rc;

            close(gate[1]);
            close(res[0]);
            runs = long_runs(IDS, 1000000000000ull * (i + 1), &len);
            batch_set(&b, "raceb", "k", IDS, runs);
            memset(&saved, 0, sizeof(saved));
            while (read(gate[0], &c, 1) > 0)
                ;
            rc = idmint__store_open(url, NULL, &st);
            if (rc == 0)
                rc = idmint__store_batch_claim(st, &b, &saved, &inserted);
            if (rc != 0)
                fprintf(stderr, "child %u: %s\n", i, idmint_errmsg());
            memset(line, 0, sizeof(line));
            snprintf(line, sizeof(line), "%d %d %.20s %zu\n", rc, inserted,
                     rc == 0 ? saved.runs : "-", rc == 0 ? strlen(saved.runs) : 0);
            _exit(write(res[1], line, sizeof(line)) == (ssize_t)sizeof(line) ? 0 : 3);
        }
    }
    close(gate[0]);
    close(res[1]);
    close(gate[1]); /* go */
    for (unsigned i = 0; i < PROCS; i++) {
        char line[64];
        int rc = -1, inserted = -1;

        assert_int_equal(read(res[0], line, sizeof(line)), sizeof(line));
        assert_int_equal(sscanf(line, "%d %d", &rc, &inserted), 2);
        assert_int_equal(rc, 0);
        winners += inserted;
        if (first[0] == '\0')
            snprintf(first, sizeof(first), "%s", strchr(strchr(line, ' ') + 1, ' ') + 1);
        assert_string_equal(strchr(strchr(line, ' ') + 1, ' ') + 1, first);
    }
    close(res[0]);
    for (unsigned i = 0; i < PROCS; i++) {
        int status;

        assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    assert_int_equal(winners, 1);
    assert_int_equal(idmint__store_open(url, NULL, &st), 0);
    memset(&got, 0, sizeof(got));
    assert_int_equal(idmint__store_batch_get(st, "tok-1", "k", &got), 0);
    len = strlen(got.runs);
    idmint__batch_clear(&got);
    /* The winner's parts only: ceil(len / 512 KiB) of them under the key. */
    assert_int_equal(store_keys(port, url, "/obatch/tok-1/k/"),
                     (long)((len + 512u * 1024u - 1) / (512u * 1024u)));
    idmint__store_close(st);
    free(cluster);
}

/*
 * A batch schema 3 saved (one key in the whole store) still answers a retry
 * of its owner after the upgrade, and only its owner: another caller's key
 * of the same name is a batch of its own.
 */
static void test_store_etcd__a_schema_3_batch_answers_only_its_owner(void **state)
{
    char *cluster = cluster_url(), url[512], key[512], runs[] = "9+4";
    unsigned port = first_port(cluster);
    struct idmint__batch b, got, saved;
    struct store *st = NULL;
    int inserted = 0;

    (void)state;
    fresh_url(cluster, NULL, url, sizeof(url));
    assert_int_equal(idmint__store_open(url, NULL, &st), 0);
    snprintf(key, sizeof(key), "%s/batch/old-key", url_prefix(url));
    raw_put(port, key,
            "{\"owner\":\"tok-1\",\"namespace\":\"ns3\",\"count\":\"3\",\"created_ms\":"
            "\"1780000000000\",\"claim\":\"0123456789abcdef0123456789abcdef\",\"runs\":\"7+3\"}");
    memset(&got, 0, sizeof(got));
    assert_int_equal(idmint__store_batch_get(st, "tok-1", "old-key", &got), 0);
    assert_string_equal(got.runs, "7+3");
    assert_string_equal(got.ns, "ns3");
    assert_int_equal(got.count, 3);
    idmint__batch_clear(&got);
    assert_int_equal(idmint__store_batch_get(st, "tok-2", "old-key", &got), IDMINT_ENOTFOUND);
    batch_set(&b, "ns3", "old-key", 4, runs);
    snprintf(b.owner, sizeof(b.owner), "tok-2");
    memset(&saved, 0, sizeof(saved));
    assert_int_equal(idmint__store_batch_claim(st, &b, &saved, &inserted), 0);
    assert_int_equal(inserted, 1);
    idmint__batch_clear(&saved);
    assert_int_equal(idmint__store_batch_get(st, "tok-2", "old-key", &got), 0);
    assert_string_equal(got.runs, "9+4");
    idmint__batch_clear(&got);
    assert_int_equal(idmint__store_batch_get(st, "tok-1", "old-key", &got), 0);
    assert_string_equal(got.runs, "7+3");
    idmint__batch_clear(&got);
    idmint__store_close(st);
    free(cluster);
}

/* ==== waiting range requests ==== */

/* Plant a waiting request of incarnation @p inc, request @p req, in namespace @p ns, left at
 * @p ms. */
static void plant_waiting(unsigned port, const char *url, const char *ns, unsigned ms,
                          const char *inc, const char *req, const char *value)
{
    char key[512];

    snprintf(key, sizeof(key), "%s/pend/%s/%020u/%s/%s", url_prefix(url), ns, ms, inc, req);
    raw_put(port, key, value);
}

/*
 * Requests left waiting are granted by the next reservation's txn, in the
 * order they were left, each exactly once and recorded with its own origin,
 * and the waiting keys are gone. What cannot be read or what the namespace
 * refuses is deleted, granting nothing.
 */
static void test_store_etcd__waiting_requests_are_granted_by_the_next_reservation(void **state)
{
    char *cluster = cluster_url(), url[512], key[512];
    unsigned port = first_port(cluster);
    struct idmint__range r = {0}, again = {0};
    idmint_grant_info *g = NULL;
    idmint_ns_info ns;
    struct idmint__grant_query q = {.kind = IDMINT_KIND_RANGE, .value = 120};
    struct store *st = NULL;
    size_t n = 0;

    (void)state;
    fresh_url(cluster, NULL, url, sizeof(url));
    assert_int_equal(idmint__store_open(url, NULL, &st), 0);
    make_ns(st, "comb", IDMINT_KIND_RANGE);
    plant_waiting(port, url, "comb", 1, "inc-a", "r1",
                  "{\"holder\":\"0a1b2c3d\",\"count\":\"50\",\"created_ms\":\"1\",\"host\":"
                  "\"host-a\",\"pid\":\"77\",\"program\":\"prog-a\",\"token\":\"\"}");
    plant_waiting(port, url, "comb", 2, "inc-b", "r1", "not json");
    plant_waiting(port, url, "comb", 3, "inc-c", "r1",
                  "{\"holder\":\"0a1b2c3d\",\"count\":\"4000000000\",\"created_ms\":\"1\"}");
    plant_waiting(port, url, "comb", 4, "inc-d", "r1",
                  "{\"holder\":\"0a1b2c3d\",\"count\":\"0\",\"created_ms\":\"1\"}");
    plant_waiting(port, url, "comb", 5, "inc-e", "r1",
                  "{\"holder\":\"0a1b2c3d\",\"count\":\"30\",\"created_ms\":\"1\"}");
    snprintf(key, sizeof(key), "%s/pend/comb/no-request", url_prefix(url));
    raw_put(port, key, "{\"holder\":\"0a1b2c3d\",\"count\":\"30\",\"created_ms\":\"1\"}");
    snprintf(key, sizeof(key), "%s/pend/comb/00000000000000000009/no-request", url_prefix(url));
    raw_put(port, key, "{\"holder\":\"0a1b2c3d\",\"count\":\"30\",\"created_ms\":\"1\"}");
    assert_int_equal(store_keys(port, url, "/pend/"), 7);

    assert_int_equal(idmint__store_range_reserve(st, "comb", "inc-own", "r1", 100, NOW_MS, &r), 0);
    assert_int_equal(r.start, 1);
    assert_int_equal(r.end, 101);
    /* Its txn answered a and e, in the order they were left, and nothing else. */
    assert_int_equal(store_keys(port, url, "/pend/"), 0);
    assert_int_equal(idmint__store_ns_get(st, "comb", &ns), 0);
    assert_int_equal(ns.next_value, 181);
    assert_int_equal(store_keys(port, url, "/inc/"), 3);
    assert_int_equal(idmint__store_range_reserve(st, "comb", "inc-a", "r1", 50, NOW_MS + 5, &again),
                     0);
    assert_int_equal(again.start, 101);
    assert_int_equal(again.end, 151);
    assert_int_equal(idmint__store_range_reserve(st, "comb", "inc-e", "r1", 30, NOW_MS + 5, &again),
                     0);
    assert_int_equal(again.start, 151);
    assert_int_equal(again.end, 181);
    /* A request with another count is still a conflict, not a second grant. */
    assert_int_equal(idmint__store_range_reserve(st, "comb", "inc-a", "r1", 60, NOW_MS + 5, &again),
                     IDMINT_ECONFLICT);
    /* The grant is recorded as its caller asked for it. */
    assert_int_equal(idmint__store_grant_find(st, "comb", &q, &g, &n), 0);
    assert_int_equal(n, 1);
    assert_int_equal(g[0].first, 101);
    assert_int_equal(g[0].last, 151);
    assert_string_equal(g[0].holder, "0a1b2c3d");
    assert_string_equal(g[0].host, "host-a");
    assert_int_equal(g[0].pid, 77);
    free(g);
    /* The refused ones ask again and get their own answer. */
    assert_int_equal(
        idmint__store_range_reserve(st, "comb", "inc-c", "r1", 4000000000u, NOW_MS, &again),
        IDMINT_EINVAL);
    assert_int_equal(idmint__store_ns_get(st, "comb", &ns), 0);
    assert_int_equal(ns.next_value, 181);
    idmint__store_close(st);
    free(cluster);
}

/*
 * A request that is already answered cannot be left waiting: posting it
 * compares its record absent, so a waiting key never names a request that
 * has a range, and none is granted twice.
 */
static void test_store_etcd__a_waiting_key_for_an_answered_request_grants_nothing(void **state)
{
    char *cluster = cluster_url(), url[512];
    unsigned port = first_port(cluster);
    struct idmint__range r = {0}, mine = {0};
    idmint_ns_info ns;
    struct store *st = NULL;

    (void)state;
    fresh_url(cluster, NULL, url, sizeof(url));
    assert_int_equal(idmint__store_open(url, NULL, &st), 0);
    make_ns(st, "ans", IDMINT_KIND_RANGE);
    assert_int_equal(idmint__store_range_reserve(st, "ans", "inc-a", "r1", 10, NOW_MS, &r), 0);
    /* Forged: a waiting key for inc-a/r1, which has its record. */
    plant_waiting(port, url, "ans", 6, "inc-a", "r1",
                  "{\"holder\":\"0a1b2c3d\",\"count\":\"10\",\"created_ms\":\"1\"}");
    idmint__store_close(st);
    assert_int_equal(idmint__store_open(url, NULL, &st), 0); /* a fresh view: it reads */
    assert_int_equal(idmint__store_range_reserve(st, "ans", "inc-b", "r1", 10, NOW_MS, &mine), 0);
    assert_int_equal(mine.start, 11);
    assert_int_equal(idmint__store_ns_get(st, "ans", &ns), 0);
    assert_int_equal(ns.next_value, 21);
    assert_int_equal(idmint__store_range_reserve(st, "ans", "inc-a", "r1", 10, NOW_MS, &mine), 0);
    assert_int_equal(mine.start, r.start);
    assert_int_equal(mine.end, r.end);
    assert_int_equal(store_keys(port, url, "/pend/"), 0);
    idmint__store_close(st);
    free(cluster);
}

/*
 * A reservation that met others waiting grants them ETCD_COMBINE_MAX (24) a
 * txn within etcd's --max-txn-ops, and goes on while they wait: 40 are all
 * answered by one call, oldest first, tiling the namespace after its own.
 */
static void test_store_etcd__forty_waiting_requests_are_all_granted_in_one_call(void **state)
{
    char *cluster = cluster_url(), url[512];
    unsigned port = first_port(cluster);
    struct idmint__range r = {0};
    idmint_ns_info ns;
    struct store *st = NULL;
    uint64_t next = 11;

    (void)state;
    fresh_url(cluster, NULL, url, sizeof(url));
    assert_int_equal(idmint__store_open(url, NULL, &st), 0);
    make_ns(st, "forty", IDMINT_KIND_RANGE);
    for (unsigned k = 0; k < 40; k++) {
        char inc[32], value[160];

        snprintf(inc, sizeof(inc), "inc-%02u", k);
        snprintf(value, sizeof(value),
                 "{\"holder\":\"inc-%02u\",\"count\":\"%u\",\"created_ms\":\"1\"}", k, 1 + k);
        plant_waiting(port, url, "forty", 100 + k, inc, "r1", value);
    }
    assert_int_equal(idmint__store_range_reserve(st, "forty", "own", "r1", 10, NOW_MS, &r), 0);
    assert_int_equal(r.start, 1);
    assert_int_equal(store_keys(port, url, "/pend/"), 0);
    for (unsigned k = 0; k < 40; k++) {
        struct idmint__range got = {0};
        char inc[32];

        snprintf(inc, sizeof(inc), "inc-%02u", k);
        assert_int_equal(idmint__store_range_reserve(st, "forty", inc, "r1", 1 + k, NOW_MS, &got),
                         0);
        assert_int_equal(got.start, next);
        assert_int_equal(got.end, next + 1 + k);
        next = got.end;
    }
    assert_int_equal(idmint__store_ns_get(st, "forty", &ns), 0);
    assert_int_equal(ns.next_value, next);
    idmint__store_close(st);
    free(cluster);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_store_etcd__bad_urls_are_invalid_with_a_message),
        cmocka_unit_test(test_store_etcd__keys_stay_bounded_under_churn),
        cmocka_unit_test(test_store_etcd__no_member_answering_is_unavailable_within_the_deadline),
        cmocka_unit_test(test_store_etcd__dead_members_in_the_list_are_passed_over),
        cmocka_unit_test(
            test_store_etcd__open_existing_of_an_empty_prefix_is_not_found_and_creates_nothing),
        cmocka_unit_test(test_store_etcd__prefixes_are_separate_stores),
        cmocka_unit_test(test_store_etcd__a_newer_schema_is_refused),
        cmocka_unit_test(test_store_etcd__a_take_whose_reply_was_lost_is_found_not_taken_again),
        cmocka_unit_test(
            test_store_etcd__a_reservation_whose_reply_was_lost_is_found_not_reserved_again),
        cmocka_unit_test(test_store_etcd__a_namespace_create_whose_reply_was_lost_succeeds_once),
        cmocka_unit_test(test_store_etcd__a_second_reservation_on_a_namespace_is_one_request),
        cmocka_unit_test(test_store_etcd__waiting_requests_are_granted_by_the_next_reservation),
        cmocka_unit_test(test_store_etcd__a_waiting_key_for_an_answered_request_grants_nothing),
        cmocka_unit_test(test_store_etcd__forty_waiting_requests_are_all_granted_in_one_call),
        cmocka_unit_test(
            test_store_etcd__a_namespace_changed_since_the_last_reservation_is_read_again),
        cmocka_unit_test(
            test_store_etcd__a_repeated_request_without_a_read_is_answered_from_its_record),
        cmocka_unit_test(
            test_store_etcd__a_reservation_without_a_read_whose_reply_was_lost_is_found_not_reserved_again),
        cmocka_unit_test(test_store_etcd__a_renewal_moves_its_grant_out_of_a_prune),
        cmocka_unit_test(test_store_etcd__a_version_2_prefix_is_upgraded_once_by_many_openers),
        cmocka_unit_test(test_store_etcd__a_batch_claim_whose_reply_was_lost_is_ours),
        cmocka_unit_test(test_store_etcd__a_collision_whose_reply_was_lost_is_recorded_once),
        cmocka_unit_test(test_store_etcd__a_long_batch_is_saved_in_parts_and_ends_with_them),
        cmocka_unit_test(test_store_etcd__a_schema_3_batch_answers_only_its_owner),
        cmocka_unit_test(
            test_store_etcd__long_batch_claims_racing_agree_and_the_losers_leave_no_parts),
    };

    return cmocka_run_group_tests_name("store_etcd", tests, NULL, NULL);
}
