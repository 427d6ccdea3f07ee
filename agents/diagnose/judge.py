"""``diagnose judge``: FlashAdventure's CUA-as-a-Judge (PAPERS.md section 7), measured for once
against the exact evaluator.

A judge is resumed at recorded states of recorded episodes and asked, milestone by milestone,
whether the screen shows it; each verdict is compared with the exact truth of that state.

Units. One unit is one level of one episode at one recorded step, restored exactly
(agents/harness/replay.py restore_step; the screenshot is drawn again from the restored state
and must have the recorded frame hash, so the judge sees exactly what the player saw):
``at="levels"`` (default) takes each level the episode played, at its end (the step its win
was observed, else the last step it was on screen); ``at="final"`` the episode's final state
(its level on screen; an episode that ends off a level has no unit), judged on the whole
objective: "level k of n won" for every other target level in order, the level on screen's
own milestones in its place (engine/milestones.py objective_milestones; the truth of a
level's win is the evaluator's record). The source of a unit, for the bootstrap, is its level.

Milestones. A level's milestones are its game's declared kinds (engine/milestones.py, the
GameSpec's ``milestones``: boards out, way clear, stacks sorted, vehicles left, cells painted,
pairs connected, a third-party game's own) and the level won, in checking order; each is an
exact predicate on the state and a question. ``mode="ordered"`` asks them in order and stops
at the first one judged unmet (FlashAdventure's 11 sequential games: the rest count as not
verified); ``mode="all"`` asks every one (its 23 cumulative games). Score = verified / total,
as FlashAdventure's, beside the exact score (true / total).

What the judge sees: the screenshot only. FlashAdventure's judge is a computer-use agent that
may act to look around; ours is shown the exact recorded screenshot and answers, for three
reasons: every verdict is then about one exact, restored state (an acting judge changes the
state it is judging: a click in Bolt Unscrew moves a screw), the puzzles' progress is all on
the level's screen (there is nothing to navigate to), and the truth of a verdict is then
well defined. Each question is asked in isolation (no history between questions).

Judges (any agent eval accepts, through ``judge_for``):
    ModelJudge   a model agent (every protocol, the tool agents too): one request per
                 milestone, the judge prompt with the question and the screenshot, no tools;
                 the reply's first yes / no word is the verdict (PARSE_VERDICT)
    AgentJudge   any other agent (scripted, an agent file in its sandbox): reset with the
                 question as its instruction, one act on the screenshot; a FinalAnswer's
                 first yes / no word is the verdict, anything else (an action) no answer
    PerfectJudge, MiscountJudge   scripted test judges that read the exact count instead of
                 the screen: the perfect one answers the truth; the miscounting one counts
                 one item too many on every multi-item milestone (FlashAdventure's judge was
                 weak on counting several items), exact on the others
No answer counts as unmet (not verified), as FlashAdventure's score does.

Output: a study folder (SCOPES.md contract 3): study.json (tables: agreement and confusion per
milestone kind, counting kinds apart, and the scores, with source-level bootstrap intervals:
agents/diagnose/stats.py), units.jsonl (one record per unit, every verdict with the truth and
the exact count), episodes/ (the judged episodes, hard-linked). ``check_study`` derives the
truth again from the episodes and the tables from the recorded verdicts.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from longpuzzle.agents.harness.episode_folder import copy_episode, recorded_frame_hash
from longpuzzle.agents.base import FinalAnswer, InfrastructureError, Observation, action_spec
from longpuzzle.agents.diagnose import stats
from longpuzzle.agents.harness.frames import hasher, header_frame_hash
from longpuzzle.agents.harness.replay import recorded_catalog, restore_step
from longpuzzle.agents.harness.settings import HarnessError
from longpuzzle.agents.harness.trajectory import read_events
from longpuzzle.engine.catalog import Catalog, builtin_catalog
from longpuzzle.engine.errors import LongPuzzleError
from longpuzzle.engine.milestones import level_milestones, milestone_kinds, objective_milestones
from longpuzzle.engine.registry import get_puzzle, spec

AT = ("levels", "final")
MODES = ("ordered", "all")
SCRIPTED_JUDGES = ("perfect", "miscount")
ATTEMPTS = 3                 # tries of a unit whose judge hit an infrastructure failure

SYSTEM = ("You are a judge checking the progress of a puzzle game from one screenshot. Answer the question "
          "about the screenshot with one word: yes or no.")
QUESTION = "Game: {title}. {question}\nAnswer yes or no."
# the verdict: the first yes / no word of the reply (English or Chinese), else no answer
PARSE_VERDICT = re.compile(r"\b(yes|no|true|false)\b|(不是|没有|沒有|否|是|有)", re.IGNORECASE)
_YES = {"yes", "true", "是", "有"}


class JudgeError(LongPuzzleError):
    """Bad input of the judge study (one line)."""


def parse_verdict(text: str) -> bool | None:
    """True / False from the first yes / no word of ``text``, None when it has none."""
    m = PARSE_VERDICT.search(text or "")
    if m is None:
        return None
    return (m.group(1) or m.group(2)).lower() in _YES


# ---- units ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Unit:
    """One level of one episode at one recorded step (module doc)."""
    id: str
    episode: Path            # the episode folder
    level: str
    step: int
    at: str                  # "won": the step its win was observed; "end": its last step; "final"

    @property
    def source(self) -> str:
        return self.level


def episode_folders(paths) -> list[Path]:
    """The episode folders given or found under the folders given (each holding events.jsonl)."""
    out: list[Path] = []
    for p in map(Path, paths):
        if (p / "events.jsonl").is_file():
            out.append(p)
        elif p.is_dir():
            found = sorted(f.parent for f in p.rglob("events.jsonl"))
            if not found:
                raise JudgeError(f"{p} holds no episode folder (no events.jsonl under it)")
            out.extend(found)
        else:
            raise JudgeError(f"{p}: no such episode or run folder")
    seen, uniq = set(), []
    for f in out:
        if f.resolve() not in seen:
            seen.add(f.resolve())
            uniq.append(f)
    return uniq


def episode_units(folder: Path, at: str = "levels", name: str = "") -> list[Unit]:
    """The units of one episode (module doc); steps refused before dispatch are never taken
    (nothing was restored there)."""
    if at not in AT:
        raise JudgeError(f"unknown --at {at!r}: use {' or '.join(AT)}")
    try:
        lines = read_events(folder)
    except (OSError, ValueError, HarnessError) as e:
        raise JudgeError(f"{folder}: not a readable episode ({e})") from None
    if not lines or lines[0].get("type") != "header":
        raise JudgeError(f"{folder}: not an episode (events.jsonl has no header)")
    order, last, won, final = [], {}, {}, None
    for rec in lines:
        if rec.get("stream") != "private" or ("snapshot" not in rec and "suite" not in rec):
            continue
        r, step = rec.get("record") or {}, rec["step"]
        lv = r.get("level")
        final = (step, lv)
        if lv is None:
            continue
        if lv not in last:
            order.append(lv)
        last[lv] = step
        if r.get("win") and lv not in won:
            won[lv] = step
    name = name or folder.name
    if at == "final":
        if final is None or final[1] is None:
            return []
        return [Unit(f"{name}:{final[1]}@{final[0]}", folder, final[1], final[0], "final")]
    out = []
    for lv in order:
        step, how = (won[lv], "won") if lv in won else (last[lv], "end")
        out.append(Unit(f"{name}:{lv}@{step}", folder, lv, step, how))
    return out


@dataclass
class Exact:
    """The truth of one milestone at a unit's state: the exact count of its kind and whether
    it holds. Only the scripted test judges read it; a model judge sees the screenshot alone."""
    have: int
    holds: bool


@dataclass
class Resumed:
    """A unit's state restored: its level, the screenshot and its milestones with their truth."""
    unit: Unit
    title: str
    frame: np.ndarray
    milestones: list         # [(Milestone, have, holds)], in checking order


