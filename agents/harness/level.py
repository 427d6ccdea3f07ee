"""The original repository's level protocol: each level launched directly, with the per-game
step and play-time limits, the 3-consecutive-invalid-actions limit and the no-progress /
repeating-cycle rule (HARNESS.md sections 3 and 6); the chain is ``progressive`` (stops at
the first failed level) or ``all_levels``.

One level is a ``LevelEpisode``, a stepper driven from outside one agent step at a time as
``ObjectiveEpisode`` is (objective.py): ``run_level_chain`` drives it with an agent's
actions, and replay.py feeds it the recorded actions and compares the endings it derives."""

from __future__ import annotations

import time
from pathlib import Path

from longpuzzle.agents.base import (
    NO_VISIBLE_EFFECT, BaseAgent, Feedback, FinalAnswer, Observation, action_spec,
    make_frame,
)
from longpuzzle.agents.evaluator import Evaluator
from longpuzzle.agents.harness.agent_call import caller_isolation, save_agent_log
from longpuzzle.agents.harness.clock import BudgetClock
from longpuzzle.agents.harness.cycles import CycleDetector
from longpuzzle.agents.harness.isolated import make_caller
from longpuzzle.agents.harness.objective import StepOutcome, drive
from longpuzzle.agents.harness.results import EpisodeResult
from longpuzzle.agents.harness.run import Run
from longpuzzle.agents.harness.trajectory import write_result
from longpuzzle.agents.harness.settings import HarnessError, Settings, instruction_for, refusal_end_message, refusal_limit
from longpuzzle.agents.metrics import BENCHMARK, LevelRun, level_score
from longpuzzle.engine.catalog import Catalog, builtin_catalog
from longpuzzle.engine.suite import Suite


def level_start(lid: str, st: Settings, catalog: Catalog | None = None) -> Suite:
    """The suite a level-protocol episode starts from: the level (of ``catalog``, default the
    built-in catalogue) launched directly, running the game's own failure limits as the
    original's benchmark launch does (game_limits.py)."""
    suite = Suite(lid, style=st.style, scale=st.scale, direct=True, viewport=st.viewport, lang=st.lang,
                  catalog=catalog)
    suite.enable_game_limits()
    return suite


