"""The search core: compiled exhaustive search specialised per game, and its Python driver.

    solve(level, ...)        -> Result   shortest solution (or best found + lower bound)
    certify(level, state)    -> Result   solvable / dead end / unknown, for any state
    explore(level, state)    -> Result   breadth-first search of the whole reachable space

Statuses: ``solvable`` (a solution is given as move text), ``unsolvable`` (the whole
reachable space was exhausted without a solved state: a certificate), ``unknown`` (the state
budget ran out: never reported as either).
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import time
import weakref
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from longpuzzle.engine.catalog import load_level
from longpuzzle.engine.protocol import OK, Level
from longpuzzle.engine.registry import get_puzzle
from longpuzzle.engine.specialize import specialize
from longpuzzle.solvers.game_knowledge import knowledge
from longpuzzle.solvers import template as template_module
from longpuzzle.solvers.template import MAX_IDS, MAX_TABLE_BITS, table_arrays, table_bytes

BFS, BEST_FIRST, DFS = 0, 1, 2
DEFAULT_BUDGET = 20_000_000
HOOKS = ("pack", "unpack", "expand", "heuristic", "successors")
BYTES_PER_STATE_FIXED = 4 + 2 + 2      # parent int32, action int16, g int16 (best-first only; + keys, table)
RESERVE_AT = 1 << 21                   # states: dense arrays stop doubling here (see run)
RESERVE_TABLE_BITS = 22               # from this table size on, room for the whole budget (see _grow_table)
BATCH_SUCCESSORS = 128                 # breadth- and depth-first search probe successors in batches
BATCH_PARENTS = 64                     # of about this many (from at most this many states)


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
    note: str = ""                       # why an ``unknown`` search stopped, if not the budget

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
        if self.note:
            d["note"] = self.note
        return d


_SEARCH_MODULES: dict = {}


def search_kernels(game: str):
    """The compiled search module of a game (generated once, cached on disk; one lookup
    per process)."""
    got = _SEARCH_MODULES.get(game)
    if got is not None:
        return got
    got = _SEARCH_MODULES[game] = specialize(get_puzzle(game), hook_source(game) + _search_source()[1], "search")
    return got


SEARCH_SOURCE = Path(__file__).with_name("search_source.py")


@functools.cache
def _search_source() -> tuple[dict[str, str], str]:
    """(the generic hooks' source by name, the search's source), read as text from
    search_source.py (never imported): its top-level functions, each whole with its
    decorators; the search's text opens with the file's imports of the table kernels.
    Its docstring and TYPE_CHECKING block (what a generated module's head binds) are left
    out."""
    text = SEARCH_SOURCE.read_text(encoding="utf-8")
    imports = [ln for ln in text.splitlines(keepends=True) if ln.startswith(f"from {template_module.__name__} import ")]
    funcs = top_level_functions(text)
    hooks = {name: src for name, src in funcs.items() if name in HOOKS}
    search = [src for name, src in funcs.items() if name not in HOOKS]
    return hooks, "\n\n" + "".join(imports) + "\n\n" + "\n\n".join(search)


def top_level_functions(text: str) -> dict[str, str]:
    """Every top-level function of module source ``text``, by name in order, whole with its
    decorators, found by its lines: a line at column 0 opens a statement (``@`` lines and
    the ``def`` they decorate one); indented, blank and comment lines continue it, less the
    blank and comment lines it ends with. A fiftieth of the cost of parsing the module
    (start-up); the module docstring must not hold a line starting ``def `` or ``@`` (the
    tests check that this finds what ast does in search_source.py)."""
    blocks: list[list] = []                    # [name, or "@" while only decorators, or None; lines]
    for line in text.splitlines(keepends=True):
        if line[:1] in (" ", "\t", "\n", "\r", "#"):
            if blocks:
                blocks[-1][1].append(line)
            continue
        name = line[4:line.index("(")] if line.startswith("def ") and "(" in line else \
            "@" if line.startswith("@") else None
        if blocks and blocks[-1][0] == "@" and name is not None:    # the def, or one more decorator
            if name != "@":
                blocks[-1][0] = name
            blocks[-1][1].append(line)
        else:
            blocks.append([name, [line]])
    out = {}
    for name, lines in blocks:
        if name not in (None, "@"):
            while not lines[-1].strip() or lines[-1].startswith("#"):
                lines.pop()
            out[name] = "".join(lines)
    return out


def hook_source(game: str) -> str:
    """The source text of a game's solver hooks (pack, unpack, expand, heuristic, successors:
    imported from its knowledge kernels, else the generic ones), with the imports and the
    UNPACK_FOR_SUCCESSORS flag they need: the head of every generated solver module (the
    search here, the state graph of solvers/profile.py)."""
    k = knowledge(game)
    parts = ["import numpy as np\nfrom numba import njit\n"]
    tsrc = inspect.getsource(template_module)
    parts.append(f"# table kernels {template_module.__name__} sha {hashlib.sha256(tsrc.encode()).hexdigest()[:16]}\n")
    mod = k.kernels
    if mod is not None:
        src = inspect.getsource(mod)
        digest = hashlib.sha256(src.encode()).hexdigest()[:16]
        parts.append(f"# knowledge kernels {mod.__name__} sha {digest}\n")
    # a knowledge ``successors`` that reads only the parent's key sets SUCCESSORS_USE_STATE = False
    # in its kernels module: breadth- and depth-first search then do not unpack states at all
    use_state = mod is None or not hasattr(mod, "successors") or bool(getattr(mod, "SUCCESSORS_USE_STATE", True))
    parts.append(f"UNPACK_FOR_SUCCESSORS = {use_state}\n")
    for name in HOOKS:
        if mod is not None and hasattr(mod, name):
            parts.append(f"from {mod.__name__} import {name}  # noqa: F401\n")
        else:
            parts.append("\n\n" + _search_source()[0][name])
    return "".join(parts)


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
    table_bits: int = 0
    stopped: str = ""                    # status -1: "budget" or "memory" (the memory cap)
    words: int = 1
    probes: int = 0                      # table look-ups (each insert is one)
    table_ids: bool = True               # does the table keep ids (one-word keys, best-first)?

    @property
    def memory_bytes(self) -> int:
        """Bytes in use at the end: the n rows of the dense key/parent/action/g arrays (past
        RESERVE_AT they are made for the whole budget, but pages no row reached are never
        backed) and the table's slots."""
        dense = self.n * (self.words * 8 + BYTES_PER_STATE_FIXED)
        return int(dense + (table_bytes(self.table_bits, self.words, self.table_ids) if self.table_bits else 0))

    @property
    def bytes_per_million(self) -> float:
        return self.memory_bytes / max(self.n, 1) * 1e6


