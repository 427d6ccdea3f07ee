"""The paper's protocol details: the instruction, the first wait, the invalid-action policies,
the budget clock (real + simulated + latency) and the deadline enforced while the agent thinks."""

import json
import random
import time

import pytest

from longpuzzle.agents.base import BaseAgent, FinalAnswer
from longpuzzle.agents.scripted import SolverAgent
from longpuzzle.agents.harness import (
    HarnessError, Settings, instruction_for, read_events, replay_episode, restore_step, run_level_chain, run_objective,
)
from longpuzzle.engine import gui
from longpuzzle.engine.suite import Suite


def test_the_instruction_is_the_papers():
    assert instruction_for("nut_and_bolt", "hard") == \
        "Complete all levels of Nut and Bolt at hard difficulty in the Game Suite"


class Script(BaseAgent):
    """Plays a fixed list of actions (then a final answer), recording what it saw."""
    def __init__(self, actions):
        self.actions = list(actions)
        self.seen = []

    def act(self, obs):
        self.seen.append(obs)
        return self.actions.pop(0) if self.actions else FinalAnswer("done")


CLICK_BOLT = {"type": "click", "x": 270, "y": 297}       # the home screen's first card


def test_the_first_action_must_be_a_wait(tmp_path):
    # the strict watchdog policy: a click before any frame ends the episode at once, SCORED
    # (a refused action is the agent's own failure, issue 35)
    r = run_objective(Script([CLICK_BOLT]), "bolt_unscrew", "easy", folder=tmp_path / "w",
                      settings=Settings(invalid_action_policy="watchdog"))
    assert r.end == "invalid_action_limit" and r.outcome.scored and r.actions == 1 and "first action" in r.error
    res = json.loads((tmp_path / "w" / "result.json").read_text())
    assert res["rules"]["invalid_action_policy"] == "watchdog" and res["scored"] is True
    assert res["time"]["real"] == 0.0              # the clock never started
    assert replay_episode(tmp_path / "w").ok
    # the default policy: refused with a message, the agent still has no frame; a wait then
    # returns the first screenshot and the click works
    a = Script([CLICK_BOLT, {"type": "wait"}, CLICK_BOLT])
    r = run_objective(a, "bolt_unscrew", "easy", folder=tmp_path / "d")
    s0, s1, s2, s3 = a.seen
    assert s0.frame is None and s0.feedback is None
    assert s1.frame is None and s1.feedback.status == "dispatch_failed" and "wait" in s1.feedback.message
    assert s2.frame is not None and s2.feedback.status == "wait_completed"
    assert s3.feedback.status == "screen_changed"
    assert r.end == "final_answer" and r.invalid == 1
    assert json.loads((tmp_path / "d" / "result.json").read_text())["rules"]["invalid_action_policy"] == \
        "dispatch_failed"
    assert replay_episode(tmp_path / "d").ok
    # three refusals in a row end the episode (the default policy), scored
    r = run_objective(Script([CLICK_BOLT] * 3), "bolt_unscrew", "easy")
    assert r.end == "invalid_action_limit" and r.outcome.scored
    with pytest.raises(HarnessError):
        Settings(invalid_action_policy="ignore")


def test_the_level_protocol_can_use_the_watchdog():
    # the watchdog ends a level at its first refused action, a scored failure; all_levels goes on
    r = run_level_chain(Script([{"type": "teleport"}]), "truck_escape", "default",
                        settings=Settings(invalid_action_policy="watchdog"), mode="all_levels")
    assert r.outcome.scored and r.levels[0]["termination"] == "invalid_action_limit" and r.levels[0]["steps"] == 1
    assert all(l["run"] and l["termination"] == "agent_terminated" for l in r.levels[1:])
    r = run_level_chain(Script([{"type": "teleport"}] * 3), "truck_escape", "default")
    assert r.levels[0]["termination"] == "invalid_action_limit" and r.outcome.scored