class LevelEpisode:
    """One level of the level protocol driven from outside, one agent step at a time (the
    module doc; the same form as ObjectiveEpisode):

        ep = LevelEpisode("maze_paint/easy/1", evaluator, settings=..., folder=...)   (evaluator: the chain's)
        ep.instruction, ep.action_spec          what the agent is given
        while not ep.poll():                    solved, play time and the step cap checked
            obs = ep.observation()
            ...the agent returns ``action`` after t seconds...
            step = ep.submit(action, t)         one agent step (action dict or FinalAnswer)
        out = ep.finish(isolation)              writes the end record and result.json

    Play time is the budget clock (clock.py) with the game's timeout as its budget, started
    at the first ``poll`` and checked before each step as the original does (an action is
    not cut short); by default the agent's time is not charged (the original pauses the
    game while the model predicts). The endings an action makes (solved, the game's own
    failure and deadlock test, the cycle rule, the refusal limit, the step cap) are derived
    here alone; ``stop(end, error)`` ends it from outside (timeout while the agent thinks,
    an agent error, an infrastructure failure). ``trajectory``, ``states`` and ``clock``
    replace what a live episode records and times with (replay.py)."""

    # endings no recorded action makes: real time and the agent's own (its final answer is
    # not recorded in this protocol), taken as recorded by a replay
    UNRECORDED_ENDS = ("timeout", "agent_terminated", "agent_error", "infrastructure_error")
    # a derived ending that real time may pre-empt: the clock is checked before the step cap
    CLOCK_FIRST = {"max_steps": "timeout"}
    WORD = "level"

    def __init__(self, lid: str, evaluator: Evaluator | None = None, *, settings: Settings | None = None,
                 folder: str | Path | None = None, start: Suite | None = None, agent_name: str = "agent",
                 on_action=None, header: dict | None = None, trajectory=None, states=None,
                 clock: BudgetClock | None = None, catalog: Catalog | None = None):
        st = self.settings = (settings or Settings()).resolved("level")
        # the level of ``catalog`` (default: the built-in one; a ``start`` suite's own)
        self.suite = suite = start if start is not None else level_start(lid, st, catalog)   # the game's own limits on
        self.puzzle = suite.puzzle
        self.ev = ev = evaluator or Evaluator(suite.level.game, suite.level.difficulty, st.certify_budget,
                                              catalog=suite.catalog)
        self.folder = folder
        cfg = BENCHMARK["games"][suite.level.game]
        self.max_steps = st.max_actions or cfg["max_steps"]
        self.instruction = instruction_for(suite.level.game, suite.level.difficulty) + f" (level {suite.level.number})"
        self.run = run = Run(suite, ev, st, folder, {"protocol": "level", "level": lid, "agent": agent_name,
                                                     "instruction": self.instruction, **(header or {})},
                             trajectory=trajectory, states=states)
        ev.observe(suite, [])
        self.clock = clock if clock is not None else BudgetClock(cfg["timeout_seconds"], st.charge_agent_time,
                                                                 st.action_latency)
        if on_action is not None:
            run.on_action = lambda step, rec: on_action(step, rec, self.clock.left())
        self.action_spec = action_spec(*suite.frame_size)
        self.limit = refusal_limit(st.invalid_action_policy)      # refused actions in a row that end the level
        self.det = CycleDetector()
        self.end: str | None = None
        self.error = ""
        self.feedback: Feedback | None = None
        self.invalid_run = self.invalid_total = self.repeated = self.noop = 0
        self.prev_action: dict | None = None
        self._out: dict | None = None

    # ---- the agent's view ---------------------------------------------------------------
    @property
    def done(self) -> bool:
        return self.end is not None

    def poll(self) -> bool:
        """Whether the level has ended (starts the play time, then checks solved, the play
        time and the step cap, in the original's order)."""
        if self.end is None:
            self.clock.start()
            if self.suite.session.solved:
                self.end = "success"
            elif self.clock.expired():
                self.end = "timeout"
            elif self.run.step >= self.max_steps:
                self.end = "max_steps"
        return self.end is not None

    def observation(self) -> Observation:
        return Observation(make_frame(self.run.last_frame), self.feedback, self.run.step, None)

    def agent_timeout(self, action_timeout: float | None) -> tuple[float | None, bool]:
        """(seconds the agent may take for its next step, whether that is the play time's end)."""
        return self.clock.agent_timeout(action_timeout)

    # ---- steps ----------------------------------------------------------------------------
    def submit(self, action, t_agent: float) -> StepOutcome:
        """One agent step: after ``t_agent`` seconds of its own the agent returned ``action``
        (an action dict, possibly malformed, or a FinalAnswer)."""
        run, clock, suite = self.run, self.clock, self.suite
        if self.end is not None:
            raise HarnessError(f"the level has ended ({self.end})")
        clock.agent_call(t_agent)
        if clock.expired():                         # returned after the deadline: not executed
            self.end = "timeout"
            return StepOutcome(None, [], None, "the play time ran out before the action", self.end)
        if isinstance(action, FinalAnswer):
            self.end = "agent_terminated"
            return StepOutcome(None, [], None, "", self.end)
        c0 = suite.clock
        first = run.traj.n_frames
        fb, rec, frames, a = run.do(action, t_agent)
        self.feedback = fb
        if not fb.executed:
            self.invalid_run += 1
            self.invalid_total += 1
            if self.invalid_run >= self.limit:       # the agent's own failure: scored
                self.end, self.error = "invalid_action_limit", refusal_end_message(self.limit, fb.message)
            return StepOutcome(fb, [], None, fb.message, self.end)
        clock.action(suite.clock - c0)
        self.invalid_run = 0
        if fb.status == NO_VISIBLE_EFFECT:
            self.noop += 1
            if self.prev_action is not None and self.prev_action == a:
                self.repeated += 1
        self.prev_action = a
        if suite.session.solved:
            self.end = "success"
        elif suite.failed:                          # the game's own limits ended the level (the
            self.end = "game_failure"               # original's bridge reports a failure)
        else:
            self.end = (self.puzzle.harness_deadlock(suite.level, suite.session.state)
                        or self.det.step(a, run.fb_tracker.recent[-1], rec.get("P")) or None)
        return StepOutcome(fb, frames, a, "", self.end, first, hashes=run.last_hashes)

    def stop(self, end: str, error: str = "") -> None:
        """End the level from outside (the play time ran out while the agent thought, an
        agent error, an infrastructure failure)."""
        if self.end is None:
            self.end, self.error = end, error

    def play(self, caller):
        """The agent loop (as ObjectiveEpisode.play): reset the caller, then until the level
        ends ask it for each step and submit what it returns, yielding (observation, action,
        StepOutcome); the caller is closed and the clock stopped at the end."""
        yield from drive(self, caller, lambda waited: self.stop("timeout"))

    # ---- the end ----------------------------------------------------------------------------
    def outcome(self, termination: str, elapsed: float) -> dict:
        """The level's figures from the suite and the counted actions, with ``termination``
        and the play time ``elapsed`` (seconds charged): success, steps, moves, refused
        actions, progress and the composite score (metrics.level_score). What a replay
        recomputes of result.json with the recorded termination and time."""
        s = self.suite.session
        success = termination == "success"
        game_invalid = s.counters.rejected + s.counters.noop_moves     # e.g. Maze Paint's wall bumps
        lr = LevelRun(self.puzzle.id, success, s.progress, steps=self.run.step, elapsed=elapsed,
                      termination=termination, invalid=self.invalid_total + game_invalid, repeated=self.repeated,
                      noop=self.noop, max_steps=self.max_steps, optimal_moves=s.level.data.get("optimal_moves"),
                      moves=s.counters.moves)
        return {"success": success, "steps": self.run.step, "elapsed": round(elapsed, 6), "moves": s.counters.moves,
                "moves_before_win": s.counters.moves - 1 if success and s.counters.moves else None,
                "invalid_actions": self.invalid_total, "progress": s.progress, "score": round(level_score(lr), 4)}

    def finish(self, isolation: dict | None = None) -> dict:
        """Write the end record and result.json; returns the level's result (``isolation``:
        how the agent ran, agent_call.caller_isolation). Idempotent."""
        if self._out is not None:
            return self._out
        self.poll()
        self.clock.stop()
        run, termination, err = self.run, self.end, self.error
        o = self.outcome(termination, self.clock.charged())
        out = {"level": self.suite.level.id, "run": True, "success": o["success"], "termination": termination,
               "steps": o["steps"], "elapsed": o["elapsed"], "time": self.clock.parts(), "presses": run.presses,
               "moves": o["moves"], "moves_before_win": o["moves_before_win"], "invalid_actions": o["invalid_actions"],
               "progress": o["progress"], "score": o["score"], "error": err, "agent_isolation": isolation or {}}
        run.traj.write({"type": "end", "end": termination, "error": err, "result": out})
        run.traj.result(out)
        run.traj.close()
        self._out = out
        return out


