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
* A refused action (malformed, or not a wait first): with the paper's ``watchdog`` policy the
  run stops and is invalidated (end "invalidated", unscored); with ``dispatch_failed`` (the
  original repository's) it is answered with feedback dispatch_failed, and 3 in a row end
  the episode (end "invalid_action_limit", a scored failure).
* Ends at full completion, at the agent's FinalAnswer, at the deadline, at max_actions, on
  an agent error or an infrastructure failure (unscored).
"""

from __future__ import annotations

import time
from pathlib import Path

from longpuzzle.agents.base import AgentError, InfrastructureError, BaseAgent, Feedback, FinalAnswer, Observation, action_spec, make_frame
from longpuzzle.agents.evaluator import Evaluator
from longpuzzle.agents.harness.agent_call import jsonable_action, make_caller
from longpuzzle.agents.harness.clock import BudgetClock
from longpuzzle.agents.harness.results import EpisodeResult, result_core
from longpuzzle.agents.harness.run import Run
from longpuzzle.agents.harness.settings import WATCHDOG, Settings, instruction_for
from longpuzzle.agents.metrics import BENCHMARK, aggregate
from longpuzzle.engine.catalog import catalog
from longpuzzle.engine.suite import Suite


def run_objective(agent: BaseAgent, game: str, difficulty: str, *, settings: Settings | None = None,
                  folder: str | Path | None = None, start: str | Suite = "home",
                  instruction: str | None = None, evaluator: Evaluator | None = None,
                  agent_name: str | None = None, on_action=None) -> EpisodeResult:
    """One objective episode (the paper's protocol). ``on_action(step, private_record,
    seconds_left)`` is called after every action (a live status display; seconds_left is the
    budget clock's charged time left, None without a budget)."""
    st = (settings or Settings()).resolved("objective")
    obj = catalog().objective(f"{game}/{difficulty}")
    suite = start if isinstance(start, Suite) else Suite(start, style=st.style, scale=st.scale, viewport=st.viewport)
    ev = evaluator or Evaluator(game, difficulty, st.certify_budget)
    text = instruction or instruction_for(game, difficulty)
    name = agent_name or getattr(agent, "name", type(agent).__name__)
    prior = {l: {"reached": o.reached, "won": o.won, "max_P": o.max_progress} for l, o in ev.outcomes.items()}
    run = Run(suite, ev, st, folder, {"protocol": "objective", "objective": obj.id, "agent": name,
                                       "instruction": text, "evaluator_start": prior,
                                       "mismatch_start": ev.mismatch}, first_wait=True)
    ev.observe(suite, [])
    caller = make_caller(agent, st.action_timeout)
    clock = BudgetClock(st.budget, st.charge_agent_time, st.action_latency)
    if on_action is not None:
        run.on_action = lambda step, rec: on_action(step, rec, clock.left())
    a_timeout = st.action_timeout or None
    limit = BENCHMARK["harness"]["invalid_action_limit"]
    end, err = "budget", ""
    fb: Feedback | None = None
    extra: tuple = ()
    invalid_run = invalid_total = 0
    try:
        caller.reset(text, action_spec(*suite.frame_size, first_wait=True))
        while True:
            if clock.expired():
                end = "budget"
                break
            if st.max_actions is not None and run.step >= st.max_actions:
                end = "max_actions"
                break
            frame = None if run.need_wait else make_frame(run.last_frame)
            obs = Observation(frame, fb, run.step, clock.left(), extra)
            timeout, by_budget = clock.agent_timeout(a_timeout)
            t_a = time.perf_counter()
            try:
                action = caller.act(obs, timeout)
            except AgentError as e:
                if e.kind == "timeout" and by_budget:       # still thinking at the deadline
                    clock.agent_call(time.perf_counter() - t_a)
                    end = "budget"
                    break
                raise
            t_agent = time.perf_counter() - t_a
            clock.agent_call(t_agent)
            if clock.expired():                             # returned after the deadline: not executed
                run.traj.write({"stream": "public", "step": run.step + 1, "late_action": jsonable_action(action),
                                "t_agent": round(t_agent, 6)})
                end = "budget"
                break
            if isinstance(action, FinalAnswer):
                end = "final_answer"
                run.traj.write({"stream": "public", "step": run.step + 1, "final_answer": action.text})
                break
            a, why = run.check(action)
            if a is None:
                fb, _ = run.refuse(action, why, t_agent)
                invalid_total += 1
                invalid_run += 1
                extra = ()
                if st.invalid_action_policy == WATCHDOG:
                    end, err = "invalidated", f"watchdog: {why}"
                    break
                if invalid_run >= limit:
                    end, err = "invalid_action_limit", f"{limit} refused actions in a row; the last: {why}"
                    break
                continue
            invalid_run = 0
            clock.start()                                   # (the first wait starts it)
            c0 = suite.clock
            fb, rec, frames, _ = run.dispatch(a, t_agent, clock.deadline_ms(c0))
            clock.action(suite.clock - c0)
            extra = tuple(make_frame(f) for f in frames[:-1])
            if ev.complete:
                end = "completed"
                break
    except AgentError as e:
        end, err = "agent_error", str(e)
    except InfrastructureError as e:
        end, err = "infrastructure_error", f"{type(e).__name__}: {e}"
    finally:
        caller.close()
        clock.stop()
    remaining = not clock.expired()
    outcome = ev.outcome(end, budget_remaining=remaining and end not in ("budget", "max_actions"))
    times = clock.parts()
    res = EpisodeResult(obj.id, "objective", name, end, run.step, times["real"], outcome, error=err,
                        folder=str(folder or ""), time=times, presses=run.presses, invalid=invalid_total,
                        rules={"invalid_action_policy": st.invalid_action_policy,
                               "charge_agent_time": st.charge_agent_time, "action_latency": st.action_latency,
                               "budget": st.budget, "first_action": "wait", "viewport": st.viewport})
    scores = ev.level_scores(end)
    res.levels = [_level_row(ev, l, sc, run.level_presses.get(l, 0)) for l, sc in zip(ev.targets, scores)]
    out = res.as_dict()
    out["metrics"] = {k: v for k, v in aggregate([outcome]).items() if k not in ("objectives", "games")}
    out["metrics"]["score"] = sum(scores) / len(scores)
    run.traj.write({"type": "end", "end": end, "error": err, "result": result_core(out)})
    run.traj.result(out)
    run.traj.close()
    return res


def _level_row(ev: Evaluator, lid: str, score: float, presses: int) -> dict:
    """A target level's line in the result: its score, pointer presses made on it, and its
    move counts: ``moves`` = the accepted moves of the level's last visit (restarts do not
    reset it) INCLUDING the winning move; ``moves_before_win`` leaves the winning move out,
    which is how the paper's per-level sums count (its Rush Hour totals are consistent with
    it); None for a level not won."""
    row = {"level": lid, "score": round(score, 4), "presses": presses}
    st = ev.level_stats.get(lid)
    if st is not None and st.get("moves") is not None:
        won = ev.outcomes[lid].won
        row["moves"] = st["moves"]
        row["moves_before_win"] = st["moves"] - 1 if won and st["moves"] else None
    return row
