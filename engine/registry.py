"""The game registry: game id -> its declaration (engine/declaration.py GameSpec) -> its parts.

Declarations come from two places, read the same way:

    built-in      ``longpuzzle.puzzles.declarations:BUILTIN`` (a tuple of GameSpecs)
    other games   the entry-point group ``longpuzzle.puzzles`` of any installed distribution:
                  ``name = "package.module:GAME"`` naming a GameSpec (an older entry naming a
                  module that defines ``PUZZLE`` is still read: its rules are its only part)

Reading the declarations imports no rules: ``puzzle_ids()`` and ``spec(game)`` are cheap, and
``get_puzzle(game)`` imports that one game's rules module (with its kernels) at first use.
Every consumer of a game's parts (solver knowledge, generators and tiers, drawings, scoring
facts, the home screen's order, labels) asks ``spec(game)``. Nothing in the library chooses a
game by comparing names.
"""

from __future__ import annotations

import sys
import warnings
from importlib.metadata import entry_points
from typing import TYPE_CHECKING

from longpuzzle.engine.declaration import DeclarationError, GameSpec, load_object
from longpuzzle.engine.errors import UnknownGameError

if TYPE_CHECKING:
    from longpuzzle.engine.protocol import Puzzle

BUILTIN = "longpuzzle.puzzles.declarations:BUILTIN"
ENTRY_POINT_GROUP = "longpuzzle.puzzles"

# game id -> declaration; replaced whole, never changed in place (threads may be reading it)
_SPECS: dict[str, GameSpec] = {}
_ADDED: dict[str, GameSpec] = {}     # games registered by register() (kept across reload())
_READ = False


def _read() -> None:
    """Read the built-in declarations and the entry points (once)."""
    global _READ, _SPECS
    if _READ:
        return
    found: dict[str, GameSpec] = {}
    for s in load_object(BUILTIN):
        found[s.id] = s
    try:
        eps = list(entry_points(group=ENTRY_POINT_GROUP))
    except Exception:  # noqa: BLE001 - broken third-party metadata must not break the library
        eps = []
    for ep in eps:
        try:
            declared = _declared_by(ep)
        except Exception as e:  # noqa: BLE001 - a broken game of another distribution must not break the others
            warnings.warn(f"the game of entry point {ep.name} = {ep.value!r} ({ENTRY_POINT_GROUP}) is left out: "
                          f"{type(e).__name__}: {e}", RuntimeWarning, stacklevel=2)
            continue
        for s in declared:
            found.setdefault(s.id, s)          # a built-in game keeps its own declaration
    found.update(_ADDED)
    _SPECS = found
    _READ = True


def _is_puzzle(obj) -> bool:
    """Is ``obj`` a Puzzle instance? (Without importing the protocol, and numpy with it, to
    read declarations: an instance exists only once its module is loaded.)"""
    protocol = sys.modules.get("longpuzzle.engine.protocol")
    return protocol is not None and isinstance(obj, protocol.Puzzle) and bool(obj.id)


def _declared_by(ep) -> list[GameSpec]:
    obj = ep.load()
    if isinstance(obj, GameSpec):
        return [obj]
    if isinstance(obj, (list, tuple)) and all(isinstance(s, GameSpec) for s in obj):
        return list(obj)
    puzzle = getattr(obj, "PUZZLE", None)      # the older form: a module defining PUZZLE
    if _is_puzzle(puzzle):
        return [GameSpec(id=puzzle.id, rules=puzzle, order=puzzle.catalog_order)]
    raise DeclarationError(f"entry point {ep.name} = {ep.value!r} ({ENTRY_POINT_GROUP}) names no GameSpec")


def reload() -> None:
    """Read the declarations again at the next question (after installing a game)."""
    global _READ
    _READ = False


def register(game: GameSpec | Puzzle) -> GameSpec | Puzzle:
    """Add a game (replacing one with the same id): a GameSpec, or a Puzzle instance (its
    rules are then its only part). Returns its argument, so it can be used inline."""
    if _is_puzzle(game):
        s = GameSpec(id=game.id, rules=game, order=game.catalog_order)
    elif isinstance(game, GameSpec):
        s = game
    else:
        raise TypeError("register() takes a GameSpec, or a Puzzle instance with a non-empty id")
    global _SPECS
    _ADDED[s.id] = s
    _read()
    _SPECS = {**_SPECS, s.id: s}
    return game


def unregister(game_id: str) -> None:
    global _SPECS
    _ADDED.pop(game_id, None)
    _SPECS = {g: s for g, s in _SPECS.items() if g != game_id}


def specs() -> list[GameSpec]:
    """Every declared game, in the benchmark's game order."""
    _read()
    return sorted(_SPECS.values(), key=lambda s: (s.order, s.id))


def spec(game_id: str) -> GameSpec:
    """The declaration of a game (UnknownGameError for an id no declaration has)."""
    _read()
    try:
        return _SPECS[game_id]
    except KeyError:
        known = ", ".join(puzzle_ids()) or "none"
        raise UnknownGameError(f"unknown game {game_id!r}; registered games: {known}") from None


def puzzle_ids() -> list[str]:
    """Every game id, in the benchmark's game order (imports no rules)."""
    return [s.id for s in specs()]


def puzzles() -> list[Puzzle]:
    """Every registered puzzle, in the benchmark's game order (imports every game's rules)."""
    return [s.puzzle() for s in specs()]


def get_puzzle(game_id: str) -> Puzzle:
    return spec(game_id).puzzle()


def home_order() -> list[str]:
    """The games with a home-screen slot, in slot order (GameSpec.home)."""
    return [s.id for s in sorted((s for s in specs() if s.home is not None), key=lambda s: (s.home, s.order))]
