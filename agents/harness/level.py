"""The original repository's level protocol: each level launched directly, with the per-game
step and play-time limits, the 3-consecutive-invalid-actions limit and the no-progress /
repeating-cycle rule (HARNESS.md sections 3 and 6); the chain is ``progressive`` (stops at
the first failed level) or ``all_levels``."""

from __future__ import annotations

import json
import time
from pathlib import Path

from longpuzzle.agents.base import NO_VISIBLE_EFFECT, AgentError, BaseAgent, FinalAnswer, Observation, action_spec, make_frame
from longpuzzle.agents.evaluator import Evaluator
from longpuzzle.agents.harness.agent_call import make_caller
from longpuzzle.agents.harness.cycles import CycleDetector
from longpuzzle.agents.harness.results import EpisodeResult
from longpuzzle.agents.harness.run import Run
from longpuzzle.agents.harness.settings import HarnessError, Settings, instruction_for
from longpuzzle.agents.metrics import BENCHMARK, LevelRun, level_score
from longpuzzle.engine.catalog import catalog
from longpuzzle.engine.suite import Suite


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
    run = Run(suite, ev, st, folder, {"protocol": "level", "level": lid, "agent": name, "instruction": text})
    ev.observe(suite, [])
    caller = make_caller(agent, st.action_timeout)
    det = CycleDetector()
    invalid_run = invalid_total = repeated = noop = 0
    termination, err = "", ""
    fb = None
    prev_action = None
    try:
        caller.reset(text, action_spec(*suite.frame_size))
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
            action = caller.act(obs)
            t_agent = time.perf_counter() - t_a
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
    except InfrastructureError as e:
        termination, err = "infrastructure_error", f"{type(e).__name__}: {e}"
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
