"""Episodes: an agent in front of the suite, measured by the private evaluator.

Protocols
    objective   the paper's: start on the home screen with one instruction ("Complete all
                levels of <game> at <difficulty> difficulty"); the agent navigates, solves the
                objective's levels in order, advances and restarts through the game's own
                controls. One wall-clock budget (agent time included) and optionally a maximum
                number of actions cover the whole objective. Ends at full completion, at the
                agent's FinalAnswer, at the budget, or on an agent error.
    level       the original repository's: every level launched directly, with the per-game
                step and play-time limits, the 3-consecutive-invalid-actions limit and the
                no-progress / repeating-cycle rule (HARNESS.md sections 3 and 6); the chain is
                ``progressive`` (stops at the first failed level) or ``all_levels``.

Each episode writes, as it goes (a crash leaves a valid prefix), into its folder:
    events.jsonl   a header line, then per action one "public" record (the action as
                   dispatched, timings, public feedback, frame hashes) and one "private"
                   record (the evaluator's, with an exact suite snapshot), then an end line
    frames/        every frame as lossless PNG (000000.png is the first observation)
    result.json    the outcome and metrics
"""

from __future__ import annotations

import concurrent.futures as cf
import hashlib
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from longpuzzle.agents.base import (
    DISPATCH_FAILED, NO_VISIBLE_EFFECT, RETURNED_TO_RECENT, SCREEN_CHANGED, WAIT_COMPLETED,
    AgentError, BaseAgent, Feedback, FinalAnswer, Observation, action_spec, make_frame,
)
from longpuzzle.agents.evaluator import CERTIFY_BUDGET, Evaluator
from longpuzzle.agents.metrics import BENCHMARK, LevelRun, aggregate, level_score
from longpuzzle.engine import gui
from longpuzzle.engine.catalog import catalog
from longpuzzle.engine.errors import LongPuzzleError
from longpuzzle.engine.registry import get_puzzle
from longpuzzle.engine.suite import Suite
from longpuzzle.render.frame import renderer

EVENTS_FORMAT = "longpuzzle-episode/1"
DEFAULT_BUDGET = 3600.0
DEFAULT_ACTION_TIMEOUT = 120.0


def instruction_for(game: str, difficulty: str) -> str:
    return f"Complete all levels of {get_puzzle(game).title} at {difficulty} difficulty."


def frame_hash(frame: np.ndarray) -> str:
    """Content hash of a frame's pixels (SHA-1: hardware-accelerated, used for identity only)."""
    return hashlib.sha1(memoryview(np.ascontiguousarray(frame)).cast("B")).hexdigest()


class HarnessError(LongPuzzleError):
    """A harness-level problem (bad settings, an unreadable episode folder)."""


# ---- trajectory output ----------------------------------------------------------------

class Trajectory:
    """Writes an episode folder incrementally (every line flushed as it happens)."""

    def __init__(self, folder: Path | None, save_frames: bool = True):
        self.folder = Path(folder) if folder else None
        self.save_frames = save_frames and self.folder is not None
        self.n_frames = 0
        self._f = None
        # PNG encoding runs on a writer thread (zlib releases the GIL); close() waits for it
        self._png = cf.ThreadPoolExecutor(max_workers=1, thread_name_prefix="png") if self.save_frames else None
        self._pending: list[cf.Future] = []
        if self.folder is not None:
            (self.folder / "frames").mkdir(parents=True, exist_ok=True)
            self._f = open(self.folder / "events.jsonl", "w", encoding="utf-8")

    def write(self, rec: dict) -> None:
        if self._f is not None:
            self._f.write(json.dumps(rec, separators=(",", ":")) + "\n")
            self._f.flush()

    def frame(self, frame: np.ndarray) -> str:
        h = frame_hash(frame)
        if self._png is not None:
            path = self.folder / "frames" / f"{self.n_frames:06d}.png"
            self._pending = [f for f in self._pending if not f.done()]
            if len(self._pending) > 64:          # bound the memory held by queued frames
                self._pending[0].result()
            self._pending.append(self._png.submit(_write_png, frame, path))
        self.n_frames += 1
        return h

    def result(self, res: dict) -> None:
        if self.folder is not None:
            tmp = self.folder / "result.json.tmp"
            tmp.write_text(json.dumps(res, indent=1), encoding="utf-8")
            os.replace(tmp, self.folder / "result.json")

    def close(self) -> None:
        if self._png is not None:
            self._png.shutdown(wait=True)
            for f in self._pending:
                f.result()                        # surface a write error
            self._png = None
        if self._f is not None:
            self._f.close()
            self._f = None


