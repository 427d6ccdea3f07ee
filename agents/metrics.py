"""The benchmark's metrics, computed from what the private evaluator recorded.

Paper metrics (LongPuzzleBench; ../shared/reference/PAPERS.md), all in percent except H50:

    OSR      objective success: 100 if every target level of the objective was won
    LC       level completion: share of target levels won
    FGP      fine-grained progress: mean over target levels of b(l) = max P observed on l
             (1 for a won level, 0 for an unvisited one)
    LPR      level pass rate: levels won / levels reached, pooled over an objective's episodes
             (undefined, and left out of averages, when no target level was reached)
    H50      50% level horizon over the ten-level objectives: the largest k with
             S(k) = mean over those objectives of P(d_e >= k) >= 0.5; "10+" if S(10) >= 0.5
    LC_hard  LC over the objectives above each game's easiest tier (Truck Escape excluded)
    PER      premature exit rate: episodes ending unsuccessfully by the agent's own final
             answer or stop while budget remained and the interface was usable
    SMR      setting mismatch rate: episodes in which gameplay of another game or
             difficulty than the requested one was seen
    NGAR     native GUI action ratio: 100 * native steps / all steps, a step being one
             tool call or a terminal answer (PAPERS.md section 4, B.3); pooled over the
             steps of a scope's episodes (the paper reports it for the Code Execution
             setting; it is defined for every episode that counted its steps)

NGAR classes (B.3). Native: a step that only observes the screen or issues coordinate
input - a click, drag, swipe, scroll, key press, typed text, or a fixed batch of them
(counted once, even if one of its inputs fails). Other: a standalone wait (a wait, or a
batch of waits only - the objective protocol's opening wait included), a terminal answer,
and every tool that computes or keeps notes (the VISTA tools and run_python, see
agents/vista/tools.py). An agent of ``eval`` makes one step per action it returns;
``action_step_kind`` classes it.

Pooling (PAPERS.md section 1): the completion metrics (OSR, LC, FGP, LC_hard, and LPR) are
computed per objective and averaged equally over a game's objectives, then equally over the
games. PER and SMR instead POOL episodes within each displayed scope: an objective's row, a
game's row (``games``) and the overall figure are each the share of that scope's scored
episodes, so an objective run with more episodes weighs more.

Only scored episodes count. An episode stopped by an infrastructure failure (``end`` in
UNSCORED_ENDS: a provider, tool server or environment failure, a broken restore, a bug of the
harness) is not scored, as in the paper (PAPERS.md section 4, Scored episodes): it is left
out of every metric here and reported as unscored; it is not a failure. Whatever the agent
did is scored: its final answer, its errors, and actions the GUI refused (the refusal limit
ends the episode as ``invalid_action_limit``, a non-completion like any other).

The original repository's per-level composite score (scoring v1.3, RULES.md section 8) is
``level_score``; a game x difficulty cell is the mean over all its configured levels (levels
never run count 0) and the benchmark score is the macro mean over the cells.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from collections.abc import Iterable, Sequence

from longpuzzle.engine.errors import UnknownGameError
from longpuzzle.engine.registry import spec, specs


class _Declared(Mapping):
    """game id -> one fact of its declaration (engine/declaration.py GameSpec), read when
    asked; the games that declare none are not keys."""

    def __init__(self, fact):
        self._fact = fact          # GameSpec -> the fact, or None

    def __getitem__(self, game: str):
        try:
            v = self._fact(spec(game))
        except UnknownGameError:
            v = None
        if v is None:
            raise KeyError(game)
        return v

    def __iter__(self):
        return (s.id for s in specs() if self._fact(s) is not None)

    def __len__(self) -> int:
        return sum(1 for _ in self)


# the benchmark's settings (agents/benchmark.json): its shared facts, and under "games" each
# game's scoring facts (max_steps, timeouts, score components, penalties, instructions) as the
# game declares them (GameSpec.scoring; the built-in games' are that file's "games" entries)
BENCHMARK = {**json.loads((resources.files("longpuzzle.agents") / "benchmark.json").read_text(encoding="utf-8")),
             "games": _Declared(lambda s: s.scoring_facts())}

# each game's easiest tier (GameSpec.easiest); LC_hard uses the objectives above it (Truck
# Escape has one tier only and declares none)
EASIEST = _Declared(lambda s: s.easiest)
HORIZON_LEVELS = 10   # H50 uses the objectives with ten levels
# episode ends that are not the agent's outcome: such episodes are unscored (and rerun)
UNSCORED_ENDS = ("infrastructure_error",)


@dataclass
class LevelOutcome:
    reached: bool = False         # the level's ready gameplay state was observed
    won: bool = False             # a win was observed (keeps its credit across retries)
    max_progress: float = 0.0     # the largest P observed on the level

    @property
    def credit(self) -> float:
        """b(l): 1 for a won level, else the best P seen (0 if never reached)."""
        return 1.0 if self.won else (self.max_progress if self.reached else 0.0)


@dataclass
class EpisodeOutcome:
    game: str
    difficulty: str
    levels: list[LevelOutcome]                # one per target level, in order
    end: str = "budget"                       # completed | final_answer | agent_stop | budget | agent_error | ...
    budget_remaining: bool = False            # when it ended
    interface_usable: bool = True
    mismatch: bool = False                    # gameplay of another game/difficulty was seen
    native_steps: int | None = None           # NGAR's steps (None: not counted)
    other_steps: int | None = None

    @property
    def objective(self) -> str:
        return f"{self.game}/{self.difficulty}"

    @property
    def success(self) -> bool:
        return bool(self.levels) and all(l.won for l in self.levels)

    @property
    def solved_count(self) -> int:
        return sum(l.won for l in self.levels)

    @property
    def scored(self) -> bool:
        """False when the episode was stopped by an infrastructure failure."""
        return self.end not in UNSCORED_ENDS

    def steps_dict(self) -> dict:
        """The episode's NGAR steps and ratio as result.json records them (None where not
        counted; the keys are this class's field names, so an outcome rebuilt from a
        result keeps them)."""
        n, o = self.native_steps, self.other_steps
        if n is None or o is None:
            return {"native_steps": None, "other_steps": None, "NGAR": None}
        return {"native_steps": n, "other_steps": o, "NGAR": 100.0 * n / (n + o) if n + o else None}

    @property
    def premature_exit(self) -> bool:
        return (not self.success and self.end in ("final_answer", "agent_stop")
                and self.budget_remaining and self.interface_usable)


def json_ready(v):
    """A metrics value (or a dict / list of them) with every NaN ("not defined", e.g. no episode) as
    None, the way result and summary files write it (JSON has no NaN)."""
    if isinstance(v, float) and math.isnan(v):
        return None
    if isinstance(v, dict):
        return {k: json_ready(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [json_ready(x) for x in v]
    return v


def _mean(xs: Iterable[float]) -> float:
    xs = [x for x in xs if x is not None and not (isinstance(x, float) and math.isnan(x))]
    return sum(xs) / len(xs) if xs else math.nan


def objective_metrics(episodes: Sequence[EpisodeOutcome]) -> dict:
    """Metrics of one objective over its episodes (all must share game and difficulty)."""
    if not episodes:
        raise ValueError("an objective needs at least one episode")
    if len({e.objective for e in episodes}) != 1:
        raise ValueError("episodes of different objectives")
    won = sum(l.won for e in episodes for l in e.levels)
    reached = sum(l.reached for e in episodes for l in e.levels)
    return {
        "objective": episodes[0].objective,
        "game": episodes[0].game,
        "difficulty": episodes[0].difficulty,
        "episodes": len(episodes),
        "levels": len(episodes[0].levels),
        "OSR": _mean(100.0 * e.success for e in episodes),
        "LC": _mean(100.0 * e.solved_count / len(e.levels) for e in episodes),
        "FGP": _mean(100.0 * _mean(l.credit for l in e.levels) for e in episodes),
        "LPR": 100.0 * won / reached if reached else math.nan,
        "PER": _mean(100.0 * e.premature_exit for e in episodes),
        "SMR": _mean(100.0 * e.mismatch for e in episodes),
        "NGAR": ngar(episodes),
        "solved_counts": [e.solved_count for e in episodes],
    }


def _game_then_overall(per_obj: list[dict], key: str, keep=lambda o: True) -> float:
    games: dict[str, list[float]] = {}
    for o in per_obj:
        if keep(o):
            games.setdefault(o["game"], []).append(o[key])
    return _mean(_mean(v) for v in games.values())


def horizon50(per_obj: list[dict]) -> int | str | None:
    """H50 over the ten-level objectives among ``per_obj`` (None if there are none)."""
    tens = [o for o in per_obj if o["levels"] == HORIZON_LEVELS]
    if not tens:
        return None

    def S(k):
        return _mean(sum(d >= k for d in o["solved_counts"]) / len(o["solved_counts"]) for o in tens)
    if S(HORIZON_LEVELS) >= 0.5:
        return f"{HORIZON_LEVELS}+"
    return max(k for k in range(HORIZON_LEVELS + 1) if S(k) >= 0.5)


def aggregate(episodes: Sequence[EpisodeOutcome]) -> dict:
    """All paper metrics over a run: per objective, then per game, then overall. Unscored
    episodes are left out (``unscored`` counts them); an objective with no scored episode
    has no row."""
    by_obj: dict[str, list[EpisodeOutcome]] = {}
    unscored = 0
    for e in episodes:
        if not e.scored:
            unscored += 1
            continue
        by_obj.setdefault(e.objective, []).append(e)
    per_obj = [objective_metrics(v) for v in by_obj.values()]

    def hard(o):
        return o["game"] in EASIEST and o["difficulty"] != EASIEST[o["game"]]
    scored = [e for v in by_obj.values() for e in v]
    out = {k: _game_then_overall(per_obj, k) for k in ("OSR", "LC", "FGP", "LPR")}
    out.update(_pooled(scored))
    out["LC_hard"] = _game_then_overall(per_obj, "LC", hard)
    out["H50"] = horizon50(per_obj)
    out["unscored"] = unscored
    games: dict[str, dict] = {}
    for g in dict.fromkeys(o["game"] for o in per_obj):
        objs = [o for o in per_obj if o["game"] == g]
        row = {"game": g, "objectives": len(objs), "episodes": sum(o["episodes"] for o in objs)}
        row.update({k: _mean(o[k] for o in objs) for k in ("OSR", "LC", "FGP", "LPR")})
        row.update(_pooled([e for e in scored if e.game == g]))
        games[g] = row
    out["games"] = games
    out["objectives"] = per_obj
    return out


def _pooled(episodes: Sequence[EpisodeOutcome]) -> dict:
    """PER and SMR pooled over the episodes of one scope, NGAR over their steps."""
    if not episodes:
        return {"PER": math.nan, "SMR": math.nan, "NGAR": math.nan}
    return {"PER": 100.0 * sum(e.premature_exit for e in episodes) / len(episodes),
            "SMR": 100.0 * sum(e.mismatch for e in episodes) / len(episodes),
            "NGAR": ngar(episodes)}


def ngar(episodes: Iterable[EpisodeOutcome]) -> float:
    """NGAR pooled over the steps of the episodes that counted theirs (NaN if none did)."""
    native = total = 0
    for e in episodes:
        if e.native_steps is not None and e.other_steps is not None:
            native += e.native_steps
            total += e.native_steps + e.other_steps
    return 100.0 * native / total if total else math.nan


def action_step_kind(action) -> str:
    """NGAR class of one GUI action as an agent step: "other" for a standalone wait (a wait,
    or a batch holding only waits), else "native" (coordinate or key input, a fixed batch;
    a malformed action counts as the input it attempted)."""
    if isinstance(action, dict):
        t = action.get("type")
        if t == "wait":
            return "other"
        if t == "batch":
            acts = action.get("actions")
            if isinstance(acts, list) and acts and all(isinstance(a, dict) and a.get("type") == "wait" for a in acts):
                return "other"
    return "native"


# ---- the original repository's per-level composite score (v1.3) ----------------------

def _clamp(x: float, lo: float = 0.0, hi: float = 1.0) -> float:
    return max(lo, min(hi, x))


@dataclass
class LevelRun:
    """What the composite score needs from one level episode."""
    game: str
    success: bool
    progress: float                   # final P
    steps: int                        # agent decisions
    elapsed: float                    # play seconds
    termination: str = ""             # reason, for the failure penalty
    invalid: int = 0                  # harness-rejected actions + the game's own invalid count
    repeated: int = 0                 # consecutive identical actions without progress
    noop: int = 0                     # steps with no visible effect
    max_steps: int | None = None
    optimal_moves: int | None = None  # the level's optimal (Rush Hour: reference) number of moves
    moves: int | None = None          # moves played (Maze Paint: incl. bumps; Rush Hour: accepted)
    rush: dict = field(default_factory=dict)   # an operation tracker's counters (Rush Hour's: action_quality)


def step_efficiency(r: LevelRun) -> float:
    """A game whose scoring facts say ``"step_efficiency": "optimal_moves"`` (Maze Paint,
    Rush Hour) is scored by its moves against the level's optimal number; any other by its
    steps against its step budget."""
    cfg = BENCHMARK["games"][r.game]
    if cfg.get("step_efficiency") == "optimal_moves" and r.optimal_moves is not None and r.moves is not None:
        return r.optimal_moves / max(r.optimal_moves, r.moves, 1)
    max_steps = r.max_steps or cfg["max_steps"]
    return _clamp(1.0 - r.steps / max_steps)


def action_quality(r: LevelRun) -> float:
    """A game whose scoring facts say ``"action_quality": "operations"`` (Rush Hour) is scored
    by its operation tracker's counters (``r.rush``) when it has them; any other by the share
    of its steps that were not invalid, repeated or without effect."""
    if r.rush and BENCHMARK["games"][r.game].get("action_quality") == "operations":
        c = r.rush
        accepted = c.get("acceptedMoves", 0)
        bad = min(accepted, max(c.get("repeatedOperations", 0), c.get("repeatedStates", 0),
                                c.get("immediateReversals", 0), c.get("oscillations", 0)))
        attempts = c.get("totalOperationAttempts", 0)
        return _clamp((accepted - bad - c.get("totalRestarts", 0)) / attempts) if attempts else 0.0
    if r.steps <= 0:
        return 0.0
    return _clamp(1.0 - (r.invalid + r.repeated + r.noop) / r.steps)


def level_score(r: LevelRun) -> float:
    """Composite level score in [0, 100]: >= 60 on success, <= 59 on failure."""
    cfg = BENCHMARK["games"][r.game]
    w = cfg["components"]
    se, aq = step_efficiency(r), action_quality(r)
    if r.success:
        te = _clamp(1.0 - r.elapsed / cfg["time_budget_seconds"])
        return _clamp(w["success_base"] + w["step_efficiency"] * se + w["action_quality"] * aq
                      + w["time_efficiency"] * te, 0.0, 100.0)
    p = _clamp(r.progress)
    pen = cfg["penalties"].get(r.termination, 0.0)
    raw = w["failure_progress"] * p + w["failure_action_quality"] * p * aq + w["failure_efficiency"] * p * se - pen
    return _clamp(raw, 0.0, BENCHMARK["failure_score_cap"])


def cell_score(scores: Sequence[float], configured_levels: int) -> float:
    """A game x difficulty cell: the sum of level scores over ALL configured levels."""
    return sum(scores) / configured_levels if configured_levels else math.nan


def benchmark_score(cells: dict[str, float]) -> float:
    """Unweighted macro mean over the game x difficulty cells."""
    return _mean(cells.values())


# ---- what each reported figure means, in one line (report, leaderboard, --help) ----------

METRIC_HELP = {
    "OSR": "objective success rate: share of episodes that won every target level of the objective (%)",
    "LC": "level completion: share of the objective's target levels won in an episode (%)",
    "FGP": "fine-grained progress: mean over target levels of the best progress P seen "
           "(1 for a won level, 0 for one never reached) (%)",
    "LPR": "level pass rate: levels won / levels reached, pooled over an objective's episodes (%)",
    "H50": "50% level horizon: the most levels k that at least half the episodes of the ten-level "
           "objectives solve; 10+ when half solve all ten",
    "LC_hard": "LC over the objectives above each game's easiest tier (Truck Escape excluded) (%)",
    "PER": "premature exit rate: episodes that ended unsolved by the agent's own final answer or stop "
           "while budget remained (%)",
    "SMR": "setting mismatch rate: episodes in which gameplay of another game or difficulty was seen (%)",
    "NGAR": "native GUI action rate (code setting): share of agent steps that only observe the screen or "
            "issue coordinate input (%)",
    "score": "the original repository's composite score (v1.3): 0-100 per level (60 or more when won), "
             "averaged over each game x difficulty cell, then over the cells",
    "cost": "model cost in US dollars, from the run's token accounting",
    "unscored": "episodes stopped by an infrastructure failure (not the agent's): left out of every metric",
    "episodes": "scored episodes behind the row",
    "solved": "target levels won per episode (mean) out of the objective's levels",
}
"""One-line meaning of each metric (and of the other columns of the report's tables)."""
