"""The public agent API: what an agent is given and what it returns, and nothing else.

STANDALONE: this file imports only the standard library. It is the whole of longpuzzle an
agent file sees when it runs isolated (``eval --agent FILE.py``): inside the agent's sandbox
this same source is installed as ``longpuzzle.agents.base`` (so ``from longpuzzle.agents.base
import BaseAgent, FinalAnswer`` works there) and every other part of longpuzzle is
unimportable. In the harness, longpuzzle.agents.base re-exports these classes.

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
    frame: Any                   # numpy (H, W, 3) uint8, read-only, the agent's own copy; None
                                 # before the first action of the objective protocol (a wait)
    feedback: Feedback | None    # None before the first action
    step: int                    # actions taken so far
    time_left: float | None      # seconds of budget left (None: no budget)
    frames: tuple = ()           # intermediate frames of the last action (copies), oldest first


FIRST_ACTION = MappingProxyType({"type": "wait", "ms": 0})


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


__all__ = ["BaseAgent", "DISPATCH_FAILED", "FIRST_ACTION", "Feedback", "FinalAnswer", "InfrastructureError", "NO_VISIBLE_EFFECT",
           "Observation", "RETURNED_TO_RECENT", "SCREEN_CHANGED", "WAIT_COMPLETED", "first_action"]
