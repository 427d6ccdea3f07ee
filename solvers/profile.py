"""Certified difficulty figures of a level: the whole reachable state graph, searched once.

    p = profile("maze_paint/hard/3")        # Profile: solvable, optimal, states, ...
    p.as_dict()

Figures (every one certified by exhaustive search, or marked as a bound):

    status               solvable / unsolvable / unknown (the state budget ran out first)
    optimal              the optimal solution length in moves (None where only bounds are proven)
    lower_bound, upper_bound
                         proven bounds on the optimal length (equal to it where it is known)
    states               reachable states, counted up to the solver's exact symmetries (Nut and
                         Bolt: bolts are interchangeable); a won level ends the episode, so solved
                         states are terminal (nothing reachable only through a win is counted);
                         ``states_exact`` False: a lower bound (the budget ran out)
    dead_end_density     games with dead ends (puzzle.dead_ends): the share of reachable states
                         from which no solved state can be reached (exhaustive), or of states
                         sampled by random play and certified (``dead_end_method`` "sampled")
    optimal_first_moves  how many legal first moves begin an optimal solution
    first_moves          how many legal first moves there are

The generic method is one breadth-first search that stores the state graph (successor ids
per state, CSR arrays) through the game's own solver hooks (solvers/template.py contracts),
then a backward breadth-first search from the solved states gives every state's distance to
the nearest win: optimal = distance of the start, a dead end = a state with no distance.
A game's knowledge may replace it (``Knowledge.profile``): Truck Escape counts its states
without enumerating them, Color Connect works on routes.

``StateGraph`` is also the generators' tool for reverse play: a search from a SOLVED board
without terminal states gives every position connected to it with its distance to a win.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
from numba import njit

from longpuzzle.engine.catalog import load_level
from longpuzzle.engine.protocol import OK, Level
from longpuzzle.engine.registry import get_puzzle
from longpuzzle.engine.specialize import specialize
from longpuzzle.solvers.game_knowledge import knowledge

DEFAULT_PROFILE_BUDGET = 10_000_000
SAMPLE_WALKS = 200           # random-play dead-end sampling (spaces past the budget)
SAMPLE_CERTIFY_BUDGET = 200_000


@dataclass
class Profile:
    level: str
    game: str
    status: str                               # "solvable" | "unsolvable" | "unknown"
    optimal: int | None = None
    lower_bound: int | None = None
    upper_bound: int | None = None
    states: int = 0
    states_exact: bool = False
    dead_end_density: float | None = None
    dead_end_method: str = ""                 # "exhaustive" | "sampled" | "" (game without dead ends)
    dead_end_samples: int = 0                 # sampled states certified (sampled method)
    optimal_first_moves: int | None = None
    first_moves: int = 0
    seconds: float = 0.0
    method: str = ""
    solution: list[str] = field(default_factory=list)     # move texts of an optimal (or best) solution
    extra: dict = field(default_factory=dict)             # game-specific figures

    def as_dict(self) -> dict:
        d = {"level": self.level, "game": self.game, "status": self.status, "optimal": self.optimal,
             "lower_bound": self.lower_bound, "upper_bound": self.upper_bound, "states": int(self.states),
             "states_exact": bool(self.states_exact), "dead_end_density": self.dead_end_density,
             "dead_end_method": self.dead_end_method, "optimal_first_moves": self.optimal_first_moves,
             "first_moves": int(self.first_moves), "seconds": round(self.seconds, 4), "method": self.method}
        if self.dead_end_method == "sampled":
            d["dead_end_samples"] = self.dead_end_samples
        if self.extra:
            d.update(self.extra)
        return d

    def figures(self) -> dict:
        """The numeric figures a tier is described by (see longpuzzle.solvers.generators.tiers):
        ``optimal`` is the optimum or, where only bounds are proven, the lower bound;
        ``lower_bound`` / ``upper_bound`` the proven bounds; ``states_exact`` whether
        ``states`` is the count or a lower bound."""
        exact = self.optimal is not None
        out = {"optimal": self.optimal if exact else self.lower_bound,
               "lower_bound": self.optimal if exact else self.lower_bound,
               "upper_bound": self.optimal if exact else self.upper_bound,
               "states": self.states, "states_exact": self.states_exact,
               "optimal_first_moves": self.optimal_first_moves, "dead_end_density": self.dead_end_density}
        out.update({k: v for k, v in self.extra.items() if isinstance(v, (int, float)) and not isinstance(v, bool)})
        return out


GRAPH_TEMPLATE = '''
from longpuzzle.solvers.template import prefetch, _GOLD, _HI, _LO  # noqa: F401


@njit(cache=True)
def graph_hash(q, qoff, w):
    """The search's key hash (solvers/template.key_hash) of q[qoff:qoff+w]."""
    hx = np.uint64(0)
    sd = _GOLD
    for j in range(w):
        x = q[qoff + j] ^ sd
        sd += _GOLD
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        hx ^= x ^ (x >> np.uint64(31))
    return hx


