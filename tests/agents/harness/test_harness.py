"""Evaluation harness: episodes, privacy of the agent's view, agent failures, trajectories,
replay, restore and interventions, the level protocol's limits, the eval command."""

import gc
import json
import shutil
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from longpuzzle.agents.base import BaseAgent, FinalAnswer, Observation
from longpuzzle.agents.registry import load_agent
from longpuzzle.agents.scripted import GreedyAgent, RandomAgent, SolverAgent
from longpuzzle.agents.evaluator import Evaluator
from longpuzzle.agents.harness import (
    CycleDetector, HarnessError, LevelEpisode, Settings, continue_episode, read_events, replay_episode, restore_step,
    open_frames, run_level_chain, run_objective,
)
from longpuzzle.cli import cli
from longpuzzle.engine.errors import LongPuzzleError
from longpuzzle.engine.session import Session
from longpuzzle.engine.suite import Suite

FAST = Settings(budget=120, save_frames=True, action_timeout=None)


def test_solver_agent_completes_an_objective_and_the_episode_replays(tmp_path):
    r = run_objective(SolverAgent(), "nut_and_bolt", "easy", settings=FAST, folder=tmp_path)
    assert r.end == "completed" and r.outcome.success and r.outcome.solved_count == 3
    ev = read_events(tmp_path)
    pub = [e for e in ev if e.get("stream") == "public"]
    prv = [e for e in ev if e.get("stream") == "private"]
    assert len(pub) == len(prv) == r.actions
    with open_frames(tmp_path) as fs:
        assert len(fs) == r.actions + 1 and not fs.torn
    wins = [e["record"]["level"] for e in prv if e["record"]["win"]]
    assert wins == [f"nut_and_bolt/easy/{i}" for i in (1, 2, 3)]
    assert all(e["record"]["certificate"] in ("solvable", "unknown", None) for e in prv)
    res = json.loads((tmp_path / "result.json").read_text())
    assert res["success"] and res["metrics"]["OSR"] == 100.0
    rep = replay_episode(tmp_path)
    assert rep.ok and rep.steps == r.actions


def test_replay_reports_the_first_divergence(tmp_path):
    run_objective(SolverAgent(), "maze_paint", "easy", settings=Settings(max_actions=12, action_timeout=None),
                  folder=tmp_path)
    lines = (tmp_path / "events.jsonl").read_text().splitlines()
    k = next(i for i, l in enumerate(lines) if '"stream":"public"' in l and '"step":5,' in l)
    rec = json.loads(lines[k])
    rec["frames"][-1] = "0" * 32
    lines[k] = json.dumps(rec)
    (tmp_path / "events.jsonl").write_text("\n".join(lines) + "\n")
    rep = replay_episode(tmp_path)
    assert not rep.ok and rep.steps == 5 and "frames differ" in rep.divergence


def test_truncated_episode_is_a_valid_prefix_and_corrupt_is_refused(tmp_path):
    run_objective(RandomAgent(1), "maze_paint", "easy", settings=Settings(max_actions=10, action_timeout=None),
                  folder=tmp_path)
    lines = (tmp_path / "events.jsonl").read_text().splitlines()
    (tmp_path / "events.jsonl").write_text("\n".join(lines[:7]) + "\n")
    rep = replay_episode(tmp_path)        # a result without the end record it was made from
    assert not rep.ok and "no end record" in rep.divergence
    (tmp_path / "result.json").unlink()   # as a kill leaves it: result.json is written last
    rep = replay_episode(tmp_path)
    assert rep.ok and rep.steps == 3 and not rep.complete and "interrupted" in rep.note
    (tmp_path / "events.jsonl").write_text("\n".join(lines[:7]) + "\n{\"stream\": \"pub")   # cut off by a kill
    rep = replay_episode(tmp_path)
    assert rep.ok and rep.steps == 3 and not rep.complete and "cut off" in rep.note
    (tmp_path / "events.jsonl").write_text("\n".join(lines[:7]) + "\n{\"stream\": \"pub\n")   # corrupt
    with pytest.raises(HarnessError, match="not valid JSON"):
        replay_episode(tmp_path)
    with pytest.raises(HarnessError):
        replay_episode(tmp_path / "nothing")