def test_a_long_wait_uses_the_budget_and_charged_time_is_the_sum_of_its_parts(tmp_path):
    a = Script([{"type": "wait", "ms": 0}, {"type": "wait", "ms": 600_000}, {"type": "wait", "ms": 5}])
    st = Settings(action_latency=0.35)
    r = run_objective(a, "maze_paint", "easy", settings=st, folder=tmp_path)
    left_after = a.seen[2].time_left
    assert 3600 - 600 - 0.25 - 2 * 0.35 - 1.0 < left_after <= 3600 - 600 - 0.25 - 2 * 0.35
    t = r.time
    assert t["charged"] == pytest.approx(t["agent"] + t["harness"] + t["simulated"] + t["latency"], abs=1e-5)
    assert t["real"] == pytest.approx(t["agent"] + t["harness"], abs=1e-5)
    # the parts, independently: simulated = the suite's virtual clock over the episode,
    # latency = one per executed action
    ev = read_events(tmp_path)
    c0 = Suite.restore(ev[0]["start"]).clock
    c1 = restore_step(tmp_path, max(e["step"] for e in ev if e.get("stream") == "private")).clock
    assert t["simulated"] == pytest.approx((c1 - c0) / 1000) and t["simulated"] >= 600.005
    assert t["latency"] == pytest.approx(3 * 0.35)
    assert 0 < t["real"] < 60 and t["charged"] > 601
    # the agent's time not charged: the real part is the harness's alone
    r = run_objective(Script([{"type": "wait"}]), "maze_paint", "easy",
                      settings=Settings(charge_agent_time=False))
    t = r.time
    assert t["charged"] == pytest.approx(t["harness"] + t["simulated"] + t["latency"], abs=1e-5)
    assert r.rules["charge_agent_time"] is False


def test_a_wait_past_the_deadline_ends_the_episode_at_the_deadline(tmp_path):
    r = run_objective(Script([{"type": "wait"}, {"type": "wait", "ms": 600_000}]), "maze_paint", "easy",
                      settings=Settings(budget=30), folder=tmp_path)
    assert r.end == "budget" and r.actions == 2 and not r.outcome.budget_remaining
    assert 30 <= r.time["charged"] < 31 and r.time["simulated"] < 30.01      # cut at the deadline
    cut = [e for e in read_events(tmp_path) if e.get("stream") == "public" and "cut_at" in e]
    assert len(cut) == 1 and cut[0]["step"] == 2
    assert replay_episode(tmp_path).ok


def test_events_after_the_deadline_do_not_happen(tmp_path):
    def run(margin_ms, folder):
        class Batch(BaseAgent):
            def act(self, obs):
                if obs.frame is None:
                    return {"type": "wait", "ms": 0}
                if obs.step == 1:
                    return {"type": "batch", "actions": [
                        {"type": "wait", "ms": int(obs.time_left * 1000) - margin_ms}, CLICK_BOLT]}
                return FinalAnswer("done")
        return run_objective(Batch(), "bolt_unscrew", "easy", settings=Settings(budget=20), folder=folder)

    made = run(3000, tmp_path / "a")          # the click lands 3 s before the deadline
    late = run(100, tmp_path / "b")           # it would land after it
    screens = [[e["record"]["screen"] for e in read_events(f) if e.get("stream") == "private"]
               for f in (tmp_path / "a", tmp_path / "b")]
    assert screens[0][-1] == "difficulty:bolt_unscrew" and made.presses == 1
    assert screens[1][-1] == "home" and late.presses == 0 and late.end == "budget"
    assert replay_episode(tmp_path / "b").ok


class LateWinner(SolverAgent):
    """The solver, but it burns the budget with a wait just before the move that wins level 1
    and then thinks for `think` seconds before sending that move."""
    def __init__(self, think):
        super().__init__()
        self.think, self.held, self.waited = think, None, False

    def act(self, obs):
        if self.held is not None:
            if not self.waited:
                self.waited = True
                return {"type": "wait", "ms": int((obs.time_left - 2.0) * 1000)}    # 2 s left (less the gap)
            time.sleep(self.think)
            a, self.held = self.held, None
            return a
        a = super().act(obs)
        if self.model.complete and self.model.level.id == self.targets[0] and not self.waited:
            self.held = a
            return self.act(obs)
        return a


def test_an_action_returned_after_the_deadline_is_not_executed():
    r = run_objective(LateWinner(2.5), "nut_and_bolt", "easy", settings=Settings(budget=600))
    assert r.end == "budget" and r.outcome.solved_count == 0 and not r.outcome.levels[0].won
    assert r.time["charged"] >= 600
    # when the agent's time is not charged, the same move is executed and wins the level
    r = run_objective(LateWinner(2.5), "nut_and_bolt", "easy",
                      settings=Settings(budget=600, charge_agent_time=False))
    assert r.outcome.levels[0].won and r.time["agent"] >= 2.5


