"""Steps per second: single steps through the raw compiled core (engine/env.py), through the
Gymnasium env made by gymnasium.make (agents/envs/rules.py under TimeLimit, OrderEnforcing and
PassiveEnvChecker, as FrozenLake gets them) and the pure Python API, and batched env-steps of
the compiled vector env, against gymnasium's FrozenLake step loop measured side by side."""

import gymnasium as gym
import numpy as np
import pytest

import longpuzzle.agents.envs  # noqa: F401  (registers the ids)
from longpuzzle.engine.catalog import load_level
from longpuzzle.engine.env import PuzzleEnv
from longpuzzle.engine.registry import get_puzzle
from longpuzzle.agents.envs import env_id

STEPS = 20_000
LEVELS = ["maze_paint/hard/10", "nut_and_bolt/hard/2"]


def test_reference_frozenlake(benchmark):
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
@pytest.mark.parametrize("variant", ["copy", "nocopy", "mask"])
def test_env_step(benchmark, lid, variant):
    """The raw core: observations copied out, or its own buffer, or copied out with the
    legal-action mask of every new state (what the Gymnasium env computes)."""
    env = PuzzleEnv(lid, copy_obs=variant != "nocopy", action_mask=variant == "mask")
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
@pytest.mark.parametrize("wrapped", [True, False], ids=["make", "unwrapped"])
def test_gymnasium_env_step(benchmark, lid, wrapped):
    """The same loop through the Gymnasium env (action mask, info dict): as gymnasium.make
    returns it (under TimeLimit, OrderEnforcing, PassiveEnvChecker, as FrozenLake is), and
    its unwrapped RulesEnv."""
    env = gym.make(env_id(lid.split("/")[0]), level=lid, max_episode_steps=10**9)
    if not wrapped:
        env = env.unwrapped
    env.reset(seed=0)
    acts = _legalish_actions(env.unwrapped.level, STEPS, 1)

    def loop():
        for a in acts:
            _, _, term, trunc, _ = env.step(a)
            if term or trunc:
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
@pytest.mark.parametrize("mask", [True, False], ids=["mask", "nomask"])
def test_vector_env_step(benchmark, lid, n, mask):
    if not mask and n not in (256, 4096):
        pytest.skip("masks off only at large N")
    env = gym.make_vec(env_id(lid.split("/")[0]), n, level=lid, action_mask=mask, max_episode_steps=200)
    env.reset(seed=0)
    rounds = max(1, 65536 // n)
    acts = np.random.default_rng(2).integers(0, env.single_action_space.n, (rounds, n))

    def loop():
        for i in range(rounds):
            env.step(acts[i])
    benchmark.group = "batched"
    benchmark.extra_info.update(ops=rounds * n)
    benchmark(loop)
