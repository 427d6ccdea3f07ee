"""The search core: compiled exhaustive search specialised per game, and its Python driver.

    solve(level, ...)        -> Result   shortest solution (or best found + lower bound)
    certify(level, state)    -> Result   solvable / dead end / unknown, for any state
    explore(level, state)    -> Result   breadth-first search of the whole reachable space

Statuses: ``solvable`` (a solution is given as move text), ``unsolvable`` (the whole
reachable space was exhausted without a solved state: a certificate), ``unknown`` (the state
budget ran out: never reported as either).
"""

from __future__ import annotations

import hashlib
import inspect
import time
import weakref
from dataclasses import dataclass, field

import numpy as np

from longpuzzle.engine.catalog import load_level
from longpuzzle.engine.protocol import OK, Level
from longpuzzle.engine.registry import get_puzzle
from longpuzzle.engine.specialize import specialize
from longpuzzle.solvers.knowledge import knowledge
from longpuzzle.solvers.template import CORE, DEFAULT_HOOKS

BFS, BEST_FIRST, DFS = 0, 1, 2
DEFAULT_BUDGET = 20_000_000
HOOKS = ("pack", "unpack", "expand", "heuristic", "successors")
BYTES_PER_STATE_FIXED = 4 + 2 + 2      # parent int32, action int16, g int16 (+ keys, table)


@dataclass
class Result:
    level: str
    status: str                          # "solvable" | "unsolvable" | "unknown"
    actions: list[int] = field(default_factory=list)
    moves: list[str] = field(default_factory=list)
    optimal: bool = False
    lower_bound: int | None = None       # proven lower bound on the optimal length
    states: int = 0                      # states stored (visited) by the search(es)
    seconds: float = 0.0
    method: str = ""
    routes: list[str] | None = None      # Color Connect: the solution as whole routes

    @property
    def length(self) -> int | None:
        return len(self.actions) if self.status == "solvable" else None

    def as_dict(self) -> dict:
        d = {"level": self.level, "status": self.status, "moves": list(self.moves), "length": self.length,
             "optimal": bool(self.optimal), "states": int(self.states), "seconds": round(self.seconds, 4)}
        if self.lower_bound is not None:
            d["lower_bound"] = int(self.lower_bound)
        if self.method:
            d["method"] = self.method
        if self.routes:
            d["routes"] = list(self.routes)
        return d


def search_kernels(game: str):
    """The compiled search module of a game (generated once, cached on disk)."""
    p = get_puzzle(game)
    k = knowledge(game)
    parts = ["import numpy as np\nfrom numba import njit\n"]
    mod = k.kernels
    if mod is not None:
        src = inspect.getsource(mod)
        digest = hashlib.sha256(src.encode()).hexdigest()[:16]
        parts.append(f"# knowledge kernels {mod.__name__} sha {digest}\n")
    for name in HOOKS:
        if mod is not None and hasattr(mod, name):
            parts.append(f"from {mod.__name__} import {name}  # noqa: F401\n")
        else:
            parts.append(DEFAULT_HOOKS[name])
    parts.append(CORE)
    return specialize(p, "".join(parts), "search")


def _writable(state: np.ndarray, level: Level) -> np.ndarray:
    return np.array(state, dtype=level.initial.dtype, copy=True)


@dataclass
class Raw:
    status: int
    goal: int
    n: int
    keys: np.ndarray
    parent: np.ndarray
    action: np.ndarray
    lower: int
    seconds: float


_AUX: "weakref.WeakKeyDictionary[Level, tuple[np.ndarray, int]]" = weakref.WeakKeyDictionary()
_MEM = [0.0, 0]


def level_aux(level: Level) -> tuple[np.ndarray, int]:
    """(aux, words) of a level, made once per Level object."""
    got = _AUX.get(level)
    if got is None:
        k = knowledge(level.game)
        got = _AUX[level] = (k.aux(level), k.words(level))
    return got