def test_the_deadline_path_runs_actions_exactly_as_the_fast_path():
    """suite.dispatch(a, until) with a deadline far away == suite.dispatch(a)."""
    rng = random.Random(5)
    for lid in ("bolt_unscrew/easy/2", "rush_hour/easy/1", "nut_and_bolt/easy/1", "truck_escape/default/1",
                "maze_paint/easy/1", "color_connect/easy/1"):
        a, b = Suite(lid), Suite(lid)
        w, h = a.frame_size
        for i in range(60):
            p = lambda: [rng.randrange(w), rng.randrange(h)]  # noqa: E731 - used in this iteration
            k = rng.random()
            if k < 0.4:
                act = {"type": "click", "x": p()[0], "y": p()[1]}
            elif k < 0.6:
                (x0, y0), (x1, y1) = p(), p()
                act = {"type": "drag", "x0": x0, "y0": y0, "x1": x1, "y1": y1, "steps": 5, "ms": 300}
            elif k < 0.7:
                act = {"type": "swipe", "direction": rng.choice(gui.DIRECTIONS)}
            elif k < 0.8:
                act = {"type": "batch", "actions": [{"type": "click", "x": p()[0], "y": p()[1]} for _ in range(3)]}
            elif k < 0.9:
                (x0, y0), (x1, y1) = p(), p()
                act = {"type": "drag", "x0": x0, "y0": y0, "via": [p(), p()], "x1": x1, "y1": y1}
            else:
                act = rng.choice([{"type": "key", "name": "ArrowLeft"}, {"type": "long_press", "x": 270, "y": 480},
                                  {"type": "wait", "ms": 300}, {"type": "typetext", "text": "ab 1"}])
            fa, fb = a.dispatch(act), b.dispatch(act, until=b.clock + 10**9)
            assert fa.effects == fb.effects and not fb.cut, (lid, i, act)
            assert a.snapshot() == b.snapshot(), (lid, i, act)
            if a.screen["name"] != "level" or a.complete:
                a, b = Suite(lid), Suite(lid)


def test_the_papers_action_names_and_pointer_paths():
    size = (540, 960)
    assert gui.validate({"type": "doubleclick", "x": 5, "y": 6}, size) == {"type": "double_click", "x": 5, "y": 6}
    t = gui.validate({"type": "typetext", "text": "Go 2\n"}, size)
    assert [(dt, k) for dt, _, _, _, k in gui.expand(t)] == [(0, "g"), (30, "o"), (60, "Space"), (90, "2"),
                                                               (120, "Enter")]
    for bad in ({"type": "typetext", "text": ""}, {"type": "typetext", "text": "x" * (gui.MAX_TEXT + 1)},
                {"type": "typetext", "text": "a;b"}, {"type": "typetext", "text": 5}):
        with pytest.raises(gui.ActionError):
            gui.validate(bad, size)
    # a drag through waypoints: each corner reached exactly, time at constant speed
    d = gui.validate({"type": "drag", "x0": 0, "y0": 0, "via": [[30, 0]], "x1": 30, "y1": 10, "steps": 2,
                      "ms": 400}, size)
    ev = gui.expand(d)
    assert [e[1] for e in ev] == ["down", "move", "move", "move", "move", "up"]
    assert [(e[0], e[2], e[3]) for e in ev[1:5]] == [(150, 15, 0), (300, 30, 0), (350, 30, 5), (400, 30, 10)]
    assert gui.presses(d) == 1 and gui.presses({"type": "batch", "actions": [d, {"type": "double_click"}]}) == 3
    for bad in ({"via": [[1, 2, 3]]}, {"via": [[600, 2]]}, {"via": [[1, 1]] * (gui.MAX_VIA + 1)}, {"via": "x"}):
        with pytest.raises(gui.ActionError):
            gui.validate({"type": "drag", "x0": 0, "y0": 0, "x1": 3, "y1": 3, **bad}, size)
    # press, moves, release == the same path as one drag
    s1, s2 = Suite("color_connect/easy/1"), Suite("color_connect/easy/1")
    u = s1.game_ui()
    (r0, c0), (r1, c1) = divmod(u.endpoints[0][0], u.cols), divmod(u.endpoints[0][1], u.cols)
    p = [list(map(round, s1.proj.to_px(*u.cell_center(r, c)))) for r, c in ((r0, c0), (r0, c1), (r1, c1))]
    s1.dispatch({"type": "batch", "actions": [{"type": "press", "x": p[0][0], "y": p[0][1]},
                                              {"type": "move", "x": p[1][0], "y": p[1][1]},
                                              {"type": "release", "x": p[2][0], "y": p[2][1]}]})
    s2.dispatch({"type": "drag", "x0": p[0][0], "y0": p[0][1], "via": [p[1]], "x1": p[2][0], "y1": p[2][1]})
    assert s1.session.moves == s2.session.moves and len(s1.session.moves) >= 2