def run_level_chain(agent: BaseAgent, game: str, difficulty: str, *, settings: Settings | None = None,
                    folder: str | Path | None = None, mode: str = "progressive",
                    agent_name: str | None = None, on_action=None, header: dict | None = None,
                    catalog: Catalog | None = None) -> EpisodeResult:
    """The original repository's protocol: each level launched directly, per-game limits, on
    the levels of ``catalog`` (default: the built-in catalogue).
    ``on_action(step, private_record, seconds_left)`` is called after every action (step
    counts within the level, seconds_left is the level's play time left); ``header``: fields
    every level's header adds (the runner's planned identity)."""
    if mode not in ("progressive", "all_levels"):
        raise HarnessError("mode must be 'progressive' or 'all_levels'")
    st = (settings or Settings()).resolved("level")
    cat = catalog or builtin_catalog()
    obj = cat.objective(f"{game}/{difficulty}")
    cfg = BENCHMARK["games"][game]
    name = agent_name or getattr(agent, "name", type(agent).__name__)
    ev = Evaluator(game, difficulty, st.certify_budget, catalog=cat)
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
        r = _run_one_level(agent, lid, ev, st, sub, name, on_action, header, cat)
        n_actions += r["steps"]
        runs.append(r)
        if not r["success"]:
            end = r["termination"]
            if mode == "progressive":
                stop = True
    seconds = time.perf_counter() - t_all
    if ev.complete:
        end = "completed"
    outcome = ev.outcome(end, budget_remaining=False)
    played = [r for r in runs if r["run"]]
    times = {k: round(sum(r["time"][k] for r in played), 6) for k in ("real", "charged", "agent", "harness",
                                                                         "simulated", "latency")}
    times.update(charge_agent_time=st.charge_agent_time, action_latency=st.action_latency,
                 budget=None, budget_per_level=cfg["timeout_seconds"])
    res = EpisodeResult(obj.id, f"level:{mode}", name, outcome.end, n_actions, seconds, outcome, levels=runs,
                        folder=str(folder or ""),
                        extra={"agent_isolation": next((r["agent_isolation"] for r in runs if r.get("run")), {})},
                        time=times, presses=sum(r["presses"] for r in played),
                        invalid=sum(r["invalid_actions"] for r in played),
                        rules={"invalid_action_policy": st.invalid_action_policy,
                               "charge_agent_time": st.charge_agent_time, "action_latency": st.action_latency,
                               "timeout_seconds": cfg["timeout_seconds"], "max_steps": st.max_actions or cfg["max_steps"],
                               "lang": st.lang, "preset": st.preset}, catalog=cat.identity())
    if folder:
        out = res.as_dict()
        out["cell_score"] = sum(r["score"] for r in runs) / len(runs)
        Path(folder).mkdir(parents=True, exist_ok=True)
        write_result(Path(folder), out)           # after every level's folder is complete
    return res


def _run_one_level(agent, lid, ev: Evaluator, st: Settings, folder, name, on_action=None,
                   header: dict | None = None, catalog: Catalog | None = None) -> dict:
    """One level (LevelEpisode, of ``catalog``) with ``agent`` choosing every action."""
    ep = LevelEpisode(lid, ev, settings=st, folder=folder, agent_name=name, on_action=on_action, header=header,
                      catalog=catalog)
    caller = make_caller(agent, st.action_timeout)
    for _ in ep.play(caller):
        pass
    save_agent_log(caller, folder)
    return ep.finish(caller_isolation(caller))
