"""Batched rollouts: what ``PuzzleVectorEnv.rollout`` returns and the policies it runs inside
its compiled loop (the loop itself is ``vec_rollout`` in longpuzzle/engine/batch.py).

    envs = gymnasium.make_vec("longpuzzle/MazePaint-v0", num_envs=1024, level="maze_paint/hard")
    envs.reset(seed=0)
    r = envs.unwrapped.rollout(16)                   # 16 steps of every env, random legal moves
    r = envs.unwrapped.rollout(16, actions)          # given actions, int array (N, 16)
    r = envs.unwrapped.rollout(16, ExpertTable({...}))   # a best move per state, per level

A rollout of T steps is exactly T calls of ``envs.step`` (autoreset NEXT_STEP): same states,
rewards, terminations, truncations, codes, level draws and step counters, and the env is
left where those steps leave it; only the actions are chosen inside the compiled call.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

# splitmix64's increment: spreads (seed, env) pairs over the generator's state space
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def rollout_seeds(seeds: Any, n: int) -> np.ndarray:
    """The random policy's state of n envs (uint64 each): env i from seeds[i] (an int or a
    list of n ints), or from fresh OS entropy when ``seeds`` is None."""
    if seeds is None:
        return np.random.SeedSequence().generate_state(n, np.uint64)
    if isinstance(seeds, (int, np.integer)):
        seeds = [int(seeds) + i for i in range(n)]
    base = np.array([int(s) % 2**64 for s in seeds], dtype=np.uint64)
    with np.errstate(over="ignore"):
        # distinct, well mixed starting points: splitmix64 makes the rest
        return base * _GOLDEN + _GOLDEN


@dataclass
class Rollout:
    """T steps of N envs, env-major (row i is env i, column s its step s; s = 0 is the first
    step of this rollout). A reset step (the step after an episode ended) has code -1,
    reward 0, action 0 (or the given one, ignored) and the new episode's first state."""
    observations: np.ndarray | None   # (N, T, L) state after each step (None if not recorded)
    actions: np.ndarray               # (N, T) int64 action taken
    rewards: np.ndarray               # (N, T) float64 reward of the step (env's reward mode)
    terminated: np.ndarray            # (N, T) bool: the step solved the level
    truncated: np.ndarray             # (N, T) bool: the step reached max_episode_steps
    codes: np.ndarray                 # (N, T) int64 result code: 0 accepted, 1 no-op,
                                      #   >= 2 rejected (state unchanged), -1 reset step
    level_index: np.ndarray           # (N, T) int64 the env's level (index into envs.levels)

    @property
    def steps(self) -> int:
        """Env-steps in this rollout (N x T)."""
        return int(self.actions.size)


