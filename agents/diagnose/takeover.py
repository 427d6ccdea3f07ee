"""RQ2, the certified dead-end takeover (PAPERS.md section 5.2, D.3): ``diagnose takeover``.

An agent takes over at fixed checkpoints (checkpoints.py: certified dead ends D and solvable
controls N) under a condition, and plays on from the exact restored state:

    A  no message
    B  the state message: on a dead end "State information: The current puzzle state cannot
       be completed through normal forward play. Recovery is required before progress can
       continue."; on a control "State information: The current puzzle state remains
       solvable through normal forward play."
    C  (dead ends) the B text, then "Recovery information: Use the visible button labelled
       Restart to restart the current level." - the label is the screen's own (the game's
       labels: "重玩" on the Chinese interface)

The text enters the instruction at takeover (continue_episode's ``note``: the instruction the
agent is given, so it stays in context after a restart). Its language is the checkpoint's
screen language unless ``text_lang`` says otherwise (the paper's English texts; our Chinese
for the Chinese interface, with the same meaning).

Endpoints of a continuation (``endpoints``; read from its episode folder, so a study
re-derives from its folders), times on the charged clock from the takeover (per action: the
agent's time when charged, the dispatch, the simulated time, the per-action latency):
    timely restart      a recovery action within the first 10 actions and 120 s
    verified recovery   a ready, non-deadlocked board on the original level (on screen, after
                        a recovery action, the evaluator's certificate "solvable" or the
                        level's own start, which the catalogue's levels are solvable from)
                        within 300 s; a recovery action is the screen's Restart / Replay, or the level
                        entered again at its start (through the menu)
    same-level win      the evaluator observed the original level won within 300 s
    ceiling             the continuation reached 600 actions
    recurrence          after a verified recovery, the first later dead end (certificate
                        "dead_end") on the original level: its time after the recovery and the
                        moves the game accepted since it (the board's move count)
    attribution         the agent's own text (texts.step_texts: a model's conversation.jsonl,
                        the paper-like scripted agents' too) from the takeover up to its
                        recovery action (or the end), coded by the fixed regular expressions
                        BLAMES_CLICK ("blames the click": a missed, unregistered or imprecise
                        click, a click to repeat) and NAMES_STATE (the board's state: cannot
                        be completed, unsolvable, dead end, deadlock, no free hole, stuck,
                        lost); case-insensitive, English and Chinese

Tables (the paper's layouts): table13 - per checkpoint kind and condition, the counts of each
endpoint and the recurrences with their median time and actions; paired - the A -> B and
B -> C effects on the same checkpoints (units improved, paired effect with its source-level
bootstrap interval); table15 - per game, verified recovery (dead ends) and restarts
(controls) per condition with intervals, and same-level completions after any dead-end
takeover. Intervals: stats.py, 10,000 draws, seed 0 by default.
"""

from __future__ import annotations

import json
import re
import statistics
from pathlib import Path

import click

from longpuzzle.agents.agent_options import agent_options, build_agent
from longpuzzle.agents.diagnose import study as sr
from longpuzzle.agents.diagnose.stats import DRAWS, SEED, Count, cluster_bootstrap, paired_effect
from longpuzzle.agents.diagnose.texts import step_texts
from longpuzzle.agents.harness.replay import read_events
from longpuzzle.agents.harness.settings import HarnessError, Settings

EXPERIMENT = "takeover"
CONDITIONS = {"dead_end": ("A", "B", "C"), "control": ("A", "B")}
ALL_CONDITIONS = ("A", "B", "C")

TIMELY_ACTIONS, TIMELY_SECONDS = 10, 120.0
WINDOW_SECONDS = 300.0               # verified recovery, same-level win
CEILING = 600                        # actions per continuation
BUDGET = WINDOW_SECONDS              # the continuation's charged budget (nothing counts after 300 s)

