"""What an episode returns, and the part of it a replay must reproduce."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class EpisodeResult:
    objective: str
    protocol: str
    agent: str
    end: str
    actions: int
    seconds: float
    outcome: Any                                 # metrics.EpisodeOutcome
    levels: list[dict] = field(default_factory=list)   # level protocol: per-level runs + scores
    error: str = ""
    folder: str = ""
    time: dict = field(default_factory=dict)    # clock.BudgetClock.parts(): real and charged apart
    presses: int = 0                             # pointer presses (one per click, drag or swipe)
    invalid: int = 0                             # refused actions
    rules: dict = field(default_factory=dict)    # the protocol rules the run used
    extra: dict = field(default_factory=dict)    # fields a driver adds (e.g. the VISTA tools' use)

    def as_dict(self) -> dict:
        o = self.outcome
        return {
            "objective": self.objective, "protocol": self.protocol, "agent": self.agent, "end": self.end,
            "scored": o.scored,
            "actions": self.actions, "seconds": round(self.seconds, 3),
            "charged_seconds": self.time.get("charged"), "time": self.time, "presses": self.presses,
            "invalid_actions": self.invalid, "rules": self.rules, "error": self.error,
            "success": o.success, "solved": o.solved_count, "target_levels": len(o.levels),
            "levels_outcome": [{"reached": l.reached, "won": l.won, "max_P": l.max_progress} for l in o.levels],
            "mismatch": o.mismatch, "budget_remaining": o.budget_remaining, "levels": self.levels,
            **o.steps_dict(), **self.extra,
        }


def result_core(d: dict) -> dict:
    """The part of a result that a replay must reproduce exactly."""
    return {k: d[k] for k in ("objective", "end", "actions", "success", "solved", "levels_outcome")}
