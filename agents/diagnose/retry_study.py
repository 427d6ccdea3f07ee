"""The RQ3 study (``diagnose retry``): every source (retry.py) under each memory M0..M3 on the
study runner's fixed interleaved schedule (study.py, SCOPES contract 3), each retry an episode
folder continued from the source's restart, and the paper's layout with source-level intervals.

    <out>/sources/<level>/    the source episodes recorded from scratch (--level), fixed and
                              written before any retry runs (sources from --from runs stay
                              where they are; the retries' headers name them by relative path)
    <out>/accounts/<unit>/    M2: where the agent asked for its own account logs (a model's
                              conversation.jsonl)
    <out>/study.json          experiment "retry": the sources, the memories given (the notes),
                              the tables
    <out>/units.jsonl, <out>/episodes/   as every study

Tables (all intervals: the source-level cluster bootstrap of stats.py, 10,000 draws, seed 0):
    retry_outcomes   per memory: retries, then the count of each outcome (the first endpoint
                     of a retry: completion, recurrence of the source's exact certified failure,
                     another certified failure, another restart, an explicit stop, 300 s,
                     none) with the completion and recurrence rates and the mean best progress
                     with intervals (the paper's Table of D.4, with M3 beside M0-M2)
    retry_effects    the paired effects of a memory against another on the same units
                     (M0->M1, M1->M2, M1->M3, M0->M3): recurrence and best progress
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from longpuzzle.agents.diagnose import retry as rq
from longpuzzle.agents.diagnose import study as sr
from longpuzzle.agents.diagnose.stats import DRAWS, SEED, Count, cluster_bootstrap, paired_effect
from longpuzzle.agents.harness.replay import continue_episode
from longpuzzle.agents.harness.settings import Settings
from longpuzzle.agents.harness.trajectory import read_events

EXPERIMENT = "retry"
OUTCOME_TITLES = {"completion": "Completion", "recurrence": "Recurrence (source's dead end)",
                  "other_failure": "Other certified failure", "restart": "Another restart",
                  "stop": "Explicit stop", "timeout": "300 s", "none": "None (action ceiling)"}
PAIRS = (("M0", "M1"), ("M1", "M2"), ("M1", "M3"), ("M0", "M3"))


def public_prefix(episode: str | Path, step: int) -> list[dict]:
    """The source's public actions up to ``step`` (a scripted agent's way to know the screen:
    it replays them on its own model of the app; ``prefix=`` of AgentChoice.make)."""
    return [r["action"] for r in read_events(episode) if r.get("stream") == "public" and "action" in r
            and r["step"] <= step]


def parse_conditions(spec: str | None) -> tuple[str, ...]:
    """``M0,M3`` -> ("M0", "M3"); an unknown one: RetryError (one line)."""
    if not spec:
        return rq.CONDITIONS
    out = tuple(c.strip().upper() for c in spec.split(",") if c.strip())
    bad = [c for c in out if c not in rq.CONDITIONS]
    if bad or not out:
        raise rq.RetryError(f"unknown condition {bad[0] if bad else spec!r} (use {', '.join(rq.CONDITIONS)})")
    return tuple(c for c in rq.CONDITIONS if c in out)


def continuation_settings(src: rq.Source, budget: float, max_actions: int, harness: str | None) -> Settings:
    """The source episode's settings with the retry's limits, under ``harness`` (its screen
    kept: the restored board is drawn as recorded)."""
    from longpuzzle.agents.harness.presets import harness_settings

    head = read_events(src.episode)[0]
    given = {k: v for k, v in head["settings"].items() if k in Settings.__dataclass_fields__}
    if given.get("viewport") is not None:
        given["viewport"] = tuple(given["viewport"])
    return harness_settings(harness, Settings(**{**given, "budget": budget, "max_actions": max_actions}),
                            keep_screen=True)


def gather_sources(out: Path, runs=(), levels=(), count: int = 2, policy: str = "greedy", seed: int = 0,
                   settings: Settings | None = None, catalog=None,
                   source_agent: str | None = None) -> list[rq.Source]:
    """The sources, fixed before any retry: every source of the objective episodes of ``runs``,
    then ``count`` from scratch per level of ``levels`` (recorded under ``out/sources``)."""
    from longpuzzle.agents.diagnose.checkpoint_sources import run_episodes
    from longpuzzle.agents.diagnose.checkpoints import CheckpointError
    from longpuzzle.engine.catalog import builtin_catalog

    cat = catalog or builtin_catalog()
    found: list[rq.Source] = []
    for run in runs:
        try:
            eps = run_episodes(run, cat)
        except CheckpointError as e:
            raise rq.RetryError(str(e)) from None
        for ep in eps:
            srcs = rq.find_sources(ep, cat)
            problem = srcs and sr.replay_problem(ep.parent, ep.name, cat)    # its retries continue it
            if problem:
                raise rq.RetryError(f"{ep.parent}/{problem}: its retries could not replay")
            found += srcs
    for lid in levels:
        where = out / "sources" / lid.replace("/", "_")
        if (where / "events.jsonl").is_file():       # a study resumed: its sources as they were fixed
            found += [s for s in rq.find_sources(where, cat) if s.level == lid][:count]
            continue
        found += rq.record_sources(lid, where, count=count, policy=policy, seed=seed,
                                   settings=settings, catalog=cat, agent=source_agent)
    for i, s in enumerate(found, 1):
        s.id = f"S{i:02d}"
    return found


def schedule(sources: list[rq.Source], out: Path, conditions, repeats: int = 1) -> list[dict]:
    """The units (source x repeat) with their memories in the fixed interleaved order."""
    units = []
    for s in sources:
        for k in range(1, repeats + 1):
            units.append({"unit": s.id + (f"r{k}" if repeats > 1 else ""), "source": s.level, "checkpoint": s.id,
                          "episode": os.path.relpath(Path(s.episode).resolve(), out.resolve()), "step": s.step,
                          "level": s.level, "lost": s.lost})
    return sr.interleaved(units, lambda u: conditions)


def run_retry(out: str | Path, make_agent, *, runs=(), levels=(), count: int = 2, policy: str = "greedy",
              conditions=rq.CONDITIONS, repeats: int = 1, budget: float = rq.LIMIT_SECONDS,
              max_actions: int = rq.CEILING, harness: str | None = None, source_settings: Settings | None = None,
              source_agent: str | None = None, agent="", draws: int = DRAWS, seed: int = SEED, catalog=None,
              log=None) -> dict:
    """The RQ3 study into ``out``; ``make_agent(objective, folder, prefix=)`` a fresh agent per
    retry and per M2 account (agent_options.AgentChoice.make). Returns study.json's document."""
    out = sr.fresh_folder(out)
    existed = out.exists()
    fresh = not existed or not any(out.iterdir())
    out.mkdir(parents=True, exist_ok=True)
    try:
        sources = gather_sources(out, runs, levels, count, policy, 0, source_settings, catalog, source_agent)
        if not sources:
            raise rq.RetryError("no source: no recorded failure was followed by a verified native restart")
    except Exception:
        if fresh:                                # nothing half-written: the sources were not fixed
            if existed:
                for p in out.iterdir():
                    shutil.rmtree(p) if p.is_dir() else p.unlink()
            else:
                shutil.rmtree(out, ignore_errors=True)
        raise
    by_id = {s.id: s for s in sources}
    sched = schedule(sources, out, conditions, repeats)
    notes: dict[str, dict[str, str]] = {}

    def note_of(u: dict, cond: str) -> tuple[str, object]:
        src = by_id[u["checkpoint"]]
        account = ""
        if cond == "M2":
            account = rq.ask_account(lambda: make_agent(src.objective, out / "accounts" / u["unit"],
                                                        prefix=public_prefix(src.episode, src.step)), src)
        note, tk = rq.memory(src, cond, account)
        notes.setdefault(u["unit"], {})[cond] = note
        return note, tk

    def play(u: dict, cond: str, folder: Path) -> None:
        src = by_id[u["checkpoint"]]
        note, tk = note_of(u, cond)
        agent_ = make_agent(src.objective, folder, prefix=public_prefix(src.episode, src.step))
        continue_episode(src.episode, src.step, agent_, note=note, out=folder, takeover=tk,
                         settings=continuation_settings(src, budget, max_actions, harness), catalog=catalog,
                         stop_when={"won": [src.level]})     # completion decides the outcome: no play after it

    units = sr.run_units(out, sched, play, lambda u, c, f: rq.endpoints(f, u), log=log)
    cat = catalog.identity() if catalog is not None else None
    doc = sr.document(EXPERIMENT, catalog=cat, agent=agent, seed=seed, draws=draws, schedule=sched,
                      tables=tables(sched, units, conditions, draws=draws, seed=seed),
                      conditions=list(conditions), harness=harness or "default",
                      made_with={"runs": [str(r) for r in runs], "levels": list(levels), "count": count,
                                 "policy": None if source_agent else policy, "source_agent": source_agent},
                      limits={"budget": budget, "max_actions": max_actions},
                      sources=[{**s.as_dict(), "episode": os.path.relpath(Path(s.episode).resolve(), out.resolve())}
                               for s in sources],
                      memories=notes)
    sr.write_study(out, doc)
    return doc


