"""longpuzzle: a headless engine for the long-horizon visual puzzles of LongPuzzleBench.

Subpackages:
    longpuzzle.engine   the puzzle protocol, registry, level catalogue, sessions, CLI
    longpuzzle.puzzles  one module per game, each registered under its id
    longpuzzle.render   pygame frames (never imported by the engine)
    longpuzzle.solvers  exhaustive search over the protocol
    longpuzzle.agents   agents that act through GUI input only
    longpuzzle.agents.envs     Gymnasium environments (registered once gymnasium is imported: agents/gym_hook.py)
"""

__version__ = "0.1.0"

# numba's cache goes under longpuzzle's cache folder (before anything imports numba)
from longpuzzle.engine.cache import use_project_numba_cache  # noqa: E402

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
from longpuzzle.engine.registry import get_puzzle, puzzle_ids  # noqa: E402
from longpuzzle.engine.catalog import load_level, catalog  # noqa: E402
from longpuzzle.engine.session import Session, replay  # noqa: E402
from longpuzzle.agents.gym_hook import install as _install_gym_hook  # noqa: E402

_install_gym_hook()      # gymnasium.make("longpuzzle/...") works after `import longpuzzle`

__all__ = [
    "__version__",
    "LongPuzzleError", "MoveSyntaxError", "IllegalMoveError", "LevelFormatError",
    "UnknownGameError", "UnknownLevelError", "CheckpointError",
    "get_puzzle", "puzzle_ids", "load_level", "catalog", "Session", "replay",
]
