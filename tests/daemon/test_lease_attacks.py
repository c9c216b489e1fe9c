#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Issue 10, items 1, 2 and 5, tried as a hostile or careless client would:
# a generator token releasing a lease it does not hold, a forged final time
# (0, and far in the future), a worker id parked for decades, an admin
# forcing the daemon's own lease away, and a namespace disabled under a
# running daemon. Every ID the daemon and two co-located minters produce is
# collected and checked for duplicates at the end.

import os
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import daemon_harness as H  # noqa: E402

IDMINTD, IDMINT = H.usage_paths()
S = H.Suite("lease_attacks")

TOKENS = {
    "ops": ("admin", "adm-5b1f0e9d8c7a6b5c4d3e2f1a0b9c8d7e"),
    "fleet": ("generator", "gen-1f2e3d4c5b6a79881726354a5b6c7d8e"),
    "shop": ("mint", "mnt-a1b2c3d4e5f60718293a4b5c6d7e8f90"),
}
ADMIN, GEN, MINT = TOKENS["ops"][1], TOKENS["fleet"][1], TOKENS["shop"][1]
NS = "orders"  # two worker ids: the daemon holds one, a minter the other
LEASE_MS = 4000
CONFIG = H.tokens_config(TOKENS) + (
    "[mint]\nnamespaces = %s\nlease_ms = %d\nrenew_ms = 500\nready_margin_ms = 1000\n"
    % (NS, LEASE_MS))
EPOCH_2026 = 1767225600000
ATTACKER = "f" * 32


class State:
    ids = []  # every ID minted by anyone in this test


def mint_daemon(d, n, what):
    r = d.get("/v1/ids?namespace=%s&count=%d" % (NS, n), token=MINT)
    j = S.json_ok(r, 200, what)
    if j is not None:
        State.ids.extend(int(x) for x in j["ids"])
    return j is not None


def mint_local(d, n, what, lease_s=2):
    """A co-located service minting straight from the SQLite authority."""
    p = subprocess.run([IDMINT, "mint", "-n", str(n), "--ns", NS, "--authority", d.authority,
                        "--lease", str(lease_s)], capture_output=True, text=True,
                       env=H.clean_env(), timeout=60 * H.SCALE)
    S.ok(p.returncode == 0, what, "exit %d: %s" % (p.returncode, p.stderr[-500:]))
    got = [int(x) for x in p.stdout.split()]
    State.ids.extend(got)
    return got


def lease(d, body, token=GEN):
    return d.post("/internal/workers/lease", dict(body, namespace=NS), token=token)


def workers(d):
    j = d.get("/v1/namespaces/%s/workers" % NS, token=MINT).json() or {}
    return {w["worker_id"]: w for w in j.get("workers") or []}


def held_by_daemon(d):
    rows = [w for w in workers(d).values() if w["holder"]]
    return rows[0] if len(rows) == 1 else None


def setup(d):
    r = d.post("/v1/namespaces", {"name": NS, "kind": "snowflake", "layout": "41/0/1/12"},
               token=ADMIN)
    S.json_ok(r, 201, "create %s" % NS)
    S.ok(H.wait_for(lambda: d.get("/readyz").status == 200, 15), "daemon ready on %s" % NS,
         d.log()[-800:])
    mint_daemon(d, 1000, "daemon mints before the attacks")


def test_listing_hides_the_secret(d):
    row = held_by_daemon(d)
    if not S.ok(row is not None, "the daemon holds one worker id", repr(workers(d))):
        return
    S.ok(len(row["holder"]) == 8 and all(c in "0123456789abcdef" for c in row["holder"]),
         "a listing shows an 8-digit fingerprint, not the 32-digit holder", repr(row))
    # The fingerprint is not a holder: as one it is refused outright.
    S.error(lease(d, {"op": "release", "worker_id": row["worker_id"], "holder": row["holder"],
                      "generation": row["generation"], "final_time": "0"}),
            400, "invalid_argument", "release with the listed fingerprint as holder")


