"""The puzzle registry: game id -> Puzzle instance.

Built-in games are the modules of ``longpuzzle.puzzles`` that define ``PUZZLE``; other
distributions add theirs through the ``longpuzzle.puzzles`` entry-point group
(``name = "package.module"``). Nothing in the library chooses a game by comparing names.
"""

from __future__ import annotations

import importlib
import pkgutil
from importlib.metadata import entry_points

from longpuzzle.engine.errors import UnknownGameError
from longpuzzle.engine.protocol import Puzzle

_REGISTRY: dict[str, Puzzle] = {}
_DISCOVERED = False


def register(puzzle: Puzzle) -> Puzzle:
    """Add a puzzle (replacing one with the same id). Returns it, so it can be used inline."""
    if not isinstance(puzzle, Puzzle) or not puzzle.id:
        raise TypeError("register() takes a Puzzle instance with a non-empty id")
    _REGISTRY[puzzle.id] = puzzle
    return puzzle


def unregister(game_id: str) -> None:
    _REGISTRY.pop(game_id, None)


def _discover() -> None:
    global _DISCOVERED
    if _DISCOVERED:
        return
    _DISCOVERED = True
    import longpuzzle.puzzles as pkg

    modules = [f"{pkg.__name__}.{m.name}" for m in pkgutil.iter_modules(pkg.__path__) if not m.name.startswith("_")]
    try:
        modules += [ep.value for ep in entry_points(group="longpuzzle.puzzles")]
    except Exception:  # pragma: no cover - broken third-party metadata must not break the library
        pass
    for name in modules:
        mod = importlib.import_module(name)
        puzzle = getattr(mod, "PUZZLE", None)
        if isinstance(puzzle, Puzzle) and puzzle.id not in _REGISTRY:
            register(puzzle)


def puzzles() -> list[Puzzle]:
    """Every registered puzzle, in the benchmark's game order."""
    _discover()
    return sorted(_REGISTRY.values(), key=lambda p: (p.catalog_order, p.id))


def puzzle_ids() -> list[str]:
    return [p.id for p in puzzles()]


def get_puzzle(game_id: str) -> Puzzle:
    _discover()
    try:
        return _REGISTRY[game_id]
    except KeyError:
        known = ", ".join(puzzle_ids()) or "none"
        raise UnknownGameError(f"unknown game {game_id!r}; registered games: {known}") from None