def _solve_on_screen(suite):
    from longpuzzle.solvers import solve
    for a in solve(suite.level, state=suite.session.state.copy()).actions:
        suite.dispatch(suite.gesture_for(a))
    assert suite.complete


def test_the_last_levels_card_offers_the_menu_not_a_next_level():
    from longpuzzle.render.frame import render
    # (Maze Paint: Nut and Bolt's card on the hub has no buttons, it goes on by itself)
    last, mid = Suite("maze_paint/easy/10"), Suite("maze_paint/easy/9")
    for s in (last, mid):
        _solve_on_screen(s)
    assert [w.id for w in mid.layout().widgets] == ["next", "replay"]
    assert [(w.id, w.label) for w in last.layout().widgets] == [("menu", "Menu"), ("replay", "Replay")]
    # drawn as hit-tested: the two cards differ exactly where the first button is
    r = last.layout().widgets[0].shape
    fl, fm = render(last), render(mid)
    diff = (fl != fm).any(axis=2)
    ys, xs = diff.nonzero()
    inside = (xs >= r.x0) & (xs < r.x1) & (ys >= r.y0) & (ys < r.y1)
    assert inside.sum() > 100
    cx, cy = (int(v) for v in r.center)
    last.dispatch({"type": "click", "x": cx, "y": cy})
    assert last.screen_name() == "difficulty:maze_paint"
    mid.dispatch({"type": "click", "x": cx, "y": cy})
    assert mid.screen_name() == "level:maze_paint/easy/10"


def test_the_random_agent_enters_its_objective_and_plays_on_the_board(tmp_path):
    from longpuzzle.agents.registry import load_agent
    from longpuzzle.agents.scripted import RandomAgent, RandomAnywhereAgent
    r = run_objective(RandomAgent(2), "nut_and_bolt", "hard", settings=Settings(max_actions=40), folder=tmp_path)
    assert r.end == "max_actions" and not r.outcome.mismatch and r.outcome.levels[0].reached
    recs = [e["record"] for e in read_events(tmp_path) if e.get("stream") == "private"]
    on = [i for i, rec in enumerate(recs) if rec["level"] == "nut_and_bolt/hard/1"]
    assert on and all(rec["level"] == "nut_and_bolt/hard/1" for rec in recs[on[0]:])    # stays on the board
    assert recs[-1]["restarts"] == 0 and r.presses >= 30
    assert isinstance(load_agent("random_anywhere", seed=1), RandomAnywhereAgent)


HUMAN_PRESSES = {"bolt_unscrew/easy": 100, "bolt_unscrew/hard": 2500, "rush_hour/easy": 89, "rush_hour/medium": 102,
                 "rush_hour/hard": 442, "nut_and_bolt/easy": 45, "nut_and_bolt/medium": 169, "nut_and_bolt/hard": 405,
                 "nut_and_bolt/extreme": 538, "nut_and_bolt/nightmare": 1106, "truck_escape/default": 134,
                 "maze_paint/easy": 128, "maze_paint/medium": 238, "maze_paint/hard": 476,
                 "color_connect/easy": 118, "color_connect/hard": 316}     # PAPERS.md Table 4


def solver_presses(objective, plans=None):
    """The solver agent's pointer presses over a whole objective from the home screen, played
    against the suite without rendering frames (the harness's press count, gui.presses)."""
    from longpuzzle.agents.base import Observation, action_spec
    import numpy as np
    game, diff = objective.split("/")
    agent, s = SolverAgent(plans=plans), Suite("home")
    agent.reset(instruction_for(game, diff), action_spec(*s.frame_size, first_wait=True))
    obs, presses, frame = Observation(None, None, 0, None), 0, np.zeros((1, 1, 3), np.uint8)
    while not isinstance(a := agent.act(obs), FinalAnswer):
        v = gui.validate(a, s.frame_size)
        s.dispatch(v)
        presses += gui.presses(v)
        obs = Observation(frame, None, obs.step + 1, None)
        assert obs.step < 20_000
    done = [lid for lid in agent.targets if lid == s.level.id and s.complete]
    assert done == [agent.targets[-1]], objective
    return presses


