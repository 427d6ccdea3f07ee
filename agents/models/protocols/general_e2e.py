"""``general_e2e``: the original repository's built-in agent (HARNESS.md section 8).

One model call per step. The reply is ``Thought:`` (free text) then ``Action:`` with one
JSON action::

    {"action_type": "click", "coordinate": [x, y]}          also double_tap, long_press,
                                                            press, release (coordinate optional)
    {"action_type": "drag", "start_coordinate": [x, y], "end_coordinate": [x, y]}
    {"action_type": "swipe", "direction": "up|down|left|right"}   (optional "coordinate": start)
    {"action_type": "wait"}                                  (optional "duration_ms")

Coordinates are on a 0..1000 grid by default (``scale_factor`` 1000; None: raw pixels of
the screenshot). The first user message is the instruction (the harness's, then the
catalogue's per-game text in the chosen prompt setting); later turns are screenshots only,
with the full text history kept and ``history_images`` capping the screenshots re-sent.
Defaults as the original: temperature 0, reasoning effort medium, 1024 output tokens.
"""

from __future__ import annotations

import re

from longpuzzle.agents.models.protocols.base import (
    Decision, ParseError, Protocol, first_json_object, game_instruction,
)

_ACTION = re.compile(r"Action\s*[:：]\s*", re.IGNORECASE)
_POINT_TYPES = {"click": "click", "tap": "click", "double_tap": "double_click", "double_click": "double_click",
                "long_press": "long_press", "press": "press", "release": "release"}
DIRECTIONS = ("up", "down", "left", "right")


class BuiltinProtocol(Protocol):
    name = "general_e2e"
    default_history_images = 1
    defaults = {"temperature": 0.0, "reasoning_effort": "medium", "max_output_tokens": 1024}

    def __init__(self, ctx, *, resize=None, scale_factor: float | None = 1000.0):
        super().__init__(ctx, resize=resize, scale_factor=scale_factor)

    def system_prompt(self) -> str:
        w, h = self.view.size
        return (
            "You are a GUI agent playing a puzzle game on a touch screen. Each turn you receive a screenshot "
            f"({w} x {h} pixels). Reply in exactly this format:\n"
            "Thought: <your reasoning about the screen and the next step>\n"
            "Action: <one JSON action>\n\n"
            "JSON actions:\n"
            '{"action_type": "click", "coordinate": [x, y]}\n'
            '{"action_type": "double_tap", "coordinate": [x, y]}\n'
            '{"action_type": "long_press", "coordinate": [x, y]}\n'
            '{"action_type": "press", "coordinate": [x, y]}   (press and hold until "release")\n'
            '{"action_type": "release", "coordinate": [x, y]}\n'
            '{"action_type": "drag", "start_coordinate": [x, y], "end_coordinate": [x, y]}\n'
            '{"action_type": "swipe", "direction": "up" | "down" | "left" | "right"}\n'
            '{"action_type": "wait"}\n\n'
            f"Coordinates: {self.bounds_text()}. One action per turn.")

    def task_text(self) -> str:
        parts = [self.ctx.instruction]
        g = game_instruction(self.ctx.game, self.ctx.prompt_setting, self.ctx.language)
        if g:
            parts.append(g)
        return "\n\n".join(p for p in parts if p)

    def correction(self, error: str) -> str:
        return (f"Your last reply could not be executed: {error}. Reply with 'Thought:' and then 'Action:' "
                "followed by exactly one JSON action in the format given.")

    def parse(self, reply) -> Decision:
        text = reply.text or ""
        m = None
        for m in _ACTION.finditer(text):   # noqa: B007 - the last match is kept
            pass
        if m is None:
            raise ParseError("the reply has no 'Action:' line")
        a = first_json_object(text[m.end():])
        return Decision(actions=[self.convert(a)])

    def convert(self, a: dict) -> dict:
        t = a.get("action_type", a.get("action", a.get("type")))
        if not isinstance(t, str):
            raise ParseError("the JSON action has no 'action_type'")
        t = t.strip().lower()
        if t in _POINT_TYPES:
            kind = _POINT_TYPES[t]
            c = a.get("coordinate")
            if c is None and kind == "release":
                return {"type": "release"}
            x, y = self._coord(c, "coordinate")
            out = {"type": kind, "x": x, "y": y}
            if kind == "long_press" and a.get("duration_ms") is not None:
                out["ms"] = self._ms(a["duration_ms"])
            return out
        if t in ("drag", "swipe") and ("start_coordinate" in a or "end_coordinate" in a):
            x0, y0 = self._coord(a.get("start_coordinate"), "start_coordinate")
            x1, y1 = self._coord(a.get("end_coordinate"), "end_coordinate")
            return {"type": "drag" if t == "drag" else "swipe", "x0": x0, "y0": y0, "x1": x1, "y1": y1}
        if t == "swipe":
            d = a.get("direction")
            if d not in DIRECTIONS:
                raise ParseError(f"swipe needs a direction: one of {', '.join(DIRECTIONS)}")
            out = {"type": "swipe", "direction": d}
            if a.get("coordinate") is not None:
                out["x"], out["y"] = self._coord(a["coordinate"], "coordinate")
            return out
        if t == "wait":
            out = {"type": "wait"}
            if a.get("duration_ms") is not None:
                out["ms"] = self._ms(a["duration_ms"])
            return out
        raise ParseError(f"unsupported action_type {t!r}; use click, double_tap, long_press, press, release, "
                         "drag, swipe or wait")

    def _coord(self, c, what):
        if not (isinstance(c, (list, tuple)) and len(c) == 2):
            raise ParseError(f"'{what}' must be [x, y]")
        x, y = c
        # the original clamps points just off the edge into the screenshot
        if self.scale and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (x, y)):
            x, y = min(max(x, 0), self.scale), min(max(y, 0), self.scale)
        return self.point(x, y, what)

    @staticmethod
    def _ms(v) -> int:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 1 <= v <= 600_000:
            raise ParseError("duration_ms must be a number of milliseconds between 1 and 600000")
        return int(v)