def resume(unit: Unit, catalog: Catalog | None = None) -> Resumed:
    """Restore the unit's step exactly, draw its screenshot (checked against the recorded frame
    hash) and evaluate every milestone of its level there."""
    lines = read_events(unit.episode)
    cat = recorded_catalog(lines[0].get("catalog"), catalog)
    suite = restore_step(unit.episode, unit.step, cat)
    sess = suite.session
    if sess is None or sess.level.id != unit.level:
        raise JudgeError(f"{unit.episode}: step {unit.step} restores no level {unit.level} (does it replay?)")
    frame = screenshot(suite)
    want = recorded_frame(lines, unit.step)
    if hasher(header_frame_hash(lines[0]))(frame) != want:
        raise JudgeError(f"{unit.episode}: the screenshot of step {unit.step} drawn again differs from the recorded one")
    level, state = sess.level, sess.state
    own = level_milestones(milestone_kinds(spec(level.game)), level, state)
    head = lines[0]
    if unit.at == "final" and head.get("protocol") == "objective":
        won = {r["record"]["level"] for r in lines if r.get("stream") == "private" and r["step"] <= unit.step
               and r["record"].get("win")}
        own = objective_milestones(cat.objective(head["objective"]).level_ids, level.id, won, own)
    return Resumed(unit, get_puzzle(level.game).title, frame, own)


