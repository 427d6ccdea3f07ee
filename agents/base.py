"""The harness's side of the agent boundary: what the harness hands an agent (``action_spec``,
the read-only frame of ``make_frame``, the instruction of ``instruction_for``, the public feedback
of ``FeedbackTracker``) and how an agent's turn can fail (``AgentError``: the
agent's fault; ``InternalError``: the project's own).

What an agent itself uses (BaseAgent, FinalAnswer, Observation, Feedback, the statuses,
InfrastructureError) is the public agent API, agents/api.py: standalone, the only part of
longpuzzle an isolated agent file sees. It is re-exported here because
``longpuzzle.agents.base`` is the import path agent files use (docs/guides/evaluating-agents.md;
inside the sandbox that path IS agents/api.py), so both paths give the same classes.

An agent sees only frames and public feedback on its last action; it acts only through the
native GUI actions of engine/gui.py. Nothing it receives refers to the game state, the suite
or the evaluator: observations hold a private COPY of the frame and plain values.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from longpuzzle.engine.gui import ACTION_TYPES, ALIASES, NAMED_KEYS

from longpuzzle.agents.api import (  # noqa: F401 - the public API, re-exported
    DISPATCH_FAILED, FIRST_ACTION, NO_VISIBLE_EFFECT, RETURNED_TO_RECENT, SCREEN_CHANGED, WAIT_COMPLETED, BaseAgent,
    Feedback, FinalAnswer, InfrastructureError, Observation, Probe, Takeover, first_action,
)


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


class InternalError(Exception):
    """An error of the project's own code met while running an agent (e.g. a model request
    that the installed SDK refuses before sending it): not the agent's failure, nor the
    provider's. It is never retried nor turned into an episode end: it stops the run
    (``eval`` prints one ``error:`` line and exits 1) and leaves the episode unfinished, so
    that ``eval --resume`` runs it again once the cause is fixed."""


@dataclass
class AgentError(Exception):
    kind: str                    # "raised" | "timeout" | "garbage"
    detail: str = ""

    def __str__(self) -> str:
        return f"agent {self.kind}: {self.detail}"


def instruction_for(game: str, difficulty: str) -> str:
    """The paper's instruction (PAPERS.md section 1, Protocol)."""
    from longpuzzle.engine.registry import get_puzzle   # (here: the registry reads entry points, which agents need not)
    return f"Complete all levels of {get_puzzle(game).title} at {difficulty} difficulty in the Game Suite"


class FeedbackTracker:
    """Public feedback from frames alone (HARNESS.md section 5)."""

    def __init__(self, first_hash: str):
        self.recent = [first_hash]

    def status(self, action: dict, h: str) -> str:
        prev = self.recent[-1]
        older = self.recent[-5:-1]
        self.recent.append(h)
        self.recent = self.recent[-6:]
        if action["type"] == "wait" and h == prev:
            return WAIT_COMPLETED
        if h == prev:
            return NO_VISIBLE_EFFECT
        if h in older:
            return RETURNED_TO_RECENT
        return SCREEN_CHANGED
