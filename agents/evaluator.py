"""The private evaluator: what happened, recorded after every action, never shown to agents.

It reads the suite (engine) directly and keeps, per action: the screen, game, difficulty and
level on screen, the progress potential P, win events, restarts, undos, rejected moves, and
for games whose states can become dead ends (``puzzle.dead_ends``) a dead-end certificate
from the solvers with a state budget (``unknown`` stays unknown; a budget of 0 asks for
none, and the record's certificate stays None). From these it builds the
per-level outcomes the metrics need.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from longpuzzle.agents.metrics import EpisodeOutcome, LevelOutcome, LevelRun, level_score
from longpuzzle.engine.catalog import Catalog, builtin_catalog
from longpuzzle.engine.lru import LRU
from longpuzzle.engine.suite import Suite

CERTIFY_BUDGET = 20_000


SHARED_CERTIFICATES = 1 << 16      # certificates kept for the whole process (every episode's evaluator)
_shared = LRU(SHARED_CERTIFICATES, threadsafe=True)


def certificate(level, state, budget: int = CERTIFY_BUDGET) -> str:
    """"solvable", "dead_end" or "unknown" for a state, from the exhaustive solvers. A
    certificate is a function of the level, the state and the budget alone (the search is
    deterministic), so the process keeps the latest SHARED_CERTIFICATES of them, by the
    level's content: the episodes of one objective (a dataset job's, an evaluation's) pass
    through the same states, each certified once."""
    key = (level.id, getattr(level, "sha256", None), bytes(state.tobytes()), budget)
    out = _shared.get(key)
    if out is None:
        try:
            from longpuzzle.solvers import certify
        except ImportError:          # solvers not installed in this build
            return "unknown"
        res = certify(level, state, budget=budget, solution=False)      # the status is all it keeps
        out = {"solvable": "solvable", "unsolvable": "dead_end"}.get(res.status, "unknown")
        _shared.put(key, out)
    return out


DIAGNOSTICS_KEPT = 1 << 14         # diagnostics kept per level (Level.diagnostics_cache)


def _diagnostics(puzzle, level, state) -> dict:
    """puzzle.diagnostics(level, state), each state's worked out once per level (a copy:
    records are the caller's)."""
    cache = level.diagnostics_cache
    key = state.tobytes()
    d = cache.get(key)
    if d is None:
        d = cache[key] = puzzle.diagnostics(level, state)
        while len(cache) > DIAGNOSTICS_KEPT:
            del cache[next(iter(cache))]           # the oldest
    return dict(d)


@dataclass
class Evaluator:
    game: str
    difficulty: str
    certify_budget: int = CERTIFY_BUDGET
    targets: list[str] = field(default_factory=list)
    outcomes: dict[str, LevelOutcome] = field(default_factory=dict)
    mismatch: bool = False
    restarts: int = 0
    undos: int = 0
    rejected: int = 0
    records: int = 0
    level_stats: dict = field(default_factory=dict)   # per target level: actions, rejected, noop, clock
    _last_moves: tuple = (None, 0)
    catalog: Catalog | None = None     # the levels judged (default: the built-in catalogue)

    def __post_init__(self):
        if self.catalog is None:
            self.catalog = builtin_catalog()
        if not self.targets:
            self.targets = list(self.catalog.objective(f"{self.game}/{self.difficulty}").level_ids)
        self.outcomes = {lid: LevelOutcome() for lid in self.targets}

    def observe(self, suite: Suite, effects: list[dict] | None = None) -> dict:
        """Record the suite after an action; returns the private record."""
        effects = effects or []
        self.records += 1
        rec: dict = {"screen": suite.screen_name(), "game": None, "difficulty": None, "level": None,
                     "P": None, "win": False, "certificate": None}
        for e in effects:
            k = e.get("effect")
            if k == "restart":
                self.restarts += 1
            elif k == "undo":
                self.undos += 1
            elif k == "rejected":
                self.rejected += 1
        rec.update(restarts=self.restarts, undos=self.undos, rejected=self.rejected)
        s = suite.session
        if suite.screen.get("name") == "level" and s is not None:
            lvl = s.level
            rec.update(game=lvl.game, difficulty=lvl.difficulty, level=lvl.id, P=s.progress,
                       moves=len(s.moves))
            if (lvl.game, lvl.difficulty) != (self.game, self.difficulty):
                self.mismatch = True
            out = self.outcomes.get(lvl.id)
            solved = s.solved
            if out is not None and not out.won:
                st = self.level_stats.setdefault(lvl.id, {"actions": 0, "rejected": 0, "noop": 0,
                                                          "clock0": suite.clock, "clock1": suite.clock, "P": 0.0})
                if effects:
                    st["actions"] += 1
                    st["rejected"] += sum(e.get("effect") == "rejected" for e in effects)
                    st["noop"] += sum(e.get("effect") == "move" and not e.get("changed") for e in effects)
                st["clock1"] = suite.clock
                st["P"] = rec["P"]
                st["moves"] = s.counters.moves
            if out is not None:
                out.reached = True
                out.max_progress = max(out.max_progress, rec["P"])
                if solved and not out.won:
                    out.won = True
                    rec["win"] = True
            if self.certify_budget and getattr(s.puzzle, "dead_ends", False) and not solved:
                rec["certificate"] = certificate(lvl, s.state, self.certify_budget)
            diag = _diagnostics(s.puzzle, lvl, s.state)
            if diag:
                rec["diagnostics"] = diag
        rec["mismatch"] = self.mismatch
        return rec

    @property
    def complete(self) -> bool:
        return all(o.won for o in self.outcomes.values())

    def level_scores(self, end: str) -> list[float]:
        """The v1.3 composite score of each target level from what was seen (a level never
        reached scores 0; the level the episode stopped on takes the episode's end reason)."""

        out = []
        for lid in self.targets:
            o, st = self.outcomes[lid], self.level_stats.get(lid)
            if not o.reached or st is None:
                out.append(0.0)
                continue
            lvl = self.catalog.level(lid)
            run = LevelRun(self.game, o.won, 1.0 if o.won else st["P"], steps=max(1, st["actions"]),
                           elapsed=(st["clock1"] - st["clock0"]) / 1000.0,
                           termination="" if o.won else {"budget": "timeout", "final_answer": "agent_terminated",
                                                          "max_actions": "max_steps"}.get(end, end),
                           invalid=st["rejected"], noop=st["noop"], optimal_moves=lvl.data.get("optimal_moves"),
                           moves=st.get("moves"))
            out.append(level_score(run))
        return out

    def outcome(self, end: str, budget_remaining: bool, interface_usable: bool = True) -> EpisodeOutcome:
        return EpisodeOutcome(self.game, self.difficulty, [self.outcomes[l] for l in self.targets], end=end,
                              budget_remaining=budget_remaining, interface_usable=interface_usable,
                              mismatch=self.mismatch)
