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
        fw = 4 * cap
        fields = [o // bpw for o in range(n)] + [fw * (o % bpw) for o in range(n)]
        # successors' scratch (32 masks; the parent's codes, zero padded; its key words with
        # the words shifted by one field either way) and constant masks of the fields >= T of
        # each word (T = 0 .. n + 2): see nut_and_bolt_kernels.successors
        used = (1 << (fw * bpw)) - 1
        ge = [used & ~((1 << (fw * min(max(t - wd * bpw, 0), bpw))) - 1) for t in range(n + 3) for wd in range(w)]
        ge = [m - (1 << 64) if m >> 63 else m for m in ge]      # as int64 (64-bit words)
        tail = [0] * 32 + fields + [0] * (64 + 3 * w) + ge
        return np.array([w, n, cap, bpw, int(prune), k, 0, 0] + [0] * n + tail, np.int64)

    def words(self, level):
        n, cap = int(level.lv[0]), int(level.lv[1])
        return -(-n // (64 // (4 * cap)))

    def solve(self, level, state, budget, time_limit=None, shortest=True):
        return informed_solve(level, state, budget, self.weights, prune_aux=self.aux(level, prune=True),
                              shortest=shortest)


KNOWLEDGE = NutAndBoltKnowledge()
