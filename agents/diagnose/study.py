"""The study runner every experiment of the lab can use (SCOPES contract 3): units x conditions
on a fixed interleaved schedule, each continuation an ordinary episode folder, infrastructure
failures replaced under the same assignment, and the study folder

    <out>/study.json     {"kind": "longpuzzle-study", "version": 1, "experiment", "catalog",
                          "agent", "seed", "draws", "schedule", "tables", "figures", ...}
                          written atomically at the end
    <out>/units.jsonl    one record per continuation attempt (unit, source, checkpoint,
                          condition, order, attempt, status "valid" | "replaced", folder,
                          endpoints), appended as it goes
    <out>/episodes/      one episode folder per continuation attempt

The design is the paper's (PAPERS.md section 5, D.1): matched blocks (a unit) share the
restored state and differ only in the condition; the conditions of a unit run in a fixed
order that rotates from unit to unit (``interleaved``: a Latin-square rotation, so every
condition is played first equally often); an attempt that ends in an infrastructure failure
(the harness's ``infrastructure_error`` end, or a failure to start it) is kept, marked
"replaced", and the same assignment is played again, up to ``max_attempts``; the first valid
attempt is the primary one (``primary``). Agent stops, timeouts and non-completion are valid.

Resumable: run again on the same folder with the same schedule, every attempt units.jsonl
records is kept, an attempt cut off before its record (a folder without it) is played again
from scratch, a log line cut off by a kill is dropped.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path

from longpuzzle.agents.harness.settings import HarnessError

KIND, VERSION = "longpuzzle-study", 1
UNITS, STUDY, EPISODES = "units.jsonl", "study.json", "episodes"
INFRASTRUCTURE = "infrastructure_error"
MAX_ATTEMPTS = 3


class StudyError(HarnessError):
    """A study that cannot run or be read (one error line)."""


def require_step_agent(agent: str) -> None:
    """A continuation is played step by step (continue_episode asks the agent for each action);
    the VISTA / Code Execution tool agents drive their own episode through tools and cannot
    continue a restored state: one error line, before any work."""
    from longpuzzle.agents.registry import TOOL_AGENTS

    if agent in TOOL_AGENTS:
        raise StudyError(f"--agent {agent} drives its own episode through tools; a continuation asks its agent "
                         "step by step (use a model protocol: native, general_e2e, qwen, uitars)")


def interleaved(units: Sequence[dict], conditions_of: Callable[[dict], Sequence[str]]) -> list[dict]:
    """The fixed schedule: every unit (a dict with at least "unit") with its conditions in the
    order it plays them, unit i's conditions rotated left by i."""
    out = []
    for i, u in enumerate(units):
        conds = list(conditions_of(u))
        k = i % len(conds) if conds else 0
        out.append({**u, "order": conds[k:] + conds[:k]})
    return out


def attempt_folder(unit: str, condition: str, attempt: int) -> str:
    """The continuation's folder, relative to the study folder."""
    return f"{EPISODES}/{unit}-{condition}" + (f"-a{attempt}" if attempt > 1 else "")


def read_units(out: str | Path) -> list[dict]:
    """The records of units.jsonl (a line cut off by a kill is left out)."""
    p = Path(out) / UNITS
    recs = []
    if p.is_file():
        for line in p.read_text(encoding="utf-8").splitlines():
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if isinstance(rec, dict) and "folder" in rec:
                recs.append(rec)
    return recs


def run_units(out: str | Path, schedule: Sequence[dict], play: Callable[[dict, str, Path], None],
              endpoints: Callable[[dict, str, Path], dict], *, max_attempts: int = MAX_ATTEMPTS,
              log: Callable[[str], None] | None = None) -> list[dict]:
    """Play the schedule into ``out``: for each unit, each condition in its order, attempts
    until one is valid. ``play(unit, condition, folder)`` runs one continuation into the new
    episode folder; ``endpoints(unit, condition, folder)`` reads its endpoints from the folder
    (a dict with "end", how the episode ended). Returns every attempt's record. An assignment
    whose ``max_attempts`` attempts all failed on the infrastructure (e.g. a model endpoint that
    cannot be reached) stops the study with a StudyError: its tables would silently leave it
    out; the folder stays resumable."""
    out = Path(out)
    (out / EPISODES).mkdir(parents=True, exist_ok=True)
    logged = {r["folder"]: r for r in read_units(out)}
    tmp = out / (UNITS + ".tmp")                         # the log without what a kill cut off
    tmp.write_text("".join(json.dumps(r) + "\n" for r in logged.values()), encoding="utf-8")
    os.replace(tmp, out / UNITS)
    recs = []
    with open(out / UNITS, "a", encoding="utf-8") as f:
        for u in schedule:
            for pos, cond in enumerate(u["order"]):
                for attempt in range(1, max_attempts + 1):
                    rel = attempt_folder(u["unit"], cond, attempt)
                    rec = logged.get(rel)
                    if rec is None:
                        if (out / rel).exists():             # cut off before its record: again
                            shutil.rmtree(out / rel)
                        if log:
                            log(f"{u['unit']} {cond}" + (f" (attempt {attempt})" if attempt > 1 else ""))
                        error = ""
                        try:
                            play(u, cond, out / rel)
                        except Exception as e:  # noqa: BLE001 - it could not run: an infrastructure failure
                            error = f"{type(e).__name__}: {e}"
                        ends = {"end": INFRASTRUCTURE, "error": error} if error else endpoints(u, cond, out / rel)
                        rec = {"unit": u["unit"], "source": u.get("source"), "checkpoint": u.get("checkpoint"),
                               "condition": cond, "order": pos, "attempt": attempt,
                               "status": "replaced" if ends.get("end") == INFRASTRUCTURE else "valid",
                               "folder": rel, "endpoints": ends}
                        f.write(json.dumps(rec, ensure_ascii=False) + "\n")
                        f.flush()
                    recs.append(rec)
                    if rec["status"] == "valid":
                        break
                else:                    # no valid attempt: the study cannot be complete, so it stops here
                    why = rec["endpoints"].get("error") or "the harness's infrastructure_error end"
                    raise StudyError(f"{u['unit']} {cond}: all {max_attempts} attempts failed on the "
                                     f"infrastructure (the last: {why}); no study.json was written - fix the "
                                     f"cause and run the same command again on {out} to resume")
    return recs


