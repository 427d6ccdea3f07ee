"""The GUI action set (engine/gui.py) as a Gymnasium space, and the conversions both ways.

``gui_action_space((W, H))`` is a ``Dict``; one sample is one GUI action. ``type`` picks the
action and the other parts are its parameters (parts the type does not use are ignored):

    type        Discrete(len(GUI_TYPES)): index into GUI_TYPES
                  click  double_click  long_press  press  move  release  drag  swipe  key
                  typetext  scroll  wait
    point       Box (2,) float32 in [0, W-1] x [0, H-1]: x, y of click / double_click /
                long_press / press / move / release / scroll; the start of drag / swipe
    end         Box (2,) float32, same bounds: the end of drag / swipe
    via         Box (MAX_VIA, 2) float32, same bounds: a drag's waypoints, of which the first
    n_via       Discrete(MAX_VIA + 1) are used (0: a straight drag)
    steps       Discrete(60, start=1): pointer moves of a drag / swipe (per segment of a
                drag through waypoints)
    ms          Box () int64 in [0, MAX_MS]: long_press hold, drag / swipe duration (at least
                1), wait time
    key         Discrete(len(KEYS)): index into KEYS (named keys, then a-z, then 0-9)
    text        Text(1 .. MAX_TEXT characters of TEXT_CHARS): what typetext types
    direction   Discrete(4): scroll direction, index into engine.gui.DIRECTIONS
    amount      Box () int64 in [1, 100000]: scroll amount

``to_gui(sample, (W, H))`` gives the action dict ``Suite.dispatch`` takes (validated:
coordinates are clipped into the frame), ``from_gui(action, (W, H))`` a sample for a single
(non-batch) action dict (e.g. to turn an expert's recorded actions into space samples).
Batches are not part of the space (a policy issues one action per step); pixel
environments still accept any action dict, batches included.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces

from longpuzzle.engine import gui

GUI_TYPES = ("click", "double_click", "long_press", "press", "move", "release", "drag", "swipe", "key", "typetext",
             "scroll", "wait")
KEYS = tuple(gui.NAMED_KEYS) + tuple("abcdefghijklmnopqrstuvwxyz") + tuple("0123456789")
TEXT_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 \n\t"
MAX_VIA = gui.MAX_VIA
MAX_STEPS = 60
MAX_AMOUNT = 100_000
_TYPE_INDEX = {t: i for i, t in enumerate(GUI_TYPES)}
_KEY_INDEX = {k: i for i, k in enumerate(KEYS)}


def gui_action_space(size: tuple[int, int], seed: int | None = None) -> spaces.Dict:
    """The Dict space of single GUI actions on a frame of ``size`` = (W, H)."""
    w, h = size
    hi = np.array([w - 1, h - 1], np.float32)
    return spaces.Dict({
        "type": spaces.Discrete(len(GUI_TYPES)),
        "point": spaces.Box(np.zeros(2, np.float32), hi, (2,), np.float32),
        "end": spaces.Box(np.zeros(2, np.float32), hi, (2,), np.float32),
        "via": spaces.Box(np.zeros((MAX_VIA, 2), np.float32), np.tile(hi, (MAX_VIA, 1)), (MAX_VIA, 2), np.float32),
        "n_via": spaces.Discrete(MAX_VIA + 1),
        "steps": spaces.Discrete(MAX_STEPS, start=1),
        "ms": spaces.Box(0, gui.MAX_MS, (), np.int64),
        "key": spaces.Discrete(len(KEYS)),
        "text": spaces.Text(gui.MAX_TEXT, min_length=1, charset=TEXT_CHARS),
        "direction": spaces.Discrete(len(gui.DIRECTIONS)),
        "amount": spaces.Box(1, MAX_AMOUNT, (), np.int64),
    }, seed=seed)


def is_sample(action: Any) -> bool:
    """True for a space sample (``type`` a number), False for an action dict (``type`` text)."""
    return isinstance(action, Mapping) and not isinstance(action.get("type", action.get("action_type")), str)


def _xy(v: Any, size: tuple[int, int], part: str) -> tuple[float, float]:
    try:
        x, y = (float(c) for c in np.asarray(v, dtype=np.float64).reshape(2))
    except (TypeError, ValueError):
        raise gui.ActionError(f"action part {part!r} must be two numbers (x, y), not {v!r}") from None
    if not (math.isfinite(x) and math.isfinite(y)):
        raise gui.ActionError(f"action part {part!r} must be finite, not {v!r}")
    w, h = size
    return min(max(x, 0.0), w - 1.0), min(max(y, 0.0), h - 1.0)


def _int(sample: Mapping, part: str, lo: int, hi: int, default: int) -> int:
    v = sample.get(part, default)
    try:
        f = float(np.asarray(v).reshape(()))
    except (TypeError, ValueError):
        raise gui.ActionError(f"action part {part!r} must be a number, not {v!r}") from None
    if not math.isfinite(f):
        raise gui.ActionError(f"action part {part!r} must be finite, not {v!r}")
    return int(min(max(round(f), lo), hi))


def to_gui(sample: Mapping, size: tuple[int, int]) -> dict:
    """The GUI action dict of a space sample (parts a type does not use are ignored, and may
    be missing), validated. Raises gui.ActionError for a type index out of range or a missing
    part."""
    return gui.validate(sample_action(sample, size), size)


def sample_action(sample: Mapping, size: tuple[int, int]) -> dict:
    """The GUI action dict of a space sample, not yet validated (to_gui validates it; the
    env gives it to Suite.validate, its one validation). Raises gui.ActionError for a type
    index out of range or a missing part."""
    t = _int(sample, "type", -1, len(GUI_TYPES), -1)
    if not 0 <= t < len(GUI_TYPES):
        raise gui.ActionError(f"action type {sample.get('type')!r} is not an index of {', '.join(GUI_TYPES)}")
    typ = GUI_TYPES[t]

    def need(part):
        if part not in sample:
            raise gui.ActionError(f"a {typ} sample needs the part {part!r}")
        return sample[part]

    if typ in ("click", "double_click", "press", "move", "release"):
        x, y = _xy(need("point"), size, "point")
        out = {"type": typ, "x": x, "y": y}
    elif typ == "long_press":
        x, y = _xy(need("point"), size, "point")
        out = {"type": typ, "x": x, "y": y, "ms": _int(sample, "ms", 1, gui.MAX_MS, 1000)}
    elif typ in ("drag", "swipe"):
        x0, y0 = _xy(need("point"), size, "point")
        x1, y1 = _xy(need("end"), size, "end")
        out = {"type": typ, "x0": x0, "y0": y0, "x1": x1, "y1": y1,
               "steps": _int(sample, "steps", 1, MAX_STEPS, 10), "ms": _int(sample, "ms", 1, gui.MAX_MS, 400)}
        n_via = _int(sample, "n_via", 0, MAX_VIA, 0) if typ == "drag" else 0
        if n_via:
            pts = np.asarray(need("via"), dtype=np.float64).reshape(-1, 2)
            if len(pts) < n_via:
                raise gui.ActionError(f"n_via is {n_via} but 'via' holds {len(pts)} points")
            out["via"] = [list(_xy(pts[i], size, f"via[{i}]")) for i in range(n_via)]
    elif typ == "key":
        out = {"type": typ, "name": KEYS[_int(sample, "key", 0, len(KEYS) - 1, 0)]}
    elif typ == "typetext":
        text = need("text")
        if not isinstance(text, str):
            raise gui.ActionError(f"a typetext sample's 'text' must be text, not {text!r}")
        out = {"type": typ, "text": text}
    elif typ == "scroll":
        x, y = _xy(need("point"), size, "point")
        out = {"type": typ, "x": x, "y": y, "direction": gui.DIRECTIONS[_int(sample, "direction", 0, 3, 1)],
               "amount": _int(sample, "amount", 1, MAX_AMOUNT, 400)}
    else:
        out = {"type": "wait", "ms": _int(sample, "ms", 0, gui.MAX_MS, 1000)}
    return out


def from_gui(action: dict, size: tuple[int, int]) -> dict:
    """A space sample for one GUI action dict (validated first; batches are refused)."""
    a = gui.validate(action, size)
    typ = a["type"]
    if typ not in _TYPE_INDEX:
        raise gui.ActionError(f"{typ} actions are not part of the GUI action space (one action per step)")
    if typ == "release" and "x" not in a:
        raise gui.ActionError("a release without a point is not in the GUI action space; give its x, y "
                              "(where the pointer is)")
    s = {"type": np.int64(_TYPE_INDEX[typ]), "point": np.zeros(2, np.float32), "end": np.zeros(2, np.float32),
         "via": np.zeros((MAX_VIA, 2), np.float32), "n_via": np.int64(0), "steps": np.int64(10),
         "ms": np.array(0, np.int64), "key": np.int64(0), "text": "a", "direction": np.int64(1),
         "amount": np.array(400, np.int64)}
    if "x" in a:
        s["point"] = np.array([a["x"], a["y"]], np.float32)
    elif "x0" in a:
        s["point"] = np.array([a["x0"], a["y0"]], np.float32)
        s["end"] = np.array([a["x1"], a["y1"]], np.float32)
        s["steps"] = np.int64(a["steps"])
        if a.get("via"):
            s["via"][:len(a["via"])] = a["via"]
            s["n_via"] = np.int64(len(a["via"]))
    if typ == "typetext":
        s["text"] = a["text"]
    if "ms" in a:
        s["ms"] = np.array(a["ms"], np.int64)
    if typ == "key":
        s["key"] = np.int64(_KEY_INDEX[a["name"]])
    if typ == "scroll":
        s["direction"] = np.int64(gui.DIRECTIONS.index(a["direction"]))
        s["amount"] = np.array(a["amount"], np.int64)
    return s
