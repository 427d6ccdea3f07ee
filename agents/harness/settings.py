"""Episode settings, the objective instruction, and the harness's own error."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from longpuzzle.agents.base import instruction_for  # noqa: F401 - the harness's name for it
from longpuzzle.agents.evaluator import CERTIFY_BUDGET
from longpuzzle.agents.metrics import BENCHMARK
from longpuzzle.engine.errors import LongPuzzleError
from longpuzzle.engine.geometry import STYLES, check_scale, check_viewport
from longpuzzle.engine.labels import LANGS

DEFAULT_BUDGET = 3600.0
DEFAULT_ACTION_TIMEOUT = 120.0
MAX_FRAMES_PER_MOVE = 60          # intermediate frames kept per animation
# what a refused (malformed) action does to an episode. Whatever the agent produced and the
# GUI refused is the agent's own failure: under both policies it is counted, and a run of
# refusals ends the level / episode as a SCORED "invalid_action_limit" (only failures of the
# harness or the infrastructure are unscored, PAPERS.md section 4, Scored episodes)
DISPATCH_FAILED = "dispatch_failed"   # refused with feedback dispatch_failed; 3 in a row end it
WATCHDOG = "watchdog"                 # strict: the first refused action ends it
INVALID_ACTION_POLICIES = (WATCHDOG, DISPATCH_FAILED)
# each protocol's own rules where a setting is left at None
PROTOCOL_DEFAULTS = {
    "objective": {"invalid_action_policy": DISPATCH_FAILED, "charge_agent_time": True},
    "level": {"invalid_action_policy": DISPATCH_FAILED, "charge_agent_time": False},
}
# the original harness's synchronisation after each dispatched action (HARNESS.md section 4):
# a 0.05 s step wait, then polling every 0.05 s for up to 0.75 s until the frame changes, then
# up to 0.35 s for a stable frame - between 0.05 s and 1.15 s per action
ORIGINAL_SYNC_SECONDS = (0.05, 0.75, 0.35)


def refusal_limit(policy: str | None) -> int:
    """How many refused actions in a row end a level / episode ("invalid_action_limit")
    under ``policy`` (None: dispatch_failed, both protocols' default)."""
    return 1 if policy == WATCHDOG else BENCHMARK["harness"]["invalid_action_limit"]


def refusal_end_message(limit: int, why: str) -> str:
    """The error of an episode / level ended by ``limit`` refused actions in a row."""
    return f"{limit} refused actions in a row; the last: {why}" if limit > 1 else f"a refused action: {why}"


class HarnessError(LongPuzzleError):
    """A harness-level problem (bad settings, an unreadable episode folder)."""


@dataclass
class Settings:
    style: str = "2d"
    scale: float = 1.0
    frames_per_move: int = 0
    budget: float | None = DEFAULT_BUDGET       # charged seconds per objective episode (see clock.py)
    max_actions: int | None = None
    action_timeout: float | None = DEFAULT_ACTION_TIMEOUT   # seconds per agent call (None or inf: none)
    certify_budget: int = CERTIFY_BUDGET
    save_frames: bool = True
    # True: the agent's own time counts toward the budget (the paper: model time included);
    # False: the clock pauses while the agent thinks (the original level protocol pauses the
    # game). None: the protocol's rule (objective True, level False)
    charge_agent_time: bool | None = None
    # seconds charged per executed action for the browser's synchronisation (0: none; the
    # original harness spends 0.05 s to 1.15 s, see ORIGINAL_SYNC_SECONDS)
    action_latency: float = 0.0
    # "dispatch_failed" | "watchdog" (see above); None: the protocol's rule (dispatch_failed
    # in both)
    invalid_action_policy: str | None = None
    # (W, H): the suite drawn letterboxed into a W x H page (the paper's agents saw 1280 x 900);
    # coordinates are page px. None: the frame is the game's own (540 x 960 times ``scale``)
    viewport: tuple[int, int] | None = None
    # the language of the screens ("en" | "zh": the paper's interface is Chinese); the same
    # geometry in each, so coordinates do not depend on it
    lang: str = "en"
    # the evaluation preset the run was made under, with the options that changed it
    # (presets.label, e.g. "paper"); None: made without one (before presets, or by the Python API)
    preset: str | None = None

    def __post_init__(self):
        self._check_values()
        if self.viewport is not None:
            self.viewport = check_viewport(tuple(self.viewport) if isinstance(self.viewport, list) else self.viewport)
        if self.invalid_action_policy not in (None, *INVALID_ACTION_POLICIES):
            raise HarnessError(f"invalid_action_policy must be one of {', '.join(INVALID_ACTION_POLICIES)}, "
                               f"not {self.invalid_action_policy!r}")
        lat = self.action_latency
        if isinstance(lat, bool) or not isinstance(lat, (int, float)) or not 0 <= lat < 3600:
            raise HarnessError(f"action_latency must be a number of seconds >= 0, not {lat!r}")

    def _check_values(self) -> None:
        """Every setting that makes no sense is refused here, with its name (HarnessError)."""

        def bad(name, want, v):
            raise HarnessError(f"{name} must be {want}, not {v!r}")

        def num(v):
            return not isinstance(v, bool) and isinstance(v, (int, float)) and v == v

        def whole(v):
            return not isinstance(v, bool) and isinstance(v, int)

        if self.style not in STYLES:
            bad("style", f"one of {', '.join(STYLES)}", self.style)
        try:
            check_scale(self.scale)
        except LongPuzzleError as e:
            raise HarnessError(str(e)) from None
        if not whole(self.frames_per_move) or not 0 <= self.frames_per_move <= MAX_FRAMES_PER_MOVE:
            bad("frames_per_move", f"an integer from 0 to {MAX_FRAMES_PER_MOVE}", self.frames_per_move)
        if self.budget is not None and (not num(self.budget) or not 0 < self.budget < math.inf):
            bad("budget", "a positive number of seconds (or None for no budget)", self.budget)
        if self.max_actions is not None and (not whole(self.max_actions) or self.max_actions < 1):
            bad("max_actions", "a positive integer (or None for no cap)", self.max_actions)
        t = self.action_timeout
        if t is not None and (not num(t) or t <= 0):
            bad("action_timeout", "a positive number of seconds (inf or None for no limit)", t)
        if not whole(self.certify_budget) or self.certify_budget < 0:
            bad("certify_budget", "a non-negative integer (states searched per move)", self.certify_budget)
        if not isinstance(self.save_frames, bool):
            bad("save_frames", "true or false", self.save_frames)
        if self.charge_agent_time is not None and not isinstance(self.charge_agent_time, bool):
            bad("charge_agent_time", "true, false or None", self.charge_agent_time)
        if self.lang not in LANGS:
            bad("lang", f"one of {', '.join(LANGS)}", self.lang)
        if self.preset is not None and not isinstance(self.preset, str):
            bad("preset", "a preset's name (or None)", self.preset)

    def resolved(self, protocol: str) -> Settings:
        """A copy with every protocol-dependent setting left at None filled in."""
        d = PROTOCOL_DEFAULTS[protocol]
        return dataclasses.replace(self, **{k: v for k, v in d.items() if getattr(self, k) is None})

    def as_dict(self) -> dict:
        return dict(self.__dict__)