class Spy(BaseAgent):
    """Collects everything it is given."""
    def __init__(self):
        self.seen = []

    def reset(self, instruction, action_spec):
        self.seen.append((instruction, action_spec))

    def act(self, obs):
        self.seen.append(obs)
        if obs.frame is None:
            return {"type": "wait", "ms": 0}
        return {"type": "click", "x": 270, "y": 615} if len(self.seen) < 7 else FinalAnswer("done")


def _reachable(root, limit=20000):
    seen, stack, out = set(), [root], []
    while stack and len(seen) < limit:
        o = stack.pop()
        if id(o) in seen:
            continue
        seen.add(id(o))
        out.append(o)
        if isinstance(o, (str, bytes, int, float, type(None))):
            continue
        stack.extend(gc.get_referents(o))
    return out


def test_the_agent_cannot_reach_the_game_state_or_the_evaluator(tmp_path):
    spy = Spy()
    r = run_objective(spy, "nut_and_bolt", "easy", settings=FAST, folder=tmp_path)
    assert r.end == "final_answer"
    forbidden = (Suite, Session, Evaluator)
    for item in spy.seen:
        for o in _reachable(item):
            assert not isinstance(o, forbidden), f"agent input reaches a {type(o).__name__}"
            if isinstance(o, type) and issubclass(o, forbidden):
                pytest.fail(f"agent input reaches the class {o.__name__}")
    obs = [o for o in spy.seen if isinstance(o, Observation)]
    assert obs[0].frame is None and obs[0].feedback is None and obs[0].time_left == FAST.budget
    assert obs[1].feedback.status == "wait_completed"
    obs = obs[1:]
    assert all((not o.frame.flags.writeable and o.frame.base is None) or not o.frame.flags.writeable for o in obs)
    # frames are copies: they differ between steps (the agent navigates) and are not shared buffers
    assert len({id(o.frame) for o in obs}) == len(obs)
    assert obs[1].feedback.status == "screen_changed"
    assert set(vars(obs[1].feedback)) == {"status", "executed", "message", "frames"}


class Raises(BaseAgent):
    def act(self, obs):
        raise RuntimeError("boom")


class Hangs(BaseAgent):
    def act(self, obs):
        time.sleep(5)


class Garbage(BaseAgent):
    """Malformed actions: refused with a message, counted invalid."""
    def act(self, obs):
        return [{"type": "teleport"}, {"type": "click", "x": -5, "y": 3}, {"x": 1}][obs.step % 3]


class Junk(BaseAgent):
    """Not an action at all: an agent error."""
    def act(self, obs):
        return object() if obs.step == 2 else {"type": "wait", "ms": 10}


def test_agent_failures_end_the_episode_as_agent_errors(tmp_path):
    r = run_objective(Raises(), "maze_paint", "easy", settings=FAST, folder=tmp_path / "a")
    assert r.end == "agent_error" and "boom" in r.error
    r = run_objective(Hangs(), "maze_paint", "easy", settings=Settings(action_timeout=0.3), folder=tmp_path / "b")
    assert r.end == "agent_error" and "timeout" in r.error
    r = run_objective(Garbage(), "maze_paint", "easy", folder=tmp_path / "c",
                      settings=Settings(max_actions=6, action_timeout=None, invalid_action_policy="dispatch_failed"))
    assert r.end == "invalid_action_limit" and r.actions == 3 and r.outcome.scored
    pub = [e for e in read_events(tmp_path / "c") if e.get("stream") == "public"]
    assert all(e["feedback"]["status"] == "dispatch_failed" and e["feedback"]["message"] for e in pub)
    res = json.loads((tmp_path / "c" / "result.json").read_text())
    assert res["rules"]["invalid_action_policy"] == "dispatch_failed" and res["invalid_actions"] == 3
    r = run_objective(Junk(), "maze_paint", "easy", settings=FAST, folder=tmp_path / "d")
    assert r.end == "agent_error" and "garbage" in r.error and r.actions == 2


