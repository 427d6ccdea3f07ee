"""What every agent protocol provides, and the pieces they share.

A protocol turns the episode into a conversation and the model's replies back into GUI
actions in FRAME pixels. It knows its prompt, how a screenshot and the feedback on the last
action are shown, its tools (function-calling protocols), its coordinate convention (the
``View`` of the frame the model sees, and a 0..S grid where it uses one) and its reply
format. ``parse`` returns a ``Decision`` or raises ``ParseError`` with a message that tells
the model what was wrong (the agent sends it back as the corrective message).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from importlib import resources

from longpuzzle.agents.metrics import BENCHMARK
from longpuzzle.agents.media.images import View, frame_to_grid, grid_to_frame, make_view
from longpuzzle.engine.gui import NAMED_KEYS, ActionError, key_name, validate
from longpuzzle.engine.registry import get_puzzle

PROMPT_SETTINGS = ("minimal", "full")
LANGUAGES = ("zh", "en")
COMPLETION_PREFIX = "BENCHMARK COMPLETED"


class ParseError(ValueError):
    """A reply that is not an action in the protocol's format (the message says why)."""


@dataclass
class Decision:
    """What a reply asks for. ``actions`` are frame-pixel GUI actions (one, or several run
    as a batch); ``final`` ends the episode (``claim``: a completion claim, subject to the
    continuation rule)."""
    actions: list[dict] = field(default_factory=list)
    final: str | None = None
    claim: bool = False
    call_ids: list[str] = field(default_factory=list)   # tool calls answered by this decision
    errors: dict = field(default_factory=dict)         # call id -> parse error (function calling)


@dataclass
class Context:
    """What a prompt may say: the harness instruction, the game and difficulty and their
    on-screen labels, the frame, the prompt setting (``minimal`` / ``full`` catalogue
    instruction, or None for none) and its language."""
    instruction: str
    game: str | None
    difficulty: str | None
    frame_size: tuple[int, int]
    prompt_setting: str | None = "full"
    language: str = "zh"
    level_protocol: bool = False
    # the language of the protocol's own prompts and task message: "zh" as the paper's Codex
    # prompts (with the Chinese screens, whose labels the task message names), where a protocol
    # has them (native; zh_prompts.py); "en" otherwise
    prompt_lang: str = "en"

    @property
    def title(self) -> str:
        return get_puzzle(self.game).title if self.game else ""

    @property
    def difficulty_label(self) -> str:
        return (self.difficulty or "").capitalize()


_EN: dict | None = None


def game_instruction(game: str | None, setting: str | None, language: str = "zh") -> str:
    """The original repository's per-game instruction (catalogue ``instructions``): the
    original Chinese text, or this project's English translation."""
    global _EN
    if not game or not setting:
        return ""
    if setting not in PROMPT_SETTINGS:
        raise ValueError(f"prompt setting {setting!r}: use minimal or full")
    if language == "zh":
        return BENCHMARK["games"][game]["instructions_original"][setting]
    if language != "en":
        raise ValueError(f"language {language!r}: use zh or en")
    if _EN is None:
        _EN = json.loads((resources.files("longpuzzle.agents.models") / "instructions_en.json").read_text(encoding="utf-8"))
    return _EN[game][setting]


KEYS_TEXT = ("letters a-z, digits 0-9, " + ", ".join(NAMED_KEYS))


