"""Reading what ``longpuzzle eval`` wrote, for the report, the analytics, the leaderboard and
the video: run folders, episode folders, stored frames, and a run's identity.

    run folder       summary.json (agent, protocol, settings, metrics, per-objective rows,
                     one entry per episode) and one folder per objective with its episodes
    episode folder   events.jsonl (header; per action a public and a private record; an end
                     line), the stored frames, result.json. A level-protocol episode keeps
                     result.json at its top and one such folder per level (level_01, ...).

A run's identity is what two runs must share to be pooled into one leaderboard row: the
agent and model, the provider, the harness configuration (the settings), the protocol, the
action setting, the level catalogue and the evaluation preset (IDENTITY_KEYS). Every key is read from the data
(summary.json first, its settings next); a key a run does not record is ``None`` and only
matches ``None``, so runs are never merged on a guess.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from longpuzzle.agents.harness import HarnessError, read_events
from longpuzzle.agents.harness.snapshots import StateRebuilder
from longpuzzle.agents.metrics import EpisodeOutcome, LevelOutcome, aggregate, json_ready
from longpuzzle.agents.verify import check_episode, check_run, file_digest, is_run_folder, read_json
from longpuzzle.agents.harness.frames import FrameStoreError, open_frames
from longpuzzle.agents.harness.recompute import screen_shape
from longpuzzle.agents.harness.trajectory import read_header

# key -> where it is read from, first hit wins: a top-level summary field, else a settings field
IDENTITY_KEYS: dict[str, tuple[str, ...]] = {
    "agent": ("agent",),
    "model": ("model",),
    "provider": ("provider",),
    "harness": ("harness",),            # else the settings (below)
    "protocol": ("protocol",),
    "setting": ("setting", "action_setting"),
    "catalog": ("catalog", "catalogue"),
    # the evaluation preset (agents/harness/presets.py: paper, fast, repo, with any options that
    # changed it): runs of different presets are different conditions
    "preset": ("preset",),
}
# settings fields that do not change what an agent faces or how it is scored
NOT_IDENTITY_SETTINGS = ("save_frames",)


def episode_folders(root: str | Path) -> list[Path]:
    """Every folder at or below ``root`` that holds an episode's events.jsonl, sorted."""
    root = Path(root)
    return sorted(p.parent for p in root.rglob("events.jsonl"))



def episode_catalog(header: dict):
    """The catalogue an episode's header records (replay.recorded_catalog: the built-in one,
    or the stored snapshot of that name and version, checked by hash); the built-in one where
    that is not available here (what a report read before catalogues were recorded)."""
    from longpuzzle.agents.harness.replay import recorded_catalog
    from longpuzzle.engine.catalog import builtin_catalog

    try:
        return recorded_catalog(header.get("catalog"))
    except HarnessError:
        return builtin_catalog()

# ---- frames ---------------------------------------------------------------------------

def stored_frames(folder: str | Path):
    """The stored frames of an episode folder (the harness's one reading API,
    ``open_frames``: ``len``, ``read(i)``), or None where the episode stored no frames."""

    try:      # of the size the episode's screen makes only: a forged file header is never decoded
        fs = open_frames(folder, screen_shape(read_header(folder)))
    except (FrameStoreError, HarnessError):
        return None
    if len(fs) == 0:
        fs.close()
        return None
    return fs


# ---- one episode's trajectory -------------------------------------------------------

@dataclass
class Step:
    """One recorded action: what was dispatched (public) and what the evaluator saw (private)."""
    step: int
    action: dict | None                 # as validated and dispatched; None for a final answer
    feedback: dict
    frames: list[str]                   # hashes of the frames this action produced
    first_frame: int                    # stored index of frames[0] (if any)
    record: dict                        # the private record after the action
    snapshot: str | None = None         # exact suite snapshot after the action
    final_answer: str | None = None


@dataclass
class Trajectory:
    folder: Path
    header: dict
    steps: list[Step]
    end: dict | None                    # the end line (None: the episode was cut short)

    @property
    def level(self) -> str | None:
        """The level of a level-protocol trajectory (None for an objective episode)."""
        return self.header.get("level")


def load_trajectory(folder: str | Path) -> Trajectory:
    """One events.jsonl folder, public and private records paired by step."""
    folder = Path(folder)
    lines = read_events(folder)
    head, steps, end = lines[0], [], None
    states = StateRebuilder(head["start"]) if head.get("start") else None     # each step's exact state
    pending: dict[int, dict] = {}
    n_frames = 1                                  # frame 0: the first observation
    for rec in lines[1:]:
        if rec.get("stream") == "public":
            if "final_answer" in rec:
                steps.append(Step(rec["step"], None, {}, [], n_frames, {}, final_answer=rec["final_answer"]))
                continue
            pending[rec["step"]] = rec
        elif rec.get("stream") == "private":
            pub = pending.pop(rec["step"], {})
            hashes = pub.get("frames", [])
            snap = None
            if states is not None and ("snapshot" in rec or "suite" in rec):
                states.apply(rec)
                snap = states.snapshot()
            steps.append(Step(rec["step"], pub.get("action"), pub.get("feedback", {}), hashes, n_frames,
                              rec.get("record", {}), snap))
            n_frames += len(hashes)
        elif rec.get("type") == "end":
            end = rec
    return Trajectory(folder, head, steps, end)