def test_restore_any_step_and_continue_with_an_intervention(tmp_path, monkeypatch):
    from longpuzzle.agents.harness.run import Run
    live, dispatch = {}, Run.dispatch

    def spy(self, *a, **k):                # the app's exact state after every step, as it ran
        out = dispatch(self, *a, **k)
        live[self.step] = self.suite.snapshot()
        return out
    monkeypatch.setattr(Run, "dispatch", spy)
    run_objective(GreedyAgent(), "nut_and_bolt", "easy", settings=Settings(max_actions=25, action_timeout=None),
                  folder=tmp_path / "a")
    monkeypatch.undo()
    assert len(live) > 10
    for k in (1, 10, max(live)):
        assert restore_step(tmp_path / "a", k).snapshot() == live[k]
    s10 = restore_step(tmp_path / "a", 10)
    told = []

    class Listener(SolverAgent):
        def reset(self, instruction, spec):
            told.append(instruction)
            super().reset(instruction.splitlines()[0], spec)
            self.model = Suite.restore(s10.snapshot())   # it was told where it is
    r = continue_episode(tmp_path / "a", 10, Listener(), note="The board can no longer be solved.",
                         out=tmp_path / "b")
    assert told and told[0].endswith("The board can no longer be solved.")
    assert r.end == "completed" and r.outcome.solved_count == 3
    assert replay_episode(tmp_path / "b").ok


def test_a_continuation_stops_at_its_stop_condition_and_replay_derives_that_end(tmp_path):
    """stop_when={"won": [level]}: the continuation ends ("stop_condition") after the action
    that wins that level (the diagnostics read nothing after it); the header records it, so a
    replay derives the same end, and a forged condition is a divergence."""
    run_objective(GreedyAgent(), "maze_paint", "easy", settings=Settings(max_actions=4, action_timeout=None),
                  folder=tmp_path / "a")
    level = restore_step(tmp_path / "a", 4).level.id
    st = Settings(max_actions=60, action_timeout=None)
    free = continue_episode(tmp_path / "a", 4, SolverAgent(), out=tmp_path / "free", settings=st)
    stop = continue_episode(tmp_path / "a", 4, SolverAgent(), out=tmp_path / "stop", settings=st,
                            stop_when={"won": [level]})
    won_at = next(r["step"] for r in read_events(tmp_path / "free")
                  if r.get("stream") == "private" and r["record"].get("level") == level and r["record"]["win"])
    assert stop.end == "stop_condition" and stop.actions == won_at < free.actions
    head = read_events(tmp_path / "stop")[0]
    assert head["stop_when"] == {"won": [level]} and "stop_when" not in read_events(tmp_path / "free")[0]
    assert replay_episode(tmp_path / "stop").ok and replay_episode(tmp_path / "free").ok
    # the condition forged in the header (another level): the actions no longer end it there
    ev = tmp_path / "stop" / "events.jsonl"
    lines = ev.read_text().splitlines()
    other = next(lid for lid in Suite("home").catalog.objective("maze_paint/easy").level_ids if lid != level)
    ev.write_text("\n".join([json.dumps({**head, "stop_when": {"won": [other]}})] + lines[1:]) + "\n")
    rep = replay_episode(tmp_path / "stop")
    assert not rep.ok and "stop_condition" in rep.divergence
    ev.write_text("\n".join([json.dumps({**head, "stop_when": {"won": ["no/such/level"]}})] + lines[1:]) + "\n")
    assert "'stop_when' is malformed" in replay_episode(tmp_path / "stop").divergence
    with pytest.raises(HarnessError, match="stop_when"):
        continue_episode(tmp_path / "a", 4, SolverAgent(), settings=st, stop_when={"lost": True})

def test_cycle_detector():
    det = CycleDetector()
    a = {"type": "swipe", "direction": "left", "x": 10, "y": 10}
    out = [det.step(a, "h", 0.2) for _ in range(12)]
    assert out[:8] == [None] * 8 and out[8] == "repeated_action_cycle"   # 8 steps after the last gain
    det = CycleDetector()
    acts = [{"type": "click", "x": 10 * i, "y": 0} for i in range(12)]
    out = [det.step(acts[i], "same", 0.3) for i in range(12)]
    assert "no_progress" in out and "repeated_action_cycle" not in out
    det = CycleDetector()
    assert all(det.step(a, "h", i / 20) is None for i in range(20))    # progress resets the count


