"""A game's declaration: every part of a game, named once (GameSpec).

A game is rules and a screen (the Puzzle and its GameUI, puzzles/), a drawing (render/),
solver knowledge and a level generator (solvers/), tier and scoring data and a few facts
(its place in the benchmark's order and on the home screen, its easiest tier, its screen
texts in other languages). Its declaration is one :class:`GameSpec` that names them all;
the registry (engine/registry.py) reads the declarations and every consumer asks it.

Parts that live in other layers are named by strings and loaded only when asked for, so
that reading a declaration is cheap (no rules module, no numba kernels, no pygame) and the
engine never imports the layers above it:

    objects   "package.module:attribute"   (the attribute may be dotted: "mod:Class.attr")
    data      "package:relative/path.json" (a resource of the package, importlib.resources)

A data file of tiers or of scoring facts holds ``{"games": {game id: entry}}`` (so one file
may serve several games, as the built-in solvers/generators/tiers.json and
agents/benchmark.json do); ``scoring`` may instead be the entry itself, as a dict.

Example (a game shipped as its own package ``mygame``, registered through the entry point
group ``longpuzzle.puzzles`` as ``mygame = "mygame:GAME"``)::

    GAME = GameSpec(
        id="mygame",
        rules="mygame.rules:PUZZLE",              # a Puzzle instance (its class sets .ui)
        levels="mygame:levels.json",              # its level file (puzzles/levels/FORMAT.md)
        drawing="mygame.drawing:DRAWING",         # a GameDrawing subclass: both styles, 2d and 3d
        knowledge="mygame.knowledge:KNOWLEDGE",   # a solvers.knowledge.Knowledge instance
        generator="mygame.generator:GENERATOR",   # a solvers.generators.base.Generator instance
        tiers="mygame:tiers.json", tier_figures=("optimal",),
        scoring="mygame:scoring.json", easiest="easy",
        order=7, home=6, labels={"zh": {"My Game": "我的游戏"}},
    )

docs/guides/adding-a-game.md walks through it.
"""

from __future__ import annotations

import importlib
import json
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from types import MappingProxyType
from typing import Any

from longpuzzle.engine.errors import LongPuzzleError


class DeclarationError(LongPuzzleError):
    """A declaration names a part that cannot be loaded, or is malformed."""


def load_object(ref: str) -> Any:
    """The object named ``"package.module:attribute"`` (the attribute may be dotted)."""
    module, sep, attr = ref.partition(":")
    if not sep or not module or not attr:
        raise DeclarationError(f"{ref!r} does not name an object as 'package.module:attribute'")
    obj: Any = importlib.import_module(module)
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise DeclarationError(f"{ref!r}: {module} has no attribute {attr!r}") from None
    return obj


@lru_cache(maxsize=64)
def load_data(ref: str) -> Any:
    """The JSON document named ``"package:relative/path.json"`` (a resource of the package;
    read once: callers must not change it)."""
    package, sep, path = ref.partition(":")
    if not sep or not package or not path:
        raise DeclarationError(f"{ref!r} does not name a data file as 'package:relative/path'")
    try:
        text = resources.files(package).joinpath(path).read_text(encoding="utf-8")
    except (OSError, ModuleNotFoundError) as e:
        raise DeclarationError(f"cannot read {ref!r}: {e}") from None
    try:
        return json.loads(text)
    except ValueError as e:
        raise DeclarationError(f"{ref!r} is not JSON: {e}") from None


def read_text(ref: str) -> str:
    """The text of the resource named ``"package:relative/path"``."""
    package, _, path = ref.partition(":")
    return resources.files(package).joinpath(path).read_text(encoding="utf-8")


