"""Frames per second (mid-game level screens into numpy) and GUI events interpreted per second.

Targets (issue): >= 500 frames/s at scale 1 in 2d, >= 150 frames/s at scale 2 in 3d,
>= 100,000 GUI events/s (hit-test + input state machine + rules). A frame round renders a
cycle of DIFFERENT states met along a random play (static layers and per-piece patches are
cached, as in an agent episode); events are the low-level pointer events of the actions
(a click is 2, a swipe with 8 steps is 10)."""

import numpy as np
import pytest

from longpuzzle.engine.suite import Suite
from longpuzzle.render.frame import Renderer

FRAME_LEVELS = ["nut_and_bolt/hard/1", "maze_paint/hard/10"]


def _mid_game_states(suite, n, seed):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        legal = suite.session.legal_moves()
        if not legal:
            break
        suite.session.play(int(rng.choice(legal)))
        if suite.session.solved:
            break
        out.append(suite.session.state.copy())
    return out


@pytest.mark.parametrize("lid", FRAME_LEVELS)
@pytest.mark.parametrize("style, scale", [("2d", 1.0), ("3d", 2.0)], ids=["2d-x1", "3d-x2"])
def test_frames_per_second(benchmark, lid, style, scale):
    s = Suite(lid, style=style, scale=scale)
    states = _mid_game_states(s, 24, 5)
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


def test_gui_events_nut_and_bolt(benchmark):
    s = Suite("nut_and_bolt/hard/1")
    u = s.game_ui()
    pts = [s.proj.to_px(*u.tap_point(b)) for b in range(u.n)]
    clicks = [{"type": "click", "x": round(x), "y": round(y)} for x, y in pts]
    rng = np.random.default_rng(1)
    seq = [clicks[int(b)] for b in rng.integers(0, u.n, 2000)]

    def loop():
        t = s.clone()
        for c in seq:
            t.dispatch(c)
    benchmark.group = "gui events"
    benchmark.extra_info.update(ops=2 * len(seq))
    benchmark(loop)


def test_gui_events_maze_paint(benchmark):
    s = Suite("maze_paint/hard/10")
    swipes = [s.gesture_for(d) for d in range(4)]     # 8-step swipes from the start cell
    rng = np.random.default_rng(2)
    seq = [swipes[int(d)] for d in rng.integers(0, 4, 1000)]

    def loop():
        t = s.clone()
        for a in seq:
            t.dispatch(a)
            if t.complete:
                t.open_level(t.level.id)
    benchmark.group = "gui events"
    benchmark.extra_info.update(ops=10 * len(seq))
    benchmark(loop)
