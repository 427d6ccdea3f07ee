"""Verifying a run folder as a whole: what ``longpuzzle replay RUN_DIR`` proves, and what
``report`` and ``leaderboard`` require before they show a run's numbers (issue 35).

    episodes    every planned episode is replayed from the catalogue and its actions alone
                (harness/replay.py: header, records, result.json recomputed), the tool
                records of a VISTA / MCP episode reproduced; it must be filed where the plan
                puts it (its header names the objective of its folder), played by the run's
                agent with the run's settings on the run's catalogue; its header's planned
                identity (runner.run_episode: the plan's folder, the attempts set aside before
                it started) must be where it is found, so a copy filed elsewhere is refused
                whatever its real-time fields say; and no episode may be present twice (the
                same events digest: kept, it is cheap and also catches a verbatim copy filed
                as its own interrupted folder, which has the same identity)
    superseded  folders ``--resume`` set aside (``<episode>.interrupted-N``: killed, a valid
                prefix; ``<episode>.attempt-N``: an unscored attempt that was run again) are
                replayed as what they are and do not make a finished run fail; an episode
                that ended unscored must have used every retry the run allowed
    run.json    its plan is the one its settings make (episode count, objectives)
    summary     summary.json recomputed from the episodes' results (runner.summarise: the
                metrics, per-objective rows, cells, unscored counts, usage and cost) and
                compared field by field

``check_run`` returns a RunCheck naming the first difference. A verified run gets a
verification record (``verified.json``): the digest of every file the verification read,
sealed with a key of this machine's user (HMAC), so ``report`` and ``leaderboard`` trust the
record only where this user's replay wrote it and the files have not changed since.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
import datetime

from longpuzzle.agents.harness import HarnessError, read_events, replay_episode
from longpuzzle.agents.registry import MODEL_AGENTS
from longpuzzle.agents.evaluator import Evaluator
from longpuzzle.agents.harness.recompute import recorded_settings
from longpuzzle.agents.harness.replay import _jsonish, recorded_catalog
from longpuzzle.agents.harness.results import EpisodeResult
from longpuzzle.agents.harness.settings import Settings
from longpuzzle.agents.harness.trajectory import read_header
from longpuzzle.agents.metrics import BENCHMARK, UNSCORED_ENDS
from longpuzzle.engine.cache import cache_dir
from longpuzzle.engine.suite import Suite

RECORD_FILE = "verified.json"
RECORD_FORMAT = "longpuzzle-verified/1"
# what the record proves depends on what replay checks: a record written by a replay that
# checked less is not trusted (raise this when replay checks something new)
CHECKS_VERSION = 2                 # 2: the planned identity of each episode's header
SUPERSEDED = re.compile(r"^(?P<base>episode_\d+)\.(?P<kind>attempt|interrupted)-(?P<n>\d+)$")
# labels an MCP run's summary carries beside what summarise writes (vista/cli.py)
MCP_LABELS = ("model", "setting", "harness")


@dataclass
class RunCheck:
    folder: Path
    ok: bool = True
    first: str = ""                       # the first difference ("" when ok)
    episodes: list = field(default_factory=list)    # per episode folder: its replay (dict)
    source: str = "replayed"              # "replayed", or "record": a valid verification record
    checked: list = field(default_factory=list)

    def fail(self, why: str) -> RunCheck:
        if self.ok:
            self.ok, self.first = False, why
        return self

    def as_dict(self) -> dict:
        return {"folder": str(self.folder), "ok": self.ok, "first": self.first, "source": self.source,
                "episodes": self.episodes, "checked": self.checked}


def is_run_folder(folder: str | Path) -> bool:
    """An eval output folder (run.json), or a run folder ``longpuzzle mcp --out`` wrote
    (summary.json)."""
    folder = Path(folder)
    return (folder / "run.json").is_file() or (folder / "summary.json").is_file()


# ---- one episode -------------------------------------------------------------------------

def check_episode(folder: Path, catalog=None) -> dict:
    """Replay one episode folder (an objective episode, or a level-protocol episode's level
    folders), with its tool records, on the catalogue it recorded (``catalog`` when it is that
    one, replay.recorded_catalog); a dict as ReplayReport.as_dict with "ok" False and a
    "divergence" for anything not verified. HarnessError for a malformed folder is caught
    and reported the same way."""

    try:
        if (folder / "events.jsonl").is_file():
            rep = replay_episode(folder, catalog)
            d = rep.as_dict()
            if rep.ok:
                tools = check_tools(folder)
                if tools is not None:
                    d["tools"] = tools
                    if not tools["ok"]:
                        d["ok"], d["divergence"] = False, tools["problems"][0]
            return d
        levels = sorted(p for p in folder.iterdir() if p.is_dir() and (p / "events.jsonl").is_file()) \
            if folder.is_dir() else []
        if not levels:
            why = "no events.jsonl in it or its level folders"
            if (folder / "result.json").is_file():    # e.g. an episode whose agent could not be made
                why += ": its result.json states what no recorded action shows, so it cannot be verified"
            return {"ok": False, "steps": 0, "complete": False, "divergence": why}
        return _check_level_chain(folder, levels, catalog)
    except HarnessError as e:
        return {"ok": False, "steps": 0, "complete": False, "divergence": f"refused: {e}"}


def check_tools(folder) -> dict | None:
    """Every image and pixel grid the tools of a VISTA / MCP episode returned, reproduced
    from the folder (None: the episode used no tools)."""
    from longpuzzle.agents.vista.records import check_tool_records    # lazy: the VISTA tools, for tool episodes only

    chk = check_tool_records(folder)
    return None if chk is None else chk.as_dict()


def _check_level_chain(folder: Path, levels: list[Path], catalog=None) -> dict:
    """A level-protocol episode: each level folder replayed, and the episode's result.json
    recomputed from the levels' results (which the replays verified)."""

    steps, complete = 0, True
    rows = []
    for p in levels:
        rep = replay_episode(p, catalog)
        if not rep.ok:
            return {"ok": False, "steps": steps + rep.steps, "complete": False,
                    "divergence": f"{p.name}: {rep.divergence}"}
        steps += rep.steps
        complete = complete and rep.complete
        rows.append((p, json.loads((p / "result.json").read_text(encoding="utf-8")) if rep.complete else None,
                     read_header(p)))
    d = {"ok": True, "steps": steps, "complete": complete, "divergence": "", "levels": len(levels)}
    if not complete or not (folder / "result.json").is_file():
        d.update(complete=False, note="a level did not finish, or the episode has no result.json")
        return d
    res = _read(folder / "result.json", "episode result")
    why = _chain_differs(res, rows, folder, catalog)
    if why:
        d["ok"], d["divergence"] = False, why if why.startswith("result.json") else f"result.json {why}"
    return d


