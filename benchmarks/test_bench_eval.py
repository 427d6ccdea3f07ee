"""The pixel path end to end, side by side with the code before it was rebuilt (baseline.py).

eval       a full objective with the solver agent (what `longpuzzle eval --agent solver
           --objective G/D` runs per episode), every frame rendered at scale 1, and either
           stored losslessly ("frames") or only hashed ("hashes"): GUI actions per second.
           Targets (issue 16): maze_paint/hard >= 1,000 /s with frames, >= 2,000 /s hashes.
           A warm-up episode first (solver plans cached, kernels compiled, level screens
           built), as in a long eval; the level screens are timed apart below.
level      the first frame of each of the ten levels of maze_paint/hard on a renderer that
screens    has never drawn it (module caches cleared each round): what building a level's
           screen costs when an eval reaches it. Target: <= 5 ms a level screen.

Each round of today's code follows one of the baseline's code on the same workload (timed in
the round's set-up), so both sample the same load; the summary prints the pairs' ratios."""

import shutil

import pytest

from longpuzzle.agents.scripted import SolverAgent
from longpuzzle.agents.harness import Settings, run_objective
from longpuzzle.engine.catalog import builtin_catalog
from longpuzzle.engine.suite import Suite

from baseline import Baseline
from baseline import side_by_side as _side_by_side


@pytest.fixture(scope="module")
def baseline():
    b = Baseline()
    yield b
    b.close()


@pytest.mark.parametrize("objective", ["maze_paint/hard", "nut_and_bolt/medium"])
@pytest.mark.parametrize("save_frames", [True, False], ids=["frames", "hashes"])
def test_objective_episode(benchmark, tmp_path, baseline, objective, save_frames):
    game, diff = objective.split("/")
    st = Settings(action_timeout=None, save_frames=save_frames)
    warm = run_objective(SolverAgent(), game, diff, settings=st, folder=tmp_path / "warm")
    old_warm = baseline(op="episode", objective=objective, save_frames=save_frames, folder=str(tmp_path / "owarm"))
    assert warm.outcome.success and old_warm["success"]
    n = [0]

    def new():
        n[0] += 1
        res = run_objective(SolverAgent(), game, diff, settings=st, folder=tmp_path / f"ep{n[0]}")
        assert res.outcome.success
        shutil.rmtree(tmp_path / f"ep{n[0]}")

    def old():
        res = baseline(op="episode", objective=objective, save_frames=save_frames, folder=str(tmp_path / "old"),
                       remove=True)
        assert res["success"]
        return res
    benchmark.group = "eval"
    _side_by_side(benchmark, new, old, 7, warm.actions, old_warm["actions"], unit="GUI actions",
                  pair=f"{objective} {'frames' if save_frames else 'hashes'}")


def test_level_screens(benchmark, baseline):
    from longpuzzle.render.frame import Renderer, layers

    objective = "maze_paint/hard"
    levels = builtin_catalog().objective(objective).level_ids
    suites = [Suite(lid) for lid in levels]

    def new():
        layers._BASES.clear()                          # nothing drawn before: the game's base too
        for s in suites:
            Renderer().render(s)

    def old():
        return baseline(op="level_screens", objective=objective)
    new()
    old()
    benchmark.group = "level screens"
    _side_by_side(benchmark, new, old, 9, len(levels), len(levels), unit="level screens", pair=objective)
