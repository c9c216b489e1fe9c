#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Issue 28 item 6: the lowest role cannot hurt others through what it makes
# the authority keep. Two idmintd nodes on one SQLite authority: an
# Idempotency-Key is scoped to its caller (a token that uses another's key
# first changes nothing for the owner; with no tokens every caller is one
# anonymous scope); 1,000 identical collision reports make one record, one
# audit entry, one error-level line and one count; a mint token flooding new
# keys or distinct reports gets 429 with Retry-After after its documented
# bound ([limits] batch_* and collision_*: 100 at once, then 10 a second;
# 60 at once, then 1 a second) while another token goes on; a generator
# token's range reservations and worker takes are bounded the same way
# ([limits] grant_*); a key over 64
# bytes is refused and saves nothing. Row counts and sizes are read from
# the SQLite file itself.

import http.client
import json
import os
import sqlite3
import sys
import time

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import daemon_harness as H  # noqa: E402

IDMINTD, IDMINT = H.usage_paths()
S = H.Suite("isolation")

TOKENS = {
    "ops": ("admin", "adm-5e7a9b1d2f4e6a8c0b2d4f6a8c0e1f3c"),
    "shop": ("mint", "mnt-6f8a0c2e4a6c8e0f1a3b5c7d9e1f2a4d"),
    "rogue": ("mint", "mnt-7a9c1e3a5c7e9a1b3d5f7a9c1e3a5c7e"),
    "calm": ("mint", "mnt-8b0d2f4b6d8f0b2c4e6a8b0d2f4b6d8f"),
    "lib": ("generator", "gen-9c1e3a5c7e9a1b3d5f7a9c1e3a5c7e9a"),
    "lib2": ("generator", "gen-0d2f4b6d8f0b2c4e6a8b0d2f4b6d8f0b"),
}
ADMIN, SHOP, ROGUE, CALM, LIB, LIB2 = (TOKENS[n][1] for n in
                                       ("ops", "shop", "rogue", "calm", "lib", "lib2"))
NS = "orders"
RENEW_MS = 500  # the daemons renew their own leases this often: they write the log too
MINT = "[mint]\nnamespaces = %s\nlease_ms = 4000\nrenew_ms = %d\n" % (NS, RENEW_MS)
# Node A: collision reports unlimited, to show the deduplication by itself.
CONFIG_A = H.tokens_config(TOKENS) + MINT + (
    "[limits]\ncollision_rate = 1000000\ncollision_burst = 1000000\n")
# Node B: the documented defaults (docs/http-api.md, "Bounds on what a caller can write"),
# but for grants, whose default burst (1,000) would take a long flood to pass.
GRANT_RATE, GRANT_BURST = 20, 50
RENEW_RATE, RENEW_BURST = 20, 50
CONFIG_B = H.tokens_config(TOKENS) + MINT + (
    "[limits]\ngrant_rate = %d\ngrant_burst = %d\nrenew_rate = %d\nrenew_burst = %d\n"
    % (GRANT_RATE, GRANT_BURST, RENEW_RATE, RENEW_BURST))
BATCH_RATE, BATCH_BURST = 10, 100
COLLISION_RATE, COLLISION_BURST = 1, 60


class Client:
    """One kept-alive connection as one token: a flood without a connect per request."""

    def __init__(self, d, token):
        self.d = d
        self.token = token
        self.conn = http.client.HTTPConnection(H.HOST, d.port, timeout=15 * H.SCALE)

    def call(self, method, path, body=None, headers=None):
        hdrs = {"Authorization": "Bearer " + self.token} if self.token else {}
        hdrs.update(headers or {})
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            hdrs["Content-Type"] = "application/json"
        self.conn.request(method, path, body=data, headers=hdrs)
        r = self.conn.getresponse()
        payload = r.read()
        resp = H.Resp("%s %s" % (method, path), r.status, r.reason,
                      {k.lower(): v for k, v in r.getheaders()}, payload)
        return resp

    def keyed(self, key, count, ns=NS):
        return self.call("GET", "/v1/ids?namespace=%s&count=%d" % (ns, count),
                         headers={"Idempotency-Key": key})

    def report(self, ident, note="unique violation"):
        return self.call("POST", "/v1/collisions",
                         {"namespace": NS, "id": str(ident), "note": note})

    def close(self):
        self.conn.close()