def test_forged_release_of_a_live_lease(d):
    row = held_by_daemon(d)
    if row is None:
        S.ok(False, "the daemon holds one worker id", repr(workers(d)))
        return
    before = workers(d)
    # Everything a listing shows plus a guessed holder: refused, nothing changes.
    for guess in (row["holder"] + "0" * 24, "0" * 32, ATTACKER):
        S.error(lease(d, {"op": "release", "worker_id": row["worker_id"], "holder": guess,
                          "generation": row["generation"], "final_time": "0"}),
                503, "lease_lost", "release of the daemon's lease with holder %s…" % guess[:8])
        S.error(lease(d, {"op": "renew", "worker_id": row["worker_id"], "holder": guess,
                          "generation": row["generation"]}),
                503, "lease_lost", "renew of the daemon's lease with holder %s…" % guess[:8])
    S.ok(workers(d) == before, "the forged calls changed no worker row", repr(workers(d)))
    # The next process takes the other id, not the daemon's: no overlap.
    mint_daemon(d, 2000, "daemon mints during the attack")
    mint_local(d, 20000, "a co-located minter after the forged release")
    mint_daemon(d, 2000, "daemon mints after the co-located minter")


def test_forged_final_times(d):
    now_units = H.now_ms() - EPOCH_2026
    # The attacker's own lease on the id the local minter just released.
    t = lease(d, {"op": "take", "region": 0, "holder": ATTACKER, "lease_ms": 1500})
    j = S.json_ok(t, 200, "take of the free id by the attacker")
    if j is None:
        return
    fence = int(j["fence_found"])
    own_e = int(j["lease_until"])
    S.ok(fence > 0, "the take found the previous minter's E", repr(j))
    key = {"worker_id": j["worker_id"], "holder": ATTACKER, "generation": j["generation"]}
    r = S.json_ok(lease(d, dict(key, op="release", final_time="0")), 200,
                  "release with final time 0")
    if r is not None:
        S.ok(int(r["lease_until"]) == fence, "final time 0 is clamped up to the E found",
             "fence %d, stored %s" % (fence, r["lease_until"]))
    # Again, now far in the future: clamped down to the attacker's own E.
    t = lease(d, {"op": "take", "region": 0, "holder": ATTACKER, "lease_ms": 1500})
    j = S.json_ok(t, 200, "second take by the attacker")
    if j is None:
        return
    own_e = int(j["lease_until"])
    key = {"worker_id": j["worker_id"], "holder": ATTACKER, "generation": j["generation"]}
    r = S.json_ok(lease(d, dict(key, op="release", final_time=str(2 ** 62))), 200,
                  "release with a final time in 2095 and beyond")
    if r is not None:
        S.ok(int(r["lease_until"]) == own_e and own_e <= now_units + 10000,
             "a final time beyond the lease is clamped to the holder's own E",
             "own E %d, stored %s, now %d" % (own_e, r["lease_until"], now_units))
    # The id is usable within the attacker's 1.5 s lease, and nothing overlaps.
    mint_local(d, 20000, "a co-located minter after the forged final times")


