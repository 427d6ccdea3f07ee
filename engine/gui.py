"""The native GUI action set: schema, validation and expansion into pointer / key events.

An action is a JSON-able dict with a ``type`` (HARNESS.md section 4 names in brackets)::

    {"type": "click", "x": X, "y": Y}                      (tap)
    {"type": "double_click", "x": X, "y": Y}               (double_tap, doubleclick) two clicks 100 ms apart
    {"type": "long_press", "x": X, "y": Y, "ms": 1000}
    {"type": "press", "x": X, "y": Y}                      pointer down, held until "release"
    {"type": "release"} or {"type": "release", "x": X, "y": Y}   (move there, then up)
    {"type": "drag", "x0":, "y0":, "x1":, "y1":, "steps": 10, "ms": 400}
    {"type": "drag", "x0":, "y0":, "via": [[x, y], ...], "x1":, "y1":}
                               a pointer path with corners: pressed at (x0, y0), moved through
                               each waypoint in order to (x1, y1), released there; ``steps``
                               moves per segment, ``ms`` for the whole path at constant speed
                               (at most MAX_VIA waypoints)
    {"type": "move", "x": X, "y": Y}                       the pointer moves there (while a
                                                           "press" holds the button: a drag)
    {"type": "swipe", "x0":, "y0":, "x1":, "y1":}           by end points, or
    {"type": "swipe", "direction": "up", "x": X, "y": Y, "distance": D}
                               (x, y default to the frame centre, distance to 0.4 * min(W, H);
                                the end point is clamped into the frame)
    {"type": "key", "name": "Enter"}                       letters, digits, Enter, Escape, Space,
                                                           Backspace, Tab, ArrowUp/Down/Left/Right
    {"type": "typetext", "text": "abc 12"}                 typed as key presses TYPE_KEY_MS apart:
                               letters, digits, space, newline (Enter), tab; at most MAX_TEXT
    {"type": "scroll", "x":, "y":, "direction": "down", "amount": 400}
    {"type": "wait", "ms": 1000}
    {"type": "batch", "actions": [action, ...]}            executed in order

Coordinates are pixels of the frame the agent sees (0 <= x < W, 0 <= y < H). Anything
malformed raises :class:`ActionError` saying what is wrong; validation returns a normalised
copy with every default filled in. Validation never runs code of the object it is given
(:func:`plain` reads subclasses of dict, list, str, int and float through their base types)
and is bounded: a batch holds at most MAX_BATCH actions counting every nested batch, batches
nest at most MAX_NESTING deep, an action holds at most MAX_VALUES values and texts of at
most MAX_PLAIN_TEXT characters, integers beyond MAX_INT are refused before any float conversion,
and error messages quote at most a few dozen characters of what they refuse. :func:`expand` turns one (non-batch) action into timed
low-level events: ``(t_ms, kind, x, y, key)`` with kind one of DOWN, MOVE, UP, KEY, WHEEL,
WAIT, and t relative to the action's start.
"""

from __future__ import annotations

import math
from typing import Any

from longpuzzle.engine.errors import LongPuzzleError

DOWN, MOVE, UP, KEY, WHEEL, WAIT = "down", "move", "up", "key", "wheel", "wait"
CLICK_MS = 40             # press .. release of a click
DOUBLE_CLICK_GAP_MS = 100
MAX_BATCH = 200          # actions in a batch, nested batches included
MAX_NESTING = 4          # batch depth
MAX_VALUES = 4000        # values (numbers, texts, lists, objects) in one action
MAX_PLAIN_TEXT = 1000    # characters of any one text in an action (plain)
MAX_INT = 10 ** 15       # integers beyond this are refused (before any float conversion)
MAX_MS = 600_000
MAX_VIA = 100             # waypoints of one pointer path
MAX_TEXT = 200            # characters of one typetext
TYPE_KEY_MS = 30          # between two typed characters
DIRECTIONS = ("up", "down", "left", "right")
NAMED_KEYS = ("Enter", "Escape", "Space", "Backspace", "Tab", "ArrowUp", "ArrowDown", "ArrowLeft", "ArrowRight")
_KEY_ALIASES = {k.lower(): k for k in NAMED_KEYS}
_KEY_ALIASES.update({"return": "Enter", "esc": "Escape", " ": "Space", "up": "ArrowUp", "down": "ArrowDown",
                     "left": "ArrowLeft", "right": "ArrowRight"})
