"""The Gymnasium-style single env: same transitions as the rules, potential-based rewards,
observations that later steps never change."""

import numpy as np
import pytest

from longpuzzle.engine.catalog import load_level
from longpuzzle.engine.env import PuzzleEnv
from longpuzzle.engine.registry import get_puzzle
from longpuzzle.agents.testing import random_walk, sample_levels
from longpuzzle.engine.catalog import builtin_catalog

CASES = [lid for g in builtin_catalog().games() for lid in sample_levels(g, 2)]


@pytest.mark.parametrize("lid", CASES)
@pytest.mark.parametrize("copy_obs", [True, False])
def test_env_follows_the_rules(lid, copy_obs):
    lvl = load_level(lid)
    p = get_puzzle(lvl.game)
    env = PuzzleEnv(lid, copy_obs=copy_obs, max_steps=25)
    obs, info = env.reset()
    assert np.array_equal(obs, lvl.initial) and info["P"] == p.progress(lvl, lvl.initial)
    state = lvl.initial.copy()
    kept, total = [], 0.0
    for t, a in enumerate(random_walk(lvl, 25, seed=3)):
        obs, r, term, trunc, info = env.step(a)
        nxt, code = p.step(lvl, state, a)
        state = nxt if code <= 1 else state
        assert info["code"] == code and np.array_equal(obs, state)
        assert term == p.is_solved(lvl, state) and info["P"] == p.progress(lvl, state)
        assert trunc == (t + 1 >= 25)
        total += r
        kept.append((obs, obs.copy()))
        if term:
            break
    assert total == pytest.approx(p.progress(lvl, state) - p.progress(lvl, lvl.initial))
    if copy_obs:      # observations handed out are never written by later steps
        assert all(np.array_equal(o, c) for o, c in kept)


def test_bad_action_is_refused():
    env = PuzzleEnv("maze_paint/easy/1")
    with pytest.raises(ValueError, match="out of range"):
        env.step(4)
