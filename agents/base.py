"""What an agent is given and what it returns.

An agent sees only frames and public feedback on its last action; it acts only through the
native GUI actions of engine/gui.py. Nothing it receives refers to the game state, the suite
or the evaluator: observations hold a private COPY of the frame and plain values.

    class MyAgent(BaseAgent):
        def reset(self, instruction, action_spec): ...
        def act(self, observation): return {"type": "click", "x": 100, "y": 200}

``act`` may return one action dict, a ``{"type": "batch", "actions": [...]}``, or
``FinalAnswer("...")`` to end the episode.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np

from longpuzzle.engine.gui import ACTION_TYPES, ALIASES, NAMED_KEYS

# public feedback statuses (HARNESS.md section 5)
SCREEN_CHANGED = "screen_changed"
NO_VISIBLE_EFFECT = "no_visible_effect"
RETURNED_TO_RECENT = "returned_to_recent_screen"
WAIT_COMPLETED = "wait_completed"
DISPATCH_FAILED = "dispatch_failed"


@dataclass(frozen=True)
class FinalAnswer:
    """Returned by an agent to end its episode (its claim is not evidence of success)."""
    text: str = ""


@dataclass(frozen=True)
class Feedback:
    """Public feedback on the last action."""
    status: str                  # one of the statuses above
    executed: bool               # False when the action was refused before dispatch
    message: str = ""            # e.g. what was malformed about a refused action
    frames: int = 1              # frames produced by the action (intermediate + final)


@dataclass(frozen=True)
class Observation:
    frame: np.ndarray | None     # (H, W, 3) uint8, read-only, the agent's own copy; None before
                                 # the first action of the objective protocol (a wait)
    feedback: Feedback | None    # None before the first action
    step: int                    # actions taken so far
    time_left: float | None      # seconds of budget left (None: no budget)
    frames: tuple = ()           # intermediate frames of the last action (copies), oldest first


def make_frame(frame: np.ndarray) -> np.ndarray:
    """The agent's read-only frame. A frame the renderer handed out (a read-only uint8
    array that owns its memory: nothing writes to it again) is shared as a read-only view
    without a copy; anything else is copied."""
    if isinstance(frame, np.ndarray) and frame.dtype == np.uint8 and frame.base is None \
            and not frame.flags.writeable:
        return frame.view()
    out = np.array(frame, dtype=np.uint8, copy=True)
    out.setflags(write=False)
    return out


FIRST_ACTION = MappingProxyType({"type": "wait", "ms": 0})


def action_spec(width: int, height: int, first_wait: bool = False) -> MappingProxyType:
    """The GUI action specification given to agents (plain data)."""
    spec = {
        "frame": (width, height),
        "coordinates": "pixels of the returned frame, origin top-left",
        "types": tuple(ACTION_TYPES),
        "aliases": dict(ALIASES),
        "keys": tuple(NAMED_KEYS) + ("letters a-z", "digits 0-9"),
        "examples": (
            {"type": "click", "x": width // 2, "y": height // 2},
            {"type": "drag", "x0": 10, "y0": 10, "x1": 60, "y1": 10, "steps": 10},
            {"type": "swipe", "direction": "up"},
            {"type": "batch", "actions": [{"type": "click", "x": 5, "y": 5}, {"type": "wait", "ms": 500}]},
        ),
        "final_answer": "return FinalAnswer(text) to end the episode",
    }
    if first_wait:
        spec["first_action"] = ("wait: the first observation has no frame; a wait returns the first "
                                "screenshot and starts the clock (any other first action is refused)")
    return MappingProxyType(spec)


def first_action(obs: Observation) -> dict | None:
    """The wait an agent must send first when its observation has no frame yet, else None."""
    return dict(FIRST_ACTION) if obs.frame is None else None


class BaseAgent:
    """Subclass and implement ``act``. ``name`` appears in results."""

    name = "agent"

    def reset(self, instruction: str, action_spec: Any) -> None:
        self.instruction = instruction
        self.action_spec = action_spec

    def act(self, observation: Observation) -> dict | FinalAnswer:
        raise NotImplementedError

    def note(self, text: str) -> None:
        """An extra instruction given mid-episode (an intervention)."""
        self.instruction = f"{getattr(self, 'instruction', '')}\n{text}".strip()


class InfrastructureError(Exception):
    """Raised by an agent when the infrastructure it depends on failed (a model provider that
    still fails after retries, a dead endpoint, a broken tool server): not the agent's fault.
    The episode ends as ``infrastructure_error`` and is UNSCORED (PAPERS.md section 4, Scored
    episodes): it is left out of every metric and ``eval --resume`` runs it again."""


@dataclass
class AgentError(Exception):
    kind: str                    # "raised" | "timeout" | "garbage"
    detail: str = ""

    def __str__(self) -> str:
        return f"agent {self.kind}: {self.detail}"