def test_parked_worker_id_is_recovered_by_force(d):
    # A row parked until 2095, as the old forged release could leave it.
    ns = "parked"
    S.json_ok(d.post("/v1/namespaces", {"name": ns, "kind": "snowflake", "layout": "41/0/1/12"},
                     token=ADMIN), 201, "create %s" % ns)
    j = S.json_ok(d.post("/internal/workers/lease", {"op": "take", "namespace": ns, "region": 0,
                                                     "holder": ATTACKER, "lease_ms": 60000},
                         token=GEN), 200, "take in %s" % ns)
    if j is None:
        return
    # The daemon may hold the write lock a moment (its renewals): wait for it.
    subprocess.run(["sqlite3", d.db, ".timeout 10000",
                    "UPDATE worker_leases SET lease_until = 2200000000000 "
                    "WHERE namespace = '%s' AND worker_id = %d" % (ns, j["worker_id"])],
                   check=True)
    force = {"op": "force_release", "namespace": ns, "region": 0, "worker_id": j["worker_id"]}
    S.json_ok(d.post("/internal/workers/lease", force, token=ADMIN), 200,
              "force_release of the parked id")

    def e_now():
        rows = (d.get("/v1/namespaces/%s/workers" % ns, token=MINT).json() or {}).get("workers")
        return int(rows[0]["lease_until"])
    # A plain force keeps E: its holder may really have minted up to it.
    S.ok(e_now() == 2200000000000, "a plain force_release keeps E", str(e_now()))
    S.error(d.post("/internal/workers/lease", dict(force, max_ahead_ms=-1), token=ADMIN), 400,
            "invalid_argument", "force_release with a negative max_ahead_ms")
    S.error(d.post("/internal/workers/lease",
                   {"op": "take", "namespace": ns, "region": 0, "holder": ATTACKER,
                    "max_ahead_ms": 0}, token=GEN), 400, "invalid_argument",
            "max_ahead_ms outside force_release")
    S.error(d.post("/internal/workers/lease", dict(force, max_ahead_ms=0), token=GEN), 403,
            "permission_denied", "force_release with max_ahead_ms by a generator")
    # The admin vouches that nothing was minted past now: the id is free now.
    S.json_ok(d.post("/internal/workers/lease", dict(force, max_ahead_ms=0), token=ADMIN), 200,
              "force_release with max_ahead_ms 0")
    now_units = H.now_ms() - EPOCH_2026
    S.ok(now_units - 5000 <= e_now() <= now_units + 5000,
         "force_release with max_ahead_ms pulls a parked E back to now",
         "E %d, now %d" % (e_now(), now_units))
    j = S.json_ok(d.post("/internal/workers/lease", {"op": "take", "namespace": ns, "region": 0,
                                                     "holder": "d" * 32, "lease_ms": 60000},
                         token=GEN), 200, "the parked id can be taken again")


def test_audit_names_the_token(d):
    j = d.get("/v1/audit", token=ADMIN).json() or {}
    rows = [a for a in j.get("entries") or [] if a.get("namespace") in (NS, "parked")]
    takes = [a for a in rows if a["action"] == "worker.take" and a["actor"] == "fleet"]
    rels = [a for a in rows if a["action"] == "worker.release" and a["actor"] == "fleet"]
    forced = [a for a in rows if a["action"] == "worker.force_release" and a["actor"] == "ops"]
    S.ok(len(takes) >= 2 and len(rels) >= 2 and len(forced) >= 1,
         "takes, releases and the force are audited with the token's name", H.snip(str(rows)))
    S.ok(all(ATTACKER not in a["detail"] for a in rows),
         "no audit record shows a full holder id", H.snip(str(rows)))


def test_daemon_recovers_from_a_forced_release(d):
    row = held_by_daemon(d)
    if not S.ok(row is not None, "the daemon holds a worker id", repr(workers(d))):
        return
    r = lease(d, {"op": "force_release", "region": 0, "worker_id": row["worker_id"]},
              token=ADMIN)
    S.json_ok(r, 200, "admin forces the daemon's own lease away")
    ok = H.wait_for(lambda: "worker lease recovered" in d.log(), 20)
    S.ok(ok, "the daemon takes a new worker id by itself", d.log()[-1500:])
    S.ok(H.wait_for(lambda: d.get("/readyz").status == 200, 10), "ready again after recovery",
         d.get("/readyz").text)
    mint_daemon(d, 2000, "the daemon mints again without a restart")
    mint_local(d, 20000, "a co-located minter after the recovery")


