"""Color Connect: route search instead of a search over single steps.

Paths are chosen colour by colour (shortest endpoint distance first); each path is grown
cell by cell by depth-first search over free cells (neighbours nearer the target first),
with forward checks on bitmask flood fills: the tip must still reach its target, and every
colour not yet placed must still be able to connect. Backtracking over colours and paths is
exhaustive, so "no routes" within the node budget is a certificate that the empty board has
no solution. A state with completed paths or an active path is first cleared (cancel /
remove actions) when its completed paths cannot be kept. Solutions are not claimed to be
the fewest actions.
"""

from __future__ import annotations

import time

from longpuzzle.engine.registry import get_puzzle
from longpuzzle.solvers.knowledge import Knowledge


class _Board:
    def __init__(self, rows, cols):
        self.rows, self.cols = rows, cols
        self.n = rows * cols
        self.full = (1 << self.n) - 1
        left = 0
        right = 0
        for r in range(rows):
            left |= 1 << (r * cols)
            right |= 1 << (r * cols + cols - 1)
        self.not_left = self.full & ~left      # cells that may receive from their left neighbour
        self.not_right = self.full & ~right

    def grow(self, m):
        c = self.cols
        return (m | (m << c) | (m >> c) | ((m << 1) & self.not_left) | ((m >> 1) & self.not_right)) & self.full

    def reaches(self, a, b, free):
        """Can cell a reach cell b through ``free`` cells (a and b need not be free)?"""
        target = 1 << b
        reach = 1 << a
        allowed = free | target
        while True:
            nxt = self.grow(reach) & allowed | reach
            if nxt & target:
                return True
            if nxt == reach:
                return False
            reach = nxt

    def neighbours(self, cell):
        r, c = divmod(cell, self.cols)
        if r > 0:
            yield cell - self.cols
        if r < self.rows - 1:
            yield cell + self.cols
        if c > 0:
            yield cell - 1
        if c < self.cols - 1:
            yield cell + 1


