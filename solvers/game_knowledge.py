"""Per-game solver knowledge: the Knowledge instance a game's declaration names
(GameSpec.knowledge, engine/declaration.py; the built-in games' are the modules of the
package solvers/knowledge/, ``KNOWLEDGE = SomeKnowledge()``, which re-exports this module).

Here, apart from the games' modules, because the generic searches (core.py, profile.py) look
a game's knowledge up while the games' modules call back into those searches: with the base
class and the lookup in the package the two would be a circle. A game that declares none gets ``Knowledge``
(generic packing and expansion, h = 0).

A Knowledge object may provide
    kernels        a module with njit(cache=True) hooks ``pack``, ``unpack``, ``expand``,
                   ``heuristic`` (any subset; see solvers/template.py for the contracts)
    aux(level)     the int64 array passed to the hooks (default: the generic pack spec)
    words(level)   number of uint64 words of a packed state
    solve(...)     a direct solver replacing the generic search (return None to fall back)
    certify(...)   a cheap dead-end predicate tried before the exhaustive search
"""

from __future__ import annotations

import numpy as np

from longpuzzle.engine.errors import UnknownGameError
from longpuzzle.engine.protocol import Level
from longpuzzle.engine.registry import spec

_GENERIC: dict = {}      # game id -> the generic Knowledge of a game that declares none


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
    # the oracle's ways (solvers/oracle.py): the state budget of the level's whole graph and of
    # one solver call (None: the oracle's defaults), and whether a graph from an asked state
    # is worth building (False for a game whose reachable space from a later state is not
    # smaller than from the start, or whose solver is exact and far cheaper than any graph)
    graph_budget: int | None = None
    solve_budget: int | None = None
    local_graphs: bool = True

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


def knowledge(game: str) -> Knowledge:
    """The game's declared Knowledge, else (an undeclared part or game) a generic one."""
    try:
        k = spec(game).knowledge_object()
    except UnknownGameError:
        k = None
    if isinstance(k, Knowledge):
        return k
    k = _GENERIC.get(game)
    if k is None:
        k = _GENERIC[game] = Knowledge()
        k.game = game
    return k