def primary(units: Sequence[dict]) -> dict[tuple[str, str], dict]:
    """(unit, condition) -> its primary record: the first valid attempt in the fixed order."""
    out: dict[tuple[str, str], dict] = {}
    for r in sorted(units, key=lambda r: r["attempt"]):
        if r["status"] == "valid":
            out.setdefault((r["unit"], r["condition"]), r)
    return out


def document(experiment: str, *, catalog, agent, seed: int, draws: int, schedule, tables, figures=(),
             **extra) -> dict:
    """A study.json document."""
    return {"kind": KIND, "version": VERSION, "experiment": experiment, "catalog": catalog, "agent": agent,
            "seed": seed, "draws": draws, "schedule": list(schedule), "tables": list(tables),
            "figures": list(figures), **extra}


def write_study(out: str | Path, doc: dict) -> None:
    """study.json, written whole or not at all."""
    p = Path(out) / STUDY
    tmp = p.with_name(p.name + ".tmp")
    tmp.write_text(json.dumps(doc, indent=1, ensure_ascii=False, default=str) + "\n", encoding="utf-8")
    os.replace(tmp, p)


def load_study(folder: str | Path, experiment: str) -> tuple[dict, list[dict]]:
    """(study.json, units.jsonl records) of a study of this experiment, or StudyError."""
    folder = Path(folder)
    try:
        doc = json.loads((folder / STUDY).read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise StudyError(f"{folder}: no readable {STUDY} ({type(e).__name__})") from None
    if not isinstance(doc, dict) or doc.get("kind") != KIND or doc.get("experiment") != experiment:
        raise StudyError(f"{folder}: not a {experiment} study")
    return doc, read_units(folder)


def fresh_folder(out: str | Path) -> Path:
    """The study folder to write: new, empty, or a study of its own to resume (else StudyError,
    before anything is written)."""
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())) and not (out / UNITS).is_file():
        raise StudyError(f"{out} exists and is not a study folder (give a new or empty folder)")
    return out


def replay_problem(folder: str | Path, rel: str, catalog=None) -> str | None:
    """Why episode folder ``rel`` of study ``folder`` does not replay exactly (its first
    divergence, or why it cannot be read), or None when it does."""
    from longpuzzle.agents.harness.replay import replay_episode
    from longpuzzle.agents.harness.settings import HarnessError

    try:
        rep = replay_episode(Path(folder) / rel, catalog)
    except (HarnessError, OSError, ValueError) as e:
        return f"{rel}: does not replay ({e})"
    return None if rep.ok else f"{rel}: does not replay ({rep.divergence})"


def check_replays(folder: str | Path, units: Sequence[dict], endpoints: Callable[[dict, Path], dict],
                  catalog=None) -> list[str]:
    """Re-derive a study's units: every continuation folder replays exactly, and the endpoints
    its folder shows now are the recorded ones. Returns the problems (none: it re-derives)."""
    folder = Path(folder)
    problems = []
    for r in units:
        if r["status"] != "valid":
            continue
        ep = folder / r["folder"]
        bad = replay_problem(folder, r["folder"], catalog)
        if bad:
            problems.append(bad)
            continue
        now = json.loads(json.dumps(endpoints(r, ep)))
        if now != r["endpoints"]:
            diff = sorted(k for k in set(now) | set(r["endpoints"]) if now.get(k) != r["endpoints"].get(k))
            problems.append(f"{r['folder']}: endpoints differ from units.jsonl ({', '.join(diff)})")
    return problems


def print_tables(tables: Sequence[dict], echo=print) -> None:
    """The tables as aligned text (what the commands print)."""
    for t in tables:
        echo(f"\n{t['title']}")
        rows = [[str(c) for c in t["columns"]]] + [[str(c) for c in r] for r in t["rows"]]
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        for r in rows:
            echo("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
        if t.get("note"):
            echo(f"  ({t['note']})")
