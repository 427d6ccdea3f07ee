"""The paper's objective protocol: one episode from the home screen over a whole objective."""

from __future__ import annotations

import time
from pathlib import Path

from longpuzzle.agents.base import AgentError, InfrastructureError, BaseAgent, Feedback, FinalAnswer, Observation, action_spec, make_frame
from longpuzzle.agents.evaluator import Evaluator
from longpuzzle.agents.harness.agent_call import make_caller
from longpuzzle.agents.harness.results import EpisodeResult, result_core
from longpuzzle.agents.harness.run import Run
from longpuzzle.agents.harness.settings import Settings, instruction_for
from longpuzzle.agents.metrics import aggregate
from longpuzzle.engine.catalog import catalog
from longpuzzle.engine.suite import Suite


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
    run = Run(suite, ev, st, folder, {"protocol": "objective", "objective": obj.id, "agent": name,
                                       "instruction": text, "evaluator_start": prior,
                                       "mismatch_start": ev.mismatch})
    ev.observe(suite, [])
    caller = make_caller(agent, st.action_timeout)
    t_start = time.perf_counter()
    end, err = "budget", ""
    fb: Feedback | None = None
    extra: tuple = ()
    try:
        caller.reset(text, action_spec(*suite.frame_size))
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
            action = caller.act(obs)
            t_agent = time.perf_counter() - t_a
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
    except InfrastructureError as e:
        end, err = "infrastructure_error", f"{type(e).__name__}: {e}"
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
    run.traj.write({"type": "end", "end": end, "error": err, "result": result_core(out)})
    run.traj.result(out)
    run.traj.close()
    return res
