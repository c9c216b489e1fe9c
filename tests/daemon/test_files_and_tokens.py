#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Files and tokens (issue 10): a config file with [tokens] that others may
# use or its group may write stops the daemon (exit 2, naming the file, its
# mode and the chmod); the log and port files the daemon creates are 0640
# even under umask 000; a bearer token followed by spaces or tabs is
# accepted (RFC 9110 §5.5), one with whitespace inside or any other
# difference is refused with 401, and --hash-token refuses a token that
# could never be presented.

import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import daemon_harness as H  # noqa: E402

IDMINTD, IDMINT = H.usage_paths()
S = H.Suite("files_and_tokens")

MINT = "mnt-3c2b1a0f9e8d7c6b5a4f3e2d1c0b9a8f"
ADMIN = "adm-0f1e2d3c4b5a69788796a5b4c3d2e1f0"
TOKENS = H.tokens_config({"shop": ("mint", MINT), "ops": ("admin", ADMIN)})


def mode_of(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def write_file(path, text, mode):
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, mode)


def run_refused(args, env=None):
    """Run idmintd expecting it to stop at once; (status, stderr text)."""
    p = subprocess.run([IDMINTD] + args, capture_output=True, timeout=10 * H.SCALE,
                       env=env if env is not None else H.clean_env(), stdin=subprocess.DEVNULL)
    return p.returncode, p.stderr.decode("utf-8", "replace")


def test_config_modes(tmp):
    path = os.path.join(tmp, "tokens.ini")
    base = ["--listen", "127.0.0.1:0", "--authority", "sqlite:" + os.path.join(tmp, "m.db")]
    for mode, why in ((0o644, "others have access"), (0o604, "others have access"),
                      (0o660, "its group may write it"), (0o620, "its group may write it"),
                      (0o601, "others have access"),
                      (0o666, "its group may write it, others have access")):
        write_file(path, TOKENS, mode)
        code, err = run_refused(base + ["--config", path])
        what = "a [tokens] config with mode %04o is refused" % mode
        S.ok(code == 2, what + " (exit 2)", "status %s, stderr %s" % (code, H.snip(err)))
        S.ok(path in err and ("%04o" % mode) in err and why in err,
             what + " (names the file, the mode and why)", H.snip(err))
        S.ok("chmod 600 " + path in err and "640" in err, what + " (says how to fix it)",
             H.snip(err))
    # IDMINT_CONFIG is the same file by another name: the same rule.
    write_file(path, TOKENS, 0o644)
    code, err = run_refused(base, env=dict(H.clean_env(), IDMINT_CONFIG=path))
    S.ok(code == 2 and path in err, "IDMINT_CONFIG naming a 0644 [tokens] file is refused",
         "status %s, stderr %s" % (code, H.snip(err)))

    for mode in (0o600, 0o640, 0o400, 0o440):
        write_file(path, TOKENS, mode)
        d = H.Daemon(IDMINTD, extra_args=["--config", path])
        S.daemons.append(d)
        try:
            d.start()
        except H.HarnessError as e:
            S.ok(False, "a [tokens] config with mode %04o starts" % mode, str(e))
            continue
        S.status(d.get("/healthz"), 200, "a [tokens] config with mode %04o starts" % mode)
        S.stop_daemon(d, "mode %04o daemon: SIGTERM exits 0" % mode)
    # Without tokens there is nothing to keep secret.
    write_file(path, "[server]\nmax_count = 100\n", 0o644)
    d = H.Daemon(IDMINTD, extra_args=["--config", path])
    S.daemons.append(d)
    try:
        d.start()
        S.status(d.get("/healthz"), 200, "a 0644 config without [tokens] starts")
        S.stop_daemon(d, "no-tokens daemon: SIGTERM exits 0")
    except H.HarnessError as e:
        S.ok(False, "a 0644 config without [tokens] starts", str(e))