def _write_png(frame: np.ndarray, path: Path) -> None:
    from PIL import Image
    Image.fromarray(frame).save(path, compress_level=1)


# ---- the agent call -------------------------------------------------------------------

class _AgentCaller:
    """Calls agent.act with a per-action timeout; errors become AgentError."""

    def __init__(self, agent: BaseAgent, timeout: float | None):
        self.agent = agent
        self.timeout = timeout
        self._pool = cf.ThreadPoolExecutor(max_workers=1, thread_name_prefix="agent") if timeout else None

    def __call__(self, fn, *args):
        if self._pool is None:
            try:
                return fn(*args)
            except Exception as e:       # noqa: BLE001 - any agent failure ends its episode
                raise AgentError("raised", f"{type(e).__name__}: {e}") from e
        fut = self._pool.submit(fn, *args)
        try:
            return fut.result(timeout=self.timeout)
        except cf.TimeoutError:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
            raise AgentError("timeout", f"no action within {self.timeout:g} s") from None
        except Exception as e:           # noqa: BLE001
            raise AgentError("raised", f"{type(e).__name__}: {e}") from e

    def close(self):
        if self._pool is not None:
            self._pool.shutdown(wait=False)


# ---- public feedback ------------------------------------------------------------------

class FeedbackTracker:
    """Public feedback from frames alone (HARNESS.md section 5)."""

    def __init__(self, first_hash: str):
        self.recent = [first_hash]

    def status(self, action: dict, h: str) -> str:
        prev = self.recent[-1]
        older = self.recent[-5:-1]
        self.recent.append(h)
        self.recent = self.recent[-6:]
        if action["type"] == "wait" and h == prev:
            return WAIT_COMPLETED
        if h == prev:
            return NO_VISIBLE_EFFECT
        if h in older:
            return RETURNED_TO_RECENT
        return SCREEN_CHANGED


# ---- the no-progress / cycle rule of the level protocol --------------------------------

class CycleDetector:
    """HARNESS.md section 6: after >= no_progress_steps steps without a strict increase of P,
    if the last R*L post-action screens repeat with period L (L = 1..max_len), the episode ends:
    ``repeated_action_cycle`` if the last R*L actions repeat too, else ``no_progress``."""

    def __init__(self, cfg: dict | None = None):
        c = cfg or BENCHMARK["harness"]["cycle_detection"]
        self.window = c["action_window_size"]
        self.min_len, self.max_len = c["min_cycle_length"], c["max_cycle_length"]
        self.reps = c["required_repetitions"]
        self.no_progress_steps = c["no_progress_steps"]
        self.tol = c["coordinate_tolerance_px"]
        self.best = -1.0
        self.since = 0
        self.screens: list[str] = []
        self.actions: list[dict] = []

    def _same_action(self, a: dict, b: dict) -> bool:
        if a.get("type") != b.get("type") or a.get("direction") != b.get("direction"):
            return False
        for k in ("x", "y", "x0", "y0", "x1", "y1"):
            va, vb = a.get(k), b.get(k)
            if (va is None) != (vb is None):
                return False
            if va is not None and abs(va - vb) > self.tol:
                return False
        return True

    def step(self, action: dict, screen_hash: str, progress: float | None) -> str | None:
        p = -1.0 if progress is None else progress
        if p > self.best + 1e-9:
            self.best = p
            self.since = 0
        else:
            self.since += 1
        self.screens = (self.screens + [screen_hash])[-self.window:]
        self.actions = (self.actions + [action])[-self.window:]
        if self.since < self.no_progress_steps:
            return None
        for L in range(self.min_len, self.max_len + 1):
            n = self.reps * L
            if n > len(self.screens):
                break
            s = self.screens[-n:]
            if all(s[i] == s[i + L] for i in range(n - L)):
                a = self.actions[-n:]
                if all(self._same_action(a[i], a[i + L]) for i in range(n - L)):
                    return "repeated_action_cycle"
                return "no_progress"
        return None


