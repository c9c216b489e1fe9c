#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# TLS (issue 16, part 2): the test makes a throwaway CA and a server
# certificate for IP:127.0.0.1 with the openssl tool; idmintd started with
# --tls-cert/--tls-key serves IDs over HTTPS to curl --cacert, refuses TLS
# 1.1 and plain HTTP on that port, serves a library process leasing through
# https://...?ca=, while a wrong CA is refused with an error naming the
# verification failure; SIGHUP with a new certificate serves the new one and
# a broken replacement keeps the old one. Bad certificate or key files stop
# the daemon at start (exit 2, naming the file), so does a key file others
# may read or its group may write (issue 28 item 8, the rule of a [tokens]
# config), and tokens on a non-loopback listener without TLS log a warning.

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import daemon_harness as H  # noqa: E402

IDMINTD, IDMINT = H.usage_paths()
S = H.Suite("tls")
MINT = "mnt-7d1c2b3a4f5e6d7c8b9a0f1e2d3c4b5a"


def run(args, timeout=30, **kw):
    return subprocess.run(args, capture_output=True, timeout=timeout * H.SCALE,
                          stdin=subprocess.DEVNULL, **kw)


def openssl(*args):
    p = run(["openssl"] + list(args))
    if p.returncode != 0:
        raise H.HarnessError("openssl %s: %s" % (" ".join(args), H.snip(p.stderr)))
    return p


def make_ca(tmp, name):
    key, pem = os.path.join(tmp, name + ".key"), os.path.join(tmp, name + ".pem")
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
            "-keyout", key, "-out", pem, "-days", "2", "-subj", "/CN=idmint test " + name)
    return key, pem


def make_server_cert(tmp, name, ca):
    """A certificate for IP:127.0.0.1 signed by @ca; (cert, key)."""
    key, csr = os.path.join(tmp, name + ".key"), os.path.join(tmp, name + ".csr")
    pem, ext = os.path.join(tmp, name + ".pem"), os.path.join(tmp, "san.cnf")
    with open(ext, "w") as f:
        f.write("subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n")
    openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout",
            key, "-out", csr, "-subj", "/CN=127.0.0.1")
    openssl("x509", "-req", "-in", csr, "-CA", ca[1], "-CAkey", ca[0], "-set_serial",
            str(int.from_bytes(os.urandom(8), "big")), "-out", pem, "-days", "2", "-extfile", ext)
    return pem, key


def cert_serial(path):
    return openssl("x509", "-in", path, "-noout", "-serial").stdout.decode().strip()


def served_serial(port):
    """The serial of the certificate the daemon presents now ("" when none)."""
    p = run(["openssl", "s_client", "-connect", "127.0.0.1:%d" % port, "-servername", "x"])
    x = subprocess.run(["openssl", "x509", "-noout", "-serial"], input=p.stdout,
                       capture_output=True, timeout=30 * H.SCALE)
    return x.stdout.decode().strip() if x.returncode == 0 else ""


def handshake(port, *flags):
    """(handshake completed, protocol) of openssl s_client with @flags."""
    p = run(["openssl", "s_client", "-connect", "127.0.0.1:%d" % port] + list(flags))
    out = p.stdout.decode("utf-8", "replace")
    proto = ""
    for line in out.splitlines():
        if line.strip().startswith("Protocol") and ":" in line:
            proto = line.split(":", 1)[1].strip()
    return "Cipher is (NONE)" not in out and "BEGIN CERTIFICATE" in out, proto


def tls_daemon(tmp, cert, key, **kw):
    return S.daemon(IDMINTD, workdir=tempfile.mkdtemp(dir=tmp),
                    extra_args=["--tls-cert", cert, "--tls-key", key], **kw)