def test_level_protocol_progressive_and_limits(tmp_path):
    r = run_level_chain(SolverAgent(), "maze_paint", "easy", settings=FAST, folder=tmp_path / "s")
    assert r.outcome.success and all(l["score"] >= 60 for l in r.levels)
    r = run_level_chain(RandomAgent(3), "maze_paint", "easy", settings=Settings(max_actions=15, action_timeout=None),
                        folder=tmp_path / "r", mode="progressive")
    assert r.levels[0]["run"] and all(not l["run"] and l["score"] == 0 for l in r.levels[1:])
    assert r.levels[0]["score"] <= 59
    g = run_level_chain(Garbage(), "maze_paint", "easy", settings=Settings(action_timeout=None),
                        folder=tmp_path / "g", mode="all_levels")
    assert all(l["termination"] == "invalid_action_limit" and l["steps"] == 3 for l in g.levels)


class Repeater(BaseAgent):
    """Clicks one empty corner of the screen for ever: the cycle rule ends the level."""

    def act(self, obs):
        return {"type": "click", "x": 3, "y": 3}


def _retell_end(folder, end: str) -> None:
    """Rewrite a level folder's recorded end (end record and result.json) as ``end``."""
    ev = folder / "events.jsonl"
    lines = [json.loads(l) for l in ev.read_text().splitlines()]
    assert lines[-1]["type"] == "end"
    lines[-1]["end"] = lines[-1]["result"]["termination"] = end
    ev.write_text("".join(json.dumps(l) + "\n" for l in lines))
    res = json.loads((folder / "result.json").read_text())
    res["termination"] = end
    (folder / "result.json").write_text(json.dumps(res))


def test_replay_derives_the_level_protocol_endings_again(tmp_path):
    st = Settings(action_timeout=None, max_actions=30)
    runs = {"cycle": run_level_chain(Repeater(), "rush_hour", "easy", settings=st, folder=tmp_path / "c"),
            "garbage": run_level_chain(Garbage(), "maze_paint", "easy", settings=st, folder=tmp_path / "g"),
            "cap": run_level_chain(RandomAgent(3), "nut_and_bolt", "easy", settings=Settings(max_actions=6,
                                   action_timeout=None), folder=tmp_path / "m"),
            "won": run_level_chain(SolverAgent(), "maze_paint", "easy", settings=FAST, folder=tmp_path / "s")}
    ends = {k: r.levels[0]["termination"] for k, r in runs.items()}
    assert ends == {"cycle": "repeated_action_cycle", "garbage": "invalid_action_limit", "cap": "max_steps",
                    "won": "success"}, ends
    for k, r in runs.items():
        lv = Path(r.folder) / "level_01"
        assert replay_episode(lv).ok, k
    # a recorded end the actions do not make is refused; the step cap may give way to a timeout
    # (checked first), never to the agent's own end
    for k, end, ok in (("cycle", "timeout", False), ("cycle", "no_progress", False), ("garbage", "agent_error", False),
                       ("cap", "timeout", True), ("cap", "agent_terminated", False), ("cap", "no_progress", False)):
        lv = tmp_path / f"{k}-{end}"
        shutil.copytree(Path(runs[k].folder) / "level_01", lv)
        _retell_end(lv, end)
        rep = replay_episode(lv)
        assert rep.ok == ok, (k, end, rep.divergence)
        if not ok:
            assert "recorded end" in rep.divergence, rep.divergence


def test_a_driven_level_episode_equals_the_chain_and_replays(tmp_path):
    # the level protocol is a stepper (LevelEpisode) like the objective's: driven one step
    # at a time from outside it writes the very level the chain writes, and replays
    st = Settings(action_timeout=None)
    chain = run_level_chain(SolverAgent(), "maze_paint", "easy", settings=st, folder=tmp_path / "chain")
    ep = LevelEpisode("maze_paint/easy/1", settings=st, folder=tmp_path / "driven", agent_name="solver")
    agent = SolverAgent()
    agent.reset(ep.instruction, ep.action_spec)
    while not ep.poll():
        ep.submit(agent.act(ep.observation()), 0.0)
    out = ep.finish()
    assert out["termination"] == "success" == chain.levels[0]["termination"]
    assert out["steps"] == chain.levels[0]["steps"] and out["moves"] == chain.levels[0]["moves"]
    frames = [[r["frames"] for r in read_events(f) if r.get("stream") == "public"]
              for f in (tmp_path / "chain" / "level_01", tmp_path / "driven")]
    assert frames[0] == frames[1]
    assert replay_episode(tmp_path / "driven").ok
    assert ep.finish() is out                                 # idempotent
    with pytest.raises(HarnessError):
        ep.submit({"type": "click", "x": 3, "y": 3}, 0.0)


