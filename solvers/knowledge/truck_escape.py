"""Truck Escape: greedy is exact.

Lemma (tested in tests/solvers/test_solvers.py): removing a truck never blocks another. Whether j
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
    # its greedy solver is exact and far cheaper than a graph of many states: only small
    # levels get their whole graph, and no graph from a later state
    graph_budget = 5_000
    local_graphs = False

    def solve(self, level, state, budget, time_limit=None, shortest=True):
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

    def profile(self, level, budget=None):
        """Certified figures without a state search: greedy decides solvability and gives an
        optimal solution (every solution removes each truck once); the reachable states are
        counted by count_removal_sets; when the level is solvable every legal first move
        begins an optimal solution (removing a truck never blocks another)."""
        from longpuzzle.solvers.profile import Profile

        t0 = time.perf_counter()
        p = get_puzzle(level.game)
        acts, final = greedy(level, level.initial)
        solvable = bool(p.is_solved(level, final))
        legal = p.legal_moves(level, level.initial)
        count = count_removal_sets(level, level.initial)
        prof = Profile(level.id, level.game, "solvable" if solvable else "unsolvable", method="greedy+count",
                       states=count if count is not None else len(acts) + 1, states_exact=count is not None,
                       first_moves=len(legal), optimal_first_moves=len(legal) if solvable else 0)
        if solvable:
            prof.optimal = prof.lower_bound = prof.upper_bound = len(acts)
            prof.solution = p.format_moves(level, acts)
        prof.seconds = time.perf_counter() - t0
        return prof


KNOWLEDGE = TruckEscapeKnowledge()


def count_removal_sets(level, state, node_cap: int = 2_000_000) -> int | None:
    """The number of states reachable from ``state``: the sets of trucks that can be removed
    (in some order) from it. Truck i can leave once every remaining truck of its lane is gone,
    so a reachable set is a down-set of the order "j before i" (j stands in i's lane),
    transitively closed, over the trucks the greedy order can remove. Counted without
    enumeration: f(M) = f(M - x - after(x)) + f(M - x - before(x)) (the down-sets without x,
    and those with x and all it needs), memoised on M and split into independent parts.
    None if more than ``node_cap`` subproblems were needed."""
    n = int(level.lv[2])
    acts, _ = greedy(level, state)
    removable = 0
    for a in acts:
        removable |= 1 << a
    block = np.asarray(level.lv[3 + 3 * n:3 + 3 * n + n * n]).reshape(n, n)
    before = [0] * n                 # bits of the trucks that must leave before truck i (closure)
    for i in range(n):
        for j in range(n):
            if block[i, j] and state[1 + j] and (removable >> j) & 1:
                before[i] |= 1 << j
    changed = True
    while changed:
        changed = False
        for i in range(n):
            m, acc = before[i], before[i]
            while m:
                j = (m & -m).bit_length() - 1
                m &= m - 1
                acc |= before[j]
            if acc != before[i]:
                before[i], changed = acc, True
    after = [0] * n
    for i in range(n):
        m = before[i]
        while m:
            j = (m & -m).bit_length() - 1
            m &= m - 1
            after[j] |= 1 << i
    related = [before[i] | after[i] for i in range(n)]
    memo: dict[int, int] = {0: 1}
    budget = [node_cap]

    def parts(m: int) -> list[int]:
        out = []
        while m:
            seed = m & -m
            comp, frontier = seed, seed
            while frontier:
                j = (frontier & -frontier).bit_length() - 1
                frontier &= frontier - 1
                new = related[j] & m & ~comp
                comp |= new
                frontier |= new
            out.append(comp)
            m &= ~comp
        return out

    def f(m: int) -> int:
        got = memo.get(m)
        if got is not None:
            return got
        budget[0] -= 1
        if budget[0] < 0:
            raise OverflowError
        comps = parts(m)
        if len(comps) > 1:
            total = 1
            for c in comps:
                total *= f(c)
        else:
            best, bx = -1, 0
            mm = m
            while mm:                # split on the truck related to the most others
                j = (mm & -mm).bit_length() - 1
                mm &= mm - 1
                d = bin(related[j] & m).count("1")
                if d > best:
                    best, bx = d, j
            x = 1 << bx
            total = f(m & ~x & ~after[bx]) + f(m & ~x & ~before[bx])
        memo[m] = total
        return total

    try:
        return f(removable)
    except OverflowError:
        return None
