#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Rate limits ([limits], cmd/idmintd/ratelimit.c): a token driven over its
# role's limit gets 429 rate_limited with Retry-After, while another token
# at its normal rate sees no 429 and no added latency beyond noise (its p50
# and p90 with and without the flood, against a generous bound); a client
# address over address_rate gets 429 too; both are counted in /metrics; and
# with no [limits] nothing is ever limited.

import http.client
import multiprocessing
import os
import sys
import time

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import daemon_harness as H  # noqa: E402

IDMINTD, IDMINT = H.usage_paths()
S = H.Suite("rate_limits")
FLOOD, CALM = "flood-token-0123456789abcdef", "calm-token-0123456789abcdef"
TOKENS = {"flood": ("mint", FLOOD), "calm": ("mint", CALM)}
MINT = "/v1/ids?namespace=default&count=1"


def percentile(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p / 100.0 * len(xs)))]


def calm_client(d, seconds, rate, out):
    """One kept-alive connection at @rate requests a second: latencies (s) and statuses."""
    conn = http.client.HTTPConnection(H.HOST, d.port, timeout=10 * H.SCALE)
    hdrs = {"Authorization": "Bearer " + CALM}
    end = time.monotonic() + seconds
    nxt = time.monotonic()
    while time.monotonic() < end:
        t0 = time.monotonic()
        conn.request("GET", MINT, headers=hdrs)
        r = conn.getresponse()
        r.read()
        out.append((time.monotonic() - t0, r.status))
        # After a stall, go on at the rate instead of catching up in a burst
        # that the calm token's own bucket would rightly refuse.
        nxt = max(nxt + 1.0 / rate, time.monotonic())
        time.sleep(max(0.0, nxt - time.monotonic()))
    conn.close()


def flood_process(port, stop, results):
    """Requests as fast as one connection allows until @stop; statuses and headers to @results.

    A process, not a thread: a flooding thread would share the calm
    client's interpreter lock, and the calm latency measured would be
    Python's lock hand-over (its switch interval is 5 ms), not the daemon's.
    Not niced: under a loaded machine a niced flood gets too little CPU to
    pass its own limit, and then there is nothing to test.
    """
    conn = http.client.HTTPConnection(H.HOST, port, timeout=10 * H.SCALE)
    hdrs = {"Authorization": "Bearer " + FLOOD}
    out = []
    while not stop.is_set():
        conn.request("GET", MINT, headers=hdrs)
        r = conn.getresponse()
        r.read()
        out.append((r.status, r.getheader("Retry-After"), r.getheader("Content-Type")))
    conn.close()
    results.send(out)
    results.close()


def calm_beside_flood(d, seconds, calm):
    """The calm client for @seconds while one process floods; the flood's replies."""
    ctx = multiprocessing.get_context("fork")
    stop = ctx.Event()
    recv, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=flood_process, args=(d.port, stop, send))
    proc.start()
    send.close()
    time.sleep(0.2)
    calm_client(d, seconds, 50, calm)
    stop.set()
    flood = recv.recv()
    proc.join(10 * H.SCALE)
    return flood


def check_flood_does_not_slow_the_calm(d):
    # Windows alone and beside the flood alternate, so that the load of
    # whatever else shares the machine falls on both measurements alike.
    base, calm, flood = [], [], []
    started = time.monotonic()
    for _ in range(3):
        calm_client(d, 1.0, 50, base)
        flood += calm_beside_flood(d, 1.0, calm)
    elapsed = time.monotonic() - started
    limited = [f for f in flood if f[0] == 429]
    S.ok(len(limited) > 0, "a token driven over mint_rate sees 429",
         "%d requests, statuses %s" % (len(flood), sorted({f[0] for f in flood})))
    S.ok(all(f[1] is not None and f[1].isdigit() and int(f[1]) >= 1 for f in limited),
         "every 429 carries Retry-After in whole seconds",
         "e.g. %r" % (limited[:1],))
    S.ok(len(flood) - len(limited) <= 20 + 100 * elapsed + 5,
         "the flooding token gets no more than its burst plus its rate",
         "%d allowed of %d in %.1f s" % (len(flood) - len(limited), len(flood), elapsed))
    S.ok(all(s == 200 for _, s in base + calm), "the calm token at its normal rate sees no 429",
         "statuses %s" % sorted({s for _, s in base + calm}))
    b = [x for x, _ in base]
    c = [x for x, _ in calm]
    pb = {p: percentile(b, p) * 1e3 for p in (50, 90, 99)}
    pc = {p: percentile(c, p) * 1e3 for p in (50, 90, 99)}
    print("calm token: p50 %.2f ms, p90 %.2f ms, p99 %.2f ms alone; p50 %.2f ms, p90 %.2f ms, "
          "p99 %.2f ms beside a flood of %d requests (%d refused)"
          % (pb[50], pb[90], pb[99], pc[50], pc[90], pc[99], len(flood), len(limited)),
          flush=True)
    # Generous: the flood shares the event loop, so each calm request may
    # wait for one flood request (tens of µs); scheduling noise on a shared
    # machine is the rest. The tail is judged at p90, not p99: 150 samples
    # make p99 their second worst, which one preempted time slice of a
    # neighbouring test sets (CI saw 21 ms against 3 ms alone); a flood that
    # slowed the calm token would raise p50 and p90 alike.
    S.ok(pc[50] <= 3 * pb[50] + 2 * H.SCALE, "the calm token's p50 is not raised by the flood",
         "p50 %.2f ms alone, %.2f ms beside it" % (pb[50], pc[50]))
    S.ok(pc[90] <= 3 * pb[90] + 5 * H.SCALE, "the calm token's p90 is not raised by the flood",
         "p90 %.2f ms alone, %.2f ms beside it" % (pb[90], pc[90]))


