"""A full objective with the solver agent, rendering every frame at scale 1 and writing
every frame as PNG (Maze Paint hard, ten levels): actions per second and frames per second."""

import pytest

from longpuzzle.agents.builtin import SolverAgent
from longpuzzle.agents.harness import Settings, run_objective


@pytest.mark.parametrize("objective", ["maze_paint/hard", "nut_and_bolt/medium"])
@pytest.mark.parametrize("save_frames", [True, False], ids=["png", "hashes"])
def test_objective_episode(benchmark, tmp_path, objective, save_frames):
    game, diff = objective.split("/")
    st = Settings(action_timeout=None, save_frames=save_frames)
    r = run_objective(SolverAgent(), game, diff, settings=st, folder=tmp_path / "warm")   # plans cached, kernels warm
    assert r.outcome.success
    n = [0]

    def episode():
        n[0] += 1
        res = run_objective(SolverAgent(), game, diff, settings=st, folder=tmp_path / f"ep{n[0]}")
        assert res.outcome.success
    benchmark.group = "eval"
    benchmark.extra_info.update(ops=r.actions, unit="actions (= frames)")
    benchmark.pedantic(episode, rounds=3, iterations=1)
