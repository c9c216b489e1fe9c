/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for src/remote/remote_http.c, the http:// authority client,
 * against a loopback server of the test's own that gives canned answers:
 * what the client makes of replies idmintd would never send, of error
 * bodies, and which requests it sends again.
 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "idmint.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* One canned answer, given to every request until the test changes it. */
struct canned {
    int listen_fd;
    uint16_t port;
    pthread_t thread;
    atomic_int requests;
    pthread_mutex_t lock; /* over the three texts: the server thread and the test share them */
    char status_line[64];
    char body[512];
    char last_request[256]; /* its request line */
};

static void *serve(void *arg)
{
    struct canned *c = arg;
    int fd;

    while ((fd = accept(c->listen_fd, NULL, NULL)) >= 0) {
        char req[8192], reply[1024];
        ssize_t got = recv(fd, req, sizeof(req) - 1, 0);
        int n;

        if (got > 0) {
            req[got] = '\0';
            pthread_mutex_lock(&c->lock);
            snprintf(c->last_request, sizeof(c->last_request), "%.*s", (int)strcspn(req, "\r\n"),
                     req);
            atomic_fetch_add(&c->requests, 1);
            n = snprintf(reply, sizeof(reply),
                         "HTTP/1.1 %s\r\nContent-Type: application/json\r\nContent-Length: "
                         "%zu\r\nConnection: close\r\n\r\n%s",
                         c->status_line, strlen(c->body), c->body);
            pthread_mutex_unlock(&c->lock);
            (void)send(fd, reply, (size_t)n, MSG_NOSIGNAL);
        }
        close(fd);
    }
    return NULL;
}

static int canned_start(void **state)
{
    static struct canned c;
    struct sockaddr_in sa;
    socklen_t len = sizeof(sa);

    memset(&c, 0, sizeof(c));
    pthread_mutex_init(&c.lock, NULL);
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    c.listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (c.listen_fd < 0 || bind(c.listen_fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
        listen(c.listen_fd, 16) != 0 || getsockname(c.listen_fd, (struct sockaddr *)&sa, &len) != 0)
        return -1;
    c.port = ntohs(sa.sin_port);
    if (pthread_create(&c.thread, NULL, serve, &c) != 0)
        return -1;
    *state = &c;
    return 0;
}

static int canned_stop(void **state)
{
    struct canned *c = *state;

    shutdown(c->listen_fd, SHUT_RDWR); /* accept() returns: the thread ends */
    pthread_join(c->thread, NULL);
    close(c->listen_fd);
    return 0;
}

static void answer(struct canned *c, const char *status_line, const char *body)
{
    pthread_mutex_lock(&c->lock);
    snprintf(c->status_line, sizeof(c->status_line), "%s", status_line);
    snprintf(c->body, sizeof(c->body), "%s", body);
    atomic_store(&c->requests, 0);
    pthread_mutex_unlock(&c->lock);
}

static void assert_last_request(struct canned *c, const char *want)
{
    char got[sizeof(c->last_request)];

    pthread_mutex_lock(&c->lock);
    memcpy(got, c->last_request, sizeof(got));
    pthread_mutex_unlock(&c->lock);
    assert_string_equal(got, want);
}

static idmint_authority *open_canned(const struct canned *c)
{
    char url[64];
    idmint_authority *a = NULL;

    snprintf(url, sizeof(url), "http://127.0.0.1:%u", (unsigned)c->port);
    assert_int_equal(idmint_authority_open(&a, url, 0), 0);
    return a;
}

static void test_remote_http__bad_locations_are_refused_before_any_request(void **state)
{
    static const char *const bad[] = {
        "http://127.0.0.1",         "http://127.0.0.1:0", "http://127.0.0.1:65536",
        "http://127.0.0.1:80/base", "http://:80",         "http://[zz]:80",
        "http:127.0.0.1:80",        "https://h:443/?ca=",
    };
    struct canned *c = *state;

    answer(c, "200 OK", "{}");
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        idmint_authority *a = NULL;

        assert_int_equal(idmint_authority_open(&a, bad[i], 0), IDMINT_EINVAL);
        assert_null(a);
        assert_true(strstr(idmint_errmsg(), "authority '") != NULL);
    }
    assert_int_equal(atomic_load(&c->requests), 0);
}

