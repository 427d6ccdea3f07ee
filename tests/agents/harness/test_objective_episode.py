"""The step-driven objective episode (the harness's one episode loop, driven by an agent
through run_objective or by a tool server step by step), NGAR step counting and pooling,
and reading an episode's frames while it is still being written."""

from __future__ import annotations

import math

import numpy as np
import pytest

from longpuzzle.agents.base import FinalAnswer
from longpuzzle.agents.scripted import SolverAgent
from longpuzzle.agents.harness import HarnessError, ObjectiveEpisode, Settings, open_frames, read_events, replay_episode, run_objective
from longpuzzle.agents.metrics import EpisodeOutcome, LevelOutcome, action_step_kind, aggregate, ngar

FAST = Settings(budget=600, action_timeout=None)


def _drive(ep: ObjectiveEpisode, agent) -> None:
    agent.reset(ep.instruction, ep.action_spec)
    while not ep.poll():
        ep.submit(agent.act(ep.observation()), 0.0)


def test_a_driven_episode_equals_run_objective_and_replays(tmp_path):
    a = run_objective(SolverAgent(), "nut_and_bolt", "easy", settings=FAST, folder=tmp_path / "a")
    ep = ObjectiveEpisode("nut_and_bolt", "easy", settings=FAST, folder=tmp_path / "b", agent_name="solver")
    _drive(ep, SolverAgent())
    b = ep.finish()
    assert a.end == b.end == "completed" and a.outcome.success and b.outcome.success
    assert a.actions == b.actions
    frames = [[r["frames"] for r in read_events(tmp_path / x) if r.get("stream") == "public"] for x in "ab"]
    assert frames[0] == frames[1]
    assert replay_episode(tmp_path / "b").ok
    assert ep.finish() is b                                   # idempotent
    with pytest.raises(HarnessError):
        ep.submit({"type": "wait", "ms": 0}, 0.0)


def test_ngar_steps_are_counted_per_agent_step(tmp_path):
    r = run_objective(SolverAgent(), "nut_and_bolt", "easy", settings=FAST, folder=tmp_path)
    o = r.outcome
    # the opening wait and the waits for Nut and Bolt's advance to levels 2 and 3 are standalone
    # waits (other); every other step is a click (native)
    assert o.other_steps == 3 and o.native_steps == r.actions - 3
    d = r.as_dict()
    assert (d["native_steps"], d["other_steps"]) == (r.actions - 3, 3)
    assert d["NGAR"] == pytest.approx(100 * (r.actions - 3) / r.actions)
    ep = ObjectiveEpisode("maze_paint", "easy", settings=FAST)
    ep.submit({"type": "wait", "ms": 0}, 0.0)
    ep.submit({"type": "batch", "actions": [{"type": "wait", "ms": 5}, {"type": "wait", "ms": 5}]}, 0.0)
    ep.submit({"type": "batch", "actions": [{"type": "wait", "ms": 5}, {"type": "click", "x": 3, "y": 3}]}, 0.0)
    ep.submit({"type": "wait", "ms": 0}, 0.0, count=False)     # a driver counting its own steps
    ep.count_step("other")
    ep.submit(FinalAnswer("done"), 0.0)
    res = ep.finish()
    assert res.end == "final_answer"
    assert (res.outcome.native_steps, res.outcome.other_steps) == (1, 4)


def test_action_step_kind():
    assert action_step_kind({"type": "wait"}) == "other"
    assert action_step_kind({"type": "batch", "actions": [{"type": "wait"}]}) == "other"
    assert action_step_kind({"type": "batch", "actions": []}) == "native"      # malformed: the attempted input
    assert action_step_kind({"type": "click", "x": 1, "y": 2}) == "native"
    assert action_step_kind({"type": "key", "name": "Enter"}) == "native"
    assert action_step_kind({"type": "swipe", "direction": "up"}) == "native"


def test_ngar_pools_over_steps_within_each_scope():
    def ep(game, diff, n, o):
        e = EpisodeOutcome(game, diff, [LevelOutcome()], end="budget")
        e.native_steps, e.other_steps = n, o
        return e
    eps = [ep("maze_paint", "easy", 9, 1), ep("maze_paint", "easy", 0, 10), ep("rush_hour", "easy", 3, 1),
           EpisodeOutcome("rush_hour", "easy", [LevelOutcome()], end="budget")]       # not counted
    m = aggregate(eps)
    rows = {o["objective"]: o for o in m["objectives"]}
    assert rows["maze_paint/easy"]["NGAR"] == pytest.approx(45.0)      # 9 / 20 pooled, not mean(90, 0)
    assert rows["rush_hour/easy"]["NGAR"] == pytest.approx(75.0)
    assert m["NGAR"] == pytest.approx(100 * 12 / 24)
    assert m["games"]["maze_paint"]["NGAR"] == pytest.approx(45.0)
    assert math.isnan(ngar([EpisodeOutcome("rush_hour", "easy", [LevelOutcome()])]))


def test_frames_are_readable_while_the_episode_is_written(tmp_path):
    ep = ObjectiveEpisode("maze_paint", "easy", settings=Settings(budget=600, action_timeout=None, frames_per_move=2),
                          folder=tmp_path)
    agent = SolverAgent()
    agent.reset(ep.instruction, ep.action_spec)
    ep.run.traj.flush()
    fs = open_frames(tmp_path)
    assert len(fs) == 1
    seen = []
    for _ in range(8):
        step = ep.submit(agent.act(ep.observation()), 0.0)
        seen.append((step.first_frame, step.frames))
    ep.run.traj.flush()
    n = fs.refresh()
    assert n == ep.run.traj.n_frames == seen[-1][0] + len(seen[-1][1])
    for first, frames in seen:
        for k, f in enumerate(frames):
            assert np.array_equal(fs.read(first + k), f)
    fs.close()
    assert ep.public_screen()["screen"] == "level"
    ep.finish()


def test_public_screen_reads_what_the_frame_shows():
    ep = ObjectiveEpisode("nut_and_bolt", "easy", settings=FAST)
    assert ep.public_screen() == {"screen": "home"}
    agent = SolverAgent()
    agent.reset(ep.instruction, ep.action_spec)
    screens = []
    while not ep.poll():
        ep.submit(agent.act(ep.observation()), 0.0)
        screens.append(ep.public_screen())
    assert {"screen": "difficulty", "game": "Nut and Bolt"} in screens
    levels = [s for s in screens if s["screen"] == "level"]
    assert {s["level"] for s in levels} == {1, 2, 3}
    assert {s["difficulty"] for s in levels} == {"Easy"}
    assert [s["card"] for s in levels if s["card"]][-1] == "all_complete"
    assert levels[0]["card"] is None
    assert not any("P" in s or "state" in s for s in screens)
    ep.finish()


def test_a_step_names_the_labelled_controls_that_acted():
    ep = ObjectiveEpisode("maze_paint", "easy", settings=FAST)
    agent = SolverAgent()
    agent.reset(ep.instruction, ep.action_spec)
    while ep.public_screen()["screen"] != "level" or not ep.suite.session.moves:
        assert ep.submit(agent.act(ep.observation()), 0.0).controls == []
    w = next(w for w in ep.suite.layout().widgets if w.id == "restart")
    x, y = ep.suite.proj.to_px(*w.shape.center)
    step = ep.submit({"type": "click", "x": int(x), "y": int(y)}, 0.0)
    assert step.controls == ["restart"]
    ep.finish()
