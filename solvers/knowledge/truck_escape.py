"""Truck Escape: greedy is exact.

Lemma (tested in tests/test_solvers.py): removing a truck never blocks another. Whether j
blocks i is fixed by the layout (lv's blocking matrix); a truck is free when no REMAINING
truck blocks it, so removals only shrink the set of blockers of every truck. Hence the set of
free trucks only grows, any free truck may be removed at once, and if the greedy order gets
stuck, every remaining truck is blocked by a remaining truck in every order: a dead end.
Every solution removes each truck exactly once, so every solution has the optimal length N.
"""

from __future__ import annotations

import time

import numpy as np

from longpuzzle.engine.registry import get_puzzle
from longpuzzle.solvers.knowledge import Knowledge


def greedy(level, state) -> tuple[list[int], np.ndarray]:
    """Remove free trucks (lowest index first) until none is free; (actions, final state)."""
    p = get_puzzle(level.game)
    cur = np.array(state, copy=True)
    acts = []
    while True:
        legal = p.legal_moves(level, cur)
        if not legal:
            return acts, cur
        cur, _ = p.step(level, cur, legal[0])
        acts.append(legal[0])


class TruckEscapeKnowledge(Knowledge):
    game = "truck_escape"

    def solve(self, level, state, budget, time_limit=None):
        from longpuzzle.solvers.core import _result

        t0 = time.perf_counter()
        acts, final = greedy(level, state)
        secs = time.perf_counter() - t0
        if get_puzzle(level.game).is_solved(level, final):
            return _result(level, "solvable", acts, optimal=True, lower_bound=len(acts),
                           states=len(acts) + 1, seconds=secs, method="greedy")
        return _result(level, "unsolvable", states=len(acts) + 1, seconds=secs, method="greedy")

    def dead_end(self, level, state):
        acts, final = greedy(level, state)
        return True if not get_puzzle(level.game).is_solved(level, final) else None


KNOWLEDGE = TruckEscapeKnowledge()