# ---- episodes -------------------------------------------------------------------------

@dataclass
class Settings:
    style: str = "2d"
    scale: float = 1.0
    frames_per_move: int = 0
    budget: float | None = DEFAULT_BUDGET       # wall-clock seconds (objective protocol)
    max_actions: int | None = None
    action_timeout: float | None = DEFAULT_ACTION_TIMEOUT
    certify_budget: int = CERTIFY_BUDGET
    save_frames: bool = True

    def as_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass
class EpisodeResult:
    objective: str
    protocol: str
    agent: str
    end: str
    actions: int
    seconds: float
    outcome: Any                                 # metrics.EpisodeOutcome
    levels: list[dict] = field(default_factory=list)   # level protocol: per-level runs + scores
    error: str = ""
    folder: str = ""

    def as_dict(self) -> dict:
        o = self.outcome
        return {
            "objective": self.objective, "protocol": self.protocol, "agent": self.agent, "end": self.end,
            "actions": self.actions, "seconds": round(self.seconds, 3), "error": self.error,
            "success": o.success, "solved": o.solved_count, "target_levels": len(o.levels),
            "levels_outcome": [{"reached": l.reached, "won": l.won, "max_P": l.max_progress} for l in o.levels],
            "mismatch": o.mismatch, "budget_remaining": o.budget_remaining, "levels": self.levels,
        }


class _Run:
    """Shared machinery of one episode: suite, renderer, evaluator, trajectory, feedback."""

    def __init__(self, suite: Suite, evaluator: Evaluator, settings: Settings, folder, header: dict):
        self.suite = suite
        self.ev = evaluator
        self.st = settings
        self.rend = renderer(suite.style, suite.scale)
        self.traj = Trajectory(folder, settings.save_frames)
        frame = self.rend.render(suite)
        self.last_frame = frame
        h0 = self.traj.frame(frame)
        self.fb_tracker = FeedbackTracker(h0)
        self.traj.write({"type": "header", "format": EVENTS_FORMAT, **header, "settings": settings.as_dict(),
                         "start": suite.snapshot(), "frame": h0})
        self.step = 0

    def frames_of_action(self) -> list[np.ndarray]:
        out = []
        n = self.st.frames_per_move
        if n:
            for a in self.suite.anims:
                if a["t1"] > a["t0"]:
                    for i in range(n):
                        t = a["t0"] + (a["t1"] - a["t0"]) * (i + 1) / (n + 1)
                        out.append(self.rend.render(self.suite, int(t)))
        out.append(self.rend.render(self.suite))
        return out

    def do(self, raw_action: Any, t_agent: float) -> tuple[Feedback, dict, list[np.ndarray], dict | None]:
        """Validate and dispatch one action; record public and private streams."""
        self.step += 1
        t0 = time.perf_counter()
        try:
            a = gui.validate(raw_action, self.suite.frame_size)
        except gui.ActionError as e:
            fb = Feedback(DISPATCH_FAILED, False, str(e), 0)
            self.traj.write({"stream": "public", "step": self.step, "action": _jsonable_action(raw_action),
                             "t_agent": round(t_agent, 6), "feedback": fb.__dict__, "frames": []})
            rec = self.ev.observe(self.suite, [])
            rec["invalid_action"] = True
            self.traj.write({"stream": "private", "step": self.step, "record": rec})
            return fb, rec, [], None
        res = self.suite.dispatch(a)
        frames = self.frames_of_action()
        hashes = [self.traj.frame(f) for f in frames]
        status = self.fb_tracker.status(a, hashes[-1])
        fb = Feedback(status, True, "", len(frames))
        self.last_frame = frames[-1]
        t_disp = time.perf_counter() - t0
        self.traj.write({"stream": "public", "step": self.step, "action": a, "t_agent": round(t_agent, 6),
                         "t_dispatch": round(t_disp, 6), "feedback": fb.__dict__, "frames": hashes})
        rec = self.ev.observe(self.suite, res.effects)
        rec["effects"] = res.effects
        self.traj.write({"stream": "private", "step": self.step, "record": rec, "snapshot": self.suite.snapshot()})
        return fb, rec, frames, a