def tables(sched: list[dict], units: list[dict], conditions=rq.CONDITIONS, *, draws: int = DRAWS,
           seed: int = SEED) -> list[dict]:
    """The study's tables from its primary retries (the module doc)."""
    prim = sr.primary(units)
    group = {u["unit"]: u["source"] for u in sched}
    rows = []
    for c in conditions:
        recs = [(group[u], r["endpoints"]) for (u, cc), r in sorted(prim.items()) if cc == c]
        n = len(recs)
        counts = [str(Count(sum(1 for _, e in recs if e["outcome"] == o), n)) for o in rq.OUTCOMES]

        rows.append([c, n, *counts,
                     _rate_kw(_by_source(recs, lambda e: float(e["outcome"] == "completion")), draws, seed),
                     _rate_kw(_by_source(recs, lambda e: float(e["outcome"] == "recurrence")), draws, seed),
                     _rate_kw(_by_source(recs, lambda e: float(e["best_progress"])), draws, seed)])
    outcomes = {"id": "retry_outcomes", "title": "RQ3: matched retries after a verified restart, by memory",
                "columns": ["Memory", "Retries", *(OUTCOME_TITLES[o] for o in rq.OUTCOMES),
                            "Completion rate [95% CI]", "Recurrence rate [95% CI]", "Best progress [95% CI]"],
                "rows": rows,
                "note": "each retry's outcome is its first endpoint on the source level; intervals: source-level "
                        f"cluster bootstrap, {draws} draws, seed {seed}"}
    erows = []
    for a, b in PAIRS:
        if a not in conditions or b not in conditions:
            continue
        rec_pairs: dict[str, list] = {}
        prog_pairs: dict[str, list] = {}
        for u in sched:
            ra, rb = prim.get((u["unit"], a)), prim.get((u["unit"], b))
            if ra is None or rb is None:
                continue
            ea, eb = ra["endpoints"], rb["endpoints"]
            rec_pairs.setdefault(u["source"], []).append((ea["outcome"] == "recurrence", eb["outcome"] == "recurrence"))
            prog_pairs.setdefault(u["source"], []).append((ea["best_progress"], eb["best_progress"]))
        n = sum(len(v) for v in rec_pairs.values())
        if not n:
            continue
        erows.append([f"{a} -> {b}", n, str(paired_effect(rec_pairs, draws=draws, seed=seed)),
                      str(paired_effect(prog_pairs, draws=draws, seed=seed))])
    effects = {"id": "retry_effects", "title": "RQ3: paired effects of the memories (same units)",
               "columns": ["Contrast", "Pairs", "Recurrence (B - A) [95% CI]", "Best progress (B - A) [95% CI]"],
               "rows": erows, "note": f"paired by unit; source-level cluster bootstrap, {draws} draws, seed {seed}"}
    return [outcomes, effects]


def _by_source(recs: list[tuple[str, dict]], value) -> dict[str, list[float]]:
    """{source: the value of each of its retries' endpoints}: the bootstrap's groups."""
    g: dict[str, list[float]] = {}
    for src, e in recs:
        g.setdefault(src, []).append(value(e))
    return g


def _rate_kw(groups: dict, draws: int, seed: int) -> str:
    if not groups:
        return "n/a"
    return str(cluster_bootstrap(groups, draws=draws, seed=seed))


def check_study(folder: str | Path) -> tuple[bool, list[str]]:
    """Re-derive a retry study: every retry replays, its endpoints are the recorded ones, and
    the tables computed again are study.json's."""
    doc, units = sr.load_study(folder, EXPERIMENT)
    meta = {u["unit"]: u for u in doc["schedule"]}
    problems = sr.check_replays(folder, units, lambda r, ep: rq.endpoints(ep, meta[r["unit"]]))
    again = json.loads(json.dumps(tables(doc["schedule"], units, tuple(doc["conditions"]), draws=doc["draws"],
                                         seed=doc["seed"])))
    if again != doc["tables"]:
        problems.append("the tables computed from units.jsonl differ from study.json's")
    return not problems, problems
