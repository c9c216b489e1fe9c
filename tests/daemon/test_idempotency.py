#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Idempotency-Key on GET /v1/ids across idmintd nodes of one SQLite authority:
# a node that dies after saving a batch and before replying (test fault
# exit-after-batch-save) loses no IDs, since another node answers the retry
# with the saved batch; racing first requests on two nodes all get one answer;
# a key names one request of its caller (409 otherwise; another caller's use
# of it is a batch of its own), whitespace around it excepted (RFC 9110 §5.5).
# Then the provenance routes: trace,
# collision reports, and hostile inputs that must change nothing. Every ID
# handed out in the test is checked for duplicates at the end.

import os
import signal
import sys
import threading

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import daemon_harness as H  # noqa: E402

IDMINTD, IDMINT = H.usage_paths()
S = H.Suite("idempotency")

TOKENS = {
    "ops": ("admin", "adm-3c5e7a9b1d2f4e6a8c0b2d4f6a8c0e1f"),
    "shop": ("mint", "mnt-4d6f8a0c2e4a6c8e0f1a3b5c7d9e1f2a"),
}
ADMIN, MINT = TOKENS["ops"][1], TOKENS["shop"][1]
NS, OTHER = "orders", "invoices"
CONFIG = H.tokens_config(TOKENS) + (
    "[mint]\nnamespaces = %s,%s\nlease_ms = 4000\nrenew_ms = 500\n" % (NS, OTHER))
FAULT = "exit-after-batch-save"


class State:
    ids = []  # every ID handed out: plain mints, and each key's answer once
    keyed = {}  # key -> the list of IDs it answers with
    a_pid = None


def node(authority_of=None, fault=False):
    """A daemon on its own port; on @authority_of's SQLite file when given."""
    env = H.clean_env()
    if fault:
        env["IDMINTD_TEST_FAULT"] = FAULT
    d = H.Daemon(IDMINTD, config=CONFIG, env=env)
    if authority_of is not None:
        d.db = authority_of.db
        d.authority = authority_of.authority
    S.daemons.append(d)
    return d.start()


def ready(d, what):
    return S.ok(H.wait_for(lambda: d.get("/readyz").status == 200, 15), what,
                d.log()[-800:])


def ids_path(count, ns=NS):
    return "/v1/ids?namespace=%s&count=%d" % (ns, count)


def keyed(d, key, count, ns=NS, token=MINT, timeout=15.0):
    return d.get(ids_path(count, ns), token=token, headers={"Idempotency-Key": key},
                 timeout=timeout)


def ids_of(j):
    return [int(x) for x in j["ids"]] if isinstance(j, dict) and "ids" in j else None


def mint_plain(d, n, what):
    j = S.json_ok(d.get(ids_path(n), token=MINT), 200, what)
    got = ids_of(j)
    if S.ok(got is not None and len(got) == n, what + " (count)", repr(j)[:300]):
        State.ids.extend(got)


def remember(key, got):
    if key not in State.keyed:
        State.keyed[key] = got
        State.ids.extend(got)


def metric(d, name, label=None):
    """The sum of @name's samples on @d (those with @label when given)."""
    total, found = 0.0, False
    for ln in d.get("/metrics").text.split("\n"):
        if ln.startswith(name + "{") or ln.startswith(name + " "):
            if label is not None and label not in ln:
                continue
            found = True
            total += float(ln.rsplit(" ", 1)[1])
    return total if found else None


def collisions(d):
    j = d.get("/v1/collisions?limit=1000", token=ADMIN).json() or {}
    return j.get("collisions")


def setup(a):
    for body in ({"name": NS, "kind": "snowflake"}, {"name": OTHER, "kind": "snowflake"}):
        S.json_ok(a.post("/v1/namespaces", body, token=ADMIN), 201,
                  "setup: admin creates %s" % body["name"])


