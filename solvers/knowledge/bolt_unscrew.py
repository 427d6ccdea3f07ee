"""Bolt Unscrew (quasi-static model of puzzles/bolt_unscrew.py; released pieces fall onto
the pegs of occupied anchors and may rest there, status 1, until a peg under them moves).

solve:   a compiled greedy best-first search (GREEDY_TEMPLATE, specialised per game by
         engine.specialize so its cache follows the model's source) finds a first solution
         fast; then the core A* with the admissible heuristic of bolt_unscrew_kernels proves
         it optimal or gives a proven lower bound within the rest of the state budget.
         Priority (lower first): 100 x attached pieces + pins - 5 x pieces held by one pin
         + 5 x the fewest pins of an attached piece + g (the last two steer towards freeing
         one piece at a time, e.g. the grid of hard/4).
certify: the model's "no usable hole" predicate, then the same best-first search with exact
         duplicate detection and a small budget: it reaches a solution quickly when there is
         one, and when the reachable set is small it exhausts it (a dead-end certificate).
dead_end: the predicate alone (the cheap certificate used before any search).
"""

from __future__ import annotations

import time

import numpy as np

from longpuzzle.engine.registry import get_puzzle
from longpuzzle.solvers.knowledge import Knowledge, bolt_unscrew_kernels, field_spec

POS = 1 << 23          # Q8 positions are kept within +-2^23 (32768 px) of the frame

