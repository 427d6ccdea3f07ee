"""Bolt Unscrew (quasi-static model of puzzles/bolt_unscrew.py): the cheap certificate is the
model's own "no usable hole" predicate (``is_dead_end``: no empty anchor passes the
hole-blocking test, so no move is legal); the search itself is the generic breadth-first
search over the model's settled states with keys packed by field ranges."""

from __future__ import annotations

import numpy as np

from longpuzzle.engine.registry import get_puzzle
from longpuzzle.solvers.knowledge import Knowledge, bolt_unscrew_kernels, field_spec

POS = 1 << 23          # Q8 positions are kept within +-2^23 (32768 px) of the frame


class BoltUnscrewKnowledge(Knowledge):
    game = "bolt_unscrew"
    method = "astar"
    kernels = bolt_unscrew_kernels
    weights = (1000,)
    verify_budget = 115_000    # the settled-physics step costs ~100 us: keep verify short

    def aux(self, level, greedy: bool = False):
        a, _ = self.spec(level)
        return np.concatenate([a, np.zeros(int(level.lv[0]), np.int64), np.array([int(greedy)], np.int64)])

    def solve(self, level, state, budget, time_limit=None):
        """Greedy best-first on 100 x pieces left + pins for a first solution, then A* with
        the admissible h (kernels) to prove it optimal or give a lower bound."""
        from longpuzzle.solvers.core import informed_solve

        return informed_solve(level, state, budget, self.weights, prune_aux=self.aux(level, greedy=True),
                              fast_share=0.94)

    def spec(self, level):
        lv = level.lv
        na, npieces, holes, n_ang = (int(x) for x in lv[:4])
        ss = int(lv[11])
        lo, hi = [0] * na, [1] * na
        extra = ss - 5 - holes      # fields a later model may add after the awake flag
        for _ in range(npieces):
            lo += [0, -POS, -POS, 0] + [-1] * holes + [0] + [-POS] * extra
            hi += [2, POS, POS, n_ang - 1] + [na - 1] * holes + [1] + [POS] * extra
        return field_spec(level, lo, hi)

    def dead_end(self, level, state):
        return True if get_puzzle(level.game).is_dead_end(level, state) else None


KNOWLEDGE = BoltUnscrewKnowledge()
