"""The hub's own rules (RULES.md 1.3, 6.3) on the virtual clock: Nut and Bolt goes on to its
next level 1.35 s after a win with no Next button; Maze Paint's game ends a level after a
zero-progress cycle repeated 4 times, 40 moves without new paint, 500 moves or 10 minutes, with
a "Try again" / "Back" card; a direct launch keeps neither (its harness has its limits). Both
are exact app state: snapshots, clones and episode replays carry them."""

import json

import numpy as np

import pytest

from longpuzzle.engine.suite import Suite
from longpuzzle.engine.suite.game_limits import MAZE_LIMITS, cycle_repetitions, record, start
from longpuzzle.solvers import solve


def _solve(s: Suite) -> None:
    for a in solve(s.session.level).actions:
        s.dispatch(s.gesture_for(int(a)))


def _at(s: Suite, wid: str) -> dict:
    x, y = s.proj.to_px(*s.layout()[wid].center)
    return {"type": "click", "x": round(x), "y": round(y)}


def test_nut_and_bolt_goes_on_by_itself_1350_ms_after_a_win_on_the_hub():
    s = Suite("nut_and_bolt/easy/1")
    _solve(s)
    assert s.complete and s.screen_name() == "level:nut_and_bolt/easy/1:complete"
    assert s.layout().widgets == ()                       # no Next, no Replay
    won = s.anims[-1]["t1"] if s.anims else s.clock       # the card shows when the last move has settled
    assert s.timer == {"at": won + 1350, "then": "next"}
    c = s.clone()
    fb = s.dispatch({"type": "wait", "ms": won + 1350 - s.clock - s.action_gap_ms - 1})
    assert s.screen_name().endswith(":complete") and fb.effects == []          # 1 ms early: still the card
    fb = s.dispatch({"type": "wait", "ms": 1})
    assert s.screen_name() == "level:nut_and_bolt/easy/2" and s.timer is None
    assert fb.effects == [{"effect": "navigate", "screen": "level:nut_and_bolt/easy/2", "auto": True}]
    # a press after the moment lands on the next level's screen (the advance came first)
    x, y = c.proj.to_px(270, 500)
    fb = c.dispatch({"type": "wait", "ms": 5000})
    assert c.screen_name() == "level:nut_and_bolt/easy/2"
    # the last level of the objective keeps its card and buttons; a direct launch its Replay
    last = Suite("nut_and_bolt/easy/3")
    _solve(last)
    assert last.timer is None and [w.id for w in last.layout().widgets] == ["menu", "replay"]
    direct = Suite("nut_and_bolt/easy/1", direct=True)
    _solve(direct)
    assert direct.timer is None and [w.id for w in direct.layout().widgets] == ["replay"]


def test_the_pending_advance_is_in_snapshots_and_episode_replays(tmp_path):
    s = Suite("nut_and_bolt/easy/1")
    _solve(s)
    r = Suite.restore(s.snapshot())
    assert r.timer == s.timer and r.snapshot() == s.snapshot()
    r.dispatch({"type": "wait", "ms": 2000})
    assert r.screen_name() == "level:nut_and_bolt/easy/2"
    body = json.loads(s.snapshot())
    assert "timer" in body and "timer" not in json.loads(Suite("nut_and_bolt/easy/1").snapshot())


def test_the_solver_agent_waits_for_the_advance_and_completes_nut_and_bolt_from_home(tmp_path):
    from longpuzzle.agents.registry import load_agent
    from longpuzzle.agents.harness import Settings, replay_episode, run_objective

    res = run_objective(load_agent("solver"), "nut_and_bolt", "easy", settings=Settings(), folder=tmp_path / "ep")
    assert res.end == "completed" and res.outcome.success
    events = (tmp_path / "ep" / "events.jsonl").read_text()
    assert '"auto": true' in events or '"auto":true' in events
    assert replay_episode(tmp_path / "ep").ok


def _maze_hub(lid="maze_paint/easy/1"):
    s = Suite("home")
    s.open_level(lid)
    return s


def _bump(s: Suite) -> int:
    """A direction that moves the ball nowhere from where it is (a wall bump), as a move."""
    for d in range(4):
        c = s.clone()
        before = c.session.state.copy()
        c.dispatch(c.gesture_for(d))
        if (c.session.state == before).all():
            return d
    raise AssertionError("no wall to bump into")