def ids_of(resp):
    j = resp.json()
    return [int(x) for x in j["ids"]] if isinstance(j, dict) and "ids" in j else None


def db_rows(d, sql, args=()):
    """One value from the daemon's SQLite authority (a reader beside it: WAL)."""
    con = sqlite3.connect("file:%s?mode=ro" % d.db, uri=True, timeout=10)
    try:
        return con.execute(sql, args).fetchone()[0]
    finally:
        con.close()


def metric(d, name, label=None):
    total, found = 0.0, False
    for ln in d.get("/metrics").text.split("\n"):
        if ln.startswith(name + "{") or ln.startswith(name + " "):
            if label is not None and label not in ln:
                continue
            found = True
            total += float(ln.rsplit(" ", 1)[1])
    return total if found else None


def audit_reports(d):
    j = d.get("/v1/audit?limit=1000", token=ADMIN).json() or {}
    return [e for e in j.get("entries") or [] if e.get("action") == "collision.report"]


def collisions(d):
    return (d.get("/v1/collisions?limit=1000", token=ADMIN).json() or {}).get("collisions") or []


def error_lines(d, text):
    return [ln for ln in d.log().split("\n") if text in ln and "level=error" in ln]


def node(config, authority_of=None):
    d = H.Daemon(IDMINTD, config=config)
    if authority_of is not None:
        d.db = authority_of.db
        d.authority = authority_of.authority
    S.daemons.append(d)
    return d.start()


def ready(d, what):
    S.ok(H.wait_for(lambda: d.get("/readyz").status == 200, 15), what, d.log()[-600:])


def test_a_key_used_first_by_another_token_changes_nothing_for_its_owner(a):
    rogue, shop = Client(a, ROGUE), Client(a, SHOP)
    key = "order-42"
    theirs = ids_of(rogue.keyed(key, 5))
    S.ok(theirs is not None and len(theirs) == 5, "token rogue uses key K first")
    r = shop.keyed(key, 10)
    S.json_ok(r, 200, "the owner's first request with K is answered (never 409)")
    mine = ids_of(r)
    S.ok(mine is not None and len(mine) == 10 and not set(mine) & set(theirs or []),
         "the owner gets 10 IDs of its own, none of rogue's", r.show())
    for i in range(3):
        S.ok(ids_of(shop.keyed(key, 10)) == mine, "the owner's replay %d returns its IDs" % i)
        S.ok(ids_of(rogue.keyed(key, 5)) == theirs, "rogue's replay %d returns rogue's IDs" % i)
    S.error(rogue.keyed(key, 10), 409, "conflict",
            "rogue's own K with another count is rogue's conflict")
    S.ok(ids_of(shop.keyed(key, 10)) == mine, "and the owner's K is untouched by it")
    S.ok(db_rows(a, "SELECT count(*) FROM batches WHERE key = ?", (key,)) == 2,
         "the store holds one batch of K per caller")
    rogue.close()
    shop.close()
    return mine


def test_with_no_tokens_every_caller_is_one_anonymous_scope():
    d = H.Daemon(IDMINTD)
    S.daemons.append(d)
    d.start()
    hdr = {"Idempotency-Key": "anon-1"}
    first = ids_of(d.get("/v1/ids?namespace=default&count=3", headers=hdr))
    again = ids_of(d.get("/v1/ids?namespace=default&count=3", headers=hdr))
    S.ok(first is not None and len(first) == 3 and again == first,
         "with no tokens, two clients' same key is one batch (the anonymous scope)",
         "%r vs %r" % (first, again))
    S.ok(db_rows(d, "SELECT owner FROM batches WHERE key = 'anon-1'") == "anonymous",
         "its owner is 'anonymous'")
    c = Client(d, None)
    allowed, limited, _ = judge_flood(
        "tokenless key flood",
        flood(BATCH_BURST + 60, lambda i: c.keyed("anon-flood-%04d" % i, 1, ns="default")),
        BATCH_BURST - 1, BATCH_RATE, "caller 'anonymous' is over batch_rate")  # anon-1 took one
    S.ok(len(limited) > 0 and limited[0].header("retry-after") is not None,
         "the anonymous caller is bounded by batch_rate too",
         "%d allowed, %d refused" % (allowed, len(limited)))
    S.ok(limited and "caller 'anonymous' is over batch_rate" in limited[0].text,
         "the 429 names the anonymous caller and the limit", limited[0].show() if limited else "")
    c.close()
    S.stop_daemon(d, "the tokenless daemon stops cleanly")


