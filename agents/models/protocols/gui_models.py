"""GUI-specialised model formats (PAPERS.md section 4): the same actions plus a terminal
answer, each in the model family's own output format; the harness converts to screenshot
pixels, validates and dispatches one primitive at a time. Each request replays the full
text history with the two most recent screenshots; provider-default sampling. An
unverified completion claim is answered once with a continuation prompt; a second claim
ends the episode.

    qwen     Qwen-VL text function calls, coordinates on a 0..1000 grid:
             <tool_call>{"name": "computer_use", "arguments": {"action": "left_click",
             "coordinate": [x, y]}}</tool_call>
    uitars   UI-TARS ``Thought:`` / ``Action:`` text, coordinates in pixels of the input
             image after ``smart_resize`` (factor 28, min/max pixels):
             Action: click(start_box='(x,y)')
"""

from __future__ import annotations

import ast
import json
import re

from longpuzzle.agents.models.protocols.base import (
    KEYS_TEXT, Decision, ParseError, Protocol, check_key, first_json_object, game_instruction, text_keys,
)

# ---- Qwen-VL ----------------------------------------------------------------------------------

QWEN_TOOL = "computer_use"
QWEN_ACTIONS = ("key", "type", "mouse_move", "left_click", "left_click_drag", "double_click", "scroll", "wait",
                "terminate", "answer")
_TOOL_CALL = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.S)