def test_a_retry_on_another_node_gets_the_batch_the_dead_node_saved(a, b):
    State.a_pid = a.proc.pid
    key = "order-7f3a:retry.1"
    r = keyed(a, key, 100)
    S.ok(r.status is None, "node A drops the connection instead of replying", r.show())
    try:
        code = a.proc.wait(10 * H.SCALE)
    except Exception:  # noqa: BLE001 -- a hang is a failed check
        code = None
    S.ok(code == -signal.SIGKILL, "node A died by SIGKILL right after the save",
         "exit status %r; log tail: %s" % (code, H.snip(a.log()[-800:], 800)))
    S.ok("test fault point armed" in a.log(), "node A's log warns that the fault is armed",
         H.snip(a.log()[-800:], 800))

    j = S.json_ok(keyed(b, key, 100), 200, "the retry of key K on node B")
    first = ids_of(j)
    if not S.ok(first is not None and len(first) == 100, "node B answers with 100 IDs",
                repr(j)[:300]):
        return
    S.ok(len(set(first)) == 100, "the 100 IDs are distinct")
    remember(key, first)
    j = S.json_ok(keyed(b, key, 100), 200, "asking node B again with key K")
    S.ok(ids_of(j) == first, "the repeat on node B returns exactly the same IDs",
         "first %s..., then %s" % (first[:3], (ids_of(j) or [])[:3]))

    before = metric(b, "idmint_idempotent_batches_total", 'result="conflict"')
    S.error(keyed(b, key, 101), 409, "conflict", "key K with count=101 is a conflict")
    S.error(keyed(b, key, 100, ns=OTHER), 409, "conflict",
            "key K in another namespace is a conflict")
    after = metric(b, "idmint_idempotent_batches_total", 'result="conflict"')
    S.ok(before is not None and after == before + 2, "two conflicts are counted",
         "%r -> %r" % (before, after))
    # Another caller's K is a batch of its own: new IDs, and the first caller's stay.
    j = S.json_ok(keyed(b, key, 101, ns=OTHER, token=ADMIN), 200,
                  "key K from another caller is its own batch, not a conflict")
    theirs = ids_of(j)
    S.ok(theirs is not None and len(theirs) == 101 and not set(theirs) & set(first),
         "the other caller's K has IDs of its own", repr(j)[:300])
    if theirs:
        remember("admin:" + key, theirs)
    j = S.json_ok(keyed(b, key, 100), 200, "key K of the first caller afterwards")
    S.ok(ids_of(j) == first, "the first caller's K still answers its own IDs")

    # The client never saw A's reply; the saved batch must be A's minting,
    # which the authority's grants tell: A's pid, program idmintd.
    for probe in (first[0], first[-1]):
        r = b.get("/v1/ids/%d/trace?namespace=%s" % (probe, NS), token=MINT)
        t = S.json_ok(r, 200, "trace of a replayed ID on node B")
        if t is None:
            continue
        grants = t.get("grants") or []
        S.ok(t.get("verdict") == "minted" and len(grants) == 1,
             "the replayed ID %d has exactly one owner" % probe, H.snip(r.body, 600))
        if grants:
            g = grants[0]
            S.ok(g.get("pid") == State.a_pid and g.get("program") == "idmintd",
                 "ID %d was minted by node A's worker lease (pid %d, idmintd)"
                 % (probe, State.a_pid), H.snip(r.body, 600))
            S.ok(g.get("pid") != b.proc.pid, "and not by node B's (pid %d)" % b.proc.pid,
                 H.snip(r.body, 600))


def test_eight_clients_racing_one_key_on_two_nodes_get_one_answer(a, b):
    key = "race-0001"
    results = [None] * 8
    go = threading.Barrier(8)

    def client(i):
        d = (a, b)[i % 2]
        go.wait()
        results[i] = keyed(d, key, 50)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60 * H.SCALE)
    lists = []
    for i, r in enumerate(results):
        if r is None:
            S.ok(False, "client %d finished" % i)
            continue
        j = S.json_ok(r, 200, "racing client %d on node %s" % (i, "AB"[i % 2]))
        lists.append(ids_of(j))
    S.ok(len(lists) == 8 and all(x is not None and len(x) == 50 for x in lists),
         "all 8 racing clients get 50 IDs", repr([len(x or []) for x in lists]))
    S.ok(lists and all(x == lists[0] for x in lists), "all 8 got the identical list",
         "distinct answers: %d" % len({tuple(x or []) for x in lists}))
    if lists and lists[0]:
        remember(key, lists[0])
    # The key is answered the same way on either node afterwards.
    for d, name in ((a, "A"), (b, "B")):
        j = S.json_ok(keyed(d, key, 50), 200, "the race key afterwards on node %s" % name)
        S.ok(lists and ids_of(j) == lists[0], "node %s replays the race winner" % name)