def test_disabled_namespace_stops_the_daemon(d):
    S.json_ok(d.post("/v1/namespaces/%s/disable" % NS, token=ADMIN), 200, "disable %s" % NS)
    t0 = time.monotonic()
    stopped = H.wait_for(lambda: d.get("/v1/ids?namespace=%s&count=1" % NS, token=MINT).status
                         == 409, (LEASE_MS + 3000) / 1000.0)
    S.ok(stopped, "minting from a disabled namespace ends within one lease",
         "still minting after %.1f s" % (time.monotonic() - t0))
    S.error(d.get("/v1/ids?namespace=%s&count=1" % NS, token=MINT), 409, "disabled",
            "a mint after the lease ran out says disabled")
    r = d.get("/readyz")
    S.ok(r.status == 503 and "disabled" in r.text, "/readyz says the namespace is disabled",
         "%s %s" % (r.status, r.text))
    S.ok("namespace disabled" in d.log(), "the log says why minting stops", d.log()[-800:])
    S.json_ok(d.post("/v1/namespaces/%s/enable" % NS, token=ADMIN), 200, "enable %s" % NS)
    ok = H.wait_for(lambda: d.get("/readyz").status == 200, 40)
    S.ok(ok, "the daemon mints again once the namespace is enabled", d.log()[-1500:])
    mint_daemon(d, 2000, "the daemon mints after enable")


def test_clock_ahead_is_warned(d):
    ns = "skew"
    S.json_ok(d.post("/v1/namespaces", {"name": ns, "kind": "snowflake", "layout": "41/0/1/12"},
                     token=ADMIN), 201, "create %s" % ns)

    def call(body, what):
        return S.json_ok(d.post("/internal/workers/lease", dict(body, namespace=ns), token=GEN),
                         200, what)
    # A holder whose clock runs an hour ahead minted up to its E and released.
    a = call({"op": "take", "region": 0, "holder": "a" * 32, "lease_ms": 3600000},
             "take by the holder with a clock an hour ahead")
    call({"op": "take", "region": 0, "holder": "b" * 32, "lease_ms": 60000},
         "take of the other id")
    if a is None:
        return
    call({"op": "release", "worker_id": a["worker_id"], "holder": "a" * 32,
          "generation": a["generation"], "final_time": a["lease_until"]},
         "release at the end of the hour-ahead lease")
    c = call({"op": "take", "region": 0, "holder": "c" * 32, "lease_ms": 60000},
             "take that finds the id fenced an hour ahead")
    if c is None:
        return
    S.ok(H.wait_for(lambda: "fenced far ahead" in d.log() and "skew_ms=" in d.log(), 5),
         "the daemon warns of the skew and names the holder", d.log()[-1000:])


def test_deleted_database_turns_readyz_red():
    """Issue 10 item 4: the authority file removed under a running daemon."""
    config = "[mint]\nnamespaces = default\nlease_ms = 4000\nrenew_ms = 300\n"
    d = S.daemon(IDMINTD, config=config)
    S.ok(H.wait_for(lambda: d.get("/readyz").status == 200, 15), "second daemon ready",
         d.log()[-800:])
    os.unlink(d.db)
    for suffix in ("-wal", "-shm"):
        if os.path.exists(d.db + suffix):
            os.unlink(d.db + suffix)
    # The renewal is refused, and the history check that follows cannot find
    # this lease's history in any store at that path: minting stops for good,
    # as for a store put back in time (a new file there could grant it again).
    red = H.wait_for(lambda: "file removed or replaced" in d.get("/readyz").text, 5)
    r = d.get("/readyz")
    S.ok(red and r.status == 503 and "idmint authority fence" in r.text,
         "/readyz turns red within a few renewals once the file is gone, and says why",
         "%s %s" % (r.status, r.text))
    S.ok("minting stopped" in d.log() and "removed or replaced" in d.log(), "the log says why",
         d.log()[-1200:])
    r = d.get("/v1/ids?count=1")
    S.ok(r.status == 503, "no more IDs once the file is gone", "%s %s" % (r.status,
                                                                      H.snip(r.body)))
    r = d.post("/v1/namespaces", {"name": "after", "kind": "range"})
    S.ok(r.status >= 500 and b"removed or replaced" in r.body,
         "a store write after the removal fails and says why",
         "%s %s" % (r.status, H.snip(r.body)))
    S.ok(not os.path.exists(d.db), "nothing re-created the removed file behind our back")
    S.stop_daemon(d, "second daemon: SIGTERM exits 0")