# the paper's texts (D.3), and ours in Chinese for the Chinese interface; {Restart}: the label
# of the screen's restart button in the screen's language
TEXTS = {
    ("dead_end", "B"): {
        "en": "State information: The current puzzle state cannot be completed through normal forward play. "
              "Recovery is required before progress can continue.",
        "zh": "状态信息：当前谜题状态无法通过正常的向前操作完成。需要恢复后才能继续推进。"},
    ("control", "B"): {
        "en": "State information: The current puzzle state remains solvable through normal forward play.",
        "zh": "状态信息：当前谜题状态仍然可以通过正常的向前操作完成。"},
    "recovery": {
        "en": "Recovery information: Use the visible button labelled {Restart} to restart the current level.",
        "zh": "恢复信息：使用界面上标有“{Restart}”的按钮重新开始当前关卡。"},
}

# the attribution coding (fixed; documented in docs/guides/diagnostics.md)
BLAMES_CLICK = re.compile(
    r"mis-?click|missed (?:the )?(?:click|tap|target|screw|spot)|did(?:n't| not) (?:register|land|take effect)"
    r"|(?:was|were)(?:n't| not) (?:registered|detected|recogni[sz]ed)|not (?:registered|detected)"
    r"|inaccurate (?:click|tap)|imprecise|more precisely|click(?:ed)? (?:slightly )?off|(?:click|tap) (?:it )?again"
    r"|retry (?:the )?(?:click|tap)|点击(?:没有|未)(?:生效|成功|响应|注册)|没(?:有)?点(?:中|到)|点偏|误触|重新点击",
    re.IGNORECASE)
NAMES_STATE = re.compile(
    r"cannot be completed|can't be completed|unsolvable|not solvable|dead[- ]?end|deadlock|no (?:free|empty|usable) "
    r"holes?|\bstuck\b|board is lost|无法(?:.{0,12})完成|死局|没有(?:可用的)?空孔",
    re.IGNORECASE)


class TakeoverError(HarnessError):
    """Bad input of a takeover study (one error line)."""


# ---- conditions -------------------------------------------------------------------------------

def restart_label(game: str, lang: str) -> str:
    """The label of the screen's restart button in ``lang`` (the game's own labels)."""
    from longpuzzle.engine.labels import screen_text

    return screen_text("Restart", lang, game)


def condition_text(kind: str, condition: str, game: str, lang: str = "en") -> str:
    """The text condition ``condition`` adds at takeover on a checkpoint of ``kind`` ("" for A)."""
    if condition not in CONDITIONS.get(kind, ()):
        raise TakeoverError(f"condition {condition!r} is not one of {', '.join(CONDITIONS.get(kind, ()))} "
                            f"on {kind.replace('_', ' ')} checkpoints")
    if condition == "A":
        return ""
    text = TEXTS[(kind, "B")][lang]
    if condition == "C":
        text += "\n" + TEXTS["recovery"][lang].format(Restart=restart_label(game, lang))
    return text


def parse_conditions(spec: str | None) -> tuple[str, ...]:
    """The conditions asked for ("A,B,C"; None: all), or TakeoverError."""
    if not spec:
        return ALL_CONDITIONS
    got = tuple(c.strip().upper() for c in spec.split(",") if c.strip())
    bad = [c for c in got if c not in ALL_CONDITIONS]
    if bad or not got:
        raise TakeoverError(f"unknown condition {', '.join(bad) or spec!r}: the conditions are A (no message), "
                            "B (state message), C (state and restart messages)")
    return tuple(c for c in ALL_CONDITIONS if c in got)


# ---- the takeover ------------------------------------------------------------------------------

def public_prefix(folder: str | Path, step: int) -> list[dict]:
    """The public actions dispatched up to recorded step ``step`` of an episode, from the objective's
    start (a continuation's own prefix begins with its source's): what the agent taking over
    is told it did (D.1), and what the paper-like scripted agents replay on their app model."""
    lines = read_events(folder)
    out = []
    src = lines[0].get("continued_from")
    if src:
        out = public_prefix(Path(folder) / src["folder"], src["step"])
    for r in lines[1:]:
        executed = (r.get("feedback") or {}).get("executed", True)      # a refused action never ran
        if r.get("stream") == "public" and "action" in r and r["step"] <= step and executed:
            out.append(r["action"])
    return out


