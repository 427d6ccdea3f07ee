"""The catalogue's tiers described by numbers: tiers.json beside this file.

For every game and catalogue tier (objective) the file holds the range (min, max over the
tier's levels) of every certified figure of solvers/profile.py, the tier's structural shapes
(each level's board size and piece counts, as the game's generator reads them) and the
ACCEPTED range of the figures that define the game's tiers (DEFINING below): a generated
level of tier T must lie inside T's accepted ranges. Accepted = the catalogue's range, except
for a tier of fewer than MIN_LEVELS levels (Nut and Bolt nightmare has one): a single level
gives no range, so such a tier is defined by the game's first defining figure alone (its
optimal length), widened by WIDEN of each end's value. The accepted optimum of a tier whose
levels are only bounded (Bolt Unscrew hard: proven 15..26, 31..61) runs from the least lower
bound to the largest upper bound, and a generated level is accepted when both its proven
bounds lie inside (TierSpec.accepts).

The file is data made from the built-in catalogue by

    longpuzzle verify --profile --tiers-out solvers/generators/tiers.json

and read by the generators (so generation never depends on a catalogue computed at run time).
A game's tier data and defining figures are the ones its declaration names
(GameSpec.tiers, GameSpec.tier_figures: engine/declaration.py); the built-in games' entries
are in this package's tiers.json.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from functools import lru_cache
from importlib import resources

from longpuzzle.engine.errors import LongPuzzleError, UnknownGameError
from longpuzzle.engine.registry import spec, specs
from longpuzzle.solvers.generators.base import catalog_tiers  # noqa: F401 - (defined beside TierSpec; read here too)

TIERS_FORMAT = "longpuzzle-tiers/1"
MIN_LEVELS = 3
WIDEN = 0.12



class _Defining(Mapping):
    """game id -> the figures that define its tiers (the others are described, not
    required), as each game declares them (GameSpec.tier_figures); games declaring none are
    not keys."""

    def __getitem__(self, game: str) -> tuple[str, ...]:
        try:
            figures = spec(game).tier_figures
        except UnknownGameError:
            raise KeyError(game) from None
        if not figures:
            raise KeyError(game)
        return figures

    def __iter__(self):
        return (s.id for s in specs() if s.tier_figures)

    def __len__(self) -> int:
        return sum(1 for _ in self)


DEFINING = _Defining()
FIGURES = ("optimal", "lower_bound", "upper_bound", "states", "dead_end_density", "optimal_first_moves",
           "first_moves", "cells", "pairs", "search_nodes")


def figure_ranges(profiles: list[dict]) -> dict:
    """{figure: [min, max]} over profile dicts (figures missing everywhere are left out)."""
    out = {}
    for fig in FIGURES:
        vals = [d.get(fig) if fig != "optimal" or d.get("optimal") is not None else d.get("lower_bound")
                for d in profiles]
        vals = [v for v in vals if isinstance(v, (int, float)) and not isinstance(v, bool)]
        if vals:
            out[fig] = [min(vals), max(vals)]
    return out


def open_ends(profiles: list[dict]) -> set[str]:
    """Figures whose largest value over the profiles is only a lower bound (the state count
    of a level whose search the budget cut off): their accepted range has no upper end."""
    if not profiles:
        return set()
    top = max(profiles, key=lambda d: d.get("states") or 0)
    return set() if top.get("states_exact", True) else {"states"}


def accepted(game: str, ranges: dict, n_levels: int, open_hi: set[str] = frozenset()) -> dict:
    out = {}
    defining = DEFINING.get(game, ())
    if n_levels < MIN_LEVELS:
        defining = defining[:1]
    for fig in defining:
        if fig not in ranges:
            continue
        lo, hi = ranges[fig]
        if fig == "optimal" and "upper_bound" in ranges:
            # where a level's optimum is only bounded (Bolt Unscrew's hard levels), the
            # tier spans its proven bounds: from the least lower bound to the largest upper
            hi = max(hi, ranges["upper_bound"][1])
        if fig in open_hi:
            hi = None
        if n_levels < MIN_LEVELS:
            if isinstance(lo, int) and isinstance(hi, (int, type(None))):
                lo, hi = math.floor(lo * (1 - WIDEN)), None if hi is None else math.ceil(hi * (1 + WIDEN))
            else:
                lo, hi = round(lo * (1 - WIDEN), 6), None if hi is None else round(hi * (1 + WIDEN), 6)
        out[fig] = [lo, hi]
    return out


def build(profiles: dict[str, dict], catalog=None) -> dict:
    """tiers.json's content from {level id: profile dict} of the built-in catalogue."""
    from longpuzzle.engine.catalog import builtin_catalog as builtin
    from longpuzzle.solvers.generators import generator

    cat = catalog or builtin()
    games: dict = {}
    for obj in cat.objectives():
        profs = [profiles[lid] for lid in obj.level_ids if lid in profiles]
        if not profs:
            continue
        try:
            gen = generator(obj.game)
        except LongPuzzleError:     # a game without a generator: figures only
            gen = None
        ranges = figure_ranges(profs)
        entry = {"levels": len(obj.level_ids), "figures": ranges,
                 "accept": accepted(obj.game, ranges, len(obj.level_ids), open_ends(profs))}
        if gen is not None:
            entry["shapes"] = [gen.shape(cat.level(lid)) for lid in obj.level_ids]
        g = games.setdefault(obj.game, {"defining": list(DEFINING.get(obj.game, ())), "tiers": {}})
        g["tiers"][obj.difficulty] = entry
    return {"format": TIERS_FORMAT, "catalog_hash": getattr(cat, "content_hash", ""), "widen": WIDEN,
            "min_levels": MIN_LEVELS, "games": games}


@lru_cache(maxsize=1)
def tier_data() -> dict:
    text = (resources.files("longpuzzle.solvers.generators") / "tiers.json").read_text(encoding="utf-8")
    doc = json.loads(text)
    if doc.get("format") != TIERS_FORMAT:   # pragma: no cover - shipped data
        raise ValueError(f"solvers/generators/tiers.json: expected format {TIERS_FORMAT}")
    return doc


def tier_table(profiles: dict[str, dict], catalog=None) -> list[dict]:
    """Rows for `verify --profile`'s tier table: objective, levels, figure ranges."""
    from longpuzzle.engine.catalog import builtin_catalog as builtin
    cat = catalog or builtin()
    rows = []
    for obj in cat.objectives():
        profs = [profiles[lid] for lid in obj.level_ids if lid in profiles]
        if profs:
            rows.append({"objective": obj.id, "levels": len(profs), "defining": list(DEFINING.get(obj.game, ())),
                         "figures": figure_ranges(profs)})
    return rows
