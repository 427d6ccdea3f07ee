"""Steps per second: single steps through the Python API and batched env-steps, against
gymnasium's FrozenLake step loop measured side by side."""

import numpy as np
import pytest

from longpuzzle.engine.batch import VectorEnv
from longpuzzle.engine.catalog import load_level
from longpuzzle.engine.env import PuzzleEnv
from longpuzzle.engine.registry import get_puzzle

STEPS = 20_000
LEVELS = ["maze_paint/hard/10", "nut_and_bolt/hard/2"]


def test_reference_frozenlake(benchmark):
    gym = pytest.importorskip("gymnasium")
    env = gym.make("FrozenLake-v1", is_slippery=True)
    env.reset(seed=0)
    acts = np.random.default_rng(0).integers(0, 4, STEPS).tolist()

    def loop():
        for a in acts:
            _, _, term, trunc, _ = env.step(a)
            if term or trunc:
                env.reset()
    benchmark.group = "single"
    benchmark.extra_info.update(ops=STEPS, reference=True)
    benchmark(loop)


def _legalish_actions(level, n, seed):
    """Random actions biased to legal ones from the start state (so rules do real work)."""
    rng = np.random.default_rng(seed)
    return rng.integers(0, level.n_actions, n).tolist()


@pytest.mark.parametrize("lid", LEVELS)
@pytest.mark.parametrize("copy_obs", [True, False], ids=["copy", "nocopy"])
def test_env_step(benchmark, lid, copy_obs):
    env = PuzzleEnv(lid, copy_obs=copy_obs)
    acts = _legalish_actions(env.level, STEPS, 1)

    def loop():
        for a in acts:
            _, _, term, _, _ = env.step(a)
            if term:
                env.reset()
    benchmark.group = "single"
    benchmark.extra_info.update(ops=STEPS)
    benchmark(loop)


@pytest.mark.parametrize("lid", LEVELS)
def test_pure_apply(benchmark, lid):
    level = load_level(lid)
    p = get_puzzle(level.game)
    state = level.initial.copy()
    legal = p.legal_moves(level, state)

    def loop():
        for _ in range(STEPS // 10):
            p.step(level, state, legal[0])
    benchmark.group = "single"
    benchmark.extra_info.update(ops=STEPS // 10)
    benchmark(loop)


@pytest.mark.parametrize("lid", LEVELS)
@pytest.mark.parametrize("n", [1, 16, 256, 4096])
def test_vector_env_step(benchmark, lid, n):
    env = VectorEnv(lid, n)
    rounds = max(1, 65536 // n)
    acts = np.random.default_rng(2).integers(0, env.n_actions, (rounds, n))

    def loop():
        for i in range(rounds):
            env.step(acts[i])
    benchmark.group = "batched"
    benchmark.extra_info.update(ops=rounds * n)
    benchmark(loop)
