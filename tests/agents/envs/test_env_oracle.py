"""The oracle in the Gymnasium envs (agents/envs/oracle_signal.py, issue 38): info["oracle"]
against the solvers' optimum, reward="oracle" summing as its formula says along a solver's
trajectory with a detour and past a fatal move, Gymnasium's checker, and the compiled vector
env equal to Gymnasium's SyncVectorEnv of rules envs step for step."""

import gc
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env, data_equivalence
from gymnasium.vector import AutoresetMode

import longpuzzle.agents.envs  # noqa: F401 - registers the ids
from longpuzzle.agents.envs import env_id
from longpuzzle.engine.catalog import load_level
from longpuzzle.solvers.core import solve
from longpuzzle.solvers.oracle import Oracle

ALLOWED = ("symmetric and normalized space",)


def _checked(env):
    # objects an EARLIER test left for the garbage collector (a socket of a test server, seen
    # once in a whole-suite run: "unclosed <socket ...>") are collected first, so that only
    # the env's own warnings are recorded below
    gc.collect()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env.unwrapped)
    bad = [str(w.message) for w in caught if not any(a in str(w.message) for a in ALLOWED)
           and not (w.category is ResourceWarning and str(w.message).startswith("unclosed <socket"))]
    assert not bad, bad


@pytest.mark.parametrize("mode", ["rules", "pixels"])
def test_check_env_with_the_oracle(mode):
    _checked(gym.make(env_id("rush_hour"), mode=mode, level="rush_hour/easy/2", reward="oracle", oracle=True,
                      **({"scale": 0.5} if mode == "pixels" else {})))


@pytest.mark.parametrize("mode", ["rules", "pixels"])
@pytest.mark.parametrize("lid", ["rush_hour/easy/2", "nut_and_bolt/easy/3", "maze_paint/medium/9"])
def test_info_oracle_at_the_start_is_the_solvers_optimum(lid, mode):
    level = load_level(lid)
    r = solve(level)
    assert r.status == "solvable" and r.optimal
    env = gym.make(env_id(level.game), mode=mode, level=lid, oracle=True)
    _, info = env.reset(seed=0)
    o = info["oracle"]
    assert o["d"] == o["lower"] == o["upper"] == r.length and o["exact"] and not o["dead_end"]
    # the best moves are those whose successor is one move nearer (and the solver's first move is one)
    best = set(np.flatnonzero(o["best"]).tolist())
    assert r.actions[0] in best
    orc = Oracle(level)
    assert best == {m.action for m in orc.moves() if m.cost == 0}


def test_the_oracle_reward_sums_as_its_formula_along_a_solver_trajectory_with_a_detour():
    """return = 1 - (moves - d(s0) + d(s_end)) / d(s0): a detour of k moves costs k / d(s0),
    a rejected action nothing; the optimal solution alone returns exactly 1."""
    lid = "rush_hour/easy/2"
    level = load_level(lid)
    d0 = solve(level).length
    orc = Oracle(level)
    env = gym.make(env_id("rush_hour"), level=lid, reward="oracle", oracle=True)
    _, info = env.reset(seed=0)
    total, moves, detours = 0.0, 0, 0
    for t in range(40):
        s = env.unwrapped.state
        ms = orc.moves(s)
        if t == 1:                                   # a detour: the dearest non-fatal move
            m = max((m for m in ms if not m.fatal), key=lambda m: m.cost)
            assert m.cost > 0
            detours += m.cost
        elif t == 2:                                 # a rejected action: the state stays, reward 0
            bad = int(np.flatnonzero(info["action_mask"] == 0)[0])
            _, r, term, _, info = env.step(bad)
            assert r == 0.0 and info["code"] >= 2 and not term
            continue
        else:
            m = ms[0]
            assert m.cost == 0 and info["oracle"]["best"][m.action] == 1
        _, r, term, _, info = env.step(m.action)
        moves += 1
        assert r == pytest.approx(-m.cost / d0 + (1.0 if term else 0.0))
        total += r
        if term:
            break
    assert term and info["oracle"]["d"] == 0 and moves == d0 + detours
    assert total == pytest.approx(1 - (moves - d0) / d0)
    # the optimal solution returns exactly 1
    env.reset(seed=0)
    total = sum(env.step(a)[1] for a in solve(level).actions)
    assert total == pytest.approx(1.0)