class QwenProtocol(Protocol):
    name = "qwen"
    claim_rule = True
    default_history_images = 2

    def __init__(self, ctx, *, resize=None, scale_factor: float | None = 1000.0):
        super().__init__(ctx, resize=resize, scale_factor=scale_factor or 1000.0)
        self.cursor: tuple[int, int] | None = None     # frame pixels

    def _tool(self) -> dict:
        return {"type": "function", "function": {
            "name": QWEN_TOOL,
            "description": ("Use a mouse and keyboard to interact with the screen. The screen is shown as a "
                            f"screenshot; coordinates are {self.bounds_text()}.\n"
                            "* left_click: click at coordinate.\n* double_click: double-click at coordinate.\n"
                            "* mouse_move: move the cursor to coordinate.\n"
                            "* left_click_drag: press at the cursor, drag to coordinate, release.\n"
                            f"* key: press the keys in `keys` ({KEYS_TEXT}).\n* type: type `text`.\n"
                            "* scroll: scroll by `pixels` (positive up, negative down) at the cursor.\n"
                            "* wait: wait `time` seconds.\n* terminate: end the task, with `status`.\n"
                            "* answer: give the final answer `text`."),
            "parameters": {"type": "object", "required": ["action"], "properties": {
                "action": {"type": "string", "enum": list(QWEN_ACTIONS)},
                "coordinate": {"type": "array", "description": "(x, y) on the 0..1000 grid"},
                "keys": {"type": "array"}, "text": {"type": "string"}, "pixels": {"type": "number"},
                "time": {"type": "number"}, "status": {"type": "string", "enum": ["success", "failure"]}}}}}

    def system_prompt(self) -> str:
        return ("You are a helpful assistant.\n\n# Tools\n\nYou may call one or more functions to assist with the "
                "user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n"
                f"<tools>\n{json.dumps(self._tool(), ensure_ascii=False)}\n</tools>\n\n"
                "For each function call, return a json object with function name and arguments within "
                "<tool_call></tool_call> XML tags:\n<tool_call>\n"
                '{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>\n\n'
                "Only what the screenshots show may be used. Call the function once per turn; when the screen "
                "shows that the whole task is complete, call terminate.")

    def task_text(self) -> str:
        extra = game_instruction(self.ctx.game, self.ctx.prompt_setting, self.ctx.language) if self.ctx.prompt_setting else ""
        return "\n\n".join(p for p in (self.ctx.instruction, extra) if p)

    def correction(self, error: str) -> str:
        return (f"Your last reply could not be executed: {error}. Reply with exactly one <tool_call> holding a "
                f'JSON object {{"name": "{QWEN_TOOL}", "arguments": {{...}}}}.')

    def parse(self, reply) -> Decision:
        text = reply.text or ""
        m = _TOOL_CALL.search(text)
        if not m:
            raise ParseError("the reply has no <tool_call>")
        call = first_json_object(m.group(1))
        if call.get("name") != QWEN_TOOL:
            raise ParseError(f"unknown function {call.get('name')!r}; the function is {QWEN_TOOL}")
        args = call.get("arguments")
        if isinstance(args, str):
            try:
                args = json.loads(args)
            except json.JSONDecodeError:
                raise ParseError("the arguments are not a JSON object") from None
        if not isinstance(args, dict):
            raise ParseError("the arguments are not a JSON object")
        return self.convert(args)

    def _coord(self, args, what="coordinate"):
        c = args.get(what)
        if not (isinstance(c, (list, tuple)) and len(c) == 2):
            raise ParseError(f"'{what}' must be [x, y]")
        return self.point(c[0], c[1], what)

    def convert(self, a: dict) -> Decision:
        t = a.get("action")
        if t not in QWEN_ACTIONS:
            raise ParseError(f"unknown action {t!r}; actions are: {', '.join(QWEN_ACTIONS)}")
        if t in ("terminate", "answer"):
            return Decision(final=str(a.get("status") or a.get("text") or t), claim=True)
        if t == "mouse_move":
            self.cursor = self._coord(a)
            return Decision(actions=[{"type": "move", "x": self.cursor[0], "y": self.cursor[1]}])
        if t in ("left_click", "double_click"):
            x, y = self._coord(a) if "coordinate" in a else (self.cursor or (None, None))
            if x is None:
                raise ParseError(f"{t} needs a coordinate")
            self.cursor = (x, y)
            return Decision(actions=[{"type": "click" if t == "left_click" else "double_click", "x": x, "y": y}])
        if t == "left_click_drag":
            if self.cursor is None and "start_coordinate" not in a:
                raise ParseError("left_click_drag starts at the cursor: mouse_move there first")
            x0, y0 = self._coord(a, "start_coordinate") if "start_coordinate" in a else self.cursor
            x1, y1 = self._coord(a)
            self.cursor = (x1, y1)
            return Decision(actions=[{"type": "drag", "x0": x0, "y0": y0, "x1": x1, "y1": y1}])
        if t == "key":
            keys = a.get("keys")
            if isinstance(keys, str):
                keys = [keys]
            if not isinstance(keys, list) or not keys:
                raise ParseError("key needs a non-empty 'keys' list")
            return Decision(actions=[{"type": "key", "name": check_key(k)} for k in keys])
        if t == "type":
            return Decision(actions=text_keys(a.get("text")))
        if t == "scroll":
            px = a.get("pixels", -400)
            if isinstance(px, bool) or not isinstance(px, (int, float)) or px == 0:
                raise ParseError("scroll needs a non-zero number 'pixels'")
            out = {"type": "scroll", "direction": "up" if px > 0 else "down", "amount": min(int(abs(px)), 10_000)}
            pos = self._coord(a) if "coordinate" in a else self.cursor
            if pos is not None:
                out["x"], out["y"] = pos
            return Decision(actions=[out])
        secs = a.get("time", 1)
        if isinstance(secs, bool) or not isinstance(secs, (int, float)) or not 0 < secs <= 600:
            raise ParseError("wait needs 'time' in seconds, between 0 and 600")
        return Decision(actions=[{"type": "wait", "ms": max(1, int(round(secs * 1000)))}])


# ---- UI-TARS ----------------------------------------------------------------------------------

UITARS_ACTIONS = ("click", "left_double", "drag", "hotkey", "type", "scroll", "wait", "finished")
_NUM = r"-?\d+(?:\.\d+)?"
_BOX = re.compile(rf"\(?\s*({_NUM})\s*,\s*({_NUM})\s*(?:,\s*({_NUM})\s*,\s*({_NUM})\s*)?\)?")
_POINT_TAG = re.compile(rf"<point>\s*({_NUM})[\s,]+({_NUM})\s*</point>")
_CALL = re.compile(r"([a-z_]+)\s*\((.*)\)\s*$", re.S)


