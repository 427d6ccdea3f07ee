"""RQ1 over recorded runs: how agents lose a board (PAPERS.md section 5, 5.1 and D.2).

The trajectory facts come from agents/report/analytics.py (attempts, moves with the usable
holes and coverage around them, the LC deficit); this module pools them over the runs
given, adds the source-level bootstrap intervals of stats.py (a source is a level: the moves
of one level are not independent) and the agent's stated reasons, and lays them out as the
tables of a study folder (contract 3; ``diagnose branch analyze``):

    lc_deficit   1 - LC = (1 - R) + (R - LC), R the share of target levels reached, per game
                 and over the games (game-macro weighted, as the completion metrics)
    figure4b     Bolt Unscrew transfers binned by the usable free holes before them: how many
                 free a board, fill a hole, deadlock (the no-free-hole certificate after them),
                 the deadlock rate with its interval; and the first transfers of attempts that
                 started with one free hole
    bolt_retries per Bolt level: retries after a dead end that follow the previous attempt's
                 path to it, and the boards still attached at the dead ends
    maze_fifths  Maze Paint valid moves by the coverage fifth of the board before them: the
                 share that paints new cells and the share that returns to an exact earlier
                 state of the attempt, unsolved and solved attempts apart
    reasons      the Bolt transfers' stated reasons (the agent's own text, texts.py) coded by
                 the fixed expressions of REASONS: how many deadlocking moves the agent played
                 predicting a release

The coding of reasons is deliberately mechanical: an expression matches or not, case
insensitive, on the whole text that chose the move (English and Chinese, the paper's
interface language). The expressions are part of the method; changing them changes the
results, so they are listed in docs/guides/diagnostics.md.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from longpuzzle.agents.diagnose.stats import DRAWS, SEED, cluster_bootstrap
from longpuzzle.agents.diagnose.texts import step_texts
from longpuzzle.agents.report.analytics import (
    BOLT_OUTCOMES, COVERAGE_BINS, analyze_run, bolt_capacity, lc_deficit_split, maze_paint_bins,
)
from longpuzzle.agents.report.data import load_run

# what a stated reason says, one fixed expression each (matched anywhere, case insensitive)
REASONS: dict[str, re.Pattern] = {
    # the move is expected to release a piece: releasing / freeing / dropping / clearing /
    # unlocking a board (section 5.1: "mentions of releasing / freeing / dropping / clearing")
    "release": re.compile(
        r"\b(?:releas(?:e|es|ed|ing)|free(?:s|d|ing)?\s+(?:up\s+)?(?:the|a|an|this|that|it|one|board|plank|piece)"
        r"|drop(?:s|ped|ping)?|clear(?:s|ed|ing)?|unlock(?:s|ed|ing)?|detach(?:es|ed|ing)?"
        r"|fall(?:s|ing)?\s+(?:off|down|away)|fell\s+(?:off|down|away))\b"
        r"|释放|掉落|掉下|落下|清除|解锁|脱落|松开",
        re.IGNORECASE),
    # the text weighs the free holes (capacity): a free / empty / open hole or slot, holes left
    "capacity": re.compile(
        r"\b(?:free|empty|open|available|spare|remaining)\s+(?:holes?|slots?|spots?|spaces?)\b"
        r"|\bholes?\s+(?:left|remain)|空孔|空洞|空位|孔位|剩余.{0,4}孔",
        re.IGNORECASE),
}


def code_reasons(text: str | None) -> dict[str, bool]:
    """Which REASONS a text states (all False without text)."""
    return {k: bool(text) and bool(rx.search(text)) for k, rx in REASONS.items()}


def _interval(groups: dict, draws: int, seed: int) -> str:
    """'0.75 [0.50, 1.00]' for per-source 0/1 values (a rate), '' with no unit."""
    if not any(groups.values()):
        return ""
    return str(cluster_bootstrap(groups, draws=draws, seed=seed))


def _pct(k: int, n: int) -> str:
    return f"{k}/{n} ({100.0 * k / n:.0f}%)" if n else "0/0"


def refuse_other_catalogues(folders) -> None:
    """A HarnessError naming the first episode under ``folders`` recorded on a catalogue that is
    not available here with the same content (replay.recorded_catalog): the recorded runs of
    RQ1 are read against their catalogue's levels."""
    from longpuzzle.agents.harness.replay import recorded_catalog
    from longpuzzle.agents.harness.settings import HarnessError
    from longpuzzle.agents.harness.trajectory import read_header

    for f in folders:
        for ev in sorted(Path(f).rglob("events.jsonl")):
            try:
                recorded_catalog(read_header(ev.parent).get("catalog"))
            except HarnessError as e:
                raise HarnessError(f"{ev.parent}: {e}") from None