def test_file_modes(tmp):
    log = os.path.join(tmp, "idmintd.log")
    old_log = os.path.join(tmp, "old.log")
    write_file(old_log, "", 0o600)
    d = H.Daemon(IDMINTD, config="[log]\nfile = %s\n" % log)
    S.daemons.append(d)
    old = os.umask(0)  # inherited by the daemon: the widest umask there is
    try:
        d.start()
    finally:
        os.umask(old)
    S.ok(mode_of(log) == 0o640, "under umask 000 the log file is created 0640",
         "mode %04o" % mode_of(log))
    S.ok(mode_of(d.port_file) == 0o640, "under umask 000 the port file is created 0640",
         "mode %04o" % mode_of(d.port_file))
    # logrotate: move the file away, SIGHUP; the new file is 0640 too.
    os.rename(log, log + ".1")
    d.proc.send_signal(signal.SIGHUP)
    if S.ok(H.wait_for(lambda: os.path.exists(log), 5.0), "SIGHUP reopens the log file"):
        S.ok(mode_of(log) == 0o640, "the reopened log file is created 0640",
             "mode %04o" % mode_of(log))
    S.stop_daemon(d, "umask daemon: SIGTERM exits 0")

    # An existing log file keeps the mode its owner chose.
    d = H.Daemon(IDMINTD, config="[log]\nfile = %s\n" % old_log)
    S.daemons.append(d)
    old = os.umask(0)
    try:
        d.start()
    finally:
        os.umask(old)
    S.ok(mode_of(old_log) == 0o600, "an existing log file keeps its mode (0600)",
         "mode %04o" % mode_of(old_log))
    S.ok(os.path.getsize(old_log) > 0, "the daemon logs to the existing file")
    S.stop_daemon(d, "existing-log daemon: SIGTERM exits 0")


def with_auth(d, value, what, expected):
    """GET /v1/ids with the raw header value @value; its status is @expected."""
    req = ("GET /v1/ids?namespace=orders&count=1 HTTP/1.1\r\nHost: idmint\r\n"
           "Authorization: %s\r\nConnection: close\r\n\r\n" % value)
    r = d.raw(req.encode(), desc="GET /v1/ids with Authorization %r" % value)
    if expected == 401:
        S.error(r, 401, "unauthenticated", what)
    else:
        S.json_ok(r, expected, what)


def test_token_whitespace(tmp):
    d = S.daemon(IDMINTD, config=TOKENS)
    S.json_ok(d.post("/v1/namespaces", {"name": "orders", "kind": "snowflake"}, token=ADMIN),
              201, "setup: create orders")
    with_auth(d, "Bearer " + MINT, "the exact token is accepted", 200)
    for tail, name in ((" ", "a space"), ("\t", "a tab"), ("  \t \t", "spaces and tabs")):
        with_auth(d, "Bearer " + MINT + tail, "the token followed by %s is accepted" % name, 200)
    with_auth(d, "Bearer  " + MINT, "two spaces after Bearer are accepted (1*SP)", 200)
    with_auth(d, "bearer " + MINT, "the scheme is case-insensitive", 200)
    half = len(MINT) // 2
    for bad, name in ((MINT[:half] + " " + MINT[half:], "a space inside"),
                      (MINT[:half] + "\t" + MINT[half:], "a tab inside"),
                      (MINT + " x", "a second word after a space"),
                      ("\t" + MINT, "a tab before it"),
                      (MINT + "x", "one more character"),
                      (MINT[:-1], "one character less"),
                      ("mnt-ffffffffffffffffffffffffffffffff", "a different token")):
        with_auth(d, "Bearer " + bad, "a token with %s is refused with 401" % name, 401)
    r = d.raw(b"GET /v1/ids?namespace=orders&count=1 HTTP/1.1\r\nHost: idmint\r\n"
              b"Authorization: Bearer \t \r\nConnection: close\r\n\r\n")
    if S.error(r, 401, "unauthenticated", "a bearer of only whitespace is refused with 401"):
        S.ok("required" in r.json()["error"]["message"],
             "only whitespace counts as no token at all", H.snip(r.body))
    S.stop_daemon(d, "token daemon: SIGTERM exits 0")

    for token, name in (("a b", "a space"), ("ab\t", "a trailing tab"), (" ab", "a leading space"),
                        ("a\x01b", "a control character")):
        p = subprocess.run([IDMINTD, "--hash-token"], input=token.encode(), capture_output=True,
                           timeout=30 * H.SCALE, env=H.clean_env())
        S.ok(p.returncode == 2 and b"never be presented" in p.stderr,
             "--hash-token refuses a token with %s (exit 2)" % name,
             "status %s, stderr %s" % (p.returncode, H.snip(p.stderr)))
    p = subprocess.run([IDMINTD, "--hash-token"], input=(MINT + "\n").encode(),
                       capture_output=True, timeout=30 * H.SCALE, env=H.clean_env())
    S.ok(p.returncode == 0 and p.stdout.decode().strip() == "sha256:" + H.sha256_hex(MINT),
         "--hash-token still hashes a token ending in a newline (the newline is dropped)",
         "status %s, out %s" % (p.returncode, H.snip(p.stdout)))


def main():
    tmp = tempfile.mkdtemp(prefix="idmintd-files-")
    try:
        S.run("config modes", test_config_modes, tmp)
        S.run("file modes", test_file_modes, tmp)
        S.run("token whitespace", test_token_whitespace, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    S.finish()


if __name__ == "__main__":
    main()
