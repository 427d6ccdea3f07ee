"""Nut and Bolt: canonical keys (bolts are interchangeable: a state is the multiset of its
bolts), moves that only permute bolts are not generated, and an admissible, consistent
heuristic (solvers/knowledge/nut_and_bolt_kernels.py) for A*.

``solve`` runs, within the state budget:
 1. a weighted best-first search (f = g + 3h, completed bolts never moved) for a solution
    fast; its length U is an upper bound;
 2. A* (f = g + h, every legal move) over the states with g + h < U. If that space is
    exhausted, no solution is shorter than U: U is optimal. If A* pops a goal first, that
    goal is optimal. If the budget runs out, the smallest open f is a proven lower bound.
Only step 2 decides optimality, and it uses no pruning beyond exact symmetry.
"""

from __future__ import annotations

import numpy as np

from longpuzzle.solvers.core import informed_solve
from longpuzzle.solvers.knowledge import Knowledge
from longpuzzle.solvers.knowledge import nut_and_bolt_kernels

SCR = nut_and_bolt_kernels.SCR


class NutAndBoltKnowledge(Knowledge):
    game = "nut_and_bolt"
    kernels = nut_and_bolt_kernels
    canonical = True
    method = "astar"
    weights = (3, 2)

    def aux(self, level, prune: bool = False):
        n, cap, k = (int(x) for x in level.lv[:3])
        bpw = 64 // (4 * cap)
        w = -(-n // bpw)
        fields = [o // bpw for o in range(n)] + [4 * cap * (o % bpw) for o in range(n)]
        return np.array([w, n, cap, bpw, int(prune), k, 0, 0] + [0] * (6 * n + 16) + fields, np.int64)

    def words(self, level):
        n, cap = int(level.lv[0]), int(level.lv[1])
        return -(-n // (64 // (4 * cap)))

    def solve(self, level, state, budget, time_limit=None):
        return informed_solve(level, state, budget, self.weights, prune_aux=self.aux(level, prune=True))


KNOWLEDGE = NutAndBoltKnowledge()