def readme_presses() -> tuple[dict, dict]:
    """The sentence of the guide "Evaluating an agent" (docs/guides/evaluating-agents.md)
    "Pointer presses per objective, solver agent vs the paper's human
    (Table 4): Bolt 83 / 469 vs 100 / 2,500; Rush Hour ...; ..." read back as (solver presses,
    human presses) per objective: one part per game in catalogue order, its objectives' figures
    in catalogue order."""
    import re
    from pathlib import Path
    from longpuzzle.engine.catalog import builtin_catalog
    page = Path(__file__).resolve().parents[3] / "docs" / "guides" / "evaluating-agents.md"
    text = " ".join(page.read_text(encoding="utf-8").split())
    m = re.search(r"Pointer presses per objective, solver agent vs the paper's human \(Table 4\): (.+?) \(tests/", text)
    assert m, "the guide's sentence of pointer presses is gone"
    from longpuzzle.puzzles.declarations import BUILTIN
    games: dict[str, list[str]] = {}
    for o in builtin_catalog().objectives():       # the built-in games' (the paper's)
        if o.game in {s.id for s in BUILTIN}:
            games.setdefault(o.game, []).append(o.id)
    parts = m.group(1).split("; ")
    assert len(parts) == len(games), parts
    solver, human = {}, {}
    for part, (game, objs) in zip(parts, games.items()):
        mine, theirs = part.split(" vs ")
        a = [int(x.replace(",", "")) for x in re.findall(r"[\d,]+", mine)]
        b = [int(x.replace(",", "")) for x in re.findall(r"[\d,]+", theirs)]
        assert len(a) == len(b) == len(objs), (part, game)
        solver.update(zip(objs, a))
        human.update(zip(objs, b))
    return solver, human


def test_the_readme_gives_the_papers_human_presses_and_a_solver_figure_for_every_objective():
    """The fast half of the guide's check (the slow test below recomputes the solver's)."""
    solver, human = readme_presses()
    assert human == HUMAN_PRESSES and set(solver) == set(HUMAN_PRESSES)
    assert all(solver[o] <= human[o] for o in solver)


@pytest.mark.slow
def test_the_solver_agent_needs_no_more_presses_than_the_papers_human():
    """Every objective; Bolt Unscrew hard plays its recorded solutions (tests/data) instead of
    searching (the same gestures, without ~30 s of search)."""
    from pathlib import Path
    from longpuzzle.engine.catalog import builtin_catalog
    data = json.loads((Path(__file__).resolve().parents[2] / "data" / "bolt_unscrew_solutions.json").read_text())
    bolt_hard = {f"bolt_unscrew/{k}": v["moves"] for k, v in data.items() if k.startswith("hard/")}
    got = {o.id: solver_presses(o.id, bolt_hard if o.id == "bolt_unscrew/hard" else None)
           for o in builtin_catalog().objectives() if o.id in HUMAN_PRESSES}      # the paper's objectives
    over = {o: (n, HUMAN_PRESSES[o]) for o, n in got.items() if n > HUMAN_PRESSES[o]}
    assert not over, over
    solver, _ = readme_presses()
    assert solver == got, "the guide's solver presses differ from today's: " + str(
        {o: (solver.get(o), n) for o, n in got.items() if solver.get(o) != n})
    assert got["color_connect/easy"] < 100 and got["color_connect/hard"] < 150     # one press per route


@pytest.mark.parametrize("style, viewport", [("2d", None), ("3d", None), ("2d", (1280, 900))])
def test_every_color_connect_route_is_one_drag_through_its_corners(style, viewport):
    from longpuzzle.engine.catalog import builtin_catalog
    from longpuzzle.engine.session import Session
    for lid in builtin_catalog().level_ids("color_connect"):
        s = Suite(lid, style=style, viewport=viewport, direct=True)
        for route in s.level.extra["solution"]:
            n0 = len(s.session.moves)
            ref = Session.from_checkpoint(s.session.checkpoint())
            ref.play(route)
            want = ref.moves[n0:]
            g, k = s.gesture_run(want)
            assert k == len(want) and g["type"] == "drag" and gui.presses(g) == 1, (lid, route)
            assert s.interpret(g) == want, (lid, route, g)
            s.dispatch(g)
        assert s.complete, lid


def test_move_counts_say_whether_the_winning_move_is_in(tmp_path):
    """The paper's Rush Hour sums count without the winning move: the proven optima of easy
    are 52 with it and 42 without it (PAPERS.md / issue 12); the optimal solver makes both."""
    r = run_objective(SolverAgent(), "rush_hour", "easy", folder=tmp_path, settings=Settings(save_frames=False))
    res = json.loads((tmp_path / "result.json").read_text())
    assert r.outcome.success and res["moves"] == 52 and res["moves_before_win"] == 42
    assert all(l["moves"] - l["moves_before_win"] == 1 for l in res["levels"])
    # presses: one drag per move and a "Next level" click per card are made on the levels;
    # the game and difficulty cards on the menus
    assert res["presses"] == r.presses == sum(l["presses"] for l in res["levels"]) + 2 == 52 + 9 + 2