def screenshot(suite) -> np.ndarray:
    """The screenshot of a restored suite as its episode's settings draw it."""
    from longpuzzle.render.frame.screens import renderer_for      # lazy: the renderer, when judging
    return renderer_for(suite).render(suite)


def recorded_frame(lines: list[dict], step: int) -> str:
    """The recorded hash of the screenshot after step ``step`` (episode_folder.recorded_frame_hash)."""
    last = recorded_frame_hash(lines, step)
    if last is None:
        raise JudgeError(f"the episode records no screenshot up to step {step}")
    return last


# ---- judges --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Question:
    """What a judge is asked about one milestone: the text and the screenshot."""
    milestone: object        # engine.milestones.Milestone
    text: str
    frame: np.ndarray


@dataclass(frozen=True)
class Verdict:
    met: bool | None         # None: no answer (counted as unmet)
    text: str = ""           # the judge's reply as given


class PerfectJudge:
    """Scripted: the exact truth (a test instrument: it reads the count, not the screen)."""
    name = "judge:perfect"

    def ask(self, q: Question, exact: Exact) -> Verdict:
        return Verdict(exact.holds, "yes" if exact.holds else "no")

    def close(self) -> None:
        pass


class MiscountJudge(PerfectJudge):
    """Scripted: counts one item too many on every multi-item milestone, exact on the others."""
    name = "judge:miscount"

    def ask(self, q: Question, exact: Exact) -> Verdict:
        m = q.milestone
        met = exact.have + 1 >= m.k if m.counting else exact.holds
        return Verdict(met, "yes" if met else "no")


class ModelJudge:
    """A model agent's endpoint asked one question per milestone (module doc)."""

    def __init__(self, agent):
        from longpuzzle.agents.media.images import encode_png   # lazy: model judges only
        self.agent, self._png = agent, encode_png
        self.name = f"judge:{agent.name}"
        self.calls = 0

    def ask(self, q: Question, exact: Exact) -> Verdict:
        msgs = [{"role": "system", "text": SYSTEM},
                {"role": "user", "parts": [{"text": q.text}, {"image": self._png(q.frame), "ref": {"judge": self.calls}}]}]
        reply = self.agent.client.complete(msgs, None)
        self.calls += 1
        self.agent.usage.add_call(reply.usage, self.agent.prices, "judge")
        return Verdict(parse_verdict(reply.text), reply.text)

    def usage(self) -> dict:
        return self.agent.usage.as_dict()

    def close(self) -> None:
        self.agent.client.close()