ALIASES = {"tap": "click", "double_tap": "double_click", "doubleclick": "double_click"}
_TEXT_KEYS = {" ": "Space", "\n": "Enter", "\t": "Tab"}

# type -> (required fields, optional fields with defaults)
SCHEMA: dict[str, tuple[tuple[str, ...], dict[str, Any]]] = {
    "click": (("x", "y"), {}),
    "double_click": (("x", "y"), {}),
    "long_press": (("x", "y"), {"ms": 1000}),
    "press": (("x", "y"), {}),
    "release": ((), {"x": None, "y": None}),
    "drag": (("x0", "y0", "x1", "y1"), {"steps": 10, "ms": 400, "via": None}),
    "move": (("x", "y"), {}),
    "swipe": ((), {"x0": None, "y0": None, "x1": None, "y1": None, "x": None, "y": None,
                   "direction": None, "distance": None, "steps": 8, "ms": 300}),
    "key": (("name",), {}),
    "typetext": (("text",), {}),
    "scroll": ((), {"x": None, "y": None, "direction": "down", "amount": 400}),
    "wait": ((), {"ms": 1000}),
    "batch": (("actions",), {}),
}
ACTION_TYPES = tuple(SCHEMA)


class ActionError(LongPuzzleError, ValueError):
    """A GUI action that is malformed (unknown type, missing or bad field, off the frame)."""


def short(v: Any, n: int = 40) -> str:
    """repr() of a value for a message, at most about ``n`` characters (never runs its code
    beyond the plain types' own repr)."""
    if type(v) in (int, float, bool, type(None)):
        r = repr(v) if type(v) is not int or -10 ** 30 < v < 10 ** 30 else f"<an integer of about {_digits(v)} digits>"
    elif type(v) is str:
        r = repr(v[:n + 1])
    else:
        r = f"<{type(v).__name__}>"
    return r if len(r) <= n + 2 else r[:n] + f"...' ({len(v)} characters)" if type(v) is str else r[:n] + "..."


def _digits(v: int) -> int:
    return max(1, int(abs(v).bit_length() * 0.30103) + 1)


_PLAIN_NUM = {}            # exact numpy scalar types -> converter, filled on first use


def plain(action: Any) -> Any:
    """A plain copy of ``action``: dicts with text keys, lists, texts, ints, floats, bools and
    None, read without running any of the object's own code (a subclass of dict, list, tuple,
    str, int or float is read through its base type, so a lying ``__len__`` or a hanging
    ``__iter__`` is never called; exact numpy scalars become numbers). Raises ActionError for
    anything else, or when the action holds more than MAX_VALUES values, texts longer than
    MAX_PLAIN_TEXT characters, or nesting deeper than 3 * MAX_NESTING + 4."""
    count = [0]
    return _plain(action, count, 0)