def episode_trajectories(folder: str | Path) -> list[Trajectory]:
    """An episode's trajectories in order: the folder itself, or a level-protocol episode's
    level_01, level_02, ... folders."""
    folder = Path(folder)
    if (folder / "events.jsonl").is_file():
        return [load_trajectory(folder)]
    subs = sorted(p for p in folder.iterdir() if p.is_dir() and (p / "events.jsonl").is_file()) \
        if folder.is_dir() else []
    if not subs:
        raise HarnessError(f"{folder} is not an episode folder (no events.jsonl in it or its level folders)")
    return [load_trajectory(p) for p in subs]


def snapshot_state(snapshot: str | None) -> tuple | None:
    """The exact puzzle state inside a suite snapshot (a tuple, hashable), or None off a level."""
    if not snapshot:
        return None
    s = json.loads(snapshot)
    sess = s.get("session")
    if not sess:
        return None
    sess = json.loads(sess) if isinstance(sess, str) else sess
    st = sess.get("state")
    return tuple(st) if st is not None else None


# ---- runs ---------------------------------------------------------------------------

@dataclass
class RunData:
    """One eval output folder (or a lone episode folder, read as a run of one episode)."""
    folder: Path
    summary: dict
    episodes: list[dict]                         # summary["episodes"], each with "dir" resolved
    identity: dict = field(default_factory=dict)
    verified: str = ""                           # how its numbers were verified (load_verified_run)
    trusted: bool = False                        # verified; False: shown with --unverified, marked

    @property
    def label(self) -> str:
        return identity_label(self.identity)


def load_verified_runs(dirs, unverified: bool = False) -> list[RunData]:
    """load_verified_run of each folder; no episode may be in two of them (the same events
    digest: a run copied, or an episode copied from one run into another)."""
    runs = [load_verified_run(d, unverified) for d in dirs]
    seen: dict[str, Path] = {}
    for r in runs:
        for p in episode_folders(r.folder):
            h = file_digest(p / "events.jsonl")
            if h in seen and seen[h] != r.folder:
                why = f"it holds the same episode as {seen[h]} ({p.relative_to(r.folder)})"
                if not unverified:
                    raise HarnessError(f"{r.folder}: not verified: {why} (shown only with --unverified)")
                if r.trusted:                 # (the first difference is named)
                    r.verified, r.trusted = f"UNVERIFIED: {why}", False
            seen.setdefault(h, r.folder)
    return runs


def load_verified_run(folder: str | Path, unverified: bool = False) -> RunData:
    """A run whose numbers were verified (issue 35): a run folder by its verification record
    (verified.json, written by ``longpuzzle replay RUN_DIR`` and still matching every file)
    or else by replaying it now (verify.check_run); a lone episode folder by replaying it.
    A run that does not verify is refused with HarnessError naming the first difference;
    with ``unverified`` it is returned anyway, marked (``trusted`` False)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise HarnessError(f"{folder} is not a folder")
    if is_run_folder(folder):
        chk = check_run(folder)
        ok, why = chk.ok, chk.first
        how = "verified by its verification record" if chk.source == "record" else "verified by replaying it"
    elif (folder / "events.jsonl").is_file() or (folder / "result.json").is_file():
        rep = check_episode(folder)
        ok = rep["ok"] and rep.get("complete", True) and (folder / "result.json").is_file()
        why = rep.get("divergence") or rep.get("note") or "the episode did not finish"
        how = "verified by replaying it"
    else:
        raise HarnessError(f"{folder} holds no eval results (no summary.json, no result.json)")
    if not ok and not unverified:
        raise HarnessError(f"{folder}: not verified: {why} (shown only with --unverified)")
    run = load_run(folder)
    run.verified, run.trusted = (how, True) if ok else (f"UNVERIFIED: {why}", False)
    return run


def load_run(folder: str | Path) -> RunData:
    folder = Path(folder)
    if not folder.is_dir():
        raise HarnessError(f"{folder} is not a folder")
    if (folder / "summary.json").is_file():
        summary = read_json(folder / "summary.json", "run summary")
        eps = [dict(e) for e in summary.get("episodes", [])]
        seen: dict[str, int] = {}
        for e in eps:
            k = seen[e.get("objective", "")] = seen.get(e.get("objective", ""), 0) + 1
            # eval's layout, for runs that did not record their folders: <objective>/episode_<k>
            default = f"{str(e.get('objective', '')).replace('/', '_')}/episode_{k:03d}"
            e["dir"] = _episode_dir(folder, e.get("folder") or default)
    elif (folder / "result.json").is_file():       # one episode folder on its own
        res = read_json(folder / "result.json", "episode result")
        res["dir"] = folder
        eps = [res]
        summary = {"agent": res.get("agent"), "protocol": res.get("protocol", "").split(":")[0] or None,
                   "episodes": [res]}
        head = read_events(episode_folders(folder)[0])[0] if episode_folders(folder) else {}
        summary["settings"] = head.get("settings", {})
        summary["metrics"] = res.get("metrics") or run_metrics([res])[0]
    else:
        raise HarnessError(f"{folder} holds no eval results (no summary.json, no result.json)")
    run = RunData(folder, summary, eps)
    run.identity = run_identity(summary)
    return run


def _episode_dir(run_folder: Path, recorded: str) -> Path | None:
    """Where an episode of a run is now: the recorded path may be relative to another
    working directory, or the run folder may have moved; the last two parts
    (objective folder / episode folder) are the run's own layout."""
    if not recorded:
        return None
    p = Path(recorded)
    for cand in (run_folder / p.parent.name / p.name, run_folder / p.name, p):
        if cand.is_dir():
            return cand
    return None