GREEDY_TEMPLATE = '''
import numpy as np
from numba import njit


@njit(cache=True)
def score(lv, s, wp, w1, wpin, wa, wmin, mark):
    """wp x attached pieces + wpin x pins + wa x occupied anchors that pin a piece
    - w1 x pieces held by a single pin (lower is better; mark: nA scratch entries)."""
    na = int(lv[0])
    npieces = int(lv[1])
    holes = int(lv[2])
    ss = int(lv[11])
    v = 0
    if wa != 0:
        for a in range(na):
            mark[a] = 0
    least = 0
    for p in range(npieces):
        b = na + p * ss
        if int(s[b]) == 2:
            continue
        v += wp                 # attached, or released and resting on pegs: still to go
        c = 0
        for k in range(holes):
            a = int(s[b + 4 + k])
            if a >= 0:
                c += 1
                if wa != 0 and mark[a] == 0:
                    mark[a] = 1
                    v += wa
        v += wpin * c
        if c == 1:
            v -= w1
        if c > 0 and (least == 0 or c < least):
            least = c
    return v + wmin * least


@njit(cache=True)
def _hash(s, skip, L):
    h = np.uint64(0x9E3779B97F4A7C15)
    for i in range(L):
        if skip[i]:
            continue
        x = np.uint64(np.int64(s[i]) & np.int64(0xFFFFFFFF)) ^ h
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        h = x ^ (x >> np.uint64(31))
    return h


@njit(cache=True)
def _same(states, u, s, skip, L):
    for i in range(L):
        if not skip[i] and states[u, i] != s[i]:
            return False
    return True


@njit(cache=True)
def best_first(lv, init, max_states, wp, w1, wg, wpin, wa, wmin, prune_awake):
    """Best-first search on f = wg * g + score (bucket queue, last in first out within a
    bucket: depth first among equals). Duplicates are detected on the whole state, or, with
    ``prune_awake``, ignoring the pieces' awake flags (a pruning: then an exhausted search
    proves nothing). Returns (status, goal, n, parent, action): status 1 solved (goal = id
    of the solved state), 0 exhausted, -1 budget reached."""
    L = init.shape[0]
    na = int(lv[0])
    npieces = int(lv[1])
    holes = int(lv[2])
    ss = int(lv[11])
    nact = na * na
    skip = np.zeros(L, np.bool_)
    if prune_awake:
        for p in range(npieces):
            skip[na + p * ss + 4 + holes] = True
    cap = 1024
    states = np.empty((cap, L), init.dtype)
    parent = np.empty(cap, np.int32)
    action = np.empty(cap, np.int32)
    g = np.empty(cap, np.int32)
    tsize = 4096
    table = np.zeros(2 * tsize, np.int64)
    off = w1 * npieces
    for i in range(L):
        states[0, i] = init[i]
    parent[0] = -1
    action[0] = -1
    g[0] = 0
    n = 1
    h0 = _hash(init, skip, L)
    p0 = np.int64(h0 & np.uint64(tsize - 1))
    table[2 * p0] = np.int64(h0)
    table[2 * p0 + 1] = 1
    if is_solved(lv, init):
        return 1, 0, n, parent, action
    nb = 1024
    bhead = np.full(nb, -1, np.int64)
    qid = np.empty(1024, np.int32)
    qnext = np.empty(1024, np.int64)
    mark = np.zeros(na, np.int64)
    f0 = score(lv, init, wp, w1, wpin, wa, wmin, mark) + off
    if f0 >= nb:
        nb = 2 * f0 + 16
        bhead = np.full(nb, -1, np.int64)
    qid[0] = 0
    qnext[0] = -1
    bhead[f0] = 0
    nq = 1
    fmin = f0
    mask = np.zeros(nact, np.uint8)
    nxt = np.empty(L, init.dtype)
    cur = np.empty(L, init.dtype)
    while True:
        while fmin < nb and bhead[fmin] < 0:
            fmin += 1
        if fmin >= nb:
            return 0, -1, n, parent, action
        e = bhead[fmin]
        bhead[fmin] = qnext[e]
        u = int(qid[e])
        for i in range(L):
            cur[i] = states[u, i]
        legal_into(lv, cur, mask)
        gu = int(g[u])
        for a in range(nact):
            if mask[a] == 0:
                continue
            if step_into(lv, cur, nxt, a) != 0:
                continue
            h = _hash(nxt, skip, L)
            pos = np.int64(h & np.uint64(tsize - 1))
            hs = np.int64(h)
            found = False
            while True:
                t = table[2 * pos + 1]
                if t == 0:
                    break
                if table[2 * pos] == hs and _same(states, t - 1, nxt, skip, L):
                    found = True
                    break
                pos = (pos + 1) & (tsize - 1)
            if found:
                continue
            if n >= max_states:
                return -1, -1, n, parent, action
            if n >= cap:
                cap2 = cap * 2
                st2 = np.empty((cap2, L), init.dtype)
                st2[:cap] = states
                states = st2
                p2 = np.empty(cap2, np.int32)
                p2[:cap] = parent
                parent = p2
                a2 = np.empty(cap2, np.int32)
                a2[:cap] = action
                action = a2
                g2 = np.empty(cap2, np.int32)
                g2[:cap] = g
                g = g2
                cap = cap2
            for i in range(L):
                states[n, i] = nxt[i]
            parent[n] = u
            action[n] = a
            g[n] = gu + 1
            table[2 * pos] = hs
            table[2 * pos + 1] = n + 1
            v = n
            n += 1
            if 10 * n > 7 * tsize:
                tsize *= 2
                table = np.zeros(2 * tsize, np.int64)
                for j in range(n):
                    hj = _hash(states[j], skip, L)
                    q = np.int64(hj & np.uint64(tsize - 1))
                    while table[2 * q + 1] != 0:
                        q = (q + 1) & (tsize - 1)
                    table[2 * q] = np.int64(hj)
                    table[2 * q + 1] = j + 1
            if is_solved(lv, nxt):
                return 1, v, n, parent, action
            f = wg * (gu + 1) + score(lv, nxt, wp, w1, wpin, wa, wmin, mark) + off
            if nq >= qid.shape[0]:
                q2 = np.empty(2 * nq, np.int32)
                q2[:nq] = qid
                qid = q2
                n2 = np.empty(2 * nq, np.int64)
                n2[:nq] = qnext
                qnext = n2
            if f >= nb:
                nb2 = 2 * f + 16
                bh = np.full(nb2, -1, np.int64)
                bh[:nb] = bhead
                bhead = bh
                nb = nb2
            qid[nq] = v
            qnext[nq] = bhead[f]
            bhead[f] = nq
            nq += 1
            if f < fmin:
                fmin = f
'''


def greedy_kernels():
    """The compiled best-first search of GREEDY_TEMPLATE, specialised for Bolt Unscrew."""
    from longpuzzle.engine.specialize import specialize

    return specialize(get_puzzle("bolt_unscrew"), GREEDY_TEMPLATE, "bolt_greedy")


def best_first(level, state, budget, wp=100, w1=5, wg=1, wpin=1, wa=0, wmin=0, prune_awake=False):
    """(status, actions, states, seconds) of the compiled best-first search from ``state``."""
    mod = greedy_kernels()
    t0 = time.perf_counter()
    st, goal, n, parent, action = mod.best_first(level.lv, np.array(state, dtype=level.initial.dtype, copy=True),
                                                 np.int64(budget), np.int64(wp), np.int64(w1), np.int64(wg),
                                                 np.int64(wpin), np.int64(wa), np.int64(wmin), bool(prune_awake))
    acts = []
    if st == 1:
        u = int(goal)
        while u > 0:
            acts.append(int(action[u]))
            u = int(parent[u])
        acts.reverse()
    return int(st), acts, int(n), time.perf_counter() - t0