def run(level: Level, state: np.ndarray, mode: int, *, weight: int = 1, budget: int = DEFAULT_BUDGET,
        stop_at_goal: bool = True, aux: np.ndarray | None = None, upper: int = 1 << 30) -> Raw:
    mod = search_kernels(level.game)
    budget = min(int(budget), memory_budget(level))
    default_aux, w = level_aux(level)
    aux = default_aux if aux is None else aux
    t0 = time.perf_counter()
    st, goal, n, keys, parent, action, _g, lower = mod.search(
        level.lv, aux, _writable(state, level), np.int64(w), np.int64(mode), np.int64(weight),
        np.int64(budget), np.int64(level.n_actions), bool(stop_at_goal), np.int64(upper))
    return Raw(int(st), int(goal), int(n), keys, parent, action, int(lower), time.perf_counter() - t0)


def path_actions(level: Level, state: np.ndarray, raw: Raw, aux: np.ndarray | None = None) -> list[int]:
    """Actions from ``state`` to the stored state ``raw.goal``, valid on the real states
    (stored keys may be canonical representatives: each step is matched by key)."""
    k = knowledge(level.game)
    p = get_puzzle(level.game)
    ids = []
    u = raw.goal
    while u > 0:
        ids.append(u)
        u = int(raw.parent[u])
    ids.reverse()
    if not getattr(k, "canonical", False):
        return [int(raw.action[u]) for u in ids]
    mod = search_kernels(level.game)
    default_aux, w = level_aux(level)
    aux = default_aux if aux is None else aux
    key = np.zeros(w, np.uint64)
    cur = _writable(state, level)
    out = []
    for u in ids:
        want = raw.keys[u * w:(u + 1) * w]
        for a in p.legal_moves(level, cur):
            nxt, code = p.step(level, cur, a)
            mod.pack_one(level.lv, aux, nxt, key)
            if np.array_equal(key, want):
                out.append(a)
                cur = nxt
                break
        else:  # pragma: no cover - would mean pack/expand disagree with the rules
            raise RuntimeError(f"solution reconstruction failed on {level.id}")
    return out


def check_solution(level: Level, state: np.ndarray, actions: list[int]) -> bool:
    p = get_puzzle(level.game)
    cur = state
    for a in actions:
        cur, code = p.step(level, cur, a)
        if code != OK:
            return False
    return p.is_solved(level, cur)


def _result(level, status, actions=(), **kw) -> Result:
    p = get_puzzle(level.game)
    acts = [int(a) for a in actions]
    return Result(level.id, status, acts, p.format_moves(level, acts) if status == "solvable" else [], **kw)


def solve(level: Level | str, *, state: np.ndarray | None = None, budget: int = DEFAULT_BUDGET,
          method: str | None = None, time_limit: float | None = None) -> Result:
    """The shortest solution of a level (or of ``state`` in it).

    method: None (the game's default), "bfs" (optimal), "astar" (optimal with the game's
    admissible heuristic), "dfs" (any solution). ``budget`` caps the stored states."""
    level = load_level(level)
    state = level.initial if state is None else state
    k = knowledge(level.game)
    if method is None:
        direct = k.solve(level, state, budget, time_limit=time_limit)
        if direct is not None:
            return direct
        method = k.method
    mode = {"bfs": BFS, "astar": BEST_FIRST, "dfs": DFS}[method]
    raw = run(level, state, mode, budget=budget)
    return from_raw(level, state, raw, optimal=mode != DFS, method=method)


def from_raw(level: Level, state, raw: Raw, *, optimal: bool, method: str) -> Result:
    if raw.status == 1:
        acts = path_actions(level, state, raw)
        return _result(level, "solvable", acts, optimal=optimal, lower_bound=len(acts) if optimal else None,
                       states=raw.n, seconds=raw.seconds, method=method)
    if raw.status == 0:
        return _result(level, "unsolvable", states=raw.n, seconds=raw.seconds, method=method)
    return _result(level, "unknown", states=raw.n, seconds=raw.seconds, method=method,
                   lower_bound=raw.lower if raw.lower >= 0 else None)


