"""Human baselines: recorded human episodes aggregated per level and objective, the paper's
human reference beside them, and an efficiency score for agents against them.

Human episodes are the episode folders whose agent is "human" or "human/<player>" (live.py
records them), found under the folders given; each is REPLAYED first (replay_episode) and
only verified, finished episodes count (the others are listed with the reason).

Per level (from each episode's result and its private records, report/analytics.py):
    episodes    human episodes that reached the level; ``won`` those that won it
    presses     pointer presses on the level (one per click, drag or swipe, the paper's unit),
                all attempts included; ``baseline`` the upper median of the presses of the
                episodes that won it (ARC-AGI-3's per-level human baseline: of n winners
                sorted by fewest presses, entry n // 2 counted from 0 - the third of four or
                of five), ``median`` their median
    seconds     the person's time on the level: the agent time of its actions (what the
                harness charged them while they looked and moved), medians over winners
    restarts    restarts of the level (analytics: attempts ended by Restart), summed
    dead_ends   attempts that reached a certified dead end (analytics), summed
Per objective: the same over whole episodes (presses and time of episodes that completed
it), with the paper's Table 4 reference (PAPERS.md section 4: one person's presses).

Efficiency (in the style of ARC-AGI-3's RHAE, Relative Human Action Efficiency):
    level score   s_l = min(1, (b_l / m_l) ** 2) for a level the agent won with m_l presses
                  against the human baseline b_l; 0 for a level not won, and 0 beyond the
                  cut-off m_l > 5 * b_l (ARC-AGI-3 stops an agent at five times the human's
                  actions)
    objective     RHAE = sum_l k_l * s_l / sum_l k_l over the objective's levels that have a
                  human baseline, k_l the level's position (1, 2, ...): later levels weigh more
    paper         RHAE_paper = min(1, (T / M) ** 2) for an episode that completed the
                  objective with M presses against Table 4's T; 0 otherwise
    An agent's score per objective is the mean over its episodes. Squared efficiency
    punishes waste steeply: twice the human's presses scores 25 %.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from pathlib import Path

from longpuzzle.agents.harness.settings import HarnessError
from longpuzzle.engine.errors import LongPuzzleError

# Table 4 of the paper (PAPERS.md section 4): the human's pointer presses per objective
PAPER_HUMAN_PRESSES = {
    "bolt_unscrew/easy": 100, "bolt_unscrew/hard": 2500,
    "rush_hour/easy": 89, "rush_hour/medium": 102, "rush_hour/hard": 442,
    "nut_and_bolt/easy": 45, "nut_and_bolt/medium": 169, "nut_and_bolt/hard": 405,
    "nut_and_bolt/extreme": 538, "nut_and_bolt/nightmare": 1106,
    "truck_escape/default": 134,
    "maze_paint/easy": 128, "maze_paint/medium": 238, "maze_paint/hard": 476,
    "color_connect/easy": 118, "color_connect/hard": 316,
}
PAPER_HUMAN_RESTARTS, PAPER_HUMAN_UNDOS = 99, 55       # over all objectives
CUTOFF = 5                                             # presses beyond CUTOFF x the human's score 0


def upper_median(xs) -> float | None:
    """ARC-AGI-3's per-level baseline: sorted ascending, entry len // 2 (the upper of the two
    middle ones for an even count); None for no values."""
    xs = sorted(xs)
    return xs[len(xs) // 2] if xs else None


def level_score(baseline: float | None, presses: int | None, won: bool) -> float | None:
    """s_l (module doc); None without a baseline."""
    if baseline is None:
        return None
    if not won or presses is None or presses > CUTOFF * baseline:
        return 0.0
    return 1.0 if presses <= baseline else (baseline / presses) ** 2


@dataclass
class HumanEpisode:
    """One verified human episode, reduced to what the baselines use."""
    folder: Path
    agent: str
    objective: str
    protocol: str                      # objective | level
    completed: bool
    presses: int
    seconds: float
    levels: dict = field(default_factory=dict)   # level -> {"won", "presses", "seconds", "restarts", "dead_ends"}


def _human_seconds(folder: Path) -> dict:
    """The person's time per level: each action's agent time, on the level it acted on."""
    from longpuzzle.agents.harness.trajectory import read_events

    t_agent: dict[int, float] = {}
    out: dict[str, float] = {}
    for rec in read_events(folder)[1:]:
        if rec.get("stream") == "public" and "t_agent" in rec:
            t_agent[rec["step"]] = rec["t_agent"]
        elif rec.get("stream") == "private":
            lvl = rec["record"].get("level")
            if lvl:
                out[lvl] = out.get(lvl, 0.0) + t_agent.get(rec["step"], 0.0)
    return out


def read_human_episode(folder: Path) -> HumanEpisode:
    """A human episode folder's figures (its result, its analytics, its time per level)."""
    from longpuzzle.agents.report.analytics import analyze_episode
    from longpuzzle.agents.report.data import read_json

    res = read_json(folder / "result.json", "episode result")
    an = analyze_episode(folder, res)
    rows = {r["level"]: r for r in an["levels"]}
    secs = _human_seconds(folder)
    if res.get("protocol") == "objective":
        presses = {r["level"]: r.get("presses", 0) for r in res.get("levels", [])}
        won = {r["level"]: bool(r.get("won")) for r in an["levels"]}
        objective, completed = res["objective"], bool(res.get("success"))
    else:
        lid = res["level"]
        presses, won = {lid: res.get("presses", 0)}, {lid: bool(res.get("success"))}
        objective, completed = lid.rsplit("/", 1)[0], False
    levels = {}
    for lid, r in rows.items():
        if not r.get("attempts") and not presses.get(lid):
            continue                      # a target level never reached
        levels[lid] = {"won": won.get(lid, False), "presses": presses.get(lid, 0), "seconds": secs.get(lid, 0.0),
                       "restarts": r.get("restarts", 0), "dead_ends": r.get("dead_ends", 0)}
    t = res.get("time") or {}
    return HumanEpisode(folder, res.get("agent", "human"), objective, str(res.get("protocol", "objective")),
                        completed, int(res.get("presses", 0)), float(t.get("agent", 0.0)), levels)