def test_start_errors(tmp, ca):
    cert, key = make_server_cert(tmp, "start", ca)
    other_cert, other_key = make_server_cert(tmp, "other", ca)
    garbage = os.path.join(tmp, "garbage.pem")
    with open(garbage, "w") as f:
        f.write("this is not PEM\n")
    missing = os.path.join(tmp, "missing.pem")
    base = [IDMINTD, "--listen", "127.0.0.1:0", "--authority",
            "sqlite:" + os.path.join(tmp, "start.db")]
    for args, words, what in (
            (["--tls-cert", missing, "--tls-key", key], [missing, "No such file"],
             "a missing certificate file"),
            (["--tls-cert", cert, "--tls-key", missing], [missing, "No such file"],
             "a missing key file"),
            (["--tls-cert", garbage, "--tls-key", key], [garbage, "no usable PEM certificate"],
             "a certificate file that is not PEM"),
            (["--tls-cert", cert, "--tls-key", garbage], [garbage, "no usable PEM private key"],
             "a key file that is not PEM"),
            (["--tls-cert", cert, "--tls-key", other_key], [other_key, cert, "does not match"],
             "a key of another certificate"),
            (["--tls-cert", cert], ["tls_key"], "a certificate without a key")):
        p = run(base + args, timeout=10, env=H.clean_env())
        err = p.stderr.decode("utf-8", "replace")
        S.ok(p.returncode == 2 and all(w in err for w in words),
             "idmintd refuses to start with %s (exit 2, names %s)" % (what, ", ".join(words)),
             "status %s, stderr %s" % (p.returncode, H.snip(err)))
    # The key must be private, by the rule a [tokens] config is held to.
    exposed = os.path.join(tmp, "exposed.key")
    shutil.copy(key, exposed)
    for mode, why in ((0o644, "others have access"), (0o604, "others have access"),
                      (0o660, "its group may write it"),
                      (0o666, "its group may write it, others have access")):
        os.chmod(exposed, mode)
        p = run(base + ["--tls-cert", cert, "--tls-key", exposed], timeout=10, env=H.clean_env())
        err = p.stderr.decode("utf-8", "replace")
        what = "idmintd refuses a TLS key file with mode %04o" % mode
        S.ok(p.returncode == 2 and exposed in err and ("%04o" % mode) in err and why in err,
             what + " (exit 2, names the file, the mode and why)",
             "status %s, stderr %s" % (p.returncode, H.snip(err)))
        S.ok("chmod 600 " + exposed in err and "640" in err, what + " (says how to fix it)",
             H.snip(err))
    for mode in (0o640, 0o400):
        os.chmod(exposed, mode)
        d = tls_daemon(tmp, cert, exposed)
        S.ok("tls=on" in d.log(), "a TLS key file with mode %04o is served" % mode,
             H.snip(d.log(), 800))
        S.stop_daemon(d, "mode %04o TLS daemon: SIGTERM exits 0" % mode)
    env = H.clean_env()
    env["IDMINT_TLS_CERT"], env["IDMINT_TLS_KEY"] = other_cert, other_key
    d = S.daemon(IDMINTD, env=env)
    S.ok("tls=on" in d.log(), "IDMINT_TLS_CERT and IDMINT_TLS_KEY turn TLS on",
         H.snip(d.log(), 1500))
    S.stop_daemon(d, "env TLS daemon: SIGTERM exits 0")


