#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Issue 28 item 7, first part: every request of a kept-alive connection is
# screened as its first one is. A framing error (Content-Length beside
# Transfer-Encoding, two Content-Lengths, Transfer-Encoding in HTTP/1.0) or
# a missing or repeated Host on the second or third request is answered 400
# and the connection is closed, so the request hidden behind it (here a
# POST /v1/namespaces that would leave a namespace behind) never runs.
# Each case is sent pipelined (all bytes at once) and step by step (the
# smuggling request only after the good one was answered).

import os
import socket
import sys
import time

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import daemon_harness as H  # noqa: E402

IDMINTD, IDMINT = H.usage_paths()
S = H.Suite("kept_alive")

GOOD = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
GOOD_LAST = b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"


def hidden(name, close=b""):
    """A request that leaves namespace @name behind if it ever runs."""
    body = b'{"name":"%s","kind":"range"}' % name.encode()
    return (b"POST /v1/namespaces HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"%sContent-Length: %d\r\n\r\n%s" % (close, len(body), body))


# (what, the refused request; the hidden one follows it on the same connection)
CASES = [
    ("Content-Length beside Transfer-Encoding",
     b"POST /v1/collisions HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n"
     b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
    ("Transfer-Encoding before Content-Length",
     b"POST /v1/collisions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
     b"Content-Length: 60\r\n\r\n0\r\n\r\n"),
    ("two Content-Lengths",
     b"POST /v1/collisions HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n"
     b"Content-Length: 60\r\n\r\n"),
    ("Transfer-Encoding in HTTP/1.0",
     b"POST /v1/collisions HTTP/1.0\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n"
     b"\r\n0\r\n\r\n"),
    ("no Host in HTTP/1.1", b"GET /healthz HTTP/1.1\r\nAccept: */*\r\n\r\n"),
    ("two Host lines", b"GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n"),
    ("two Host lines, the same value", b"GET /healthz HTTP/1.1\r\nHost: x\r\nHost: x\r\n\r\n"),
]


def split_responses(data):
    """Every complete response in @data, in order (Content-Length framed)."""
    out = []
    while data:
        head, sep, rest = data.partition(b"\r\n\r\n")
        if not sep:
            break
        length = 0
        for line in head.split(b"\r\n")[1:]:
            k, _, v = line.partition(b":")
            if k.strip().lower() == b"content-length":
                length = int(v.strip())
        if len(rest) < length:
            break
        out.append(H.parse_raw_response("response %d" % (len(out) + 1), head + sep + rest[:length]))
        data = rest[length:]
    return out


def read_until_close(s, want, wait=3.0):
    """Read until EOF; once @want responses are in, wait only @wait s more for it.
    (bytes, closed by the server)."""
    got = b""
    deadline = time.monotonic() + 10.0 * H.SCALE
    while time.monotonic() < deadline:
        s.settimeout((wait if len(split_responses(got)) >= want else 10.0) * H.SCALE)
        try:
            chunk = s.recv(65536)
        except socket.timeout:
            return got, False
        except OSError:
            return got, True
        if not chunk:
            return got, True
        got += chunk
    return got, False


def exchange(d, steps, want):
    """Send each of @steps (bytes) on one connection, reading between them."""
    s = d.connect()
    got = b""
    try:
        for i, data in enumerate(steps):
            try:
                s.sendall(data)
            except OSError:
                break
            if i < len(steps) - 1:
                got += H.read_response_bytes(s, 5.0)
        rest, closed = read_until_close(s, want - len(split_responses(got)))
        return split_responses(got + rest), closed
    finally:
        s.close()


def namespace_exists(d, name):
    r = d.get("/v1/namespaces/" + name)
    return r.status == 200, r


def check_case(d, n, what, bad, position, pipelined):
    name = "smuggled-%d" % n
    where = "request %d of a kept-alive connection, %s" % (
        position, "pipelined" if pipelined else "step by step")
    good = [GOOD] * (position - 1)
    if pipelined:
        steps = [b"".join(good) + bad + hidden(name)]
    else:
        steps = good + [bad + hidden(name)]
    resps, closed = exchange(d, steps, position)
    label = "%s as %s" % (what, where)
    S.ok(len(resps) >= position and all(r.status == 200 for r in resps[:position - 1]),
         label + ": the good requests before it are served",
         "; ".join(r.show() for r in resps))
    if len(resps) < position:
        return
    S.error(resps[position - 1], 400, "invalid_argument", label + " is refused with 400")
    S.ok((resps[position - 1].header("connection") or "").lower() == "close",
         label + ": the 400 says Connection: close", repr(resps[position - 1].headers))
    S.ok(closed, label + ": the server closes the connection after the 400",
         "it stayed open")
    S.ok(len(resps) == position, label + ": nothing is answered after the 400",
         "; ".join(r.show() for r in resps[position:]))
    exists, r = namespace_exists(d, name)
    S.ok(not exists and r.status == 404, label + ": the request hidden behind it never ran",
         "GET /v1/namespaces/%s: %s" % (name, r.show()))


def test_refusals(d):
    n = 0
    for what, bad in CASES:
        for position in (2, 3):
            for pipelined in (True, False):
                n += 1
                check_case(d, n, what, bad, position, pipelined)


def test_good_requests_still_pipeline(d):
    """The screening refuses nothing good: three requests and a create, pipelined."""
    steps = [GOOD + GOOD + GOOD + hidden("pipelined-ok", b"Connection: close\r\n")]
    resps, _ = exchange(d, steps, 4)
    S.ok([r.status for r in resps] == [200, 200, 200, 201],
         "four good pipelined requests on one connection are all served",
         "; ".join(r.show() for r in resps))
    exists, r = namespace_exists(d, "pipelined-ok")
    S.ok(exists, "the pipelined create ran", r.show())
    # HTTP/1.0 without Host, kept alive: fine on a later request too.
    ten = b"GET /healthz HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"
    resps, _ = exchange(d, [GOOD + ten + GOOD_LAST], 3)
    S.ok([r.status for r in resps] == [200, 200, 200],
         "HTTP/1.0 without Host is served as a later request too",
         "; ".join(r.show() for r in resps))


def main():
    d = S.daemon(IDMINTD)
    started = time.monotonic()
    S.run("refusals", test_refusals, d)
    S.run("good requests", test_good_requests_still_pipeline, d)
    S.status(d.get("/healthz"), 200, "the daemon still serves after every case")
    print("%d cases, %.1f s" % (len(CASES) * 4, time.monotonic() - started), flush=True)
    S.stop_daemon(d, "idmintd stops cleanly after the kept-alive requests")
    S.finish()


if __name__ == "__main__":
    main()