def _plain(v: Any, count: list, depth: int) -> Any:
    count[0] += 1
    if count[0] > MAX_VALUES:
        raise ActionError(f"an action holds at most {MAX_VALUES} values")
    t = type(v)
    if t is str or t is int or t is float or t is bool or v is None:
        if t is str and len(v) > MAX_PLAIN_TEXT:
            raise ActionError(f"a text in an action has at most {MAX_PLAIN_TEXT} characters, not {len(v)}")
        return v
    if depth > 3 * MAX_NESTING + 4:
        raise ActionError("the action is nested too deeply")
    if issubclass(t, dict):
        out = {}
        for k, x in dict.items(v):
            tk = type(k)
            if tk is not str:
                if not issubclass(tk, str):
                    raise ActionError(f"field names are text, not {tk.__name__}")
                k = str.__str__(k)
            if len(k) > MAX_PLAIN_TEXT:
                raise ActionError(f"a field name has at most {MAX_PLAIN_TEXT} characters, not {len(k)}")
            out[k] = _plain(x, count, depth + 1)
        return out
    if issubclass(t, (list, tuple)):
        base = list if issubclass(t, list) else tuple
        n = base.__len__(v)
        if count[0] + n > MAX_VALUES:
            raise ActionError(f"an action holds at most {MAX_VALUES} values")
        return [_plain(base.__getitem__(v, i), count, depth + 1) for i in range(n)]
    if issubclass(t, bool):
        return bool(int.__index__(v))
    if issubclass(t, int):
        return int.__index__(v)
    if issubclass(t, float):
        return float.__float__(v)
    if issubclass(t, str):
        return _plain(str.__str__(v), count, depth)
    conv = _numpy_scalar(t)
    if conv is not None:
        return conv(v)
    raise ActionError(f"an action holds only numbers, text, lists and objects, not {t.__name__}")


def _numpy_scalar(t: type):
    if not _PLAIN_NUM:
        try:
            import numpy as np
        except ImportError:          # pragma: no cover
            _PLAIN_NUM[None] = None
        else:
            for n in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"):
                _PLAIN_NUM[getattr(np, n)] = lambda v: int(np.int64(v)) if v <= np.iinfo(np.int64).max else int(str(v))
            for n in ("float16", "float32", "float64"):
                _PLAIN_NUM[getattr(np, n)] = lambda v: float(np.float64(v))
            _PLAIN_NUM[np.bool_] = lambda v: bool(v)
    return _PLAIN_NUM.get(t)


def _num(a: dict, k: str, where: str) -> float:
    v = a[k]
    t = type(v)
    if t is int:
        if -MAX_INT <= v <= MAX_INT:
            return v
    elif t is float and math.isfinite(v) and -MAX_INT <= v <= MAX_INT:
        return v
    raise ActionError(f"{where}field {k!r} must be a finite number (at most {MAX_INT:.0e} in size), not {short(v)}")


def _int(a: dict, k: str, lo: int, hi: int, where: str) -> int:
    v = a[k]
    if type(v) is not int and not (type(v) is float and v.is_integer()):
        raise ActionError(f"{where}field {k!r} must be an integer, not {short(v)}")
    v = int(v)
    if not lo <= v <= hi:
        raise ActionError(f"{where}field {k!r} must be between {lo} and {hi}, not {short(v)}")
    return v


def _point(a: dict, kx: str, ky: str, size: tuple[int, int], where: str):
    x, y = _num(a, kx, where), _num(a, ky, where)
    w, h = size
    if not (0 <= x < w and 0 <= y < h):
        raise ActionError(f"{where}point ({kx}={x}, {ky}={y}) is outside the {w} x {h} frame "
                          f"(0 <= x < {w}, 0 <= y < {h})")
    return x, y


def key_name(name: Any) -> str:
    """Canonical key name, or ActionError."""
    if isinstance(name, str):
        if len(name) == 1 and name.isascii() and name.isalnum():
            return name.lower()
        k = _KEY_ALIASES.get(name.lower())
        if k:
            return k
    raise ActionError(f"unknown key {short(name)}; keys are single letters or digits, or one of {', '.join(NAMED_KEYS)}")


def _plain_point(x: Any, y: Any, size: tuple[int, int]) -> bool:
    """Whether (x, y) are plain numbers (int or float, not bool) inside a frame of ``size``
    (False for NaN and infinities): what the fast paths accept without the full reading."""
    return (type(x) is int or type(x) is float) and (type(y) is int or type(y) is float) \
        and 0 <= x < size[0] and 0 <= y < size[1]