@njit(cache=True)
def graph_probe(keys, tk, tid, meta, w, q, qoff, hx):
    """(slot, id) of the key q[qoff:qoff+w] (hash hx) in the table over ``keys``; id -1:
    absent, and slot is the empty slot where it goes (-1: the one-word key of hash 0, kept in
    meta[2]). Layout as the search's (solvers/template.py): one-word keys store the hash (a
    bijection of the key) with the id in tid; longer keys store (hash & HI) | (id + 1) and
    are confirmed against the stored words."""
    bits = meta[0]
    mask = (np.int64(1) << bits) - 1
    slot = np.int64(hx >> np.uint64(64 - bits))
    if w == 1:
        if hx == 0:
            return np.int64(-1), meta[2] - 1
        t = tk[slot]
        while t != hx and t != 0:
            slot = (slot + 1) & mask
            t = tk[slot]
        if t == hx:
            return slot, np.int64(tid[slot])
        return slot, np.int64(-1)
    hi = hx & _HI
    t = tk[slot]
    while t != 0:
        if (t & _HI) == hi:
            b = (np.int64(t & _LO) - 1) * w
            j = 0
            while j < w and keys[b + j] == q[qoff + j]:
                j += 1
            if j == w:
                return slot, np.int64(t & _LO) - 1
        slot = (slot + 1) & mask
        t = tk[slot]
    return slot, np.int64(-1)


@njit(cache=True)
def graph_put(tk, tid, meta, w, slot, hx, i):
    """Enter id i (hash hx) at the slot graph_probe found for it."""
    if w == 1:
        if slot < 0:
            meta[2] = i + 1
        else:
            tk[slot] = hx
            tid[slot] = i
    else:
        tk[slot] = (hx & _HI) | np.uint64(i + 1)
    meta[1] += 1


@njit(cache=True)
def graph_root(lv, aux, w, init, keys, tk, tid, meta, solvedf):
    """Store ``init`` as state 0."""
    pack(lv, aux, init, keys, 0)
    hx = graph_hash(keys, 0, w)
    slot, found = graph_probe(keys, tk, tid, meta, w, keys, 0, hx)
    graph_put(tk, tid, meta, w, slot, hx, 0)
    solvedf[0] = is_solved(lv, init)


@njit(cache=True, nogil=True)
def graph_bfs(lv, aux, w, terminal, max_states, keys, tk, tid, meta, off, edges, solvedf, ctl,
              cur, tmp, succ, skflat, skeys, acts, solvedv, hv, hs):
    """Breadth-first search storing the graph: state u's successor ids are
    edges[off[u]:off[u+1]] (one entry per generated move, repeats kept). ``terminal``: solved
    states are not expanded. ctl = [n stored, head (next state to expand), edges stored,
    status]. A state's successors are all hashed and their home slots prefetched before any
    is probed. Returns 0 done (status 0 complete, -1 the budget ran out), 1 the key array is
    full, 2 the table is over half full, 3 the edge array is full (grow, then call again)."""
    n = ctl[0]
    head = ctl[1]
    ne = ctl[2]
    na = succ.shape[0]
    cap = keys.shape[0] // w
    while head < n:
        if n + na > cap or 2 * (meta[1] + na) > (np.int64(1) << meta[0]) or ne + na > edges.shape[0]:
            ctl[0] = n
            ctl[1] = head
            ctl[2] = ne
            if n + na > cap:
                return 1
            if ne + na > edges.shape[0]:
                return 3
            return 2
        u = head
        off[u] = ne
        if terminal and solvedf[u]:
            head += 1
            continue
        if UNPACK_FOR_SUCCESSORS:
            unpack(lv, aux, keys, u * w, cur)
        c = successors(lv, aux, cur, keys, u * w, succ, skeys, acts, solvedv, hv, False, 0)
        sh = np.uint64(64 - meta[0])
        for i in range(c):
            hx = graph_hash(skflat, i * w, w)
            hs[i] = hx
            prefetch(tk, np.int64(hx >> sh))
        for i in range(c):
            hx = hs[i]
            slot, found = graph_probe(keys, tk, tid, meta, w, skflat, i * w, hx)
            if found < 0:
                if n >= max_states:
                    ctl[0] = n
                    ctl[1] = head
                    ctl[2] = ne
                    ctl[3] = -1
                    return 0
                for j in range(w):
                    keys[n * w + j] = skflat[i * w + j]
                graph_put(tk, tid, meta, w, slot, hx, n)
                if terminal:
                    # the parent is not solved: the hook's flag is exact (the search relies on it too)
                    solvedf[n] = solvedv[i]
                else:
                    # from a solved parent a hook may mark only the moves that win: the rules decide
                    unpack(lv, aux, keys, n * w, tmp)
                    solvedf[n] = is_solved(lv, tmp)
                found = n
                n += 1
            edges[ne] = found
            ne += 1
        head += 1
    off[n] = ne
    ctl[0] = n
    ctl[1] = head
    ctl[2] = ne
    ctl[3] = 0
    return 0


