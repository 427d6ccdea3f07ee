"""The tools: names, descriptions, argument schemas, NGAR classes, and which setting offers
which. One table serves every transport (MCP, a model's native function calling, run_python's
``gui``); ``tools_for`` gives one episode's definitions.

The VISTA signatures (PAPERS.md section 6), with today's extras as options:
    play(action, x=None, y=None, **fields)   exactly one action, named (``"click"``) with its
             fields beside it, or one action object; returns the frame, n_frames and
             available_actions. A batch only where batches are on (native and code: the
             paper's Native GUI Actions hold batch; vista: the ``batch`` option).
    inspect(question, views)        views [{label, turn, frame=-1, region={x, y, w, h}}],
             options box (instead of region) and zoom; one enlarged image per view
    read_pixels(question, views)    views [{label, turn, frame, region, rows, cols}]: one
             palette and one grid of samples per view
    history(view, start_turn, end_turn, limit=64)   turns [start_turn, end_turn)
    save_compact_checkpoint(guide=None, working_memory)   guide None: GUIDE.md unchanged

Settings (``SETTINGS``)
    native   the paper's Native GUI Actions: ``play`` (one GUI action or one batch; a
             screenshot comes back after it), ``screenshot`` (the current screen again),
             ``final_answer``
    vista    the VISTA harness (PAPERS.md section 2): native plus ``inspect``,
             ``read_pixels``, ``history``, the notes (``read_guide`` / ``write_guide``,
             ``read_working`` / ``write_working``) and ``save_compact_checkpoint``
    code     the paper's Code Execution CUA: native plus ``run_python`` (the agent's code in
             a separate persistent process, with the archived frames and ``gui(action, x, y)``)

NGAR classes (PAPERS.md section 4, B.3; ``step_kind``)
    native   ``play`` with coordinate or key input (one action or a fixed batch, counted
             once even when one of its inputs fails or the call is refused), ``screenshot``
    other    ``play`` of a standalone wait (a wait, or a batch of waits only - the opening
             wait too), ``final_answer`` (a terminal answer), ``inspect`` and
             ``read_pixels`` (image analysis by the harness), ``history``, the notes tools
             and ``save_compact_checkpoint`` (file and coordination tools), ``run_python``
             (code, and any GUI input it sends: computation combined with GUI input)
    Every tool call is one step, a call refused for bad arguments included.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from longpuzzle.agents.metrics import action_step_kind
from longpuzzle.engine.gui import ACTION_TYPES

MAX_VIEWS = 16
MAX_ZOOM = 16
MAX_SAMPLES = 4096               # read_pixels: cells (rows x cols) of all the views of a call at most
MAX_SIDE = 128                   # read_pixels: rows, cols at most
PIXEL_GRID = 32                  # read_pixels: rows and cols of a view that gives none
MAX_INSPECT_PIXELS = 4_000_000   # one inspect view: output width x height at most
HISTORY_LIMIT = 64               # history records by default (VISTA)
MAX_HISTORY = 500                # and at most
NOTES_CAP = 16_000               # characters of GUIDE.md, and of WORKING.md
MAX_CODE = 100_000               # characters of one run_python cell


@dataclass(frozen=True)
class Tool:
    name: str
    ngar: str                    # "native" | "other" | "play" (native unless a standalone wait)
    description: str
    schema: dict                 # JSON schema of the arguments (an object)

    def spec(self) -> dict:
        """{"name", "description", "parameters"}: the function-calling form."""
        return {"name": self.name, "description": self.description, "parameters": self.schema}


_XY = {"type": "integer", "minimum": 0}
# play's action parameters besides x and y (gui.SCHEMA's fields): options of the paper's
# play(action, x, y) for the actions that need them
_PARAMS = {
    "x0": _XY, "y0": _XY, "x1": _XY, "y1": _XY,
    "via": {"type": "array", "items": {"type": "array", "items": {"type": "integer"}},
            "description": "drag: waypoints [[x, y], ...] between the start and the end"},
    "steps": {"type": "integer"}, "ms": {"type": "integer"}, "distance": {"type": "integer"},
    "amount": {"type": "integer"}, "direction": {"type": "string", "enum": ["up", "down", "left", "right"]},
    "name": {"type": "string", "description": "key: a letter, a digit, Enter, Escape, Space, Backspace, Tab, "
                                              "ArrowUp, ArrowDown, ArrowLeft, ArrowRight"},
    "text": {"type": "string"},
}
SINGLE_ACTIONS = tuple(t for t in ACTION_TYPES if t != "batch")
_FORMS = ("click {x, y}; double_click {x, y}; long_press {x, y, ms}; drag {x0, y0, x1, y1, steps?, ms?, via?}; "
          "swipe {direction: up|down|left|right, x?, y?, distance?} or {x0, y0, x1, y1}; press {x, y} / move {x, y} / "
          "release {x?, y?}; key {name}; typetext {text}; scroll {direction, x?, y?, amount?}; wait {ms}")


class ToolError(ValueError):
    """A tool call that cannot be done as asked (the message says why); nothing changed."""


def result_json(d) -> str:
    """A tool result's text: ``d`` as compact JSON (as records.py reads it back)."""
    return json.dumps(d, separators=(",", ":"), ensure_ascii=False)