def _check_returned(action: Any) -> None:
    """An agent must return an action (a dict, possibly malformed: that is refused with a
    message and counted invalid) or a FinalAnswer; anything else is garbage and ends the
    episode as an agent error."""
    if not isinstance(action, (dict, FinalAnswer)):
        raise AgentError("garbage", f"act() returned {type(action).__name__}, not an action dict or FinalAnswer")


def _jsonable_action(a: Any) -> Any:
    try:
        json.dumps(a)
        return a
    except (TypeError, ValueError):
        return repr(a)


def run_objective(agent: BaseAgent, game: str, difficulty: str, *, settings: Settings | None = None,
                  folder: str | Path | None = None, start: str | Suite = "home",
                  instruction: str | None = None, evaluator: Evaluator | None = None,
                  agent_name: str | None = None) -> EpisodeResult:
    """One objective episode (the paper's protocol)."""
    st = settings or Settings()
    obj = catalog().objective(f"{game}/{difficulty}")
    suite = start if isinstance(start, Suite) else Suite(start, style=st.style, scale=st.scale)
    ev = evaluator or Evaluator(game, difficulty, st.certify_budget)
    text = instruction or instruction_for(game, difficulty)
    name = agent_name or getattr(agent, "name", type(agent).__name__)
    prior = {l: {"reached": o.reached, "won": o.won, "max_P": o.max_progress} for l, o in ev.outcomes.items()}
    run = _Run(suite, ev, st, folder, {"protocol": "objective", "objective": obj.id, "agent": name,
                                       "instruction": text, "evaluator_start": prior,
                                       "mismatch_start": ev.mismatch})
    ev.observe(suite, [])
    caller = _AgentCaller(agent, st.action_timeout)
    t_start = time.perf_counter()
    end, err = "budget", ""
    fb: Feedback | None = None
    extra: tuple = ()
    try:
        caller(agent.reset, text, action_spec(*suite.frame_size))
        while True:
            used = time.perf_counter() - t_start
            if st.budget is not None and used >= st.budget:
                end = "budget"
                break
            if st.max_actions is not None and run.step >= st.max_actions:
                end = "max_actions"
                break
            left = None if st.budget is None else st.budget - used
            obs = Observation(make_frame(run.last_frame), fb, run.step, left, extra)
            t_a = time.perf_counter()
            action = caller(agent.act, obs)
            t_agent = time.perf_counter() - t_a
            _check_returned(action)
            if isinstance(action, FinalAnswer):
                end = "final_answer"
                run.traj.write({"stream": "public", "step": run.step + 1, "final_answer": action.text})
                break
            fb, rec, frames, _ = run.do(action, t_agent)
            extra = tuple(make_frame(f) for f in frames[:-1])
            if ev.complete:
                end = "completed"
                break
    except AgentError as e:
        end, err = "agent_error", str(e)
    finally:
        caller.close()
    seconds = time.perf_counter() - t_start
    remaining = st.budget is None or seconds < st.budget
    outcome = ev.outcome(end, budget_remaining=remaining and end not in ("budget", "max_actions"))
    res = EpisodeResult(obj.id, "objective", name, end, run.step, seconds, outcome, error=err,
                        folder=str(folder or ""))
    scores = ev.level_scores(end)
    res.levels = [{"level": l, "score": round(sc, 4)} for l, sc in zip(ev.targets, scores)]
    out = res.as_dict()
    out["metrics"] = {k: v for k, v in aggregate([outcome]).items() if k != "objectives"}
    out["metrics"]["score"] = sum(scores) / len(scores)
    run.traj.write({"type": "end", "end": end, "error": err, "result": _result_core(out)})
    run.traj.result(out)
    run.traj.close()
    return res