class UITarsProtocol(Protocol):
    name = "uitars"
    claim_rule = True
    default_history_images = 2

    def __init__(self, ctx, *, resize="smart_resize", scale_factor=None):
        super().__init__(ctx, resize=resize or "smart_resize", scale_factor=None)

    def system_prompt(self) -> str:
        return ("You are a GUI agent. You are given a task and your action history, with screenshots. You need to "
                "perform the next action to complete the task.\n\n## Output Format\n```\nThought: ...\n"
                "Action: ...\n```\n\n## Action Space\n"
                "click(start_box='<|box_start|>(x1,y1)<|box_end|>')\n"
                "left_double(start_box='<|box_start|>(x1,y1)<|box_end|>')\n"
                "drag(start_box='<|box_start|>(x1,y1)<|box_end|>', end_box='<|box_start|>(x3,y3)<|box_end|>')\n"
                "hotkey(key='')\ntype(content='')\n"
                "scroll(start_box='<|box_start|>(x1,y1)<|box_end|>', direction='down or up or right or left')\n"
                "wait() #Sleep for 5s and take a screenshot to check for any changes.\n"
                "finished(content='xxx')\n\n## Note\n- Use English in `Thought` part.\n"
                "- Write a small plan and finally summarize your next action (with its target element) in one "
                f"sentence in `Thought` part.\n- Coordinates are {self.bounds_text()}.\n\n## User Instruction\n")

    def task_text(self) -> str:
        extra = game_instruction(self.ctx.game, self.ctx.prompt_setting, self.ctx.language) if self.ctx.prompt_setting else ""
        return "\n\n".join(p for p in (self.ctx.instruction, extra) if p)

    def correction(self, error: str) -> str:
        return (f"Your last reply could not be executed: {error}. Reply with 'Thought: ...' and then one "
                "'Action: ...' from the action space.")

    def parse(self, reply) -> Decision:
        text = (reply.text or "").strip()
        i = text.rfind("Action:")
        if i < 0:
            raise ParseError("the reply has no 'Action:'")
        body = text[i + len("Action:"):].strip().strip("`").strip()
        body = body.split("\n\n")[0].strip()
        m = _CALL.match(body)
        if not m:
            raise ParseError(f"cannot read the action {body[:80]!r}")
        name, args = m.group(1), self._kwargs(m.group(2))
        if name not in UITARS_ACTIONS:
            raise ParseError(f"unknown action {name!r}; actions are: {', '.join(UITARS_ACTIONS)}")
        if name == "finished":
            return Decision(final=str(args.get("content", "")), claim=True)
        if name in ("click", "left_double"):
            x, y = self._box(args, "start_box")
            return Decision(actions=[{"type": "click" if name == "click" else "double_click", "x": x, "y": y}])
        if name == "drag":
            x0, y0 = self._box(args, "start_box")
            x1, y1 = self._box(args, "end_box")
            return Decision(actions=[{"type": "drag", "x0": x0, "y0": y0, "x1": x1, "y1": y1}])
        if name == "hotkey":
            keys = str(args.get("key", "")).split()
            if not keys:
                raise ParseError("hotkey needs key='...'")
            return Decision(actions=[{"type": "key", "name": check_key(k)} for k in keys])
        if name == "type":
            return Decision(actions=text_keys(args.get("content")))
        if name == "scroll":
            d = str(args.get("direction", "down")).strip()
            if d not in ("up", "down", "left", "right"):
                raise ParseError("scroll direction must be up, down, left or right")
            out = {"type": "scroll", "direction": d}
            if "start_box" in args:
                out["x"], out["y"] = self._box(args, "start_box")
            return Decision(actions=[out])
        return Decision(actions=[{"type": "wait", "ms": 5000}])

    @staticmethod
    def _kwargs(s: str) -> dict:
        s = s.strip()
        if not s:
            return {}
        try:
            tree = ast.parse(f"f({s})", mode="eval")
        except SyntaxError:
            raise ParseError(f"cannot read the arguments {s[:80]!r}") from None
        out = {}
        for kw in tree.body.keywords:
            try:
                out[kw.arg] = ast.literal_eval(kw.value)
            except ValueError:
                raise ParseError(f"argument {kw.arg} must be a literal") from None
        return out

    def _box(self, args: dict, key: str) -> tuple[int, int]:
        v = args.get(key)
        if not isinstance(v, str):
            raise ParseError(f"{key}='(x,y)' is missing")
        v = v.replace("<|box_start|>", "").replace("<|box_end|>", "").strip()
        m = _POINT_TAG.search(v)
        if m:
            x, y = float(m.group(1)), float(m.group(2))
        else:
            m = _BOX.fullmatch(v.strip("[]").strip()) or _BOX.search(v)
            if not m:
                raise ParseError(f"{key} {v!r} is not a point (x,y) or a box (x1,y1,x2,y2)")
            x, y = float(m.group(1)), float(m.group(2))
            if m.group(3) is not None:
                x, y = (x + float(m.group(3))) / 2, (y + float(m.group(4))) / 2
        return self.point(int(round(x)), int(round(y)), key)
