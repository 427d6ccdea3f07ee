"""``native``: the paper's Native GUI Actions setting through native function calling.

One tool, ``gui``, takes one GUI action: click, doubleclick, drag, press_key, typetext,
scroll, wait, or batch (an ordered list of the others). Every call returns a screenshot
(after the last action of a batch). Coordinates are integer pixels of the screenshot. The
system prompt is the paper's player prompt (PAPERS.md section 4, B.2): the permitted
information, the action interface and its bounds, the procedure, and the ending (one
message that starts with ``BENCHMARK COMPLETED`` and names the visible evidence); no rules
or strategies. The task message states the goal, the game and difficulty with their
on-screen labels, and the setting. The first call must be ``wait``, which returns the
first screenshot and starts the clock. A reply without a tool call is the final response:
it ends the episode (``text_reply = "reprompt"``: only one starting with ``BENCHMARK
COMPLETED`` does; any other is answered with a corrective message).
"""

from __future__ import annotations

from longpuzzle.agents.models.protocols import zh_prompts
from longpuzzle.agents.models.protocols.base import (
    COMPLETION_PREFIX, KEYS_TEXT, Decision, ParseError, Protocol, check_key, game_instruction, text_keys,
)
from longpuzzle.engine.gui import MAX_MS, MAX_TEXT, NAMED_KEYS

TOOL_NAME = "gui"
ACTIONS = ("click", "doubleclick", "drag", "press_key", "typetext", "scroll", "wait", "batch")
SCROLL_DIRECTIONS = ("up", "down", "left", "right")
MAX_BATCH = 50
WAIT_DEFAULT_MS = 1000

# The one definition of the `gui` tool: the fields each action takes (required, optional).
# The tool's JSON schema is generated from it with each field's bounds (``field_schemas``:
# the engine's own limits), and the parser checks every call against the same schemas
# (jsonschema) before converting it, so the schema and the parser cannot disagree.
ACTION_FIELDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "click": (("x", "y"), ()),
    "doubleclick": (("x", "y"), ()),
    "drag": (("x0", "y0", "x1", "y1"), ()),
    "press_key": (("key",), ()),
    "typetext": (("text",), ()),
    "scroll": ((), ("direction", "x", "y")),
    "wait": ((), ("ms",)),
    "batch": (("actions",), ()),
}
_COORDS = ("x", "y", "x0", "y0", "x1", "y1")
_KEYS = list(NAMED_KEYS) + list("abcdefghijklmnopqrstuvwxyz0123456789")


def _short(v, n: int = 60) -> str:
    r = repr(v)
    return r if len(r) <= n else r[:n] + "..."


def field_schemas(x_max: int | float, y_max: int | float) -> dict[str, dict]:
    """Each field's JSON schema; coordinates run 0..x_max and 0..y_max."""
    def coord(what, top):
        return {"type": "integer", "minimum": 0, "maximum": top, "description": what}
    return {
        "x": coord("click, doubleclick, scroll: x", x_max), "y": coord("click, doubleclick, scroll: y", y_max),
        "x0": coord("drag: start x", x_max), "y0": coord("drag: start y", y_max),
        "x1": coord("drag: end x", x_max), "y1": coord("drag: end y", y_max),
        "key": {"type": "string", "enum": _KEYS, "description": "press_key: " + KEYS_TEXT},
        "text": {"type": "string", "minLength": 1, "maxLength": MAX_TEXT, "pattern": "^[A-Za-z0-9 \n\t]+$",
                 "description": "typetext: letters, digits and spaces"},
        "direction": {"type": "string", "enum": list(SCROLL_DIRECTIONS), "description": "scroll direction (default down)"},
        "ms": {"type": "integer", "minimum": 0, "maximum": MAX_MS,
               "description": f"wait: milliseconds (default {WAIT_DEFAULT_MS})"},
    }


