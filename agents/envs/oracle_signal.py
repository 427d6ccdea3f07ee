"""The oracle in the Gymnasium envs (issue 38): ``info["oracle"]`` (``oracle=True``) and the
dense ``reward="oracle"``, the same numbers in the rules, pixel and vector envs.

``info["oracle"]`` of a state (solvers/oracle.py's Answer, as plain numbers)::

    d         d(s), the moves to the nearest win: inf on a certified dead end, nan where only
              bounds are known (a level whose graph does not fit the oracle's budgets)
    lower     certified bounds, lower <= d(s) <= upper (both = d when exact; upper inf when no
    upper     solution is known yet)
    exact     d is exact (or the state a certified dead end)
    dead_end  the level can no longer be solved from this state
    best      int8 mask of the actions: 1 = a best next move (extra cost 0 where d is exact; the
              least lower bound otherwise); all 0 on a solved or lost board

``reward="oracle"``: with e(s, a) = n + d(s') - d(s) the extra cost of an action of n moves
(n = 1 for an accepted move of the rules env, 0 for a rejected one or an undo / restart)
and D = max(1, d(s0)) the optimum of the episode's level,

    r = -e(s, a) / D   (+ 1 on the action that solves the level)

and -1 for a fatal action (solvable before, dead end after), 0 for an action on a board
already lost, -lower(e) / D where only bounds are known. Since -e = (d(s) - d(s')) - n, this is
the potential-based shaping of Ng, Harada and Russell (1999), potential -d/D, plus a cost of 1/D
per move: along any trajectory that meets no dead end the sum telescopes,

    return = 1[solved] - (moves - d(s0) + d(s_end)) / D,

so an optimal solution returns exactly 1, each detour move costs 1/D, and the policy that
maximises the return is the shortest solution (the shaping changes no optimal policy), while
every move is graded at once, not only at the win.
"""

from __future__ import annotations

import math

import numpy as np

from longpuzzle.engine.protocol import Level

FATAL_REWARD = -1.0


def oracle_of(level: Level):
    """The process's cached Oracle of ``level`` (one per level content: every env and sub-env
    on that level shares its graph)."""
    from longpuzzle.solvers.oracle import oracle_for         # lazy: the solvers' kernels and graphs
    return oracle_for(level)


def answer_info(o, state: np.ndarray, n_actions: int) -> dict:
    """``info["oracle"]`` of ``state`` (module docstring); ``n_actions`` the length of the mask
    (the env's action space, padded beyond the level's own actions)."""
    a = o.at(state)
    best = np.zeros(n_actions, np.int8)
    if not a.dead_end and a.status != "solved":
        for m in o.best(state):
            best[m.action] = 1
    return {"d": a.d, "lower": _f(a.lower, a), "upper": _f(a.upper, a), "exact": bool(a.exact),
            "dead_end": bool(a.dead_end), "best": best}


def _f(v, a) -> float:
    if a.dead_end:
        return math.inf
    return math.inf if v is None else float(v)


class OracleTracker:
    """One env's oracle state along an episode: the level's Oracle, D and what is known of
    the current state; ``reward`` grades each action (module docstring)."""

    def __init__(self):
        self.o = None
        self.now = None
        self.scale = 1.0

    def start(self, level: Level, state: np.ndarray) -> None:
        self.o = oracle_of(level)
        start = self.o.at(level.initial)
        self.scale = float(max(1, start.distance or start.lower or 1))
        self.now = self.o.at(state)

    def reward(self, state: np.ndarray, n_moves: int, solved: bool) -> float:
        """The reward of an action of ``n_moves`` moves that led to ``state``."""
        before, after = self.now, self.o.at(state)
        self.now = after
        bonus = 1.0 if solved and n_moves else 0.0
        if before.dead_end:                  # a lost board: nothing to grade (an undo out of it included)
            return 0.0
        if after.dead_end:
            return FATAL_REWARD
        if before.exact and after.exact:
            return -(n_moves + after.distance - before.distance) / self.scale + bonus
        lo = max(0, n_moves + (after.lower or 0) - (before.upper if before.upper is not None else math.inf))
        return -lo / self.scale + bonus

    def info(self, state: np.ndarray, n_actions: int) -> dict:
        return answer_info(self.o, state, n_actions)
