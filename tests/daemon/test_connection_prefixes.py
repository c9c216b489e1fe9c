#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Issue 28 item 7, second part: connection caps per address prefix, and a
# full server that answers. Many loopback addresses (127.a.b.c, all routed
# to lo) stand in for many clients: addresses of one /24 share a prefix.
#  - max_connections_per_prefix bounds one prefix whatever number of
#    addresses it uses; client_prefix_v4 sets the prefix length.
#  - Many addresses in a few prefixes cannot take the last max_connections/16
#    slots: those go to prefixes without a connection, so a client from
#    elsewhere is served.
#  - When every slot is taken anyway (one address from each of many
#    prefixes), a newcomer gets 503 unavailable and the connection closes
#    (on main it was left in the listen backlog with no answer at all), also
#    past the 32 refusals a loop lets linger.

import os
import socket
import sys
import time

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import daemon_harness as H  # noqa: E402

IDMINTD, IDMINT = H.usage_paths()
S = H.Suite("connection_prefixes")

HEALTHZ = b"GET /healthz HTTP/1.1\r\nHost: idmint\r\n\r\n"
PARTIAL = b"GET /healthz HTTP/1.1\r\nHost: idmint\r\n"  # half a request: busy, not idle


def connect_from(d, src, timeout=5.0):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(timeout * H.SCALE)
    s.bind((src, 0))
    s.connect((H.HOST, d.port))
    return s


def ask(s, data, desc, timeout=5.0):
    try:
        s.sendall(data)
    except OSError as e:
        return H.Resp(desc, error="send: %s" % e)
    return H.parse_raw_response(desc, H.read_response_bytes(s, timeout))


def hold(d, addrs, what):
    """One connection from each of @addrs, served once, then left busy."""
    held = []
    for src in addrs:
        s = connect_from(d, src)
        r = ask(s, HEALTHZ, "%s from %s" % (what, src))
        if not S.status(r, 200, "%s: a connection from %s is served" % (what, src)):
            s.close()
            continue
        s.sendall(PARTIAL)
        held.append(s)
    return held


def close_all(socks):
    for s in socks:
        try:
            s.close()
        except OSError:
            pass


def served(d, src, what):
    s = connect_from(d, src)
    try:
        S.status(ask(s, HEALTHZ, "%s from %s" % (what, src)), 200, what)
    finally:
        s.close()


def refused(d, src, words, what, send_first=True):
    """A connection from @src gets 503 unavailable naming @words, then EOF."""
    try:
        s = connect_from(d, src)
    except OSError as e:
        S.ok(False, what, "connect: %s" % e)
        return None
    try:
        if send_first:
            r = ask(s, HEALTHZ, "%s from %s" % (what, src))
        else:
            r = H.parse_raw_response(what, H.read_response_bytes(s, 5.0))
        if S.error(r, 503, "unavailable", what):
            S.ok(r.header("retry-after") == "1", what + " (Retry-After: 1)", repr(r.headers))
            S.ok(words in r.json()["error"]["message"], what + " (names the limit)",
                 "expected %r in %r" % (words, r.json()["error"]["message"]))
        rest = H.read_some(s, 5.0)
        S.ok(rest == b"", what + " (then the server closes)", H.snip(rest))
        return r
    finally:
        s.close()