def load_runs(folders) -> list[tuple[Path, dict]]:
    """(folder, analyze_run of it) for every run or episode folder given (load_run: a run's
    summary.json or one episode's result.json; HarnessError when neither). Every episode must
    have been recorded on a catalogue available here with the same content (its levels are
    read from it): one of another catalogue is a HarnessError, before anything is analysed."""
    refuse_other_catalogues(folders)
    return [(Path(f), analyze_run(load_run(f))) for f in folders]


def rq1_analysis(folders, *, draws: int = DRAWS, seed: int = SEED) -> dict:
    """Every RQ1 analysis over the runs (or episode folders) given: {"tables": [...] in the
    study convention, "data": the numbers behind them}."""
    runs = load_runs(folders)
    attempts, by_obj, texts = [], {}, {}
    for folder, a in runs:
        for e in a["episodes"]:
            ep_dir = Path(e["episode"]) if Path(e["episode"]).is_absolute() else folder / e["episode"]
            txt = step_texts(ep_dir) if ep_dir.is_dir() else {}
            for at in e["attempts"]:
                at = dict(at, episode=str(ep_dir))
                attempts.append(at)
            texts[str(ep_dir)] = txt
        for o, d in a["lc_deficit"].items():
            by_obj.setdefault(o, []).append(d)
    # objectives seen in several runs: each run's mean weighs the same
    means = {o: {k: sum(d[k] for d in v) / len(v) for k in v[0]} for o, v in by_obj.items()}
    split = lc_deficit_split(means)
    bolt = bolt_capacity(attempts)
    for m in bolt["moves"]:              # the stated reason: the text that chose the move's step
        text = texts.get(m["episode"], {}).get(m["step"])
        m["text"] = text is not None
        m.update(code_reasons(text))
    maze = maze_paint_bins(attempts)
    maze_groups = _maze_groups(attempts)
    retries = bolt_retries(attempts)
    tables = [_lc_table(split), _bolt_table(bolt, draws, seed), _retries_table(retries),
              _maze_table(maze, maze_groups, draws, seed), _reasons_table(bolt, draws, seed)]
    return {"tables": [t for t in tables if t is not None],
            "data": {"runs": [str(f) for f, _ in runs], "lc_deficit_split": split,
                     "figure4b": {k: v for k, v in bolt.items() if k != "moves"}, "bolt_moves": bolt["moves"],
                     "bolt_retries": retries, "maze_paint": maze}}


def _path(attempt: dict, until: int | None) -> list[str]:
    """The transfers (moves that changed the board) of an attempt, up to action ``until``."""
    return [m["move"] for m in attempt["move_log"] if m.get("changed") and (until is None or m["step"] <= until)]


def _boards_at(episode: str, step: int, level: str, cache: dict) -> tuple[int, int] | None:
    """(boards still attached, boards) on the Bolt Unscrew board after recorded action
    ``step`` of an episode (its exact state from the recording), None where not readable."""
    import numpy as np

    from longpuzzle.agents.report.data import episode_catalog, load_trajectory
    from longpuzzle.engine.catalog import load_level
    from longpuzzle.engine.registry import get_puzzle

    if episode not in cache:
        traj = load_trajectory(episode)
        cache[episode] = (traj, {st.step: st.snapshot for st in traj.steps})
    traj, snaps = cache[episode]
    from longpuzzle.agents.report.data import snapshot_state

    state = snapshot_state(snaps.get(step))
    if state is None:
        return None
    lvl = load_level(level, episode_catalog(traj.header))
    poses = get_puzzle(lvl.game).piece_poses(lvl, np.array(state, dtype=lvl.initial.dtype))
    return sum(p["status"] == "attached" for p in poses), len(poses)


