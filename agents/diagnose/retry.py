"""RQ3, matched retries with memory (PAPERS.md section 5, D.4; clue memory after FlashAdventure,
section 7): after an agent-owned failure and a verified native restart, the same restarted
board is played again under four memories, and nothing else differs.

Sources (``find_sources``): in a recorded objective episode, an attempt on a level whose board
the evaluator certified unsolvable (its exhaustive certificate; for Bolt Unscrew also the
paper's no-free-hole one) and that the agent then restarted through the game's own control,
the restart verified: the board after it is the level's start and not certified. The source's
failure is the set of certified boards of that attempt (``lost``); the retry starts at the
restart's step. Sources come from recorded runs, or from scratch (``record_sources``: a
scripted policy plays a level into certified dead ends, restarting after each, recorded as a
real episode through the harness).

Memories (the condition; the text enters the instruction at the retry's start and, through
the takeover context, the agent's first request):
    M0  history cleared: only the current screenshot (a takeover with no prefix, no pairs)
    M1  the native history (the D.1 takeover context: the public action prefix, up to 4
        screenshot-action pairs) plus its restart summary (public facts of the failed
        attempt: its actions, those without visible effect, the restart)
    M2  the same history, the summary replaced by a structured account written by the agent
        itself ("Failure Experience" / "Next Attempt"), asked aside from play (a Probe with no
        statements, on a fresh agent of the same kind given the M1 context)
    M3  the same history plus a clue memory: the certified cause of each failed attempt on the
        level (the oracle's first fatal move: the action that made the board unsolvable, the
        distance to completion it threw away and what it used up - for Bolt Unscrew the usable
        free holes) and the resolved dead ends (where each was reached and cleared)

Endpoints of a retry (``endpoints``; the first that happens on the source level decides the
outcome): ``completion`` (the level won), ``recurrence`` (a board of the source's certified
failure again), ``other_failure`` (another certified board), ``restart`` (another native
restart), ``stop`` (an explicit final answer), ``timeout`` (300 s charged), else ``none``
(the 600-action ceiling). Best progress: the highest P on the level up to the outcome.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

from longpuzzle.agents.base import Probe, Takeover
from longpuzzle.agents.harness.replay import restore_step, takeover_at
from longpuzzle.agents.harness.settings import HarnessError
from longpuzzle.agents.harness.takeover import action_text
from longpuzzle.agents.harness.trajectory import read_events

CONDITIONS = ("M0", "M1", "M2", "M3")
OUTCOMES = ("completion", "recurrence", "other_failure", "restart", "stop", "timeout", "none")
LIMIT_SECONDS = 300.0           # the retry's budget (charged)
CEILING = 600                   # actions (never binding in the paper)
SOURCE_ACTIONS = 60             # actions a source agent may take per source asked (record_sources)
ACCOUNT_REQUEST = (
    "Before your next attempt on this level, write an account of the attempt that failed, in two sections. "
    "'Failure Experience': your prior actions and their outcomes, and what you suspect caused the failure. "
    "'Next Attempt': the state the level is in now and your strategy for the next attempt. "
    "Reply with the two sections only; do not act now.")
ACCOUNT_SECTIONS = ("Failure Experience", "Next Attempt")


class RetryError(HarnessError):
    """A retry study that cannot be made (one error line)."""


@dataclass
class Failure:
    """One failed attempt on the source level before the restart the retry starts at."""
    attempt: int                    # its number on the level (from 1)
    start_step: int
    fatal_step: int                 # the first action after which the board was certified unsolvable
    restart_step: int               # the action that restarted the level
    fatal_action: str               # that action as text
    distance_before: int | None     # d(s) before the fatal action (moves to completion)
    holes_before: int | None        # Bolt Unscrew: usable free holes before / after it
    holes_after: int | None
    lost_actions: int               # actions played on the lost board before the restart


@dataclass
class Source:
    """An agent-owned failure after a verified native restart (the module doc)."""
    id: str
    episode: str                    # the episode folder
    objective: str
    level: str
    step: int                       # the restart's step: where every retry starts
    lost: list[str]                 # digests of the certified boards of the failed attempt
    failures: list[Failure] = field(default_factory=list)   # every failed attempt up to it, oldest first

    def as_dict(self) -> dict:
        return asdict(self)


def board_key(level: str, state) -> str:
    """A board's digest: its level and exact puzzle state."""
    return hashlib.sha256(f"{level}\n{list(state)}".encode()).hexdigest()[:24]


