/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for cmd/idmintd/http.c, the server, spoken to over raw
 * sockets on loopback: requests on one kept-alive connection are each
 * screened as the first was (a bad one among good ones is refused on its
 * own); a head with conflicting framing is 400 and the connection closes;
 * a head over max_header_bytes is 431 and closes; a request without Host
 * on HTTP/1.1 is 400; past max_connections_per_client a connection gets
 * 503 and is closed while those already open are served; a connection
 * that sends nothing is closed after request_timeout_ms.
 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "daemon_fixture.h"
#include "http_screen.h"
#include "testsupport.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define PER_CLIENT 3

static void small_limits(struct config *cfg)
{
    cfg->max_connections_per_client = PER_CLIENT;
    cfg->request_timeout_ms = 1000;
    cfg->max_header_bytes = 2048;
}

static int setup(void **state)
{
    return td_setup_with(state, small_limits, 0, 1);
}

static int connect_to(const struct td_daemon *t)
{
    struct sockaddr_in sa;
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    assert_true(fd >= 0);
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)t->port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    return fd;
}

static void send_all(int fd, const char *text)
{
    size_t len = strlen(text), off = 0;

    while (off < len) {
        ssize_t n = send(fd, text + off, len - off, MSG_NOSIGNAL);

        if (n <= 0)
            return; /* the server closed: what is read next tells */
        off += (size_t)n;
    }
}

/*
 * Read until @p want answers ("HTTP/1.1 " lines) and their bodies have come,
 * or the server closes (then *closed = 1), or 30 s times the scale pass.
 * The text read, NUL-terminated, in @p buf.
 */
static size_t read_answers(int fd, char *buf, size_t size, int want, int *closed)
{
    size_t used = 0;
    int waited_ms = 0, limit_ms = 30000 * (int)ts_scale();

    *closed = 0;
    buf[0] = '\0';
    while (used + 1 < size && waited_ms < limit_ms) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        ssize_t n;
        int seen = 0;
        const char *s = buf;

        while ((s = strstr(s, "HTTP/1.1 ")) != NULL) {
            const char *body = strstr(s, "\r\n\r\n"), *cl = strstr(s, "content-length: ");

            if (cl == NULL || (body != NULL && cl > body))
                cl = strstr(s, "Content-Length: "); /* the refusals written at accept */

            if (body == NULL || cl == NULL || cl > body)
                break;
            if ((size_t)(buf + used - (body + 4)) < strtoul(cl + 16, NULL, 10))
                break;
            seen++;
            s = body + 4;
        }
        if (seen >= want)
            break;
        if (poll(&p, 1, 100) == 0) {
            waited_ms += 100;
            continue;
        }
        n = recv(fd, buf + used, size - used - 1, 0);
        if (n <= 0) {
            *closed = 1;
            break;
        }
        used += (size_t)n;
        buf[used] = '\0';
    }
    return used;
}

/* 1 when the server closes @p fd within 30 s times the scale. */
static int closes(int fd)
{
    char buf[4096];
    int closed;

    read_answers(fd, buf, sizeof(buf), 1000, &closed);
    return closed;
}

static unsigned count(const char *text, const char *what)
{
    unsigned n = 0;

    while ((text = strstr(text, what)) != NULL) {
        n++;
        text++;
    }
    return n;
}

static void test_http__each_request_on_a_connection_is_screened(void **state)
{
    struct td_daemon *t = *state;
    int fd = connect_to(t), closed;
    char buf[16384];

    send_all(fd, "GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n"
                 "GET /healthz HTTP/1.1\r\nHost: bad host\r\n\r\n"
                 "GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n");
    read_answers(fd, buf, sizeof(buf), 3, &closed);
    /* The second is refused; whether the third is answered or the connection
     * closes after the refusal, the first is served and none is skipped. */
    assert_true(strncmp(buf, "HTTP/1.1 200", 12) == 0);
    assert_int_equal(count(buf, "HTTP/1.1 400"), 1);
    assert_true(count(buf, "HTTP/1.1 200") + (unsigned)closed >= 2);
    close(fd);
}

