"""The tools: names, descriptions, argument schemas, NGAR classes, and which setting offers
which. One table serves every transport (MCP, a model's native function calling).

Settings (``SETTINGS``)
    native   the paper's Native GUI Actions: ``play`` (one GUI action or one batch; a
             screenshot comes back after it), ``screenshot`` (the current screen again),
             ``final_answer``
    vista    the VISTA harness (PAPERS.md section 2): native plus ``inspect``,
             ``read_pixels``, ``history``, the notes (``read_guide`` / ``write_guide``,
             ``read_working`` / ``write_working``) and ``save_compact_checkpoint``
    code     the paper's Code Execution CUA: native plus ``run_python`` (the agent's code in
             a separate persistent process, with the archived frames and ``gui(action)``)

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

from dataclasses import dataclass

from longpuzzle.agents.metrics import action_step_kind

MAX_VIEWS = 16
MAX_ZOOM = 16
MAX_SAMPLES = 4096               # read_pixels: rows x cols at most
MAX_SIDE = 128                   # read_pixels: rows, cols at most
MAX_INSPECT_PIXELS = 4_000_000   # one inspect view: output width x height at most
HISTORY_LIMIT = 50               # history records by default
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
_ACTION = {
    "type": "object",
    "description": (
        "One GUI action in frame pixels (origin top-left), by 'type': "
        "click {x, y}; double_click {x, y}; long_press {x, y, ms}; "
        "drag {x0, y0, x1, y1, steps?, ms?, via?: [[x, y], ...] waypoints}; "
        "swipe {direction: up|down|left|right, x?, y?, distance?} or {x0, y0, x1, y1}; "
        "press {x, y} / move {x, y} / release {x?, y?}; key {name: a letter, a digit, Enter, Escape, Space, "
        "Backspace, Tab, ArrowUp, ArrowDown, ArrowLeft, ArrowRight}; typetext {text}; "
        "scroll {direction, x?, y?, amount?}; wait {ms}; batch {actions: [action, ...]} run in order."),
    "properties": {
        "type": {"type": "string", "enum": ["click", "double_click", "long_press", "press", "move", "release",
                                            "drag", "swipe", "key", "typetext", "scroll", "wait", "batch"]},
        "x": _XY, "y": _XY, "x0": _XY, "y0": _XY, "x1": _XY, "y1": _XY,
        "via": {"type": "array", "items": {"type": "array", "items": {"type": "integer"}}},
        "steps": {"type": "integer"}, "ms": {"type": "integer"}, "distance": {"type": "integer"},
        "amount": {"type": "integer"}, "direction": {"type": "string", "enum": ["up", "down", "left", "right"]},
        "name": {"type": "string"}, "text": {"type": "string"},
        "actions": {"type": "array", "items": {"type": "object"}},
    },
    "required": ["type"],
}
_VIEW = {
    "type": "object",
    "description": "An archived frame: 'turn' (the play call that produced it: 1 = the opening wait; -1 = the "
                   "latest turn) and 'frame' (its index within that turn: 0 .. n-1 oldest first; -1, the "
                   "default, is the final frame the turn returned).",
    "properties": {"turn": {"type": "integer"}, "frame": {"type": "integer"}},
    "required": ["turn"],
}
_BOX = {"type": "array", "items": {"type": "integer"}, "minItems": 4, "maxItems": 4,
        "description": "[x0, y0, x1, y1] in frame pixels, x1 and y1 exclusive"}


def _obj(props: dict, required: list[str] | None = None) -> dict:
    return {"type": "object", "properties": props, "required": required or [], "additionalProperties": False}


TOOLS: dict[str, Tool] = {t.name: t for t in (
    Tool("play", "play",
         "Perform exactly one GUI action, or one batch of actions run in order, on the game screen. Returns the "
         "screenshot after the (last) action, the public feedback (screen_changed, no_visible_effect, "
         "returned_to_recent_screen, wait_completed) and the turn number; every intermediate animation frame is "
         "archived under that turn. The first action must be a wait: it returns the first screenshot and starts "
         "the clock. Send the next play only after this one returned.",
         _obj({"action": _ACTION}, ["action"])),
    Tool("screenshot", "native", "The current screen again (no action is taken).", _obj({})),
    Tool("inspect", "other",
         f"Look again at archived frames: up to {MAX_VIEWS} views, each a turn and frame index with an optional "
         f"crop box and an integer zoom (nearest neighbour, 1..{MAX_ZOOM}). Returns one image per view.",
         _obj({"question": {"type": "string", "description": "what you are looking for (recorded)"},
               "views": {"type": "array", "minItems": 1, "maxItems": MAX_VIEWS,
                         "items": {"type": "object", "description": _VIEW["description"], "properties": {
                             "turn": {"type": "integer"}, "frame": {"type": "integer"},
                             "box": _BOX, "zoom": {"type": "integer", "minimum": 1, "maximum": MAX_ZOOM}},
                             "required": ["turn"]}}}, ["views"])),
    Tool("read_pixels", "other",
         f"Sample a region of an archived frame as a grid: the region split into rows x cols cells (at most "
         f"{MAX_SAMPLES} cells, {MAX_SIDE} per side) and the pixel value at each cell's centre. Returns a palette "
         "of the colours found (hex) and one string per row, one palette symbol per cell.",
         _obj({"question": {"type": "string"}, "view": _VIEW, "region": _BOX,
               "rows": {"type": "integer", "minimum": 1, "maximum": MAX_SIDE},
               "cols": {"type": "integer", "minimum": 1, "maximum": MAX_SIDE}}, ["view", "rows", "cols"])),
    Tool("history", "other",
         "Exact records of what happened. view 'events': one record per turn (the action as dispatched, its "
         "feedback, how many frames it produced, the screen it showed); view 'attempts': one summary per attempt "
         "of the current level (an attempt starts when the level is entered or restarted and ends at a win, a "
         "restart, leaving the level or the end). start / end: the first and last turn (events) or attempt "
         f"number (attempts) to include; limit: at most this many, the latest (default {HISTORY_LIMIT}).",
         _obj({"view": {"type": "string", "enum": ["events", "attempts"]},
               "start": {"type": "integer", "minimum": 1}, "end": {"type": "integer", "minimum": 1},
               "limit": {"type": "integer", "minimum": 1, "maximum": MAX_HISTORY}})),
    Tool("read_guide", "other", "Read GUIDE.md: your durable notes about the games (kept for the whole episode).",
         _obj({})),
    Tool("write_guide", "other",
         f"Replace GUIDE.md with 'text' (at most {NOTES_CAP} characters): durable knowledge about the games and "
         "controls.", _obj({"text": {"type": "string"}}, ["text"])),
    Tool("read_working", "other", "Read WORKING.md: your scratchpad for the current level.", _obj({})),
    Tool("write_working", "other",
         f"Replace WORKING.md with 'text' (at most {NOTES_CAP} characters): the scratchpad for the current level. "
         "It is cleared when the screen shows a level other than the last level shown (the level advanced).",
         _obj({"text": {"type": "string"}}, ["text"])),
    Tool("save_compact_checkpoint", "other",
         "Before your context is compacted: save GUIDE.md and WORKING.md in one call (each replaced by the text "
         "given) and mark the checkpoint in the record.",
         _obj({"guide": {"type": "string"}, "working": {"type": "string"}}, ["guide", "working"])),
    Tool("run_python", "other",
         "Run Python code in your own persistent Python process (variables, imports and functions survive "
         "between calls). Available there: numpy as np; frames(turn=None) -> list of the archived frames of a "
         "turn as (H, W, 3) uint8 arrays (the last turn when turn is None); frame(turn=-1, index=-1) -> one "
         "frame; turns() -> the number of turns so far; gui(action) -> sends one GUI action or batch through the "
         "same controller as play and returns {'turn', 'feedback', 'frames'}; print() output comes back. Nothing "
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


def step_kind(tool: str, args) -> str:
    """The NGAR class of one tool call (see the module doc)."""
    t = TOOLS.get(tool)
    if t is None:
        return "other"
    if t.ngar != "play":
        return t.ngar
    action = args.get("action", args) if isinstance(args, dict) else args
    return action_step_kind(action)