def flood(n, send, ok=200):
    """send(i) for i in 0..n-1 as fast as the daemon answers: how many got @p ok, the 429
    answers, the others, and the seconds it took."""
    allowed, limited, others = 0, [], []
    t0 = time.monotonic()
    for i in range(n):
        r = send(i)
        if r.status == ok:
            allowed += 1
        elif r.status == 429:
            limited.append(r)
        else:
            others.append(r)
    return allowed, limited, others, time.monotonic() - t0


def check_429s(limited, what):
    S.ok(all(r.header("retry-after") is not None and r.header("retry-after").isdigit()
             and int(r.header("retry-after")) >= 1 for r in limited),
         "every 429 of %s names Retry-After in whole seconds" % what,
         limited[0].show() if limited else "")
    S.ok(all((r.json() or {}).get("error", {}).get("code") == "rate_limited" for r in limited),
         "every 429 of %s is rate_limited" % what, limited[0].show() if limited else "")


def judge_flood(what, result, burst, rate, refusal):
    """The answers of flood(): only its success or 429; at least @p burst allowed and at most
    burst + rate x t; every 429 well formed and naming @p refusal. (allowed, limited, bound)."""
    allowed, limited, others, elapsed = result
    bound = burst + rate * elapsed + 1
    print("%s: %d allowed, %d refused in %.2f s (bound %.0f)"
          % (what, allowed, len(limited), elapsed, bound), flush=True)
    S.ok(not others, "a %s gets only its success or 429" % what,
         others[0].show() if others else "")
    S.ok(burst <= allowed <= bound, "the %s is bounded by burst + rate x t" % what,
         "%d allowed in %.2f s, bound %.0f" % (allowed, elapsed, bound))
    check_429s(limited, "the " + what)
    S.ok(limited and refusal in limited[0].text, "the %s's 429 names the token and the limit"
         % what, limited[0].show() if limited else "")
    return allowed, limited, bound


def test_a_flood_of_new_keys_from_one_token_is_bounded(b, mine):
    rogue, shop = Client(b, ROGUE), Client(b, SHOP)
    rows0 = db_rows(b, "SELECT count(*) FROM batches WHERE owner = 'rogue'")
    refused0 = metric(b, "idmint_http_rate_limited_total", 'role="mint"') or 0.0
    allowed, limited, _ = judge_flood(
        "key flood", flood(400, lambda i: rogue.keyed("flood-%04d" % i, 1)), BATCH_BURST,
        BATCH_RATE, "token 'rogue' is over batch_rate")
    S.ok(len(limited) > 0, "the rest are refused with 429")
    rows = db_rows(b, "SELECT count(*) FROM batches WHERE owner = 'rogue'")
    S.ok(rows - rows0 == allowed, "only the allowed keys were saved",
         "%d rows for %d allowed" % (rows - rows0, allowed))
    size = db_rows(b, "SELECT max(length(namespace) + length(key) + length(owner) + length(runs)"
                   " + 32) FROM batches WHERE owner = 'rogue'")
    print("a saved key of count 1: at most %d bytes of fields; at the default bound one token "
          "saves at most %d keys a day" % (size, BATCH_BURST + BATCH_RATE * 86400), flush=True)
    after = metric(b, "idmint_http_rate_limited_total", 'role="mint"') or 0.0
    S.ok(after - refused0 == len(limited), "each 429 is counted in idmint_http_rate_limited_total",
         "%r -> %r for %d" % (refused0, after, len(limited)))
    # While limited: a replay is no write and is answered; another token is not limited.
    S.ok(ids_of(rogue.keyed("flood-0000", 1)) is not None, "rogue's replays still answer")
    r = shop.keyed("shop-after-flood", 7)
    S.json_ok(r, 200, "another token saves a new key at once, beside the flood")
    S.ok(ids_of(shop.keyed("order-42", 10)) == mine, "and its earlier key still replays")
    rogue.close()
    shop.close()