def _chain_differs(res: dict, rows: list, folder: Path, catalog=None) -> str:
    """"" when a level-protocol episode's result.json is, field by field, what
    run_level_chain (level.py) makes of its levels: the levels' results (verified by their
    replays), the evaluator's outcome rebuilt from their verified private records, the time
    summed over the levels, the rules of the recorded settings; else the first difference.
    Its own wall time (``seconds``) can only be checked to cover the levels' real time."""

    heads = [h for _, _, h in rows]
    return _chain_result_differs(res, rows, recorded_catalog(heads[0].get("catalog") if heads else None, catalog))


def _chain_result_differs(res: dict, rows: list, cat) -> str:
    proto = res.get("protocol")
    if proto not in ("level:progressive", "level:all_levels"):
        return "has an unknown protocol"
    mode = proto.split(":")[1]
    try:
        obj = cat.objective(res.get("objective"))
    except Exception:  # noqa: BLE001 - any unknown objective
        return "names an unknown objective"
    ev = Evaluator(obj.game, obj.difficulty, 0, catalog=cat)       # its outcomes are set from the records below
    by_level = {}
    for i, (p, r, head) in enumerate(rows):
        lid = obj.level_ids[i] if i < len(obj.level_ids) else None
        if p.name != f"level_{i + 1:02d}" or head.get("level") != lid:
            return f"has level folder {p.name} for level {head.get('level')}, not level {i + 1} of the objective"
        by_level[lid] = r
        o = ev.outcomes[lid]
        o.reached = True                                # launched directly: its screen shows at once
        o.max_progress = Suite.restore(head["start"], cat).session.progress
        for rec in read_events(p):
            x = rec.get("record") if rec.get("stream") == "private" else None
            if x and x.get("level") == lid:
                o.max_progress = max(o.max_progress, x.get("P") or 0.0)
                o.won = o.won or bool(x.get("win"))
            if x and x.get("mismatch"):
                ev.mismatch = True
    runs, end, stop = [], "completed", False
    for lid in obj.level_ids:
        r = by_level.get(lid)
        if stop or r is None:
            if r is not None:
                return f"holds level {lid}, which the {mode} chain never plays after its end"
            runs.append({"level": lid, "run": False, "score": 0.0})
            stop = True
            continue
        runs.append(r)
        if not r["success"]:
            end = r["termination"]
            if mode == "progressive":
                stop = True
    if ev.complete:
        end = "completed"
    played = [r for r in runs if r["run"]]
    if len(played) != len(rows):
        return "does not play the levels its folders hold"
    st = recorded_settings(rows[0][2]).resolved("level")
    cfg = BENCHMARK["games"][obj.game]
    times = {k: round(sum(r["time"][k] for r in played), 6) for k in ("real", "charged", "agent", "harness",
                                                                         "simulated", "latency")}
    times.update(charge_agent_time=st.charge_agent_time, action_latency=st.action_latency, budget=None,
                 budget_per_level=cfg["timeout_seconds"])
    outcome = ev.outcome(end, budget_remaining=False)
    want = EpisodeResult(obj.id, proto, str(res.get("agent")), outcome.end, sum(r["steps"] for r in played),
                         0.0, outcome, levels=runs, extra={"agent_isolation": played[0].get("agent_isolation", {})},
                         time=times, presses=sum(r["presses"] for r in played),
                         invalid=sum(r["invalid_actions"] for r in played),
                         rules={"invalid_action_policy": st.invalid_action_policy,
                                "charge_agent_time": st.charge_agent_time, "action_latency": st.action_latency,
                                "timeout_seconds": cfg["timeout_seconds"],
                                "max_steps": st.max_actions or cfg["max_steps"], "lang": st.lang,
                                "preset": st.preset}, catalog=cat.identity()).as_dict()
    want["cell_score"] = sum(r["score"] for r in runs) / len(runs)
    secs = res.get("seconds")
    if type(secs) not in (int, float) or secs < round(times["real"], 3) - 1e-3:
        return "has 'seconds' shorter than its levels' real time"
    for k in ("seconds", "folder", "model"):           # wall time; where the run filed it; usage
        want[k] = res[k] if k in res else want.get(k)
        if k not in res:
            want.pop(k, None)
    why = first_difference(_jsonish(res), _jsonish(want), "result.json")
    return why.replace("recomputed", "its levels make") if why else ""