class ExpertTable:
    """A policy given as a best move per state, for some levels of a vector env: ``moves``
    maps a level (a Level or its id) to ``(states, actions)``, states an (M, L) array of
    that level's states and actions (M,) the move to play in each. Where a state is not in
    the table (or its level has none), the rollout plays a uniform random legal move.

    This is the plug point of an exact oracle: for a level whose state graph was searched
    whole, the table of every reachable state's best move makes ``rollout`` play optimal
    trajectories at vector speed (``ExpertTable({level: (states, best_moves)})``).
    """

    def __init__(self, moves: dict):
        self.moves: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self.skipped: list[str] = []          # levels from_oracle left out (graph too large)
        self._laid_out: dict = {}             # arrays() per (levels, length, dtype)
        for lvl, (states, actions) in moves.items():
            key = lvl if isinstance(lvl, str) else lvl.id
            states = np.asarray(states)
            actions = np.asarray(actions, dtype=np.int64)
            if states.ndim != 2 or actions.shape != (states.shape[0],):
                raise ValueError(f"{key}: give states (M, L) and one action per state, not "
                                 f"{states.shape} and {actions.shape}")
            self.moves[key] = (states, actions)

    @classmethod
    def from_oracle(cls, levels: Any, *, graph_budget: int | None = None) -> ExpertTable:
        """The exact oracle's best move of every state of each level whose whole reachable
        state graph fits ``graph_budget`` states (default: the oracle's own budget of the
        game, longpuzzle.solvers.oracle): the move of least action index among those that
        lower d(s) by one (a shortest solution's next move; the first of ``Oracle.best``), for
        every reachable state that is neither solved nor a dead end. ``levels``: what a vector
        env's ``level=`` takes (ids, objectives, Levels, lists). Levels whose graph does not fit
        are left out (listed in ``skipped``): there the rollout plays random legal moves."""
        from longpuzzle.agents.envs.levels import expand
        from longpuzzle.solvers import oracle as orc
        from longpuzzle.solvers.profile import StateGraph

        moves, skipped = {}, []
        for lvl in expand(levels, None):
            budget = graph_budget if graph_budget is not None else orc.GRAPH_BUDGETS.get(lvl.game, orc.GRAPH_BUDGET)
            g = StateGraph(lvl, budget=budget)
            if not g.complete:
                skipped.append(lvl.id)
                continue
            moves[lvl] = _best_moves(lvl, g, g.distances())
        table = cls(moves)
        table.skipped = skipped
        return table

    def arrays(self, levels, length: int, dtype) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The table laid out for the compiled loop: states (M, length) sorted
        lexicographically within each level, their actions (M,), and start (n_levels + 1,)
        so that level k's rows are start[k] .. start[k+1]-1. Kept for the next call with
        the same levels (a table is sorted once, not at every rollout)."""
        key = (tuple(lvl.id for lvl in levels), int(length), np.dtype(dtype).str)
        if key not in self._laid_out:
            self._laid_out[key] = self._lay_out(levels, length, dtype)
        return self._laid_out[key]

    def _lay_out(self, levels, length: int, dtype) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        blocks, acts, start = [], [], [0]
        for lvl in levels:
            states, actions = self.moves.get(lvl.id, (np.zeros((0, lvl.initial.shape[0])), np.zeros(0, np.int64)))
            L = lvl.initial.shape[0]
            if states.shape[1] != L:
                raise ValueError(f"{lvl.id}: its states have {L} entries, the table's {states.shape[1]}")
            if len(actions) and (actions.min() < 0 or actions.max() >= lvl.n_actions):
                raise ValueError(f"{lvl.id}: actions must be in 0..{lvl.n_actions - 1}")
            padded = np.zeros((len(states), length), dtype)
            padded[:, :L] = states
            order = np.lexsort(padded[:, ::-1].T) if len(padded) else np.zeros(0, np.int64)
            padded, actions = padded[order], actions[order]
            if len(padded) > 1:
                same = np.all(padded[1:] == padded[:-1], axis=1)
                if np.any(same & (actions[1:] != actions[:-1])):
                    raise ValueError(f"{lvl.id}: a state is given two different actions")
            blocks.append(padded)
            acts.append(actions)
            start.append(start[-1] + len(padded))
        tab = np.concatenate(blocks) if blocks else np.zeros((0, length), dtype)
        return (np.ascontiguousarray(tab, dtype=dtype), np.concatenate(acts).astype(np.int64),
                np.array(start, np.int64))


def _best_moves(level, graph, dist) -> tuple[np.ndarray, np.ndarray]:
    """(states, actions): every state reachable from the start through states that are not
    yet solved nor dead ends (d > 0), with its best move (the least action whose accepted
    successor has d - 1), found breadth first with the batched rules."""
    from longpuzzle.engine.batch import step_batch

    start = level.initial
    seen = {start.tobytes()}
    frontier = [start]
    out_s, out_a = [], []
    while frontier:
        F = np.stack(frontier)
        frontier = []
        d = dist[[graph.lookup(s) for s in F]]
        keep = d > 0                                   # solved (0) and dead ends (-1): no move
        F, d = F[keep], d[keep]
        best = np.full(len(F), -1, np.int64)
        for a in range(level.n_actions):
            nxt, codes = step_batch(level, F, np.full(len(F), a, np.int64))
            for r in np.flatnonzero(codes == 0):
                t = nxt[r]
                if best[r] < 0 and dist[graph.lookup(t)] == d[r] - 1:
                    best[r] = a
                key = t.tobytes()
                if key not in seen:
                    seen.add(key)
                    frontier.append(t)
        out_s.append(F)
        out_a.append(best)
    states = np.concatenate(out_s) if out_s else np.zeros((0, start.shape[0]), start.dtype)
    actions = np.concatenate(out_a) if out_a else np.zeros(0, np.int64)
    if (actions < 0).any():                            # cannot happen in a whole graph
        raise RuntimeError(f"{level.id}: a state with d > 0 has no move lowering d")
    return states, actions