def continuation_settings(cp, budget: float = BUDGET, max_actions: int = CEILING, harness: str | None = None
                          ) -> Settings:
    """The checkpoint episode's own settings (screen, language, clock rules) with the
    continuation's limits, under ``harness`` (presets.HARNESSES: d1 charges 2 s per action; the
    screen stays the checkpoint's)."""
    from longpuzzle.agents.harness.presets import harness_settings

    head = read_events(cp.episode_dir)[0]
    given = {k: v for k, v in head["settings"].items() if k in Settings.__dataclass_fields__}
    return harness_settings(harness, Settings(**{**given, "budget": budget, "max_actions": max_actions}),
                            keep_screen=True)


def screen_lang(cp) -> str:
    return read_events(cp.episode_dir)[0]["settings"].get("lang") or "en"


# ---- endpoints ---------------------------------------------------------------------------------

def _steps(folder: Path) -> tuple[dict, list[dict]]:
    """(header, per executed step: {"step", "t" (charged seconds after it), "record", "status"})."""
    lines = read_events(folder)
    head = lines[0]
    st = head.get("settings") or {}
    charge_agent = st.get("charge_agent_time", True)
    latency = float(st.get("action_latency") or 0.0)
    pub, out, t = {}, [], 0.0
    for r in lines[1:]:
        if r.get("stream") == "public" and "action" in r:
            pub[r["step"]] = r
        elif r.get("stream") == "private" and r["step"] in pub:
            p = pub.pop(r["step"])
            t += (float(p.get("t_agent") or 0.0) if charge_agent else 0.0) + float(p.get("t_dispatch") or 0.0) \
                + float(p.get("sim_ms") or 0) / 1000.0 + (latency if (p.get("feedback") or {}).get("executed") else 0)
            out.append({"step": r["step"], "t": t, "record": r.get("record") or {},
                        "status": (p.get("feedback") or {}).get("status")})
    return head, out


def endpoints(folder: str | Path, level: str, kind: str) -> dict:
    """The endpoints of one continuation (see the module's doc), from its episode folder."""
    folder = Path(folder)
    head, steps = _steps(folder)
    res = {}
    if (folder / "result.json").is_file():
        res = json.loads((folder / "result.json").read_text(encoding="utf-8"))
    on_level = f"level:{level}"
    recovery = recovered = win = recur = None
    was_here = True                       # the takeover's board is on screen
    for s in steps:
        rec = s["record"]
        here = rec.get("screen") == on_level and rec.get("level") == level
        fresh = here and rec.get("moves") == 0 and rec.get("certificate") != "dead_end"
        # a recovery action: the screen's Restart / Replay, or the level entered again at its start
        restarted = any(e.get("effect") == "restart" for e in rec.get("effects") or [])
        if recovery is None and fresh and (restarted or not was_here):
            recovery = s
        was_here = here
        # verified: not deadlocked by the evaluator's certificate ("solvable"), or the level's own
        # start (a catalogue level's start is solvable; the certificate may be "unknown" past its
        # search budget there, e.g. on large Nut and Bolt boards)
        solvable = rec.get("certificate") == "solvable" or (rec.get("moves") == 0 and rec.get("certificate") != "dead_end")
        if recovery is not None and recovered is None and here and solvable and s["t"] <= WINDOW_SECONDS:
            recovered = s
        if win is None and rec.get("level") == level and rec.get("win"):
            win = s
        if recovered is not None and recur is None and s["step"] > recovered["step"] and here \
                and rec.get("certificate") == "dead_end":
            recur = s
    texts = step_texts(folder)
    # the text while it plays the board it took over: up to its recovery action or its win
    ends_at = [x["step"] for x in (recovery, win) if x is not None]
    upto = min(ends_at) if ends_at else None
    said = "\n".join(v for k, v in sorted(texts.items()) if upto is None or k <= upto)
    r2 = lambda v: None if v is None else round(v, 3)      # noqa: E731 - seconds as the tables show them
    return {
        "kind": kind, "level": level,
        "end": res.get("end") or "unfinished",
        "actions": len(steps),
        "restart_action": None if recovery is None else recovery["step"],
        "restart_seconds": None if recovery is None else r2(recovery["t"]),
        "timely_restart": recovery is not None and recovery["step"] <= TIMELY_ACTIONS
        and recovery["t"] <= TIMELY_SECONDS,
        "verified_recovery": recovered is not None,
        "recovery_seconds": None if recovered is None else r2(recovered["t"]),
        "win": win is not None and win["t"] <= WINDOW_SECONDS,
        "win_seconds": None if win is None else r2(win["t"]),
        "ceiling": len(steps) >= int((head.get("settings") or {}).get("max_actions") or CEILING),
        "recurrence": recur is not None,
        "recurrence_seconds": None if recur is None else r2(recur["t"] - recovered["t"]),
        "recurrence_actions": None if recur is None else int(recur["record"].get("moves") or 0),
        "text": bool(texts),
        "blames_click": bool(BLAMES_CLICK.search(said)),
        "names_state": bool(NAMES_STATE.search(said)),
    }


