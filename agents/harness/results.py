"""What an episode returns, and the part of it a replay must reproduce."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from longpuzzle.agents.metrics import aggregate



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
    catalog: dict = field(default_factory=dict)  # the identity of the catalogue played (Catalog.identity)
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
            **o.steps_dict(), **self.extra, "catalog": self.catalog,
        }


def level_row(ev, lid: str, score: float, presses: int) -> dict:
    """A target level's line in the result: its score, pointer presses made on it, and its
    move counts: ``moves`` = the accepted moves of the level's last visit (restarts do not
    reset it) INCLUDING the winning move; ``moves_before_win`` leaves the winning move out,
    which is how the paper's per-level sums count (its Rush Hour totals are consistent with
    it); None for a level not won."""
    row = {"level": lid, "score": round(score, 4), "presses": presses}
    st = ev.level_stats.get(lid)
    if st is not None and st.get("moves") is not None:
        won = ev.outcomes[lid].won
        row["moves"] = st["moves"]
        row["moves_before_win"] = st["moves"] - 1 if won and st["moves"] else None
    return row


def objective_results(ev, end: str, budget_remaining: bool, level_presses: dict, native_steps, other_steps):
    """What an objective episode's result derives from its evaluator (live, and again in a
    replay): (outcome, level rows, {"moves", "moves_before_win", "metrics"})."""

    outcome = ev.outcome(end, budget_remaining=budget_remaining)
    outcome.native_steps, outcome.other_steps = native_steps, other_steps
    scores = ev.level_scores(end)
    levels = [level_row(ev, l, sc, level_presses.get(l, 0)) for l, sc in zip(ev.targets, scores)]
    won_rows = [l for l in levels if l.get("moves_before_win") is not None]
    metrics = {k: v for k, v in aggregate([outcome]).items() if k not in ("objectives", "games")}
    metrics["score"] = sum(scores) / len(scores)
    return outcome, levels, {"moves": sum(l.get("moves") or 0 for l in levels),     # the winning moves included
                             "moves_before_win": sum(l["moves_before_win"] for l in won_rows),   # as the paper sums
                             "metrics": metrics}


def result_core(d: dict) -> dict:
    """The part of a result that a replay must reproduce exactly."""
    return {k: d[k] for k in ("objective", "end", "actions", "success", "solved", "levels_outcome")}
