"""The original repository's level protocol: each level launched directly, with the per-game
step and play-time limits, the 3-consecutive-invalid-actions limit and the no-progress /
repeating-cycle rule (HARNESS.md sections 3 and 6); the chain is ``progressive`` (stops at
the first failed level) or ``all_levels``."""

from __future__ import annotations

import time
from pathlib import Path

from longpuzzle.agents.base import (
    NO_VISIBLE_EFFECT, AgentError, BaseAgent, FinalAnswer, InfrastructureError, Observation, action_spec, make_frame,
)
from longpuzzle.agents.evaluator import Evaluator
from longpuzzle.agents.harness.agent_call import caller_isolation, save_agent_log
from longpuzzle.agents.harness.clock import BudgetClock
from longpuzzle.agents.harness.cycles import CycleDetector
from longpuzzle.agents.harness.isolated import make_caller
from longpuzzle.agents.harness.recompute import level_start
from longpuzzle.agents.harness.results import EpisodeResult
from longpuzzle.agents.harness.run import Run
from longpuzzle.agents.harness.trajectory import write_result
from longpuzzle.agents.harness.settings import HarnessError, Settings, instruction_for, refusal_end_message, refusal_limit
from longpuzzle.agents.metrics import BENCHMARK, LevelRun, level_score
from longpuzzle.engine.catalog import catalog


def run_level_chain(agent: BaseAgent, game: str, difficulty: str, *, settings: Settings | None = None,
                    folder: str | Path | None = None, mode: str = "progressive",
                    agent_name: str | None = None, on_action=None, header: dict | None = None) -> EpisodeResult:
    """The original repository's protocol: each level launched directly, per-game limits.
    ``on_action(step, private_record, seconds_left)`` is called after every action (step
    counts within the level, seconds_left is the level's play time left); ``header``: fields
    every level's header adds (the runner's planned identity)."""
    if mode not in ("progressive", "all_levels"):
        raise HarnessError("mode must be 'progressive' or 'all_levels'")
    st = (settings or Settings()).resolved("level")
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
        r = _run_one_level(agent, lid, ev, st, cfg, sub, name, on_action, header)
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
                               "lang": st.lang, "preset": st.preset})
    if folder:
        out = res.as_dict()
        out["cell_score"] = sum(r["score"] for r in runs) / len(runs)
        Path(folder).mkdir(parents=True, exist_ok=True)
        write_result(Path(folder), out)           # after every level's folder is complete
    return res


def _run_one_level(agent, lid, ev: Evaluator, st: Settings, cfg: dict, folder, name, on_action=None,
                   header: dict | None = None) -> dict:
    """One level: play time is the budget clock (clock.py) with the per-game timeout as its
    budget, checked before each step as the original does (an action is not cut short); by
    default the agent's time is not charged (the original pauses the game while the model
    predicts)."""
    suite = level_start(lid, st)        # direct launch, with the game's own limits (as the original's)
    puzzle = suite.puzzle
    max_steps = st.max_actions or cfg["max_steps"]
    timeout_s = cfg["timeout_seconds"]
    text = instruction_for(suite.level.game, suite.level.difficulty) + f" (level {suite.level.number})"
    run = Run(suite, ev, st, folder, {"protocol": "level", "level": lid, "agent": name, "instruction": text,
                                      **(header or {})})
    ev.observe(suite, [])
    caller = make_caller(agent, st.action_timeout)
    clock = BudgetClock(timeout_s, st.charge_agent_time, st.action_latency)
    if on_action is not None:
        run.on_action = lambda step, rec: on_action(step, rec, clock.left())
    a_timeout = st.action_timeout or None
    det = CycleDetector()
    limit = refusal_limit(st.invalid_action_policy)      # refused actions in a row that end the level
    invalid_run = invalid_total = repeated = noop = 0
    termination, err = "", ""
    fb = None
    prev_action = None
    try:
        caller.reset(text, action_spec(*suite.frame_size))
        clock.start()
        while True:
            if suite.session.solved:
                termination = "success"
                break
            if clock.expired():
                termination = "timeout"
                break
            if run.step >= max_steps:
                termination = "max_steps"
                break
            obs = Observation(make_frame(run.last_frame), fb, run.step, None)
            timeout, by_budget = clock.agent_timeout(a_timeout)
            t_a = time.perf_counter()
            try:
                action = caller.act(obs, timeout)
            except AgentError as e:
                if e.kind == "timeout" and by_budget:
                    termination = "timeout"
                    break
                raise
            t_agent = time.perf_counter() - t_a
            clock.agent_call(t_agent)
            if clock.expired():                     # returned after the deadline: not executed
                termination = "timeout"
                break
            if isinstance(action, FinalAnswer):
                termination = "agent_terminated"
                break
            c0 = suite.clock
            fb, rec, frames, a = run.do(action, t_agent)
            if not fb.executed:
                invalid_run += 1
                invalid_total += 1
                if invalid_run >= limit:           # the agent's own failure: scored
                    termination, err = "invalid_action_limit", refusal_end_message(limit, fb.message)
                    break
                continue
            clock.action(suite.clock - c0)
            invalid_run = 0
            if fb.status == NO_VISIBLE_EFFECT:
                noop += 1
                if prev_action is not None and prev_action == a:
                    repeated += 1
            prev_action = a
            if suite.session.solved:
                termination = "success"
                break
            if suite.failed:                        # the game's own limits ended the level (the
                termination = "game_failure"        # original's bridge reports a failure)
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
    except InfrastructureError as e:
        termination, err = "infrastructure_error", f"{type(e).__name__}: {e}"
    finally:
        caller.close()
        clock.stop()
    s = suite.session
    success = termination == "success"
    game_invalid = s.counters.rejected + s.counters.noop_moves     # e.g. Maze Paint's wall bumps
    elapsed = clock.charged()
    lr = LevelRun(puzzle.id, success, s.progress, steps=run.step, elapsed=elapsed,
                  termination=termination, invalid=invalid_total + game_invalid, repeated=repeated, noop=noop,
                  max_steps=max_steps, optimal_moves=s.level.data.get("optimal_moves"), moves=s.counters.moves)
    score = level_score(lr)
    out = {"level": lid, "run": True, "success": success, "termination": termination, "steps": run.step,
           "elapsed": round(elapsed, 6), "time": clock.parts(), "presses": run.presses,
           "moves": s.counters.moves, "moves_before_win": s.counters.moves - 1 if success and s.counters.moves else None,
           "invalid_actions": invalid_total, "progress": s.progress, "score": round(score, 4), "error": err,
           "agent_isolation": caller_isolation(caller)}
    save_agent_log(caller, folder)
    run.traj.write({"type": "end", "end": termination, "error": err, "result": out})
    run.traj.result(out)
    run.traj.close()
    return out
