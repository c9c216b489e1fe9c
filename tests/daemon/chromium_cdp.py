# SPDX-License-Identifier: Apache-2.0
# A small Chrome DevTools Protocol client for the daemon tests: headless
# Chromium (Debian's /usr/bin/chromium) driven over --remote-debugging-pipe,
# so no port is opened and no package beyond Chromium is needed. Python 3
# standard library only. Messages are JSON, each ended by a NUL byte; the
# browser reads commands from its fd 3 and writes answers and events to fd 4.

import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time

CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser")


class CdpError(Exception):
    pass


def find_chromium():
    """The Chromium binary: $IDMINT_CHROMIUM, else Debian's; None when there is none."""
    env = os.environ.get("IDMINT_CHROMIUM")
    for path in ([env] if env else []) + list(CHROMIUM_CANDIDATES):
        if path and os.access(path, os.X_OK):
            return path
    return None


class Browser:
    """One headless Chromium with one page, attached in flat session mode."""

    def __init__(self, binary, timeout_s=30.0):
        self.timeout_s = timeout_s
        self.profile = tempfile.mkdtemp(prefix="idmint-chromium-")
        self.events = []  # every event seen, in order: (method, params)
        self.next_id = 0
        self.buf = b""
        to_browser_r, self.to_browser = os.pipe()
        self.from_browser, from_browser_w = os.pipe()
        # Park the child's ends above the range the child must see as 3 and 4,
        # so the dup2 calls below cannot overwrite one another.
        a = fcntl.fcntl(to_browser_r, fcntl.F_DUPFD, 64)
        b = fcntl.fcntl(from_browser_w, fcntl.F_DUPFD, 64)
        os.close(to_browser_r)
        os.close(from_browser_w)

        def child_fds():
            os.dup2(a, 3)
            os.dup2(b, 4)

        args = [
            binary,
            "--headless",
            # Root (as in CI) cannot use Chromium's sandbox: it needs an
            # unprivileged user namespace. The page is our own daemon's.
            "--no-sandbox",
            "--remote-debugging-pipe",
            "--user-data-dir=" + self.profile,
            "--no-first-run", "--no-default-browser-check", "--disable-gpu",
            "--disable-dev-shm-usage", "--disable-extensions", "--disable-sync",
            "--disable-background-networking", "--disable-component-update",
            "--disable-default-apps", "--disable-domain-reliability",
            "--disable-features=Translate,MediaRouter,OptimizationHints,AutofillServerCommunication",
            "--metrics-recording-only", "--mute-audio", "--hide-scrollbars",
            "--force-color-profile=srgb", "--font-render-hinting=none",
            # Names never resolve: a request to another host fails at once
            # (and is still seen, and failed, by the test) instead of leaving
            # the machine.
            "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
            "about:blank",
        ]
        self.log = open(os.path.join(self.profile, "chromium.log"), "wb")
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=self.log,
                                     stderr=subprocess.STDOUT, pass_fds=(3, 4, a, b),
                                     preexec_fn=child_fds)
        os.close(a)
        os.close(b)
        targets = self.call("Target.getTargets")["targetInfos"]
        pages = [t for t in targets if t.get("type") == "page"]
        if pages:
            target = pages[0]["targetId"]
        else:
            target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target,
                                 flatten=True)["sessionId"]
        for domain in ("Page", "Network", "Runtime", "Log"):
            self.page(domain + ".enable")

    # ---- transport ----

    def _send(self, msg):
        data = json.dumps(msg).encode() + b"\0"
        while data:
            n = os.write(self.to_browser, data)
            data = data[n:]

    def _read_one(self, deadline):
        while b"\0" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise CdpError("no answer from Chromium within %.0f s" % self.timeout_s)
            if self.proc.poll() is not None:
                raise CdpError("Chromium exited with %s; log: %s"
                               % (self.proc.returncode, self.log_text()[-2000:]))
            r, _, _ = select.select([self.from_browser], [], [], min(left, 0.5))
            if r:
                chunk = os.read(self.from_browser, 1 << 20)
                if not chunk:
                    raise CdpError("Chromium closed its pipe; log: %s" % self.log_text()[-2000:])
                self.buf += chunk
        raw, _, self.buf = self.buf.partition(b"\0")
        return json.loads(raw.decode("utf-8"))

    def _call(self, method, session, params):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params}
        if session:
            msg["sessionId"] = session
        self._send(msg)
        deadline = time.monotonic() + self.timeout_s
        while True:
            m = self._read_one(deadline)
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise CdpError("%s: %s" % (method, m["error"]))
                return m.get("result", {})
            if "method" in m:
                self.events.append((m["method"], m.get("params", {})))

    def call(self, method, **params):
        """A browser-level command."""
        return self._call(method, None, params)

    def page(self, method, **params):
        """A command to the page's session."""
        return self._call(method, self.session, params)

    def wait_event(self, method, start, timeout_s=None):
        """The first event @method at or after index @start of self.events."""
        deadline = time.monotonic() + (timeout_s or self.timeout_s)
        i = start
        while True:
            while i < len(self.events):
                if self.events[i][0] == method:
                    return self.events[i][1]
                i += 1
            m = self._read_one(deadline)
            if "method" in m:
                self.events.append((m["method"], m.get("params", {})))

    # ---- page helpers ----

    def viewport(self, width, height, mobile=False):
        self.page("Emulation.setDeviceMetricsOverride", width=width, height=height,
                  deviceScaleFactor=1, mobile=mobile)

    def scripts(self, enabled):
        self.page("Emulation.setScriptExecutionDisabled", value=not enabled)

    def navigate(self, url):
        """Load @url and wait for its load event."""
        start = len(self.events)
        r = self.page("Page.navigate", url=url)
        if r.get("errorText"):
            raise CdpError("navigate %s: %s" % (url, r["errorText"]))
        self.wait_event("Page.loadEventFired", start)

    def evaluate(self, expression, await_promise=False):
        """The JSON value of @expression in the page; CdpError when it throws."""
        r = self.page("Runtime.evaluate", expression=expression, returnByValue=True,
                      awaitPromise=await_promise)
        if "exceptionDetails" in r:
            raise CdpError("evaluate %r: %s" % (expression[:80], json.dumps(r["exceptionDetails"])[:800]))
        return r["result"].get("value")

    def screenshot(self, path, full_page=False):
        params = {"format": "png"}
        if full_page:
            size = self.page("Page.getLayoutMetrics")["cssContentSize"]
            params["clip"] = {"x": 0, "y": 0, "width": size["width"], "height": size["height"],
                              "scale": 1}
            params["captureBeyondViewport"] = True
        data = self.page("Page.captureScreenshot", **params)["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))

    def requested_urls(self):
        """Every URL the page asked for, in order (Network.requestWillBeSent)."""
        return [p["request"]["url"] for m, p in self.events if m == "Network.requestWillBeSent"]

    def problems(self):
        """Script exceptions and console or browser errors (a CSP refusal among them)."""
        out = []
        for m, p in self.events:
            if m == "Runtime.exceptionThrown":
                out.append("exception: " + json.dumps(p.get("exceptionDetails", {}))[:500])
            elif m == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                out.append("log: %s %s" % (p["entry"].get("text"), p["entry"].get("url", "")))
            elif m == "Runtime.consoleAPICalled" and p.get("type") == "error":
                out.append("console: " + json.dumps(p.get("args", []))[:500])
        return out

    def log_text(self):
        try:
            with open(os.path.join(self.profile, "chromium.log"), "rb") as f:
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def close(self):
        try:
            if self.proc.poll() is None:
                try:
                    self.call("Browser.close")
                except (CdpError, OSError):
                    pass
                try:
                    self.proc.wait(5)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
        finally:
            for fd in (self.to_browser, self.from_browser):
                try:
                    os.close(fd)
                except OSError:
                    pass
            self.log.close()
            shutil.rmtree(self.profile, ignore_errors=True)
