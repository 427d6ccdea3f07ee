"""Bolt Unscrew: frames per second of mid-game level screens (2d scale 1, 3d scale 2) and GUI
events interpreted per second (clicks: press + release = 2 events each).
See benchmarks/test_bench_render.py for the method and the targets."""

import json
from pathlib import Path

import numpy as np
import pytest

from longpuzzle.engine.suite import Suite
from longpuzzle.render.frame import Renderer

LEVEL = "bolt_unscrew/hard/6"          # 32 pieces, 16 anchors: the busiest board
SOLUTIONS = Path(__file__).resolve().parents[1] / "tests" / "data" / "bolt_unscrew_solutions.json"


def _mid_game_states(suite):
    """The states along the recorded solution (without the solved end)."""
    moves = json.loads(SOLUTIONS.read_text())[LEVEL.split("/", 1)[1]]["moves"]
    out = []
    for m in moves:
        suite.session.play(suite.puzzle.parse_move(suite.level, m))
        if suite.session.solved:
            break
        out.append(suite.session.state.copy())
    return out


@pytest.mark.parametrize("style, scale", [("2d", 1.0), ("3d", 2.0)], ids=["2d-x1", "3d-x2"])
def test_frames_per_second_bolt_unscrew(benchmark, style, scale):
    s = Suite(LEVEL, style=style, scale=scale)
    states = _mid_game_states(s)
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


def test_gui_events_bolt_unscrew(benchmark):
    s = Suite(LEVEL)
    u = s.game_ui()
    clicks = [{"type": "click", "x": round(x), "y": round(y)} for x, y in (s.proj.to_px(*p) for p in u.tap_points)]
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