def _result_core(d: dict) -> dict:
    """The part of a result that a replay must reproduce exactly."""
    return {k: d[k] for k in ("objective", "end", "actions", "success", "solved", "levels_outcome")}


# ---- the level protocol ------------------------------------------------------------------

def run_level_chain(agent: BaseAgent, game: str, difficulty: str, *, settings: Settings | None = None,
                    folder: str | Path | None = None, mode: str = "progressive",
                    agent_name: str | None = None) -> EpisodeResult:
    """The original repository's protocol: each level launched directly, per-game limits."""
    if mode not in ("progressive", "all_levels"):
        raise HarnessError("mode must be 'progressive' or 'all_levels'")
    st = settings or Settings()
    obj = catalog().objective(f"{game}/{difficulty}")
    cfg = BENCHMARK["games"][game]
    name = agent_name or getattr(agent, "name", type(agent).__name__)
    ev = Evaluator(game, difficulty, st.certify_budget)
    runs: list[dict] = []
    t_all = time.perf_counter()
    n_actions = 0
    end = "completed"
    stop = False
    for i, lid in enumerate(obj.level_ids):
        if stop:
            runs.append({"level": lid, "run": False, "score": 0.0})
            continue
        sub = Path(folder) / f"level_{i + 1:02d}" if folder else None
        r = _run_one_level(agent, lid, ev, st, cfg, sub, name)
        n_actions += r["steps"]
        runs.append(r)
        if not r["success"]:
            end = r["termination"]
            if mode == "progressive":
                stop = True
    seconds = time.perf_counter() - t_all
    outcome = ev.outcome(end if not ev.complete else "completed", budget_remaining=False)
    res = EpisodeResult(obj.id, f"level:{mode}", name, outcome.end, n_actions, seconds, outcome, levels=runs,
                        folder=str(folder or ""))
    if folder:
        out = res.as_dict()
        out["cell_score"] = sum(r["score"] for r in runs) / len(runs)
        Path(folder).mkdir(parents=True, exist_ok=True)
        (Path(folder) / "result.json").write_text(json.dumps(out, indent=1), encoding="utf-8")
    return res