class BoltUnscrewKnowledge(Knowledge):
    game = "bolt_unscrew"
    method = "astar"
    kernels = bolt_unscrew_kernels
    verify_budget = 150_000        # per level: about 3 s on the two hardest levels
    # the oracle: a step settles physics, so 10^5 states take a minute while A* proves an
    # optimum in a few hundred: only small levels get their whole graph, none from a later
    # state; A* proves the hard/1 optimum in 17,574 states (7 s), past this budget (hard/2
    # onwards) its answers are bounds, each a few seconds (150,000 states take about a minute)
    graph_budget = 5_000
    solve_budget = 20_000
    local_graphs = False
    # best-first priority (lower first): wp x attached pieces + wpin x pins - w1 x pieces
    # held by one pin + wa x occupied anchors that pin + wmin x fewest pins of a piece + wg x g
    # as (wp, w1, wg, wpin, wa, wmin)
    order = (100, 5, 1, 1, 0, 5)
    certify_budget = 20_000
    astar_cap = 250_000            # most states of the A* phase of solve (about 5-10 s)
    rate = 40_000                  # states a second assumed when a time limit is given

    def aux(self, level):
        a, _ = self.spec(level)
        return np.concatenate([a, np.zeros(int(level.lv[0]), np.int64)])

    def solve(self, level, state, budget, time_limit=None, shortest=True):
        """1. Compiled greedy best-first (self.order; duplicates ignore the awake flags, a
        pruning) for a first solution of length U; if it fails, the same search with exact
        duplicates (exhausting it proves the state unsolvable).
        2. A* (core, admissible h of the kernels) over states with g + h < U with the rest of
        the budget (at most ``astar_cap`` states, and what ``time_limit`` allows at ``rate``):
        exhausting proves U optimal, a goal popped is optimal, otherwise the smallest open f
        is a proven lower bound. ``shortest=False``: no A* phase once step 1 found one."""
        from longpuzzle.solvers.core import _result, finish_with_astar

        t0 = time.perf_counter()
        budget = max(int(budget), 1)
        total = 0
        best = None
        exhausted = False
        for prune in (True, False):
            st, acts, n, _ = best_first(level, state, budget - total if not prune else budget, *self.order,
                                        prune_awake=prune)
            total += n
            if st == 1:
                best = acts
                break
            if st == 0 and not prune:
                exhausted = True
            if total >= budget:
                break
        if exhausted:
            return _result(level, "unsolvable", states=total, seconds=time.perf_counter() - t0,
                           method="best-first")
        left = min(budget - total, self.astar_cap) if shortest or best is None else 0
        if time_limit is not None:
            left = min(left, int(self.rate * (time_limit - (time.perf_counter() - t0))))
        if left < 1000:
            secs = time.perf_counter() - t0
            if best is None:
                return _result(level, "unknown", states=total, seconds=secs, method="best-first")
            return _result(level, "solvable", best, optimal=False, states=total, seconds=secs,
                           method="best-first")
        return finish_with_astar(level, state, best, total, left, t0, "best-first")

    def certify(self, level, state, budget=None):
        """solvable / unsolvable / unknown for any state, fast enough to run after every move:
        the "no usable hole" predicate, then one compiled best-first search with EXACT
        duplicate detection (the greedy order reaches a solution quickly when there is one;
        when the reachable set is small the same search exhausts it, which certifies a dead
        end), at most ``budget`` (default ``certify_budget``) states."""
        from longpuzzle.solvers.core import _result

        t0 = time.perf_counter()
        if get_puzzle(level.game).is_dead_end(level, state):
            return _result(level, "unsolvable", states=1, seconds=time.perf_counter() - t0, method="predicate")
        budget = self.certify_budget if budget is None else max(int(budget), 1)
        st, acts, n, _ = best_first(level, state, budget, *self.order, prune_awake=False)
        secs = time.perf_counter() - t0
        if st == 1:
            return _result(level, "solvable", acts, states=n, seconds=secs, method="best-first")
        if st == 0:
            return _result(level, "unsolvable", states=n, seconds=secs, method="best-first")
        return _result(level, "unknown", states=n, seconds=secs, method="best-first")

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