def text_hash(text: str) -> str:
    """The digest of a tool result's text recorded in a tool record's refs (xxh3-128)."""
    import xxhash
    return xxhash.xxh3_128_hexdigest(text.encode("utf-8"))


class PlayArgsError(ValueError):
    """play's arguments do not name one GUI action (the message says why)."""


def play_action(args, batch: bool = False):
    """The GUI action that play's arguments name (not validated beyond its form: the
    harness does that). Two forms: the paper's ``{"action": "click", "x": 10, "y": 20}`` (a
    type name, its fields beside it) and ``{"action": {"type": "click", "x": 10, "y": 20}}``
    (one action object, the action format of ``eval``). A batch (``"batch"`` with
    ``actions``, or an object of type batch) only when ``batch`` is on; PlayArgsError else."""
    if not isinstance(args, dict) or "action" not in args:
        raise PlayArgsError("play needs 'action': a GUI action name with its fields, e.g. {\"action\": \"click\", "
                            "\"x\": 10, \"y\": 20}")
    a = args["action"]
    if isinstance(a, str):
        bad = sorted(set(args) - {"action", "x", "y", "actions"} - set(_PARAMS))
        if bad:
            raise PlayArgsError(f"play takes action, x, y and the action's fields ({', '.join(_PARAMS)}); "
                                f"not {', '.join(map(repr, bad[:5]))}")
        action = {"type": a, **{k: v for k, v in args.items() if k != "action"}}
    elif isinstance(a, dict):
        extra = sorted(set(args) - {"action"})
        if extra:
            raise PlayArgsError("with an action object, play takes only 'action', not "
                                + ", ".join(map(repr, extra[:5])))
        action = a
    else:
        raise PlayArgsError(f"'action' is a GUI action name ({', '.join(SINGLE_ACTIONS)}) or an action object, "
                            f"not {type(a).__name__}")
    if not batch and _has_batch(action):
        raise PlayArgsError("play performs exactly one action: batches are off for this episode (one play per "
                            "action; the batch option turns them on)")
    return action


def _has_batch(action) -> bool:
    return isinstance(action, dict) and action.get("type") == "batch"


def _play_tool(batch: bool) -> Tool:
    """play, the paper's ``play(action, x=None, y=None)``, with batches when ``batch``."""
    names = list(SINGLE_ACTIONS) + (["batch"] if batch else [])
    obj = {"type": "object", "description": "the same action as one object: {type, ...its fields}"
                                            + (" (batch: {type: batch, actions: [action, ...]})" if batch else ""),
           "properties": {"type": {"type": "string", "enum": names}}, "required": ["type"]}
    props = {"action": {"anyOf": [{"type": "string", "enum": names}, obj],
                        "description": "the GUI action: " + _FORMS + (
                            "; batch {actions: [{type, ...}, ...]} run in order" if batch else "")},
             "x": {**_XY, "description": "pixels from the left edge of the screenshot"},
             "y": {**_XY, "description": "pixels from the top edge of the screenshot"},
             **_PARAMS}
    if batch:
        props["actions"] = {"type": "array", "items": {"type": "object"}, "description": "batch: the actions, in order"}
    what = "exactly one GUI action" + (", or one batch of actions run in order," if batch else "")
    return Tool("play", "play",
                f"Perform {what} on the game screen, e.g. action 'click' with x and y. Returns the screenshot after "
                "the (last) action, the turn number, n_frames (frames the action produced; every intermediate "
                "animation frame is archived under the turn), the public feedback (screen_changed, "
                "no_visible_effect, returned_to_recent_screen, wait_completed) and available_actions (the actions "
                "play accepts now). The first action must be a wait: it returns the first screenshot and starts the "
                "clock. Send the next play only after this one returned.",
                _obj(props, ["action"]))