def bolt_retries(attempts: list[dict]) -> list[dict]:
    """Section 5.1's retries on a Bolt Unscrew level, per level: the attempts, those that
    reached the no-free-hole certificate, the retries after such an attempt (the next attempt
    of the same level in the same episode, unless the episode's end cut it short first) and how many of them follow the SAME PATH (their
    first transfers are exactly the previous attempt's transfers up to its dead end), and the
    boards still attached when each attempt dead-ended (the paper, Hard 1: the same path in
    10/12 retries; 20 of 24 boards still attached)."""
    cache: dict = {}
    rows: dict[str, dict] = {}
    by_ep: dict[tuple, list[dict]] = {}
    for a in attempts:
        if a["level"].startswith("bolt_unscrew/"):
            by_ep.setdefault((a.get("episode"), a["level"]), []).append(a)
    for (ep, level), ats in sorted(by_ep.items(), key=lambda kv: (kv[0][1], str(kv[0][0]))):
        r = rows.setdefault(level, {"level": level, "attempts": 0, "dead_ends": 0, "retries": 0, "same_path": 0,
                                    "attached": []})
        ats = sorted(ats, key=lambda a: a["number"])
        for prev, a in zip([None] + ats[:-1], ats):
            r["attempts"] += 1
            step = a.get("no_free_hole_step")
            if step is not None:
                r["dead_ends"] += 1
                if ep is not None:
                    got = _boards_at(ep, step, level, cache)
                    if got is not None:
                        r["attached"].append(list(got))
            # a retry after a dead end; one the episode's end cut short before its own dead end
            # (or other ending) cannot show its path and is left out
            if prev is not None and prev.get("no_free_hole_step") is not None \
                    and (a["end"] != "end" or step is not None):
                r["retries"] += 1
                before = _path(prev, prev["no_free_hole_step"])
                r["same_path"] += bool(before) and _path(a, None)[:len(before)] == before
    return [rows[k] for k in sorted(rows)]


def _retries_table(retries: list[dict]) -> dict | None:
    if not any(r["dead_ends"] for r in retries):
        return None
    rows = []
    for r in retries:
        att = r["attached"]
        rows.append([r["level"], r["attempts"], r["dead_ends"], f"{r['same_path']}/{r['retries']}",
                     f"{sum(a for a, _ in att)}/{sum(n for _, n in att)}" if att else ""])
    return {"id": "bolt_retries", "title": "Bolt Unscrew retries: the same path to the same dead end",
            "columns": ["level", "attempts", "dead ends (no free hole)", "retries on the previous path",
                        "boards still attached at the dead ends"],
            "rows": rows,
            "note": "A retry is the next attempt of a level after one that dead-ended; it follows the same path "
                    "when its first transfers are exactly the previous attempt's transfers up to its dead end."}


def _lc_table(split: dict) -> dict | None:
    if not split["by_game"]:
        return None

    def row(name, d, n):
        share = "" if d["unreached_share"] is None else f"{d['unreached_share']:.1f}"
        return [name, n, round(d["LC"], 1), round(d["R"], 1), round(d["deficit"], 1), round(d["unreached"], 1),
                round(d["reached_unsolved"], 1), share]
    rows = [row(g, d, d["objectives"]) for g, d in sorted(split["by_game"].items())]
    o = split["overall"]
    rows.append(row("all games (game-macro)", o, sum(d["objectives"] for d in split["by_game"].values())))
    return {"id": "lc_deficit", "title": "LC deficit split: 100 - LC = (100 - R) + (R - LC)",
            "columns": ["game", "objectives", "LC", "R", "100 - LC", "100 - R (never reached)",
                        "R - LC (reached, unsolved)", "never reached, % of deficit"],
            "rows": rows,
            "note": "Percent of target levels; each objective's mean over its episodes, averaged equally over "
                    "each game's objectives, then over the games (section 5.1)."}


def _bolt_table(bolt: dict, draws: int, seed: int) -> dict | None:
    moves = bolt["moves"]
    if not moves:
        return None
    rows = []
    for b in bolt["by_holes_before"]:
        sel = [m for m in moves if m["holes_before"] == b["holes_before"]]
        groups: dict = {}
        for m in sel:
            groups.setdefault(m["level"], []).append(int(m["deadlocks"]))
        rows.append([b["holes_before"], b["moves"], *(b[k] for k in BOLT_OUTCOMES), _interval(groups, draws, seed)])
    first = [m for m in moves if m["first"] and m["holes_before"] == 1]
    groups = {}
    for m in first:
        groups.setdefault(m["level"], []).append(int(m["deadlocks"]))
    rows.append(["1 (first move of an attempt)", len(first), sum(m["frees"] for m in first),
                 sum(m["fills"] for m in first), sum(m["deadlocks"] for m in first), _interval(groups, draws, seed)])
    return {"id": "figure4b", "title": "Bolt Unscrew moves by free holes before the move (Figure 4b)",
            "columns": ["free holes before", "moves", "frees a board", "fills a hole", "deadlocks",
                        "deadlock rate [95% CI]"],
            "rows": rows,
            "note": "A move frees a board when progress rises, fills a hole when the usable free holes drop "
                    "without a board freed, deadlocks when the board after it carries the no-free-hole "
                    f"certificate (not exclusive). Intervals: bootstrap over source levels ({draws:,} draws, "
                    f"seed {seed})."}