# ---- tables ------------------------------------------------------------------------------------

ENDPOINTS = (("timely_restart", "timely restart"), ("verified_recovery", "verified recovery"),
             ("win", "same-level win"), ("blames_click", "blames the click"))


def _median(v: list, digits: int = 1) -> str:
    return "-" if not v else f"{statistics.median(v):.{digits}f}"


def tables(schedule: list[dict], units: list[dict], *, draws: int = DRAWS, seed: int = SEED,
           max_actions: int = CEILING) -> list[dict]:
    """Table 13, the paired effects and Table 15, from the primary continuations."""
    prim = sr.primary(units)
    meta = {u["unit"]: u for u in schedule}
    cell: dict[tuple[str, str], list[tuple[dict, dict]]] = {}
    for (unit, cond), r in sorted(prim.items()):
        u = meta[unit]
        cell.setdefault((u["kind"], cond), []).append((u, r["endpoints"]))
    rows13 = []
    for kind in ("dead_end", "control"):
        for cond in CONDITIONS[kind]:
            got = cell.get((kind, cond))
            if not got:
                continue
            e = [x for _, x in got]
            n = len(e)
            rec = [x for x in e if x["recurrence"]]
            recovered = [x for x in e if x["verified_recovery"]]
            rows13.append([
                "D" if kind == "dead_end" else "N", cond, n,
                str(Count(sum(x["timely_restart"] for x in e), n)),
                str(Count(len(recovered), n)) if kind == "dead_end" else "-",
                str(Count(sum(x["win"] for x in e), n)),
                str(Count(sum(x["blames_click"] for x in e), n)) if any(x["text"] for x in e) else "-",
                str(Count(len(rec), len(recovered))) if kind == "dead_end" else "-",
                _median([x["recurrence_seconds"] for x in rec]) if kind == "dead_end" else "-",
                _median([x["recurrence_actions"] for x in rec], 0) if kind == "dead_end" else "-",
            ])
    t13 = {"id": "table13", "title": "Table 13: certified dead-end takeover (D: dead ends, N: solvable controls)",
           "columns": ["set", "condition", "n", "timely restart", "verified recovery", "same-level win",
                       "blames the click", "new dead end after recovery", "median s after recovery",
                       "median actions after recovery"],
           "rows": rows13,
           "note": f"Timely restart: a recovery action within {TIMELY_ACTIONS} actions and {TIMELY_SECONDS:g} s; "
                   f"verified recovery and win within {WINDOW_SECONDS:g} s; {max_actions}-action ceiling; primary "
                   "continuations (the first valid attempt of each assignment)."}
    paired_rows = []
    for kind, a, b in (("dead_end", "A", "B"), ("dead_end", "B", "C"), ("control", "A", "B")):
        by_unit = {u["unit"]: (u, x) for u, x in cell.get((kind, a), [])}
        pairs = [(u, by_unit[u["unit"]][1], y) for u, y in cell.get((kind, b), []) if u["unit"] in by_unit]
        if not pairs:
            continue
        for key, name in ENDPOINTS:
            if key == "verified_recovery" and kind == "control":
                continue
            if key == "blames_click" and not any(x["text"] or y["text"] for _, x, y in pairs):
                continue
            groups: dict[str, list] = {}
            for u, x, y in pairs:
                groups.setdefault(u["source"], []).append((int(x[key]), int(y[key])))
            better = sum(int(y[key]) > int(x[key]) for _, x, y in pairs)
            worse = sum(int(y[key]) < int(x[key]) for _, x, y in pairs)
            eff = paired_effect(groups, draws=draws, seed=seed)
            paired_rows.append(["D" if kind == "dead_end" else "N", f"{a} -> {b}", name, len(pairs),
                                f"{better}/{len(pairs)}", f"{worse}/{len(pairs)}", str(eff)])
    tp = {"id": "paired", "title": "Paired effects on the same checkpoints",
          "columns": ["set", "contrast", "endpoint", "pairs", "second higher", "second lower", "effect [95% CI]"],
          "rows": paired_rows,
          "note": f"Effect: mean of (second - first) per checkpoint; bootstrap over source levels ({draws:,} draws, "
                  f"seed {seed})."}
    rows15 = []
    games = sorted({u["level"].split("/")[0] for u in schedule})
    measures = (("dead_end", "D verified recovery", lambda x: x["verified_recovery"]),
                ("control", "N restarts (any)", lambda x: x["restart_action"] is not None),
                ("dead_end", "D same-level win", lambda x: x["win"]))
    for game in games:
        for kind, name, value in measures:
            row = [game, name]
            for cond in ALL_CONDITIONS:
                got = [(u, x) for u, x in cell.get((kind, cond), []) if u["level"].startswith(game + "/")]
                if not got:
                    row.append("-")
                    continue
                groups: dict[str, list] = {}
                for u, x in got:
                    groups.setdefault(u["source"], []).append(int(value(x)))
                k = sum(int(value(x)) for _, x in got)
                row.append(f"{Count(k, len(got))} {cluster_bootstrap(groups, draws=draws, seed=seed)}")
            if any(c != "-" for c in row[2:]):
                rows15.append(row)
    dead = [x for cond in CONDITIONS["dead_end"] for _, x in cell.get(("dead_end", cond), [])]
    t15 = {"id": "table15", "title": "Table 15: per game, pooled over checkpoints",
           "columns": ["game", "endpoint", "A", "B", "C"], "rows": rows15,
           "note": f"k/n and rate [95% CI], bootstrap over source levels ({draws:,} draws, seed {seed}); same-level "
                   f"completions after any dead-end takeover: {Count(sum(x['win'] for x in dead), len(dead))}."}
    return [t13, tp, t15]


