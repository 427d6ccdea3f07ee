"""Pixel envs stepped in turn (as a ``sync`` vector env steps them) on the shared renderer of
their style and scale, side by side with the code before (baseline.py's PIXEL_ENVS_BASELINE,
in a worker process; rounds alternate so both see the same load).

lockstep    4 PixelEnvs (two on one level, the others on the objective's next two), each
            stepped in turn with a random legal move through its gesture (reset when its
            level is won): every step renders, hashes and checks the frame. ops = env steps.
            Before, each frame's delta was relative to the frame another env had drawn just
            before, so every frame was hashed in full; now each env's is relative to its own
            frame before (Renderer.render_delta's ``since``).
"""

from __future__ import annotations

import random

import pytest

import longpuzzle.agents.envs as lpe
from longpuzzle.engine.catalog import builtin_catalog

from baseline import PIXEL_ENVS_BASELINE, Baseline, side_by_side

ENVS, ROUNDS = 4, 40


@pytest.fixture(scope="module")
def baseline():
    b = Baseline(PIXEL_ENVS_BASELINE)
    yield b
    b.close()


def _lockstep(game: str) -> int:
    """The workload (the same as the baseline worker's "pixel_lockstep"); env steps."""
    lids = builtin_catalog().level_ids(game)
    envs = [lpe.PixelEnv(lids[i % 3], scale=1.0) for i in range(ENVS)]
    for e in envs:
        e.reset(seed=0)
    rng, steps = random.Random(1), 0
    for _ in range(ROUNDS):
        for e in envs:
            if e.suite.complete:
                e.reset(seed=0)
                continue
            e.step(e.suite.gesture_for(int(rng.choice(list(e.suite.session.legal_moves())))))
            steps += 1
    return steps


@pytest.mark.parametrize("game", ["maze_paint", "bolt_unscrew", "rush_hour"])
def test_lockstep(benchmark, baseline, game):
    req = {"op": "pixel_lockstep", "game": game, "envs": ENVS, "rounds": ROUNDS}
    ops = _lockstep(game)                              # warm both sides
    old_ops = baseline(**req)["steps"]
    benchmark.group = "pixel envs"
    side_by_side(benchmark, lambda: _lockstep(game), lambda: baseline(**req), 9, ops, old_ops,
                 unit="env steps", pair=benchmark.name.replace("test_", ""))
