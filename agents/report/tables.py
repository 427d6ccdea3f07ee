"""The rows of the paper's tables: runs grouped by identity, and the columns of Table 2 (one
row per agent and setting) and Table 18 (one row per agent and objective).

A row pools every run of one identity (data.IDENTITY_KEYS: agent, model, provider, harness
configuration, protocol, setting, catalogue); runs that differ in any of them are never
merged. A row of one run shows that run's own summary; a row of several runs recomputes the
metrics from all their scored episodes, exactly as ``eval`` computes them
(``data.run_metrics``). Reference rows (published figures) come from data files
(leaderboard.py) and carry their source.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from longpuzzle.agents.metrics import EASIEST, HORIZON_LEVELS, METRIC_HELP
from longpuzzle.agents.report.data import (
    RunData, catalog_label, harness_label, identity_key, identity_label, run_metrics,
)
from longpuzzle.engine.catalog import builtin_catalog

MISSING = "-"
# Table 2 of the paper: the main results, one row per agent and setting
TABLE2 = ("OSR", "LC", "FGP", "LPR", "H50", "LC_hard", "PER", "NGAR", "cost")
OPTIONAL = ("NGAR", "cost")            # shown only where some row has them
CODE_SETTING = "code"                  # NGAR is shown for rows of this setting only (appendix B.3)
# Table 18: per objective
TABLE18 = ("episodes", "solved", "LC", "FGP", "PER", "SMR")
TABLE18_TITLES = {"PER": "premature exit", "SMR": "mismatch"}


@dataclass
class Row:
    identity: dict
    runs: list[RunData] = field(default_factory=list)
    metrics: dict = field(default_factory=dict)
    objectives: list[dict] = field(default_factory=list)   # per-objective rows (Table 18)
    episodes: list[dict] = field(default_factory=list)     # the pooled episode entries
    source: str = ""                                        # a reference row's citation

    @property
    def label(self) -> str:
        return identity_label(self.identity)

    @property
    def setting(self) -> str:
        s = self.identity.get("setting")
        return str(s) if s is not None else MISSING

    @property
    def protocol(self) -> str:
        return str(self.identity.get("protocol") or MISSING)

    @property
    def harness(self) -> str:
        return harness_label(self.identity)

    @property
    def catalog(self) -> str:
        return catalog_label(self.identity)

    @property
    def is_reference(self) -> bool:
        return bool(self.source)

    @property
    def covers(self) -> tuple[str, ...] | None:
        """The objectives the row's runs cover (None: a reference row, taken as the paper's
        whole benchmark unless its file says which)."""
        if self.is_reference:
            c = self.metrics.get("objectives")
            return tuple(sorted(c)) if isinstance(c, list) else None
        return tuple(sorted(o["objective"] for o in self.objectives if o.get("objective")))

    @property
    def coverage(self) -> str:
        """What the row covers, in a few words: "all 16 objectives", "maze_paint/easy,
        maze_paint/hard", "5 of 16 objectives"."""
        c, every = self.covers, all_objectives()
        if c is None or set(every) <= set(c):
            return f"all {len(every)} objectives"
        return ", ".join(c) if len(c) <= 2 else f"{len(c)} of {len(every)} objectives"

    def cell(self, key: str) -> str:
        """A metric's table cell; H50 over fewer than the benchmark's ten-level objectives is
        marked partial (it reads a curve over those alone)."""
        text = fmt(self.value(key), key)
        if key == "H50" and text != MISSING and not self.is_reference:
            have = len({o["objective"] for o in self.objectives if o.get("levels") == HORIZON_LEVELS})
            if have < len(ten_level_objectives()):
                text += f" (partial: {have} of {len(ten_level_objectives())})"
        return text

    def value(self, key: str):
        if key == "episodes":
            if self.is_reference:
                return self.metrics.get("episodes")
            return sum(o.get("episodes", 0) for o in self.objectives)
        if key == "NGAR" and self.identity.get("setting") != CODE_SETTING:
            return None                 # the paper's NGAR is the Code Execution setting's alone
        return self.metrics.get(key)


def all_objectives() -> list[str]:
    """Every objective of the benchmark's own catalogue."""
    return [o.id for o in builtin_catalog().objectives()]


def ten_level_objectives() -> list[str]:
    """The benchmark's objectives of ten levels (the eight H50 reads)."""
    return [o.id for o in builtin_catalog().objectives() if len(o.level_ids) == HORIZON_LEVELS]