def certified(rec: dict) -> bool:
    """The evaluator certified the board unsolvable (exhaustive; Bolt Unscrew: or no usable
    free hole is left, the paper's certificate)."""
    if rec.get("win") or not rec.get("level"):
        return False
    if rec.get("certificate") == "dead_end":
        return True
    return rec.get("game") == "bolt_unscrew" and (rec.get("diagnostics") or {}).get("usable_holes") == 0


def _effects(rec: dict) -> set:
    return {e.get("effect") for e in rec.get("effects") or ()}


def find_sources(episode: str | Path, catalog=None) -> list[Source]:
    """The RQ3 sources of one recorded objective episode (the module doc), in step order."""
    from longpuzzle.agents.report.data import load_trajectory, snapshot_state
    from longpuzzle.engine.catalog import load_level

    traj = load_trajectory(episode)
    head = traj.header
    if head.get("protocol") != "objective":
        return []
    from longpuzzle.agents.harness.replay import recorded_catalog
    cat = recorded_catalog(head.get("catalog"), catalog)
    out: list[Source] = []
    failures: dict[str, list[Failure]] = {}
    attempt: dict[str, int] = {}
    cur = None                 # {"level", "start", "lost": [...], "fatal", "holes"...} of the attempt on screen
    prev_rec: dict = {}
    prev_state = None
    for st in traj.steps:
        if st.final_answer is not None:
            continue
        rec = st.record
        lid = rec.get("level")
        state = snapshot_state(st.snapshot)
        restarted = "restart" in _effects(rec)
        if lid and (cur is None or cur["level"] != lid or restarted):
            if cur is not None and restarted and cur["level"] == lid and cur["lost"]:
                initial = tuple(int(v) for v in load_level(lid, cat).initial)
                if state is not None and tuple(state) == initial and not certified(rec):
                    n = attempt[lid]
                    f = Failure(n, cur["start"], cur["fatal"], st.step, cur["fatal_action"], cur["d_before"],
                                cur["h_before"], cur["h_after"], st.step - cur["fatal"] - 1)
                    failures.setdefault(lid, []).append(f)
                    out.append(Source(f"{Path(episode).name}@{st.step}", str(episode), head["objective"], lid,
                                      st.step, sorted(set(cur["lost"])), list(failures[lid])))
            attempt[lid] = attempt.get(lid, 0) + 1
            cur = {"level": lid, "start": st.step, "lost": [], "fatal": None}
        elif not lid:
            cur = None
        if cur is not None and lid and state is not None and certified(rec):
            if cur["fatal"] is None:
                cur.update(fatal=st.step, fatal_action=action_text(st.action or {}),
                           d_before=_distance(lid, prev_state, cat) if prev_rec.get("level") == lid else None,
                           h_before=(prev_rec.get("diagnostics") or {}).get("usable_holes"),
                           h_after=(rec.get("diagnostics") or {}).get("usable_holes"))
            cur["lost"].append(board_key(lid, state))
        prev_rec, prev_state = rec, state
    return out


def _distance(level_id: str, state, cat) -> int | None:
    """d(s): the exact moves to completion from ``state`` (None where unknown)."""
    if state is None:
        return None
    import numpy as np

    from longpuzzle.engine.catalog import load_level
    from longpuzzle.solvers.oracle import OracleError, oracle_for

    o = oracle_for(load_level(level_id, cat))
    try:
        a = o.at(np.array(state, dtype=o.level.initial.dtype))
    except OracleError:
        return None
    return int(a.distance) if a.exact and a.distance is not None and a.distance != float("inf") else None


# ---- memories -----------------------------------------------------------------------------------

