"""The paper's objective protocol: one episode from the home screen over a whole objective.

What the agent sees and may do (PAPERS.md sections 1 and 4):

* ``reset(instruction, action_spec)``: the instruction "Complete all levels of <game> at
  <difficulty> difficulty in the Game Suite" and the action specification; nothing else.
* The first observation has NO frame (``observation.frame is None``, no feedback, step 0,
  the whole budget left): the first action must be a ``wait``, which returns the first
  screenshot and starts the budget clock. Any other first action is refused before dispatch
  (the invalid-action policy below applies to it as to a malformed action). The agent's time
  before the clock starts is bounded by the action timeout only.
* Every later observation: the frame after the last action, its public feedback, the
  intermediate frames of its animations, and the charged seconds left.
* The budget (clock.py) runs across navigation, play, waits and the agent's thinking; the
  agent call gets min(action timeout, budget left). An action returned after the deadline
  is not executed, and events of an action that fall after the deadline do not happen: the
  episode ends at the deadline (end "budget").
* A refused action (malformed, or not a wait first) is the agent's own failure: it is
  answered with feedback dispatch_failed and counted, and 3 in a row (``dispatch_failed``,
  the default) or the first one (``watchdog``) end the episode: end "invalid_action_limit",
  SCORED like any other non-completion (settings.refusal_limit).
* Ends at full completion, at the agent's FinalAnswer, at the deadline, at max_actions, at
  the refusal limit, on an agent error, or on an infrastructure failure (the only unscored
  end: a failure of the harness or of what it runs on, not of the agent).
* A continuation may also end at a stop condition (``stop_when``, end "stop_condition"): the
  diagnostics stop a continuation once what it measures is decided (the level won), so no
  model is paid for play nothing reads. It is recorded in the header, so a replay derives
  the same end from the actions.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from longpuzzle.agents.base import (
    AgentError, InfrastructureError, BaseAgent, Feedback, FinalAnswer, Observation, Takeover, action_spec, make_frame,
)
from longpuzzle.agents.evaluator import Evaluator
from longpuzzle.agents.harness.agent_call import caller_isolation, jsonable_action, save_agent_log
from longpuzzle.agents.harness.clock import BudgetClock
from longpuzzle.agents.harness.isolated import make_caller
from longpuzzle.agents.harness.results import EpisodeResult, objective_results, result_core
from longpuzzle.agents.harness.run import Run
from longpuzzle.agents.harness.settings import HarnessError, Settings, instruction_for, refusal_end_message, refusal_limit
from longpuzzle.agents.metrics import action_step_kind
from longpuzzle.engine.catalog import Catalog
from longpuzzle.engine.suite import Suite


class ObjectiveEpisode:
    """One objective episode driven from outside, one agent step at a time: the paper's
    protocol (module doc) with nothing of the agent in it. ``run_objective`` drives it by
    calling an agent; a tool server (longpuzzle.agents.vista) drives it from tool calls.

        ep = ObjectiveEpisode("maze_paint", "easy", folder=...)
        ep.instruction, ep.action_spec          what the agent is given
        while not ep.poll():                    budget / max_actions checked
            obs = ep.observation()              the agent's view now
            ...the agent thinks for t seconds and returns ``action``...
            step = ep.submit(action, t)         one agent step (action dict or FinalAnswer)
        result = ep.finish()                    writes the end record and result.json

    ``stop(end, error)`` ends it from outside (an agent error, an infrastructure failure,
    the agent still thinking at the deadline); ``record(rec)`` adds a line of the driver's
    own to the episode's events (a tool call). Steps are counted for NGAR
    (metrics.ngar): by default ``submit`` counts each agent step by its action
    (``count=False``: the driver counts its own steps with ``count_step``). The endings
    an action makes (every level won, the refusal limit, max_actions, a final answer, an
    action returned after the deadline) are derived here alone; ``trajectory``, ``states``
    and ``clock`` replace what a live episode records and times with (replay.py feeds the
    recorded actions through this same stepper)."""

    # the stop conditions a continuation may be given (``stop_when``): "won", level ids of the
    # objective - it ends ("stop_condition") after the action with which the evaluator
    # observes one of them won (a level already won before the episode does not count). The
    # charged seconds and the actions are the settings' budget and max_actions.
    STOP_KEYS = {"won": list}
    # endings no recorded action makes: real time and the agent's process (a tool driver's
    # agent_stop: the agent left without a final answer), taken as recorded by a replay
    UNRECORDED_ENDS = ("budget", "agent_error", "infrastructure_error", "agent_stop")
    # a derived ending that real time may pre-empt: the clock is checked before max_actions
    CLOCK_FIRST = {"max_actions": "budget"}
    WORD = "episode"

    def __init__(self, game: str, difficulty: str, *, settings: Settings | None = None,
                 folder: str | Path | None = None, start: str | Suite = "home", instruction: str | None = None,
                 evaluator: Evaluator | None = None, agent_name: str = "agent", on_action=None,
                 header: dict | None = None, trajectory=None, states=None, clock: BudgetClock | None = None,
                 catalog: Catalog | None = None, takeover: Takeover | None = None, stop_when: dict | None = None):
        st = self.settings = (settings or Settings()).resolved("objective")
        self.suite = suite = start if isinstance(start, Suite) else Suite(start, style=st.style, scale=st.scale,
                                                                           viewport=st.viewport, lang=st.lang,
                                                                           catalog=catalog)
        self.catalog = cat = suite.catalog           # the levels of the episode (the start suite's)
        self.obj = cat.objective(f"{game}/{difficulty}")
        self.ev = ev = evaluator or Evaluator(game, difficulty, st.certify_budget, catalog=cat)
        self.instruction = instruction or instruction_for(game, difficulty)
        self.agent_name = agent_name
        self.folder = folder
        self.takeover = takeover          # the D.1 takeover context, given after reset (a continuation)
        prior = {l: {"reached": o.reached, "won": o.won, "max_P": o.max_progress} for l, o in ev.outcomes.items()}
        why = stop_problem(stop_when, self.obj.level_ids)
        if why:
            raise HarnessError(f"stop_when: {why}")
        self.stop_when = stop_when
        self._stop_levels = [l for l in (stop_when or {}).get("won", ()) if not ev.outcomes[l].won]
        self.run = run = Run(suite, ev, st, folder, {"protocol": "objective", "objective": self.obj.id,
                                                     "agent": agent_name, "instruction": self.instruction,
                                                     "evaluator_start": prior, "mismatch_start": ev.mismatch,
                                                     **({"stop_when": stop_when} if stop_when else {}),
                                                     **(header or {})}, first_wait=True,
                              trajectory=trajectory, states=states)
        ev.observe(suite, [])
        if clock is None:
            clock = BudgetClock(st.budget, st.charge_agent_time, st.action_latency)
        self.clock = clock
        if on_action is not None:
            run.on_action = lambda step, rec: on_action(step, rec, clock.left())
        self.action_spec = action_spec(*suite.frame_size, first_wait=True)
        self.limit = refusal_limit(st.invalid_action_policy)     # refused actions in a row that end it
        self.end: str | None = None
        self.error = ""
        self.feedback: Feedback | None = None
        self.intermediate: tuple = ()     # the last action's intermediate frames (copies)
        self.invalid_run = self.invalid_total = 0
        self.steps = {"native": 0, "other": 0}
        self._result: EpisodeResult | None = None

    # ---- the agent's view ---------------------------------------------------------------
    @property
    def done(self) -> bool:
        return self.end is not None

    def poll(self) -> bool:
        """Whether the episode has ended (checks the budget and max_actions first)."""
        if self.end is None:
            if self.clock.expired():
                self.end = "budget"
            elif self.settings.max_actions is not None and self.run.step >= self.settings.max_actions:
                self.end = "max_actions"
        return self.end is not None

    def observation(self) -> Observation:
        """The agent's observation now: no frame before the first wait, else the frame after
        the last action, its feedback, its intermediate frames and the charged time left."""
        frame = None if self.run.need_wait else make_frame(self.run.last_frame)
        return Observation(frame, self.feedback, self.run.step, self.clock.left(), self.intermediate)

    def agent_timeout(self, action_timeout: float | None) -> tuple[float | None, bool]:
        """(seconds the agent may take for its next step, whether that is the deadline)."""
        return self.clock.agent_timeout(action_timeout)

    # ---- steps ----------------------------------------------------------------------------
    def count_step(self, kind: str) -> None:
        """Count one agent step for NGAR: ``kind`` "native" or "other"."""
        self.steps[kind] += 1

    def submit(self, action, t_agent: float, *, count: bool = True, checked: dict | None = None) -> StepOutcome:
        """One agent step: after ``t_agent`` seconds of its own the agent returned ``action``
        (an action dict, possibly malformed, or a FinalAnswer). ``checked``: what
        ``run.check(action)`` already gave for it (the caller checked it first), so that the
        action is validated once."""
        run, clock = self.run, self.clock
        if self.end is not None:
            raise HarnessError(f"the episode has ended ({self.end})")
        clock.agent_call(t_agent)
        if count:
            self.count_step(step_kind(action))
        if clock.expired():                             # returned after the deadline: not executed
            run.traj.write({"stream": "public", "step": run.step + 1, "late_action": jsonable_action(action),
                            "t_agent": round(t_agent, 6)})
            self.end = "budget"
            return StepOutcome(None, [], None, "the budget ran out before the action", self.end)
        if isinstance(action, FinalAnswer):
            self.end = "final_answer"
            run.traj.write({"stream": "public", "step": run.step + 1, "final_answer": action.text})
            return StepOutcome(None, [], None, "", self.end)
        a, why = (checked, "") if checked is not None else run.check(action)
        if a is None:
            self.feedback, _ = run.refuse(action, why, t_agent)
            self.invalid_total += 1
            self.invalid_run += 1
            self.intermediate = ()
            if self.invalid_run >= self.limit:
                self.end, self.error = "invalid_action_limit", refusal_end_message(self.limit, why)
            return StepOutcome(self.feedback, [], None, why, self.end)
        self.invalid_run = 0
        clock.start()                                   # (the first wait starts it)
        c0 = self.suite.clock
        first = run.traj.n_frames
        until = clock.deadline_ms(c0)
        fb, rec, frames, a = run.dispatch(a, t_agent, until)
        clock.action(self.suite.clock - c0, at_deadline=until is not None and self.suite.clock >= until)
        self.feedback = fb
        self.intermediate = tuple(make_frame(f) for f in frames[:-1])
        if self.ev.complete:
            self.end = "completed"
        elif any(self.ev.outcomes[l].won for l in self._stop_levels):
            self.end = "stop_condition"
        controls = [e["effect"] for e in rec.get("effects", ()) if e.get("effect") in PUBLIC_CONTROLS]
        return StepOutcome(fb, frames, a, "", self.end, first, controls, run.last_hashes)

    def stop(self, end: str, error: str = "", agent_seconds: float | None = None) -> None:
        """End the episode from outside (``agent_seconds``: the agent's time in the step it
        was still thinking at the end is charged)."""
        if self.end is None:
            if agent_seconds is not None:
                self.clock.agent_call(agent_seconds)
            self.end, self.error = end, error

    def play(self, caller):
        """The agent loop of an agent that returns actions (an agent_call caller): reset it,
        then until the episode ends ask it for each step under the action timeout and the
        deadline (still thinking at the deadline: the budget end) and submit what it
        returns, yielding (observation, action, StepOutcome) after each step. An agent error
        or an infrastructure failure ends the episode; the caller is closed and the clock
        stopped at the end, also when the driver stops iterating early."""
        yield from drive(self, caller, lambda waited: self.stop("budget", agent_seconds=waited))

    def record(self, rec: dict) -> None:
        """A line of the driver's own in the episode's events (e.g. a tool call)."""
        self.run.traj.write(rec)

    def public_screen(self) -> dict:
        """What the screen shows now, as a person reads it (run.public_screen)."""
        return self.run.public_screen()

    # ---- the end ----------------------------------------------------------------------------
    def finish(self, extra: dict | None = None) -> EpisodeResult:
        """Write the end record and result.json; returns the result (``extra``: fields the
        driver adds to result.json). Idempotent."""
        if self._result is not None:
            return self._result
        self.poll()
        if self.end is None:
            self.end = "budget"
        end, err, ev, run, st, clock = self.end, self.error, self.ev, self.run, self.settings, self.clock
        clock.stop()
        remaining = not clock.expired()
        outcome, levels, derived = objective_results(ev, end, remaining and end not in ("budget", "max_actions"),
                                                     run.level_presses, self.steps["native"], self.steps["other"])
        times = clock.parts()
        res = EpisodeResult(self.obj.id, "objective", self.agent_name, end, run.step, times["real"], outcome,
                            error=err, folder=str(self.folder or ""), time=times, presses=run.presses,
                            invalid=self.invalid_total,
                            rules={"invalid_action_policy": st.invalid_action_policy,
                                   "charge_agent_time": st.charge_agent_time, "action_latency": st.action_latency,
                                   "budget": st.budget, "first_action": "wait", "viewport": st.viewport,
                                   "lang": st.lang, "preset": st.preset},
                            extra=dict(extra or {}), catalog=self.catalog.identity())
        res.levels = levels
        out = res.as_dict()
        out.update(derived)
        run.traj.write({"type": "end", "end": end, "error": err, "result": result_core(out)})
        run.traj.result(out)
        run.traj.close()
        self._result = res
        return res


def stop_problem(stop_when, level_ids) -> str:
    """"" when ``stop_when`` is None or a stop condition of an objective of these levels
    (ObjectiveEpisode.STOP_KEYS), else what is wrong with it."""
    if stop_when is None:
        return ""
    if type(stop_when) is not dict or not stop_when or set(stop_when) - set(ObjectiveEpisode.STOP_KEYS):
        return f"a dict of {', '.join(ObjectiveEpisode.STOP_KEYS)}, not {str(stop_when)[:60]!r}"
    won = stop_when.get("won")
    if won is not None and (type(won) is not list or not won or any(l not in level_ids for l in won)):
        return f"'won' must list levels of the objective, not {str(won)[:60]!r}"
    return ""


@dataclass
class StepOutcome:
    """What one agent step did. ``feedback`` None: nothing was dispatched or refused (a late
    action, a final answer); ``frames`` the frames the action produced (intermediate ones
    first, the final one last; [] when refused) and ``first_frame`` the index of frames[0]
    among the episode's frames; ``message`` why it was refused or not executed; ``ended``
    the episode's end when this step ended it; ``controls`` the labelled controls the
    action pressed that acted ("restart": Restart or Replay, "undo": Undo), which the
    screen shows (the board back at its start, one move taken back); ``hashes`` the frame
    hash of each of ``frames`` (frames.frame_hash, as recorded)."""
    feedback: Feedback | None
    frames: list
    action: dict | None
    message: str = ""
    ended: str | None = None
    first_frame: int | None = None
    controls: list = field(default_factory=list)
    hashes: list = field(default_factory=list)


PUBLIC_CONTROLS = ("restart", "undo")


def step_kind(action) -> str:
    """An agent step's NGAR class from its action (metrics.action_step_kind)."""
    return "other" if isinstance(action, FinalAnswer) else action_step_kind(action)