def test_a_fatal_move_costs_one_and_moves_on_a_lost_board_nothing():
    lid = "nut_and_bolt/medium/3"
    level = load_level(lid)
    orc = Oracle(level)
    env = gym.make(env_id("nut_and_bolt"), level=lid, reward="oracle", oracle=True)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    fatal = None
    for _ in range(60):                              # random safe moves until a fatal one is on offer
        ms = orc.moves(env.unwrapped.state)
        fatal = next((m for m in ms if m.fatal), None)
        if fatal is not None:
            break
        env.step(ms[int(rng.integers(len(ms)))].action)
    assert fatal is not None
    _, r, term, _, info = env.step(fatal.action)
    assert r == -1.0 and info["oracle"]["dead_end"] and info["oracle"]["d"] == np.inf
    assert not info["oracle"]["best"].any()
    legal = np.flatnonzero(info["action_mask"])
    if len(legal):
        _, r, _, _, info = env.step(int(legal[0]))
        assert r == 0.0 and info["oracle"]["dead_end"]


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP], ids=["next-step", "same-step"])
def test_vector_env_with_the_oracle_equals_sync_vector_env(mode):
    kw = {"level": ["maze_paint/easy/1", "maze_paint/easy/2", "maze_paint/medium/9"], "max_episode_steps": 12,
          "reward": "oracle", "oracle": True}
    v = gym.make_vec(env_id("maze_paint"), 4, vectorization_mode="vector_entry_point", autoreset_mode=mode, **kw)
    s = gym.make_vec(env_id("maze_paint"), 4, vectorization_mode="sync", vector_kwargs={"autoreset_mode": mode}, **kw)
    r1, r2 = v.reset(seed=3), s.reset(seed=3)
    assert data_equivalence(r1, r2, exact=True)
    rng = np.random.default_rng(1)
    ended, rewards = 0, set()
    for t in range(50):
        info = r1[-1]
        # mostly a best move, sometimes any legal one (detours), now and then a rejected one
        acts = []
        for i in range(4):
            best, legal = np.flatnonzero(info["oracle"]["best"][i]), np.flatnonzero(info["action_mask"][i])
            u = rng.random()
            acts.append(rng.choice(best) if u < 0.6 and len(best) else rng.choice(legal) if u < 0.9 else rng.integers(4))
        r1, r2 = v.step(np.array(acts)), s.step(np.array(acts))
        # (the vector env's final_info carries every row's values, Gymnasium's only the ended rows':
        # compared on the ended rows, its oracle part too)
        f1, f2 = r1[4].pop("final_info", None), r2[4].pop("final_info", None)
        for x, y, name in zip(r1, r2, ("obs", "rewards", "terminated", "truncated", "info")):
            assert data_equivalence(x, y, exact=True), (t, name, x, y)
        if f1 is not None:
            rows = f2["_oracle"]
            assert (f1["_oracle"] == rows).all()
            for k in ("d", "lower", "upper", "exact", "dead_end", "best"):
                assert data_equivalence(f1["oracle"][k][rows], f2["oracle"][k][rows], exact=True), (t, k)
        ended += int(r1[2].sum() + r1[3].sum())
        rewards.update(np.round(r1[1], 6).tolist())
    assert ended > 4 and len(rewards) > 2          # wins, detours and rejections all happened
    with pytest.raises(ValueError, match="rollout"):
        v.unwrapped.rollout(3) if hasattr(v, "unwrapped") else v.rollout(3)


def test_the_suite_env_refuses_the_oracle_reward():
    with pytest.raises(ValueError, match="oracle"):
        gym.make("longpuzzle/Suite-v0", reward="oracle")