def restart_summary(src: Source) -> str:
    """M1's restart summary: public facts of the failed attempt (what the agent itself could
    have seen), no certificate, no hidden state; then the agent's own latest summary before
    the restart where its log has one (own_summary)."""
    lines = read_events(src.episode)
    pub = [r for r in lines if r.get("stream") == "public" and "action" in r]
    f = src.failures[-1]
    att = [r for r in pub if f.start_step < r["step"] < src.step]
    dead = sum(1 for r in att if (r.get("feedback") or {}).get("status") in ("no_visible_effect",
                                                                               "dispatch_failed"))
    return (f"Restart summary: your attempt {f.attempt} on this level took {len(att)} actions (steps "
            f"{f.start_step + 1} to {src.step - 1}); {dead} of them had no visible effect. At step {src.step} you "
            "restarted the level with its Restart button; the board on screen is the level's start."
            + (f"\nYour own latest summary before the restart:\n{own}" if (own := own_summary(src)) else ""))


def own_summary(src: Source) -> str:
    """The source agent's own latest summary before the restart, where its conversation log
    has one (a model's D.1 summary or its compaction summary; texts.py's step of a record: the
    newest screenshot logged before it), else ""."""
    import json

    from longpuzzle.agents.diagnose.texts import CONVERSATION, _image_steps

    p = Path(src.episode) / CONVERSATION
    if not p.is_file():
        return ""
    seen, latest = 0, ""
    for line in p.read_text(encoding="utf-8").splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if not isinstance(rec, dict):
            continue
        if rec.get("type") == "message":
            seen = max([seen, *_image_steps(rec.get("message"))])
        elif rec.get("type") in ("summary", "compaction") and seen < src.step:
            latest = str(rec.get("text") or rec.get("summary") or "").strip() or latest
    return latest


def clue_memory(src: Source) -> str:
    """M3's clue memory: the certified cause of each failed attempt and the resolved dead ends."""
    out = ["Clue memory (the verified causes of your failed attempts on this level):"]
    for f in src.failures:
        cause = f"Attempt {f.attempt}: the action at step {f.fatal_step}, {f.fatal_action}, made the board unsolvable"
        used = []
        if f.distance_before is not None:
            used.append(f"the board could still be finished in {f.distance_before} moves before it")
        if f.holes_before is not None and f.holes_after is not None:
            used.append(f"it used up the usable free holes ({f.holes_before} -> {f.holes_after})")
        out.append(cause + ("; " + "; ".join(used) if used else "") + ".")
    out.append("Resolved dead ends:")
    for f in src.failures:
        out.append(f"- the dead end of attempt {f.attempt} (reached at step {f.fatal_step}, {f.lost_actions} actions "
                   f"played on it), cleared by the restart at step {f.restart_step}.")
    return "\n".join(out)


def structured_account(text: str) -> str:
    """M2's account as the memory: the agent's two sections (a reply without them is kept
    whole under the first, the second left empty)."""
    text = (text or "").strip()
    if all(re.search(re.escape(s), text, re.I) for s in ACCOUNT_SECTIONS):
        body = text
    else:
        body = f"{ACCOUNT_SECTIONS[0]}:\n{text or '(none written)'}\n{ACCOUNT_SECTIONS[1]}:\n(none written)"
    return "Your own account of the failed attempt:\n" + body


def ask_account(make_agent, src: Source, timeout: float | None = None) -> str:
    """The agent's own account (M2): a fresh agent of the kind under study is given what M1
    gives (the instruction, the takeover context) and asked ACCOUNT_REQUEST aside from play."""
    from longpuzzle.agents.base import action_spec
    from longpuzzle.agents.harness.isolated import make_caller

    head = read_events(src.episode)[0]
    suite = restore_step(src.episode, src.step)
    caller = make_caller(make_agent(), timeout)
    try:
        caller.reset(head["instruction"], action_spec(*suite.frame_size, first_wait=True))
        caller.take_over(takeover_at(src.episode, src.step))
        return caller.probe(Probe(ACCOUNT_REQUEST))
    finally:
        caller.close()


