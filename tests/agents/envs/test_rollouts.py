"""Batched rollouts (PuzzleVectorEnv.rollout, agents/envs/rollout.py): T steps in one compiled call
equal the same T steps taken one call of ``step`` at a time, for every game."""

import gymnasium as gym
import numpy as np
import pytest

import longpuzzle.agents.envs as lpe
from longpuzzle.engine.catalog import load_level
from longpuzzle.engine.registry import get_puzzle, puzzle_ids
from longpuzzle.agents.envs import ExpertTable, env_id

GAMES = puzzle_ids()
FIRST = {"truck_escape": "truck_escape/default"}       # the game's objective of small levels


def _pair(game, n=5, **kw):
    kw.setdefault("level", FIRST.get(game, f"{game}/easy"))              # several levels: autoreset draws them
    kw.setdefault("max_episode_steps", 7)               # short episodes: many resets
    return [gym.make_vec(env_id(game), n, **kw).unwrapped for _ in range(2)]


def _step_along(env, r, first_obs=None):
    """Step ``env`` one call at a time with the rollout's actions; check every step is the
    rollout's, bit for bit."""
    for s in range(r.actions.shape[1]):
        obs, rew, term, trunc, info = env.step(r.actions[:, s])
        assert np.array_equal(obs, r.observations[:, s]), s
        assert np.array_equal(rew, r.rewards[:, s]) and rew.dtype == r.rewards.dtype, s
        assert np.array_equal(term, r.terminated[:, s]) and np.array_equal(trunc, r.truncated[:, s]), s
        assert np.array_equal(info["code"], r.codes[:, s]), s
        assert np.array_equal(info["level_index"], r.level_index[:, s]), s


def _same_inside(a, b):
    """Both envs in the same state: rows, masks, P, step counters, pending resets."""
    assert np.array_equal(a._states, b._states) and np.array_equal(a._masks, b._masks)
    assert np.array_equal(a._prog, b._prog) and np.array_equal(a._t, b._t)
    assert np.array_equal(a._ended, b._ended) and np.array_equal(a._level_of, b._level_of)


@pytest.mark.parametrize("game", GAMES)
def test_rollout_equals_the_same_steps_one_call_at_a_time(game):
    a, b = _pair(game)
    assert np.array_equal(a.reset(seed=3)[0], b.reset(seed=3)[0])
    r = a.rollout(40, seed=9)                          # random legal moves
    assert r.observations.shape == (5, 40, a.layout.length) and r.actions.shape == (5, 40)
    assert (r.codes == -1).sum() >= 5 and r.truncated.sum() >= 5     # episodes ended and restarted
    assert len(np.unique(r.level_index)) > 1                         # and drew other levels
    legal = r.codes[r.codes >= 0]
    assert (legal == 0).mean() > 0.9                   # the random policy plays legal moves
    _step_along(b, r)
    _same_inside(a, b)
    # given actions (any, legal or not), continuing from there, and the compact form
    acts = np.random.default_rng(1).integers(0, a.layout.n_actions, (5, 30))
    r2 = a.rollout(30, acts)
    assert np.array_equal(r2.actions[r2.codes >= 0], acts[r2.codes >= 0])
    _step_along(b, r2)
    _same_inside(a, b)
    r3 = a.rollout(12, acts[:, :12], observations=False)
    assert r3.observations is None
    for s in range(12):
        _, rew, term, trunc, info = b.step(acts[:, s])
        assert np.array_equal(rew, r3.rewards[:, s]) and np.array_equal(info["code"], r3.codes[:, s])
        assert np.array_equal(term, r3.terminated[:, s]) and np.array_equal(trunc, r3.truncated[:, s])
    _same_inside(a, b)


@pytest.mark.parametrize("kw", [
    {"action_mask": False, "reward": "sparse", "order": "cycle"},
    {"level": "maze_paint/easy/1", "max_episode_steps": None},
], ids=["no-mask-sparse-cycle", "one-level-no-limit"])
def test_rollout_equals_steps_in_other_configurations(kw):
    a, b = _pair("maze_paint", **kw)
    a.reset(seed=0), b.reset(seed=0)
    r = a.rollout(25, seed=2)
    _step_along(b, r)
    _same_inside(a, b)


def test_random_rollouts_are_seeded_and_reproducible():
    a, b = _pair("rush_hour", 6)
    a.reset(seed=1), b.reset(seed=1)
    ra, rb = a.rollout(20, seed=4), b.rollout(20, seed=4)
    for x, y in zip((ra.observations, ra.actions, ra.rewards, ra.codes), (rb.observations, rb.actions, rb.rewards, rb.codes)):
        assert np.array_equal(x, y)
    # the stream goes on from one rollout to the next: 8 + 12 steps are the same 20 steps
    a.reset(seed=1)
    first, second = a.rollout(8, seed=4), a.rollout(12)
    assert np.array_equal(np.concatenate([first.actions, second.actions], 1), ra.actions)
    assert np.array_equal(np.concatenate([first.observations, second.observations], 1), ra.observations)
    # reset's seed seeds it too; another seed plays other moves; each env has its own stream
    a.reset(seed=1), b.reset(seed=1)
    assert np.array_equal(a.rollout(20).actions, b.rollout(20).actions)
    a.reset(seed=1)
    other = a.rollout(20, seed=5)
    assert not np.array_equal(other.actions, ra.actions)
    assert len({tuple(row) for row in ra.actions}) == 6