def run_objective(agent: BaseAgent, game: str, difficulty: str, *, settings: Settings | None = None,
                  folder: str | Path | None = None, start: str | Suite = "home",
                  instruction: str | None = None, evaluator: Evaluator | None = None,
                  agent_name: str | None = None, on_action=None, header: dict | None = None,
                  catalog: Catalog | None = None, takeover: Takeover | None = None,
                  stop_when: dict | None = None) -> EpisodeResult:
    """One objective episode (the paper's protocol) with ``agent`` choosing every action, on
    the levels of ``catalog`` (default: the built-in catalogue; a ``start`` suite's own).
    ``on_action(step, private_record, seconds_left)`` is called after every action (a live
    status display; seconds_left is the budget clock's charged time left, None without a
    budget). ``takeover``: the takeover context (api.Takeover) the agent is given after reset;
    ``stop_when`` a stop condition (ObjectiveEpisode.STOP_KEYS)."""
    name = agent_name or getattr(agent, "name", type(agent).__name__)
    ep = ObjectiveEpisode(game, difficulty, settings=settings, folder=folder, start=start, instruction=instruction,
                          evaluator=evaluator, agent_name=name, on_action=on_action, header=header,
                          catalog=catalog, takeover=takeover, stop_when=stop_when)
    caller = make_caller(agent, ep.settings.action_timeout)
    for _ in ep.play(caller):
        pass
    save_agent_log(caller, folder)
    return ep.finish({"agent_isolation": caller_isolation(caller)})