def memory(src: Source, condition: str, account: str = "") -> tuple[str, Takeover]:
    """(the note the condition adds to the instruction, the takeover context it gives)."""
    if condition not in CONDITIONS:
        raise RetryError(f"unknown condition {condition!r} (one of {', '.join(CONDITIONS)})")
    if condition == "M0":
        full = takeover_at(src.episode, src.step)
        return "", Takeover(src.step, (), (), full.frame, "")
    note = {"M1": lambda: restart_summary(src), "M2": lambda: structured_account(account),
            "M3": lambda: clue_memory(src)}[condition]()
    return note, takeover_at(src.episode, src.step, note=note)


# ---- endpoints ----------------------------------------------------------------------------------

def endpoints(folder: str | Path, src: dict) -> dict:
    """The endpoints of one retry folder (the module doc); ``src`` a Source's dict."""
    from longpuzzle.agents.report.data import load_trajectory, snapshot_state

    traj = load_trajectory(folder)
    lost = set(src["lost"])
    outcome, at, best = None, None, 0.0
    for st in traj.steps:
        if st.final_answer is not None:
            outcome, at = "stop", st.step
            break
        rec = st.record
        if rec.get("level") != src["level"]:
            continue
        best = max(best, float(rec.get("P") or 0.0))
        state = snapshot_state(st.snapshot)
        if rec.get("win"):
            outcome = "completion"
        elif certified(rec) and state is not None:
            outcome = "recurrence" if board_key(src["level"], state) in lost else "other_failure"
        elif "restart" in _effects(rec):
            outcome = "restart"
        if outcome:
            at = st.step
            break
    end = (traj.end or {}).get("end")
    if outcome is None:
        outcome = "timeout" if end == "budget" else "none"
    return {"end": end, "outcome": outcome, "step": at, "best_progress": round(best, 6),
            "actions": len([s for s in traj.steps if s.final_answer is None])}


# ---- sources from scratch -------------------------------------------------------------------------

def record_sources(level_id: str, folder: str | Path, *, count: int = 1, policy: str = "greedy", seed: int = 0,
                   settings=None, catalog=None, agent: str | None = None) -> list[Source]:
    """Sources without any prior run, recorded through the harness as one episode folder
    ``folder`` (its sources then found as in a recorded run). By default a scripted policy
    (checkpoint_sources.plan: ``greedy`` plays the move of most visible progress until the
    board is certified, as the paper's agents do; ``fatal`` plays a fatal move first) plays
    ``level_id`` into ``count`` certified dead ends, restarting with the screen's Restart
    button after each. ``agent``: instead a registered scripted agent (e.g. the paper-like
    ``paper_filler``, which fills the last free hole, blames the click and restarts late)
    plays the level's objective from the home screen for up to SOURCE_ACTIONS actions per
    source asked, and its own failures on the level are the sources (the first ``count``)."""
    from longpuzzle.agents.diagnose import checkpoints as ck
    from longpuzzle.agents.diagnose.checkpoint_sources import PolicyAgent, plan
    from longpuzzle.agents.harness.objective import run_objective
    from longpuzzle.agents.harness.settings import Settings
    from longpuzzle.engine.catalog import builtin_catalog, load_level

    cat = catalog or builtin_catalog()
    st = settings or Settings(action_timeout=None)
    try:
        level = load_level(level_id, cat)
        if agent is None:
            segs = plan(level, policy, count, seed)
    except (ck.CheckpointError, KeyError, ValueError) as e:
        raise RetryError(f"{level_id}: {e}") from None
    if agent is None:
        player = PolicyAgent(level.id, [m for m, _ in segs] + [[]], catalog=cat)   # each dead end, then a restart
    else:
        from dataclasses import replace

        from longpuzzle.agents.registry import SCRIPTED_AGENTS, load_agent
        if agent not in SCRIPTED_AGENTS:
            raise RetryError(f"a source agent is a scripted agent ({', '.join(SCRIPTED_AGENTS)}), not {agent!r}")
        player = load_agent(agent, seed=seed, catalog=cat, folder=Path(folder))
        st = replace(st, max_actions=SOURCE_ACTIONS * count)
    run_objective(player, level.game, level.difficulty, settings=st, folder=folder, catalog=cat)
    found = [s for s in find_sources(folder, cat) if s.level == level.id][:count]
    if not found:
        raise RetryError(f"{agent or policy} made no failure followed by a verified restart on {level.id}")
    return found