def _run_one_level(agent, lid, ev: Evaluator, st: Settings, cfg: dict, folder, name) -> dict:
    suite = Suite(lid, style=st.style, scale=st.scale, direct=True)
    puzzle = suite.puzzle
    max_steps = st.max_actions or cfg["max_steps"]
    timeout_s = cfg["timeout_seconds"]
    text = instruction_for(suite.level.game, suite.level.difficulty) + f" (level {suite.level.number})"
    run = _Run(suite, ev, st, folder, {"protocol": "level", "level": lid, "agent": name, "instruction": text})
    ev.observe(suite, [])
    caller = _AgentCaller(agent, st.action_timeout)
    det = CycleDetector()
    invalid_run = invalid_total = repeated = noop = 0
    termination, err = "", ""
    fb = None
    prev_action = None
    try:
        caller(agent.reset, text, action_spec(*suite.frame_size))
        while True:
            if suite.session.solved:
                termination = "success"
                break
            if suite.clock / 1000.0 >= timeout_s:
                termination = "timeout"
                break
            if run.step >= max_steps:
                termination = "max_steps"
                break
            obs = Observation(make_frame(run.last_frame), fb, run.step, None)
            t_a = time.perf_counter()
            action = caller(agent.act, obs)
            t_agent = time.perf_counter() - t_a
            _check_returned(action)
            if isinstance(action, FinalAnswer):
                termination = "agent_terminated"
                break
            fb, rec, frames, a = run.do(action, t_agent)
            if not fb.executed:
                invalid_run += 1
                invalid_total += 1
                if invalid_run >= BENCHMARK["harness"]["invalid_action_limit"]:
                    termination = "invalid_action_limit"
                    break
                continue
            invalid_run = 0
            if fb.status == NO_VISIBLE_EFFECT:
                noop += 1
                if prev_action is not None and prev_action == a:
                    repeated += 1
            prev_action = a
            if suite.session.solved:
                termination = "success"
                break
            dl = puzzle.harness_deadlock(suite.level, suite.session.state)
            if dl:
                termination = dl
                break
            reason = det.step(a, run.fb_tracker.recent[-1], rec.get("P"))
            if reason:
                termination = reason
                break
    except AgentError as e:
        termination, err = "agent_error", str(e)
    finally:
        caller.close()
    s = suite.session
    success = termination == "success"
    game_invalid = s.counters.rejected + s.counters.noop_moves     # e.g. Maze Paint's wall bumps
    lr = LevelRun(puzzle.id, success, s.progress, steps=run.step, elapsed=suite.clock / 1000.0,
                  termination=termination, invalid=invalid_total + game_invalid, repeated=repeated, noop=noop,
                  max_steps=max_steps, optimal_moves=s.level.data.get("optimal_moves"), moves=s.counters.moves)
    score = level_score(lr)
    out = {"level": lid, "run": True, "success": success, "termination": termination, "steps": run.step,
           "elapsed": suite.clock / 1000.0, "progress": s.progress, "score": round(score, 4), "error": err}
    run.traj.write({"type": "end", "end": termination, "error": err, "result": out})
    run.traj.result(out)
    run.traj.close()
    return out


# ---- replay and restore ------------------------------------------------------------------

@dataclass
class ReplayReport:
    ok: bool
    steps: int
    divergence: str = ""

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def read_events(folder: str | Path) -> list[dict]:
    p = Path(folder) / "events.jsonl"
    if not p.is_file():
        raise HarnessError(f"{folder} is not an episode folder (no events.jsonl)")
    out = []
    with open(p, encoding="utf-8") as f:
        for i, line in enumerate(f):
            if not line.strip():
                continue
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                raise HarnessError(f"{p}: line {i + 1} is not valid JSON (truncated episode?)") from None
    if not out or out[0].get("type") != "header" or out[0].get("format") != EVENTS_FORMAT:
        raise HarnessError(f"{p}: missing or unknown header")
    return out