def drive(ep, caller, stop_at_deadline):
    """The agent loop of a stepper (ObjectiveEpisode, LevelEpisode: their ``play``): reset the
    caller (and give it the episode's takeover context, if any), then until the episode ends
    ask it for each step under the action timeout and the
    deadline and submit what it returns, yielding (observation, action, StepOutcome). An agent
    still thinking at the deadline calls ``stop_at_deadline(seconds it waited)`` (each stepper
    ends its own way); an agent error or an infrastructure failure ends the episode; the caller
    is closed and the clock stopped at the end, also when the driver stops iterating early."""
    a_timeout = ep.settings.action_timeout or None
    try:
        caller.reset(ep.instruction, ep.action_spec)
        if getattr(ep, "takeover", None) is not None:
            caller.take_over(ep.takeover, a_timeout)
        while not ep.poll():
            obs = ep.observation()
            timeout, by_budget = ep.agent_timeout(a_timeout)
            t_a = time.perf_counter()
            try:
                action = caller.act(obs, timeout)
            except AgentError as e:
                if e.kind == "timeout" and by_budget:       # still thinking at the deadline
                    stop_at_deadline(time.perf_counter() - t_a)
                    break
                raise
            yield obs, action, ep.submit(action, time.perf_counter() - t_a)
    except AgentError as e:
        ep.stop("agent_error", str(e))
    except InfrastructureError as e:
        ep.stop("infrastructure_error", f"{type(e).__name__}: {e}")
    finally:
        caller.close()
        ep.clock.stop()