def test_maze_paint_four_identical_wall_bumps_end_the_level_on_the_hub():
    s = _maze_hub()
    d = _bump(s)
    for k in range(3):
        s.dispatch(s.gesture_for(d))
        assert not s.failed, k
    s.dispatch(s.gesture_for(d))
    assert s.failed == "repeated_action_cycle" and s.screen_name() == "level:maze_paint/easy/1:failed"
    assert [w.id for w in s.layout().widgets] == ["replay", "menu"]
    before = s.session.state.copy()
    s.dispatch(s.gesture_for((d + 1) % 4))              # the board takes no input under the card
    assert (s.session.state == before).all() and s.failed
    r = Suite.restore(s.snapshot())
    assert r.failed == s.failed and r.limits == s.limits
    s.dispatch(_at(s, "replay"))                        # Try again: the level afresh, its limits too
    assert not s.failed and s.limits["n"] == 0 and s.screen_name() == "level:maze_paint/easy/1"
    s.dispatch(_at(s, "menu"))
    assert s.screen_name() == "difficulty:maze_paint"
    # a direct launch (the level protocol) has none: four bumps are four moves
    d2 = Suite("maze_paint/easy/1", direct=True)
    for _ in range(6):
        d2.dispatch(d2.gesture_for(d))
    assert not d2.failed and d2.limits is None


def test_maze_paint_forty_moves_without_new_paint_and_the_ten_minute_clock():
    s = _maze_hub("maze_paint/hard/1")
    # paint what one first move paints, then go back and forth over painted cells
    a = s.session.legal_moves()[0]
    s.dispatch(s.gesture_for(a))
    moves = 0
    while not s.failed and moves < 80:
        legal = s.session.legal_moves()
        gained = []
        for m in legal:
            c = s.clone()
            p0 = int(c.session.state[1])
            c.session.apply_action(m)
            gained.append(int(c.session.state[1]) - p0)
        quiet = [m for m, g in zip(legal, gained) if g == 0]
        if not quiet:
            pytest.skip("every move paints here")
        s.dispatch(s.gesture_for(quiet[moves % len(quiet)]))
        moves += 1
    assert s.failed in ("no_progress", "repeated_action_cycle")
    assert s.limits["quiet"] <= MAZE_LIMITS.no_progress
    # the clock alone: 10 minutes after the level was loaded the game ends it
    t = _maze_hub()
    t0 = t.limits["t0"]
    t.dispatch({"type": "wait", "ms": MAZE_LIMITS.timeout_ms - 1 - (t.clock + t.action_gap_ms - t0)})
    assert not t.failed
    t.dispatch({"type": "wait", "ms": 1})
    assert t.failed == "timeout"


def test_the_limits_follow_the_originals_rules():
    """record(): no_progress at exactly 40 quiet moves (paint resets the count); a cycle needs
    4 repetitions of the same zero-progress block; max_steps at 500."""
    import numpy as np

    a, b = np.array([1, 2, 3]), np.array([1, 2, 4])
    lim = start(0)
    for i in range(39):
        assert record(lim, MAZE_LIMITS, i % 4, np.array([i]), np.array([i + 1]), 0, 10) is None
    assert record(lim, MAZE_LIMITS, 0, a, b, 1, 10) is None and lim["quiet"] == 0
    lim = start(0)
    reasons = [record(lim, MAZE_LIMITS, 2, a, b, 0, 10) for _ in range(4)]
    assert reasons == [None, None, None, "repeated_action_cycle"]
    recs = [[0, 1, 2, 0], [1, 2, 1, 0]] * 4
    assert cycle_repetitions(recs, 12) == 4 and cycle_repetitions(recs[:-1], 12) == 3
    assert cycle_repetitions([[0, 1, 2, 1]] + [[0, 1, 2, 0]] * 3, 12) == 3
    lim = start(0)
    lim["n"] = 499
    assert record(lim, MAZE_LIMITS, 0, a, np.array([9]), 1, 10) == "max_steps"


def _color_hub(lid="color_connect/easy/1"):
    s = Suite("home")
    s.open_level(lid)
    return s


def test_color_connect_stops_taking_input_after_four_repeated_gestures_on_the_hub():
    """Four presses on a cell that is no endpoint (each a refused gesture leaving the same
    state): the original's evaluator ends the level; it shows no card, the board ignores
    input, the HUD's restart starts the level and its counts afresh."""
    s = _color_hub()
    u = s.game_ui()
    ends = {c for pair in u.endpoints for c in pair}
    empty = next(c for c in range(u.n) if c not in ends)
    x, y = s.proj.to_px(*u.cell_center(*divmod(empty, u.cols)))
    for k in range(4):
        assert not s.failed, k
        s.dispatch({"type": "click", "x": round(x), "y": round(y)})
    assert s.failed == "repeated_action_cycle" and s.limits["n"] == 4
    assert [w.id for w in s.layout().widgets] == ["board", "restart", "menu"]     # no card
    start = u.endpoints[0][0]
    before = s.session.state.copy()
    ex, ey = s.proj.to_px(*u.cell_center(*divmod(start, u.cols)))
    s.dispatch({"type": "click", "x": round(ex), "y": round(ey)})
    assert (s.session.state == before).all()                       # the board takes no input
    assert Suite.restore(s.snapshot()).limits == s.limits
    s.dispatch(_at(s, "restart"))
    assert not s.failed and s.limits["n"] == 0
    s.dispatch({"type": "click", "x": round(ex), "y": round(ey)})
    assert s.session.state[0] != 0                                 # a path is open again
    d = Suite("color_connect/easy/1", direct=True)
    for _ in range(6):
        d.dispatch({"type": "click", "x": round(x), "y": round(y)})
    assert not d.failed and d.limits is None