def replay_episode(folder: str | Path) -> ReplayReport:
    """Re-run the recorded actions from the recorded start; check every frame hash, every
    private record and the result. Reports the first divergence."""
    ev_lines = read_events(folder)
    head = ev_lines[0]
    suite = Suite.restore(head["start"])
    st = Settings(**{k: v for k, v in head["settings"].items() if k in Settings.__dataclass_fields__})
    if head["protocol"] == "objective":
        game, diff = head["objective"].split("/")
    else:
        lvl = suite.level
        game, diff = lvl.game, lvl.difficulty
    ev = Evaluator(game, diff, st.certify_budget)
    for lid, o in (head.get("evaluator_start") or {}).items():
        if lid in ev.outcomes:
            ev.outcomes[lid].reached, ev.outcomes[lid].won, ev.outcomes[lid].max_progress = \
                o["reached"], o["won"], o["max_P"]
    ev.mismatch = bool(head.get("mismatch_start", False))
    rend = renderer(suite.style, suite.scale)
    run = _Run.__new__(_Run)
    run.suite, run.ev, run.st, run.rend = suite, ev, st, rend
    run.traj = Trajectory(None)
    f0 = rend.render(suite)
    if frame_hash(f0) != head["frame"]:
        return ReplayReport(False, 0, "the first frame differs")
    run.last_frame = f0
    run.fb_tracker = FeedbackTracker(head["frame"])
    run.step = 0
    ev.observe(suite, [])
    steps = 0
    pending_private = None
    for rec in ev_lines[1:]:
        if rec.get("stream") == "public" and "action" in rec:
            fb, prv, frames, _ = run.do(rec["action"], 0.0)
            steps += 1
            hashes = [frame_hash(f) for f in frames]
            if hashes != rec["frames"]:
                return ReplayReport(False, steps, f"step {rec['step']}: frames differ")
            if fb.__dict__ != rec["feedback"]:
                return ReplayReport(False, steps, f"step {rec['step']}: public feedback differs")
            pending_private = prv
        elif rec.get("stream") == "private":
            want = rec["record"]
            got = pending_private or {}
            keys = ("screen", "level", "P", "win", "certificate", "restarts", "undos", "rejected")
            if any(got.get(k) != want.get(k) for k in keys):
                diff = [k for k in keys if got.get(k) != want.get(k)]
                return ReplayReport(False, steps, f"step {rec['step']}: evaluator record differs in {diff}")
            if "snapshot" in rec and suite.snapshot() != rec["snapshot"]:
                return ReplayReport(False, steps, f"step {rec['step']}: suite state differs")
        elif rec.get("type") == "end":
            want = rec["result"]
            if head["protocol"] == "objective":
                got = {"objective": head["objective"], "end": rec["end"], "actions": steps,
                       "success": ev.complete, "solved": sum(o.won for o in ev.outcomes.values()),
                       "levels_outcome": [{"reached": o.reached, "won": o.won, "max_P": o.max_progress}
                                          for o in (ev.outcomes[l] for l in ev.targets)]}
                if got != want:
                    return ReplayReport(False, steps, "the result differs")
            else:
                if bool(suite.session.solved) != bool(want["success"]) or want["steps"] != steps:
                    return ReplayReport(False, steps, "the result differs")
    return ReplayReport(True, steps)


def restore_step(folder: str | Path, step: int) -> Suite:
    """The exact suite after recorded action ``step`` (0 = the start)."""
    ev_lines = read_events(folder)
    if step == 0:
        return Suite.restore(ev_lines[0]["start"])
    for rec in ev_lines:
        if rec.get("stream") == "private" and rec.get("step") == step:
            if "snapshot" not in rec:
                raise HarnessError(f"step {step} was refused before dispatch; restore step {step - 1} instead")
            return Suite.restore(rec["snapshot"])
    raise HarnessError(f"{folder} has no step {step}")


def continue_episode(folder: str | Path, step: int, agent: BaseAgent, *, note: str = "",
                     settings: Settings | None = None, out: str | Path | None = None) -> EpisodeResult:
    """Restore recorded step ``step`` exactly and continue the objective episode from there with
    ``agent`` (the same or another), optionally with an extra instruction (an intervention)."""
    ev_lines = read_events(folder)
    head = ev_lines[0]
    if head["protocol"] != "objective":
        raise HarnessError("continuing is supported for objective episodes")
    game, diff = head["objective"].split("/")
    suite = restore_step(folder, step)
    st = settings or Settings(**{k: v for k, v in head["settings"].items() if k in Settings.__dataclass_fields__})
    ev = Evaluator(game, diff, st.certify_budget)
    # the evaluator's knowledge up to that step: replay its records
    for rec in ev_lines:
        if rec.get("stream") == "private" and rec.get("step", 0) <= step and rec["record"].get("level"):
            r = rec["record"]
            o = ev.outcomes.get(r["level"])
            if o is not None:
                o.reached = True
                o.max_progress = max(o.max_progress, r["P"] or 0.0)
                o.won = o.won or r["win"]
        if rec.get("stream") == "private" and rec.get("step", 0) <= step and rec["record"].get("mismatch"):
            ev.mismatch = True
    text = head["instruction"] + (f"\n{note}" if note else "")
    return run_objective(agent, game, diff, settings=st, folder=out, start=suite, instruction=text, evaluator=ev)