def click_point(action: Any, size: tuple[int, int]) -> tuple[float, float] | None:
    """(x, y) of a well-formed click (exactly the keys type, x, y) for a frame of ``size``,
    else None (then validate() tells what it is)."""
    if type(action) is dict and len(action) == 3 and action.get("type") == "click":
        x, y = action.get("x"), action.get("y")
        if _plain_point(x, y, size):
            return x, y
    return None


def _fast_click(action: Any, size: tuple[int, int]) -> dict | None:
    """The normalised copy of a well-formed click (the commonest action), else None (the
    full validation then runs and explains any problem)."""
    p = click_point(action, size)
    return None if p is None else {"type": "click", "x": p[0], "y": p[1]}


def _fast_clicks(acts: list, size: tuple[int, int]) -> list[dict] | None:
    """The normalised copies of a list of well-formed clicks (as _fast_click), else None."""
    out = []
    for a in acts:
        p = click_point(a, size)
        if p is None:
            return None
        out.append({"type": "click", "x": p[0], "y": p[1]})
    return out


def _fast_drag(action: dict, size: tuple[int, int]) -> dict | None:
    """The normalised copy of a drag whose fields are all present and plainly valid, with
    ``via`` (when there are 8 fields) a non-empty list of [x, y] lists inside the frame, else
    None."""
    f = drag_fields(action, size)
    if f is None:
        return None
    x0, y0, x1, y1, steps, ms = f
    if len(action) == 7:
        return {"type": "drag", "x0": x0, "y0": y0, "x1": x1, "y1": y1, "steps": steps, "ms": ms}
    via = action.get("via")
    if type(via) is not list or not 0 < len(via) <= MAX_VIA:
        return None
    pts = []
    for p in via:
        if type(p) is not list or len(p) != 2 or not _plain_point(p[0], p[1], size):
            return None
        pts.append([p[0], p[1]])
    return {"type": "drag", "x0": x0, "y0": y0, "via": pts, "x1": x1, "y1": y1, "steps": steps, "ms": ms}


_SWIPE_STEPS, _SWIPE_MS = SCHEMA["swipe"][1]["steps"], SCHEMA["swipe"][1]["ms"]


def _fast_swipe(action: dict, size: tuple[int, int]) -> dict | None:
    """The normalised copy of a swipe given by its end points alone (or with steps and ms too),
    all plainly valid, else None."""
    if len(action) == 5:
        if "x0" not in action or "y0" not in action or "x1" not in action or "y1" not in action:
            return None
        action = {**action, "steps": _SWIPE_STEPS, "ms": _SWIPE_MS}        # the defaults
    f = drag_fields(action, size)
    if f is None:
        return None
    x0, y0, x1, y1, steps, ms = f
    return {"type": "swipe", "x0": x0, "y0": y0, "x1": x1, "y1": y1, "steps": steps, "ms": ms}


def drag_fields(action: dict, size: tuple[int, int]) -> tuple | None:
    """(x0, y0, x1, y1, steps, ms) of a drag dict whose fields are all present and plainly
    valid for a frame of ``size`` (other keys are not looked at), else None."""
    w, h = size
    try:
        x0, y0, x1, y1 = action["x0"], action["y0"], action["x1"], action["y1"]
        steps, ms = action["steps"], action["ms"]
    except KeyError:
        return None
    for v in (x0, y0, x1, y1):
        if type(v) is not int and type(v) is not float:
            return None
    if type(steps) is not int or type(ms) is not int or not (1 <= steps <= 60 and 1 <= ms <= MAX_MS):
        return None
    if not (0 <= x0 < w and 0 <= x1 < w and 0 <= y0 < h and 0 <= y1 < h):
        return None
    return x0, y0, x1, y1, steps, ms