static void test_http__conflicting_framing_is_400_and_closes(void **state)
{
    struct td_daemon *t = *state;
    int fd = connect_to(t), closed;
    char buf[8192];

    send_all(fd, "POST /v1/namespaces HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\n"
                 "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n");
    read_answers(fd, buf, sizeof(buf), 1, &closed);
    assert_true(strncmp(buf, "HTTP/1.1 400", 12) == 0);
    assert_true(closed || closes(fd));
    close(fd);
}

static void test_http__a_head_over_the_bound_is_431_and_closes(void **state)
{
    struct td_daemon *t = *state;
    int fd = connect_to(t), closed;
    char *head = malloc(8192), buf[8192];

    assert_non_null(head);
    strcpy(head, "GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Pad: ");
    memset(head + strlen(head), 'a', 4000);
    strcpy(head + strlen("GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Pad: ") + 4000, "\r\n\r\n");
    send_all(fd, head);
    read_answers(fd, buf, sizeof(buf), 1, &closed);
    assert_true(strncmp(buf, "HTTP/1.1 431", 12) == 0);
    assert_true(closed || closes(fd));
    close(fd);
    free(head);
}

static void test_http__http11_without_host_is_400(void **state)
{
    struct td_daemon *t = *state;
    int fd = connect_to(t), closed;
    char buf[8192];

    send_all(fd, "GET /healthz HTTP/1.1\r\n\r\n");
    read_answers(fd, buf, sizeof(buf), 1, &closed);
    assert_true(strncmp(buf, "HTTP/1.1 400", 12) == 0);
    close(fd);
}

static void test_http__connections_past_the_per_client_bound_get_503(void **state)
{
    struct td_daemon *t = *state;
    int fds[PER_CLIENT], extra, closed, k;
    char buf[8192];

    for (k = 0; k < PER_CLIENT; k++) {
        fds[k] = connect_to(t);
        /* Served: the server has accepted and counted it. */
        send_all(fds[k], "GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n");
        read_answers(fds[k], buf, sizeof(buf), 1, &closed);
        assert_true(strncmp(buf, "HTTP/1.1 200", 12) == 0);
    }
    /* Refused at accept: the answer comes unasked (a request sent now could
     * make the close a reset that drops it). */
    extra = connect_to(t);
    read_answers(extra, buf, sizeof(buf), 1, &closed);
    assert_true(strncmp(buf, "HTTP/1.1 503", 12) == 0);
    assert_true(closed || closes(extra));
    close(extra);
    /* Those already open are still served. */
    send_all(fds[0], "GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n");
    read_answers(fds[0], buf, sizeof(buf), 1, &closed);
    assert_true(strncmp(buf, "HTTP/1.1 200", 12) == 0);
    for (k = 0; k < PER_CLIENT; k++)
        close(fds[k]);
    assert_true(http_refused_total(HTTP_REFUSED_PER_CLIENT) >= 1);
}

static void test_http__a_silent_connection_is_closed(void **state)
{
    struct td_daemon *t = *state;
    int fd = connect_to(t);

    assert_true(closes(fd));
    close(fd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_http__each_request_on_a_connection_is_screened, setup,
                                        td_teardown),
        cmocka_unit_test_setup_teardown(test_http__conflicting_framing_is_400_and_closes, setup,
                                        td_teardown),
        cmocka_unit_test_setup_teardown(test_http__a_head_over_the_bound_is_431_and_closes, setup,
                                        td_teardown),
        cmocka_unit_test_setup_teardown(test_http__http11_without_host_is_400, setup, td_teardown),
        cmocka_unit_test_setup_teardown(test_http__connections_past_the_per_client_bound_get_503,
                                        setup, td_teardown),
        cmocka_unit_test_setup_teardown(test_http__a_silent_connection_is_closed, setup,
                                        td_teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