def test_hostile_keys_are_refused_and_count_nothing(b):
    before = metric(b, "idmint_idempotent_batches_total")
    bad = [("a 65-char key", "k" * 65), ("a key with a space", "a b"),
           ("a key with '/'", "a/b"), ("a key with '@'", "a@b")]
    for what, key in bad:
        S.error(keyed(b, key, 5), 400, "invalid_argument", "%s is refused" % what)
    S.json_ok(keyed(b, "k" * 64, 5), 200, "a 64-char key is accepted")
    j = keyed(b, "k" * 64, 5).json()
    if ids_of(j):
        remember("k" * 64, ids_of(j))
    raw = ("GET %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"
           "Idempotency-Key: dup-one\r\nIdempotency-Key: dup-two\r\nConnection: close\r\n\r\n"
           % (ids_path(5), MINT)).encode()
    S.error(b.raw(raw), 400, "invalid_argument", "two Idempotency-Key headers are refused")
    raw_same = raw.replace(b"dup-two", b"dup-one")
    S.error(b.raw(raw_same), 400, "invalid_argument",
            "two identical Idempotency-Key headers are refused too")
    after = metric(b, "idmint_idempotent_batches_total")
    # +2: the 64-char key minted once and replayed once.
    S.ok(before is not None and after == before + 2,
         "idmint_idempotent_batches_total moved only for the good key",
         "%r -> %r" % (before, after))
    for key in ("dup-one", "dup-two"):
        j = S.json_ok(keyed(b, key, 7), 200, "key %s is still fresh" % key)
        got = ids_of(j)
        S.ok(got is not None and len(got) == 7, "key %s was never saved (count 7 fits)" % key,
             repr(j)[:200])
        if got:
            remember(key, got)


def test_whitespace_around_a_key_is_not_part_of_it(b):
    """RFC 9110 §5.5: SP and HTAB around a field value are not part of it."""
    def raw_keyed(value, count=6):
        data = ("GET %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"
                "Idempotency-Key:%s\r\nConnection: close\r\n\r\n"
                % (ids_path(count), MINT, value)).encode()
        return b.raw(data, desc="Idempotency-Key:%r" % value)
    first = S.json_ok(raw_keyed(" \tows-key \t"), 200,
                      "a key with spaces and tabs around it is accepted")
    got = ids_of(first)
    if got:
        remember("ows-key", got)
    for value in ("ows-key", "ows-key\t", "  ows-key"):
        j = S.json_ok(raw_keyed(value), 200, "key %r after ' \\tows-key \\t'" % value)
        S.ok(got is not None and ids_of(j) == got,
             "key %r is the same key: the same IDs are replayed" % value,
             "%r vs %r" % (ids_of(j), got))
    S.error(raw_keyed(" \t "), 400, "invalid_argument", "a key of whitespace only is refused")
    S.error(raw_keyed(" ows key "), 400, "invalid_argument",
            "whitespace inside a key is still refused")


def test_hostile_collision_reports_change_nothing(b):
    before = collisions(b)
    S.ok(isinstance(before, list), "GET /v1/collisions lists", repr(before))
    base = {"namespace": NS, "id": str(State.ids[0]) if State.ids else "1",
            "observed_ms": H.now_ms() - 1000, "note": "ok"}
    cases = [("id \"0\"", dict(base, id="0")), ("id \"-1\"", dict(base, id="-1")),
             ("id \"abc\"", dict(base, id="abc")),
             ("id 2^63", dict(base, id="9223372036854775808")),
             ("id as a JSON number", dict(base, id=12345)),
             ("an unknown field", dict(base, extra=1)),
             ("a 128-byte note", dict(base, note="n" * 128)),
             ("a note with a control char", dict(base, note="line\nbreak")),
             ("a note with a NUL", dict(base, note="a\u0000b")),
             ("a negative observed_ms", dict(base, observed_ms=-1)),
             ("a negative observed_ms string", dict(base, observed_ms="-1")),
             ("no namespace", {k: v for k, v in base.items() if k != "namespace"})]
    for what, body in cases:
        S.error(b.post("/v1/collisions", body, token=MINT), 400, "invalid_argument",
                "a collision report with %s is refused" % what)
    S.error(b.post("/v1/collisions", "{not json", token=MINT), 400, "invalid_argument",
            "a collision report that is not JSON is refused")
    S.ok(collisions(b) == before, "GET /v1/collisions is unchanged after the bad reports",
         repr(collisions(b))[:400])
    S.ok(metric(b, "idmint_collisions_total") in (None, 0.0),
         "idmint_collisions_total is still 0", repr(metric(b, "idmint_collisions_total")))

    S.error(b.get("/v1/ids/abc/trace?namespace=%s" % NS, token=MINT), 400, "invalid_argument",
            "trace of \"abc\" is refused")
    S.error(b.get("/v1/ids/0/trace?namespace=%s" % NS, token=MINT), 400, "invalid_argument",
            "trace of 0 is refused")
    S.error(b.get("/v1/collisions", token=MINT), 403, None,
            "GET /v1/collisions with a mint token is forbidden")
    S.error(b.get("/v1/collisions"), 401, None, "GET /v1/collisions with no token is refused")

    # A well-formed ID no grant covers: a far-future timestamp on worker 0.
    forged = ((1 << 62) | 12345)
    r = b.get("/v1/ids/%d/trace?namespace=%s" % (forged, NS), token=MINT)
    t = S.json_ok(r, 200, "trace of a forged ID answers")
    if t is not None:
        S.ok(t.get("verdict") == "not_minted" and t.get("grants") == [],
             "a forged ID is not_minted with no grants", H.snip(r.body, 400))


