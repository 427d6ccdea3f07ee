"""A real headless Chromium for tests, driven over the Chrome DevTools protocol through
``--remote-debugging-pipe`` (JSON messages ending in NUL on file descriptors 3 and 4): no
port, no network, no client library.

    with Browser() as b:                 # Browser.find() is None when no Chromium is installed
        result = b.load("file:///.../report.html")
        result.errors                    # uncaught exceptions, console errors, failed loads
        result.images                    # [(src, natural width, natural height), ...], all decoded
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--no-first-run", "--no-default-browser-check", "--mute-audio",
         "--remote-debugging-pipe"]
CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")

IMAGES_JS = """
Promise.all(Array.from(document.images).map(img =>
    img.decode().then(() => [img.currentSrc.slice(0, 80), img.naturalWidth, img.naturalHeight],
                      () => [img.currentSrc.slice(0, 80), 0, 0])))
"""


@dataclass
class PageLoad:
    title: str = ""
    errors: list[str] = field(default_factory=list)
    images: list[tuple[str, int, int]] = field(default_factory=list)
    text: str = ""


class Browser:
    def __init__(self, exe: str | None = None, timeout: float = 60.0):
        self.exe = exe or self.find()
        if self.exe is None:
            raise RuntimeError("no Chromium found")
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="lp-chromium-")        # a fresh --user-data-dir
        to_child_r, self._w = os.pipe()
        self._r, from_child_w = os.pipe()

        def fds():                      # the child reads commands on fd 3 and writes on fd 4
            os.dup2(to_child_r, 3)
            os.dup2(from_child_w, 4)
        self.proc = subprocess.Popen([self.exe, *FLAGS, f"--user-data-dir={self.profile}", "about:blank"],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, preexec_fn=fds, pass_fds=(3, 4))
        os.close(to_child_r)
        os.close(from_child_w)
        self._id = 0
        self._replies: dict[int, queue.Queue] = {}
        self.events: queue.Queue = queue.Queue()
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._stderr: list[bytes] = []
        threading.Thread(target=lambda: self._stderr.extend(self.proc.stderr), daemon=True).start()

    @staticmethod
    def find() -> str | None:
        for c in CANDIDATES:
            p = shutil.which(c)
            if p:
                return p
        return None

    # ---- the protocol ------------------------------------------------------------------
    def _read(self) -> None:
        buf = b""
        while True:
            try:
                chunk = os.read(self._r, 1 << 16)
            except OSError:
                break
            if not chunk:
                break
            buf += chunk
            while b"\0" in buf:
                msg, buf = buf.split(b"\0", 1)
                m = json.loads(msg)
                if "id" in m and m["id"] in self._replies:
                    self._replies[m["id"]].put(m)
                else:
                    self.events.put(m)

    def send(self, method: str, params: dict | None = None, session: str | None = None) -> dict:
        with self._lock:
            self._id += 1
            i = self._id
            q = self._replies[i] = queue.Queue()
        msg = {"id": i, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._w, json.dumps(msg).encode() + b"\0")
        try:
            r = q.get(timeout=self.timeout)
        except queue.Empty:
            raise TimeoutError(f"Chromium did not answer {method} in {self.timeout} s; stderr: "
                               + b"".join(self._stderr)[-2000:].decode(errors="replace")) from None
        finally:
            self._replies.pop(i, None)
        if "error" in r:
            raise RuntimeError(f"{method}: {r['error']}")
        return r.get("result", {})

    def wait_event(self, method: str, session: str, sink: list) -> dict:
        end = time.monotonic() + self.timeout
        while time.monotonic() < end:
            try:
                ev = self.events.get(timeout=max(0.01, end - time.monotonic()))
            except queue.Empty:
                break
            sink.append(ev)
            if ev.get("method") == method and ev.get("sessionId") == session:
                return ev
        raise TimeoutError(f"no {method} within {self.timeout} s")

    # ---- a page --------------------------------------------------------------------------
    def load(self, url: str, settle: float = 0.3) -> PageLoad:
        """Open ``url`` in a new tab, wait for its load event, decode every image, and
        collect what went wrong (exceptions, console errors, log errors, failed requests)."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        sess = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for dom in ("Page", "Runtime", "Log", "Network"):
            self.send(f"{dom}.enable", session=sess)
        seen: list[dict] = []
        self.send("Page.navigate", {"url": url}, session=sess)
        self.wait_event("Page.loadEventFired", sess, seen)
        imgs = self.send("Runtime.evaluate", {"expression": IMAGES_JS, "awaitPromise": True, "returnByValue": True},
                         session=sess)["result"].get("value") or []
        info = self.send("Runtime.evaluate", {"expression": "[document.title, document.body.innerText]",
                                              "returnByValue": True}, session=sess)["result"]["value"]
        time.sleep(settle)
        while True:
            try:
                seen.append(self.events.get_nowait())
            except queue.Empty:
                break
        out = PageLoad(title=info[0], text=info[1], images=[tuple(x) for x in imgs])
        for ev in seen:
            if ev.get("sessionId") != sess:
                continue
            m, p = ev.get("method"), ev.get("params", {})
            if m == "Runtime.exceptionThrown":
                d = p.get("exceptionDetails", {})
                out.errors.append("exception: " + str(d.get("exception", {}).get("description") or d.get("text")))
            elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out.errors.append("console: " + " ".join(str(a.get("value", a.get("description")))
                                                         for a in p.get("args", [])))
            elif m == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                out.errors.append("log: " + p["entry"].get("text", "") + " " + p["entry"].get("url", ""))
            elif m == "Network.loadingFailed" and not p.get("canceled"):
                out.errors.append(f"load failed: {p.get('errorText')} ({p.get('type')})")
        self.send("Target.closeTarget", {"targetId": target})
        return out

    def close(self) -> None:
        try:
            if self.proc.poll() is None:
                try:
                    self.send("Browser.close")
                except Exception:
                    pass
                try:
                    self.proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait(timeout=10)
        finally:
            for fd in (self._w, self._r):
                try:
                    os.close(fd)
                except OSError:
                    pass
            shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