class AgentJudge:
    """Any agent through the public API (module doc): reset with the question, one act."""

    def __init__(self, agent, timeout: float | None = 120.0):
        from longpuzzle.agents.harness.agent_call import AgentCaller    # lazy: agent judges only
        self.caller = agent.caller(timeout) if hasattr(agent, "caller") else AgentCaller(agent, timeout)
        self.name = f"judge:{getattr(agent, 'name', type(agent).__name__)}"

    def ask(self, q: Question, exact: Exact) -> Verdict:
        h, w = q.frame.shape[:2]
        frame = q.frame.copy()
        frame.setflags(write=False)
        self.caller.reset(f"{SYSTEM}\n{q.text}\nReply with a final answer.", action_spec(w, h))
        out = self.caller.act(Observation(frame, None, 0, None))
        if isinstance(out, FinalAnswer):
            return Verdict(parse_verdict(out.text), out.text)
        return Verdict(None, json.dumps(out, sort_keys=True, default=str)[:500])

    def close(self) -> None:
        self.caller.close()


def judge_for(agent):
    """The judge of an agent eval accepts, or a scripted judge by name ("perfect", "miscount")."""
    if agent == "perfect":
        return PerfectJudge()
    if agent == "miscount":
        return MiscountJudge()
    if isinstance(agent, str):
        raise JudgeError(f"unknown scripted judge {agent!r}: use {' or '.join(SCRIPTED_JUDGES)}")
    if hasattr(agent, "client") and hasattr(agent, "usage"):
        return ModelJudge(agent)
    if hasattr(agent, "act") or hasattr(agent, "caller"):
        return AgentJudge(agent)
    return agent                              # already a judge (has ask)


# ---- judging -------------------------------------------------------------------------------------

def judge_unit(judge, r: Resumed, mode: str = "ordered") -> list[dict]:
    """Ask the milestones of one resumed unit (module doc); one record per milestone."""
    if mode not in MODES:
        raise JudgeError(f"unknown --mode {mode!r}: use {' or '.join(MODES)}")
    out, stopped = [], False
    for m, have, holds in r.milestones:
        rec = {"id": m.id, "kind": m.kind, "counting": m.counting, "k": m.k, "n": m.n, "question": m.question,
               "have": have, "truth": holds, "asked": not stopped, "verdict": None, "reply": None}
        if not stopped:
            v = judge.ask(Question(m, QUESTION.format(title=r.title, question=m.question), r.frame), Exact(have, holds))
            rec["verdict"], rec["reply"] = v.met, v.text
            stopped = mode == "ordered" and v.met is not True
        out.append(rec)
    return out


def unit_scores(milestones: list[dict]) -> tuple[float, float]:
    """(the judge's score, the exact score) of a unit: verified / total, true / total."""
    n = len(milestones)
    return (sum(m["verdict"] is True for m in milestones) / n, sum(m["truth"] for m in milestones) / n) if n else (0.0, 0.0)


