"""Replaying an episode folder (every frame hash, private record and the result checked),
restoring any recorded step exactly, and continuing an episode from there (interventions)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from longpuzzle.agents.base import BaseAgent
from longpuzzle.agents.evaluator import Evaluator
from longpuzzle.agents.harness.feedback import FeedbackTracker
from longpuzzle.agents.harness.objective import run_objective
from longpuzzle.agents.harness.results import EpisodeResult
from longpuzzle.agents.harness.run import Run
from longpuzzle.agents.harness.settings import HarnessError, Settings
from longpuzzle.agents.harness.frames import FRAMES_FILE, LEGACY_DIR, FrameStoreError, hasher, open_frames
from longpuzzle.agents.harness.trajectory import Trajectory, read_episode, read_events
from longpuzzle.engine.suite import Suite
from longpuzzle.render.frame import renderer


@dataclass
class ReplayReport:
    ok: bool
    steps: int
    divergence: str = ""
    complete: bool = True        # False: an interrupted (killed) episode, checked as a prefix
    note: str = ""               # what was not there to check (interrupted episode)
    frames: int = 0              # frames re-rendered and compared with the recorded hashes
    stored_frames: bool = False  # the folder's stored frames were decoded and checked too

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def replay_episode(folder: str | Path) -> ReplayReport:
    """Re-run the recorded actions from the recorded start; check every frame hash, every
    private record and the result, and every stored frame (decoded, its pixels hashed and
    compared with the recorded hash). Reports the first divergence. An episode that was
    killed (no end record, no result.json) is checked as a prefix: every recorded step
    must replay exactly, a last line cut off by the kill is dropped, a last step without
    its private record is checked on its public record alone; ``complete`` is False and
    ``note`` says what was missing."""
    ev_lines, cut_off = read_episode(folder)
    head = ev_lines[0]
    hf = hasher(head.get("frame_hash"))
    has_end = any(r.get("type") == "end" for r in ev_lines)
    has_result = (Path(folder) / "result.json").is_file()
    if has_result and not has_end:
        return ReplayReport(False, 0, "result.json exists but events.jsonl has no end record")
    store = None
    if (Path(folder) / FRAMES_FILE).is_file() or (Path(folder) / LEGACY_DIR).is_dir():
        try:
            store = open_frames(folder)
        except FrameStoreError as e:
            return ReplayReport(False, 0, str(e))
    rep = _replay(ev_lines, head, hf, store)
    if store is not None:
        store.close()
    notes = []
    if not has_end:
        notes.append("interrupted: no end record and no result.json")
    elif not has_result:
        notes.append("interrupted after the end record: no result.json")
    if cut_off:
        notes.append("the last line of events.jsonl was cut off and is ignored")
    if rep.note:
        notes.append(rep.note)
    rep.complete = has_end and has_result
    rep.stored_frames = store is not None
    rep.note = "; ".join(notes)
    if rep.ok and store is not None and has_end and len(store) != rep.frames:
        rep.ok, rep.divergence = False, f"{len(store)} frames are stored but the events name {rep.frames}"
    return rep


class _Hashes(Trajectory):
    """A trajectory that writes nothing and hashes as the replayed folder did."""

    def __init__(self, hf):
        super().__init__(None)
        self._hf = hf
        self.recent: list[str] = []

    def frame(self, frame):
        self.n_frames += 1
        h = self._hf(frame)
        self.recent.append(h)
        return h


def _check_stored(store, k: int, want: str) -> str:
    """'' if stored frame k exists, decodes to pixels with hash ``want``; else what is wrong."""
    if store is None:
        return ""
    if k >= len(store):
        return f"frame {k} is not stored"
    try:
        if store.hash(k) != want or not store.verify(k):
            return f"stored frame {k} differs from the recorded frame"
    except FrameStoreError as e:
        return str(e)
    return ""


def _replay(ev_lines, head, hf, store) -> ReplayReport:
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
    rend = renderer(suite.style, suite.scale, suite.viewport)
    run = Run.__new__(Run)
    run.suite, run.ev, run.st, run.rend = suite, ev, st, rend
    run.traj = _Hashes(hf)
    f0 = rend.render(suite)
    if hf(f0) != head["frame"]:
        return ReplayReport(False, 0, "the first frame differs")
    bad = _check_stored(store, 0, head["frame"])
    if bad:
        return ReplayReport(False, 0, bad)
    n_frames = 1
    run.last_frame = f0
    run.fb_tracker = FeedbackTracker(head["frame"])
    run.step = 0
    run.need_wait = bool(head.get("first_wait", False))
    run.level_presses = {}
    ev.observe(suite, [])
    steps = 0
    pending_private = None
    last = len(ev_lines) - 1
    note = ""
    for pos, rec in enumerate(ev_lines[1:], 1):
        if rec.get("stream") == "public" and "action" in rec:
            run.traj.recent = []
            fb, prv, frames, _ = run.do(rec["action"], 0.0, rec.get("cut_at"))
            steps += 1
            hashes = run.traj.recent
            if hashes != rec["frames"]:
                return ReplayReport(False, steps, f"step {rec['step']}: frames differ", frames=n_frames)
            if fb.__dict__ != rec["feedback"]:
                return ReplayReport(False, steps, f"step {rec['step']}: public feedback differs",
                                    frames=n_frames)
            for h in hashes:
                bad = _check_stored(store, n_frames, h)
                if bad:
                    return ReplayReport(False, steps, f"step {rec['step']}: {bad}", frames=n_frames)
                n_frames += 1
            if pos == last:
                note = f"step {rec['step']} has no private record (interrupted); checked on its public record"
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
    return ReplayReport(True, steps, note=note, frames=n_frames)


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