# ---- the run -------------------------------------------------------------------------------

def check_run(folder: str | Path, *, use_record: bool = True, write_record: bool = False) -> RunCheck:
    """Verify a run folder (module doc). ``use_record``: accept a valid verification record
    instead of replaying; ``write_record``: write one when the run verifies."""
    folder = Path(folder)
    if not is_run_folder(folder):
        raise HarnessError(f"{folder} is not a run folder (no run.json or summary.json)")
    if use_record:
        rec = read_record(folder)
        if rec is not None:
            chk = RunCheck(folder, source="record")
            chk.checked.append(f"the verification record of {rec['verified_at']}: every file's digest unchanged")
            return chk
    chk = _replay_run(folder)
    if chk.ok and write_record:
        write_verification(folder, chk)
    return chk


def read_json(path: Path, what: str) -> dict:
    """A JSON file of a run folder, or one HarnessError line saying what is wrong with it."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise HarnessError(f"{path}: not valid JSON ({e.msg} at line {e.lineno}); is the {what} truncated?") from None
    except OSError as e:
        raise HarnessError(f"{path}: cannot read the {what} ({e.strerror})") from None


def _read(p: Path, what: str):
    doc = read_json(p, what)
    if type(doc) is not dict:
        raise HarnessError(f"{p}: the {what} is not a JSON object")
    return doc


def _replay_run(folder: Path) -> RunCheck:
    from longpuzzle.agents.runner import (  # lazy: the runner and its backends, for run folders only
        RUN_FORMAT, RunConfig, runs_untrusted_code, summarise,
    )

    chk = RunCheck(folder)
    if not (folder / "summary.json").is_file():
        return chk.fail("the run has no summary.json (it has not finished)")
    summary = _read(folder / "summary.json", "run summary")
    on_disk, stray = _episode_dirs(folder)
    if stray:
        return chk.fail(f"{stray[0]} is not an episode folder of the run's layout")
    if (folder / "run.json").is_file():
        doc = _read(folder / "run.json", "run file")
        if doc.get("format") != RUN_FORMAT or type(doc.get("run")) is not dict:
            return chk.fail("run.json is not a run file of this format")
        try:
            run = RunConfig.from_dict(doc["run"])
            plan = run.plan()
        except (TypeError, ValueError, AttributeError) as e:
            return chk.fail(f"run.json cannot be read as a run: {e}")
        if _jsonish(doc.get("plan")) != _jsonish(plan):
            return chk.fail("run.json's plan is not the one its settings make (objectives x episodes)")
        if set(doc) - {"format", "run", "plan"} or set(doc["run"]) - set(RunConfig.__dataclass_fields__):
            return chk.fail("run.json has a field eval does not write")
        if getattr(run, "sandbox", None) is not None and not runs_untrusted_code(run):
            return chk.fail("run.json records a sandbox, but the run's agent runs no untrusted code")
        mcp = False
    else:                      # `longpuzzle mcp --out`: one episode, its identity in the summary
        mains = [d for d in on_disk if not SUPERSEDED.match(d.name)]
        if len(mains) != 1:
            return chk.fail("a run folder without run.json must hold exactly one episode")
        head = read_header(mains[0]) if (mains[0] / "events.jsonl").is_file() else {}
        run = RunConfig(agent=str(head.get("agent")), objectives=[str(head.get("objective"))],
                        settings=head.get("settings") or {}, catalog=head.get("catalog"))
        plan = [{"objective": run.objectives[0], "episode": 0,
                 "folder": f"{mains[0].parent.name}/{mains[0].name}"}]
        mcp = True
    want_settings = None
    try:
        st = Settings(**{k: v for k, v in run.settings.items() if k in Settings.__dataclass_fields__})
        # as a header records them (JSON: a viewport tuple is a list there)
        want_settings = json.loads(json.dumps(st.resolved("objective" if run.protocol == "objective"
                                                          else "level").as_dict()))
    except Exception as e:  # noqa: BLE001 - any settings that do not make Settings
        return chk.fail(f"the run's settings cannot be used: {e}")
    planned = {s["folder"]: s for s in plan}
    for d in on_disk:
        rel = f"{d.parent.name}/{d.name}"
        m = SUPERSEDED.match(d.name)
        base = f"{d.parent.name}/{m['base']}" if m else rel
        if base not in planned:
            return chk.fail(f"{rel} is not an episode of the run's plan")
    results, digests = [], {}
    agent_names = set()
    heads: list = []
    for spec in plan:                # every episode is replayed; the first difference is named
        res, heads, why = _check_planned(folder, spec, run, want_settings, mcp, on_disk, digests, chk)
        if why:
            chk.fail(f"{spec['folder']}: {why}")
            continue
        agent_names.add(res.get("agent"))
        results.append({**res, "folder": spec["folder"]} if mcp else res)   # (mcp's summary names it)
    if not chk.ok:
        return chk
    if len(agent_names) > 1:
        return chk.fail("the run's episodes were played by different agents")
    try:                    # the catalogue the run recorded (its episodes replayed on it above)
        cat = recorded_catalog(run.catalog) if run.catalog else None
    except HarnessError as e:
        return chk.fail(str(e))
    want = summarise(run, results, cat)
    if mcp:
        for k in MCP_LABELS:
            if k in summary:
                want[k] = summary[k]
        if summary.get("model") is not None and heads and summary["model"] != heads[0].get("model"):
            return chk.fail("summary.json's model is not the episode's")
    why = first_difference(_jsonish(summary), _jsonish(want), "summary.json")
    if why:
        return chk.fail(why + " (recomputed from the episodes)")
    chk.checked += [f"{len(plan)} planned episodes replayed, each filed under its objective, played by the run's "
                    "agent with its settings and catalogue, none present twice",
                    "every folder set aside by --resume replayed as what it is",
                    "summary.json recomputed from the episodes: metrics, objectives, cells, unscored, usage and cost",
                    "run.json: its plan is the one its objectives and episode count make"]
    return chk


def _check_planned(folder: Path, spec: dict, run, want_settings: dict, mcp: bool, on_disk: list, digests: dict,
                   chk: RunCheck) -> tuple[dict | None, list, str]:
    """Replay one planned episode and the folders --resume set aside for it; (its
    result.json, its headers, "" or the first difference). ``digests``: the events
    digests seen so far (a copy is refused)."""
    rel = spec["folder"]
    d = folder / rel
    if not d.is_dir():
        return None, [], "the planned episode is not there"
    rep = check_episode(d)
    chk.episodes.append({"episode": rel, **rep})
    if not rep["ok"]:
        return None, [], rep["divergence"]
    if not rep.get("complete", True):
        return None, [], f"the episode did not finish ({rep.get('note') or 'no result'})"
    res = _read(d / "result.json", "episode result")
    heads = [read_header(p) for p in _event_folders(d)]
    why = _filed_right(res, heads, spec, run, want_settings, mcp)
    if why:
        return None, heads, why
    aside = [(x, SUPERSEDED.match(x.name)) for x in on_disk if x.parent == d.parent]
    aside = [(x, m) for x, m in aside if m and m["base"] == d.name]
    attempts = sum(m["kind"] == "attempt" for _, m in aside)
    if not mcp and (attempts > run.infra_retries or (res.get("end") in UNSCORED_ENDS and attempts < run.infra_retries)):
        return None, heads, (f"ended {res.get('end')!r} with {attempts} attempts set aside; the run reruns an "
                             f"unscored episode until {run.infra_retries} are")
    why = "" if mcp else _identity(heads, rel, attempts)
    if why:
        return None, heads, why
    if "model" in res and run.agent not in MODEL_AGENTS:
        return None, heads, "result.json has model usage, but the run's agent is not a model agent"
    for p in _event_folders(d):
        h = file_digest(p / "events.jsonl")
        if h in digests:
            return None, heads, f"the episode is a copy of {digests[h]}"
        digests[h] = rel
    # the folders --resume set aside for this episode: each replays as what it is
    for s, m in aside:
        srel = f"{s.parent.name}/{s.name}"
        srep = check_episode(s)
        chk.episodes.append({"episode": srel, "superseded": m["kind"], **srep})
        if not srep["ok"]:
            return None, heads, f"{s.name} (set aside by --resume): {srep['divergence']}"
        if m["kind"] == "attempt":
            sres = _read(s / "result.json", "episode result") if (s / "result.json").is_file() else {}
            if sres.get("end") not in UNSCORED_ENDS or not srep.get("complete", True):
                return None, heads, f"{s.name}: an attempt set aside must have ended unscored"
        elif (s / "result.json").is_file():
            return None, heads, f"{s.name}: an interrupted episode set aside has a result.json"
        # .attempt-N was set aside as the N-th: it started with N-1 before it; an interrupted
        # one started with at most as many as are set aside now
        why = "" if mcp else _identity([read_header(p) for p in _event_folders(s)], rel,
                                       int(m["n"]) - 1 if m["kind"] == "attempt" else None, attempts)
        if why:
            return None, heads, f"{s.name}: {why}"
        for p in _event_folders(s):
            h = file_digest(p / "events.jsonl")
            if h in digests:
                return None, heads, f"{s.name} is a copy of {digests[h]}"
            digests[h] = srel
    return res, heads, ""


def _identity(heads: list, rel: str, attempt: int | None, at_most: int = 0) -> str:
    """"" when every header's planned identity (runner.run_episode) is the planned folder
    ``rel`` and attempt number ``attempt`` (None: any up to ``at_most``, an interrupted
    folder). A header without one was written before identities were recorded: its run
    cannot prove where its episodes belong, so it is refused (each episode still replays)."""
    for h in heads:
        pl = h.get("planned")
        if pl is None:
            return ("the header records no planned identity (written before identities were recorded): "
                    "the run cannot be verified as a whole; run it again")
        if pl.get("folder") != rel:
            return f"the header's planned identity is {str(pl.get('folder'))[:60]!r}: a copy filed as {rel!r}"
        n = pl.get("attempt")              # (an int >= 0: the replay's header check)
        if (n != attempt) if attempt is not None else n > at_most:
            return f"the header's planned identity is attempt {n}, not the attempt its folder holds"
    return ""


def _filed_right(res: dict, heads: list, spec: dict, run, want_settings: dict, mcp: bool) -> str:
    """"" when an episode is where the plan puts it and was played as the run says."""
    if res.get("objective") != spec["objective"]:
        return f"result.json is of objective {str(res.get('objective'))[:40]!r}, filed under {spec['objective']!r}"
    if not mcp and res.get("folder") != spec["folder"]:
        return "result.json names another folder"
    for h in heads:
        obj = h.get("objective") or "/".join(str(h.get("level", "")).split("/")[:2])
        if obj != spec["objective"]:
            return f"the episode is of objective {obj[:40]!r}, filed under {spec['objective']!r}"
        if h.get("agent") != res.get("agent"):
            return "the header's agent is not result.json's"
        if h.get("settings") != want_settings:
            return "the episode ran with other settings than the run's"
        if run.catalog is not None and h.get("catalog") != run.catalog:
            return "the episode ran on another catalogue than the run's"
    proto = res.get("protocol", "")
    if (proto == "objective") != (run.protocol == "objective") or \
            (run.protocol == "level" and proto != f"level:{run.mode}"):
        return f"the episode's protocol {proto!r} is not the run's"
    iso = res.get("agent_isolation")
    if iso is not None and not mcp:        # built-in and model agents run in-process, as trusted code
        if not run.agent.endswith(".py") and iso != {"trusted": True, "mode": "in-process"}:
            return "result.json's agent_isolation is not how the run's agent runs"
        if run.agent.endswith(".py") and iso.get("trusted") is not bool((run.agent_file or {}).get("trusted")):
            return "result.json's agent_isolation is not how the run's agent file runs"
    name = res.get("agent")
    if not mcp and run.agent in MODEL_AGENTS:
        cfg = run.model or {}
        if name != f"{run.agent}:{cfg.get('name') or cfg.get('model')}":
            return f"the episode's agent {str(name)[:40]!r} is not the run's {run.agent!r}"
    elif not run.agent.endswith(".py") and name != run.agent:
        return f"the episode's agent {str(name)[:40]!r} is not the run's {run.agent!r}"
    return ""


def _event_folders(d: Path) -> list[Path]:
    if (d / "events.jsonl").is_file():
        return [d]
    return sorted(p for p in d.iterdir() if p.is_dir() and (p / "events.jsonl").is_file())


def _episode_dirs(folder: Path) -> tuple[list[Path], list[str]]:
    """(the episode folders of a run: <objective>/<episode>[.attempt-N|.interrupted-N],
    folders holding episode files anywhere else)."""
    eps, stray = [], []
    for p in sorted(folder.rglob("events.jsonl")):
        rel = p.parent.relative_to(folder).parts
        if len(rel) == 3 and rel[2].startswith("level_"):
            rel = rel[:2]                         # a level-protocol episode's level folder
        if len(rel) != 2 or not (re.fullmatch(r"episode_\d+", rel[1]) or SUPERSEDED.match(rel[1])):
            stray.append("/".join(p.parent.relative_to(folder).parts))
            continue
        d = folder / rel[0] / rel[1]
        if d not in eps:
            eps.append(d)
    return eps, stray


def first_difference(got, want, path: str) -> str:
    """The first place two JSON values differ, as "<path> differs (recorded X, recomputed Y)";
    "" when equal."""
    if type(got) is dict and type(want) is dict:
        for k in sorted(set(got) | set(want), key=str):
            if k not in want:
                return f"{path}.{k} is not something the run records"
            if k not in got:
                return f"{path}.{k} is missing"
            why = first_difference(got[k], want[k], f"{path}.{k}")
            if why:
                return why
        return ""
    if type(got) is list and type(want) is list and len(got) == len(want):
        for i, (a, b) in enumerate(zip(got, want)):
            why = first_difference(a, b, f"{path}[{i}]")
            if why:
                return why
        return ""
    if got != want:
        return f"{path} differs (recorded {_short(got)}, recomputed {_short(want)})"
    return ""


def _short(v) -> str:
    s = json.dumps(v, sort_keys=True, default=str)
    return s if len(s) <= 60 else s[:57] + "..."


# ---- the verification record ----------------------------------------------------------------

def file_digest(p: Path) -> str:
    """The SHA-256 of a file, read in blocks."""
    h = hashlib.sha256()
    with open(p, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _verified_files(folder: Path) -> list[str]:
    """Every file a verification reads, relative to the run folder, sorted."""
    out = [n for n in ("run.json", "summary.json") if (folder / n).is_file()]
    for name in ("events.jsonl", "result.json", "frames.lpf"):
        out += [str(p.relative_to(folder)) for p in folder.rglob(name)]
    eps, _ = _episode_dirs(folder)
    out += [str((d / "result.json").relative_to(folder)) for d in eps if (d / "result.json").is_file()]
    return sorted(set(out))


def _key() -> bytes:
    """This user's key for verification records (``verify.key`` in longpuzzle's cache
    folder, or the file $LONGPUZZLE_VERIFY_KEY names): made once, readable by the user only."""

    p = Path(os.environ.get("LONGPUZZLE_VERIFY_KEY") or Path(cache_dir()) / "verify.key")
    try:
        return p.read_bytes()
    except FileNotFoundError:
        p.parent.mkdir(parents=True, exist_ok=True)
        key = os.urandom(32)
        fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(key)
        return key
    except FileExistsError:  # pragma: no cover - made by another process meanwhile
        return p.read_bytes()


def _seal(body: dict) -> str:
    text = json.dumps(body, sort_keys=True, separators=(",", ":"))
    return hmac.new(_key(), text.encode("utf-8"), hashlib.sha256).hexdigest()


def write_verification(folder: Path, chk: RunCheck) -> Path:
    """The verification record of a verified run (module doc)."""

    body = {"format": RECORD_FORMAT, "checks": CHECKS_VERSION,
            "verified_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
            "files": {f: file_digest(folder / f) for f in _verified_files(folder)}, "checked": chk.checked}
    doc = {**body, "seal": _seal(body)}
    tmp = folder / (RECORD_FILE + ".tmp")
    tmp.write_text(json.dumps(doc, indent=1), encoding="utf-8")
    os.replace(tmp, folder / RECORD_FILE)
    return folder / RECORD_FILE


def read_record(folder: Path) -> dict | None:
    """The run's verification record when it is valid: sealed with this user's key, written
    by a replay that checks what this one does, and every file it names (and no other
    that a verification reads) unchanged; else None."""
    p = folder / RECORD_FILE
    if not p.is_file():
        return None
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
        body = {k: v for k, v in doc.items() if k != "seal"}
        if doc.get("format") != RECORD_FORMAT or doc.get("checks") != CHECKS_VERSION or \
                not hmac.compare_digest(str(doc.get("seal")), _seal(body)):
            return None
        files = doc["files"]
        if sorted(files) != _verified_files(folder):
            return None
        if any(file_digest(folder / f) != h for f, h in files.items()):
            return None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    return doc
