# SPDX-License-Identifier: Apache-2.0
# Shared helpers for the idmintd suites: start a daemon on 127.0.0.1 with its
# own temp dir and SQLite authority, talk to it (http.client or raw sockets),
# and count checks so each file ends with the line "N passed, M failed".
# Python 3 standard library only; the daemon is judged by docs/http-api.md.

import hashlib
import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback

SCALE = float(os.environ.get("IDMINT_TIMEOUT_SCALE", "1") or "1")
HOST = "127.0.0.1"
DIGITS = re.compile(r"^(0|[1-9][0-9]*)$")
HEX32 = re.compile(r"^[0-9a-f]{32}$")
ISO_MS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
INT64_MAX = 2**63 - 1


class HarnessError(Exception):
    pass


def usage_paths():
    """(idmintd, idmint) from argv, as CTest passes them."""
    if len(sys.argv) < 3:
        sys.stderr.write("usage: %s /path/to/idmintd /path/to/idmint\n" % sys.argv[0])
        sys.exit(2)
    return os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])


def sha256_hex(token):
    return hashlib.sha256(token.encode()).hexdigest()


def tokens_config(tokens):
    """INI text for {name: (role, token)}."""
    lines = ["[tokens]"]
    for name, (role, token) in tokens.items():
        lines.append("%s = %s:sha256:%s" % (name, role, sha256_hex(token)))
    return "\n".join(lines) + "\n"