def test_a_key_over_64_bytes_is_refused_and_saves_nothing(b):
    c = Client(b, SHOP)
    rows0 = db_rows(b, "SELECT count(*) FROM batches")
    S.error(c.keyed("k" * 65, 1), 400, "invalid_argument", "a 65-byte key is refused")
    S.error(c.call("GET", "/v1/ids?namespace=%s&count=10001" % NS,
                   headers={"Idempotency-Key": "too-many"}), 400, "invalid_argument",
            "a keyed count above max_count is refused")
    S.ok(db_rows(b, "SELECT count(*) FROM batches") == rows0, "neither saved a row")
    c.close()


def test_1000_identical_collision_reports_make_one_record(a, victim):
    shop, calm = Client(a, SHOP), Client(a, CALM)
    before, audit0 = collisions(a), audit_reports(a)
    errors0 = len(error_lines(a, "duplicate ID reported"))
    count0 = metric(a, "idmint_collisions_total") or 0.0
    statuses, seqs = {}, set()
    for i in range(1000):
        r = shop.report(victim, "unique violation, attempt %d" % i)
        statuses[r.status] = statuses.get(r.status, 0) + 1
        seqs.add(((r.json() or {}).get("collision") or {}).get("seq"))
    S.ok(statuses == {201: 1, 200: 999}, "the first report is 201 Created, the 999 repeats 200",
         repr(statuses))
    S.ok(len(seqs) == 1 and None not in seqs, "every answer names the one record's seq",
         repr(sorted(seqs, key=str)[:5]))
    after = collisions(a)
    S.ok(len(after) == len(before) + 1, "1,000 identical reports make 1 record",
         "%d -> %d" % (len(before), len(after)))
    S.ok(after and after[-1].get("note") == "unique violation, attempt 0",
         "the record is the first report's", repr(after[-1:])[:300])
    S.ok(len(audit_reports(a)) == len(audit0) + 1, "and 1 audit entry",
         "%d -> %d" % (len(audit0), len(audit_reports(a))))
    S.ok(len(error_lines(a, "duplicate ID reported")) == errors0 + 1,
         "and 1 error-level log line", "")
    S.ok(metric(a, "idmint_collisions_total") == count0 + 1, "and 1 in idmint_collisions_total",
         "%r -> %r" % (count0, metric(a, "idmint_collisions_total")))
    S.ok(db_rows(a, "SELECT count(*) FROM collisions WHERE id = ?", (victim,)) == 1,
         "the store holds one row of that ID")
    r = calm.report(victim, "seen by another service")
    S.json_ok(r, 201, "another reporter of the same ID makes a record of its own")
    shop.close()
    calm.close()


def test_a_flood_of_distinct_reports_from_one_token_is_bounded(b, base):
    rogue, calm = Client(b, ROGUE), Client(b, CALM)
    rows0 = db_rows(b, "SELECT count(*) FROM collisions WHERE reporter = 'rogue'")
    allowed, _, _ = judge_flood(
        "report flood", flood(200, lambda i: rogue.report(base + 1000 + i, "flood %d" % i), 201),
        COLLISION_BURST, COLLISION_RATE, "token 'rogue' is over collision_rate")
    rows = db_rows(b, "SELECT count(*) FROM collisions WHERE reporter = 'rogue'")
    S.ok(rows - rows0 == allowed, "only the allowed reports made rows",
         "%d rows for %d allowed" % (rows - rows0, allowed))
    audited = sum(1 for e in audit_reports(b) if e.get("actor") == "rogue")
    S.ok(audited == rows, "and only they were audited", "%d audit entries, %d rows"
         % (audited, rows))
    S.json_ok(calm.report(base + 5000, "calm"), 201, "another token reports at once, beside it")
    rogue.close()
    calm.close()