@dataclass(frozen=True, eq=False)
class GameSpec:
    """The declaration of one game: its parts by name, its facts by value.

    id            the game id (levels are "<id>/<difficulty>/<n>")
    rules         "module:attr" of the Puzzle instance (rules and, as ``puzzle.ui``, its screen:
                  engine/suite/game_ui.py); loaded, with its kernels, at the first get_puzzle
                  (registry.register(puzzle) declares a Puzzle given as the object itself)
    order         its place in the benchmark's game order (results, tables, catalogue); the
                  built-in games are 1..6
    home          its card's place on the home screen (sorted by it, 0 the top; the built-in
                  games are 0..5); None: no place of its own, after the others
    levels        "package:path" of its built-in level file, or None (levels come from files given)
    drawing       "module:attr" of its GameDrawing subclass (render/frame/drawing.py; one
                  class draws both styles, "2d" flat and "3d" on the tilted table), or None
    knowledge     "module:attr" of its solvers.knowledge.Knowledge instance, or None (generic)
    generator     "module:attr" of its level Generator (solvers/generators/base.py), or None
    tiers         "package:path" of its tier data ({"games": {id: ...}}, format of
                  solvers/generators/tiers.py), or None
    tier_figures  the profile figures that define its tiers (the first one: the primary)
    scoring       its scoring facts: "package:path" of {"games": {id: entry}} or the entry as
                  a dict (max_steps, timeout_seconds, time_budget_seconds, components,
                  penalties, instructions_original: agents/benchmark.json; optionally
                  "step_efficiency": "optimal_moves" to score moves against the level's optimal
                  number instead of steps against max_steps, "action_quality": "operations" to
                  score by an operation tracker's counters: agents/metrics.py), or None
    easiest       its easiest tier (LC_hard scores the objectives above it), or None
    labels        {lang: {English text: text}}: what its screens show in other languages:
                  its own texts (title, instructions, win text, hints, toasts) and the shared
                  texts its screens word differently ("Level {n}": the level header's form)
    difficulty_card_y  the centre y of each card of its difficulty menu (design px), or None:
                  the menu's own placement by the number of objectives (engine/suite/screens.py)
    back_button   (centre x, centre y, w, h) of its difficulty menu's Back button, or None:
                  the menu's own (BACK_BUTTON)
    fonts         {lang: "package:path" or a list of them}: font files for its texts in that
                  language where longpuzzle's own font lacks their glyphs (the shipped CJK font
                  holds only longpuzzle's texts' characters: render/frame/paint.py font_file)
    milestones    "module:attr" of its milestone kinds (a tuple of engine/milestones.py Count /
                  Check: exact predicates on a level's state, each with the question a judge is
                  asked; ``diagnose judge``), or None: only the milestone every game has, the
                  level won
    rule_card     its rule card (``diagnose rules``, RQ4): "package:path" of {"games": {id:
                  entry}} or the entry as a dict: {"title": {lang: text}, "rules": [{lang:
                  text, "false": {lang: text}}, ...]}, its numbered rules (legal interactions
                  and constraints, nothing of a level) each with a false counterpart for the
                  rule probes (agents/diagnose/rules.py); None: no card
    """

    id: str
    rules: str
    order: int = 100
    home: int | None = None
    levels: str | None = None
    drawing: str | None = None
    knowledge: str | None = None
    generator: str | None = None
    tiers: str | None = None
    tier_figures: tuple[str, ...] = ()
    scoring: str | Mapping | None = None
    easiest: str | None = None
    labels: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    difficulty_card_y: tuple[float, ...] | None = None
    back_button: tuple[float, float, float, float] | None = None
    fonts: Mapping[str, str | tuple[str, ...]] = field(default_factory=dict)
    milestones: str | tuple | None = None
    rule_card: str | Mapping | None = None
    # parts loaded so far (part name -> object): a declaration loads each part once
    _loaded: dict = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id:
            raise DeclarationError("a GameSpec needs a non-empty id")
        if not isinstance(self.rules, str) and not hasattr(self.rules, "build_level"):
            raise DeclarationError(f"{self.id}: rules must name a Puzzle as 'module:attribute'")
        object.__setattr__(self, "tier_figures", tuple(self.tier_figures))
        for name in ("difficulty_card_y", "back_button"):
            if getattr(self, name) is not None:
                object.__setattr__(self, name, tuple(getattr(self, name)))
        object.__setattr__(self, "fonts", MappingProxyType({k: (v,) if isinstance(v, str) else tuple(v)
                                                           for k, v in dict(self.fonts).items()}))
        object.__setattr__(self, "labels", MappingProxyType({k: dict(v) for k, v in dict(self.labels).items()}))

    def _part(self, name: str, make) -> Any:
        got = self._loaded.get(name, _MISSING)
        if got is _MISSING:
            got = self._loaded[name] = make()
        return got

    def _object(self, name: str) -> Any:
        ref = getattr(self, name)
        if ref is None:
            return None
        return self._part(name, lambda: ref if not isinstance(ref, str) else load_object(ref))

    # ---- the parts, each loaded at its first use --------------------------------
    def puzzle(self):
        """The rules: the Puzzle instance (imports the rules module, with its kernels)."""
        p = self._object("rules")
        if getattr(p, "id", None) != self.id:
            raise DeclarationError(f"{self.id}: its rules {self.rules!r} are the game {getattr(p, 'id', None)!r}")
        return p

    def drawing_class(self):
        """The GameDrawing subclass, or None."""
        return self._object("drawing")

    def knowledge_object(self):
        """The solver Knowledge, or None (the solvers then use the generic one)."""
        return self._object("knowledge")

    def generator_object(self):
        """The level Generator, or None."""
        return self._object("generator")

    def tier_data(self) -> dict | None:
        """Its entry of its tier data ({"defining", "tiers": {name: ...}}), or None."""
        if self.tiers is None:
            return None
        return self._part("tiers", lambda: _games_entry(load_data(self.tiers), self.tiers, self.id))

    def scoring_facts(self) -> dict | None:
        """Its scoring facts (one entry of agents/benchmark.json's "games"), or None."""
        s = self.scoring
        if s is None:
            return None
        if not isinstance(s, str):
            return self._part("scoring", lambda: dict(s))
        return self._part("scoring", lambda: _games_entry(load_data(s), s, self.id))

    def rule_card_data(self) -> dict | None:
        """Its rule card's entry (see ``rule_card``), or None."""
        c = self.rule_card
        if c is None:
            return None
        if not isinstance(c, str):
            return self._part("rule_card", lambda: dict(c))
        return self._part("rule_card", lambda: _games_entry(load_data(c), c, self.id))

    def level_text(self) -> tuple[str, str] | None:
        """(text, name) of its built-in level file, or None."""
        if self.levels is None:
            return None
        package, _, path = self.levels.partition(":")
        name = f"{package.removeprefix('longpuzzle.').replace('.', '/')}/{path}"
        try:
            return read_text(self.levels), name
        except (OSError, ModuleNotFoundError) as e:     # the other games keep their levels
            warnings.warn(f"{self.id}: its level file {self.levels!r} cannot be read ({e}); it has no built-in levels",
                          RuntimeWarning, stacklevel=2)
            return None

    def font_files(self, lang: str) -> list[str]:
        """The paths of the font files it declares for ``lang`` (those that exist)."""
        out = []
        for ref in self.fonts.get(lang, ()):
            package, sep, path = ref.partition(":")
            if not sep:
                raise DeclarationError(f"{self.id}: font {ref!r} is not named as 'package:relative/path'")
            try:
                f = resources.files(package).joinpath(path)
            except ModuleNotFoundError:
                continue
            if f.is_file():
                out.append(str(f))
            else:
                warnings.warn(f"{self.id}: its font {ref!r} is not there", RuntimeWarning, stacklevel=2)
        return out

    def label(self, text: str, lang: str) -> str | None:
        """What its screens show for ``text`` in ``lang`` where its own wording differs."""
        return self.labels.get(lang, {}).get(text)


_MISSING = object()


def _games_entry(doc: Any, ref: str, game: str) -> dict:
    games = doc.get("games") if isinstance(doc, dict) else None
    if not isinstance(games, dict) or not isinstance(games.get(game), dict):
        raise DeclarationError(f"{ref!r} has no entry for the game {game!r} under \"games\"")
    return games[game]