# ---- the study ---------------------------------------------------------------------------------

def study_schedule(checkpoints: list, conditions=ALL_CONDITIONS, repeats: int = 1, multi: bool = False) -> list[dict]:
    """The units (checkpoint x repeat) with their conditions in the fixed interleaved order."""
    units = []
    for r in range(1, repeats + 1):
        for folder_i, cp in checkpoints:
            uid = (f"c{folder_i + 1}" if multi else "") + cp.id + (f"r{r}" if repeats > 1 else "")
            units.append({"unit": uid, "checkpoint": cp.id, "checkpoints": folder_i, "source": cp.source,
                          "level": cp.level, "objective": cp.objective, "kind": cp.kind, "repeat": r})
    sched = sr.interleaved(units, lambda u: [c for c in CONDITIONS[u["kind"]] if c in conditions])
    return [u for u in sched if u["order"]]


def run_study(checkpoint_dirs: list, make_agent, out: str | Path, *, conditions=ALL_CONDITIONS, repeats: int = 1,
              budget: float = BUDGET, max_actions: int = CEILING, text_lang: str | None = None, agent="",
              harness: str | None = None, draws: int = DRAWS, seed: int = SEED, catalog=None, log=None) -> dict:
    """The takeover study: every checkpoint of ``checkpoint_dirs`` (validated first:
    load_checkpoints) under each of its conditions, ``make_agent(objective, folder, prefix=)``
    a fresh agent for each continuation (agent_options.AgentChoice.make), written to the study
    folder ``out`` (study.py). Returns study.json's document."""
    from longpuzzle.agents.diagnose.checkpoints import load_checkpoints

    out = sr.fresh_folder(out)
    conditions = tuple(conditions)
    folders = [Path(d) for d in checkpoint_dirs]
    if not folders:
        raise TakeoverError("give the checkpoints folder(s) to take over from (--checkpoints DIR)")
    cps = [(i, cp) for i, d in enumerate(folders) for cp in load_checkpoints(d, catalog)]
    sched = study_schedule(cps, conditions, repeats, multi=len(folders) > 1)
    if not sched:
        raise TakeoverError(f"no checkpoint takes conditions {', '.join(conditions)}")
    cp_of = {(i, cp.id): cp for i, cp in cps}
    by_unit = {u["unit"]: cp_of[(u["checkpoints"], u["checkpoint"])] for u in sched}
    def play(u: dict, cond: str, folder: Path) -> None:
        cp = by_unit[u["unit"]]
        lang = text_lang or screen_lang(cp)
        note = condition_text(cp.kind, cond, cp.level.split("/")[0], lang)
        agent_ = make_agent(cp.objective, folder, prefix=public_prefix(cp.episode_dir, cp.step))
        cp.continue_with(agent_, note=note, out=folder, settings=continuation_settings(cp, budget, max_actions, harness),
                         stop_when={"won": [cp.level]})      # after the same-level win no endpoint can change

    units = sr.run_units(out, sched, play, lambda u, c, f: endpoints(f, u["level"], u["kind"]), log=log)
    doc = _document(sched, units, agent, draws, seed, folders, out, conditions, budget, max_actions, cps, text_lang)
    doc["harness"] = harness or "default"
    sr.write_study(out, doc)
    return doc


