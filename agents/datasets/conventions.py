"""A frame-pixel GUI action in the model conventions of agents/models/protocols.

The protocols there read a model's reply into frame-pixel actions and own the coordinate
conventions (``Protocol.model_point``: frame pixels -> the model's coordinates, the inverse
of what ``parse`` applies). This module writes the other way, what the model would have
written for an action, using those protocols' own converters, so that each protocol's
``parse`` reads it back to the same action (tests check the round trip):

    general_e2e   the original built-in agent's JSON action, coordinates on the 0..1000 grid:
                  {"action_type": "click", "coordinate": [x, y]}
    qwen          the Qwen-VL computer_use tool calls of the step, as a JSON list (a drag is
                  mouse_move to its start, then left_click_drag to its end), 0..1000 grid:
                  [{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [x, y]}}]
    uitars        the UI-TARS action call, pixels of the smart_resize'd screenshot:
                  click(start_box='(x,y)')

An action a format cannot express is None (a drag through waypoints; a press or release
for the GUI models; keys and text for the built-in agent, which has none). Durations and
pointer-step counts that a format has no field for are left to the parser's defaults.
"""

from __future__ import annotations

import json

from longpuzzle.agents.models.protocols import BuiltinProtocol, Context, QwenProtocol, UITarsProtocol
from longpuzzle.agents.models.protocols.gui_models import QWEN_TOOL

_E2E_POINT = {"click": "click", "double_click": "double_tap", "long_press": "long_press", "press": "press",
              "release": "release"}


_dump = json.JSONEncoder(separators=(", ", ": ")).encode
"""json.dumps(v, separators=(", ", ": ")), one encoder for every call (dumps makes one a call)."""


class Conventions:
    """The converters for frames of one size (W, H)."""

    def __init__(self, frame_size: tuple[int, int]):
        ctx = Context(instruction="", game=None, difficulty=None, frame_size=tuple(frame_size))
        self.e2e = BuiltinProtocol(ctx)
        self.qwen = QwenProtocol(ctx)
        self.uitars = UITarsProtocol(ctx)

    def all(self, a: dict) -> dict[str, str | None]:
        """The action in every convention: {"general_e2e": ..., "qwen": ..., "uitars": ...}."""
        return {"general_e2e": self.general_e2e(a), "qwen": self.qwen_calls(a), "uitars": self.uitars_call(a)}

    # ---- the original built-in agent ----------------------------------------------------
    def general_e2e(self, a: dict) -> str | None:
        t, p = a["type"], self.e2e.model_point
        if t in _E2E_POINT:
            if t == "release" and a.get("x") is None:
                return _dump({"action_type": "release"})
            out = {"action_type": _E2E_POINT[t], "coordinate": list(p(a["x"], a["y"]))}
            if t == "long_press":
                out["duration_ms"] = a["ms"]
            return _dump(out)
        if t in ("drag", "swipe") and not a.get("via"):
            return _dump({"action_type": t, "start_coordinate": list(p(a["x0"], a["y0"])),
                          "end_coordinate": list(p(a["x1"], a["y1"]))})
        if t == "wait":
            return _dump({"action_type": "wait", "duration_ms": a["ms"]})
        return None

    # ---- Qwen-VL ---------------------------------------------------------------------------
    def qwen_calls(self, a: dict) -> str | None:
        t, p = a["type"], self.qwen.model_point

        def call(**args):
            return {"name": QWEN_TOOL, "arguments": args}
        if t in ("click", "double_click"):
            calls = [call(action="left_click" if t == "click" else "double_click", coordinate=list(p(a["x"], a["y"])))]
        elif t == "move":
            calls = [call(action="mouse_move", coordinate=list(p(a["x"], a["y"])))]
        elif t in ("drag", "swipe") and not a.get("via"):
            calls = [call(action="mouse_move", coordinate=list(p(a["x0"], a["y0"]))),
                     call(action="left_click_drag", coordinate=list(p(a["x1"], a["y1"])))]
        elif t == "key":
            calls = [call(action="key", keys=[a["name"]])]
        elif t == "typetext":
            calls = [call(action="type", text=a["text"])]
        elif t == "scroll" and a["direction"] in ("up", "down"):
            args = {"action": "scroll", "pixels": a["amount"] if a["direction"] == "up" else -a["amount"]}
            if a.get("x") is not None:
                args["coordinate"] = list(p(a["x"], a["y"]))
            calls = [call(**args)]
        elif t == "wait":
            calls = [call(action="wait", time=a["ms"] / 1000)]
        else:
            return None
        return _dump(calls)

    # ---- UI-TARS -----------------------------------------------------------------------------
    def uitars_call(self, a: dict) -> str | None:
        t = a["type"]

        def box(x, y):
            bx, by = self.uitars.model_point(x, y)
            return f"'({bx},{by})'"
        if t in ("click", "double_click"):
            return f"{'click' if t == 'click' else 'left_double'}(start_box={box(a['x'], a['y'])})"
        if t in ("drag", "swipe") and not a.get("via"):
            return f"drag(start_box={box(a['x0'], a['y0'])}, end_box={box(a['x1'], a['y1'])})"
        if t == "key":
            return f"hotkey(key={a['name'].lower()!r})"
        if t == "typetext":
            return f"type(content={a['text']!r})"
        if t == "scroll":
            where = f"start_box={box(a['x'], a['y'])}, " if a.get("x") is not None else ""
            return f"scroll({where}direction={a['direction']!r})"
        if t == "wait":
            return "wait()"
        return None
