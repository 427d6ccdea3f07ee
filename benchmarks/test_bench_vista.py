"""The VISTA tools and the MCP server, model excluded (issue 15).

mcp play      one ``play`` round trip through MCP over stdio at 540 x 960: the SDK client
              sends a click (a Nut and Bolt bolt: select, deselect, ...), the server
              dispatches it through the episode (evaluator, frame store, log), renders the
              frame, encodes it as PNG and sends it back. Target: <= 10 ms.
mcp inspect   ``inspect`` of 16 views through MCP: 8 whole frames of recent turns and 8
              crops zoomed 2x of 8 other turns. Target: <= 20 ms.
mcp screenshot the current screen again: the MCP round trip with a cached image (what the
              transport alone costs, side by side with the two above)
controller    the same play and inspect calls in process (Controller.call): what the
              harness costs without the transport; ``uncached``: inspect with no image
              made before (every view cropped, zoomed and encoded; a view sent before
              comes from the controller's image cache)

The server runs in a subprocess; the client in a thread with its own event loop (anyio's
blocking portal). A round is ROUND calls made one after the other inside that loop (the
summary's throughput is per call; a round's time / ROUND is one call's round trip).
"""

from __future__ import annotations

import os
import sys

import anyio.from_thread
import pytest

from longpuzzle.agents.harness import Settings
from longpuzzle.engine.suite import Suite

pytest.importorskip("mcp")

OBJECTIVE = "nut_and_bolt/easy"
ROUND = 10


def _bolt_and_entry():
    """The clicks that enter nut_and_bolt/easy level 1 and a bolt's centre (frame px)."""
    s = Suite("home")
    out = []
    for wid in ("game:nut_and_bolt", "difficulty:easy"):
        w = next(w for w in s.layout().widgets if w.id == wid)
        x, y = s.proj.to_px(*w.shape.center)
        a = {"type": "click", "x": int(x), "y": int(y)}
        s.dispatch(a)
        out.append(a)
    w = next(w for w in s.layout().widgets if w.kind == "target")
    x, y = s.proj.to_px(*w.shape.center)
    return out, {"type": "click", "x": int(x), "y": int(y)}


ENTRY, BOLT = _bolt_and_entry()
VIEWS = [{"turn": -(k + 1)} for k in range(8)] + [{"turn": -(k + 9), "box": [0, 0, 270, 480], "zoom": 2}
                                                   for k in range(8)]


@pytest.fixture(scope="module")
def mcp_session(tmp_path_factory):
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    out = tmp_path_factory.mktemp("mcp")
    params = StdioServerParameters(command=sys.executable, env=dict(os.environ),
                                   args=["-m", "longpuzzle", "mcp", "--objective", OBJECTIVE, "--budget", "100000",
                                         "--out", str(out)])
    with anyio.from_thread.start_blocking_portal() as portal:
        client = portal.wrap_async_context_manager(Client(params, read_timeout_seconds=60))
        with client as c:
            async def calls(name, args, n):
                for _ in range(n):
                    r = await c.call_tool(name, args)
                    assert not r.is_error, r.content[0].text
                return r

            def call(name, args, n=ROUND):
                return portal.call(calls, name, args, n)
            call("play", {"action": {"type": "wait", "ms": 0}}, 1)
            for a in ENTRY:
                call("play", {"action": a}, 1)
            call("play", {"action": BOLT}, 20)          # turns for the inspect views
            yield call


@pytest.fixture(scope="module")
def controller(tmp_path_factory):
    from longpuzzle.agents.vista import Controller

    c = Controller("nut_and_bolt", "easy", setting="vista", settings=Settings(budget=100000),
                   folder=tmp_path_factory.mktemp("ctl"))
    for a in [{"type": "wait", "ms": 0}] + ENTRY + [BOLT] * 20:
        assert not c.call("play", {"action": a}).error
    yield c
    c.close()


def test_mcp_play_round_trip_stdio(benchmark, mcp_session):
    benchmark.extra_info["ops"] = ROUND
    r = benchmark(mcp_session, "play", {"action": BOLT})
    assert r.content[1].type == "image"


def test_mcp_inspect_16_views_stdio(benchmark, mcp_session):
    benchmark.extra_info["ops"] = ROUND
    r = benchmark(mcp_session, "inspect", {"views": VIEWS})
    assert len(r.content) == 17


def test_mcp_screenshot_round_trip_stdio(benchmark, mcp_session):
    benchmark.extra_info["ops"] = ROUND
    benchmark(mcp_session, "screenshot", {})


def _calls(c, name, args):
    for _ in range(ROUND):
        r = c.call(name, args)
        assert not r.error, r.text
    return r


def test_controller_play(benchmark, controller):
    benchmark.extra_info["ops"] = ROUND
    benchmark(_calls, controller, "play", {"action": BOLT})


def test_controller_inspect_16_views(benchmark, controller):
    benchmark.extra_info["ops"] = ROUND
    r = benchmark(_calls, controller, "inspect", {"views": VIEWS})
    assert len(r.images) == 16


def test_controller_inspect_16_views_uncached(benchmark, controller):
    """The same 16 views with no image made before (every crop zoomed and encoded)."""
    def cold():
        controller._pngs.clear()
        r = controller.call("inspect", {"views": VIEWS})
        assert len(r.images) == 16
    benchmark.extra_info["ops"] = 1
    benchmark(cold)