def metric(d, src, reason):
    s = connect_from(d, src)
    try:
        r = ask(s, b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", "metrics")
    finally:
        s.close()
    line = 'idmint_http_connections_refused_total{reason="%s"} ' % reason
    for text in r.text.splitlines():
        if text.startswith(line):
            return int(text[len(line):])
    return None


def test_per_prefix(d):
    """max_connections_per_prefix 8 over /24s: the 9th address of a /24 is refused."""
    held = hold(d, ["127.0.5.%d" % i for i in range(1, 9)], "8 addresses of 127.0.5.0/24")
    try:
        refused(d, "127.0.5.9", "max_connections_per_prefix",
                "a 9th address of 127.0.5.0/24 is refused (per prefix)")
        refused(d, "127.0.5.200", "max_connections_per_prefix",
                "another address of 127.0.5.0/24 is refused too")
        served(d, "127.0.6.1", "127.0.6.1, another /24, is served meanwhile")
        n = metric(d, "127.0.7.1", "per_prefix")
        S.ok(n is not None and n >= 2, "/metrics counts per_prefix refusals", repr(n))
    finally:
        close_all(held)
    ok = H.wait_for(lambda: refused_free(d, "127.0.5.9"), 5.0, 0.1)
    S.ok(ok, "once the prefix's connections close, its addresses are served again")


def refused_free(d, src):
    s = connect_from(d, src)
    try:
        return ask(s, HEALTHZ, "again").status == 200
    finally:
        s.close()


def test_prefix_length(d):
    """client_prefix_v4 = 16, 4 per prefix: addresses in 4 different /24s of one /16."""
    held = hold(d, ["127.7.%d.1" % i for i in range(1, 5)], "4 /24s of 127.7.0.0/16")
    try:
        refused(d, "127.7.200.1", "max_connections_per_prefix",
                "a fifth /24 of 127.7.0.0/16 is refused: the prefix is the /16")
        served(d, "127.8.0.1", "127.8.0.1, another /16, is served")
    finally:
        close_all(held)


def test_full_server(d):
    """max_connections 64 (reserve 4): few prefixes cannot take the reserve; many can fill it,
    and then a newcomer gets 503 and a close, not silence."""
    # 60 = 64 - 4 slots from 60 addresses of three /24s (the many addresses).
    many = ["127.9.%d.%d" % (k, i) for k in range(3) for i in range(1, 21)]
    held = hold(d, many, "60 addresses of 3 prefixes")
    try:
        refused(d, "127.9.0.99", "kept for address prefixes without a connection",
                "a 61st address of those prefixes is refused: the last slots are reserved")
        # A client from elsewhere takes a reserved slot and is served.
        s = connect_from(d, "127.10.0.1")
        r = ask(s, HEALTHZ, "reserve slot")
        S.status(r, 200, "127.10.0.1, from a prefix without a connection, is served "
                         "while 60 addresses hold the rest")
        s.sendall(PARTIAL)
        held.append(s)
        # Three more prefixes take the rest: every slot is taken now.
        held += hold(d, ["127.11.%d.1" % k for k in range(3)], "the last 3 slots")
        started = time.monotonic()
        r = refused(d, "127.12.0.1", "max_connections connections",
                    "with every slot taken, a newcomer gets 503 and a close")
        took = time.monotonic() - started
        S.ok(r is not None and r.status == 503, "the full server answered (%.2f s)" % took)
        refused(d, "127.12.0.2", "max_connections connections",
                "a newcomer that sends nothing also gets 503 and a close", send_first=False)
        # A flood past the 32 refusals one loop lets linger: each still gets its
        # 503 and a close (answered at once, without lingering).
        flood = []
        try:
            for i in range(40):
                c = connect_from(d, "127.13.%d.%d" % (i // 200, 1 + i % 200))
                c.sendall(HEALTHZ)
                flood.append(c)
            answers = [H.parse_raw_response("flood %d" % i, H.read_response_bytes(c, 5.0))
                       for i, c in enumerate(flood)]
            ok = [a.status == 503 for a in answers]
            S.ok(all(ok), "40 connections at once to a full server each get 503",
                 "answered 503: %d of 40; first other: %s"
                 % (sum(ok), next((a.show() for a in answers if a.status != 503), "-")))
            eof = [H.read_some(c, 5.0) == b"" for c in flood]
            S.ok(all(eof), "and each is closed", "closed: %d of 40" % sum(eof))
        finally:
            close_all(flood)
        n = metric_when_free(d, held)
        S.ok(n is not None and n >= 42, "/metrics counts the full refusals (>= 42)", repr(n))
    finally:
        close_all(held)


def metric_when_free(d, held):
    """Free one slot to read /metrics from, then the full count."""
    held.pop().close()
    value = [None]

    def read():
        try:
            value[0] = metric(d, "127.14.0.1", "full")
        except OSError:
            return False
        return value[0] is not None
    H.wait_for(read, 5.0, 0.1)
    return value[0]


def group(name, fn, config):
    def body():
        d = S.daemon(IDMINTD, config=config)
        try:
            fn(d)
        finally:
            S.stop_daemon(d, "%s daemon: SIGTERM exits 0" % name)
    S.run(name, body)


# Long request timeout: only the rules under test close anything here.
BASE = "[server]\nrequest_timeout_ms = 60000\n"


def main():
    group("per prefix", test_per_prefix, BASE + "max_connections_per_prefix = 8\n")
    group("prefix length", test_prefix_length,
          BASE + "max_connections_per_prefix = 4\nclient_prefix_v4 = 16\n")
    group("full server", test_full_server, BASE + "max_connections = 64\n")
    S.finish()


if __name__ == "__main__":
    main()