class Protocol:
    """Base class. Subclasses set the class attributes and implement the methods."""

    name = ""
    tool_mode = False              # native function calling (results come back as tool messages)
    claim_rule = False             # an unverified completion claim gets one continuation prompt
    screenshot_first = True        # the first request carries the first screenshot
    default_history_images: int | None = None     # screenshots sent per request (None: all)
    defaults: dict = {}            # sampling defaults for this protocol (temperature, effort, tokens)
    text_reply = "final"           # function calling: a reply without a tool call is final ("reprompt": invalid
                                   # unless it starts with COMPLETION_PREFIX)

    def __init__(self, ctx: Context, *, resize: str | None = None, scale_factor: float | None = None):
        self.ctx = ctx
        self.view: View = make_view(ctx.frame_size, resize)
        self.scale = scale_factor          # None: pixels of the image the model sees

    # -- prompts
    def system_prompt(self) -> str:
        raise NotImplementedError

    def task_text(self) -> str:
        raise NotImplementedError

    def observation_text(self, feedback, first: bool) -> str:
        """Text shown with a screenshot ("" for none)."""
        return ""

    def tools(self) -> list[dict] | None:
        return None

    def correction(self, error: str) -> str:
        raise NotImplementedError

    def continuation(self) -> str:
        return ("The evaluator has not observed the whole objective as complete. The game is still running: "
                "look at the current screenshot and keep playing.")

    def compaction_request(self) -> str:
        return ("The conversation is about to be shortened. Write a summary that lets you continue the task "
                "without the earlier turns: the goal, where you are in the interface (game, difficulty, level), "
                "what you have done and learned about the controls, what worked and what did not, and your plan. "
                "Reply with the summary text only; do not act now.")

    def parse(self, reply) -> Decision:
        raise NotImplementedError

    # -- coordinates
    def point(self, x, y, what: str = "point") -> tuple[int, int]:
        """Model coordinates -> frame pixels (ParseError if they are not numbers or are off
        the image / grid)."""
        for v in (x, y):
            if isinstance(v, bool) or not isinstance(v, (int, float)) or v != v:
                raise ParseError(f"{what} coordinates must be numbers, not {x!r}, {y!r}")
        if self.scale:
            s = self.scale
            if not (0 <= x <= s and 0 <= y <= s):
                raise ParseError(f"{what} ({x:g}, {y:g}) is off the 0..{s:g} grid")
            w, h = self.view.size
            x, y = grid_to_frame(x, w, s), grid_to_frame(y, h, s)
        elif not self.view.contains(x, y):
            w, h = self.view.size
            raise ParseError(f"{what} ({x:g}, {y:g}) is outside the {w} x {h} screenshot "
                             f"(0 <= x < {w}, 0 <= y < {h})")
        return self.view.to_frame(x, y)

    def model_point(self, x: float, y: float) -> tuple[int, int]:
        """Frame pixels -> the model's coordinates (the inverse of ``point``; for prompts,
        examples and tests)."""
        x, y = self.view.to_image(x, y)
        if self.scale:
            w, h = self.view.size
            return frame_to_grid(x, w, self.scale), frame_to_grid(y, h, self.scale)
        return x, y

    def bounds_text(self) -> str:
        if self.scale:
            return (f"x and y on a 0..{self.scale:g} grid over the screenshot (0, 0 is the top-left corner, "
                    f"{self.scale:g}, {self.scale:g} the bottom-right)")
        w, h = self.view.size
        return f"integer screenshot pixels, 0 <= x < {w} and 0 <= y < {h}, origin at the top-left"


def check_key(name) -> str:
    try:
        return key_name(name)
    except ActionError as e:
        raise ParseError(str(e)) from None


def text_keys(text) -> list[dict]:
    """A typetext action (the engine types it as key presses), checked."""
    a = {"type": "typetext", "text": text}
    try:
        validate(a, (1, 1))
    except ActionError as e:
        raise ParseError(str(e)) from None
    return [a]


def strip_fences(s: str) -> str:
    s = s.strip()
    if s.startswith("```"):
        s = s.split("\n", 1)[1] if "\n" in s else ""
        if s.rstrip().endswith("```"):
            s = s.rstrip()[:-3]
    return s.strip()


def first_json_object(s: str):
    """The first JSON object in a text (after ``` fences are removed), or ParseError."""
    s = strip_fences(s)
    start = s.find("{")
    if start < 0:
        raise ParseError("no JSON object found")
    dec = json.JSONDecoder()
    while start >= 0:
        try:
            obj, _ = dec.raw_decode(s, start)
            if isinstance(obj, dict):
                return obj
        except json.JSONDecodeError:
            pass
        start = s.find("{", start + 1)
    raise ParseError("the JSON action is not valid JSON")