def validate(action: Any, size: tuple[int, int], _where: str = "", _depth: int = 0, _count: list | None = None) -> dict:
    """Check one action against the schema for a frame of ``size`` = (W, H); return it
    normalised (aliases resolved, defaults filled). Raises ActionError.

    The one validation of a GUI action: the commonest well-formed actions are taken by their
    fast readers (_FAST: their result is what the full reading gives), anything else is read
    as plain data once, its type and fields checked against SCHEMA (_fields), and its values
    by the check of its type (_CHECKS)."""
    if type(action) is dict:
        t = action.get("type")
        fast = _FAST.get(t) if type(t) is str else None
        if fast is not None:
            a = fast(action, size, _depth)
            if a is not None:
                return a
    if _count is None:                             # the top level: read it as plain data, once
        action = plain(action)
        _count = [0]
    t, a = _fields(action, _where)
    out: dict[str, Any] = {"type": t}
    _CHECKS[t](a, out, _Ctx(size, _where, _depth, _count))
    return out


class _Ctx:
    """What a per-type check needs besides the fields: the frame size, the place of the action
    in a batch (for messages), the batch depth and the running count of batched actions."""
    __slots__ = ("size", "where", "depth", "count")

    def __init__(self, size: tuple[int, int], where: str, depth: int, count: list):
        self.size, self.where, self.depth, self.count = size, where, depth, count


def _fields(action: Any, where: str) -> tuple[str, dict]:
    """(type, fields with the type's defaults filled) of a plain action; ActionError when it
    is not an object, has no known type, or lacks or adds fields."""
    if type(action) is not dict:
        raise ActionError(f"{where}an action must be a JSON object like {{\"type\": \"click\", \"x\": 10, \"y\": 20}}, "
                          f"not {'a list' if type(action) is list else type(action).__name__}")
    t = action.get("type")
    if t is None:
        t = action.get("action_type")
    if type(t) is not str:
        raise ActionError(f"{where}action has no \"type\"; types are: {', '.join(ACTION_TYPES)}")
    t = ALIASES.get(t, t)
    if t not in SCHEMA:
        raise ActionError(f"{where}unknown action type {short(t)}; types are: {', '.join(ACTION_TYPES)}")
    required, optional = SCHEMA[t]
    a = dict(optional)
    a.update(action)
    a.pop("type", None)
    a.pop("action_type", None)
    if len(a) != len(optional) + len(required) or not all(k in a for k in required):
        given = set(action) - {"type", "action_type"}
        extra = sorted(given - set(required) - set(optional))
        if extra:
            allowed = ", ".join(required + tuple(optional)) or "none"
            shown = ", ".join(short(k, 30) for k in extra[:5]) + (f" and {len(extra) - 5} more" if len(extra) > 5 else "")
            raise ActionError(f"{where}unexpected field(s) {shown} for {t} (allowed: {allowed})")
        missing = [k for k in required if k not in given]
        raise ActionError(f"{where}{t} needs field(s) {', '.join(map(repr, missing))}")
    return t, a


# ---- the fast readers of the commonest well-formed actions (None: read it in full) ----------
def _fast_click_at(action: dict, size: tuple[int, int], depth: int) -> dict | None:
    if len(action) == 3:                           # click_point, inlined
        x, y = action.get("x"), action.get("y")
        if (type(x) is int or type(x) is float) and (type(y) is int or type(y) is float) \
                and 0 <= x < size[0] and 0 <= y < size[1]:
            return {"type": "click", "x": x, "y": y}
    return None


def _fast_batch(action: dict, size: tuple[int, int], depth: int) -> dict | None:
    if len(action) == 2 and depth == 0:
        acts = action.get("actions")               # a short batch of well-formed clicks
        if type(acts) is list and 0 < len(acts) <= MAX_BATCH:
            out = _fast_clicks(acts, size)
            if out is not None:
                return {"type": "batch", "actions": out}
    return None


def _fast_drag_at(action: dict, size: tuple[int, int], depth: int) -> dict | None:
    # a drag with every field given (and waypoints)
    return _fast_drag(action, size) if len(action) == 7 or len(action) == 8 else None


def _fast_swipe_at(action: dict, size: tuple[int, int], depth: int) -> dict | None:
    # a swipe by its end points
    return _fast_swipe(action, size) if len(action) == 5 or len(action) == 7 else None