def drive_to_429(d, token):
    """Requests on one kept-alive connection until a 429 (or 10 s): that response.

    One connection: a new connection per request can be slow enough on a
    loaded machine for the bucket to refill as fast as it drains.
    """
    conn = http.client.HTTPConnection(H.HOST, d.port, timeout=10 * H.SCALE)
    end = time.monotonic() + 10 * H.SCALE
    r = H.Resp("GET " + MINT, error="no response")
    try:
        while time.monotonic() < end:
            conn.request("GET", MINT, headers={"Authorization": "Bearer " + token})
            got = conn.getresponse()
            body = got.read()
            r = H.Resp("GET " + MINT, got.status, got.reason,
                       {k.lower(): v for k, v in got.getheaders()}, body)
            if r.status == 429:
                break
    except (OSError, http.client.HTTPException) as e:
        r = H.Resp("GET " + MINT, error="%s: %s" % (type(e).__name__, e))
    finally:
        conn.close()
    return r


def check_429_body_and_metrics(d):
    r = drive_to_429(d, FLOOD)
    if S.error(r, 429, "rate_limited", "the 429 has the error body of DESIGN §7"):
        S.ok(r.header("retry-after") is not None, "the 429 names Retry-After", r.show())
    m = d.get("/metrics")
    S.ok(m.status == 200 and 'idmint_http_rate_limited_total{by="token",role="mint"} ' in m.text
         and 'idmint_http_rate_limited_total{by="token",role="mint"} 0\n' not in m.text,
         "/metrics counts the token's 429s", H.snip(m.body, 200))
    S.ok('idmint_http_requests_total{route="ids",code="429"}' in m.text
         or 'code="429"' in m.text, "/metrics counts 429 among the request statuses", "")


def check_address_limit(idmintd):
    d = S.daemon(idmintd, config="[limits]\naddress_rate = 2\naddress_burst = 3\n")
    statuses = [d.get("/healthz") for _ in range(8)]
    limited = [r for r in statuses if r.status == 429]
    S.ok(3 <= 8 - len(limited) <= 4, "an address over address_rate gets 429 after its burst",
         "statuses %s" % [r.status for r in statuses])
    if limited:
        S.error(limited[0], 429, "rate_limited", "the address's 429 has the error body")
        ra = limited[0].header("retry-after")
        S.ok(ra == "1", "Retry-After rounds the wait (500 ms) up to 1 s", "got %r" % ra)
    time.sleep(0.6)
    S.status(d.get("/healthz"), 200, "the address's bucket refills at its rate")
    time.sleep(1.6)  # the address limit covers /metrics too: let the bucket refill
    m = d.get("/metrics")
    S.ok('idmint_http_rate_limited_total{by="address",role="admin"} ' in m.text
         and 'idmint_http_rate_limited_total{by="address",role="admin"} 0\n' not in m.text,
         "/metrics counts the address's 429s", "")
    S.stop_daemon(d, "the address-limited daemon stops cleanly")


def check_off_by_default(idmintd):
    d = S.daemon(idmintd, config=H.tokens_config(TOKENS))
    statuses = {d.get(MINT, token=FLOOD).status for _ in range(300)}
    statuses |= {d.get("/healthz").status for _ in range(100)}
    S.ok(statuses == {200}, "with no [limits], 400 back-to-back requests see no 429",
         "statuses %s" % sorted(statuses))
    S.stop_daemon(d, "the unlimited daemon stops cleanly")


def check_bad_settings(idmintd):
    for text in ("[limits]\nmint_rate = -1\n", "[limits]\nmint_burst = 0\n",
                 "[limits]\nmint_speed = 5\n", "[limits]\naddress_rate = 1000001\n"):
        d = H.Daemon(idmintd, config=text)
        try:
            d.start(wait_s=5)
            S.ok(False, "a bad [limits] setting is refused at start", text)
        except H.HarnessError as e:
            S.ok("idmintd.ini:2:" in str(e), "a bad [limits] setting is refused at start "
                 "with its line", str(e)[:300])
        finally:
            d.cleanup()


def main():
    started = time.monotonic()
    cfg = H.tokens_config(TOKENS) + "[limits]\nmint_rate = 100\nmint_burst = 20\n"
    d = S.daemon(IDMINTD, config=cfg)
    S.run("flood", check_flood_does_not_slow_the_calm, d)
    S.run("body", check_429_body_and_metrics, d)
    S.stop_daemon(d, "the limited daemon stops cleanly")
    S.run("address", check_address_limit, IDMINTD)
    S.run("default", check_off_by_default, IDMINTD)
    S.run("settings", check_bad_settings, IDMINTD)
    print("%.1f s" % (time.monotonic() - started), flush=True)
    S.finish()


if __name__ == "__main__":
    main()
