"""Truck Escape: frames per second of mid-game level screens (2d scale 1, 3d scale 2) and GUI
events interpreted per second (taps: press + release = 2 events each).
See benchmarks/test_bench_render.py for the method and the targets."""

import numpy as np
import pytest

from longpuzzle.engine.suite import Suite
from longpuzzle.render.frame import Renderer

LEVEL = "truck_escape/default/5"


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


@pytest.mark.parametrize("style, scale", [("2d", 1.0), ("3d", 2.0)], ids=["2d-x1", "3d-x2"])
def test_frames_per_second_truck_escape(benchmark, style, scale):
    s = Suite(LEVEL, style=style, scale=scale)
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


def test_gui_events_truck_escape(benchmark):
    s = Suite(LEVEL)
    u = s.game_ui()
    clicks = [s.gesture_for(i) for i in range(u.n)]
    rng = np.random.default_rng(1)
    seq = [clicks[int(i)] for i in rng.integers(0, u.n, 2000)]

    def loop():
        t = s.clone()
        for c in seq:
            t.dispatch(c)
            if t.complete:
                t.open_level(t.level.id)
    benchmark.group = "gui events"
    benchmark.extra_info.update(ops=2 * len(seq))
    benchmark(loop)