_AUX: weakref.WeakKeyDictionary[Level, tuple[np.ndarray, int]] = weakref.WeakKeyDictionary()
_WORKSPACES: weakref.WeakKeyDictionary[Level, dict] = weakref.WeakKeyDictionary()
_MEM = [0.0, 0]


def level_aux(level: Level) -> tuple[np.ndarray, int]:
    """(aux, words) of a level, made once per Level object."""
    got = _AUX.get(level)
    if got is None:
        k = knowledge(level.game)
        got = _AUX[level] = (k.aux(level), k.words(level))
    return got


def _grow(a: np.ndarray, n: int) -> np.ndarray:
    """A copy of ``a`` in a new array of n elements (numpy's allocator: huge pages)."""
    b = np.empty(n, a.dtype)
    b[:a.shape[0]] = a
    return b


class _Prefault:
    """Backs, on another core, the memory a large search is about to write: the next rows of
    its dense arrays (up to AHEAD bytes past the states stored) and the second half of its
    table before the table doubles into it. Linux's madvise(MADV_POPULATE_WRITE) makes pages
    present and writable without changing a byte, so it never races with the search's own
    writes. A page's first touch costs the kernel a zeroing and, on a virtual machine, the
    host its own fault: on the 2-core VM of the issue about 0.3 GB/s, as much time as a
    10**7-state search spends computing. Used only on Linux with at least two usable cores
    for searches past RESERVE_AT states; anything unexpected (an old kernel: EINVAL) just
    turns it off."""

    AHEAD = 64 << 20          # bytes of rows backed ahead of the search
    CHUNK = 8 << 20           # bytes per madvise call (stop() waits for at most one)
    _libc = None
    _broken = False

    def __init__(self, ctl, meta, dense, table):
        import threading
        self.ctl, self.meta, self.dense, self.table = ctl, meta, dense, table
        self.row_bytes = sum(a.itemsize * (a.shape[0] // max(dense[1].shape[0], 1)) for a in dense)
        self.done_rows = 0
        self.done_slots = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="longpuzzle-prefault", daemon=True)
        self._thread.start()

    @classmethod
    def usable(cls) -> bool:
        import os
        import sys
        if cls._broken or not sys.platform.startswith("linux"):
            return False
        try:
            if len(os.sched_getaffinity(0)) < 2:
                return False
            if cls._libc is None:
                import ctypes
                libc = ctypes.CDLL(None, use_errno=True)
                libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
                libc.madvise.restype = ctypes.c_int
                cls._libc = libc
        except (OSError, AttributeError):
            cls._broken = True
            return False
        return True

    def _populate(self, a: np.ndarray, lo: int, hi: int) -> None:
        """Back the whole pages inside elements [lo, hi) of ``a``."""
        base = a.ctypes.data
        start = (base + lo * a.itemsize + 4095) & ~4095
        end = (base + min(hi, a.shape[0]) * a.itemsize) & ~4095
        while start < end and not self._stop.is_set():
            step = min(self.CHUNK, end - start)
            if self._libc.madvise(start, step, 23) != 0:      # MADV_POPULATE_WRITE
                type(self)._broken = True
                self._stop.set()
                return
            start += step

    def _loop(self) -> None:
        keys, parent, action = self.dense
        cap = parent.shape[0]
        w = keys.shape[0] // max(cap, 1)
        ahead = max(self.AHEAD // max(self.row_bytes, 1), 1)
        tk, tid = self.table
        while not self._stop.wait(0.002):
            want = min(int(self.ctl[15]) + ahead, cap)
            if want > self.done_rows:
                lo, self.done_rows = self.done_rows, want
                self._populate(keys, lo * w, want * w)
                self._populate(parent, lo, want)
                self._populate(action, lo, want)
            bits, count = int(self.meta[0]), int(self.meta[1])
            if 8 * count > 3 << bits and tk.shape[0] >= 2 << bits and self.done_slots < 2 << bits:
                self._populate(tk, max(1 << bits, self.done_slots), 2 << bits)
                if tid.shape[0] > 1:
                    self._populate(tid, max(1 << bits, self.done_slots), 2 << bits)
                self.done_slots = 2 << bits

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def _grow_table(mod, tk: np.ndarray, tid: np.ndarray, meta: np.ndarray, w: int, limit: int):
    """The table doubled. Small tables: rehashed into new arrays. From 2**RESERVE_TABLE_BITS
    slots on, the new arrays have room for the table ``limit`` states need (made zeroed:
    untouched pages cost nothing) and the table lives at their start, so every later
    doubling is in place (template.table_grow_in_place: no copy, no fresh table)."""
    bits = int(meta[0])
    base = tk.base if tk.base is not None else tk
    ids = tid.shape[0] > 1
    if base.shape[0] >= 2 << bits:
        tbase = tid.base if ids and tid.base is not None else tid
        tk, tid = base[:2 << bits], (tbase[:2 << bits] if ids else tid)
        mod.table_grow_in_place(tk, tid, meta)
        return tk, tid
    room = bits + 1
    if room >= RESERVE_TABLE_BITS:
        room = min(max(room, (2 * limit - 1).bit_length()), MAX_TABLE_BITS)
    kb, ib = table_arrays(room, w, ids=ids)
    tk2, tid2 = kb[:2 << bits], (ib[:2 << bits] if ids else ib)
    mod.table_rehash(tk, tid, tk2, tid2, meta, np.int64(w))
    return tk2, tid2


def run(level: Level, state: np.ndarray, mode: int, *, weight: int = 1, budget: int = DEFAULT_BUDGET,
        stop_at_goal: bool = True, aux: np.ndarray | None = None, upper: int = 1 << 30,
        max_bytes: int | None = None, reuse: bool = False) -> Raw:
    """One compiled search (template ``_steps``), driven from here: every array is made by
    numpy and grown here by doubling when the loop asks (dense arrays: amortised linear
    copying; the table: a sequential rehash). It stores at most ``budget`` states, and never
    more than fit in the memory cap (``max_bytes``, else 60% of the memory available now):
    a search stopped by either ends with status -1 and ``stopped`` = "budget" or "memory".

    ``reuse=True``: for repeated searches of one level, keep this search's arrays and clear
    them for the next such call instead of allocating (the returned arrays are then
    overwritten by that next call: copy what must be kept; and two threads must not reuse
    one level's arrays at once: the compiled loop releases the GIL).

    Searches past RESERVE_AT states have the memory they write next backed by another
    thread (_Prefault)."""
    mod = search_kernels(level.game)
    budget = int(budget)
    fit = memory_budget(level, max_bytes=max_bytes)
    limit = max(min(budget, fit, MAX_IDS), 1)
    default_aux, w = level_aux(level)
    aux = default_aux if aux is None else aux
    init = _writable(state, level)
    na = int(level.n_actions)
    t0 = time.perf_counter()
    ws = _WORKSPACES.get(level, {}).get(mode) if reuse else None
    if ws is None:
        cap = min(4096, limit + 1)
        bits = 12
        tk, tid = table_arrays(bits, w, ids=mode == 1)
        qn = 1024 if mode == 1 else 1
        # batch rows: breadth- and depth-first search expand states until BATCH_SUCCESSORS
        # successors (or BATCH_PARENTS states) are in hand, so one state's worth of rows more
        # may come (depth-first search takes up to that many states off its stack at once: a
        # complete search still, in a slightly different order); best-first: one state
        rows = BATCH_SUCCESSORS + na - 1 if mode != BEST_FIRST else na
        skflat = np.zeros(rows * w, np.uint64)
        ws = [np.zeros(cap * w, np.uint64), np.empty(cap, np.int32), np.empty(cap, np.int16),
              np.zeros(cap if mode == BEST_FIRST else 1, np.int16), tk, tid, np.array([bits, 0, 0, 0], np.int64),
              np.empty(1 if mode != 2 else 1024, np.int32), np.full(256 if mode == 1 else 1, -1, np.int64),
              np.empty(qn, np.int32), np.empty(qn, np.int32), np.empty(qn, np.int64),
              np.empty((na, init.shape[0]), init.dtype), np.empty(rows, np.int64), skflat,
              skflat.reshape(rows, w), np.zeros(rows, np.bool_), np.zeros(rows, np.int64),
              np.zeros(rows, np.uint64), np.zeros(rows, np.bool_), np.zeros(rows, np.int64),
              init.copy(), np.zeros(16, np.int64)]
    else:
        # a repeated search: the same arrays, cleared (only what a search reads before writing)
        if ws[4].shape[0] > 1 << 16:      # a big table is not kept: start again at 4096 slots
            ws[4], ws[5] = table_arrays(12, w, ids=mode == 1)
        else:
            ws[4].fill(0)
        ws[6][:] = (ws[4].shape[0].bit_length() - 1, 0, 0, 0)
        ws[8].fill(-1)
        ws[22].fill(0)
    (keys, parent, action, g, tk, tid, meta, stack, bhead, qid, qg, qnext, succ, acts, skflat, skeys,
     solvedv, hv, hs, skip, bpar, cur, ctl) = ws
    bt, maxpar = (np.int64(BATCH_SUCCESSORS), np.int64(BATCH_PARENTS)) if mode != BEST_FIRST else (np.int64(1), np.int64(1))
    cap = parent.shape[0]
    w64, mode64, weight64 = np.int64(w), np.int64(mode), np.int64(weight)
    while True:
        r = mod._start(level.lv, aux, init, w64, mode64, weight64, keys, parent, action, g, tk, tid, meta,
                       stack, bhead, qid, qg, qnext, ctl)
        if r != 5:
            break
        bhead = np.full(int(ctl[13]) * 2 + 16, -1, np.int64)
    if r == 0:
        lim64, stop, up64 = np.int64(limit), bool(stop_at_goal), np.int64(upper)
        pf = None
        try:
            while True:
                if pf is None and cap >= limit >= RESERVE_AT and tk.base is not None \
                        and tk.base.shape[0] > tk.shape[0] and _Prefault.usable():
                    # a large search: the dense arrays and the table have room for the budget
                    pf = _Prefault(ctl, meta, (keys, parent, action),
                                   (tk.base, tid.base if tid.base is not None else tid))
                r = mod._steps(level.lv, aux, w64, mode64, weight64, lim64, stop, up64, keys, parent, action, g,
                               tk, tid, meta, stack, bhead, qid, qg, qnext, succ, acts, skflat, skeys, solvedv,
                               hv, hs, skip, bpar, bt, maxpar, cur, ctl)
                if r == 0:
                    break
                if r == 1:
                    # double while small; past RESERVE_AT states take the whole budget at once: numpy's
                    # np.empty only reserves address space (pages are zeroed by the system when first
                    # written), so the big copies of repeated doubling are saved
                    cap = cap * 2 if cap * 2 < RESERVE_AT else limit
                    cap = min(cap, max(limit, cap + 1))
                    keys = _grow(keys, cap * w)
                    parent = _grow(parent, cap)
                    action = _grow(action, cap)
                    if mode == BEST_FIRST:
                        g = _grow(g, cap)
                elif r == 2:
                    tk, tid = _grow_table(mod, tk, tid, meta, w, limit)
                elif r == 3:
                    stack = _grow(stack, stack.shape[0] * 2)
                elif r == 4:
                    qid, qg, qnext = (_grow(a, a.shape[0] * 2) for a in (qid, qg, qnext))
                else:
                    nb = bhead.shape[0]
                    bh = np.full(int(ctl[13]) * 2 + 16, -1, np.int64)
                    bh[:nb] = bhead
                    bhead = bh
        finally:
            if pf is not None:
                pf.stop()
    secs = time.perf_counter() - t0
    if reuse:
        _WORKSPACES.setdefault(level, {})[mode] = [keys, parent, action, g, tk, tid, meta, stack, bhead,
                                                             qid, qg, qnext, succ, acts, skflat, skeys, solvedv,
                                                             hv, hs, skip, bpar, cur, ctl]
    st, goal, n, lower = int(ctl[9]), int(ctl[10]), int(ctl[0]), int(ctl[11])
    stopped = ""
    if st == -1:
        stopped = "budget" if limit == budget else "memory"
    return Raw(st, goal, n, keys, parent, action, lower, secs, int(meta[0]), stopped, int(w), int(ctl[14]),
               bool(tid.shape[0] > 1))


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
          method: str | None = None, time_limit: float | None = None, shortest: bool = True) -> Result:
    """The shortest solution of a level (or of ``state`` in it).

    method: None (the game's default), "bfs" (optimal), "astar" (optimal with the game's
    admissible heuristic), "dfs" (any solution). ``budget`` caps the stored states.
    ``shortest=False``: a solution soon, not necessarily the shortest: a game's own solver
    that first finds a solution and then searches for a shorter one or a proof (Bolt
    Unscrew, Nut and Bolt) stops after the first phase when it found one; the other
    searches are unchanged."""
    level = load_level(level)
    state = level.initial if state is None else state
    k = knowledge(level.game)
    if method is None:
        direct = k.solve(level, state, budget, time_limit=time_limit, shortest=shortest)
        if direct is not None:
            return direct
        method = k.method
    mode = {"bfs": BFS, "astar": BEST_FIRST, "dfs": DFS}[method]
    raw = run(level, state, mode, budget=budget)
    return from_raw(level, state, raw, optimal=mode != DFS, method=method)


def from_raw(level: Level, state, raw: Raw, *, optimal: bool, method: str, path: bool = True) -> Result:
    if raw.status == 1:
        acts = path_actions(level, state, raw) if path else ()
        return _result(level, "solvable", acts, optimal=optimal, lower_bound=len(acts) if optimal else None,
                       states=raw.n, seconds=raw.seconds, method=method)
    if raw.status == 0:
        return _result(level, "unsolvable", states=raw.n, seconds=raw.seconds, method=method)
    return _result(level, "unknown", states=raw.n, seconds=raw.seconds, method=method,
                   lower_bound=raw.lower if raw.lower >= 0 else None, note=memory_note(level, raw))


def memory_note(level: Level, raw: Raw) -> str:
    if raw.stopped != "memory":
        return ""
    return (f"stopped at the memory cap after {raw.n:,} states (about "
            f"{peak_bytes_per_state(level):.0f} bytes a state at peak); raise the cap or use less memory")


def certify(level: Level | str, state: np.ndarray | None = None, *, budget: int = DEFAULT_BUDGET,
            solution: bool = True) -> Result:
    """Is ``state`` solvable? ``solvable`` (with a solution, not necessarily shortest),
    ``unsolvable`` (a certified dead end: every reachable state was visited) or ``unknown``.
    ``solution=False``: the status alone (a solvable result may carry no moves; the path is
    not rebuilt, which is most of a small search's cost)."""
    level = load_level(level)
    p = get_puzzle(level.game)
    state = level.initial if state is None else p.validate_state(level, state)
    k = knowledge(level.game)
    t0 = time.perf_counter()
    if k.dead_end(level, state):
        return _result(level, "unsolvable", states=1, seconds=time.perf_counter() - t0, method="predicate")
    direct = getattr(k, "certify", None)        # a game's own certificate (e.g. Bolt Unscrew)
    if direct is not None:
        r = direct(level, state, budget)
        if r is not None:
            r.seconds = time.perf_counter() - t0
            return r
    raw = run(level, state, DFS, budget=budget)
    res = from_raw(level, state, raw, optimal=False, method="dfs", path=solution)
    res.seconds = time.perf_counter() - t0
    return res


def explore(level: Level | str, state: np.ndarray | None = None, *, budget: int = DEFAULT_BUDGET,
            reuse: bool = False) -> Raw:
    """Breadth-first search of every state reachable from ``state`` (no stop at goals).
    ``reuse``: see run() (repeated searches of one level without allocating)."""
    level = load_level(level)
    state = level.initial if state is None else state
    return run(level, state, BFS, budget=budget, stop_at_goal=False, reuse=reuse)


def peak_bytes_per_state(level: Level) -> float:
    """Most bytes a stored state may need at a peak: the dense arrays (key words, parent,
    action, g) while doubling (old + new: 2x), and the table while doubling (load 1/2 -> 1/4:
    slots = 4 states, old + new = 6 slots a state)."""
    w = level_aux(level)[1]
    slot = 8 + (4 if w == 1 else 0)
    return 2 * (w * 8 + BYTES_PER_STATE_FIXED) + 6 * slot


def memory_budget(level: Level, fraction: float = 0.6, max_bytes: int | None = None) -> int:
    """Most states that fit in ``max_bytes`` (default: ``fraction`` of the memory available
    now), at their peak size: a search stops with ``unknown`` instead of running out of
    memory."""
    if max_bytes is None:
        now = time.monotonic()
        if now - _MEM[0] > 1.0:
            _MEM[0], _MEM[1] = now, _available_memory()
        if not _MEM[1]:
            return MAX_IDS
        max_bytes = int(_MEM[1] * fraction)
    return max(int(max_bytes / peak_bytes_per_state(level)), 1)


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
    """Typical memory of one stored state: key words, parent, action and g, and the hash
    table (8 bytes a slot, +4 for one-word keys; load between 1/4 and 1/2: 3 slots a state
    on average). The dense arrays grow by doubling, so a search may briefly hold more
    (see peak_bytes_per_state)."""
    w = knowledge(level.game).words(level)
    return w * 8 + BYTES_PER_STATE_FIXED + 3 * (8 + (4 if w == 1 else 0))


def informed_solve(level: Level, state, budget: int, weights=(3,), *, prune_aux=None, fast_share: float = 0.25,
                   shortest: bool = True) -> Result:
    """Weighted best-first searches (f = g + w h) for a solution of length U, then A*
    (f = g + h, admissible consistent h) over the states with g + h < U. Exhausting that space
    proves U optimal; a goal popped by A* is optimal; if the budget runs out, the smallest
    open f is a proven lower bound. ``prune_aux``: aux for the weighted phase only (e.g. with
    extra pruning that is not proven to keep an optimal solution). ``shortest=False``: no A*
    phase once the weighted phase found a solution (see solve)."""
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
    if best is not None and not shortest:
        return _result(level, "solvable", best, optimal=False, states=total, seconds=time.perf_counter() - t0,
                       method="wastar")
    return finish_with_astar(level, state, best, total, max(budget - total, 1000), t0, "wastar")



def finish_with_astar(level: Level, state: np.ndarray, best: list | None, total: int, budget: int, t0: float,
                      found_by: str) -> Result:
    """The A* phase that ends a search: admissible A* over the states with g + h < U (U: the
    length of ``best``, the solution the phase ``found_by`` found, or none) within ``budget``
    states. A goal it pops is optimal; exhausting the space proves ``best`` optimal (or the
    level unsolvable); out of budget, its smallest open f is a proven lower bound. ``total``:
    the states searched before; ``t0``: when the search began."""
    upper = len(best) if best is not None else 1 << 30
    raw = run(level, state, BEST_FIRST, weight=1, budget=budget, upper=upper)
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
                       seconds=secs, method=f"{found_by}+astar")
    lower = raw.lower if raw.lower >= 0 else None
    if best is None:
        return _result(level, "unknown", states=total, seconds=secs, method="astar", lower_bound=lower)
    return _result(level, "solvable", best, optimal=lower == len(best), lower_bound=lower,
                   states=total, seconds=secs, method=f"{found_by}+astar")