def certify(level: Level | str, state: np.ndarray | None = None, *, budget: int = DEFAULT_BUDGET) -> Result:
    """Is ``state`` solvable? ``solvable`` (with a solution, not necessarily shortest),
    ``unsolvable`` (a certified dead end: every reachable state was visited) or ``unknown``."""
    level = load_level(level)
    p = get_puzzle(level.game)
    state = level.initial if state is None else p.validate_state(level, state)
    k = knowledge(level.game)
    t0 = time.perf_counter()
    if k.dead_end(level, state):
        return _result(level, "unsolvable", states=1, seconds=time.perf_counter() - t0, method="predicate")
    raw = run(level, state, DFS, budget=budget)
    res = from_raw(level, state, raw, optimal=False, method="dfs")
    res.seconds = time.perf_counter() - t0
    return res


def explore(level: Level | str, state: np.ndarray | None = None, *, budget: int = DEFAULT_BUDGET) -> Raw:
    """Breadth-first search of every state reachable from ``state`` (no stop at goals)."""
    level = load_level(level)
    state = level.initial if state is None else state
    return run(level, state, BFS, budget=budget, stop_at_goal=False)


def memory_budget(level: Level, fraction: float = 0.6) -> int:
    """Most states that fit in ``fraction`` of the memory available now (the arrays double
    as they grow, and the table peaks at 48 bytes a state just after growing): a search
    stops with ``unknown`` instead of running out of memory."""
    now = time.monotonic()
    if now - _MEM[0] > 1.0:
        _MEM[0], _MEM[1] = now, _available_memory()
    avail = _MEM[1] or None
    if avail is None:
        return 1 << 62
    peak = 2 * (level_aux(level)[1] * 8 + BYTES_PER_STATE_FIXED) + 48
    return max(int(avail * fraction / peak), 1000)


def _available_memory() -> int:
    avail = 0
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    avail = int(line.split()[1]) * 1024
    except OSError:
        pass
    return avail


def bytes_per_state(level: Level) -> float:
    """Memory of one stored state: key words, parent, action and g, and the hash table
    (two int64 a slot, load between 0.35 and 0.7: about 32 bytes on average). The dense
    arrays grow by doubling, so a search may briefly hold up to twice this."""
    return knowledge(level.game).words(level) * 8 + BYTES_PER_STATE_FIXED + 32


def informed_solve(level: Level, state, budget: int, weights=(3,), *, prune_aux=None, fast_share: float = 0.25) -> Result:
    """Weighted best-first searches (f = g + w h) for a solution of length U, then A*
    (f = g + h, admissible consistent h) over the states with g + h < U. Exhausting that space
    proves U optimal; a goal popped by A* is optimal; if the budget runs out, the smallest
    open f is a proven lower bound. ``prune_aux``: aux for the weighted phase only (e.g. with
    extra pruning that is not proven to keep an optimal solution)."""
    k = knowledge(level.game)
    t0 = time.perf_counter()
    total = 0
    best = None
    share = max(int(budget * fast_share), 1000)
    for wgt in weights:
        aux = prune_aux if prune_aux is not None else k.aux(level)
        raw = run(level, state, BEST_FIRST, weight=wgt, budget=share, aux=aux)
        total += raw.n
        if raw.status == 1:
            acts = path_actions(level, state, raw, aux)
            if best is None or len(acts) < len(best):
                best = acts
        elif raw.status == 0 and best is None:
            break
    upper = len(best) if best is not None else 1 << 30
    raw = run(level, state, BEST_FIRST, weight=1, budget=max(budget - total, 1000), upper=upper)
    total += raw.n
    secs = time.perf_counter() - t0
    if raw.status == 1:
        acts = path_actions(level, state, raw)
        return _result(level, "solvable", acts, optimal=True, lower_bound=len(acts), states=total,
                       seconds=secs, method="astar")
    if raw.status == 0:
        if best is None:
            return _result(level, "unsolvable", states=total, seconds=secs, method="astar")
        return _result(level, "solvable", best, optimal=True, lower_bound=len(best), states=total,
                       seconds=secs, method="wastar+astar")
    lower = raw.lower if raw.lower >= 0 else None
    if best is None:
        return _result(level, "unknown", states=total, seconds=secs, method="astar", lower_bound=lower)
    return _result(level, "solvable", best, optimal=lower == len(best), lower_bound=lower,
                   states=total, seconds=secs, method="wastar+astar")