def run_judge(paths, judge, out: str | Path, *, at: str = "levels", mode: str = "ordered",
              catalog: Catalog | None = None, seed: int = stats.SEED, draws: int = stats.DRAWS) -> dict:
    """Judge every unit of the episodes under ``paths`` with ``judge`` (judge_for's), write the
    study folder ``out`` (module doc) and return study.json's content."""
    if mode not in MODES:
        raise JudgeError(f"unknown --mode {mode!r}: use {' or '.join(MODES)}")
    cat = catalog or builtin_catalog()
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise JudgeError(f"{out} is not empty: give a new folder for the study")
    out.parent.mkdir(parents=True, exist_ok=True)
    folders = episode_folders(paths)
    names = _episode_names(folders)
    units = [u for f in folders for u in episode_units(f, at, names[f])]
    if not units:
        raise JudgeError(f"no unit to judge: no episode {'ends on' if at == 'final' else 'played'} a level")
    heads = {}
    for f in folders:       # every episode on a catalogue available here, before anything is written
        try:
            heads[f] = read_events(f)[0]
            recorded_catalog(heads[f].get("catalog"), cat)
        except HarnessError as e:
            raise JudgeError(f"{f}: {e}") from None
    resumed = [resume(u, cat) for u in units]          # every state restored before anything is written
    judge = judge_for(judge)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent))
    try:            # built in a staging folder beside ``out``, renamed into place at the end
        for f in folders:
            copy_episode(f, tmp / "episodes" / names[f])
        records = []
        with open(tmp / "units.jsonl", "w", encoding="utf-8") as fh:
            for i, r in enumerate(resumed):
                for rec in _judge_with_retries(judge, r, mode, i, names):
                    records.append(rec)
                    fh.write(json.dumps(rec, sort_keys=True, ensure_ascii=False) + "\n")
                    fh.flush()
        doc = {"kind": "longpuzzle-study", "version": 1, "experiment": "judge", "catalog": cat.identity(),
               "agent": judge.name, "seed": seed, "draws": draws, "at": at, "mode": mode,
               "created": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
               "schedule": [u.id for u in units],
               "episodes": {names[f]: hashlib.sha256((f / "events.jsonl").read_bytes()).hexdigest() for f in folders},
               "tables": tables([r for r in records if r["status"] == "valid"], seed=seed, draws=draws),
               "figures": []}
        if isinstance(judge, ModelJudge):
            doc["usage"] = judge.usage()
        (tmp / "study.json").write_text(json.dumps(doc, indent=1, ensure_ascii=False), encoding="utf-8")
        if out.exists():
            out.rmdir()                   # (empty: checked above)
        os.replace(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    finally:
        judge.close()
    return doc


def _episode_names(folders: list[Path]) -> dict[Path, str]:
    """A distinct folder name under episodes/ for each episode (its name, numbered on a clash)."""
    names, used = {}, set()
    clash = {f.name for f in folders if sum(g.name == f.name for g in folders) > 1}
    for f in folders:           # an eval run's episode_001 of each objective: named with its objective
        base = n = f"{f.parent.name}-{f.name}" if f.name in clash else f.name
        i = 2
        while n in used:
            n, i = f"{base}-{i}", i + 1
        used.add(n)
        names[f] = n
    return names


def _judge_with_retries(judge, r: Resumed, mode: str, order: int, names: dict) -> list[dict]:
    """The unit's records: an infrastructure failure of the judge (a provider that keeps
    failing) is recorded as a "replaced" attempt and the unit judged again from its first
    milestone under the same assignment, up to ATTEMPTS; the last record is the valid one."""
    u = r.unit
    base = {"unit": u.id, "source": u.source, "checkpoint": None, "condition": mode, "order": order,
            "folder": f"episodes/{names[u.episode]}"}
    out = []
    for attempt in range(1, ATTEMPTS + 1):
        try:
            ms = judge_unit(judge, r, mode)
        except InfrastructureError as e:
            out.append({**base, "attempt": attempt, "status": "replaced", "endpoints": {}, "error": str(e)[:500]})
            continue
        js, xs = unit_scores(ms)
        out.append({**base, "attempt": attempt, "status": "valid",
                    "endpoints": {"level": u.level, "step": u.step, "at": u.at, "milestones": ms,
                                  "judge_score": round(js, 6), "exact_score": round(xs, 6)}})
        return out
    raise JudgeError(f"the judge failed on {u.id} {ATTEMPTS} times (infrastructure): {out[-1]['error']}")


# ---- tables --------------------------------------------------------------------------------------

@dataclass
class _Tally:
    """Confusion counts of a set of milestones (judged met / unmet against the truth)."""
    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0
    asked: int = 0
    by_source: dict = field(default_factory=dict)      # source -> [1 agreed / 0]

    def add(self, source: str, m: dict) -> None:
        said, true = m["verdict"] is True, bool(m["truth"])
        self.tp += said and true
        self.fp += said and not true
        self.fn += (not said) and true
        self.tn += (not said) and not true
        self.asked += bool(m["asked"])
        self.by_source.setdefault(source, []).append(int(said == true))

    @property
    def n(self) -> int:
        return self.tp + self.fp + self.fn + self.tn


def tables(records: list[dict], *, seed: int = stats.SEED, draws: int = stats.DRAWS) -> list[dict]:
    """The study's tables from its valid unit records: agreement per milestone kind (counting
    kinds apart), the confusion matrix, and the scores (FlashAdventure's verified / total
    beside the exact one) per game, with source-level bootstrap intervals."""
    kinds: dict[str, _Tally] = {}
    counting: dict[str, bool] = {}
    groups = {"all": _Tally(), "multi-item (counting)": _Tally(), "single": _Tally()}
    for r in records:
        for m in r["endpoints"]["milestones"]:
            kinds.setdefault(m["kind"], _Tally()).add(r["source"], m)
            counting[m["kind"]] = m["counting"]
            groups["all"].add(r["source"], m)
            groups["multi-item (counting)" if m["counting"] else "single"].add(r["source"], m)

    def row(name, kind_of, t: _Tally):
        agree = stats.cluster_bootstrap(t.by_source, seed=seed, draws=draws) if t.n else None
        return [name, kind_of, t.n, t.asked, f"{t.tp + t.tn}/{t.n}", str(agree) if agree else "n/a",
                t.tp, t.fp, t.fn, t.tn]

    cols = ["milestones", "kind", "n", "asked", "agree", "agreement [95% CI]", "TP", "FP", "FN", "TN"]
    rows = [row(k, "counting" if counting[k] else "single", kinds[k]) for k in sorted(kinds)]
    rows += [row(g, "", t) for g, t in groups.items()]
    agreement = {"id": "judge_agreement", "title": "Judge verdicts against the exact evaluator, per milestone kind",
                 "columns": cols, "rows": rows,
                 "note": "TP: judged met and met; FP: judged met, not met; FN: met, judged unmet (or not asked / "
                         "no answer); TN: neither. Agreement: share of milestones where the verdict is the truth, "
                         "bootstrap over source levels. 'asked': milestones put to the judge (ordered mode stops at "
                         "the first unmet)."}
    # the counting milestones by how far the exact count stands from the threshold: where
    # a judge that counts badly errs (one item short: have - k = -1; just met: 0)
    near: dict[str, _Tally] = {}
    for r in records:
        for m in r["endpoints"]["milestones"]:
            if m["counting"]:
                near.setdefault(_distance(m["have"] - m["k"]), _Tally()).add(r["source"], m)
    drows = [[d, t.n, f"{t.tp + t.tn}/{t.n}", t.tp + t.fp, t.tp + t.fn] for d, t in
             sorted(near.items(), key=lambda kv: DISTANCES.index(kv[0]))]
    counts = {"id": "judge_counting", "title": "Multi-item milestones by the exact count's distance from the threshold",
              "columns": ["have - k", "milestones", "agree", "judged met", "met"], "rows": drows,
              "note": "have: the items counted on the state; k: the milestone's threshold (met when have >= k). "
                      "A judge that miscounts errs near 0: at -1 it says met with one item missing."}
    a = groups["all"]
    confusion = {"id": "judge_confusion", "title": "Confusion matrix (all milestones)",
                 "columns": ["truth", "judged met", "judged unmet"],
                 "rows": [["met", a.tp, a.fn], ["not met", a.fp, a.tn]],
                 "note": "A milestone not asked (after the first unmet in ordered mode) or not answered counts as "
                         "judged unmet, as FlashAdventure's score counts it."}
    games: dict[str, dict] = {}
    for r in records:
        g = r["endpoints"]["level"].split("/")[0]
        for scope in (g, "all"):
            d = games.setdefault(scope, {"judge": {}, "exact": {}, "pair": {}})
            e = r["endpoints"]
            d["judge"].setdefault(r["source"], []).append(e["judge_score"])
            d["exact"].setdefault(r["source"], []).append(e["exact_score"])
            d["pair"].setdefault(r["source"], []).append((e["exact_score"], e["judge_score"]))
    srows = []
    for scope in sorted(games, key=lambda s: (s == "all", s)):
        d = games[scope]
        n = sum(len(v) for v in d["judge"].values())
        srows.append([scope, n, str(stats.cluster_bootstrap(d["exact"], seed=seed, draws=draws)),
                      str(stats.cluster_bootstrap(d["judge"], seed=seed, draws=draws)),
                      str(stats.paired_effect(d["pair"], seed=seed, draws=draws))])
    scores = {"id": "judge_score", "title": "Milestone score: the judge's (verified / total) against the exact one",
              "columns": ["scope", "units", "exact score [95% CI]", "judge score [95% CI]", "judge - exact [95% CI]"],
              "rows": srows,
              "note": "Per unit (a level at its end, or an episode's final state): verified / total milestones, "
                      "as FlashAdventure scores; the exact score counts the milestones that hold. Intervals: "
                      f"bootstrap over source levels, {draws} draws, seed {seed}."}
    return [agreement, confusion, counts, scores]


DISTANCES = ("<= -3", "-2", "-1", "0", "+1", "+2", ">= +3")


def _distance(d: int) -> str:
    """The bucket of have - k (DISTANCES)."""
    if d <= -3:
        return "<= -3"
    if d >= 3:
        return ">= +3"
    return f"{d:+d}" if d else "0"


def format_table(t: dict) -> str:
    """A table as Markdown (the command's output and the docs' example)."""
    lines = [f"**{t['title']}**", "", "| " + " | ".join(map(str, t["columns"])) + " |",
             "|" + "---|" * len(t["columns"])]
    lines += ["| " + " | ".join(map(str, r)) + " |" for r in t["rows"]]
    return "\n".join(lines)


# ---- checking a study folder ---------------------------------------------------------------------

def check_study(folder: str | Path, catalog: Catalog | None = None) -> list[str]:
    """Derive the study again: each episode's events digest as recorded, each unit's truth and
    exact count from its restored state, each score from its verdicts, and every table from the
    records. Returns what differs (empty: the study is what its episodes and verdicts make)."""
    folder = Path(folder)
    try:
        doc = json.loads((folder / "study.json").read_text(encoding="utf-8"))
        records = [json.loads(x) for x in (folder / "units.jsonl").read_text(encoding="utf-8").splitlines() if x]
    except (OSError, ValueError) as e:
        raise JudgeError(f"{folder} is not a judge study folder ({e})") from None
    if doc.get("kind") != "longpuzzle-study" or doc.get("experiment") != "judge":
        raise JudgeError(f"{folder} is not a judge study folder (study.json's kind / experiment)")
    diffs = []
    for name, digest in doc.get("episodes", {}).items():
        p = folder / "episodes" / name / "events.jsonl"
        if not p.is_file() or hashlib.sha256(p.read_bytes()).hexdigest() != digest:
            diffs.append(f"episode {name}: its events are missing or changed")
    if diffs:
        return diffs
    for r in records:
        if r.get("status") != "valid":
            continue
        e = r["endpoints"]
        u = Unit(r["unit"], folder / r["folder"], e["level"], e["step"], e["at"])
        try:
            res = resume(u, catalog)
        except (LongPuzzleError, OSError) as x:
            diffs.append(f"unit {u.id}: {x}")
            continue
        truth = [(m.id, have, holds) for m, have, holds in res.milestones]
        rec = [(m["id"], m["have"], m["truth"]) for m in e["milestones"]]
        if truth != rec:
            diffs.append(f"unit {u.id}: the milestones' truth differs from the restored state's")
        js, xs = unit_scores(e["milestones"])
        if (round(js, 6), round(xs, 6)) != (e["judge_score"], e["exact_score"]):
            diffs.append(f"unit {u.id}: its scores are not its verdicts'")
    again = tables([r for r in records if r.get("status") == "valid"], seed=doc["seed"], draws=doc["draws"])
    if json.loads(json.dumps(again)) != doc.get("tables"):
        diffs.append("the tables differ from those the records make")
    return diffs


# ---- the command ---------------------------------------------------------------------------------

def judging_agent(opts, runs, folder: Path) -> object:
    """The judging agent of the shared agent options (agents/agent_options.py, contract 4: any
    agent eval accepts), made as eval makes one, for the objective of the first episode given
    (a model agent's own prompts are never used: the judge asks its own questions). ``folder``:
    where the agent may write (a scripted agent's notes), never a recorded episode's."""
    from longpuzzle.agents.agent_options import build_agent     # lazy: the command's options

    choice = build_agent(opts)           # an unknown agent, a bad model setting, no key: one line now
    head = read_events(episode_folders(runs)[0])[0]
    objective = head.get("objective") or "/".join(str(head.get("level", "maze_paint/easy/1")).split("/")[:2])
    return choice.make(objective, folder)


def _command():
    import click

    from longpuzzle.agents.agent_options import agent_options
    from longpuzzle.engine.catalog_store import catalog_option

    @click.command("judge")
    @click.argument("runs", nargs=-1, type=click.Path())
    @click.option("--out", "out_dir", type=click.Path(file_okay=False), default=None,
                  help="The study folder to write (new or empty).")
    @click.option("--at", type=click.Choice(AT), default="levels", show_default=True,
                  help="Where the judge resumes: each level's end (its win, else its last step), or each "
                       "episode's final state.")
    @click.option("--mode", type=click.Choice(MODES), default="ordered", show_default=True,
                  help="ordered: in order, stopping at the first milestone judged unmet; all: every milestone.")
    @click.option("--judge", "scripted", type=click.Choice(SCRIPTED_JUDGES), default=None,
                  help="A scripted test judge: perfect (the truth) or miscount (one item too many on counts).")
    @click.option("--seed", type=int, default=stats.SEED, show_default=True, help="Seed of the bootstrap.")
    @click.option("--draws", type=click.IntRange(1), default=stats.DRAWS, show_default=True, help="Bootstrap draws.")
    @click.option("--check", "check_dir", type=click.Path(), default=None,
                  help="Derive a study folder again (truth, scores, tables) and report any difference.")
    @click.option("--json", "as_json", is_flag=True, help="Print study.json's tables as JSON.")
    @agent_options(default_agent="none: give --judge, --agent or --model")
    @catalog_option
    def judge_cmd(runs, out_dir, at, mode, scripted, seed, draws, check_dir, as_json, catalog, agent_opts):
        """FlashAdventure's CUA-as-a-Judge against the exact evaluator: a judge resumed at
        recorded states of RUNS (run or episode folders) checks each level's milestones;
        every verdict is compared with the truth.

        \b
            longpuzzle diagnose judge results/eval-... --judge miscount --out judge-study
            longpuzzle diagnose judge results/eval-... --model gpt-6-sol --out judge-study
            longpuzzle diagnose judge --check judge-study"""
        if check_dir:
            if runs or out_dir:
                raise click.UsageError("--check takes a study folder alone (no RUNS, no --out)")
            diffs = check_study(check_dir, catalog)     # truth, scores and tables derived again
            for d in diffs:                              # as every diagnose command's --check reports
                click.echo(f"  {d}")
            click.echo("NOT OK" if diffs else "ok: the study re-derives exactly")
            raise SystemExit(1 if diffs else 0)
        if not runs:
            raise click.UsageError("give the run or episode folders to judge (or --check STUDY)")
        if not out_dir:
            raise click.UsageError("--out is required: the study folder to write")
        if sum(x is not None for x in (scripted, agent_opts.agent or agent_opts.model)) != 1:
            raise click.UsageError("give one judge: --judge perfect|miscount, or --agent / --model")
        scratch = Path(tempfile.mkdtemp(prefix="longpuzzle-judge-"))
        try:
            judge = scripted or judging_agent(agent_opts, runs, scratch)
            doc = run_judge(runs, judge, out_dir, at=at, mode=mode, catalog=catalog, seed=seed, draws=draws)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        if as_json:
            click.echo(json.dumps({"out": str(out_dir), "tables": doc["tables"]}))
            return
        for t in doc["tables"]:
            click.echo(format_table(t) + "\n")
        click.echo(f"study written to {out_dir} ({len(doc['schedule'])} units, judge {doc['agent']})")

    return judge_cmd


judge_cmd = _command()
