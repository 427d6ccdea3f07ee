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

Each row named ``... baseline`` is the same workload with the baseline's code; the summary
prints the ratios of every pair."""

import shutil

import pytest

from longpuzzle.agents.builtin import SolverAgent
from longpuzzle.agents.harness import Settings, run_objective
from longpuzzle.engine.catalog import catalog
from longpuzzle.engine.suite import Suite

from baseline import Baseline


@pytest.fixture(scope="module")
def baseline():
    b = Baseline()
    yield b
    b.close()


@pytest.mark.parametrize("objective", ["maze_paint/hard", "nut_and_bolt/medium"])
@pytest.mark.parametrize("save_frames", [True, False], ids=["frames", "hashes"])
@pytest.mark.parametrize("code", ["new", "baseline"])
def test_objective_episode(benchmark, tmp_path, baseline, objective, save_frames, code):
    game, diff = objective.split("/")
    n = [0]
    if code == "new":
        st = Settings(action_timeout=None, save_frames=save_frames)
        warm = run_objective(SolverAgent(), game, diff, settings=st, folder=tmp_path / "warm")
        assert warm.outcome.success
        actions = warm.actions

        def episode():
            n[0] += 1
            res = run_objective(SolverAgent(), game, diff, settings=st, folder=tmp_path / f"ep{n[0]}")
            assert res.outcome.success
            shutil.rmtree(tmp_path / f"ep{n[0]}")
    else:
        warm = baseline(op="episode", objective=objective, save_frames=save_frames, folder=str(tmp_path / "warm"))
        assert warm["success"]
        actions = warm["actions"]

        def episode():
            n[0] += 1
            res = baseline(op="episode", objective=objective, save_frames=save_frames,
                           folder=str(tmp_path / f"ep{n[0]}"), remove=True)
            assert res["success"]
    benchmark.group = "eval"
    benchmark.extra_info.update(ops=actions, unit="GUI actions", pair=f"{objective} {'frames' if save_frames else 'hashes'}",
                                side=code)
    benchmark.pedantic(episode, rounds=5, iterations=1)


@pytest.mark.parametrize("code", ["new", "baseline"])
def test_level_screens(benchmark, baseline, code):
    import longpuzzle.render.frame as frame

    objective = "maze_paint/hard"
    levels = catalog().objective(objective).level_ids
    if code == "new":
        suites = [Suite(l) for l in levels]

        def build():
            frame._BASES.clear()                      # nothing drawn before: the game's base too
            for s in suites:
                frame.Renderer().render(s)
    else:
        def build():
            baseline(op="level_screens", objective=objective)
    build()
    benchmark.group = "level screens"
    benchmark.extra_info.update(ops=len(levels), unit="level screens", pair=objective, side=code)
    benchmark.pedantic(build, rounds=7, iterations=1)