_LABEL = {"type": "string", "description": "your name for this view (returned with it)"}
_TURN = {"type": "integer", "description": "the play call that produced the frame: 1 = the opening wait, -1 = the "
                                           "latest turn"}
_FRAME = {"type": "integer", "description": "the frame within that turn: 0 .. n_frames-1 oldest first; -1, the "
                                            "default, is the final frame the turn returned"}
_REGION = {"type": "object", "description": "{x, y, w, h} in frame pixels (default: the whole frame)",
           "properties": {"x": _XY, "y": _XY, "w": {"type": "integer", "minimum": 1},
                          "h": {"type": "integer", "minimum": 1}},
           "required": ["x", "y", "w", "h"]}
_BOX = {"type": "array", "items": {"type": "integer"}, "minItems": 4, "maxItems": 4,
        "description": "option: the region as [x0, y0, x1, y1] (x1 and y1 exclusive), instead of 'region'"}
_SIDE = {"type": "integer", "minimum": 1, "maximum": MAX_SIDE}


def _obj(props: dict, required: list[str] | None = None) -> dict:
    return {"type": "object", "properties": props, "required": required or [], "additionalProperties": False}


TOOLS: dict[str, Tool] = {t.name: t for t in (
    _play_tool(batch=False),
    Tool("screenshot", "native", "The current screen again (no action is taken).", _obj({})),
    Tool("inspect", "other",
         f"Look again at archived frames: a list of up to {MAX_VIEWS} views, each {{label, turn, frame, region: "
         "{x, y, w, h}}; returns one image per view: the region cropped and enlarged (nearest neighbour, by the "
         f"largest whole factor up to {MAX_ZOOM} that keeps it within the frame's size, or by 'zoom').",
         _obj({"question": {"type": "string", "description": "what you are looking for (recorded)"},
               "views": {"type": "array", "minItems": 1, "maxItems": MAX_VIEWS,
                         "items": _obj({"label": _LABEL, "turn": _TURN, "frame": _FRAME, "region": _REGION,
                                        "box": _BOX,
                                        "zoom": {"type": "integer", "minimum": 1, "maximum": MAX_ZOOM,
                                                 "description": "option: the enlargement factor"}}, ["turn"])}},
              ["views"])),
    Tool("read_pixels", "other",
         "Read pixel values of archived frames: a list of views, each {label, turn, frame, region: {x, y, w, h}, "
         f"rows, cols}}; each view's region is split into rows x cols cells (default {PIXEL_GRID} x {PIXEL_GRID}, "
         f"at most {MAX_SAMPLES} cells, {MAX_SIDE} per side) and the pixel at each cell's centre is read. Returns "
         "one palette of the colours found (hex) and per view one string per row, one palette symbol per cell.",
         _obj({"question": {"type": "string", "description": "what you are looking for (recorded)"},
               "views": {"type": "array", "minItems": 1, "maxItems": MAX_VIEWS,
                         "items": _obj({"label": _LABEL, "turn": _TURN, "frame": _FRAME, "region": _REGION,
                                        "box": _BOX, "rows": _SIDE, "cols": _SIDE}, ["turn"])},
               "rows": {**_SIDE, "description": "option: rows of every view that gives none"},
               "cols": {**_SIDE, "description": "option: columns of every view that gives none"}}, ["views"])),
    Tool("history", "other",
         "Exact records of what happened. view 'events': one record per turn in [start_turn, end_turn) (the action "
         "as dispatched, its feedback, n_frames, the screen it showed); view 'attempts': one summary per attempt "
         "at the current level (an attempt starts when the level is entered or restarted and ends at a win, a "
         "restart, leaving the level or the end), those starting in [start_turn, end_turn). limit: at most this "
         f"many, the latest (default {HISTORY_LIMIT}).",
         _obj({"view": {"type": "string", "enum": ["events", "attempts"]},
               "start_turn": {"type": "integer", "minimum": 1, "description": "the first turn (inclusive)"},
               "end_turn": {"type": "integer", "minimum": 1, "description": "the turn after the last (exclusive)"},
               "limit": {"type": "integer", "minimum": 1, "maximum": MAX_HISTORY}}, ["view"])),
    Tool("read_guide", "other", "Read GUIDE.md: your durable notes about the games (kept for the whole episode).",
         _obj({})),
    Tool("write_guide", "other",
         f"Replace GUIDE.md with 'content' (at most {NOTES_CAP} characters): durable knowledge about the games and "
         "controls.", _obj({"content": {"type": "string"}}, ["content"])),
    Tool("read_working", "other", "Read WORKING.md: your scratchpad for the current level.", _obj({})),
    Tool("write_working", "other",
         f"Replace WORKING.md with 'content' (at most {NOTES_CAP} characters): the scratchpad for the current "
         "level. It is kept across restarts and cleared when the screen shows a level other than the last level "
         "shown (the level advanced).", _obj({"content": {"type": "string"}}, ["content"])),
    Tool("save_compact_checkpoint", "other",
         "Before your context is compacted: replace WORKING.md with 'working_memory' and, unless 'guide' is null "
         "or left out, GUIDE.md with 'guide', in one call. When your context is nearly full the other tools wait "
         "(they are refused) until you have called this.",
         _obj({"guide": {"type": ["string", "null"]}, "working_memory": {"type": "string"}}, ["working_memory"])),
    Tool("run_python", "other",
         "Run Python code in your own persistent Python process (variables, imports and functions survive "
         "between calls). Available there: numpy as np; frames(turn=None) -> list of the archived frames of a "
         "turn as (H, W, 3) uint8 arrays (the last turn when turn is None); frame(turn=-1, index=-1) -> one "
         "frame; turns() -> the number of turns so far; gui(action, x=None, y=None, **fields) -> "
         "takes play's arguments (e.g. gui('click', 10, 20), or one action object), sends the action through the "
         "same controller as play and returns {'turn', 'feedback', 'n_frames', 'available_actions'}; print() "
         "output comes back. Nothing "
         "else of the game is reachable from it. Each call has a time and a memory limit.",
         _obj({"code": {"type": "string"}}, ["code"])),
    Tool("final_answer", "other",
         "End the episode with your final message (e.g. starting with 'BENCHMARK COMPLETED' and naming the "
         "visible evidence). Only the evaluator's own observations count as success.",
         _obj({"text": {"type": "string"}}, ["text"])),
)}

SETTINGS: dict[str, tuple[str, ...]] = {
    "native": ("play", "screenshot", "final_answer"),
    "vista": ("play", "screenshot", "inspect", "read_pixels", "history", "read_guide", "write_guide",
              "read_working", "write_working", "save_compact_checkpoint", "final_answer"),
    "code": ("play", "screenshot", "run_python", "final_answer"),
}


def tools_for(names, batch: bool) -> list[Tool]:
    """The definitions of the tools ``names`` for one episode (play with batches or not)."""
    return [_play_tool(True) if n == "play" and batch else TOOLS[n] for n in names]


def step_kind(tool: str, args) -> str:
    """The NGAR class of one tool call (see the module doc)."""
    t = TOOLS.get(tool)
    if t is None:
        return "other"
    if t.ngar != "play":
        return t.ngar
    action = args.get("action", args) if isinstance(args, dict) else args
    if isinstance(action, str) and isinstance(args, dict):     # the paper's form: the action's name
        action = {"type": action, "actions": args.get("actions")}
    return action_step_kind(action)
