"""Live sessions (agents/serve/live.py): a person's actions go through the harness's own
validation and dispatch, and every session is an ordinary episode folder that replays."""

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from play_actions import solver_actions

from longpuzzle.agents.harness import read_events, replay_episode, restore_step
from longpuzzle.agents.serve.live import LEFT, PlayError, SessionPool
from longpuzzle.render.frame import renderer


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    """One human objective session of Maze Paint easy that wins level 1 and leaves."""
    pool = SessionPool(tmp_path_factory.mktemp("humans"), idle=60)
    s = pool.new("maze_paint/easy", player="ana")
    first = s.start()
    ups = [s.submit(a) for a in solver_actions("maze_paint", "easy")]
    last = s.leave()
    s.close()
    return pool, s, first, ups, last


def test_a_session_is_recorded_as_an_episode_that_replays(played):
    pool, s, first, ups, last = played
    assert first.step == 1 and first.feedback["status"] == "wait_completed"      # the protocol's first wait
    assert first.frame.shape == (960, 540, 3)
    assert ups[-1].step == len(ups) + 1 and all(u.feedback["executed"] for u in ups)
    assert last.ended == "final_answer" and last.result["solved"] == 1 and last.result["presses"] == len(ups)
    folder = Path(last.result["folder"])
    head = read_events(folder)[0]
    assert head["agent"] == "human/ana" and head["settings"]["action_timeout"] is None
    assert head["settings"]["charge_agent_time"] is True
    rep = replay_episode(folder)
    assert rep.ok and rep.complete, rep.divergence
    ev = read_events(folder)
    assert any(r.get("final_answer") == LEFT for r in ev)
    # the person's time is the agent's time: every step's t_agent is recorded and counted in the
    # result's agent time, which also holds the time of the call that left (a final answer's
    # time is charged but not stored per step: replay.UNRECORDED_TIME_ENDS), so the steps' sum is
    # at most the total (it was compared equal within 1 ms, which failed when leaving took longer)
    t = sum(r["t_agent"] for r in ev if r.get("stream") == "public" and "t_agent" in r)
    import json
    total = json.loads((folder / "result.json").read_text())["time"]["agent"]
    assert 0 < t <= total + 1e-6


def test_the_frame_shown_is_the_engines_frame_after_the_action(played):
    pool, s, first, ups, last = played
    folder = Path(last.result["folder"])
    suite = restore_step(folder, ups[-1].step)
    want = renderer(suite.style, suite.scale, suite.viewport, suite.lang).render(suite)
    assert np.array_equal(ups[-1].frame, want)


def test_a_refused_action_is_answered_and_the_session_goes_on(tmp_path):
    pool = SessionPool(tmp_path, idle=60)
    s = pool.new("maze_paint/easy")
    s.start()
    up = s.submit({"type": "click", "x": 5000, "y": 10})
    assert up.feedback["executed"] is False and "x" in up.feedback["message"] and up.ended is None
    up = s.submit({"type": "teleport"})
    assert up.feedback["status"] == "dispatch_failed" and up.ended is None
    up = s.submit({"type": "click", "x": 270, "y": 721})
    assert up.feedback["executed"] is True
    last = s.leave()
    assert replay_episode(last.result["folder"]).ok


def test_an_idle_session_ends_and_its_folder_is_complete(tmp_path):
    pool = SessionPool(tmp_path, idle=0.3)
    s = pool.new("maze_paint/easy")
    s.start()
    up = s.wait_for(1, 30)                    # nothing sent: the session ends by itself
    assert up.ended == "final_answer"
    rep = replay_episode(up.result["folder"])
    assert rep.ok and rep.complete
    assert "idle" in next(r["final_answer"] for r in read_events(up.result["folder"]) if "final_answer" in r)
    with pytest.raises(PlayError, match="ended"):
        s.submit({"type": "wait", "ms": 0})


def test_the_limit_of_live_sessions_and_closing_the_pool(tmp_path):
    pool = SessionPool(tmp_path, limit=1, idle=60)
    a = pool.new("maze_paint/easy")
    a.start()
    with pytest.raises(PlayError, match="limit"):
        pool.new("maze_paint/easy")
    pool.close()                               # the server stops: the session ends, recorded
    assert a.ended and replay_episode(a.update.result["folder"]).complete
    b = pool.new("rush_hour/easy")             # room again
    b.start()
    b.close()


def test_unknown_targets_and_players_are_one_clear_error(tmp_path):
    pool = SessionPool(tmp_path)
    for bad in ("maze_paint", "maze_paint/impossible", "maze_paint/easy/99", "a/b/c/d"):
        with pytest.raises(PlayError):
            pool.new(bad)
    with pytest.raises(PlayError, match="player"):
        pool.new("maze_paint/easy", player="<script>")
    assert not list(Path(tmp_path).iterdir())           # nothing written


def test_a_level_session_plays_the_level_protocol(tmp_path):
    pool = SessionPool(tmp_path, idle=60)
    s = pool.new("maze_paint/easy/1")
    up = s.start()
    assert up.step == 0 and up.frame is not None          # launched directly: no first wait
    for a in solver_actions("maze_paint", "easy", level=1):
        up = s.submit(a)
    assert up.ended == "success"
    rep = replay_episode(up.result["folder"])
    assert rep.ok and rep.complete


def test_branch_restores_the_step_exactly_and_plays_on(played, tmp_path):
    pool0, s0, first, ups, last = played
    src = Path(last.result["folder"])
    k = ups[3].step                                  # on level 1, mid-way
    pool = SessionPool(tmp_path, idle=60)
    b = pool.branch(src, k)
    up = b.start()
    suite = restore_step(src, k)
    want = renderer(suite.style, suite.scale, suite.viewport, suite.lang).render(suite)
    assert up.step == 1 and np.array_equal(up.frame, want)          # its first wait shows the restored state
    rest = solver_actions("maze_paint", "easy")[len(ups) - (ups[-1].step - k):]
    for a in rest:
        up = b.submit(a)
    end = b.leave()
    assert end.result["solved"] == 1
    head = read_events(b.folder)[0]
    assert head["start"] == suite.snapshot() and head["continued_from"]["step"] == k
    rep = replay_episode(b.folder)
    assert rep.ok and rep.complete, rep.divergence
    with pytest.raises(Exception, match="step"):
        pool.branch(src, 10_000)