def comparable_ranks(rows: list[Row]) -> list[int]:
    """Rank numbers of rows sorted by coverage group then by metrics: rows are ranked only
    against rows that cover the same objectives (the numbering restarts for each group)."""
    ranks, last, k = [], object(), 0
    for r in rows:
        group = r.coverage
        k = k + 1 if group == last else 1
        last = group
        ranks.append(k)
    return ranks


def group_runs(runs: list[RunData]) -> list[Row]:
    """One row per identity, in the order the identities first appear. The same folder
    given twice counts once."""
    rows: dict[str, Row] = {}
    seen = set()
    for r in runs:
        where = r.folder.resolve()
        if where in seen:
            continue
        seen.add(where)
        k = identity_key(r.identity)
        rows.setdefault(k, Row(r.identity)).runs.append(r)
    for row in rows.values():
        row.episodes = [e for r in row.runs for e in r.episodes]
        if len(row.runs) == 1:
            s = row.runs[0].summary
            row.metrics = dict(s.get("metrics") or {})
            row.objectives = list(s.get("objectives") or [])
            if not row.metrics and row.episodes:
                row.metrics, row.objectives = run_metrics(row.episodes)
        else:
            row.metrics, row.objectives = run_metrics(row.episodes)
        cost = run_cost(row.runs)
        if cost is not None and row.metrics.get("cost") is None:
            row.metrics["cost"] = cost
    return list(rows.values())


def _number(d: dict, names: tuple[str, ...]):
    for n in names:
        v = d.get(n)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return float(v)
        if isinstance(v, dict):                  # e.g. {"usd": 1.2} or {"total": ...}
            inner = _number(v, ("usd", "total_usd", "total"))
            if inner is not None:
                return inner
    return None


COST_KEYS = ("cost_usd", "cost")


def run_cost(runs: list[RunData]) -> float | None:
    """Model cost of runs in USD, where they record it: a summary's own figure, else the sum
    over episodes when every episode has one. None when not recorded."""
    total = 0.0
    for r in runs:
        c = _number(r.summary, COST_KEYS) or _number(r.summary.get("metrics") or {}, COST_KEYS)
        if c is None:
            eps = [_number(e, COST_KEYS) for e in r.episodes]
            if not eps or any(v is None for v in eps):
                return None
            c = sum(eps)
        total += c
    return total


# ---- derived figures ------------------------------------------------------------------

def easiest_tier_lc(objectives: list[dict]) -> float | None:
    """LC over each game's easiest tier (the games LC_hard covers), game-averaged."""
    games: dict[str, list[float]] = {}
    for o in objectives:
        if o.get("game") in EASIEST and o.get("difficulty") == EASIEST[o["game"]] and o.get("LC") is not None:
            games.setdefault(o["game"], []).append(o["LC"])
    vals = [sum(v) / len(v) for v in games.values()]
    return sum(vals) / len(vals) if vals else None


def horizon_curve(objectives: list[dict]) -> list[float] | None:
    """S(k) for k = 0 .. 10 over the ten-level objectives: the mean over those objectives of
    the share of their episodes that solved at least k levels (Figure 3c; H50 reads it)."""
    tens = [o for o in objectives if o.get("levels") == HORIZON_LEVELS and o.get("solved_counts")]
    if not tens:
        return None
    return [sum(sum(d >= k for d in o["solved_counts"]) / len(o["solved_counts"]) for o in tens) / len(tens)
            for k in range(HORIZON_LEVELS + 1)]


def solved_text(o: dict) -> str:
    counts = o.get("solved_counts")
    n = o.get("levels")
    if not counts or not n:
        return MISSING
    mean = sum(counts) / len(counts)
    return f"{mean:.1f}/{n}" if len(counts) > 1 else f"{counts[0]}/{n}"


# ---- formatting -------------------------------------------------------------------------

def fmt(v, key: str = "") -> str:
    """A cell's text: "-" for anything missing, one decimal for percentages."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return MISSING
    if key == "cost":
        return f"${v:,.2f}"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.1f}"
    return str(v)


def table2_columns(rows: list[Row]) -> list[str]:
    return [k for k in TABLE2 if k not in OPTIONAL or any(r.value(k) is not None for r in rows)]


def table18_rows(rows: list[Row]) -> list[tuple[Row, dict]]:
    return [(r, o) for r in rows for o in r.objectives]


def help_for(key: str) -> str:
    return METRIC_HELP.get(key, "")