_FAST = {"click": _fast_click_at, "batch": _fast_batch, "drag": _fast_drag_at, "swipe": _fast_swipe_at}


# ---- the check of each action type: fills ``out`` from the fields ``a`` ---------------------
def _check_point(a: dict, out: dict, c: _Ctx) -> None:            # click, double_click, press, move
    out["x"], out["y"] = _point(a, "x", "y", c.size, c.where)


def _check_long_press(a: dict, out: dict, c: _Ctx) -> None:
    _check_point(a, out, c)
    out["ms"] = _int(a, "ms", 1, MAX_MS, c.where)


def _check_release(a: dict, out: dict, c: _Ctx) -> None:
    if (a["x"] is None) != (a["y"] is None):
        raise ActionError(f"{c.where}release takes both x and y, or neither")
    if a["x"] is not None:
        _check_point(a, out, c)


def _check_drag(a: dict, out: dict, c: _Ctx) -> None:
    where, size = c.where, c.size
    out["x0"], out["y0"] = _point(a, "x0", "y0", size, where)
    via = a["via"]
    if via is not None:
        if not isinstance(via, list) or len(via) > MAX_VIA:
            raise ActionError(f"{where}drag field 'via' must be a list of at most {MAX_VIA} [x, y] waypoints")
        pts = []
        for i, p in enumerate(via):
            if not isinstance(p, (list, tuple)) or len(p) != 2:
                raise ActionError(f"{where}drag via[{i}] must be a point [x, y], not {short(p)}")
            pts.append(list(_point({"x": p[0], "y": p[1]}, "x", "y", size, f"{where}drag via[{i}]: ")))
        if pts:
            out["via"] = pts
    out["x1"], out["y1"] = _point(a, "x1", "y1", size, where)
    _check_timing(a, out, c)


def _check_timing(a: dict, out: dict, c: _Ctx) -> None:          # a drag's or swipe's steps and ms
    out["steps"] = _int(a, "steps", 1, 60, c.where)
    out["ms"] = _int(a, "ms", 1, MAX_MS, c.where)


def _check_swipe(a: dict, out: dict, c: _Ctx) -> None:
    ends = [a[k] is not None for k in ("x0", "y0", "x1", "y1")]
    (_swipe_by_ends if any(ends) else _swipe_by_direction)(a, out, c, all(ends))
    _check_timing(a, out, c)


def _swipe_by_ends(a: dict, out: dict, c: _Ctx, every_end: bool) -> None:
    where = c.where
    if not every_end:
        raise ActionError(f"{where}a swipe by end points needs all of x0, y0, x1, y1")
    if a["direction"] is not None or a["x"] is not None or a["y"] is not None or a["distance"] is not None:
        raise ActionError(f"{where}give a swipe either by end points (x0, y0, x1, y1) "
                          "or by direction (direction, x, y, distance), not both")
    out["x0"], out["y0"] = _point(a, "x0", "y0", c.size, where)
    out["x1"], out["y1"] = _point(a, "x1", "y1", c.size, where)


_UNIT = {"up": (0, -1), "down": (0, 1), "left": (-1, 0), "right": (1, 0)}


def _swipe_by_direction(a: dict, out: dict, c: _Ctx, every_end: bool) -> None:
    where, (w, h) = c.where, c.size
    d = a["direction"]
    if d not in DIRECTIONS:
        raise ActionError(f"{where}a swipe needs end points or a direction in {', '.join(DIRECTIONS)}, "
                          f"not {short(d)}")
    x, y = _centre_or_point(a, c, "swipe")
    dist = 0.4 * min(w, h) if a["distance"] is None else _num(a, "distance", where)
    if dist <= 0:
        raise ActionError(f"{where}swipe distance must be positive, not {dist}")
    dx, dy = _UNIT[d]
    out["x0"], out["y0"] = x, y
    out["x1"] = min(max(x + dx * dist, 0), w - 1)
    out["y1"] = min(max(y + dy * dist, 0), h - 1)


