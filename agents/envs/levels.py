"""Where an environment's levels come from: one level, a list, an objective, or a sampler.

``level=`` of every game environment accepts:

    None                      the game's first level (e.g. maze_paint/easy/1)
    "maze_paint/hard/3"       one level (a catalogue id), or a Level object
    "maze_paint/hard"         an objective: its levels
    "maze_paint"              every level of the game
    [...]                     a list / tuple of any of the above (flattened, in order)
    sampler                   a callable ``sampler(rng) -> Level | level id``, or an object with
                              ``sample(rng)``; ``rng`` is the env's ``np_random`` (a
                              numpy Generator), so ``reset(seed=...)`` makes the draws
                              reproducible. Level generators plug in here (a
                              ``longpuzzle.solvers.generators.LevelSampler`` is such a callable).
    iterator / generator      consumed in order, one level per reset (seeds do not affect it);
                              items may also be objects with a ``.level`` (generated levels)

A finite source is drawn from with ``order="random"`` (uniform, from the env's np_random)
or ``order="cycle"`` (in order, wrapping; a seeded reset starts again at the first). A
reset may also name its level: ``env.reset(options={"level": "maze_paint/hard/7"})``.

Observation and action spaces are fixed when the env is made, from every level of a finite
source, or for a sampler from ``space_levels=`` (levels covering what it yields) or else from
one level drawn from it with a fixed seed; a drawn level that does not fit them is refused
with a LevelSourceError that says why.

Level ids are looked up in the catalogue ``catalog=`` names (a snapshot NAME, NAME@VERSION,
a snapshot file, "builtin", or a Catalog; default the built-in one):
``gymnasium.make("longpuzzle/MazePaint-v0", catalog="spring", level="maze_paint/medium")``.
The env keeps that catalogue for every later lookup (reset options, a sampler's level ids)
and for its screens; pickled (a vector env's workers) it travels with the env.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from longpuzzle.engine.catalog import BUILTIN, Catalog, Objective, builtin_catalog, load_level
from longpuzzle.engine.errors import LongPuzzleError, UnknownLevelError
from longpuzzle.engine.protocol import Level
from longpuzzle.engine.registry import get_puzzle

ORDERS = ("random", "cycle")


class LevelSourceError(LongPuzzleError, ValueError):
    """A level source that cannot be used (wrong game, nothing in it, a level that does not
    fit the env's spaces, an exhausted iterator)."""


def expand(spec: Any, game: str | None = None, catalog: Catalog | None = None) -> list[Level]:
    """The levels a finite level spec stands for (see the module docstring), its ids those of
    ``catalog`` (default: the built-in catalogue)."""
    cat = catalog or builtin_catalog()
    if isinstance(spec, Level):
        out = [spec]
    elif isinstance(spec, Objective):
        out = [load_level(lid, cat) for lid in spec.level_ids]
    elif isinstance(spec, str):
        text = spec.strip()
        parts = text.split("/")
        if len(parts) == 3:
            out = [load_level(text, cat)]
        elif len(parts) == 2:
            out = [load_level(lid, cat) for lid in cat.objective(text).level_ids]
        elif len(parts) == 1 and text:
            get_puzzle(text)                       # an unknown game -> UnknownGameError
            out = cat.levels(text)
        else:
            raise UnknownLevelError(f"{spec!r} is not a level id (game/difficulty/n), an objective "
                                    "(game/difficulty) or a game id")
    elif isinstance(spec, (list, tuple)):
        out = [lvl for item in spec for lvl in expand(item, game, cat)]
    else:
        raise LevelSourceError(f"cannot take levels from {type(spec).__name__} {spec!r}")
    if not out:
        raise LevelSourceError(f"{spec!r} holds no levels")
    for lvl in out:
        _check_game(lvl, game)
    return out


def _check_game(level: Level, game: str | None) -> None:
    if game is not None and level.game != game:
        raise LevelSourceError(f"{level.id} is a {level.game} level; this environment plays {game}")


def resolve_catalog(which: Any) -> Catalog:
    """The Catalog an env's ``catalog=`` names (None: the built-in one)."""
    if which is None:
        return builtin_catalog()
    if isinstance(which, Catalog):
        return which
    if not isinstance(which, str):
        raise LevelSourceError(f"catalog must be a catalogue name, a snapshot file or a Catalog, not {which!r}")
    if which.strip() == BUILTIN:
        return builtin_catalog()
    from longpuzzle.engine.catalog_store import open_catalog
    return open_catalog(which)


class LevelSource:
    """Levels for an environment: a finite tuple (``levels``) or a sampler, looked up in
    ``catalog`` (see the module docstring)."""

    def __init__(self, spec: Any = None, *, game: str | None = None, order: str = "random",
                 space_levels: Any = None, catalog: Any = None):
        if order not in ORDERS:
            raise LevelSourceError(f"order must be one of {', '.join(ORDERS)}, not {order!r}")
        self.catalog = resolve_catalog(catalog)
        self._setup(spec, game, order, space_levels)

    def _setup(self, spec, game, order, space_levels) -> None:
        self.order = order
        self.game = game
        self.levels: tuple[Level, ...] | None = None
        self._sampler = None
        self._iter: Iterator | None = None
        self._pending: list[Level] = []
        self._pos = 0
        if spec is None:
            if game is None:
                raise LevelSourceError("give a level (or a game) to play")
            spec = self.catalog.level_ids(game)[0]
        if isinstance(spec, (str, Level, Objective, list, tuple)):
            self.levels = tuple(expand(spec, game, self.catalog))
            self.game = self.game or self.levels[0].game
            for lvl in self.levels:
                _check_game(lvl, self.game)
            self.space_levels = self.levels
            return
        if callable(getattr(spec, "sample", None)):
            self._sampler = spec.sample
        elif callable(spec):
            self._sampler = spec
        elif isinstance(spec, Iterable):
            self._iter = iter(spec)
        else:
            raise LevelSourceError(f"cannot take levels from {type(spec).__name__} {spec!r}: give a level id, "
                                   "an objective, a list, a sampler(rng) or an iterator of levels")
        if space_levels is not None:
            self.space_levels = tuple(expand(space_levels, game, self.catalog))
        else:                                       # one level, drawn with a fixed seed, fixes the spaces
            first = self._next(np.random.default_rng(0))
            if self._iter is not None:
                self._pending.append(first)         # an iterator's first level is still served first
            self.space_levels = (first,)
        self.game = self.game or self.space_levels[0].game

    @property
    def finite(self) -> bool:
        return self.levels is not None

    def restart(self) -> None:
        """A seeded reset: the cycle starts again at the first level."""
        self._pos = 0

    def draw(self, rng: np.random.Generator) -> tuple[Level, int]:
        """The next level and its index in ``levels`` (-1 for a sampler's level)."""
        if self.levels is not None:
            n = len(self.levels)
            if n == 1:
                i = 0
            elif self.order == "random":
                i = int(rng.integers(n))
            else:
                i = self._pos % n
                self._pos += 1
            return self.levels[i], i
        return self._next(rng), -1

    def pick(self, spec: Any) -> tuple[Level, int]:
        """A level asked for by name (reset options): it and its index (-1 if it is not in
        a finite source's list)."""
        levels = expand(spec, self.game, self.catalog)
        if len(levels) != 1:
            raise LevelSourceError(f"reset options name one level, not {len(levels)} ({spec!r})")
        lvl = levels[0]
        if self.levels is not None:
            for i, other in enumerate(self.levels):
                if other is lvl or (other.id == lvl.id and other.sha256 == lvl.sha256):
                    return other, i
        return lvl, -1

    def _next(self, rng: np.random.Generator) -> Level:
        if self._pending:
            return self._pending.pop()
        if self._sampler is not None:
            item = self._sampler(rng)
            where = "the sampler"
        else:
            try:
                item = next(self._iter)
            except StopIteration:
                raise LevelSourceError("the level iterator is exhausted") from None
            where = "the level iterator"
        if isinstance(item, str):
            item = load_level(item, self.catalog)
        elif not isinstance(item, Level) and isinstance(getattr(item, "level", None), Level):
            item = item.level                       # e.g. a generator's GeneratedLevel
        if not isinstance(item, Level):
            raise LevelSourceError(f"{where} gave {type(item).__name__} {item!r}, not a Level or a level id")
        _check_game(item, self.game)
        return item

    def describe(self) -> str:
        if self.levels is not None:
            ids = [lvl.id for lvl in self.levels]
            return ids[0] if len(ids) == 1 else f"{len(ids)} levels ({ids[0]} .. {ids[-1]}, {self.order})"
        return "a sampler" if self._sampler is not None else "an iterator"
