"""Reading the fields of a level record: every value checked for type and range before a
game keeps it, so a record that validation accepts can never crash or hang the rules, the
screen or the renderer later (a NaN coordinate, a size of 1e30, a list where a colour name
belongs). Each reader raises the game's LevelFormatError naming the field.

    fail = level_fail(game, difficulty, number, where)   # what build_level raises
    f = Fields(record, fail)                      # fail(message, field) -> LevelFormatError
    x = f.number("x", lo=-COORD, hi=COORD)        # finite int or float within [lo, hi]
    n = f.integer("capacity", lo=1, hi=30)
    s = f.text("visual_size", default="regular", choices=NUT_WIDTH)
    f.number("x", source=bolt, field="bolts[3].x")   # a value of a nested object

Bounds used across the games: design coordinates within +-COORD, sizes within (0, SIZE].
"""

from __future__ import annotations

import math
from typing import Any
from collections.abc import Callable, Iterable

from longpuzzle.engine.errors import LevelFormatError

COORD = 10_000.0        # |design or authoring px| of any position in a level record
SIZE = 5_000.0          # largest size (width, height, step, radius) in px
MISSING = object()


def level_fail(game: str, difficulty: str, number: int, where: str) -> Callable[..., LevelFormatError]:
    """``fail(message, field="")``: the LevelFormatError of one level record (read from
    ``where``, the level ``game/difficulty/number``) - the one every game's build_level raises
    and hands to Fields."""
    lid = f"{game}/{difficulty}/{number}"

    def fail(msg: str, field: str = "") -> LevelFormatError:
        return LevelFormatError(msg, file=where, level=lid, field=field)
    return fail


def is_int(v: Any) -> bool:
    """An int, not a bool."""
    return isinstance(v, int) and not isinstance(v, bool)


def board_size(record: dict, fail: Callable[..., Exception], lo: int, hi: int) -> tuple[int, int]:
    """The record's ``rows`` and ``cols``, each an integer from lo to hi (a grid game's board)."""
    rows, cols = record.get("rows"), record.get("cols")
    for key, v in (("rows", rows), ("cols", cols)):
        if not is_int(v) or not lo <= v <= hi:
            raise fail(f"must be an integer from {lo} to {hi}", key)
    return rows, cols


def is_number(v: Any) -> bool:
    return type(v) in (int, float) and (type(v) is int or math.isfinite(v))


class Fields:
    """Typed, bounded reads of one record's fields (see the module docstring)."""

    def __init__(self, record: dict, fail: Callable[[str, str], Exception], prefix: str = ""):
        self.record = record
        self.fail = fail
        self.prefix = prefix

    def _get(self, key: str, default, source, field):
        src = self.record if source is None else source
        name = field or f"{self.prefix}{key}"
        if not isinstance(src, dict):
            raise self.fail("must be an object", name.rsplit(".", 1)[0] if "." in name else name)
        if key not in src:                   # (an explicit null is a value, and refused)
            if default is MISSING:
                raise self.fail("is missing", name)
            return default, name, True
        return src[key], name, False

    def number(self, key: str, *, lo: float = -COORD, hi: float = COORD, default=MISSING, source: dict | None = None,
               field: str = "", positive: bool = False) -> float:
        """A finite number (not a bool) within [lo, hi] (and > 0 with ``positive``)."""
        v, name, dflt = self._get(key, default, source, field)
        if dflt:
            return v
        if not is_number(v):
            raise self.fail(f"must be a finite number, not {_short(v)}", name)
        if not lo <= v <= hi or (positive and v <= 0):
            rng = f"{'above 0' if positive else f'at least {lo:g}'} and at most {hi:g}"
            raise self.fail(f"must be {rng}, not {_short(v)}", name)
        return v

    def integer(self, key: str, *, lo: int = -(2 ** 31), hi: int = 2 ** 31 - 1, default=MISSING,
                source: dict | None = None, field: str = "") -> int:
        """An integer (not a bool; a float with an integral value is accepted) within [lo, hi]."""
        v, name, dflt = self._get(key, default, source, field)
        if dflt:
            return v
        if type(v) is float and math.isfinite(v) and v.is_integer():
            v = int(v)
        if type(v) is not int:
            raise self.fail(f"must be an integer, not {_short(v)}", name)
        if not lo <= v <= hi:
            raise self.fail(f"must be from {lo} to {hi}, not {_short(v)}", name)
        return v

    def text(self, key: str, *, default=MISSING, choices: Iterable[str] | None = None, max_len: int = 200,
             source: dict | None = None, field: str = "", empty: bool = True) -> str:
        """A string of at most ``max_len`` characters (one of ``choices`` if given)."""
        v, name, dflt = self._get(key, default, source, field)
        if dflt:
            return v
        if type(v) is not str:
            raise self.fail(f"must be text, not {_short(v)}", name)
        if len(v) > max_len or (not empty and not v):
            raise self.fail(f"must be {'non-empty ' if not empty else ''}text of at most {max_len} characters", name)
        if choices is not None:
            ch = list(choices)
            if v not in ch:
                raise self.fail(f"must be one of {', '.join(map(repr, ch))}, not {_short(v)}", name)
        return v

    def flag(self, key: str, *, default=MISSING, source: dict | None = None, field: str = "") -> bool:
        v, name, dflt = self._get(key, default, source, field)
        if dflt:
            return v
        if type(v) is not bool:
            raise self.fail(f"must be true or false, not {_short(v)}", name)
        return v

    def point(self, key: str, *, lo: float = -COORD, hi: float = COORD, default=MISSING, source: dict | None = None,
              field: str = "") -> tuple[float, float]:
        """[x, y]: two finite numbers within [lo, hi]."""
        v, name, dflt = self._get(key, default, source, field)
        if dflt:
            return v
        if type(v) is not list or len(v) != 2 or not all(is_number(c) and lo <= c <= hi for c in v):
            raise self.fail(f"must be [x, y] with finite numbers from {lo:g} to {hi:g}, not {_short(v)}", name)
        return v[0], v[1]


def _short(v: Any) -> str:
    s = repr(v) if type(v) is not int or abs(v) < 10 ** 30 else "a huge integer"
    return s if len(s) <= 40 else s[:37] + "..."