def human_episodes(dirs, memo: dict | None = None) -> tuple[list[HumanEpisode], list[tuple[str, str]]]:
    """The verified human episodes under ``dirs`` (folders searched recursively), and the
    human episode folders left out with why (not verified, unfinished). ``memo``: a dict kept
    between calls (the app's), so that each episode is replayed once while its files stay the
    same (keyed by its folder and the size and time of its events and result)."""
    from longpuzzle.agents.report.data import episode_folders

    eps, skipped, seen = [], [], set()
    memo = {} if memo is None else memo
    for d in dirs:
        d = Path(d)
        if not d.is_dir():
            raise HarnessError(f"{d} is not a folder")
        for f in episode_folders(d):
            if f.resolve() in seen:
                continue
            seen.add(f.resolve())
            key = (str(f.resolve()), *(_stamp(f / n) for n in ("events.jsonl", "result.json")))
            if key not in memo:
                memo[key] = _human_episode(f)
            ep, why = memo[key]
            if ep is not None:
                eps.append(ep)
            elif why:
                skipped.append((str(f), why))
    return eps, skipped


def _stamp(p: Path):
    try:
        st = p.stat()
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns


def _human_episode(f: Path) -> tuple[HumanEpisode | None, str]:
    """(the episode, "") for a verified human episode; (None, why) for a human one left out;
    (None, "") for another agent's."""
    from longpuzzle.agents.harness.replay import replay_episode
    from longpuzzle.agents.harness.trajectory import read_events
    from longpuzzle.agents.serve.live import is_human

    try:
        head = read_events(f)[0]
    except (HarnessError, OSError, ValueError) as e:
        return None, f"unreadable: {e}"
    if not is_human(head.get("agent")):
        return None, ""
    try:
        rep = replay_episode(f)
    except HarnessError as e:
        return None, str(e)
    if not rep.ok or not rep.complete:
        return None, rep.divergence or rep.note or "not finished"
    return read_human_episode(f), ""


def _median(xs):
    return statistics.median(xs) if xs else None


def baseline_table(episodes: list[HumanEpisode], catalog=None) -> dict:
    """{"levels": [row per level], "objectives": [row per objective]} (the module doc); every
    objective of the paper's Table 4 has a row, with or without recordings."""
    from longpuzzle.engine.catalog import builtin_catalog

    cat = catalog or builtin_catalog()
    by_level: dict[str, list[dict]] = {}
    for ep in episodes:
        for lid, v in ep.levels.items():
            by_level.setdefault(lid, []).append(v)
    levels = []
    for lid in sorted(by_level, key=_level_key):
        vs = by_level[lid]
        wins = [v for v in vs if v["won"]]
        levels.append({"objective": lid.rsplit("/", 1)[0], "level": lid, "episodes": len(vs), "won": len(wins),
                       "baseline_presses": upper_median(v["presses"] for v in wins),
                       "median_presses": _median([v["presses"] for v in wins]),
                       "median_seconds": _round(_median([v["seconds"] for v in wins])),
                       "restarts": sum(v["restarts"] for v in vs), "dead_ends": sum(v["dead_ends"] for v in vs)})
    objectives = []
    ids = [o.id for o in cat.objectives()]
    for oid in ids + sorted({e.objective for e in episodes} - set(ids)):
        eps = [e for e in episodes if e.objective == oid]
        full = [e for e in eps if e.protocol == "objective"]
        done = [e for e in full if e.completed]
        lv = [v for e in eps for v in e.levels.values()]
        objectives.append({"objective": oid, "episodes": len(eps), "completed": len(done),
                           "baseline_presses": upper_median(e.presses for e in done),
                           "median_presses": _median([e.presses for e in done]),
                           "median_seconds": _round(_median([e.seconds for e in done])),
                           "restarts": sum(v["restarts"] for v in lv), "dead_ends": sum(v["dead_ends"] for v in lv),
                           "paper_presses": PAPER_HUMAN_PRESSES.get(oid)})
    return {"levels": levels, "objectives": objectives}


