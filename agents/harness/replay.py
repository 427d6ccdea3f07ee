"""Replaying an episode folder (every frame hash, private record and the result checked),
restoring any recorded step exactly, and continuing an episode from there (interventions)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from longpuzzle.agents.base import NO_VISIBLE_EFFECT, BaseAgent
from longpuzzle.agents.evaluator import Evaluator
from longpuzzle.agents.harness.feedback import FeedbackTracker
from longpuzzle.agents.harness.objective import run_objective
from longpuzzle.agents.harness.results import EpisodeResult, objective_results
from longpuzzle.agents.harness.run import Run
from longpuzzle.agents.harness.settings import HarnessError, Settings, refusal_limit
from longpuzzle.agents.harness.frames import (
    FRAMES_FILE, LEGACY_DIR, FrameStoreError, hasher, header_frame_hash, open_frames,
)
from longpuzzle.agents.harness.snapshots import StateRebuilder, SuiteStates
from longpuzzle.agents.harness.trajectory import Trajectory, read_episode, read_events
from longpuzzle.engine.catalog import catalog, use_catalog
from longpuzzle.engine.errors import LongPuzzleError
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
    checked: list = field(default_factory=list)       # what the replay verified
    not_checked: list = field(default_factory=list)   # what it could not verify, and why

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def replay_episode(folder: str | Path) -> ReplayReport:
    """Re-run the recorded actions from the recorded start and check everything a replay can:
    every frame hash (and every stored frame, decoded), every public feedback, every private
    record and suite snapshot, the end record, and result.json RECOMPUTED from what the
    suite did (success, levels, scores, moves, metrics: a forged ``success`` is a
    divergence). ``checked`` / ``not_checked`` say exactly what was and was not verified
    (real-time figures cannot be: the agent's time, a budget end).

    A folder that is not a well-formed episode is refused with HarnessError (one line): no
    or a malformed header, records missing keys or out of order, a step without its private
    record, records after the end, result.json without an end record, settings that make no
    sense. An episode that was killed (no end record, no result.json) is checked as a
    prefix: every recorded step must replay exactly, a last line cut off by the kill is
    dropped, a last step without its private record is checked on its public record alone;
    ``complete`` is False and ``note`` says what was missing.
    The episode is replayed on the catalogue it recorded (found by name and version,
    checked by hash)."""
    ev_lines, cut_off = read_episode(folder)
    head = ev_lines[0] if ev_lines and isinstance(ev_lines[0], dict) else {}
    with use_catalog(recorded_catalog(head.get("catalog"))):
        return _replay_folder(folder, ev_lines, cut_off)


def recorded_catalog(ident: dict | None):
    """The catalogue a result file names ({"name", "version", "hash"}): the one in use when it
    matches, else the stored snapshot of that name and version; HarnessError if none has the
    recorded hash."""
    from longpuzzle.engine.catalog_store import CatalogError, open_catalog

    cur = catalog()
    if not ident or ident.get("hash") == cur.content_hash:
        return cur
    label = ident.get("name") or "builtin"
    if ident.get("version") is not None:
        label = f"{label}@{ident['version']}"
    try:
        cat = open_catalog(label)
    except CatalogError as e:
        raise HarnessError(f"the episode ran on catalogue {label} (hash {str(ident.get('hash'))[:16]}), "
                           f"which is not available here: {e}") from None
    if cat.content_hash != ident.get("hash"):
        raise HarnessError(f"the episode ran on catalogue {label} with hash {str(ident.get('hash'))[:16]}, "
                           f"but {label} here has hash {cat.content_hash[:16]}")
    return cat


def _replay_folder(folder, ev_lines: list, cut_off) -> ReplayReport:
    head = ev_lines[0]
    hash_name = header_frame_hash(head)
    hf = hasher(hash_name)
    has_end = any(r.get("type") == "end" for r in ev_lines)
    has_result = (Path(folder) / "result.json").is_file()
    if has_result and not has_end:
        return ReplayReport(False, 0, "result.json exists but events.jsonl has no end record")
    result = _read_result(folder) if has_result else None
    _check_structure(ev_lines, folder)
    if len(ev_lines) == 1 and not has_result:
        raise HarnessError(f"{folder}: the episode holds only its header (no action was recorded)")
    store = None
    if (Path(folder) / FRAMES_FILE).is_file() or (Path(folder) / LEGACY_DIR).is_dir():
        try:
            store = open_frames(folder)
        except FrameStoreError as e:
            return ReplayReport(False, 0, str(e))
        if store.format == "lpf" and store.frame_hash != hash_name:
            store.close()
            return ReplayReport(False, 0, f"the stored frames' digests are {store.frame_hash} but the events' "
                                          f"frame hashes are {hash_name}")
    try:
        rep = _replay(ev_lines, head, hf, store, result)
    finally:
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
    if store is None:
        rep.not_checked.append("stored frames (none are stored: the episode ran with --no-frames)")
    return rep


def _read_result(folder) -> dict:
    from longpuzzle.engine.textio import read_text, loads
    p = Path(folder) / "result.json"
    doc = loads(read_text(p, HarnessError, str(p)), HarnessError, str(p))
    if type(doc) is not dict:
        raise HarnessError(f"{p} is not a JSON object")
    return doc


_PUBLIC = {"step": int, "action": object, "feedback": dict, "frames": list}
_HEADER = {"format": str, "protocol": str, "start": str, "settings": dict, "frame": str}


def _check_structure(lines: list[dict], folder) -> None:
    """Refuse (HarnessError, one line) a folder whose events are not a well-formed episode."""
    head = lines[0]
    where = f"{folder}/events.jsonl"
    for k, t in _HEADER.items():
        if type(head.get(k)) is not t and not (t is object and k in head):
            raise HarnessError(f"{where}: the header has no {k!r} (or it has the wrong type)")
    if head["protocol"] not in ("objective", "level"):
        raise HarnessError(f"{where}: unknown protocol {str(head['protocol'])[:40]!r}")
    if head["protocol"] == "objective" and type(head.get("objective")) is not str:
        raise HarnessError(f"{where}: the header has no objective")
    step, ended, pending = 0, False, None
    for i, rec in enumerate(lines[1:], 2):
        if ended:
            raise HarnessError(f"{where}: line {i} comes after the end record")
        if rec.get("type") == "end":
            if pending is not None:
                raise HarnessError(f"{where}: step {pending} has no private record (it was deleted?)")
            if type(rec.get("end")) is not str or type(rec.get("result")) is not dict:
                raise HarnessError(f"{where}: line {i}: the end record needs 'end' and 'result'")
            ended = True
            continue
        stream = rec.get("stream")
        if stream == "public":
            if pending is not None:
                raise HarnessError(f"{where}: step {pending} has no private record (it was deleted?)")
            if type(rec.get("step")) is not int or rec["step"] != step + 1:
                raise HarnessError(f"{where}: line {i}: step {str(rec.get('step'))[:20]} where step {step + 1} "
                                   "was due (records missing or out of order)")
            if "action" in rec:
                for k, t in _PUBLIC.items():
                    if k not in rec or t is not object and type(rec[k]) is not t:
                        raise HarnessError(f"{where}: line {i}: step {rec['step']} has no {k!r}")
                step = rec["step"]
                pending = step
            elif "final_answer" in rec or "late_action" in rec:
                step = rec["step"]                   # nothing was dispatched: no private record
            else:
                raise HarnessError(f"{where}: line {i}: a public record without an action")
        elif stream == "private":
            if rec.get("step") != pending or type(rec.get("record")) is not dict:
                raise HarnessError(f"{where}: line {i}: a private record of step {str(rec.get('step'))[:20]} "
                                   f"where {'step ' + str(pending) if pending else 'none'} was due")
            pending = None
        elif rec.get("type") == "header":
            raise HarnessError(f"{where}: line {i}: a second header")
        # other records (a driver's own lines, e.g. tool calls) are not part of the replay


class _Hashes(Trajectory):
    """A trajectory that writes nothing and hashes as the replayed folder did, every frame
    in full: the renderer's deltas are not trusted here (a delta that missed a change made
    the recorded hash wrong; hashing again from it would repeat the mistake)."""

    def __init__(self, hf):
        super().__init__(None)
        self._hf = hf
        self.recent: list[str] = []

    def frame(self, frame, delta=None):
        self.n_frames += 1
        h = self._hf(frame)
        self.recent.append(h)
        return h


class _Unrecorded:
    """The replayed Run's suite states: nothing is written (the replay checks each recorded
    state itself, in the form it was recorded in)."""

    def record(self, suite) -> dict:
        return {}


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


def _settings(head: dict) -> Settings:
    try:
        return Settings(**{k: v for k, v in head["settings"].items() if k in Settings.__dataclass_fields__})
    except (HarnessError, LongPuzzleError, TypeError) as e:
        raise HarnessError(f"the episode's recorded settings cannot be used: {e}") from None


def _replay(ev_lines, head, hf, store, result: dict | None) -> ReplayReport:
    try:
        suite = Suite.restore(head["start"])
    except LongPuzzleError as e:
        raise HarnessError(f"the episode's start cannot be restored: {e}") from None
    st = _settings(head)
    if head["protocol"] == "objective":
        try:
            game, diff = head["objective"].split("/")
            catalog().objective(head["objective"])
        except (ValueError, LongPuzzleError):
            raise HarnessError(f"the episode names an unknown objective {head['objective'][:60]!r}") from None
    else:
        if suite.level is None:
            raise HarnessError("a level-protocol episode must start on a level")
        lvl = suite.level
        game, diff = lvl.game, lvl.difficulty
    ev = Evaluator(game, diff, st.certify_budget)
    for lid, o in (head.get("evaluator_start") or {}).items():
        if lid in ev.outcomes and type(o) is dict:
            ev.outcomes[lid].reached, ev.outcomes[lid].won, ev.outcomes[lid].max_progress = \
                bool(o.get("reached")), bool(o.get("won")), float(o.get("max_P") or 0.0)
    ev.mismatch = bool(head.get("mismatch_start", False))
    rend = renderer(suite.style, suite.scale, suite.viewport, suite.lang)
    run = Run.__new__(Run)
    run.suite, run.ev, run.st, run.rend = suite, ev, st, rend
    run.traj = _Hashes(hf)
    run.presses = 0
    run.level_presses = {}
    run.on_action = None
    run.need_wait = bool(head.get("first_wait", False))
    run.states = _Unrecorded()
    # each recorded state is checked in the form it was recorded in
    states = SuiteStates(suite, elide=head.get("format") not in ("longpuzzle-episode/1", "longpuzzle-episode/2"))
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
    ev.observe(suite, [])
    steps = 0
    pending_private = None
    last = len(ev_lines) - 1
    note = ""
    summary_refusals = 0
    # limit: refused actions in a row that end the episode; limit_at: the action that first reached it
    tally = {"invalid": 0, "noop": 0, "repeated": 0, "prev": None, "final": None, "late": False, "last_refused": 0,
             "limit": refusal_limit(st.invalid_action_policy), "limit_at": None}
    ender = _LevelEnds(suite, st) if head["protocol"] == "level" else None
    for pos, rec in enumerate(ev_lines[1:], 1):
        if rec.get("stream") == "public" and "action" in rec:
            run.traj.recent = []
            raw = rec["action"]
            if rec["feedback"].get("executed") is False and _summary(raw):
                # refused and recorded in summary form (too large or unreadable to keep): the
                # refusal is taken as recorded, its reason cannot be re-derived
                fb, prv = run.refuse(raw, str(rec["feedback"].get("message", "")), 0.0)
                frames = []
                summary_refusals += 1
            else:
                cut = rec.get("cut_at")           # the deadline fell inside this action
                fb, prv, frames, a = run.do(raw, 0.0, cut if type(cut) is int else None)
            steps += 1
            if not fb.executed:
                tally["invalid"] += 1
                tally["last_refused"] += 1
                if tally["last_refused"] >= tally["limit"] and tally["limit_at"] is None:
                    tally["limit_at"] = steps
            else:
                tally["last_refused"] = 0
                if fb.status == NO_VISIBLE_EFFECT:
                    tally["noop"] += 1
                    if tally["prev"] is not None and tally["prev"] == a:
                        tally["repeated"] += 1
                tally["prev"] = a
            if ender is not None:
                ender.step(steps, fb, a if fb.executed else None, run.fb_tracker.recent[-1] if fb.executed else "",
                           prv or {}, tally["last_refused"])
            hashes = run.traj.recent
            if hashes != rec["frames"]:
                return ReplayReport(False, steps, f"step {rec['step']}: frames differ", frames=n_frames)
            want_fb = {k: v for k, v in rec["feedback"].items()}
            if fb.__dict__ != want_fb and not (summary_refusals and not fb.executed
                                               and {**fb.__dict__, "message": ""} == {**want_fb, "message": ""}):
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
        elif rec.get("stream") == "public":
            tally["final" if "final_answer" in rec else "late"] = True
        elif rec.get("stream") == "private":
            want = rec["record"]
            got = pending_private or {}
            keys = ("screen", "level", "P", "win", "certificate", "restarts", "undos", "rejected")
            if any(got.get(k) != want.get(k) for k in keys):
                diff_keys = [k for k in keys if got.get(k) != want.get(k)]
                return ReplayReport(False, steps, f"step {rec['step']}: evaluator record differs in {diff_keys}")
            if not states.check(suite, rec):
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
                if bool(suite.session.solved) != bool(want.get("success")) or want.get("steps") != steps:
                    return ReplayReport(False, steps, "the result differs")
            why = _end_consistent(rec["end"], head["protocol"], ev, suite, st, steps, tally) or \
                (ender.check(rec["end"], steps) if ender is not None else "")
            if why:
                return ReplayReport(False, steps, f"the recorded end {rec['end']!r} {why}")
    rep = ReplayReport(True, steps, note=note, frames=n_frames)
    rep.checked += ["the start state and its frame", f"{steps} actions validated and dispatched again",
                    f"{n_frames} frame hashes", "every public feedback", "every private evaluator record and suite "
                    "snapshot", "the end record's result"]
    if store is not None:
        rep.checked.append("every stored frame, decoded")
    if summary_refusals:
        rep.not_checked.append(f"the reasons of {summary_refusals} refused actions recorded in summary form "
                               "(too large or unreadable to keep); their refusal is taken as recorded")
    rep.not_checked.append("the agent's own time per step and every real-time figure (seconds, time, "
                           "charged_seconds)")
    if result is not None:
        why = _compare_result(result, head, ev, run, steps, tally, rep)
        if why:
            rep.ok, rep.divergence = False, f"result.json {why}"
    return rep


class _LevelEnds:
    """The level protocol's endings that follow from the actions alone, derived again as the
    level loop (level.py) derives them: solved, the game's harness deadlock, the cycle rule
    (cycles.py), the invalid-action policy and the step cap. Real-time endings (timeout) and
    the agent's own (agent_terminated, agent_error, infrastructure_error) are taken as
    recorded, but none of them may come after an ending that the actions made."""

    TIMED = ("timeout", "agent_terminated", "agent_error", "infrastructure_error")

    def __init__(self, suite, st: Settings):
        from longpuzzle.agents.harness.cycles import CycleDetector
        from longpuzzle.agents.metrics import BENCHMARK

        self.suite, self.det = suite, CycleDetector()
        self.limit = refusal_limit(st.resolved("level").invalid_action_policy)
        self.max_steps = st.max_actions or BENCHMARK["games"][suite.level.game]["max_steps"]
        self.first: tuple[int, str] | None = None      # (step, ending) of the first one derived

    def step(self, n: int, fb, action, screen: str, prv: dict, refused_in_a_row: int) -> None:
        if self.first is not None:
            return
        s = self.suite.session
        why = None
        if not fb.executed:
            if refused_in_a_row >= self.limit:
                why = "invalid_action_limit"
        elif s is not None and s.solved:
            why = "success"
        elif s is not None:
            why = (self.suite.puzzle.harness_deadlock(self.suite.level, s.state)
                   or self.det.step(action, screen, prv.get("P")))
        if why is None and n >= self.max_steps:
            why = "max_steps"
        if why is not None:
            self.first = (n, why)

    def check(self, end: str, steps: int) -> str:
        if self.first is None:
            if end in self.TIMED:
                return ""
            return f"does not follow from the actions (no ending of the level protocol was reached in {steps})"
        k, why = self.first
        if k < steps:
            return f"comes too late: the level ended with {why!r} at action {k}, the episode has {steps}"
        if end == why or (why == "max_steps" and end == "timeout"):   # the clock is checked first
            return ""
        return f"does not agree: the actions end the level with {why!r}"


def _summary(action) -> bool:
    return type(action) is dict and (set(action) in ({"unreadable"}, {"unrecordable", "kind"}, {"oversized"}))


def _end_consistent(end: str, protocol: str, ev, suite, st: Settings, steps: int, tally: dict) -> str:
    """"" when the recorded end agrees with what the replay saw, else why not."""
    if protocol == "objective":
        if ev.complete and end != "completed":
            return "does not agree: every level was won (the episode ends 'completed')"
        if end == "completed" and not ev.complete:
            return "does not agree: not every level was won"
        # the refusal limit (settings.refusal_limit) ends the episode at the action that reaches it
        at = tally["limit_at"]
        if at is not None and (end != "invalid_action_limit" or at != steps):
            return (f"does not agree: action {at} reaches the refusal limit ({tally['limit']} refused in a row), "
                    "which ends the episode there with 'invalid_action_limit'")
        if end == "invalid_action_limit" and at is None:
            return f"does not agree: the actions never reach the refusal limit ({tally['limit']} in a row)"
        if end == "final_answer" and not tally["final"]:
            return "has no final answer in the events"
        if end == "max_actions" and st.max_actions != steps:
            return f"does not agree: {steps} actions, the cap was {st.max_actions}"
        return ""
    s = suite.session
    if end == "success" and not (s is not None and s.solved):
        return "does not agree: the level is not solved"
    if end != "success" and s is not None and s.solved:
        return "does not agree: the level is solved"
    if end == "invalid_action_limit" and tally["last_refused"] < tally["limit"]:
        return f"does not agree: the last actions were not refused {tally['limit']} times in a row"
    return ""


def _compare_result(res: dict, head: dict, ev, run, steps: int, tally: dict, rep: ReplayReport) -> str:
    """Recompute what result.json derives from the suite and compare it field by field."""
    want: dict = {}
    if head["protocol"] == "objective":
        if type(res.get("budget_remaining")) is not bool or type(res.get("end")) is not str:
            return "lacks 'end' or 'budget_remaining'"
        native, other = res.get("native_steps"), res.get("other_steps")
        if not all(v is None or type(v) is int and 0 <= v <= 10 ** 12 for v in (native, other)):
            return "has malformed step counts (native_steps, other_steps)"
        outcome, levels, derived = objective_results(ev, res["end"], res["budget_remaining"], run.level_presses,
                                                     native, other)
        want = {"objective": head["objective"], "protocol": "objective", "scored": outcome.scored, "actions": steps,
                "success": outcome.success, "solved": outcome.solved_count, "target_levels": len(outcome.levels),
                "levels_outcome": [{"reached": l.reached, "won": l.won, "max_P": l.max_progress}
                                   for l in outcome.levels],
                "mismatch": outcome.mismatch, "levels": levels, "presses": run.presses,
                "invalid_actions": tally["invalid"], **derived}
        rep.checked.append("result.json recomputed: success, levels won, reached and their P, scores, moves, "
                           "presses, refused actions and every metric")
        rep.not_checked.append("whether a budget end and budget_remaining happened as recorded (they depend on "
                               "real time; the metrics were recomputed with the recorded budget_remaining)")
        rep.not_checked.append("the NGAR step counts (native_steps, other_steps: the driver counts them)")
    else:
        from longpuzzle.agents.metrics import BENCHMARK, LevelRun, level_score
        s = run.suite.session
        elapsed = res.get("elapsed")
        if type(elapsed) not in (int, float) or type(res.get("termination")) is not str:
            return "lacks 'elapsed' or 'termination'"
        success = res["termination"] == "success"
        cfg = BENCHMARK["games"][s.level.game]
        lr = LevelRun(s.puzzle.id, success, s.progress, steps=steps, elapsed=float(elapsed),
                      termination=res["termination"], invalid=tally["invalid"] + s.counters.rejected
                      + s.counters.noop_moves, repeated=tally["repeated"], noop=tally["noop"],
                      max_steps=run.st.max_actions or cfg["max_steps"], optimal_moves=s.level.data.get("optimal_moves"),
                      moves=s.counters.moves)
        want = {"level": s.level.id, "success": success, "steps": steps, "presses": run.presses,
                "moves": s.counters.moves, "moves_before_win": s.counters.moves - 1 if success and s.counters.moves
                else None, "invalid_actions": tally["invalid"], "progress": s.progress,
                "score": round(level_score(lr), 4)}
        rep.checked.append("result.json recomputed: success, steps, moves, presses, refused actions, progress and "
                           "the composite score (with the recorded elapsed time)")
        rep.checked.append("the level's ending, derived again from the actions: solved, the game's deadlock test, "
                           "the cycle rule, refused actions under the invalid-action policy and the step cap")
        rep.not_checked.append("the elapsed time and a timeout end (they depend on real time)")
    for k, v in want.items():
        if _jsonish(res.get(k)) != _jsonish(v):
            return f"differs from the replay in {k!r} (recorded {_short(res.get(k))}, replayed {_short(v)})"
    return ""


def _jsonish(v):
    """``v`` as result.json holds it (NaN is written as null; tuples are lists)."""
    import json

    from longpuzzle.agents.metrics import json_ready
    return json_ready(json.loads(json.dumps(v, sort_keys=True, default=str)))


def _short(v) -> str:
    s = repr(v)
    return s if len(s) <= 60 else s[:57] + "..."


def restore_step(folder: str | Path, step: int) -> Suite:
    """The exact suite after recorded action ``step`` (0 = the start)."""
    ev_lines = read_events(folder)
    if step == 0:
        return Suite.restore(ev_lines[0]["start"])
    rb = StateRebuilder(ev_lines[0]["start"])        # the last full snapshot, then each delta after it
    for rec in ev_lines:
        if rec.get("stream") != "private":
            continue
        if rec.get("step") == step:
            if "snapshot" not in rec and "suite" not in rec:
                raise HarnessError(f"step {step} was refused before dispatch; restore step {step - 1} instead")
            rb.apply(rec)
            return Suite.restore(rb.snapshot())
        rb.apply(rec)
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
