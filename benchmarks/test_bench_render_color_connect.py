"""Color Connect: frames per second of mid-game level screens (2d scale 1, 3d scale 2) and GUI
events interpreted per second (hit-test + click / drag state machine + rules).

A frame round renders a cycle of DIFFERENT states met while drawing the reference routes (some
pairs connected, an active path growing); caches are warmed once, as in an agent episode.
Events are the low-level pointer events of the actions (a click is 2, a drag with 8 steps 10)."""

import pytest

from longpuzzle.engine.suite import Suite
from longpuzzle.render.frame import Renderer

LID = "color_connect/hard/10"


def _mid_game_states(suite, n):
    """States along the reference solution, starting after its first half of routes."""
    s = suite.session
    routes = suite.level.extra["solution"]
    half = len(routes) // 2
    for r in routes[:half]:
        s.play(r)
    out = []
    for r in routes[half:]:
        for a in suite.puzzle.parse_move(suite.level, r):
            s.play(a)
            if s.solved or len(out) >= n:
                return out
            out.append(s.state.copy())
    return out


@pytest.mark.parametrize("style, scale", [("2d", 1.0), ("3d", 2.0)], ids=["2d-x1", "3d-x2"])
def test_frames_per_second_color_connect(benchmark, style, scale):
    s = Suite(LID, style=style, scale=scale)
    states = _mid_game_states(s, 24)
    r = Renderer(style, scale)
    for st in states:                                   # warm the caches once
        s.session._state = st
        r.render(s)

    def loop():
        for st in states:
            s.session._state = st
            r.render(s)
    benchmark.group = "frames"
    benchmark.extra_info.update(ops=len(states))
    benchmark(loop)


def test_gui_events_color_connect(benchmark):
    """Whole reference routes as clicks, plus one discarded drag per route."""
    s = Suite(LID)
    u = s.game_ui()
    acts = []
    events = 0
    for route in s.level.extra["solution"]:
        g = u.route_gesture(route, s.proj)
        acts.append(g)
        events += 2 * len(g["actions"])
    seq = []
    for g in acts:          # a drag from the route's first cell to its next corner, released: discarded
        (x0, y0), (x1, y1) = ((a["x"], a["y"]) for a in g["actions"][:2])
        seq += [{"type": "drag", "x0": x0, "y0": y0, "x1": x1, "y1": y1, "steps": 8, "ms": 200}, g]
        events += 10

    def loop():
        t = s.clone()
        for a in seq:
            t.dispatch(a)
        assert t.complete
    benchmark.group = "gui events"
    benchmark.extra_info.update(ops=events)
    benchmark(loop)