def route_search(rows, cols, pairs, blocked=0, node_budget=2_000_000):
    """pairs: [(colour index, a, b)] to connect; blocked: bitmask of unusable cells.
    Returns ({colour: [cells a..b]}, nodes) or (None, nodes) if exhausted, or
    (False, nodes) if the budget ran out."""
    bd = _Board(rows, cols)
    endpoints = 0
    for _, a, b in pairs:
        endpoints |= (1 << a) | (1 << b)
    order = sorted(pairs, key=lambda p: abs(p[1] // cols - p[2] // cols) + abs(p[1] % cols - p[2] % cols))
    nodes = 0

    def others_ok(i, occupied):
        free = bd.full & ~occupied & ~endpoints
        return all(bd.reaches(a, b, free) for _, a, b in order[i:])

    def place(i, occupied):
        nonlocal nodes
        if i == len(order):
            return {}
        ci, a, b = order[i]
        br, bc = divmod(b, cols)
        path = [a]
        used = occupied | (1 << a)

        def extend(tip, used):
            nonlocal nodes
            nodes += 1
            if nodes > node_budget:
                raise TimeoutError
            nbrs = sorted(bd.neighbours(tip), key=lambda x: abs(x // cols - br) + abs(x % cols - bc))
            for x in nbrs:
                if x == b:
                    path.append(b)
                    occ2 = used | (1 << b)
                    if others_ok(i + 1, occ2):
                        rest = place(i + 1, occ2)
                        if rest is not None:
                            rest[ci] = list(path)
                            return rest
                    path.pop()
                    continue
                bit = 1 << x
                if used & bit or endpoints & bit:
                    continue
                u2 = used | bit
                free = bd.full & ~u2 & ~endpoints
                if not bd.reaches(x, b, free):
                    continue
                if not others_ok(i + 1, u2):
                    continue
                path.append(x)
                got = extend(x, u2)
                if got is not None:
                    return got
                path.pop()
            return None

        return extend(a, used)

    try:
        if not others_ok(0, blocked):
            return None, nodes
        return place(0, blocked), nodes
    except TimeoutError:
        return False, nodes


class ColorConnectKnowledge(Knowledge):
    game = "color_connect"
    local_graphs = False          # a path can be removed: a later state reaches as much as the start

    def solve(self, level, state, budget, time_limit=None, shortest=True):
        from longpuzzle.solvers.core import _result

        p = get_puzzle(level.game)
        t0 = time.perf_counter()
        rows, cols, k = (int(x) for x in level.lv[:3])
        n = rows * cols
        eps = [(ci, int(level.lv[3 + 2 * ci]), int(level.lv[4 + 2 * ci])) for ci in range(k)]
        prefix = []
        cur = state
        if int(cur[0]) != 0:
            prefix.append(n)                              # cancel the active path
            cur, _ = p.step(level, cur, n)
        owner = [int(x) for x in cur[3 + k:3 + k + n]]
        done = {ci for ci in range(k) if int(cur[3 + ci])}
        blocked = sum(1 << c for c in range(n) if owner[c])
        routes, nodes = route_search(rows, cols, [e for e in eps if e[0] not in done], blocked, budget)
        if routes is None and done:
            # the completed paths are in the way: remove them all and start again
            for ci in sorted(done):
                a = n + 1 + 2 * k + ci
                prefix.append(a)
                cur, _ = p.step(level, cur, a)
            done = set()
            routes, more = route_search(rows, cols, eps, 0, budget)
            nodes += more
        secs = time.perf_counter() - t0
        if routes is False:
            return _result(level, "unknown", states=nodes, seconds=secs, method="routes")
        if routes is None:
            return _result(level, "unsolvable", states=nodes, seconds=secs, method="routes")
        acts = list(prefix)
        texts = []
        for ci, a, _b in eps:
            if ci in done:
                continue
            cells = routes[ci]
            e = 0 if cells[0] == a else 1
            acts.append(n + 1 + 2 * ci + e)
            acts.extend(cells[1:])
            texts.append(p.route_text(level, ci, [divmod(c, cols) for c in cells]))
        res = _result(level, "solvable", acts, optimal=False, states=nodes, seconds=secs, method="routes")
        res.routes = texts
        return res


    def profile(self, level, budget=None):
        """Figures on routes (the single-step space is far too large to enumerate): the route
        search certifies solvability; the optimal number of actions (one start and one step
        per further cell of each path) is bounded below by each pair's shortest route on the
        empty board (other colours' endpoints excluded) and above by the solution found. Every
        start action begins an optimal solution (the colours' order is free and a path may be
        drawn from either end). ``states`` is a lower bound: the states a small breadth-first
        search meets. Extra figures: cells, pairs, route-search nodes."""
        from longpuzzle.solvers.profile import Profile, StateGraph

        t0 = time.perf_counter()
        p = get_puzzle(level.game)
        rows, cols, k = (int(x) for x in level.lv[:3])
        r = self.solve(level, level.initial, budget or 2_000_000)
        lower = sum(shortest_route(rows, cols, int(level.lv[3 + 2 * c]), int(level.lv[4 + 2 * c]),
                                   [int(level.lv[3 + 2 * o + e]) for o in range(k) for e in (0, 1) if o != c]) or 0
                    for c in range(k))
        g = StateGraph(level, budget=STATES_SAMPLE)
        legal = p.legal_moves(level, level.initial)
        prof = Profile(level.id, level.game, r.status, states=g.n, states_exact=g.complete,
                       first_moves=len(legal), method="routes",
                       extra={"cells": rows * cols, "pairs": k, "search_nodes": int(r.states)})
        if r.status == "solvable":
            prof.lower_bound, prof.upper_bound = lower, r.length
            prof.optimal = r.length if lower == r.length else None
            prof.optimal_first_moves = 2 * k
            prof.solution = list(r.routes or [])
        elif r.status == "unsolvable":
            prof.optimal_first_moves = 0
        prof.seconds = time.perf_counter() - t0
        return prof


STATES_SAMPLE = 2_000       # states counted (as a lower bound) for the profile


def shortest_route(rows, cols, a, b, avoid) -> int | None:
    """Cells of the shortest 4-connected route from cell a to cell b on an empty board that
    avoids the cells ``avoid`` (other colours' endpoints); None if there is none."""
    from collections import deque

    bad = set(avoid)
    dist = {a: 1}
    q = deque([a])
    while q:
        u = q.popleft()
        if u == b:
            return dist[u]
        r, c = divmod(u, cols)
        for rr, cc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
            if 0 <= rr < rows and 0 <= cc < cols:
                v = rr * cols + cc
                if v not in dist and v not in bad:
                    dist[v] = dist[u] + 1
                    q.append(v)
    return None


KNOWLEDGE = ColorConnectKnowledge()
