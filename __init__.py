"""longpuzzle: a headless engine for the long-horizon visual puzzles of LongPuzzleBench.

Subpackages:
    longpuzzle.engine   the puzzle protocol, registry, level catalogue, sessions, CLI
    longpuzzle.puzzles  one module per game, each registered under its id
    longpuzzle.render   pygame frames (never imported by the engine)
    longpuzzle.solvers  exhaustive search over the protocol
    longpuzzle.agents   agents that act through GUI input only
    longpuzzle.agents.envs     Gymnasium environments (registered once gymnasium is imported: agents/gym_hook.py)
"""

from typing import TYPE_CHECKING

__version__ = "0.1.0"

# numba's cache goes under longpuzzle's cache folder (before anything imports numba)
from longpuzzle.engine.cache import use_project_numba_cache

use_project_numba_cache()

from longpuzzle.engine.errors import (  # noqa: E402
    LongPuzzleError,
    MoveSyntaxError,
    IllegalMoveError,
    LevelFormatError,
    UnknownGameError,
    UnknownLevelError,
    CheckpointError,
)
from longpuzzle.agents.gym_hook import install as _install_gym_hook  # noqa: E402

_install_gym_hook()      # gymnasium.make("longpuzzle/...") works after `import longpuzzle`

# The engine's entry points load on first use (PEP 562), so that `import longpuzzle` costs no
# numpy, rules or catalogue: a program (or the Gymnasium hook) pays for what it touches.
_LAZY = {
    "get_puzzle": "longpuzzle.engine.registry", "puzzle_ids": "longpuzzle.engine.registry",
    "load_level": "longpuzzle.engine.catalog", "Catalog": "longpuzzle.engine.catalog",
    "builtin_catalog": "longpuzzle.engine.catalog",
    "Session": "longpuzzle.engine.session", "replay": "longpuzzle.engine.session",
}

if TYPE_CHECKING:  # pragma: no cover - what type checkers and editors see
    from longpuzzle.engine.catalog import Catalog, builtin_catalog, load_level
    from longpuzzle.engine.registry import get_puzzle, puzzle_ids
    from longpuzzle.engine.session import Session, replay


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'longpuzzle' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "__version__",
    "LongPuzzleError", "MoveSyntaxError", "IllegalMoveError", "LevelFormatError",
    "UnknownGameError", "UnknownLevelError", "CheckpointError",
    "get_puzzle", "puzzle_ids", "load_level", "Catalog", "builtin_catalog", "Session", "replay",
]