def _maze_groups(attempts: list[dict]) -> dict:
    """(kind, bin) -> {level: [(new_cells, revisit) per valid move]} for the intervals."""
    from longpuzzle.agents.report.analytics import coverage_bin

    out: dict = {}
    for at in attempts:
        if not at["level"].startswith("maze_paint/"):
            continue
        kind = "solved" if at["end"] == "won" else "unsolved"
        for m in at["move_log"]:
            if "new_cells" not in m:
                continue
            i = coverage_bin(m["P_before"])
            if i is not None:
                out.setdefault((kind, i), {}).setdefault(at["level"], []).append((m["new_cells"], m["revisit"]))
    return out


def _maze_table(maze: dict, groups: dict, draws: int, seed: int) -> dict | None:
    if not any(r["valid_moves"] for r in maze["all"]):
        return None
    rows = []
    for kind in ("unsolved", "solved"):
        for i, r in enumerate(maze[kind]):
            if not r["valid_moves"]:
                continue
            g = groups.get((kind, i), {})
            new = {lv: [int(a) for a, _ in v] for lv, v in g.items()}
            rev = {lv: [int(b) for _, b in v] for lv, v in g.items()}
            lo, hi = r["coverage"]
            rows.append([kind, f"{lo:.0%}-{hi:.0%}", r["valid_moves"], _pct(r["new_cell_moves"], r["valid_moves"]),
                         _interval(new, draws, seed), _pct(r["revisit_moves"], r["valid_moves"]),
                         _interval(rev, draws, seed)])
    return {"id": "maze_fifths", "title": "Maze Paint valid moves by coverage fifth (new paint vs exact revisit)",
            "columns": ["attempts", "coverage before the move", "valid moves", "paint new cells", "[95% CI]",
                        "return to an exact earlier state", "[95% CI]"],
            "rows": rows,
            "note": f"Coverage bins {', '.join(f'{b:.1f}' for b in COVERAGE_BINS)} (the last closed); a valid "
                    "move is an accepted swipe that moved the ball. Intervals: bootstrap over source levels "
                    f"({draws:,} draws, seed {seed})."}


def _reasons_table(bolt: dict, draws: int, seed: int) -> dict | None:
    moves = bolt["moves"]
    if not moves:
        return None
    rows = []
    for name, sel in (("deadlocking moves", [m for m in moves if m["deadlocks"]]),
                      ("other moves", [m for m in moves if not m["deadlocks"]])):
        with_text = [m for m in sel if m["text"]]
        row = [name, len(sel), len(with_text)]
        for k in REASONS:
            groups: dict = {}
            for m in with_text:
                groups.setdefault(m["level"], []).append(int(m[k]))
            row += [_pct(sum(m[k] for m in with_text), len(with_text)), _interval(groups, draws, seed)]
        rows.append(row)
    cols = ["Bolt Unscrew moves", "moves", "with the agent's text"]
    for k in REASONS:
        cols += [f"states '{k}'", "[95% CI]"]
    return {"id": "reasons", "title": "Stated reasons of Bolt Unscrew moves (coded by fixed expressions)",
            "columns": cols, "rows": rows,
            "note": "The text that chose each move (a model agent's conversation.jsonl) matched against the fixed "
                    "expressions of agents/diagnose/rq1.py REASONS (release: releasing / freeing / dropping / "
                    "clearing a piece; capacity: free holes). Shares over the moves with text."}


def write_rq1_study(folders, out: str | Path, *, draws: int = DRAWS, seed: int = SEED) -> dict:
    """The analyses as a study folder of the lab's convention (experiment "rq1"): study.json
    with the tables and Figure 4b (figures/figure4b.png), ``rq1.json`` with the numbers behind
    them, an empty units.jsonl (no continuation is run). Computed first, then written, so a
    bad input leaves nothing behind; study.json last and atomically."""
    from longpuzzle.agents.diagnose import study
    from longpuzzle.agents.report.figures import figure_4b
    from longpuzzle.engine.catalog import builtin_catalog

    res = rq1_analysis(folders, draws=draws, seed=seed)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    figures = []
    if figure_4b(res["data"]["figure4b"], out / "figures" / "figure4b.png") is not None:
        figures.append({"id": "figure4b", "title": "Figure 4b: Bolt Unscrew moves by free holes before the move",
                        "png": "figures/figure4b.png"})
    tmp = out / "rq1.json.tmp"
    tmp.write_text(json.dumps(res["data"], indent=1, ensure_ascii=False, default=str) + "\n", encoding="utf-8")
    os.replace(tmp, out / "rq1.json")
    (out / study.UNITS).touch()
    doc = study.document("rq1", catalog=builtin_catalog().identity(), agent="", seed=seed, draws=draws, schedule=[],
                         tables=res["tables"], figures=figures, runs=res["data"]["runs"])
    study.write_study(out, doc)
    return doc