def _centre_or_point(a: dict, c: _Ctx, what: str) -> tuple[float, float]:
    """The action's (x, y), or the frame centre when it gives neither."""
    if (a["x"] is None) != (a["y"] is None):
        raise ActionError(f"{c.where}{what} takes both x and y, or neither (then the frame centre)")
    return _point(a, "x", "y", c.size, c.where) if a["x"] is not None else (c.size[0] / 2, c.size[1] / 2)


def _check_key(a: dict, out: dict, c: _Ctx) -> None:
    out["name"] = key_name(a["name"])


def _check_typetext(a: dict, out: dict, c: _Ctx) -> None:
    text = a["text"]
    if not isinstance(text, str) or not 1 <= len(text) <= MAX_TEXT:
        raise ActionError(f"{c.where}typetext needs a \"text\" of 1 to {MAX_TEXT} characters")
    for ch in text:
        if not (ch in _TEXT_KEYS or (len(ch) == 1 and ch.isascii() and ch.isalnum())):
            raise ActionError(f"{c.where}typetext types letters, digits, space, newline and tab, not {ch!r}")
    out["text"] = text


def _check_scroll(a: dict, out: dict, c: _Ctx) -> None:
    out["x"], out["y"] = _centre_or_point(a, c, "scroll")
    if a["direction"] not in DIRECTIONS:
        raise ActionError(f"{c.where}scroll direction must be one of {', '.join(DIRECTIONS)}, "
                          f"not {short(a['direction'])}")
    out["direction"] = a["direction"]
    out["amount"] = _int(a, "amount", 1, 100_000, c.where)


def _check_wait(a: dict, out: dict, c: _Ctx) -> None:
    out["ms"] = _int(a, "ms", 0, MAX_MS, c.where)


def _check_batch(a: dict, out: dict, c: _Ctx) -> None:
    where, acts = c.where, a["actions"]
    if type(acts) is not list or not acts:
        raise ActionError(f"{where}batch needs a non-empty list \"actions\"")
    if len(acts) > MAX_BATCH:
        raise ActionError(f"{where}a batch holds at most {MAX_BATCH} actions, not {len(acts)}")
    if c.depth >= MAX_NESTING:
        raise ActionError(f"{where}batches nest at most {MAX_NESTING} deep")
    c.count[0] += len(acts)
    if c.count[0] > MAX_BATCH:
        raise ActionError(f"{where}a batch holds at most {MAX_BATCH} actions in all, nested batches included")
    out["actions"] = [_fast_click(x, c.size) or validate(x, c.size, f"{where}batch.actions[{i}]: ", c.depth + 1,
                                                          c.count)
                      for i, x in enumerate(acts)]


_CHECKS = {"click": _check_point, "double_click": _check_point, "press": _check_point, "move": _check_point,
           "long_press": _check_long_press, "release": _check_release, "drag": _check_drag,
           "swipe": _check_swipe, "key": _check_key, "typetext": _check_typetext, "scroll": _check_scroll,
           "wait": _check_wait, "batch": _check_batch}
assert set(_CHECKS) == set(SCHEMA)


def expand(action: dict) -> list[tuple[int, str, float, float, str]]:
    """Timed low-level events of one validated, non-batch action (t relative, ms)."""
    how = _EXPAND.get(action["type"])
    if how is None:
        raise ActionError(f"expand() takes a single action, not {action['type']!r}")
    return how(action)


_NAN = float("nan")


def _click_events(a: dict) -> list:
    x, y = a["x"], a["y"]
    return [(0, DOWN, x, y, ""), (CLICK_MS, UP, x, y, "")]


def _double_click_events(a: dict) -> list:
    x, y = a["x"], a["y"]
    t2 = CLICK_MS + DOUBLE_CLICK_GAP_MS
    return [(0, DOWN, x, y, ""), (CLICK_MS, UP, x, y, ""), (t2, DOWN, x, y, ""), (t2 + CLICK_MS, UP, x, y, "")]


