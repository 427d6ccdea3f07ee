"""Rush Hour: frames per second of mid-game level screens (2d scale 1, 3d scale 2) and GUI
events interpreted per second (drags: press, 8 moves, release = 10 events each).
See benchmarks/test_bench_render.py for the method and the targets."""

import numpy as np
import pytest

from longpuzzle.engine.suite import Suite
from longpuzzle.render.frame import Renderer

LEVEL = "rush_hour/hard/5"


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
def test_frames_per_second_rush_hour(benchmark, style, scale):
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


def test_gui_events_rush_hour(benchmark):
    s = Suite(LEVEL)
    drags = [s.gesture_for(m) for m in s.session.legal_moves()]
    rng = np.random.default_rng(2)
    seq = [drags[int(i)] for i in rng.integers(0, len(drags), 500)]

    def loop():
        t = s.clone()
        for a in seq:
            t.dispatch(a)
            if t.complete:
                t.open_level(t.level.id)
    benchmark.group = "gui events"
    benchmark.extra_info.update(ops=10 * len(seq))
    benchmark(loop)