def _document(sched, units, agent, draws, seed, folders, out, conditions, budget, max_actions, cps, text_lang):
    import os

    cat = cps[0][1].catalog.identity() if cps and cps[0][1].catalog is not None else None
    langs = sorted({text_lang or screen_lang(cp) for _, cp in cps})
    return sr.document(
        EXPERIMENT, catalog=cat, agent=agent, seed=seed, draws=draws, schedule=sched,
        tables=tables(sched, units, draws=draws, seed=seed, max_actions=max_actions),
        checkpoints=[os.path.relpath(f.resolve(), Path(out).resolve()) for f in folders],
        conditions=list(conditions),
        texts={f"{k}/{c}/{lang}": condition_text(k, c, cp.level.split("/")[0], lang)
               for _, cp in cps for k in (cp.kind,) for c in CONDITIONS[k] if c in conditions for lang in langs},
        limits={"budget": budget, "max_actions": max_actions, "timely_actions": TIMELY_ACTIONS,
                "timely_seconds": TIMELY_SECONDS, "window_seconds": WINDOW_SECONDS},
        coding={"blames_click": BLAMES_CLICK.pattern, "names_state": NAMES_STATE.pattern})


def check_study(folder: str | Path) -> tuple[bool, list[str]]:
    """Re-derive a takeover study: every continuation replays, its endpoints are the recorded
    ones, and the tables computed again are study.json's."""
    doc, units = sr.load_study(folder, EXPERIMENT)
    meta = {u["unit"]: u for u in doc["schedule"]}
    problems = sr.check_replays(folder, units, lambda r, ep: endpoints(ep, meta[r["unit"]]["level"],
                                                                      meta[r["unit"]]["kind"]))
    again = json.loads(json.dumps(tables(doc["schedule"], units, draws=doc["draws"], seed=doc["seed"],
                                         max_actions=doc["limits"]["max_actions"])))
    if again != doc["tables"]:
        problems.append("the tables computed from units.jsonl differ from study.json's")
    return not problems, problems


