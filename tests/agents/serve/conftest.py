"""Fixtures of the browser app's tests: a small recorded run (greedy on Bolt Unscrew hard, two
episodes of 14 actions: level 1 played into a certified dead end, then restarted; its
verification record written) and the
app served for real by uvicorn on 127.0.0.1 (a free port), in a thread of the test process."""

from __future__ import annotations

import http.client
import shutil
import socket
import sys
import threading
import time
from pathlib import Path

import pytest
import uvicorn

from longpuzzle.agents.harness import Settings
from longpuzzle.agents.runner import RunConfig, execute, start_run
from longpuzzle.agents.serve.app import make_app
from longpuzzle.agents.verify import check_run

sys.path.insert(0, str(Path(__file__).parent))
from waits import HANG

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
EPISODE = "bolt_unscrew_hard/episode_001"


@pytest.fixture(scope="session")
def greedy_run(tmp_path_factory) -> Path:
    """A verified eval run folder: greedy, bolt_unscrew/hard, 2 episodes of 14 actions."""
    out = tmp_path_factory.mktemp("serve") / "greedy_hard"
    run = RunConfig(agent="greedy", objectives=["bolt_unscrew/hard"], episodes=2,
                    settings=Settings(budget=None, max_actions=14).as_dict())
    start_run(out, run)
    execute(out, run, quiet=True)
    assert check_run(out, use_record=False, write_record=True).ok     # verified.json, as `replay RUN_DIR` writes
    return out


class LiveServer:
    """An ASGI app served by uvicorn on 127.0.0.1 in a thread; ``request`` speaks plain HTTP."""

    def __init__(self, app):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.app = app
        self.server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + HANG
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the app did not start")
            time.sleep(0.02)

    def request(self, method: str, path: str, headers: dict | None = None, body: bytes | None = None):
        """(status, headers as a lower-case dict, body bytes) of one request; the Host header is
        the served address unless ``headers`` gives another."""
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            c.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
            hs = {"Host": f"127.0.0.1:{self.port}", **(headers or {})}
            if body is not None:
                hs["Content-Length"] = str(len(body))
            for k, v in hs.items():
                c.putheader(k, v)
            c.endheaders(body)
            r = c.getresponse()
            return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
        finally:
            c.close()

    def stop(self):
        self.server.should_exit = True
        self.thread.join(10)
        self.sock.close()


@pytest.fixture
def serve():
    """serve(folders, **make_app options) -> a LiveServer (stopped after the test)."""
    started = []

    def start(folders, **kw):
        s = LiveServer(make_app(folders, **kw))
        started.append(s)
        return s

    yield start
    for s in started:
        s.stop()