def test_https(tmp, ca, wrong_ca):
    cert, key = make_server_cert(tmp, "serve", ca)
    d = tls_daemon(tmp, cert, key)
    url = "https://127.0.0.1:%d" % d.port

    p = run(["curl", "-sS", "--cacert", ca[1], url + "/v1/ids?count=3"])
    body = p.stdout.decode("utf-8", "replace")
    S.ok(p.returncode == 0 and body.count('"') >= 8 and '"ids"' in body,
         "curl --cacert with the test CA gets 3 IDs over HTTPS",
         "curl exit %s, body %s, stderr %s" % (p.returncode, H.snip(body), H.snip(p.stderr)))
    p = run(["curl", "-sS", "-o", "/dev/null", url + "/v1/ids"])
    S.ok(p.returncode == 60, "curl without the test CA refuses the certificate (exit 60)",
         "curl exit %s, stderr %s" % (p.returncode, H.snip(p.stderr)))

    for flag in ("-tls1_2", "-tls1_3"):
        done, proto = handshake(d.port, flag)
        S.ok(done, "a %s handshake completes" % flag, "protocol %r" % proto)
    # SECLEVEL=0: the client itself would refuse TLS 1.1 under Debian's
    # defaults, and then the check would prove nothing about the server.
    done, proto = handshake(d.port, "-tls1_1", "-cipher", "DEFAULT@SECLEVEL=0")
    S.ok(not done, "a TLS 1.1 handshake is refused", "protocol %r" % proto)
    p = run(["curl", "-sS", "--cacert", ca[1], "--tls-max", "1.1", url + "/v1/ids",
             "--ciphers", "DEFAULT@SECLEVEL=0"])
    S.ok(p.returncode != 0, "curl --tls-max 1.1 gets no answer",
         "curl exit %s, out %s" % (p.returncode, H.snip(p.stdout)))

    s = socket.create_connection((H.HOST, d.port), timeout=10)
    s.sendall(b"GET /v1/ids HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    data = H.read_response_bytes(s, 5 * H.SCALE)
    s.close()
    S.ok(not data.startswith(b"HTTP/"), "plain HTTP to the TLS port gets no HTTP answer",
         H.snip(data))
    r = run(["curl", "-sS", "http://127.0.0.1:%d/v1/ids" % d.port])
    S.ok(r.returncode != 0, "curl http:// to the TLS port fails",
         "curl exit %s, out %s" % (r.returncode, H.snip(r.stdout)))

    started = time.monotonic()
    p = run([IDMINT, "--authority", url + "?ca=" + ca[1], "mint", "-n", "5"], env=H.clean_env())
    took_ok = time.monotonic() - started
    ids = p.stdout.decode().split()
    S.ok(p.returncode == 0 and len(ids) == 5 and all(H.DIGITS.match(i) for i in ids)
         and len(set(ids)) == 5,
         "idmint --authority https://...?ca=TEST-CA leases and mints 5 IDs",
         "exit %s, out %s, err %s" % (p.returncode, H.snip(p.stdout), H.snip(p.stderr)))
    for authority, trust in ((url + "?ca=" + wrong_ca[1], "the CA file " + wrong_ca[1]),
                             (url, "the system CA store")):
        # Retried, the call would sleep its backoff (50 ms doubling, at least
        # 1.55 s before the 2 s budget ends: src/remote/remote_http.c) on top
        # of what a whole successful run above took in this same test. Every
        # run would pay it; the fastest of up to three is judged, so that one
        # run slowed by a loaded machine does not look like a retry.
        took = float("inf")
        for _ in range(3):
            started = time.monotonic()
            p = run([IDMINT, "--authority", authority, "mint", "-n", "1"], env=H.clean_env())
            took = min(took, time.monotonic() - started)
            if took < took_ok + 1.0:
                break
        err = p.stderr.decode("utf-8", "replace")
        S.ok(p.returncode == 1 and "authority unavailable" in err
             and "TLS certificate verification failed" in err and trust in err
             and p.stdout == b"",
             "a library process trusting %s is refused with a clear error" % trust,
             "exit %s, out %s, err %s" % (p.returncode, H.snip(p.stdout), H.snip(err)))
        S.ok(took < took_ok + 1.0, "a certificate that does not verify is not retried",
             "took %.2f s; a successful mint took %.2f s" % (took, took_ok))
    S.stop_daemon(d, "TLS daemon: SIGTERM exits 0")


def test_reload(tmp, ca):
    cert, key = make_server_cert(tmp, "live", ca)
    d = tls_daemon(tmp, cert, key)
    first = served_serial(d.port)
    S.ok(first == cert_serial(cert) and first != "", "the daemon serves the configured certificate",
         "served %r, file %r" % (first, cert_serial(cert)))

    new_cert, new_key = make_server_cert(tmp, "renewed", ca)
    shutil.copy(new_cert, cert)
    shutil.copy(new_key, key)
    d.proc.send_signal(signal.SIGHUP)
    deadline = time.monotonic() + 5 * H.SCALE
    while time.monotonic() < deadline and served_serial(d.port) == first:
        time.sleep(0.05)
    second = served_serial(d.port)
    S.ok(second == cert_serial(new_cert) and second != first,
         "after SIGHUP a new connection gets the renewed certificate",
         "served %r, renewed %r, before %r" % (second, cert_serial(new_cert), first))
    p = run(["curl", "-sS", "--cacert", ca[1], "https://127.0.0.1:%d/v1/ids" % d.port])
    S.ok(p.returncode == 0 and b'"ids"' in p.stdout, "the renewed certificate serves IDs",
         "curl exit %s, stderr %s" % (p.returncode, H.snip(p.stderr)))

    with open(cert, "w") as f:
        f.write("-----BEGIN CERTIFICATE-----\nbroken\n-----END CERTIFICATE-----\n")
    d.proc.send_signal(signal.SIGHUP)
    deadline = time.monotonic() + 5 * H.SCALE
    while time.monotonic() < deadline and "TLS reload failed" not in d.log():
        time.sleep(0.05)
    log = d.log()
    S.ok("level=error" in log and "TLS reload failed; still serving the previous certificate"
         in log and cert in log, "a broken replacement is logged as an error naming the file",
         H.snip(log[-1500:], 1500))
    S.ok(served_serial(d.port) == second, "after a broken replacement the old certificate stays",
         "served %r, expected %r" % (served_serial(d.port), second))
    shutil.copy(new_cert, cert)
    other_cert, other_key = make_server_cert(tmp, "mismatch", ca)
    shutil.copy(other_key, key)  # a key of another certificate
    d.proc.send_signal(signal.SIGHUP)
    deadline = time.monotonic() + 5 * H.SCALE
    while time.monotonic() < deadline and "does not match" not in d.log():
        time.sleep(0.05)
    S.ok("does not match" in d.log() and served_serial(d.port) == second,
         "a mismatched key on reload keeps the old pair", H.snip(d.log()[-800:], 800))
    shutil.copy(new_key, key)
    os.chmod(key, 0o644)  # the right key, readable by everyone
    d.proc.send_signal(signal.SIGHUP)
    deadline = time.monotonic() + 5 * H.SCALE
    while time.monotonic() < deadline and "is not private" not in d.log():
        time.sleep(0.05)
    S.ok("is not private" in d.log() and served_serial(d.port) == second,
         "a key file others may read is refused on reload too; the old pair stays",
         H.snip(d.log()[-800:], 800))
    S.ok(d.alive(), "the daemon is still running after three failed reloads")
    S.stop_daemon(d, "reload daemon: SIGTERM exits 0")


def test_clear_text_warning(tmp, ca):
    tokens = H.tokens_config({"shop": ("mint", MINT)})
    d = S.daemon(IDMINTD, config=tokens, listen="0.0.0.0:0",
                 workdir=tempfile.mkdtemp(dir=tmp))
    log = d.log()
    S.ok("level=warn" in log and "TOKENS TRAVEL IN CLEAR TEXT" in log,
         "tokens on a non-loopback listener without TLS log a warning at start",
         H.snip(log, 1500))
    S.stop_daemon(d, "clear-text daemon: SIGTERM exits 0")
    cert, key = make_server_cert(tmp, "warn", ca)
    d = tls_daemon(tmp, cert, key, config=tokens, listen="0.0.0.0:0")
    S.ok("CLEAR TEXT" not in d.log(), "with TLS there is no clear-text warning",
         H.snip(d.log(), 1500))
    S.stop_daemon(d, "TLS token daemon: SIGTERM exits 0")


def main():
    tmp = tempfile.mkdtemp(prefix="idmintd-tls-")
    try:
        ca = make_ca(tmp, "ca")
        wrong_ca = make_ca(tmp, "wrong-ca")
        S.run("start errors", test_start_errors, tmp, ca)
        S.run("https", test_https, tmp, ca, wrong_ca)
        S.run("reload", test_reload, tmp, ca)
        S.run("clear-text warning", test_clear_text_warning, tmp, ca)
    finally:
        for d in S.daemons:
            d.kill()
        shutil.rmtree(tmp, ignore_errors=True)
    S.finish()


if __name__ == "__main__":
    main()
