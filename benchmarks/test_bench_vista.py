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
              made before (Controller.forget_images first: no PNG, no compressed band;
              the 16 views show 4 distinct pictures, frames repeat); ``distinct``: 16
              views of 16 different frames (Maze Paint's solver turns), nothing made before
              (the bands of rows those frames share are compressed once within the call)
mcp new views ``inspect`` through MCP of 16 views never asked for before (16 different
              frames; each call's boxes new): no image of them exists yet (bands of rows
              compressed by earlier calls are used again where the same pixels recur)

Beside the baseline: the uncached and new-view cases run with IMAGES_BASELINE's code too
(baseline.py: a worker process, an MCP server of that code), rounds alternating; the
summary prints the pairs' ratios.

The server runs in a subprocess; the client in a thread with its own event loop (anyio's
blocking portal). A round is ROUND calls made one after the other inside that loop (the
summary's throughput is per call; a round's time / ROUND is one call's round trip).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import sys

import anyio.from_thread
import pytest

from longpuzzle.agents.harness import Settings
from longpuzzle.engine.suite import Suite

from baseline import IMAGES_BASELINE, Baseline, env_for, side_by_side, tree

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
WAIT = {"type": "wait", "ms": 0}
TURNS = [WAIT] + ENTRY + [BOLT] * 20                   # a bolt selected and put back: 2 pictures alternate
VIEWS = [{"turn": -(k + 1)} for k in range(8)] + [{"turn": -(k + 9), "box": [0, 0, 270, 480], "zoom": 2}
                                                   for k in range(8)]
DISTINCT = "maze_paint/easy"                           # the solver's first 24 moves: 16 different last frames
CROP = [135, 240, 405, 720]                            # the board: different in each of those turns
DISTINCT_VIEWS = [{"turn": -(k + 1)} for k in range(8)] + [{"turn": -(k + 9), "box": CROP, "zoom": 2}
                                                           for k in range(8)]
_distinct = []


def distinct_turns() -> list:
    if not _distinct:
        from longpuzzle.agents.testing.endpoints import solver_gestures
        _distinct.extend([WAIT] + solver_gestures(DISTINCT)[:24])
    return _distinct


def new_views(k: int) -> list:
    """16 views of the 16 different frames that no call asked for before (call k's boxes)."""
    j = k % 400
    return ([{"turn": -(i + 1), "box": [0, 0, 540, 959 - j]} for i in range(8)]
            + [{"turn": -(i + 9), "box": [135, 80 + j, 405, 560 + j], "zoom": 2} for i in range(8)])


# today's server: no pause until a checkpoint (the rounds send far more than a context holds)
TODAY = ("--checkpoint-tokens", "0")


@contextlib.contextmanager
def _mcp(out, objective, turns, env, extra=()):
    """An MCP stdio session with ``longpuzzle mcp`` (the code that ``env`` imports, with the
    options ``extra``) after ``turns`` plays: yields call(name, args, n=ROUND) -> the last
    result."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(command=sys.executable, env=env,
                                   args=["-m", "longpuzzle", "mcp", "--objective", objective, "--budget", "100000",
                                         "--out", str(out), *extra])
    with anyio.from_thread.start_blocking_portal() as portal:
        client = portal.wrap_async_context_manager(Client(params, read_timeout_seconds=60))
        with client as c:
            async def calls(name, args, n):
                for _ in range(n):
                    a = args() if callable(args) else args
                    r = await c.call_tool(name, a)
                    assert not r.is_error, r.content[0].text
                return r

            def call(name, args, n=ROUND):
                return portal.call(calls, name, args, n)
            for a in turns:
                call("play", {"action": a}, 1)
            yield call


@pytest.fixture(scope="module")
def mcp_session(tmp_path_factory):
    with _mcp(tmp_path_factory.mktemp("mcp"), OBJECTIVE, TURNS, dict(os.environ), TODAY) as call:
        yield call


@pytest.fixture(scope="module")
def images_baseline():
    b = Baseline(IMAGES_BASELINE)
    yield b
    b.close()


def _controller(folder, objective, turns):
    from longpuzzle.agents.vista import Controller

    game, diff = objective.split("/")
    c = Controller(game, diff, setting="vista", settings=Settings(budget=100000), folder=folder)
    for a in turns:
        assert not c.call("play", {"action": a}).error
    return c


@pytest.fixture(scope="module")
def controller(tmp_path_factory):
    c = _controller(tmp_path_factory.mktemp("ctl"), OBJECTIVE, TURNS)
    yield c
    c.close()


@pytest.fixture(scope="module")
def repeating_controller(tmp_path_factory):
    c = _controller(tmp_path_factory.mktemp("ctl"), OBJECTIVE, TURNS)
    yield c
    c.close()


@pytest.fixture(scope="module")
def distinct_controller(tmp_path_factory):
    c = _controller(tmp_path_factory.mktemp("ctl"), DISTINCT, distinct_turns())
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


def _uncached(benchmark, c, baseline, name, objective, turns, views, tmp):
    """inspect of ``views`` with nothing made before, today's code beside the baseline's."""
    assert baseline(op="vista", name=name, objective=objective, actions=turns, folder=str(tmp))["turns"] == c.turn

    def new():
        c.forget_images()
        r = c.call("inspect", {"views": views})
        assert len(r.images) == 16 and not r.error

    def old():
        r = baseline(op="inspect", name=name, views=views, clear=True)
        assert r["images"] == 16, r
        return r
    new()
    old()
    benchmark.group = "vista"
    side_by_side(benchmark, new, old, 30, 1, 1, unit="inspect calls of 16 views", pair=f"inspect uncached {name}")


def test_controller_inspect_16_views_uncached(benchmark, repeating_controller, images_baseline, tmp_path):
    """The 16 views above with no image made before (they show 4 distinct pictures)."""
    _uncached(benchmark, repeating_controller, images_baseline, "repeating", OBJECTIVE, TURNS, VIEWS, tmp_path)


def test_controller_inspect_16_distinct_views_uncached(benchmark, distinct_controller, images_baseline, tmp_path):
    """16 views of 16 different frames, no image made before: every one cropped, zoomed,
    encoded and hashed."""
    _uncached(benchmark, distinct_controller, images_baseline, "distinct", DISTINCT, distinct_turns(), DISTINCT_VIEWS,
              tmp_path)


def test_mcp_inspect_16_new_views_stdio(benchmark, tmp_path):
    """inspect through MCP of 16 views no call asked for before, today's server beside the
    baseline's (each ROUND calls)."""
    old_env = env_for(tree(IMAGES_BASELINE))
    k_new, k_old = itertools.count(), itertools.count()
    with _mcp(tmp_path / "new", DISTINCT, distinct_turns(), dict(os.environ), TODAY) as new_call, \
            _mcp(tmp_path / "old", DISTINCT, distinct_turns(), old_env) as old_call:
        def new():
            r = new_call("inspect", lambda: {"views": new_views(next(k_new))})
            assert len(r.content) == 17

        def old():
            old_call("inspect", lambda: {"views": new_views(next(k_old))})
        new()
        old()
        benchmark.group = "vista"
        side_by_side(benchmark, new, old, 8, ROUND, ROUND, unit="inspect calls of 16 new views (MCP)",
                     pair="mcp inspect new views")