def test_a_click_built_path_is_one_gesture_and_a_completed_pair_is_progress():
    s = _color_hub()
    acts = [int(a) for a in solve(s.session.level).actions]
    n = s.game_ui().n
    first = [acts[0]] + list(acts[1:])[:next(i for i, a in enumerate(acts[1:]) if a > n)]
    for a in first:                                  # the start click, then one click per step
        s.dispatch(s.gesture_for(a))
    assert s.session.state[2] == 1                   # one pair connected
    assert (s.limits["n"], s.limits["best"], s.limits["quiet"], s.limits["open"]) == (1, 1, 0, None)


def test_the_state_cycle_follows_the_originals_detect_cycle():
    from longpuzzle.engine.suite.game_limits import COLOR_LIMITS, gesture, state_cycle
    assert state_cycle([1, 2, 1, 2, 1, 2, 1, 2], 12) == (2, 4)
    assert state_cycle([5, 1, 1, 1], 12) == (1, 3)
    assert state_cycle([1, 2, 3], 12) == (0, 0)
    lim = start(0, COLOR_LIMITS, np.zeros(3, np.int64))
    a, b = np.array([1, 0, 0]), np.array([2, 0, 0])
    reasons = []
    for st in (a, b, a, b, a, b, a, b):           # a cycle of period 2 without progress
        lim["open"] = [0, 0]
        reasons.append(gesture(lim, COLOR_LIMITS, st, 0))
    # four repetitions of the pair need 4 x 2 quiet gestures: the 8th gesture
    assert reasons == [None] * 7 + ["repeated_action_cycle"]


def test_the_failure_card_ends_a_vista_attempt_as_a_game_over(tmp_path):
    """VISTA's attempts (from the public screen): the game's own failure card ends one as
    "game_over"; Try again starts the next by a restart."""
    from longpuzzle.agents.harness import Settings
    from longpuzzle.agents.vista.controller import Controller

    c = Controller("maze_paint", "easy", setting="vista", settings=Settings(budget=600, action_timeout=None),
                   folder=tmp_path)
    assert not c.call("play", {"action": {"type": "wait", "ms": 100}}).error
    s = c.ep.suite
    for wid in ("game:maze_paint", "difficulty:easy"):
        c.call("play", {"action": _at(s, wid)})
    d = _bump(s)
    for _ in range(4):
        c.call("play", {"action": s.gesture_for(d)})
    assert s.failed and c.ep.run.public_screen()["card"] == "game_over"
    c.call("play", {"action": _at(s, "replay")})
    at = json.loads(c.call("history", {"view": "attempts"}).text)["attempts"]
    assert [(a["attempt"], a["started_by"], a["ended_by"]) for a in at] == [(1, "entry", "game_over"),
                                                                           (2, "restart", "ongoing")]


def test_the_level_protocol_ends_a_level_the_game_fails_as_game_failure(tmp_path):
    """The original's benchmark launch runs the game's own limits too: four swipes into the
    same wall end the Maze Paint level as ``game_failure`` (penalty 6), which the progressive
    chain stops at; the replay derives the same ending."""
    from longpuzzle.agents.base import BaseAgent
    from longpuzzle.agents.harness import Settings, replay_episode, run_level_chain

    class Bumper(BaseAgent):
        name = "bumper"

        def reset(self, instruction, action_spec):
            super().reset(instruction, action_spec)
            s = Suite("maze_paint/easy/1", direct=True)
            self.g = s.gesture_for(_bump(s))

        def act(self, obs):
            return self.g

    res = run_level_chain(Bumper(), "maze_paint", "easy", settings=Settings(), folder=tmp_path / "ep")
    first = res.levels[0]
    assert first["termination"] == "game_failure" and first["steps"] == 4 and not first["success"]
    assert len([r for r in res.levels if r.get("run")]) == 1          # progressive: the chain stops there
    assert first["score"] <= 59
    level_dir = next(p.parent for p in (tmp_path / "ep").rglob("events.jsonl"))
    assert replay_episode(level_dir).ok
