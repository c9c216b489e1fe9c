#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# The MUST-level request rules of RFC 9112 (HTTP/1.1) and RFC 9110 (HTTP
# semantics) that bind a server, each as one raw request that breaks it (or,
# for the "MUST accept" rules, one that relies on it) and the answer the RFC
# prescribes. Raw sockets: http.client would tidy every one of these up.
# Each rule is checked on a fresh connection and again as the second request
# of a kept-alive one, where h2o parses first and the screening runs on the
# raw head after it.

import os
import socket
import sys
import time

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import daemon_harness as H  # noqa: E402

IDMINTD, IDMINT = H.usage_paths()
S = H.Suite("rfc9112")

OK_HEAD = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"

# (section, rule, request bytes, expected status, must the server close?
#  [, on a kept-alive connection]). A status tuple: the RFC allows either.
# None for close: either is fine. The optional last member is what a later
# request on a kept-alive connection gets, where h2o 2.2 parses it before the
# screening: (status, JSON body?, closed?). Where h2o refuses a request
# itself, the body is its plain text (docs/http-api.md).
RULES = [
    ("RFC 9112 §3", "a request-target longer than the server will parse gets 414",
     b"GET /" + b"a" * 20000 + b" HTTP/1.1\r\nHost: x\r\n\r\n", 414, True),
    ("RFC 9112 §3", "an invalid request-line (no HTTP-version) is refused with 400",
     b"GET /healthz\r\nHost: x\r\n\r\n", 400, True, (400, False, True)),
    ("RFC 9112 §3", "an invalid request-line (two spaces, a space in the target) gets 400",
     b"GET /heal thz HTTP/1.1\r\nHost: x\r\n\r\n", 400, True, (400, False, True)),
    ("RFC 9112 §2.3", "HTTP-version is case-sensitive: 'http/1.1' is invalid, 400",
     b"GET /healthz http/1.1\r\nHost: x\r\n\r\n", 400, True, (400, False, True)),
    ("RFC 9110 §15.6.6", "an unsupported major version (HTTP/2.0 in HTTP/1 syntax) gets 505",
     b"GET /healthz HTTP/2.0\r\nHost: x\r\n\r\n", 505, True, (400, False, True)),
    ("RFC 9110 §15.6.6", "an unsupported major version (HTTP/3.1) gets 505",
     b"GET /healthz HTTP/3.1\r\nHost: x\r\n\r\n", 505, True, (400, False, True)),
    ("RFC 9112 §3.2", "an HTTP/1.1 request without Host gets 400",
     b"GET /healthz HTTP/1.1\r\nAccept: */*\r\n\r\n", 400, True),
    ("RFC 9112 §3.2", "a request with two Host field lines gets 400",
     b"GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400, True),
    ("RFC 9112 §3.2", "a Host with an invalid field value (a space inside) gets 400",
     b"GET /healthz HTTP/1.1\r\nHost: a b\r\n\r\n", 400, True),
    ("RFC 9112 §3.2", "a Host with an invalid field value (an unclosed IPv6 literal) gets 400",
     b"GET /healthz HTTP/1.1\r\nHost: [::1\r\n\r\n", 400, True),
    ("RFC 9112 §5.1", "whitespace between a field name and the colon gets 400",
     b"GET /healthz HTTP/1.1\r\nHost: x\r\nAccept : */*\r\n\r\n", 400, True, (400, False, True)),
    ("RFC 9112 §5.1", "whitespace (HTAB) between the Host field name and the colon gets 400",
     b"GET /healthz HTTP/1.1\r\nHost\t: x\r\n\r\n", 400, True, (400, False, True)),
    ("RFC 9112 §5.2", "obs-fold in a request is refused with 400",
     b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: one\r\n two\r\n\r\n", 400, True),
    ("RFC 9112 §2.2", "whitespace between the start-line and the first field is refused, 400",
     b"GET /healthz HTTP/1.1\r\n Host: x\r\n\r\n", 400, True, (400, False, True)),
    ("RFC 9112 §2.2", "a bare CR in a field value is invalid, 400",
     b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: a\rb\r\n\r\n", 400, True, (400, False, True)),
    ("RFC 9110 §5.5", "a NUL in a field value is refused, 400",
     b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: a\x00b\r\n\r\n", 400, True, (400, False, True)),
    ("RFC 9110 §5.1", "a field name that is not a token (a '(' inside) gets 400",
     b"GET /healthz HTTP/1.1\r\nHost: x\r\nX(A): 1\r\n\r\n", 400, True, (400, False, True)),
    ("RFC 9110 §5.4", "a field line larger than the server will process gets a 4xx (431)",
     b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: " + b"v" * 20000 + b"\r\n\r\n", 431, True),
    ("RFC 9112 §6.3 (4)", "Transfer-Encoding whose final coding is not chunked gets 400",
     b"POST /v1/collisions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\nabc",
     400, True, (400, False, True)),
    ("RFC 9112 §6.3 (4)", "chunked followed by another coding is not final: 400",
     b"POST /v1/collisions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, gzip\r\n\r\n"
     b"0\r\n\r\n", 400, True, (400, False, True)),
    ("RFC 9112 §6.1", "chunked applied twice is refused, 400",
     b"POST /v1/collisions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, chunked\r\n\r\n"
     b"0\r\n\r\n", 400, True, (400, False, True)),
    ("RFC 9112 §6.1 / RFC 9110 §15.6.2", "a transfer coding the server does not know, "
     "before chunked, gets 501", b"POST /v1/collisions HTTP/1.1\r\nHost: x\r\n"
     b"Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", 501, True, (400, False, True)),
    ("RFC 9112 §6.1", "Transfer-Encoding in an HTTP/1.0 request is faulty framing: 400, close",
     b"POST /v1/collisions HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400, True),
    ("RFC 9112 §6.3 (3)", "Content-Length beside Transfer-Encoding: refused, and the "
     "connection closed", b"POST /v1/collisions HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n"
     b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400, True),
    ("RFC 9112 §6.3 (5)", "two Content-Lengths that differ are invalid framing: 400, close",
     b"POST /v1/collisions HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n"
     b"\r\n{}", 400, True),
    ("RFC 9112 §6.3 (5)", "a Content-Length list with different values is invalid: 400, close",
     b"POST /v1/collisions HTTP/1.1\r\nHost: x\r\nContent-Length: 2, 3\r\n\r\n{}", 400, True, (400, False, True)),
    ("RFC 9112 §6.3 (5)", "a Content-Length that is not digits is invalid: 400, close",
     b"POST /v1/collisions HTTP/1.1\r\nHost: x\r\nContent-Length: 2x\r\n\r\n{}", 400, True, (400, False, True)),
    ("RFC 9112 §6.3 (5)", "a signed Content-Length is invalid: 400, close",
     b"POST /v1/collisions HTTP/1.1\r\nHost: x\r\nContent-Length: +2\r\n\r\n{}", 400, True, (400, False, True)),
    ("RFC 9112 §6.3 (5)", "an empty Content-Length is invalid: 400, close",
     b"POST /v1/collisions HTTP/1.1\r\nHost: x\r\nContent-Length:\r\n\r\n{}", 400, True, (400, False, True)),
    ("RFC 9110 §8.6", "a huge Content-Length is parsed without overflow (refused as too large)",
     b"POST /v1/collisions HTTP/1.1\r\nHost: x\r\nContent-Length: 18446744073709551617\r\n\r\n",
     413, True, (400, False, True)),
    ("RFC 9112 §7.1", "a chunk size that is not hex is invalid framing: 400",
     b"POST /v1/collisions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
     b"zz\r\n{}\r\n0\r\n\r\n", 400, True, (400, False, True)),
    ("RFC 9110 §9.1 / §15.6.2", "a method the server does not know gets 501",
     b"FROB /healthz HTTP/1.1\r\nHost: x\r\n\r\n", 501, None),
]

# Broken after the head: h2o decodes the body and answers with its own text.
BODY_RULES = {"RFC 9112 §7.1"}

# Requests the RFCs say a server MUST accept.
ACCEPTS = [
    ("RFC 9112 §3.2.2", "a server MUST accept the absolute-form (and use its authority)",
     b"GET http://127.0.0.1/healthz HTTP/1.1\r\nHost: other\r\n\r\n", 200),
    ("RFC 9112 §3.2", "HTTP/1.0 without Host is fine (the Host rule is HTTP/1.1's)",
     b"GET /healthz HTTP/1.0\r\n\r\n", 200),
    ("RFC 9110 §2.5", "a higher minor version (HTTP/1.2) is served as HTTP/1.1",
     b"GET /healthz HTTP/1.2\r\nHost: x\r\n\r\n", 200),
    ("RFC 9112 §6.3 (5)", "a Content-Length list of one repeated value is that value",
     b"POST /v1/collisions HTTP/1.1\r\nHost: x\r\nContent-Length: 2, 2\r\n\r\n{}", (400, 200)),
]


def complete(data, n):
    """1 when @data holds @n whole responses."""
    for _ in range(n):
        head, sep, rest = data.partition(b"\r\n\r\n")
        if not sep:
            return False
        length = 0
        for line in head.split(b"\r\n")[1:]:
            k, _, v = line.partition(b":")
            if k.strip().lower() == b"content-length":
                length = int(v.strip())
        if len(rest) < length:
            return False
        data = rest[length:]
    return True


def exchange(d, data, prefix=b""):
    """Send @prefix (a good request) then @data; the answer to @data and whether it closed."""
    want = 2 if prefix else 1
    got, closed = b"", False
    s = d.connect()
    try:
        try:
            s.sendall(prefix + data)
        except OSError:
            pass
        deadline = time.monotonic() + 5.0 * H.SCALE
        while time.monotonic() < deadline:
            # Once the answer is in, wait a moment for the close (or its absence).
            s.settimeout(0.5 * H.SCALE if complete(got, want) else 5.0 * H.SCALE)
            try:
                chunk = s.recv(65536)
            except socket.timeout:
                break
            except OSError:
                closed = True
                break
            if not chunk:
                closed = True
                break
            got += chunk
    finally:
        s.close()
    if prefix:
        first = H.parse_raw_response("prefix", got)
        if first.status != 200:
            return first, closed
        _, _, rest = got.partition(b"\r\n\r\n")
        got = rest[len(first.body):]
    return H.parse_raw_response(H.snip(data, 100), got), closed


def check_rules(d):
    for rule_row in RULES:
        section, rule, data, status, must_close = rule_row[:5]
        later = rule_row[5] if len(rule_row) > 5 else (status, True, must_close)
        for where, prefix in (("first request", b""), ("after a kept-alive request", OK_HEAD)):
            needs_json = section not in BODY_RULES
            if prefix:
                if len(data) > 4096:
                    continue  # see RULES; size limits are the first request's
                status, needs_json, must_close = later
            r, closed = exchange(d, data, prefix)
            what = "%s: %s (%s)" % (section, rule, where)
            exp = status if isinstance(status, tuple) else (status,)
            if not S.ok(r.status in exp, what, "sent %r: expected %s, got %s"
                        % (H.snip(data, 100), "/".join(map(str, exp)), r.show())):
                continue
            if r.status != 200 and needs_json:
                j = r.json()
                S.ok(isinstance(j, dict) and isinstance(j.get("error"), dict), what
                     + " (error JSON)", "body %r" % H.snip(r.body))
            if must_close:
                S.ok(closed, what + " (connection closed)", "the server kept it open")


def check_accepts(d):
    for section, rule, data, status in ACCEPTS:
        r, _ = exchange(d, data)
        exp = status if isinstance(status, tuple) else (status,)
        S.ok(r.status in exp, "%s: %s" % (section, rule), "sent %r: expected %s, got %s"
             % (H.snip(data, 100), "/".join(map(str, exp)), r.show()))


def check_alive(d):
    r = d.raw(OK_HEAD)
    S.status(r, 200, "the daemon still answers after every rule")


def main():
    d = S.daemon(IDMINTD)
    started = time.monotonic()
    S.run("rules", check_rules, d)
    S.run("accepts", check_accepts, d)
    S.run("alive", check_alive, d)
    print("%d rules, %d accepted forms, %.1f s" % (len(RULES), len(ACCEPTS),
                                                   time.monotonic() - started), flush=True)
    S.stop_daemon(d, "idmintd stops cleanly after the RFC requests")
    S.finish()


if __name__ == "__main__":
    main()