def _round(v):
    return None if v is None else round(float(v), 3)


def _level_key(lid: str):
    g, d, n = lid.rsplit("/", 2) if lid.count("/") >= 2 else (lid, "", "0")
    return (g, d, int(n) if n.isdigit() else 0)


def efficiency(result: dict, table: dict, catalog=None) -> dict:
    """One agent episode's RHAE against the human baselines of ``table`` and RHAE_paper
    against Table 4 (module doc): {"objective", "rhae", "rhae_paper", "levels_scored"}."""
    from longpuzzle.engine.catalog import builtin_catalog

    cat = catalog or builtin_catalog()
    oid = result.get("objective")
    base = {r["level"]: r["baseline_presses"] for r in table["levels"]}
    won = {}
    for r, o in zip(result.get("levels") or [], result.get("levels_outcome") or []):
        if "level" in r:
            won[r["level"]] = (bool(o.get("won")), r.get("presses"))
    try:
        targets = cat.objective(oid).level_ids
    except LongPuzzleError:               # an objective of another catalogue: its recorded levels
        targets = list(won)
    num = den = 0.0
    scored = 0
    for k, lid in enumerate(targets, 1):
        w, presses = won.get(lid, (False, None))
        s = level_score(base.get(lid), presses, w)
        if s is None:
            continue
        num += k * s
        den += k
        scored += 1
    ref = PAPER_HUMAN_PRESSES.get(oid)
    paper = None
    if ref is not None:
        m = result.get("presses") or 0
        paper = min(1.0, (ref / m) ** 2) if result.get("success") and m else (1.0 if result.get("success") else 0.0)
    return {"objective": oid, "rhae": round(num / den, 4) if den else None,
            "rhae_paper": None if paper is None else round(paper, 4), "levels_scored": scored}


def agent_scores(runs, table: dict) -> list[dict]:
    """Per (run, objective): the agent's mean RHAE and RHAE_paper over its scored episodes
    (``runs``: report/data RunData, verified)."""
    from longpuzzle.agents.serve.live import is_human

    rows = []
    for run in runs:
        per: dict[str, list[dict]] = {}
        for ep in run.episodes:
            if not ep.get("scored", True) or not ep.get("objective") or is_human(ep.get("agent")):
                continue
            per.setdefault(ep["objective"], []).append(efficiency(ep, table))
        for oid, es in sorted(per.items()):
            rh = [e["rhae"] for e in es if e["rhae"] is not None]
            rp = [e["rhae_paper"] for e in es if e["rhae_paper"] is not None]
            rows.append({"run": str(run.folder), "agent": run.summary.get("agent"), "objective": oid,
                         "episodes": len(es), "rhae": round(sum(rh) / len(rh), 4) if rh else None,
                         "rhae_paper": round(sum(rp) / len(rp), 4) if rp else None,
                         "levels_with_baseline": max(e["levels_scored"] for e in es)})
    return rows


LEVEL_COLUMNS = ("objective", "level", "episodes", "won", "baseline_presses", "median_presses", "median_seconds",
                 "restarts", "dead_ends")
OBJECTIVE_COLUMNS = ("objective", "episodes", "completed", "baseline_presses", "median_presses", "median_seconds",
                     "restarts", "dead_ends", "paper_presses")
AGENT_COLUMNS = ("run", "agent", "objective", "episodes", "rhae", "rhae_paper", "levels_with_baseline")


def to_csv(table: dict, agents: list[dict] | None = None) -> str:
    """The table as CSV: one row per level and per objective (column ``scope``), then the
    agents' scores (scope "agent") when given."""
    import csv
    import io

    cols = ["scope", *dict.fromkeys(LEVEL_COLUMNS + OBJECTIVE_COLUMNS + AGENT_COLUMNS)]
    buf = io.StringIO()
    w = csv.DictWriter(buf, cols, lineterminator="\n")
    w.writeheader()
    for scope, rows in (("objective", table["objectives"]), ("level", table["levels"]), ("agent", agents or [])):
        for r in rows:
            w.writerow({"scope": scope, **{k: "" if v is None else v for k, v in r.items()}})
    return buf.getvalue()
