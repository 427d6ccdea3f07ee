"""Shared by the play tests: the app of ``longpuzzle serve`` with live play, recording into a
folder, on a real uvicorn server on 127.0.0.1 (a free port), in a thread."""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from pathlib import Path

from longpuzzle.agents.serve.app import ROUTE_MODULES, make_app
from waits import HANG

PLAY = "longpuzzle.agents.serve.play"


def play_app(folders, record: Path):
    """The secured app over ``folders`` and ``record`` (made, served too), play recording into it."""
    assert PLAY in ROUTE_MODULES
    return make_app(folders, record=record)


@contextmanager
def running(app):
    """``app`` served by uvicorn on 127.0.0.1; yields its base URL; the live sessions are ended
    and the server stopped after."""
    import uvicorn

    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="off"))
    t = threading.Thread(target=server.run, daemon=True)
    t.start()
    deadline = time.monotonic() + HANG
    while not server.started:
        if time.monotonic() > deadline or not t.is_alive():
            raise RuntimeError("the server did not start")
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        from longpuzzle.agents.serve.play import close_sessions
        close_sessions(app.app.state.ctx)
        server.should_exit = True
        t.join(10)