def _long_press_events(a: dict) -> list:
    x, y = a["x"], a["y"]
    return [(0, DOWN, x, y, ""), (a["ms"], UP, x, y, "")]


def _release_events(a: dict) -> list:
    if "x" in a:
        return [(0, MOVE, a["x"], a["y"], ""), (1, UP, a["x"], a["y"], "")]
    return [(0, UP, _NAN, _NAN, "")]


def _drag_events(a: dict) -> list:
    """A drag or swipe: press, ``steps`` moves along the segment (or the waypoints), release."""
    if "via" in a:
        return _path_events(a)
    x0, y0, x1, y1, n, ms = a["x0"], a["y0"], a["x1"], a["y1"], a["steps"], a["ms"]
    ev = [(0, DOWN, x0, y0, "")]
    for i in range(1, n + 1):
        f = i / n
        ev.append((round(ms * f), MOVE, x0 + (x1 - x0) * f, y0 + (y1 - y0) * f, ""))
    ev.append((ms, UP, x1, y1, ""))
    return ev


def _typetext_events(a: dict) -> list:
    return [(i * TYPE_KEY_MS, KEY, _NAN, _NAN, _TEXT_KEYS.get(ch) or ch.lower()) for i, ch in enumerate(a["text"])]


# action type (every one but batch) -> its timed events
_EXPAND = {
    "click": _click_events, "double_click": _double_click_events, "long_press": _long_press_events,
    "press": lambda a: [(0, DOWN, a["x"], a["y"], "")],
    "release": _release_events,
    "move": lambda a: [(0, MOVE, a["x"], a["y"], "")],
    "drag": _drag_events, "swipe": _drag_events,
    "key": lambda a: [(0, KEY, _NAN, _NAN, a["name"])],
    "typetext": _typetext_events,
    "scroll": lambda a: [(0, WHEEL, a["x"], a["y"], f"{a['direction']}:{a['amount']}")],
    "wait": lambda a: [(a["ms"], WAIT, _NAN, _NAN, "")],
}
assert set(_EXPAND) == set(SCHEMA) - {"batch"}


def _path_events(action: dict) -> list[tuple[int, str, float, float, str]]:
    """A drag through waypoints: press at the start, ``steps`` moves along each segment (each
    waypoint reached exactly), release at the end; time runs with the distance travelled
    (a segment of zero length takes none)."""
    pts = [(action["x0"], action["y0"])] + [tuple(p) for p in action["via"]] + [(action["x1"], action["y1"])]
    lens = [math.hypot(bx - ax, by - ay) for (ax, ay), (bx, by) in zip(pts, pts[1:])]
    total, ms, n = sum(lens), action["ms"], action["steps"]
    ev = [(0, DOWN, pts[0][0], pts[0][1], "")]
    done, k, moves = 0.0, 0, n * len(lens)
    for (ax, ay), (bx, by), ln in zip(pts, pts[1:], lens):
        for i in range(1, n + 1):
            f = i / n
            k += 1
            t = round(ms * (done + ln * f) / total) if total > 0 else round(ms * k / moves)
            ev.append((t, MOVE, ax + (bx - ax) * f, ay + (by - ay) * f, ""))
        done += ln
    ev.append((ms, UP, pts[-1][0], pts[-1][1], ""))
    return ev


def presses(action: dict) -> int:
    """Pointer presses of a validated action, counted as the paper counts a person's (one per
    click, drag or swipe; a double click is two clicks)."""
    t = action["type"]
    if t == "batch":
        return sum(presses(a) for a in action["actions"])
    return 2 if t == "double_click" else 1 if t in ("click", "long_press", "press", "drag", "swipe") else 0


def click(x: float, y: float) -> dict:
    return {"type": "click", "x": x, "y": y}


def swipe(x0: float, y0: float, x1: float, y1: float) -> dict:
    return {"type": "swipe", "x0": x0, "y0": y0, "x1": x1, "y1": y1}


def batch(*actions: dict) -> dict:
    return {"type": "batch", "actions": list(actions)}