def test_restored_authority_stops_the_daemon():
    """Issue 14: a backup put back under a running daemon. Its next renewal sees
    the history go backwards: minting stops, /readyz turns red with the fix, and
    the daemon takes no new lease from the rewound store by itself."""
    config = "[mint]\nnamespaces = default\nlease_ms = 4000\nrenew_ms = 300\n"
    d = S.daemon(IDMINTD, config=config)
    S.ok(H.wait_for(lambda: d.get("/readyz").status == 200, 15), "third daemon ready",
         d.log()[-800:])
    backup = os.path.join(d.dir, "backup.db")
    subprocess.run([IDMINT, "--authority", d.authority, "authority", "backup", backup],
                   check=True, capture_output=True)
    j = S.json_ok(d.get("/v1/ids?count=10"), 200, "mint before the restore")
    time.sleep(1)  # renewals go on past the backup
    subprocess.run(["sqlite3", d.db, ".timeout 5000", ".restore " + backup], check=True)
    # Red at once (the lease is gone), with the reason once the 1 s tick has seen why.
    red = H.wait_for(lambda: "went backwards" in d.get("/readyz").text, 5)
    r = d.get("/readyz")
    S.ok(red and "went backwards" in r.text and "idmint authority fence" in r.text,
         "/readyz turns red and names the fix", "%s %s" % (r.status, r.text))
    S.ok("the authority went backwards" in d.log(), "the log says why", d.log()[-1200:])
    r = d.get("/v1/ids?count=1")
    S.ok(r.status == 503, "no more IDs from the rewound history", "%s %s" % (r.status,
                                                                            H.snip(r.body)))
    time.sleep(1.5)  # past the recovery backoff: still no new lease of its own
    S.ok(d.get("/readyz").status == 503, "still red: no new lease from the rewound store")
    S.ok(j is not None and len(j["ids"]) == 10, "minted before the restore", repr(j))
    S.stop_daemon(d, "third daemon: SIGTERM exits 0")


def test_no_duplicates():
    ids = State.ids
    dups = len(ids) - len(set(ids))
    print("checked %d IDs from the daemon and the co-located minters: %d duplicates"
          % (len(ids), dups), flush=True)
    S.ok(len(ids) >= 60000, "collected the IDs of every minter", "only %d" % len(ids))
    S.ok(dups == 0, "no duplicate among all %d IDs" % len(ids), "%d duplicates" % dups)


def main():
    try:
        d = S.daemon(IDMINTD, config=CONFIG)
    except H.HarnessError as e:
        S.ok(False, "start idmintd", str(e))
        S.finish()
    S.run("setup", setup, d)
    S.run("listing", test_listing_hides_the_secret, d)
    S.run("forged release", test_forged_release_of_a_live_lease, d)
    S.run("forged final times", test_forged_final_times, d)
    S.run("parked id", test_parked_worker_id_is_recovered_by_force, d)
    S.run("audit", test_audit_names_the_token, d)
    S.run("recovery", test_daemon_recovers_from_a_forced_release, d)
    S.run("disabled", test_disabled_namespace_stops_the_daemon, d)
    S.run("clock ahead", test_clock_ahead_is_warned, d)
    S.run("duplicates", test_no_duplicates)
    S.stop_daemon(d, "SIGTERM exits 0")
    S.run("deleted database", test_deleted_database_turns_readyz_red)
    S.run("restored authority", test_restored_authority_stops_the_daemon)
    S.finish()


if __name__ == "__main__":
    main()