static void test_remote_http__error_body_maps_to_the_library_code_with_its_message(void **state)
{
    struct canned *c = *state;
    idmint_authority *a = open_canned(c);
    idmint_ns_info info;

    answer(c, "404 Not Found",
           "{\"error\":{\"code\":\"not_found\",\"message\":\"namespace 'orders' not found\"}}");
    idmint_ns_info_init(&info, IDMINT_KIND_SNOWFLAKE);
    assert_int_equal(idmint_ns_get(a, "orders", &info), IDMINT_ENOTFOUND);
    assert_true(strstr(idmint_errmsg(), "namespace 'orders' not found") != NULL);
    assert_last_request(c, "GET /v1/namespaces/orders HTTP/1.1");
    assert_int_equal(atomic_load(&c->requests), 1); /* an answer, not an outage: asked once */
    idmint_authority_close(a);
}

static void test_remote_http__a_2xx_that_is_not_a_json_object_is_a_store_error(void **state)
{
    struct canned *c = *state;
    idmint_authority *a = open_canned(c);
    idmint_ns_info info;

    idmint_ns_info_init(&info, IDMINT_KIND_SNOWFLAKE);
    answer(c, "200 OK", "<html>a proxy's page</html>");
    assert_int_equal(idmint_ns_get(a, "orders", &info), IDMINT_ESTORE);
    assert_true(strstr(idmint_errmsg(), "not a JSON object") != NULL);
    answer(c, "200 OK", "[1, 2]");
    assert_int_equal(idmint_ns_get(a, "orders", &info), IDMINT_ESTORE);
    /* An object without the namespace's fields: named, not taken as zeros. */
    answer(c, "200 OK", "{\"name\":\"orders\"}");
    assert_int_equal(idmint_ns_get(a, "orders", &info), IDMINT_ESTORE);
    assert_true(strstr(idmint_errmsg(), "reply has no valid") != NULL);
    idmint_authority_close(a);
}

/* "unavailable" is an outage: a read is asked again (within its budget), a
 * write that may have happened is not. */
static void test_remote_http__only_idempotent_requests_are_sent_again(void **state)
{
    struct canned *c = *state;
    idmint_authority *a = open_canned(c);
    idmint_ns_info info;

    answer(c, "503 Service Unavailable",
           "{\"error\":{\"code\":\"unavailable\",\"message\":\"store is down\"}}");
    idmint_ns_info_init(&info, IDMINT_KIND_SNOWFLAKE);
    assert_int_equal(idmint_ns_get(a, "orders", &info), IDMINT_EUNAVAILABLE);
    assert_true(atomic_load(&c->requests) >= 3);
    assert_true(strstr(idmint_errmsg(), "store is down") != NULL);

    answer(c, "503 Service Unavailable",
           "{\"error\":{\"code\":\"unavailable\",\"message\":\"store is down\"}}");
    idmint_ns_info_init(&info, IDMINT_KIND_SNOWFLAKE);
    snprintf(info.name, sizeof(info.name), "orders");
    assert_int_equal(idmint_ns_create(a, &info), IDMINT_EUNAVAILABLE);
    assert_int_equal(atomic_load(&c->requests), 1);
    assert_last_request(c, "POST /v1/namespaces HTTP/1.1");
    idmint_authority_close(a);
}

static void test_remote_http__a_bearer_token_that_could_end_its_header_is_refused(void **state)
{
    struct canned *c = *state;
    char url[64];
    idmint_authority *a = NULL;

    answer(c, "200 OK", "{}");
    snprintf(url, sizeof(url), "http://127.0.0.1:%u", (unsigned)c->port);
    assert_int_equal(setenv("IDMINT_TOKEN", "abc\r\nX-Evil: 1", 1), 0);
    assert_int_equal(idmint_authority_open(&a, url, 0), IDMINT_EINVAL);
    assert_true(strstr(idmint_errmsg(), "not visible ASCII") != NULL);
    assert_int_equal(unsetenv("IDMINT_TOKEN"), 0);
    assert_int_equal(atomic_load(&c->requests), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_remote_http__bad_locations_are_refused_before_any_request),
        cmocka_unit_test(test_remote_http__error_body_maps_to_the_library_code_with_its_message),
        cmocka_unit_test(test_remote_http__a_2xx_that_is_not_a_json_object_is_a_store_error),
        cmocka_unit_test(test_remote_http__only_idempotent_requests_are_sent_again),
        cmocka_unit_test(test_remote_http__a_bearer_token_that_could_end_its_header_is_refused),
    };

    unsetenv("IDMINT_TOKEN");
    return cmocka_run_group_tests(tests, canned_start, canned_stop);
}