def _canon(v):
    if isinstance(v, float) and math.isnan(v):
        return None
    return v


def run_identity(summary: dict) -> dict:
    """The identity of a run (IDENTITY_KEYS), read from its summary."""
    settings = summary.get("settings") or {}
    out = {}
    for key, names in IDENTITY_KEYS.items():
        v = None
        for n in names:
            if summary.get(n) is not None:
                v = summary[n]
                break
            if settings.get(n) is not None:
                v = settings[n]
                break
        out[key] = _canon(v)
    if out["harness"] is None:
        out["harness"] = {k: v for k, v in sorted(settings.items()) if k not in NOT_IDENTITY_SETTINGS
                          and k not in IDENTITY_KEYS}
    # the level protocol's chain mode is in each episode's protocol ("level:progressive")
    protos = sorted({e.get("protocol") for e in summary.get("episodes", []) if e.get("protocol")})
    if len(protos) == 1 and ":" in protos[0]:
        out["protocol"] = protos[0]
    return out


def identity_key(identity: dict) -> str:
    """A canonical text of an identity (equal identities, equal keys)."""
    return json.dumps(identity, sort_keys=True, separators=(",", ":"), default=str)


def identity_label(identity: dict) -> str:
    """Short human name: the model (or agent), then the provider if any."""
    name = identity.get("model") or identity.get("agent") or "?"
    if isinstance(name, dict):
        name = name.get("name") or json.dumps(name, sort_keys=True)
    elif isinstance(name, str) and name.endswith(".py"):        # an agent file: its name
        name = Path(name).stem
    prov = identity.get("provider")
    return f"{name} ({prov})" if prov else str(name)


def harness_label(identity: dict) -> str:
    """A short, stable name of a harness configuration, readable on its own: the settings
    people compare most (style, budget) spelled out, then the digest of all of them, which
    tells configurations apart that differ elsewhere ("preset paper, 2D screens, 3600 s
    budget, settings 09baf1")."""
    h = identity.get("harness")
    if not isinstance(h, dict):
        return str(h) if h is not None else "-"
    digest = hashlib.sha256(json.dumps(h, sort_keys=True, default=str).encode()).hexdigest()[:6]
    bits = [f"preset {identity['preset']}"] if identity.get("preset") else []
    if h.get("style"):
        bits.append(f"{str(h['style']).upper()} screens")
    if h.get("budget") is not None:
        bits.append(f"{h['budget']:g} s budget")
    if h.get("max_actions") is not None:
        bits.append(f"at most {h['max_actions']} actions")
    return ", ".join(bits + [f"settings {digest}"])


def catalog_label(identity: dict) -> str:
    c = identity.get("catalog")
    if c is None:
        return "default"
    if isinstance(c, dict):
        name = c.get("name", "?")
        h = c.get("hash") or c.get("sha256")
        return f"{name} #{str(h)[:8]}" if h else str(name)
    return str(c)


# ---- metrics from episode entries -----------------------------------------------------

def episode_outcome(ep: dict):
    """The metrics' EpisodeOutcome of one summary/result episode entry."""

    game, difficulty = ep["objective"].split("/")
    levels = [LevelOutcome(bool(l.get("reached")), bool(l.get("won")), float(l.get("max_P") or 0.0))
              for l in ep.get("levels_outcome", [])]
    extra = {k: ep[k] for k in EpisodeOutcome.__dataclass_fields__
             if k in ep and k not in ("game", "difficulty", "levels")}
    return EpisodeOutcome(game, difficulty, levels, **extra)


def run_metrics(episodes: list[dict]) -> tuple[dict, list[dict]]:
    """(metrics, per-objective rows) of pooled episode entries, computed as ``eval`` does:
    the paper's metrics by ``metrics.aggregate`` and the composite score as the macro mean
    of the game x difficulty cells."""

    outs = [episode_outcome(e) for e in episodes]
    m = aggregate(outs)
    per_obj = m.pop("objectives")
    cells: dict[str, list[float]] = {}
    for e, o in zip(episodes, outs):
        lv = e.get("levels") or []
        if o.scored and lv and all("score" in l for l in lv):
            cells.setdefault(e["objective"], []).append(sum(l["score"] for l in lv) / len(lv))
    scores = {k: sum(v) / len(v) for k, v in cells.items()}
    m["score"] = sum(scores.values()) / len(scores) if scores else None
    return json_ready(m), json_ready(per_obj)