def tool_schema(fields: dict[str, dict], with_batch: bool = True) -> dict:
    """The `gui` tool's parameters (a batch's items: the same without batch)."""
    acts = list(ACTIONS if with_batch else ACTIONS[:-1])
    props = {"action": {"type": "string", "enum": acts,
                        "description": "; ".join(f"{a}: " + ", ".join(list(r) + [f"{o}?" for o in opt])
                                                 for a, (r, opt) in ACTION_FIELDS.items() if a in acts)},
             **fields}
    if with_batch:
        props["actions"] = {"type": "array", "items": tool_schema(fields, False), "minItems": 1,
                            "maxItems": MAX_BATCH, "description": f"batch: up to {MAX_BATCH} actions run in order"}
    return {"type": "object", "properties": props, "required": ["action"]}


class NativeProtocol(Protocol):
    name = "native"
    tool_mode = True
    screenshot_first = False
    default_history_images = None
    defaults = {"reasoning_effort": "medium"}

    def __init__(self, ctx, *, resize=None, scale_factor=None):
        super().__init__(ctx, resize=resize, scale_factor=scale_factor)
        if self.scale:
            self.fields = field_schemas(self.scale, self.scale)
        else:
            w, h = self.view.size
            self.fields = field_schemas(w - 1, h - 1)
        from jsonschema import Draft202012Validator
        self._check = {k: Draft202012Validator(v) for k, v in self.fields.items()}

    def tools(self) -> list[dict]:
        return [{"name": TOOL_NAME, "description": "Perform one GUI action (or a batch) on the game screen; "
                 "returns a screenshot after the (last) action.", "parameters": tool_schema(self.fields)}]

    def system_prompt(self) -> str:
        if self.ctx.prompt_lang == "zh":
            return zh_prompts.native_system(self, TOOL_NAME)
        return (
            "You are playing games in a Game Suite shown on a screen, through GUI input only.\n\n"
            "Permitted information: only what the returned screenshots show. You have no access to the game's "
            "source or bundled assets, level catalogues, answer files, DOM or accessibility data, page variables, "
            "hidden state, evaluator outputs, or any external retrieval.\n\n"
            f"Action interface: the `{TOOL_NAME}` tool, one call per action. Actions: click(x, y), doubleclick(x, y), "
            "drag(x0, y0, x1, y1), press_key(key), typetext(text), scroll(direction, optional x, y), wait(ms), and "
            "batch(actions): a list of the other actions run in order, with one screenshot after the last. "
            f"Coordinates are {self.bounds_text()}. Keys: {KEYS_TEXT}. Each call returns a screenshot. "
            "The first call must be wait; it returns the first screenshot and starts the clock.\n\n"
            "Procedure: select the game and the difficulty through the visible interface and check the selection "
            "before you start. Use the visible undo or restart controls when you need them. Neither repeated "
            "failure nor elapsed time is a reason to stop: keep playing until the objective is complete.\n\n"
            f"Ending: once the screen shows that the whole objective is complete, send one message that starts "
            f"with `{COMPLETION_PREFIX}` and names the visible evidence, without a tool call.")

    def task_text(self) -> str:
        c = self.ctx
        where = (f"The game is {c.title} ('{c.title}' on screen), difficulty '{c.difficulty_label}'."
                 if c.game else "")
        setting = "Setting: Native GUI Actions (coordinate input only)."
        extra = game_instruction(c.game, c.prompt_setting, c.language) if c.prompt_setting else ""
        if c.prompt_lang == "zh":
            return zh_prompts.native_task(self, extra)
        return "\n".join(p for p in (c.instruction, where, setting, extra) if p)

    def observation_text(self, feedback, first: bool) -> str:
        if self.ctx.prompt_lang == "zh":
            return zh_prompts.observation(feedback)
        if feedback is None:
            return "Screenshot:"
        if not feedback.executed:
            return f"The action was refused by the dispatcher: {feedback.message}"
        return "Done. Screenshot after the action:"

    def correction(self, error: str) -> str:
        if self.ctx.prompt_lang == "zh":
            return zh_prompts.correction(error, TOOL_NAME)
        return (f"That was not a valid call: {error}. Call the `{TOOL_NAME}` tool with one action, or, if the "
                f"screen shows that the whole objective is complete, reply with a message that starts with "
                f"`{COMPLETION_PREFIX}`.")

    def parse(self, reply) -> Decision:
        if not reply.tool_calls:
            text = (reply.text or "").strip()
            # a reply without a tool call is the final response (the paper's rule: it ends the
            # episode, scored); text_reply "reprompt": only a completion message is final
            if self.text_reply == "final" or text.startswith(COMPLETION_PREFIX):
                return Decision(final=text)
            raise ParseError(f"the reply has no `{TOOL_NAME}` tool call" +
                             (" and does not start with " + COMPLETION_PREFIX if text else ""))
        d = Decision(call_ids=[c.id for c in reply.tool_calls])
        for c in reply.tool_calls:
            try:
                if c.name != TOOL_NAME:
                    raise ParseError(f"unknown tool {c.name!r}; the only tool is `{TOOL_NAME}`")
                if not isinstance(c.arguments, dict):
                    raise ParseError("the tool arguments are not a JSON object")
                d.actions.extend(self.convert(c.arguments, top=True))
            except ParseError as e:
                d.errors[c.id] = str(e)
        if d.errors:
            raise ParseError("; ".join(d.errors.values()))
        return d

    def convert(self, a: dict, top: bool = False) -> list[dict]:
        t = a.get("action")
        if t not in ACTIONS or (t == "batch" and not top):
            raise ParseError(f"unknown action {t!r}; actions are: {', '.join(ACTIONS if top else ACTIONS[:-1])}")
        required, optional = ACTION_FIELDS[t]
        for k in required:
            if a.get(k) is None:
                raise ParseError(f"{t} needs {', '.join(required)}")
        for k in required + optional:                # each field against the schema the tool shows
            if k in self._check and a.get(k) is not None:
                err = next(iter(self._check[k].iter_errors(a[k])), None)
                if err is None or (k in _COORDS and err.validator in ("minimum", "maximum")):
                    continue          # (off the range: point() below refuses the same range, naming the screenshot)
                try:                  # the engine's own message first (the schema's pattern / enum is its rule)
                    if k == "text":
                        text_keys(a[k])
                    elif k == "key":
                        check_key(a[k])
                except ParseError as e:
                    raise ParseError(f"{t} {k} {_short(a[k])}: {e}") from None
                raise ParseError(f"{t} {k}: {err.message}")
        if t == "click":
            x, y = self.point(a.get("x"), a.get("y"), "click")
            return [{"type": "click", "x": x, "y": y}]
        if t == "doubleclick":
            x, y = self.point(a.get("x"), a.get("y"), "doubleclick")
            return [{"type": "double_click", "x": x, "y": y}]
        if t == "drag":
            x0, y0 = self.point(a.get("x0"), a.get("y0"), "drag start")
            x1, y1 = self.point(a.get("x1"), a.get("y1"), "drag end")
            return [{"type": "drag", "x0": x0, "y0": y0, "x1": x1, "y1": y1}]
        if t == "press_key":
            return [{"type": "key", "name": check_key(a.get("key"))}]
        if t == "typetext":
            return text_keys(a.get("text"))
        if t == "scroll":
            out = {"type": "scroll", "direction": a.get("direction") or "down"}
            if a.get("x") is not None or a.get("y") is not None:
                out["x"], out["y"] = self.point(a.get("x"), a.get("y"), "scroll")
            return [out]
        if t == "wait":
            ms = a.get("ms")
            return [{"type": "wait", "ms": WAIT_DEFAULT_MS if ms is None else int(ms)}]
        acts = a["actions"]
        if not isinstance(acts, list) or not acts:
            raise ParseError("batch needs a non-empty 'actions' list")
        if len(acts) > MAX_BATCH:
            raise ParseError(f"a batch holds at most {MAX_BATCH} actions")
        out = []
        for i, x in enumerate(acts):
            if not isinstance(x, dict):
                raise ParseError(f"batch action {i + 1} is not an object")
            try:
                out.extend(self.convert(x))
            except ParseError as e:
                raise ParseError(f"batch action {i + 1}: {e}") from None
        return out