def test_a_flood_of_reservations_from_one_library_is_bounded(b):
    """A generator token's range reservations and worker takes each make a grant row and an
    audit record: one bucket per caller bounds them, and another caller goes on."""
    lib, other = Client(b, LIB), Client(b, LIB2)
    rows0 = db_rows(b, "SELECT count(*) FROM range_grants WHERE namespace = 'ledger'")
    allowed, _, _ = judge_flood(
        "reservation flood",
        flood(200, lambda i: lib.call("POST", "/internal/ranges/lease",
                                      {"namespace": "ledger", "incarnation": "flood",
                                       "request_id": "r%d" % i, "count": 10})),
        GRANT_BURST, GRANT_RATE, "token 'lib' is over grant_rate")
    rows = db_rows(b, "SELECT count(*) FROM range_grants WHERE namespace = 'ledger'")
    S.ok(rows - rows0 == allowed, "only the allowed reservations made grant rows",
         "%d rows for %d allowed" % (rows - rows0, allowed))
    # Takes share the bucket: right after the flood, a take by the same token waits too.
    take = {"op": "take", "namespace": NS, "region": 0, "holder": "e" * 32, "lease_ms": 5000}
    r = lib.call("POST", "/internal/workers/lease", take)
    S.ok(r.status == 429 and "over grant_rate" in r.text, "a worker take by the same token is 429",
         r.show())
    r = other.call("POST", "/internal/workers/lease", dict(take, holder="f" * 32))
    S.ok(r.status == 200, "another generator token takes a worker id at once", r.show())
    lease = r.json() if r.status == 200 else {}
    # Renewals have a bucket of their own: a token renewing in a loop is bounded too.
    renew = {"op": "renew", "namespace": NS, "region": 0, "holder": "f" * 32,
             "worker_id": lease.get("worker_id", 0), "generation": lease.get("generation", "1"),
             "lease_ms": 5000}
    t0 = time.monotonic()
    log0 = db_rows(b, "SELECT count(*) FROM history_log")
    result = flood(200, lambda i: other.call("POST", "/internal/workers/lease", renew))
    logged = db_rows(b, "SELECT count(*) FROM history_log") - log0
    window_ms = (time.monotonic() - t0) * 1000
    allowed, _, _ = judge_flood("renewal flood", result, RENEW_BURST, RENEW_RATE,
                                "token 'lib2' is over renew_rate")
    # Every grant writes one log entry, and the daemons' own leases are renewed meanwhile: each
    # lease held by another holder at most once per RENEW_MS of the count's window, and once more.
    others = db_rows(b, "SELECT count(*) FROM worker_leases WHERE holder NOT IN ('', ?)",
                     ("f" * 32,))
    background = others * (int(window_ms // RENEW_MS) + 1)
    print("renewal log: %d entries for %d allowed, at most %d of %d other leases in %.0f ms"
          % (logged, allowed, background, others, window_ms), flush=True)
    S.ok(allowed <= logged <= allowed + background, "the refused renewals logged nothing",
         "%d log entries for %d renewals allowed, %d leases of others renewing in %.0f ms"
         % (logged, allowed, others, window_ms))
    lib.close()
    other.close()


def main():
    try:
        a = node(CONFIG_A)
        S.json_ok(a.post("/v1/namespaces", {"name": NS, "kind": "snowflake"}, token=ADMIN), 201,
                  "setup: create orders")
        ready(a, "node A ready")
        b = node(CONFIG_B, authority_of=a)
        ready(b, "node B on A's authority ready")
    except H.HarnessError as e:
        S.ok(False, "start two idmintd nodes on one authority", str(e))
        S.finish()
    mine = []

    def scoped():
        mine.extend(test_a_key_used_first_by_another_token_changes_nothing_for_its_owner(a)
                    or [])

    S.run("scoped keys", scoped)
    S.run("anonymous scope", test_with_no_tokens_every_caller_is_one_anonymous_scope)
    S.run("key flood", test_a_flood_of_new_keys_from_one_token_is_bounded, b, mine)
    S.run("key size", test_a_key_over_64_bytes_is_refused_and_saves_nothing, b)
    victim = mine[0] if mine else 1
    S.run("identical reports", test_1000_identical_collision_reports_make_one_record, a, victim)
    S.run("report flood", test_a_flood_of_distinct_reports_from_one_token_is_bounded, b, victim)
    S.json_ok(a.post("/v1/namespaces", {"name": "ledger", "kind": "range"}, token=ADMIN), 201,
              "setup: create ledger")
    S.run("reservation flood", test_a_flood_of_reservations_from_one_library_is_bounded, b)
    S.stop_daemon(a, "node A: SIGTERM exits 0")
    S.stop_daemon(b, "node B: SIGTERM exits 0")
    S.finish()


if __name__ == "__main__":
    main()