def clean_env():
    """The caller's environment without IDMINT_* settings that would override our flags.
    IDMINT_WITNESS_DIR stays: it keeps the host evidence of every store a test makes in the
    build tree (CMakeLists.txt), never in /var/lib/idmint or the user's state folder."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("IDMINT_") or k == "IDMINT_WITNESS_DIR"}
    return env


def snip(data, limit=300):
    if data is None:
        return "<none>"
    if isinstance(data, bytes):
        data = data.decode("utf-8", "replace")
    data = data.replace("\r", "\\r").replace("\n", "\\n")
    return data if len(data) <= limit else data[:limit] + "...(%d chars)" % len(data)


class Resp:
    """One HTTP response. status None means no response (error says why)."""

    def __init__(self, request, status=None, reason="", headers=None, body=b"", error=None):
        self.request = request
        self.status = status
        self.reason = reason
        self.headers = headers or {}
        self.body = body
        self.error = error
        self._json = None
        self._json_done = False

    def header(self, name):
        return self.headers.get(name.lower())

    def json(self):
        if not self._json_done:
            self._json_done = True
            try:
                self._json = json.loads(self.body.decode("utf-8"))
            except (ValueError, UnicodeDecodeError):
                self._json = None
        return self._json

    @property
    def text(self):
        return self.body.decode("utf-8", "replace")

    def show(self):
        if self.status is None:
            return "no response (%s)" % self.error
        return "%s %s, body %s" % (self.status, self.reason, snip(self.body))


def parse_raw_response(request, data, error=None):
    """Parse the first HTTP/1.x response in @data (bytes)."""
    head, sep, rest = data.partition(b"\r\n\r\n")
    if not sep:
        return Resp(request, error=error or "incomplete response %r" % snip(data, 120))
    lines = head.split(b"\r\n")
    m = re.match(rb"^HTTP/\d\.\d (\d{3}) ?(.*)$", lines[0])
    if not m:
        return Resp(request, error="bad status line %r" % snip(lines[0], 120))
    headers = {}
    for line in lines[1:]:
        k, _, v = line.partition(b":")
        headers[k.strip().lower().decode("latin-1")] = v.strip().decode("latin-1")
    body = rest
    cl = headers.get("content-length")
    if cl is not None and cl.isdigit():
        body = rest[: int(cl)]
    elif headers.get("transfer-encoding", "").lower() == "chunked":
        body = dechunk(rest)
    return Resp(request, int(m.group(1)), m.group(2).decode("latin-1"), headers, body)


def dechunk(data):
    out = b""
    while True:
        line, sep, data = data.partition(b"\r\n")
        if not sep:
            return out
        try:
            size = int(line.split(b";")[0], 16)
        except ValueError:
            return out
        if size == 0:
            return out
        out += data[:size]
        data = data[size + 2 :]


class Daemon:
    """One idmintd process on 127.0.0.1:0 in a temp dir (or a given one)."""

    def __init__(self, idmintd, config=None, extra_args=None, workdir=None, listen=None,
                 env=None):
        self.idmintd = idmintd
        self.own_dir = workdir is None
        self.dir = workdir or tempfile.mkdtemp(prefix="idmintd-test-")
        self.db = os.path.join(self.dir, "idmint.db")
        self.authority = "sqlite:" + self.db
        self.port_file = os.path.join(self.dir, "port")
        self.config = config
        self.extra_args = list(extra_args or [])
        self.listen = listen or "127.0.0.1:0"
        self.env = env
        self.proc = None
        self.port = None
        self.exit_code = None
        self.log_path = None

    def argv(self):
        args = [self.idmintd, "--listen", self.listen, "--port-file", self.port_file,
                "--authority", self.authority]
        if self.config is not None:
            path = os.path.join(self.dir, "idmintd.ini")
            # Tokens live here: only the owner may read it (idmintd checks).
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.fchmod(fd, 0o600)
            with os.fdopen(fd, "w") as f:
                f.write(self.config)
            args += ["--config", path]
        return args + self.extra_args

    def start(self, wait_s=10.0):
        if os.path.exists(self.port_file):
            os.unlink(self.port_file)
        n = 0
        while True:
            self.log_path = os.path.join(self.dir, "idmintd.%d.log" % n)
            if not os.path.exists(self.log_path):
                break
            n += 1
        log = open(self.log_path, "wb")
        env = self.env if self.env is not None else clean_env()
        self.proc = subprocess.Popen(self.argv(), stdin=subprocess.DEVNULL, stdout=log,
                                     stderr=subprocess.STDOUT, cwd=self.dir, env=env)
        log.close()
        deadline = time.monotonic() + wait_s * SCALE
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise HarnessError("idmintd exited with %s before writing its port file; log: %s"
                                   % (self.proc.returncode, snip(self.log(), 2000)))
            try:
                with open(self.port_file) as f:
                    text = f.read()
                m = re.search(r"(\d+)\s*$", text)
                if m:
                    port = int(m.group(1))
                    if 0 < port < 65536 and self._connectable(port):
                        self.port = port
                        return self
            except FileNotFoundError:
                pass
            time.sleep(0.05)
        self.kill()
        raise HarnessError("idmintd wrote no usable port file within %.0f s; log: %s"
                           % (wait_s * SCALE, snip(self.log(), 2000)))

    @staticmethod
    def _connectable(port):
        try:
            with socket.create_connection((HOST, port), timeout=1):
                return True
        except OSError:
            return False

    def log(self):
        try:
            with open(self.log_path, "rb") as f:
                return f.read().decode("utf-8", "replace")
        except (OSError, TypeError):
            return ""

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def stop(self, timeout_s=30.0):
        """SIGTERM and wait; returns the exit status (negative: killed by signal; None: hung)."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout_s * SCALE)
            except subprocess.TimeoutExpired:
                self.kill()
                self.exit_code = None
                return None
        self.exit_code = self.proc.returncode
        return self.exit_code

    def kill(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def cleanup(self):
        self.kill()
        if self.own_dir:
            shutil.rmtree(self.dir, ignore_errors=True)

    # ---- requests ----

    def request(self, method, path, body=None, token=None, headers=None, timeout=15.0):
        hdrs = dict(headers or {})
        if token is not None:
            hdrs["Authorization"] = "Bearer " + token
        data = None
        if body is not None:
            if isinstance(body, (dict, list)):
                data = json.dumps(body).encode()
                hdrs.setdefault("Content-Type", "application/json")
            elif isinstance(body, str):
                data = body.encode()
                hdrs.setdefault("Content-Type", "application/json")
            else:
                data = body
        desc = "%s %s" % (method, path)
        if data is not None:
            desc += " body " + snip(data, 200)
        if token is not None:
            desc += " (token %s)" % token[:12]
        conn = http.client.HTTPConnection(HOST, self.port, timeout=timeout * SCALE)
        try:
            conn.request(method, path, body=data, headers=hdrs)
            r = conn.getresponse()
            payload = r.read()
            headers_out = {k.lower(): v for k, v in r.getheaders()}
            return Resp(desc, r.status, r.reason, headers_out, payload)
        except (OSError, http.client.HTTPException) as e:
            return Resp(desc, error="%s: %s" % (type(e).__name__, e))
        finally:
            conn.close()

    def get(self, path, **kw):
        return self.request("GET", path, **kw)

    def post(self, path, body=None, **kw):
        return self.request("POST", path, body=body if body is not None else b"", **kw)

    def connect(self, timeout=10.0):
        s = socket.create_connection((HOST, self.port), timeout=timeout * SCALE)
        return s

    def raw(self, data, timeout=10.0, desc=None):
        """Send raw bytes, read until the server closes or the timeout; parse one response."""
        desc = desc or "raw " + snip(data, 160)
        try:
            s = self.connect(timeout)
        except OSError as e:
            return Resp(desc, error="connect: %s" % e)
        try:
            try:
                s.sendall(data)
            except OSError as e:
                got = read_some(s, timeout)
                return parse_raw_response(desc, got, "send: %s" % e)
            got = read_response_bytes(s, timeout)
            return parse_raw_response(desc, got)
        finally:
            s.close()


def read_some(s, timeout):
    s.settimeout(timeout * SCALE)
    out = b""
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            out += chunk
    except OSError:
        pass
    return out


def read_response_bytes(s, timeout):
    """Read one response: up to its Content-Length, the closing chunk, or EOF."""
    s.settimeout(timeout * SCALE)
    out = b""
    deadline = time.monotonic() + timeout * SCALE
    while time.monotonic() < deadline:
        head, sep, rest = out.partition(b"\r\n\r\n")
        if sep:
            m = re.search(rb"(?im)^content-length:\s*(\d+)\s*$", head)
            if m and len(rest) >= int(m.group(1)):
                return out
            if re.search(rb"(?im)^transfer-encoding:\s*chunked", head) and rest.endswith(
                    b"0\r\n\r\n"):
                return out
        try:
            chunk = s.recv(65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    return out


class Suite:
    """Counts checks; each failure is printed with the request, expectation and answer."""

    def __init__(self, name):
        self.name = name
        self.passed = 0
        self.failed = 0
        self.daemons = []

    def ok(self, cond, what, detail=""):
        if cond:
            self.passed += 1
        else:
            self.failed += 1
            print("FAIL: %s%s" % (what, (": " + detail) if detail else ""), flush=True)
        return bool(cond)

    def status(self, resp, expected, what):
        """Status is one of @expected (int or tuple)."""
        exp = expected if isinstance(expected, (tuple, list, set)) else (expected,)
        return self.ok(resp.status in exp, what,
                       "%s: expected %s, got %s" % (resp.request, "/".join(map(str, exp)),
                                                     resp.show()))

    def no_5xx(self, resp, what):
        return self.ok(resp.status is not None and resp.status < 500, what,
                       "%s: expected a 4xx (never a 5xx, never silence), got %s"
                       % (resp.request, resp.show()))

    def error(self, resp, status, code, what):
        """An error answer: exact status, JSON {"error":{"code":code,"message":str}}."""
        if not self.status(resp, status, what):
            return False
        j = resp.json()
        shape = (isinstance(j, dict) and isinstance(j.get("error"), dict)
                 and isinstance(j["error"].get("code"), str)
                 and isinstance(j["error"].get("message"), str))
        if not self.ok(shape, what + " (error JSON shape)",
                       "%s: expected {\"error\":{\"code\",\"message\"}}, got %s"
                       % (resp.request, snip(resp.body))):
            return False
        if code is None:
            return True
        codes = code if isinstance(code, (tuple, list)) else (code,)
        return self.ok(j["error"]["code"] in codes, what + " (error.code)",
                       "%s: expected code %s, got %r" % (resp.request, "/".join(codes),
                                                          j["error"]["code"]))

    def json_ok(self, resp, status, what):
        """A success answer with a JSON object body; returns it or None."""
        if not self.status(resp, status, what):
            return None
        ctype = resp.header("content-type") or ""
        self.ok(ctype.startswith("application/json"), what + " (content type)",
                "%s: expected application/json, got %r" % (resp.request, ctype))
        j = resp.json()
        if not self.ok(isinstance(j, dict), what + " (JSON object)",
                       "%s: body is not a JSON object: %s" % (resp.request, snip(resp.body))):
            return None
        return j

    def decimal(self, value, what, lo=0, hi=INT64_MAX):
        """A 64-bit value as a decimal string within [lo, hi]; returns the int or None."""
        good = isinstance(value, str) and DIGITS.match(value) is not None
        if not self.ok(good, what, "expected a decimal string, got %r" % (value,)):
            return None
        v = int(value)
        if not self.ok(lo <= v <= hi, what, "%d outside [%d, %d]" % (v, lo, hi)):
            return None
        return v

    def keys(self, obj, expected, what, exact=False):
        if not isinstance(obj, dict):
            return self.ok(False, what, "expected an object, got %r" % (obj,))
        missing = [k for k in expected if k not in obj]
        extra = [k for k in obj if k not in expected] if exact else []
        return self.ok(not missing and not extra, what,
                       "missing %s%s in %s" % (missing, (", extra %s" % extra) if extra else "",
                                                snip(json.dumps(obj))))

    def run(self, name, fn, *args):
        """Run one group; an exception counts as one failure and the suite goes on."""
        try:
            fn(*args)
        except Exception:  # noqa: BLE001 -- any crash is a failed check
            self.ok(False, "%s raised" % name, traceback.format_exc())

    def daemon(self, idmintd, **kw):
        d = Daemon(idmintd, **kw)
        self.daemons.append(d)
        return d.start()

    def stop_daemon(self, d, what):
        """SIGTERM; the daemon exits 0 within the bound."""
        code = d.stop()
        self.ok(code == 0, what,
                "expected exit status 0 after SIGTERM, got %s; log tail: %s"
                % ("a hang (killed)" if code is None else code, snip(d.log()[-1500:], 1500)))
        return code

    def finish(self):
        for d in self.daemons:
            if d.alive():
                print("note: a daemon was still running at the end; killed", flush=True)
            d.cleanup()
        print("%d passed, %d failed" % (self.passed, self.failed), flush=True)
        sys.exit(0 if self.failed == 0 and self.passed > 0 else 1)


def now_ms():
    return int(time.time() * 1000)


def wait_for(fn, timeout_s, interval=0.1):
    """Poll @fn until truthy or timeout; returns its last value."""
    deadline = time.monotonic() + timeout_s * SCALE
    while True:
        v = fn()
        if v or time.monotonic() >= deadline:
            return v
        time.sleep(interval)
