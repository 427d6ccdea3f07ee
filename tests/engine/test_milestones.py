"""Milestones (engine/milestones.py, puzzles/milestones.py): declared once per game, exact
counts on the state, thresholds, checking order, and a game of another package bringing its own."""

from __future__ import annotations

import pytest

from longpuzzle.engine.declaration import DeclarationError, GameSpec
from longpuzzle.engine.milestones import LEVEL_WON_ID, Check, Count, level_milestones, milestone_kinds
from longpuzzle.engine.registry import spec
from longpuzzle.engine.session import Session
from longpuzzle.solvers.core import solve

KINDS = {"bolt_unscrew": ["boards_out"], "rush_hour": ["way_clear"], "nut_and_bolt": ["stacks_sorted"],
         "truck_escape": ["vehicles_left"], "maze_paint": ["cells_painted"], "color_connect": ["pairs_connected"]}


@pytest.mark.parametrize("game", sorted(KINDS))
def test_every_builtin_game_declares_its_kinds_and_a_solution_meets_every_milestone(game):
    kinds = milestone_kinds(spec(game))
    assert [k.id for k in kinds] == KINDS[game] + [LEVEL_WON_ID]
    s = Session(f"{game}/{'default' if game == 'truck_escape' else 'easy'}/1")
    start = level_milestones(kinds, s.level, s.state)
    assert [m.index for m, _, _ in start] == list(range(len(start))) and start[-1][0].kind == LEVEL_WON_ID
    assert not any(holds for m, _, holds in start if m.counting)     # nothing counted at the start
    s.play_all(solve(s.level).moves)
    assert s.solved
    assert all(holds for _, _, holds in level_milestones(kinds, s.level, s.state))


def test_nut_and_bolt_counts_each_colour_gathered_on_a_full_bolt():
    kinds = milestone_kinds(spec("nut_and_bolt"))
    s = Session("nut_and_bolt/easy/1")
    seen = []
    for mv in ["1>3", "2>3", "2>1", "2>3"]:              # the shortest solution
        s.play(mv)
        ms = level_milestones(kinds, s.level, s.state)
        seen.append([(m.id, have, holds) for m, have, holds in ms])
    # 2 colours, bolts of 4: red fills bolt 1 with the third move (R R R + R), yellow with the last
    assert [x[0][1] for x in seen] == [0, 0, 1, 2]
    assert [x[-1][2] for x in seen] == [False, False, False, True]
    assert [m for m, _, _ in seen[1]] == ["stacks_sorted>=1/2", "stacks_sorted>=2/2", "level_won"]


def test_thresholds_each_quarters_and_auto():
    c = Count("x", lambda lv, s: (0, 0), "{k}/{n}")
    assert c.ks(0) == [] and c.ks(3) == [1, 2, 3] and c.ks(8) == list(range(1, 9))
    assert c.ks(9) == [3, 5, 7, 9] and c.ks(24) == [6, 12, 18, 24]
    assert Count("x", "m:f", "q", thresholds="quarters").ks(2) == [1, 2]
    assert Count("x", "m:f", "q", thresholds="each").ks(20) == list(range(1, 21))
    with pytest.raises(DeclarationError, match="thresholds"):
        Count("x", "m:f", "q", thresholds="halves")


def test_a_game_of_another_package_declares_its_own_and_bad_declarations_are_refused():
    base = spec("maze_paint")
    mine = (Count("half", lambda level, state: (int(state[1]), int(level.lv[2])), "{k} of {n}?", "each"),
            Check("started", lambda level, state: int(state[1]) > 1, "Has the ball moved?"))
    g = GameSpec(id="maze_paint", rules=base.rules, milestones=mine)
    kinds = milestone_kinds(g)
    s = Session("maze_paint/easy/1")
    s.play("L")
    ms = level_milestones(kinds, s.level, s.state)
    painted = int(s.state[1])
    assert [m.id for m, _, _ in ms] == [f"half>={k}/12" for k in range(1, 13)] + ["started", "level_won"]
    assert [holds for _, _, holds in ms[:12]] == [k <= painted for k in range(1, 13)]
    assert ms[12][2] is (painted > 1) and ms[0][0].question == "1 of 12?"
    assert milestone_kinds(GameSpec(id="g", rules=base.rules)) == milestone_kinds(GameSpec(id="g", rules=base.rules,
                                                                                           milestones=()))
    for bad in [("not a kind",), (Check("level_won", lambda lv, s: True, "q"),),
                (Check("a", lambda lv, s: True, "q"), Check("a", lambda lv, s: True, "q"))]:
        with pytest.raises(DeclarationError):
            milestone_kinds(GameSpec(id="g", rules=base.rules, milestones=bad))


def test_an_objectives_milestones_seen_from_its_final_state():
    from longpuzzle.engine.milestones import OBJECTIVE_LEVEL_WON_ID, objective_milestones
    kinds = milestone_kinds(spec("maze_paint"))
    s = Session("maze_paint/easy/2")
    own = level_milestones(kinds, s.level, s.state)
    ids = [f"maze_paint/easy/{i}" for i in (1, 2, 3)]
    ms = objective_milestones(ids, "maze_paint/easy/2", {"maze_paint/easy/1"}, own)
    assert [m.id for m, _, _ in ms] == ["objective_level_won#1/3"] + [m.id for m, _, _ in own] + \
        ["objective_level_won#3/3"]
    assert [m.index for m, _, _ in ms] == list(range(len(ms)))
    assert [holds for m, _, holds in ms if m.kind == OBJECTIVE_LEVEL_WON_ID] == [True, False]
    assert "level 1 of 3" in ms[0][0].question
    # a level that is not a target (another game's, say): its milestones first, then every target's win
    other = objective_milestones(ids, "maze_paint/easy/9", set(), own)
    assert [m.id for m, _, _ in other][len(own):] == [f"objective_level_won#{k}/3" for k in (1, 2, 3)]


def test_the_conformance_suite_checks_a_games_milestones(monkeypatch):
    from dataclasses import replace

    from longpuzzle.agents.testing import check_puzzle
    from longpuzzle.engine import registry

    report = check_puzzle("maze_paint", levels=["maze_paint/easy/1"], checks=["milestones"])
    assert report.passed == [("milestones", "maze_paint/easy/1")]
    real = registry.spec
    for measure, why in [(lambda level, state: (int(state[1]) - 1, int(level.lv[2])), "does not hold on a solved"),
                         (lambda level, state: (int(state[1]), int(state[1]) + 3), "number of items changed"),
                         (lambda level, state: (int(state[1]) + 5, int(level.lv[2])), "items counted of")]:
        bad = replace(real("maze_paint"), milestones=(Count("painted", measure, "{k} of {n}?"),))
        monkeypatch.setattr(registry, "spec", lambda g, bad=bad: bad if g == "maze_paint" else real(g))
        report = check_puzzle("maze_paint", levels=["maze_paint/easy/1"], checks=["milestones"],
                              raise_on_failure=False)
        assert [f.check for f in report.failures] == ["milestones"] and why in report.failures[0].message, why