@njit(cache=True)
def graph_lookup(lv, aux, w, keys, tk, tid, meta, s, key):
    """The id of state s in the graph (-1: not in it); key: W scratch words."""
    for j in range(w):
        key[j] = 0
    pack(lv, aux, s, key, 0)
    slot, found = graph_probe(keys, tk, tid, meta, w, key, 0, graph_hash(key, 0, w))
    return found
'''


@njit(cache=True)
def _reverse_edges(n, off, edges, roff, rsrc):
    """Predecessor lists (a counting sort of the edges by target): the predecessors of v
    are rsrc[roff[v]:roff[v+1]] (roff: prefix sums of the in-degrees)."""
    fill = roff[:n].copy()
    for u in range(n):
        for e in range(off[u], off[u + 1]):
            v = edges[e]
            rsrc[fill[v]] = u
            fill[v] += 1


@njit(cache=True)
def _bfs(off, edges, dist, queue, qn):
    """Breadth-first search over the edges of u (edges[off[u]:off[u+1]]) from the qn states
    in queue[:qn] (dist 0); dist[u] < 0 marks a state not reached yet and becomes its
    distance. Returns how many states were reached (the first of queue in order)."""
    h = 0
    while h < qn:
        u = queue[h]
        h += 1
        for e in range(off[u], off[u + 1]):
            v = edges[e]
            if dist[v] < 0:
                dist[v] = dist[u] + 1
                queue[qn] = v
                qn += 1
    return qn


@njit(cache=True)
def _backward_distances(n, roff, rsrc, solved, dist, queue):
    """dist[u] = moves from u to the nearest solved state (-1: none), by a breadth-first
    search over reversed edges (predecessors of v: rsrc[roff[v]:roff[v+1]])."""
    qn = 0
    for u in range(n):
        if solved[u]:
            dist[u] = 0
            queue[qn] = u
            qn += 1
        else:
            dist[u] = -1
    return _bfs(roff, rsrc, dist, queue, qn)


@njit(cache=True)
def _forward_reach(n, off, edges, start, solved, terminal, seen, queue):
    """Mark the states reachable from ``start`` (solved states not expanded if terminal)."""
    for u in range(n):
        seen[u] = False
    seen[start] = True
    queue[0] = start
    qn = 1
    h = 0
    while h < qn:
        u = queue[h]
        h += 1
        if terminal and solved[u]:
            continue
        for e in range(off[u], off[u + 1]):
            v = edges[e]
            if not seen[v]:
                seen[v] = True
                queue[qn] = v
                qn += 1
    return qn


@njit(cache=True)
def _depths(n, off, edges, depth, queue):
    """depth[u] = moves from state 0 to u by a breadth-first search over the stored edges
    (-1: not reached). In a graph stored by breadth-first search these are the search's own
    depths, also for states whose successors were not stored."""
    for u in range(n):
        depth[u] = -1
    depth[0] = 0
    queue[0] = 0
    return _bfs(off, edges, depth, queue, 1)


_GRAPH_MODULES: dict = {}


def graph_kernels(game: str):
    got = _GRAPH_MODULES.get(game)
    if got is None:
        from longpuzzle.solvers.core import hook_source
        got = _GRAPH_MODULES[game] = specialize(get_puzzle(game), hook_source(game) + GRAPH_TEMPLATE, "graph")
    return got


class StateGraph:
    """Every state reachable from ``state`` (default: the level's start) with its successor
    ids, stored by one breadth-first search. ``terminal``: solved states are not expanded
    (the game ends at a win). ``complete`` is False when ``budget`` states were stored before
    the search ended (then the graph is a part of the space and distances are not proven).

        g = StateGraph(level)
        g.n, g.complete, g.solved (bool per state), g.off / g.edges (CSR successor ids)
        g.expanded      states whose successors are stored (ids below it; n when complete)
        g.distances()   -> int32 per state: moves to the nearest win (-1: dead end)
        g.certified_depth() -> every state within this many moves of the start is expanded
        g.lookup(state) -> id or -1
        g.state(i)      -> the (canonical) state array of id i
    """

    def __init__(self, level: Level | str, state: np.ndarray | None = None, *, terminal: bool = True,
                 budget: int = DEFAULT_PROFILE_BUDGET):
        from longpuzzle.solvers.core import level_aux
        from longpuzzle.solvers.template import table_arrays, table_rehash

        self.level = level = load_level(level)
        self.mod = mod = graph_kernels(level.game)
        self.aux, self.w = level_aux(level)
        w = self.w
        init = np.array(level.initial if state is None else state, dtype=level.initial.dtype, copy=True)
        na = int(level.n_actions)
        t0 = time.perf_counter()
        cap = 4096
        keys = np.zeros(cap * w, np.uint64)
        bits = 13
        tk, tid = table_arrays(bits, w, ids=True)
        meta = np.array([bits, 0, 0, 0], np.int64)
        off = np.zeros(cap + 1, np.int64)
        edges = np.empty(cap * 4, np.int32)
        solvedf = np.zeros(cap, np.bool_)
        ctl = np.zeros(4, np.int64)
        cur = init.copy()
        succ = np.empty((na, init.shape[0]), init.dtype)
        skflat = np.zeros(na * w, np.uint64)
        skeys = skflat.reshape(na, w)
        acts = np.empty(na, np.int64)
        solvedv = np.zeros(na, np.bool_)
        hv = np.zeros(na, np.int64)
        hs = np.zeros(na, np.uint64)
        tmp = init.copy()
        w64 = np.int64(w)
        mod.graph_root(level.lv, self.aux, w64, init, keys, tk, tid, meta, solvedf)
        ctl[0] = 1
        limit = max(int(budget), 1)
        while True:
            r = mod.graph_bfs(level.lv, self.aux, w64, bool(terminal), np.int64(limit), keys, tk, tid, meta, off,
                              edges, solvedf, ctl, cur, tmp, succ, skflat, skeys, acts, solvedv, hv, hs)
            if r == 0:
                break
            if r == 1:
                cap *= 2
                keys = _grow(keys, cap * w)
                off = _grow(off, cap + 1)
                solvedf = _grow(solvedf, cap)
            elif r == 2:
                tk2, tid2 = table_arrays(int(meta[0]) + 1, w, ids=True)
                table_rehash(tk, tid, tk2, tid2, meta, w64)
                tk, tid = tk2, tid2
            else:
                edges = _grow(edges, edges.shape[0] * 2)
        self.n = n = int(ctl[0])
        self.complete = int(ctl[3]) == 0
        self.expanded = n
        if not self.complete:        # the head state's successors are stored in part, later states' not at all
            h = int(ctl[1])
            off[h + 1:n + 1] = int(ctl[2])
            self.expanded = h
        self.keys, self.tk, self.tid, self.meta = keys, tk, tid, meta
        self.off = off[:n + 1]
        self.edges = edges[:int(self.off[n])]
        self.solved = solvedf[:n]
        self.terminal = bool(terminal)
        self.seconds = time.perf_counter() - t0
        self._dist = None
        self._depth = None

    def distances(self) -> np.ndarray:
        """Moves from each state to the nearest solved state (-1: none reachable)."""
        if self._dist is None:
            n = self.n
            roff = np.zeros(n + 1, np.int64)
            np.cumsum(np.bincount(self.edges, minlength=n), out=roff[1:])
            rsrc = np.empty(self.edges.shape[0], np.int32)
            _reverse_edges(n, self.off, self.edges, roff, rsrc)
            dist = np.empty(n, np.int32)
            _backward_distances(n, roff, rsrc, self.solved, dist, np.empty(n, np.int32))
            self._dist = dist
        return self._dist

    def depths(self) -> np.ndarray:
        """Moves from the start to each state (int32; the breadth-first search's own depths,
        also for states whose successors were not stored)."""
        if self._depth is None:
            depth = np.empty(self.n, np.int32)
            _depths(self.n, self.off, self.edges, depth, np.empty(self.n, np.int32))
            self._depth = depth
        return self._depth

    def certified_depth(self) -> int:
        """A depth D such that every state within D moves of the start is stored WITH its
        successors (the whole graph: its deepest state). States are stored in breadth-first
        order, so the expanded ones are exactly the first layers: D is the depth of the
        first unexpanded state minus one. Within it a partial graph proves what a whole one
        does: a win at distance d0 <= D + 1 from the start is the optimum (every shorter path
        would stay inside the expanded layers), and so are the distances of the first moves
        that begin an optimal solution."""
        depth = self.depths()
        if self.expanded >= self.n:
            return int(depth.max()) if self.n else 0
        return int(depth[self.expanded]) - 1

    def reachable(self, start: int = 0, terminal: bool = True) -> np.ndarray:
        """Bool per state: reachable from state ``start`` (solved states not expanded if terminal)."""
        seen = np.zeros(self.n, np.bool_)
        _forward_reach(self.n, self.off, self.edges, int(start), self.solved, bool(terminal), seen,
                       np.empty(self.n, np.int32))
        return seen

    def lookup(self, state: np.ndarray) -> int:
        key = np.zeros(self.w, np.uint64)
        s = np.ascontiguousarray(state, dtype=self.level.initial.dtype)
        return int(self.mod.graph_lookup(self.level.lv, self.aux, np.int64(self.w), self.keys, self.tk, self.tid,
                                         self.meta, s, key))

    def state(self, i: int) -> np.ndarray:
        from longpuzzle.solvers.core import search_kernels
        s = np.empty_like(self.level.initial)
        search_kernels(self.level.game).unpack_one(self.level.lv, self.aux,
                                                   np.ascontiguousarray(self.keys[i * self.w:(i + 1) * self.w]), s)
        return s

    def first_moves(self, state: np.ndarray) -> list[tuple[int, int]]:
        """(action, successor id) for every legal move of ``state`` (id -1: not in the graph)."""
        p = get_puzzle(self.level.game)
        out = []
        for a in p.legal_moves(self.level, state):
            nxt, code = p.step(self.level, state, a)
            if code == OK:
                out.append((a, self.lookup(nxt)))
        return out

    def path_to_win(self, state: np.ndarray) -> list[int] | None:
        """Actions of a shortest solution from ``state`` (a state of the graph), following
        decreasing distances; None if no win is reachable."""
        p = get_puzzle(self.level.game)
        dist = self.distances()
        cur = np.array(state, copy=True)
        u = self.lookup(cur)
        if u < 0 or dist[u] < 0:
            return None
        acts = []
        while dist[u] > 0:
            for a, v in self.first_moves(cur):
                if v >= 0 and dist[v] == dist[u] - 1:
                    cur, _ = p.step(self.level, cur, a)
                    acts.append(a)
                    u = v
                    break
            else:  # pragma: no cover - the graph and the rules disagree
                raise RuntimeError(f"no move lowers the distance on {self.level.id}")
        return acts


def _grow(a: np.ndarray, n: int) -> np.ndarray:
    b = np.zeros(n, a.dtype)
    b[:a.shape[0]] = a
    return b


def profile(level: Level | str, *, budget: int = DEFAULT_PROFILE_BUDGET, solution: bool = True) -> Profile:
    """The certified difficulty figures of a level (see the module docstring)."""
    level = load_level(level)
    k = knowledge(level.game)
    own = getattr(k, "profile", None)
    if own is not None:
        got = own(level, budget=budget)
        if got is not None:
            return got
    return graph_profile(level, budget=budget, solution=solution)


def graph_profile(level: Level, *, budget: int = DEFAULT_PROFILE_BUDGET, solution: bool = True,
                  graph: StateGraph | None = None, bounded: bool = True) -> Profile:
    """The generic profile: the whole state graph from the start (solved states terminal).
    Past the budget: what the graph's whole layers prove, else (``bounded``) the game's
    solver for bounds and sampled dead ends, or (not ``bounded``) status ``unknown``."""
    t0 = time.perf_counter()
    p = get_puzzle(level.game)
    g = graph if graph is not None else StateGraph(level, budget=budget)
    legal = p.legal_moves(level, level.initial)
    prof = Profile(level.id, level.game, "unknown", states=g.n, states_exact=g.complete,
                   first_moves=len(legal), method="graph")
    if g.complete:
        dist = g.distances()
        d0 = int(dist[0])
        if d0 >= 0:
            _optimum(level, g, dist, prof, solution)
        else:
            prof.status = "unsolvable"
            prof.optimal_first_moves = 0
        if p.dead_ends:
            prof.dead_end_density = float(np.count_nonzero(dist < 0)) / g.n
            prof.dead_end_method = "exhaustive"
    elif not _layered(level, g, prof, solution) and bounded:
        _bounded(level, prof, budget)
    prof.seconds = time.perf_counter() - t0
    return prof


def _optimum(level: Level, g: StateGraph, dist, prof: Profile, solution: bool) -> None:
    """A solvable start's figures from the graph's distances to a win (``dist``, exact from
    the start): the optimum as both bounds, the optimal first moves, the solution if asked."""
    d0 = int(dist[0])
    prof.status = "solvable"
    prof.optimal = prof.lower_bound = prof.upper_bound = d0
    prof.optimal_first_moves = 0 if d0 == 0 else sum(
        1 for _, v in g.first_moves(level.initial) if v >= 0 and dist[v] == d0 - 1)
    if solution:
        prof.solution = get_puzzle(level.game).format_moves(level, g.path_to_win(level.initial))


def _layered(level: Level, g: StateGraph, prof: Profile, solution: bool) -> bool:
    """Figures of a graph cut off by its budget that its breadth-first layers still prove
    (StateGraph.certified_depth): the optimum and the optimal first moves when a win lies
    within one move past the expanded layers; states are then a lower bound (the budget) and
    dead ends are sampled. False when the layers prove nothing."""
    dist = g.distances()
    d0 = int(dist[0])
    if d0 < 0 or g.certified_depth() < d0 - 1:
        return False
    p = get_puzzle(level.game)
    _optimum(level, g, dist, prof, solution)
    prof.method = f"graph, first {g.certified_depth()} layers whole"
    if p.dead_ends:
        dens, n = sampled_dead_end_density(level)
        prof.dead_end_density, prof.dead_end_samples = dens, n
        prof.dead_end_method = "sampled"
    return True


def _bounded(level: Level, prof: Profile, budget: int) -> None:
    """Figures of a level whose space is larger than the budget: the game's own solver for
    the length (optimal or proven bounds), random-play sampling for dead ends."""
    from longpuzzle.solvers.core import solve
    r = solve(level, budget=budget)
    prof.method = f"graph>budget; {r.method or 'search'}"
    if r.status == "solvable":
        prof.status = "solvable"
        prof.upper_bound = r.length
        prof.lower_bound = r.lower_bound if r.lower_bound is not None else (r.length if r.optimal else None)
        prof.optimal = r.length if r.optimal else None
        prof.solution = list(r.routes or r.moves)
    elif r.status == "unsolvable":
        prof.status = "unsolvable"
    else:
        prof.lower_bound = r.lower_bound
    if get_puzzle(level.game).dead_ends:
        dens, n = sampled_dead_end_density(level)
        prof.dead_end_density, prof.dead_end_samples = dens, n
        prof.dead_end_method = "sampled"


def sampled_dead_end_density(level: Level, *, walks: int = SAMPLE_WALKS, seed: int = 0,
                             certify_budget: int = SAMPLE_CERTIFY_BUDGET) -> tuple[float | None, int]:
    """Share of certified dead ends among states sampled by random play from the start (each
    walk stops at a random length up to twice the number of actions; states the certificate
    leaves ``unknown`` are not counted). Returns (share or None, states certified)."""
    from longpuzzle.solvers.core import certify
    p = get_puzzle(level.game)
    rng = np.random.default_rng(seed)
    dead = known = 0
    for _ in range(walks):
        cur = level.initial
        steps = int(rng.integers(1, 2 * max(level.n_actions, 1) + 1))
        for _ in range(steps):
            legal = p.legal_moves(level, cur)
            if not legal or p.is_solved(level, cur):
                break
            cur, _ = p.step(level, cur, legal[int(rng.integers(len(legal)))])
        if p.is_solved(level, cur):
            known += 1
            continue
        r = certify(level, cur, budget=certify_budget)
        if r.status == "unknown":
            continue
        known += 1
        dead += r.status == "unsolvable"
    return (dead / known if known else None), known
