"""Per-game solver knowledge, found by discovery (like engine/registry.py): every module of
this package that defines ``KNOWLEDGE = SomeKnowledge()`` is registered under its ``game``
id. A game without a module gets ``Knowledge`` (generic packing and expansion, h = 0).

A Knowledge object may provide
    kernels        a module with njit(cache=True) hooks ``pack``, ``unpack``, ``expand``,
                   ``heuristic`` (any subset; see solvers/template.py for the contracts)
    aux(level)     the int64 array passed to the hooks (default: the generic pack spec)
    words(level)   number of uint64 words of a packed state
    solve(...)     a direct solver replacing the generic search (return None to fall back)
    certify(...)   a cheap dead-end predicate tried before the exhaustive search
"""

from __future__ import annotations

import importlib
import pkgutil

import numpy as np

from longpuzzle.engine.protocol import Level

_REGISTRY: dict = {}
_DONE = False


def field_spec(level: Level, lo, hi) -> tuple[np.ndarray, int]:
    """Generic pack spec: state element i ranges over lo[i] .. hi[i] (lo == hi: constant)."""
    L = level.initial.shape[0]
    aux = [0, L]
    words = 0
    shift = 64
    for i in range(L):
        span = int(hi[i]) - int(lo[i])
        bits = 0 if span <= 0 else int(span).bit_length()
        aux += [int(lo[i]), bits]
        if bits:
            if shift + bits > 64:
                words += 1
                shift = 0
            shift += bits
    aux[0] = max(words, 1)
    return np.array(aux, np.int64), max(words, 1)


class Knowledge:
    game = ""
    kernels = None                # module with njit hooks, or None
    method = "bfs"                # default search: "bfs" or "astar"
    exact_method = True           # does the default search prove optimality?
    verify_budget: int | None = None   # state budget of `longpuzzle verify` (None: the default)

    def spec(self, level: Level) -> tuple[np.ndarray, int]:
        """(aux, words) for the generic hooks: every element in its dtype's full range."""
        info = np.iinfo(level.initial.dtype)
        L = level.initial.shape[0]
        return field_spec(level, [info.min] * L, [info.max] * L)

    def aux(self, level: Level) -> np.ndarray:
        return self.spec(level)[0]

    def words(self, level: Level) -> int:
        return self.spec(level)[1]

    def solve(self, level: Level, state: np.ndarray, budget: int, time_limit: float | None = None,
              shortest: bool = True):
        """A game-specific solver; None means 'use the generic search'. ``shortest=False``: a
        solution soon is enough (core.solve)."""
        return None

    def dead_end(self, level: Level, state: np.ndarray):
        """A cheap certificate: True if the state is certainly a dead end, else None."""
        return None


def _discover() -> None:
    global _DONE
    if _DONE:
        return
    _DONE = True
    for m in pkgutil.iter_modules(__path__):
        if m.name.startswith("_") or m.name.endswith("_kernels"):
            continue
        mod = importlib.import_module(f"{__name__}.{m.name}")
        k = getattr(mod, "KNOWLEDGE", None)
        if isinstance(k, Knowledge) and k.game:
            _REGISTRY.setdefault(k.game, k)


def knowledge(game: str) -> Knowledge:
    _discover()
    k = _REGISTRY.get(game)
    if k is None:
        k = Knowledge()
        k.game = game
        _REGISTRY[game] = k
    return k