# ---- the command -------------------------------------------------------------------------------

@click.command("takeover")
@click.option("--checkpoints", "checkpoint_dirs", multiple=True, type=click.Path(), metavar="DIR",
              help="A checkpoints folder (diagnose checkpoints; repeatable): its dead ends take A, B, C, its "
                   "controls A, B.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default=None,
              help="The study folder to write (a new or empty folder, or a study to resume).")
@click.option("--conditions", default=None, metavar="A,B,C", help="Only these conditions [default: all].")
@click.option("--repeats", type=click.IntRange(1, 100), default=1, show_default=True,
              help="Continuations per checkpoint and condition.")
@click.option("--budget", type=click.FloatRange(min=0, min_open=True), default=BUDGET, show_default=True,
              help="Charged seconds per continuation (the endpoints' 300 s window).")
@click.option("--max-actions", type=click.IntRange(1), default=CEILING, show_default=True,
              help="Actions per continuation (the paper's ceiling).")
@click.option("--text-lang", type=click.Choice(["en", "zh"]), default=None,
              help="The language of the condition texts [default: the checkpoint's screen language].")
@click.option("--draws", type=click.IntRange(1), default=DRAWS, show_default=True, help="Bootstrap draws.")
@click.option("--seed", type=int, default=SEED, show_default=True, help="Bootstrap seed.")
@click.option("--check", "check_dir", type=click.Path(), default=None,
              help="Re-derive a takeover study: every continuation replays, endpoints and tables as recorded.")
@click.option("--json", "as_json", is_flag=True, help="Print study.json's tables as JSON.")
@agent_options(default_agent="paper_filler")
def takeover_cmd(checkpoint_dirs, out_dir, conditions, repeats, budget, max_actions, text_lang, draws, seed,
                 check_dir, as_json, agent_opts):
    """RQ2: an agent takes over at certified dead ends (conditions A, B, C) and solvable
    controls (A, B); timely restart, verified recovery, same-level win, recurrence and the
    attribution of its text; Table 13, the paired effects and Table 15 as a study folder."""
    if check_dir:
        ok, problems = check_study(check_dir)
        for p in problems:
            click.echo(f"  {p}")
        click.echo("ok: the study re-derives exactly" if ok else "NOT OK")
        raise SystemExit(0 if ok else 1)
    if not checkpoint_dirs or not out_dir:
        raise click.UsageError("give --checkpoints DIR and --out STUDY (or --check STUDY)")
    conds = parse_conditions(conditions)              # bad input: one error line, nothing written
    sr.fresh_folder(out_dir)
    choice = build_agent(agent_opts, Settings(budget=budget, max_actions=max_actions), default="paper_filler")
    sr.require_step_agent(choice.agent)
    doc = run_study(list(checkpoint_dirs), choice.make, out_dir, conditions=conds, repeats=repeats,
                    budget=budget, max_actions=max_actions, text_lang=text_lang, agent=choice.public(),
                    harness=agent_opts.harness,
                    draws=draws, seed=seed, log=None if as_json else lambda m: click.echo(f"  {m}", err=True))
    if as_json:
        click.echo(json.dumps(doc["tables"], ensure_ascii=False))
        return
    sr.print_tables(doc["tables"], click.echo)
    click.echo(f"\nstudy written to {out_dir}")