def test_a_reported_collision_is_recorded_audited_counted_and_logged(b):
    if not State.ids:
        S.ok(False, "an ID to report")
        return
    victim = State.keyed.get("race-0001", State.ids)[0]
    before = collisions(b) or []
    count0 = metric(b, "idmint_collisions_total") or 0.0
    audit0 = (b.get("/v1/audit?limit=1000", token=ADMIN).json() or {}).get("entries") or []
    body = {"namespace": NS, "id": str(victim), "observed_ms": H.now_ms() - 5000,
            "note": "unique violation on orders.id"}
    j = S.json_ok(b.post("/v1/collisions", body, token=MINT), 201, "a real ID is reported")
    c = (j or {}).get("collision") or {}
    S.ok(c.get("id") == str(victim) and c.get("namespace") == NS
         and c.get("note") == body["note"], "the answer echoes the report", repr(j)[:400])
    S.ok("program=idmintd" in (c.get("first_owner") or "") and c.get("verdict") == "reported",
         "the report names the first owner (one grant: verdict reported)", repr(c)[:400])
    after = collisions(b) or []
    S.ok(len(after) == len(before) + 1 and after[-1].get("id") == str(victim),
         "the report appears in GET /v1/collisions", repr(after)[:400])
    S.ok(metric(b, "idmint_collisions_total") == count0 + 1,
         "idmint_collisions_total went up by one",
         "%r -> %r" % (count0, metric(b, "idmint_collisions_total")))
    audit = (b.get("/v1/audit?limit=1000", token=ADMIN).json() or {}).get("entries") or []
    new = [e for e in audit if e not in audit0 and e.get("action") == "collision.report"]
    S.ok(len(new) == 1 and new[0].get("namespace") == NS,
         "GET /v1/audit has one new collision.report entry", repr(new)[:400])
    lines = [ln for ln in b.log().split("\n") if "duplicate ID reported" in ln]
    S.ok(len(lines) == 1 and "level=error" in lines[0] and ("id=%d" % victim) in lines[0],
         "the daemon logs one error-level \"duplicate ID reported\" line naming the ID",
         repr(lines)[:400])


def test_no_duplicates():
    ids = State.ids
    dups = len(ids) - len(set(ids))
    print("checked %d IDs (%d keys counted once each): %d duplicates"
          % (len(ids), len(State.keyed), dups), flush=True)
    S.ok(len(ids) >= 100 + 50 + 4 * 500, "collected every ID of the test", "only %d" % len(ids))
    S.ok(dups == 0, "no duplicate among all %d IDs" % len(ids), "%d duplicates" % dups)


def main():
    try:
        a = node(fault=True)
        setup(a)
        ready(a, "node A (fault armed) ready")
        b = node(authority_of=a)
        ready(b, "node B on A's authority file ready")
    except H.HarnessError as e:
        S.ok(False, "start two idmintd nodes on one authority", str(e))
        S.finish()
    S.ok(a.port != b.port and a.db == b.db, "two ports, one SQLite file")
    mint_plain(b, 500, "plain mint on node B before the fault")
    S.run("dead node", test_a_retry_on_another_node_gets_the_batch_the_dead_node_saved, a, b)
    # A comes back without the fault, on the same authority, for the race.
    a.env = H.clean_env()
    try:
        a.start()
        ready(a, "node A restarted without the fault")
    except H.HarnessError as e:
        S.ok(False, "restart node A", str(e))
    mint_plain(a, 500, "plain mint on the restarted node A")
    S.run("race", test_eight_clients_racing_one_key_on_two_nodes_get_one_answer, a, b)
    mint_plain(a, 500, "plain mint on node A after the race")
    mint_plain(b, 500, "plain mint on node B after the race")
    S.run("hostile keys", test_hostile_keys_are_refused_and_count_nothing, b)
    S.run("whitespace around a key", test_whitespace_around_a_key_is_not_part_of_it, b)
    S.run("hostile collisions", test_hostile_collision_reports_change_nothing, b)
    S.run("collision report", test_a_reported_collision_is_recorded_audited_counted_and_logged,
          b)
    S.run("duplicates", test_no_duplicates)
    S.stop_daemon(a, "node A: SIGTERM exits 0")
    S.stop_daemon(b, "node B: SIGTERM exits 0")
    S.finish()


if __name__ == "__main__":
    main()
