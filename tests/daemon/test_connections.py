#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Connection limits (issue 10): one client address holds at most
# max_connections_per_client connections and the next get 503 unavailable
# with Retry-After, while another address is still served; the last slots
# of max_connections are kept for address prefixes (/24) that hold none
# (test_connection_prefixes.py has the prefix rules); near the limit,
# idle kept-alive connections are closed, oldest first, down to 3/4. The
# other loopback addresses (127.0.0.2, ...) stand in for other clients.

import os
import socket
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import daemon_harness as H  # noqa: E402

IDMINTD, IDMINT = H.usage_paths()
S = H.Suite("connections")

FIRST, SECOND, THIRD, FOURTH = "127.0.0.1", "127.0.0.2", "127.0.0.3", "127.0.0.4"
ELSEWHERE = "127.0.1.2"  # another /24: a prefix that holds no connection
HEALTHZ = "GET /healthz HTTP/1.1\r\nHost: idmint\r\n\r\n"
PARTIAL = "GET /healthz HTTP/1.1\r\nHost: idmint\r\n"  # a head without its end: not idle


def connect_from(d, src, timeout=5.0):
    """A TCP connection to @d whose source address is @src."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(timeout * H.SCALE)
    s.bind((src, 0))
    s.connect((H.HOST, d.port))
    return s


def ask(s, text, desc, timeout=5.0):
    """Send @text on @s and read one response (the connection stays open)."""
    try:
        s.sendall(text.encode())
    except OSError as e:
        return H.Resp(desc, error="send: %s" % e)
    return H.parse_raw_response(desc, H.read_response_bytes(s, timeout))


def get(path, close=False):
    return "GET %s HTTP/1.1\r\nHost: idmint\r\n%s\r\n" % (path,
                                                         "Connection: close\r\n" if close else "")


def fetch(d, src, path):
    """One request on a fresh connection from @src, closed after."""
    desc = "GET %s from %s" % (path, src)
    try:
        s = connect_from(d, src)
    except OSError as e:
        return H.Resp(desc, error="connect: %s" % e)
    try:
        return ask(s, get(path, close=True), desc)
    finally:
        s.close()


def is_open(s):
    """True while the server has neither closed nor reset @s."""
    s.setblocking(False)
    try:
        return s.recv(1) != b""
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        s.settimeout(5.0 * H.SCALE)


def hold(d, src, n, what, leave_partial=False):
    """@n connections from @src, each served /healthz once (so admitted)."""
    held = []
    for i in range(n):
        s = connect_from(d, src)
        r = ask(s, HEALTHZ, "%s #%d from %s" % (what, i + 1, src))
        S.status(r, 200, "%s: connection %d of %d from %s is served" % (what, i + 1, n, src))
        if leave_partial:
            s.sendall(PARTIAL.encode())
        held.append(s)
    return held


def close_all(socks):
    for s in socks:
        try:
            s.close()
        except OSError:
            pass


def expect_refused(d, src, reason, what):
    """A new connection from @src gets 503 unavailable with Retry-After, then EOF."""
    try:
        s = connect_from(d, src)
    except OSError as e:
        S.ok(False, what, "connect: %s" % e)
        return
    try:
        r = ask(s, HEALTHZ, "%s from %s" % (what, src))
        if S.error(r, 503, "unavailable", what):
            S.ok(r.header("retry-after") == "1", what + " (Retry-After: 1)",
                 "headers %r" % r.headers)
            S.ok((r.header("connection") or "").lower() == "close", what + " (Connection: close)",
                 "headers %r" % r.headers)
            S.ok(reason in r.json()["error"]["message"], what + " (message names the limit)",
                 "expected %r in %r" % (reason, r.json()["error"]["message"]))
        rest = H.read_some(s, 5.0)
        S.ok(rest == b"", what + " (then the server closes)", "got more: %s" % H.snip(rest))
    finally:
        s.close()


def refused_metric(d, src, reason):
    """idmint_http_connections_refused_total{reason} from /metrics, or None (and why)."""
    r = fetch(d, src, "/metrics")
    if r.status != 200:
        return None, "GET /metrics from %s: %s" % (src, r.show())
    line = 'idmint_http_connections_refused_total{reason="%s"} ' % reason
    for text in r.text.splitlines():
        if text.startswith(line):
            return int(text[len(line):]), text
    return None, "no line %r in %s" % (line, H.snip(r.text, 2000))


def create_ns(d):
    r = d.post("/v1/namespaces", {"name": "orders", "kind": "snowflake"})
    S.status(r, 201, "setup: create namespace orders")


def test_per_client(d):
    """--max-connections-per-client 8: the 9th from one address is refused, others served."""
    create_ns(d)
    held = hold(d, FIRST, 8, "per-client")
    try:
        expect_refused(d, FIRST, "max_connections_per_client",
                       "the 9th connection from 127.0.0.1 is refused")
        expect_refused(d, FIRST, "max_connections_per_client",
                       "the 10th connection from 127.0.0.1 is refused")
        S.status(fetch(d, SECOND, "/healthz"), 200,
                 "127.0.0.2 is served /healthz while 127.0.0.1 holds its maximum")
        r = fetch(d, SECOND, "/v1/ids?namespace=orders&count=3")
        j = S.json_ok(r, 200, "127.0.0.2 is served /v1/ids while 127.0.0.1 holds its maximum")
        if j is not None:
            S.ok(len(j.get("ids", [])) == 3, "/v1/ids from 127.0.0.2 gives 3 ids", H.snip(r.body))
        others = hold(d, SECOND, 3, "another address")
        close_all(others)
        for i, s in enumerate(held):
            S.status(ask(s, HEALTHZ, "held #%d again" % (i + 1)), 200,
                     "held connection %d of 127.0.0.1 still serves" % (i + 1))
        n, detail = refused_metric(d, THIRD, "per_client")
        S.ok(n is not None and n >= 2, "/metrics counts the refusals (per_client >= 2)", detail)
        # A connection that closes gives its slot back to its address.
        held.pop().close()
        ok = H.wait_for(lambda: fetch(d, FIRST, "/healthz").status == 200, 5.0, 0.1)
        S.ok(ok, "after one of its connections closes, 127.0.0.1 is served again")
    finally:
        close_all(held)


def test_reserve(d):
    """max_connections 16: the last slot (16/16 = 1) is only for a prefix holding none."""
    create_ns(d)
    # Held connections each carry half a request, so they are busy, not idle:
    # the idle sweep near the limit leaves them alone.
    held = hold(d, FIRST, 15, "reserve", leave_partial=True)
    try:
        expect_refused(d, FIRST, "kept for address prefixes without a connection",
                       "with 15 of 16 slots taken, a 16th from the same address is refused")
        expect_refused(d, SECOND, "kept for address prefixes without a connection",
                       "with 15 of 16 slots taken, another address of the same /24 is refused")
        s = connect_from(d, ELSEWHERE)
        try:
            S.status(ask(s, HEALTHZ, "reserve slot /healthz"), 200,
                     "127.0.1.2, whose /24 holds nothing, gets the reserved slot: /healthz")
            r = ask(s, get("/v1/ids?namespace=orders&count=2"), "reserve slot /v1/ids")
            S.json_ok(r, 200, "127.0.1.2 in the reserved slot: /v1/ids")
        finally:
            s.close()
        # The slot 127.0.1.2 held frees once the server has read its close.
        H.wait_for(lambda: refused_metric(d, ELSEWHERE, "reserve")[0] is not None, 5.0, 0.1)
        n, detail = refused_metric(d, ELSEWHERE, "reserve")
        S.ok(n is not None and n >= 1, "/metrics counts the reserve refusal", detail)
    finally:
        close_all(held)


def test_idle_near_limit(d):
    """max_connections 16: idle connections stay at 8 of 16, and are closed above 12."""
    first = hold(d, FIRST, 8, "idle")
    more = []
    try:
        time.sleep(2.5)  # well past the short idle time, yet below 3/4 nothing closes
        S.ok(all(is_open(s) for s in first),
             "below 3/4 of max_connections, idle kept-alive connections stay open",
             "open: %s" % [is_open(s) for s in first])
        more = hold(d, THIRD, 6, "idle, pushing past 3/4")
        # 14 open > 12 = 3/4 of 16: the two oldest idle ones must go.
        H.wait_for(lambda: sum(not is_open(s) for s in first) >= 2, 5.0, 0.1)
        time.sleep(1.0)  # and no more than that
        closed = [not is_open(s) for s in first]
        S.ok(sum(closed) == 2, "above 3/4, idle connections are closed down to 3/4 (2 of 14)",
             "closed: %s" % closed)
        S.ok(closed[:2] == [True, True], "the oldest idle connections are closed first",
             "closed: %s" % closed)
        S.ok(all(is_open(s) for s in more), "the newer idle connections stay",
             "open: %s" % [is_open(s) for s in more])
        S.status(fetch(d, FOURTH, "/healthz"), 200, "a new client is served near the limit")
    finally:
        close_all(first + more)


def test_env_and_bad_values():
    env = dict(H.clean_env(), IDMINT_MAX_CONNECTIONS_PER_CLIENT="2")
    d = S.daemon(IDMINTD, env=env)
    held = hold(d, FIRST, 2, "env limit")
    try:
        expect_refused(d, FIRST, "max_connections_per_client",
                       "IDMINT_MAX_CONNECTIONS_PER_CLIENT=2: the 3rd connection is refused")
    finally:
        close_all(held)
    S.stop_daemon(d, "env daemon: SIGTERM exits 0")
    for bad in ("0", "x", "-1"):
        p = subprocess.run([IDMINTD, "--listen", "127.0.0.1:0",
                            "--max-connections-per-client", bad],
                           capture_output=True, timeout=10 * H.SCALE, env=H.clean_env(),
                           cwd=d.dir)
        S.ok(p.returncode == 2 and b"--max-connections-per-client" in p.stderr,
             "--max-connections-per-client %s exits 2 naming the flag" % bad,
             "status %s, stderr %s" % (p.returncode, H.snip(p.stderr)))


CFG_16 = ("[server]\nmax_connections = 16\nmax_connections_per_client = 64\n"
          "request_timeout_ms = 60000\n")  # long: only the idle sweep closes within the test


def group(name, fn, **daemon_kw):
    """Run @fn on a daemon of its own; stop it after (it must exit 0)."""
    def body():
        d = S.daemon(IDMINTD, **daemon_kw)
        try:
            fn(d)
        finally:
            S.stop_daemon(d, "%s daemon: SIGTERM exits 0" % name)
    S.run(name, body)


def main():
    group("per-client limit", test_per_client, extra_args=["--max-connections-per-client", "8"])
    group("reserve", test_reserve, config=CFG_16)
    group("idle near the limit", test_idle_near_limit, config=CFG_16)
    S.run("env and bad values", test_env_and_bad_values)
    S.finish()


if __name__ == "__main__":
    main()