def test_given_actions_reproduce_a_rollout():
    a, b = _pair("nut_and_bolt", 4)
    a.reset(seed=2), b.reset(seed=2)
    r = a.rollout(30, seed=7)
    again = b.rollout(30, r.actions)
    for f in ("observations", "actions", "rewards", "terminated", "truncated", "codes", "level_index"):
        assert np.array_equal(getattr(r, f), getattr(again, f)), f
    # written into an earlier rollout's arrays (out=): the same as fresh ones
    a.reset(seed=2), b.reset(seed=2)
    fresh = a.rollout(30, seed=8)
    reused = b.rollout(30, seed=8, out=again)
    assert reused is again and reused.observations is again.observations
    for f in ("observations", "actions", "rewards", "terminated", "truncated", "codes", "level_index"):
        assert np.array_equal(getattr(fresh, f), getattr(reused, f)), f
    with pytest.raises(ValueError, match=r"out\.actions must be a contiguous int64 array of shape \(4, 29\)"):
        b.rollout(29, out=again)


@pytest.mark.parametrize("game", GAMES)
def test_an_expert_table_plays_its_moves_and_solves(game):
    """A table of (state, best move) along a shortest solution: the rollout plays exactly
    that solution from the start, terminates on solving, and equals stepping it."""
    from longpuzzle.solvers import solve
    lid = FIRST.get(game, f"{game}/easy") + "/1"
    level = load_level(lid)
    sol = [int(x) for x in solve(level).actions]
    p = get_puzzle(game)
    states, s = [], level.initial.copy()
    for x in sol:
        states.append(s.copy())
        s, code = p.step(level, s, x)
        assert code == 0
    table = ExpertTable({lid: (np.array(states), np.array(sol))})
    a, b = _pair(game, 3, level=lid, max_episode_steps=None)
    a.reset(seed=0), b.reset(seed=0)
    T = len(sol) + 3
    r = a.rollout(T, table)
    laid = table.arrays(a.levels, a.layout.length, a.layout.dtype)
    assert laid[0] is table.arrays(a.levels, a.layout.length, a.layout.dtype)[0]    # sorted once
    assert (r.actions[:, :len(sol)] == sol).all()
    assert r.terminated[:, len(sol) - 1].all() and not r.terminated[:, :len(sol) - 1].any()
    assert (r.codes[:, len(sol)] == -1).all()          # then the next episode starts
    assert np.allclose(r.rewards[:, :len(sol)].sum(1), 1.0 - p.progress(level, level.initial))
    _step_along(b, r)
    _same_inside(a, b)


@pytest.mark.parametrize("game", GAMES)
def test_the_oracles_table_plays_shortest_solutions_from_any_state(game):
    """ExpertTable.from_oracle: from the start, and from the states random moves lead to,
    the rollout solves in exactly the oracle's d(s) moves (or, from a dead end, plays on)."""
    from longpuzzle.solvers.oracle import Oracle
    lid = FIRST.get(game, f"{game}/easy") + "/1"
    # a budget that keeps the test quick (Color Connect's easy/1 has 217,628 states: left out)
    table = ExpertTable.from_oracle(lid, graph_budget=None if game == "bolt_unscrew" else 50_000)
    if table.skipped:
        assert table.skipped == [lid] and not table.moves and game == "color_connect"
        a = gym.make_vec(env_id(game), 2, level=lid).unwrapped
        a.reset(seed=0)
        assert (a.rollout(5, table).codes >= 0).all()      # random legal moves there
        pytest.skip(f"{lid}: its state graph is larger than the test's budget")
    states, acts = table.moves[lid]
    assert len(states) == len(np.unique(states, axis=0)) and len(states) == len(acts)
    o = Oracle(lid)
    a, b = _pair(game, 6, level=lid, max_episode_steps=None)
    a.reset(seed=1), b.reset(seed=1)
    d0 = o.at(load_level(lid).initial).distance
    random = a.rollout(3, seed=5)
    b.rollout(3, random.actions)
    L = load_level(lid).initial.shape[0]
    # an env whose episode ended (random moves solved it) first resets: one step, the start
    starts = [(load_level(lid).initial, 1) if a._ended[i] else (a._states[i, :L].copy(), 0) for i in range(6)]
    r = a.rollout(d0 + 40, table)
    for i, (s0, reset) in enumerate(starts):
        ans = o.at(s0)
        if ans.dead_end:
            assert not r.terminated[i].any()
        else:
            first = int(np.flatnonzero(r.terminated[i])[0])
            assert first + 1 == reset + ans.distance, (i, first, ans)
    _step_along(b, r)


def test_rollout_refuses_bad_input():
    env = gym.make_vec(env_id("maze_paint"), 3, level="maze_paint/easy/1").unwrapped
    env.reset(seed=0)
    with pytest.raises(ValueError, match="shape"):
        env.rollout(4, np.zeros((3, 5), np.int64))
    with pytest.raises(ValueError, match="must be in"):
        env.rollout(4, np.full((3, 4), 9))
    with pytest.raises(ValueError, match="integers"):
        env.rollout(4, np.zeros((3, 4)))
    with pytest.raises(ValueError, match="policy must be"):
        env.rollout(4, "greedy")
    with pytest.raises(ValueError, match="n_steps"):
        env.rollout(0)
    with pytest.raises(ValueError, match="two different actions"):
        lvl = load_level("maze_paint/easy/1")
        env.rollout(4, ExpertTable({lvl: (np.stack([lvl.initial, lvl.initial]), [0, 1])}))
    same = lpe.PuzzleVectorEnv(2, "maze_paint/easy/1", autoreset_mode="same_step")
    with pytest.raises(ValueError, match="NEXT_STEP"):
        same.rollout(4)