def test_a_level_record_with_a_cut_action_is_refused(tmp_path):
    # the level protocol never cuts an action at a deadline (its stepper has none): a level
    # record claiming a cut, even one past the action's end, is refused by the replay
    run_level_chain(Repeater(), "rush_hour", "easy", settings=Settings(action_timeout=None, max_actions=5),
                    folder=tmp_path / "c")
    lv = tmp_path / "c" / "level_01"
    ev = lv / "events.jsonl"
    lines = [json.loads(l) for l in ev.read_text().splitlines()]
    assert replay_episode(lv).ok
    pub = next(l for l in lines if l.get("stream") == "public")
    pub["cut_at"] = 10 ** 9
    ev.write_text("".join(json.dumps(l) + "\n" for l in lines))
    rep = replay_episode(lv)
    assert not rep.ok and "cut" in rep.divergence, rep.divergence


def test_load_agent_from_a_file(tmp_path):
    f = tmp_path / "my_agent.py"
    f.write_text("from longpuzzle.agents.base import BaseAgent, FinalAnswer\n"
                 "class Quitter(BaseAgent):\n    def act(self, obs):\n        return FinalAnswer('bye')\n")
    a = load_agent(str(f))               # an agent file is a handle: it runs isolated (test_isolation.py)
    assert a.check() == "Quitter"
    with pytest.raises(LongPuzzleError, match="unknown agent"):
        load_agent("nobody")
    bad = tmp_path / "bad.py"
    bad.write_text("import nonexistent_module_xyz\n")
    with pytest.raises(LongPuzzleError, match="cannot load"):
        load_agent(str(bad)).check()


def test_eval_command_json_and_report(tmp_path):
    out = tmp_path / "run"
    r = CliRunner().invoke(cli, ["eval", "--objective", "nut_and_bolt/easy", "--out", str(out), "--json"])
    assert r.exit_code == 0, r.output
    m = json.loads(r.output)
    for k in ("OSR", "LC", "FGP", "LPR", "H50", "LC_hard", "PER", "SMR", "score", "objectives"):
        assert k in m
    assert m["OSR"] == 100.0 and m["objectives"][0]["objective"] == "nut_and_bolt/easy"
    assert 60 <= m["score"] <= 100          # every level won: each composite level score is >= 60
    r = CliRunner().invoke(cli, ["replay", str(out / "nut_and_bolt_easy" / "episode_001")])
    assert r.exit_code == 0 and "matches" in r.output
    r = CliRunner().invoke(cli, ["report", str(out), "--no-videos"])
    assert r.exit_code == 0 and (out / "report.html").is_file() and not (out / "report_files").exists()
    assert "src='data:image/png;base64," in (out / "report.html").read_text()       # figures embedded
    r = CliRunner().invoke(cli, ["eval", "--objective", "chess/easy"])
    assert r.exit_code == 2 and "error:" in r.output


class ProviderDown(BaseAgent):
    """Acts twice, then its (pretend) model provider fails for good."""
    def act(self, obs):
        from longpuzzle.agents.base import InfrastructureError
        if obs.step >= 2:
            raise InfrastructureError("endpoint 127.0.0.1:9 refused the connection after 3 retries")
        return {"type": "wait", "ms": 10}


def test_an_infrastructure_failure_is_unscored_not_a_failure(tmp_path):
    for timeout in (None, 5.0):            # the direct call and the timed call pass it through
        r = run_objective(ProviderDown(), "maze_paint", "easy",
                          settings=Settings(budget=60, action_timeout=timeout), folder=tmp_path / str(timeout))
        assert r.end == "infrastructure_error" and "refused" in r.error and r.actions == 2
        assert not r.outcome.scored
        res = json.loads((tmp_path / str(timeout) / "result.json").read_text())
        assert res["scored"] is False and res["end"] == "infrastructure_error"
    from longpuzzle.agents.metrics import aggregate
    failed = run_objective(Raises(), "maze_paint", "easy", settings=FAST)
    assert failed.outcome.scored and failed.end == "agent_error"       # an agent's own failure is scored
    m = aggregate([r.outcome, failed.outcome])
    assert m["unscored"] == 1 and m["objectives"][0]["episodes"] == 1
