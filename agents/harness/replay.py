"""Replaying an episode folder (its header, every record and its result recomputed from the
catalogue and the actions alone), restoring any recorded step exactly, and continuing an
episode from there (interventions). A run folder as a whole: agents/verify.py."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from longpuzzle.agents.base import BaseAgent, FinalAnswer, Takeover
from longpuzzle.agents.evaluator import Evaluator
from longpuzzle.agents.harness.agent_call import UnreadableAction
from longpuzzle.agents.harness.clock import BudgetClock
from longpuzzle.agents.harness.level import LevelEpisode
from longpuzzle.agents.harness.objective import ObjectiveEpisode, run_objective, step_kind
from longpuzzle.agents.harness.results import EpisodeResult, objective_results
from longpuzzle.agents.harness.recompute import (
    DRIVER_STREAMS, RECORD_FIELDS, TIME_FIELDS, check_header, recorded_settings, screen_shape,
)
from longpuzzle.agents.harness.settings import HarnessError, Settings
from longpuzzle.agents.harness.frames import (
    FRAMES_FILE, LEGACY_DIR, FrameStoreError, hasher, header_frame_hash, open_frames,
)
from longpuzzle.agents.harness.snapshots import StateRebuilder, SuiteStates
from longpuzzle.agents.harness.takeover import build_takeover, continued_source
from longpuzzle.agents.harness.trajectory import EpisodeRecords, Trajectory, read_events
from longpuzzle.engine.catalog import Catalog, builtin_catalog
from longpuzzle.engine.errors import LongPuzzleError
from longpuzzle.engine.suite import Suite


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


def replay_episode(folder: str | Path, catalog: Catalog | None = None) -> ReplayReport:
    """Re-run the recorded actions and check everything a replay can, deriving it from the
    catalogue and the actions alone (issue 35): the header is recomputed (recompute.py: the
    start state, the evaluator's start, the instruction, the settings as resolved), every
    field of every record is compared with what the replay did (frame hashes and every
    stored frame decoded, public feedback, the action as validated, sim_ms, presses, the
    whole private record and suite state), the end is derived again from the actions
    by the protocol's own stepper (ObjectiveEpisode / LevelEpisode, fed the recorded actions),
    and result.json is RECOMPUTED field by field (a forged
    ``success`` is a divergence). ``checked`` / ``not_checked`` say exactly what was and
    was not verified (real time cannot be: the agent's time per step, a budget end's cause).

    A folder that is not a well-formed episode is refused with HarnessError (one line): no
    or a malformed header, records missing keys, holding fields the harness does not write
    or out of order, a step without its private record, records after the end, result.json
    without an end record, settings that make no sense, a line longer than a genuine
    episode writes. An episode that was killed (no end record, no result.json) is checked
    as a prefix: every recorded step must replay exactly, a last line cut off by the kill is
    dropped, a last step without its private record is checked on its public record alone;
    ``complete`` is False and ``note`` says what was missing.
    The episode is replayed on the catalogue it recorded: ``catalog`` (default: the built-in
    one) when its hash is the recorded one, else the stored snapshot of the recorded name and
    version (checked by hash); events.jsonl is read as a stream (EpisodeRecords), one record
    at a time."""
    recs = EpisodeRecords(folder)       # read as a stream: one record is held at a time
    return _replay_folder(folder, recs, recorded_catalog(recs.head.get("catalog"), catalog))


def recorded_catalog(ident: dict | None, have: Catalog | None = None) -> Catalog:
    """The catalogue a result file names ({"name", "version", "hash"}): ``have`` (default: the
    built-in one) when it matches, else the stored snapshot of that name and version;
    HarnessError if none has the recorded hash."""
    from longpuzzle.engine.catalog_store import CatalogError, open_catalog

    cur = have or builtin_catalog()
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


def _replay_folder(folder, recs: EpisodeRecords, cat: Catalog) -> ReplayReport:
    head = recs.head
    hash_name = header_frame_hash(head)
    hf = hasher(hash_name)
    shape = _check_structure(recs, folder)          # the first pass: the form of every record
    cut_off = recs.cut_off
    has_end = shape["end"]
    has_result = (Path(folder) / "result.json").is_file()
    if has_result and not has_end:
        return ReplayReport(False, 0, "result.json exists but events.jsonl has no end record")
    result = _read_result(folder) if has_result else None
    continued = _continued_start(head, folder, cat)
    why = check_header(head, continued, cat)
    if why:
        return ReplayReport(False, 0, why)
    if shape["records"] == 1 and not has_result:
        raise HarnessError(f"{folder}: the episode holds only its header (no action was recorded)")
    store = None
    if (Path(folder) / FRAMES_FILE).is_file() or (Path(folder) / LEGACY_DIR).is_dir():
        try:      # frames of the size the recorded settings make the screen, nothing larger
            store = open_frames(folder, screen_shape(head, cat))
        except FrameStoreError as e:
            return ReplayReport(False, 0, str(e))
        if store.format == "lpf" and store.frame_hash != hash_name:
            store.close()
            return ReplayReport(False, 0, f"the stored frames' digests are {store.frame_hash} but the events' "
                                          f"frame hashes are {hash_name}")
    try:
        rep = _replay(recs, shape, head, hf, store, result,     # the second pass: every record replayed
                      *((continued["evaluator_start"], continued["mismatch_start"]) if continued else ()), cat=cat)
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


def _check_structure(lines: EpisodeRecords, folder) -> dict:
    """Refuse (HarnessError, one line) a folder whose events are not a well-formed episode;
    else {"records": how many, "end": whether there is an end record, "tools": a tool
    driver's calls, and those by NGAR class}, read in one pass."""
    head = lines.head
    where = f"{folder}/events.jsonl"
    for k, t in _HEADER.items():
        if type(head.get(k)) is not t and not (t is object and k in head):
            raise HarnessError(f"{where}: the header has no {k!r} (or it has the wrong type)")
    if head["protocol"] not in ("objective", "level"):
        raise HarnessError(f"{where}: unknown protocol {str(head['protocol'])[:40]!r}")
    if head["protocol"] == "objective" and type(head.get("objective")) is not str:
        raise HarnessError(f"{where}: the header has no objective")
    step, ended, pending = 0, False, None
    tools = {"native": 0, "other": 0, "calls": 0}       # a tool driver's steps: its calls by class
    records = iter(lines)
    next(records)                                   # the header (lines.head)
    for i, rec in enumerate(records, 2):
        if ended:
            raise HarnessError(f"{where}: line {i} comes after the end record")
        if rec.get("type") == "end":
            if pending is not None:
                raise HarnessError(f"{where}: step {pending} has no private record (it was deleted?)")
            if type(rec.get("end")) is not str or type(rec.get("result")) is not dict \
                    or type(rec.get("error")) is not str:
                raise HarnessError(f"{where}: line {i}: the end record needs 'end', 'error' and 'result'")
            _known_fields(rec, "end", where, i)
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
                    if k not in rec or (t is not object and type(rec[k]) is not t):
                        raise HarnessError(f"{where}: line {i}: step {rec['step']} has no {k!r}")
                kind = "dispatched" if rec["feedback"].get("executed") is not False else "refused"
                step = rec["step"]
                pending = step
            elif "final_answer" in rec or "late_action" in rec:
                kind = "final_answer" if "final_answer" in rec else "late_action"
                step = rec["step"]                   # nothing was dispatched: no private record
            else:
                raise HarnessError(f"{where}: line {i}: a public record without an action")
            _known_fields(rec, kind, where, i)
        elif stream == "private":
            if rec.get("step") != pending or type(rec.get("record")) is not dict:
                raise HarnessError(f"{where}: line {i}: a private record of step {str(rec.get('step'))[:20]} "
                                   f"where {'step ' + str(pending) if pending else 'none'} was due")
            _known_fields(rec, "private", where, i)
            pending = None
        elif rec.get("type") == "header":
            raise HarnessError(f"{where}: line {i}: a second header")
        elif stream not in DRIVER_STREAMS:
            raise HarnessError(f"{where}: line {i}: a record the harness does not write")
        else:       # a driver's own lines (tool calls): checked by their own checker (vista/records.py)
            if "call" in rec:
                tools["calls"] += 1
                if rec.get("class") in ("native", "other"):
                    tools[rec["class"]] += 1
    return {"records": lines.count, "end": ended, "tools": tools}


def _known_fields(rec: dict, kind: str, where: str, i: int) -> None:
    extra = sorted(set(rec) - RECORD_FIELDS[kind])
    if extra:
        raise HarnessError(f"{where}: line {i}: a {kind.replace('_', ' ')} record with a field the harness does "
                           f"not write: {extra[0][:40]!r}")


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


class _RecordedClock(BudgetClock):
    """The clock a replayed episode's stepper runs on: real time is not replayed, so it never
    runs out by itself; an action's deadline is the one recorded with it (``cut``: the
    recorded cut_at), and an action recorded as returned after the deadline finds it passed
    (``late``). The endings of real time are then taken as recorded (the steppers'
    UNRECORDED_ENDS) where no action made another."""

    def __init__(self, st: Settings):
        super().__init__(None, st.charge_agent_time, st.action_latency)
        self.cut: int | None = None
        self.late = False

    def expired(self) -> bool:
        return self.late

    def deadline_ms(self, suite_clock: int) -> int | None:
        return self.cut


def _replay(recs: EpisodeRecords, shape: dict, head, hf, store, result: dict | None, start_ev: dict | None = None,
            start_mismatch: bool = False, *, cat: Catalog) -> ReplayReport:
    """Feed every recorded action through the protocol's own stepper (ObjectiveEpisode,
    LevelEpisode), on the recorded start (its level ids those of ``cat``), and compare each record with what it did: the
    endings are the stepper's, derived again from the actions alone."""
    try:
        suite = Suite.restore(head["start"], cat)
    except LongPuzzleError as e:
        raise HarnessError(f"the episode's start cannot be restored: {e}") from None
    st = recorded_settings(head)
    level = head["protocol"] == "level"
    if level:
        game, diff = suite.level.game, suite.level.difficulty
    else:
        game, diff = head["objective"].split("/")
    # the evaluator starts from what the header check derived (nothing reached, or what
    # the verified episode continued from had reached), never from the header's word
    ev = Evaluator(game, diff, st.certify_budget, catalog=cat)
    for lid, o in (start_ev or {}).items():
        ev.outcomes[lid].reached, ev.outcomes[lid].won, ev.outcomes[lid].max_progress = \
            o["reached"], o["won"], o["max_P"]
    ev.mismatch = bool(start_mismatch)
    clock = _RecordedClock(st)
    kw = {"settings": st, "start": suite, "trajectory": _Hashes(hf), "states": _Unrecorded(), "clock": clock}
    if level:
        ep = LevelEpisode(suite.level.id, ev, **kw)
        submit = ep.submit
    else:
        ep = ObjectiveEpisode(game, diff, evaluator=ev, stop_when=head.get("stop_when"), **kw)
        submit = partial(ep.submit, count=False)       # the replay counts NGAR steps itself (summaries)
    run = ep.run
    private: list = []                                  # the private record of the step being replayed
    run.on_action = lambda step, rec: private.append(rec)
    # each recorded state is checked in the form it was recorded in
    states = SuiteStates(suite, elide=head.get("format") not in ("longpuzzle-episode/1", "longpuzzle-episode/2"))
    if run.header["frame"] != head["frame"]:
        return ReplayReport(False, 0, "the first frame differs")
    bad = _check_stored(store, 0, head["frame"])
    if bad:
        return ReplayReport(False, 0, bad)
    n_frames = 1
    steps = 0
    ended_at = 0                            # the action after which the stepper's ending came
    pending_private = None
    last = shape["records"] - 1
    note = ""
    summary_refusals = 0
    tally = {"executed": 0, "kinds": {"native": 0, "other": 0}, "end": None, "error": "", "cut": False,
             "started": level, "t_agent": 0.0, "t_agent_n": 0, "unknown_kind": 0}
    sim_ms = 0                              # the virtual time of every executed action
    records = iter(recs)
    next(records)                                   # the header
    for pos, rec in enumerate(records, 1):
        if rec.get("stream") == "public" and "action" in rec:
            if ep.end is not None:
                return ReplayReport(False, steps + 1, f"step {rec['step']}: {_after_end(ep, ended_at)}",
                                    frames=n_frames)
            run.traj.recent = []
            private.clear()
            raw = rec["action"]
            c0, p0 = suite.clock, run.presses
            summary = rec["feedback"].get("executed") is False and _summary(raw)
            if summary:
                # refused and recorded in summary form (too large or unreadable to keep): the
                # refusal is taken as recorded, its reason cannot be re-derived
                summary_refusals += 1
                raw = UnreadableAction(str(rec["feedback"].get("message", "")))
            cut = rec.get("cut_at")                 # the deadline fell inside this action
            if level and cut is not None:
                return ReplayReport(False, steps, f"step {rec['step']}: a level episode records no cut action")
            clock.cut = cut if type(cut) is int else None
            tally["cut"] = tally["cut"] or "cut_at" in rec
            step = submit(raw, 0.0)
            fb, a = step.feedback, step.action
            prv = private[-1] if private else None
            steps += 1
            if fb.executed:
                tally["executed"] += 1
                sim_ms += suite.clock - c0
            if summary:
                tally["unknown_kind"] += 1          # what it attempted is not recorded
            else:
                tally["kinds"][step_kind(raw)] += 1
            if tally["started"] and _seconds(rec.get("t_agent")):
                tally["t_agent"] += rec["t_agent"]       # the agent's time once the clock runs
                tally["t_agent_n"] += 1
            tally["started"] = tally["started"] or fb.executed
            if ep.end is None:
                ep.poll()                           # the step caps (real time is not replayed)
            if ep.end is not None:
                ended_at = steps
            hashes = run.traj.recent
            if hashes != rec["frames"]:
                return ReplayReport(False, steps, f"step {rec['step']}: frames differ", frames=n_frames)
            want_fb = dict(rec["feedback"])
            if fb.__dict__ != want_fb and not (summary_refusals and not fb.executed
                                               and {**fb.__dict__, "message": ""} == {**want_fb, "message": ""}):
                return ReplayReport(False, steps, f"step {rec['step']}: public feedback differs",
                                    frames=n_frames)
            why = _public_differs(rec, fb, a, suite.clock - c0, run.presses - p0)
            if why:
                return ReplayReport(False, steps, f"step {rec['step']}: {why}", frames=n_frames)
            for h in hashes:
                bad = _check_stored(store, n_frames, h)
                if bad:
                    return ReplayReport(False, steps, f"step {rec['step']}: {bad}", frames=n_frames)
                n_frames += 1
            if pos == last:
                note = f"step {rec['step']} has no private record (interrupted); checked on its public record"
            pending_private = prv
        elif rec.get("stream") == "public":
            final = "final_answer" in rec
            if rec["step"] != steps + 1 or (type(rec["final_answer"]) is not str if final else not _seconds(rec["t_agent"])):
                return ReplayReport(False, steps, f"step {rec['step']}: a malformed {'final answer' if final else 'late action'}")
            if level:
                return ReplayReport(False, steps, f"step {rec['step']}: a level episode records no final answer or "
                                                  "late action", frames=n_frames)
            if ep.end is not None:
                return ReplayReport(False, steps, f"step {rec['step']}: {_after_end(ep, ended_at)}", frames=n_frames)
            action = FinalAnswer(rec["final_answer"]) if final else rec["late_action"]
            tally["kinds"][step_kind(action)] += 1
            clock.late = not final                  # a late action finds the deadline passed
            submit(action, 0.0)
            ended_at = steps
            if not final and tally["started"]:
                tally["t_agent"] += rec["t_agent"]
                tally["t_agent_n"] += 1
        elif rec.get("stream") == "private":
            want = rec["record"]
            got = pending_private or {}
            if not _same(got, want):
                diff_keys = sorted(k for k in set(got) | set(want) if _jsonish(got.get(k)) != _jsonish(want.get(k)))
                return ReplayReport(False, steps, f"step {rec['step']}: evaluator record differs in {diff_keys}")
            if not states.check(suite, rec):
                return ReplayReport(False, steps, f"step {rec['step']}: suite state differs")
        elif rec.get("type") == "end":
            want = rec["result"]
            if not level:
                got = {"objective": head["objective"], "end": rec["end"], "actions": steps,
                       "success": ev.complete, "solved": sum(o.won for o in ev.outcomes.values()),
                       "levels_outcome": [{"reached": o.reached, "won": o.won, "max_P": o.max_progress}
                                          for o in (ev.outcomes[l] for l in ev.targets)]}
                if got != want:
                    return ReplayReport(False, steps, "the result differs")
            else:
                if bool(suite.session.solved) != bool(want.get("success")) or want.get("steps") != steps \
                        or want.get("termination") != rec["end"] or want.get("error") != rec.get("error"):
                    return ReplayReport(False, steps, "the result differs")
                if result is not None and not _same(want, result):
                    return ReplayReport(False, steps, "the end record's result is not result.json")
            why = _ending_differs(ep, ended_at, rec["end"], rec["error"], steps)
            if why:
                return ReplayReport(False, steps, f"the recorded end {rec['end']!r} {why}")
            tally["end"], tally["error"] = rec["end"], rec.get("error", "")
    tally["sim_ms"] = sim_ms
    tally["invalid"] = ep.invalid_total
    rep = ReplayReport(True, steps, note=note, frames=n_frames)
    rep.checked += ["the header recomputed from the catalogue and the settings (the start state, the evaluator's start, "
                    "the instruction) and the first frame", f"{steps} actions validated and dispatched again",
                    f"{n_frames} frame hashes", "every public feedback", "every private evaluator record and suite "
                    "snapshot", "the end record's result"]
    if store is not None:
        rep.checked.append("every stored frame, decoded")
    if summary_refusals:
        rep.not_checked.append(f"the reasons (and NGAR class) of {summary_refusals} refused actions recorded in summary form "
                               "(too large or unreadable to keep); their refusal is taken as recorded")
    rep.not_checked.append("the agent's own time per step and every real-time figure (seconds, time, "
                           "charged_seconds)")
    if result is not None:
        why = _compare_result(result, head, ep, steps, tally, rep, shape["tools"])
        if why:
            rep.ok, rep.divergence = False, f"result.json {why}"
    return rep


def _after_end(ep, at: int) -> str:
    return f"an action after the {ep.WORD} ended ({ep.end!r} at action {at})"


# ends whose error is the agent's or the infrastructure's own message (any text)
MESSAGE_ENDS = ("agent_error", "infrastructure_error", "agent_stop")


def _ending_differs(ep, at: int, end: str, error: str, steps: int) -> str:
    """"" when the recorded end and its error are what the replayed stepper makes of the
    actions: the ending an action made (at action ``at``; one real time may pre-empt:
    CLOCK_FIRST), else one of the endings no action records (UNRECORDED_ENDS); the refusal
    limit's error names the last refusal, an agent's or the infrastructure's failure says
    what it was, every other end has none."""
    made = ep.end
    if made is None:
        if end == "invalid_action_limit":
            return f"does not agree: the actions never reach the refusal limit ({ep.limit} in a row)"
        if end == "final_answer" and isinstance(ep, ObjectiveEpisode):
            return "has no final answer in the events"
        if end not in ep.UNRECORDED_ENDS:
            return f"does not follow from the actions (none of them ended the {ep.WORD} in {steps})"
        want = ""
    elif end == made:
        want = ep.error
    elif ep.CLOCK_FIRST.get(made) == end:
        want = ""
    elif made == "invalid_action_limit":
        return (f"does not agree: action {at} reaches the refusal limit ({ep.limit} refused in a row), "
                f"which ends the {ep.WORD} there with 'invalid_action_limit'")
    else:
        return f"does not agree: the actions end the {ep.WORD} with {made!r} at action {at}"
    if end in MESSAGE_ENDS and made is None:
        return ""
    return "" if error == want else f"has the error {_short(error)}, the actions make {_short(want)}"


def _seconds(v) -> bool:
    """A recorded duration: a finite number of seconds, not negative."""
    return type(v) in (int, float) and math.isfinite(v) and v >= 0


def _public_differs(rec: dict, fb, action, sim_ms: int, presses: int) -> str:
    """"" when every field of a public record is what the replay did (the agent's and the
    dispatch's real time can only be checked for form); else what differs."""
    if not _seconds(rec.get("t_agent")):
        return "malformed 't_agent'"
    if not fb.executed:
        return ""                         # the refused action is recorded as the agent sent it
    if not _same(action, rec["action"]):
        return "the recorded action is not the action as validated"
    if not _seconds(rec.get("t_dispatch")):
        return "malformed 't_dispatch'"
    if rec.get("sim_ms") != sim_ms:
        return f"'sim_ms' differs (recorded {_short(rec.get('sim_ms'))}, replayed {sim_ms})"
    if rec.get("presses") != presses:
        return f"'presses' differs (recorded {_short(rec.get('presses'))}, replayed {presses})"
    if "cut_at" in rec and type(rec["cut_at"]) is not int:
        return "malformed 'cut_at'"
    return ""


def _summary(action) -> bool:
    return type(action) is dict and (set(action) in ({"unreadable"}, {"unrecordable", "kind"}, {"oversized"}))


def _compare_result(res: dict, head: dict, ep, steps: int, tally: dict, rep: ReplayReport,
                    tools: dict | None = None) -> str:
    """Recompute every field of result.json and compare: what the suite did (success,
    levels, scores, moves, metrics), what the header and the end record say (agent, end,
    error, rules, catalogue), the step counts; the real-time figures, which cannot be
    recomputed, must be consistent with each other and with the actions (the simulated
    time, the latency, whether the budget was left). ``tools``: the episode's tool-call
    records (a VISTA / MCP episode counts its steps by them). ``ep``: the replayed stepper."""
    run, ev = ep.run, ep.ev
    st = run.st
    if head["protocol"] == "objective":
        from longpuzzle.agents.harness.recompute import OBJECTIVE_RESULT_FIELDS
        extra = sorted(set(res) - OBJECTIVE_RESULT_FIELDS)
        if extra:
            return f"has a field the harness does not write: {extra[0][:40]!r}"
        why = _time_consistent(res, st, tally, head["protocol"])
        if why:
            return why
        if tools and tools["calls"]:               # the driver counts each tool call as a step
            native, other = tools["native"], tools["other"]
        else:
            native, other = tally["kinds"]["native"], tally["kinds"]["other"]
            rn, ro = res.get("native_steps"), res.get("other_steps")
            if tally["unknown_kind"] and type(rn) is int and type(ro) is int and rn >= native and ro >= other \
                    and rn + ro == native + other + tally["unknown_kind"]:
                native, other = rn, ro        # refusals in summary form: their class as counted live
        t = res["time"]
        started = tally["executed"] > 0
        expired = started and st.budget is not None and (tally["cut"] or t["charged"] >= st.budget)
        remaining = not expired and tally["end"] not in ("budget", "max_actions")
        if not started or st.budget is None or abs(t["charged"] - st.budget) > 1e-5 or tally["cut"]:
            if res.get("budget_remaining") != remaining:
                return (f"differs from the replay in 'budget_remaining' (recorded {_short(res.get('budget_remaining'))}, "
                        f"replayed {remaining})")
        elif type(res.get("budget_remaining")) is not bool:  # charged to the budget's rounding: either way
            return "has a malformed 'budget_remaining'"
        outcome, levels, derived = objective_results(ev, tally["end"], res["budget_remaining"], run.level_presses,
                                                     native, other)
        want = {"objective": head["objective"], "protocol": "objective", "agent": head["agent"], "end": tally["end"],
                "error": tally["error"], "scored": outcome.scored, "actions": steps,
                "success": outcome.success, "solved": outcome.solved_count, "target_levels": len(outcome.levels),
                "levels_outcome": [{"reached": l.reached, "won": l.won, "max_P": l.max_progress}
                                   for l in outcome.levels],
                "mismatch": outcome.mismatch, "levels": levels, "presses": run.presses,
                "invalid_actions": tally["invalid"], **outcome.steps_dict(), **derived,
                "rules": {"invalid_action_policy": st.invalid_action_policy, "charge_agent_time": st.charge_agent_time,
                          "action_latency": st.action_latency, "budget": st.budget, "first_action": "wait",
                          "viewport": st.viewport, "lang": st.lang, "preset": st.preset},
                "catalog": head["catalog"]}
        if type(res.get("agent_isolation", {})) is not dict or type(res.get("folder", "")) is not str:
            return "has a malformed 'agent_isolation' or 'folder'"
        rep.checked.append("result.json recomputed, every field: success, levels won, reached and their P, scores, "
                           "moves, presses, refused actions, NGAR steps, every metric, the end and its error, the "
                           "agent, rules and catalogue; the time figures checked against each other and the actions "
                           "(simulated time, latency, budget left)")
        rep.not_checked.append("the cause of an end that no action made (budget, agent_error, infrastructure_error, "
                               "agent_stop: "
                               "the replay checks that no action ended the episode otherwise and that nothing "
                               "followed)")
        if "model" in res:
            rep.not_checked.append("the model's usage and cost (reported by the provider)")
    else:
        from longpuzzle.agents.harness.recompute import LEVEL_RESULT_FIELDS
        extra = sorted(set(res) - LEVEL_RESULT_FIELDS)
        if extra:
            return f"has a field the harness does not write: {extra[0][:40]!r}"
        why = _time_consistent(res, st, tally, head["protocol"])
        if why:
            return why
        if type(res.get("termination")) is not str:
            return "lacks 'termination'"
        # the level's figures as the stepper makes them, with the recorded termination and play time
        want = {"level": run.suite.level.id, "run": True, **ep.outcome(res["termination"], float(res["time"]["charged"])),
                "presses": run.presses, "termination": tally["end"] if tally["end"] is not None else res["termination"],
                "error": tally["error"]}
        if type(res.get("agent_isolation", {})) is not dict:
            return "has a malformed 'agent_isolation'"
        rep.checked.append("result.json recomputed, every field: success, steps, moves, presses, refused actions, "
                           "progress, the end and the composite score; the time figures checked against each other "
                           "and the actions")
        rep.checked.append("the level's ending, derived again from the actions: solved, the game's deadlock test, "
                           "the cycle rule, refused actions under the invalid-action policy and the step cap")
        rep.not_checked.append("the elapsed time and a timeout end (they depend on real time)")
    for k, v in want.items():
        if not _same(res.get(k), v):
            return f"differs from the replay in {k!r} (recorded {_short(res.get(k))}, replayed {_short(v)})"
    return ""


def _time_consistent(res: dict, st: Settings, tally: dict, protocol: str) -> str:
    """"" when result.json's time figures agree with each other, the settings and the
    actions (real time itself cannot be recomputed); else what is wrong."""
    t = res.get("time")
    if type(t) is not dict or set(t) != TIME_FIELDS:
        return "has a malformed 'time'"
    if not all(_seconds(t[k]) for k in ("real", "charged", "agent", "simulated", "latency")) \
            or type(t["harness"]) not in (int, float) or not math.isfinite(t["harness"]):
        return "has a malformed 'time'"
    from longpuzzle.agents.metrics import BENCHMARK
    budget = st.budget if protocol == "objective" else BENCHMARK["games"][_game_of(res)]["timeout_seconds"]
    want = {"charge_agent_time": st.charge_agent_time, "action_latency": st.action_latency, "budget": budget}
    for k, v in want.items():
        if t[k] != v:
            return f"differs from the replay in 'time.{k}' (recorded {_short(t[k])}, replayed {_short(v)})"
    close = {"simulated": tally["sim_ms"] / 1000.0, "latency": st.action_latency * tally["executed"],
             "harness": t["real"] - t["agent"],
             "charged": (t["real"] if st.charge_agent_time else max(0.0, t["real"] - t["agent"]))
             + t["simulated"] + t["latency"]}
    for k, v in close.items():
        if abs(t[k] - v) > 1e-5 * max(1.0, abs(v)):
            return f"differs from the replay in 'time.{k}' (recorded {_short(t[k])}, replayed {round(v, 6)})"
    # the agent's time is the sum of its recorded steps' once the clock ran (a final answer's
    # time and a step still thinking at the end are charged but not recorded as a step)
    tol = 1e-6 * (tally["t_agent_n"] + 2)
    if t["agent"] < tally["t_agent"] - tol or (tally["end"] not in UNRECORDED_TIME_ENDS and abs(t["agent"] - tally["t_agent"]) > tol):
        return (f"differs from the replay in 'time.agent' (recorded {_short(t['agent'])}, the steps' "
                f"{round(tally['t_agent'], 6)})")
    if protocol == "objective" and (res.get("seconds") != round(t["real"], 3) or res.get("charged_seconds") != t["charged"]):
        return "has 'seconds' or 'charged_seconds' that are not its time's"
    return ""


# endings after which the agent's time may exceed its recorded steps' (a final answer, a
# step still thinking at the end); after any other the two are equal
UNRECORDED_TIME_ENDS = ("budget", "agent_error", "infrastructure_error", "agent_stop", "final_answer", "timeout",
                        "agent_terminated")


def _game_of(res: dict) -> str:
    return str(res.get("level", "")).split("/")[0]


def _same(a, b) -> bool:
    """Whether two values are the same as result files hold them (plain equality first: the
    JSON form is made only where they differ as Python values, e.g. a tuple and a list)."""
    return a == b or _jsonish(a) == _jsonish(b)


def _jsonish(v):
    """``v`` as result.json holds it (NaN is written as null; tuples are lists)."""
    import json

    from longpuzzle.agents.metrics import json_ready
    return json_ready(json.loads(json.dumps(v, sort_keys=True, default=str)))


def _short(v) -> str:
    s = repr(v)
    return s if len(s) <= 60 else s[:57] + "..."


def _continued_start(head: dict, folder, cat: Catalog) -> dict | None:
    """What an episode continued from step k of another (continue_episode) starts from,
    derived from that episode: it must still be there (its events digest as recorded) and
    replay exactly; the start is its exact state after step k, the evaluator's knowledge
    its private records up to k. None for an episode that continues nothing."""
    found = continued_source(folder, head)        # the digest checked
    if found is None:
        return None
    path, src = found[0], head["continued_from"]
    rep = replay_episode(path, cat)
    if not rep.ok or rep.steps < src["step"]:
        raise HarnessError(f"{folder} continues the episode {src['folder']}, which does not replay "
                           f"({rep.divergence or 'too few steps'})")
    lines = read_events(path)
    game, diff = head["objective"].split("/")
    ev = _evaluator_at(lines, src["step"], game, diff, recorded_settings(lines[0]).certify_budget, cat)
    return {"start": restore_step(path, src["step"], cat).snapshot(), "mismatch_start": ev.mismatch,
            "evaluator_start": {l: {"reached": o.reached, "won": o.won, "max_P": o.max_progress}
                                for l, o in ev.outcomes.items()}}


def _evaluator_at(ev_lines: list, step: int, game: str, diff: str, certify_budget, cat: Catalog) -> Evaluator:
    """The evaluator's knowledge after recorded step ``step``, from its private records."""
    ev = Evaluator(game, diff, certify_budget, catalog=cat)
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
    return ev


def restore_step(folder: str | Path, step: int, catalog: Catalog | None = None) -> Suite:
    """The exact suite after recorded action ``step`` (0 = the start), on the catalogue the
    episode recorded (recorded_catalog: ``catalog`` when it is that one)."""
    ev_lines = read_events(folder)
    cat = recorded_catalog(ev_lines[0].get("catalog"), catalog)
    if step == 0:
        return Suite.restore(ev_lines[0]["start"], cat)
    rb = StateRebuilder(ev_lines[0]["start"])        # the last full snapshot, then each delta after it
    for rec in ev_lines:
        if rec.get("stream") != "private":
            continue
        if rec.get("step") == step:
            if "snapshot" not in rec and "suite" not in rec:
                raise HarnessError(f"step {step} was refused before dispatch; restore step {step - 1} instead")
            rb.apply(rec)
            return Suite.restore(rb.snapshot(), cat)
        rb.apply(rec)
    raise HarnessError(f"{folder} has no step {step}")


def takeover_at(folder: str | Path, step: int, *, note: str = "", catalog: Catalog | None = None) -> Takeover:
    """The D.1 takeover context of recorded episode ``folder`` at step ``step``
    (takeover.build_takeover), on the catalogue it recorded; screenshots it did not store
    are drawn again from the exact state restored at their step."""
    from longpuzzle.render.frame.screens import renderer_for

    cat = recorded_catalog(read_events(folder)[0].get("catalog"), catalog)

    def drawer(path):             # the screens of an episode (up the chain of continuations too)
        def draw(k: int):
            suite = restore_step(path, k, cat)
            return renderer_for(suite).render(suite)
        return draw
    return build_takeover(folder, step, note=note, catalog=cat, draw=drawer(folder), drawer=drawer)


def continue_episode(folder: str | Path, step: int, agent: BaseAgent, *, note: str = "",
                     settings: Settings | None = None, out: str | Path | None = None,
                     catalog: Catalog | None = None, takeover: bool | Takeover | None = None,
                     stop_when: dict | None = None) -> EpisodeResult:
    """Restore recorded step ``step`` exactly and continue the objective episode from there with
    ``agent`` (the same or another), optionally with an extra instruction (an intervention),
    on the catalogue the episode recorded (recorded_catalog: ``catalog`` when it is that one).
    ``takeover``: the D.1 takeover context the agent is given after reset (BaseAgent.take_over):
    True builds it from the source episode (takeover_at: its public action prefix, up to 4
    screenshot-action pairs, the current screenshot, ``note``), a Takeover is given as it is,
    None / False gives none. ``stop_when``: a stop condition (objective.ObjectiveEpisode.STOP_KEYS,
    e.g. ``{"won": [level id]}``: it ends, "stop_condition", once that level is won), recorded
    in the header so a replay derives the same end."""
    ev_lines = read_events(folder)
    head = ev_lines[0]
    if head["protocol"] != "objective":
        raise HarnessError("continuing is supported for objective episodes")
    game, diff = head["objective"].split("/")
    cat = recorded_catalog(head.get("catalog"), catalog)
    suite = restore_step(folder, step, cat)
    st = settings or Settings(**{k: v for k, v in head["settings"].items() if k in Settings.__dataclass_fields__})
    # the evaluator's knowledge up to that step: replay its records
    ev = _evaluator_at(ev_lines, step, game, diff, st.certify_budget, cat)
    text = head["instruction"] + (f"\n{note}" if note else "")
    # where it continues from, for a replay to derive its start (the source as a path from
    # the new folder, and the digest of its events)
    import hashlib
    import os
    src = None
    if out is not None:
        src = {"folder": os.path.relpath(Path(folder).resolve(), Path(out).resolve()), "step": step,
               "events": hashlib.sha256((Path(folder) / "events.jsonl").read_bytes()).hexdigest()}
    if takeover is True:
        takeover = takeover_at(folder, step, note=note, catalog=cat)
    return run_objective(agent, game, diff, settings=st, folder=out, start=suite, instruction=text, evaluator=ev,
                         header={"continued_from": src} if src else None, takeover=takeover or None,
                         stop_when=stop_when)
